//! The parents of `parent:P`: each document cut once into parents, whatever the configuration's
//! chunks. A parent is a section (from a heading to the next heading of any level: Markdown
//! headings, reStructuredText section titles; [`crate::chunking::headings`]) trimmed of
//! surrounding whitespace. A section longer than P tokens is cut into pieces of at most P tokens
//! by the recursive rule ([`crate::chunking::recursive`], no overlap), each piece a parent. A
//! document without headings (plain text, PDF text) is one section, so it is cut into pieces of
//! at most P tokens by the same rule. Only a unit the recursive rule cannot split (a run of
//! characters with no break) can leave a parent over P tokens.

use std::ops::Range;

use crate::chunking::bound::trim;
use crate::chunking::chunk::{ChunkParams, Strategy};
use crate::chunking::headings::DocKind;
use crate::chunking::recursive;
use crate::chunking::structure::DocStructure;
use crate::corpus::Document;
use crate::tokenize::{DocSizer, SliceCounter, TokenCounter, TokenStream};

/// One parent of a document: a byte range of its text, with its tokens (in the sweep's unit,
/// encoded alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parent {
    /// First byte.
    pub byte_start: usize,
    /// One past the last byte.
    pub byte_end: usize,
    /// Tokens of `text[byte_start..byte_end]` encoded alone.
    pub tokens: usize,
}

/// The parents of `doc`, in document order, disjoint: its sections by `structure`, each cut
/// into pieces of at most `max_tokens` tokens by the recursive rule when longer (see the module
/// documentation). `stream` is the document's token stream in the unit of `counter`.
pub fn doc_parents(
    doc: &Document,
    structure: &DocStructure,
    stream: &TokenStream,
    counter: TokenCounter,
    max_tokens: usize,
) -> Vec<Parent> {
    let text = doc.text.as_str();
    let exact = SliceCounter::new(text, stream, counter);
    let mut starts: Vec<usize> = match structure.kind {
        DocKind::Plain => Vec::new(),
        DocKind::Markdown | DocKind::Rest => structure.headings.iter().map(|h| h.byte).collect(),
    };
    if starts.first() != Some(&0) {
        starts.insert(0, 0);
    }
    let params = ChunkParams {
        strategy: Strategy::Recursive,
        chunk_size: max_tokens.max(1),
        chunk_overlap: 0,
    };
    let mut out = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        let (s, e) = trim(text, start, end);
        if s == e {
            continue;
        }
        let tokens = exact.count(s, e);
        if tokens <= max_tokens {
            out.push(Parent {
                byte_start: s,
                byte_end: e,
                tokens,
            });
            continue;
        }
        let sizer = DocSizer::new(text, stream, counter, params.chunk_size);
        for (ps, pe) in recursive::split(&text[s..e], &params, sizer) {
            let (ps, pe) = trim(text, s + ps, s + pe);
            if ps < pe {
                out.push(Parent {
                    byte_start: ps,
                    byte_end: pe,
                    tokens: exact.count(ps, pe),
                });
            }
        }
    }
    out
}

/// The parents of `parents` (one document's, from [`doc_parents`]) that a chunk of bytes
/// `[start, end)` overlaps, as a range of indices; a chunk that overlaps none (whitespace
/// between parents) gets the parent after it, or the last one. Empty only when there is no
/// parent.
pub fn parents_of(parents: &[Parent], start: usize, end: usize) -> Range<usize> {
    let lo = parents.partition_point(|p| p.byte_end <= start);
    let hi = parents.partition_point(|p| p.byte_start < end);
    if lo < hi {
        return lo..hi;
    }
    match parents.len() {
        0 => 0..0,
        n => {
            let i = lo.min(n - 1);
            i..i + 1
        }
    }
}
