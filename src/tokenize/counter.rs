//! [`TokenCounter`]: counts the tokens (or words) of any text, and their byte ranges.

use std::fmt;

use super::bpe::{Bpe, bpe_spans, count_pieces};
use super::kind::TokenizerKind;

/// Counts tokens in the chosen unit. Cheap to copy; the BPE tables are loaded once per process.
#[derive(Clone, Copy)]
pub struct TokenCounter {
    kind: TokenizerKind,
    pub(super) bpe: Option<&'static Bpe>,
}

impl fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenCounter")
            .field("kind", &self.kind)
            .finish()
    }
}

impl TokenCounter {
    /// A counter for `kind` (loading a BPE table takes a fraction of a second the first time).
    pub fn new(kind: TokenizerKind) -> Self {
        TokenCounter {
            kind,
            bpe: Bpe::of(kind),
        }
    }

    /// The unit this counter counts.
    pub fn kind(&self) -> TokenizerKind {
        self.kind
    }

    /// Number of tokens (or words) in `text`.
    pub fn count(&self, text: &str) -> usize {
        match self.bpe {
            Some(bpe) => count_pieces(bpe, text),
            None => text.split_whitespace().count(),
        }
    }

    /// Byte ranges of the tokens of `text`, in order. For BPE, a token that ends inside a
    /// multi-byte character is widened to the character's end, and the next token starts there,
    /// so every range lies on char boundaries (ranges may be empty). For words, each range is one
    /// whitespace-separated word.
    pub fn token_spans(&self, text: &str) -> Vec<(usize, usize)> {
        match self.bpe {
            Some(bpe) => {
                let (starts, _) = bpe_spans(bpe, text);
                let ends = starts.iter_from(1).chain([text.len()]);
                starts.iter_from(0).zip(ends).collect()
            }
            None => word_spans(text),
        }
    }
}

impl text_splitter::ChunkSizer for TokenCounter {
    fn size(&self, chunk: &str) -> usize {
        self.count(chunk)
    }
}

/// Byte ranges of the whitespace-separated words of `text`.
pub fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, text.len()));
    }
    spans
}
