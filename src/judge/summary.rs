//! judge.csv, the paired comparison and the decision, and the report's judge section.
//!
//! A criterion's pass rate is pass / (pass + fail): the questions the judge actually graded. An
//! `error` verdict (unreadable, or the call timed out) and a question whose answer could not be
//! generated are counted in their own columns and never enter a rate, so one pass and one
//! unreadable verdict is a rate of 1.0 over one judged question. A criterion with nothing judged
//! has no rate (`n/a`). Intervals are 95% Wilson intervals on the judged count and comparisons
//! exact McNemar tests on the questions both candidates have a pass or fail for, both from
//! [`crate::stats`]. A candidate without a single valid verdict cannot be compared, so the judge
//! then confirms nothing.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::rows::JudgeQuestionRow;
use super::trust::{self, CriterionTrust};
use super::verdict::{Criterion, Verdict};
use crate::stats::{mcnemar_paired, wilson};

/// Confidence level of the intervals in judge.csv.
pub const CONFIDENCE: f64 = 0.95;

/// Recall difference under which two candidates have "equal recall" (seed 000's 0.02).
pub const EQUAL_RECALL: f64 = 0.02;

/// What the sweep knows about a candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CandidateInfo {
    /// Configuration id.
    pub config_id: String,
    /// Chunk size, in tokenizer units.
    pub chunk_size: usize,
    /// Context tokens sent per query (the mean tokens retrieved, from sweep.csv).
    pub tokens_per_query: f64,
    /// Macro span recall@k from the sweep.
    pub span_recall: f64,
}

/// One criterion of one candidate: pass rate over the judged questions, with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Questions with a pass or fail verdict.
    pub judged: usize,
    /// Pass verdicts.
    pub pass: usize,
    /// Error verdicts (not in the rate), generation errors aside.
    pub errors: usize,
    /// `pass / judged`; `None` when nothing was judged.
    pub rate: Option<f64>,
    /// 95% Wilson interval of the rate; `None` when nothing was judged.
    pub interval: Option<(f64, f64)>,
}

impl Rate {
    fn of(rows: &[&JudgeQuestionRow], c: Criterion) -> Rate {
        let count = |v: Verdict| rows.iter().filter(|r| r.verdict(c) == v).count();
        let (pass, fail) = (count(Verdict::Pass), count(Verdict::Fail));
        // an answer that could not be generated is a generation error, not an error verdict
        let errors = rows
            .iter()
            .filter(|r| r.generate_error.is_empty() && r.verdict(c) == Verdict::Error)
            .count();
        let judged = pass + fail;
        let (rate, interval) = if judged == 0 {
            (None, None)
        } else {
            let ci = wilson(pass as u64, judged as u64, CONFIDENCE);
            (Some(pass as f64 / judged as f64), Some((ci.lo, ci.hi)))
        };
        Rate {
            judged,
            pass,
            errors,
            rate,
            interval,
        }
    }
}

/// One row of judge.csv: a candidate's pass rates, errors, latency, tokens and cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeRow {
    /// Configuration id.
    pub config_id: String,
    /// Chunk size.
    pub chunk_size: usize,
    /// Context tokens per query, from the sweep.
    pub tokens_per_query: f64,
    /// Span recall@k, from the sweep.
    pub span_recall: f64,
    /// Questions with a row.
    pub n_questions: usize,
    /// Questions with a faithfulness pass or fail (the rate's denominator).
    pub faithfulness_judged: usize,
    /// Faithfulness passes.
    pub faithfulness_pass: usize,
    /// Faithfulness pass rate, pass / judged; empty when nothing was judged.
    pub faithfulness_rate: Option<f64>,
    /// Lower bound of its 95% Wilson interval.
    pub faithfulness_lo: Option<f64>,
    /// Upper bound.
    pub faithfulness_hi: Option<f64>,
    /// Faithfulness error verdicts (not in the rate).
    pub faithfulness_errors: usize,
    /// Questions with a relevancy pass or fail.
    pub relevancy_judged: usize,
    /// Relevancy passes.
    pub relevancy_pass: usize,
    /// Relevancy pass rate; empty when nothing was judged.
    pub relevancy_rate: Option<f64>,
    /// Lower bound of its 95% Wilson interval.
    pub relevancy_lo: Option<f64>,
    /// Upper bound.
    pub relevancy_hi: Option<f64>,
    /// Relevancy error verdicts.
    pub relevancy_errors: usize,
    /// Questions with a correctness pass or fail (only questions with a reference answer).
    pub correctness_judged: usize,
    /// Correctness passes.
    pub correctness_pass: usize,
    /// Correctness pass rate; empty when nothing was judged.
    pub correctness_rate: Option<f64>,
    /// Lower bound of its 95% Wilson interval.
    pub correctness_lo: Option<f64>,
    /// Upper bound.
    pub correctness_hi: Option<f64>,
    /// Correctness error verdicts.
    pub correctness_errors: usize,
    /// Questions whose answer could not be generated (empty or filtered content, cut at the
    /// token cap, timeouts); they are not graded.
    pub generation_errors: usize,
    /// All errors: error verdicts plus generation errors.
    pub errors: u32,
    /// Median retrieval time, ms.
    pub retrieve_ms_p50: f64,
    /// 95th percentile retrieval time, ms.
    pub retrieve_ms_p95: f64,
    /// Median generation time, ms.
    pub generate_ms_p50: f64,
    /// 95th percentile generation time, ms.
    pub generate_ms_p95: f64,
    /// Median judging time, ms.
    pub judge_ms_p50: f64,
    /// 95th percentile judging time, ms.
    pub judge_ms_p95: f64,
    /// Mean prompt + completion tokens of all calls per question.
    pub tokens_per_question: f64,
    /// Mean generator prompt + completion tokens per question.
    pub generate_tokens_per_question: f64,
    /// Calls whose reply carried no usable usage, so their tokens (and cost) are estimates.
    pub calls_without_usage: u32,
    /// Mean cost per question at list price, USD (empty without prices).
    pub cost_per_question_usd: Option<f64>,
    /// Total cost at list price, USD (empty without prices).
    pub cost_total_usd: Option<f64>,
    /// True when the cost includes estimated tokens (`calls_without_usage` > 0).
    pub cost_estimated: bool,
    /// The judge's faithfulness true-negative rate on planted failures, over all candidates
    /// (the same in every row; empty without such controls).
    pub faithfulness_control_tnr: Option<f64>,
    /// Lower bound of its 95% Wilson interval.
    pub faithfulness_control_tnr_lo: Option<f64>,
    /// The judge's faithfulness true-positive rate on planted passes.
    pub faithfulness_control_tpr: Option<f64>,
    /// Share of repeated faithfulness verdicts equal to the first.
    pub faithfulness_repeat_agreement: Option<f64>,
    /// Cohen's κ of the repeated faithfulness verdicts against the first.
    pub faithfulness_repeat_kappa: Option<f64>,
    /// Relevancy true-negative rate on planted failures.
    pub relevancy_control_tnr: Option<f64>,
    /// Lower bound of its 95% Wilson interval.
    pub relevancy_control_tnr_lo: Option<f64>,
    /// Relevancy true-positive rate on planted passes.
    pub relevancy_control_tpr: Option<f64>,
    /// Share of repeated relevancy verdicts equal to the first.
    pub relevancy_repeat_agreement: Option<f64>,
    /// Cohen's κ of the repeated relevancy verdicts.
    pub relevancy_repeat_kappa: Option<f64>,
    /// Correctness true-negative rate on planted failures.
    pub correctness_control_tnr: Option<f64>,
    /// Lower bound of its 95% Wilson interval.
    pub correctness_control_tnr_lo: Option<f64>,
    /// Correctness true-positive rate on planted passes.
    pub correctness_control_tpr: Option<f64>,
    /// Share of repeated correctness verdicts equal to the first.
    pub correctness_repeat_agreement: Option<f64>,
    /// Cohen's κ of the repeated correctness verdicts.
    pub correctness_repeat_kappa: Option<f64>,
}

/// The trust columns of judge.csv for criterion `c`: TNR, its lower bound, TPR, repeat
/// agreement, repeat κ (all `None` without controls or repeats).
fn trust_cells(trust: &[CriterionTrust], c: Criterion) -> [Option<f64>; 5] {
    let Some(t) = trust.iter().find(|t| t.criterion == c) else {
        return [None; 5];
    };
    [
        t.controls.tnr.map(|p| p.value),
        t.controls.tnr.map(|p| p.interval.lo),
        t.controls.tpr.map(|p| p.value),
        t.repeat.agreement.map(|p| p.value),
        t.repeat.kappa.map(|k| k.value),
    ]
}

/// Quantile `q` of latencies `v` ([`crate::stats::quantile`]); 0 for none.
fn percentile(v: &[f64], q: f64) -> f64 {
    crate::stats::quantile(v, q).unwrap_or(0.0)
}

/// Aggregates the rows of each candidate (in `candidates` order) into judge.csv rows, with the
/// judge's control rates and repeat agreement (`trust`) beside the pass rates.
pub fn summarise(
    candidates: &[CandidateInfo],
    rows: &[JudgeQuestionRow],
    trust: &[CriterionTrust],
) -> Vec<JudgeRow> {
    let [f_tnr, f_tnr_lo, f_tpr, f_agree, f_kappa] = trust_cells(trust, Criterion::Faithfulness);
    let [r_tnr, r_tnr_lo, r_tpr, r_agree, r_kappa] = trust_cells(trust, Criterion::Relevancy);
    let [c_tnr, c_tnr_lo, c_tpr, c_agree, c_kappa] = trust_cells(trust, Criterion::Correctness);
    candidates
        .iter()
        .map(|c| {
            let mine: Vec<&JudgeQuestionRow> =
                rows.iter().filter(|r| r.config_id == c.config_id).collect();
            let n = mine.len();
            let f = Rate::of(&mine, Criterion::Faithfulness);
            let r = Rate::of(&mine, Criterion::Relevancy);
            let k = Rate::of(&mine, Criterion::Correctness);
            let col =
                |f: fn(&JudgeQuestionRow) -> f64| mine.iter().map(|r| f(r)).collect::<Vec<_>>();
            let (ret, gen_, jud) = (
                col(|r| r.retrieve_ms),
                col(|r| r.generate_ms),
                col(|r| r.judge_ms),
            );
            let mean = |f: fn(&JudgeQuestionRow) -> f64| {
                if n == 0 {
                    0.0
                } else {
                    mine.iter().map(|r| f(r)).sum::<f64>() / n as f64
                }
            };
            let total: Option<f64> = mine.iter().map(|r| r.cost_usd).sum();
            let without_usage: u32 = mine.iter().map(|r| r.calls_without_usage).sum();
            JudgeRow {
                config_id: c.config_id.clone(),
                chunk_size: c.chunk_size,
                tokens_per_query: c.tokens_per_query,
                span_recall: c.span_recall,
                n_questions: n,
                faithfulness_judged: f.judged,
                faithfulness_pass: f.pass,
                faithfulness_rate: f.rate,
                faithfulness_lo: f.interval.map(|i| i.0),
                faithfulness_hi: f.interval.map(|i| i.1),
                faithfulness_errors: f.errors,
                relevancy_judged: r.judged,
                relevancy_pass: r.pass,
                relevancy_rate: r.rate,
                relevancy_lo: r.interval.map(|i| i.0),
                relevancy_hi: r.interval.map(|i| i.1),
                relevancy_errors: r.errors,
                correctness_judged: k.judged,
                correctness_pass: k.pass,
                correctness_rate: k.rate,
                correctness_lo: k.interval.map(|i| i.0),
                correctness_hi: k.interval.map(|i| i.1),
                correctness_errors: k.errors,
                generation_errors: mine.iter().filter(|r| !r.generate_error.is_empty()).count(),
                errors: mine.iter().map(|r| r.errors).sum(),
                retrieve_ms_p50: percentile(&ret, 0.5),
                retrieve_ms_p95: percentile(&ret, 0.95),
                generate_ms_p50: percentile(&gen_, 0.5),
                generate_ms_p95: percentile(&gen_, 0.95),
                judge_ms_p50: percentile(&jud, 0.5),
                judge_ms_p95: percentile(&jud, 0.95),
                tokens_per_question: mean(|r| (r.prompt_tokens + r.completion_tokens) as f64),
                generate_tokens_per_question: mean(|r| r.generate_tokens as f64),
                calls_without_usage: without_usage,
                cost_per_question_usd: total.map(|t| if n == 0 { 0.0 } else { t / n as f64 }),
                cost_total_usd: total,
                cost_estimated: without_usage > 0,
                faithfulness_control_tnr: f_tnr,
                faithfulness_control_tnr_lo: f_tnr_lo,
                faithfulness_control_tpr: f_tpr,
                faithfulness_repeat_agreement: f_agree,
                faithfulness_repeat_kappa: f_kappa,
                relevancy_control_tnr: r_tnr,
                relevancy_control_tnr_lo: r_tnr_lo,
                relevancy_control_tpr: r_tpr,
                relevancy_repeat_agreement: r_agree,
                relevancy_repeat_kappa: r_kappa,
                correctness_control_tnr: c_tnr,
                correctness_control_tnr_lo: c_tnr_lo,
                correctness_control_tpr: c_tpr,
                correctness_repeat_agreement: c_agree,
                correctness_repeat_kappa: c_kappa,
            }
        })
        .collect()
}

/// A paired exact McNemar test of two candidates on one criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Criterion.
    pub criterion: &'static str,
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
pub struct Decision {
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
    /// [`Decision::unconfirm`]).
    pub unconfirmed: Vec<String>,
}

impl Decision {
    /// Marks the decision as not confirmed on every criterion whose verdicts cannot confirm the
    /// pick ([`CriterionTrust::can_confirm`]): [`Decision::unconfirmed`] names them, the sentence
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
        self.reasons
            .retain(|r| !r.starts_with("The judge confirms"));
        for t in doubtful {
            self.unconfirmed.push(t.criterion.name().to_string());
            self.reasons.push(format!(
                "The judge's {} verdicts cannot confirm the pick: {}.",
                t.criterion.name(),
                t.doubts.join("; and ")
            ));
        }
    }
}

/// Paired outcomes of `a` and `b` on `c`: questions where both have a pass or fail verdict.
fn paired(rows: &[JudgeQuestionRow], a: &str, b: &str, c: Criterion) -> (Vec<bool>, Vec<bool>) {
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
        Criterion::ALL
            .iter()
            .any(|&c| r.verdict(c).outcome().is_some())
    })
}

/// Compares every pair of candidates on every criterion (exact McNemar) and chooses: among the
/// candidates no other one beats (significantly better on some criterion and significantly worse
/// on none), the one with the fewest tokens per query. If some candidate has no valid verdict at
/// all, nothing is chosen (`chosen` is `None`) and the reasons say which. The choice is described
/// against the selection's pick when `pick` (its configuration id) is among the candidates, and
/// against the first listed candidate otherwise (`--candidates`, `--compare-prefix`), which is
/// then never called the selection's pick; if the choice is a larger chunk size at recall within
/// [`EQUAL_RECALL`] of that reference, the decision says so (seed 000's rule) and suggests trying
/// contextual enrichment at the smaller size.
///
/// # Panics
/// If `candidates` is empty.
pub fn decide(
    candidates: &[CandidateInfo],
    rows: &[JudgeQuestionRow],
    alpha: f64,
    pick: Option<&str>,
) -> Decision {
    assert!(!candidates.is_empty(), "no candidate to decide between");
    let mut comparisons = Vec::new();
    for (i, a) in candidates.iter().enumerate() {
        for b in &candidates[i + 1..] {
            for c in Criterion::ALL {
                let (x, y) = paired(rows, &a.config_id, &b.config_id, c);
                if x.is_empty() {
                    continue;
                }
                let m = mcnemar_paired(&x, &y);
                comparisons.push(Comparison {
                    criterion: c.name(),
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
    let unjudged: Vec<String> = candidates
        .iter()
        .filter(|c| !has_valid_verdict(rows, &c.config_id))
        .map(|c| c.config_id.clone())
        .collect();
    if !unjudged.is_empty() {
        let names: Vec<String> = unjudged.iter().map(|id| format!("`{id}`")).collect();
        return Decision {
            chosen: None,
            reasons: vec![format!(
                "No valid verdict for {}: every verdict is an error or no answer was generated, so no candidate can be compared with it and nothing is confirmed; see the reasons in judge_questions.csv.",
                names.join(", ")
            )],
            unjudged,
            comparisons,
            larger_at_equal_recall: false,
            unconfirmed: Vec::new(),
        };
    }
    // better[x][y] = criteria on which x is significantly better than y
    let better = |x: &str, y: &str| -> Vec<&Comparison> {
        comparisons
            .iter()
            .filter(|c| {
                c.significant
                    && ((c.a == x && c.b == y && c.a_only > c.b_only)
                        || (c.b == x && c.a == y && c.b_only > c.a_only))
            })
            .collect()
    };
    let beats = |x: &str, y: &str| !better(x, y).is_empty() && better(y, x).is_empty();
    let mut by_cost: Vec<&CandidateInfo> = candidates.iter().collect();
    by_cost.sort_by(|p, q| p.tokens_per_query.total_cmp(&q.tokens_per_query));
    let undominated: Vec<&CandidateInfo> = by_cost
        .iter()
        .copied()
        .filter(|x| !candidates.iter().any(|y| beats(&y.config_id, &x.config_id)))
        .collect();
    let chosen = *undominated.first().unwrap_or(&by_cost[0]);

    let mut reasons = Vec::new();
    let fmt_cmp = |c: &Comparison| {
        format!(
            "{} p = {:.3} ({} vs {} discordant)",
            c.criterion, c.p_value, c.a_only, c.b_only
        )
    };
    for other in candidates
        .iter()
        .filter(|o| o.config_id != chosen.config_id)
    {
        let ours = better(&chosen.config_id, &other.config_id);
        let theirs = better(&other.config_id, &chosen.config_id);
        let pair: Vec<&Comparison> = comparisons
            .iter()
            .filter(|c| {
                (c.a == chosen.config_id && c.b == other.config_id)
                    || (c.b == chosen.config_id && c.a == other.config_id)
            })
            .collect();
        let tokens = format!(
            "{:.0} vs {:.0} tokens per query",
            chosen.tokens_per_query, other.tokens_per_query
        );
        if ours.is_empty() && theirs.is_empty() {
            let ps: Vec<String> = pair.iter().map(|c| fmt_cmp(c)).collect();
            let cheaper = chosen.tokens_per_query <= other.tokens_per_query;
            reasons.push(format!(
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
            ));
        } else if !ours.is_empty() {
            let ps: Vec<String> = ours.iter().map(|c| fmt_cmp(c)).collect();
            reasons.push(format!(
                "`{}` is significantly better than `{}` on {}{}.",
                chosen.config_id,
                other.config_id,
                ps.join("; "),
                if other.tokens_per_query < chosen.tokens_per_query {
                    format!(", which outweighs the cost ({tokens})")
                } else {
                    String::new()
                }
            ));
        } else {
            let ps: Vec<String> = theirs.iter().map(|c| fmt_cmp(c)).collect();
            reasons.push(format!(
                "`{}` is significantly better on {} but worse elsewhere; `{}` is kept as the cheaper of the two ({tokens}).",
                other.config_id,
                ps.join("; "),
                chosen.config_id
            ));
        }
    }
    let (first, first_name) = match candidates
        .iter()
        .find(|c| Some(c.config_id.as_str()) == pick)
    {
        Some(p) => (p, "the selection's pick"),
        None => (&candidates[0], "the first listed configuration"),
    };
    let larger_at_equal_recall = chosen.chunk_size > first.chunk_size
        && (chosen.span_recall - first.span_recall).abs() <= EQUAL_RECALL;
    if larger_at_equal_recall {
        reasons.push(format!(
            "The judge prefers a larger chunk size than {first_name} ({} vs {}) at equal span recall ({:.3} vs {:.3}): prefer it, and check whether contextual enrichment (prefixing each chunk with its document and section title) gets the same benefit at the smaller size.",
            chosen.chunk_size, first.chunk_size, chosen.span_recall, first.span_recall
        ));
    } else if chosen.config_id != first.config_id {
        reasons.push(format!(
            "The judge prefers `{}` to {first_name} `{}`.",
            chosen.config_id, first.config_id
        ));
    } else {
        reasons.push(if Some(first.config_id.as_str()) == pick {
            format!(
                "The judge confirms the selection's pick `{}`.",
                first.config_id
            )
        } else {
            format!(
                "The judge prefers `{}` among the listed configurations.",
                first.config_id
            )
        });
    }
    Decision {
        chosen: Some(chosen.config_id.clone()),
        unjudged: Vec::new(),
        comparisons,
        reasons,
        larger_at_equal_recall,
        unconfirmed: Vec::new(),
    }
}

fn rate_cell(judged: usize, rate: Option<f64>, lo: Option<f64>, hi: Option<f64>) -> String {
    match (rate, lo, hi) {
        (Some(r), Some(l), Some(h)) => format!("{r:.2} [{l:.2}, {h:.2}] of {judged}"),
        _ => "n/a".into(),
    }
}

/// The report's judge section (Markdown, starting with `## Answer quality (judge)`).
pub fn markdown(
    summary: &[JudgeRow],
    decision: &Decision,
    trust: &[CriterionTrust],
    generator_model: &str,
    judge_model: &str,
    incomplete: Option<&str>,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## Answer quality (judge)\n");
    let _ = writeln!(
        s,
        "Generator `{generator_model}`, judge `{judge_model}`; pass rate = pass / (pass + fail) over the judged questions (\"of n\"), with its 95% Wilson interval; error verdicts and answers that could not be generated are counted apart and are in no rate; n/a: nothing judged.\n"
    );
    if let Some(note) = incomplete {
        let _ = writeln!(s, "**Incomplete run:** {note}\n");
    }
    let _ = writeln!(
        s,
        "| configuration | tokens/query | span recall | faithfulness | relevancy | correctness | error verdicts | generation errors | tokens/question | cost/question (USD) |"
    );
    let _ = writeln!(s, "|---|---:|---:|---|---|---|---:|---:|---:|---:|");
    for r in summary {
        let cost = match r.cost_per_question_usd {
            Some(c) if r.cost_estimated => format!("{c:.5} (estimate)"),
            Some(c) => format!("{c:.5}"),
            None => "n/a".into(),
        };
        let _ = writeln!(
            s,
            "| `{}` | {:.0} | {:.3} | {} | {} | {} | {} | {} | {:.0} | {} |",
            r.config_id,
            r.tokens_per_query,
            r.span_recall,
            rate_cell(
                r.faithfulness_judged,
                r.faithfulness_rate,
                r.faithfulness_lo,
                r.faithfulness_hi
            ),
            rate_cell(
                r.relevancy_judged,
                r.relevancy_rate,
                r.relevancy_lo,
                r.relevancy_hi
            ),
            rate_cell(
                r.correctness_judged,
                r.correctness_rate,
                r.correctness_lo,
                r.correctness_hi
            ),
            r.faithfulness_errors + r.relevancy_errors + r.correctness_errors,
            r.generation_errors,
            r.tokens_per_question,
            cost
        );
    }
    let estimated: u32 = summary.iter().map(|r| r.calls_without_usage).sum();
    if estimated > 0 {
        let _ = writeln!(
            s,
            "\nCosts marked (estimate) include {estimated} call(s) whose reply carried no token usage: their tokens were counted with cl100k_base."
        );
    }
    s.push_str(&trust::markdown(trust));
    if !decision.comparisons.is_empty() {
        let _ = writeln!(
            s,
            "\nPaired exact McNemar tests (questions both have a pass or fail for):\n"
        );
        let _ = writeln!(s, "| criterion | A | B | n | A only | B only | p |");
        let _ = writeln!(s, "|---|---|---|---:|---:|---:|---:|");
        for c in &decision.comparisons {
            let _ = writeln!(
                s,
                "| {} | `{}` | `{}` | {} | {} | {} | {:.3}{} |",
                c.criterion,
                c.a,
                c.b,
                c.n,
                c.a_only,
                c.b_only,
                c.p_value,
                if c.significant { " *" } else { "" }
            );
        }
    }
    match &decision.chosen {
        Some(id) if decision.unconfirmed.is_empty() => {
            let _ = writeln!(s, "\n**Decision: `{id}`.**\n");
        }
        Some(id) => {
            let _ = writeln!(
                s,
                "\n**Decision: `{id}`, not confirmed on {}: the judge's verdicts there cannot be trusted (see below).**\n",
                decision.unconfirmed.join(", ")
            );
        }
        None => {
            let _ = writeln!(s, "\n**No decision: the judge gave no valid verdict.**\n");
        }
    }
    for r in &decision.reasons {
        let _ = writeln!(s, "- {r}");
    }
    let errors: u32 = summary.iter().map(|r| r.errors).sum();
    if errors > 0 {
        let per: Vec<String> = summary
            .iter()
            .filter(|r| r.errors > 0)
            .map(|r| format!("`{}`: {}", r.config_id, r.errors))
            .collect();
        let _ = writeln!(
            s,
            "- {errors} error(s): verdicts that could not be read or timed out, and answers that could not be generated ({}); see judge_questions.csv.",
            per.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cfg: &str, q: usize, f: &str, r: &str, c: &str) -> JudgeQuestionRow {
        JudgeQuestionRow {
            config_id: cfg.into(),
            question_id: format!("q{q}"),
            question_type: String::new(),
            retrieved_chunk_ids: String::new(),
            answer: String::new(),
            faithfulness: f.into(),
            faithfulness_reason: String::new(),
            relevancy: r.into(),
            relevancy_reason: String::new(),
            correctness: c.into(),
            correctness_reason: String::new(),
            errors: [f, r, c].iter().filter(|v| **v == "error").count() as u32,
            retrieve_ms: q as f64,
            generate_ms: 10.0 * q as f64,
            judge_ms: 1.0,
            calls: 3,
            prompt_tokens: 100,
            completion_tokens: 10,
            generate_tokens: 60,
            cost_usd: Some(0.001),
            generate_error: String::new(),
            calls_without_usage: 0,
        }
    }

    fn info(id: &str, size: usize, tpq: f64, recall: f64) -> CandidateInfo {
        CandidateInfo {
            config_id: id.into(),
            chunk_size: size,
            tokens_per_query: tpq,
            span_recall: recall,
        }
    }

    #[test]
    fn rates_count_only_judged_questions() {
        // 10 questions: faithfulness 7 pass, 2 fail, 1 error; correctness only on 4
        let mut rows = Vec::new();
        for q in 0..10 {
            let f = if q < 7 {
                "pass"
            } else if q < 9 {
                "fail"
            } else {
                "error"
            };
            let c = if q < 3 {
                "pass"
            } else if q < 4 {
                "fail"
            } else {
                "na"
            };
            rows.push(row("A", q, f, "pass", c));
        }
        rows[0].calls_without_usage = 2;
        let s = summarise(&[info("A", 64, 320.0, 0.9)], &rows, &[]);
        let r = &s[0];
        assert_eq!(r.n_questions, 10);
        assert_eq!((r.faithfulness_judged, r.faithfulness_pass), (9, 7));
        assert_eq!(r.faithfulness_rate, Some(7.0 / 9.0));
        assert_eq!(r.faithfulness_errors, 1);
        let ci = wilson(7, 9, 0.95);
        assert_eq!(
            (r.faithfulness_lo, r.faithfulness_hi),
            (Some(ci.lo), Some(ci.hi))
        );
        assert_eq!(r.correctness_judged, 4);
        assert_eq!(r.correctness_rate, Some(0.75));
        assert_eq!(r.errors, 1);
        assert_eq!(r.generation_errors, 0);
        // 0, 10, …, 90 ms: the median interpolates between 40 and 50
        assert_eq!(r.generate_ms_p50, 45.0);
        assert!((r.cost_total_usd.unwrap() - 0.01).abs() < 1e-12);
        assert!((r.tokens_per_question - 110.0).abs() < 1e-12);
        assert_eq!((r.calls_without_usage, r.cost_estimated), (2, true));
    }

    #[test]
    fn one_pass_and_one_error_is_a_rate_of_one_over_one() {
        let rows = [
            row("A", 0, "pass", "pass", "na"),
            row("A", 1, "error", "pass", "na"),
        ];
        let r = &summarise(&[info("A", 64, 320.0, 0.9)], &rows, &[])[0];
        assert_eq!((r.faithfulness_judged, r.faithfulness_rate), (1, Some(1.0)));
        assert_eq!(r.faithfulness_errors, 1);
        // nothing judged: n/a, not 0
        assert_eq!(
            (r.correctness_judged, r.correctness_rate, r.correctness_lo),
            (0, None, None)
        );
        let d = decide(&[info("A", 64, 320.0, 0.9)], &rows, 0.05, Some("A"));
        let md = markdown(
            &summarise(&[info("A", 64, 320.0, 0.9)], &rows, &[]),
            &d,
            &[],
            "g",
            "j",
            None,
        );
        assert!(md.contains("| 1.00 [0.21, 1.00] of 1 |"), "{md}");
        assert!(md.contains("| n/a | 1 | 0 |"), "{md}");
        assert!(
            md.contains("The judge confirms the selection's pick `A`."),
            "{md}"
        );
    }

    #[test]
    fn no_valid_verdict_confirms_nothing() {
        let rows: Vec<_> = (0..3)
            .flat_map(|q| {
                [
                    row("A", q, "error", "error", "error"),
                    row("B", q, "pass", "pass", "na"),
                ]
            })
            .collect();
        let cands = [info("A", 64, 320.0, 0.9), info("B", 256, 1280.0, 0.9)];
        let d = decide(&cands, &rows, 0.05, Some("A"));
        assert_eq!(d.chosen, None);
        assert_eq!(d.unjudged, vec!["A".to_string()]);
        assert!(d.comparisons.is_empty(), "errors are not paired outcomes");
        let md = markdown(&summarise(&cands, &rows, &[]), &d, &[], "g", "j", None);
        assert!(!md.contains("confirms"), "{md}");
        assert!(
            md.contains("**No decision: the judge gave no valid verdict.**"),
            "{md}"
        );
        assert!(
            md.contains("| `A` | 320 | 0.900 | n/a | n/a | n/a | 9 | 0 |"),
            "{md}"
        );
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
        let d = decide(&cands, &rows, 0.05, None);
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
        let d = decide(&cands, &rows, 0.05, Some("A"));
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
        let d = decide(&cands, &rows, 0.05, Some("A"));
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
        let md = markdown(&summarise(&cands, &rows, &[]), &d, &[], "g", "j", None);
        assert!(md.contains("**Decision: `B`.**"));
        assert!(
            md.contains("| faithfulness | `A` | `B` | 12 | 0 | 10 | 0.002 * |"),
            "{md}"
        );
        // with recall far apart the seed-000 sentence is not used
        let cands = [info("A", 64, 320.0, 0.70), info("B", 256, 1280.0, 0.91)];
        assert!(!decide(&cands, &rows, 0.05, Some("A")).larger_at_equal_recall);
    }
}

#[cfg(test)]
mod unconfirm_tests {
    use super::*;
    use crate::judge::check::CheckRow;

    #[test]
    fn an_always_pass_judge_does_not_confirm_the_pick() {
        let row = |kind: &str, expected: &str| CheckRow {
            kind: kind.into(),
            criterion: "faithfulness".into(),
            config_id: "A".into(),
            item_id: "q".into(),
            other_id: String::new(),
            expected: expected.into(),
            verdict: "pass".into(),
            reason: String::new(),
            calls: 1,
            prompt_tokens: 0,
            completion_tokens: 0,
            cost_usd: None,
        };
        let rows: Vec<CheckRow> = (0..5)
            .flat_map(|_| {
                [
                    row("other_context", "fail"),
                    row("reference_evidence", "pass"),
                ]
            })
            .collect();
        let t = trust::trust(&rows, 0.5, 0.4);
        let mut d = Decision {
            chosen: Some("A".into()),
            unjudged: vec![],
            comparisons: vec![],
            reasons: vec!["The judge confirms the selection's pick `A`.".into()],
            larger_at_equal_recall: false,
            unconfirmed: vec![],
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
        let mut none = Decision {
            chosen: None,
            reasons: vec![],
            unconfirmed: vec![],
            ..d.clone()
        };
        none.unconfirm(&t);
        assert!(none.unconfirmed.is_empty() && none.reasons.is_empty());
    }
}
