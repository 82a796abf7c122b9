//! tantivy's BM25 against a textbook implementation (Robertson & Zaragoza 2009, the formula of
//! seed 000's harness) used here only as an oracle.

use std::collections::HashMap;

use super::*;

fn textbook(texts: &[&str], query: &str) -> Vec<f64> {
    let docs: Vec<HashMap<String, usize>> = texts
        .iter()
        .map(|t| {
            let mut m = HashMap::new();
            for term in terms(t) {
                *m.entry(term).or_insert(0) += 1;
            }
            m
        })
        .collect();
    let lens: Vec<f64> = docs
        .iter()
        .map(|d| d.values().sum::<usize>() as f64)
        .collect();
    let n = docs.len() as f64;
    let avg = lens.iter().sum::<f64>() / n;
    let mut q = terms(query);
    q.sort();
    q.dedup();
    let (k1, b) = (f64::from(K1), f64::from(B));
    docs.iter()
        .zip(&lens)
        .map(|(d, &dl)| {
            q.iter()
                .filter_map(|t| d.get(t).map(|&tf| (t, tf as f64)))
                .map(|(t, tf)| {
                    let df = docs.iter().filter(|d| d.contains_key(t)).count() as f64;
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * dl / avg))
                })
                .sum()
        })
        .collect()
}

#[test]
fn analyzer_keeps_versions_paths_and_flags_whole() {
    assert_eq!(
        terms("glibc 2.31 at ~/.config/tool/config.toml, use --profile; HTTP_PROXY!"),
        vec![
            "glibc",
            "2.31",
            "at",
            "~/.config/tool/config.toml",
            "use",
            "--profile",
            "http_proxy"
        ]
    );
}

#[test]
fn short_chunks_score_exactly_as_textbook_bm25() {
    // Every chunk is under 40 terms, where tantivy stores lengths exactly.
    let texts = [
        "The sync interval defaults to 300 seconds.",
        "Sync runs every 300 seconds unless the interval is changed; the interval cannot go below 30.",
        "Refunds take 14 days.",
        "Nothing about it here.",
    ];
    let index = Bm25Index::build(texts.iter().copied()).unwrap();
    let query = "What is the default sync interval?";
    let got = index.scores(query).unwrap();
    let want = textbook(&texts, query);
    assert_eq!(got.len(), 4);
    for (g, w) in got.iter().zip(&want) {
        assert!(
            (f64::from(*g) - w).abs() < 1e-5 * w.max(1.0),
            "{got:?} vs {want:?}"
        );
    }
    assert_eq!(got[3], 0.0);
    assert_eq!(got[2], 0.0);
    assert!(got[0] > 0.0 && got[1] > 0.0);
}

#[test]
fn tantivy_matches_textbook_bm25_up_to_length_rounding() {
    // Lengths of 41 to 400 terms are rounded to one of tantivy's 256 buckets; the score moves by
    // a few percent at most and the order of clearly different chunks is kept.
    let base = "alpha beta gamma delta epsilon zeta eta theta iota kappa ";
    let texts: Vec<String> = (0..12)
        .map(|i| {
            format!(
                "{} sync interval {}",
                base.repeat(4 + i * 3),
                "sync ".repeat(i % 3)
            )
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let index = Bm25Index::build(refs.iter().copied()).unwrap();
    let got = index.scores("sync interval").unwrap();
    let want = textbook(&refs, "sync interval");
    let mut max_rel: f64 = 0.0;
    for (g, w) in got.iter().zip(&want) {
        max_rel = max_rel.max((f64::from(*g) - w).abs() / w);
    }
    assert!(
        max_rel > 0.0,
        "long chunks are rounded, so scores differ somewhat"
    );
    assert!(max_rel < 0.05, "but by less than 5%: {max_rel}");
}

#[test]
fn scores_come_back_in_text_order_for_any_number_of_segments() {
    let texts: Vec<String> = (0..3000)
        .map(|i| format!("chunk {i} topic{}", i % 7))
        .collect();
    let index = Bm25Index::build(texts.iter().map(String::as_str)).unwrap();
    let scores = index.scores("topic3").unwrap();
    assert_eq!(scores.len(), 3000);
    for (i, s) in scores.iter().enumerate() {
        assert_eq!(*s > 0.0, i % 7 == 3, "chunk {i}");
    }
}
