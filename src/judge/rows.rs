//! The judge's row types: a finished question (judge_questions.csv), its verdicts (a map from
//! criterion to verdict), and the tag that names a call (`<stage>␟<config_id>␟<question_id>` in
//! [`CallRecord::stage`](crate::llm::CallRecord)).
//!
//! judge_questions.csv's columns: `config_id, question_id, question_type, retrieved_chunk_ids,
//! answer, generate_error`, then `<criterion>, <criterion>_reason` for each criterion of the run
//! in order, then `errors, retrieve_ms, generate_ms, judge_ms, calls, prompt_tokens,
//! completion_tokens, generate_tokens, calls_without_usage, cost_usd`. A reader finds the
//! criteria from the header (a column followed by its `_reason` column).

use serde::Deserialize;

use super::verdict::Verdict;
use crate::table::Cell;

/// Separates the parts of the call tag carried in [`CallRecord::stage`].
pub(crate) const TAG_SEP: char = '\u{1f}';

/// The tag of one call: `<stage>␟<config_id>␟<question_id>`.
pub(crate) fn tag(stage: &str, config_id: &str, question_id: &str) -> String {
    format!("{stage}{TAG_SEP}{config_id}{TAG_SEP}{question_id}")
}

/// One criterion's verdict on an answer, with the judge's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// Pass, fail, error, or n/a (a criterion that needs a reference, without one).
    pub verdict: Verdict,
    /// The judge's reason, or why the verdict is an error (empty for n/a).
    pub reason: String,
}

/// A question's verdicts: criterion name → [`Judgement`], in the run's criteria order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Verdicts(Vec<(String, Judgement)>);

impl Verdicts {
    /// Sets the judgement of criterion `name` (replacing one already there).
    pub fn insert(&mut self, name: &str, judgement: Judgement) {
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some((_, j)) => *j = judgement,
            None => self.0.push((name.to_string(), judgement)),
        }
    }

    /// The judgement of criterion `name`, if the row has one.
    pub fn get(&self, name: &str) -> Option<&Judgement> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, j)| j)
    }

    /// (criterion name, judgement), in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Judgement)> {
        self.0.iter().map(|(n, j)| (n.as_str(), j))
    }
}

impl FromIterator<(String, Judgement)> for Verdicts {
    fn from_iter<I: IntoIterator<Item = (String, Judgement)>>(iter: I) -> Self {
        let mut v = Verdicts::default();
        for (n, j) in iter {
            v.insert(&n, j);
        }
        v
    }
}

/// One row of judge_questions.csv: a candidate × question.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeQuestionRow {
    /// Configuration id.
    pub config_id: String,
    /// Question id.
    pub question_id: String,
    /// Question type tag (empty if none).
    pub question_type: String,
    /// Retrieved chunk ids, best first, `|`-separated.
    pub retrieved_chunk_ids: String,
    /// The generator's answer (empty if it could not be generated).
    pub answer: String,
    /// Why the server gave no answer (empty content, a content filter, cut at the token cap);
    /// empty when there is an answer. Such a question is not graded: its verdicts are `error`.
    /// (A call that got no reply at all leaves its question without a row.)
    pub generate_error: String,
    /// Every criterion's verdict and reason (`<criterion>` and `<criterion>_reason` columns:
    /// `pass`, `fail`, `error`, or `na` without a reference answer).
    pub verdicts: Verdicts,
    /// Error verdicts in this row, or 1 when the answer could not be generated.
    pub errors: u32,
    /// Retrieval time, in ms.
    pub retrieve_ms: f64,
    /// Generation call wall time (queueing, retries included), in ms.
    pub generate_ms: f64,
    /// Wall time of the judge calls (run concurrently), in ms.
    pub judge_ms: f64,
    /// Chat calls made for this row (generate, verdicts, format reminders).
    pub calls: u32,
    /// Prompt tokens over all calls of the row.
    pub prompt_tokens: u64,
    /// Completion tokens over all calls of the row.
    pub completion_tokens: u64,
    /// Generator prompt + completion tokens (what a production query costs).
    pub generate_tokens: u64,
    /// Calls of the row whose reply carried no usable token usage: their tokens, and so the
    /// row's cost, are estimates.
    pub calls_without_usage: u32,
    /// Cost at list price of all calls of the row, in USD, whether or not a call was answered from
    /// the cache; empty when a model has no price.
    pub cost_usd: Option<f64>,
}

/// The columns before the criteria's.
const HEAD: [&str; 6] = [
    "config_id",
    "question_id",
    "question_type",
    "retrieved_chunk_ids",
    "answer",
    "generate_error",
];

/// The columns after the criteria's.
const TAIL: [&str; 10] = [
    "errors",
    "retrieve_ms",
    "generate_ms",
    "judge_ms",
    "calls",
    "prompt_tokens",
    "completion_tokens",
    "generate_tokens",
    "calls_without_usage",
    "cost_usd",
];

/// The fixed columns of a row, read by name (`generate_error` and `calls_without_usage` may be
/// missing from files written before they existed).
#[derive(Deserialize)]
struct Fixed {
    config_id: String,
    question_id: String,
    question_type: String,
    retrieved_chunk_ids: String,
    answer: String,
    #[serde(default)]
    generate_error: String,
    errors: u32,
    retrieve_ms: f64,
    #[serde(deserialize_with = "na_or_ms")]
    generate_ms: f64,
    #[serde(deserialize_with = "na_or_ms")]
    judge_ms: f64,
    calls: u32,
    prompt_tokens: u64,
    completion_tokens: u64,
    generate_tokens: u64,
    #[serde(default)]
    calls_without_usage: u32,
    cost_usd: Option<f64>,
}

impl JudgeQuestionRow {
    /// The verdict of criterion `name` in this row: [`Verdict::NotApplicable`] when the row has
    /// none for it.
    pub fn verdict(&self, name: &str) -> Verdict {
        self.verdicts
            .get(name)
            .map_or(Verdict::NotApplicable, |j| j.verdict)
    }

    /// Whether the row records a timeout as if it were a result: written by chunksweep before
    /// timeouts left their question unfinished (its `generate_error`, or a verdict's reason, is
    /// exactly `timeout`). Such a row is not a finished question
    /// ([`super::journal::load_finished`] leaves it out, so a rerun asks again).
    pub fn left_by_timeout(&self) -> bool {
        const TIMEOUT: &str = "timeout";
        self.generate_error == TIMEOUT
            || self
                .verdicts
                .iter()
                .any(|(_, j)| j.verdict == Verdict::Error && j.reason == TIMEOUT)
    }

    /// The reason of criterion `name` in this row (empty when none).
    pub fn reason(&self, name: &str) -> &str {
        self.verdicts.get(name).map_or("", |j| j.reason.as_str())
    }

    /// judge_questions.csv's header for the criteria `criteria` (names, in order).
    pub fn header(criteria: &[String]) -> Vec<String> {
        let mut h: Vec<String> = HEAD.iter().map(|s| s.to_string()).collect();
        for c in criteria {
            h.push(c.clone());
            h.push(format!("{c}_reason"));
        }
        h.extend(TAIL.iter().map(|s| s.to_string()));
        h
    }

    /// The row's cells under [`header`](Self::header)`(criteria)` (a criterion the row lacks:
    /// `na` with an empty reason).
    pub fn cells(&self, criteria: &[String]) -> Vec<Cell<'_>> {
        let mut v = vec![
            Cell::Text(&self.config_id),
            Cell::Text(&self.question_id),
            Cell::Text(&self.question_type),
            Cell::Text(&self.retrieved_chunk_ids),
            Cell::Text(&self.answer),
            Cell::Text(&self.generate_error),
        ];
        for c in criteria {
            v.push(Cell::Text(self.verdict(c).as_str()));
            v.push(Cell::Text(self.reason(c)));
        }
        v.extend([
            Cell::Count(self.errors.into()),
            Cell::Number(self.retrieve_ms),
            latency_cell(self.generate_ms),
            latency_cell(self.judge_ms),
            Cell::Count(self.calls.into()),
            Cell::Count(self.prompt_tokens),
            Cell::Count(self.completion_tokens),
            Cell::Count(self.generate_tokens),
            Cell::Count(self.calls_without_usage.into()),
            Cell::Maybe(self.cost_usd),
        ]);
        v
    }

    /// The criteria of a judge_questions.csv header: each column followed by its `_reason`
    /// column, in order.
    pub fn criteria_of(header: &csv::StringRecord) -> Vec<String> {
        let cols: Vec<&str> = header.iter().collect();
        cols.windows(2)
            .filter(|w| w[1].strip_suffix("_reason") == Some(w[0]))
            .map(|w| w[0].to_string())
            .collect()
    }

    /// Reads a row of a file whose header is `header` and whose criteria are `criteria`.
    ///
    /// # Errors
    /// The csv crate's error for a row that is not a judge_questions.csv row; a message for a
    /// verdict other than pass, fail, error or na.
    pub fn read(
        header: &csv::StringRecord,
        criteria: &[String],
        record: &csv::StringRecord,
    ) -> Result<Self, csv::Error> {
        let f: Fixed = record.deserialize(Some(header))?;
        let mut verdicts = Verdicts::default();
        for c in criteria {
            let cell = |name: &str| {
                header
                    .iter()
                    .position(|h| h == name)
                    .and_then(|i| record.get(i))
                    .unwrap_or("")
            };
            let verdict = Verdict::parse(cell(c)).unwrap_or(Verdict::Error);
            let reason = cell(&format!("{c}_reason")).to_string();
            verdicts.insert(c, Judgement { verdict, reason });
        }
        Ok(JudgeQuestionRow {
            config_id: f.config_id,
            question_id: f.question_id,
            question_type: f.question_type,
            retrieved_chunk_ids: f.retrieved_chunk_ids,
            answer: f.answer,
            generate_error: f.generate_error,
            verdicts,
            errors: f.errors,
            retrieve_ms: f.retrieve_ms,
            generate_ms: f.generate_ms,
            judge_ms: f.judge_ms,
            calls: f.calls,
            prompt_tokens: f.prompt_tokens,
            completion_tokens: f.completion_tokens,
            generate_tokens: f.generate_tokens,
            calls_without_usage: f.calls_without_usage,
            cost_usd: f.cost_usd,
        })
    }
}

/// A row of candidate `cfg` and question `q{q}` with faithfulness `f`, relevancy `r` and
/// correctness `c` (`pass`, `fail`, `error` or `na`), for tests.
/// A time in ms as a cell: `n/a` for one that was not measured (NaN: a question judged through
/// the Batch API, whose calls have no latency of their own).
pub(crate) fn latency_cell<'a>(ms: f64) -> Cell<'a> {
    if ms.is_nan() {
        Cell::Text("n/a")
    } else {
        Cell::Number(ms)
    }
}

/// Reads a time in ms written by [`latency_cell`]: `n/a` is NaN.
fn na_or_ms<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let s = String::deserialize(d)?;
    if s == "n/a" {
        return Ok(f64::NAN);
    }
    s.parse().map_err(serde::de::Error::custom)
}

#[cfg(test)]
pub(crate) fn test_row(cfg: &str, q: usize, f: &str, r: &str, c: &str) -> JudgeQuestionRow {
    let verdicts: Verdicts = [("faithfulness", f), ("relevancy", r), ("correctness", c)]
        .into_iter()
        .map(|(n, v)| {
            let j = Judgement {
                verdict: Verdict::parse(v).expect("a verdict"),
                reason: String::new(),
            };
            (n.to_string(), j)
        })
        .collect();
    JudgeQuestionRow {
        config_id: cfg.into(),
        question_id: format!("q{q}"),
        question_type: String::new(),
        retrieved_chunk_ids: String::new(),
        answer: String::new(),
        verdicts,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_round_trips_under_its_generated_header() {
        let criteria = vec!["faithfulness".to_string(), "conciseness".to_string()];
        let mut verdicts = Verdicts::default();
        verdicts.insert(
            "faithfulness",
            Judgement {
                verdict: Verdict::Pass,
                reason: "ok, \"quoted\"".into(),
            },
        );
        verdicts.insert(
            "conciseness",
            Judgement {
                verdict: Verdict::Fail,
                reason: String::new(),
            },
        );
        let row = JudgeQuestionRow {
            config_id: "A".into(),
            question_id: "q1".into(),
            question_type: String::new(),
            retrieved_chunk_ids: "a.md#0|b.md#1".into(),
            answer: "Two\ncores.".into(),
            generate_error: String::new(),
            verdicts,
            errors: 0,
            retrieve_ms: 0.5,
            generate_ms: 12.0,
            judge_ms: 3.25,
            calls: 3,
            prompt_tokens: 100,
            completion_tokens: 7,
            generate_tokens: 60,
            calls_without_usage: 0,
            cost_usd: None,
        };
        let mut out = Vec::new();
        crate::table::write_cells(
            &mut out,
            &JudgeQuestionRow::header(&criteria),
            [row.cells(&criteria)],
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("config_id,question_id,question_type,retrieved_chunk_ids,answer,generate_error,faithfulness,faithfulness_reason,conciseness,conciseness_reason,errors,retrieve_ms,"),
            "{text}"
        );
        assert!(
            text.contains(",pass,\"ok, \"\"quoted\"\"\",fail,,0,0.5,12.0,3.25,3,100,7,60,0,\n"),
            "{text}"
        );
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let header = r.headers().unwrap().clone();
        assert_eq!(JudgeQuestionRow::criteria_of(&header), criteria);
        let rec = r.records().next().unwrap().unwrap();
        assert_eq!(
            JudgeQuestionRow::read(&header, &criteria, &rec).unwrap(),
            row
        );
        assert_eq!(row.verdict("relevancy"), Verdict::NotApplicable);
    }
}
