//! A BM25 index's posting lists in about two bytes a posting: per term, its chunks in order as
//! gaps from the previous one (LEB128: one byte below 128), each followed by the term's
//! frequency in the chunk in one byte (a frequency over 255, rare, in a side list). A posting
//! took eight bytes as two `u32`, the largest part of a configuration's index.

use rustc_hash::FxHashMap;

/// The posting lists of every term, each read in chunk order ([`Postings::of`]).
#[derive(Debug, Default)]
pub(super) struct Postings {
    bytes: Vec<u8>,
    /// Term `t`'s postings are `bytes[offsets[t]..offsets[t + 1]]`.
    offsets: Vec<u32>,
    /// Term `t`'s number of postings (chunks holding it).
    doc_freqs: Vec<u32>,
    /// `(byte, frequency)` of the frequencies over 255, by the byte that holds 255.
    many: Vec<(u32, u32)>,
}

/// A frequency byte that means "see the side list" (or exactly 255).
const MANY: u8 = u8::MAX;

/// Builds [`Postings`] in two passes over every (chunk, term) occurrence in chunk order:
/// [`PostingsBuilder::count`] sizes each list, [`PostingsBuilder::fill`] writes them.
pub(super) struct PostingsBuilder {
    /// The last chunk each term was seen in (`u32::MAX` for none yet).
    last: Vec<u32>,
    /// Bytes of each term's list while counting, then where its next posting goes.
    next: Vec<u32>,
    postings: Postings,
    many: FxHashMap<u32, u32>,
}

fn leb128_len(mut x: u32) -> u32 {
    let mut n = 1;
    while x >= 0x80 {
        x >>= 7;
        n += 1;
    }
    n
}

impl PostingsBuilder {
    /// A builder for terms `0..n_terms`.
    pub(super) fn new(n_terms: usize) -> Self {
        PostingsBuilder {
            last: vec![u32::MAX; n_terms],
            next: vec![0; n_terms],
            postings: Postings {
                doc_freqs: vec![0; n_terms],
                ..Postings::default()
            },
            many: FxHashMap::default(),
        }
    }

    /// First pass: `term` occurs in `chunk` (chunks nondecreasing).
    pub(super) fn count(&mut self, chunk: u32, term: u32) {
        let t = term as usize;
        if self.last[t] == chunk {
            return;
        }
        // the first gap is from "chunk −1" (u32::MAX wraps), so it is the chunk + 1
        self.next[t] += leb128_len(chunk.wrapping_sub(self.last[t])) + 1;
        self.last[t] = chunk;
        self.postings.doc_freqs[t] += 1;
    }

    /// Ends the first pass: the lists' places.
    ///
    /// # Panics
    /// If the lists take 4 GiB or more.
    pub(super) fn start_filling(&mut self) {
        let mut offsets = Vec::with_capacity(self.next.len() + 1);
        let mut total = 0u32;
        offsets.push(0);
        for n in &mut self.next {
            let size = *n;
            *n = total;
            total = total.checked_add(size).expect("posting lists below 4 GiB");
            offsets.push(total);
        }
        self.postings.offsets = offsets;
        self.postings.bytes = vec![0; total as usize];
        self.last.fill(u32::MAX);
    }

    /// Second pass: the same occurrences as [`PostingsBuilder::count`]'s, in the same order.
    pub(super) fn fill(&mut self, chunk: u32, term: u32) {
        let t = term as usize;
        let bytes = &mut self.postings.bytes;
        if self.last[t] == chunk {
            let at = self.next[t] - 1;
            match bytes[at as usize] {
                MANY => *self.many.entry(at).or_insert(u32::from(MANY)) += 1,
                tf => bytes[at as usize] = tf + 1,
            }
            return;
        }
        let gap = chunk.wrapping_sub(self.last[t]);
        let at = self.next[t] as usize + write_leb128(gap, &mut bytes[self.next[t] as usize..]);
        bytes[at] = 1;
        self.next[t] = (at + 1) as u32;
        self.last[t] = chunk;
    }

    /// The lists, with the last chunk of each for [`Postings::join`].
    pub(super) fn finish(self) -> PostingsPart {
        let mut many: Vec<(u32, u32)> = self.many.into_iter().collect();
        many.sort_unstable();
        let postings = Postings {
            many,
            ..self.postings
        };
        (postings, self.last)
    }
}

/// The lists of a range of chunks, and the last chunk of each list (`u32::MAX` for an empty
/// one).
pub(super) type PostingsPart = (Postings, Vec<u32>);

/// The LEB128 number at the start of `bytes` and its length in bytes.
#[inline]
fn read_leb128(bytes: &[u8]) -> (u32, usize) {
    let (mut x, mut shift, mut at) = (0u32, 0, 0);
    loop {
        let b = bytes[at];
        at += 1;
        x |= u32::from(b & 0x7f) << shift;
        if b < 0x80 {
            return (x, at);
        }
        shift += 7;
    }
}

/// Writes `x` in LEB128 at the start of `out`; its length in bytes.
#[inline]
fn write_leb128(mut x: u32, out: &mut [u8]) -> usize {
    let mut at = 0;
    while x >= 0x80 {
        out[at] = (x & 0x7f) as u8 | 0x80;
        x >>= 7;
        at += 1;
    }
    out[at] = x as u8;
    at + 1
}

impl Postings {
    /// The lists of `parts` joined term by term, each part built (with
    /// [`PostingsBuilder::finish`]'s last chunks) over the same terms and over chunks all after
    /// the previous part's: the bytes the one builder over every chunk would have written.
    /// Only each part's first gap of a term changes (it becomes the gap from the previous
    /// part's last chunk of that term).
    ///
    /// # Panics
    /// If the lists take 4 GiB or more.
    pub(super) fn join(parts: Vec<PostingsPart>) -> Postings {
        let n_terms = parts.first().map_or(0, |(p, _)| p.doc_freqs.len());
        // (part, its bytes of term t without the first gap, the new first gap) in order
        let pieces = |t: usize| {
            let mut prev_last = u32::MAX;
            parts.iter().filter_map(move |(p, last)| {
                let (a, b) = (p.offsets[t] as usize, p.offsets[t + 1] as usize);
                if a == b {
                    return None;
                }
                // a part's first gap is from "chunk −1": it is its first chunk + 1
                let (gap, len) = read_leb128(&p.bytes[a..b]);
                let first = gap.wrapping_sub(1);
                let piece = (p, a + len..b, first.wrapping_sub(prev_last));
                prev_last = last[t];
                Some(piece)
            })
        };
        let mut offsets = Vec::with_capacity(n_terms + 1);
        offsets.push(0u32);
        let mut total = 0u32;
        for t in 0..n_terms {
            for (_, rest, gap) in pieces(t) {
                let size = leb128_len(gap) as usize + rest.len();
                total = u32::try_from(size)
                    .ok()
                    .and_then(|s| total.checked_add(s))
                    .expect("posting lists below 4 GiB");
            }
            offsets.push(total);
        }
        let mut bytes = vec![0u8; total as usize];
        let mut many = Vec::new();
        let mut at = 0usize;
        for t in 0..n_terms {
            for (p, rest, gap) in pieces(t) {
                at += write_leb128(gap, &mut bytes[at..]);
                let from = rest.start;
                bytes[at..at + rest.len()].copy_from_slice(&p.bytes[rest.clone()]);
                let lo = p.many.partition_point(|&(b, _)| (b as usize) < from);
                let hi = p.many.partition_point(|&(b, _)| (b as usize) < rest.end);
                many.extend(
                    p.many[lo..hi]
                        .iter()
                        .map(|&(b, tf)| ((b as usize - from + at) as u32, tf)),
                );
                at += rest.len();
            }
        }
        let doc_freqs = (0..n_terms)
            .map(|t| parts.iter().map(|(p, _)| p.doc_freqs[t]).sum())
            .collect();
        Postings {
            bytes,
            offsets,
            doc_freqs,
            many,
        }
    }

    /// The number of postings of term `t` (0 for a term past the lists).
    pub(super) fn doc_freq(&self, t: u32) -> u32 {
        self.doc_freqs.get(t as usize).copied().unwrap_or(0)
    }

    /// The postings of term `t` (a term past the lists has none): `(chunk, frequency)` in
    /// chunk order.
    pub(super) fn of(&self, t: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let t = t as usize;
        let (mut at, end) = match (self.offsets.get(t), self.offsets.get(t + 1)) {
            (Some(&a), Some(&b)) => (a as usize, b as usize),
            _ => (0, 0),
        };
        let mut chunk = u32::MAX;
        std::iter::from_fn(move || {
            if at >= end {
                return None;
            }
            let (gap, len) = read_leb128(&self.bytes[at..end]);
            at += len;
            chunk = chunk.wrapping_add(gap);
            let tf = match self.bytes[at] {
                MANY => self
                    .many
                    .binary_search_by_key(&(at as u32), |&(b, _)| b)
                    .map_or(u32::from(MANY), |i| self.many[i].1),
                tf => u32::from(tf),
            };
            at += 1;
            Some((chunk, tf))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The builder over `occurrences` ((chunk, term), chunks nondecreasing) of `n_terms` terms.
    fn build(occurrences: &[(u32, u32)], n_terms: usize) -> PostingsPart {
        let mut b = PostingsBuilder::new(n_terms);
        for &(c, t) in occurrences {
            b.count(c, t);
        }
        b.start_filling();
        for &(c, t) in occurrences {
            b.fill(c, t);
        }
        b.finish()
    }

    #[test]
    fn parts_joined_equal_one_builder_over_every_chunk() {
        // 6 terms over 3,000 chunks: gaps of one to three bytes, frequencies over 255, a term
        // in no chunk, and runs of chunks without any term
        let mut occurrences: Vec<(u32, u32)> = Vec::new();
        for c in 0..3_000u32 {
            if (1_000..1_400).contains(&c) {
                continue;
            }
            for t in 0..6u32 {
                let h = c.wrapping_mul(2_654_435_761).rotate_left(t * 5) ^ t;
                let times = match (t, c % 997) {
                    (4, _) => 0,
                    (0, 0) => 300,
                    _ if h % (t + 2) == 0 => 1 + h % 3,
                    _ => 0,
                };
                occurrences.extend((0..times).map(|_| (c, t)));
            }
        }
        occurrences.extend([(90_000, 5), (200_000, 5), (200_000, 1)]);
        let (whole, _) = build(&occurrences, 6);
        assert!(!whole.many.is_empty() && whole.bytes.len() > 3_000);
        for cuts in [
            vec![],
            vec![1_200],
            vec![1, 1_000, 1_400, 2_999],
            vec![0, 150_000],
        ] {
            let mut bounds = vec![0u32];
            bounds.extend(&cuts);
            bounds.push(u32::MAX);
            let parts = bounds
                .windows(2)
                .map(|w| {
                    let part: Vec<(u32, u32)> = occurrences
                        .iter()
                        .copied()
                        .filter(|&(c, _)| (w[0]..w[1]).contains(&c))
                        .collect();
                    build(&part, 6)
                })
                .collect();
            let joined = Postings::join(parts);
            assert_eq!(joined.bytes, whole.bytes, "{cuts:?}");
            assert_eq!(joined.offsets, whole.offsets, "{cuts:?}");
            assert_eq!(joined.doc_freqs, whole.doc_freqs, "{cuts:?}");
            assert_eq!(joined.many, whole.many, "{cuts:?}");
        }
    }

    #[test]
    fn postings_read_back_with_long_gaps_and_high_frequencies() {
        // term 0: 300 times in chunk 0 (over a byte); term 1: chunks 0, 200 (a two-byte gap)
        // and 70,000 (three bytes) twice; term 2: nowhere; term 3: 255 times in chunk 5
        let mut occurrences: Vec<(u32, u32)> = vec![(0, 0); 300];
        occurrences.push((0, 1));
        occurrences.extend([(5, 3); 255]);
        occurrences.extend([(200, 1), (70_000, 1), (70_000, 1)]);
        let (p, last) = build(&occurrences, 4);
        assert_eq!(last, vec![0, 70_000, u32::MAX, 5]);
        let of = |t| p.of(t).collect::<Vec<_>>();
        assert_eq!(of(0), vec![(0, 300)]);
        assert_eq!(of(1), vec![(0, 1), (200, 1), (70_000, 2)]);
        assert_eq!(of(2), vec![]);
        assert_eq!(of(3), vec![(5, 255)]);
        assert_eq!(of(9), vec![]);
        let dfs: Vec<u32> = (0..5).map(|t| p.doc_freq(t)).collect();
        assert_eq!(dfs, vec![1, 3, 0, 1, 0]);
        // 2 + 3 (gap 200: two bytes, tf) + 4 (gap 69,800: three bytes, tf) for term 1
        assert_eq!(p.bytes.len(), 2 + (2 + 3 + 4) + 2);
    }
}
