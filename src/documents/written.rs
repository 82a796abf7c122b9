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
    /// The output folder holds files and no extract.json: it is not an earlier extract's
    /// output, so writing there could mix the texts with other files.
    #[error(
        "--out {out} is not empty and holds no extract.json from an earlier extract: choose a new or empty folder (extract replaces only its own earlier output)"
    )]
    OutNotEmpty {
        /// The output folder.
        out: PathBuf,
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
    /// Usage (2) for an output inside the corpus or not an extract's; failure (1) for a write.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            ExtractError::OutInsideCorpus { .. } | ExtractError::OutNotEmpty { .. } => {
                ExitClass::Usage
            }
            ExtractError::Write { .. } => ExitClass::Failure,
        }
    }
}
