//! The judge's decision: the selection's pick stays unless the judge is trusted and shows
//! another candidate as good and cheaper, or better ([`super::answer_quality`]: paired
//! non-inferiority of the pass rates within a stated margin, the same logic as the selection's
//! equivalence rule). Every pair of candidates is also compared on every criterion with an exact
//! McNemar test (the report's table). A candidate without a single valid verdict cannot be
//! compared, so the judge then confirms nothing; criteria whose verdicts the planted controls or
//! repeats do not trust leave the pick unconfirmed ([`JudgeDecision::unconfirm`]).

use serde::Serialize;

use super::answer_quality::{Against, paired};
use super::rows::JudgeQuestionRow;
use super::table::CandidateInfo;
use super::trust::CriterionTrust;
use crate::stats::mcnemar_paired;

/// Recall difference under which two candidates have "equal recall" (seed 000's 0.02).
pub const EQUAL_RECALL: f64 = 0.02;

/// A paired exact McNemar test of two candidates on one criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Criterion name.
    pub criterion: String,
    /// First candidate.
    pub a: String,
    /// Second candidate.
    pub b: String,
    /// Paired questions (both have a pass or fail verdict).
    pub n: usize,
    /// Questions `a` passed and `b` did not.
    pub a_only: u64,
    /// Questions `b` passed and `a` did not.
    pub b_only: u64,
    /// Two-sided exact p-value.
    pub p_value: f64,
    /// `p_value < alpha`.
    pub significant: bool,
}

/// The judge's decision and its reasons.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeDecision {
    /// The chosen configuration id; `None` when the judge confirms nothing because some
    /// candidate has no valid verdict.
    pub chosen: Option<String>,
    /// Candidates without a single pass or fail verdict.
    pub unjudged: Vec<String>,
    /// Every pairwise comparison.
    pub comparisons: Vec<Comparison>,
    /// Sentences explaining the choice, for the report.
    pub reasons: Vec<String>,
    /// True when the judge prefers a larger chunk size than the first candidate at equal recall.
    pub larger_at_equal_recall: bool,
    /// Criteria whose verdicts cannot confirm the pick (planted controls or repeats say so; see
    /// [`JudgeDecision::unconfirm`]).
    pub unconfirmed: Vec<String>,
    /// Why the pick is not confirmed whatever the verdicts say, in a few words each (`the run is
    /// unfinished`, `the judge's accuracy was not measured`, …; see [`JudgeDecision::withhold`] and
    /// [`super::gates`]); empty when nothing withholds it.
    pub withheld: Vec<String>,
    /// The reference (the selection's pick, or the first listed configuration) when the judge's
    /// verdicts moved the choice away from it ([`super::answer_quality::Against::moves`]).
    pub moved_from: Option<String>,
    /// True while the last of [`JudgeDecision::reasons`] is the sentence saying the judge confirms
    /// the selection's pick; [`JudgeDecision::unconfirm`] and [`JudgeDecision::withhold`] remove it.
    #[serde(skip)]
    pub confirms_pick: bool,
}

impl JudgeDecision {
    /// Marks the decision as not confirmed on every criterion whose verdicts cannot confirm the
    /// pick ([`CriterionTrust::can_confirm`]): [`JudgeDecision::unconfirmed`] names them, the sentence
    /// saying the judge confirms the pick is dropped, and one reason per criterion says why.
    /// Nothing changes when nothing was chosen.
    pub fn unconfirm(&mut self, trust: &[CriterionTrust]) {
        if self.chosen.is_none() {
            return;
        }
        let doubtful: Vec<&CriterionTrust> = trust.iter().filter(|t| !t.can_confirm()).collect();
        if doubtful.is_empty() {
            return;
        }
        self.drop_confirmation();
        for t in doubtful {
            self.unconfirmed.push(t.criterion.clone());
            self.reasons.push(format!(
                "The judge's {} verdicts cannot confirm the pick: {}.",
                t.criterion,
                t.doubts.join("; and ")
            ));
        }
    }

    /// Withholds the confirmation whatever the verdicts say: `short` (a few words) is added to
    /// [`JudgeDecision::withheld`], `reason` (a sentence saying what is missing) to the reasons, and
    /// the sentence saying the judge confirms the pick is dropped. Nothing changes when nothing
    /// was chosen.
    pub fn withhold(&mut self, short: &str, reason: String) {
        if self.chosen.is_none() {
            return;
        }
        self.drop_confirmation();
        self.withheld.push(short.to_string());
        self.reasons.push(reason);
    }

    /// Removes the sentence saying the judge confirms the pick (the last reason while
    /// [`JudgeDecision::confirms_pick`] holds: every later reason is pushed after this call).
    fn drop_confirmation(&mut self) {
        if std::mem::take(&mut self.confirms_pick) {
            self.reasons.pop();
        }
    }
}

/// Whether `id` has at least one pass or fail verdict on some criterion.
fn has_valid_verdict(rows: &[JudgeQuestionRow], id: &str) -> bool {
    rows.iter().filter(|r| r.config_id == id).any(|r| {
        r.verdicts
            .iter()
            .any(|(_, j)| j.verdict.outcome().is_some())
    })
}

/// Every pairwise exact McNemar comparison of `candidates` on each of `criteria`, over the
/// questions both have a pass or fail for (pairs without such a question are left out).
fn compare(
    candidates: &[CandidateInfo],
    rows: &[JudgeQuestionRow],
    criteria: &[String],
    alpha: f64,
) -> Vec<Comparison> {
    let mut comparisons = Vec::new();
    for (i, a) in candidates.iter().enumerate() {
        for b in &candidates[i + 1..] {
            for c in criteria {
                let (x, y) = paired(rows, &a.config_id, &b.config_id, c);
                if x.is_empty() {
                    continue;
                }
                let m = mcnemar_paired(&x, &y);
                comparisons.push(Comparison {
                    criterion: c.clone(),
                    a: a.config_id.clone(),
                    b: b.config_id.clone(),
                    n: x.len(),
                    a_only: m.b,
                    b_only: m.c,
                    p_value: m.p_value,
                    significant: m.p_value < alpha,
                });
            }
        }
    }
    comparisons
}

/// The reference the judge's verdicts are read against, and its name: the selection's pick when
/// `pick` is among the candidates, else the first listed candidate.
fn reference<'a>(
    candidates: &'a [CandidateInfo],
    pick: Option<&str>,
) -> (&'a CandidateInfo, &'static str) {
    match candidates
        .iter()
        .find(|c| Some(c.config_id.as_str()) == pick)
    {
        Some(p) => (p, "the selection's pick"),
        None => (&candidates[0], "the first listed configuration"),
    }
}

/// The closing sentence: the choice against the reference, whether it is a larger chunk size at
/// equal recall, and whether the sentence says the judge confirms the selection's pick.
fn closing_reason(
    first: &CandidateInfo,
    first_name: &str,
    chosen: &CandidateInfo,
    pick: Option<&str>,
) -> (String, bool, bool) {
    let larger_at_equal_recall = chosen.chunk_size > first.chunk_size
        && (chosen.span_recall - first.span_recall).abs() <= EQUAL_RECALL;
    let confirms = chosen.config_id == first.config_id && Some(first.config_id.as_str()) == pick;
    let reason = if larger_at_equal_recall {
        format!(
            "The judge moves the pick to a larger chunk size than {first_name} ({} vs {}) at equal span recall ({:.3} vs {:.3}): prefer it, and check whether contextual enrichment (prefixing each chunk with its document and section title) gets the same benefit at the smaller size.",
            chosen.chunk_size, first.chunk_size, chosen.span_recall, first.span_recall
        )
    } else if chosen.config_id != first.config_id {
        format!(
            "The judge moves the pick to `{}` from {first_name} `{}`.",
            chosen.config_id, first.config_id
        )
    } else if confirms {
        format!(
            "The judge confirms the selection's pick `{}`.",
            first.config_id
        )
    } else {
        format!("The judge keeps {first_name} `{}`.", first.config_id)
    };
    (reason, larger_at_equal_recall, confirms)
}

/// Decides between `candidates` on `criteria`: every pair compared on every criterion (exact
/// McNemar, for the report's table), and the reference — the selection's pick when `pick` (its
/// configuration id) is among the candidates, else the first listed candidate (`--candidates`,
/// `--compare-prefix`), never then called the selection's pick — kept unless the judge's verdicts
/// move it ([`Against::moves`]: a cheaper candidate non-inferior on every criterion within
/// [`super::answer_quality::ANSWER_DELTA`], each trusted by `trust`; or a costlier one
/// significantly better on a trusted criterion and worse on none). Of the candidates that move
/// it, the significantly better come first, then the cheapest. If the choice is a larger chunk
/// size at recall within [`EQUAL_RECALL`] of the reference, the decision says so (seed 000's
/// rule) and suggests trying contextual enrichment at the smaller size. If some candidate has no
/// valid verdict at all, nothing is chosen (`chosen` is `None`) and the reasons say which.
///
/// # Panics
/// If `candidates` is empty.
pub fn decide(
    candidates: &[CandidateInfo],
    rows: &[JudgeQuestionRow],
    criteria: &[String],
    alpha: f64,
    pick: Option<&str>,
    trust: &[CriterionTrust],
) -> JudgeDecision {
    assert!(!candidates.is_empty(), "no candidate to decide between");
    let comparisons = compare(candidates, rows, criteria, alpha);
    let unjudged: Vec<String> = candidates
        .iter()
        .filter(|c| !has_valid_verdict(rows, &c.config_id))
        .map(|c| c.config_id.clone())
        .collect();
    if !unjudged.is_empty() {
        let names: Vec<String> = unjudged.iter().map(|id| format!("`{id}`")).collect();
        return JudgeDecision {
            chosen: None,
            reasons: vec![format!(
                "No valid verdict for {}: every verdict is an error or no answer was generated, so no candidate can be compared with it and nothing is confirmed; see the reasons in judge_questions.csv.",
                names.join(", ")
            )],
            unjudged,
            comparisons,
            larger_at_equal_recall: false,
            unconfirmed: Vec::new(),
            withheld: Vec::new(),
            moved_from: None,
            confirms_pick: false,
        };
    }
    let (first, first_name) = reference(candidates, pick);
    let others: Vec<(&CandidateInfo, Against)> = candidates
        .iter()
        .filter(|c| c.config_id != first.config_id)
        .map(|c| (c, Against::of(c, first, rows, criteria, trust, alpha)))
        .collect();
    let chosen = others
        .iter()
        .filter(|(_, a)| a.moves())
        .min_by(|(x, a), (y, b)| {
            a.cheaper
                .cmp(&b.cheaper)
                .then(x.tokens_per_query.total_cmp(&y.tokens_per_query))
        })
        .map_or(first, |(c, _)| *c);
    let mut reasons: Vec<String> = others.iter().map(|(_, a)| a.sentence(first_name)).collect();
    let (closing, larger_at_equal_recall, confirms_pick) =
        closing_reason(first, first_name, chosen, pick);
    reasons.push(closing);
    JudgeDecision {
        chosen: Some(chosen.config_id.clone()),
        unjudged: Vec::new(),
        comparisons,
        reasons,
        larger_at_equal_recall,
        unconfirmed: Vec::new(),
        withheld: Vec::new(),
        moved_from: (chosen.config_id != first.config_id).then(|| first.config_id.clone()),
        confirms_pick,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::probes::{ProbeRow, test_probe};
    use crate::judge::rows::test_row as row;
    use crate::judge::table::test_info as info;

    fn names() -> Vec<String> {
        crate::judge::criteria::names(&crate::judge::criteria::builtin())
    }

    /// The trust of a judge that gets every planted control right on each of `names()`: 10
    /// planted failures failed and 10 planted passes passed per criterion.
    fn trusted() -> Vec<CriterionTrust> {
        let rows: Vec<ProbeRow> = names()
            .iter()
            .flat_map(|c| {
                (0..10).flat_map(move |_| {
                    [
                        test_probe("other_context", c, "fail", "fail"),
                        test_probe("reference_evidence", c, "pass", "pass"),
                    ]
                })
            })
            .collect();
        let t = crate::judge::trust::trust(&rows, &names(), 0.5, 0.4);
        assert!(t.iter().all(CriterionTrust::can_confirm), "{t:?}");
        t
    }

    /// `n` questions on which `id` passes faithfulness on the first `passes` and relevancy on
    /// all; correctness not graded.
    fn answers(id: &str, n: usize, passes: usize) -> Vec<JudgeQuestionRow> {
        (0..n)
            .map(|q| {
                row(
                    id,
                    q,
                    if q < passes { "pass" } else { "fail" },
                    "pass",
                    "na",
                )
            })
            .collect()
    }

    #[test]
    fn listed_candidates_are_not_called_the_pick() {
        let rows = [answers("A", 3, 3), answers("B", 3, 3)].concat();
        let cands = [info("A", 64, 320.0, 0.9), info("B", 256, 1280.0, 0.5)];
        let d = decide(&cands, &rows, &names(), 0.05, None, &trusted());
        assert_eq!(d.chosen.as_deref(), Some("A"));
        let all = d.reasons.join(" ");
        assert!(!all.contains("selection's pick"), "{all}");
        assert!(!all.contains("confirms"), "{all}");
        assert!(
            all.contains("The judge keeps the first listed configuration `A`."),
            "{all}"
        );
    }

    #[test]
    fn five_equal_answers_from_an_untrusted_judge_do_not_move_the_pick() {
        // The demo's case: the pick B (1,328 tokens) and the cheaper A (354) answer 5 questions
        // alike (McNemar p = 1). The judge is not trusted, and 0 answers lost of 5 has a one-sided
        // 95% Wilson upper bound of 2.705543 / (5 + 2.705543) = 0.351 > 0.1: not shown
        // non-inferior either. The pick stays.
        let rows = [answers("A", 5, 5), answers("B", 5, 5)].concat();
        let cands = [info("B", 512, 1328.0, 0.86), info("A", 256, 354.0, 0.85)];
        let d = decide(&cands, &rows, &names(), 0.05, Some("B"), &[]);
        assert_eq!(d.chosen.as_deref(), Some("B"));
        assert!(d.confirms_pick);
        let why = &d.reasons[0];
        assert!(why.starts_with("`A` against the selection's pick `B` (354 vs 1,328 tokens per query): faithfulness: 5 paired answers, 0 passed only with `B` and 0 only with `A` (McNemar p = 1.000); answers lost 0 of 5, one-sided 95% upper bound 0.351 > δ = 0.1: not shown non-inferior; the judge not trusted there"), "{why}");
        assert!(why.contains("This does not move the pick: its answers are not shown non-inferior within δ = 0.1 on faithfulness, relevancy"), "{why}");
        assert!(
            why.contains(
                "the judge is not trusted on faithfulness, relevancy (its planted controls"
            ),
            "{why}"
        );
        // A trusted judge on the same 5 answers still cannot show them as good.
        let d = decide(&cands, &rows, &names(), 0.05, Some("B"), &trusted());
        assert_eq!(d.chosen.as_deref(), Some("B"));
        assert!(!d.reasons[0].contains("not trusted"), "{:?}", d.reasons);
    }

    #[test]
    fn a_trusted_judge_moves_the_pick_to_a_cheaper_candidate_shown_non_inferior() {
        // 40 questions, A loses none: Wilson upper bound 2.705543 / 42.705543 = 0.0634 ≤ 0.1.
        let rows = [answers("A", 40, 40), answers("B", 40, 40)].concat();
        let cands = [info("B", 512, 1328.0, 0.86), info("A", 256, 354.0, 0.85)];
        let d = decide(&cands, &rows, &names(), 0.05, Some("B"), &trusted());
        assert_eq!(d.chosen.as_deref(), Some("A"));
        assert!(!d.confirms_pick);
        assert!(
            d.reasons[0].contains(
                "answers lost 0 of 40, one-sided 95% upper bound 0.063 ≤ δ = 0.1: non-inferior"
            ),
            "{:?}",
            d.reasons
        );
        assert!(
            d.reasons[0].ends_with("it replaces the selection's pick."),
            "{:?}",
            d.reasons
        );
        assert_eq!(
            d.reasons[1],
            "The judge moves the pick to `A` from the selection's pick `B`."
        );
        // Untrusted, the same answers leave the pick where it is.
        let d = decide(&cands, &rows, &names(), 0.05, Some("B"), &[]);
        assert_eq!(d.chosen.as_deref(), Some("B"));
        // Five answers lost of 40 (upper bound 0.24 > 0.1) keep it too, though McNemar p = 0.062.
        let rows = [answers("A", 40, 35), answers("B", 40, 40)].concat();
        let d = decide(&cands, &rows, &names(), 0.05, Some("B"), &trusted());
        assert_eq!(d.chosen.as_deref(), Some("B"));
    }

    #[test]
    fn error_verdicts_of_a_cheaper_candidate_count_as_answers_lost() {
        // A passes faithfulness on 36 questions and its other 4 answers could not be graded
        // (error verdicts); B passes all 40. Paired on pass/fail alone, A loses 0 of 36 (bound
        // 2.705543 / 38.705543 = 0.070 ≤ 0.1) and would replace B; with the errors counted as
        // lost it is 4 of 40, whose bound is above 0.1, so B stays.
        let mut a = answers("A", 40, 40);
        for (q, answer) in a.iter_mut().enumerate().skip(36) {
            *answer = row("A", q, "error", "pass", "na");
        }
        let rows = [a, answers("B", 40, 40)].concat();
        let cands = [info("B", 512, 1328.0, 0.86), info("A", 256, 354.0, 0.85)];
        let d = decide(&cands, &rows, &names(), 0.05, Some("B"), &trusted());
        assert_eq!(d.chosen.as_deref(), Some("B"), "{:?}", d.reasons);
        assert!(
            d.reasons[0].contains(
                "faithfulness: 36 paired answers, 0 passed only with `B` and 0 only with `A` \
                 (McNemar p = 1.000); answers lost 4 of 40 (4 error verdicts of `A` counted as \
                 lost), one-sided 95% upper bound 0.205 > δ = 0.1: not shown non-inferior"
            ),
            "{:?}",
            d.reasons
        );
    }

    #[test]
    fn a_significantly_better_larger_size_at_equal_recall_is_said() {
        // 12 questions: B passes all, A fails 10 of them -> b=10, c=0, p = 2/1024
        let rows = [answers("A", 12, 2), answers("B", 12, 12)].concat();
        let cands = [info("A", 64, 320.0, 0.90), info("B", 256, 1280.0, 0.91)];
        let d = decide(&cands, &rows, &names(), 0.05, Some("A"), &trusted());
        assert_eq!(d.chosen.as_deref(), Some("B"));
        assert!(d.larger_at_equal_recall);
        let f = d
            .comparisons
            .iter()
            .find(|c| c.criterion == "faithfulness")
            .unwrap();
        assert!((f.p_value - 2.0 / 1024.0).abs() < 1e-12, "{}", f.p_value);
        assert!(
            d.reasons
                .iter()
                .any(|r| r.contains("contextual enrichment"))
        );
        assert!(
            d.reasons[0].contains("significantly better on a trusted criterion"),
            "{:?}",
            d.reasons
        );
        // An untrusted judge's significant difference does not move the pick.
        let d = decide(&cands, &rows, &names(), 0.05, Some("A"), &[]);
        assert_eq!(d.chosen.as_deref(), Some("A"));
        assert!(
            d.reasons[0].contains(
                "it is not significantly better on any criterion the judge is trusted on"
            ),
            "{:?}",
            d.reasons
        );
        // with recall far apart the seed-000 sentence is not used
        let cands = [info("A", 64, 320.0, 0.70), info("B", 256, 1280.0, 0.91)];
        assert!(
            !decide(&cands, &rows, &names(), 0.05, Some("A"), &trusted()).larger_at_equal_recall
        );
    }

    #[test]
    fn an_always_pass_judge_does_not_confirm_the_pick() {
        let row = |kind: &str, expected: &str| test_probe(kind, "faithfulness", expected, "pass");
        let rows: Vec<ProbeRow> = (0..5)
            .flat_map(|_| {
                [
                    row("other_context", "fail"),
                    row("reference_evidence", "pass"),
                ]
            })
            .collect();
        let t = crate::judge::trust::trust(&rows, &names(), 0.5, 0.4);
        let mut d = JudgeDecision {
            chosen: Some("A".into()),
            unjudged: vec![],
            comparisons: vec![],
            reasons: vec!["The judge confirms the selection's pick `A`.".into()],
            larger_at_equal_recall: false,
            unconfirmed: vec![],
            withheld: vec![],
            moved_from: None,
            confirms_pick: true,
        };
        d.unconfirm(&t);
        assert_eq!(d.unconfirmed, vec!["faithfulness".to_string()]);
        assert_eq!(d.reasons.len(), 1);
        assert!(
            d.reasons[0].starts_with(
                "The judge's faithfulness verdicts cannot confirm the pick: it failed 0 of 5 planted failures (true-negative rate 0.00 [0.00, 0.43])"
            ),
            "{:?}",
            d.reasons
        );
        // nothing chosen: nothing to unconfirm
        let mut none = JudgeDecision {
            chosen: None,
            reasons: vec![],
            unconfirmed: vec![],
            ..d.clone()
        };
        none.unconfirm(&t);
        assert!(none.unconfirmed.is_empty() && none.reasons.is_empty());
    }
}
