//! Reading a run folder back: sweep.csv and sweep_questions.csv, so the decision can be
//! regenerated without recomputing the sweep (`chunksweep report results/<run-id>`), and the
//! errors of reading a run folder, its record included
//! ([`crate::pipeline::record::RunRecord`]).
//!

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use thiserror::Error;

use super::manifest::MANIFEST_SCHEMA;
use crate::chunking::external::PlacementCounts;
use crate::files;
use crate::sweep::rows::{QuestionRow, SweepRow};

/// Errors while reading a run folder.
#[derive(Debug, Error)]
pub enum ReadError {
    /// A required file is missing.
    #[error("{path} not found: is this a chunksweep run folder?")]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// A CSV file could not be read or a row did not parse.
    #[error("cannot read {path}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// The underlying error (it names the line).
        #[source]
        source: ::csv::Error,
    },
    /// manifest.json could not be read or parsed.
    #[error("cannot read {path}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: serde_json::Error,
    },
    /// A field of manifest.json has the wrong type or value.
    #[error("cannot read {path}: {field}")]
    Field {
        /// The manifest.
        path: PathBuf,
        /// The field, as its path in the manifest (`config.selection.alpha`).
        field: String,
        /// The underlying error.
        #[source]
        source: serde_json::Error,
    },
    /// A file could not be opened.
    #[error("cannot read {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// manifest.json lacks settings that it must record.
    #[error(
        "{path} lacks {}: {why}; restore {} or rerun the command that wrote the folder",
        fields.join(", "),
        if fields.len() == 1 { "it" } else { "them" }
    )]
    MissingSettings {
        /// The manifest.
        path: PathBuf,
        /// Each missing setting, as its path in the manifest (`config.selection.alpha`).
        fields: Vec<String>,
        /// Why they are required.
        why: String,
    },
    /// manifest.json was written by a newer chunksweep.
    #[error(
        "{path} has schema_version {found}, newer than this chunksweep reads ({MANIFEST_SCHEMA}): use a newer chunksweep"
    )]
    NewerSchema {
        /// The manifest.
        path: PathBuf,
        /// Its schema version.
        found: u64,
    },
    /// manifest.json's `schema_version` is not a whole number.
    #[error(
        "{path} has schema_version {found}: it must be a whole number ({MANIFEST_SCHEMA} for this chunksweep), absent only in manifests written before it existed"
    )]
    BadSchema {
        /// The manifest.
        path: PathBuf,
        /// The value found, as JSON.
        found: String,
    },
    /// The settings recorded in manifest.json are not a plan this chunksweep can run.
    #[error("{path}: the recorded settings are unusable: {message}")]
    Invalid {
        /// The manifest.
        path: PathBuf,
        /// What is wrong with them.
        message: String,
    },
}

impl ReadError {
    /// Usage (2): the folder named is not a readable run folder.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        match self {
            ReadError::Missing { .. }
            | ReadError::Csv { .. }
            | ReadError::Json { .. }
            | ReadError::Field { .. }
            | ReadError::Io { .. }
            | ReadError::MissingSettings { .. }
            | ReadError::NewerSchema { .. }
            | ReadError::BadSchema { .. }
            | ReadError::Invalid { .. } => crate::exit::ExitClass::Usage,
        }
    }
}

/// What a run folder holds for the decision.
#[derive(Debug, Clone)]
pub struct RunData {
    /// Rows of sweep.csv.
    pub sweep: Vec<SweepRow>,
    /// Rows of sweep_questions.csv.
    pub questions: Vec<QuestionRow>,
    /// Rows of chunkers.csv (empty when the run has no external chunker).
    pub chunkers: Vec<PlacementCounts>,
}

/// Reads every row of the CSV file at `path`.
///
/// # Errors
/// [`ReadError::Missing`] when the file does not exist, [`ReadError::Csv`] naming the file (and
/// the csv crate's line) otherwise.
pub fn read_rows<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, ReadError> {
    if !path.exists() {
        return Err(ReadError::Missing {
            path: path.to_path_buf(),
        });
    }
    let err = |source| ReadError::Csv {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = ::csv::Reader::from_path(path).map_err(err)?;
    reader.deserialize().collect::<Result<_, _>>().map_err(err)
}

/// Reads `dir/sweep.csv`, `dir/sweep_questions.csv` and, when there is one, `dir/chunkers.csv` (the run's record, its manifest.json,
/// is read by [`crate::pipeline::record::RunRecord::open`]).
///
/// # Errors
/// [`ReadError`] naming the file that is missing or malformed.
pub fn read_run(dir: &Path) -> Result<RunData, ReadError> {
    let sweep = read_rows(&dir.join(files::SWEEP))?;
    let questions = read_rows(&dir.join(files::SWEEP_QUESTIONS))?;
    let chunkers = match dir.join(files::CHUNKERS) {
        path if path.exists() => read_rows(&path)?,
        _ => Vec::new(),
    };
    Ok(RunData {
        sweep,
        questions,
        chunkers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(rank: Option<usize>, recall: f64) -> QuestionRow {
        QuestionRow {
            config_id: "fixed-64-o9-none-bm25-k5".into(),
            cut: "k".into(),
            budget_tokens: None,
            question_id: "q, \"quoted\"".into(),
            question_type: String::new(),
            n_spans: 3,
            hit: 1,
            span_recall: recall,
            coverage: 0.1 + 0.2,
            margin: -1.0,
            unreachable: u8::from(rank.is_none()),
            first_correct_rank: rank,
            reciprocal_rank: 1.0 / 3.0,
            char_iou: 0.0,
            char_precision: 0.0,
            char_recall: 0.0,
            tie_at_k: 0,
            chunks_retrieved: 2,
            tokens_retrieved: 130,
            span_tokens: "12|40|7".into(),
            retrieved_chunk_ids: "a|b".into(),
            retrieved_scores: "1.0000|0.5000".into(),
            retrieved_ranges: "0-10|10-20".into(),
        }
    }

    #[test]
    fn question_rows_survive_a_round_trip_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sweep_questions.csv");
        // An empty rank (unreachable), awkward text and floats that are not short decimals.
        let rows = vec![question(None, 2.0 / 3.0), question(Some(4), 1.0 / 7.0)];
        crate::table::write_rows(&path, &rows).unwrap();
        let back: Vec<QuestionRow> = read_rows(&path).unwrap();
        assert_eq!(back, rows);
    }

    #[test]
    fn a_missing_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_run(dir.path()).unwrap_err();
        assert!(matches!(err, ReadError::Missing { .. }));
        assert!(
            err.to_string()
                .ends_with("sweep.csv not found: is this a chunksweep run folder?")
        );
    }
}
