//! The sections of report.md and report.html as typed blocks ([`crate::report::doc`]), made from
//! the run's [`Outcome`]: the decision first (in one sentence a reviewer can check against
//! selection.csv, then the pick at every cut of the ranked list when the sweep has context
//! budgets), then the rule, the table of every configuration at the deciding cut, the
//! diagnoses, the pick by question type, how to reproduce the run, and the prefix comparison.
//! The judge's section is the outcome's judge slot (see [`crate::report::outcome::JudgeSlot`]).

mod body;
mod decision;

use super::doc::Section;
use super::outcome::Outcome;
use super::prefix;

/// Every section made here, in report order: [`main`], then the prefix comparison when there is
/// one.
pub fn sections(outcome: &Outcome) -> Vec<Section> {
    let mut out = main(outcome);
    out.extend(prefix::section(&outcome.prefixes, &outcome.settings));
    out
}

/// The sections from the decision to "Reproduce".
pub fn main(outcome: &Outcome) -> Vec<Section> {
    let mut out = vec![
        decision::decision(outcome),
        body::rule(&outcome.selection),
        body::configurations(&outcome.selection),
        body::diagnoses(&outcome.selection),
    ];
    out.extend(body::by_type(&outcome.selection));
    out.push(body::reproduce(outcome));
    out
}

/// A number with up to four decimals, trailing zeros dropped.
fn fmt_num(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A value with its interval: `0.950 [0.875, 1.000]`.
fn with_ci(x: f64, lo: f64, hi: f64) -> String {
    format!("{x:.3} [{lo:.3}, {hi:.3}]")
}

/// A share as a whole percentage: 0.9 → "90%".
fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::fmt_p;

    #[test]
    fn numbers_drop_trailing_zeros() {
        assert_eq!(fmt_num(3.0000000000000004), "3");
        assert_eq!(fmt_num(0.02), "0.02");
        assert_eq!(fmt_num(2.5), "2.5");
        assert_eq!(fmt_p(0.0386), "= 0.039");
        assert_eq!(with_ci(-0.4, -0.59, -0.3), "-0.400 [-0.590, -0.300]");
        assert_eq!(fmt_p(0.0001), "< 0.001");
        assert_eq!(pct(0.9), "90%");
    }
}
