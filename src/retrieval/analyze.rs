//! Text analysis for BM25: text → terms, each with its code-point range in the text.
//!
//! Two analyzers ([`AnalyzerKind`]):
//! - `standard` (the default): Unicode word segmentation (UAX #29, unicode-segmentation),
//!   lower-cased. Words joined by `.` `/` `-` `_` with no space between (identifiers, paths,
//!   flags: `functools.lru_cache`, `~/.config/tool`, `--profile`, `HTTP_PROXY`) give each part as
//!   a term and the whole identifier as one extra term, so `lru_cache` matches
//!   `functools.lru_cache` and the exact identifier still scores higher. A `.` or `,` between two
//!   digits does not split, so version numbers (`2.31`) and `10,000` stay whole. Text in scripts
//!   written without spaces (Chinese Han, Japanese Hiragana and Katakana) is segmented into
//!   overlapping character bigrams (as Lucene's CJK analyzer does; a lone character is a
//!   unigram) instead of being dropped. A sentence's final `.` never sticks to a word
//!   (`days.` is `days`).
//! - `seed`: seed 000's `re.findall(r"[a-z0-9_.~/-]+", text.lower())`, exactly (Unicode
//!   lower-casing first, so the Kelvin sign is `k`), for reproducing its tables.
//!
//! Optional English stemming (Snowball, rust-stemmers) applies to terms made only of letters;
//! whole identifiers and numbers are never stemmed.
//!
//! A corpus is analyzed once ([`AnalyzedCorpus::new`], documents in parallel) into term ids with
//! code-point ranges; a chunk's terms are then the slice of its document's stream inside the
//! chunk's range ([`DocTerms::terms_in`]), whatever the configuration. The queries that will be
//! asked (the golden set's questions) are analyzed first: their terms get ids and every other
//! term is [`AnalyzedCorpus::OTHER`], so a BM25 index keeps posting lists for those terms only
//! and no vocabulary of the corpus is held.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use rayon::prelude::*;
use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

use crate::corpus::Corpus;
use crate::tokenize::offsets::{Offsets, OffsetsBuilder};

/// Which analyzer turns text into terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnalyzerKind {
    /// Unicode words, identifiers split and kept whole, CJK bigrams.
    #[default]
    Standard,
    /// Seed 000's regex `[a-z0-9_.~/-]+` after lower-casing.
    Seed,
}

impl AnalyzerKind {
    /// The name used in configs, manifests and configuration ids.
    pub fn name(self) -> &'static str {
        match self {
            AnalyzerKind::Standard => "standard",
            AnalyzerKind::Seed => "seed",
        }
    }
}

impl fmt::Display for AnalyzerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AnalyzerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "standard" => Ok(AnalyzerKind::Standard),
            "seed" => Ok(AnalyzerKind::Seed),
            other => Err(format!("unknown analyzer {other:?}: use standard or seed")),
        }
    }
}

/// The analyzer and its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct AnalyzerSettings {
    /// The analyzer (default `standard`).
    #[serde(default)]
    pub analyzer: AnalyzerKind,
    /// English stemming (Snowball) of terms made only of letters (default off).
    #[serde(default)]
    pub stem: bool,
}

/// Characters that join words into one identifier (`standard`).
const CONNECTORS: [char; 4] = ['.', '/', '-', '_'];

/// Whether `c` belongs to a script written without spaces that `standard` segments into
/// bigrams: Han (CJK unified ideographs and their extensions, compatibility ideographs),
/// Hiragana, Katakana (with the prolonged sound mark) and half-width Katakana.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF        // Hiragana, Katakana
        | 0x31F0..=0x31FF      // Katakana phonetic extensions
        | 0x3400..=0x4DBF      // Han extension A
        | 0x4E00..=0x9FFF      // Han
        | 0xF900..=0xFAFF      // Han compatibility
        | 0xFF66..=0xFF9F      // half-width Katakana
        | 0x20000..=0x2FA1F) // Han extensions B–F, compatibility supplement
}

/// Whether `c` is in seed 000's term class `[a-z0-9_.~/-]` (after lower-casing).
fn is_seed_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '.' | '~' | '/' | '-')
}

/// An analyzer: turns text into terms. Cheap to share between threads.
pub struct Analyzer {
    settings: AnalyzerSettings,
    stemmer: Option<Stemmer>,
}

impl fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Analyzer")
            .field("settings", &self.settings)
            .finish()
    }
}

/// One word of an identifier group being collected: byte and code-point ranges.
#[derive(Clone, Copy)]
struct Word {
    byte: (usize, usize),
    cp: (u32, u32),
}

impl Analyzer {
    /// An analyzer with `settings`.
    pub fn new(settings: AnalyzerSettings) -> Self {
        Analyzer {
            settings,
            stemmer: settings.stem.then(|| Stemmer::create(Algorithm::English)),
        }
    }

    /// Its settings.
    pub fn settings(&self) -> AnalyzerSettings {
        self.settings
    }

    /// The terms of `text`, in order, repeats kept (what a query or a prefix is analyzed into).
    pub fn terms(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.analyze(text, &mut |t, _, _| out.push(t.to_string()));
        out
    }

    /// Calls `emit(term, start, end)` for each term of `text` in order of `start`, where
    /// `[start, end)` is the term's range in code points of `text`.
    pub fn analyze(&self, text: &str, emit: &mut dyn FnMut(&str, u32, u32)) {
        let mut surface = |s: &str, start: u32, end: u32| emit(&self.normalize(s), start, end);
        match self.settings.analyzer {
            AnalyzerKind::Standard => standard(text, &mut surface),
            AnalyzerKind::Seed => seed(text, &mut surface),
        }
    }

    /// Stems a lower-cased term made only of letters (when stemming is on).
    fn normalize<'a>(&self, term: &'a str) -> Cow<'a, str> {
        match &self.stemmer {
            Some(s) if term.chars().all(char::is_alphabetic) => s.stem(term),
            _ => Cow::Borrowed(term),
        }
    }
}

/// Seed 000's analyzer: maximal runs of `[a-z0-9_.~/-]` in the lower-cased text. A character
/// whose lower case is several characters (`İ` → `i̇`) gives each to the scan, and a term's range
/// covers the original characters it came from.
fn seed(text: &str, emit: &mut dyn FnMut(&str, u32, u32)) {
    let mut term = String::new();
    let mut start = 0u32;
    let mut last = 0u32;
    let mut push = |c: char, cp: u32, term: &mut String, start: &mut u32, last: &mut u32| {
        if is_seed_char(c) {
            if term.is_empty() {
                *start = cp;
            }
            term.push(c);
            *last = cp;
        } else if !term.is_empty() {
            emit(term, *start, *last + 1);
            term.clear();
        }
    };
    for (cp, c) in text.chars().enumerate() {
        let cp = cp as u32;
        if c.is_ascii() {
            push(c.to_ascii_lowercase(), cp, &mut term, &mut start, &mut last);
        } else {
            for l in c.to_lowercase() {
                push(l, cp, &mut term, &mut start, &mut last);
            }
        }
    }
    if !term.is_empty() {
        emit(&term, start, last + 1);
    }
}

/// The `standard` analyzer (see the module documentation).
fn standard(text: &str, emit: &mut dyn FnMut(&str, u32, u32)) {
    let mut group: Vec<Word> = Vec::new();
    let mut connector = false;
    let mut cjk: Vec<(char, u32)> = Vec::new();
    let mut lower = String::new();
    let mut cp = 0u32;
    for (b, seg) in text.split_word_bound_indices() {
        let n = if seg.is_ascii() {
            seg.len() as u32
        } else {
            seg.chars().count() as u32
        };
        let first = seg.chars().next().unwrap_or(' ');
        if is_cjk(first) {
            flush_group(text, &mut group, &mut lower, emit);
            connector = false;
            cjk.extend(seg.chars().zip(cp..).filter(|(c, _)| is_cjk(*c)));
        } else if seg.chars().any(char::is_alphanumeric) {
            flush_cjk(&mut cjk, &mut lower, emit);
            if !group.is_empty() && !connector {
                flush_group(text, &mut group, &mut lower, emit);
            }
            group.push(Word {
                byte: (b, b + seg.len()),
                cp: (cp, cp + n),
            });
            connector = false;
        } else if seg.len() == 1 && CONNECTORS.contains(&first) && !group.is_empty() && !connector {
            connector = true;
        } else {
            flush_group(text, &mut group, &mut lower, emit);
            flush_cjk(&mut cjk, &mut lower, emit);
            connector = false;
        }
        cp += n;
    }
    flush_group(text, &mut group, &mut lower, emit);
    flush_cjk(&mut cjk, &mut lower, emit);
}

/// Emits a run of CJK characters as overlapping bigrams (a lone character as itself).
fn flush_cjk(run: &mut Vec<(char, u32)>, buf: &mut String, emit: &mut dyn FnMut(&str, u32, u32)) {
    match run.len() {
        0 => {}
        1 => {
            buf.clear();
            buf.push(run[0].0);
            emit(buf, run[0].1, run[0].1 + 1);
        }
        _ => {
            for w in run.windows(2) {
                buf.clear();
                buf.push(w[0].0);
                buf.push(w[1].0);
                emit(buf, w[0].1, w[1].1 + 1);
            }
        }
    }
    run.clear();
}

/// Emits an identifier group: the whole group (when it has more than one part), then each part.
/// Parts are the words split at `_`, and at `.` unless between two digits.
fn flush_group(
    text: &str,
    group: &mut Vec<Word>,
    buf: &mut String,
    emit: &mut dyn FnMut(&str, u32, u32),
) {
    let (Some(first), Some(last)) = (group.first().copied(), group.last().copied()) else {
        return;
    };
    if let [word] = group.as_slice() {
        let s = &text[word.byte.0..word.byte.1];
        if !s.contains(['_', '.']) {
            // one word with nothing to split at (most words): the word itself
            emit(lowercase(s, buf), word.cp.0, word.cp.1);
            group.clear();
            return;
        }
    }
    let mut parts: Vec<Word> = Vec::new();
    for w in group.iter() {
        split_word(text, *w, &mut parts);
    }
    if parts.len() > 1 {
        emit(
            lowercase(&text[first.byte.0..last.byte.1], buf),
            first.cp.0,
            last.cp.1,
        );
    }
    for p in &parts {
        emit(lowercase(&text[p.byte.0..p.byte.1], buf), p.cp.0, p.cp.1);
    }
    group.clear();
}

/// Splits one UAX #29 word at `_`, and at `.` not between two digits, into `out` (empty pieces
/// and pieces without a letter or digit dropped).
fn split_word(text: &str, w: Word, out: &mut Vec<Word>) {
    let s = &text[w.byte.0..w.byte.1];
    let mut piece_start = (0usize, w.cp.0);
    let mut prev: Option<char> = None;
    let mut chars = s.char_indices().zip(w.cp.0..).peekable();
    let push = |from: (usize, u32), to: (usize, u32), out: &mut Vec<Word>| {
        let piece = &s[from.0..to.0];
        if piece.chars().any(char::is_alphanumeric) {
            out.push(Word {
                byte: (w.byte.0 + from.0, w.byte.0 + to.0),
                cp: (from.1, to.1),
            });
        }
    };
    while let Some(((i, c), cp)) = chars.next() {
        let next = chars.peek().map(|((_, n), _)| *n);
        let splits = c == '_'
            || (c == '.'
                && !(prev.is_some_and(|p| p.is_ascii_digit())
                    && next.is_some_and(|n| n.is_ascii_digit())));
        if splits {
            push(piece_start, (i, cp), out);
            piece_start = (i + c.len_utf8(), cp + 1);
        }
        prev = Some(c);
    }
    push(piece_start, (s.len(), w.cp.1), out);
}

/// `s` lower-cased, borrowed when it has no upper-case letter.
fn lowercase<'a>(s: &'a str, buf: &'a mut String) -> &'a str {
    if s.is_ascii() && !s.bytes().any(|b| b.is_ascii_uppercase()) {
        return s;
    }
    buf.clear();
    if s.is_ascii() {
        buf.extend(s.chars().map(|c| c.to_ascii_lowercase()));
    } else {
        buf.push_str(&s.to_lowercase());
    }
    buf
}

/// A document's terms as query-term ids ([`AnalyzedCorpus::OTHER`] for a term of no query), in
/// order of their start, with their code-point ranges in the document: the starts as
/// [`Offsets`] (about a byte each) and the lengths as one byte each, longer ones (255 code
/// points or more, rare) in a side list.
#[derive(Debug, Clone, Default)]
pub struct DocTerms {
    ids: Vec<u32>,
    starts: Offsets,
    /// Each term's length in code points, or [`DocTerms::LONG`] for one found in `long`.
    lens: Vec<u8>,
    /// `(term, length)` of the terms of [`DocTerms::LONG`] code points or more, by term.
    long: Vec<(u32, u32)>,
    /// The longest term's length in code points (0 for none).
    max_len: u32,
}

impl DocTerms {
    /// A length stored in the side list.
    const LONG: u8 = u8::MAX;

    /// Number of terms.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the document has no term.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Length of term `i` in code points.
    fn term_len(&self, i: usize) -> usize {
        match self.lens[i] {
            Self::LONG => {
                let at = self.long.partition_point(|&(t, _)| (t as usize) < i);
                self.long[at].1 as usize
            }
            n => n as usize,
        }
    }

    /// Ids of the terms lying wholly inside the code-point range `[start, end)`, in order (a
    /// term cut by either end belongs to neither side). Three searches of the starts; the ids
    /// of the terms starting at least the longest term's length before `end` are read as they
    /// are (they cannot cross it), and only the terms after them are checked against `end`.
    pub fn terms_in(&self, start: usize, end: usize) -> impl Iterator<Item = u32> + '_ {
        let lo = self.starts.below(start);
        let hi = self.starts.below(end).max(lo);
        let inside = end
            .checked_sub(self.max_len as usize)
            .map_or(lo, |x| self.starts.below(x + 1))
            .clamp(lo, hi);
        self.ids[lo..inside].iter().copied().chain(
            self.starts
                .iter_from(inside)
                .take(hi - inside)
                .zip(inside..)
                .filter(move |&(s, i)| s + self.term_len(i) <= end)
                .map(move |(_, i)| self.ids[i]),
        )
    }
}

/// A document's terms as they are analyzed, before [`DocTermsBuilder::finish`].
struct DocTermsBuilder {
    ids: Vec<u32>,
    starts: OffsetsBuilder,
    lens: Vec<u8>,
    long: Vec<(u32, u32)>,
    max_len: u32,
}

impl DocTermsBuilder {
    fn new() -> Self {
        DocTermsBuilder {
            ids: Vec::new(),
            starts: OffsetsBuilder::with_capacity(0),
            lens: Vec::new(),
            long: Vec::new(),
            max_len: 0,
        }
    }

    fn push(&mut self, id: u32, start: u32, end: u32) {
        let len = end - start;
        self.max_len = self.max_len.max(len);
        if len >= u32::from(DocTerms::LONG) {
            self.long.push((self.ids.len() as u32, len));
            self.lens.push(DocTerms::LONG);
        } else {
            self.lens.push(len as u8);
        }
        self.ids.push(id);
        self.starts.push(start);
    }

    /// The terms of a document of `char_len` code points (kept for the whole sweep: no spare
    /// capacity).
    fn finish(mut self, char_len: usize) -> DocTerms {
        self.ids.shrink_to_fit();
        self.lens.shrink_to_fit();
        self.long.shrink_to_fit();
        DocTerms {
            ids: self.ids,
            starts: self.starts.finish(char_len),
            lens: self.lens,
            long: self.long,
            max_len: self.max_len,
        }
    }
}

/// A corpus analyzed once for a set of queries: the queries' terms (term → id) and every
/// document's term stream, in which a term of no query has the id [`AnalyzedCorpus::OTHER`].
/// No other vocabulary is kept: a BM25 index needs the posting lists of the queries' terms only,
/// and every other term counts in a chunk's length and nowhere else.
#[derive(Debug)]
pub struct AnalyzedCorpus {
    analyzer: Analyzer,
    /// The queries' terms, ids `0..n` in order of first appearance.
    query_terms: FxHashMap<Box<str>, u32>,
    docs: Vec<DocTerms>,
    elapsed_ms: f64,
}

/// A document's terms, with the id of each query term and [`AnalyzedCorpus::OTHER`] for every
/// other term.
fn analyze_document(
    analyzer: &Analyzer,
    query_terms: &FxHashMap<Box<str>, u32>,
    d: &crate::corpus::Document,
) -> DocTerms {
    let mut terms = DocTermsBuilder::new();
    analyzer.analyze(&d.text, &mut |t, s, e| {
        let id = query_terms.get(t).copied().unwrap_or(AnalyzedCorpus::OTHER);
        terms.push(id, s, e);
    });
    terms.finish(d.char_len())
}

impl AnalyzedCorpus {
    /// The id of every term that no query has.
    pub const OTHER: u32 = u32::MAX;

    /// Analyzes `queries` (the questions that indexes built on this corpus will be asked: their
    /// terms take ids `0..n`, in order of first appearance, whether or not a document holds
    /// them), then every document of `corpus` with `settings`, documents in parallel (rayon).
    ///
    /// # Panics
    /// If a document has 2³² code points or more, or the queries 2³² − 1 distinct terms.
    pub fn new<'q>(
        corpus: &Corpus,
        settings: AnalyzerSettings,
        queries: impl IntoIterator<Item = &'q str>,
    ) -> Self {
        let started = Instant::now();
        let analyzer = Analyzer::new(settings);
        let mut query_terms: FxHashMap<Box<str>, u32> = FxHashMap::default();
        for query in queries {
            for term in analyzer.terms(query) {
                let next = u32::try_from(query_terms.len())
                    .ok()
                    .filter(|&id| id != Self::OTHER)
                    .expect("fewer than 2^32 - 1 query terms");
                query_terms.entry(term.into_boxed_str()).or_insert(next);
            }
        }
        let docs = corpus
            .docs
            .par_iter()
            .map(|d| analyze_document(&analyzer, &query_terms, d))
            .collect();
        AnalyzedCorpus {
            analyzer,
            query_terms,
            docs,
            elapsed_ms: started.elapsed().as_secs_f64() * 1e3,
        }
    }

    /// Wall time the analysis took, in milliseconds (for the manifest's phase times).
    pub fn elapsed_ms(&self) -> f64 {
        self.elapsed_ms
    }

    /// The analyzer (for queries and prefixes).
    pub fn analyzer(&self) -> &Analyzer {
        &self.analyzer
    }

    /// The id of the analyzed term `term` if a query has it (a term of no query has none).
    pub fn query_term_id(&self, term: &str) -> Option<u32> {
        self.query_terms.get(term).copied()
    }

    /// Number of distinct terms of the queries: ids `0..n` are theirs.
    pub fn n_query_terms(&self) -> usize {
        self.query_terms.len()
    }

    /// Number of documents analyzed.
    pub fn n_docs(&self) -> usize {
        self.docs.len()
    }

    /// The term stream of document `i` (corpus order).
    pub fn doc(&self, i: usize) -> &DocTerms {
        &self.docs[i]
    }
}

#[cfg(test)]
mod tests;
