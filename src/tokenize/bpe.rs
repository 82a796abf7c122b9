//! The BPE tables (bpe-openai's `cl100k_base` and `o200k_base`) and encoding a text piece by
//! piece into its tokens' byte ranges.

use std::sync::OnceLock;

use bpe_openai::Tokenizer;
use rustc_hash::{FxHashMap, FxHashSet};

use super::kind::TokenizerKind;
use super::offsets::{Offsets, OffsetsBuilder};

/// A BPE tokenizer and the set of its tokens' bytes. A pre-tokenizer piece that is itself a
/// token is that one token: tiktoken returns it without merging (its `encoder.get(piece)` fast
/// path), and so does bpe-openai's backtracking encoder, whose first candidate is the longest
/// token that starts the piece. Most pieces of prose are whole tokens, so looking them up
/// saves most encodings.
pub(super) struct Bpe {
    tokenizer: &'static Tokenizer,
    whole: FxHashSet<&'static [u8]>,
}

impl Bpe {
    /// The tables of `kind` (`None` for words), loaded once per process.
    pub(super) fn of(kind: TokenizerKind) -> Option<&'static Bpe> {
        static CL100K: OnceLock<Bpe> = OnceLock::new();
        static O200K: OnceLock<Bpe> = OnceLock::new();
        let (cell, tokenizer): (_, fn() -> &'static Tokenizer) = match kind {
            TokenizerKind::Cl100kBase => (&CL100K, bpe_openai::cl100k_base),
            TokenizerKind::O200kBase => (&O200K, bpe_openai::o200k_base),
            TokenizerKind::Words => return None,
        };
        Some(cell.get_or_init(|| {
            let tokenizer = tokenizer();
            let bpe = &tokenizer.bpe;
            let whole = (0..bpe.num_tokens())
                .map(|t| bpe.token_bytes(t as u32))
                .collect();
            Bpe { tokenizer, whole }
        }))
    }

    /// The pre-tokenizer pieces of `text`, in order.
    pub(super) fn split<'t>(&'t self, text: &'t str) -> impl Iterator<Item = &'t str> + 't {
        self.tokenizer.split(text)
    }

    /// Tokens of one pre-tokenizer piece.
    pub(super) fn piece_count(&self, piece: &str) -> usize {
        if self.whole.contains(piece.as_bytes()) {
            1
        } else {
            self.tokenizer.bpe.count(piece.as_bytes())
        }
    }

    /// Byte lengths of the tokens of one pre-tokenizer piece, in order, appended to `out`.
    fn piece_token_lens(&self, piece: &str, out: &mut Vec<u32>) {
        if self.whole.contains(piece.as_bytes()) {
            out.push(piece.len() as u32);
            return;
        }
        let bpe = &self.tokenizer.bpe;
        out.extend(
            bpe.encode_via_backtracking(piece.as_bytes())
                .into_iter()
                .map(|t| bpe.token_len(t) as u32),
        );
    }
}

/// The BPE tokens of `text` as [`TokenCounter::token_spans`] gives them, as their starts (the
/// tokens tile `text`: each ends where the next starts, the last at `text.len()`), and the
/// bounds of `text`'s pieces (its pre-tokenizer split: piece `k` is the bytes from bound `k` to
/// bound `k + 1`, the first bound 0). A piece that repeats in `text` is encoded once.
///
/// A piece's first token starts at the piece's start; its other tokens start after it (a token
/// has at least one byte, and one widened to a character's end ends no later than the piece,
/// whose end is a character boundary). So the tokens before piece `k` are the starts at or
/// below bound `k`, less one ([`super::stream::TokenStream::tokens_before_piece`]): they are
/// not stored.
///
/// [`TokenCounter::token_spans`]: super::counter::TokenCounter::token_spans
///
/// # Panics
/// If `text` is 4 GiB or longer (offsets are `u32`).
pub(super) fn bpe_spans(bpe: &Bpe, text: &str) -> (Offsets, Offsets) {
    assert!(
        u32::try_from(text.len()).is_ok(),
        "texts are limited to 4 GiB"
    );
    let mut starts = OffsetsBuilder::with_capacity(text.len() / 4);
    let mut bounds = OffsetsBuilder::with_capacity(text.len() / 5);
    bounds.push(0);
    // each distinct piece's token lengths: `lens[from..from + n]`
    let mut seen: FxHashMap<&str, (u32, u32)> = FxHashMap::default();
    let mut lens: Vec<u32> = Vec::new();
    let (mut raw, mut prev_end) = (0, 0);
    for piece in bpe.split(text) {
        let (from, n) = *seen.entry(piece).or_insert_with(|| {
            let from = lens.len();
            bpe.piece_token_lens(piece, &mut lens);
            (from as u32, (lens.len() - from) as u32)
        });
        for &len in &lens[from as usize..(from + n) as usize] {
            raw += len as usize;
            let mut end = raw.min(text.len()).max(prev_end);
            while !text.is_char_boundary(end) {
                end += 1;
            }
            starts.push(prev_end as u32);
            prev_end = end;
        }
        bounds.push(raw as u32);
    }
    debug_assert!(prev_end == text.len());
    (starts.finish(text.len()), bounds.finish(text.len()))
}

/// Tokens of `text` counted piece by piece (what `Tokenizer::count` does; cl100k_base and
/// o200k_base do not normalize).
pub(super) fn count_pieces(bpe: &Bpe, text: &str) -> usize {
    bpe.split(text).map(|p| bpe.piece_count(p)).sum()
}
