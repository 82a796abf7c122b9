//! Structure-aware Markdown chunking. Every heading (any level, ATX or setext) starts a new chunk:
//! the document is cut into sections at its headings, and each section is split with
//! text-splitter's `MarkdownSplitter`, which keeps the largest Markdown unit that fits (a whole
//! section, then blocks such as a code fence, a table, a list or a paragraph, then sentences and
//! words). A code fence or a table is therefore split only when it alone exceeds `chunk_size`.
//! In a probe, `MarkdownSplitter` produced no overlap at any setting; the sweep records the
//! overlap actually achieved.

use text_splitter::{ChunkConfig, MarkdownSplitter};

use super::headings::headings;
use super::{ChunkParams, Ranges};
use crate::tokenize::DocSizer;

/// Byte ranges of the Markdown chunks of `text`.
pub fn split(text: &str, params: &ChunkParams, sizer: DocSizer<'_>) -> Ranges {
    let config = ChunkConfig::new(params.chunk_size)
        .with_sizer(sizer)
        .with_overlap(params.chunk_overlap)
        .expect("overlap below size is checked by ChunkParams::validate");
    let splitter = MarkdownSplitter::new(config);
    let mut starts: Vec<usize> = headings(text).iter().map(|h| h.byte).collect();
    if starts.first() != Some(&0) {
        starts.insert(0, 0);
    }
    let mut out = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        out.extend(
            splitter
                .chunk_indices(&text[start..end])
                .map(|(offset, chunk)| (start + offset, start + offset + chunk.len())),
        );
    }
    out
}
