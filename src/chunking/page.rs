//! One chunk per page, for documents with pages (PDF): a page within `chunk_size` is one
//! chunk however short (short pages are never merged with their neighbours: a page is the unit
//! a reader cites); a longer page is split by the `recursive` rule inside the page, so no chunk
//! crosses a page boundary. Overlap applies only between the pieces of a split page. A page
//! without text gives no chunk.

use super::chunk::{ChunkParams, Ranges};
use crate::tokenize::DocSizer;

/// Byte ranges of the page chunks of `text`, whose pages start at the byte offsets `pages`
/// (page 1 first, non-empty).
pub fn split(text: &str, pages: &[usize], params: &ChunkParams, sizer: DocSizer<'_>) -> Ranges {
    let mut out = Vec::new();
    for (i, &start) in pages.iter().enumerate() {
        let end = pages.get(i + 1).copied().unwrap_or(text.len());
        if text[start..end].trim().is_empty() {
            continue;
        }
        if sizer.count_range(start, end) <= params.chunk_size {
            out.push((start, end));
        } else {
            let pieces = super::recursive::split(&text[start..end], params, sizer);
            out.extend(pieces.into_iter().map(|(s, e)| (start + s, start + e)));
        }
    }
    out
}
