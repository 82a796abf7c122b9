//! [`TokenStream`]: a document's tokens computed once; [`CorpusTokens`]: every document's.

use super::bpe::bpe_spans;
use super::counter::{TokenCounter, word_spans};
use super::kind::TokenizerKind;
use super::offsets::Offsets;

/// A document's tokens, computed once and shared by every configuration of a sweep: the byte
/// range of each token in order, and for BPE the bounds of the document's pre-tokenizer pieces
/// (their token counts are read from the starts: [`TokenStream::tokens_before_piece`]). Counting the tokens of any slice of the document is then a search of two blocks
/// of its offsets ([`TokenStream::count_in`], [`Offsets`]), or, exactly as the slice encoded
/// alone, an encoding of the slice's edges only ([`SliceCounter`]).
#[derive(Debug, Clone, Default)]
pub struct TokenStream {
    starts: Offsets,
    /// The tokens' ends for words, whose tokens leave gaps; `None` for BPE, whose tokens tile
    /// the document (token `i` ends where token `i + 1` starts, the last at the document's
    /// end), so that its ends are not stored twice.
    ends: Option<Offsets>,
    /// The document's length in bytes.
    text_len: usize,
    /// The bounds of the BPE pieces: piece `k` is the bytes from bound `k` to bound `k + 1`.
    /// Empty for words.
    pub(super) pieces: Offsets,
}

impl TokenStream {
    /// Tokenizes `text` (at most 4 GiB) with `counter`.
    pub fn new(text: &str, counter: TokenCounter) -> Self {
        assert!(
            u32::try_from(text.len()).is_ok(),
            "documents are limited to 4 GiB"
        );
        let (starts, ends, pieces) = match counter.bpe {
            Some(bpe) => {
                let (starts, pieces) = bpe_spans(bpe, text);
                (starts, None, pieces)
            }
            None => {
                let spans = word_spans(text);
                let starts = Offsets::new(spans.iter().map(|s| s.0 as u32), text.len());
                let ends = Offsets::new(spans.iter().map(|s| s.1 as u32), text.len());
                (starts, Some(ends), Offsets::default())
            }
        };
        TokenStream {
            starts,
            ends,
            text_len: text.len(),
            pieces,
        }
    }

    /// Number of tokens in the document.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether the document has no token.
    pub fn is_empty(&self) -> bool {
        self.starts.len() == 0
    }

    /// Byte range of token `i`.
    pub fn span(&self, i: usize) -> (usize, usize) {
        let end = match &self.ends {
            Some(ends) => ends.get(i),
            None if i + 1 < self.starts.len() => self.starts.get(i + 1),
            None => self.text_len,
        };
        (self.starts.get(i), end)
    }

    /// Every token's byte range, in order (as [`TokenStream::span`] of each, without its
    /// search).
    pub fn spans(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let ends: Box<dyn Iterator<Item = usize>> = match &self.ends {
            Some(ends) => Box::new(ends.iter_from(0)),
            None => Box::new(self.starts.iter_from(1).chain([self.text_len])),
        };
        self.starts.iter_from(0).zip(ends)
    }

    /// Tokens of the BPE pieces before piece `k`, whose first byte is `bound` (the piece
    /// bound `k`; `k` may be the number of pieces, whose bound is the document's end). See
    /// [`super::bpe::bpe_spans`] for why this is the starts at or below `bound`, less one.
    pub(super) fn tokens_before_piece(&self, k: usize, bound: usize) -> usize {
        if k + 1 >= self.pieces.len() {
            self.starts.len()
        } else {
            self.starts.below(bound + 1) - 1
        }
    }

    /// How many tokens end before byte `x`.
    fn ends_below(&self, x: usize) -> usize {
        match &self.ends {
            Some(ends) => ends.below(x),
            // the ends are the starts of tokens 1.. and the document's end; token 0 starts at 0
            None => {
                self.starts.below(x).saturating_sub(1)
                    + usize::from(!self.is_empty() && self.text_len < x)
            }
        }
    }

    /// Number of tokens overlapping the byte range `[start, end)`. For a range on token
    /// boundaries this is exactly its token count; a token cut by either end counts once.
    pub fn count_in(&self, start: usize, end: usize) -> usize {
        if start >= end {
            return 0;
        }
        let first = self.ends_below(start + 1);
        let last = self.starts.below(end);
        last.saturating_sub(first)
    }
}

/// Every document's [`TokenStream`], in corpus order, computed in parallel.
#[derive(Debug, Clone)]
pub struct CorpusTokens {
    counter: TokenCounter,
    docs: Vec<TokenStream>,
}

impl CorpusTokens {
    /// Tokenizes every document of `corpus` in the unit `kind`.
    pub fn new(corpus: &crate::corpus::Corpus, kind: TokenizerKind) -> Self {
        use rayon::prelude::*;
        let counter = TokenCounter::new(kind);
        CorpusTokens {
            counter,
            docs: corpus
                .docs
                .par_iter()
                .map(|d| TokenStream::new(&d.text, counter))
                .collect(),
        }
    }

    /// The counter the streams were made with.
    pub fn counter(&self) -> TokenCounter {
        self.counter
    }

    /// The stream of document `i`.
    pub fn doc(&self, i: usize) -> &TokenStream {
        &self.docs[i]
    }

    /// Tokens in the whole corpus.
    pub fn total(&self) -> usize {
        self.docs.iter().map(TokenStream::len).sum()
    }
}
