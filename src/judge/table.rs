//! judge.csv: each candidate's pass rates per criterion (over judged questions, with Wilson
//! intervals, errors apart), latency, tokens and cost, and the judge's trust figures per
//! criterion beside them.
//!
//! A criterion's pass rate is pass / (pass + fail): the questions the judge actually graded. An
//! `error` verdict (unreadable, or the call timed out) and a question whose answer could not be
//! generated are counted in their own columns and never enter a rate, so one pass and one
//! unreadable verdict is a rate of 1.0 over one judged question. A criterion with nothing judged
//! has no rate (`n/a`). Intervals are 95% Wilson intervals ([`crate::stats::wilson`]).
//!
//! Columns: `config_id, chunk_size, tokens_per_query, span_recall, n_questions`; for each
//! criterion `<c>_judged, <c>_pass, <c>_rate, <c>_lo, <c>_hi, <c>_errors`; then
//! `generation_errors, errors`, the p50/p95 of `retrieve_ms`, `generate_ms` and `judge_ms`,
//! `tokens_per_question, generate_tokens_per_question, calls_without_usage,
//! cost_per_question_usd, cost_total_usd, cost_estimated`; for each criterion
//! `<c>_control_tnr, <c>_control_tnr_lo, <c>_control_tpr, <c>_repeat_agreement,
//! <c>_repeat_kappa`.

use serde::Serialize;

use super::rows::{JudgeQuestionRow, latency_cell};
use super::trust::CriterionTrust;
use super::verdict::Verdict;
use crate::stats::wilson;
use crate::table::Cell;

/// Confidence level of the intervals in judge.csv.
pub const CONFIDENCE: f64 = 0.95;

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
    /// The rate of criterion `c` over `rows`.
    pub fn of(rows: &[&JudgeQuestionRow], c: &str) -> Rate {
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

/// Latency of one step over a candidate's questions, in ms: median and 95th percentile
/// ([`crate::stats::quantile`]; 0 for no question) over the questions whose latency was
/// measured; NaN (`n/a` in judge.csv) when none was (every call batched).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    /// Median, ms.
    pub p50: f64,
    /// 95th percentile, ms.
    pub p95: f64,
}

impl Latency {
    fn of(v: &[f64]) -> Latency {
        // a question judged through the Batch API has no latency (NaN): left out; with no
        // measured question at all, n/a (NaN)
        let measured: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
        let none = if measured.is_empty() && !v.is_empty() {
            f64::NAN
        } else {
            0.0
        };
        let q = |p| crate::stats::quantile(&measured, p).unwrap_or(none);
        Latency {
            p50: q(0.5),
            p95: q(0.95),
        }
    }
}

/// One row of judge.csv: a candidate's pass rates, errors, latency, tokens and cost.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeRow {
    /// The candidate's sweep figures.
    pub info: CandidateInfo,
    /// Questions with a row.
    pub n_questions: usize,
    /// Each criterion's rate, in the run's criteria order.
    pub rates: Vec<(String, Rate)>,
    /// Questions whose answer the server did not give (empty or filtered content, cut at the
    /// token cap); they are not graded.
    pub generation_errors: usize,
    /// All errors: error verdicts plus generation errors.
    pub errors: u32,
    /// Retrieval time.
    pub retrieve_ms: Latency,
    /// Generation time.
    pub generate_ms: Latency,
    /// Judging time.
    pub judge_ms: Latency,
    /// Mean prompt + completion tokens of all calls per question.
    pub tokens_per_question: f64,
    /// Mean generator prompt + completion tokens per question.
    pub generate_tokens_per_question: f64,
    /// Calls whose reply carried no usable usage, so their tokens (and cost) are estimates.
    pub calls_without_usage: u32,
    /// Mean cost per question at list price, USD (`None` without prices).
    pub cost_per_question_usd: Option<f64>,
    /// Total cost at list price, USD (`None` without prices).
    pub cost_total_usd: Option<f64>,
}

impl JudgeRow {
    /// True when the cost includes estimated tokens (`calls_without_usage` > 0).
    pub fn cost_estimated(&self) -> bool {
        self.calls_without_usage > 0
    }

    /// Error verdicts over every criterion (generation errors aside).
    pub fn error_verdicts(&self) -> usize {
        self.rates.iter().map(|(_, r)| r.errors).sum()
    }

    /// The rate of criterion `c`.
    pub fn rate(&self, c: &str) -> Option<&Rate> {
        self.rates.iter().find(|(n, _)| n == c).map(|(_, r)| r)
    }
}

/// Aggregates the rows of each candidate (in `candidates` order) on `criteria` (names).
pub fn summarise(
    candidates: &[CandidateInfo],
    rows: &[JudgeQuestionRow],
    criteria: &[String],
) -> Vec<JudgeRow> {
    candidates
        .iter()
        .map(|c| {
            let mine: Vec<&JudgeQuestionRow> =
                rows.iter().filter(|r| r.config_id == c.config_id).collect();
            let n = mine.len();
            let col =
                |f: fn(&JudgeQuestionRow) -> f64| mine.iter().map(|r| f(r)).collect::<Vec<_>>();
            let mean = |f: fn(&JudgeQuestionRow) -> f64| {
                if n == 0 {
                    0.0
                } else {
                    mine.iter().map(|r| f(r)).sum::<f64>() / n as f64
                }
            };
            let total: Option<f64> = mine.iter().map(|r| r.cost_usd).sum();
            JudgeRow {
                info: c.clone(),
                n_questions: n,
                rates: criteria
                    .iter()
                    .map(|k| (k.clone(), Rate::of(&mine, k)))
                    .collect(),
                generation_errors: mine.iter().filter(|r| !r.generate_error.is_empty()).count(),
                errors: mine.iter().map(|r| r.errors).sum(),
                retrieve_ms: Latency::of(&col(|r| r.retrieve_ms)),
                generate_ms: Latency::of(&col(|r| r.generate_ms)),
                judge_ms: Latency::of(&col(|r| r.judge_ms)),
                tokens_per_question: mean(|r| (r.prompt_tokens + r.completion_tokens) as f64),
                generate_tokens_per_question: mean(|r| r.generate_tokens as f64),
                calls_without_usage: mine.iter().map(|r| r.calls_without_usage).sum(),
                cost_per_question_usd: total.map(|t| if n == 0 { 0.0 } else { t / n as f64 }),
                cost_total_usd: total,
            }
        })
        .collect()
}

/// judge.csv's header for `criteria` (names, in order).
pub fn header(criteria: &[String]) -> Vec<String> {
    let mut h: Vec<String> = [
        "config_id",
        "chunk_size",
        "tokens_per_query",
        "span_recall",
        "n_questions",
    ]
    .map(String::from)
    .to_vec();
    for c in criteria {
        for s in ["judged", "pass", "rate", "lo", "hi", "errors"] {
            h.push(format!("{c}_{s}"));
        }
    }
    h.extend(
        [
            "generation_errors",
            "errors",
            "retrieve_ms_p50",
            "retrieve_ms_p95",
            "generate_ms_p50",
            "generate_ms_p95",
            "judge_ms_p50",
            "judge_ms_p95",
            "tokens_per_question",
            "generate_tokens_per_question",
            "calls_without_usage",
            "cost_per_question_usd",
            "cost_total_usd",
            "cost_estimated",
        ]
        .map(String::from),
    );
    for c in criteria {
        for s in [
            "control_tnr",
            "control_tnr_lo",
            "control_tpr",
            "repeat_agreement",
            "repeat_kappa",
        ] {
            h.push(format!("{c}_{s}"));
        }
    }
    h
}

/// The trust columns of judge.csv for criterion `c`: TNR, its lower bound, TPR, repeat
/// agreement, repeat κ (all `None` without controls or repeats).
fn trust_cells(trust: &[CriterionTrust], c: &str) -> [Option<f64>; 5] {
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

/// `row`'s cells under [`header`]`(criteria)`, with the judge's `trust` (over all candidates, the
/// same in every row).
pub fn cells<'a>(
    row: &'a JudgeRow,
    criteria: &[String],
    trust: &[CriterionTrust],
) -> Vec<Cell<'a>> {
    let mut v = vec![
        Cell::Text(&row.info.config_id),
        Cell::Count(row.info.chunk_size as u64),
        Cell::Number(row.info.tokens_per_query),
        Cell::Number(row.info.span_recall),
        Cell::Count(row.n_questions as u64),
    ];
    for c in criteria {
        let r = row.rate(c).copied().unwrap_or(Rate {
            judged: 0,
            pass: 0,
            errors: 0,
            rate: None,
            interval: None,
        });
        v.extend([
            Cell::Count(r.judged as u64),
            Cell::Count(r.pass as u64),
            Cell::Maybe(r.rate),
            Cell::Maybe(r.interval.map(|i| i.0)),
            Cell::Maybe(r.interval.map(|i| i.1)),
            Cell::Count(r.errors as u64),
        ]);
    }
    v.extend([
        Cell::Count(row.generation_errors as u64),
        Cell::Count(row.errors.into()),
        Cell::Number(row.retrieve_ms.p50),
        Cell::Number(row.retrieve_ms.p95),
        latency_cell(row.generate_ms.p50),
        latency_cell(row.generate_ms.p95),
        latency_cell(row.judge_ms.p50),
        latency_cell(row.judge_ms.p95),
        Cell::Number(row.tokens_per_question),
        Cell::Number(row.generate_tokens_per_question),
        Cell::Count(row.calls_without_usage.into()),
        Cell::Maybe(row.cost_per_question_usd),
        Cell::Maybe(row.cost_total_usd),
        Cell::Flag(row.cost_estimated()),
    ]);
    for c in criteria {
        v.extend(trust_cells(trust, c).map(Cell::Maybe));
    }
    v
}

/// A candidate `id` of `size` tokens with `tpq` tokens per query and span recall `recall`, for
/// tests.
#[cfg(test)]
pub(crate) fn test_info(id: &str, size: usize, tpq: f64, recall: f64) -> CandidateInfo {
    CandidateInfo {
        config_id: id.into(),
        chunk_size: size,
        tokens_per_query: tpq,
        span_recall: recall,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::rows::test_row as row;

    fn names() -> Vec<String> {
        crate::judge::criteria::names(&crate::judge::criteria::builtin())
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
        let info = CandidateInfo {
            config_id: "A".into(),
            chunk_size: 64,
            tokens_per_query: 320.0,
            span_recall: 0.9,
        };
        let s = summarise(&[info], &rows, &names());
        let r = &s[0];
        assert_eq!(r.n_questions, 10);
        let f = r.rate("faithfulness").unwrap();
        assert_eq!((f.judged, f.pass), (9, 7));
        assert_eq!(f.rate, Some(7.0 / 9.0));
        assert_eq!(f.errors, 1);
        let ci = wilson(7, 9, 0.95);
        assert_eq!(f.interval, Some((ci.lo, ci.hi)));
        let k = r.rate("correctness").unwrap();
        assert_eq!((k.judged, k.rate), (4, Some(0.75)));
        assert_eq!(r.errors, 1);
        assert_eq!(r.generation_errors, 0);
        // 0, 10, …, 90 ms: the median interpolates between 40 and 50
        assert_eq!(r.generate_ms.p50, 45.0);
        assert!((r.cost_total_usd.unwrap() - 0.01).abs() < 1e-12);
        assert!((r.tokens_per_question - 110.0).abs() < 1e-12);
        assert_eq!((r.calls_without_usage, r.cost_estimated()), (2, true));
        let cells = cells(r, &names(), &[]);
        assert_eq!(cells.len(), header(&names()).len());
        // the columns of judge.csv as every earlier version wrote them
        let old = "config_id,chunk_size,tokens_per_query,span_recall,n_questions,faithfulness_judged,faithfulness_pass,faithfulness_rate,faithfulness_lo,faithfulness_hi,faithfulness_errors,relevancy_judged,relevancy_pass,relevancy_rate,relevancy_lo,relevancy_hi,relevancy_errors,correctness_judged,correctness_pass,correctness_rate,correctness_lo,correctness_hi,correctness_errors,generation_errors,errors,retrieve_ms_p50,retrieve_ms_p95,generate_ms_p50,generate_ms_p95,judge_ms_p50,judge_ms_p95,tokens_per_question,generate_tokens_per_question,calls_without_usage,cost_per_question_usd,cost_total_usd,cost_estimated,faithfulness_control_tnr,faithfulness_control_tnr_lo,faithfulness_control_tpr,faithfulness_repeat_agreement,faithfulness_repeat_kappa,relevancy_control_tnr,relevancy_control_tnr_lo,relevancy_control_tpr,relevancy_repeat_agreement,relevancy_repeat_kappa,correctness_control_tnr,correctness_control_tnr_lo,correctness_control_tpr,correctness_repeat_agreement,correctness_repeat_kappa";
        assert_eq!(header(&names()).join(","), old);
    }
}
