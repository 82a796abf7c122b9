//! `chunksweep extract`: every document of a corpus folder as the text chunksweep knows, written
//! to a folder with `extract.json` (each file's SHA-256, reader and version, page starts,
//! warnings). Sweeping the written folder sweeps the same texts (without their pages).

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, ConfigFile};
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
    /// Files an earlier extract wrote to the same folder that this one did not write, removed
    /// (paths under the output folder; not in extract.json).
    #[serde(skip)]
    pub removed: Vec<String>,
}

/// What `chunksweep extract` is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractRequest {
    /// The config file: its `[corpus]` (path, readers, skip_unreadable) and `[llm]` cache.
    pub config: Option<PathBuf>,
    /// The corpus folder; `None` takes `[corpus] path` from the config file.
    pub corpus: Option<PathBuf>,
    /// The output folder.
    pub out: PathBuf,
    /// Skip files that no reader reads (`--skip-unreadable`).
    pub skip_unreadable: bool,
}

/// Runs `chunksweep extract`: reads the config file (if any), takes the corpus from the request
/// or the file's `[corpus] path`, and [`extract`]s it.
///
/// # Errors
/// [`Error::Config`] for a config file that cannot be read or is invalid (an unknown reader
/// name), or no corpus in the request or the file; otherwise as [`extract`].
pub fn run(req: &ExtractRequest) -> Result<Extraction, Error> {
    let file = match &req.config {
        Some(path) => ConfigFile::load(path)?,
        None => ConfigFile::default(),
    };
    let corpus = req
        .corpus
        .clone()
        .or_else(|| file.corpus.path.clone())
        .ok_or(ConfigError::Missing("corpus"))?;
    extract(&corpus, &reading(&file, req.skip_unreadable), &req.out)
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
/// `out` (folders created) and [`files::EXTRACT_JSON`](crate::files::EXTRACT_JSON). `out` must
/// be new, empty, or an earlier extract's output (it holds an extract.json); then the files
/// that earlier extract listed and this one does not write are removed, and nothing else.
///
/// # Errors
/// [`ExtractError::OutInsideCorpus`] and [`ExtractError::OutNotEmpty`] (refused before
/// reading); [`Error::Corpus`] as [`load_corpus`]; [`ExtractError::Write`] naming the file.
pub fn extract(corpus: &Path, reading: &Reading, out: &Path) -> Result<Extraction, Error> {
    let inside = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    if inside(out).starts_with(inside(corpus)) {
        return Err(ExtractError::OutInsideCorpus {
            out: out.to_path_buf(),
            corpus: corpus.to_path_buf(),
        }
        .into());
    }
    let earlier = earlier_output(out)?;
    let loaded = load_corpus(corpus, reading)?;
    let mut documents = Vec::with_capacity(loaded.docs.len());
    for doc in &loaded.docs {
        let entry = entry(doc);
        write(&out.join(&entry.file), doc.text.as_bytes())?;
        documents.push(entry);
    }
    let json_path = out.join(crate::files::EXTRACT_JSON);
    let mut extraction = Extraction {
        corpus: corpus.to_path_buf(),
        documents,
        skipped: loaded.skipped,
        removed: Vec::new(),
    };
    let json = serde_json::to_string_pretty(&extraction).expect("extract.json serialises");
    write(&json_path, format!("{json}\n").as_bytes())?;
    for file in earlier {
        if extraction.documents.iter().any(|d| d.file == file) {
            continue;
        }
        let path = out.join(&file);
        match std::fs::remove_file(&path) {
            Ok(()) => extraction.removed.push(file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(ExtractError::Write { path, source }.into()),
        }
        // folders the removed file leaves empty go too (remove_dir refuses a non-empty one)
        let mut dir = path.parent();
        while let Some(d) = dir.filter(|d| *d != out && std::fs::remove_dir(d).is_ok()) {
            dir = d.parent();
        }
    }
    Ok(extraction)
}

/// The text files an earlier extract listed in `out`'s extract.json (relative paths without
/// `..`, so never outside `out`); none when `out` does not exist or is empty.
///
/// # Errors
/// [`ExtractError::OutNotEmpty`] when `out` holds files but no readable extract.json;
/// [`ExtractError::Write`] when `out` cannot be listed (a file, no permission).
fn earlier_output(out: &Path) -> Result<Vec<String>, ExtractError> {
    #[derive(Deserialize)]
    struct Earlier {
        documents: Vec<EarlierFile>,
    }
    #[derive(Deserialize)]
    struct EarlierFile {
        file: String,
    }
    let mut listing = match std::fs::read_dir(out) {
        Ok(listing) => listing,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(ExtractError::Write {
                path: out.to_path_buf(),
                source,
            });
        }
    };
    if listing.next().is_none() {
        return Ok(Vec::new());
    }
    let not_ours = || ExtractError::OutNotEmpty {
        out: out.to_path_buf(),
    };
    let text =
        std::fs::read_to_string(out.join(crate::files::EXTRACT_JSON)).map_err(|_| not_ours())?;
    let earlier: Earlier = serde_json::from_str(&text).map_err(|_| not_ours())?;
    let within = |f: &String| {
        Path::new(f)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
    };
    Ok(earlier
        .documents
        .into_iter()
        .map(|d| d.file)
        .filter(within)
        .collect())
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
