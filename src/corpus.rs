//! The corpus: a directory of UTF-8 text documents, read recursively.
//!
//! Document ids are paths relative to the corpus root with `/` separators, and documents are kept
//! sorted by id, so "document order" (id, then position) is the same on every machine. Offsets
//! that leave this module are Unicode code points (chars); byte offsets are used only to slice.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use thiserror::Error;

/// File extensions read as documents (lower case, without the dot).
pub const EXTENSIONS: &[&str] = &["md", "markdown", "txt", "rst"];

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
        "corpus path {0} is not a directory: --corpus takes a folder of .md/.markdown/.txt/.rst files"
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
    /// A document is not valid UTF-8.
    #[error(
        "{path} is not valid UTF-8 (first bad byte at offset {byte}, line {line}): re-encode it as UTF-8 or move it out of the corpus"
    )]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// Byte offset of the first invalid byte.
        byte: usize,
        /// 1-based line of the first invalid byte.
        line: usize,
    },
    /// No document with a known extension was found.
    #[error("corpus directory {0} holds no .md, .markdown, .txt or .rst file")]
    Empty(PathBuf),
}

impl CorpusError {
    /// Always usage (2): the corpus is the user's input.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        match self {
            CorpusError::NotFound(_)
            | CorpusError::NotADirectory(_)
            | CorpusError::Io { .. }
            | CorpusError::NotUtf8 { .. }
            | CorpusError::Empty(_) => crate::exit::ExitClass::Usage,
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
    char_len: usize,
    /// Byte offset of every `CHECKPOINT_CHARS`-th code point; empty when the text is ASCII.
    checkpoints: Vec<usize>,
}

impl Document {
    /// Builds a document from its id and text (a leading BOM is removed).
    pub fn new(id: impl Into<String>, text: impl Into<String>) -> Self {
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
            id: id.into(),
            text,
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
}

impl Corpus {
    /// Builds a corpus from documents already in memory (sorted here by id).
    pub fn from_documents(root: impl Into<PathBuf>, mut docs: Vec<Document>) -> Self {
        docs.sort_by(|a, b| a.id.cmp(&b.id));
        Corpus {
            root: root.into(),
            docs,
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

/// Reads every `.md`, `.markdown`, `.txt` and `.rst` file under `root` (recursively, hidden files
/// and folders skipped, symbolic links not followed), files in parallel, documents in path order.
///
/// # Errors
/// [`CorpusError`] when the directory is missing or empty, a file cannot be read, or a file is not
/// UTF-8 (the error names the file, the byte offset and the line).
pub fn load_corpus(root: &Path) -> Result<Corpus, CorpusError> {
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
    let mut paths = Vec::new();
    let mut walk_error = None;
    for entry in walker {
        match entry {
            Ok(entry) if entry.file_type().is_file() && has_known_extension(entry.path()) => {
                paths.push(entry.into_path());
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
    // files read and indexed in parallel; the error returned is the first in walk order
    let read: Vec<Result<Document, CorpusError>> = paths
        .par_iter()
        .map(|path| read_document(root, path))
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
    Ok(Corpus::from_documents(root, docs))
}

/// One file of the corpus as a document whose id is its path under `root`.
fn read_document(root: &Path, path: &Path) -> Result<Document, CorpusError> {
    let bytes = std::fs::read(path).map_err(|source| CorpusError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let byte = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..byte].iter().filter(|&&b| b == b'\n').count();
        CorpusError::NotUtf8 {
            path: path.to_path_buf(),
            byte,
            line,
        }
    })?;
    let id = path
        .strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    Ok(Document::new(id, text))
}

fn has_known_extension(path: &Path) -> bool {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .is_some_and(|e| EXTENSIONS.contains(&e.as_str()))
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
        let corpus = load_corpus(root).unwrap();
        let ids: Vec<&str> = corpus.docs.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids.len(), 41);
        assert_eq!((ids[0], ids[39], ids[40]), ("a00.md", "a39.md", "b/one.md"));
        assert_eq!(corpus.docs[7].text, "doc 7");
        // two bad files: the one first in path order is named, whatever the threads do
        std::fs::write(root.join("a31.md"), b"ok\nok\nbad \xff").unwrap();
        std::fs::write(root.join("b/one.md"), b"\xfe").unwrap();
        for _ in 0..5 {
            match load_corpus(root) {
                Err(CorpusError::NotUtf8 { path, line, .. }) => {
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
