//! The prefix comparison: for each strategy and size, what each contextual prefix changes against
//! `none` (span recall@k, margin, hit@k with an exact McNemar test, tokens per query), paired on
//! the same questions; and whether a smaller size with a prefix reaches a larger size without
//! one at fewer tokens per query. The report renders it (prefix_comparison.csv and a section of
//! report.md).

use std::collections::HashMap;

use serde::Serialize;

use super::SelectionSettings;
use crate::stats;
use crate::sweep::rows::{QuestionRow, SweepRow};

/// One row of prefix_comparison.csv: a prefixed configuration against the same strategy, size,
/// overlap, retriever and k without a prefix. Deltas are prefix − none. Flat on purpose.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrefixComparison {
    /// Chunking strategy.
    pub strategy: String,
    /// chunk_size in tokenizer units.
    pub chunk_size: usize,
    /// chunk_overlap in tokenizer units.
    pub chunk_overlap: usize,
    /// top_k.
    pub top_k: usize,
    /// The prefix compared with `none`.
    pub prefix: String,
    /// The prefixed configuration.
    pub config_id: String,
    /// The same configuration with prefix `none`.
    pub baseline_id: String,
    /// Questions paired (present in both).
    pub n_questions: usize,
    /// Mean tokens the prefix adds per chunk.
    pub mean_prefix_tokens: f64,
    /// Tokens per query without the prefix.
    pub tokens_per_query_none: f64,
    /// Tokens per query with it.
    pub tokens_per_query: f64,
    /// Index tokens without the prefix.
    pub index_tokens_none: usize,
    /// Index tokens with it.
    pub index_tokens: usize,
    /// Macro span recall@k without the prefix.
    pub span_recall_none: f64,
    /// Macro span recall@k with it.
    pub span_recall: f64,
    /// span_recall − span_recall_none.
    pub delta_span_recall: f64,
    /// Paired bootstrap lower bound of the delta (same question draws for both).
    pub delta_span_recall_lo: f64,
    /// Paired bootstrap upper bound of the delta.
    pub delta_span_recall_hi: f64,
    /// Mean normalised margin without the prefix.
    pub margin_none: f64,
    /// Mean normalised margin with it.
    pub margin: f64,
    /// margin − margin_none.
    pub delta_margin: f64,
    /// Paired bootstrap lower bound of the margin delta.
    pub delta_margin_lo: f64,
    /// Paired bootstrap upper bound of the margin delta.
    pub delta_margin_hi: f64,
    /// hit@k without the prefix.
    pub hit_rate_none: f64,
    /// hit@k with it.
    pub hit_rate: f64,
    /// Questions hit without the prefix and missed with it.
    pub mcnemar_b: u64,
    /// Questions hit with the prefix and missed without it.
    pub mcnemar_c: u64,
    /// Exact two-sided McNemar p-value on hit@k.
    pub mcnemar_p: f64,
    /// The largest larger chunk size of the same strategy and k, without a prefix, whose span
    /// recall@k this configuration reaches (≥ its recall − the recall tolerance) at fewer tokens
    /// per query; empty when none.
    pub reaches_size: Option<usize>,
    /// That configuration's id (empty when none).
    pub reaches_config_id: String,
    /// Its span recall@k.
    pub reaches_span_recall: Option<f64>,
    /// Its tokens per query.
    pub reaches_tokens_per_query: Option<f64>,
    /// Exact McNemar p-value on hit@k between this configuration and that one.
    pub reaches_mcnemar_p: Option<f64>,
}

/// Per-question columns of one configuration, keyed by question id.
struct Columns<'a> {
    by_id: HashMap<&'a str, &'a QuestionRow>,
}

/// Paired vectors of two configurations over the questions both have, in the first one's order.
fn paired<'a>(a: &[&'a QuestionRow], b: &Columns<'a>) -> Vec<(&'a QuestionRow, &'a QuestionRow)> {
    a.iter()
        .filter_map(|qa| b.by_id.get(qa.question_id.as_str()).map(|qb| (*qa, *qb)))
        .collect()
}

fn same_group(a: &SweepRow, b: &SweepRow) -> bool {
    a.strategy == b.strategy
        && a.chunk_overlap == b.chunk_overlap
        && a.chunk_size == b.chunk_size
        && a.retriever == b.retriever
        && a.top_k == b.top_k
        && a.tokenizer == b.tokenizer
}

/// Compares every prefixed configuration of `rows` with its `none` twin (rows without a twin are
/// left out), in the order of `rows`. `settings` gives the recall tolerance, the confidence, the
/// bootstrap resamples and the seed. Empty when the sweep has no prefix but `none`.
pub fn compare(
    rows: &[SweepRow],
    questions: &[QuestionRow],
    settings: &SelectionSettings,
) -> Vec<PrefixComparison> {
    let mut per_config: HashMap<&str, Vec<&QuestionRow>> = HashMap::new();
    for q in questions {
        per_config.entry(q.config_id.as_str()).or_default().push(q);
    }
    let empty = Vec::new();
    let list = |id: &str| per_config.get(id).unwrap_or(&empty);
    let columns = |id: &str| Columns {
        by_id: list(id)
            .iter()
            .map(|q| (q.question_id.as_str(), *q))
            .collect(),
    };
    let mut out = Vec::new();
    for row in rows.iter().filter(|r| r.prefix != "none") {
        let Some(base) = rows
            .iter()
            .find(|b| b.prefix == "none" && same_group(b, row))
        else {
            continue;
        };
        let pairs = paired(list(&base.config_id), &columns(&row.config_id));
        let n = pairs.len();
        let hits_none: Vec<bool> = pairs.iter().map(|(a, _)| a.hit == 1).collect();
        let hits: Vec<bool> = pairs.iter().map(|(_, b)| b.hit == 1).collect();
        let test = stats::mcnemar_paired(&hits_none, &hits);
        let resamples = stats::bootstrap_indices(n, settings.bootstrap_resamples, settings.seed);
        let d_recall: Vec<f64> = pairs
            .iter()
            .map(|(a, b)| b.span_recall - a.span_recall)
            .collect();
        let d_margin: Vec<f64> = pairs.iter().map(|(a, b)| b.margin - a.margin).collect();
        let ci_recall = stats::bootstrap_mean(&d_recall, &resamples, settings.confidence);
        let ci_margin = stats::bootstrap_mean(&d_margin, &resamples, settings.confidence);
        let rate = |v: &[bool]| {
            if v.is_empty() {
                0.0
            } else {
                v.iter().filter(|&&h| h).count() as f64 / v.len() as f64
            }
        };
        // the largest larger size without a prefix that this one reaches for fewer tokens
        let reached = rows
            .iter()
            .filter(|b| {
                b.prefix == "none"
                    && b.strategy == row.strategy
                    && b.retriever == row.retriever
                    && b.top_k == row.top_k
                    && b.tokenizer == row.tokenizer
                    && b.chunk_size > row.chunk_size
                    && b.tokens_per_query > row.tokens_per_query
                    && row.span_recall >= b.span_recall - settings.recall_tolerance
            })
            .max_by_key(|b| b.chunk_size);
        let reach_p = reached.map(|b| {
            let pairs = paired(list(&b.config_id), &columns(&row.config_id));
            let x: Vec<bool> = pairs.iter().map(|(a, _)| a.hit == 1).collect();
            let y: Vec<bool> = pairs.iter().map(|(_, c)| c.hit == 1).collect();
            stats::mcnemar_paired(&x, &y).p_value
        });
        out.push(PrefixComparison {
            strategy: row.strategy.clone(),
            chunk_size: row.chunk_size,
            chunk_overlap: row.chunk_overlap,
            top_k: row.top_k,
            prefix: row.prefix.clone(),
            config_id: row.config_id.clone(),
            baseline_id: base.config_id.clone(),
            n_questions: n,
            mean_prefix_tokens: row.mean_prefix_tokens,
            tokens_per_query_none: base.tokens_per_query,
            tokens_per_query: row.tokens_per_query,
            index_tokens_none: base.index_tokens,
            index_tokens: row.index_tokens,
            span_recall_none: base.span_recall,
            span_recall: row.span_recall,
            delta_span_recall: row.span_recall - base.span_recall,
            delta_span_recall_lo: ci_recall.lo,
            delta_span_recall_hi: ci_recall.hi,
            margin_none: base.margin,
            margin: row.margin,
            delta_margin: row.margin - base.margin,
            delta_margin_lo: ci_margin.lo,
            delta_margin_hi: ci_margin.hi,
            hit_rate_none: rate(&hits_none),
            hit_rate: rate(&hits),
            mcnemar_b: test.b,
            mcnemar_c: test.c,
            mcnemar_p: test.p_value,
            reaches_size: reached.map(|b| b.chunk_size),
            reaches_config_id: reached.map(|b| b.config_id.clone()).unwrap_or_default(),
            reaches_span_recall: reached.map(|b| b.span_recall),
            reaches_tokens_per_query: reached.map(|b| b.tokens_per_query),
            reaches_mcnemar_p: reach_p,
        });
    }
    out
}

/// The best prefix for one strategy and size: the comparison with the largest span-recall
/// gain, then the largest margin gain, then the fewest tokens per query. `None` when no
/// prefixed configuration of that strategy and size was compared.
pub fn best_prefix<'a>(
    table: &'a [PrefixComparison],
    strategy: &str,
    chunk_size: usize,
) -> Option<&'a PrefixComparison> {
    table
        .iter()
        .filter(|c| c.strategy == strategy && c.chunk_size == chunk_size)
        .max_by(|a, b| {
            a.delta_span_recall
                .total_cmp(&b.delta_span_recall)
                .then(a.delta_margin.total_cmp(&b.delta_margin))
                .then(b.tokens_per_query.total_cmp(&a.tokens_per_query))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::prefix::markdown;
    use crate::select::tests::{Fake, tables};

    /// Four configurations, ten questions: fixed 64 none / heading_path, fixed 256 none /
    /// heading_path.
    fn fakes() -> Vec<Fake> {
        let none64 = [1., 0., 0., 0., 1., 0., 1., 0., 0., 1.]; // 4 hits
        let head64 = [1., 1., 1., 1., 1., 1., 1., 0., 0., 1.]; // 8 hits: +4, -0
        let none256 = [1., 1., 1., 1., 1., 1., 0., 1., 0., 1.]; // 8 hits
        let head256 = [1., 1., 1., 1., 1., 1., 0., 1., 1., 1.]; // 9 hits
        let mk = |id: &'static str, size, prefix: &'static str, recall: [f64; 10], tpq| {
            let mut f = Fake::new(id, size, tpq, recall.to_vec(), vec![0.5; 10]);
            f.prefix = prefix;
            f.margin = recall.iter().map(|r| r - 0.5).collect();
            f
        };
        vec![
            mk("fixed-64-o0-none-bm25-k5", 64, "none", none64, 320.0),
            mk(
                "fixed-64-o0-heading_path-bm25-k5",
                64,
                "heading_path",
                head64,
                360.0,
            ),
            mk("fixed-256-o0-none-bm25-k5", 256, "none", none256, 1280.0),
            mk(
                "fixed-256-o0-heading_path-bm25-k5",
                256,
                "heading_path",
                head256,
                1320.0,
            ),
        ]
    }

    #[test]
    fn deltas_tests_and_reach_are_paired_on_questions() {
        let (rows, qs) = tables(&fakes());
        let table = compare(&rows, &qs, &SelectionSettings::default());
        assert_eq!(table.len(), 2);
        let small = &table[0];
        assert_eq!(small.baseline_id, "fixed-64-o0-none-bm25-k5");
        assert_eq!(small.n_questions, 10);
        assert!((small.delta_span_recall - 0.4).abs() < 1e-12);
        assert!((small.delta_margin - 0.4).abs() < 1e-12);
        assert!((small.tokens_per_query - small.tokens_per_query_none - 40.0).abs() < 1e-12);
        assert_eq!((small.mcnemar_b, small.mcnemar_c), (0, 4));
        // 2 · 0.5^4 = 0.125
        assert!((small.mcnemar_p - 0.125).abs() < 1e-12);
        assert!(small.delta_span_recall_lo > 0.0 && small.delta_span_recall_hi <= 0.8);
        // 64 with headings (0.8 at 360 tokens) reaches 256 without (0.8 at 1280 tokens)
        assert_eq!(small.reaches_size, Some(256));
        assert_eq!(small.reaches_config_id, "fixed-256-o0-none-bm25-k5");
        // paired on questions: 64+heading hits q1..q5, q6, q9 ... vs 256 none: discordant q6, q7
        assert_eq!(small.reaches_mcnemar_p, Some(1.0));
        let large = &table[1];
        assert_eq!((large.mcnemar_b, large.mcnemar_c), (0, 1));
        assert_eq!(large.reaches_size, None);
        let best = best_prefix(&table, "fixed", 64).unwrap();
        assert_eq!(best.prefix, "heading_path");
        assert!(best_prefix(&table, "fixed", 128).is_none());
        let md = markdown(&table, &SelectionSettings::default());
        assert!(
            md.contains("| fixed | 64 | heading_path | +40 | 0.400 → 0.800 | +0.400 ["),
            "{md}"
        );
        assert!(
            md.contains("0/4, p 0.125 | 256 (0.800 at 1280 tok/query; p 1.000) |"),
            "{md}"
        );
        assert!(
            md.contains("fixed 64 reaches 256 (360 vs 1280 tok/query)"),
            "{md}"
        );
    }

    #[test]
    fn a_sweep_without_prefixes_has_no_comparison() {
        let (rows, qs) = tables(&fakes()[..1]);
        assert!(compare(&rows, &qs, &SelectionSettings::default()).is_empty());
        assert_eq!(markdown(&[], &SelectionSettings::default()), "");
    }
}
