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
    /// `(byte, frequency)` of the frequencies over 255, by the byte that holds 255.
    many: Vec<(u32, u32)>,
}

/// A frequency byte that means "see the side list" (or exactly 255).
const MANY: u8 = u8::MAX;

fn leb128_len(mut x: u32) -> u32 {
    let mut n = 1;
    while x >= 0x80 {
        x >>= 7;
        n += 1;
    }
    n
}

/// How [`build`] divides the terms between parallel parts: term ids in blocks of
/// `2^block_bits`, block
/// `b` to part `b % parts`. Each part reads every chunk's terms and handles its own terms only, so
/// the parts write disjoint slots of the per-term arrays and disjoint byte ranges of the lists,
/// and need no memory per part beyond a side list (a split by chunks would hold a per-term array
/// per part). Every split gives the same lists: a term's list is written by one part, in chunk
/// order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Split {
    /// Number of parts (at least 1).
    pub(super) parts: usize,
    /// Log2 of the term ids per block: small enough to balance the parts (the most frequent
    /// terms have the smallest ids, being met first), large enough that two parts seldom share
    /// a cache line.
    pub(super) block_bits: u32,
}

impl Split {
    /// One part per thread of rayon's pool, blocks of 256 term ids.
    pub(super) fn per_thread() -> Self {
        Split {
            parts: rayon::current_num_threads().max(1),
            block_bits: 8,
        }
    }

    fn block(self) -> usize {
        1 << self.block_bits
    }
}

/// One part's share of the per-term arrays (its blocks, in order) and, while filling, of the
/// lists' bytes.
struct Part<'a> {
    last: Vec<&'a mut [u32]>,
    next: Vec<&'a mut [u32]>,
    /// Each block's bytes and the position of its first byte in the whole lists.
    bytes: Vec<(u32, &'a mut [u8])>,
}

/// Per term: its part and its block's index among the part's blocks, by block.
fn owners(n_terms: usize, split: Split) -> Vec<(u32, u32)> {
    let parts = split.parts.max(1);
    (0..n_terms.div_ceil(split.block()))
        .map(|b| ((b % parts) as u32, (b / parts) as u32))
        .collect()
}

/// The parts' shares of `last` and `next` (blocks dealt out in turn), and of `bytes` when the
/// lists' `offsets` are known.
fn deal<'a>(
    split: Split,
    last: &'a mut [u32],
    next: &'a mut [u32],
    lists: Option<(&[u32], &'a mut [u8])>,
) -> Vec<Part<'a>> {
    let parts = split.parts.max(1);
    let block = split.block();
    let mut out: Vec<Part<'a>> = (0..parts)
        .map(|_| Part {
            last: Vec::new(),
            next: Vec::new(),
            bytes: Vec::new(),
        })
        .collect();
    for (b, (l, n)) in last
        .chunks_mut(block)
        .zip(next.chunks_mut(block))
        .enumerate()
    {
        out[b % parts].last.push(l);
        out[b % parts].next.push(n);
    }
    if let Some((offsets, mut rest)) = lists {
        let n_terms = offsets.len() - 1;
        for b in 0..n_terms.div_ceil(block) {
            let (from, to) = (offsets[b * block], offsets[((b + 1) * block).min(n_terms)]);
            let (head, tail) = std::mem::take(&mut rest).split_at_mut((to - from) as usize);
            out[b % parts].bytes.push((from, head));
            rest = tail;
        }
    }
    out
}

/// The posting lists of terms `0..n_terms` over chunks `0..n_chunks`, chunk `i` holding the
/// terms `terms(i)` (repeats counted), and each chunk's number of terms. Two passes over the
/// occurrences, each in `split.parts` parts in parallel (rayon): the first sizes each list, the
/// second writes them. The lists do not depend on the split.
///
/// # Panics
/// If the lists take 4 GiB or more.
pub(super) fn build<I: Iterator<Item = u32>>(
    n_terms: usize,
    n_chunks: u32,
    terms: impl Fn(u32) -> I + Sync,
    split: Split,
) -> (Postings, Vec<u32>) {
    use rayon::prelude::*;
    let owners = owners(n_terms, split);
    let (bits, mask) = (split.block_bits, split.block() - 1);
    // the last chunk each term was seen in (`u32::MAX` for none yet); each list's bytes
    let mut last = vec![u32::MAX; n_terms];
    let mut next = vec![0u32; n_terms];
    let lens: Vec<Vec<u32>> = deal(split, &mut last, &mut next, None)
        .into_par_iter()
        .enumerate()
        .map(|(p, mut part)| {
            let mut lens = Vec::with_capacity(if p == 0 { n_chunks as usize } else { 0 });
            for chunk in 0..n_chunks {
                let mut len = 0u32;
                for t in terms(chunk) {
                    len += 1;
                    let (owner, b) = owners[(t >> bits) as usize];
                    if owner as usize != p {
                        continue;
                    }
                    let j = t as usize & mask;
                    let last = &mut part.last[b as usize][j];
                    if *last == chunk {
                        continue;
                    }
                    // the first gap is from "chunk −1" (u32::MAX wraps), so it is the chunk + 1
                    part.next[b as usize][j] += leb128_len(chunk.wrapping_sub(*last)) + 1;
                    *last = chunk;
                }
                if p == 0 {
                    lens.push(len);
                }
            }
            lens
        })
        .collect();
    let lens = lens.into_iter().next().unwrap_or_default();
    // the lists' places: `next` becomes where each list's next posting goes
    let mut offsets = Vec::with_capacity(n_terms + 1);
    let mut total = 0u32;
    offsets.push(0);
    for n in &mut next {
        let size = *n;
        *n = total;
        total = total.checked_add(size).expect("posting lists below 4 GiB");
        offsets.push(total);
    }
    let mut bytes = vec![0u8; total as usize];
    last.fill(u32::MAX);
    let many: Vec<Vec<(u32, u32)>> =
        deal(split, &mut last, &mut next, Some((&offsets, &mut bytes)))
            .into_par_iter()
            .enumerate()
            .map(|(p, part)| fill(part, p, n_chunks, &terms, &owners, bits))
            .collect();
    let mut many: Vec<(u32, u32)> = many.into_iter().flatten().collect();
    many.sort_unstable();
    (
        Postings {
            bytes,
            offsets,
            many,
        },
        lens,
    )
}

/// The second pass of part `p`: writes its terms' postings (the occurrences as the first pass
/// saw them, in the same order); returns its frequencies over 255 as `(byte, frequency)`.
fn fill<I: Iterator<Item = u32>>(
    mut part: Part<'_>,
    p: usize,
    n_chunks: u32,
    terms: &impl Fn(u32) -> I,
    owners: &[(u32, u32)],
    bits: u32,
) -> Vec<(u32, u32)> {
    let mask = (1usize << bits) - 1;
    let mut many: FxHashMap<u32, u32> = FxHashMap::default();
    for chunk in 0..n_chunks {
        for t in terms(chunk) {
            let (owner, b) = owners[(t >> bits) as usize];
            if owner as usize != p {
                continue;
            }
            let (b, j) = (b as usize, t as usize & mask);
            let (base, bytes) = &mut part.bytes[b];
            let next = &mut part.next[b][j];
            let last = &mut part.last[b][j];
            if *last == chunk {
                let at = *next - 1;
                let local = (at - *base) as usize;
                match bytes[local] {
                    MANY => *many.entry(at).or_insert(u32::from(MANY)) += 1,
                    tf => bytes[local] = tf + 1,
                }
                continue;
            }
            let mut gap = chunk.wrapping_sub(*last);
            let mut at = (*next - *base) as usize;
            while gap >= 0x80 {
                bytes[at] = (gap & 0x7f) as u8 | 0x80;
                gap >>= 7;
                at += 1;
            }
            bytes[at] = gap as u8;
            bytes[at + 1] = 1;
            *next = *base + at as u32 + 2;
            *last = chunk;
        }
    }
    many.into_iter().collect()
}

impl Postings {
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
            let (mut gap, mut shift) = (0u32, 0);
            loop {
                let b = self.bytes[at];
                at += 1;
                gap |= u32::from(b & 0x7f) << shift;
                if b < 0x80 {
                    break;
                }
                shift += 7;
            }
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

    /// Chunk `i`'s terms, repeats included, for chunks `0..70_001`: term 0 300 times in chunk
    /// 0 (over a byte); term 1 in chunks 0, 200 (a two-byte gap) and 70,000 (three bytes)
    /// twice; term 2 nowhere; term 3 255 times in chunk 5; term 4 in chunks 5 and 200, after
    /// term 3 in chunk 5; term 5 in chunk 70,000 three times.
    fn occurrences(chunk: u32) -> Vec<u32> {
        match chunk {
            0 => std::iter::repeat_n(0, 300).chain([1]).collect(),
            5 => std::iter::repeat_n(3, 255).chain([4]).collect(),
            200 => vec![4, 1],
            70_000 => vec![5, 1, 5, 1, 5],
            _ => Vec::new(),
        }
    }

    #[test]
    fn postings_are_the_same_whatever_the_split() {
        for (parts, block_bits) in [(1, 8), (2, 0), (3, 0), (2, 1), (4, 1), (7, 8)] {
            let split = Split { parts, block_bits };
            let (p, lens) = build(6, 70_001, |c| occurrences(c).into_iter(), split);
            let of = |t| p.of(t).collect::<Vec<_>>();
            assert_eq!(of(0), vec![(0, 300)], "{split:?}");
            assert_eq!(of(1), vec![(0, 1), (200, 1), (70_000, 2)], "{split:?}");
            assert_eq!(of(2), vec![], "{split:?}");
            assert_eq!(of(3), vec![(5, 255)], "{split:?}");
            assert_eq!(of(4), vec![(5, 1), (200, 1)], "{split:?}");
            assert_eq!(of(5), vec![(70_000, 3)], "{split:?}");
            assert_eq!(of(9), vec![], "{split:?}");
            // gap and frequency bytes: term 0: 2; term 1: 2 + 3 (gap 200: two bytes) + 4 (gap
            // 69,800: three bytes); term 3: 2; term 4: 2 + 3 (gap 195: two bytes); term 5: 4
            // (gap 70,001: three bytes)
            assert_eq!(p.bytes.len(), 2 + 9 + 2 + 5 + 4, "{split:?}");
            assert_eq!(p.offsets, vec![0, 2, 11, 11, 13, 18, 22], "{split:?}");
            // only term 0's 300 needs the side list (255 is its own byte)
            assert_eq!(p.many, vec![(1, 300)], "{split:?}");
            assert_eq!(lens.len(), 70_001);
            let nonzero: Vec<(usize, u32)> = lens
                .iter()
                .enumerate()
                .filter(|&(_, &l)| l > 0)
                .map(|(i, &l)| (i, l))
                .collect();
            assert_eq!(nonzero, vec![(0, 301), (5, 256), (200, 2), (70_000, 5)]);
        }
    }
}
