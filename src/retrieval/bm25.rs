//! BM25 over one configuration's chunks, on tantivy.
//!
//! Analyzer ([`TermTokenizer`], a tantivy tokenizer): runs of `[A-Za-z0-9_.~/-]`, lower-cased, so
//! versions ("2.31"), paths and flags stay one term; this is seed 000's
//! `re.findall(r"[a-z0-9_.~/-]+", text.lower())` up to the two non-ASCII letters that lower-case to
//! ASCII (the Kelvin sign and the dotted capital I). It scans bytes, which is several times faster
//! than tantivy's `RegexTokenizer` plus `LowerCaser`. The query's distinct terms are OR-ed, each
//! scored once, as in seed 000.
//!
//! Scoring is tantivy's BM25: `idf = ln(1 + (N - n + 0.5) / (n + 0.5))` and
//! `idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))` with k1 = 1.2 and b = 0.75, which
//! tantivy fixes ([`K1`], [`B`]). One difference from textbook BM25 (Robertson & Zaragoza 2009):
//! tantivy stores each chunk's length `dl` in one byte, as Lucene does. Lengths up to 40 terms are
//! exact; longer ones are rounded to one of 256 buckets (about 1 part in 8), while `avgdl` is
//! exact. Two chunks whose lengths fall in one bucket then score alike, which can reorder chunks
//! whose textbook scores differ by less than that rounding; the test
//! `tantivy_matches_textbook_bm25_up_to_length_rounding` measures it.

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{TextAnalyzer, Token, TokenStream, Tokenizer};
use tantivy::{
    DocId, Index, IndexReader, Score, SegmentOrdinal, SegmentReader, TantivyDocument, Term,
};

use super::RetrievalError;

/// BM25 term-saturation parameter (fixed by tantivy).
pub const K1: f32 = 1.2;
/// BM25 length-normalisation parameter (fixed by tantivy).
pub const B: f32 = 0.75;
/// The analyzer's pattern, applied before lower-casing.
pub const TERM_PATTERN: &str = "[A-Za-z0-9_.~/-]+";

const ANALYZER: &str = "chunksweep";
/// Indexing memory per index; tantivy needs at least 15 MB per writer thread.
const WRITER_BUDGET_BYTES: usize = 20_000_000;

/// An in-memory BM25 index over a list of texts; scores come back in text order.
pub struct Bm25Index {
    index: Index,
    reader: IndexReader,
    body: Field,
    len: usize,
}

/// Whether a byte belongs to a term (`TERM_PATTERN`; every such byte is ASCII, so a run never
/// splits a multi-byte character).
fn is_term_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'~' | b'/' | b'-')
}

/// The tantivy tokenizer of the analyzer: runs of `TERM_PATTERN`, ASCII-lower-cased.
#[derive(Clone, Copy, Debug, Default)]
pub struct TermTokenizer;

/// The token stream of [`TermTokenizer`].
pub struct TermStream<'a> {
    text: &'a [u8],
    pos: usize,
    next_position: usize,
    token: Token,
}

impl Tokenizer for TermTokenizer {
    type TokenStream<'a> = TermStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> TermStream<'a> {
        TermStream {
            text: text.as_bytes(),
            pos: 0,
            next_position: 0,
            token: Token::default(),
        }
    }
}

impl TokenStream for TermStream<'_> {
    fn advance(&mut self) -> bool {
        let text = self.text;
        let mut i = self.pos;
        while i < text.len() && !is_term_byte(text[i]) {
            i += 1;
        }
        if i == text.len() {
            self.pos = i;
            return false;
        }
        let start = i;
        while i < text.len() && is_term_byte(text[i]) {
            i += 1;
        }
        self.pos = i;
        self.token.text.clear();
        self.token.text.extend(
            text[start..i]
                .iter()
                .map(|b| b.to_ascii_lowercase() as char),
        );
        self.token.offset_from = start;
        self.token.offset_to = i;
        self.token.position = self.next_position;
        self.next_position += 1;
        true
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

/// The analyzer: [`TermTokenizer`].
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::from(TermTokenizer)
}

/// The terms the analyzer makes of `text`, in order, repeats kept.
pub fn terms(text: &str) -> Vec<String> {
    let mut tokenizer = TermTokenizer;
    let mut stream = tokenizer.token_stream(text);
    let mut out = Vec::new();
    while let Some(token) = stream.next() {
        out.push(token.text.clone());
    }
    out
}

impl Bm25Index {
    /// Indexes `texts` (one document per chunk) in RAM with one writer thread.
    ///
    /// # Errors
    /// [`RetrievalError::Engine`] if tantivy fails.
    pub fn build<'a>(texts: impl IntoIterator<Item = &'a str>) -> Result<Self, RetrievalError> {
        let mut schema = Schema::builder();
        let indexing = TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs);
        let body = schema.add_text_field(
            "body",
            TextOptions::default().set_indexing_options(indexing),
        );
        let ord = schema.add_u64_field("ord", FAST);
        let index = Index::create_in_ram(schema.build());
        index.tokenizers().register(ANALYZER, analyzer());
        let mut writer =
            index.writer_with_num_threads::<TantivyDocument>(1, WRITER_BUDGET_BYTES)?;
        let mut len = 0;
        for (i, text) in texts.into_iter().enumerate() {
            let mut doc = TantivyDocument::default();
            doc.add_text(body, text);
            doc.add_u64(ord, i as u64);
            writer.add_document(doc)?;
            len += 1;
        }
        writer.commit()?;
        let reader = index.reader()?;
        Ok(Bm25Index {
            index,
            reader,
            body,
            len,
        })
    }

    /// Number of indexed texts.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// BM25 score of every indexed text for `query` (0 where no query term occurs), in text order.
    ///
    /// # Errors
    /// [`RetrievalError::Engine`] if tantivy fails.
    pub fn scores(&self, query: &str) -> Result<Vec<f32>, RetrievalError> {
        let mut scores = vec![0.0f32; self.len];
        let mut distinct = terms(query);
        distinct.sort();
        distinct.dedup();
        if distinct.is_empty() || self.len == 0 {
            return Ok(scores);
        }
        let clauses: Vec<(Occur, Box<dyn Query>)> = distinct
            .iter()
            .map(|t| {
                let term = Term::from_field_text(self.body, t);
                let q: Box<dyn Query> =
                    Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
                (Occur::Should, q)
            })
            .collect();
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        for (ord, score) in searcher.search(&query, &AllScores)? {
            scores[ord as usize] = score;
        }
        let _ = &self.index;
        Ok(scores)
    }
}

/// Collects `(ord, score)` for every matching document.
struct AllScores;

struct SegmentScores {
    ords: Column<u64>,
    out: Vec<(u64, Score)>,
}

impl Collector for AllScores {
    type Fruit = Vec<(u64, Score)>;
    type Child = SegmentScores;

    fn for_segment(
        &self,
        _segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<SegmentScores> {
        Ok(SegmentScores {
            ords: reader.fast_fields().u64("ord")?,
            out: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Vec<(u64, Score)>>) -> tantivy::Result<Self::Fruit> {
        Ok(fruits.concat())
    }
}

impl SegmentCollector for SegmentScores {
    type Fruit = Vec<(u64, Score)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        if let Some(ord) = self.ords.first(doc) {
            self.out.push((ord, score));
        }
    }

    fn harvest(self) -> Self::Fruit {
        self.out
    }
}

#[cfg(test)]
mod tests;
