//! The "Reranking" section of report.md and report.html, rendered from the selection's rerank
//! comparison ([`crate::select::rerank`]).

use super::doc::{Align, Block, DocSection, Prose, Table};
use super::paired_text::{Columns, before_after, change, counts_p, explained};
use crate::select::SelectionSettings;
use crate::select::rerank::{RerankComparison, Reranking};

/// The "Reranking" section: what the columns mean, one row per reranked configuration, and
/// whether reranking changes the pick.
pub fn section(reranking: &Reranking, settings: &SelectionSettings) -> DocSection {
    let conf = format!("{:.0}", settings.confidence * 100.0);
    let intro = explained(
        "Each reranked configuration against the same retriever, strategy, size, prefix and cut \
         without reranking, paired on the same questions (rerank_comparison.csv has every \
         column). The reranker reorders the first stage's top candidates (rerank.depth); the \
         cut is read from the reordered list. ",
        &conf,
        &Columns {
            delta: "reranked − not reranked",
            counts: "b/c",
            counted: "count the questions hit only without / only with reranking; ",
            test: "is the exact McNemar test on hit",
        },
    );
    let mut blocks = vec![
        Block::Para(intro),
        Block::Table(table(&reranking.rows, &conf)),
    ];
    let p = &reranking.picks;
    let picked = |id: &Option<String>, size: Option<usize>| match (id, size) {
        (Some(id), Some(size)) => format!("`{id}` (chunk size {size})"),
        _ => "none (the selection could not be made)".into(),
    };
    let verdict = match (p.without_size, p.with_size) {
        (Some(a), Some(b)) if a == b => "Reranking does not change the chunk size picked.",
        (Some(_), Some(_)) => "Reranking changes the chunk size picked.",
        _ => "Whether reranking changes the pick is not known.",
    };
    blocks.push(Block::Para(Prose::text(format!(
        "The selection over the configurations without reranking picks {}; over the reranked \
         ones, {}. {verdict}",
        picked(&p.without, p.without_size),
        picked(&p.with, p.with_size)
    ))));
    DocSection::new("Reranking", blocks)
}

/// One row per reranked configuration.
fn table(rows: &[RerankComparison], conf: &str) -> Table {
    use Align::{Default as L, Right as R};
    let head = vec![
        "retriever".to_string(),
        "reranker".into(),
        "strategy".into(),
        "size".into(),
        "prefix".into(),
        "span recall none → reranked".into(),
        format!("Δ span recall [{conf}% CI]"),
        "hit none → reranked".into(),
        "b/c, p".into(),
        "MRR none → reranked".into(),
    ];
    let rows = rows
        .iter()
        .map(|c| {
            [
                c.retriever.clone(),
                c.rerank.clone(),
                c.strategy.clone(),
                c.chunk_size.to_string(),
                c.prefix.clone(),
                before_after(c.span_recall_none, c.span_recall),
                change(
                    c.delta_span_recall,
                    c.delta_span_recall_lo,
                    c.delta_span_recall_hi,
                ),
                before_after(c.hit_rate_none, c.hit_rate),
                counts_p(c.mcnemar_b, c.mcnemar_c, c.mcnemar_p),
                before_after(c.mrr_none, c.mrr),
            ]
            .into_iter()
            .map(Prose::text)
            .collect()
        })
        .collect();
    Table {
        head,
        align: vec![L, L, L, R, L, L, L, L, L, L],
        rows,
    }
}
