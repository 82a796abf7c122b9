//! sweep.csv, sweep_questions.csv and the per-configuration chunk dump (`chunks/<config_id>.jsonl`).
//! Column meanings are documented on [`SweepRow`] and [`QuestionRow`] and in the README.

use std::io::Write;
use std::path::Path;

use serde::Serialize;

use super::ReportError;
use crate::corpus::Corpus;
use crate::sweep::{ConfigOutcome, QuestionRow, SweepRow};

/// Writes `rows` to `path` as CSV with a header row.
///
/// # Errors
/// [`ReportError::Csv`] naming the file.
pub fn write_rows<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), ReportError> {
    let err = |source| ReportError::Csv {
        path: path.to_path_buf(),
        source,
    };
    let mut writer = ::csv::Writer::from_path(path).map_err(err)?;
    for row in rows {
        writer.serialize(row).map_err(err)?;
    }
    writer.flush().map_err(|e| err(e.into()))
}

/// Writes sweep.csv and sweep_questions.csv into `dir`.
///
/// # Errors
/// [`ReportError`] naming the file that failed.
pub fn write_sweep(dir: &Path, outcomes: &[ConfigOutcome]) -> Result<(), ReportError> {
    let rows: Vec<&SweepRow> = outcomes.iter().map(|o| &o.row).collect();
    write_rows(&dir.join("sweep.csv"), &rows)?;
    let questions: Vec<&QuestionRow> = outcomes.iter().flat_map(|o| &o.questions).collect();
    write_rows(&dir.join("sweep_questions.csv"), &questions)
}

#[derive(Serialize)]
struct ChunkRecord<'a> {
    id: String,
    doc: &'a str,
    start: usize,
    end: usize,
    heading_path: &'a [String],
    tokens: usize,
}

/// Writes `dir/chunks/<config_id>.jsonl` for every configuration: one JSON object per chunk with
/// `id`, `doc`, `start` and `end` (code points, end exclusive), `heading_path` and `tokens`.
///
/// # Errors
/// [`ReportError`] naming the file that failed.
pub fn write_chunks(
    dir: &Path,
    corpus: &Corpus,
    outcomes: &[ConfigOutcome],
) -> Result<(), ReportError> {
    let folder = dir.join("chunks");
    std::fs::create_dir_all(&folder).map_err(|source| ReportError::Io {
        path: folder.clone(),
        source,
    })?;
    for outcome in outcomes {
        let path = folder.join(format!("{}.jsonl", outcome.row.config_id));
        let io = |source| ReportError::Io {
            path: path.clone(),
            source,
        };
        let file = std::fs::File::create(&path).map_err(io)?;
        let mut out = std::io::BufWriter::new(file);
        for chunk in &outcome.chunks {
            let record = ChunkRecord {
                id: chunk.id(corpus),
                doc: &corpus.docs[chunk.doc].id,
                start: chunk.start,
                end: chunk.end,
                heading_path: &chunk.heading_path,
                tokens: chunk.tokens,
            };
            serde_json::to_writer(&mut out, &record).map_err(|source| ReportError::Json {
                path: path.clone(),
                source,
            })?;
            out.write_all(b"\n").map_err(io)?;
        }
        out.flush().map_err(io)?;
    }
    Ok(())
}
