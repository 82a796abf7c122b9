//! What a reader makes of a file ([`Extracted`]) and why it could not ([`ReadError`]).

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A file's text as its reader extracted it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extracted {
    /// The text, UTF-8 (Markdown for `html` and `docx`, plain for `pdf`).
    pub text: String,
    /// For a paged format (PDF): the byte offset in `text` where each page starts, page 1 first
    /// (`pages[0]` is 0); empty for a document without pages.
    pub pages: Vec<usize>,
    /// What the reader noticed but could read past, each naming the page where there is one
    /// (for example pages without text: a scan to OCR first).
    pub warnings: Vec<String>,
}

/// Why a file could not be read. Each message names what to do; the file's path is added by
/// the caller ([`crate::corpus::CorpusError::Unreadable`]).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReadError {
    /// A text file is not valid UTF-8.
    #[error(
        "not valid UTF-8 (first bad byte at offset {byte}, line {line}): re-encode it as UTF-8 or move it out of the corpus"
    )]
    NotUtf8 {
        /// Byte offset of the first invalid byte.
        byte: usize,
        /// 1-based line of the first invalid byte.
        line: usize,
    },
    /// The PDF is encrypted (password-protected).
    #[error(
        "the PDF is encrypted: chunksweep cannot read a password-protected PDF; save an unprotected copy (or extract its text yourself) and put that in the corpus"
    )]
    Encrypted,
    /// The file is not what its extension says, or is damaged.
    #[error(
        "cannot read it as {reader}: {detail}; check that the file opens, or map its extension to another reader in [corpus] readers"
    )]
    Corrupt {
        /// The reader that failed.
        reader: &'static str,
        /// The library's message.
        detail: String,
    },
    /// A PDF that parses but is cut short or damaged where some pages' content should be, so
    /// those pages show no text: not a scan, and OCR would not help.
    #[error(
        "the PDF is cut short or damaged ({why}), and page(s) {pages} show no text because of it, not because they are scanned: get a complete copy of the file (download or copy it again)"
    )]
    Truncated {
        /// What is wrong: no end-of-file marker, or the pages whose content cannot be read.
        why: String,
        /// The pages without text, 1-based, comma-separated.
        pages: String,
    },
    /// The reader is not in this build.
    #[error(
        "this chunksweep was built without the {feature} feature: rebuild with `cargo build --features {feature}`, or extract the text yourself"
    )]
    NotBuilt {
        /// The cargo feature.
        feature: &'static str,
    },
}

/// `bytes` as UTF-8 text (a text reader), or where the first bad byte is.
///
/// # Errors
/// [`ReadError::NotUtf8`] with the byte offset and the 1-based line.
pub fn utf8(bytes: Vec<u8>) -> Result<String, ReadError> {
    String::from_utf8(bytes).map_err(|e| {
        let byte = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..byte].iter().filter(|&&b| b == b'\n').count();
        ReadError::NotUtf8 { byte, line }
    })
}
