//! The sections of report.md and report.html as typed blocks ([`crate::report::doc`]), made from
//! the run's [`Outcome`]: the decision first (in one sentence a reviewer can check against
//! selection.csv, then the pick at every cut of the ranked list when the sweep has context
//! budgets), then the rule, the table of every configuration at the deciding cut, the
//! diagnoses, the pick by question type, how to reproduce the run, and the prefix comparison.
//! The judge's section is rendered from the outcome's judge summary by
//! [`crate::report::judge_section`].

mod body;
mod decision;
mod numbers;

use super::doc::DocSection;
use super::outcome::Outcome;
use super::prefix;

/// Every section made here, in report order: [`main`], then the prefix comparison when there is
/// one, the rerank comparison when the grid reranks ([`super::rerank`]), the expansion
/// comparison when the grid expands ([`super::expand`]), external retrievers against exact
/// cosine ([`super::engines`]), the external chunkers when there are any ([`super::chunkers`]), then the drafted
/// questions when the golden set has any ([`super::drafts`]).
pub fn sections(outcome: &Outcome) -> Vec<DocSection> {
    let mut out = main(outcome);
    out.extend(prefix::section(&outcome.prefixes, &outcome.settings));
    out.extend((outcome.reranking.as_ref()).map(|r| super::rerank::section(r, &outcome.settings)));
    out.extend((outcome.expansions.as_ref()).map(|e| super::expand::section(e, &outcome.settings)));
    if !outcome.engines.is_empty() {
        out.push(super::engines::section(&outcome.engines, &outcome.settings));
    }
    out.extend(super::chunkers::section(&outcome.chunkers));
    out.extend(outcome.drafts.as_ref().map(super::drafts::section));
    out
}

/// The sections from the decision to "Reproduce".
pub fn main(outcome: &Outcome) -> Vec<DocSection> {
    let mut out = vec![
        decision::decision(outcome),
        body::rule(&outcome.selection),
        body::configurations(&outcome.selection),
        body::diagnoses(&outcome.selection, &outcome.other_cuts),
    ];
    out.extend(body::by_type(&outcome.selection));
    out.push(body::reproduce(outcome));
    out
}
