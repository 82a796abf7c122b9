//! The corpus: a directory of documents, read recursively, each file by its reader
//! ([`crate::documents`]: text, Markdown and reST as they are; PDF, HTML and DOCX extracted).
//!
//! Document ids are paths relative to the corpus root with `/` separators, and documents are kept
//! sorted by id, so "document order" (id, then position) is the same on every machine. Offsets
//! that leave this module are Unicode code points (chars); byte offsets are used only to slice.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::documents::cache::{CacheError, DocumentCache};
use crate::documents::extracted::ReadError;
use crate::documents::kind::{ReaderKind, TextFormat, format_of_name, reader_for};
use crate::documents::read::{ReadFailure, Source, read_file};

/// How a corpus folder is read: the `[corpus]` settings and the document cache.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// Extensions (lower case, without the dot; `rst.txt` for a double one) mapped to a
    /// reader, over the defaults (`[corpus] readers`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub readers: BTreeMap<String, ReaderKind>,
    /// Files no reader reads are skipped with a warning instead of an error
    /// (`--skip-unreadable`, `[corpus] skip_unreadable`).
    #[serde(default)]
    pub skip_unreadable: bool,
    /// The document cache file (none: every converted file is extracted again).
    #[serde(skip)]
    pub cache: Option<PathBuf>,
}

impl Reading {
    /// Whether these are the defaults (no mapping, no skipping): not recorded in a manifest.
    pub fn is_plain(&self) -> bool {
        self.readers.is_empty() && !self.skip_unreadable
    }
}

/// How many files an error or a warning lists by name.
const LISTED: usize = 10;

/// Every this many code points, a [`Document`] remembers the byte offset, so converting an offset
/// costs at most this many steps.
const CHECKPOINT_CHARS: usize = 256;

/// Errors from [`load_corpus`].
#[derive(Debug, Error)]
pub enum CorpusError {
    /// The corpus path does not exist.
    #[error(
        "corpus directory {0} does not exist: pass the folder that holds your documents with --corpus"
    )]
    NotFound(PathBuf),
    /// The corpus path is not a directory.
    #[error(
        "corpus path {0} is not a directory: --corpus takes a folder of documents (.md .markdown .txt .rst .html .docx .pdf)"
    )]
    NotADirectory(PathBuf),
    /// A file or directory could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A file could not be read by its reader (not UTF-8, an encrypted or corrupt PDF, a zip
    /// that is not a DOCX...).
    #[error("{path}: {source}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The reader's reason.
        #[source]
        source: ReadError,
    },
    /// Files of a type no reader reads, and the user did not ask to skip them.
    #[error(
        "{count} file(s) under {root} have no reader: {listed}; map their extension to a reader in [corpus] readers (text, markdown, rst, html, docx, pdf), move them out, or pass --skip-unreadable to skip them"
    )]
    NoReader {
        /// The corpus folder.
        root: PathBuf,
        /// How many files.
        count: usize,
        /// The first of them, comma-separated.
        listed: String,
    },
    /// The document cache failed.
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// No document with a known extension was found.
    #[error(
        "corpus directory {0} holds no document (.md .markdown .txt .rst .html .docx .pdf, or an extension mapped in [corpus] readers)"
    )]
    Empty(PathBuf),
}

impl CorpusError {
    /// Always usage (2): the corpus is the user's input.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        match self {
            CorpusError::NotFound(_)
            | CorpusError::NotADirectory(_)
            | CorpusError::Io { .. }
            | CorpusError::Unreadable { .. }
            | CorpusError::NoReader { .. }
            | CorpusError::Empty(_) => crate::exit::ExitClass::Usage,
            CorpusError::Cache(_) => crate::exit::ExitClass::Failure,
        }
    }
}

/// One document of the corpus.
#[derive(Debug, Clone)]
pub struct Document {
    /// Path relative to the corpus root, `/`-separated (for example `guide/install.md`).
    pub id: String,
    /// The full text, UTF-8, without a leading byte-order mark.
    pub text: String,
    /// How the text is structured (headings for the `markdown` strategy): the reader's output
    /// format, or for a document built in memory its id's extension.
    pub format: TextFormat,
    /// Byte offsets in `text` where each page starts, page 1 first (PDF); empty for a document
    /// without pages.
    pub pages: Vec<usize>,
    /// Where the text came from (the file's reader, version, SHA-256, warnings); `None` for a
    /// document built in memory.
    pub source: Option<Source>,
    char_len: usize,
    /// Byte offset of every `CHECKPOINT_CHARS`-th code point; empty when the text is ASCII.
    checkpoints: Vec<usize>,
}

impl Document {
    /// Builds a document from its id and text (a leading BOM is removed), formatted as its
    /// id's extension says, without pages or source.
    pub fn new(id: impl Into<String>, text: impl Into<String>) -> Self {
        let id = id.into();
        let mut text = text.into();
        if text.starts_with('\u{feff}') {
            text.drain(..'\u{feff}'.len_utf8());
        }
        let mut checkpoints = Vec::new();
        let mut char_len = text.len();
        if !text.is_ascii() {
            char_len = 0;
            for (i, (byte, _)) in text.char_indices().enumerate() {
                if i % CHECKPOINT_CHARS == 0 {
                    checkpoints.push(byte);
                }
                char_len += 1;
            }
        }
        Document {
            format: format_of_name(&id),
            id,
            text,
            pages: Vec::new(),
            source: None,
            char_len,
            checkpoints,
        }
    }

    /// Length of the text in code points.
    pub fn char_len(&self) -> usize {
        self.char_len
    }

    /// Converts a byte offset (on a char boundary, at most the text length) to a code-point offset.
    pub fn byte_to_char(&self, byte: usize) -> usize {
        if self.checkpoints.is_empty() {
            return byte;
        }
        let slot = self.checkpoints.partition_point(|&b| b <= byte) - 1;
        let from = self.checkpoints[slot];
        slot * CHECKPOINT_CHARS + self.text[from..byte].chars().count()
    }

    /// Converts a code-point offset (at most [`Document::char_len`]) to a byte offset.
    pub fn char_to_byte(&self, ch: usize) -> usize {
        if self.checkpoints.is_empty() {
            return ch;
        }
        let slot = ch / CHECKPOINT_CHARS;
        let from = self.checkpoints[slot];
        let rest = ch - slot * CHECKPOINT_CHARS;
        match self.text[from..].char_indices().nth(rest) {
            Some((b, _)) => from + b,
            None => self.text.len(),
        }
    }

    /// The byte range of page `page` (1-based) in `text`, or `None` when the document has no
    /// such page.
    pub fn page_bytes(&self, page: usize) -> Option<(usize, usize)> {
        let start = *self.pages.get(page.checked_sub(1)?)?;
        let end = self.pages.get(page).copied().unwrap_or(self.text.len());
        Some((start, end))
    }

    /// The 1-based page that holds byte offset `byte`, or `None` for a document without pages.
    pub fn page_at(&self, byte: usize) -> Option<usize> {
        (!self.pages.is_empty()).then(|| self.pages.partition_point(|&p| p <= byte).max(1))
    }

    /// The text between two code-point offsets (end exclusive).
    pub fn slice_chars(&self, start: usize, end: usize) -> &str {
        &self.text[self.char_to_byte(start)..self.char_to_byte(end)]
    }
}

/// All documents of a corpus, sorted by id.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// The directory the documents were read from.
    pub root: PathBuf,
    /// The documents, sorted by id.
    pub docs: Vec<Document>,
    /// Files skipped because no reader reads them (`--skip-unreadable`), by path under `root`.
    pub skipped: Vec<String>,
}

impl Corpus {
    /// Builds a corpus from documents already in memory (sorted here by id).
    pub fn from_documents(root: impl Into<PathBuf>, mut docs: Vec<Document>) -> Self {
        docs.sort_by(|a, b| a.id.cmp(&b.id));
        Corpus {
            root: root.into(),
            docs,
            skipped: Vec::new(),
        }
    }

    /// Index of the document with this id. A bare name also matches a document whose id is that
    /// name plus `.md` (Chroma's `corpus_id` convention).
    pub fn find(&self, id: &str) -> Option<usize> {
        self.docs
            .binary_search_by(|d| d.id.as_str().cmp(id))
            .ok()
            .or_else(|| {
                let with_ext = format!("{id}.md");
                self.docs
                    .binary_search_by(|d| d.id.as_str().cmp(&with_ext))
                    .ok()
            })
    }

    /// Total size of all texts in bytes.
    pub fn total_bytes(&self) -> usize {
        self.docs.iter().map(|d| d.text.len()).sum()
    }

    /// Groups of documents whose texts are byte-identical (two or more ids each, in id order;
    /// groups in the order of their first id). Both copies of a duplicate compete for the top
    /// ranks, so a span held by both can be retrieved twice and push other evidence out of the
    /// top k.
    pub fn duplicates(&self) -> Vec<Vec<&str>> {
        let mut by_text: std::collections::HashMap<&str, usize> = Default::default();
        let mut groups: Vec<Vec<&str>> = Vec::new();
        for doc in &self.docs {
            match by_text.get(doc.text.as_str()) {
                Some(&g) => groups[g].push(&doc.id),
                None => {
                    by_text.insert(&doc.text, groups.len());
                    groups.push(vec![&doc.id]);
                }
            }
        }
        groups.retain(|g| g.len() > 1);
        groups
    }

    /// The readers' warnings, each prefixed with its document's id, then one naming the files
    /// skipped for lack of a reader.
    pub fn reading_warnings(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .docs
            .iter()
            .filter_map(|d| Some((d, d.source.as_ref()?)))
            .flat_map(|(d, s)| s.warnings.iter().map(move |w| format!("{}: {w}", d.id)))
            .collect();
        if !self.skipped.is_empty() {
            out.push(format!(
                "{} file(s) under {} skipped, no reader reads them (--skip-unreadable): {}",
                self.skipped.len(),
                self.root.display(),
                listed(&self.skipped)
            ));
        }
        out
    }

    /// One warning per group of [`Corpus::duplicates`], naming the files and what to do.
    pub fn duplicate_warnings(&self) -> Vec<String> {
        self.duplicates()
            .iter()
            .map(|group| {
                format!(
                    "{} documents under {} are byte-identical: {}; every copy competes for the top ranks (recall at small k drops), keep one",
                    group.len(),
                    self.root.display(),
                    // Three names at most: a corpus of 50 copies is named by its first.
                    if group.len() <= 3 {
                        group.join(", ")
                    } else {
                        format!("{} and {} byte-identical copies", group[0], group.len() - 1)
                    }
                )
            })
            .collect()
    }
}

/// Reads every file under `root` (recursively, hidden files and folders skipped, symbolic
/// links not followed) by its reader ([`reader_for`] with `reading.readers`), files in
/// parallel, converted ones through the document cache `reading.cache`, documents in path order.
///
/// # Errors
/// [`CorpusError`] when the directory is missing or holds no document, a file cannot be read
/// or its reader fails (the error names the file, and the byte offset and line for text that is
/// not UTF-8), or files have no reader and `reading.skip_unreadable` is off (the error lists
/// them); [`CorpusError::Cache`] when the document cache fails.
pub fn load_corpus(root: &Path, reading: &Reading) -> Result<Corpus, CorpusError> {
    if !root.exists() {
        return Err(CorpusError::NotFound(root.to_path_buf()));
    }
    if !root.is_dir() {
        return Err(CorpusError::NotADirectory(root.to_path_buf()));
    }
    let walker = walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    // the files up to the first folder that cannot be read (whose error comes after theirs)
    let mut files = Vec::new();
    let mut unread = Vec::new();
    let mut walk_error = None;
    for entry in walker {
        match entry {
            // a folder written by `extract` sweeps as its texts: its record is not a document
            Ok(entry) if entry.depth() == 1 && entry.file_name() == crate::files::EXTRACT_JSON => {}
            Ok(entry) if entry.file_type().is_file() => {
                let name = entry.file_name().to_string_lossy();
                match reader_for(&name, &reading.readers) {
                    Some(reader) => files.push((entry.into_path(), reader)),
                    None => unread.push(id_of(root, entry.path())),
                }
            }
            Ok(_) => {}
            Err(e) => {
                walk_error = Some(CorpusError::Io {
                    path: e.path().unwrap_or(root).to_path_buf(),
                    source: e.into(),
                });
                break;
            }
        }
    }
    if !unread.is_empty() && !reading.skip_unreadable {
        return Err(CorpusError::NoReader {
            root: root.to_path_buf(),
            count: unread.len(),
            listed: listed(&unread),
        });
    }
    let cache = match &reading.cache {
        Some(path) => Some(DocumentCache::open(path)?),
        None => None,
    };
    // files read in parallel; the error returned is the first in walk order
    let read: Vec<Result<Document, CorpusError>> = files
        .par_iter()
        .map(|(path, reader)| read_document(root, path, *reader, cache.as_ref()))
        .collect();
    let mut docs = Vec::with_capacity(read.len());
    for doc in read {
        docs.push(doc?);
    }
    if let Some(e) = walk_error {
        return Err(e);
    }
    if docs.is_empty() {
        return Err(CorpusError::Empty(root.to_path_buf()));
    }
    let mut corpus = Corpus::from_documents(root, docs);
    corpus.skipped = unread;
    Ok(corpus)
}

/// The first [`LISTED`] names, comma-separated, and how many more.
fn listed(names: &[String]) -> String {
    let mut out = names[..names.len().min(LISTED)].join(", ");
    if names.len() > LISTED {
        out.push_str(&format!(" and {} more", names.len() - LISTED));
    }
    out
}

/// A file's path under `root`, `/`-separated: its document id.
fn id_of(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// One file of the corpus read by `reader` as a document whose id is its path under `root`.
fn read_document(
    root: &Path,
    path: &Path,
    reader: ReaderKind,
    cache: Option<&DocumentCache>,
) -> Result<Document, CorpusError> {
    let bytes = std::fs::read(path).map_err(|source| CorpusError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let (extracted, source) = read_file(reader, bytes, cache).map_err(|e| match e {
        ReadFailure::Read(source) => CorpusError::Unreadable {
            path: path.to_path_buf(),
            source,
        },
        ReadFailure::Cache(e) => CorpusError::Cache(e),
    })?;
    let mut doc = Document::new(id_of(root, path), extracted.text);
    // only the text readers keep a byte-order mark, and they have no pages
    doc.pages = extracted.pages;
    doc.format = reader.format();
    doc.source = Some(source);
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_identical_documents_are_grouped_and_named() {
        let corpus = Corpus::from_documents(
            "docs",
            vec![
                Document::new("c.md", "same text"),
                Document::new("a.md", "same text"),
                Document::new("b.md", "same text "),
                Document::new("d/e.md", "other"),
                Document::new("f.md", "other"),
            ],
        );
        assert_eq!(
            corpus.duplicates(),
            vec![vec!["a.md", "c.md"], vec!["d/e.md", "f.md"]]
        );
        assert_eq!(
            corpus.duplicate_warnings()[0],
            "2 documents under docs are byte-identical: a.md, c.md; every copy competes for the top ranks (recall at small k drops), keep one"
        );
        // 50 copies are named by the first, not listed.
        let copies = Corpus::from_documents(
            "docs",
            (0..50)
                .map(|i| Document::new(format!("c{i:02}.md"), "same"))
                .collect(),
        );
        assert_eq!(
            copies.duplicate_warnings(),
            vec![
                "50 documents under docs are byte-identical: c00.md and 49 byte-identical copies; every copy competes for the top ranks (recall at small k drops), keep one"
            ]
        );
        let single = Corpus::from_documents("docs", vec![Document::new("a.md", "x")]);
        assert!(single.duplicates().is_empty());
    }

    #[test]
    fn files_load_in_path_order_and_the_first_bad_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("b")).unwrap();
        for i in 0..40 {
            std::fs::write(root.join(format!("a{i:02}.md")), format!("doc {i}")).unwrap();
        }
        std::fs::write(root.join("b/one.md"), "one").unwrap();
        let corpus = load_corpus(root, &Reading::default()).unwrap();
        let ids: Vec<&str> = corpus.docs.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids.len(), 41);
        assert_eq!((ids[0], ids[39], ids[40]), ("a00.md", "a39.md", "b/one.md"));
        assert_eq!(corpus.docs[7].text, "doc 7");
        // two bad files: the one first in path order is named, whatever the threads do
        std::fs::write(root.join("a31.md"), b"ok\nok\nbad \xff").unwrap();
        std::fs::write(root.join("b/one.md"), b"\xfe").unwrap();
        for _ in 0..5 {
            match load_corpus(root, &Reading::default()) {
                Err(CorpusError::Unreadable {
                    path,
                    source: ReadError::NotUtf8 { line, .. },
                }) => {
                    assert_eq!(
                        (path.file_name().unwrap().to_str(), line),
                        (Some("a31.md"), 3)
                    );
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn offsets_round_trip_on_non_ascii_text() {
        let text = "“Café” — 🙂 ok".repeat(100);
        let doc = Document::new("a.md", text.clone());
        assert_eq!(doc.char_len(), text.chars().count());
        for (ch, (byte, _)) in text.char_indices().enumerate() {
            assert_eq!(doc.char_to_byte(ch), byte);
            assert_eq!(doc.byte_to_char(byte), ch);
        }
        assert_eq!(doc.char_to_byte(doc.char_len()), text.len());
        assert_eq!(doc.byte_to_char(text.len()), doc.char_len());
        assert_eq!(doc.slice_chars(1, 5), "Café");
    }

    #[test]
    fn bom_is_dropped() {
        let doc = Document::new("a.txt", "\u{feff}hello");
        assert_eq!(doc.text, "hello");
        assert_eq!(doc.char_len(), 5);
    }

    #[test]
    fn find_accepts_chroma_corpus_ids() {
        let corpus = Corpus::from_documents(
            "x",
            vec![Document::new("b.md", "b"), Document::new("a.md", "a")],
        );
        assert_eq!(corpus.docs[0].id, "a.md");
        assert_eq!(corpus.find("b.md"), Some(1));
        assert_eq!(corpus.find("b"), Some(1));
        assert_eq!(corpus.find("c"), None);
    }
}
