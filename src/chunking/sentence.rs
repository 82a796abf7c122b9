//! Sentence packing: the text is cut into sentences by the Unicode sentence-boundary rules
//! (UAX #29, unicode-segmentation), and whole sentences are packed into a chunk while its token
//! count stays within `chunk_size`. A sentence longer than `chunk_size` is split on its own with
//! text-splitter. Overlap repeats the previous chunk's last whole sentences, as many as fit in
//! `chunk_overlap` tokens.
//!
//! A chunk's size while packing is the count of its range through the document's token stream,
//! encoded alone near the limit (see [`DocSizer`]); a packed chunk whose own text still encodes
//! to more than `chunk_size` tokens is split again by [`super::bound`].

use text_splitter::{ChunkConfig, TextSplitter};
use unicode_segmentation::UnicodeSegmentation;

use super::chunk::{ChunkParams, Ranges};
use crate::tokenize::DocSizer;

/// Byte ranges of the sentence chunks of `text`.
pub fn split(text: &str, params: &ChunkParams, sizer: DocSizer<'_>) -> Ranges {
    let sentences: Vec<(usize, usize, usize)> = text
        .split_sentence_bound_indices()
        .filter(|(_, s)| !s.trim().is_empty())
        .map(|(i, s)| (i, i + s.len(), sizer.count_range(i, i + s.len())))
        .collect();
    let size = params.chunk_size;
    let mut out = Vec::new();
    let mut current: Vec<(usize, usize, usize)> = Vec::new();
    let fits = |current: &[(usize, usize, usize)], end: usize| {
        current
            .first()
            .is_none_or(|first| sizer.count_range(first.0, end) <= size)
    };
    for &sentence in &sentences {
        let (s, e, n) = sentence;
        if n > size {
            flush(&mut out, &current);
            current.clear();
            out.extend(split_long(&text[s..e], s, params, sizer));
            continue;
        }
        if !fits(&current, e) {
            flush(&mut out, &current);
            let carried = carry_overlap(&current, params.chunk_overlap, size - n);
            current.drain(..current.len() - carried);
            while !fits(&current, e) {
                current.remove(0);
            }
        }
        current.push(sentence);
    }
    flush(&mut out, &current);
    out
}

/// How many of the last sentences of `current` fit within `overlap` tokens and `room` tokens.
fn carry_overlap(current: &[(usize, usize, usize)], overlap: usize, room: usize) -> usize {
    let budget = overlap.min(room);
    let mut used = 0;
    let mut count = 0;
    for sentence in current.iter().rev() {
        if used + sentence.2 > budget {
            break;
        }
        used += sentence.2;
        count += 1;
    }
    count.min(current.len().saturating_sub(1))
}

fn flush(out: &mut Ranges, current: &[(usize, usize, usize)]) {
    if let (Some(first), Some(last)) = (current.first(), current.last()) {
        out.push((first.0, last.1));
    }
}

fn split_long(sentence: &str, offset: usize, params: &ChunkParams, sizer: DocSizer<'_>) -> Ranges {
    let config = ChunkConfig::new(params.chunk_size)
        .with_sizer(sizer)
        .with_overlap(params.chunk_overlap)
        .expect("overlap below size is checked by ChunkParams::validate");
    TextSplitter::new(config)
        .chunk_indices(sentence)
        .map(|(o, c)| (offset + o, offset + o + c.len()))
        .collect()
}
