//! Chroma's chunking-evaluation format: `questions_df.csv` with columns `question`,
//! `references` (a JSON list of `{"content", "start_index", "end_index"}`, offsets in code points,
//! end exclusive) and `corpus_id`, beside `corpora/<corpus_id>.md`.
//!
//! Rows have no ids; question `n` (1-based, in file order) gets the id `q<n>` zero-padded to three
//! digits, and its corpus id becomes its question type.

use std::path::Path;

use serde::Deserialize;

use super::types::{GoldenError, Problem, ProblemKind, RawEvidence, RawQuestion, Read};

#[derive(Deserialize)]
struct Row {
    question: String,
    references: String,
    corpus_id: String,
}

#[derive(Deserialize)]
struct Reference {
    content: String,
    start_index: usize,
    end_index: usize,
}

/// Reads a Chroma `questions_df.csv`: its questions, and a [`ProblemKind::Malformed`] problem
/// for every row whose columns or `references` JSON cannot be read (reading goes on past it).
///
/// # Errors
/// [`GoldenError::Io`] when unreadable, [`GoldenError::Parse`] when the header cannot be read.
pub fn read(path: &Path) -> Result<Read, GoldenError> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| GoldenError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let headers = reader
        .headers()
        .map_err(|e| GoldenError::Parse {
            path: path.to_path_buf(),
            line: 1,
            message: format!("cannot read the CSV header: {e}"),
        })?
        .clone();
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let mut malformed = |line: usize, message: String| {
        problems.push(Problem {
            file: path.to_path_buf(),
            line,
            kind: ProblemKind::Malformed,
            message,
        })
    };
    for (row, record) in reader.records().enumerate() {
        let not_a_row = |e: csv::Error| {
            format!(
                "not a Chroma question row ({e}); expected columns question, references, corpus_id"
            )
        };
        let record = match record {
            Ok(record) => record,
            Err(e) if e.is_io_error() => {
                return Err(GoldenError::Io {
                    path: path.to_path_buf(),
                    source: std::io::Error::other(e.to_string()),
                });
            }
            Err(e) => {
                let line = e.position().map(|p| p.line() as usize).unwrap_or(0);
                malformed(line, not_a_row(e));
                continue;
            }
        };
        let line = record.position().map(|p| p.line() as usize).unwrap_or(0);
        let row_data: Row = match record.deserialize(Some(&headers)) {
            Ok(row_data) => row_data,
            Err(e) => {
                malformed(line, not_a_row(e));
                continue;
            }
        };
        let refs: Vec<Reference> = match serde_json::from_str(&row_data.references) {
            Ok(refs) => refs,
            Err(e) => {
                malformed(
                    line,
                    format!(
                        "references is not a JSON list of {{content, start_index, end_index}}: {e}"
                    ),
                );
                continue;
            }
        };
        out.push(RawQuestion {
            line,
            id: format!("q{:03}", row + 1),
            question: row_data.question,
            evidence: refs
                .into_iter()
                .map(|r| RawEvidence::DocRange {
                    doc: row_data.corpus_id.clone(),
                    start: r.start_index,
                    end: r.end_index,
                    content: Some(r.content),
                })
                .collect(),
            answer: None,
            question_type: Some(row_data.corpus_id),
            origin: Default::default(),
        });
    }
    Ok((out, problems))
}
