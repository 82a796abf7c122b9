//! [`DocSizer`]: the text-splitter sizer for slices of one document.

use super::counter::TokenCounter;
use super::slice::{SliceCounter, offset_in};
use super::stream::TokenStream;

/// A text-splitter sizer for slices of one document: counts through the document's
/// [`TokenStream`] ([`TokenStream::count_in`]) instead of encoding each candidate chunk again, except near
/// the size limit: a slice whose stream count is within [`DocSizer::SLACK`] tokens of `limit` is
/// counted as if encoded alone ([`SliceCounter`]), since trimming and cut tokens at its edges can
/// put its own count on the other side of the limit. Text that is not a slice of the document is
/// encoded as usual.
///
/// With [`DocSizer::trimming_markdown`] it also trims each candidate the way text-splitter's
/// `MarkdownSplitter` does before sizing it, so that splitter can run with its own trimming off
/// (see [`DocSizer::trimming_markdown`]).
#[derive(Clone, Copy)]
pub struct DocSizer<'a> {
    /// The text whose slices are sized (the document, or a copy with its byte layout).
    base: &'a str,
    /// Exact counts of the document's slices.
    exact: SliceCounter<'a>,
    limit: usize,
    /// Whether candidates are trimmed here as `MarkdownSplitter` trims them.
    markdown_trim: bool,
}

impl<'a> DocSizer<'a> {
    /// How far (in tokens) from the limit a stream count is checked by encoding.
    pub const SLACK: usize = 8;

    /// A sizer for slices of `text`, whose stream is `stream`, deciding against `limit` tokens.
    pub fn new(
        text: &'a str,
        stream: &'a TokenStream,
        counter: TokenCounter,
        limit: usize,
    ) -> Self {
        DocSizer {
            base: text,
            exact: SliceCounter::new(text, stream, counter),
            limit,
            markdown_trim: false,
        }
    }

    /// The same sizer, sizing each candidate as text-splitter 0.33's `MarkdownSplitter` sizes it
    /// after its `Trim::PreserveIndentation`: a candidate whose trimmed text holds a line break
    /// loses its leading line breaks and trailing whitespace (its indentation stays), any other
    /// loses all surrounding whitespace. The splitter then runs with `with_trim(false)`: its
    /// boundaries are the same (it compares the same sizes), but it also emits the whitespace-only
    /// chunks and the chunks ending inside the previous one that its trimming would skip, so the
    /// caller drops those ([`crate::chunking::markdown::emitted_with_trimming`]) and trims the
    /// rest ([`crate::chunking::bound::fit`]). The line-break test is one `memchr` pass here
    /// instead of the splitter's character-by-character search on every candidate, which was
    /// 7.5 % of the 10 MB benchmark sweep's CPU.
    pub fn trimming_markdown(self) -> Self {
        DocSizer {
            markdown_trim: true,
            ..self
        }
    }

    /// The same sizer for slices of `copy`, a text with the document's byte layout (characters
    /// replaced by others of the same length); the document's text at the same bytes is counted.
    pub fn over<'b>(&self, copy: &'b str) -> DocSizer<'b>
    where
        'a: 'b,
    {
        debug_assert_eq!(copy.len(), self.exact.text.len());
        DocSizer {
            base: copy,
            ..*self
        }
    }

    /// Tokens in the byte range `[start, end)` of the document: the stream's count, or the
    /// slice's own count when the stream's is within [`DocSizer::SLACK`] of the limit.
    pub fn count_range(&self, start: usize, end: usize) -> usize {
        let n = self.exact.stream.count_in(start, end);
        if n + Self::SLACK >= self.limit && n <= self.limit + Self::SLACK {
            self.exact.count(start, end)
        } else {
            n
        }
    }
}

impl text_splitter::ChunkSizer for DocSizer<'_> {
    fn size(&self, chunk: &str) -> usize {
        let (s, e) = if self.markdown_trim {
            markdown_trimmed(chunk)
        } else {
            (0, chunk.len())
        };
        match offset_in(self.base, chunk) {
            Some(start) => self.count_range(start + s, start + e),
            None => self.exact.counter.count(&chunk[s..e]),
        }
    }
}

/// The byte range of `chunk` that text-splitter 0.33's `Trim::PreserveIndentation` keeps (see
/// [`DocSizer::trimming_markdown`]).
pub(super) fn markdown_trimmed(chunk: &str) -> (usize, usize) {
    const NEWLINES: [char; 2] = ['\n', '\r'];
    let trimmed = chunk.trim();
    if memchr::memchr2(b'\n', b'\r', trimmed.as_bytes()).is_some() {
        let start = chunk.len() - chunk.trim_start_matches(NEWLINES).len();
        (start, chunk.trim_end().len())
    } else {
        let start = chunk.len() - chunk.trim_start().len();
        (start, start + trimmed.len())
    }
}
