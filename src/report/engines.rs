//! The "Your retriever against exact cosine" section of report.md and report.html, rendered
//! from the selection's engine comparison ([`crate::select::engines`]).

use super::doc::{Align, Block, DocSection, Prose, Table};
use super::paired_text::{Columns, before_after, change, counts_p, explained};
use crate::select::SelectionSettings;
use crate::select::engines::EngineComparison;

/// The section: what the columns mean, one row per configuration of an external retriever
/// with a `dense` twin.
pub fn section(rows: &[EngineComparison], settings: &SelectionSettings) -> DocSection {
    let conf = format!("{:.0}", settings.confidence * 100.0);
    let intro = explained(
        "Each configuration retrieved by an external retriever against the same configuration \
         retrieved by exact cosine (dense): the same chunks and the same embeddings, paired on \
         the same questions (retriever_comparison.csv has every column). For an engine that \
         searches the vectors approximately (an HNSW index), the difference is what approximate \
         search loses or gains. ",
        &conf,
        &Columns {
            delta: "engine − exact",
            counts: "b/c",
            counted: "count the questions hit only by exact cosine / only by the engine; ",
            test: "is the exact McNemar test on hit",
        },
    );
    DocSection::new(
        "Your retriever against exact cosine",
        vec![Block::Para(intro), Block::Table(table(rows, &conf))],
    )
}

fn table(rows: &[EngineComparison], conf: &str) -> Table {
    use Align::{Default as L, Right as R};
    let head = vec![
        "retriever".to_string(),
        "strategy".into(),
        "size".into(),
        "prefix".into(),
        "span recall exact → engine".into(),
        format!("Δ span recall [{conf}% CI]"),
        "hit exact → engine".into(),
        "b/c, p".into(),
        "MRR exact → engine".into(),
    ];
    let rows = rows
        .iter()
        .map(|c| {
            [
                match c.rerank.as_str() {
                    "none" => c.retriever.clone(),
                    _ => format!("{}+rerank", c.retriever),
                },
                c.strategy.clone(),
                c.chunk_size.to_string(),
                c.prefix.clone(),
                before_after(c.span_recall_exact, c.span_recall),
                change(
                    c.delta_span_recall,
                    c.delta_span_recall_lo,
                    c.delta_span_recall_hi,
                ),
                before_after(c.hit_rate_exact, c.hit_rate),
                counts_p(c.mcnemar_b, c.mcnemar_c, c.mcnemar_p),
                before_after(c.mrr_exact, c.mrr),
            ]
            .into_iter()
            .map(Prose::text)
            .collect()
        })
        .collect();
    Table {
        head,
        align: vec![L, L, R, L, L, L, L, L, L],
        rows,
    }
}
