//! Chunking strategies. Each strategy turns one document's text into byte ranges; this module
//! turns those into [`Chunk`]s that know their document, code-point range, heading path and
//! token count.
//!
//! | strategy    | boundaries come from                                             | file            |
//! |-------------|------------------------------------------------------------------|-----------------|
//! | `fixed`     | windows of `chunk_size` tokens, stride `chunk_size - chunk_overlap` | [`windows`]  |
//! | `words`     | the same windows over whitespace words (seed 000's harness)      | [`windows`]     |
//! | `recursive` | text-splitter: paragraphs, then sentences, then words            | [`recursive`]   |
//! | `markdown`  | a chunk per heading section (Markdown or reST by file type), split inside by text-splitter's Markdown levels (plain paragraphs for `.rst`/`.txt`) | [`markdown`] |
//! | `sentence`  | whole sentences (UAX #29) packed up to `chunk_size`              | [`sentence`]    |
//! | `semantic`  | sentence-embedding distance above a percentile, capped at `chunk_size` | [`semantic`] |
//!
//! Every chunk is then held to its size by its own token count ([`bound`], [`windows`]); the
//! document's file type decides its headings ([`headings`], [`rst`]); split Markdown tables
//! carry their header rows ([`tables`]).

pub mod bound;
pub mod enrich;
pub mod headings;
pub mod markdown;
pub mod recursive;
pub mod rst;
pub mod semantic;
pub mod sentence;
pub mod tables;
pub mod windows;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::corpus::{Corpus, Document};
use crate::tokenize::{CorpusTokens, DocSizer, TokenCounter, TokenStream, TokenizerKind};
use headings::DocKind;

/// A chunking strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// Boundaries where consecutive sentence embeddings are far apart, capped at `chunk_size`
    /// (needs sentence embeddings; see [`semantic`]).
    Semantic,
}

impl Strategy {
    /// Every strategy, in the order used for reports.
    pub const ALL: [Strategy; 6] = [
        Strategy::Fixed,
        Strategy::Words,
        Strategy::Recursive,
        Strategy::Markdown,
        Strategy::Sentence,
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
            Strategy::Semantic => "semantic",
        }
    }
}

/// The unit `chunk_size` and `chunk_overlap` are counted in for a strategy named `strategy` under
/// the tokenizer named `tokenizer` (as in sweep.csv): `"words"` for the `words` strategy or the
/// `words` tokenizer, else `"tokens"`. Cost columns are always in the tokenizer's unit.
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
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Strategy::ALL
            .into_iter()
            .find(|st| st.name() == s)
            .ok_or_else(|| {
                format!("unknown strategy {s:?}: use fixed, words, recursive, markdown, sentence or semantic")
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
            ChunkError::ZeroSize | ChunkError::OverlapTooLarge { .. } => {
                crate::exit::ExitClass::Usage
            }
            ChunkError::MissingSentenceEmbedding { .. } => crate::exit::ExitClass::Failure,
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
    /// [`enrich`]): the configuration's prefix, then the carried [`Chunk::table_header`]. It
    /// never changes the ranges above.
    pub prefix: String,
    /// Tokens the prefix adds, separator included (0 without a prefix).
    pub prefix_tokens: usize,
    /// The header and delimiter rows of the Markdown table whose body the chunk starts in
    /// (`markdown` strategy only; empty otherwise), carried in [`Chunk::prefix`].
    pub table_header: String,
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

    /// What is indexed and shown to the generator: `prefix + "\n\n" + text`, or the text alone.
    pub fn indexed_text<'a>(&self, corpus: &'a Corpus) -> std::borrow::Cow<'a, str> {
        enrich::with_prefix(&self.prefix, self.text(corpus))
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

/// Chunks one document.
///
/// Every chunk's `tokens` is the count of its own text encoded alone with `counter`, and no
/// chunk exceeds `chunk_size` (whitespace words for `words`, `counter`'s unit otherwise) unless
/// it is a single unit that cannot be split (a character or grapheme of more tokens than the
/// size; see [`oversize`]). Chunks come in order, none repeats
/// or lies inside the previous one, and none is whitespace only. The `fixed` and `words` windows
/// keep their exact unit boundaries ([`windows`]); the other strategies' chunks are trimmed of
/// surrounding whitespace and split again where their own text is over the size ([`bound`]).
///
/// `stream` is the document's token stream in the unit of `counter`; the strategies built on
/// text-splitter size their candidates through it (see [`DocSizer`]). The document's file type
/// decides its structure ([`DocKind`]): headings and heading paths for Markdown and
/// reStructuredText, none for plain text. For the `markdown` strategy, a chunk that starts
/// inside the body of a Markdown table carries the table's header rows ([`tables`]).
///
/// # Errors
/// [`ChunkError::MissingSentenceEmbedding`] for `semantic` without `ctx.sentence_vectors` or
/// without a vector for a sentence.
pub fn chunk_document(
    doc: &Document,
    doc_index: usize,
    stream: &TokenStream,
    params: &ChunkParams,
    counter: TokenCounter,
    ctx: &ChunkContext<'_>,
) -> Result<Vec<Chunk>, ChunkError> {
    let text = doc.text.as_str();
    let kind = DocKind::of(doc);
    let sizer = DocSizer::new(text, stream, counter, params.chunk_size);
    let (size, overlap) = (params.chunk_size, params.chunk_overlap);
    let sized = match params.strategy {
        Strategy::Fixed => {
            windows::split(text, &windows::stream_units(stream), size, overlap, counter)
        }
        Strategy::Words => {
            let words = TokenCounter::new(TokenizerKind::Words);
            windows::split(text, &windows::word_units(text), size, overlap, words)
                .into_iter()
                .map(|(s, e, _)| (s, e, counter.count(&text[s..e])))
                .collect()
        }
        Strategy::Recursive => {
            bound::fit(text, recursive::split(text, params, sizer), params, counter)
        }
        Strategy::Markdown => bound::fit(
            text,
            markdown::split(text, kind, params, sizer),
            params,
            counter,
        ),
        Strategy::Sentence => {
            bound::fit(text, sentence::split(text, params, sizer), params, counter)
        }
        Strategy::Semantic => {
            let none = || ChunkError::MissingSentenceEmbedding {
                preview: text.chars().take(60).collect(),
            };
            let vectors = ctx.sentence_vectors.ok_or_else(none)?;
            let ranges = semantic::split(text, params, sizer, vectors, &ctx.semantic)?;
            bound::fit(text, ranges, params, counter)
        }
    };
    let heading_list = headings::headings(kind, text);
    let mut paths = headings::PathTracker::new(&heading_list);
    let table_heads = if params.strategy == Strategy::Markdown && kind == DocKind::Markdown {
        tables::table_heads(text)
    } else {
        Vec::new()
    };
    let mut chunks = Vec::with_capacity(sized.len());
    for (s, e, tokens) in sized {
        let table_header = tables::header_at(&table_heads, s)
            .unwrap_or_default()
            .to_string();
        let prefix_tokens = enrich::prefix_tokens(&table_header, counter);
        chunks.push(Chunk {
            doc: doc_index,
            ordinal: chunks.len(),
            start: doc.byte_to_char(s),
            end: doc.byte_to_char(e),
            byte_start: s,
            byte_end: e,
            heading_path: paths.path_at(s),
            tokens,
            prefix: table_header.clone(),
            prefix_tokens,
            table_header,
        });
    }
    Ok(chunks)
}

/// What strategies beyond text and tokens need: sentence embeddings for `semantic`.
#[derive(Clone, Copy, Default)]
pub struct ChunkContext<'a> {
    /// Unit sentence vectors (required by `semantic`).
    pub sentence_vectors: Option<&'a dyn semantic::SentenceVectors>,
    /// Settings of `semantic`.
    pub semantic: semantic::SemanticSettings,
}

/// `(max_chunk_tokens, n_oversize)` of one configuration's chunks: the most tokens of one
/// chunk's own text ([`Chunk::tokens`]), and how many chunks are over `params.chunk_size` in the
/// size's unit (whitespace words for `words`, tokens otherwise), each a single unit that cannot
/// be split. `(0, 0)` for no chunk.
pub fn oversize(corpus: &Corpus, chunks: &[Chunk], params: &ChunkParams) -> (usize, usize) {
    let max = chunks.iter().map(|c| c.tokens).max().unwrap_or(0);
    let size_of = |c: &Chunk| match params.strategy {
        Strategy::Words => c.text(corpus).split_whitespace().count(),
        _ => c.tokens,
    };
    let over = chunks
        .iter()
        .filter(|c| size_of(c) > params.chunk_size)
        .count();
    (max, over)
}

/// Chunks every document of the corpus, in document order, with the token streams of `tokens`
/// (computed once per sweep and shared by every configuration); `ctx` holds the sentence
/// vectors that `semantic` needs.
///
/// # Errors
/// [`ChunkError`] for invalid parameters (checked before any work) or a missing sentence
/// embedding.
pub fn chunk_corpus(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    params: &ChunkParams,
    ctx: &ChunkContext<'_>,
) -> Result<Vec<Chunk>, ChunkError> {
    params.validate()?;
    let mut out = Vec::new();
    for (i, doc) in corpus.docs.iter().enumerate() {
        out.extend(chunk_document(
            doc,
            i,
            tokens.doc(i),
            params,
            tokens.counter(),
            ctx,
        )?);
    }
    Ok(out)
}

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
