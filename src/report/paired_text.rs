//! What the paired comparison sections of the report (reranking, an external retriever against
//! exact cosine, expansions, prefixes) write alike: their introduction's explanation of the
//! columns, and their cells (a value before → after, a change with its interval, the counts
//! and p-value of a paired test).

use super::doc::Prose;

/// A p-value as the comparison tables show it: `< 0.001`, else three decimals.
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// `0.800 → 0.900`: a value of the configuration compared with, then of the one under test.
pub fn before_after(before: f64, after: f64) -> String {
    format!("{before:.3} → {after:.3}")
}

/// `+0.100 [+0.025, +0.175]`: a change with its interval.
pub fn change(delta: f64, lo: f64, hi: f64) -> String {
    format!("{delta:+.3} [{lo:+.3}, {hi:+.3}]")
}

/// `3/1, p 0.625`: a paired test's counts (each side's own wins) and its p-value.
pub fn counts_p(b: u64, c: u64, p: f64) -> String {
    format!("{b}/{c}, p {}", p_text(p))
}

/// How a section's columns read, for [`explained`].
pub struct Columns<'a> {
    /// The change's direction: `reranked − not reranked`.
    pub delta: &'a str,
    /// The counts' column: `b/c`, `−/+`.
    pub counts: &'a str,
    /// What they count, after the column: `count the questions hit only without / only with
    /// reranking; `.
    pub counted: &'a str,
    /// The test: `is the exact McNemar test on hit`.
    pub test: &'a str,
}

/// `intro`, then what the columns mean: "*Δ span recall* is {delta} with a {conf}% paired
/// bootstrap interval; *{counts}* {counted}*p* {test} (p ≥ 0.05: the sweep cannot tell the two
/// apart)."
pub fn explained(intro: &str, conf: &str, columns: &Columns<'_>) -> Prose {
    Prose::text(intro)
        .i(Prose::text("Δ span recall"))
        .t(format!(
            " is {} with a {conf}% paired bootstrap interval; ",
            columns.delta
        ))
        .i(Prose::text(columns.counts))
        .t(format!(" {}", columns.counted))
        .i(Prose::text("p"))
        .t(format!(
            " {} (p ≥ 0.05: the sweep cannot tell the two apart).",
            columns.test
        ))
}
