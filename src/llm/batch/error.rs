//! The error of the Batch API layer.

/// Why a batch could not be submitted, polled or read. The calls it holds stay unfinished.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum BatchError {
    /// An HTTP request of the batch endpoints failed (after retries for transient failures).
    /// `message` is scrubbed of the API key and the URL's credentials.
    #[error("batch API: {what} failed: {message}")]
    Http {
        /// What was asked: `upload the input file`, `create the batch`, `poll batch_abc`, ...
        what: String,
        /// The server's message or the transport's error.
        message: String,
    },
    /// The run folder's `batches.json` could not be read or written.
    #[error("{path}: {message}")]
    Book {
        /// The file.
        path: String,
        /// What went wrong and what to do.
        message: String,
    },
}

impl BatchError {
    /// Failure (1): the batch endpoints or the run folder failed; a rerun of the same command
    /// picks up what was submitted.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        match self {
            BatchError::Http { .. } | BatchError::Book { .. } => crate::exit::ExitClass::Failure,
        }
    }
}
