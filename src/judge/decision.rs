//! The judge's decision: every pair of candidates compared on every criterion with an exact
//! McNemar test on the questions both have a pass or fail for ([`crate::stats`]), and the
//! cheapest candidate no other one beats. A candidate without a single valid verdict cannot be
//! compared, so the judge then confirms nothing; criteria whose verdicts the planted controls or
//! repeats do not trust leave the pick unconfirmed ([`JudgeDecision::unconfirm`]).

use std::collections::BTreeMap;

use serde::Serialize;

use super::rows::JudgeQuestionRow;
use super::table::CandidateInfo;
use super::trust::CriterionTrust;
use super::verdict::Verdict;
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

/// Paired outcomes of `a` and `b` on `c`: questions where both have a pass or fail verdict.
fn paired(rows: &[JudgeQuestionRow], a: &str, b: &str, c: &str) -> (Vec<bool>, Vec<bool>) {
    let of = |id: &str| -> BTreeMap<&str, Verdict> {
        rows.iter()
            .filter(|r| r.config_id == id)
            .map(|r| (r.question_id.as_str(), r.verdict(c)))
            .collect()
    };
    let (ma, mb) = (of(a), of(b));
    let mut x = Vec::new();
    let mut y = Vec::new();
    for (q, va) in &ma {
        if let (Some(pa), Some(pb)) = (va.outcome(), mb.get(q).and_then(|v| v.outcome())) {
            x.push(pa);
            y.push(pb);
        }
    }
    (x, y)
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

/// The comparisons on which `x` is significantly better than `y`.
fn better<'a>(comparisons: &'a [Comparison], x: &str, y: &str) -> Vec<&'a Comparison> {
    comparisons
        .iter()
        .filter(|c| {
            c.significant
                && ((c.a == x && c.b == y && c.a_only > c.b_only)
                    || (c.b == x && c.a == y && c.b_only > c.a_only))
        })
        .collect()
}

/// `faithfulness p = 0.500 (1 vs 3 discordant)`.
fn fmt_cmp(c: &Comparison) -> String {
    format!(
        "{} p = {:.3} ({} vs {} discordant)",
        c.criterion, c.p_value, c.a_only, c.b_only
    )
}

/// The sentence that says why `chosen` is kept over `other`.
fn reason_against(
    comparisons: &[Comparison],
    chosen: &CandidateInfo,
    other: &CandidateInfo,
    alpha: f64,
) -> String {
    let ours = better(comparisons, &chosen.config_id, &other.config_id);
    let theirs = better(comparisons, &other.config_id, &chosen.config_id);
    let tokens = format!(
        "{:.0} vs {:.0} tokens per query",
        chosen.tokens_per_query, other.tokens_per_query
    );
    if ours.is_empty() && theirs.is_empty() {
        let ps: Vec<String> = comparisons
            .iter()
            .filter(|c| {
                (c.a == chosen.config_id && c.b == other.config_id)
                    || (c.b == chosen.config_id && c.a == other.config_id)
            })
            .map(fmt_cmp)
            .collect();
        let cheaper = chosen.tokens_per_query <= other.tokens_per_query;
        format!(
            "`{}` and `{}` do not differ significantly at α = {alpha} ({}); {}",
            chosen.config_id,
            other.config_id,
            if ps.is_empty() {
                "no paired questions".into()
            } else {
                ps.join("; ")
            },
            if cheaper {
                format!(
                    "prefer `{}`, which needs fewer tokens per query ({tokens}).",
                    chosen.config_id
                )
            } else {
                format!(
                    "`{}` is kept because a cheaper candidate is beaten elsewhere ({tokens}).",
                    chosen.config_id
                )
            }
        )
    } else if !ours.is_empty() {
        let ps: Vec<String> = ours.iter().map(|c| fmt_cmp(c)).collect();
        format!(
            "`{}` is significantly better than `{}` on {}{}.",
            chosen.config_id,
            other.config_id,
            ps.join("; "),
            if other.tokens_per_query < chosen.tokens_per_query {
                format!(", which outweighs the cost ({tokens})")
            } else {
                String::new()
            }
        )
    } else {
        let ps: Vec<String> = theirs.iter().map(|c| fmt_cmp(c)).collect();
        format!(
            "`{}` is significantly better on {} but worse elsewhere; `{}` is kept as the cheaper of the two ({tokens}).",
            other.config_id,
            ps.join("; "),
            chosen.config_id
        )
    }
}

/// The closing sentence: the choice against the selection's pick (or the first listed
/// candidate), whether it is a larger chunk size at equal recall, and whether the sentence says
/// the judge confirms the selection's pick.
fn closing_reason(
    candidates: &[CandidateInfo],
    chosen: &CandidateInfo,
    pick: Option<&str>,
) -> (String, bool, bool) {
    let (first, first_name) = match candidates
        .iter()
        .find(|c| Some(c.config_id.as_str()) == pick)
    {
        Some(p) => (p, "the selection's pick"),
        None => (&candidates[0], "the first listed configuration"),
    };
    let larger_at_equal_recall = chosen.chunk_size > first.chunk_size
        && (chosen.span_recall - first.span_recall).abs() <= EQUAL_RECALL;
    let confirms = !larger_at_equal_recall
        && chosen.config_id == first.config_id
        && Some(first.config_id.as_str()) == pick;
    let reason = if larger_at_equal_recall {
        format!(
            "The judge prefers a larger chunk size than {first_name} ({} vs {}) at equal span recall ({:.3} vs {:.3}): prefer it, and check whether contextual enrichment (prefixing each chunk with its document and section title) gets the same benefit at the smaller size.",
            chosen.chunk_size, first.chunk_size, chosen.span_recall, first.span_recall
        )
    } else if chosen.config_id != first.config_id {
        format!(
            "The judge prefers `{}` to {first_name} `{}`.",
            chosen.config_id, first.config_id
        )
    } else if confirms {
        format!(
            "The judge confirms the selection's pick `{}`.",
            first.config_id
        )
    } else {
        format!(
            "The judge prefers `{}` among the listed configurations.",
            first.config_id
        )
    };
    (reason, larger_at_equal_recall, confirms)
}

/// Compares every pair of candidates on every criterion of `criteria` (exact McNemar) and
/// chooses: among the candidates no other one beats (significantly better on some criterion and
/// significantly worse on none), the one with the fewest tokens per query. If some candidate has
/// no valid verdict at all, nothing is chosen (`chosen` is `None`) and the reasons say which.
/// The choice is described against the selection's pick when `pick` (its configuration id) is
/// among the candidates, and against the first listed candidate otherwise (`--candidates`,
/// `--compare-prefix`), which is then never called the selection's pick; if the choice is a
/// larger chunk size at recall within [`EQUAL_RECALL`] of that reference, the decision says so
/// (seed 000's rule) and suggests trying contextual enrichment at the smaller size.
///
/// # Panics
/// If `candidates` is empty.
pub fn decide(
    candidates: &[CandidateInfo],
    rows: &[JudgeQuestionRow],
    criteria: &[String],
    alpha: f64,
    pick: Option<&str>,
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
            confirms_pick: false,
        };
    }
    let beats = |x: &str, y: &str| {
        !better(&comparisons, x, y).is_empty() && better(&comparisons, y, x).is_empty()
    };
    let mut by_cost: Vec<&CandidateInfo> = candidates.iter().collect();
    by_cost.sort_by(|p, q| p.tokens_per_query.total_cmp(&q.tokens_per_query));
    let chosen = by_cost
        .iter()
        .copied()
        .find(|x| !candidates.iter().any(|y| beats(&y.config_id, &x.config_id)))
        .unwrap_or(by_cost[0]);
    let mut reasons: Vec<String> = candidates
        .iter()
        .filter(|o| o.config_id != chosen.config_id)
        .map(|other| reason_against(&comparisons, chosen, other, alpha))
        .collect();
    let (closing, larger_at_equal_recall, confirms_pick) = closing_reason(candidates, chosen, pick);
    reasons.push(closing);
    JudgeDecision {
        chosen: Some(chosen.config_id.clone()),
        unjudged: Vec::new(),
        comparisons,
        reasons,
        larger_at_equal_recall,
        unconfirmed: Vec::new(),
        withheld: Vec::new(),
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

    #[test]
    fn listed_candidates_are_not_called_the_pick() {
        let rows: Vec<_> = (0..3)
            .flat_map(|q| {
                [
                    row("A", q, "pass", "pass", "na"),
                    row("B", q, "pass", "pass", "na"),
                ]
            })
            .collect();
        let cands = [info("A", 64, 320.0, 0.9), info("B", 256, 1280.0, 0.5)];
        let d = decide(&cands, &rows, &names(), 0.05, None);
        assert_eq!(d.chosen.as_deref(), Some("A"));
        let all = d.reasons.join(" ");
        assert!(!all.contains("selection's pick"), "{all}");
        assert!(!all.contains("confirms"), "{all}");
        assert!(
            all.contains("The judge prefers `A` among the listed configurations."),
            "{all}"
        );
    }

    #[test]
    fn not_significant_prefers_fewer_tokens() {
        // A passes 8/10, B 9/10: one discordant pair, p = 1
        let mut rows = Vec::new();
        for q in 0..10 {
            rows.push(row(
                "A",
                q,
                if q < 8 { "pass" } else { "fail" },
                "pass",
                "na",
            ));
            rows.push(row(
                "B",
                q,
                if q < 9 { "pass" } else { "fail" },
                "pass",
                "na",
            ));
        }
        let cands = [info("A", 64, 320.0, 0.90), info("B", 256, 1280.0, 0.91)];
        let d = decide(&cands, &rows, &names(), 0.05, Some("A"));
        assert_eq!(d.chosen.as_deref(), Some("A"));
        assert!(!d.larger_at_equal_recall);
        let f = d
            .comparisons
            .iter()
            .find(|c| c.criterion == "faithfulness")
            .unwrap();
        assert_eq!((f.n, f.a_only, f.b_only), (10, 0, 1));
        assert!((f.p_value - 1.0).abs() < 1e-12);
        assert!(
            d.reasons[0].contains("do not differ significantly"),
            "{:?}",
            d.reasons
        );
        assert!(
            d.reasons[0].contains("fewer tokens per query (320 vs 1280"),
            "{:?}",
            d.reasons
        );
    }

    #[test]
    fn a_significantly_better_larger_size_at_equal_recall_is_said() {
        // 12 questions: B passes all, A fails 10 of them -> b=0, c=10, p = 2/1024
        let mut rows = Vec::new();
        for q in 0..12 {
            rows.push(row(
                "A",
                q,
                if q < 2 { "pass" } else { "fail" },
                "pass",
                "na",
            ));
            rows.push(row("B", q, "pass", "pass", "na"));
        }
        let cands = [info("A", 64, 320.0, 0.90), info("B", 256, 1280.0, 0.91)];
        let d = decide(&cands, &rows, &names(), 0.05, Some("A"));
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
            d.reasons[0].contains("significantly better"),
            "{:?}",
            d.reasons
        );
        // with recall far apart the seed-000 sentence is not used
        let cands = [info("A", 64, 320.0, 0.70), info("B", 256, 1280.0, 0.91)];
        assert!(!decide(&cands, &rows, &names(), 0.05, Some("A")).larger_at_equal_recall);
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
