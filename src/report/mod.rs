//! Run outputs: CSV tables, the chunk dump and the manifest, written into one run folder; and
//! the decision files (selection.csv, report.md, sweep.svg), also regenerated from a run folder.

pub mod csv;
pub mod decision;
pub mod html;
pub mod manifest;
pub mod markdown;
pub mod plot;
pub mod prefix;
pub mod read;

use std::path::PathBuf;

use thiserror::Error;

/// Errors while writing a run's files.
#[derive(Debug, Error)]
pub enum ReportError {
    /// A file or folder could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A CSV row could not be written.
    #[error("cannot write {path}: {source}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: ::csv::Error,
    },
    /// JSON could not be written.
    #[error("cannot write {path}: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: serde_json::Error,
    },
}
