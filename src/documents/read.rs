//! One file read by its reader, through the document cache when there is one.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::cache::{CacheError, DocumentCache};
use super::extracted::{Extracted, ReadError, utf8};
use super::kind::ReaderKind;

/// Where a document's text came from: extract.json's entry and the corpus fingerprint's reader.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// The reader.
    pub reader: ReaderKind,
    /// The reader's version ([`ReaderKind::version`]).
    pub version: String,
    /// SHA-256 of the file's bytes, hex.
    pub sha256: String,
    /// What the reader warned of.
    pub warnings: Vec<String>,
    /// Whether the text came from the document cache.
    #[serde(skip)]
    pub cached: bool,
}

/// Why a file was not read: the reader's reason, or the cache's.
#[derive(Debug, thiserror::Error)]
pub enum ReadFailure {
    /// The reader could not read the file.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The document cache failed.
    #[error(transparent)]
    Cache(#[from] CacheError),
}

/// `bytes` read by `reader`: the text formats as UTF-8, the others converted.
///
/// # Errors
/// As the reader ([`ReadError`]).
pub fn read_bytes(reader: ReaderKind, bytes: Vec<u8>) -> Result<Extracted, ReadError> {
    match reader {
        ReaderKind::Text | ReaderKind::Markdown | ReaderKind::Rst => Ok(Extracted {
            text: utf8(bytes)?,
            pages: Vec::new(),
            warnings: Vec::new(),
        }),
        ReaderKind::Html => super::html::read(&bytes),
        ReaderKind::Docx => super::docx::read(&bytes),
        ReaderKind::Pdf => super::pdf::read(&bytes),
    }
}

/// `bytes` read by `reader`, with where the text came from; a converting reader's text
/// ([`ReaderKind::converts`]) is looked up in `cache` first and stored there after.
///
/// # Errors
/// [`ReadFailure`].
pub fn read_file(
    reader: ReaderKind,
    bytes: Vec<u8>,
    cache: Option<&DocumentCache>,
) -> Result<(Extracted, Source), ReadFailure> {
    let sha256 = hex::encode(Sha256::digest(&bytes));
    let cache = cache.filter(|_| reader.converts());
    let hit = match cache {
        Some(c) => c.get(&sha256, reader)?,
        None => None,
    };
    let cached = hit.is_some();
    let extracted = match hit {
        Some(e) => e,
        None => {
            let e = read_bytes(reader, bytes)?;
            if let Some(c) = cache {
                c.put(&sha256, reader, &e)?;
            }
            e
        }
    };
    let source = Source {
        reader,
        version: reader.version(),
        sha256,
        warnings: extracted.warnings.clone(),
        cached,
    };
    Ok((extracted, source))
}
