//! What holds the pick against the configurations cheaper than it: under the `equivalence` rule
//! their classes against the best (and the questions that would settle the undetermined ones),
//! under the `paired` and `seed` rules the tests and tolerances that dropped them.

use super::plateau::Rule;
use super::text::{first_five, fmt_p, fmt3, planning_words, trim, worse_words};
use super::types::{ConfigSelection, Selection};

/// The cheaper configurations than the pick by class against the best (rule `equivalence`):
/// how many are worse by more than δ, and the undetermined ones with the questions that would
/// settle each.
fn cheaper_by_class(sel: &Selection, cheaper: &[&ConfigSelection]) -> String {
    let delta = trim(sel.settings.delta);
    let worse = cheaper
        .iter()
        .filter(|c| c.vs_best_class == "worse")
        .count();
    let mut parts = vec![format!(
        "cheaper configurations: {worse} of {} worse than the best `{}` by more than δ = {delta}",
        cheaper.len(),
        sel.best().config_id
    )];
    let undetermined: Vec<&ConfigSelection> = undetermined_cheaper(sel);
    if !undetermined.is_empty() {
        parts.push(format!(
            "{} undetermined (the data cannot tell whether they are within δ): {}",
            undetermined.len(),
            first_five(&undetermined, needed_words)
        ));
    }
    parts.join("; ")
}

/// "`id` (P(worse by more than δ) = 0.83; if it were as good as the best, about 412 questions in
/// all would show it within δ (have 276))": the probability from the data, then the planning
/// figure ([`planning_words`]).
pub fn needed_words(c: &ConfigSelection) -> String {
    let planning = planning_words(c.questions_needed, c.n_questions);
    match worse_words(c.p_worse) {
        Some(w) => format!("`{}` ({w}; {planning})", c.config_id),
        None => format!("`{}` ({planning})", c.config_id),
    }
}

/// Configurations cheaper than the pick whose class against the best is undetermined, cheapest
/// first.
pub fn undetermined_cheaper(sel: &Selection) -> Vec<&ConfigSelection> {
    let w = sel.winner();
    let mut out: Vec<&ConfigSelection> = sel
        .configs
        .iter()
        .filter(|c| c.tokens_per_query < w.tokens_per_query && c.vs_best_class == "undetermined")
        .collect();
    out.sort_by(|a, b| a.tokens_per_query.total_cmp(&b.tokens_per_query));
    out
}

/// What holds the pick against every cheaper configuration: under the paired rule each one is
/// dropped, and the weakest reason is shown (the cheaper configuration with the largest
/// Holm-adjusted p-value against the best, or the one closest to the recall floor).
pub fn cheaper_evidence(sel: &Selection) -> String {
    let w = sel.winner();
    let cheaper: Vec<&ConfigSelection> = sel
        .configs
        .iter()
        .filter(|c| c.tokens_per_query < w.tokens_per_query)
        .collect();
    if cheaper.is_empty() {
        return "no configuration is cheaper".into();
    }
    if sel.settings.rule == Rule::Equivalence {
        return cheaper_by_class(sel, &cheaper);
    }
    let significant = |c: &&&ConfigSelection| {
        c.sign_p_holm.is_some_and(|p| p < sel.settings.alpha) && c.best_better > c.this_better
    };
    let (sig, not_sig): (Vec<&ConfigSelection>, Vec<&ConfigSelection>) =
        cheaper.iter().partition(significant);
    let mut parts = vec![format!(
        "cheaper configurations: {} of {} significantly worse than the best `{}` (sign test, \
         Holm p < {})",
        sig.len(),
        cheaper.len(),
        sel.best().config_id,
        trim(sel.settings.alpha)
    )];
    if let Some(c) = sig.iter().max_by(|a, b| {
        a.sign_p_holm
            .unwrap_or(0.0)
            .total_cmp(&b.sign_p_holm.unwrap_or(0.0))
    }) {
        parts.push(format!(
            "the weakest of those is `{}` (lower on {} questions, higher on {}, Holm p {})",
            c.config_id,
            c.best_better.unwrap_or(0),
            c.this_better.unwrap_or(0),
            fmt_p(c.sign_p_holm.unwrap_or(1.0))
        ));
    }
    if sel.settings.rule == Rule::Seed && !not_sig.is_empty() {
        parts.push(format!(
            "the other {} are dropped by the seed rule (see their reasons)",
            not_sig.len()
        ));
    } else if let Some(c) = not_sig
        .iter()
        .max_by(|a, b| a.span_recall.total_cmp(&b.span_recall))
    {
        parts.push(format!(
            "the others are more than {} below the best span recall (closest: `{}` at {}, \
             floor {})",
            trim(sel.settings.recall_tolerance),
            c.config_id,
            fmt3(c.span_recall),
            fmt3(sel.recall_floor)
        ));
    }
    parts.join("; ")
}
