//! Fixed windows over a token (or word) stream: `chunk_size` units per window, advancing by
//! `chunk_size - chunk_overlap`, stopping once a window reaches the end. This is the windowing of
//! seed 000's harness (`range(0, max(1, n - overlap), step)`), so no window holds only overlap.

use super::{ChunkParams, Ranges};

/// Byte ranges of the windows over `spans` (byte ranges of the units, in order).
pub fn split(spans: &[(usize, usize)], params: &ChunkParams) -> Ranges {
    let n = spans.len();
    let size = params.chunk_size.max(1);
    let step = size.saturating_sub(params.chunk_overlap).max(1);
    let mut out = Vec::with_capacity(n / step + 1);
    let mut i = 0;
    while i < n {
        let j = (i + size).min(n);
        out.push((spans[i].0, spans[j - 1].1));
        if i + size >= n {
            break;
        }
        i += step;
    }
    out
}
