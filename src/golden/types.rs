//! The golden set's values: formats, raw and resolved questions, evidence locations, problems
//! and errors.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The two golden-set formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum GoldenFormat {
    /// One JSON object per line: `{"id", "question", "evidence": [...], "answer"?, "type"?}`.
    #[default]
    Jsonl,
    /// Chroma's `questions_df.csv` (question, references, corpus_id) beside a `corpora/` folder.
    Chroma,
}

impl GoldenFormat {
    /// Guesses the format from the file name: `.csv` is Chroma's, anything else JSONL.
    pub fn from_path(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("csv") => GoldenFormat::Chroma,
            _ => GoldenFormat::Jsonl,
        }
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            GoldenFormat::Jsonl => "jsonl",
            GoldenFormat::Chroma => "chroma",
        }
    }
}

impl FromStr for GoldenFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "jsonl" => Ok(GoldenFormat::Jsonl),
            "chroma" => Ok(GoldenFormat::Chroma),
            other => Err(format!(
                "unknown golden format {other:?}: use jsonl or chroma"
            )),
        }
    }
}

/// One evidence item as written in the golden file, before it is located in the corpus.
#[derive(Debug, Clone, PartialEq)]
pub enum RawEvidence {
    /// Exact text, searched in every document.
    Text(String),
    /// Exact text, searched in one document.
    DocText {
        /// Document id.
        doc: String,
        /// The text.
        text: String,
    },
    /// A code-point range of one document (end exclusive), optionally with the text it must hold.
    DocRange {
        /// Document id.
        doc: String,
        /// First code point.
        start: usize,
        /// One past the last code point.
        end: usize,
        /// The text the range must hold, when the file gives it (Chroma's `content`).
        content: Option<String>,
    },
    /// A whole page of a document with pages (PDF): `{"doc": "filing.pdf", "page": 12}`,
    /// 1-based, the page's text without the whitespace at its edges.
    Page {
        /// Document id.
        doc: String,
        /// The page, 1-based.
        page: usize,
    },
    /// A whole document, or the section under one of its headings (seed 002's
    /// `"must_include": "path"` or `"path#anchor"`; see [`super::section`]).
    Section {
        /// Document id.
        doc: String,
        /// GitHub-style heading anchor, or `section-N` for the N-th heading (1-based); `None`
        /// for the whole document.
        anchor: Option<String>,
    },
}

/// Where a golden-set item came from, as its line records it (every field optional, so files
/// written by hand read as before).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// `"draft"` for an item written by `chunksweep golden draft`; anything else (or nothing) is
    /// taken as written by a person.
    pub source: Option<String>,
    /// The model that drafted it.
    pub model: Option<String>,
    /// SHA-256 (hex) of the prompt template it was drafted with.
    pub prompt_sha256: Option<String>,
    /// Whether a person accepted it (`chunksweep golden review`).
    pub reviewed: Option<bool>,
}

impl Origin {
    /// The `source` of a drafted item.
    pub const DRAFT: &'static str = "draft";

    /// Whether the item was drafted by a model (`"source": "draft"`).
    pub fn is_draft(&self) -> bool {
        self.source.as_deref() == Some(Self::DRAFT)
    }

    /// Whether the item is a draft no person has accepted yet (`"reviewed"` absent or false).
    pub fn is_unreviewed_draft(&self) -> bool {
        self.is_draft() && self.reviewed != Some(true)
    }
}

/// One question as read from the golden file.
#[derive(Debug, Clone, PartialEq)]
pub struct RawQuestion {
    /// 1-based line of the golden file the question starts on.
    pub line: usize,
    /// Question id (Chroma rows get `q<row>`, 1-based).
    pub id: String,
    /// The question text.
    pub question: String,
    /// Evidence items; a question needs at least one.
    pub evidence: Vec<RawEvidence>,
    /// Reference answer, when the golden set has one.
    pub answer: Option<String>,
    /// Question type tag (Chroma rows use their corpus id).
    pub question_type: Option<String>,
    /// Where the item came from (drafted or not, reviewed or not).
    pub origin: Origin,
}

/// Questions read from a golden file, with a [`ProblemKind::Malformed`] problem for every line or
/// row that is not one (reading goes on past them).
pub type Read = (Vec<RawQuestion>, Vec<Problem>);

/// A place in the corpus where an evidence span occurs: document index and code-point range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// Index into [`Corpus::docs`].
    pub doc: usize,
    /// First code point.
    pub start: usize,
    /// One past the last code point.
    pub end: usize,
}

impl Location {
    /// Length in code points.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether the range is empty.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// One evidence span with every location where it occurs; retrieving any one of them counts.
#[derive(Debug, Clone, PartialEq)]
pub struct EvidenceSpan {
    /// The acceptable locations, in document order; never empty after resolution.
    pub locations: Vec<Location>,
}

/// A resolved question.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// 1-based line of the golden file.
    pub line: usize,
    /// Question id, unique in the set.
    pub id: String,
    /// The question text.
    pub text: String,
    /// Evidence spans; a question's recall is the share of these retrieved.
    pub spans: Vec<EvidenceSpan>,
    /// Reference answer, if any.
    pub answer: Option<String>,
    /// Question type tag, if any.
    pub question_type: Option<String>,
    /// Where the item came from (drafted or not, reviewed or not).
    pub origin: Origin,
}

/// A golden set resolved against a corpus.
#[derive(Debug, Clone)]
pub struct GoldenSet {
    /// The file it was read from.
    pub path: PathBuf,
    /// The questions, in file order.
    pub questions: Vec<Question>,
    /// Evidence spans whose text started or ended with whitespace, trimmed at resolution.
    /// Containment ignores whitespace at the edges of a span (a chunk of a strategy that trims
    /// its edges could never hold `"fourteen days. "` whole), so every location is trimmed in
    /// every golden format.
    pub trimmed_spans: usize,
}

/// How serious a [`Problem`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The question cannot be scored; a sweep refuses to start.
    Error,
    /// Scored, but worth a look (for example evidence matched only after forgiving whitespace).
    Warning,
}

/// What is wrong with a golden-set entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    /// Evidence text occurs nowhere (or not in the named document).
    SpanNotFound,
    /// Evidence matched only after collapsing whitespace.
    WhitespaceForgiven,
    /// A code-point range outside the document, empty, or holding other text than given.
    BadRange,
    /// The question text is empty.
    EmptyQuestion,
    /// The question has no evidence.
    NoEvidence,
    /// Two questions share an id.
    DuplicateId,
    /// Evidence names a document the corpus does not have.
    UnknownDocument,
    /// A line (JSONL) or row (Chroma CSV) that is not a question: the rest of the file is still
    /// read, so every such line is listed.
    Malformed,
    /// A `must_include` anchor that names no heading of its document.
    UnknownAnchor,
}

impl ProblemKind {
    /// Severity of this kind.
    pub fn severity(self) -> Severity {
        match self {
            ProblemKind::WhitespaceForgiven => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

/// One problem found in the golden set, with the file and line to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The golden file.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// The kind of problem.
    pub kind: ProblemKind,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.kind.severity() {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(
            f,
            "{}:{}: {level}: {}",
            self.file.display(),
            self.line,
            self.message
        )
    }
}

/// Errors that stop a golden set from being read at all (problems with single entries are
/// [`Problem`]s instead).
#[derive(Debug, Error)]
pub enum GoldenError {
    /// The file could not be read.
    #[error("cannot read golden set {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line or row could not be parsed.
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong and what to do.
        message: String,
    },
    /// The file holds no question.
    #[error(
        "golden set {0} holds no question: add one JSON object per line (see README, \"Golden set\")"
    )]
    Empty(PathBuf),
    /// An output path a golden-set command refuses before any work (`golden draft --out` that
    /// exists, `golden review --out` over its input): the path and what to do.
    #[error("{0}")]
    Out(String),
    /// Some entries have errors: every one is listed, or the first [`GoldenError::LISTED`]
    /// and the count, pointing to `chunksweep validate`.
    #[error("{}", invalid_message(path, *count, listed))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Number of error-level problems.
        count: usize,
        /// The first [`GoldenError::LISTED`] problems (at most), formatted, in line order.
        listed: Vec<String>,
    },
}

/// The message of [`GoldenError::Invalid`]: one problem per line, then what to do.
fn invalid_message(path: &Path, count: usize, listed: &[String]) -> String {
    let mut message = format!("golden set {} has {count} error(s):", path.display());
    for problem in listed {
        message.push_str("\n  ");
        message.push_str(problem);
    }
    if count > listed.len() {
        message.push_str(&format!(
            "\n  … and {} more: run `chunksweep validate` to list them all",
            count - listed.len()
        ));
    } else {
        message
            .push_str("\nfix them (`chunksweep validate` checks the golden set without sweeping)");
    }
    message
}

impl GoldenError {
    /// How many error-level problems [`GoldenError::Invalid`] lists before giving only the count.
    pub const LISTED: usize = 10;

    /// Always usage (2): the golden set is the user's input.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        match self {
            GoldenError::Io { .. }
            | GoldenError::Parse { .. }
            | GoldenError::Empty(_)
            | GoldenError::Out(_)
            | GoldenError::Invalid { .. } => crate::exit::ExitClass::Usage,
        }
    }
}
