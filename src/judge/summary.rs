//! judge.csv, the paired comparison and the decision, and the report's judge section.
//!
//! Pass rates count an `error` verdict as "not a pass" (an error is never a pass), over the
//! questions the criterion applies to; errors are also counted on their own. Intervals are 95%
//! Wilson intervals and comparisons exact McNemar tests, both from [`crate::stats`]. The paired
//! test uses every question both candidates have a row for, with pass = true and fail or error =
//! false.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::pipeline::JudgeQuestionRow;
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
    /// Context tokens sent per query (k × mean chunk tokens).
    pub tokens_per_query: f64,
    /// Macro span recall@k from the sweep.
    pub span_recall: f64,
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
    /// Faithfulness passes.
    pub faithfulness_pass: usize,
    /// Faithfulness pass rate (errors count as not passing).
    pub faithfulness_rate: f64,
    /// Lower bound of its 95% Wilson interval.
    pub faithfulness_lo: f64,
    /// Upper bound.
    pub faithfulness_hi: f64,
    /// Faithfulness error verdicts.
    pub faithfulness_errors: usize,
    /// Relevancy passes.
    pub relevancy_pass: usize,
    /// Relevancy pass rate.
    pub relevancy_rate: f64,
    /// Lower bound of its 95% Wilson interval.
    pub relevancy_lo: f64,
    /// Upper bound.
    pub relevancy_hi: f64,
    /// Relevancy error verdicts.
    pub relevancy_errors: usize,
    /// Questions with a reference answer (correctness applies).
    pub correctness_n: usize,
    /// Correctness passes.
    pub correctness_pass: usize,
    /// Correctness pass rate (empty without reference answers).
    pub correctness_rate: Option<f64>,
    /// Lower bound of its 95% Wilson interval.
    pub correctness_lo: Option<f64>,
    /// Upper bound.
    pub correctness_hi: Option<f64>,
    /// Correctness error verdicts.
    pub correctness_errors: usize,
    /// All errors (verdicts and rejected generations).
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
    /// Mean cost per question at list price, USD (empty without prices).
    pub cost_per_question_usd: Option<f64>,
    /// Total cost at list price, USD (empty without prices).
    pub cost_total_usd: Option<f64>,
}

/// Quantile `q` of latencies `v` ([`crate::stats::quantile`]); 0 for none.
fn percentile(v: &[f64], q: f64) -> f64 {
    crate::stats::quantile(v, q).unwrap_or(0.0)
}

/// Aggregates the rows of each candidate (in `candidates` order) into judge.csv rows.
pub fn summarise(candidates: &[CandidateInfo], rows: &[JudgeQuestionRow]) -> Vec<JudgeRow> {
    candidates
        .iter()
        .map(|c| {
            let mine: Vec<&JudgeQuestionRow> =
                rows.iter().filter(|r| r.config_id == c.config_id).collect();
            let n = mine.len();
            let count =
                |cr: Criterion, v: Verdict| mine.iter().filter(|r| r.verdict(cr) == v).count();
            let applicable = |cr: Criterion| {
                mine.iter()
                    .filter(|r| r.verdict(cr) != Verdict::NotApplicable)
                    .count()
            };
            let rate = |cr: Criterion| {
                let k = count(cr, Verdict::Pass);
                let m = applicable(cr);
                let ci = wilson(k as u64, m as u64, CONFIDENCE);
                (
                    k,
                    if m == 0 { 0.0 } else { k as f64 / m as f64 },
                    ci.lo,
                    ci.hi,
                )
            };
            let (fp, fr, flo, fhi) = rate(Criterion::Faithfulness);
            let (rp, rr, rlo, rhi) = rate(Criterion::Relevancy);
            let (cp, cr, clo, chi) = rate(Criterion::Correctness);
            let cn = applicable(Criterion::Correctness);
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
            JudgeRow {
                config_id: c.config_id.clone(),
                chunk_size: c.chunk_size,
                tokens_per_query: c.tokens_per_query,
                span_recall: c.span_recall,
                n_questions: n,
                faithfulness_pass: fp,
                faithfulness_rate: fr,
                faithfulness_lo: flo,
                faithfulness_hi: fhi,
                faithfulness_errors: count(Criterion::Faithfulness, Verdict::Error),
                relevancy_pass: rp,
                relevancy_rate: rr,
                relevancy_lo: rlo,
                relevancy_hi: rhi,
                relevancy_errors: count(Criterion::Relevancy, Verdict::Error),
                correctness_n: cn,
                correctness_pass: cp,
                correctness_rate: (cn > 0).then_some(cr),
                correctness_lo: (cn > 0).then_some(clo),
                correctness_hi: (cn > 0).then_some(chi),
                correctness_errors: count(Criterion::Correctness, Verdict::Error),
                errors: mine.iter().map(|r| r.errors).sum(),
                retrieve_ms_p50: percentile(&ret, 0.5),
                retrieve_ms_p95: percentile(&ret, 0.95),
                generate_ms_p50: percentile(&gen_, 0.5),
                generate_ms_p95: percentile(&gen_, 0.95),
                judge_ms_p50: percentile(&jud, 0.5),
                judge_ms_p95: percentile(&jud, 0.95),
                tokens_per_question: mean(|r| (r.prompt_tokens + r.completion_tokens) as f64),
                generate_tokens_per_question: mean(|r| r.generate_tokens as f64),
                cost_per_question_usd: total.map(|t| if n == 0 { 0.0 } else { t / n as f64 }),
                cost_total_usd: total,
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
    /// Paired questions (both have a row and the criterion applies).
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
    /// The chosen configuration id.
    pub chosen: String,
    /// Every pairwise comparison.
    pub comparisons: Vec<Comparison>,
    /// Sentences explaining the choice, for the report.
    pub reasons: Vec<String>,
    /// True when the judge prefers a larger chunk size than the selection's pick at equal recall.
    pub larger_at_equal_recall: bool,
}

/// Paired outcomes of `a` and `b` on `c`: questions where both have a row and `c` applies.
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
        if let Some(vb) = mb.get(q)
            && *va != Verdict::NotApplicable
            && *vb != Verdict::NotApplicable
        {
            x.push(*va == Verdict::Pass);
            y.push(*vb == Verdict::Pass);
        }
    }
    (x, y)
}

/// Compares every pair of candidates on every criterion (exact McNemar) and chooses: among the
/// candidates no other one beats (significantly better on some criterion and significantly worse
/// on none), the one with the fewest tokens per query. `candidates[0]` is the selection's pick;
/// if the choice is a larger chunk size at recall within [`EQUAL_RECALL`] of it, the decision says
/// so (seed 000's rule) and suggests trying contextual enrichment at the smaller size.
///
/// # Panics
/// If `candidates` is empty.
pub fn decide(candidates: &[CandidateInfo], rows: &[JudgeQuestionRow], alpha: f64) -> Decision {
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
    let pick = &candidates[0];
    let larger_at_equal_recall = chosen.chunk_size > pick.chunk_size
        && (chosen.span_recall - pick.span_recall).abs() <= EQUAL_RECALL;
    if larger_at_equal_recall {
        reasons.push(format!(
            "The judge prefers a larger chunk size ({} vs {}) at equal span recall ({:.3} vs {:.3}): prefer it, and check whether contextual enrichment (prefixing each chunk with its document and section title) gets the same benefit at the smaller size.",
            chosen.chunk_size, pick.chunk_size, chosen.span_recall, pick.span_recall
        ));
    } else if chosen.config_id != pick.config_id {
        reasons.push(format!(
            "The judge overrides the selection's pick `{}` with `{}`.",
            pick.config_id, chosen.config_id
        ));
    } else {
        reasons.push(format!(
            "The judge confirms the selection's pick `{}`.",
            pick.config_id
        ));
    }
    Decision {
        chosen: chosen.config_id.clone(),
        comparisons,
        reasons,
        larger_at_equal_recall,
    }
}

fn rate_cell(rate: Option<f64>, lo: Option<f64>, hi: Option<f64>) -> String {
    match (rate, lo, hi) {
        (Some(r), Some(l), Some(h)) => format!("{r:.2} [{l:.2}, {h:.2}]"),
        _ => "n/a".into(),
    }
}

/// The report's judge section (Markdown, starting with `## Answer quality (judge)`).
pub fn markdown(
    summary: &[JudgeRow],
    decision: &Decision,
    generator_model: &str,
    judge_model: &str,
    incomplete: Option<&str>,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## Answer quality (judge)\n");
    let _ = writeln!(
        s,
        "Generator `{generator_model}`, judge `{judge_model}`; pass rates with 95% Wilson intervals (an `error` verdict counts as not passing).\n"
    );
    if let Some(note) = incomplete {
        let _ = writeln!(s, "**Incomplete run:** {note}\n");
    }
    let _ = writeln!(
        s,
        "| configuration | tokens/query | span recall | faithfulness | relevancy | correctness | errors | tokens/question | cost/question (USD) |"
    );
    let _ = writeln!(s, "|---|---:|---:|---|---|---|---:|---:|---:|");
    for r in summary {
        let _ = writeln!(
            s,
            "| `{}` | {:.0} | {:.3} | {} | {} | {} | {} | {:.0} | {} |",
            r.config_id,
            r.tokens_per_query,
            r.span_recall,
            rate_cell(
                Some(r.faithfulness_rate),
                Some(r.faithfulness_lo),
                Some(r.faithfulness_hi)
            ),
            rate_cell(
                Some(r.relevancy_rate),
                Some(r.relevancy_lo),
                Some(r.relevancy_hi)
            ),
            rate_cell(r.correctness_rate, r.correctness_lo, r.correctness_hi),
            r.errors,
            r.tokens_per_question,
            r.cost_per_question_usd
                .map(|c| format!("{c:.5}"))
                .unwrap_or_else(|| "n/a".into())
        );
    }
    if !decision.comparisons.is_empty() {
        let _ = writeln!(s, "\nPaired exact McNemar tests (same questions):\n");
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
    let _ = writeln!(s, "\n**Decision: `{}`.**\n", decision.chosen);
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
            "- {errors} verdict(s) could not be read or were rejected ({}); see judge_questions.csv.",
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
    fn summary_counts_errors_as_not_passing() {
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
        let s = summarise(&[info("A", 64, 320.0, 0.9)], &rows);
        let r = &s[0];
        assert_eq!(r.n_questions, 10);
        assert_eq!(r.faithfulness_pass, 7);
        assert!((r.faithfulness_rate - 0.7).abs() < 1e-12);
        assert_eq!(r.faithfulness_errors, 1);
        let ci = wilson(7, 10, 0.95);
        assert_eq!((r.faithfulness_lo, r.faithfulness_hi), (ci.lo, ci.hi));
        assert!(
            (r.faithfulness_lo - 0.3968).abs() < 1e-3,
            "{}",
            r.faithfulness_lo
        );
        assert_eq!(r.correctness_n, 4);
        assert_eq!(r.correctness_rate, Some(0.75));
        assert_eq!(r.errors, 1);
        // 0, 10, …, 90 ms: the median interpolates between 40 and 50
        assert_eq!(r.generate_ms_p50, 45.0);
        assert!((r.cost_total_usd.unwrap() - 0.01).abs() < 1e-12);
        assert!((r.tokens_per_question - 110.0).abs() < 1e-12);
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
        let d = decide(&cands, &rows, 0.05);
        assert_eq!(d.chosen, "A");
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
        let d = decide(&cands, &rows, 0.05);
        assert_eq!(d.chosen, "B");
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
        let md = markdown(&summarise(&cands, &rows), &d, "g", "j", None);
        assert!(md.contains("**Decision: `B`.**"));
        assert!(
            md.contains("| faithfulness | `A` | `B` | 12 | 0 | 10 | 0.002 * |"),
            "{md}"
        );
        // with recall far apart the seed-000 sentence is not used
        let cands = [info("A", 64, 320.0, 0.70), info("B", 256, 1280.0, 0.91)];
        assert!(!decide(&cands, &rows, 0.05).larger_at_equal_recall);
    }
}
