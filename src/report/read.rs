//! Reading a run folder back: sweep.csv, sweep_questions.csv and manifest.json, so the decision
//! can be regenerated without recomputing the sweep (`chunksweep report results/<run-id>`).

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use thiserror::Error;

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
    /// A file could not be opened.
    #[error("cannot read {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl ReadError {
    /// Usage (2): the folder named is not a readable run folder.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        match self {
            ReadError::Missing { .. }
            | ReadError::Csv { .. }
            | ReadError::Json { .. }
            | ReadError::Io { .. } => crate::exit::ExitClass::Usage,
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
    /// manifest.json, when present.
    pub manifest: Option<serde_json::Value>,
}

impl RunData {
    /// The command line recorded in the manifest (`command`, one string per argument).
    pub fn command(&self) -> Option<Vec<String>> {
        let args = self.manifest.as_ref()?.get("command")?.as_array()?;
        args.iter()
            .map(|a| a.as_str().map(str::to_string))
            .collect()
    }
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

/// Reads `dir/sweep.csv`, `dir/sweep_questions.csv` and, if present, `dir/manifest.json`.
///
/// # Errors
/// [`ReadError`] naming the file that is missing or malformed.
pub fn read_run(dir: &Path) -> Result<RunData, ReadError> {
    let sweep = read_rows(&dir.join(files::SWEEP))?;
    let questions = read_rows(&dir.join(files::SWEEP_QUESTIONS))?;
    let path = dir.join(files::MANIFEST);
    let manifest = if path.exists() {
        let text = std::fs::read_to_string(&path).map_err(|source| ReadError::Io {
            path: path.clone(),
            source,
        })?;
        Some(serde_json::from_str(&text).map_err(|source| ReadError::Json { path, source })?)
    } else {
        None
    };
    Ok(RunData {
        sweep,
        questions,
        manifest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(rank: Option<usize>, recall: f64) -> QuestionRow {
        QuestionRow {
            config_id: "fixed-64-o9-none-bm25-k5".into(),
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
            retrieved_chunk_ids: "a|b".into(),
            retrieved_scores: "1.0000|0.5000".into(),
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
