//! The client against a fake OpenAI-compatible server that misbehaves: each fault either ends in
//! success after retries or in a recorded error, and no call is lost.

mod llm_support;

use std::time::{Duration, Instant, SystemTime};

use chunksweep::llm::cost::{count_tokens, estimate_chat_prompt_tokens, estimate_embed_tokens};
use chunksweep::llm::{EmbedRequest, LlmError};
use llm_support::*;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

async fn server() -> MockServer {
    MockServer::builder().start().await
}

fn base(s: &MockServer) -> String {
    format!("{}/v1", s.uri())
}

/// Mounts `first` for the first `n` requests, then a good reply.
async fn faults_then_ok(s: &MockServer, first: impl Respond + 'static, n: u64) {
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(first)
        .up_to_n_times(n)
        .with_priority(1)
        .mount(s)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ok_chat("fine"))
        .with_priority(2)
        .mount(s)
        .await;
}

async fn received(s: &MockServer) -> usize {
    s.received_requests().await.unwrap().len()
}

#[tokio::test]
async fn slow_server_latency_is_measured() {
    let s = server().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ok_chat("slow").set_delay(Duration::from_millis(300)))
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let out = c.chat("gen", req("q")).await.unwrap();
    assert_eq!(out.content, "slow");
    let r = &out.record;
    assert!(r.latency_ms_first_byte.unwrap() >= 300.0, "{r:?}");
    assert!(r.latency_ms_total.unwrap() >= r.latency_ms_first_byte.unwrap());
    assert!(r.wall_ms >= 300.0);
    assert_eq!(
        (r.attempts, r.cache_hit, r.http_status),
        (1, false, Some(200))
    );
    assert_eq!(r.stage, "gen");
    assert_eq!(c.records(), vec![r.clone()]);
}

/// The call waits at least `min_s` (a lower bound only: how long a busy machine takes on top is
/// not the client's doing; the exact waits are checked on the pure functions in llm::retry).
async fn assert_waits(first: impl Respond + 'static, min_s: f64) {
    let s = server().await;
    faults_then_ok(&s, first, 1).await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let t = Instant::now();
    let out = c.chat("gen", req("q")).await.unwrap();
    let e = t.elapsed().as_secs_f64();
    assert!(e >= min_s, "waited only {e:.3} s, wanted >= {min_s}");
    assert_eq!(out.record.attempts, 2);
    assert_eq!(out.content, "fine");
    assert_eq!(received(&s).await, 2);
}

#[tokio::test]
async fn retry_after_seconds_is_waited_for() {
    // backoff alone would wait <= 10 ms
    assert_waits(
        ResponseTemplate::new(429)
            .insert_header("retry-after", "1")
            .set_body_string("slow down"),
        1.0,
    )
    .await;
}

#[tokio::test]
async fn retry_after_fractional_seconds() {
    assert_waits(
        ResponseTemplate::new(429).insert_header("retry-after", "0.6"),
        0.6,
    )
    .await;
}

#[tokio::test]
async fn retry_after_http_date() {
    // The date is written when the request arrives (not before the test's setup, which a busy
    // machine can make last seconds). HTTP dates have whole seconds, so now + 3 s is between 2
    // and 3 s after the reply was made: at least 1 s even if the reply takes a while to arrive.
    assert_waits(
        |_: &Request| {
            let date = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(3));
            ResponseTemplate::new(429).insert_header("retry-after", date.as_str())
        },
        1.0,
    )
    .await;
}

#[tokio::test]
async fn retry_after_ms_header() {
    assert_waits(
        ResponseTemplate::new(429).insert_header("retry-after-ms", "400"),
        0.4,
    )
    .await;
}

#[tokio::test]
async fn x_ratelimit_reset_header() {
    assert_waits(
        ResponseTemplate::new(429)
            .insert_header("x-ratelimit-remaining-requests", "0")
            .insert_header("x-ratelimit-remaining-tokens", "9000")
            .insert_header("x-ratelimit-reset-requests", "1.5s")
            .insert_header("x-ratelimit-reset-tokens", "6m0s")
            .set_body_json(json!({"error": {"message": "Rate limit", "code": 429}})),
        1.5,
    )
    .await;
}

#[tokio::test]
async fn retry_after_longer_than_allowed_ends_the_call() {
    let s = server().await;
    faults_then_ok(
        &s,
        ResponseTemplate::new(429).insert_header("retry-after", "3600"),
        1,
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    // The call ends at the first answer (one attempt, one request), without waiting.
    let err = c.chat("gen", req("q")).await.unwrap_err();
    assert_eq!(received(&s).await, 1);
    assert!(
        matches!(err, LlmError::RetryAfterTooLong { wait_s, .. } if wait_s == 3600.0),
        "{err:?}"
    );
    let r = &c.records()[0];
    assert_eq!((r.attempts, r.http_status), (1, Some(429)));
    assert!(r.error.as_deref().unwrap().contains("3600"));
}

#[tokio::test]
async fn server_errors_then_success() {
    let s = server().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(500).set_body_string("boom"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&s)
        .await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(503).set_body_string("overloaded"))
        .up_to_n_times(1)
        .with_priority(2)
        .mount(&s)
        .await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ok_chat("third time"))
        .with_priority(3)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let out = c.chat("gen", req("q")).await.unwrap();
    assert_eq!(out.content, "third time");
    assert_eq!(out.record.attempts, 3);
    assert_eq!(out.record.error, None);
    assert_eq!(received(&s).await, 3);
}

#[tokio::test]
async fn persistent_503_ends_as_recorded_error_after_max_attempts() {
    let s = server().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(503).set_body_string("overloaded"))
        .expect(3)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&base(&s), dir.path());
    model_mut(&mut cfg).max_attempts = 3;
    let c = client(cfg);
    let err = c.chat("gen", req("q")).await.unwrap_err();
    match &err {
        LlmError::Exhausted { attempts, last, .. } => {
            assert_eq!(*attempts, 3);
            assert!(
                last.contains("503") && last.contains("overloaded"),
                "{last}"
            );
        }
        other => panic!("{other:?}"),
    }
    let r = &c.records()[0];
    assert_eq!(
        (r.attempts, r.http_status, r.cost_usd),
        (3, Some(503), None)
    );
    assert_eq!(r.error.as_deref(), Some(err.to_string().as_str()));
}

#[tokio::test]
async fn timeout_is_retried() {
    let s = server().await;
    faults_then_ok(&s, ok_chat("late").set_delay(Duration::from_secs(3)), 1).await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&base(&s), dir.path());
    model_mut(&mut cfg).timeout_s = 0.3;
    let c = client(cfg);
    let t = Instant::now();
    let out = c.chat("gen", req("q")).await.unwrap();
    // Not the late reply: the first attempt was cut at its timeout and retried (a lower bound
    // on time only; the late reply's 3 s are not waited for, or its content would be here).
    assert_eq!(out.content, "fine");
    assert_eq!(out.record.attempts, 2);
    let e = t.elapsed();
    assert!(e >= Duration::from_millis(300), "{e:?}");
}

#[tokio::test]
async fn persistent_timeout_is_a_recorded_error() {
    let s = server().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ok_chat("late").set_delay(Duration::from_secs(3)))
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&base(&s), dir.path());
    model_mut(&mut cfg).timeout_s = 0.2;
    model_mut(&mut cfg).max_attempts = 2;
    let c = client(cfg);
    let err = c.chat("gen", req("q")).await.unwrap_err();
    assert_eq!(
        err,
        LlmError::TimedOut {
            endpoint: "/chat/completions".into(),
            attempts: 2
        }
    );
    // not a result: the work stays unfinished for a rerun, never an error verdict
    assert!(!err.is_result() && !err.stops_run());
    assert_eq!(c.records().len(), 1);
    let r = &c.records()[0];
    assert_eq!(r.http_status, None);
    // no usage came back: the prompt's tokens as estimated, flagged, never a silent 0
    let request = req("q");
    assert_eq!(
        (r.prompt_tokens, r.completion_tokens, r.tokens_estimated),
        (estimate_chat_prompt_tokens(&request.messages), 0, true)
    );
    assert_eq!(r.cost_usd, None, "nothing known to be billed");
    assert_eq!(received(&s).await, 2);
}

#[tokio::test]
async fn dropped_connection_is_retried() {
    let (url, conns) = dropping_server(2, chat_body("after drops", None)).await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&url, dir.path()));
    let out = c.chat("gen", req("q")).await.unwrap();
    assert_eq!(out.content, "after drops");
    assert_eq!(out.record.attempts, 3);
    assert_eq!(conns.load(std::sync::atomic::Ordering::SeqCst), 3);
}

#[tokio::test]
async fn dropped_connections_exhaust_attempts() {
    let (url, conns) = dropping_server(100, chat_body("never", None)).await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&url, dir.path()));
    let err = c.chat("gen", req("q")).await.unwrap_err();
    assert!(
        matches!(err, LlmError::Exhausted { attempts: 4, .. }),
        "{err:?}"
    );
    assert_eq!(conns.load(std::sync::atomic::Ordering::SeqCst), 4);
}

#[tokio::test]
async fn malformed_json_is_retried_then_succeeds() {
    let s = server().await;
    faults_then_ok(
        &s,
        ResponseTemplate::new(200).set_body_raw("{\"choices\": [ {\"mess", "application/json"),
        1,
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let out = c.chat("gen", req("q")).await.unwrap();
    assert_eq!((out.content.as_str(), out.record.attempts), ("fine", 2));
}

#[tokio::test]
async fn always_malformed_is_a_recorded_error() {
    let s = server().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_raw("<html>gateway</html>", "text/html"))
        .expect(4)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let err = c.chat("gen", req("q")).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Exhausted { attempts: 4, last, .. } if last.contains("malformed") && last.contains("<html>gateway")),
        "{err:?}"
    );
    assert!(!err.is_result(), "a transient failure, not a result");
    // the server answered 200 but its usage cannot be read: estimated and flagged, never 0,
    // and priced (it was probably billed)
    let r = &c.records()[0];
    let prompt = estimate_chat_prompt_tokens(&req("q").messages);
    let completion = count_tokens("<html>gateway</html>");
    assert_eq!(
        (r.prompt_tokens, r.completion_tokens, r.tokens_estimated),
        (prompt, completion, true)
    );
    let cost = (prompt as f64 * 2.5 + completion as f64 * 10.0) / 1e6;
    assert!((r.cost_usd.unwrap() - cost).abs() < 1e-12, "{r:?}");
}

#[tokio::test]
async fn missing_usage_gives_estimated_flagged_tokens() {
    let s = server().await;
    let content = "The answer is forty-two, as the archive states.";
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_body(content, None)))
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let request = req("What is the answer to everything, per the archive?");
    let expected_prompt = estimate_chat_prompt_tokens(&request.messages);
    let out = c.chat("gen", request).await.unwrap();
    let r = &out.record;
    assert!(r.tokens_estimated);
    assert_eq!(r.prompt_tokens, expected_prompt);
    assert_eq!(r.completion_tokens, count_tokens(content));
    assert!(r.prompt_tokens > 10 && r.completion_tokens > 5, "{r:?}");
    let cost = (r.prompt_tokens as f64 * 2.5 + r.completion_tokens as f64 * 10.0) / 1e6;
    assert!((r.cost_usd.unwrap() - cost).abs() < 1e-12);
}

#[tokio::test]
async fn usage_gives_exact_tokens_and_cost() {
    let s = server().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_body("x", Some((1000, 200)))))
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let r = c.chat("gen", req("q")).await.unwrap().record;
    assert_eq!(
        (r.prompt_tokens, r.completion_tokens, r.tokens_estimated),
        (1000, 200, false)
    );
    // 1000 * 2.5/1e6 + 200 * 10/1e6
    assert!((r.cost_usd.unwrap() - 0.0045).abs() < 1e-12, "{r:?}");
}

#[tokio::test]
async fn bad_request_is_not_retried_and_its_message_is_shown() {
    let s = server().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "error": {"message": "This model's maximum context length is 8192 tokens", "type": "invalid_request_error", "code": null}
        })))
        .expect(1)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let err = c.chat("gen", req("q")).await.unwrap_err();
    assert_eq!(
        err,
        LlmError::Rejected {
            status: 400,
            url: format!("{}/chat/completions", base(&s)),
            model: MODEL.into(),
            message: "This model's maximum context length is 8192 tokens".into()
        }
    );
    assert!(err.to_string().contains("maximum context length is 8192"));
    // a client error is not a result (the work stays unfinished), and does not stop a run
    assert!(!err.is_result() && !err.stops_run());
    let r = &c.records()[0];
    assert_eq!((r.attempts, r.http_status), (1, Some(400)));
    assert!(
        r.error
            .as_deref()
            .unwrap()
            .contains("maximum context length")
    );
}

#[tokio::test]
async fn tolerant_to_non_openai_replies() {
    // llama.cpp / vLLM / Groq style: no created/object, finish_reason "eos", service_tier
    // "on_demand", extra fields, usage without total
    let s = server().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"message": {"role": "assistant", "content": "ok", "reasoning_content": "hmm"},
                         "finish_reason": "eos"}],
            "service_tier": "on_demand",
            "timings": {"predicted_ms": 3.2},
            "x_groq": {"id": "q"},
            "usage": {"prompt_tokens": 5, "completion_tokens": 1}
        })))
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let out = c.chat("gen", req("q")).await.unwrap();
    assert_eq!(out.content, "ok");
    assert_eq!(out.finish_reason.as_deref(), Some("eos"));
    assert_eq!(
        (out.record.prompt_tokens, out.record.completion_tokens),
        (5, 1)
    );
}

#[tokio::test]
async fn no_call_is_lost_under_concurrent_faults() {
    let s = server().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(8)
        .with_priority(1)
        .mount(&s)
        .await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "0.2"))
        .up_to_n_times(4)
        .with_priority(2)
        .mount(&s)
        .await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ok_chat("fine"))
        .with_priority(3)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&base(&s), dir.path());
    model_mut(&mut cfg).max_attempts = 10;
    model_mut(&mut cfg).max_in_flight = 5;
    let c = client(cfg);
    let mut set = tokio::task::JoinSet::new();
    for i in 0..20 {
        let c = c.clone();
        set.spawn(async move { c.chat("gen", req(&format!("question {i}"))).await });
    }
    let mut ok = 0;
    while let Some(r) = set.join_next().await {
        r.unwrap().unwrap();
        ok += 1;
    }
    assert_eq!(ok, 20);
    let records = c.records();
    assert_eq!(records.len(), 20);
    assert!(records.iter().all(|r| r.error.is_none()));
    let attempts: u32 = records.iter().map(|r| r.attempts).sum();
    assert_eq!(attempts, 32); // 20 successes + 8 × 503 + 4 × 429
    assert_eq!(received(&s).await, 32);
}

#[tokio::test]
async fn embeddings_in_input_order_and_estimated_without_usage() {
    let s = server().await;
    Mock::given(path("/v1/embeddings"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "data": [
                {"index": 1, "embedding": [0.0, 1.0]},
                {"index": 0, "embedding": [1.0, 0.0]}
            ],
            "model": "emb"
        })))
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let inputs = vec![
        "first text".to_string(),
        "second, longer text here".to_string(),
    ];
    let out = c
        .embed(
            "embed",
            EmbedRequest {
                model: "emb".into(),
                inputs: inputs.clone(),
            },
        )
        .await
        .unwrap();
    assert_eq!(out.embeddings, vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
    let r = &out.record;
    assert!(r.tokens_estimated);
    assert_eq!(r.prompt_tokens, estimate_embed_tokens(&inputs));
    assert_eq!(r.completion_tokens, 0);
    assert_eq!(r.cost_usd, None); // "emb" has no price
}

#[tokio::test]
async fn embeddings_count_mismatch_is_an_error() {
    let s = server().await;
    Mock::given(path("/v1/embeddings"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "data": [{"index": 0, "embedding": [1.0]}],
            "usage": {"prompt_tokens": 4, "total_tokens": 4}
        })))
        .expect(1)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    let err = c
        .embed(
            "embed",
            EmbedRequest {
                model: "emb".into(),
                inputs: vec!["a".into(), "b".into()],
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, LlmError::BadResponse { detail, .. } if detail == "1 vectors for 2 inputs"),
        "{err:?}"
    );
}

#[tokio::test]
async fn auth_and_unknown_model_errors_stop_a_run_and_name_model_and_server() {
    for (status, message) in [
        (401, "Incorrect API key provided"),
        (403, "Forbidden"),
        (404, "The model `test-model` does not exist"),
    ] {
        let s = server().await;
        Mock::given(path("/v1/chat/completions"))
            .respond_with(
                ResponseTemplate::new(status).set_body_json(json!({"error": {"message": message}})),
            )
            .mount(&s)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let c = client(config(&base(&s), dir.path()));
        let err = c.chat("gen", req("q")).await.unwrap_err();
        assert!(err.stops_run() && !err.is_result(), "{err:?}");
        let text = err.to_string();
        assert!(text.contains(&base(&s)) && text.contains(MODEL), "{text}");
        assert_eq!(received(&s).await, 1, "not retried");
    }
}

#[tokio::test]
async fn usage_with_floats_null_or_empty_keeps_the_answer() {
    let s = server().await;
    let body = |usage: serde_json::Value| {
        let mut b = chat_body("Forty-two.", None);
        b["usage"] = usage;
        ResponseTemplate::new(200).set_body_json(b)
    };
    for (i, (usage, tokens)) in [
        (
            json!({"prompt_tokens": 57.0, "completion_tokens": 3.0, "total_tokens": 60.0}),
            Some((57, 3)),
        ),
        (
            json!({"prompt_tokens": null, "completion_tokens": null}),
            None,
        ),
        (json!({}), None),
        (serde_json::Value::Null, None),
    ]
    .into_iter()
    .enumerate()
    {
        let q = format!("q{i}");
        Mock::given(path("/v1/chat/completions"))
            .and(wiremock::matchers::body_string_contains(q.as_str()))
            .respond_with(body(usage))
            .mount(&s)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let c = client(config(&base(&s), dir.path()));
        let out = c.chat("gen", req(&q)).await.unwrap();
        assert_eq!(out.content, "Forty-two.");
        let r = &out.record;
        match tokens {
            Some((p, c)) => assert_eq!(
                (r.prompt_tokens, r.completion_tokens, r.tokens_estimated),
                (p, c, false)
            ),
            None => assert!(r.tokens_estimated, "{r:?}"),
        }
        assert_eq!(r.attempts, 1, "not taken for a malformed reply");
    }
    assert_eq!(received(&s).await, 4);
}

#[tokio::test]
async fn empty_filtered_or_truncated_replies_are_errors_never_cached() {
    let s = server().await;
    let reply = |content: serde_json::Value, finish: &str| {
        let mut b = chat_body("", Some((20, 0)));
        b["choices"][0]["message"]["content"] = content;
        b["choices"][0]["finish_reason"] = json!(finish);
        ResponseTemplate::new(200).set_body_json(b)
    };
    let cases = [
        ("empty", reply(json!(""), "stop"), "empty content"),
        (
            "null",
            reply(serde_json::Value::Null, "stop"),
            "empty content",
        ),
        (
            "filtered",
            reply(json!("I can"), "content_filter"),
            "finish_reason content_filter",
        ),
        (
            "cut",
            reply(json!("The answer is"), "length"),
            "finish_reason length",
        ),
    ];
    for (q, template, _) in &cases {
        Mock::given(path("/v1/chat/completions"))
            .and(wiremock::matchers::body_string_contains(*q))
            .respond_with(template.clone())
            .mount(&s)
            .await;
    }
    let dir = tempfile::tempdir().unwrap();
    let c = client(config(&base(&s), dir.path()));
    for (q, _, reason) in &cases {
        for _ in 0..2 {
            let mut r = req(q);
            r.reject_truncated = true;
            let err = c.chat("gen", r).await.unwrap_err();
            assert!(
                matches!(&err, LlmError::NoContent { reason: got } if got.starts_with(reason)),
                "{q}: {err:?}"
            );
            assert!(err.is_result());
        }
    }
    // each asked twice and sent twice: nothing was cached
    assert_eq!(received(&s).await, 8);
    let records = c.records();
    assert_eq!(records.len(), 8);
    assert!(
        records
            .iter()
            .all(|r| r.error.is_some() && r.prompt_tokens == 20 && !r.cache_hit)
    );
    // without reject_truncated a reply cut at the cap is a reply
    let out = c.chat("gen", req("cut")).await.unwrap();
    assert_eq!(
        (out.content.as_str(), out.finish_reason.as_deref()),
        ("The answer is", Some("length"))
    );
}
