//! Structure-aware chunking, by file type ([`DocKind`]). Every heading (Markdown: any level, ATX
//! or setext; reStructuredText: every section title) starts a new chunk: the document is cut
//! into sections at its headings, and each section is split with text-splitter:
//!
//! - Markdown sections with `MarkdownSplitter`, which keeps the largest Markdown unit that fits
//!   (a whole section, then blocks such as a code fence, a table, a list or a paragraph, then
//!   sentences and words). A code fence or a table is therefore split only when it alone
//!   exceeds `chunk_size`. `MarkdownSplitter` parses with every pulldown-cmark extension,
//!   inline math included, which would read the text between two dollar amounts (`$570 … $758`)
//!   as one formula; so the splitter parses a copy of the section in which every `$` is `%`
//!   (same byte length, no Markdown meaning, the same Unicode word and sentence classes), and the
//!   ranges it returns are applied to the original text. Money is never math.
//! - reStructuredText and plain-text sections with `TextSplitter` (paragraphs, then sentences,
//!   then words): a `~~~~` underline is a title, never a code fence, and `.txt` files have no
//!   headings, so they are split by paragraphs.
//!
//! Overlap is text-splitter's: honoured where a boundary allows (the sweep records the overlap
//! achieved in `realized_overlap`).

use std::borrow::Cow;

use text_splitter::{ChunkConfig, ChunkSizer, MarkdownSplitter, TextSplitter};

use super::chunk::{ChunkParams, Ranges};
use super::headings::DocKind;
use super::structure::DocStructure;
use crate::tokenize::DocSizer;

/// Byte ranges of the structure-aware chunks of `text`, a document of structure `structure`.
pub fn split(
    text: &str,
    structure: &DocStructure,
    params: &ChunkParams,
    sizer: DocSizer<'_>,
) -> Ranges {
    let parsed = without_math(text);
    let sizer = sizer.over(&parsed);
    // MarkdownSplitter's own trimming is left to the sizer (same boundaries, less work)
    let markdown_sizer = sizer.trimming_markdown();
    let kind = structure.kind;
    let mut starts: Vec<usize> = structure.headings.iter().map(|h| h.byte).collect();
    if starts.first() != Some(&0) {
        starts.insert(0, 0);
    }
    let mut out = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        let section = &parsed[start..end];
        let pieces: Vec<(usize, usize)> = match kind {
            DocKind::Markdown => {
                let config = config(params, markdown_sizer).with_trim(false);
                let chunks = ranges(MarkdownSplitter::new(config).chunk_indices(section));
                emitted_with_trimming(section, chunks)
            }
            DocKind::Rest | DocKind::Plain => {
                ranges(TextSplitter::new(config(params, sizer)).chunk_indices(section))
            }
        };
        out.extend(pieces.into_iter().map(|(s, e)| (start + s, start + e)));
    }
    out
}

fn config<S: ChunkSizer>(params: &ChunkParams, sizer: S) -> ChunkConfig<S> {
    ChunkConfig::new(params.chunk_size)
        .with_sizer(sizer)
        .with_overlap(params.chunk_overlap)
        .expect("overlap below size is checked by ChunkParams::validate")
}

/// The chunks text-splitter 0.33 emits with its trimming on, from the `chunks` of `text` it
/// emits with it off (same boundaries, see [`DocSizer::trimming_markdown`]): with trimming on it
/// skips a chunk that is whitespace only, and one whose end (trailing whitespace trimmed) is not
/// past the previous chunk's. Both of its trims remove the same trailing whitespace, so the
/// same chunks are kept (untrimmed; the caller trims them).
pub fn emitted_with_trimming(text: &str, chunks: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let mut last_end = 0;
    chunks
        .into_iter()
        .filter(|&(s, e)| {
            let trimmed = text[s..e].trim_end();
            let end = s + trimmed.len();
            let keep = !trimmed.trim_start().is_empty() && end > last_end;
            if keep {
                last_end = end;
            }
            keep
        })
        .collect()
}

fn ranges<'t>(chunks: impl Iterator<Item = (usize, &'t str)>) -> Vec<(usize, usize)> {
    chunks.map(|(o, c)| (o, o + c.len())).collect()
}

/// `text` with every `$` replaced by `%`: the same byte layout, and no inline or display math
/// for pulldown-cmark.
pub fn without_math(text: &str) -> Cow<'_, str> {
    if text.contains('$') {
        Cow::Owned(text.replace('$', "%"))
    } else {
        Cow::Borrowed(text)
    }
}
