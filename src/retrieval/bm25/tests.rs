//! BM25 against an independent oracle: the formula computed directly from each chunk's text
//! analyzed on its own (Robertson & Zaragoza 2009; seed 000's `bm25_index`), and values worked
//! out by hand.

use std::collections::HashMap;
use std::sync::Arc;

use super::*;
use crate::corpus::{Corpus, Document};
use crate::retrieval::analyze::{Analyzer, AnalyzerKind};
use crate::retrieval::rank_top_k;

fn settings(analyzer: AnalyzerKind) -> Bm25Settings {
    Bm25Settings {
        analyzer,
        ..Bm25Settings::default()
    }
}

/// The textbook formula over texts analyzed one by one, written as seed 000 writes it.
fn oracle(texts: &[String], query: &str, s: &Bm25Settings) -> Vec<f64> {
    let a = Analyzer::new(s.analysis());
    let docs: Vec<HashMap<String, usize>> = texts
        .iter()
        .map(|t| {
            let mut m = HashMap::new();
            for term in a.terms(t) {
                *m.entry(term).or_insert(0) += 1;
            }
            m
        })
        .collect();
    let n = docs.len() as f64;
    let avg = docs
        .iter()
        .map(|d| d.values().sum::<usize>())
        .sum::<usize>() as f64
        / n;
    let mut q = a.terms(query);
    q.sort();
    q.dedup();
    let (k1, b) = (s.k1, s.b);
    docs.iter()
        .map(|d| {
            let dl = d.values().sum::<usize>() as f64;
            let mut score = 0.0;
            for t in &q {
                if let Some(&tf) = d.get(t) {
                    let tf = tf as f64;
                    let df = docs.iter().filter(|d| d.contains_key(t)).count() as f64;
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    score += idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * dl / avg));
                }
            }
            score
        })
        .collect()
}

fn corpus(docs: &[(&str, &str)]) -> Corpus {
    Corpus::from_documents(
        "mem",
        docs.iter().map(|(id, t)| Document::new(*id, *t)).collect(),
    )
}

/// Whole documents as chunks.
fn whole(corpus: &Corpus) -> Vec<IndexedChunk<'static>> {
    corpus
        .docs
        .iter()
        .enumerate()
        .map(|(doc, d)| IndexedChunk {
            doc,
            start: 0,
            end: d.char_len(),
            prefix: "",
        })
        .collect()
}

/// The index of `chunks`, the corpus analyzed for `queries`.
fn index(
    corpus: &Corpus,
    chunks: Vec<IndexedChunk<'_>>,
    s: &Bm25Settings,
    queries: &[&str],
) -> Bm25Index {
    let analyzed = Arc::new(AnalyzedCorpus::new(
        corpus,
        s.analysis(),
        queries.iter().copied(),
    ));
    Bm25Index::build(&analyzed, chunks, s)
}

#[test]
fn the_analyzer_decides_refunds_days() {
    // seed keeps "days." (with its period) as a term, so only b.md has "days"; standard makes
    // it "days", so a.md matches both query words.
    let c = corpus(&[
        ("a.md", "Refunds are paid within fourteen days."),
        ("b.md", "Delivery days vary."),
    ]);
    let q = "Refunds: how many days?";
    let std = index(&c, whole(&c), &settings(AnalyzerKind::Standard), &[q])
        .scores(q)
        .unwrap();
    let seed = index(&c, whole(&c), &settings(AnalyzerKind::Seed), &[q])
        .scores(q)
        .unwrap();
    // By hand: N = 2; lengths 6 and 3, avgdl 4.5; k1 = 1.2, b = 0.75, so the length factors
    // are 1.2 · (0.25 + 0.75 · 6 / 4.5) = 1.5 and 1.2 · (0.25 + 0.75 · 3 / 4.5) = 0.9.
    let (ln2, ln12) = (2f64.ln(), 1.2f64.ln());
    let want_std = [2.2 / 2.5 * (ln2 + ln12), 2.2 / 1.9 * ln12];
    let want_seed = [2.2 / 2.5 * ln2, 2.2 / 1.9 * ln2];
    for (g, w) in std
        .iter()
        .chain(&seed)
        .zip(want_std.iter().chain(&want_seed))
    {
        assert!((g - w).abs() < 1e-12, "{std:?} {seed:?}");
    }
    assert_eq!(rank_top_k(&std, 1).top, vec![0], "standard retrieves a.md");
    assert_eq!(rank_top_k(&seed, 1).top, vec![1], "seed retrieves b.md");
}

#[test]
fn a_chinese_question_retrieves_the_chinese_document() {
    let c = corpus(&[
        ("en.md", "Refunds are paid within fourteen days."),
        ("zh.md", "退款在十四天内支付。"),
        ("zh2.md", "配送时间因地区而异。"),
    ]);
    let s = settings(AnalyzerKind::Standard);
    let q = "退款需要多少天？";
    let scores = index(&c, whole(&c), &s, &[q]).scores(q).unwrap();
    assert_eq!(rank_top_k(&scores, 1).top, vec![1]);
    assert_eq!(scores[0], 0.0);
    assert_eq!(scores[2], 0.0);
    let seed = index(&c, whole(&c), &settings(AnalyzerKind::Seed), &[q])
        .scores(q)
        .unwrap();
    assert!(seed.iter().all(|&x| x == 0.0));
}

#[test]
fn scores_equal_the_formula_on_overlapping_chunks_with_prefixes() {
    let docs = [
        (
            "sync.md",
            "The sync interval defaults to 300 seconds. Sync runs every 300 seconds unless the \
             interval is changed; the interval cannot go below 30. See functools.lru_cache and \
             HTTP_PROXY for details.",
        ),
        (
            "billing.md",
            "Refunds take 14 days. Partial refunds take 3 days, and refunds of refunds are not \
             possible. The sync of invoices happens nightly.",
        ),
        ("empty.md", "   "),
    ];
    let c = corpus(&docs);
    // Whitespace-word windows of 7 words with 2 shared, as the `words` strategy cuts them.
    let mut chunks = Vec::new();
    let mut texts = Vec::new();
    let prefixes = ["Sync > Intervals", "", "Billing"];
    for (doc, d) in c.docs.iter().enumerate() {
        let words = crate::tokenize::word_spans(&d.text);
        let mut i = 0;
        while i < words.len() {
            let (bs, be) = (words[i].0, words[(i + 7).min(words.len()) - 1].1);
            let (start, end) = (d.byte_to_char(bs), d.byte_to_char(be));
            let prefix = prefixes[(chunks.len()) % 3];
            chunks.push(IndexedChunk {
                doc,
                start,
                end,
                prefix,
            });
            texts.push(format!("{prefix}\n\n{}", &d.text[bs..be]));
            i += 5;
        }
    }
    assert!(chunks.len() > 8);
    for s in [
        settings(AnalyzerKind::Standard),
        settings(AnalyzerKind::Seed),
        Bm25Settings {
            k1: 0.9,
            b: 0.4,
            analyzer: AnalyzerKind::Standard,
            stem: true,
        },
    ] {
        let queries = [
            "What is the default sync interval?",
            "refunds refunds days",
            "lru_cache http proxy",
            "intervals billing",
            "nothing matches zzz",
        ];
        let idx = index(&c, chunks.clone(), &s, &queries);
        for q in queries {
            let got = idx.scores(q).unwrap();
            let want = oracle(&texts, q, &s);
            assert_eq!(got.len(), want.len());
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-9 * w.max(1.0),
                    "{s:?} {q:?} chunk {i}: {g} vs {w}"
                );
            }
        }
    }
}

#[test]
fn postings_lengths_and_prefix_terms_are_exact() {
    let c = corpus(&[("a.md", "alpha beta alpha gamma"), ("b.md", "beta delta")]);
    let chunks = vec![
        IndexedChunk {
            doc: 0,
            start: 0,
            end: 16,
            prefix: "Greek letters",
        },
        IndexedChunk {
            doc: 0,
            start: 11,
            end: 22,
            prefix: "",
        },
        IndexedChunk {
            doc: 1,
            start: 0,
            end: 10,
            prefix: "Greek",
        },
    ];
    // the questions: every term but "beta", "gamma" and "delta"
    let queries = ["alpha greek?", "letters", "omega alpha"];
    let idx = index(&c, chunks, &Bm25Settings::default(), &queries);
    // "alpha beta alpha" + "greek letters"; "alpha gamma"; "beta delta" + "greek": every term
    // counts in a length, a query term or not.
    assert_eq!(
        (idx.chunk_len(0), idx.chunk_len(1), idx.chunk_len(2)),
        (5, 2, 3)
    );
    assert_eq!(idx.doc_freq("alpha"), Some(2));
    assert_eq!(idx.doc_freq("greek"), Some(2));
    assert_eq!(
        idx.doc_freq("letters"),
        Some(1),
        "a prefix-only term is indexed"
    );
    assert_eq!(idx.doc_freq("omega"), Some(0), "a query term in no chunk");
    assert_eq!(idx.doc_freq("beta"), None, "no list: no question has it");
    let s = idx.scores("letters").unwrap();
    assert!(s[0] > 0.0 && s[1] == 0.0 && s[2] == 0.0);
    // a question the corpus was not analyzed for is refused, never scored without a term
    assert_eq!(
        idx.scores("alpha beta").unwrap_err(),
        Bm25Error::NotAQueryTerm {
            term: "beta".into(),
            query: "alpha beta".into()
        }
    );
    assert!(idx.scores("zeta").is_err(), "a term in no document either");
    let long = format!("alpha {}", "beta ".repeat(100));
    let Bm25Error::NotAQueryTerm { query, .. } = idx.scores(&long).unwrap_err();
    assert_eq!(query.chars().count(), 81, "80 characters and an ellipsis");
    assert!(query.starts_with("alpha beta") && query.ends_with('…'));
}
