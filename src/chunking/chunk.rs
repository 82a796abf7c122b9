//! The values every strategy shares: the strategy names, the parameters of a chunking run,
//! its errors, and the chunk itself (ranges, heading path, token counts, prefix).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::external::name::ExternalName;
use crate::corpus::Corpus;
use crate::tokenize::TokenizerKind;

/// What goes between a prefix and the chunk's text, unless the prefix ends with a Markdown
/// table's delimiter row ([`separator_after`]).
pub const PREFIX_SEPARATOR: &str = "\n\n";

/// What goes between `prefix` and the chunk's text: one line break when the prefix's last line
/// is a Markdown table delimiter row (`|---|:--:|`: only `|`, `-`, `:` and spaces or tabs, with
/// at least one `|` and one `-`), so that the header rows a piece of a split table carries and
/// the rows the piece holds read as one table; [`PREFIX_SEPARATOR`] otherwise.
pub fn separator_after(prefix: &str) -> &'static str {
    let last = prefix.rsplit('\n').next().unwrap_or_default().trim();
    let delimiter = last.contains('|')
        && last.contains('-')
        && last
            .chars()
            .all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'));
    if delimiter { "\n" } else { PREFIX_SEPARATOR }
}

/// A chunking strategy: one of chunksweep's own, or an external chunker declared for the run
/// ([`super::external`]). Written as its name in config files, CSVs and manifests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Strategy {
    /// Fixed windows of `chunk_size` tokens.
    Fixed,
    /// Fixed windows of `chunk_size` whitespace words (seed 000's `chunk()`).
    Words,
    /// Recursive splitting: paragraph, then sentence, then word (text-splitter's `TextSplitter`).
    Recursive,
    /// Structure-aware: headings (Markdown, or reStructuredText section titles) start chunks; in
    /// Markdown, code fences and tables stay whole unless one alone exceeds `chunk_size`
    /// (text-splitter's `MarkdownSplitter` inside each section; `TextSplitter` for `.rst` and
    /// `.txt`), and later pieces of a split table carry its header rows.
    Markdown,
    /// Whole sentences packed up to `chunk_size`.
    Sentence,
    /// One chunk per page (documents with pages: PDF); a page over `chunk_size` is split by
    /// the `recursive` rule inside it ([`super::page`]).
    Page,
    /// Boundaries where consecutive sentence embeddings are far apart, capped at `chunk_size`
    /// (needs sentence embeddings; see [`semantic`]).
    Semantic,
    /// The user's own chunker, by the name it was declared under (`[[chunkers]]`,
    /// `--chunker`, or a precomputed chunks file).
    External(ExternalName),
}

impl Strategy {
    /// Every built-in strategy, in the order used for reports.
    pub const BUILT_IN: [Strategy; 7] = [
        Strategy::Fixed,
        Strategy::Words,
        Strategy::Recursive,
        Strategy::Markdown,
        Strategy::Sentence,
        Strategy::Page,
        Strategy::Semantic,
    ];

    /// The name used on the command line and in CSVs.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Fixed => "fixed",
            Strategy::Words => "words",
            Strategy::Recursive => "recursive",
            Strategy::Markdown => "markdown",
            Strategy::Sentence => "sentence",
            Strategy::Page => "page",
            Strategy::Semantic => "semantic",
            Strategy::External(name) => name.as_str(),
        }
    }

    /// Whether it is the user's own chunker.
    pub fn is_external(self) -> bool {
        matches!(self, Strategy::External(_))
    }
}

impl From<Strategy> for String {
    fn from(s: Strategy) -> String {
        s.name().to_string()
    }
}

impl TryFrom<String> for Strategy {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

/// The unit `chunk_size` and `chunk_overlap` are counted in for a built-in strategy named
/// `strategy` under the tokenizer named `tokenizer` (as in sweep.csv): `"words"` for the `words`
/// strategy or the `words` tokenizer, else `"tokens"`. An external chunker declares its own
/// (sweep.csv's `size_unit`). Cost columns are always in the tokenizer's unit.
pub fn size_unit(strategy: &str, tokenizer: &str) -> &'static str {
    if strategy == Strategy::Words.name() || tokenizer == TokenizerKind::Words.name() {
        "words"
    } else {
        "tokens"
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Strategy {
    type Err = String;
    /// A built-in strategy by its name, else an external chunker's name (whether one of that
    /// name is declared is checked with the plan).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(built_in) = Strategy::BUILT_IN.into_iter().find(|st| st.name() == s) {
            return Ok(built_in);
        }
        ExternalName::new(s).map(Strategy::External).map_err(|why| {
            format!("unknown strategy {s:?}: use fixed, words, recursive, markdown, sentence, page, semantic, or the name of a chunker declared with [[chunkers]] or --chunker; it cannot be a chunker's name: {why}")
        })
    }
}

/// Parameters of one chunking run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChunkParams {
    /// The strategy.
    pub strategy: Strategy,
    /// Maximum chunk length in tokens of the chosen unit (whitespace words for `words`).
    pub chunk_size: usize,
    /// Requested overlap with the previous chunk, same unit; must be below `chunk_size`.
    /// Strategies other than the windows honour it only where a boundary allows (see
    /// `realized_overlap` in the sweep).
    pub chunk_overlap: usize,
}

/// Errors from [`chunk_corpus`].
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ChunkError {
    /// chunk_size is zero.
    #[error("chunk_size must be at least 1")]
    ZeroSize,
    /// chunk_overlap is not below chunk_size.
    #[error(
        "chunk_overlap {overlap} must be smaller than chunk_size {size}: lower --overlap (a ratio below 1, or a token count below the size)"
    )]
    OverlapTooLarge {
        /// chunk_size.
        size: usize,
        /// chunk_overlap.
        overlap: usize,
    },
    /// An external configuration whose chunks the prepare step did not make.
    #[error("no chunks of the external configuration {config}: its chunker did not run")]
    MissingExternal {
        /// `<name>-<chunk_size>-o<chunk_overlap>`.
        config: String,
    },
    /// The `page` strategy met a document without pages.
    #[error(
        "the page strategy needs documents with pages, and {doc} has none (only PDF files have pages): sweep page over a folder of PDFs, or leave page out of [sweep] strategies"
    )]
    NoPages {
        /// The document's id.
        doc: String,
    },
    /// Semantic chunking met a sentence with no embedding.
    #[error(
        "semantic chunking: no embedding for the sentence {preview:?} (embed the sentences first)"
    )]
    MissingSentenceEmbedding {
        /// The sentence's first characters.
        preview: String,
    },
}

impl ChunkError {
    /// Usage (2) for parameters the user chose; failure (1) for a sentence the prepare step
    /// did not embed.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        match self {
            ChunkError::ZeroSize
            | ChunkError::OverlapTooLarge { .. }
            | ChunkError::NoPages { .. } => crate::exit::ExitClass::Usage,
            ChunkError::MissingSentenceEmbedding { .. } | ChunkError::MissingExternal { .. } => {
                crate::exit::ExitClass::Failure
            }
        }
    }
}

impl ChunkParams {
    /// Checks chunk_size > 0 and chunk_overlap < chunk_size.
    ///
    /// # Errors
    /// [`ChunkError::ZeroSize`] or [`ChunkError::OverlapTooLarge`].
    pub fn validate(&self) -> Result<(), ChunkError> {
        if self.chunk_size == 0 {
            return Err(ChunkError::ZeroSize);
        }
        if self.chunk_overlap >= self.chunk_size {
            return Err(ChunkError::OverlapTooLarge {
                size: self.chunk_size,
                overlap: self.chunk_overlap,
            });
        }
        Ok(())
    }
}

/// One chunk of one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Index of the document in [`Corpus::docs`].
    pub doc: usize,
    /// Position of the chunk within its document (0-based).
    pub ordinal: usize,
    /// First code point of the chunk in the document.
    pub start: usize,
    /// One past the last code point.
    pub end: usize,
    /// First byte (for slicing the document text).
    pub byte_start: usize,
    /// One past the last byte.
    pub byte_end: usize,
    /// Headings in effect where the chunk starts, outermost first (empty for plain text and
    /// before a document's first heading).
    pub heading_path: Vec<String>,
    /// Tokens (in the counter's unit) of the chunk's own text encoded alone, prefix excluded.
    pub tokens: usize,
    /// Contextual prefix put before the text when indexing and generating (empty for none; see
    /// [`enrich`]): the configuration's prefix, then the [`Chunk::carried`] text. It never
    /// changes the ranges above.
    pub prefix: String,
    /// Tokens the prefix adds, separator included (0 without a prefix).
    pub prefix_tokens: usize,
    /// Text the chunk carries that is not its own, kept in [`Chunk::prefix`]: for `markdown`,
    /// the header and delimiter rows of the Markdown table whose body the chunk starts in; for
    /// an external chunker, the text it put before the document's text (a title it prepends).
    /// Empty for none. Never part of evidence coverage.
    pub carried: String,
    /// Tokens the [`Chunk::carried`] text adds, separator included (0 without one). Not in
    /// [`Chunk::tokens`]; a `markdown` piece is sized with it ([`super::tables::carry`]), and a
    /// piece whose own text plus carried text is over `chunk_size` counts in `n_oversize`
    /// ([`super::oversize`]).
    pub carried_tokens: usize,
}

impl Chunk {
    /// Stable id: `<document id>#<ordinal>`. The same corpus and configuration give the same ids.
    pub fn id(&self, corpus: &Corpus) -> String {
        format!("{}#{}", corpus.docs[self.doc].id, self.ordinal)
    }

    /// The chunk's text.
    pub fn text<'a>(&self, corpus: &'a Corpus) -> &'a str {
        &corpus.docs[self.doc].text[self.byte_start..self.byte_end]
    }

    /// What is indexed and shown to the generator: `prefix`, its separator ([`separator_after`])
    /// and the text, or the text alone.
    pub fn indexed_text<'a>(&self, corpus: &'a Corpus) -> Cow<'a, str> {
        with_prefix(&self.prefix, self.text(corpus))
    }

    /// Tokens of the indexed text: [`Chunk::tokens`] + [`Chunk::prefix_tokens`].
    pub fn total_tokens(&self) -> usize {
        self.tokens + self.prefix_tokens
    }

    /// Length in code points.
    pub fn char_len(&self) -> usize {
        self.end - self.start
    }
}

/// Byte ranges of one document's chunks, in order, as a strategy returns them.
pub type Ranges = Vec<(usize, usize)>;

/// Byte ranges of one document's chunks with the token count of each one's own text.
pub type Sized = Vec<(usize, usize, usize)>;

/// `prefix`, its separator ([`separator_after`]: a blank line, or one line break after carried
/// table header rows) and `text`; `text` alone when `prefix` is empty.
pub fn with_prefix<'a>(prefix: &str, text: &'a str) -> Cow<'a, str> {
    if prefix.is_empty() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!("{prefix}{}{text}", separator_after(prefix)))
    }
}
