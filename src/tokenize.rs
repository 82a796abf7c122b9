//! Token counting: a real BPE tokenizer (tiktoken's `cl100k_base` or `o200k_base`) or
//! whitespace-separated words (the unit of seed 000's harness).
//!
//! The BPE is GitHub's `bpe-openai` (a backtracking encoder several times faster than
//! tiktoken's), which gives exactly tiktoken's tokens (checked against tiktoken-rs on the test
//! corpora in `tests/bpe_equivalence.rs`). Every chunk size, overlap and cost column is counted in
//! the unit chosen here.

use std::fmt;
use std::str::FromStr;

use std::sync::OnceLock;

use bpe_openai::Tokenizer;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

/// The unit chunk sizes and costs are counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TokenizerKind {
    /// OpenAI's `cl100k_base` BPE (GPT-4, GPT-3.5, text-embedding-3).
    #[default]
    Cl100kBase,
    /// OpenAI's `o200k_base` BPE (GPT-4o and later).
    O200kBase,
    /// Whitespace-separated words, as `str.split()` counts them.
    Words,
}

impl TokenizerKind {
    /// The name used on the command line, in configs and in CSVs.
    pub fn name(self) -> &'static str {
        match self {
            TokenizerKind::Cl100kBase => "cl100k_base",
            TokenizerKind::O200kBase => "o200k_base",
            TokenizerKind::Words => "words",
        }
    }
}

impl fmt::Display for TokenizerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TokenizerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cl100k_base" => Ok(TokenizerKind::Cl100kBase),
            "o200k_base" => Ok(TokenizerKind::O200kBase),
            "words" => Ok(TokenizerKind::Words),
            other => Err(format!(
                "unknown tokenizer {other:?}: use cl100k_base, o200k_base or words"
            )),
        }
    }
}

/// Counts tokens in the chosen unit. Cheap to copy; the BPE tables are loaded once per process.
#[derive(Clone, Copy)]
pub struct TokenCounter {
    kind: TokenizerKind,
    bpe: Option<&'static Bpe>,
}

/// A BPE tokenizer and the set of its tokens' bytes. A pre-tokenizer piece that is itself a
/// token is that one token: tiktoken returns it without merging (its `encoder.get(piece)` fast
/// path), and so does bpe-openai's backtracking encoder, whose first candidate is the longest
/// token that starts the piece. Most pieces of prose are whole tokens, so looking them up
/// saves most encodings.
struct Bpe {
    tokenizer: &'static Tokenizer,
    whole: FxHashSet<&'static [u8]>,
}

impl Bpe {
    /// The tables of `kind` (`None` for words), loaded once per process.
    fn of(kind: TokenizerKind) -> Option<&'static Bpe> {
        static CL100K: OnceLock<Bpe> = OnceLock::new();
        static O200K: OnceLock<Bpe> = OnceLock::new();
        let (cell, tokenizer): (_, fn() -> &'static Tokenizer) = match kind {
            TokenizerKind::Cl100kBase => (&CL100K, bpe_openai::cl100k_base),
            TokenizerKind::O200kBase => (&O200K, bpe_openai::o200k_base),
            TokenizerKind::Words => return None,
        };
        Some(cell.get_or_init(|| {
            let tokenizer = tokenizer();
            let bpe = &tokenizer.bpe;
            let whole = (0..bpe.num_tokens())
                .map(|t| bpe.token_bytes(t as u32))
                .collect();
            Bpe { tokenizer, whole }
        }))
    }

    /// The pre-tokenizer pieces of `text`, in order.
    fn split<'t>(&'t self, text: &'t str) -> impl Iterator<Item = &'t str> + 't {
        self.tokenizer.split(text)
    }

    /// Tokens of one pre-tokenizer piece.
    fn piece_count(&self, piece: &str) -> usize {
        if self.whole.contains(piece.as_bytes()) {
            1
        } else {
            self.tokenizer.bpe.count(piece.as_bytes())
        }
    }

    /// Byte lengths of the tokens of one pre-tokenizer piece, in order, appended to `out`.
    fn piece_token_lens(&self, piece: &str, out: &mut Vec<u32>) {
        if self.whole.contains(piece.as_bytes()) {
            out.push(piece.len() as u32);
            return;
        }
        let bpe = &self.tokenizer.bpe;
        out.extend(
            bpe.encode_via_backtracking(piece.as_bytes())
                .into_iter()
                .map(|t| bpe.token_len(t) as u32),
        );
    }
}

impl fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenCounter")
            .field("kind", &self.kind)
            .finish()
    }
}

impl TokenCounter {
    /// A counter for `kind` (loading a BPE table takes a fraction of a second the first time).
    pub fn new(kind: TokenizerKind) -> Self {
        TokenCounter {
            kind,
            bpe: Bpe::of(kind),
        }
    }

    /// The unit this counter counts.
    pub fn kind(&self) -> TokenizerKind {
        self.kind
    }

    /// Number of tokens (or words) in `text`.
    pub fn count(&self, text: &str) -> usize {
        match self.bpe {
            Some(bpe) => count_pieces(bpe, text),
            None => text.split_whitespace().count(),
        }
    }

    /// Byte ranges of the tokens of `text`, in order. For BPE, a token that ends inside a
    /// multi-byte character is widened to the character's end, and the next token starts there,
    /// so every range lies on char boundaries (ranges may be empty). For words, each range is one
    /// whitespace-separated word.
    pub fn token_spans(&self, text: &str) -> Vec<(usize, usize)> {
        match self.bpe {
            Some(bpe) => {
                let (starts, ends, _) = bpe_spans(bpe, text);
                let span = |(s, e): (u32, u32)| (s as usize, e as usize);
                starts.into_iter().zip(ends).map(span).collect()
            }
            None => word_spans(text),
        }
    }
}

/// The BPE tokens of `text` as [`TokenCounter::token_spans`] gives them (their starts and
/// their ends), and the pieces of `text` (its pre-tokenizer split) as [`Pieces`]. A piece that
/// repeats in `text` is encoded once.
///
/// # Panics
/// If `text` is 4 GiB or longer (offsets are `u32`).
fn bpe_spans(bpe: &Bpe, text: &str) -> (Vec<u32>, Vec<u32>, Pieces) {
    assert!(
        u32::try_from(text.len()).is_ok(),
        "texts are limited to 4 GiB"
    );
    let mut starts = Vec::with_capacity(text.len() / 4);
    let mut ends = Vec::with_capacity(text.len() / 4);
    let (mut bounds, mut tokens) = (vec![0], vec![0]);
    // each distinct piece's token lengths: `lens[from..from + n]`
    let mut seen: FxHashMap<&str, (u32, u32)> = FxHashMap::default();
    let mut lens: Vec<u32> = Vec::new();
    let (mut raw, mut prev_end) = (0, 0);
    for piece in bpe.split(text) {
        let (from, n) = *seen.entry(piece).or_insert_with(|| {
            let from = lens.len();
            bpe.piece_token_lens(piece, &mut lens);
            (from as u32, (lens.len() - from) as u32)
        });
        for &len in &lens[from as usize..(from + n) as usize] {
            raw += len as usize;
            let mut end = raw.min(text.len()).max(prev_end);
            while !text.is_char_boundary(end) {
                end += 1;
            }
            starts.push(prev_end as u32);
            ends.push(end as u32);
            prev_end = end;
        }
        bounds.push(raw as u32);
        tokens.push(starts.len() as u32);
    }
    let bounds = Offsets::new(bounds, text.len());
    (starts, ends, Pieces { bounds, tokens })
}

/// Tokens of `text` counted piece by piece (what `Tokenizer::count` does; cl100k_base and
/// o200k_base do not normalize).
fn count_pieces(bpe: &Bpe, text: &str) -> usize {
    bpe.split(text).map(|p| bpe.piece_count(p)).sum()
}

/// A document's pre-tokenizer pieces (the regex split that BPE encodes piece by piece): piece
/// `k` is the bytes `bounds.get(k)..bounds.get(k + 1)` and has `tokens[k + 1] - tokens[k]`
/// tokens.
#[derive(Debug, Clone, Default)]
struct Pieces {
    bounds: Offsets,
    tokens: Vec<u32>,
}

/// Nondecreasing byte offsets of a document with a sampled index, so that counting the offsets
/// below a byte ([`Offsets::below`]) searches one block of [`Offsets::BLOCK`] bytes instead of
/// the whole document: the sizers ask this several times per candidate chunk, millions of
/// times per sweep.
#[derive(Debug, Clone, Default)]
struct Offsets {
    keys: Vec<u32>,
    /// `blocks[b]`: how many keys are below byte `b × BLOCK`.
    blocks: Vec<u32>,
}

impl Offsets {
    const BLOCK: usize = 64;

    /// The index of `keys` (nondecreasing) in a text of `len` bytes.
    fn new(keys: Vec<u32>, len: usize) -> Self {
        let n_blocks = len / Self::BLOCK + 2;
        let mut blocks = Vec::with_capacity(n_blocks);
        let mut i = 0;
        for b in 0..n_blocks {
            while i < keys.len() && (keys[i] as usize) < b * Self::BLOCK {
                i += 1;
            }
            blocks.push(i as u32);
        }
        Offsets { keys, blocks }
    }

    /// How many keys are below byte `x` (`keys.partition_point(|k| k < x)`).
    fn below(&self, x: usize) -> usize {
        let b = x / Self::BLOCK;
        let (lo, hi) = match (self.blocks.get(b), self.blocks.get(b + 1)) {
            (Some(&lo), Some(&hi)) => (lo as usize, hi as usize),
            _ => (
                self.blocks.last().map_or(0, |&l| l as usize),
                self.keys.len(),
            ),
        };
        lo + self.keys[lo..hi].partition_point(|&k| (k as usize) < x)
    }

    /// The index of the key equal to `x`, if any (keys strictly increasing).
    fn find(&self, x: usize) -> Option<usize> {
        let i = self.below(x);
        (self.keys.get(i) == Some(&(x as u32))).then_some(i)
    }

    fn get(&self, i: usize) -> usize {
        self.keys[i] as usize
    }

    fn len(&self) -> usize {
        self.keys.len()
    }
}

impl text_splitter::ChunkSizer for TokenCounter {
    fn size(&self, chunk: &str) -> usize {
        self.count(chunk)
    }
}

/// A document's tokens, computed once and shared by every configuration of a sweep: the byte
/// range of each token in order, and for BPE the document's pre-tokenizer pieces with their
/// token counts. Counting the tokens of any slice of the document is then a search of two blocks
/// of its offsets ([`TokenStream::count_in`], [`Offsets`]), or, exactly as the slice encoded
/// alone, an encoding of the slice's edges only ([`SliceCounter`]).
#[derive(Debug, Clone, Default)]
pub struct TokenStream {
    starts: Offsets,
    ends: Offsets,
    /// Empty for words.
    pieces: Pieces,
}

impl TokenStream {
    /// Tokenizes `text` (at most 4 GiB) with `counter`.
    pub fn new(text: &str, counter: TokenCounter) -> Self {
        assert!(
            u32::try_from(text.len()).is_ok(),
            "documents are limited to 4 GiB"
        );
        let (starts, ends, pieces) = match counter.bpe {
            Some(bpe) => bpe_spans(bpe, text),
            None => {
                let spans = word_spans(text);
                let starts = spans.iter().map(|s| s.0 as u32).collect();
                let ends = spans.iter().map(|s| s.1 as u32).collect();
                (starts, ends, Pieces::default())
            }
        };
        TokenStream {
            starts: Offsets::new(starts, text.len()),
            ends: Offsets::new(ends, text.len()),
            pieces,
        }
    }

    /// Number of tokens in the document.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether the document has no token.
    pub fn is_empty(&self) -> bool {
        self.starts.len() == 0
    }

    /// Byte range of token `i`.
    pub fn span(&self, i: usize) -> (usize, usize) {
        (self.starts.get(i), self.ends.get(i))
    }

    /// Number of tokens overlapping the byte range `[start, end)`. For a range on token
    /// boundaries this is exactly its token count; a token cut by either end counts once.
    pub fn count_in(&self, start: usize, end: usize) -> usize {
        if start >= end {
            return 0;
        }
        let first = self.ends.below(start + 1);
        let last = self.starts.below(end);
        last.saturating_sub(first)
    }
}

/// Every document's [`TokenStream`], in corpus order, computed in parallel.
#[derive(Debug, Clone)]
pub struct CorpusTokens {
    counter: TokenCounter,
    docs: Vec<TokenStream>,
}

impl CorpusTokens {
    /// Tokenizes every document of `corpus` in the unit `kind`.
    pub fn new(corpus: &crate::corpus::Corpus, kind: TokenizerKind) -> Self {
        use rayon::prelude::*;
        let counter = TokenCounter::new(kind);
        CorpusTokens {
            counter,
            docs: corpus
                .docs
                .par_iter()
                .map(|d| TokenStream::new(&d.text, counter))
                .collect(),
        }
    }

    /// The counter the streams were made with.
    pub fn counter(&self) -> TokenCounter {
        self.counter
    }

    /// The stream of document `i`.
    pub fn doc(&self, i: usize) -> &TokenStream {
        &self.docs[i]
    }

    /// Tokens in the whole corpus.
    pub fn total(&self) -> usize {
        self.docs.iter().map(TokenStream::len).sum()
    }
}

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
    text: &'a str,
    stream: &'a TokenStream,
    counter: TokenCounter,
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
        let Pieces { bounds, tokens } = &self.stream.pieces;
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
        let middle = (tokens[last] - tokens[first]) as usize;
        // Tail: the slice's own pieces from there.
        head + middle + count_pieces(bpe, &self.text[bounds.get(last)..end])
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
fn offset_in(base: &str, chunk: &str) -> Option<usize> {
    let (base_at, at) = (base.as_ptr() as usize, chunk.as_ptr() as usize);
    (at >= base_at && at + chunk.len() <= base_at + base.len()).then(|| at - base_at)
}

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
fn markdown_trimmed(chunk: &str) -> (usize, usize) {
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

/// Byte ranges of the whitespace-separated words of `text`.
pub fn word_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, text.len()));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_whitespace_separated() {
        let c = TokenCounter::new(TokenizerKind::Words);
        assert_eq!(c.count("  a b\tc\n\nd  "), 4);
        assert_eq!(word_spans(" ab  c"), vec![(1, 3), (5, 6)]);
    }

    #[test]
    fn cl100k_counts_a_known_sentence() {
        // "An apple a" is 3 tokens in cl100k_base (text-splitter's own test agrees).
        let c = TokenCounter::new(TokenizerKind::Cl100kBase);
        assert_eq!(c.count("An apple a"), 3);
    }

    #[test]
    fn stream_counts_match_encoding_on_token_boundaries() {
        let text = "Refunds take 14 days. Zoë paid €12 🙂 at ~/.config/larkspur.";
        let counter = TokenCounter::new(TokenizerKind::Cl100kBase);
        let stream = TokenStream::new(text, counter);
        assert_eq!(stream.len(), counter.count(text));
        assert_eq!(stream.count_in(0, text.len()), counter.count(text));
        let (s, _) = stream.span(3);
        let (_, e) = stream.span(7);
        assert_eq!(stream.count_in(s, e), 5);
        assert_eq!(stream.count_in(e, e), 0);
        let sizer = DocSizer::new(text, &stream, counter, 100);
        use text_splitter::ChunkSizer;
        assert_eq!(sizer.size(&text[s..e]), 5);
        assert_eq!(sizer.size("An apple a"), 3, "foreign text is encoded");
        let words = TokenStream::new(text, TokenCounter::new(TokenizerKind::Words));
        assert_eq!(words.len(), 10);
        // "take 14" plus the cut word "days." = 3 words overlap bytes 8..17.
        assert_eq!(words.count_in(8, 17), 3);
    }

    #[test]
    fn sampled_offsets_count_as_a_search_of_the_whole_array() {
        // nondecreasing keys with repeats (empty token spans), gaps longer than a block, and
        // keys up to the text's end
        let len = 1_000;
        let mut keys = Vec::new();
        let mut k = 0u32;
        let mut step = 1u32;
        while (k as usize) <= len {
            keys.push(k);
            if step.is_multiple_of(7) {
                keys.push(k);
            }
            k += step % 150;
            step += 13;
        }
        let offsets = Offsets::new(keys.clone(), len);
        for x in 0..=len + 1 {
            let want = keys.partition_point(|&k| (k as usize) < x);
            assert_eq!(offsets.below(x), want, "below({x})");
        }
        assert_eq!(offsets.find(keys[5] as usize), Some(5));
        assert_eq!(Offsets::new(vec![], 10).below(3), 0);
    }

    #[test]
    fn markdown_trim_keeps_indentation_only_around_line_breaks() {
        // text-splitter's own cases for Trim::PreserveIndentation and Trim::All
        assert_eq!(markdown_trimmed("\n  hello\n  world  "), (1, 16));
        assert_eq!(markdown_trimmed("  hello world  "), (2, 13));
        // no line break inside the trimmed text: every surrounding space goes
        assert_eq!(markdown_trimmed("\n\n    code  \n"), (6, 10));
        // a carriage return counts as a line break; leading spaces before it stay
        assert_eq!(markdown_trimmed("\r\n  a\r\n  b \r\n"), (2, 10));
        assert_eq!(markdown_trimmed(" \n \t "), (5, 5));
        assert_eq!(markdown_trimmed(""), (0, 0));
    }

    #[test]
    fn bpe_spans_cover_text_on_char_boundaries() {
        let text = "Zoë paid €12 🙂 for “Café” — ok";
        let c = TokenCounter::new(TokenizerKind::Cl100kBase);
        let spans = c.token_spans(text);
        assert_eq!(spans.first().unwrap().0, 0);
        assert_eq!(spans.last().unwrap().1, text.len());
        for w in spans.windows(2) {
            assert_eq!(w[0].1, w[1].0, "spans are contiguous");
        }
        for (s, e) in &spans {
            assert!(text.is_char_boundary(*s) && text.is_char_boundary(*e));
        }
    }
}
