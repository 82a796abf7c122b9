//! Size bounds on a chunk's own text. The strategies built on text-splitter size their
//! candidates through the document's token stream (fast, see [`crate::tokenize::DocSizer`]), but
//! a chunk's text encoded alone can hold more tokens than the stream gives it: trimming
//! `" checklist"` to `"checklist"` turns one token into two. So every range is trimmed of
//! surrounding whitespace (empty ones dropped) and counted alone; a range over `chunk_size` is
//! split again with text-splitter counting each candidate alone, so only a single unsplittable
//! unit (a grapheme longer than the size) stays over it. Ranges that repeat or lie inside the
//! previous one are dropped (and a range that holds the previous one replaces it), so chunks
//! come in order with strictly increasing starts and ends.

use text_splitter::{ChunkConfig, ChunkSizer, TextSplitter};

use super::chunk::{ChunkParams, Ranges, Sized};

/// `ranges` of `text`, trimmed, within `params.chunk_size` by their own count with `counter`
/// (split again where not), in order, each with its own token count. `counter` sizes a slice of
/// `text` as that slice encoded alone (a [`crate::tokenize::TokenCounter`], or a
/// [`crate::tokenize::SliceCounter`] of the document, which gives the same counts faster).
pub fn fit<S: ChunkSizer + Copy>(
    text: &str,
    ranges: Ranges,
    params: &ChunkParams,
    counter: S,
) -> Sized {
    let mut out: Sized = Vec::with_capacity(ranges.len());
    for (s, e) in ranges {
        let (s, e) = trim(text, s, e);
        if s >= e {
            continue;
        }
        let count = counter.size(&text[s..e]);
        if count <= params.chunk_size {
            push(&mut out, (s, e, count));
            continue;
        }
        for piece in resplit(text, s, e, params.chunk_size, params.chunk_overlap, counter) {
            push(&mut out, piece);
        }
    }
    out
}

/// `[start, end)` of `text` split with text-splitter counting each candidate alone with
/// `counter`: pieces of at most `size` tokens (overlapping by up to `overlap` where a boundary
/// allows), trimmed, each with its own count; a piece over `size` is a single grapheme.
/// `counter` sizes slices of `text` as in [`fit`].
pub fn resplit<S: ChunkSizer + Copy>(
    text: &str,
    start: usize,
    end: usize,
    size: usize,
    overlap: usize,
    counter: S,
) -> Sized {
    let config = ChunkConfig::new(size)
        .with_sizer(counter)
        .with_overlap(overlap)
        .expect("overlap below size is checked by ChunkParams::validate");
    TextSplitter::new(config)
        .chunk_indices(&text[start..end])
        .filter_map(|(o, piece)| {
            let (s, e) = trim(text, start + o, start + o + piece.len());
            (s < e).then(|| (s, e, counter.size(&text[s..e])))
        })
        .collect()
}

/// Appends `chunk` unless it repeats or lies inside the last one; drops the last ones it holds.
pub fn push(out: &mut Sized, chunk: (usize, usize, usize)) {
    let (s, e, _) = chunk;
    while let Some(&(ls, le, _)) = out.last() {
        if s >= ls && e <= le {
            return;
        }
        if s <= ls && e >= le {
            out.pop();
            continue;
        }
        break;
    }
    out.push(chunk);
}

/// `[start, end)` without its surrounding whitespace (empty when all whitespace).
pub fn trim(text: &str, start: usize, end: usize) -> (usize, usize) {
    let slice = &text[start..end];
    let lead = slice.len() - slice.trim_start().len();
    let trail = slice.len() - slice.trim_end().len();
    if lead == slice.len() {
        return (start, start);
    }
    (start + lead, end - trail)
}
