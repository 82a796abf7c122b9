//! Contextual-enrichment prefixes: a short text put before each chunk's own text, in what the
//! retriever indexes and in what the generator sees, never in the chunk's ranges.
//!
//! | prefix          | the text put before the chunk                                           |
//! |-----------------|-------------------------------------------------------------------------|
//! | `none`          | nothing                                                                 |
//! | `title`         | the document's title: its first heading, else its file name             |
//! | `heading_path`  | the headings in effect where the chunk starts, `Billing > Refunds > Partial refunds` (nothing outside any heading) |
//! | `title_heading` | the title, then the heading path (its first heading dropped when it is the title) |
//! | `llm_context`   | a short context situating the chunk in its document, written by a model (see [`crate::llm_context`]) |
//!
//! An enriched chunk's indexed text is `PREFIX + "\n\n" + TEXT` ([`PREFIX_SEPARATOR`]; one line
//! break instead after the header rows of a split table, [`separator_after`]); a chunk
//! whose prefix is empty is indexed as its text alone. The chunk's `start`/`end` (code points) and
//! `byte_start`/`byte_end` stay on the original text, so spans and metrics never move; the prefix
//! and its token count (separator included) are carried beside them in [`Chunk::prefix`] and
//! [`Chunk::prefix_tokens`], so the cost columns include it.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::chunk::Chunk;
use super::chunk::separator_after;
pub use super::chunk::{PREFIX_SEPARATOR, with_prefix};
use super::headings::{DocKind, headings};
use crate::corpus::{Corpus, Document};
use crate::tokenize::{TokenCounter, TokenStream};

/// Separator between the parts of a heading path in a prefix.
pub const PATH_SEPARATOR: &str = " > ";

/// The contextual prefix of a configuration.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Prefix {
    /// No prefix: the chunk's text alone.
    #[default]
    None,
    /// The document's title (first heading, else the file name).
    Title,
    /// The heading path where the chunk starts, `A > B > C`.
    HeadingPath,
    /// The title, then the heading path.
    TitleHeading,
    /// A short context written by a model from the chunk and its document (cached).
    LlmContext,
}

impl Prefix {
    /// Every prefix, in the order used for reports.
    pub const ALL: [Prefix; 5] = [
        Prefix::None,
        Prefix::Title,
        Prefix::HeadingPath,
        Prefix::TitleHeading,
        Prefix::LlmContext,
    ];

    /// The name used on the command line, in configuration ids and in CSVs.
    pub fn name(self) -> &'static str {
        match self {
            Prefix::None => "none",
            Prefix::Title => "title",
            Prefix::HeadingPath => "heading_path",
            Prefix::TitleHeading => "title_heading",
            Prefix::LlmContext => "llm_context",
        }
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Prefix {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Prefix::ALL
            .into_iter()
            .find(|p| p.name() == s.trim())
            .ok_or_else(|| {
                format!(
                    "unknown prefix {s:?}: use none, title, heading_path, title_heading or llm_context"
                )
            })
    }
}

/// Identifies a chunk by its document and byte range, whatever the configuration that made it:
/// identical chunks of different configurations share one model-written context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkKey {
    /// Index of the document in [`Corpus::docs`].
    pub doc: usize,
    /// First byte of the chunk.
    pub byte_start: usize,
    /// One past the last byte.
    pub byte_end: usize,
}

impl ChunkKey {
    /// The key of `chunk`.
    pub fn of(chunk: &Chunk) -> Self {
        ChunkKey {
            doc: chunk.doc,
            byte_start: chunk.byte_start,
            byte_end: chunk.byte_end,
        }
    }
}

/// Model-written contexts by chunk, for the `llm_context` prefix.
pub type ContextMap = HashMap<ChunkKey, String>;

/// What writing one chunk's context cost, whether or not the reply came from the cache (so a
/// rerun reports the same one-off cost).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ContextCost {
    /// Prompt tokens of the call.
    pub prompt_tokens: u64,
    /// Completion tokens of the call.
    pub completion_tokens: u64,
    /// USD at the model's `[llm.models]` prices; `None` without a price.
    pub cost_usd: Option<f64>,
}

/// The cost of each chunk's context, by chunk.
pub type ContextCosts = HashMap<ChunkKey, ContextCost>;

/// Errors while enriching chunks.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum EnrichError {
    /// An `llm_context` chunk has no context: the contexts were not generated for it.
    #[error(
        "no model-written context for {doc} bytes {byte_start}..{byte_end}: llm_context needs the contexts generated before the sweep (chunksweep sweep does this when --prefixes includes llm_context)"
    )]
    MissingContext {
        /// Document id.
        doc: String,
        /// First byte.
        byte_start: usize,
        /// One past the last byte.
        byte_end: usize,
    },
}

/// The document's title: the text of its first heading (Markdown) or section title
/// (reStructuredText), else its file name (the last `/`-separated part of its id).
pub fn doc_title(doc: &Document) -> String {
    if let Some(h) = headings(DocKind::of(doc), &doc.text)
        .into_iter()
        .find(|h| !h.title.is_empty())
    {
        return h.title;
    }
    doc.id.rsplit('/').next().unwrap_or(&doc.id).to_string()
}

/// The prefix text of one chunk (empty when there is none), given its document's `title`.
/// `contexts` is consulted for [`Prefix::LlmContext`] only.
///
/// # Errors
/// [`EnrichError::MissingContext`] for an `llm_context` chunk absent from `contexts`.
pub fn prefix_text(
    prefix: Prefix,
    corpus: &Corpus,
    title: &str,
    chunk: &Chunk,
    contexts: &ContextMap,
) -> Result<String, EnrichError> {
    let path = &chunk.heading_path;
    Ok(match prefix {
        Prefix::None => String::new(),
        Prefix::Title => title.to_string(),
        Prefix::HeadingPath => path.join(PATH_SEPARATOR),
        Prefix::TitleHeading => {
            let rest = match path.first() {
                Some(first) if first == title => &path[1..],
                _ => &path[..],
            };
            std::iter::once(title)
                .chain(rest.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(PATH_SEPARATOR)
        }
        Prefix::LlmContext => contexts.get(&ChunkKey::of(chunk)).cloned().ok_or_else(|| {
            EnrichError::MissingContext {
                doc: corpus.docs[chunk.doc].id.clone(),
                byte_start: chunk.byte_start,
                byte_end: chunk.byte_end,
            }
        })?,
    })
}

/// Sets [`Chunk::prefix`] and [`Chunk::prefix_tokens`] (counted with `counter`, separator
/// included) on every chunk for `prefix`: the prefix text, then the chunk's carried
/// [`Chunk::carried`], joined by [`PREFIX_SEPARATOR`]. Ranges are not touched.
///
/// # Errors
/// [`EnrichError::MissingContext`] for an `llm_context` chunk absent from `contexts`.
pub fn enrich(
    corpus: &Corpus,
    counter: TokenCounter,
    prefix: Prefix,
    chunks: &mut [Chunk],
    contexts: &ContextMap,
) -> Result<(), EnrichError> {
    if prefix == Prefix::None {
        return Ok(());
    }
    let mut titles: HashMap<usize, String> = HashMap::new();
    for chunk in chunks.iter_mut() {
        let title = titles
            .entry(chunk.doc)
            .or_insert_with(|| doc_title(&corpus.docs[chunk.doc]));
        let text = prefix_text(prefix, corpus, title, chunk, contexts)?;
        let text = match (text.is_empty(), chunk.carried.is_empty()) {
            (_, true) => text,
            (true, false) => chunk.carried.clone(),
            (false, false) => format!("{text}{PREFIX_SEPARATOR}{}", chunk.carried),
        };
        chunk.prefix_tokens = prefix_tokens(&text, counter);
        chunk.prefix = text;
    }
    Ok(())
}

/// Tokens a prefix adds to the indexed text: the prefix and its separator
/// ([`separator_after`]) counted with `counter`, 0 for an empty prefix.
pub fn prefix_tokens(prefix: &str, counter: TokenCounter) -> usize {
    if prefix.is_empty() {
        0
    } else {
        counter.count(&format!("{prefix}{}", separator_after(prefix)))
    }
}

/// The part of a document shown to the model that writes a chunk's context: the whole document
/// when it has at most `window_tokens` tokens, else a window of `window_tokens` tokens holding the
/// chunk (bytes `[byte_start, byte_end)`) with about as much text before it as after it (more on
/// one side when the other reaches the document's edge), cut on token boundaries, with `[…]`
/// where text was left out. A chunk longer than the window is shown whole.
pub fn document_window(
    text: &str,
    stream: &TokenStream,
    byte_start: usize,
    byte_end: usize,
    window_tokens: usize,
) -> String {
    let n = stream.len();
    if n <= window_tokens || n == 0 {
        return text.to_string();
    }
    // token indices of the chunk: first token ending after byte_start, first token starting at or
    // after byte_end
    let first = (0..n)
        .position(|i| stream.span(i).1 > byte_start)
        .unwrap_or(n);
    let last = (first..n)
        .position(|i| stream.span(i).0 >= byte_end)
        .map_or(n, |p| first + p);
    let inside = last - first;
    let spare = window_tokens.saturating_sub(inside);
    let mut before = spare / 2;
    let mut after = spare - before;
    if before > first {
        after += before - first;
        before = first;
    }
    if after > n - last {
        let extra = after - (n - last);
        after = n - last;
        before = (before + extra).min(first);
    }
    let from_tok = first - before;
    let to_tok = last + after;
    let from = if from_tok == 0 {
        0
    } else {
        stream.span(from_tok).0.min(byte_start)
    };
    let to = if to_tok >= n {
        text.len()
    } else {
        stream.span(to_tok - 1).1.max(byte_end)
    };
    let mut out = String::new();
    if from > 0 {
        out.push_str("[…]\n");
    }
    out.push_str(&text[from..to]);
    if to < text.len() {
        out.push_str("\n[…]");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize::TokenizerKind;

    #[test]
    fn prefixes_parse_and_print() {
        for p in Prefix::ALL {
            assert_eq!(p.name().parse::<Prefix>(), Ok(p));
            assert_eq!(p.to_string(), p.name());
        }
        assert!("heading-path".parse::<Prefix>().is_err());
        assert_eq!(
            serde_json::to_string(&Prefix::TitleHeading).unwrap(),
            "\"title_heading\""
        );
        assert_eq!(
            serde_json::from_str::<Prefix>("\"llm_context\"").unwrap(),
            Prefix::LlmContext
        );
    }

    #[test]
    fn title_is_the_first_heading_else_the_file_name() {
        let d = Document::new("guide/intro.md", "Some text.\n\n## Setup\n\n# Later\n");
        assert_eq!(doc_title(&d), "Setup");
        let d = Document::new("guide/notes.txt", "# Looks like a heading\n");
        assert_eq!(doc_title(&d), "notes.txt");
        let d = Document::new("plain.md", "```\n# fenced\n```\nno heading\n");
        assert_eq!(doc_title(&d), "plain.md");
        // reStructuredText: the first section title
        let d = Document::new(
            "guide/install.rst",
            "Intro.\n\nInstalling\n~~~~~~~~~~\n\nRun it.\n",
        );
        assert_eq!(doc_title(&d), "Installing");
    }

    #[test]
    fn window_keeps_the_chunk_and_balances_around_it() {
        let counter = TokenCounter::new(TokenizerKind::Words);
        let text: String = (0..100).map(|i| format!("w{i} ")).collect();
        let stream = TokenStream::new(&text, counter);
        let s = text.find("w50 ").unwrap();
        let e = s + "w50 w51".len();
        let w = document_window(&text, &stream, s, e, 10);
        // 2 chunk tokens + 4 before + 4 after
        assert_eq!(w, "[…]\nw46 w47 w48 w49 w50 w51 w52 w53 w54 w55\n[…]");
        // at the start: nothing before, so the spare goes after
        let w = document_window(&text, &stream, 0, 2, 5);
        assert_eq!(w, "w0 w1 w2 w3 w4\n[…]");
        // at the end
        let s = text.find("w99").unwrap();
        let w = document_window(&text, &stream, s, s + 3, 3);
        assert_eq!(w, "[…]\nw97 w98 w99 ");
        // small documents are shown whole
        assert_eq!(document_window(&text, &stream, s, s + 3, 100), text);
    }
}
