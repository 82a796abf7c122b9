//! The gate's verdict on the questions both runs share, from their per-question span recall
//! (statistics from [`crate::stats`]):
//!
//! - **regression** when the run under test is significantly worse (the one-sided exact sign
//!   test, [`sign_test_worse`], p < α), or worse than the baseline by more than the margin δ
//!   ([`non_inferiority`]'s class `worse`), or its mean span recall dropped by more than
//!   `max_drop`; and in every case at least two questions got worse, so that a one-question
//!   wobble never fails the gate on its own;
//! - **pass** when it is non-inferior within δ (the one-sided (1 − α) lower bound of the mean
//!   paired difference is at least −δ);
//! - **inconclusive** otherwise: neither test can tell, and the figure of questions that would
//!   show non-inferiority at α and 80 % power if the candidate were as good as the baseline is
//!   given ([`NonInferiority::questions_needed`]). It passes,
//!   with a warning, unless `fail_on_inconclusive`.

use serde::Serialize;

use super::compare::QuestionPair;
use crate::select::DEFAULT_DELTA;
use crate::stats::{Class, NonInferiority, OneSidedSign, non_inferiority, sign_test_worse};

/// The power the questions-needed figure is computed for.
pub const POWER: f64 = 0.8;

/// The gate's settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GateSettings {
    /// Non-inferiority margin δ on span recall (recall units, > 0; default
    /// [`DEFAULT_DELTA`], the selection's). check.json keeps its older name, `margin`.
    #[serde(rename = "margin")]
    pub delta: f64,
    /// One-sided significance level α of both tests, in (0, 1) (default 0.05: its `Default`,
    /// which `check --alpha` reads).
    pub alpha: f64,
    /// Largest drop of mean span recall that passes, in recall units, ≥ 0 (default 0.10: its
    /// `Default`, which `check --max-drop` reads).
    pub max_drop: f64,
    /// Whether an inconclusive check fails (exit 1) instead of passing with a warning.
    pub fail_on_inconclusive: bool,
}

impl Default for GateSettings {
    fn default() -> Self {
        GateSettings {
            delta: DEFAULT_DELTA,
            alpha: crate::stats::DEFAULT_ALPHA,
            max_drop: 0.10,
            fail_on_inconclusive: false,
        }
    }
}

impl GateSettings {
    /// Checks the settings' ranges.
    ///
    /// # Errors
    /// A message naming the flag and its range.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.delta > 0.0 && self.delta < 1.0) {
            return Err(format!(
                "--delta {} must be a span recall difference strictly between 0 and 1",
                self.delta
            ));
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(format!(
                "--alpha {} must be strictly between 0 and 1",
                self.alpha
            ));
        }
        if !(self.max_drop.is_finite() && self.max_drop >= 0.0) {
            return Err(format!(
                "--max-drop {} must be a span recall difference of at least 0",
                self.max_drop
            ));
        }
        Ok(())
    }
}

/// What the gate decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RetrievalOutcome {
    /// Worse: the check fails (exit 1).
    Regression,
    /// Non-inferior within δ: the check passes.
    Pass,
    /// Neither test can tell: passes with a warning (fails with `fail_on_inconclusive`).
    Inconclusive,
}

/// Why a regression is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RegressionReason {
    /// The one-sided sign test rejected "not worse" at α.
    SignificantlyWorse,
    /// The non-inferiority bound shows it worse by more than δ.
    WorseThanMargin,
    /// Mean span recall dropped by more than `max_drop`.
    LargeDrop,
}

/// The verdict and the figures behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetrievalVerdict {
    /// The decision.
    pub outcome: RetrievalOutcome,
    /// Why, for a regression (empty otherwise).
    pub reasons: Vec<RegressionReason>,
    /// Whether the command fails (exit 1): a regression, or an inconclusive check with
    /// `fail_on_inconclusive`.
    pub fails: bool,
    /// Questions compared.
    pub n: usize,
    /// The baseline's mean span recall on them.
    pub baseline_span_recall: f64,
    /// The mean span recall under test on them.
    pub candidate_span_recall: f64,
    /// Drop of the mean, baseline − now (negative: a gain).
    pub drop: f64,
    /// The one-sided sign test (questions worse, questions better, p).
    pub sign: OneSidedSign,
    /// The non-inferiority comparison within δ.
    pub non_inferiority: NonInferiority,
    /// Questions that would settle an inconclusive check at α and 80 % power (in all).
    pub questions_needed: Option<u64>,
}

/// The verdict on `pairs` (at least one) with `settings`.
///
/// # Panics
/// If `settings` are out of range ([`GateSettings::validate`]).
pub fn decide(pairs: &[QuestionPair], settings: &GateSettings) -> RetrievalVerdict {
    let baseline: Vec<f64> = pairs.iter().map(|p| p.baseline.span_recall).collect();
    let candidate: Vec<f64> = pairs.iter().map(|p| p.candidate.span_recall).collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let (before, now) = (mean(&baseline), mean(&candidate));
    let sign = sign_test_worse(&baseline, &candidate);
    let ni = non_inferiority(&baseline, &candidate, settings.delta, settings.alpha);
    let drop = before - now;
    let mut reasons = Vec::new();
    // A regression needs two questions that got worse: one alone is a wobble.
    if sign.reference_better >= 2 {
        if sign.p_value < settings.alpha {
            reasons.push(RegressionReason::SignificantlyWorse);
        }
        if ni.class == Class::Worse {
            reasons.push(RegressionReason::WorseThanMargin);
        }
        if drop > settings.max_drop + 1e-12 {
            reasons.push(RegressionReason::LargeDrop);
        }
    }
    let outcome = if !reasons.is_empty() {
        RetrievalOutcome::Regression
    } else if ni.class == Class::NonInferior {
        RetrievalOutcome::Pass
    } else {
        RetrievalOutcome::Inconclusive
    };
    RetrievalVerdict {
        fails: outcome == RetrievalOutcome::Regression
            || (outcome == RetrievalOutcome::Inconclusive && settings.fail_on_inconclusive),
        questions_needed: (outcome == RetrievalOutcome::Inconclusive)
            .then(|| ni.questions_needed(POWER))
            .flatten(),
        outcome,
        reasons,
        n: pairs.len(),
        baseline_span_recall: before,
        candidate_span_recall: now,
        drop,
        sign,
        non_inferiority: ni,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::compare::Retrieved;
    use crate::expand::Expand;

    /// 40 questions at span recall 1 in the baseline; `now` gives the ones that differ.
    fn pairs(now: &[(usize, f64)]) -> Vec<QuestionPair> {
        (0..40)
            .map(|i| {
                let recall = now.iter().find(|(q, _)| *q == i).map_or(1.0, |(_, r)| *r);
                let side = |span_recall| Retrieved {
                    span_recall,
                    unreachable: false,
                    first_correct_rank: Some(1),
                    chunks_retrieved: 3,
                    first_correct_taken: true,
                    expand: Expand::None,
                };
                QuestionPair {
                    question_id: format!("q-{i:03}"),
                    baseline: side(1.0),
                    candidate: side(recall),
                    fate: None,
                }
            })
            .collect()
    }

    #[test]
    fn unchanged_rows_pass_as_non_inferior() {
        let v = decide(&pairs(&[]), &GateSettings::default());
        assert_eq!((v.outcome, v.fails), (RetrievalOutcome::Pass, false));
        assert_eq!(v.drop, 0.0);
        assert_eq!(v.non_inferiority.lower, 0.0);
    }

    #[test]
    fn one_question_of_forty_lost_is_inconclusive_and_passes_with_the_questions_needed() {
        // Δ = −0.025, s = √(0.975/39) = 0.158114, s/√40 = 0.025: lower bound
        // −0.025 − 1.684875 · 0.025 = −0.067122 < −0.05; upper 0.017122 ≥ −0.05: undetermined.
        // Questions needed, planned at a true difference of 0 (not the observed −0.025):
        // ((1.644854 + 0.841621) · 0.158114 / 0.05)² = 61.83 → 62.
        let v = decide(&pairs(&[(7, 0.0)]), &GateSettings::default());
        assert_eq!(v.outcome, RetrievalOutcome::Inconclusive);
        assert!(!v.fails && v.reasons.is_empty());
        assert_eq!(v.sign.reference_better, 1);
        assert!((v.sign.p_value - 0.5).abs() < 1e-12, "{v:?}");
        assert!((v.non_inferiority.lower + 0.067122).abs() < 1e-5, "{v:?}");
        assert_eq!(v.questions_needed, Some(62));
        // even with a floor below one question's drop, one question never fails alone
        let strict = GateSettings {
            max_drop: 0.0,
            ..GateSettings::default()
        };
        assert_eq!(
            decide(&pairs(&[(7, 0.0)]), &strict).outcome,
            RetrievalOutcome::Inconclusive
        );
        let failing = GateSettings {
            fail_on_inconclusive: true,
            ..GateSettings::default()
        };
        assert!(decide(&pairs(&[(7, 0.0)]), &failing).fails);
    }

    #[test]
    fn three_questions_lost_pass_the_tests_but_not_a_max_drop_of_0_05() {
        // 3 worse, 0 better: one-sided p = 1/8 = 0.125 ≥ 0.05; drop 0.075.
        let three = pairs(&[(1, 0.0), (2, 0.0), (3, 0.0)]);
        let v = decide(&three, &GateSettings::default());
        assert!((v.sign.p_value - 0.125).abs() < 1e-12, "{v:?}");
        assert!((v.drop - 0.075).abs() < 1e-12);
        assert_eq!(v.outcome, RetrievalOutcome::Inconclusive);
        let floor = GateSettings {
            max_drop: 0.05,
            ..GateSettings::default()
        };
        let v = decide(&three, &floor);
        assert_eq!(
            (v.outcome, v.reasons.as_slice()),
            (
                RetrievalOutcome::Regression,
                &[RegressionReason::LargeDrop][..]
            )
        );
        assert!(v.fails);
    }

    #[test]
    fn six_questions_lost_are_significantly_worse() {
        // 6 worse, 0 better: p = 1/64 = 0.015625 < 0.05.
        let lost: Vec<(usize, f64)> = (0..6).map(|q| (q, 0.0)).collect();
        let v = decide(&pairs(&lost), &GateSettings::default());
        assert_eq!(v.outcome, RetrievalOutcome::Regression);
        assert!(
            v.reasons.contains(&RegressionReason::SignificantlyWorse),
            "{v:?}"
        );
        assert!((v.sign.p_value - 0.015625).abs() < 1e-12);
    }
}
