//! Why a configuration was kept or dropped, with the numbers, under each rule.

use super::plateau::{Plateau, Rule, VsBest};
use super::text::{fmt_p, fmt3, planning_words, trim};
use super::types::{POWER, SelectionSettings, Status};
use crate::stats::Class;
use crate::sweep::SweepRow;

/// Why configuration `i` was kept or dropped, with the numbers; a dropped configuration judged as
/// a challenger is introduced as one.
pub(super) fn reason(
    p: &Plateau,
    i: usize,
    rows: &[SweepRow],
    s: &SelectionSettings,
    status: Status,
) -> String {
    let out = if status == Status::Challenger {
        "challenger (outside the plateau)"
    } else {
        "dropped"
    };
    let recall = p.span_recall[i];
    let recall_fail = format!(
        "span recall {} < floor {} (best {} − {})",
        fmt3(recall),
        fmt3(p.recall_floor),
        fmt3(p.best_recall),
        trim(s.recall_tolerance)
    );
    let versus = |t: &VsBest| {
        format!(
            "vs best `{}`: higher on {} questions, lower on {}, sign test Holm p {}",
            rows[p.best].config_id,
            t.this_better,
            t.best_better,
            fmt_p(t.p_holm)
        )
    };
    let place = match p.rank_of(i) {
        Some(1) => "cheapest kept".to_string(),
        Some(rank) => format!("rank {rank} by tokens per query"),
        None => String::new(),
    };
    match p.rule {
        Rule::Equivalence => match &p.vs_best[i] {
            None => format!("the best span recall ({}); {place}", fmt3(recall)),
            Some(t) => equivalence(t, s, out, &place),
        },
        Rule::Paired => {
            let sig = p.vs_best[i].filter(|t| t.significant);
            if p.kept[i] {
                let why = match &p.vs_best[i] {
                    None => "the best span recall".to_string(),
                    Some(t) => format!("not significantly worse ({})", versus(t)),
                };
                format!(
                    "on the plateau: {why}; span recall {} ≥ {}; {place}",
                    fmt3(recall),
                    fmt3(p.recall_floor)
                )
            } else {
                let mut parts = Vec::new();
                if let Some(t) = sig {
                    parts.push(format!(
                        "significantly worse than the best at α = {} ({})",
                        trim(s.alpha),
                        versus(&t)
                    ));
                }
                if !p.recall_ok[i] {
                    parts.push(recall_fail);
                }
                format!("{out}: {}", parts.join("; "))
            }
        }
        Rule::Seed => {
            let floor = p.margin_floor.unwrap_or(f64::NEG_INFINITY);
            let margin = p.margin[i];
            let margin_fail = format!(
                "margin {} < floor {} (best {} − {}% of |best|)",
                fmt3(margin),
                fmt3(floor),
                fmt3(p.best_margin),
                trim(s.margin_tolerance * 100.0)
            );
            if p.kept[i] && p.fallback {
                format!(
                    "kept on span recall alone (no configuration passed both tests); {place}; {margin_fail}"
                )
            } else if p.kept[i] {
                format!(
                    "inside the plateau (margin {} ≥ {}, span recall {} ≥ {}); {place}",
                    fmt3(margin),
                    fmt3(floor),
                    fmt3(recall),
                    fmt3(p.recall_floor)
                )
            } else {
                match (p.margin_ok[i], p.recall_ok[i]) {
                    (false, false) => format!("{out}: {margin_fail}; {recall_fail}"),
                    (false, true) => format!("{out}: {margin_fail}"),
                    (true, false) => format!("{out}: {recall_fail}"),
                    (true, true) => out.to_string(),
                }
            }
        }
    }
}

/// The equivalence rule's reason for a configuration compared with the best by `t`.
fn equivalence(t: &VsBest, s: &SelectionSettings, out: &str, place: &str) -> String {
    let ni = &t.ni;
    let level = trim((1.0 - s.alpha) * 100.0);
    let diff = format!("mean difference to the best {}", fmt3(ni.mean_difference));
    let delta = trim(s.delta);
    match ni.class {
        Class::NonInferior => format!(
            "non-inferior within δ = {delta} ({diff}, one-sided {level}% lower bound {} ≥ −{delta}); \
             {place}",
            fmt3(ni.lower)
        ),
        Class::Worse => format!(
            "{out}: worse than the best by more than δ = {delta} ({diff}, one-sided {level}% upper \
             bound {} < −{delta})",
            fmt3(ni.upper)
        ),
        Class::Undetermined => {
            let worse = ni.probability_worse().map_or(String::new(), |p| {
                format!("P(worse by more than δ) = {p:.2}; ")
            });
            format!(
                "{out}: undetermined within δ = {delta} ({diff}, one-sided {level}% bounds {} to {} \
                 straddle −{delta}); {worse}{} at α = {} and {}% power",
                fmt3(ni.lower),
                fmt3(ni.upper),
                planning_words(ni.questions_needed(POWER), ni.n),
                trim(s.alpha),
                trim(POWER * 100.0),
            )
        }
    }
}
