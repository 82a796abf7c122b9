//! Chroma's chunking-evaluation format: `questions_df.csv` with columns `question`,
//! `references` (a JSON list of `{"content", "start_index", "end_index"}`, offsets in code points,
//! end exclusive) and `corpus_id`, beside `corpora/<corpus_id>.md`.
//!
//! Rows have no ids; question `n` (1-based, in file order) gets the id `q<n>` zero-padded to three
//! digits, and its corpus id becomes its question type.

use std::path::Path;

use serde::Deserialize;

use super::types::{GoldenError, RawEvidence, RawQuestion};

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

/// Reads a Chroma `questions_df.csv`.
///
/// # Errors
/// [`GoldenError::Io`] when unreadable, [`GoldenError::Parse`] naming the line of the first row
/// whose columns or `references` JSON cannot be read.
pub fn read(path: &Path) -> Result<Vec<RawQuestion>, GoldenError> {
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
    for (row, record) in reader.records().enumerate() {
        let parse_error = |line: usize, e: csv::Error| GoldenError::Parse {
            path: path.to_path_buf(),
            line,
            message: format!(
                "not a Chroma question row ({e}); expected columns question, references, corpus_id"
            ),
        };
        let record = record.map_err(|e| {
            let line = e.position().map(|p| p.line() as usize).unwrap_or(0);
            parse_error(line, e)
        })?;
        let line = record.position().map(|p| p.line() as usize).unwrap_or(0);
        let row_data: Row = record
            .deserialize(Some(&headers))
            .map_err(|e| parse_error(line, e))?;
        let refs: Vec<Reference> =
            serde_json::from_str(&row_data.references).map_err(|e| GoldenError::Parse {
                path: path.to_path_buf(),
                line,
                message: format!(
                    "references is not a JSON list of {{content, start_index, end_index}}: {e}"
                ),
            })?;
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
        });
    }
    Ok(out)
}
