//! [`SliceCounter`]: exact token counts of a document's slices, encoding only their edges.

use super::bpe::count_pieces;
use super::counter::TokenCounter;
use super::stream::TokenStream;

/// Exact token counts of slices of one document: [`SliceCounter::count`] is what encoding the
/// slice alone gives (`counter.count(&text[start..end])`), at the cost of encoding its edges
/// (for words, a binary search in the stream).
///
/// BPE encodes each pre-tokenizer piece on its own, and the pre-tokenizer (bpe-openai's
/// `Splits`) restarts from each piece's end with nothing but the remaining text. So once the
/// slice's own split ends a piece where one of the document's pieces ends, the slice's next
/// pieces are the document's, as long as the document's piece (with its one look-ahead
/// character) ends before the slice does: the pieces are leftmost-first regex matches, and
/// cutting the text after a match keeps that match the first, unless the cut makes a new match
/// possible. In the cl100k_base and o200k_base patterns (bpe-openai 0.3) the only one that can
/// match at the cut and nowhere else is `\s+$` (whitespace up to the end), so the document's pieces are used only while they start before the slice's
/// trailing whitespace. The slice's own split is encoded at its head (until it meets a piece end
/// of the document) and at its tail (after the last piece used). `tests/bpe_equivalence.rs`
/// checks the counts against encoding on many random slices.
#[derive(Clone, Copy)]
pub struct SliceCounter<'a> {
    pub(super) text: &'a str,
    pub(super) stream: &'a TokenStream,
    pub(super) counter: TokenCounter,
}

impl<'a> SliceCounter<'a> {
    /// A counter for slices of `text`, whose stream (made with `counter`) is `stream`.
    pub fn new(text: &'a str, stream: &'a TokenStream, counter: TokenCounter) -> Self {
        SliceCounter {
            text,
            stream,
            counter,
        }
    }

    /// Tokens of `text[start..end]` encoded alone: exactly `counter.count(&text[start..end])`.
    pub fn count(&self, start: usize, end: usize) -> usize {
        let Some(bpe) = self.counter.bpe else {
            // the words overlapping the slice: a word cut by either end is one word of the slice
            return self.stream.count_in(start, end);
        };
        if start >= end {
            return 0;
        }
        let bounds = &self.stream.pieces;
        let slice = &self.text[start..end];
        let bound_at = |at: usize| bounds.find(at);
        // Head: the slice's own pieces until one ends where a piece of the document ends.
        let mut head = 0;
        let mut at = start;
        let mut synced = bound_at(at);
        if synced.is_none() {
            for piece in bpe.split(slice) {
                head += bpe.piece_count(piece);
                at += piece.len();
                synced = bound_at(at);
                if synced.is_some() {
                    break;
                }
            }
        }
        let Some(first) = synced else {
            return head;
        };
        // Middle: the document's pieces `first..last`, each ending before `end` and starting
        // before the slice's trailing whitespace.
        let trailing = start + slice.trim_end().len();
        let ends_before = bounds.below(end).saturating_sub(1);
        let starts_before = bounds.below(trailing);
        let last = ends_before.min(starts_before).max(first);
        let last_at = bounds.get(last);
        let middle = self.stream.tokens_before_piece(last, last_at)
            - self.stream.tokens_before_piece(first, at);
        // Tail: the slice's own pieces from there.
        head + middle + count_pieces(bpe, &self.text[last_at..end])
    }
}

impl text_splitter::ChunkSizer for SliceCounter<'_> {
    fn size(&self, chunk: &str) -> usize {
        match offset_in(self.text, chunk) {
            Some(start) => self.count(start, start + chunk.len()),
            None => self.counter.count(chunk),
        }
    }
}

/// Byte offset of `chunk` in `base` when `chunk` is a slice of it.
pub(super) fn offset_in(base: &str, chunk: &str) -> Option<usize> {
    let (base_at, at) = (base.as_ptr() as usize, chunk.as_ptr() as usize);
    (at >= base_at && at + chunk.len() <= base_at + base.len()).then(|| at - base_at)
}
