//! Why `chunksweep extract` could not write its output ([`ExtractError`]).

use std::path::PathBuf;

use thiserror::Error;

use crate::exit::ExitClass;

/// Errors of `extract` besides reading the corpus.
#[derive(Debug, Error)]
pub enum ExtractError {
    /// The output folder is the corpus or inside it (its texts would be read as documents).
    #[error(
        "--out {out} is inside the corpus {corpus}: the extracted texts would be read as documents next time; write them elsewhere"
    )]
    OutInsideCorpus {
        /// The output folder.
        out: PathBuf,
        /// The corpus folder.
        corpus: PathBuf,
    },
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl ExtractError {
    /// Usage (2) for an output inside the corpus; failure (1) for a write.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            ExtractError::OutInsideCorpus { .. } => ExitClass::Usage,
            ExtractError::Write { .. } => ExitClass::Failure,
        }
    }
}
