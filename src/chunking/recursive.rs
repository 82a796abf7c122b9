//! Recursive splitting with text-splitter's `TextSplitter`: it keeps the largest unit that fits
//! (newline runs, i.e. paragraphs, then sentences, then words, then characters) and packs
//! consecutive units up to `chunk_size` tokens. Overlap is applied only where a boundary allows.

use text_splitter::{ChunkConfig, TextSplitter};

use super::chunk::{ChunkParams, Ranges};
use crate::tokenize::DocSizer;

/// Byte ranges of the recursive chunks of `text`.
pub fn split(text: &str, params: &ChunkParams, sizer: DocSizer<'_>) -> Ranges {
    let config = ChunkConfig::new(params.chunk_size)
        .with_sizer(sizer)
        .with_overlap(params.chunk_overlap)
        .expect("overlap below size is checked by ChunkParams::validate");
    TextSplitter::new(config)
        .chunk_indices(text)
        .map(|(offset, chunk)| (offset, offset + chunk.len()))
        .collect()
}
