//! The rerank comparison: each reranked configuration against the same configuration without
//! reranking (same strategy, size, overlap, prefix, retriever and cut), paired on the same
//! questions: span recall@k with a paired bootstrap interval of its change, hit@k with an exact
//! McNemar test, MRR; and whether reranking changes the pick, from the selection made again
//! over the configurations without reranking and over the reranked ones. The report renders it
//! (rerank_comparison.csv and a section of report.md).

use crate::select::paired::{ByConfig, Factor, twins_but};
use serde::Serialize;

use super::types::SelectionSettings;
use crate::retrieval::rerank::NO_RERANK;
use crate::sweep::rows::{QuestionRow, SweepRow};

/// One row of rerank_comparison.csv: a reranked configuration against its first stage alone.
/// Deltas are reranked − not reranked. Flat on purpose.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RerankComparison {
    /// Chunking strategy.
    pub strategy: String,
    /// chunk_size in tokenizer units.
    pub chunk_size: usize,
    /// chunk_overlap in tokenizer units.
    pub chunk_overlap: usize,
    /// Contextual prefix (both configurations).
    pub prefix: String,
    /// The first-stage retriever (both configurations).
    pub retriever: String,
    /// The reranker model.
    pub rerank: String,
    /// The cut: `k` or `budget`.
    pub cut: String,
    /// top_k (0 for a budget cut).
    pub top_k: usize,
    /// The budget of a budget cut.
    pub budget_tokens: Option<usize>,
    /// The reranked configuration at the cut.
    pub config_id: String,
    /// The same configuration without reranking.
    pub baseline_id: String,
    /// Questions paired (present in both).
    pub n_questions: usize,
    /// Macro span recall at the cut without reranking.
    pub span_recall_none: f64,
    /// With it.
    pub span_recall: f64,
    /// span_recall − span_recall_none.
    pub delta_span_recall: f64,
    /// Paired bootstrap lower bound of the delta (same question draws for both).
    pub delta_span_recall_lo: f64,
    /// Paired bootstrap upper bound.
    pub delta_span_recall_hi: f64,
    /// hit rate at the cut without reranking.
    pub hit_rate_none: f64,
    /// With it.
    pub hit_rate: f64,
    /// Questions hit without reranking and missed with it.
    pub mcnemar_b: u64,
    /// Questions hit with reranking and missed without it.
    pub mcnemar_c: u64,
    /// Exact two-sided McNemar p-value on hit.
    pub mcnemar_p: f64,
    /// MRR at the cut without reranking.
    pub mrr_none: f64,
    /// With it.
    pub mrr: f64,
    /// Tokens per query without reranking.
    pub tokens_per_query_none: f64,
    /// With it.
    pub tokens_per_query: f64,
}

/// Whether reranking changes the pick: the selection's pick among the configurations without
/// reranking and among the reranked ones, at the deciding cut.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RerankPicks {
    /// The pick without reranking (`None` when the selection could not be made).
    pub without: Option<String>,
    /// Its chunk size.
    pub without_size: Option<usize>,
    /// The pick among the reranked configurations.
    pub with: Option<String>,
    /// Its chunk size.
    pub with_size: Option<usize>,
}

/// The rerank comparison of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reranking {
    /// Every reranked configuration at the deciding cut, in sweep.csv's order.
    pub rows: Vec<RerankComparison>,
    /// The picks with and without reranking.
    pub picks: RerankPicks,
}

/// Compares every reranked row of `rows` cut at `budget` (`None`: top k) with its twin without
/// reranking (rows without a twin are left out), and makes the selection again on each side for
/// the picks. `None` when no row is reranked.
pub fn compare(
    rows: &[SweepRow],
    questions: &[QuestionRow],
    budget: Option<usize>,
    settings: &SelectionSettings,
) -> Option<Reranking> {
    let at: Vec<&SweepRow> = rows.iter().filter(|r| r.budget_tokens == budget).collect();
    if !at.iter().any(|r| r.rerank != NO_RERANK) {
        return None;
    }
    let by_config = ByConfig::new(questions);
    let mut out = Vec::new();
    for row in at.iter().filter(|r| r.rerank != NO_RERANK) {
        let Some(base) = at
            .iter()
            .find(|b| b.rerank == NO_RERANK && twins_but(b, row, Factor::Rerank))
        else {
            continue;
        };
        let p = by_config.pair(&base.config_id, &row.config_id, settings);
        out.push(RerankComparison {
            strategy: row.strategy.clone(),
            chunk_size: row.chunk_size,
            chunk_overlap: row.chunk_overlap,
            prefix: row.prefix.clone(),
            retriever: row.retriever.clone(),
            rerank: row.rerank.clone(),
            cut: row.cut.clone(),
            top_k: row.top_k,
            budget_tokens: row.budget_tokens,
            config_id: row.config_id.clone(),
            baseline_id: base.config_id.clone(),
            n_questions: p.n_questions,
            span_recall_none: base.span_recall,
            span_recall: row.span_recall,
            delta_span_recall: row.span_recall - base.span_recall,
            delta_span_recall_lo: p.delta_lo,
            delta_span_recall_hi: p.delta_hi,
            hit_rate_none: base.hit_rate,
            hit_rate: row.hit_rate,
            mcnemar_b: p.mcnemar_b,
            mcnemar_c: p.mcnemar_c,
            mcnemar_p: p.mcnemar_p,
            mrr_none: base.mrr,
            mrr: row.mrr,
            tokens_per_query_none: base.tokens_per_query,
            tokens_per_query: row.tokens_per_query,
        });
    }
    let pick = |reranked: bool| {
        let side: Vec<SweepRow> = at
            .iter()
            .filter(|r| (r.rerank != NO_RERANK) == reranked)
            .map(|r| (*r).clone())
            .collect();
        let ids: std::collections::HashSet<&str> =
            side.iter().map(|r| r.config_id.as_str()).collect();
        let qs: Vec<QuestionRow> = questions
            .iter()
            .filter(|q| ids.contains(q.config_id.as_str()))
            .cloned()
            .collect();
        super::select_cuts(&side, &qs, settings).ok().map(|c| {
            let w = c.primary().winner();
            (w.config_id.clone(), w.chunk_size)
        })
    };
    let (without, with) = (pick(false), pick(true));
    Some(Reranking {
        rows: out,
        picks: RerankPicks {
            without_size: without.as_ref().map(|w| w.1),
            without: without.map(|w| w.0),
            with_size: with.as_ref().map(|w| w.1),
            with: with.map(|w| w.0),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::tests::{Fake, tables};

    #[test]
    fn a_reranked_configuration_is_paired_with_its_first_stage() {
        // four questions: the first stage hits two, the reranked one all four
        let (mut rows, mut questions) = tables(&[
            Fake::new("fixed-64", 64, 300.0, vec![1., 1., 0., 0.], vec![0.2; 4]),
            Fake::new("fixed-64+r", 64, 300.0, vec![1., 1., 1., 1.], vec![0.4; 4]),
        ]);
        rows[1].rerank = "m".into();
        let settings = SelectionSettings::default();
        let r = compare(&rows, &questions, None, &settings).unwrap();
        assert_eq!(r.rows.len(), 1);
        let c = &r.rows[0];
        assert_eq!(
            (c.config_id.as_str(), c.baseline_id.as_str()),
            ("fixed-64+r", "fixed-64")
        );
        assert_eq!(c.n_questions, 4);
        assert_eq!(c.delta_span_recall, 0.5);
        assert_eq!((c.mcnemar_b, c.mcnemar_c), (0, 2));
        // two discordant pairs, both one way: p = 2 × 0.5² = 0.5
        assert!((c.mcnemar_p - 0.5).abs() < 1e-12, "{}", c.mcnemar_p);
        assert!(c.delta_span_recall_lo <= 0.5 && c.delta_span_recall_hi >= 0.5);
        assert_eq!(r.picks.without.as_deref(), Some("fixed-64"));
        assert_eq!(r.picks.with.as_deref(), Some("fixed-64+r"));
        // no reranked row: no comparison
        rows[1].rerank = NO_RERANK.into();
        questions.truncate(4);
        assert!(compare(&rows, &questions, None, &settings).is_none());
    }
}
