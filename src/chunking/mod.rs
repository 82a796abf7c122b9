//! Chunking strategies. Each strategy turns one document's text into byte ranges; this module
//! turns those into [`Chunk`]s that know their document, code-point range, heading path and
//! token count.
//!
//! | strategy    | boundaries come from                                             | file            |
//! |-------------|------------------------------------------------------------------|-----------------|
//! | `fixed`     | windows of `chunk_size` tokens, stride `chunk_size - chunk_overlap` | [`windows`]  |
//! | `words`     | the same windows over whitespace words (seed 000's harness)      | [`windows`]     |
//! | `recursive` | text-splitter: paragraphs, then sentences, then words            | [`recursive`]   |
//! | `markdown`  | a chunk per heading section, split inside by text-splitter's Markdown levels | [`markdown`] |
//! | `sentence`  | whole sentences (UAX #29) packed up to `chunk_size`              | [`sentence`]    |
//! | `semantic`  | sentence-embedding distance above a percentile, capped at `chunk_size` | [`semantic`] |

pub mod enrich;
pub mod headings;
pub mod markdown;
pub mod recursive;
pub mod semantic;
pub mod sentence;
pub mod windows;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::corpus::{Corpus, Document};
use crate::tokenize::{CorpusTokens, DocSizer, TokenStream};

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
    /// Structure-aware Markdown: headings start chunks; code fences and tables stay whole unless
    /// one alone exceeds `chunk_size` (text-splitter's `MarkdownSplitter` inside each section).
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
    /// Headings in effect where the chunk starts, outermost first (empty outside Markdown).
    pub heading_path: Vec<String>,
    /// Length in tokens of the counter's unit (the chunk's own text, prefix excluded).
    pub tokens: usize,
    /// Contextual prefix put before the text when indexing and generating (empty for none; see
    /// [`enrich`]). It never changes the ranges above.
    pub prefix: String,
    /// Tokens the prefix adds, separator included (0 without a prefix).
    pub prefix_tokens: usize,
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

/// What strategies beyond text and tokens need: sentence embeddings for `semantic`.
#[derive(Clone, Copy, Default)]
pub struct ChunkContext<'a> {
    /// Unit sentence vectors (required by `semantic`).
    pub sentence_vectors: Option<&'a dyn semantic::SentenceVectors>,
    /// Settings of `semantic`.
    pub semantic: semantic::SemanticSettings,
}

/// Chunks one document. Ranges are trimmed of surrounding whitespace (except `fixed` windows,
/// which keep their exact token boundaries, since trimming a leading space can make BPE count one
/// token more); empty ones are dropped.
///
/// `stream` is the document's token stream in the unit of `counter`; sizes are counted through it
/// (see [`DocSizer`]), so a chunk's `tokens` is the number of the document's tokens it overlaps.
///
/// # Errors
/// [`ChunkError::MissingSentenceEmbedding`] for `semantic` without a vector for a sentence.
pub fn chunk_document(
    doc: &Document,
    doc_index: usize,
    stream: &TokenStream,
    params: &ChunkParams,
    counter: crate::tokenize::TokenCounter,
    ctx: &ChunkContext<'_>,
) -> Result<Vec<Chunk>, ChunkError> {
    let text = doc.text.as_str();
    let sizer = DocSizer::new(text, stream, counter);
    let ranges = match params.strategy {
        Strategy::Fixed => {
            let spans: Vec<(usize, usize)> = (0..stream.len()).map(|i| stream.span(i)).collect();
            windows::split(&spans, params)
        }
        Strategy::Words => windows::split(&crate::tokenize::word_spans(text), params),
        Strategy::Recursive => recursive::split(text, params, sizer),
        Strategy::Markdown => markdown::split(text, params, sizer),
        Strategy::Sentence => sentence::split(text, params, sizer),
        Strategy::Semantic => {
            let none = || ChunkError::MissingSentenceEmbedding {
                preview: text.chars().take(60).collect(),
            };
            let vectors = ctx.sentence_vectors.ok_or_else(none)?;
            semantic::split(text, params, sizer, vectors, &ctx.semantic)?
        }
    };
    let heading_list = if doc.is_markdown() {
        headings::headings(text)
    } else {
        Vec::new()
    };
    let mut paths = headings::PathTracker::new(&heading_list);
    let mut chunks = Vec::with_capacity(ranges.len());
    for (s, e) in ranges {
        let (s, e) = if params.strategy == Strategy::Fixed {
            (s, e)
        } else {
            trim(text, s, e)
        };
        if s >= e {
            continue;
        }
        chunks.push(Chunk {
            doc: doc_index,
            ordinal: chunks.len(),
            start: doc.byte_to_char(s),
            end: doc.byte_to_char(e),
            byte_start: s,
            byte_end: e,
            heading_path: paths.path_at(s),
            tokens: sizer.count_range(s, e),
            prefix: String::new(),
            prefix_tokens: 0,
        });
    }
    Ok(chunks)
}

/// Chunks every document of the corpus, in document order, with the token streams of `tokens`
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

fn trim(text: &str, start: usize, end: usize) -> (usize, usize) {
    let slice = &text[start..end];
    let lead = slice.len() - slice.trim_start().len();
    let trail = slice.len() - slice.trim_end().len();
    if lead == slice.len() {
        return (start, start);
    }
    (start + lead, end - trail)
}

#[cfg(test)]
mod tests;
