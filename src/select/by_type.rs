//! What the "winner by question type" diagnosis advises: when the grid has an expansion
//! ([`crate::expand`]), the measured answer (the cheapest expanded configuration that is
//! non-inferior within δ to each type's best on that type's questions, or the nearest one when
//! none is); without one, to sweep one.

use super::text::thousands;
use super::types::{Selection, TypePick};
use crate::stats::Class;

/// The flag that would measure the advice.
pub const SWEEP_EXPANSION: &str = "--expand none,neighbours:1,parent:1024";

/// One expanded configuration on one type: "fact: span recall 0.900, Δ −0.020, lower bound
/// −0.080 (non-inferior)" or "fact: its best".
fn on_type(t: &TypePick, e: usize) -> Option<String> {
    let (_, recall, vs) = t.expanded.iter().find(|(i, _, _)| *i == e)?;
    Some(match vs {
        None => format!(
            "{}: span recall {recall:.3}, the type's best",
            t.question_type
        ),
        Some(v) => format!(
            "{}: span recall {recall:.3}, Δ {:+.3} against the type's best, one-sided lower \
             bound {:+.3} ({})",
            t.question_type,
            v.ni.mean_difference,
            v.ni.lower,
            v.ni.class.name()
        ),
    })
}

/// Whether expanded configuration `e` is the best or non-inferior on type `t`.
fn serves(t: &TypePick, e: usize) -> bool {
    t.expanded
        .iter()
        .find(|(i, _, _)| *i == e)
        .is_some_and(|(_, _, vs)| vs.is_none_or(|v| v.ni.class == Class::NonInferior))
}

/// The smallest one-sided lower bound of an expanded configuration's difference from the
/// types' best, over the types (0 where it is the best).
fn worst_lower(sel: &Selection, e: usize) -> f64 {
    sel.by_type
        .iter()
        .filter_map(|t| t.expanded.iter().find(|(i, _, _)| *i == e))
        .map(|(_, _, vs)| vs.map_or(0.0, |v| v.ni.lower))
        .fold(f64::INFINITY, f64::min)
}

/// The advice of the "winner by question type" diagnosis (see the module documentation), built
/// on `general` (the advice without a measurement).
pub fn advice(sel: &Selection, general: &str) -> String {
    let expanded: Vec<usize> = sel
        .by_type
        .first()
        .map(|t| t.expanded.iter().map(|(i, _, _)| *i).collect())
        .unwrap_or_default();
    if expanded.is_empty() {
        return format!("{general}; sweep {SWEEP_EXPANSION} to measure both");
    }
    let delta = sel.settings.delta;
    let parts = |e: usize| {
        sel.by_type
            .iter()
            .filter_map(|t| on_type(t, e))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let tokens = |e: usize| sel.configs[e].tokens_per_query;
    let serving = expanded
        .iter()
        .copied()
        .filter(|&e| sel.by_type.iter().all(|t| serves(t, e)))
        .min_by(|&a, &b| tokens(a).total_cmp(&tokens(b)).then(a.cmp(&b)));
    match serving {
        Some(e) => format!(
            "the grid measured the answer: `{}` is non-inferior within δ = {delta} to the best \
             on every question type at this cut, at {} tokens per query ({}; paired t \
             bounds at one-sided α = {}), so small-to-big retrieval serves every type where no \
             single size does",
            sel.configs[e].config_id,
            thousands(tokens(e)),
            parts(e),
            sel.settings.alpha
        ),
        None => {
            let nearest = expanded
                .iter()
                .copied()
                .max_by(|&a, &b| worst_lower(sel, a).total_cmp(&worst_lower(sel, b)))
                .expect("at least one expanded configuration");
            format!(
                "no expansion swept is shown non-inferior within δ = {delta} to the best on \
                 every question type at this cut; the nearest is `{}` ({}); {general}",
                sel.configs[nearest].config_id,
                parts(nearest)
            )
        }
    }
}
