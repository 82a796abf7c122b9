//! What must hold, beyond the verdicts, before the judge's decision may confirm the pick: the
//! decision confirms only what was measured. Three gates:
//!
//! - **the judge's accuracy was measured**: every criterion that got a pass or fail verdict has
//!   planted controls in judge_checks.csv ([`super::controls`]); with `[judge] controls = false`,
//!   or for a criterion without built-in controls, nothing shows that the judge can tell a
//!   failing answer from a passing one (how well it does is [`super::trust`]'s part);
//! - **the run is finished**: no candidate × question, planted control or repeat is left
//!   unfinished ([`Gates::unfinished`]);
//! - **enough answers were judged**: every candidate has at least
//!   [`JudgeSettings::min_judged_answers`](super::settings::JudgeSettings::min_judged_answers)
//!   answers with a pass or fail verdict.
//!
//! Each gate that fails withholds the confirmation ([`JudgeDecision::withhold`]) with a sentence
//! saying what is missing; the decision's choice itself stands.

use super::controls::ControlKind;
use super::decision::JudgeDecision;
use super::probes::ProbeRow;
use super::rows::JudgeQuestionRow;
use super::table::CandidateInfo;

/// What the gates read.
pub struct Gates<'a> {
    /// The criteria (names), in report order.
    pub criteria: &'a [String],
    /// The candidates, in order.
    pub candidates: &'a [CandidateInfo],
    /// The judged questions (judge_questions.csv's rows).
    pub questions: &'a [JudgeQuestionRow],
    /// The planted controls and repeats (judge_checks.csv's rows).
    pub probes: &'a [ProbeRow],
    /// Whether planted controls were on (`[judge] controls`).
    pub controls: bool,
    /// The fewest judged answers per candidate that can confirm (`[judge]
    /// min_judged_answers`; 0: no minimum).
    pub min_judged_answers: usize,
    /// Why the run is unfinished, when it is: what is missing ([`unfinished_note`]).
    pub unfinished: Option<&'a str>,
}

/// Withholds the confirmation of `d` for every gate of `g` that fails (nothing changes when
/// nothing was chosen).
pub fn withhold(d: &mut JudgeDecision, g: &Gates<'_>) {
    if let Some(note) = g.unfinished {
        d.withhold(
            "the run is unfinished",
            format!("The judge cannot confirm the pick while the run is unfinished: {note}"),
        );
    }
    if let Some(reason) = unmeasured(g) {
        d.withhold("the judge's accuracy was not measured", reason);
    }
    if let Some(reason) = too_few(g) {
        d.withhold("too few judged answers", reason);
    }
}

/// The sentence saying on which graded criteria the judge's accuracy was not measured, and why;
/// `None` when it was measured on each.
fn unmeasured(g: &Gates<'_>) -> Option<String> {
    let graded = g
        .criteria
        .iter()
        .filter(|c| g.questions.iter().any(|r| r.verdict(c).outcome().is_some()));
    let missing: Vec<&String> = graded
        .filter(|c| {
            !g.probes
                .iter()
                .any(|r| &r.criterion == *c && ControlKind::is_control(&r.kind))
        })
        .collect();
    if missing.is_empty() {
        return None;
    }
    if !g.controls {
        let names: Vec<&str> = missing.iter().map(|c| c.as_str()).collect();
        return Some(format!(
            "The judge's accuracy was not measured: the planted controls are off (`[judge] controls = false`), so nothing shows that its verdicts on {} tell a failing answer from a passing one, and they cannot confirm the pick.",
            names.join(", ")
        ));
    }
    let why: Vec<String> = missing
        .iter()
        .map(|c| {
            let built_in = ControlKind::ALL.iter().any(|k| k.criterion() == c.as_str());
            if built_in {
                format!("{c} (no planted control could be asked)")
            } else {
                format!("{c} (no planted controls exist for it)")
            }
        })
        .collect();
    Some(format!(
        "The judge's accuracy was not measured on {}, so its verdicts there cannot confirm the pick.",
        why.join(", ")
    ))
}

/// Answers of `config_id` with a pass or fail verdict on some criterion.
pub fn judged_answers(questions: &[JudgeQuestionRow], config_id: &str) -> usize {
    questions
        .iter()
        .filter(|r| r.config_id == config_id)
        .filter(|r| {
            r.verdicts
                .iter()
                .any(|(_, j)| j.verdict.outcome().is_some())
        })
        .count()
}

/// The sentence naming the candidates with fewer judged answers than the minimum; `None` when
/// none has.
fn too_few(g: &Gates<'_>) -> Option<String> {
    let short: Vec<String> = g
        .candidates
        .iter()
        .filter_map(|c| {
            let n = judged_answers(g.questions, &c.config_id);
            (n < g.min_judged_answers).then(|| format!("`{}` has {n}", c.config_id))
        })
        .collect();
    if short.is_empty() {
        return None;
    }
    Some(format!(
        "Too few judged answers to confirm the pick: {} (answers with a pass or fail verdict), fewer than the minimum of {} (`[judge] min_judged_answers`).",
        short.join(", "),
        g.min_judged_answers
    ))
}

/// What a judge run left without a verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LeftToJudge {
    /// Candidate × question pairs without a row.
    pub missing: usize,
    /// Candidate × question pairs planned.
    pub planned: usize,
    /// Of the missing pairs, those not started for the budget.
    pub not_started_for_budget: usize,
    /// Planted control and repeat verdicts left unfinished.
    pub probes_missing: usize,
    /// Planted control and repeat verdicts asked.
    pub probes_asked: usize,
}

/// What an unfinished judge run is missing (`left`), or `None` when nothing is. E.g. `4 of 8
/// candidate × question pair(s) have no verdict yet (4 unfinished after timeouts, failed retries
/// or rejected requests, 0 not started for the budget); rerun the same command to finish them.`
pub fn unfinished_note(left: LeftToJudge) -> Option<String> {
    let LeftToJudge {
        missing,
        planned,
        not_started_for_budget: budget,
        probes_missing: checks_missing,
        probes_asked: checks_asked,
    } = left;
    let mut parts = Vec::new();
    if missing > 0 {
        parts.push(format!(
            "{missing} of {planned} candidate × question pair(s) have no verdict yet ({} unfinished after timeouts, failed retries or rejected requests, {budget} not started for the budget)",
            missing - budget.min(missing)
        ));
    }
    if checks_missing > 0 {
        parts.push(format!(
            "{checks_missing} of {checks_asked} planted control and repeat verdict(s) are unfinished"
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "{}; rerun the same command to finish them.",
            parts.join(", and ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::probes::test_probe;
    use crate::judge::rows::test_row as row;
    use crate::judge::table::test_info as info;

    fn names() -> Vec<String> {
        crate::judge::criteria::names(&crate::judge::criteria::builtin())
    }

    fn chosen() -> JudgeDecision {
        JudgeDecision {
            chosen: Some("A".into()),
            unjudged: vec![],
            comparisons: vec![],
            reasons: vec!["The judge confirms the selection's pick `A`.".into()],
            larger_at_equal_recall: false,
            unconfirmed: vec![],
            withheld: vec![],
            moved_from: None,
            confirms_pick: true,
        }
    }

    #[test]
    fn controls_off_two_answers_and_missing_work_each_withhold_the_confirmation() {
        let names = names();
        let cands = [info("A", 64, 320.0, 0.9)];
        let questions = [
            row("A", 0, "pass", "pass", "na"),
            row("A", 1, "pass", "error", "na"),
        ];
        let note = unfinished_note(LeftToJudge {
            missing: 2,
            planned: 4,
            ..LeftToJudge::default()
        });
        assert_eq!(
            note.as_deref(),
            Some(
                "2 of 4 candidate × question pair(s) have no verdict yet (2 unfinished after timeouts, failed retries or rejected requests, 0 not started for the budget); rerun the same command to finish them."
            )
        );
        let mut d = chosen();
        withhold(
            &mut d,
            &Gates {
                criteria: &names,
                candidates: &cands,
                questions: &questions,
                probes: &[],
                controls: false,
                min_judged_answers: 5,
                unfinished: note.as_deref(),
            },
        );
        assert_eq!(
            d.withheld,
            [
                "the run is unfinished",
                "the judge's accuracy was not measured",
                "too few judged answers"
            ]
        );
        assert!(
            !d.reasons.iter().any(|r| r.contains("confirms")),
            "{:?}",
            d.reasons
        );
        assert_eq!(
            d.reasons[1],
            "The judge's accuracy was not measured: the planted controls are off (`[judge] controls = false`), so nothing shows that its verdicts on faithfulness, relevancy tell a failing answer from a passing one, and they cannot confirm the pick."
        );
        assert_eq!(
            d.reasons[2],
            "Too few judged answers to confirm the pick: `A` has 2 (answers with a pass or fail verdict), fewer than the minimum of 5 (`[judge] min_judged_answers`)."
        );
    }

    #[test]
    fn measured_finished_and_enough_confirms_and_a_criterion_without_controls_does_not() {
        let mut names = names();
        let cands = [info("A", 64, 320.0, 0.9)];
        let questions: Vec<_> = (0..5).map(|q| row("A", q, "pass", "fail", "na")).collect();
        let probes = [
            test_probe("other_context", "faithfulness", "fail", "fail"),
            test_probe("other_answer", "relevancy", "fail", "error"),
        ];
        let gates = |names: &[String]| {
            let mut d = chosen();
            withhold(
                &mut d,
                &Gates {
                    criteria: names,
                    candidates: &cands,
                    questions: &questions,
                    probes: &probes,
                    controls: true,
                    min_judged_answers: 5,
                    unfinished: None,
                },
            );
            d
        };
        let d = gates(&names);
        assert!(d.withheld.is_empty());
        assert_eq!(d.reasons, ["The judge confirms the selection's pick `A`."]);
        // a fourth criterion graded with no planted control of its kind
        names.push("conciseness".into());
        let mut rows = questions.clone();
        for r in &mut rows {
            r.verdicts.insert(
                "conciseness",
                crate::judge::rows::Judgement {
                    verdict: crate::judge::Verdict::Pass,
                    reason: String::new(),
                },
            );
        }
        let mut d = chosen();
        withhold(
            &mut d,
            &Gates {
                criteria: &names,
                candidates: &cands,
                questions: &rows,
                probes: &probes,
                controls: true,
                min_judged_answers: 5,
                unfinished: None,
            },
        );
        assert_eq!(
            d.reasons,
            [
                "The judge's accuracy was not measured on conciseness (no planted controls exist for it), so its verdicts there cannot confirm the pick."
            ]
        );
    }
}
