//! What one question's ranked list sends under an expansion, at one cut.
//!
//! Hits are read in rank order. Each hit's **window** is a run of atoms of its document: for
//! `neighbours:N`, the chunks from N before it to N after it (fewer at the document's edges);
//! for `parent:P`, the parents it overlaps ([`super::parents`]). Windows join the units already
//! sent: for `neighbours`, any unit whose chunks overlap or touch the window's (adjacent
//! ordinals) is merged with it into one unit, its text the document from its first chunk's start
//! to its last chunk's end (text shared by overlapping chunks sent once); for `parent`, a unit
//! that shares a parent with the window takes it in, so a parent is sent once however many of
//! its chunks were hit. A unit ranks by its best (first) hit.
//!
//! The cut: top k takes the first k hits. A context budget applies the budget rule of
//! [`crate::metrics::fit_budget`] to the units: a hit whose window alone is larger than the
//! whole budget is skipped (and counted); otherwise the hit is taken while the tokens of all
//! units sent, with it, stay within the budget (a hit whose window is already sent adds
//! nothing); the first hit that would go over ends the cut. A cut never sends more tokens than
//! its budget.

use std::borrow::Cow;

use rayon::prelude::*;

use super::Expand;
use super::parents::{Parent, doc_parents, parents_of};
use crate::chunking::chunk::{Chunk, with_prefix};
use crate::chunking::structure::CorpusStructure;
use crate::corpus::Corpus;
use crate::metrics::Cut;
use crate::retrieval::rank::TIE_EPSILON;
use crate::retrieval::{Hit, Ranked};
use crate::tokenize::{CorpusTokens, SliceCounter};

/// An expansion ready to cut ranked lists: the value and, for `parent:P`, every document's
/// parents (made once per configuration).
#[derive(Debug, Clone, Default)]
pub struct Expansion {
    /// The expansion.
    pub expand: Expand,
    /// Per document, its parents (empty unless `parent:P`).
    parents: Vec<Vec<Parent>>,
}

impl Expansion {
    /// `expand` over `corpus`: for `parent:P`, the parents of every document (in parallel)
    /// from its structure in `structure` and its token stream in `tokens`.
    pub fn new(
        expand: Expand,
        corpus: &Corpus,
        tokens: &CorpusTokens,
        structure: &CorpusStructure,
    ) -> Self {
        let parents = match expand {
            Expand::Parent(p) => corpus
                .docs
                .par_iter()
                .enumerate()
                .map(|(i, doc)| {
                    doc_parents(doc, structure.doc(i), tokens.doc(i), tokens.counter(), p)
                })
                .collect(),
            Expand::None | Expand::Neighbours(_) => Vec::new(),
        };
        Expansion { expand, parents }
    }

    /// Document `doc`'s parents (empty unless `parent:P`).
    pub fn parents(&self, doc: usize) -> &[Parent] {
        self.parents.get(doc).map_or(&[], Vec::as_slice)
    }
}

/// One unit sent: a range of one document, sent once, with the hits it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct SentUnit {
    /// Index of the document in the corpus.
    pub doc: usize,
    /// First atom of the unit (a chunk index for `neighbours`, a parent of the document for
    /// `parent`).
    pub first: usize,
    /// Last atom, inclusive.
    pub last: usize,
    /// First byte of the text sent.
    pub byte_start: usize,
    /// One past its last byte.
    pub byte_end: usize,
    /// First code point of the text sent.
    pub start: usize,
    /// One past its last code point.
    pub end: usize,
    /// The chunk whose prefix is sent before the text (`neighbours`: the unit's first chunk;
    /// `None` for a parent).
    pub prefix_of: Option<usize>,
    /// Tokens sent: the text encoded alone, plus the prefix's tokens.
    pub tokens: usize,
    /// The hits it holds (chunk indices); the first is its best, which ranks the unit.
    pub hits: Vec<usize>,
    /// The score of its best hit.
    pub score: f64,
}

impl SentUnit {
    /// What the generator reads: the prefix, then the text.
    pub fn text<'a>(&self, corpus: &'a Corpus, chunks: &[Chunk]) -> Cow<'a, str> {
        let text = &corpus.docs[self.doc].text[self.byte_start..self.byte_end];
        match self.prefix_of {
            Some(c) => with_prefix(&chunks[c].prefix, text),
            None => Cow::Borrowed(text),
        }
    }

    /// `<document id>#<first ordinal>` or `#<first>-<last>` for a `neighbours` unit,
    /// `#parent<i>` or `#parent<i>-<j>` for parents (0-based within the document).
    pub fn id(&self, corpus: &Corpus, chunks: &[Chunk], expand: Expand) -> String {
        let doc = &corpus.docs[self.doc].id;
        let (a, b, tag) = match expand {
            Expand::Parent(_) => (self.first, self.last, "parent"),
            Expand::None | Expand::Neighbours(_) => {
                (chunks[self.first].ordinal, chunks[self.last].ordinal, "")
            }
        };
        match a == b {
            true => format!("{doc}#{tag}{a}"),
            false => format!("{doc}#{tag}{a}-{b}"),
        }
    }
}

/// What one cut of one ranked list sends.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sent {
    /// The units, best first (by their best hit).
    pub units: Vec<SentUnit>,
    /// The hits taken, in rank order (what MRR reads: the ranking cut where the units stop,
    /// less any hit skipped for size).
    pub hits: Vec<Hit>,
    /// The 1-based rank in the ranked list of each hit in `hits`.
    pub ranks: Vec<usize>,
    /// Budget cuts: hits passed over because each one's window alone is larger than the budget.
    pub skipped_for_size: usize,
    /// The cut fell inside tied scores: top k as [`crate::retrieval::retriever::cut_head`]; a
    /// budget between the last hit taken and the hit that stopped it.
    pub tie_at_cut: bool,
    /// The position in the list of the hit that ended a budget cut (`None`: the list ran out).
    stop: Option<usize>,
}

impl Sent {
    /// Tokens sent in all.
    pub fn tokens(&self) -> usize {
        self.units.iter().map(|u| u.tokens).sum()
    }

    /// `(1-based rank, chunk index)` of each hit taken, in rank order: what MRR reads.
    pub fn taken(&self) -> Vec<(usize, usize)> {
        self.ranks
            .iter()
            .zip(&self.hits)
            .map(|(&r, h)| (r, h.chunk))
            .collect()
    }

    /// `(document, first code point, end)` of each unit, best first: what the metrics read.
    pub fn ranges(&self) -> Vec<(usize, usize, usize)> {
        self.units.iter().map(|u| (u.doc, u.start, u.end)).collect()
    }
}

/// A configuration's chunks, corpus and tokens with its expansion: cuts ranked lists into the
/// units they send.
#[derive(Clone, Copy)]
pub struct Sender<'a> {
    /// The expansion.
    pub expansion: &'a Expansion,
    /// The configuration's chunks, in corpus order (hits index them).
    pub chunks: &'a [Chunk],
    /// The corpus.
    pub corpus: &'a Corpus,
    /// Its token streams, in the sweep's unit.
    pub tokens: &'a CorpusTokens,
}

/// A window: atoms `first..=last` of document `doc`.
#[derive(Debug, Clone, Copy)]
struct Window {
    doc: usize,
    first: usize,
    last: usize,
}

impl Sender<'_> {
    /// What `ranked` sends at `cut`, starting from `head` (its leading hits, from
    /// [`crate::metrics::Depth::head`]): for a budget that the head does not fill (windows
    /// already sent add nothing), the list is read twice as deep until the budget is cut inside
    /// it or the list ends.
    pub fn cut(&self, ranked: &Ranked, head: &[Hit], cut: Cut) -> Sent {
        let mut sent = self.fit(head, cut);
        let mut depth = head.len();
        while cut.budget_tokens().is_some() && sent.stop.is_none() && depth < ranked.len() {
            depth = (depth * 2).max(1).min(ranked.len());
            sent = self.fit(&ranked.head(depth), cut);
        }
        sent
    }

    /// Tokens of each distinct unit a single hit can send alone (a chunk's window: the chunk
    /// with its neighbours, or the parent(s) it lies in; chunks with the same window give it
    /// once), in corpus order: what a budget is compared with before a hit is taken.
    pub fn unit_tokens(&self) -> Vec<usize> {
        let mut windows: Vec<(usize, usize, usize)> = (0..self.chunks.len())
            .map(|c| self.window(c))
            .map(|w| (w.doc, w.first, w.last))
            .collect();
        windows.sort_unstable();
        windows.dedup();
        windows
            .into_iter()
            .map(|(doc, first, last)| self.tokens_of(Window { doc, first, last }))
            .collect()
    }

    /// The units `head` sends at `cut` (see the module documentation).
    pub fn fit(&self, head: &[Hit], cut: Cut) -> Sent {
        let mut sent = Sent::default();
        let mut total = 0usize;
        let taken_at_most = match cut {
            Cut::K(k) => k.min(head.len()),
            Cut::Budget(_) => head.len(),
        };
        for (i, hit) in head.iter().enumerate().take(taken_at_most) {
            let w = self.window(hit.chunk);
            if let Some(b) = cut.budget_tokens()
                && self.tokens_of(w) > b
            {
                sent.skipped_for_size += 1;
                continue;
            }
            let (joined, merged) = self.join(&sent.units, w, hit);
            let after =
                total - joined.iter().map(|&j| sent.units[j].tokens).sum::<usize>() + merged.tokens;
            if let Some(b) = cut.budget_tokens()
                && after > b
            {
                sent.stop = Some(i);
                break;
            }
            total = after;
            // the merged unit takes the place of the best unit it joined (units stay in rank order)
            match joined.first() {
                Some(&at) => {
                    sent.units[at] = merged;
                    for &j in joined[1..].iter().rev() {
                        sent.units.remove(j);
                    }
                }
                None => sent.units.push(merged),
            }
            sent.hits.push(*hit);
            sent.ranks.push(i + 1);
        }
        sent.tie_at_cut = match cut {
            Cut::K(k) => {
                k > 0 && k < head.len() && (head[k - 1].score - head[k].score).abs() <= TIE_EPSILON
            }
            Cut::Budget(_) => match (sent.hits.last(), sent.stop) {
                (Some(last), Some(stop)) => (last.score - head[stop].score).abs() <= TIE_EPSILON,
                _ => false,
            },
        };
        sent
    }

    /// The units of `units` that window `w` joins (indices, ascending), and the unit they make
    /// with it, holding `hit`.
    fn join(&self, units: &[SentUnit], w: Window, hit: &Hit) -> (Vec<usize>, SentUnit) {
        // neighbours merge windows that touch; parents only share
        let reach = usize::from(matches!(self.expansion.expand, Expand::Neighbours(_)));
        let joined: Vec<usize> = units
            .iter()
            .enumerate()
            .filter(|(_, u)| {
                u.doc == w.doc && u.first <= w.last + reach && w.first <= u.last + reach
            })
            .map(|(j, _)| j)
            .collect();
        let mut merged = w;
        let mut hits = Vec::new();
        let mut score = hit.score;
        for &j in &joined {
            merged.first = merged.first.min(units[j].first);
            merged.last = merged.last.max(units[j].last);
            hits.extend_from_slice(&units[j].hits);
            score = score.max(units[j].score);
        }
        hits.push(hit.chunk);
        (joined, self.unit(merged, hits, score))
    }

    /// The window of a hit on chunk `c`.
    fn window(&self, c: usize) -> Window {
        let chunks = self.chunks;
        let doc = chunks[c].doc;
        match self.expansion.expand {
            Expand::None => Window {
                doc,
                first: c,
                last: c,
            },
            Expand::Neighbours(n) => {
                let doc_first = chunks[..c].partition_point(|x| x.doc < doc);
                let doc_end = c + chunks[c..].partition_point(|x| x.doc == doc);
                Window {
                    doc,
                    first: c.saturating_sub(n).max(doc_first),
                    last: (c + n).min(doc_end - 1),
                }
            }
            Expand::Parent(_) => {
                let r = parents_of(
                    self.expansion.parents(doc),
                    chunks[c].byte_start,
                    chunks[c].byte_end,
                );
                Window {
                    doc,
                    first: r.start,
                    last: r.end.saturating_sub(1).max(r.start),
                }
            }
        }
    }

    /// The unit of window `w`: its byte and code-point range, prefix and tokens.
    fn unit(&self, w: Window, hits: Vec<usize>, score: f64) -> SentUnit {
        let doc = &self.corpus.docs[w.doc];
        let (byte_start, byte_end, prefix_of) = self.bytes(w);
        let exact = SliceCounter::new(&doc.text, self.tokens.doc(w.doc), self.tokens.counter());
        let prefix_tokens = prefix_of.map_or(0, |c| self.chunks[c].prefix_tokens);
        SentUnit {
            doc: w.doc,
            first: w.first,
            last: w.last,
            byte_start,
            byte_end,
            start: doc.byte_to_char(byte_start),
            end: doc.byte_to_char(byte_end),
            prefix_of,
            tokens: exact.count(byte_start, byte_end) + prefix_tokens,
            hits,
            score,
        }
    }

    /// Tokens window `w` sends alone.
    fn tokens_of(&self, w: Window) -> usize {
        self.unit(w, Vec::new(), 0.0).tokens
    }

    /// The byte range of window `w` and the chunk whose prefix it is sent with.
    fn bytes(&self, w: Window) -> (usize, usize, Option<usize>) {
        match self.expansion.expand {
            Expand::Parent(_) => match self.expansion.parents(w.doc) {
                [] => (0, 0, None),
                p => (p[w.first].byte_start, p[w.last].byte_end, None),
            },
            Expand::None | Expand::Neighbours(_) => {
                let c = &self.chunks[w.first..=w.last];
                let end = c.iter().map(|c| c.byte_end).max().unwrap_or(0);
                (c[0].byte_start, end, Some(w.first))
            }
        }
    }
}
