//! `chunksweep extract`: every document of a corpus folder as the text chunksweep knows, written
//! to a folder with `extract.json` (each file's SHA-256, reader and version, page starts,
//! warnings). Sweeping the written folder sweeps the same texts (without their pages).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::ConfigFile;
use crate::corpus::{Document, Reading, load_corpus};
use crate::documents::cache::DOCUMENT_CACHE;
use crate::documents::kind::TextFormat;
use crate::documents::written::ExtractError;
use crate::error::Error;

/// One document in `extract.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtractedFile {
    /// The document's id (its path under the corpus folder).
    pub id: String,
    /// The text's file under the output folder: the id, plus `.txt` for plain text and `.md`
    /// for Markdown when the reader converted it (`report.pdf.txt`, `page.html.md`).
    pub file: String,
    /// The reader.
    pub reader: String,
    /// The reader's version.
    pub version: String,
    /// SHA-256 of the source file, hex.
    pub sha256: String,
    /// Length of the text in code points.
    pub chars: usize,
    /// Code-point offset of each page's start in the text, page 1 first (empty without pages).
    pub pages: Vec<usize>,
    /// The reader's warnings.
    pub warnings: Vec<String>,
    /// Whether the text came from the document cache.
    pub cached: bool,
}

/// `extract.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Extraction {
    /// The corpus folder read.
    pub corpus: PathBuf,
    /// Every document, in id order.
    pub documents: Vec<ExtractedFile>,
    /// Files skipped for lack of a reader (`--skip-unreadable`).
    pub skipped: Vec<String>,
}

/// How a command without a plan (`extract`, `golden draft`, `golden review`) reads a corpus:
/// the config file's `[corpus]` readers and skipping (or `skip_unreadable` from the flag), and
/// the document cache beside its `[llm]` response cache unless `cache = false`.
pub fn reading(file: &ConfigFile, skip_unreadable: bool) -> Reading {
    let llm = file.llm.clone().unwrap_or_default();
    Reading {
        readers: file.corpus.readers.clone(),
        skip_unreadable: skip_unreadable || file.corpus.skip_unreadable.unwrap_or(false),
        cache: llm
            .cache
            .then(|| llm.cache_path.with_file_name(DOCUMENT_CACHE)),
    }
}

/// Reads the corpus under `corpus` with `reading` and writes each document's text under
/// `out` (folders created) and [`files::EXTRACT_JSON`](crate::files::EXTRACT_JSON).
///
/// # Errors
/// [`ExtractError::OutInsideCorpus`] (refused before reading); [`Error::Corpus`] as
/// [`load_corpus`]; [`ExtractError::Write`] naming the file.
pub fn extract(corpus: &Path, reading: &Reading, out: &Path) -> Result<Extraction, Error> {
    let inside = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    if inside(out).starts_with(inside(corpus)) {
        return Err(ExtractError::OutInsideCorpus {
            out: out.to_path_buf(),
            corpus: corpus.to_path_buf(),
        }
        .into());
    }
    let loaded = load_corpus(corpus, reading)?;
    let mut documents = Vec::with_capacity(loaded.docs.len());
    for doc in &loaded.docs {
        let entry = entry(doc);
        write(&out.join(&entry.file), doc.text.as_bytes())?;
        documents.push(entry);
    }
    let extraction = Extraction {
        corpus: corpus.to_path_buf(),
        documents,
        skipped: loaded.skipped,
    };
    let json = serde_json::to_string_pretty(&extraction).expect("extract.json serialises");
    write(
        &out.join(crate::files::EXTRACT_JSON),
        format!("{json}\n").as_bytes(),
    )?;
    Ok(extraction)
}

/// A document's entry: where its text goes and where it came from.
fn entry(doc: &Document) -> ExtractedFile {
    let source = doc.source.as_ref();
    let converted = source.is_some_and(|s| s.reader.converts());
    let file = match (converted, doc.format) {
        (false, _) => doc.id.clone(),
        (true, TextFormat::Markdown) => format!("{}.md", doc.id),
        (true, TextFormat::Rest) => format!("{}.rst", doc.id),
        (true, TextFormat::Plain) => format!("{}.txt", doc.id),
    };
    ExtractedFile {
        id: doc.id.clone(),
        file,
        reader: source.map_or("text".into(), |s| s.reader.to_string()),
        version: source.map_or_else(String::new, |s| s.version.clone()),
        sha256: source.map_or_else(String::new, |s| s.sha256.clone()),
        chars: doc.char_len(),
        pages: doc.pages.iter().map(|&b| doc.byte_to_char(b)).collect(),
        warnings: source.map_or_else(Vec::new, |s| s.warnings.clone()),
        cached: source.is_some_and(|s| s.cached),
    }
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), ExtractError> {
    let fail = |source| ExtractError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    std::fs::write(path, bytes).map_err(fail)
}
