//! The analyzers on hand-checked text.

use super::*;
use crate::corpus::{Corpus, Document};

fn standard() -> Analyzer {
    Analyzer::new(AnalyzerSettings::default())
}

fn seed_analyzer() -> Analyzer {
    Analyzer::new(AnalyzerSettings {
        analyzer: AnalyzerKind::Seed,
        stem: false,
    })
}

/// Every term with its range, checking that the range holds the term (lower-cased).
fn terms_checked(a: &Analyzer, text: &str) -> Vec<(String, u32, u32)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    a.analyze(text, &mut |t, s, e| {
        let slice: String = chars[s as usize..e as usize].iter().collect();
        assert_eq!(slice.to_lowercase(), t, "range {s}..{e} of {text:?}");
        out.push((t.to_string(), s, e));
    });
    let starts: Vec<u32> = out.iter().map(|t| t.1).collect();
    assert!(starts.is_sorted(), "terms come in order of start: {out:?}");
    out
}

#[test]
fn standard_splits_identifiers_and_keeps_them_whole() {
    let text =
        "Use functools.lru_cache (Python 2.31) at ~/.config/tool and --profile; HTTP_PROXY days.";
    let got: Vec<String> = terms_checked(&standard(), text)
        .into_iter()
        .map(|t| t.0)
        .collect();
    assert_eq!(
        got,
        vec![
            "use",
            "functools.lru_cache",
            "functools",
            "lru",
            "cache",
            "python",
            "2.31",
            "at",
            "config/tool",
            "config",
            "tool",
            "and",
            "profile",
            "http_proxy",
            "http",
            "proxy",
            "days"
        ]
    );
    // A query for the short name finds the parts of the long one.
    let q = standard().terms("lru_cache");
    assert_eq!(q, vec!["lru_cache", "lru", "cache"]);
    assert_eq!(
        standard().terms("glibc-2.31 10,000"),
        vec!["glibc-2.31", "glibc", "2.31", "10,000"]
    );
}

#[test]
fn standard_offsets_are_code_points() {
    let text = "Zoë paid 12€ — see lru_cache";
    let got = terms_checked(&standard(), text);
    assert_eq!(got[0], ("zoë".into(), 0, 3));
    assert_eq!(got[3], ("see".into(), 15, 18));
    assert_eq!(got[4], ("lru_cache".into(), 19, 28));
}

#[test]
fn chinese_and_japanese_are_segmented_into_bigrams() {
    let got: Vec<String> = terms_checked(&standard(), "退款在十四天内支付。Refund 天")
        .into_iter()
        .map(|t| t.0)
        .collect();
    assert_eq!(
        got,
        vec![
            "退款", "款在", "在十", "十四", "四天", "天内", "内支", "支付", "refund", "天"
        ]
    );
    let got: Vec<String> = terms_checked(&standard(), "東京に行きます")
        .into_iter()
        .map(|t| t.0)
        .collect();
    assert_eq!(got, vec!["東京", "京に", "に行", "行き", "きま", "ます"]);
    assert!(
        seed_analyzer().terms("退款在十四天内支付").is_empty(),
        "seed 000 drops them"
    );
}

#[test]
fn seed_is_seed_000s_regex_after_lower_casing() {
    assert_eq!(
        seed_analyzer()
            .terms("glibc 2.31 at ~/.config/tool/config.toml, use --profile; HTTP_PROXY!"),
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
    assert_eq!(
        seed_analyzer().terms("Refunds are paid within fourteen days."),
        vec!["refunds", "are", "paid", "within", "fourteen", "days."]
    );
    // Python's str.lower(): the Kelvin sign is "k"; "İ" is "i" + a combining dot, which ends
    // the term; accented letters are not in the class.
    let got = terms_checked(&seed_analyzer(), "\u{212A}elvin café");
    assert_eq!(got, vec![("kelvin".into(), 0, 6), ("caf".into(), 7, 10)]);
    let mut ranges = Vec::new();
    seed_analyzer().analyze("xİy", &mut |t, s, e| ranges.push((t.to_string(), s, e)));
    assert_eq!(ranges, vec![("xi".into(), 0, 2), ("y".into(), 2, 3)]);
}

#[test]
fn stemming_applies_to_words_of_letters_only() {
    let a = Analyzer::new(AnalyzerSettings {
        analyzer: AnalyzerKind::Standard,
        stem: true,
    });
    assert_eq!(
        a.terms("Refunds were running; lru_caches 2.31"),
        vec!["refund", "were", "run", "lru_caches", "lru", "cach", "2.31"]
    );
}

#[test]
fn terms_in_equals_a_filter_of_every_term_for_every_range() {
    // overlapping terms (an identifier whole and in parts), a term of 300 code points (the
    // side list) and CJK bigrams: every range's terms are those starting at or after its start
    // and ending at or before its end
    let long = "x".repeat(300);
    let text = format!("See functools.lru_cache and {long} then 退款需要 HTTP_PROXY, ok.");
    let corpus = Corpus::from_documents("mem", vec![Document::new("a.md", &text)]);
    // the text as the query: every term has an id of its own
    let analyzed = AnalyzedCorpus::new(&corpus, AnalyzerSettings::default(), [text.as_str()]);
    let mut all: Vec<(u32, usize, usize)> = Vec::new();
    analyzed.analyzer().analyze(&text, &mut |t, s, e| {
        all.push((analyzed.query_term_id(t).unwrap(), s as usize, e as usize));
    });
    assert!(all.iter().any(|&(_, s, e)| e - s == 300));
    let n = text.chars().count();
    for start in 0..=n {
        for end in start..=n {
            let want: Vec<u32> = all
                .iter()
                .filter(|&&(_, s, e)| s >= start && e <= end)
                .map(|&(id, _, _)| id)
                .collect();
            let got: Vec<u32> = analyzed.doc(0).terms_in(start, end).collect();
            assert_eq!(got, want, "range {start}..{end}");
        }
    }
}

#[test]
fn only_the_queries_terms_have_ids_whether_or_not_a_document_has_them() {
    let corpus = Corpus::from_documents(
        "mem",
        vec![Document::new("a.md", "Refunds take fourteen days.")],
    );
    let analyzed = AnalyzedCorpus::new(
        &corpus,
        AnalyzerSettings::default(),
        ["How many days?", "Refunds, days"],
    );
    // how, many, days, refunds; "take" and "fourteen" are in no query
    assert_eq!(analyzed.n_query_terms(), 4);
    let id = |t: &str| analyzed.query_term_id(t);
    assert_eq!(
        [id("how"), id("many"), id("days"), id("refunds")],
        [Some(0), Some(1), Some(2), Some(3)]
    );
    assert_eq!(id("take"), None);
    let a: Vec<u32> = analyzed.doc(0).terms_in(0, 27).collect();
    let other = AnalyzedCorpus::OTHER;
    assert_eq!(a, vec![3, other, other, 2]);
}

#[test]
fn a_corpus_is_analyzed_once_into_shared_ids_and_sliced_by_range() {
    let corpus = Corpus::from_documents(
        "mem",
        vec![
            Document::new("a.md", "Refunds take fourteen days."),
            Document::new("b.md", "Delivery days vary; refunds too."),
        ],
    );
    let analyzed = AnalyzedCorpus::new(
        &corpus,
        AnalyzerSettings::default(),
        ["Refunds take fourteen days?", "Delivery, vary, too?"],
    );
    assert_eq!(analyzed.n_query_terms(), 7);
    let days = analyzed.query_term_id("days").unwrap();
    let refunds = analyzed.query_term_id("refunds").unwrap();
    assert_eq!(analyzed.query_term_id("vary"), Some(5));
    assert_eq!(analyzed.doc(0).len(), 4);
    let a: Vec<u32> = analyzed.doc(0).terms_in(0, 27).collect();
    assert_eq!(a[0], refunds);
    assert_eq!(a[3], days);
    let b: Vec<u32> = analyzed.doc(1).terms_in(0, 31).collect();
    assert_eq!(
        b[1], days,
        "the same term has the same id in every document"
    );
    // "take fourteen" is code points 8..21; a range cutting "Refunds" and "fourteen" keeps
    // only the terms wholly inside it.
    let names = |ids: Vec<u32>| {
        ids.into_iter()
            .map(|i| {
                ["refunds", "take", "fourteen", "days"]
                    .into_iter()
                    .find(|t| analyzed.query_term_id(t) == Some(i))
                    .unwrap()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names(analyzed.doc(0).terms_in(8, 21).collect()),
        vec!["take", "fourteen"]
    );
    assert_eq!(
        names(analyzed.doc(0).terms_in(3, 18).collect()),
        vec!["take"]
    );
    assert_eq!(analyzed.doc(0).terms_in(5, 5).count(), 0);
}
