//! Structured output: which `response_format` to ask for, how to recognise a server refusing it,
//! and lenient JSON parsing that never invents a value.
//!
//! Modes are tried in the order `json_schema` → `json_object` (with the schema inside, as
//! llama-cpp-python wants, and in the prompt) → `text` (schema in the prompt only). A refusal is a
//! 400 or 422 (any body), or a 500 whose message says the format is unsupported (names
//! `response_format`, `json_schema` or `json_object` and says "not supported", "unsupported",
//! "not implemented", "unknown", "invalid", "not allowed", "does not match", "expected" or names
//! a validation error; llama-cpp-python answers an unsupported format with such a 500). Any
//! other 500 is transient and retried. A refusal moves to the next mode at once and is known at
//! once to every call of the same server and model, those waiting for a slot included (the
//! client builds each attempt's body after it is admitted). The mode is written to the cache
//! file, for later runs, only once a later mode actually succeeds,
//! so a 400 that has nothing to do with the format (say, a prompt over the context length) does
//! not teach later runs anything wrong.

use async_openai::types::chat::{ResponseFormat, ResponseFormatJsonSchema};
use serde_json::Value;

use super::format::ResponseFormatKind;
use super::types::ChatMessage;

/// Adds the `response_format` field and, for the weaker modes, a system message with the schema,
/// to a chat body built by [`ChatRequest::to_body`](super::types::ChatRequest).
pub(crate) fn apply_mode(body: &mut Value, mode: ResponseFormatKind, schema: &Value) {
    let obj = body.as_object_mut().expect("chat body is an object");
    match mode {
        ResponseFormatKind::JsonSchema => {
            let rf = ResponseFormat::JsonSchema {
                json_schema: ResponseFormatJsonSchema {
                    description: None,
                    name: "response".to_string(),
                    schema: schema.clone(),
                    strict: None,
                },
            };
            obj.insert(
                "response_format".into(),
                serde_json::to_value(rf).expect("response format serialises"),
            );
        }
        ResponseFormatKind::JsonObject => {
            obj.insert(
                "response_format".into(),
                serde_json::json!({"type": "json_object", "schema": schema}),
            );
        }
        ResponseFormatKind::Text => {}
    }
    if mode != ResponseFormatKind::JsonSchema {
        let instruction = schema_instruction(schema);
        if let Some(Value::Array(msgs)) = obj.get_mut("messages") {
            msgs.push(serde_json::json!({"role": "system", "content": instruction}));
        }
    }
}

/// The instruction appended when the server does not enforce the schema itself.
pub fn schema_instruction(schema: &Value) -> String {
    format!(
        "Reply with a single JSON object, and nothing else, that conforms to this JSON Schema:\n{schema}"
    )
}

/// The same instruction as a chat message (for token estimates).
pub(crate) fn instruction_message(schema: &Value) -> ChatMessage {
    ChatMessage::system(schema_instruction(schema))
}

/// Whether a failed reply means "this server does not support the response format" rather than a
/// transient or request error: 400 or 422 with any body, or a 500 whose body names the format
/// (`response_format`, `json_schema`, `json_object`) and says it is unsupported.
pub fn is_format_refusal(status: u16, body: &str) -> bool {
    match status {
        400 | 422 => true,
        500 => {
            let b = body.to_ascii_lowercase();
            let names_format = ["response_format", "json_schema", "json_object"]
                .iter()
                .any(|k| b.contains(k));
            let unsupported = [
                "not supported",
                "unsupported",
                "not implemented",
                "unknown",
                "invalid",
                "not allowed",
                "does not support",
                "validation",
                "does not match",
                "expected",
            ]
            .iter()
            .any(|k| b.contains(k));
            names_format && unsupported
        }
        _ => false,
    }
}

/// Why [`parse_json_lenient`] found nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LenientError {
    /// The text contains no parseable JSON object or array.
    NoJson,
    /// A JSON object was found but lacks a required key or has a value outside its `enum`.
    SchemaMismatch(String),
}

impl std::fmt::Display for LenientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LenientError::NoJson => f.write_str("no JSON object or array found"),
            LenientError::SchemaMismatch(m) => write!(f, "JSON does not match the schema: {m}"),
        }
    }
}

/// Reads the first JSON object or array from a model's reply. Accepts, in this order: the whole
/// text; the content of a Markdown code fence (```json or ```); the first complete JSON value
/// starting at a `{` or `[` after leading prose (trailing prose is ignored). Nothing is repaired
/// and nothing is filled in: text that is not valid JSON is an error, never a default.
///
/// # Errors
/// [`LenientError::NoJson`] if no object or array parses.
pub fn parse_json_lenient(text: &str) -> Result<Value, LenientError> {
    let t = text.trim();
    if let Ok(v @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str::<Value>(t) {
        return Ok(v);
    }
    for block in code_fences(t) {
        if let Ok(v @ (Value::Object(_) | Value::Array(_))) =
            serde_json::from_str::<Value>(block.trim())
        {
            return Ok(v);
        }
    }
    for (i, c) in t.char_indices() {
        if c != '{' && c != '[' {
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(&t[i..]).into_iter::<Value>();
        if let Some(Ok(v @ (Value::Object(_) | Value::Array(_)))) = stream.next() {
            return Ok(v);
        }
    }
    Err(LenientError::NoJson)
}

/// [`parse_json_lenient`], then a shallow check against the schema: for an object schema, every
/// `required` key is present and every top-level property with an `enum` has one of its values.
/// Before the check, a string whose trimmed text equals one of its property's `enum` strings
/// ignoring case is replaced by that enum string (`" PASS "` reads as `"pass"`).
///
/// # Errors
/// [`LenientError`] when no JSON is found or it fails the check.
pub fn parse_json_checked(text: &str, schema: &Value) -> Result<Value, LenientError> {
    let mut v = parse_json_lenient(text)?;
    normalise_enums(&mut v, schema);
    check_shallow(&v, schema)?;
    Ok(v)
}

/// Replaces each top-level string that matches one of its property's `enum` strings after
/// trimming and ignoring case by that enum string.
fn normalise_enums(v: &mut Value, schema: &Value) {
    let (Some(obj), Some(props)) = (
        v.as_object_mut(),
        schema.get("properties").and_then(Value::as_object),
    ) else {
        return;
    };
    for (k, p) in props {
        let (Some(allowed), Some(Value::String(val))) =
            (p.get("enum").and_then(Value::as_array), obj.get_mut(k))
        else {
            continue;
        };
        let wanted = val.trim();
        if let Some(canonical) = allowed
            .iter()
            .filter_map(Value::as_str)
            .find(|a| a.eq_ignore_ascii_case(wanted))
        {
            *val = canonical.to_string();
        }
    }
}

fn check_shallow(v: &Value, schema: &Value) -> Result<(), LenientError> {
    let is_object_schema = schema.get("type").and_then(Value::as_str) == Some("object")
        || schema.get("properties").is_some();
    if !is_object_schema {
        return Ok(());
    }
    let Some(obj) = v.as_object() else {
        return Err(LenientError::SchemaMismatch("expected an object".into()));
    };
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        for k in req.iter().filter_map(Value::as_str) {
            if !obj.contains_key(k) {
                return Err(LenientError::SchemaMismatch(format!("missing key {k:?}")));
            }
        }
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (k, p) in props {
            if let (Some(allowed), Some(val)) =
                (p.get("enum").and_then(Value::as_array), obj.get(k))
                && !allowed.contains(val)
            {
                return Err(LenientError::SchemaMismatch(format!(
                    "{k:?} is {val}, not one of {}",
                    Value::Array(allowed.clone())
                )));
            }
        }
    }
    Ok(())
}

/// Contents of Markdown code fences, in order.
fn code_fences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        // skip the info string (e.g. "json") up to the end of the line
        let body_start = after.find('\n').map(|i| i + 1).unwrap_or(after.len());
        let body = &after[body_start..];
        match body.find("```") {
            Some(close) => {
                out.push(&body[..close]);
                rest = &body[close + 3..];
            }
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn verdict_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "verdict": {"type": "string", "enum": ["pass", "fail"]},
                "reason": {"type": "string"}
            },
            "required": ["verdict", "reason"]
        })
    }

    #[test]
    fn plain_json() {
        let v = parse_json_lenient(r#" {"verdict":"fail","reason":"x"} "#).unwrap();
        assert_eq!(v, json!({"verdict":"fail","reason":"x"}));
    }

    #[test]
    fn code_fence_with_language() {
        let t =
            "Here you go:\n```json\n{\"verdict\": \"pass\", \"reason\": \"cited\"}\n```\nThanks!";
        assert_eq!(
            parse_json_lenient(t).unwrap(),
            json!({"verdict":"pass","reason":"cited"})
        );
    }

    #[test]
    fn bare_code_fence() {
        let t = "```\n[1, 2, 3]\n```";
        assert_eq!(parse_json_lenient(t).unwrap(), json!([1, 2, 3]));
    }

    #[test]
    fn leading_and_trailing_prose() {
        let t = "Sure! My judgement is {\"verdict\": \"fail\", \"reason\": \"no {support}\"} as requested.";
        assert_eq!(
            parse_json_lenient(t).unwrap(),
            json!({"verdict":"fail","reason":"no {support}"})
        );
    }

    #[test]
    fn skips_brace_in_prose_before_real_json() {
        let t = "Using {curly} notation: {\"verdict\": \"pass\", \"reason\": \"ok\"}";
        assert_eq!(
            parse_json_lenient(t).unwrap(),
            json!({"verdict":"pass","reason":"ok"})
        );
    }

    #[test]
    fn never_invents() {
        assert_eq!(parse_json_lenient("pass"), Err(LenientError::NoJson));
        assert_eq!(parse_json_lenient("\"pass\""), Err(LenientError::NoJson));
        assert_eq!(parse_json_lenient("42"), Err(LenientError::NoJson));
        assert_eq!(parse_json_lenient(""), Err(LenientError::NoJson));
        // truncated JSON is not completed
        assert_eq!(
            parse_json_lenient(r#"{"verdict": "pass", "reason": "cut o"#),
            Err(LenientError::NoJson)
        );
        // trailing commas are not repaired
        assert_eq!(
            parse_json_lenient(r#"{"verdict": "pass",}"#),
            Err(LenientError::NoJson)
        );
    }

    #[test]
    fn schema_check_rejects_missing_and_out_of_enum() {
        let s = verdict_schema();
        assert!(parse_json_checked(r#"{"verdict":"pass","reason":"r"}"#, &s).is_ok());
        assert_eq!(
            parse_json_checked(r#"{"verdict":"pass"}"#, &s),
            Err(LenientError::SchemaMismatch(
                "missing key \"reason\"".into()
            ))
        );
        assert!(matches!(
            parse_json_checked(r#"{"verdict":"maybe","reason":"r"}"#, &s),
            Err(LenientError::SchemaMismatch(_))
        ));
        // case and surrounding space are normalised before the check
        assert_eq!(
            parse_json_checked(r#"{"verdict":" PASS ","reason":"r"}"#, &s),
            Ok(json!({"verdict": "pass", "reason": "r"}))
        );
        assert_eq!(
            parse_json_checked(r#"{"verdict":"Fail","reason":"r"}"#, &s).unwrap()["verdict"],
            "fail"
        );
        assert!(matches!(
            parse_json_checked("[1]", &s),
            Err(LenientError::SchemaMismatch(_))
        ));
    }

    #[test]
    fn refusal_detection() {
        assert!(is_format_refusal(400, "anything"));
        assert!(is_format_refusal(422, ""));
        assert!(is_format_refusal(
            500,
            r#"{"error":{"message":"response_format type json_schema not supported"}}"#
        ));
        // a transient 500 that only mentions the format is not a refusal
        assert!(!is_format_refusal(
            500,
            r#"{"error":{"message":"worker crashed while applying response_format"}}"#
        ));
        // pydantic's message for a format the server's request model does not know
        assert!(is_format_refusal(
            500,
            "1 validation error for CreateChatCompletionRequest\nresponse_format\n  Input tag 'json_schema' found using 'type' does not match any of the expected tags"
        ));
        assert!(!is_format_refusal(
            500,
            "internal error: CUDA out of memory"
        ));
        assert!(!is_format_refusal(503, "json_schema"));
        assert!(!is_format_refusal(429, "response_format"));
    }

    #[test]
    fn modes_build_expected_bodies() {
        let s = verdict_schema();
        let base = json!({"model": "m", "messages": [{"role": "user", "content": "q"}]});
        let mut b = base.clone();
        apply_mode(&mut b, ResponseFormatKind::JsonSchema, &s);
        assert_eq!(b["response_format"]["type"], "json_schema");
        assert_eq!(b["response_format"]["json_schema"]["schema"], s);
        assert_eq!(b["messages"].as_array().unwrap().len(), 1);
        let mut b = base.clone();
        apply_mode(&mut b, ResponseFormatKind::JsonObject, &s);
        assert_eq!(
            b["response_format"],
            json!({"type": "json_object", "schema": s})
        );
        assert_eq!(b["messages"].as_array().unwrap().len(), 2);
        let mut b = base.clone();
        apply_mode(&mut b, ResponseFormatKind::Text, &s);
        assert!(b.get("response_format").is_none());
        assert!(
            b["messages"][1]["content"]
                .as_str()
                .unwrap()
                .contains("\"verdict\"")
        );
    }
}
