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
        let mut gap = chunk.wrapping_sub(self.last[t]);
        let mut at = self.next[t] as usize;
        while gap >= 0x80 {
            bytes[at] = (gap & 0x7f) as u8 | 0x80;
            gap >>= 7;
            at += 1;
        }
        bytes[at] = gap as u8;
        bytes[at + 1] = 1;
        self.next[t] = (at + 2) as u32;
        self.last[t] = chunk;
    }

    /// The lists.
    pub(super) fn finish(self) -> Postings {
        let mut many: Vec<(u32, u32)> = self.many.into_iter().collect();
        many.sort_unstable();
        Postings {
            many,
            ..self.postings
        }
    }
}

impl Postings {
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

    #[test]
    fn postings_read_back_with_long_gaps_and_high_frequencies() {
        // term 0: 300 times in chunk 0 (over a byte); term 1: chunks 0, 200 (a two-byte gap)
        // and 70,000 (three bytes) twice; term 2: nowhere; term 3: 255 times in chunk 5
        let mut occurrences: Vec<(u32, u32)> = vec![(0, 0); 300];
        occurrences.push((0, 1));
        occurrences.extend([(5, 3); 255]);
        occurrences.extend([(200, 1), (70_000, 1), (70_000, 1)]);
        let mut b = PostingsBuilder::new(4);
        for &(c, t) in &occurrences {
            b.count(c, t);
        }
        b.start_filling();
        for &(c, t) in &occurrences {
            b.fill(c, t);
        }
        let p = b.finish();
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
