//! The expansion comparison: at every cut, each expanded configuration (`neighbours:N`,
//! `parent:P`; [`crate::expand`]) against the same configuration sending its chunks alone (same
//! strategy, size, overlap, prefix, retriever, rerank value and cut), paired on the same
//! questions: span recall with a paired bootstrap interval of its change and an exact sign test,
//! coverage, character IoU, MRR (on the same ranking, of the hits each side's cut takes) and tokens per query. Then,
//! per cut, the expanded configuration with the highest span recall against the best single
//! size (the configuration without expansion with the highest span recall at that cut),
//! paired: an exact sign test, Holm-corrected over every expanded configuration of the cut
//! (less those that sent exactly what their chunks alone send: they measure no expansion).
//! The report renders it (expand_comparison.csv and a section of report.md).

use serde::Serialize;

use crate::select::paired::{ByConfig, Factor, twins_but};

use super::types::SelectionSettings;
use crate::stats;
use crate::sweep::rows::{QuestionRow, SweepRow};

/// The `expand` value of a configuration that sends its chunks alone.
const NONE: &str = "none";

/// One row of expand_comparison.csv: an expanded configuration against the same configuration
/// without expansion, at one cut. Deltas are expanded − none. Flat on purpose.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExpandComparison {
    /// Chunking strategy.
    pub strategy: String,
    /// chunk_size in tokenizer units.
    pub chunk_size: usize,
    /// chunk_overlap in tokenizer units.
    pub chunk_overlap: usize,
    /// Contextual prefix (both configurations).
    pub prefix: String,
    /// Retriever (both).
    pub retriever: String,
    /// Reranker model or `none` (both).
    pub rerank: String,
    /// The expansion compared with `none`.
    pub expand: String,
    /// The cut: `k` or `budget`.
    pub cut: String,
    /// top_k (0 for a budget cut).
    pub top_k: usize,
    /// The budget of a budget cut.
    pub budget_tokens: Option<usize>,
    /// The expanded configuration at the cut.
    pub config_id: String,
    /// The same configuration without expansion.
    pub baseline_id: String,
    /// Questions paired (present in both).
    pub n_questions: usize,
    /// Macro span recall without expansion.
    pub span_recall_none: f64,
    /// With it.
    pub span_recall: f64,
    /// span_recall − span_recall_none.
    pub delta_span_recall: f64,
    /// Paired bootstrap lower bound of the delta (same question draws for both).
    pub delta_span_recall_lo: f64,
    /// Paired bootstrap upper bound.
    pub delta_span_recall_hi: f64,
    /// Questions whose span recall is higher without expansion.
    pub sign_b: u64,
    /// Questions whose span recall is higher with it.
    pub sign_c: u64,
    /// Exact two-sided sign test p-value on per-question span recall.
    pub sign_p: f64,
    /// Macro coverage without expansion.
    pub coverage_none: f64,
    /// With it.
    pub coverage: f64,
    /// Macro character IoU without expansion.
    pub char_iou_none: f64,
    /// With it.
    pub char_iou: f64,
    /// MRR without expansion (the same ranking: equal to `mrr` at top k).
    pub mrr_none: f64,
    /// With it.
    pub mrr: f64,
    /// Tokens per query without expansion.
    pub tokens_per_query_none: f64,
    /// With it.
    pub tokens_per_query: f64,
    /// 1 when it sent exactly what the configuration without expansion sends, on every question
    /// paired: the same code-point ranges, in the same order, of the same tokens (e.g.
    /// `parent:1024` on 512-token markdown chunks whose sections are the chunks): the
    /// expansion changed nothing. Such a configuration is left out of the best expansion.
    pub same_as_none: u8,
}

/// At one cut: the expanded configuration with the highest span recall against the best single
/// size, paired on the same questions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BestAgainstSingle {
    /// The cut's budget (`None`: top k).
    pub budget_tokens: Option<usize>,
    /// top_k of the cut (0 for a budget).
    pub top_k: usize,
    /// The expanded configuration with the highest span recall (ties: fewer tokens per query).
    pub config_id: String,
    /// Its span recall.
    pub span_recall: f64,
    /// Its tokens per query.
    pub tokens_per_query: f64,
    /// The best single size: the configuration without expansion with the highest span recall.
    pub single_id: String,
    /// Its span recall.
    pub single_span_recall: f64,
    /// Its tokens per query.
    pub single_tokens_per_query: f64,
    /// Questions where the expansion's span recall is higher.
    pub better: u64,
    /// Questions where it is lower.
    pub worse: u64,
    /// Exact two-sided sign-test p-value.
    pub p_value: f64,
    /// Holm-adjusted over every expanded configuration of the cut against the best single size.
    pub p_holm: f64,
    /// The expansion is significantly better: `p_holm < alpha` and `better > worse`.
    pub significant: bool,
}

/// The expansion comparison of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Expansions {
    /// Every expanded configuration at every cut, cut by cut in sweep.csv's order.
    pub rows: Vec<ExpandComparison>,
    /// Per cut, the best expansion against the best single size.
    pub best: Vec<BestAgainstSingle>,
}

/// Whether every pair (alone, expanded) sent the same ranges of the same tokens (`false` with
/// no pair, or when a row records no ranges: a run folder written before they were).
fn sends_the_same(pairs: &[(&QuestionRow, &QuestionRow)]) -> bool {
    !pairs.is_empty()
        && pairs.iter().all(|(a, b)| {
            !a.retrieved_ranges.is_empty()
                && a.retrieved_ranges == b.retrieved_ranges
                && a.tokens_retrieved == b.tokens_retrieved
        })
}

/// Compares every expanded row of `rows` with its twin without expansion (rows without a twin
/// are left out), and per cut the best expansion with the best single size (an expansion that
/// sent exactly what its twin sends, `same_as_none`, is not a candidate). `settings` gives
/// the confidence, α, the bootstrap resamples and the seed. `None` when no row is expanded.
pub fn compare(
    rows: &[SweepRow],
    questions: &[QuestionRow],
    settings: &SelectionSettings,
) -> Option<Expansions> {
    if !rows.iter().any(|r| r.expand != NONE) {
        return None;
    }
    let by_config = ByConfig::new(questions);
    let mut cuts: Vec<(&str, usize, Option<usize>)> = Vec::new();
    for r in rows {
        let cut = (r.cut.as_str(), r.top_k, r.budget_tokens);
        if !cuts.contains(&cut) {
            cuts.push(cut);
        }
    }
    let mut out = Expansions {
        rows: Vec::new(),
        best: Vec::new(),
    };
    for cut in cuts {
        let at: Vec<&SweepRow> = rows
            .iter()
            .filter(|r| (r.cut.as_str(), r.top_k, r.budget_tokens) == cut)
            .collect();
        for row in at.iter().filter(|r| r.expand != NONE) {
            if let Some(base) = at
                .iter()
                .find(|b| b.expand == NONE && twins_but(b, row, Factor::Expand))
            {
                out.rows.push(against_none(
                    row,
                    base,
                    &by_config.rows(&base.config_id, &row.config_id),
                    settings,
                ));
            }
        }
        // an expansion that sent what its chunks alone send measures no expansion
        let same: Vec<String> = out
            .rows
            .iter()
            .filter(|c| c.same_as_none == 1)
            .map(|c| c.config_id.clone())
            .collect();
        let at: Vec<&SweepRow> = at
            .into_iter()
            .filter(|r| !same.contains(&r.config_id))
            .collect();
        out.best
            .extend(best_against_single(&at, &by_config, settings));
    }
    Some(out)
}

/// `row` against `base`, its twin without expansion, on `pairs` (base, row).
fn against_none(
    row: &SweepRow,
    base: &SweepRow,
    pairs: &[(&QuestionRow, &QuestionRow)],
    settings: &SelectionSettings,
) -> ExpandComparison {
    let n = pairs.len();
    let none: Vec<f64> = pairs.iter().map(|(a, _)| a.span_recall).collect();
    let with: Vec<f64> = pairs.iter().map(|(_, b)| b.span_recall).collect();
    let test = stats::sign_test(&none, &with);
    let resamples = stats::bootstrap_indices(n, settings.bootstrap_resamples, settings.seed);
    let delta: Vec<f64> = with.iter().zip(&none).map(|(b, a)| b - a).collect();
    let ci = stats::bootstrap_mean(&delta, &resamples, settings.confidence);
    ExpandComparison {
        strategy: row.strategy.clone(),
        chunk_size: row.chunk_size,
        chunk_overlap: row.chunk_overlap,
        prefix: row.prefix.clone(),
        retriever: row.retriever.clone(),
        rerank: row.rerank.clone(),
        expand: row.expand.clone(),
        cut: row.cut.clone(),
        top_k: row.top_k,
        budget_tokens: row.budget_tokens,
        config_id: row.config_id.clone(),
        baseline_id: base.config_id.clone(),
        n_questions: n,
        span_recall_none: base.span_recall,
        span_recall: row.span_recall,
        delta_span_recall: row.span_recall - base.span_recall,
        delta_span_recall_lo: ci.lo,
        delta_span_recall_hi: ci.hi,
        sign_b: test.b,
        sign_c: test.c,
        sign_p: test.p_value,
        coverage_none: base.coverage,
        coverage: row.coverage,
        char_iou_none: base.char_iou,
        char_iou: row.char_iou,
        mrr_none: base.mrr,
        mrr: row.mrr,
        tokens_per_query_none: base.tokens_per_query,
        tokens_per_query: row.tokens_per_query,
        same_as_none: u8::from(sends_the_same(pairs)),
    }
}

/// The highest span recall of `rows` (ties: fewer tokens per query, then sweep order).
fn highest<'a>(rows: impl Iterator<Item = &'a SweepRow>) -> Option<&'a SweepRow> {
    rows.fold(None, |best: Option<&SweepRow>, r| match best {
        Some(b)
            if b.span_recall > r.span_recall
                || (b.span_recall == r.span_recall && b.tokens_per_query <= r.tokens_per_query) =>
        {
            Some(b)
        }
        _ => Some(r),
    })
}

/// At one cut (`at`, its rows, less the expanded ones that changed nothing): the expanded
/// configuration with the highest span recall against the best configuration without
/// expansion, the sign test Holm-corrected over every expanded configuration of `at`. `None`
/// without both sides.
fn best_against_single(
    at: &[&SweepRow],
    by_config: &ByConfig<'_>,
    settings: &SelectionSettings,
) -> Option<BestAgainstSingle> {
    let single = highest(at.iter().copied().filter(|r| r.expand == NONE))?;
    let expanded: Vec<&SweepRow> = at.iter().copied().filter(|r| r.expand != NONE).collect();
    let best = highest(expanded.iter().copied())?;
    let tests: Vec<stats::McNemar> = expanded
        .iter()
        .map(|r| {
            let pairs = by_config.rows(&single.config_id, &r.config_id);
            let s: Vec<f64> = pairs.iter().map(|(a, _)| a.span_recall).collect();
            let e: Vec<f64> = pairs.iter().map(|(_, b)| b.span_recall).collect();
            stats::sign_test(&s, &e)
        })
        .collect();
    let holm = stats::holm(&tests.iter().map(|t| t.p_value).collect::<Vec<_>>());
    let i = expanded
        .iter()
        .position(|r| r.config_id == best.config_id)?;
    let t = tests[i];
    Some(BestAgainstSingle {
        budget_tokens: best.budget_tokens,
        top_k: best.top_k,
        config_id: best.config_id.clone(),
        span_recall: best.span_recall,
        tokens_per_query: best.tokens_per_query,
        single_id: single.config_id.clone(),
        single_span_recall: single.span_recall,
        single_tokens_per_query: single.tokens_per_query,
        better: t.c,
        worse: t.b,
        p_value: t.p_value,
        p_holm: holm[i],
        significant: holm[i] < settings.alpha && t.c > t.b,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::tests::{Fake, tables};

    #[test]
    fn an_expansion_is_paired_with_its_chunks_alone_and_with_the_best_single_size() {
        // eight questions: 64 alone finds 2, its parent 8; 512 alone finds 5
        let (mut rows, questions) = tables(&[
            Fake::new(
                "f-64",
                64,
                300.0,
                [1., 1., 0., 0., 0., 0., 0., 0.].into(),
                vec![0.2; 8],
            ),
            Fake::new("f-64+p", 64, 900.0, vec![1.; 8], vec![0.2; 8]),
            Fake::new(
                "f-512",
                512,
                950.0,
                [1., 1., 1., 1., 1., 0., 0., 0.].into(),
                vec![0.2; 8],
            ),
        ]);
        rows[1].expand = "parent:1024".into();
        let settings = SelectionSettings::default();
        let e = compare(&rows, &questions, &settings).unwrap();
        assert_eq!(e.rows.len(), 1);
        let c = &e.rows[0];
        assert_eq!(
            (c.config_id.as_str(), c.baseline_id.as_str()),
            ("f-64+p", "f-64")
        );
        assert_eq!((c.n_questions, c.delta_span_recall), (8, 0.75));
        // six questions better with the parent, none worse: p = 2 × 0.5⁶ = 0.03125
        assert_eq!((c.sign_b, c.sign_c), (0, 6));
        assert!((c.sign_p - 0.03125).abs() < 1e-12, "{}", c.sign_p);
        // against the best single size (512: 5 of 8), better on 3, worse on none: p = 0.25
        let b = &e.best[0];
        assert_eq!(
            (b.config_id.as_str(), b.single_id.as_str()),
            ("f-64+p", "f-512")
        );
        assert_eq!((b.better, b.worse), (3, 0));
        assert!((b.p_holm - 0.25).abs() < 1e-12, "{}", b.p_holm);
        assert!(!b.significant);
        // no expanded row: no comparison
        rows[1].expand = NONE.into();
        assert!(compare(&rows, &questions, &settings).is_none());
    }

    #[test]
    fn an_expansion_that_sent_its_chunks_alone_is_no_best_expansion() {
        // 512's parents are its chunks: the same ranges and tokens for every question, and the
        // same 5 of 8; 64's parents find 4 of 8 where its chunks alone find 2
        let four = || [1., 1., 1., 1., 0., 0., 0., 0.].into();
        let five = || [1., 1., 1., 1., 1., 0., 0., 0.].into();
        let fake = |id, size, tpq, recall, ranges| Fake {
            ranges,
            ..Fake::new(id, size, tpq, recall, vec![0.2; 8])
        };
        let (mut rows, questions) = tables(&[
            fake(
                "f-64",
                64,
                300.0,
                [1., 1., 0., 0., 0., 0., 0., 0.].into(),
                "0-10",
            ),
            fake("f-64+p", 64, 900.0, four(), "0-40"),
            fake("f-512", 512, 950.0, five(), "0-100"),
            fake("f-512+p", 512, 950.0, five(), "0-100"),
        ]);
        rows[1].expand = "parent:1024".into();
        rows[3].expand = "parent:1024".into();
        let settings = SelectionSettings::default();
        let e = compare(&rows, &questions, &settings).unwrap();
        let same: Vec<(&str, u8)> = e
            .rows
            .iter()
            .map(|c| (c.config_id.as_str(), c.same_as_none))
            .collect();
        assert_eq!(same, [("f-64+p", 0), ("f-512+p", 1)]);
        // f-512+p has the highest span recall of the expanded rows, but measures no expansion
        let b = &e.best[0];
        assert_eq!(
            (b.config_id.as_str(), b.single_id.as_str()),
            ("f-64+p", "f-512")
        );
        // only the no-op left: no best expansion
        rows[1].expand = NONE.into();
        let e = compare(&rows, &questions, &settings).unwrap();
        assert_eq!((e.rows.len(), e.best.len()), (1, 0));
    }
}
