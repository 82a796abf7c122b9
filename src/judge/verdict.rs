//! Verdicts: the JSON schema the judge must follow, reading a verdict, and the one retry with a
//! reminder of the format when the reply cannot be read.
//!
//! Reading is lenient where the intent is plain: the client normalises case and surrounding space
//! of `verdict` before any schema check (`"PASS"`, `" pass "` read as `pass`), and a verdict
//! without a reason keeps its verdict with an empty reason. Nothing is invented: a reply with no
//! `verdict` of pass or fail is an error.

use serde_json::{Value, json};

use super::criteria::Criterion;
use crate::llm::{CallRecord, ChatMessage, ChatRequest, LlmClient, LlmError};

/// The outcome of grading one criterion for one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The judge said pass.
    Pass,
    /// The judge said fail.
    Fail,
    /// The server answered, but no verdict could be read from it (after the client's fallbacks
    /// and one reminder), or it declined to generate the answer (empty or filtered content, cut
    /// at the cap). In no pass rate; counted apart. A call that got no answer at all (timeouts,
    /// retries exhausted) is never an error verdict: its question stays unfinished.
    Error,
    /// Not graded: correctness for a question without a reference answer.
    NotApplicable,
}

impl Verdict {
    /// `pass`, `fail`, `error` or `na`, as written in judge_questions.csv.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Error => "error",
            Verdict::NotApplicable => "na",
        }
    }

    /// Parses [`as_str`](Self::as_str) output.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pass" => Some(Verdict::Pass),
            "fail" => Some(Verdict::Fail),
            "error" => Some(Verdict::Error),
            "na" => Some(Verdict::NotApplicable),
            _ => None,
        }
    }

    /// `Some(true)` for pass, `Some(false)` for fail, `None` otherwise (errors and n/a are not
    /// outcomes of the paired test).
    pub fn outcome(self) -> Option<bool> {
        match self {
            Verdict::Pass => Some(true),
            Verdict::Fail => Some(false),
            _ => None,
        }
    }
}

/// The JSON Schema of a verdict: `{"verdict": "pass" | "fail", "reason": string}`. Only
/// `verdict` is required, so that a reply without a reason keeps its verdict; the prompts ask
/// for the reason.
pub fn verdict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["pass", "fail"]},
            "reason": {"type": "string"}
        },
        "required": ["verdict"],
        "additionalProperties": false
    })
}

/// The message appended when a verdict could not be read, before the one retry.
pub const FORMAT_REMINDER: &str = "Your previous reply could not be read. Reply again with only a JSON object of the form {\"verdict\": \"pass\" or \"fail\", \"reason\": \"one sentence\"} and nothing else.";

/// A graded criterion with the calls it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Graded {
    /// Pass, fail or error.
    pub verdict: Verdict,
    /// The judge's one-sentence reason, or why the verdict is an error.
    pub reason: String,
    /// Every call made (one, or two with the reminder), including failed ones.
    pub records: Vec<CallRecord>,
}

/// Reads `{"verdict", "reason"}` from a value the client accepted against the schema.
fn read_verdict(v: &Value) -> Option<(Verdict, String)> {
    Some((pass_or_fail(v, "verdict")?, reason_of(v)))
}

/// Field `key` of `v` as a verdict: `pass` or `fail` (any case, surrounding spaces ignored).
fn pass_or_fail(v: &Value, key: &str) -> Option<Verdict> {
    match v.get(key)?.as_str()?.trim().to_ascii_lowercase().as_str() {
        "pass" => Some(Verdict::Pass),
        "fail" => Some(Verdict::Fail),
        _ => None,
    }
}

/// The `reason` field of `v`, trimmed (empty when missing).
fn reason_of(v: &Value) -> String {
    v.get("reason")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_string()
}

/// The last record the client logged for `stage` (the tag is unique per question and call).
pub(crate) fn last_record(client: &LlmClient, stage: &str) -> Option<CallRecord> {
    client
        .records()
        .into_iter()
        .rev()
        .find(|r| r.stage == stage)
}

/// The values a criterion's verdict may take in a combined reply: `"pass" or "fail"`, or
/// `"pass", "fail" or "na"` for a criterion that needs a reference answer.
fn combined_values(c: &Criterion) -> (&'static [&'static str], &'static str) {
    if c.needs_reference {
        (&["pass", "fail", "na"], "\"pass\", \"fail\" or \"na\"")
    } else {
        (&["pass", "fail"], "\"pass\" or \"fail\"")
    }
}

/// The reminder appended before the one retry of an unreadable combined verdict over `all`:
/// `Your previous reply could not be read. Reply again with only a JSON object of the form
/// {"faithfulness": "pass" or "fail", …, "reason": "one sentence"} and nothing else.`
pub fn combined_reminder(all: &[Criterion]) -> String {
    let fields: Vec<String> = all
        .iter()
        .map(|c| format!("\"{}\": {}", c.name, combined_values(c).1))
        .collect();
    format!(
        "Your previous reply could not be read. Reply again with only a JSON object of the form {{{}, \"reason\": \"one sentence\"}} and nothing else.",
        fields.join(", ")
    )
}

/// The JSON Schema of a combined verdict: a field per criterion of `all` (pass or fail; pass,
/// fail or na for one that needs a reference) and a `reason`; the criteria in `required` must
/// be there.
pub fn combined_schema(all: &[Criterion], required: &[&Criterion]) -> Value {
    let mut properties = serde_json::Map::new();
    for c in all {
        properties.insert(
            c.name.clone(),
            json!({"type": "string", "enum": combined_values(c).0}),
        );
    }
    properties.insert("reason".into(), json!({"type": "string"}));
    json!({
        "type": "object",
        "properties": properties,
        "required": required.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        "additionalProperties": false
    })
}

/// Reads the verdicts of `criteria` from a combined reply; `None` unless each is pass or fail.
fn read_combined(v: &Value, criteria: &[&Criterion]) -> Option<(Vec<Verdict>, String)> {
    let verdicts = criteria
        .iter()
        .map(|c| pass_or_fail(v, &c.name))
        .collect::<Option<Vec<_>>>()?;
    Some((verdicts, reason_of(v)))
}

/// What one structured question to the judge gave: the value read (`None`: unreadable, with the
/// problem) and every call made.
struct Asked<T> {
    read: Option<T>,
    problem: String,
    records: Vec<CallRecord>,
}

/// Asks with `chat_json` against `schema` and reads the reply with `read`; an unreadable reply
/// is retried once with `reminder` appended.
async fn ask<T>(
    client: &LlmClient,
    stage: &str,
    mut req: ChatRequest,
    schema: &Value,
    reminder: &str,
    read: impl Fn(&Value) -> Option<T>,
) -> Result<Asked<T>, LlmError> {
    let mut records = Vec::new();
    let mut problem = String::new();
    for attempt in 0..2 {
        if attempt == 1 {
            req.messages.push(ChatMessage::user(reminder));
        }
        match client.chat_json(stage, req.clone(), schema).await {
            Ok(out) => {
                records.push(out.record);
                match read(&out.value) {
                    Some(value) => {
                        return Ok(Asked {
                            read: Some(value),
                            problem,
                            records,
                        });
                    }
                    None => problem = format!("unreadable verdict: {}", out.text),
                }
            }
            Err(e) if e.is_result() => {
                records.extend(last_record(client, stage));
                problem = e.to_string();
                if !matches!(e, LlmError::NoJson { .. }) {
                    break;
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(Asked {
        read: None,
        problem,
        records,
    })
}

/// Asks the judge for a verdict with `chat_json`; an unreadable reply is retried once with
/// [`FORMAT_REMINDER`] appended, then recorded as [`Verdict::Error`].
///
/// # Errors
/// Failures that are not results ([`LlmError::is_result`] false: timeouts, retries exhausted, a
/// rejected request, a cache failure): the caller leaves the question unfinished so that a later
/// run redoes it.
pub async fn grade(client: &LlmClient, stage: &str, req: ChatRequest) -> Result<Graded, LlmError> {
    let a = ask(
        client,
        stage,
        req,
        &verdict_schema(),
        FORMAT_REMINDER,
        read_verdict,
    )
    .await?;
    let (verdict, reason) = a.read.unwrap_or((Verdict::Error, a.problem));
    Ok(Graded {
        verdict,
        reason,
        records: a.records,
    })
}

/// Asks the judge for the verdicts of `asked` (some of `all`, the run's criteria) in one call
/// (`combined.md`, see [`combined_schema`]), retried once with [`combined_reminder`] when
/// unreadable; every criterion is then an [`Verdict::Error`]. The one reason is every
/// criterion's; the calls are in the first criterion's [`Graded`] (the others have none).
///
/// # Errors
/// As [`grade`].
pub async fn grade_combined(
    client: &LlmClient,
    stage: &str,
    req: ChatRequest,
    all: &[Criterion],
    asked: &[&Criterion],
) -> Result<Vec<Graded>, LlmError> {
    let a = ask(
        client,
        stage,
        req,
        &combined_schema(all, asked),
        &combined_reminder(all),
        |v| read_combined(v, asked),
    )
    .await?;
    let (verdicts, reason) = a
        .read
        .unwrap_or_else(|| (vec![Verdict::Error; asked.len()], a.problem));
    let mut records = Some(a.records);
    Ok(verdicts
        .into_iter()
        .map(|verdict| Graded {
            verdict,
            reason: reason.clone(),
            records: records.take().unwrap_or_default(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combined_schema_and_reminder_are_those_of_the_three_builtin_criteria() {
        let all = crate::judge::criteria::builtin();
        let asked: Vec<&Criterion> = all.iter().take(2).collect();
        assert_eq!(
            combined_schema(&all, &asked),
            json!({
                "type": "object",
                "properties": {
                    "faithfulness": {"type": "string", "enum": ["pass", "fail"]},
                    "relevancy": {"type": "string", "enum": ["pass", "fail"]},
                    "correctness": {"type": "string", "enum": ["pass", "fail", "na"]},
                    "reason": {"type": "string"}
                },
                "required": ["faithfulness", "relevancy"],
                "additionalProperties": false
            })
        );
        assert_eq!(
            combined_reminder(&all),
            "Your previous reply could not be read. Reply again with only a JSON object of the form {\"faithfulness\": \"pass\" or \"fail\", \"relevancy\": \"pass\" or \"fail\", \"correctness\": \"pass\", \"fail\" or \"na\", \"reason\": \"one sentence\"} and nothing else."
        );
    }

    #[test]
    fn combined_verdicts_read_only_when_every_criterion_is_there() {
        let all = crate::judge::criteria::builtin();
        let both: Vec<&Criterion> = all.iter().take(2).collect();
        assert_eq!(
            read_combined(
                &json!({"faithfulness": "PASS", "relevancy": "fail", "correctness": "na", "reason": " r "}),
                &both
            ),
            Some((vec![Verdict::Pass, Verdict::Fail], "r".into()))
        );
        assert_eq!(read_combined(&json!({"faithfulness": "pass"}), &both), None);
        assert_eq!(
            read_combined(&json!({"faithfulness": "pass", "relevancy": "na"}), &both),
            None
        );
    }

    #[test]
    fn verdicts_read_and_round_trip() {
        assert_eq!(
            read_verdict(&json!({"verdict": " PASS ", "reason": " ok "})),
            Some((Verdict::Pass, "ok".into()))
        );
        assert_eq!(
            read_verdict(&json!({"verdict": "maybe", "reason": "x"})),
            None
        );
        assert_eq!(read_verdict(&json!({"reason": "x"})), None);
        // no reason: the verdict stands, with an empty reason
        assert_eq!(
            read_verdict(&json!({"verdict": "fail"})),
            Some((Verdict::Fail, String::new()))
        );
        for v in [
            Verdict::Pass,
            Verdict::Fail,
            Verdict::Error,
            Verdict::NotApplicable,
        ] {
            assert_eq!(Verdict::parse(v.as_str()), Some(v));
        }
        assert_eq!(Verdict::Error.outcome(), None);
        assert_eq!(Verdict::Fail.outcome(), Some(false));
    }
}
