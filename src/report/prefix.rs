//! The "Prefixes" section of report.md, rendered from the selection's prefix comparison
//! ([`crate::select::prefix`]).

use std::fmt::Write as _;

use crate::select::SelectionSettings;
use crate::select::prefix::PrefixComparison;

fn signed(x: f64) -> String {
    format!("{x:+.3}")
}

fn percent(x: f64) -> String {
    format!("{:+.0}%", x * 100.0)
}

fn p_text(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// The "Prefixes" section of report.md for `table` (empty string when the table is empty).
pub fn markdown(table: &[PrefixComparison], settings: &SelectionSettings) -> String {
    if table.is_empty() {
        return String::new();
    }
    let mut md = String::new();
    let conf = format!("{:.0}", settings.confidence * 100.0);
    let _ = writeln!(md, "## Prefixes\n");
    let _ = writeln!(
        md,
        "Each prefixed configuration against the same retriever, strategy, size and k without a \
         prefix, paired on the same questions (prefix_comparison.csv has every column). The \
         *failure rate* is 1 − span recall@k (spans not retrieved whole) and 1 − hit@k \
         (questions with no span retrieved), at the configuration's k; *reduction* is (none − \
         prefix) / none, the measure Anthropic reports for contextual retrieval (there on the \
         top-20 failure rate), with a {conf}% paired bootstrap interval. *b/c* count the \
         questions hit only without / only with the prefix; *p* is the exact McNemar test on \
         hit@k (p ≥ 0.05: the sweep cannot tell the two apart). *+tok/query* is what the prefix \
         adds to the context of each query. *Reaches* names the largest larger size without a \
         prefix whose span recall@k this configuration matches (within {}) at fewer tokens per \
         query.\n",
        settings.recall_tolerance
    );
    let embedded: Vec<&str> = table
        .iter()
        .map(|c| c.embed_input.as_str())
        .filter(|e| !e.is_empty())
        .collect();
    if embedded.contains(&"prefixed") {
        let _ = writeln!(
            md,
            "Dense and hybrid embed each chunk with its prefix, as BM25 indexes it \
             (embed_input = prefixed).\n"
        );
    }
    if embedded.contains(&"bare") {
        let _ = writeln!(
            md,
            "Dense and hybrid embed the bare chunk text (embed_prefix = false, embed_input = \
             bare): for them a prefix changes only the BM25 half of hybrid and what the \
             generator sees.\n"
        );
    }
    let _ = writeln!(
        md,
        "| retriever | strategy | size | prefix | +tok/query | span failure none → prefix | reduction [{conf}% CI] | hit@k failure none → prefix | reduction | b/c, p | Δ margin [{conf}% CI] | reaches |"
    );
    let _ = writeln!(md, "|---|---|---:|---|---:|---|---|---|---:|---|---|---|");
    for c in table {
        let reaches = match (c.reaches_size, c.reaches_tokens_per_query) {
            (Some(size), Some(tpq)) => format!(
                "{size} ({:.3} at {:.0} tok/query; p {})",
                c.reaches_span_recall.unwrap_or_default(),
                tpq,
                c.reaches_mcnemar_p.map_or("—".into(), p_text)
            ),
            _ => "—".into(),
        };
        let ci = match (c.span_failure_reduction_lo, c.span_failure_reduction_hi) {
            (Some(lo), Some(hi)) => format!(" [{}, {}]", percent(lo), percent(hi)),
            _ => String::new(),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {:+.0} | {:.3} → {:.3} | {}{} | {:.3} → {:.3} | {} | {}/{}, p {} | {} [{}, {}] | {} |",
            c.retriever,
            c.strategy,
            c.chunk_size,
            c.prefix,
            c.tokens_per_query - c.tokens_per_query_none,
            c.span_failure_none,
            c.span_failure,
            c.span_failure_reduction.map_or("—".into(), percent),
            ci,
            c.hit_failure_none,
            c.hit_failure,
            c.hit_failure_reduction.map_or("—".into(), percent),
            c.mcnemar_b,
            c.mcnemar_c,
            p_text(c.mcnemar_p),
            signed(c.delta_margin),
            signed(c.delta_margin_lo),
            signed(c.delta_margin_hi),
            reaches
        );
    }
    let written: Vec<&PrefixComparison> = table.iter().filter(|c| c.context_calls > 0).collect();
    if !written.is_empty() {
        let _ = writeln!(
            md,
            "\nOne-off cost of writing the llm_context prefixes (one call per distinct chunk, \
             cached or not):\n"
        );
        let mut seen = Vec::new();
        for c in written {
            let key = (c.strategy.as_str(), c.chunk_size, c.chunk_overlap);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let _ = writeln!(
                md,
                "- {} {}: {} calls, {} tokens, {}",
                c.strategy,
                c.chunk_size,
                c.context_calls,
                c.context_tokens,
                c.context_cost_usd.map_or(
                    "cost unknown (no price in [llm.models])".into(),
                    |u| format!("${u:.4}")
                )
            );
        }
    }
    md.push('\n');
    // a summary per prefix
    let mut prefixes: Vec<&str> = Vec::new();
    for c in table {
        if !prefixes.contains(&c.prefix.as_str()) {
            prefixes.push(&c.prefix);
        }
    }
    let alpha = 1.0 - settings.confidence;
    for p in prefixes {
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
                        "{} {} {} reaches {} ({:.0} vs {:.0} tok/query)",
                        c.retriever,
                        c.strategy,
                        c.chunk_size,
                        s,
                        c.tokens_per_query,
                        c.reaches_tokens_per_query.unwrap_or_default()
                    )
                })
            })
            .collect();
        let _ = writeln!(
            md,
            "- **{p}:** span recall@k up at {up} and down at {down} of {} retriever × strategy \
             × size pairs (mean Δ {}; mean span-failure reduction {mean_reduction}); hit@k significantly better at {sig_up}, worse at {sig_down} \
             (McNemar, p < {:.2}); {:+.0} tokens per query on average. {}",
            rows.len(),
            signed(mean_delta),
            alpha,
            mean_tok,
            if reach.is_empty() {
                "No smaller size with this prefix reaches a larger size without one at fewer tokens per query.".to_string()
            } else {
                format!(
                    "Smaller with the prefix, larger without: {}.",
                    reach.join("; ")
                )
            }
        );
    }
    md.push('\n');
    md
}
