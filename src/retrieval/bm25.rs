//! Textbook BM25 (Robertson & Zaragoza 2009; the formula of seed 000's harness) over one
//! configuration's chunks, in memory.
//!
//! For a query with distinct terms `t` (repeats in the query count once, as in seed 000), the
//! score of chunk `d` is
//!
//! `Σ_t idf(t) · tf(t, d) · (k1 + 1) / (tf(t, d) + k1 · (1 − b + b · |d| / avgdl))`,
//! `idf(t) = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))`,
//!
//! with `N` the number of chunks, `n(t)` the chunks holding `t`, `|d|` the chunk's exact number
//! of terms (prefix included) and `avgdl` their mean; all in `f64`. k1 and b are settings
//! ([`Bm25Settings`], default 1.2 and 0.75). The terms come from the corpus analyzed once
//! ([`AnalyzedCorpus`]): a chunk's terms are its document's terms inside the chunk's range plus
//! the terms of its prefix. The index is a posting list per term (chunk, tf); a query is scored
//! by walking the postings of its terms only.

use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::analyze::{AnalyzedCorpus, AnalyzerKind, AnalyzerSettings};

/// BM25 settings (`[sweep.bm25]`): the analyzer, stemming and the two parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bm25Settings {
    /// The analyzer (default `standard`).
    #[serde(default)]
    pub analyzer: AnalyzerKind,
    /// English stemming of terms made only of letters (default off).
    #[serde(default)]
    pub stem: bool,
    /// Term saturation (default 1.2).
    #[serde(default = "default_k1")]
    pub k1: f64,
    /// Length normalisation, 0 (none) to 1 (full) (default 0.75).
    #[serde(default = "default_b")]
    pub b: f64,
}

fn default_k1() -> f64 {
    1.2
}

fn default_b() -> f64 {
    0.75
}

impl Default for Bm25Settings {
    fn default() -> Self {
        Bm25Settings {
            analyzer: AnalyzerKind::default(),
            stem: false,
            k1: default_k1(),
            b: default_b(),
        }
    }
}

impl Bm25Settings {
    /// The analyzer settings (analyzer and stemming).
    pub fn analysis(&self) -> AnalyzerSettings {
        AnalyzerSettings {
            analyzer: self.analyzer,
            stem: self.stem,
        }
    }

    /// Checks k1 ≥ 0 and 0 ≤ b ≤ 1 (both finite).
    ///
    /// # Errors
    /// A message naming the setting.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.k1.is_finite() && self.k1 >= 0.0) {
            return Err(format!("bm25 k1 {} must be a number ≥ 0", self.k1));
        }
        if !(0.0..=1.0).contains(&self.b) {
            return Err(format!("bm25 b {} must be between 0 and 1", self.b));
        }
        Ok(())
    }
}

/// What a chunk indexes: its document, its code-point range there, and its prefix text.
#[derive(Debug, Clone, Copy)]
pub struct IndexedChunk<'a> {
    /// Index of the document in the corpus.
    pub doc: usize,
    /// First code point.
    pub start: usize,
    /// One past the last code point.
    pub end: usize,
    /// Prefix put before the text (empty for none); analyzed as part of the chunk.
    pub prefix: &'a str,
}

/// Term frequencies of the postings in one byte each, a tf over 255 in a side list.
#[derive(Debug, Default)]
struct Tfs {
    small: Vec<u8>,
    /// `(posting, tf)` of the postings whose tf is over [`Tfs::MANY`], by posting.
    many: Vec<(u32, u32)>,
}

impl Tfs {
    const MANY: u8 = u8::MAX;

    fn get(&self, p: usize) -> u32 {
        match self.small[p] {
            Self::MANY => self
                .many
                .binary_search_by_key(&(p as u32), |&(q, _)| q)
                .map_or(u32::from(Self::MANY), |at| self.many[at].1),
            n => u32::from(n),
        }
    }
}

/// An in-memory BM25 index over one configuration's chunks; scores come back in chunk order.
#[derive(Debug)]
pub struct Bm25Index {
    corpus: Arc<AnalyzedCorpus>,
    k1: f64,
    /// Terms of prefixes that the corpus does not have, with ids after the corpus vocabulary.
    extra: FxHashMap<String, u32>,
    /// Postings of term `t`: `chunks[offsets[t]..offsets[t + 1]]`, in chunk order, with their
    /// term frequencies in `tfs` (4 + 1 bytes a posting).
    offsets: Vec<u32>,
    chunks: Vec<u32>,
    tfs: Tfs,
    /// Per chunk: `k1 · (1 − b + b · |d| / avgdl)`.
    norms: Vec<f64>,
    lens: Vec<u32>,
}

impl Bm25Index {
    /// Indexes `chunks` (in chunk order) from the analyzed `corpus` with `settings`' k1 and b
    /// (the analyzer is the corpus's).
    ///
    /// # Panics
    /// If there are 2³² chunks or more.
    pub fn build<'a>(
        corpus: &Arc<AnalyzedCorpus>,
        chunks: impl IntoIterator<Item = IndexedChunk<'a>>,
        settings: &Bm25Settings,
    ) -> Self {
        let base = corpus.vocab_len() as u32;
        let mut extra: FxHashMap<String, u32> = FxHashMap::default();
        // each distinct prefix's term ids, once: `prefix_ids[k]`
        let mut prefix_of: FxHashMap<&'a str, u32> = FxHashMap::default();
        let mut prefix_ids: Vec<Vec<u32>> = Vec::new();
        // Each chunk as its document, range and prefix (16 bytes): its terms are read from the
        // analyzed corpus at each pass rather than copied (a copy of every chunk's terms, 4
        // bytes per term and overlap included, was held while the index was built).
        let mut spans: Vec<(u32, u32, u32, u32)> = Vec::new();
        for c in chunks {
            let prefix = if c.prefix.is_empty() {
                u32::MAX
            } else {
                *prefix_of.entry(c.prefix).or_insert_with(|| {
                    let ids = corpus
                        .analyzer()
                        .terms(c.prefix)
                        .into_iter()
                        .map(|t| match corpus.term_id(&t) {
                            Some(id) => id,
                            None => {
                                let next = base + extra.len() as u32;
                                *extra.entry(t).or_insert(next)
                            }
                        })
                        .collect();
                    prefix_ids.push(ids);
                    (prefix_ids.len() - 1) as u32
                })
            };
            let at = |x: usize| u32::try_from(x).expect("documents below 2^32 code points");
            let doc = u32::try_from(c.doc).expect("fewer than 2^32 documents");
            spans.push((doc, at(c.start), at(c.end), prefix));
        }
        let n_terms = base as usize + extra.len();
        let n = u32::try_from(spans.len()).expect("fewer than 2^32 chunks");
        let no_prefix: &[u32] = &[];
        let chunk_terms = |i: usize| {
            let (doc, start, end, prefix) = spans[i];
            let prefix = prefix_ids
                .get(prefix as usize)
                .map_or(no_prefix, Vec::as_slice);
            prefix.iter().copied().chain(
                corpus
                    .doc(doc as usize)
                    .terms_in(start as usize, end as usize),
            )
        };
        // Document frequencies and chunk lengths, then postings in one pass (compressed rows).
        let mut last = vec![u32::MAX; n_terms];
        let mut df = vec![0u32; n_terms];
        let mut lens: Vec<u32> = Vec::with_capacity(n as usize);
        for i in 0..n {
            let mut len = 0u32;
            for t in chunk_terms(i as usize) {
                len += 1;
                if last[t as usize] != i {
                    last[t as usize] = i;
                    df[t as usize] += 1;
                }
            }
            lens.push(len);
        }
        let mut offsets = Vec::with_capacity(n_terms + 1);
        let mut total = 0u32;
        offsets.push(0);
        for &d in &df {
            total += d;
            offsets.push(total);
        }
        let mut chunks = vec![0u32; total as usize];
        let mut small = vec![0u8; total as usize];
        let mut many: FxHashMap<u32, u32> = FxHashMap::default();
        let mut next: Vec<u32> = offsets[..n_terms].to_vec();
        last.fill(u32::MAX);
        for i in 0..n {
            for t in chunk_terms(i as usize) {
                let t = t as usize;
                if last[t] == i {
                    let p = next[t] - 1;
                    match small[p as usize] {
                        Tfs::MANY => *many.entry(p).or_insert(u32::from(Tfs::MANY)) += 1,
                        tf => small[p as usize] = tf + 1,
                    }
                } else {
                    last[t] = i;
                    chunks[next[t] as usize] = i;
                    small[next[t] as usize] = 1;
                    next[t] += 1;
                }
            }
        }
        drop((last, next));
        let mut many: Vec<(u32, u32)> = many.into_iter().collect();
        many.sort_unstable();
        let total_len: u64 = lens.iter().map(|&l| u64::from(l)).sum();
        let avgdl = if n == 0 {
            0.0
        } else {
            total_len as f64 / f64::from(n)
        };
        let (k1, b) = (settings.k1, settings.b);
        let norms = lens
            .iter()
            .map(|&dl| k1 * (1.0 - b + b * f64::from(dl) / avgdl))
            .collect();
        Bm25Index {
            corpus: Arc::clone(corpus),
            k1,
            extra,
            offsets,
            chunks,
            tfs: Tfs { small, many },
            norms,
            lens,
        }
    }

    /// Number of indexed chunks.
    pub fn len(&self) -> usize {
        self.norms.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.norms.is_empty()
    }

    /// Exact length of chunk `i` in terms (prefix included).
    pub fn chunk_len(&self, i: usize) -> usize {
        self.lens[i] as usize
    }

    /// Number of chunks holding the analyzed term `term` (0 for an unknown term).
    pub fn doc_freq(&self, term: &str) -> usize {
        self.term_id(term).map_or(0, |t| self.postings_of(t).len())
    }

    fn term_id(&self, term: &str) -> Option<u32> {
        self.corpus
            .term_id(term)
            .or_else(|| self.extra.get(term).copied())
    }

    /// The postings of term `t`, as a range of `chunks` (and of `tfs`).
    fn postings_of(&self, t: u32) -> std::ops::Range<usize> {
        let t = t as usize;
        self.offsets[t] as usize..self.offsets[t + 1] as usize
    }

    /// BM25 score of every chunk for `query` (0 where no query term occurs), in chunk order.
    /// Each distinct query term is scored once, in the order of its first occurrence.
    pub fn scores(&self, query: &str) -> Vec<f64> {
        let mut scores = vec![0.0f64; self.len()];
        let n = self.len() as f64;
        let mut seen: Vec<u32> = Vec::new();
        for term in self.corpus.analyzer().terms(query) {
            let Some(t) = self.term_id(&term) else {
                continue;
            };
            if seen.contains(&t) {
                continue;
            }
            seen.push(t);
            let postings = self.postings_of(t);
            if postings.is_empty() {
                continue;
            }
            let df = postings.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for p in postings {
                let (chunk, tf) = (self.chunks[p] as usize, f64::from(self.tfs.get(p)));
                scores[chunk] += idf * tf * (self.k1 + 1.0) / (tf + self.norms[chunk]);
            }
        }
        scores
    }
}

#[cfg(test)]
mod tests;
