//! The configuration table of report.html: every configuration with its status, metrics and
//! reason, sortable by column and filterable by strategy, size, prefix and retriever (the page's
//! script reads the `data-` attributes).

use std::collections::BTreeSet;

use maud::{Markup, html};

use super::model::fmt3;
use crate::report::outcome::Outcome;
use crate::select::{ConfigSelection, Status};

/// The table with its filters, for the deciding cut.
pub fn config_table(outcome: &Outcome) -> Markup {
    let configs = &outcome.selection.configs;
    let ret = |c: &ConfigSelection| outcome.retriever(&c.config_id);
    let distinct = |f: &dyn Fn(&ConfigSelection) -> String| {
        let set: BTreeSet<(usize, String)> = configs
            .iter()
            .map(|c| {
                let v = f(c);
                (v.parse().unwrap_or(usize::MAX), v)
            })
            .collect();
        set.into_iter().map(|(_, v)| v).collect::<Vec<_>>()
    };
    let filters: [(&str, &str, Vec<String>); 4] = [
        ("strategy", "strategy", distinct(&|c| c.strategy.clone())),
        ("size", "size", distinct(&|c| c.chunk_size.to_string())),
        ("prefix", "prefix", distinct(&|c| c.prefix.clone())),
        ("retriever", "retriever", distinct(&|c| ret(c).to_string())),
    ];
    html! {
        h2 { "Configurations" }
        p .meta { "Click a column to sort; the pick is green, the other judge candidates pale green." }
        div .filters {
            @for (key, label, values) in &filters {
                label { (label) " "
                    select data-f=(key) {
                        option value="" { "all" }
                        @for v in values { option value=(v) { (v) } }
                    }
                }
            }
        }
        table #configs {
            thead { tr {
                th { "configuration" } th { "strategy" } th { "size" } th { "overlap" }
                th { "prefix" } th { "retriever" } th { "k" } th { "tokens/query" }
                th { "span recall@k" } th { "hit@k" } th { "coverage@k" } th { "margin" }
                th { "status" } th { "rank" } th { "half wins" } th { "reason" }
            } }
            tbody {
                @for c in configs {
                    tr .(status_class(c.status)) data-strategy=(c.strategy) data-size=(c.chunk_size)
                        data-prefix=(c.prefix) data-retriever=(ret(c)) {
                        td { code { (c.config_id) } }
                        td { (c.strategy) }
                        td data-v=(c.chunk_size) { (c.chunk_size) }
                        td data-v=(c.chunk_overlap) { (c.chunk_overlap) }
                        td { (c.prefix) }
                        td { (ret(c)) }
                        td data-v=(c.top_k) { (c.top_k) }
                        td data-v=(c.tokens_per_query) { (crate::select::thousands(c.tokens_per_query)) }
                        td data-v=(c.span_recall) title=(format!("[{:.3}, {:.3}]", c.span_recall_lo, c.span_recall_hi)) { (fmt3(c.span_recall)) }
                        td data-v=(c.hit_rate) { (fmt3(c.hit_rate)) }
                        td data-v=(c.coverage) { (fmt3(c.coverage)) }
                        td data-v=(c.margin) { (fmt3(c.margin)) }
                        td { (status_class(c.status)) }
                        td data-v=(c.rank.map_or(f64::NAN, |r| r as f64)) { (c.rank.map(|r| r.to_string()).unwrap_or_default()) }
                        td data-v=(c.win_share) { (format!("{:.0}%", c.win_share * 100.0)) }
                        td .meta { (c.reason) }
                    }
                }
            }
        }
    }
}

fn status_class(s: Status) -> &'static str {
    match s {
        Status::Winner => "winner",
        Status::Candidate => "candidate",
        Status::Kept => "kept",
        Status::Challenger => "challenger",
        Status::Dropped => "dropped",
    }
}
