//! The BPE tables (bpe-openai's `cl100k_base` and `o200k_base`) and encoding a text piece by
//! piece into its tokens' byte ranges.

use std::sync::OnceLock;

use bpe_openai::Tokenizer;
use rustc_hash::{FxHashMap, FxHashSet};

use super::kind::TokenizerKind;
use super::offsets::{Offsets, Pieces};

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
/// pieces of `text` (its pre-tokenizer split) as [`Pieces`]. A piece that repeats in `text` is
/// encoded once.
///
/// # Panics
/// If `text` is 4 GiB or longer (offsets are `u32`).
pub(super) fn bpe_spans(bpe: &Bpe, text: &str) -> (Vec<u32>, Pieces) {
    assert!(
        u32::try_from(text.len()).is_ok(),
        "texts are limited to 4 GiB"
    );
    let mut starts = Vec::with_capacity(text.len() / 4);
    let (mut bounds, mut tokens) = (vec![0], vec![0]);
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
        tokens.push(starts.len() as u32);
    }
    debug_assert!(starts.is_empty() || prev_end == text.len());
    // kept for the whole sweep: no spare capacity
    starts.shrink_to_fit();
    bounds.shrink_to_fit();
    tokens.shrink_to_fit();
    let bounds = Offsets::new(bounds, text.len());
    (starts, Pieces { bounds, tokens })
}

/// Tokens of `text` counted piece by piece (what `Tokenizer::count` does; cl100k_base and
/// o200k_base do not normalize).
pub(super) fn count_pieces(bpe: &Bpe, text: &str) -> usize {
    bpe.split(text).map(|p| bpe.piece_count(p)).sum()
}
