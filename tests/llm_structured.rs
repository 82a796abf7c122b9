//! Structured output: json_schema → json_object → text fallbacks, remembered per server and
//! model; refusals are not retried as transient; lenient parsing never invents a verdict.

mod llm_support;

use chunksweep::llm::{LlmError, ResponseFormatKind};
use llm_support::*;
use serde_json::{Value, json};
use wiremock::matchers::{body_partial_json, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["pass", "fail"]},
            "reason": {"type": "string"}
        },
        "required": ["verdict", "reason"]
    })
}

fn base(s: &MockServer) -> String {
    format!("{}/v1", s.uri())
}

fn mode_matcher(kind: &str) -> wiremock::matchers::BodyPartialJsonMatcher {
    body_partial_json(json!({"response_format": {"type": kind}}))
}

/// Requests without a response_format field.
struct NoResponseFormat;
impl wiremock::Match for NoResponseFormat {
    fn matches(&self, r: &wiremock::Request) -> bool {
        serde_json::from_slice::<Value>(&r.body)
            .map(|v| v.get("response_format").is_none())
            .unwrap_or(false)
    }
}

#[tokio::test]
async fn schema_refused_with_500_falls_back_to_json_object_and_remembers() {
    let s = MockServer::builder().start().await;
    // llama-cpp-python answers an unsupported json_schema with a 500 naming response_format
    Mock::given(path("/v1/chat/completions"))
        .and(mode_matcher("json_schema"))
        .respond_with(ResponseTemplate::new(500).set_body_json(json!({
            "error": {"message": "Unsupported response_format type: json_schema", "type": "internal_server_error"}
        })))
        .expect(1) // refused once, not retried, and not asked again
        .mount(&s)
        .await;
    Mock::given(path("/v1/chat/completions"))
        .and(mode_matcher("json_object"))
        .respond_with(ok_chat(
            r#"{"verdict": "pass", "reason": "supported by [2]"}"#,
        ))
        .expect(2)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    assert_eq!(c.format_for(MODEL).await, ResponseFormatKind::JsonSchema);

    let first = c.chat_json("judge", req("q1"), &schema()).await.unwrap();
    assert_eq!(
        first.value,
        json!({"verdict": "pass", "reason": "supported by [2]"})
    );
    assert_eq!(first.format, ResponseFormatKind::JsonObject);
    assert_eq!(first.record.attempts, 2); // the refusal + the json_object request
    assert_eq!(
        first.record.response_format,
        Some(ResponseFormatKind::JsonObject)
    );
    assert_eq!(c.format_for(MODEL).await, ResponseFormatKind::JsonObject);

    let second = c.chat_json("judge", req("q2"), &schema()).await.unwrap();
    assert_eq!(second.format, ResponseFormatKind::JsonObject);
    assert_eq!(second.record.attempts, 1); // straight to json_object

    // the json_object request carries the schema, as llama-cpp-python expects
    let reqs = s.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&reqs[1].body).unwrap();
    assert_eq!(body["response_format"]["schema"], schema());

    // a new client on the same cache file starts with json_object too
    let c2 = client(config(&base(&s), dir.path()));
    assert_eq!(c2.format_for(MODEL).await, ResponseFormatKind::JsonObject);
}

#[tokio::test]
async fn refusals_down_to_text_with_fenced_reply() {
    let s = MockServer::builder().start().await;
    Mock::given(path("/v1/chat/completions"))
        .and(mode_matcher("json_schema"))
        .respond_with(ResponseTemplate::new(400).set_body_string("unknown field response_format"))
        .expect(1)
        .mount(&s)
        .await;
    Mock::given(path("/v1/chat/completions"))
        .and(mode_matcher("json_object"))
        .respond_with(ResponseTemplate::new(422).set_body_string("json_object not supported"))
        .expect(1)
        .mount(&s)
        .await;
    Mock::given(path("/v1/chat/completions"))
        .and(NoResponseFormat)
        .respond_with(ok_chat(
            "Sure.\n```json\n{\"verdict\": \"fail\", \"reason\": \"not in context\"}\n```",
        ))
        .expect(1)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let out = c.chat_json("judge", req("q"), &schema()).await.unwrap();
    assert_eq!(
        out.value,
        json!({"verdict": "fail", "reason": "not in context"})
    );
    assert_eq!(out.format, ResponseFormatKind::Text);
    assert_eq!(out.record.attempts, 3);
    assert_eq!(c.format_for(MODEL).await, ResponseFormatKind::Text);
    // the text-mode request carries the schema in a system message
    let reqs = s.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&reqs[2].body).unwrap();
    let last = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "system");
    assert!(last["content"].as_str().unwrap().contains("\"verdict\""));
}

#[tokio::test]
async fn plain_500_is_retried_not_taken_as_refusal() {
    let s = MockServer::builder().start().await;
    Mock::given(path("/v1/chat/completions"))
        .and(mode_matcher("json_schema"))
        .respond_with(ResponseTemplate::new(500).set_body_string("CUDA out of memory"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&s)
        .await;
    Mock::given(path("/v1/chat/completions"))
        .and(mode_matcher("json_schema"))
        .respond_with(ok_chat(r#"{"verdict":"pass","reason":"r"}"#))
        .with_priority(2)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let out = c.chat_json("judge", req("q"), &schema()).await.unwrap();
    assert_eq!(out.format, ResponseFormatKind::JsonSchema);
    assert_eq!(out.record.attempts, 2);
    assert_eq!(c.format_for(MODEL).await, ResponseFormatKind::JsonSchema);
}

#[tokio::test]
async fn unrelated_400_in_every_mode_teaches_nothing() {
    let s = MockServer::builder().start().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "object": "error", "message": "prompt is longer than the context window", "code": 400
        })))
        .expect(3)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let err = c.chat_json("judge", req("q"), &schema()).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Rejected { status: 400, message, .. } if message == "prompt is longer than the context window"),
        "{err:?}"
    );
    assert_eq!(c.format_for(MODEL).await, ResponseFormatKind::JsonSchema);
    let r = &c.records()[0];
    assert_eq!(
        (r.attempts, r.response_format),
        (3, Some(ResponseFormatKind::Text))
    );
}

#[tokio::test]
async fn unreadable_verdict_is_an_error_never_a_pass_and_not_cached() {
    let s = MockServer::builder().start().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(chat_body("I think it passes, mostly.", Some((50, 7)))),
        )
        .expect(2)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let err = c.chat_json("judge", req("q"), &schema()).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::NoJson { excerpt, .. } if excerpt == "I think it passes, mostly."),
        "{err:?}"
    );
    let r = &c.records()[0];
    // the call was paid for, so its tokens and cost are recorded with the error
    assert_eq!((r.prompt_tokens, r.completion_tokens), (50, 7));
    assert!(r.cost_usd.unwrap() > 0.0);
    assert!(r.error.as_deref().unwrap().contains("no usable JSON"));
    // not cached: asking again sends again (expect(2) above)
    assert!(c.chat_json("judge", req("q"), &schema()).await.is_err());
}

#[tokio::test]
async fn value_outside_the_enum_is_rejected() {
    let s = MockServer::builder().start().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ok_chat(r#"{"verdict": "maybe", "reason": "unsure"}"#))
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let err = c.chat_json("judge", req("q"), &schema()).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::NoJson { reason, .. } if reason.contains("\"maybe\"")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_refusal_is_known_at_once_to_calls_waiting_for_a_slot() {
    let s = MockServer::builder().start().await;
    Mock::given(path("/v1/chat/completions"))
        .and(mode_matcher("json_schema"))
        .respond_with(
            ResponseTemplate::new(400)
                .set_body_string("unknown field response_format")
                .set_delay(std::time::Duration::from_millis(300)),
        )
        .mount(&s)
        .await;
    Mock::given(path("/v1/chat/completions"))
        .and(mode_matcher("json_object"))
        .respond_with(ok_chat(r#"{"verdict": "pass", "reason": "r"}"#))
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&base(&s), dir.path());
    model_mut(&mut cfg).max_in_flight = 2;
    let c = client(cfg);
    let mut set = tokio::task::JoinSet::new();
    for i in 0..6 {
        let c = c.clone();
        set.spawn(async move { c.chat_json("judge", req(&format!("q{i}")), &schema()).await });
    }
    while let Some(r) = set.join_next().await {
        assert_eq!(r.unwrap().unwrap().format, ResponseFormatKind::JsonObject);
    }
    // the two calls in flight are refused; the four waiting for a slot learn it before they
    // send: 2 refusals + 6 answers, not 2 × 6
    let reqs = s.received_requests().await.unwrap();
    let schema_requests = reqs
        .iter()
        .filter(|r| String::from_utf8_lossy(&r.body).contains("\"json_schema\""))
        .count();
    assert_eq!((reqs.len(), schema_requests), (8, 2));
}

#[tokio::test]
async fn a_transient_500_mentioning_the_format_is_retried_not_remembered() {
    let s = MockServer::builder().start().await;
    Mock::given(path("/v1/chat/completions"))
        .and(mode_matcher("json_schema"))
        .respond_with(ResponseTemplate::new(500).set_body_json(json!({
            "error": {"message": "worker crashed while applying response_format"}
        })))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&s)
        .await;
    Mock::given(path("/v1/chat/completions"))
        .and(mode_matcher("json_schema"))
        .respond_with(ok_chat(r#"{"verdict":"PASS","reason":"r"}"#))
        .with_priority(2)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let out = c.chat_json("judge", req("q"), &schema()).await.unwrap();
    assert_eq!(out.format, ResponseFormatKind::JsonSchema);
    assert_eq!(out.record.attempts, 2);
    // case normalised before the schema check
    assert_eq!(out.value["verdict"], "pass");
    assert_eq!(c.format_for(MODEL).await, ResponseFormatKind::JsonSchema);
    assert_eq!(s.received_requests().await.unwrap().len(), 2);
}
