//! The judge's row types: a finished question (judge_questions.csv) and the tag that names a call
//! (`<stage>␟<config_id>␟<question_id>` in [`CallRecord::stage`](crate::llm::CallRecord)).

use serde::{Deserialize, Serialize};

use super::verdict::{Criterion, Verdict};

/// Separates the parts of the call tag carried in [`CallRecord::stage`].
pub(crate) const TAG_SEP: char = '\u{1f}';

/// The tag of one call: `<stage>␟<config_id>␟<question_id>`.
pub(crate) fn tag(stage: &str, config_id: &str, question_id: &str) -> String {
    format!("{stage}{TAG_SEP}{config_id}{TAG_SEP}{question_id}")
}

/// One row of judge_questions.csv: a candidate × question. Flat, so it is one CSV row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Why no answer could be generated (empty content, a content filter, cut at the token cap,
    /// `timeout`); empty when there is an answer. Such a question is not graded: its verdicts
    /// are `error`.
    #[serde(default)]
    pub generate_error: String,
    /// `pass`, `fail` or `error`.
    pub faithfulness: String,
    /// The judge's reason, or why the verdict is an error.
    pub faithfulness_reason: String,
    /// `pass`, `fail` or `error`.
    pub relevancy: String,
    /// The judge's reason, or why the verdict is an error.
    pub relevancy_reason: String,
    /// `pass`, `fail`, `error`, or `na` without a reference answer.
    pub correctness: String,
    /// The judge's reason, or why the verdict is an error (empty for `na`).
    pub correctness_reason: String,
    /// Error verdicts in this row (0 to 3), or 1 when the answer could not be generated.
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
    #[serde(default)]
    pub calls_without_usage: u32,
    /// Cost at list price of all calls of the row, in USD, whether or not a call was answered from
    /// the cache; empty when a model has no price.
    pub cost_usd: Option<f64>,
}

impl JudgeQuestionRow {
    /// The verdict of `c` in this row.
    pub fn verdict(&self, c: Criterion) -> Verdict {
        let s = match c {
            Criterion::Faithfulness => &self.faithfulness,
            Criterion::Relevancy => &self.relevancy,
            Criterion::Correctness => &self.correctness,
        };
        Verdict::parse(s).unwrap_or(Verdict::Error)
    }
}
