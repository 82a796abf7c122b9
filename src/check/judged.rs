//! The answer-quality part of the gate (`check --judge`): the baseline's judged answers for its
//! pick against the run under test's answers to the same questions, criterion by criterion, with
//! a one-sided exact McNemar test (McNemar 1947, exact binomial form; [`sign_test_worse`] on 0/1
//! outcomes). A criterion gates only when the baseline's planted controls showed a judge that
//! can be trusted on it ([`crate::judge::trust`]) and the judge is the one those controls
//! measured; otherwise it is reported as unable to gate, with the reason, and changes nothing.
//!
//! - **regression** when at least two answers went from pass to fail and the test rejects "not
//!   worse" at α (p < α): with no answer better, that takes five answers worse at α = 0.05;
//! - **not worse**: the test does not reject. That is not "as good": with few paired answers
//!   only a large drop can be seen;
//! - **cannot gate**: the judge's verdicts on the criterion cannot be trusted (or were not
//!   measured); its figures are shown for information;
//! - **unfinished**: some answers under test have no verdict yet (rerun the same command).
//!
//! A pair counts when both verdicts are pass or fail; a pair with an error verdict on either
//! side is left out and counted in `errors`; `n/a` (a criterion needing a reference answer,
//! without one) is left out.

use std::collections::HashMap;

use serde::Serialize;

use crate::judge::JudgeQuestionRow;
use crate::judge::Verdict;
use crate::judge::trust::CriterionTrust;
use crate::stats::{OneSidedSign, sign_test_worse};

/// What one criterion's verdicts say about the run under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgeOutcome {
    /// Significantly more answers went from pass to fail than back (at least two): the check
    /// fails.
    Regression,
    /// The test does not show it worse (which is not the same as showing it as good).
    NotWorse,
    /// The judge's verdicts on this criterion cannot gate (see [`CriterionGate::cannot_gate`]).
    CannotGate,
    /// Some answers under test have no verdict yet.
    Unfinished,
}

/// One criterion of the answer-quality gate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriterionGate {
    /// The criterion's name (`faithfulness`, `relevancy`, `correctness`, …).
    pub criterion: String,
    /// What its verdicts say.
    pub outcome: JudgeOutcome,
    /// Why the criterion cannot gate (`None` when it can).
    pub cannot_gate: Option<String>,
    /// Questions with a pass or fail verdict on both sides.
    pub n: usize,
    /// Of those, answers that passed in the baseline.
    pub baseline_pass: usize,
    /// Of those, answers that passed under test.
    pub candidate_pass: usize,
    /// Answers that passed in the baseline and failed under test.
    pub worse: u64,
    /// Answers that failed in the baseline and passed under test.
    pub better: u64,
    /// One-sided exact McNemar p-value of "worse": `P(X ≥ worse)`, `X ~ Binomial(worse +
    /// better, ½)`; 1 when no answer changed.
    pub p_value: f64,
    /// Questions left out because either verdict was an error.
    pub errors: usize,
    /// Of the questions compared, error verdicts in the baseline (an answer the server did not
    /// give, a verdict that could not be read).
    pub baseline_errors: usize,
    /// … and under test.
    pub candidate_errors: usize,
}

/// The answer-quality gate (check.json's `judge`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeGate {
    /// The baseline's generator model (its judge stage's, which its controls measured).
    pub generator_model: String,
    /// The baseline's judge model.
    pub judge_model: String,
    /// Questions compared: shared unchanged with the baseline and judged there for its pick.
    pub questions: usize,
    /// Of those, answers under test without a verdict row yet (0 when nothing was asked
    /// because no criterion can gate).
    pub unfinished: usize,
    /// Whether the run under test was judged at all (not when no criterion can gate).
    pub judged: bool,
    /// Per criterion, in the baseline's order.
    pub criteria: Vec<CriterionGate>,
    /// Whether a criterion is a regression.
    pub fails: bool,
}

/// The fewest answers that must go from pass to fail, with none going back, before the
/// one-sided exact McNemar test can reject at level `alpha`: the least `w` with `½^w < α`, and
/// at least two (a regression needs two answers worse). 5 at α = 0.05, 7 at α = 0.01.
pub fn fewest_worse_to_fail(alpha: f64) -> u64 {
    let mut w = 2;
    while 0.5f64.powi(w as i32) >= alpha {
        w += 1;
    }
    w
}

impl JudgeGate {
    /// Whether some answers under test still lack a verdict (and nothing fails): the check is
    /// unfinished.
    pub fn is_unfinished(&self) -> bool {
        !self.fails && self.unfinished > 0
    }

    /// The criteria that can gate.
    pub fn gating(&self) -> impl Iterator<Item = &CriterionGate> {
        self.criteria.iter().filter(|c| c.cannot_gate.is_none())
    }
}

/// What the baseline says of its judge, per criterion: `None` when the criterion's verdicts can
/// gate, else why not. `changed` names what differs between the judge now and the one the
/// baseline's controls measured (models, prompts, caps, seed, mode), if anything does;
/// `controls` is the baseline's `[judge] controls`; `trust` is [`crate::judge::trust::trust`]
/// of the baseline's judge_checks.csv.
pub fn standing(
    criteria: &[String],
    trust: &[CriterionTrust],
    controls: bool,
    changed: Option<&str>,
) -> Vec<(String, Option<String>)> {
    criteria
        .iter()
        .map(|c| {
            let why = if let Some(what) = changed {
                Some(format!(
                    "the judge is not the one the baseline's planted controls measured ({what})"
                ))
            } else if !controls {
                Some(
                    "the baseline's planted controls were off (`[judge] controls = false`), so nothing shows that its judge can tell a failing answer from a passing one".to_string(),
                )
            } else {
                match trust.iter().find(|t| &t.criterion == c) {
                    Some(t) if t.controls.tnr.is_none() && t.doubts.is_empty() => Some(
                        "the baseline holds no planted control of it, so nothing shows that the judge can tell a failing answer from a passing one".to_string(),
                    ),
                    Some(t) if !t.can_confirm() => Some(format!(
                        "in the baseline's planted controls {}",
                        t.doubts.join("; ")
                    )),
                    Some(_) => None,
                    None => Some(
                        "the baseline holds no planted control of it, so nothing shows that the judge can tell a failing answer from a passing one".to_string(),
                    ),
                }
            };
            (c.clone(), why)
        })
        .collect()
}

/// The gate on `questions` (ids, golden-set order) from the baseline's rows for its pick and the
/// run under test's rows (each one configuration), per criterion of `standing`, at one-sided
/// level `alpha`; `judged` says whether the run under test was asked (when it was not, every
/// criterion is `cannot_gate`). `models` are the baseline's generator and judge.
pub fn gate(
    standing: &[(String, Option<String>)],
    questions: &[String],
    (baseline, candidate): (&[JudgeQuestionRow], &[JudgeQuestionRow]),
    alpha: f64,
    (models, judged): ((String, String), bool),
) -> JudgeGate {
    let by_id = |rows: &[JudgeQuestionRow]| -> HashMap<String, JudgeQuestionRow> {
        rows.iter()
            .map(|r| (r.question_id.clone(), r.clone()))
            .collect()
    };
    let (before, now) = (by_id(baseline), by_id(candidate));
    let unfinished = if judged {
        questions.iter().filter(|q| !now.contains_key(*q)).count()
    } else {
        0
    };
    let criteria: Vec<CriterionGate> = standing
        .iter()
        .map(|(criterion, why)| {
            let mut pairs = Vec::new();
            let (mut errors, mut baseline_errors, mut candidate_errors) = (0, 0, 0);
            for q in questions {
                let (Some(b), Some(c)) = (before.get(q), now.get(q)) else {
                    continue;
                };
                let (vb, vc) = (b.verdict(criterion), c.verdict(criterion));
                baseline_errors += usize::from(vb == Verdict::Error);
                candidate_errors += usize::from(vc == Verdict::Error);
                if vb == Verdict::Error || vc == Verdict::Error {
                    errors += 1;
                    continue;
                }
                if let (Some(x), Some(y)) = (vb.outcome(), vc.outcome()) {
                    pairs.push((x, y));
                }
            }
            let score = |p: bool| if p { 1.0 } else { 0.0 };
            let first: Vec<f64> = pairs.iter().map(|&(x, _)| score(x)).collect();
            let second: Vec<f64> = pairs.iter().map(|&(_, y)| score(y)).collect();
            let OneSidedSign {
                reference_better: worse,
                candidate_better: better,
                p_value,
            } = sign_test_worse(&first, &second);
            let outcome = if why.is_some() || !judged {
                JudgeOutcome::CannotGate
            } else if worse >= 2 && p_value < alpha {
                JudgeOutcome::Regression
            } else if unfinished > 0 {
                JudgeOutcome::Unfinished
            } else {
                JudgeOutcome::NotWorse
            };
            CriterionGate {
                criterion: criterion.clone(),
                outcome,
                cannot_gate: why.clone(),
                n: pairs.len(),
                baseline_pass: pairs.iter().filter(|p| p.0).count(),
                candidate_pass: pairs.iter().filter(|p| p.1).count(),
                worse,
                better,
                p_value,
                errors,
                baseline_errors,
                candidate_errors,
            }
        })
        .collect();
    JudgeGate {
        generator_model: models.0,
        judge_model: models.1,
        questions: questions.len(),
        unfinished,
        judged,
        fails: criteria
            .iter()
            .any(|c| c.outcome == JudgeOutcome::Regression),
        criteria,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::check::test_check;
    use crate::judge::rows::test_row;
    use crate::judge::trust::trust;

    /// Row of question `q` with faithfulness `f` and relevancy `r` (correctness `na`).
    fn row(q: usize, f: &str, r: &str) -> JudgeQuestionRow {
        test_row("cfg", q, f, r, "na")
    }

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|q| format!("q{q}")).collect()
    }

    fn trusted() -> Vec<(String, Option<String>)> {
        vec![("faithfulness".into(), None), ("relevancy".into(), None)]
    }

    fn models() -> (String, String) {
        ("gen".into(), "judge".into())
    }

    #[test]
    fn six_answers_lost_are_a_regression_and_one_is_not() {
        let baseline: Vec<_> = (0..10).map(|q| row(q, "pass", "pass")).collect();
        // faithfulness: q0..q5 fail now (6 worse, 0 better: p = 1/64); relevancy: q0 fails and
        // q7 is an error, left out (9 pairs, 1 worse: p = 1/2).
        let candidate: Vec<_> = (0..10)
            .map(|q| {
                let f = if q < 6 { "fail" } else { "pass" };
                let r = match q {
                    0 => "fail",
                    7 => "error",
                    _ => "pass",
                };
                row(q, f, r)
            })
            .collect();
        let g = gate(
            &trusted(),
            &ids(10),
            (&baseline, &candidate),
            0.05,
            (models(), true),
        );
        let f = &g.criteria[0];
        assert_eq!(
            (f.outcome, f.n, f.worse, f.better),
            (JudgeOutcome::Regression, 10, 6, 0)
        );
        assert!((f.p_value - 1.0 / 64.0).abs() < 1e-12, "{f:?}");
        assert_eq!((f.baseline_pass, f.candidate_pass), (10, 4));
        let r = &g.criteria[1];
        assert_eq!(
            (r.outcome, r.n, r.worse, r.errors),
            (JudgeOutcome::NotWorse, 9, 1, 1)
        );
        assert_eq!((r.baseline_errors, r.candidate_errors), (0, 1));
        assert!((r.p_value - 0.5).abs() < 1e-12);
        assert!(g.fails && !g.is_unfinished());
    }

    #[test]
    fn five_answers_worse_are_the_fewest_that_can_fail_at_0_05() {
        // ½⁴ = 0.0625 ≥ 0.05 > ½⁵ = 0.03125; ½⁶ = 0.015625 ≥ 0.01 > ½⁷ = 0.0078125
        assert_eq!(fewest_worse_to_fail(0.05), 5);
        assert_eq!(fewest_worse_to_fail(0.01), 7);
        assert_eq!(fewest_worse_to_fail(0.5), 2);
    }

    #[test]
    fn four_worse_and_none_better_is_not_significant_at_0_05() {
        // p = 1/16 = 0.0625 ≥ 0.05: not worse, though every change was for the worse.
        let baseline: Vec<_> = (0..8).map(|q| row(q, "pass", "pass")).collect();
        let candidate: Vec<_> = (0..8)
            .map(|q| row(q, if q < 4 { "fail" } else { "pass" }, "pass"))
            .collect();
        let g = gate(
            &trusted(),
            &ids(8),
            (&baseline, &candidate),
            0.05,
            (models(), true),
        );
        assert_eq!(g.criteria[0].outcome, JudgeOutcome::NotWorse);
        assert!((g.criteria[0].p_value - 0.0625).abs() < 1e-12);
        assert!(!g.fails);
    }

    #[test]
    fn an_untrusted_criterion_never_gates_and_missing_rows_leave_it_unfinished() {
        let baseline: Vec<_> = (0..10).map(|q| row(q, "pass", "pass")).collect();
        // q8, q9 have no row yet; faithfulness lost on six answers but cannot gate.
        let candidate: Vec<_> = (0..8)
            .map(|q| row(q, if q < 6 { "fail" } else { "pass" }, "pass"))
            .collect();
        let standing = vec![
            ("faithfulness".to_string(), Some("controls off".to_string())),
            ("relevancy".to_string(), None),
        ];
        let g = gate(
            &standing,
            &ids(10),
            (&baseline, &candidate),
            0.05,
            (models(), true),
        );
        assert_eq!(g.unfinished, 2);
        assert_eq!(g.criteria[0].outcome, JudgeOutcome::CannotGate);
        assert_eq!(g.criteria[0].worse, 6);
        assert_eq!(g.criteria[1].outcome, JudgeOutcome::Unfinished);
        assert!(!g.fails && g.is_unfinished());
        assert_eq!(g.gating().count(), 1);
    }

    #[test]
    fn the_judge_gates_only_where_the_baselines_controls_trust_it() {
        let names: Vec<String> = ["faithfulness", "relevancy", "correctness"]
            .map(String::from)
            .to_vec();
        let mut rows = Vec::new();
        for _ in 0..6 {
            // faithfulness: an always-pass judge; relevancy: caught every planted failure
            rows.push(test_check("other_context", "faithfulness", "fail", "pass"));
            rows.push(test_check("other_answer", "relevancy", "fail", "fail"));
            rows.push(test_check(
                "reference_relevant",
                "relevancy",
                "pass",
                "pass",
            ));
        }
        let t = trust(&rows, &names, 0.5, 0.4);
        let s = standing(&names, &t, true, None);
        assert!(
            s[0].1.as_deref().unwrap().starts_with(
                "in the baseline's planted controls it failed 0 of 6 planted failures"
            ),
            "{s:?}"
        );
        assert_eq!(s[1].1, None);
        assert!(s[2].1.as_deref().unwrap().contains("no planted control"));
        let s = standing(&names, &t, true, Some("judge_model judge → other"));
        assert_eq!(
            s[1].1.as_deref(),
            Some(
                "the judge is not the one the baseline's planted controls measured (judge_model judge → other)"
            )
        );
        let s = standing(&names, &t, false, None);
        assert!(s[1].1.as_deref().unwrap().contains("controls were off"));
    }
}
