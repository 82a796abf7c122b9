//! The JSONL lines of a batch: the input file (one request per line, built with async-openai's
//! `BatchRequestInput`) and the output and error files read back by `custom_id`.

use async_openai::types::batches::{BatchEndpoint, BatchRequestInput, BatchRequestInputMethod};
use serde_json::Value;

/// What became of one line of a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum LineOutcome {
    /// The server answered 2xx; `body` is the chat completion's JSON, as a string (what the
    /// response cache stores).
    Answered {
        /// The response's JSON body.
        body: String,
    },
    /// The server refused the request with a status that is not 2xx and not worth asking
    /// again in the same form (400, 401, 404, 422, ...): counted as refused, as in a direct run.
    Refused {
        /// The line's HTTP status.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// No answer: an error line without a status or with a transient one (408, 429, 5xx), a
    /// line missing from both files, a batch that expired, failed or was cancelled, or a wait
    /// stopped by Ctrl-C. The call stays unfinished; the same command asks it again.
    Unfinished {
        /// Why, for calls.csv and the run's messages.
        reason: String,
    },
}

/// A custom id for the call tagged `stage`, at line `n` of its file: the tag with its control
/// separators as `|` (`faithfulness|fixed-256-o0-k5|q-003`), then `#n`, so that ids are unique
/// within a file and say what the line asks.
pub fn custom_id(stage: &str, n: usize) -> String {
    let shown: String = stage
        .chars()
        .map(|c| if c.is_control() { '|' } else { c })
        .collect();
    format!("{shown}#{n}")
}

/// One line of a batch's input file: a `POST /v1/chat/completions` with `body`, under
/// `custom_id` (no newline at the end).
pub fn input_line(custom_id: &str, body: &Value) -> String {
    let line = BatchRequestInput {
        custom_id: custom_id.to_string(),
        method: BatchRequestInputMethod::POST,
        url: BatchEndpoint::V1ChatCompletions,
        body: Some(body.clone()),
    };
    serde_json::to_string(&line).expect("a batch line serialises")
}

/// Reads the lines of a batch's output or error file: `(custom_id, outcome)` for every line that
/// names its call, and the number of lines that could not be read (not JSON, no `custom_id`).
/// A line with a `response` is answered (2xx) or refused (any other status but 408, 429 and
/// 5xx, which leave the call unfinished); a line with an `error` and no response is unfinished.
pub fn read_lines(text: &str) -> (Vec<(String, LineOutcome)>, usize) {
    let mut out = Vec::new();
    let mut unreadable = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Some((id, outcome)) = serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|v| read_line(&v))
        else {
            unreadable += 1;
            continue;
        };
        out.push((id, outcome));
    }
    (out, unreadable)
}

fn read_line(v: &Value) -> Option<(String, LineOutcome)> {
    let id = v.get("custom_id")?.as_str()?.to_string();
    let message = |e: &Value| {
        e.pointer("/error/message")
            .or_else(|| e.get("message"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| e.to_string())
    };
    let response = v.get("response").filter(|r| r.is_object());
    let status = response
        .and_then(|r| r.get("status_code"))
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok());
    let outcome = match (response, status) {
        (Some(r), Some(s)) if (200..300).contains(&s) => LineOutcome::Answered {
            body: match r.get("body") {
                Some(Value::String(s)) => s.clone(),
                Some(b) => b.to_string(),
                None => String::new(),
            },
        },
        (Some(r), Some(s)) if crate::llm::retry::is_retryable_status(s) => {
            LineOutcome::Unfinished {
                reason: format!(
                    "HTTP {s} in the batch: {}",
                    message(r.get("body").unwrap_or(&Value::Null))
                ),
            }
        }
        (Some(r), Some(s)) => LineOutcome::Refused {
            status: s,
            message: message(r.get("body").unwrap_or(&Value::Null)),
        },
        _ => LineOutcome::Unfinished {
            reason: match v.get("error").filter(|e| !e.is_null()) {
                Some(e) => format!("error line in the batch: {}", message(e)),
                None => "a batch line with neither a response nor an error".to_string(),
            },
        },
    };
    Some((id, outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn custom_ids_name_the_call_and_its_line() {
        assert_eq!(
            custom_id("faithfulness\u{1f}fixed-256-o0-k5\u{1f}q-003", 7),
            "faithfulness|fixed-256-o0-k5|q-003#7"
        );
    }

    #[test]
    fn an_input_line_is_a_post_to_chat_completions() {
        let line = input_line("generate|c|q#0", &json!({"model": "m", "messages": []}));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            v,
            json!({"custom_id": "generate|c|q#0", "method": "POST",
                   "url": "/v1/chat/completions", "body": {"model": "m", "messages": []}})
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn output_and_error_lines_are_read_by_custom_id() {
        let text = [
            json!({"id": "r1", "custom_id": "a#0", "response": {"status_code": 200,
                   "request_id": "x", "body": {"choices": [{"message": {"content": "hi"}}]}},
                   "error": null})
            .to_string(),
            json!({"id": "r2", "custom_id": "b#1", "response": {"status_code": 400,
                   "body": {"error": {"message": "bad schema"}}}})
            .to_string(),
            json!({"id": "r3", "custom_id": "c#2", "response": {"status_code": 503,
                   "body": {"error": {"message": "busy"}}}})
            .to_string(),
            json!({"id": "r4", "custom_id": "d#3", "response": null,
                   "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}})
            .to_string(),
            String::new(),
            "not json".to_string(),
            json!({"id": "r5"}).to_string(),
        ]
        .join("\n");
        let (lines, unreadable) = read_lines(&text);
        assert_eq!(unreadable, 2);
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0].0, "a#0");
        let LineOutcome::Answered { body } = &lines[0].1 else {
            panic!("{:?}", lines[0])
        };
        assert_eq!(
            serde_json::from_str::<Value>(body).unwrap()["choices"][0]["message"]["content"],
            "hi"
        );
        assert_eq!(
            lines[1].1,
            LineOutcome::Refused {
                status: 400,
                message: "bad schema".into()
            }
        );
        assert_eq!(
            lines[2].1,
            LineOutcome::Unfinished {
                reason: "HTTP 503 in the batch: busy".into()
            }
        );
        assert_eq!(
            lines[3].1,
            LineOutcome::Unfinished {
                reason: "error line in the batch: This request could not be executed before the completion window expired.".into()
            }
        );
    }
}
