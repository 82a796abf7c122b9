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
    /// Another process holds the run folder's lock (`report::lock::RunLock`).
    #[error(
        "run folder {dir} is in use by another chunksweep process (it holds {}); nothing was written: wait for it to end, or use another --out",
        crate::files::LOCK
    )]
    Busy {
        /// The run folder.
        dir: PathBuf,
    },
    /// The run folder given is an existing file.
    #[error("--out {0} is a file, not a folder: give a folder for the run's files")]
    NotAFolder(PathBuf),
    /// The run folder holds entries the command does not write (`crate::files::Outputs`).
    #[error(
        "--out {dir} holds files that are not {owner}'s ({}): {owner} writes only into an empty folder or one holding its own earlier outputs; give another --out, or move them away",
        .foreign.join(", ")
    )]
    NotARunFolder {
        /// The folder.
        dir: PathBuf,
        /// Whose files the folder may hold (`crate::files::Outputs::owner`).
        owner: &'static str,
        /// Its foreign entries (the first five, sorted).
        foreign: Vec<String>,
    },
    /// The run folder holds the run of another corpus, golden set or grid, which writing into
    /// it would replace.
    #[error(
        "--out {dir} holds another run ({what} than this one's): writing into it would replace that run's files; give a new --out folder, or delete {dir} first"
    )]
    OtherRun {
        /// The folder.
        dir: PathBuf,
        /// `another corpus`, `another golden set`, `another grid`.
        what: &'static str,
    },
}

impl ReportError {
    /// Failure (1): the run folder could not be written; usage (2): it is in use by another
    /// process, is a file, or is not a run folder.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        match self {
            ReportError::Busy { .. }
            | ReportError::NotAFolder(_)
            | ReportError::NotARunFolder { .. }
            | ReportError::OtherRun { .. } => crate::exit::ExitClass::Usage,
            ReportError::Io { .. }
            | ReportError::Csv { .. }
            | ReportError::Json { .. }
            | ReportError::Plot(_) => crate::exit::ExitClass::Failure,
        }
    }
}
