//! The "Prefixes" section of report.md, rendered from the selection's prefix comparison
//! ([`crate::select::prefix`]).

use super::doc::{Align, Block, DocSection, Prose, Table, to_markdown};
use super::paired_text::{before_after, counts_p, p_text};
use crate::select::SelectionSettings;
use crate::select::prefix::PrefixComparison;

fn signed(x: f64) -> String {
    format!("{x:+.3}")
}

fn percent(x: f64) -> String {
    format!("{:+.0}%", x * 100.0)
}

/// The "Prefixes" section of report.md as Markdown (empty string when the table is empty), as
/// the report ends it: with a blank line.
pub fn markdown(table: &[PrefixComparison], settings: &SelectionSettings) -> String {
    section(table, settings).map_or_else(String::new, |s| to_markdown(&[s]) + "\n")
}

/// The "Prefixes" section for `table` (`None` when the table is empty): what the columns mean,
/// the table, the one-off cost of the written prefixes and a summary per prefix.
pub fn section(table: &[PrefixComparison], settings: &SelectionSettings) -> Option<DocSection> {
    if table.is_empty() {
        return None;
    }
    let conf = format!("{:.0}", settings.confidence * 100.0);
    let intro = Prose::text(
        "Each prefixed configuration against the same retriever, strategy, size and k without a \
         prefix, paired on the same questions (prefix_comparison.csv has every column). The ",
    )
    .i(Prose::text("failure rate"))
    .t(
        " is 1 − span recall@k (spans not retrieved whole) and 1 − hit@k (questions with no span \
         retrieved), at the configuration's k; ",
    )
    .i(Prose::text("reduction"))
    .t(format!(
        " is (none − prefix) / none, the measure Anthropic reports for contextual retrieval \
         (there on the top-20 failure rate), with a {conf}% paired bootstrap interval. "
    ))
    .i(Prose::text("b/c"))
    .t(" count the questions hit only without / only with the prefix; ")
    .i(Prose::text("p"))
    .t(" is the exact McNemar test on hit@k (p ≥ 0.05: the sweep cannot tell the two apart). ")
    .i(Prose::text("+tok/query"))
    .t(" is what the prefix adds to the context of each query. ")
    .i(Prose::text("Reaches"))
    .t(format!(
        " names the largest larger size without a prefix whose span recall@k this configuration \
         matches (within {}) at fewer tokens per query.",
        settings.recall_tolerance
    ));
    let mut blocks = vec![Block::Para(intro)];
    let embedded: Vec<&str> = table
        .iter()
        .map(|c| c.embed_input.as_str())
        .filter(|e| !e.is_empty())
        .collect();
    if embedded.contains(&"prefixed") {
        blocks.push(Block::Para(Prose::text(
            "Dense and hybrid embed each chunk with its prefix, as BM25 indexes it (embed_input = \
             prefixed).",
        )));
    }
    if embedded.contains(&"bare") {
        blocks.push(Block::Para(Prose::text(
            "Dense and hybrid embed the bare chunk text (embed_prefix = false, embed_input = \
             bare): for them a prefix changes only the BM25 half of hybrid and what the \
             generator sees.",
        )));
    }
    blocks.push(Block::Table(comparison_table(table, &conf)));
    blocks.extend(context_costs(table));
    blocks.push(Block::List(summaries(table, settings)));
    Some(DocSection::new("Prefixes", blocks))
}

/// The comparison table, one row per prefixed configuration.
fn comparison_table(table: &[PrefixComparison], conf: &str) -> Table {
    use Align::{Default as L, Right as R};
    let head = [
        "retriever".to_string(),
        "strategy".into(),
        "size".into(),
        "prefix".into(),
        "+tok/query".into(),
        "span failure none → prefix".into(),
        format!("reduction [{conf}% CI]"),
        "hit@k failure none → prefix".into(),
        "reduction".into(),
        "b/c, p".into(),
        format!("Δ margin [{conf}% CI]"),
        "reaches".into(),
    ];
    let rows = table
        .iter()
        .map(|c| {
            let reaches = match (c.reaches_size, c.reaches_tokens_per_query) {
                (Some(size), Some(tpq)) => format!(
                    "{size} ({:.3} at {} tok/query; p {})",
                    c.reaches_span_recall.unwrap_or_default(),
                    crate::select::thousands(tpq),
                    c.reaches_mcnemar_p.map_or("—".into(), p_text)
                ),
                _ => "—".into(),
            };
            let ci = match (c.span_failure_reduction_lo, c.span_failure_reduction_hi) {
                (Some(lo), Some(hi)) => format!(" [{}, {}]", percent(lo), percent(hi)),
                _ => String::new(),
            };
            [
                c.retriever.clone(),
                c.strategy.clone(),
                c.chunk_size.to_string(),
                c.prefix.clone(),
                format!("{:+.0}", c.tokens_per_query - c.tokens_per_query_none),
                before_after(c.span_failure_none, c.span_failure),
                format!(
                    "{}{ci}",
                    c.span_failure_reduction.map_or("—".into(), percent)
                ),
                before_after(c.hit_failure_none, c.hit_failure),
                c.hit_failure_reduction.map_or("—".into(), percent),
                counts_p(c.mcnemar_b, c.mcnemar_c, c.mcnemar_p),
                format!(
                    "{} [{}, {}]",
                    signed(c.delta_margin),
                    signed(c.delta_margin_lo),
                    signed(c.delta_margin_hi)
                ),
                reaches,
            ]
            .into_iter()
            .map(Prose::text)
            .collect()
        })
        .collect();
    Table {
        head: head.to_vec(),
        align: vec![L, L, R, L, R, L, L, L, R, L, L, L],
        rows,
    }
}

/// The one-off cost of writing the llm_context prefixes, once per chunking (nothing when no
/// prefix was written).
fn context_costs(table: &[PrefixComparison]) -> Vec<Block> {
    let written: Vec<&PrefixComparison> = table.iter().filter(|c| c.context_calls > 0).collect();
    if written.is_empty() {
        return Vec::new();
    }
    let mut seen = Vec::new();
    let mut items = Vec::new();
    for c in written {
        let key = (c.strategy.as_str(), c.chunk_size, c.chunk_overlap);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        items.push(Prose::text(format!(
            "{} {}: {} calls, {} tokens, {}",
            c.strategy,
            c.chunk_size,
            crate::select::thousands(c.context_calls as f64),
            crate::select::thousands(c.context_tokens as f64),
            c.context_cost_usd.map_or(
                "cost unknown (no price in [llm.models])".into(),
                |u| format!("${u:.4}")
            )
        )));
    }
    vec![
        Block::Para(Prose::text(
            "One-off cost of writing the llm_context prefixes (one call per distinct chunk, \
             cached or not):",
        )),
        Block::List(items),
    ]
}

/// A summary per prefix, in first-appearance order.
fn summaries(table: &[PrefixComparison], settings: &SelectionSettings) -> Vec<Prose> {
    let mut prefixes: Vec<&str> = Vec::new();
    for c in table {
        if !prefixes.contains(&c.prefix.as_str()) {
            prefixes.push(&c.prefix);
        }
    }
    let alpha = 1.0 - settings.confidence;
    prefixes
        .into_iter()
        .map(|p| summary(p, table, alpha))
        .collect()
}

/// What prefix `p` does over its rows of `table`, at significance level `alpha`.
fn summary(p: &str, table: &[PrefixComparison], alpha: f64) -> Prose {
    let rows: Vec<&PrefixComparison> = table.iter().filter(|c| c.prefix == p).collect();
    let up = rows.iter().filter(|c| c.delta_span_recall > 0.0).count();
    let down = rows.iter().filter(|c| c.delta_span_recall < 0.0).count();
    let sig_up = rows
        .iter()
        .filter(|c| c.mcnemar_p < alpha && c.mcnemar_c > c.mcnemar_b)
        .count();
    let sig_down = rows
        .iter()
        .filter(|c| c.mcnemar_p < alpha && c.mcnemar_b > c.mcnemar_c)
        .count();
    let mean_delta = rows.iter().map(|c| c.delta_span_recall).sum::<f64>() / rows.len() as f64;
    let reductions: Vec<f64> = rows
        .iter()
        .filter_map(|c| c.span_failure_reduction)
        .collect();
    let mean_reduction = if reductions.is_empty() {
        "—".to_string()
    } else {
        percent(reductions.iter().sum::<f64>() / reductions.len() as f64)
    };
    let mean_tok = rows
        .iter()
        .map(|c| c.tokens_per_query - c.tokens_per_query_none)
        .sum::<f64>()
        / rows.len() as f64;
    let reach: Vec<String> = rows
        .iter()
        .filter_map(|c| {
            c.reaches_size.map(|s| {
                format!(
                    "{} {} {} reaches {} ({} vs {} tok/query)",
                    c.retriever,
                    c.strategy,
                    c.chunk_size,
                    s,
                    crate::select::thousands(c.tokens_per_query),
                    crate::select::thousands(c.reaches_tokens_per_query.unwrap_or_default())
                )
            })
        })
        .collect();
    Prose::new().b(Prose::text(format!("{p}:"))).t(format!(
        " span recall@k up at {up} and down at {down} of {} retriever × strategy × size pairs \
         (mean Δ {}; mean span-failure reduction {mean_reduction}); hit@k significantly better \
         at {sig_up}, worse at {sig_down} (McNemar, p < {:.2}); {:+.0} tokens per query on \
         average. {}",
        rows.len(),
        signed(mean_delta),
        alpha,
        mean_tok,
        if reach.is_empty() {
            "No smaller size with this prefix reaches a larger size without one at fewer tokens \
             per query."
                .to_string()
        } else {
            format!(
                "Smaller with the prefix, larger without: {}.",
                reach.join("; ")
            )
        }
    ))
}
