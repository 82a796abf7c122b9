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
//! the terms of its prefix. The index is a posting list per query term (chunk, tf;
//! [`super::postings`]): the corpus is analyzed knowing the questions that will be asked, and
//! only their terms get lists; a query is scored by walking the postings of its terms only.

use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::analyze::{AnalyzedCorpus, AnalyzerKind, AnalyzerSettings};
use super::postings::{Postings, PostingsBuilder, PostingsPart};

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

/// A query that a [`Bm25Index`] cannot score exactly.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum Bm25Error {
    /// The query has a term that none of the queries the corpus was analyzed for has, so the
    /// index holds no posting list for it ([`AnalyzedCorpus::new`]).
    #[error(
        "BM25 was indexed for the golden set's questions, and the query term `{term}` is in none of them (query: {query:?})"
    )]
    NotAQueryTerm {
        /// The analyzed term.
        term: String,
        /// The query's first 80 characters (`…` after them when it is longer).
        query: String,
    },
}

/// An in-memory BM25 index over one configuration's chunks; scores come back in chunk order.
/// It keeps the posting lists of the corpus's query terms only
/// ([`AnalyzedCorpus::query_term_id`]): every other term counts in the chunks' lengths and
/// nowhere else, which leaves the scores of those queries exact.
#[derive(Debug)]
pub struct Bm25Index {
    corpus: Arc<AnalyzedCorpus>,
    k1: f64,
    /// Each query term's (chunk, tf) postings, in chunk order.
    postings: Postings,
    /// Per chunk: `k1 · (1 − b + b · |d| / avgdl)`.
    norms: Vec<f64>,
    lens: Vec<u32>,
}

/// A distinct prefix once analyzed: its query terms' ids and its number of terms.
struct PrefixTerms {
    query_terms: Vec<u32>,
    len: u32,
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
        // each distinct prefix analyzed once: `prefixes[k]`
        let mut prefix_of: FxHashMap<&'a str, u32> = FxHashMap::default();
        let mut prefixes: Vec<PrefixTerms> = Vec::new();
        // Each chunk as its document, range and prefix (16 bytes): its terms are read from the
        // analyzed corpus at each pass rather than copied (a copy of every chunk's terms, 4
        // bytes per term and overlap included, was held while the index was built).
        let mut spans: Vec<(u32, u32, u32, u32)> = Vec::new();
        for c in chunks {
            let prefix = if c.prefix.is_empty() {
                u32::MAX
            } else {
                *prefix_of.entry(c.prefix).or_insert_with(|| {
                    let terms = corpus.analyzer().terms(c.prefix);
                    prefixes.push(PrefixTerms {
                        query_terms: terms
                            .iter()
                            .filter_map(|t| corpus.query_term_id(t))
                            .collect(),
                        len: u32::try_from(terms.len()).expect("a prefix below 2^32 terms"),
                    });
                    (prefixes.len() - 1) as u32
                })
            };
            let at = |x: usize| u32::try_from(x).expect("documents below 2^32 code points");
            let doc = u32::try_from(c.doc).expect("fewer than 2^32 documents");
            spans.push((doc, at(c.start), at(c.end), prefix));
        }
        let n = u32::try_from(spans.len()).expect("fewer than 2^32 chunks");
        // Chunk `i`'s query terms, each given to `f`, prefix first; its number of terms.
        let walk = |i: u32, f: &mut dyn FnMut(u32)| -> u32 {
            let (doc, start, end, prefix) = spans[i as usize];
            let mut len = 0;
            if let Some(p) = prefixes.get(prefix as usize) {
                p.query_terms.iter().for_each(|&t| f(t));
                len = p.len;
            }
            for t in corpus
                .doc(doc as usize)
                .terms_in(start as usize, end as usize)
            {
                len += 1;
                if t != AnalyzedCorpus::OTHER {
                    f(t);
                }
            }
            len
        };
        // The chunks in one consecutive range per thread, each range's lengths and lists built
        // on its own (the lists' sizes, then the lists), then the lists joined term by term.
        let parts = rayon::current_num_threads().clamp(1, n.max(1) as usize) as u32;
        let built: Vec<(Vec<u32>, PostingsPart)> = (0..parts)
            .into_par_iter()
            .map(|p| {
                // in 64 bits: chunks × threads can pass 2³²
                let at = |p: u32| (u64::from(n) * u64::from(p) / u64::from(parts)) as u32;
                let range = at(p)..at(p + 1);
                let mut postings = PostingsBuilder::new(corpus.n_query_terms());
                let lens: Vec<u32> = range
                    .clone()
                    .map(|i| walk(i, &mut |t| postings.count(i, t)))
                    .collect();
                postings.start_filling();
                for i in range {
                    walk(i, &mut |t| postings.fill(i, t));
                }
                (lens, postings.finish())
            })
            .collect();
        let (lens, parts): (Vec<Vec<u32>>, Vec<PostingsPart>) = built.into_iter().unzip();
        let lens: Vec<u32> = lens.concat();
        let postings = Postings::join(parts);
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
            postings,
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

    /// Number of chunks holding the analyzed query term `term`; `None` for a term of none of
    /// the corpus's queries (not indexed).
    pub fn doc_freq(&self, term: &str) -> Option<usize> {
        let t = self.corpus.query_term_id(term)?;
        Some(self.postings.doc_freq(t) as usize)
    }

    /// BM25 score of every chunk for `query` (0 where no query term occurs), in chunk order.
    /// Each distinct query term is scored once, in the order of its first occurrence.
    ///
    /// # Errors
    /// [`Bm25Error::NotAQueryTerm`] when a term of `query` is in none of the queries the corpus
    /// was analyzed for.
    pub fn scores(&self, query: &str) -> Result<Vec<f64>, Bm25Error> {
        let mut scores = vec![0.0f64; self.len()];
        let n = self.len() as f64;
        let mut seen: Vec<u32> = Vec::new();
        for term in self.corpus.analyzer().terms(query) {
            let Some(t) = self.corpus.query_term_id(&term) else {
                let mut shown: String = query.chars().take(80).collect();
                if shown.len() < query.len() {
                    shown.push('…');
                }
                return Err(Bm25Error::NotAQueryTerm { term, query: shown });
            };
            if seen.contains(&t) {
                continue;
            }
            seen.push(t);
            let df = self.postings.doc_freq(t);
            if df == 0 {
                continue;
            }
            let df = f64::from(df);
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for (chunk, tf) in self.postings.of(t) {
                let (chunk, tf) = (chunk as usize, f64::from(tf));
                scores[chunk] += idf * tf * (self.k1 + 1.0) / (tf + self.norms[chunk]);
            }
        }
        Ok(scores)
    }
}

#[cfg(test)]
mod tests;
