//! The prefix comparison: for each retriever, strategy and size, what each contextual prefix
//! changes against `none` (span recall@k, margin, hit@k with an exact McNemar test, tokens per
//! query), paired on the same questions; the retrieval failure rates (1 − span recall@k and
//! 1 − hit@k) with and without the prefix and their relative reduction, as Anthropic's
//! contextual retrieval reports its effect (there on the top-20 failure rate; here at the
//! configuration's k); the one-off cost of writing `llm_context` prefixes; and whether a smaller
//! size with a prefix reaches a larger size without one at fewer tokens per query. The report
//! renders it (prefix_comparison.csv and a section of report.md).

use serde::Serialize;

use super::types::SelectionSettings;
use crate::select::paired::{ByConfig, Factor, twins_but};
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
    /// top_k: the cut at which every rate below is measured.
    pub top_k: usize,
    /// Retriever (both configurations).
    pub retriever: String,
    /// The prefix compared with `none`.
    pub prefix: String,
    /// What dense and hybrid embed of each chunk: `prefixed` or `bare` (empty for BM25).
    pub embed_input: String,
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
    /// Span failure rate without the prefix: 1 − span_recall_none.
    pub span_failure_none: f64,
    /// Span failure rate with it: 1 − span_recall.
    pub span_failure: f64,
    /// Relative reduction of the span failure rate, (none − prefix) / none (0.35 = 35 % fewer
    /// failures; negative: more); empty when nothing failed without the prefix.
    pub span_failure_reduction: Option<f64>,
    /// Paired bootstrap lower bound of that reduction (same question draws for both).
    pub span_failure_reduction_lo: Option<f64>,
    /// Paired bootstrap upper bound.
    pub span_failure_reduction_hi: Option<f64>,
    /// hit@k failure rate without the prefix: 1 − hit_rate_none.
    pub hit_failure_none: f64,
    /// hit@k failure rate with it.
    pub hit_failure: f64,
    /// Relative reduction of the hit@k failure rate (tested by McNemar above); empty when every
    /// question was hit without the prefix.
    pub hit_failure_reduction: Option<f64>,
    /// `llm_context`: calls that wrote this configuration's contexts (one per distinct chunk,
    /// cached or not; 0 for other prefixes).
    pub context_calls: usize,
    /// Their prompt + completion tokens.
    pub context_tokens: u64,
    /// Their cost in USD at the context model's prices (empty without a price).
    pub context_cost_usd: Option<f64>,
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

/// Compares every prefixed configuration of `rows` with its `none` twin (rows without a twin are
/// left out), in the order of `rows`. `settings` gives the recall tolerance, the confidence, the
/// bootstrap resamples and the seed. Empty when the sweep has no prefix but `none`.
pub fn compare(
    rows: &[SweepRow],
    questions: &[QuestionRow],
    settings: &SelectionSettings,
) -> Vec<PrefixComparison> {
    let by_config = ByConfig::new(questions);
    let mut out = Vec::new();
    for row in rows.iter().filter(|r| r.prefix != "none") {
        let Some(base) = rows
            .iter()
            .find(|b| b.prefix == "none" && twins_but(b, row, Factor::Prefix))
        else {
            continue;
        };
        let pairs = by_config.rows(&base.config_id, &row.config_id);
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
        let fail_none: Vec<f64> = pairs.iter().map(|(a, _)| 1.0 - a.span_recall).collect();
        let fail: Vec<f64> = pairs.iter().map(|(_, b)| 1.0 - b.span_recall).collect();
        let ci_reduction =
            stats::bootstrap_reduction(&fail_none, &fail, &resamples, settings.confidence);
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
                    && b.rerank == row.rerank
                    && b.expand == row.expand
                    && b.top_k == row.top_k
                    && b.budget_tokens == row.budget_tokens
                    && b.tokenizer == row.tokenizer
                    && b.chunk_size > row.chunk_size
                    && b.tokens_per_query > row.tokens_per_query
                    && row.span_recall >= b.span_recall - settings.recall_tolerance
            })
            .max_by_key(|b| b.chunk_size);
        let reach_p = reached.map(|b| {
            let pairs = by_config.rows(&b.config_id, &row.config_id);
            let x: Vec<bool> = pairs.iter().map(|(a, _)| a.hit == 1).collect();
            let y: Vec<bool> = pairs.iter().map(|(_, c)| c.hit == 1).collect();
            stats::mcnemar_paired(&x, &y).p_value
        });
        out.push(PrefixComparison {
            strategy: row.strategy.clone(),
            chunk_size: row.chunk_size,
            chunk_overlap: row.chunk_overlap,
            top_k: row.top_k,
            retriever: row.retriever.clone(),
            prefix: row.prefix.clone(),
            embed_input: row.embed_input.clone(),
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
            span_failure_none: 1.0 - base.span_recall,
            span_failure: 1.0 - row.span_recall,
            span_failure_reduction: stats::relative_reduction(
                1.0 - base.span_recall,
                1.0 - row.span_recall,
            ),
            span_failure_reduction_lo: ci_reduction.map(|i| i.lo),
            span_failure_reduction_hi: ci_reduction.map(|i| i.hi),
            hit_failure_none: 1.0 - rate(&hits_none),
            hit_failure: 1.0 - rate(&hits),
            hit_failure_reduction: stats::relative_reduction(
                1.0 - rate(&hits_none),
                1.0 - rate(&hits),
            ),
            context_calls: row.context_calls,
            context_tokens: row.context_tokens,
            context_cost_usd: row.context_cost_usd,
            reaches_size: reached.map(|b| b.chunk_size),
            reaches_config_id: reached.map(|b| b.config_id.clone()).unwrap_or_default(),
            reaches_span_recall: reached.map(|b| b.span_recall),
            reaches_tokens_per_query: reached.map(|b| b.tokens_per_query),
            reaches_mcnemar_p: reach_p,
        });
    }
    out
}

/// The best prefix for one retriever, strategy and size: the comparison with the largest
/// span-recall gain, then the largest margin gain, then the fewest tokens per query. `None` when
/// no prefixed configuration of that retriever, strategy and size was compared.
pub fn best_prefix<'a>(
    table: &'a [PrefixComparison],
    retriever: &str,
    strategy: &str,
    chunk_size: usize,
) -> Option<&'a PrefixComparison> {
    table
        .iter()
        .filter(|c| {
            c.retriever == retriever && c.strategy == strategy && c.chunk_size == chunk_size
        })
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
        let best = best_prefix(&table, "bm25", "fixed", 64).unwrap();
        assert_eq!(best.prefix, "heading_path");
        assert!(best_prefix(&table, "bm25", "fixed", 128).is_none());
        assert!(best_prefix(&table, "dense", "fixed", 64).is_none());
        // failure rates: 0.6 → 0.2 at 64, a reduction of (0.6 − 0.2) / 0.6 = 2/3; 0.2 → 0.1 at
        // 256, a reduction of 1/2 (recall is 0 or 1 per question, so hit@k gives the same)
        assert!((small.span_failure_none - 0.6).abs() < 1e-12);
        assert!((small.span_failure - 0.2).abs() < 1e-12);
        assert!((small.span_failure_reduction.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        assert!((small.hit_failure_reduction.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        let (lo, hi) = (
            small.span_failure_reduction_lo.unwrap(),
            small.span_failure_reduction_hi.unwrap(),
        );
        assert!(lo < 2.0 / 3.0 && 2.0 / 3.0 < hi && hi <= 1.0, "{lo} {hi}");
        assert!((table[1].span_failure_reduction.unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(small.retriever, "bm25");
        assert_eq!(small.context_calls, 0);
        let md = markdown(&table, &SelectionSettings::default());
        assert!(
            md.contains("| bm25 | fixed | 64 | heading_path | +40 | 0.600 → 0.200 | +67% ["),
            "{md}"
        );
        assert!(
            md.contains("| 0.600 → 0.200 | +67% | 0/4, p 0.125 | +0.400 ["),
            "{md}"
        );
        assert!(
            md.contains("| 256 (0.800 at 1,280 tok/query; p 1.000) |"),
            "{md}"
        );
        assert!(md.contains("mean span-failure reduction +58%"), "{md}");
        assert!(
            md.contains("bm25 fixed 64 reaches 256 (360 vs 1,280 tok/query)"),
            "{md}"
        );
    }

    #[test]
    fn a_prefix_is_compared_with_none_at_its_own_budget() {
        // none at 2,000 tokens comes first in sweep order; title at 1,000 tokens must pair with
        // none at 1,000 (4 of 10 found → 8 of 10), not with none at 2,000 (8 of 10)
        let four = [1., 0., 0., 0., 1., 0., 1., 0., 0., 1.];
        let eight = [1., 1., 1., 1., 1., 1., 1., 0., 0., 1.];
        let mk = |id: &'static str, prefix: &'static str, recall: [f64; 10]| Fake {
            prefix,
            ..Fake::new(id, 64, 500.0, recall.to_vec(), vec![0.5; 10])
        };
        let (mut rows, mut qs) = tables(&[
            mk("fixed-64-none-b2000", "none", eight),
            mk("fixed-64-none-b1000", "none", four),
            mk("fixed-64-title-b1000", "title", eight),
        ]);
        let budget = |id: &str| id.rsplit("-b").next().unwrap().parse::<usize>().unwrap();
        for r in &mut rows {
            (r.budget_tokens, r.cut, r.top_k) = (Some(budget(&r.config_id)), "budget".into(), 0);
        }
        for q in &mut qs {
            (q.budget_tokens, q.cut) = (Some(budget(&q.config_id)), "budget".into());
        }
        let c = compare(&rows, &qs, &SelectionSettings::default());
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].baseline_id, "fixed-64-none-b1000");
        assert_eq!((c[0].mcnemar_b, c[0].mcnemar_c), (0, 4));
    }

    #[test]
    fn a_sweep_without_prefixes_has_no_comparison() {
        let (rows, qs) = tables(&fakes()[..1]);
        assert!(compare(&rows, &qs, &SelectionSettings::default()).is_empty());
        assert_eq!(markdown(&[], &SelectionSettings::default()), "");
    }
}
