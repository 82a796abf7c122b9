//! What the judge saw of one candidate against the reference (the selection's pick, or the first
//! listed configuration), criterion by criterion, and whether that may move the pick. The same
//! logic as the selection's equivalence rule: "not significantly worse" is not "as good".
//!
//! On each graded criterion, over the questions both have a pass or fail for:
//! - the exact McNemar test of the paired verdicts ([`crate::stats::mcnemar_paired`]);
//! - the non-inferiority of the candidate's answers within [`ANSWER_DELTA`] at one-sided α: the
//!   share of questions the reference passes and the candidate fails (the answers lost) has a
//!   one-sided (1 − α) Wilson upper bound (Wilson 1927) of at most δ. The pass-rate difference
//!   (candidate − reference) is (gained − lost)/n ≥ −lost/n, so this bounds it by −δ too; it is
//!   conservative (answers gained do not offset answers lost), and sound where a paired t bound
//!   is not: 5 answers that all agree give a t interval of width 0 and would "show"
//!   non-inferiority, while the Wilson bound of 0 lost of 5 is 0.35;
//! - whether the judge's verdicts there are trusted ([`CriterionTrust::can_confirm`]: planted
//!   controls and repeats).
//!
//! A **cheaper** candidate replaces the reference only when every graded criterion is trusted
//! and it is non-inferior on each; a **costlier** one only when it is significantly better on
//! some trusted criterion and significantly worse on none. Otherwise the reference stays, and the
//! sentence says what the judge saw and why it does not move the pick.

use std::collections::BTreeMap;

use super::rows::JudgeQuestionRow;
use super::table::CandidateInfo;
use super::trust::CriterionTrust;
use super::verdict::Verdict;
use crate::stats::{McNemar, mcnemar_paired, wilson};

/// The non-inferiority margin δ on a pass rate (0 to 1) under which a cheaper candidate's answers
/// count as as good as the reference's: 0.10, ten percentage points, the margin most often used
/// for binary end points in non-inferiority trials (FDA 2016, *Non-Inferiority Clinical Trials to
/// Establish Effectiveness*, guidance for industry, §IV) and twice the selection's δ on span
/// recall, since a verdict is coarser than a span. On the tens of answers a judge stage grades it
/// is rarely shown: the pick then stays.
pub const ANSWER_DELTA: f64 = 0.1;

/// Paired outcomes of `a` and `b` on criterion `c`: the questions both have a pass or fail
/// verdict for, in question order.
pub(super) fn paired(
    rows: &[JudgeQuestionRow],
    a: &str,
    b: &str,
    c: &str,
) -> (Vec<bool>, Vec<bool>) {
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

/// The questions on criterion `c` where `reference` has a pass or fail and `candidate` has an
/// error verdict: a candidate's answer that could not be graded is not an answer shown as good,
/// so [`Against::of`] counts it as lost.
fn errors_against(rows: &[JudgeQuestionRow], reference: &str, candidate: &str, c: &str) -> u64 {
    let graded: std::collections::BTreeSet<&str> = rows
        .iter()
        .filter(|r| r.config_id == reference && r.verdict(c).outcome().is_some())
        .map(|r| r.question_id.as_str())
        .collect();
    rows.iter()
        .filter(|r| r.config_id == candidate && r.verdict(c) == Verdict::Error)
        .filter(|r| graded.contains(r.question_id.as_str()))
        .count() as u64
}

/// One criterion of a candidate against the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct OnCriterion {
    /// The criterion's name.
    pub criterion: String,
    /// Paired answers (both have a pass or fail).
    pub n: usize,
    /// Questions the reference has a pass or fail for and the candidate an error verdict:
    /// counted as answers lost (and in the denominator) by the non-inferiority bound.
    pub errors: u64,
    /// McNemar on the paired verdicts (`b`: the reference passed and the candidate did not, the
    /// answers lost; `c`: the answers gained).
    pub mcnemar: McNemar,
    /// One-sided (1 − α) Wilson upper bound of the share of answers lost,
    /// `(b + errors) / (n + errors)`.
    pub lost_upper: f64,
    /// `lost_upper ≤ ANSWER_DELTA`: non-inferior within δ.
    pub non_inferior: bool,
    /// The one-sided level, in percent (95 for α = 0.05).
    pub level: f64,
    /// Whether the judge's verdicts on this criterion are trusted.
    pub trusted: bool,
    /// The candidate is significantly better (McNemar p < α, more candidate-only passes).
    pub better: bool,
    /// The candidate is significantly worse.
    pub worse: bool,
}

/// A candidate against the reference on every graded criterion.
#[derive(Debug, Clone, PartialEq)]
pub struct Against {
    /// The candidate.
    pub id: String,
    /// The reference (the selection's pick, or the first listed configuration).
    pub reference: String,
    /// The candidate sends fewer tokens per query than the reference.
    pub cheaper: bool,
    /// "354 vs 1,328 tokens per query" (candidate vs reference).
    pub tokens: String,
    /// The graded criteria (both have a pass or fail for some question), in report order.
    pub on: Vec<OnCriterion>,
}

impl Against {
    /// Compares `candidate` with `reference` on each of `criteria` that both were graded on.
    pub fn of(
        candidate: &CandidateInfo,
        reference: &CandidateInfo,
        rows: &[JudgeQuestionRow],
        criteria: &[String],
        trust: &[CriterionTrust],
        alpha: f64,
    ) -> Self {
        let on = criteria
            .iter()
            .filter_map(|c| {
                let (r, x) = paired(rows, &reference.config_id, &candidate.config_id, c);
                if r.is_empty() {
                    return None;
                }
                let mcnemar = mcnemar_paired(&r, &x);
                let errors = errors_against(rows, &reference.config_id, &candidate.config_id, c);
                // A one-sided (1 − α) bound is one side of a two-sided (1 − 2α) interval.
                let lost_upper = wilson(
                    mcnemar.b + errors,
                    r.len() as u64 + errors,
                    1.0 - 2.0 * alpha,
                )
                .hi;
                let significant = mcnemar.p_value < alpha;
                Some(OnCriterion {
                    criterion: c.clone(),
                    n: r.len(),
                    errors,
                    trusted: trust.iter().any(|t| &t.criterion == c && t.can_confirm()),
                    better: significant && mcnemar.c > mcnemar.b,
                    worse: significant && mcnemar.b > mcnemar.c,
                    mcnemar,
                    lost_upper,
                    non_inferior: lost_upper <= ANSWER_DELTA + 1e-12,
                    level: (1.0 - alpha) * 100.0,
                })
            })
            .collect();
        Against {
            id: candidate.config_id.clone(),
            reference: reference.config_id.clone(),
            cheaper: candidate.tokens_per_query < reference.tokens_per_query,
            tokens: format!(
                "{} vs {} tokens per query",
                crate::select::thousands(candidate.tokens_per_query),
                crate::select::thousands(reference.tokens_per_query)
            ),
            on,
        }
    }

    /// Whether the judge's verdicts may move the pick to this candidate (see the module's rule).
    pub fn moves(&self) -> bool {
        if self.on.is_empty() {
            return false;
        }
        if self.cheaper {
            self.on.iter().all(|o| o.trusted && o.non_inferior)
        } else {
            self.on.iter().any(|o| o.better && o.trusted) && !self.on.iter().any(|o| o.worse)
        }
    }

    /// What the judge saw, criterion by criterion: "faithfulness: 5 paired answers, 0 passed only
    /// with `A` and 1 only with `B` (McNemar p = 1.000); answers lost 0 of 5, one-sided 95% upper
    /// bound 0.351 > δ = 0.1: not shown non-inferior; the judge not trusted there".
    fn seen(&self) -> String {
        let delta = crate::select::trim(ANSWER_DELTA);
        let parts: Vec<String> = self
            .on
            .iter()
            .map(|o| {
                format!(
                    "{}: {} paired answers, {} passed only with `{}` and {} only with `{}` \
                     (McNemar p = {:.3}); answers lost {} of {}{}, one-sided {}% upper bound \
                     {:.3} {}{}",
                    o.criterion,
                    o.n,
                    o.mcnemar.b,
                    self.reference,
                    o.mcnemar.c,
                    self.id,
                    o.mcnemar.p_value,
                    o.mcnemar.b + o.errors,
                    o.n as u64 + o.errors,
                    match o.errors {
                        0 => String::new(),
                        1 => format!(" (an error verdict of `{}` counted as lost)", self.id),
                        e => format!(" ({e} error verdicts of `{}` counted as lost)", self.id),
                    },
                    crate::select::trim(o.level),
                    o.lost_upper,
                    if o.non_inferior {
                        format!("≤ δ = {delta}: non-inferior")
                    } else {
                        format!("> δ = {delta}: not shown non-inferior")
                    },
                    if o.trusted {
                        ""
                    } else {
                        "; the judge not trusted there"
                    }
                )
            })
            .collect();
        parts.join("; ")
    }

    /// Why the candidate does not move the pick, in words (empty when it does).
    fn why_not(&self) -> String {
        if self.on.is_empty() {
            return "no answer of both was graded on the same question".into();
        }
        let untrusted: Vec<&str> = self
            .on
            .iter()
            .filter(|o| !o.trusted)
            .map(|o| o.criterion.as_str())
            .collect();
        let mut why = Vec::new();
        if self.cheaper {
            let open: Vec<&str> = self
                .on
                .iter()
                .filter(|o| !o.non_inferior)
                .map(|o| o.criterion.as_str())
                .collect();
            if !open.is_empty() {
                why.push(format!(
                    "its answers are not shown non-inferior within δ = {} on {} (not \
                     significantly worse is not as good)",
                    crate::select::trim(ANSWER_DELTA),
                    open.join(", ")
                ));
            }
        } else if !self.on.iter().any(|o| o.better && o.trusted) {
            why.push(
                "it is not significantly better on any criterion the judge is trusted on".into(),
            );
        } else if self.on.iter().any(|o| o.worse) {
            why.push("it is significantly worse on another criterion".into());
        }
        if !untrusted.is_empty() {
            why.push(format!(
                "the judge is not trusted on {} (its planted controls and repeats do not show \
                 that it tells a failing answer from a passing one there)",
                untrusted.join(", ")
            ));
        }
        why.join("; and ")
    }

    /// The sentence for the report: what the judge saw of this candidate against the reference
    /// (`reference_name`: "the selection's pick" or "the first listed configuration") and whether
    /// it moves the pick.
    pub fn sentence(&self, reference_name: &str) -> String {
        let head = format!(
            "`{}` against {reference_name} `{}` ({}): {}",
            self.id,
            self.reference,
            self.tokens,
            if self.on.is_empty() {
                "no paired answers".to_string()
            } else {
                self.seen()
            }
        );
        if self.moves() {
            let how = if self.cheaper {
                format!(
                    "non-inferior within δ = {} on every criterion, each trusted, and cheaper",
                    crate::select::trim(ANSWER_DELTA)
                )
            } else {
                "significantly better on a trusted criterion and worse on none".into()
            };
            format!("{head}. It is {how}: it replaces {reference_name}.")
        } else {
            format!("{head}. This does not move the pick: {}.", self.why_not())
        }
    }
}
