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

/// What one criterion's verdicts say about the run under test. In check.json it is two fields:
/// `outcome` (its word: `regression`, `not_worse`, `cannot_gate`, `unfinished`,
/// `inconclusive`) and `cannot_gate` (the reason, or null).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CriterionOutcome {
    /// Significantly more answers went from pass to fail than back (at least two): the check
    /// fails.
    Regression,
    /// The test does not show it worse (which is not the same as showing it as good).
    NotWorse,
    /// The judge's verdicts on this criterion cannot gate, for `reason`.
    CannotGate {
        /// Why not (the judge is not the one measured, controls off or not trusted, …).
        reason: String,
    },
    /// Answers under test still without a verdict decide it: rerun the same command.
    Unfinished,
    /// Error verdicts decide it: with them all against the change it would be a regression,
    /// with them all for it, not. Passes with a warning unless `--fail-on-inconclusive`.
    Inconclusive,
}

impl CriterionOutcome {
    /// Its word in check.json.
    pub fn word(&self) -> &'static str {
        match self {
            CriterionOutcome::Regression => "regression",
            CriterionOutcome::NotWorse => "not_worse",
            CriterionOutcome::CannotGate { .. } => "cannot_gate",
            CriterionOutcome::Unfinished => "unfinished",
            CriterionOutcome::Inconclusive => "inconclusive",
        }
    }

    /// Why the criterion cannot gate, when it cannot.
    pub fn cannot_gate(&self) -> Option<&str> {
        match self {
            CriterionOutcome::CannotGate { reason } => Some(reason),
            _ => None,
        }
    }
}

impl Serialize for CriterionOutcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("outcome", self.word())?;
        m.serialize_entry("cannot_gate", &self.cannot_gate())?;
        m.end()
    }
}

/// One criterion of the answer-quality gate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriterionGate {
    /// The criterion's name (`faithfulness`, `relevancy`, `correctness`, …).
    pub criterion: String,
    /// What its verdicts say (check.json's `outcome` and `cannot_gate`).
    #[serde(flatten)]
    pub outcome: CriterionOutcome,
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
    /// One-sided exact McNemar p-value of "worse" on the `n` pairs: `P(X ≥ worse)`, `X ~
    /// Binomial(worse + better, ½)`; 1 when no answer changed.
    pub p_value: f64,
    /// Pairs in no count: an error verdict on either side, or no verdict yet under test.
    pub unknown: usize,
    /// The p-value with every unknown pair counted against the change (passed in the baseline,
    /// failed now): the outcome is "not worse" only if this one does not reject.
    pub p_value_if_unknown_worse: f64,
    /// Pairs with an error verdict on either side.
    pub errors: usize,
    /// The most answers that could have gone from pass to fail: those that passed in the
    /// baseline, and the pairs in no count that may have passed there and do not pass now.
    /// Under [`fewest_worse_to_fail`] the test could not have shown a regression.
    pub at_most_worse: usize,
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
    /// Whether a criterion is a regression, or, with `--fail-on-inconclusive`, one is
    /// inconclusive or none can gate.
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

/// How the gate is asked: the one-sided level α, whether an inconclusive criterion (or a judge
/// that can gate on none) fails the check, and whether the run under test was judged at all
/// (when it was not, every criterion is `cannot_gate`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Asked {
    /// One-sided significance level, in (0, 1).
    pub alpha: f64,
    /// `--fail-on-inconclusive`.
    pub fail_on_inconclusive: bool,
    /// Whether the answers under test were asked for.
    pub judged: bool,
}

/// `rows` by question id.
fn by_question(rows: &[JudgeQuestionRow]) -> HashMap<&str, &JudgeQuestionRow> {
    rows.iter().map(|r| (r.question_id.as_str(), r)).collect()
}

/// The McNemar test of one criterion with every unknown pair (an error verdict on either side,
/// an answer under test not yet judged) set one way: `(worse, better, p)`.
fn test_with_unknowns(
    known: &[(bool, bool)],
    unknown: &[(Option<bool>, Option<bool>)],
    for_candidate: bool,
) -> OneSidedSign {
    let score = |p: bool| if p { 1.0 } else { 0.0 };
    let pairs = known.iter().copied().chain(unknown.iter().map(|&(b, c)| {
        // in the candidate's favour: what is unknown failed in the baseline and passed now
        (b.unwrap_or(!for_candidate), c.unwrap_or(for_candidate))
    }));
    let (first, second): (Vec<f64>, Vec<f64>) = pairs.map(|(x, y)| (score(x), score(y))).unzip();
    sign_test_worse(&first, &second)
}

/// The judged answers a gate compares, each side one configuration.
#[derive(Debug, Clone, Copy)]
pub struct Compared<'a> {
    /// The baseline's rows for its pick.
    pub baseline: &'a [JudgeQuestionRow],
    /// The run under test's rows.
    pub candidate: &'a [JudgeQuestionRow],
}

/// The models of a judge stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeModels {
    /// The model that generated the answers.
    pub generator: String,
    /// The model that gave the verdicts.
    pub judge: String,
}

/// The gate on `questions` (ids, golden-set order) from the rows `compared`, per criterion of
/// `standing`; `models` are the baseline's generator and judge.
///
/// A pair with an error verdict on either side, or whose answer under test has no row yet, is
/// *unknown*: it is in no count, and the outcome holds only if it holds however the unknown
/// pairs turn out. A regression is declared when the test rejects even with every unknown pair
/// in the candidate's favour; "not worse" when it does not reject even with every unknown pair
/// against it; otherwise the criterion is unfinished (answers still to judge) or inconclusive
/// (the error verdicts decide it).
pub fn gate(
    standing: &[(String, Option<String>)],
    questions: &[String],
    compared: Compared<'_>,
    models: JudgeModels,
    asked: Asked,
) -> JudgeGate {
    let rows = ByQuestion {
        baseline: by_question(compared.baseline),
        candidate: by_question(compared.candidate),
    };
    let unfinished = if asked.judged {
        questions
            .iter()
            .filter(|q| !rows.candidate.contains_key(q.as_str()))
            .count()
    } else {
        0
    };
    let criteria: Vec<CriterionGate> = standing
        .iter()
        .map(|(criterion, why)| criterion_gate(criterion, why.as_deref(), questions, &rows, asked))
        .collect();
    let inconclusive = criteria
        .iter()
        .any(|c| c.outcome == CriterionOutcome::Inconclusive)
        || criteria.iter().all(|c| c.outcome.cannot_gate().is_some());
    JudgeGate {
        generator_model: models.generator,
        judge_model: models.judge,
        questions: questions.len(),
        unfinished,
        judged: asked.judged,
        fails: criteria
            .iter()
            .any(|c| c.outcome == CriterionOutcome::Regression)
            || (asked.fail_on_inconclusive && inconclusive),
        criteria,
    }
}

/// Both sides' rows by question id.
struct ByQuestion<'a> {
    baseline: HashMap<&'a str, &'a JudgeQuestionRow>,
    candidate: HashMap<&'a str, &'a JudgeQuestionRow>,
}

/// The gate of one criterion on `questions` ([`gate`]); `why` is why it cannot gate, if so.
fn criterion_gate(
    criterion: &str,
    why: Option<&str>,
    questions: &[String],
    rows: &ByQuestion<'_>,
    asked: Asked,
) -> CriterionGate {
    let before = |q: &str| rows.baseline.get(q).copied();
    let now = |q: &str| rows.candidate.get(q).copied();
    let regression = |t: &OneSidedSign| t.reference_better >= 2 && t.p_value < asked.alpha;
    let (mut known, mut unknown) = (Vec::new(), Vec::new());
    let (mut errors, mut baseline_errors, mut candidate_errors) = (0, 0, 0);
    let mut pending = 0;
    for q in questions {
        let Some(b) = before(q) else { continue };
        let vb = b.verdict(criterion);
        if vb == Verdict::NotApplicable {
            continue;
        }
        let vc = now(q).map(|c| c.verdict(criterion));
        pending += usize::from(vc.is_none());
        baseline_errors += usize::from(vb == Verdict::Error);
        candidate_errors += usize::from(vc == Some(Verdict::Error));
        if vb == Verdict::Error || vc == Some(Verdict::Error) {
            errors += 1;
        }
        match (vb.outcome(), vc.and_then(Verdict::outcome)) {
            (Some(x), Some(y)) => known.push((x, y)),
            _ if vc == Some(Verdict::NotApplicable) => {}
            (x, y) => unknown.push((x, y)),
        }
    }
    let t = test_with_unknowns(&known, &[], true);
    let best = test_with_unknowns(&known, &unknown, true);
    let worst = test_with_unknowns(&known, &unknown, false);
    let outcome = if let Some(reason) = why {
        CriterionOutcome::CannotGate {
            reason: reason.to_string(),
        }
    } else if !asked.judged {
        CriterionOutcome::CannotGate {
            reason: "the answers under test were not judged".into(),
        }
    } else if regression(&best) {
        CriterionOutcome::Regression
    } else if !regression(&worst) {
        CriterionOutcome::NotWorse
    } else if pending > 0 {
        CriterionOutcome::Unfinished
    } else {
        CriterionOutcome::Inconclusive
    };
    CriterionGate {
        criterion: criterion.to_string(),
        outcome,
        n: known.len(),
        baseline_pass: known.iter().filter(|p| p.0).count(),
        candidate_pass: known.iter().filter(|p| p.1).count(),
        worse: t.reference_better,
        better: t.candidate_better,
        p_value: t.p_value,
        unknown: unknown.len(),
        p_value_if_unknown_worse: worst.p_value,
        at_most_worse: known.iter().filter(|p| p.0).count()
            + unknown
                .iter()
                .filter(|(b, c)| *b != Some(false) && *c != Some(true))
                .count(),
        errors,
        baseline_errors,
        candidate_errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::probes::test_probe;
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

    fn models() -> JudgeModels {
        JudgeModels {
            generator: "gen".into(),
            judge: "judge".into(),
        }
    }

    /// The gate on questions q0..q`n` with both criteria trusted, at α = 0.05.
    fn trusted_gate(
        n: usize,
        baseline: &[JudgeQuestionRow],
        candidate: &[JudgeQuestionRow],
    ) -> JudgeGate {
        gate(
            &trusted(),
            &ids(n),
            Compared {
                baseline,
                candidate,
            },
            models(),
            asked(),
        )
    }

    fn asked() -> Asked {
        Asked {
            alpha: 0.05,
            fail_on_inconclusive: false,
            judged: true,
        }
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
        let g = trusted_gate(10, &baseline, &candidate);
        let f = &g.criteria[0];
        assert_eq!(
            (f.outcome.clone(), f.n, f.worse, f.better),
            (CriterionOutcome::Regression, 10, 6, 0)
        );
        assert!((f.p_value - 1.0 / 64.0).abs() < 1e-12, "{f:?}");
        assert_eq!((f.baseline_pass, f.candidate_pass), (10, 4));
        let r = &g.criteria[1];
        assert_eq!(
            (r.outcome.clone(), r.n, r.worse, r.errors),
            (CriterionOutcome::NotWorse, 9, 1, 1)
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
        let g = trusted_gate(8, &baseline, &candidate);
        assert_eq!(g.criteria[0].outcome, CriterionOutcome::NotWorse);
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
            Compared {
                baseline: &baseline,
                candidate: &candidate,
            },
            models(),
            asked(),
        );
        assert_eq!(g.unfinished, 2);
        assert!(matches!(
            g.criteria[0].outcome,
            CriterionOutcome::CannotGate { .. }
        ));
        assert_eq!(g.criteria[0].worse, 6);
        // relevancy: 8 pairs alike; even if both answers still to judge fail (2 worse, p =
        // 0.25) it is not a regression, so it is not worse whatever they say
        assert_eq!(g.criteria[1].outcome, CriterionOutcome::NotWorse);
        assert_eq!((g.criteria[1].n, g.criteria[1].unknown), (8, 2));
        assert!((g.criteria[1].p_value_if_unknown_worse - 0.25).abs() < 1e-12);
        assert!(!g.fails && g.is_unfinished());
        assert_eq!(g.criteria[1].outcome.cannot_gate(), None);
    }

    #[test]
    fn a_regression_is_declared_only_when_no_pending_answer_could_undo_it() {
        // faithfulness: q0..q4 lost (5 worse); q5 failed in the baseline and is not judged yet.
        // If it passes now: 5 worse, 1 better, p = 7/64 = 0.109; if it fails: p = 1/32 = 0.031.
        let baseline: Vec<_> = (0..8)
            .map(|q| row(q, if q == 5 { "fail" } else { "pass" }, "pass"))
            .collect();
        let candidate: Vec<_> = (0..8)
            .filter(|&q| q != 5)
            .map(|q| row(q, if q < 5 { "fail" } else { "pass" }, "pass"))
            .collect();
        let g = trusted_gate(8, &baseline, &candidate);
        let f = &g.criteria[0];
        assert_eq!(
            (f.outcome.clone(), f.worse, f.unknown),
            (CriterionOutcome::Unfinished, 5, 1)
        );
        assert!((f.p_value - 1.0 / 32.0).abs() < 1e-12);
        assert!(!g.fails && g.is_unfinished());
        // the same with q5 passing in the baseline: it cannot undo five losses (best case a tie)
        let baseline: Vec<_> = (0..8).map(|q| row(q, "pass", "pass")).collect();
        let g = trusted_gate(8, &baseline, &candidate);
        assert_eq!(g.criteria[0].outcome, CriterionOutcome::Regression);
        assert!(g.fails);
    }

    #[test]
    fn unreadable_verdicts_under_test_are_inconclusive_never_a_pass() {
        // every verdict under test is an error: no pair is known; with them all against the
        // change 8 answers were lost (p = 1/256), with them all for it none: error verdicts
        // decide it
        let baseline: Vec<_> = (0..8).map(|q| row(q, "pass", "pass")).collect();
        let candidate: Vec<_> = (0..8).map(|q| row(q, "error", "error")).collect();
        let g = trusted_gate(8, &baseline, &candidate);
        let f = &g.criteria[0];
        assert_eq!(
            (
                f.outcome.clone(),
                f.n,
                f.unknown,
                f.errors,
                f.candidate_errors
            ),
            (CriterionOutcome::Inconclusive, 0, 8, 8, 8)
        );
        assert!((f.p_value_if_unknown_worse - 1.0 / 256.0).abs() < 1e-12);
        assert_eq!(f.at_most_worse, 8);
        assert!(!g.fails && !g.is_unfinished());
        let strict = Asked {
            fail_on_inconclusive: true,
            ..asked()
        };
        assert!(
            gate(
                &trusted(),
                &ids(8),
                Compared {
                    baseline: &baseline,
                    candidate: &candidate,
                },
                models(),
                strict
            )
            .fails
        );
        // and a judge that can gate on nothing fails under --fail-on-inconclusive too
        let none = vec![("faithfulness".to_string(), Some("controls off".to_string()))];
        let g = gate(
            &none,
            &ids(8),
            Compared {
                baseline: &baseline,
                candidate: &[],
            },
            models(),
            Asked {
                judged: false,
                ..strict
            },
        );
        assert!(g.fails);
        assert!(matches!(
            g.criteria[0].outcome,
            CriterionOutcome::CannotGate { .. }
        ));
    }

    #[test]
    fn the_judge_gates_only_where_the_baselines_controls_trust_it() {
        let names: Vec<String> = ["faithfulness", "relevancy", "correctness"]
            .map(String::from)
            .to_vec();
        let mut rows = Vec::new();
        for _ in 0..6 {
            // faithfulness: an always-pass judge; relevancy: caught every planted failure
            rows.push(test_probe("other_context", "faithfulness", "fail", "pass"));
            rows.push(test_probe("other_answer", "relevancy", "fail", "fail"));
            rows.push(test_probe(
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
