//! Fixed windows over a token (or word) stream: up to `chunk_size` units per window, advancing by
//! `chunk_size - chunk_overlap`, stopping once a window reaches the end. Over whitespace words
//! (every unit one word) this is the windowing of seed 000's harness
//! (`range(0, max(1, n - overlap), step)`), so no window holds only overlap.
//!
//! Over BPE tokens a window never cuts a character: a token that ends inside a multi-byte
//! character is kept with the tokens that finish it, as one [`Unit`] of several tokens (`Ω` is
//! 2 tokens in `cl100k_base`, `🔧` 3). A window holds whole units; a window whose text, encoded
//! alone, has more than `chunk_size` tokens is shortened by units until it fits, and a single
//! unit over the size is split by [`bound::resplit`], so only a single grapheme larger than the
//! size stays over it. Windows never repeat or lie inside the previous one, and the next window
//! starts no later than the previous one ends, so no text is skipped. Windows of whitespace only
//! are dropped.

use text_splitter::ChunkSizer;

use super::bound;
use super::chunk::Sized;
use crate::tokenize::TokenStream;

/// The smallest piece a window holds: a byte range and the tokens it spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// Tokens of the stream in the unit.
    pub tokens: usize,
}

/// The units of a token stream: each token that ends on a character boundary, with the tokens
/// that end inside the character before it (empty spans in [`TokenStream`]) folded into it.
pub fn stream_units(stream: &TokenStream) -> Vec<Unit> {
    let mut units: Vec<Unit> = Vec::with_capacity(stream.len());
    for (start, end) in stream.spans() {
        match units.last_mut() {
            Some(last) if start == end => last.tokens += 1,
            _ => units.push(Unit {
                start,
                end,
                tokens: 1,
            }),
        }
    }
    units
}

/// Windows over `units` of `text` with their token counts (of their own text, by `counter`, which
/// sizes slices of `text` as [`bound::fit`]'s does).
pub fn split<S: ChunkSizer + Copy>(
    text: &str,
    units: &[Unit],
    size: usize,
    overlap: usize,
    counter: S,
) -> Sized {
    let n = units.len();
    let size = size.max(1);
    let step = size.saturating_sub(overlap).max(1);
    // cum[i]: tokens before unit i
    let mut cum = Vec::with_capacity(n + 1);
    cum.push(0);
    for u in units {
        cum.push(cum.last().copied().unwrap_or(0) + u.tokens);
    }
    let mut out: Sized = Vec::with_capacity(n / step + 1);
    let mut a = 0;
    while a < n {
        let mut b = a + 1;
        while b < n && cum[b + 1] - cum[a] <= size {
            b += 1;
        }
        let mut count = counter.size(&text[units[a].start..units[b - 1].end]);
        while count > size && b > a + 1 {
            b -= 1;
            count = counter.size(&text[units[a].start..units[b - 1].end]);
        }
        let (s, e) = (units[a].start, units[b - 1].end);
        if count > size {
            // one unit over the size by itself: split it where text-splitter can
            for piece in bound::resplit(text, s, e, size, overlap, counter) {
                bound::push(&mut out, piece);
            }
        } else if !text[s..e].trim().is_empty() {
            bound::push(&mut out, (s, e, count));
        }
        if b == n {
            break;
        }
        let target = cum[a] + step;
        let mut next = a + 1;
        while next < b && cum[next] < target {
            next += 1;
        }
        a = next;
    }
    out
}
