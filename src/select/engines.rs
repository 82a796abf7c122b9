//! An external retriever against chunksweep's exact cosine ([`crate::retrieval::external`]):
//! each configuration retrieved by the user's engine paired with the same configuration
//! retrieved by `dense` (same strategy, size, overlap, prefix, reranking and cut: the same
//! chunks and the same embeddings), on the same questions. For an engine that searches the
//! vectors approximately (an HNSW index), the change of span recall is what approximate search
//! loses (or, by chance, gains) against exact search; with a paired bootstrap interval and an
//! exact McNemar test on hit. The report renders it (retriever_comparison.csv and a section).

use crate::select::paired::{ByConfig, Factor, twins_but};
use std::str::FromStr;

use serde::Serialize;

use super::types::SelectionSettings;
use crate::sweep::grid::RetrieverKind;
use crate::sweep::rows::{QuestionRow, SweepRow};

/// One row of retriever_comparison.csv: a configuration of an external retriever against the
/// same configuration under exact cosine. Deltas are engine − exact. Flat on purpose.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineComparison {
    /// The external retriever's name.
    pub retriever: String,
    /// Chunking strategy.
    pub strategy: String,
    /// chunk_size in tokenizer units.
    pub chunk_size: usize,
    /// chunk_overlap in tokenizer units.
    pub chunk_overlap: usize,
    /// Contextual prefix (both configurations).
    pub prefix: String,
    /// Reranker model, or `none` (both configurations).
    pub rerank: String,
    /// The cut: `k` or `budget`.
    pub cut: String,
    /// top_k (0 for a budget cut).
    pub top_k: usize,
    /// The budget of a budget cut.
    pub budget_tokens: Option<usize>,
    /// The engine's configuration at the cut.
    pub config_id: String,
    /// The same configuration under `dense`.
    pub exact_id: String,
    /// Questions paired.
    pub n_questions: usize,
    /// Macro span recall at the cut under exact cosine.
    pub span_recall_exact: f64,
    /// Under the engine.
    pub span_recall: f64,
    /// span_recall − span_recall_exact.
    pub delta_span_recall: f64,
    /// Paired bootstrap lower bound of the delta.
    pub delta_span_recall_lo: f64,
    /// Paired bootstrap upper bound.
    pub delta_span_recall_hi: f64,
    /// Hit rate under exact cosine.
    pub hit_rate_exact: f64,
    /// Under the engine.
    pub hit_rate: f64,
    /// Questions hit under exact cosine and missed by the engine.
    pub mcnemar_b: u64,
    /// Questions hit by the engine and missed under exact cosine.
    pub mcnemar_c: u64,
    /// Exact two-sided McNemar p-value on hit.
    pub mcnemar_p: f64,
    /// MRR at the cut under exact cosine.
    pub mrr_exact: f64,
    /// Under the engine.
    pub mrr: f64,
}

fn is_external(retriever: &str) -> bool {
    RetrieverKind::from_str(retriever).is_ok_and(RetrieverKind::is_external)
}

/// Every row of an external retriever cut at `budget` (`None`: top k) paired with its `dense`
/// twin (rows without one are left out), in sweep.csv's order. Empty when the sweep has no
/// external retriever or no `dense` twin.
pub fn compare(
    rows: &[SweepRow],
    questions: &[QuestionRow],
    budget: Option<usize>,
    settings: &SelectionSettings,
) -> Vec<EngineComparison> {
    let at: Vec<&SweepRow> = rows.iter().filter(|r| r.budget_tokens == budget).collect();
    if !at.iter().any(|r| is_external(&r.retriever)) {
        return Vec::new();
    }
    let by_config = ByConfig::new(questions);
    let mut out = Vec::new();
    for row in at.iter().filter(|r| is_external(&r.retriever)) {
        let dense = RetrieverKind::Dense.name();
        let Some(exact) = at
            .iter()
            .find(|b| b.retriever == dense && twins_but(b, row, Factor::Retriever))
        else {
            continue;
        };
        let p = by_config.pair(&exact.config_id, &row.config_id, settings);
        out.push(EngineComparison {
            retriever: row.retriever.clone(),
            strategy: row.strategy.clone(),
            chunk_size: row.chunk_size,
            chunk_overlap: row.chunk_overlap,
            prefix: row.prefix.clone(),
            rerank: row.rerank.clone(),
            cut: row.cut.clone(),
            top_k: row.top_k,
            budget_tokens: row.budget_tokens,
            config_id: row.config_id.clone(),
            exact_id: exact.config_id.clone(),
            n_questions: p.n_questions,
            span_recall_exact: exact.span_recall,
            span_recall: row.span_recall,
            delta_span_recall: row.span_recall - exact.span_recall,
            delta_span_recall_lo: p.delta_lo,
            delta_span_recall_hi: p.delta_hi,
            hit_rate_exact: exact.hit_rate,
            hit_rate: row.hit_rate,
            mcnemar_b: p.mcnemar_b,
            mcnemar_c: p.mcnemar_c,
            mcnemar_p: p.mcnemar_p,
            mrr_exact: exact.mrr,
            mrr: row.mrr,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::tests::{Fake, tables};

    #[test]
    fn an_engine_row_is_paired_with_its_exact_twin() {
        // four questions: exact cosine hits all four, the engine misses one
        let (mut rows, questions) = tables(&[
            Fake::new(
                "fixed-64-dense",
                64,
                300.0,
                vec![1., 1., 1., 1.],
                vec![0.2; 4],
            ),
            Fake::new(
                "fixed-64-hnsw",
                64,
                300.0,
                vec![1., 1., 1., 0.],
                vec![0.2; 4],
            ),
            Fake::new(
                "fixed-128-hnsw",
                128,
                300.0,
                vec![1., 1., 1., 0.],
                vec![0.2; 4],
            ),
        ]);
        rows[0].retriever = "dense".into();
        rows[1].retriever = "hnsw".into();
        rows[2].retriever = "hnsw".into();
        let c = compare(&rows, &questions, None, &SelectionSettings::default());
        // the 128 row has no dense twin
        assert_eq!(c.len(), 1);
        let c = &c[0];
        assert_eq!(
            (c.config_id.as_str(), c.exact_id.as_str()),
            ("fixed-64-hnsw", "fixed-64-dense")
        );
        assert_eq!(c.n_questions, 4);
        assert_eq!(c.delta_span_recall, -0.25);
        assert_eq!((c.mcnemar_b, c.mcnemar_c), (1, 0));
        // one discordant pair: p = 1
        assert_eq!(c.mcnemar_p, 1.0);
        assert!(c.delta_span_recall_lo <= -0.25 && c.delta_span_recall_hi <= 0.0);
        // an expanded engine row is no twin of the dense row sending its chunks alone
        let mut expanded = rows.clone();
        expanded[1].expand = "neighbours:1".into();
        assert!(compare(&expanded, &questions, None, &SelectionSettings::default()).is_empty());
        rows[1].retriever = "bm25".into();
        rows[2].retriever = "bm25".into();
        assert!(compare(&rows, &questions, None, &SelectionSettings::default()).is_empty());
    }
}
