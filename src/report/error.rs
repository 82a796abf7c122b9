//! Errors while writing a run's files.

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
    /// A figure could not be drawn.
    #[error(transparent)]
    Plot(#[from] super::plot::PlotError),
}

impl ReportError {
    /// Failure (1): the run folder could not be written.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        match self {
            ReportError::Io { .. }
            | ReportError::Csv { .. }
            | ReportError::Json { .. }
            | ReportError::Plot(_) => crate::exit::ExitClass::Failure,
        }
    }
}
