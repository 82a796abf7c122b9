//! The Batch API layer against a scripted server with the batch endpoints: submission by model,
//! the run folder's record, resuming a batch after a stopped wait, unanswered lines left
//! unfinished and asked again, refusals, expiry and cancelling.

mod batch_support;
mod llm_support;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use batch_support::{BatchServer, Fault};
use chunksweep::llm::RetryConfig;
use chunksweep::llm::batch::{
    BatchApi, BatchBook, BatchCall, BatchConfig, BatchProgress, BatchStatus, Batcher, Collected,
    LineOutcome, VirtualWaiter,
};
use serde_json::{Value, json};

/// The reply to a request: `echo <last message>`.
fn echo() -> batch_support::Answer {
    Arc::new(|body: &Value| {
        let msgs = body["messages"].as_array().unwrap();
        format!("echo {}", msgs.last().unwrap()["content"].as_str().unwrap())
    })
}

fn call(model: &str, q: usize) -> BatchCall {
    BatchCall {
        stage: format!("generate\u{1f}cfg\u{1f}q-{q:03}"),
        model: model.into(),
        key: format!("key-{model}-{q}"),
        body: json!({"model": model, "messages": [{"role": "user", "content": format!("q{q}")}]}),
    }
}

fn start() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_655_200) // 2025-12-02T06:00:00Z
}

/// A batcher on `srv` keeping `dir/batches.json`, polling every 30 s on a virtual clock that
/// stops the wait after `stop_after` sleeps.
fn batcher(srv: &BatchServer, dir: &Path, stop_after: Option<usize>) -> Batcher {
    let api = BatchApi::new(&srv.url(), None, RetryConfig::default()).unwrap();
    let book = BatchBook::open(&dir.join("batches.json")).unwrap();
    Batcher::new(
        api,
        BatchConfig {
            enabled: true,
            ..Default::default()
        },
        book,
        Arc::new(VirtualWaiter::new(start(), stop_after)),
    )
}

/// Runs `calls` through `b`, keeping every progress report.
async fn run(b: &Batcher, calls: Vec<BatchCall>) -> (Collected, Vec<BatchProgress>) {
    let seen = Mutex::new(Vec::new());
    let got = b
        .run(calls, &|p: &BatchProgress| {
            seen.lock().unwrap().push(p.clone())
        })
        .await
        .unwrap();
    (got, seen.into_inner().unwrap())
}

/// The reply text of an answered line.
fn answered(o: &LineOutcome) -> Option<String> {
    match o {
        LineOutcome::Answered { body } => {
            let v: Value = serde_json::from_str(body).unwrap();
            v["choices"][0]["message"]["content"]
                .as_str()
                .map(str::to_string)
        }
        _ => None,
    }
}

#[tokio::test]
async fn one_batch_per_model_recorded_and_read_back_without_a_direct_call() {
    let srv = BatchServer::start(echo()).await;
    srv.script(vec![
        Fault {
            polls_in_progress: 2,
            ..Default::default()
        },
        Fault::default(),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let b = batcher(&srv, dir.path(), None);
    let mut calls: Vec<BatchCall> = (0..3).map(|q| call("gen", q)).collect();
    calls.push(call("judge", 0));
    calls.push(call("gen", 1)); // the same request twice: one line
    let (got, p) = run(&b, calls).await;

    assert_eq!(got.submitted, ["batch_0", "batch_1"]);
    assert!(!got.stopped);
    assert_eq!(got.outcomes.len(), 4);
    assert_eq!(
        answered(&got.outcomes["key-gen-2"].0).as_deref(),
        Some("echo q2")
    );
    assert_eq!(
        answered(&got.outcomes["key-judge-0"].0).as_deref(),
        Some("echo q0")
    );
    assert_eq!(got.outcomes["key-gen-0"].1.batch_id, "batch_0");
    assert_eq!(got.outcomes["key-judge-0"].1.batch_id, "batch_1");
    assert_eq!(
        got.outcomes["key-gen-0"].1.submitted_at.to_string(),
        "2025-12-02T06:00:00Z"
    );
    // two polls in progress, 30 s apart: the batch was seen ended a minute after submission
    assert_eq!(
        got.outcomes["key-gen-0"]
            .1
            .completed_at
            .map(|t| t.to_string()),
        Some("2025-12-02T06:01:00Z".to_string())
    );
    assert_eq!(
        srv.batch_lines(),
        [
            vec![
                "generate|cfg|q-000#0",
                "generate|cfg|q-001#1",
                "generate|cfg|q-002#2"
            ],
            vec!["generate|cfg|q-000#0"],
        ]
    );
    srv.assert_only_batch_endpoints();
    // progress: the first batch polled three times (two in progress, then completed)
    let first: Vec<(&str, f64)> = p
        .iter()
        .filter(|p| p.batch_id == "batch_0")
        .map(|p| (p.status.as_str(), p.elapsed_s))
        .collect();
    assert_eq!(
        first,
        [
            ("in_progress", 0.0),
            ("in_progress", 30.0),
            ("completed", 60.0)
        ]
    );
    assert_eq!(p.last().unwrap().counts.total, 3);
    let judge: Vec<&BatchProgress> = p.iter().filter(|p| p.batch_id == "batch_1").collect();
    assert_eq!(judge.len(), 1); // ended at its first poll, never polled again
    assert_eq!(judge[0].counts.total, 1);

    // the record: both batches, with their calls, not yet collected until settled
    let book = BatchBook::open(&dir.path().join("batches.json")).unwrap();
    assert_eq!(book.entries.len(), 2);
    assert_eq!(book.entries[0].model, "gen");
    assert_eq!(book.entries[0].input_file_id, "file-in-0");
    assert_eq!(book.entries[0].calls.len(), 3);
    assert_eq!(book.entries[0].status, BatchStatus::Completed);
    assert!(!book.entries[0].phase.is_collected());
    b.settle().unwrap();
    let book = BatchBook::open(&dir.path().join("batches.json")).unwrap();
    assert!(book.entries.iter().all(|e| e.phase.is_collected()));
}

#[tokio::test]
async fn a_stopped_wait_leaves_the_batch_running_and_the_next_run_polls_the_same_batch() {
    let srv = BatchServer::start(echo()).await;
    srv.script(vec![Fault {
        polls_in_progress: 5,
        ..Default::default()
    }]);
    let dir = tempfile::tempdir().unwrap();
    let calls: Vec<BatchCall> = (0..4).map(|q| call("gen", q)).collect();

    // first run: Ctrl-C after two sleeps
    let b = batcher(&srv, dir.path(), Some(2));
    let (got, _) = run(&b, calls.clone()).await;
    assert!(got.stopped);
    assert_eq!(got.submitted, ["batch_0"]);
    let LineOutcome::Unfinished { reason } = &got.outcomes["key-gen-3"].0 else {
        panic!("{:?}", got.outcomes["key-gen-3"]);
    };
    assert!(reason.contains("batch_0 is still in_progress"), "{reason}");
    b.settle().unwrap(); // a batch that has not ended is never collected
    drop(b);
    let book = BatchBook::open(&dir.path().join("batches.json")).unwrap();
    assert_eq!(book.entries.len(), 1);
    assert!(!book.entries[0].phase.is_collected());
    assert_eq!(book.entries[0].status, BatchStatus::InProgress);

    // the rerun: polls batch_0 and submits nothing
    let before = srv.count("POST /files");
    let b = batcher(&srv, dir.path(), None);
    let (got, _) = run(&b, calls).await;
    assert!(got.submitted.is_empty());
    assert_eq!(srv.count("POST /files"), before);
    assert_eq!(srv.count("POST /batches"), 1);
    assert_eq!(got.outcomes.len(), 4);
    assert!(
        got.outcomes
            .values()
            .all(|(o, s)| { answered(o).is_some() && s.batch_id == "batch_0" })
    );
}

#[tokio::test]
async fn lines_missing_or_in_the_error_file_are_unfinished_and_only_they_are_asked_again() {
    let srv = BatchServer::start(echo()).await;
    srv.script(vec![
        Fault {
            missing: vec![1, 4],
            errors: vec![2],
            refused: vec![5],
            ..Default::default()
        },
        Fault::default(),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let calls: Vec<BatchCall> = (0..6).map(|q| call("gen", q)).collect();
    let b = batcher(&srv, dir.path(), None);
    let (got, _) = run(&b, calls.clone()).await;
    let unfinished = |k: &str| match &got.outcomes[k].0 {
        LineOutcome::Unfinished { reason } => reason.clone(),
        other => panic!("{k}: {other:?}"),
    };
    assert_eq!(
        unfinished("key-gen-1"),
        "no line for it in the output of batch batch_0"
    );
    assert_eq!(unfinished("key-gen-4"), unfinished("key-gen-1"));
    assert_eq!(
        unfinished("key-gen-2"),
        "error line in the batch: scripted line failure"
    );
    assert_eq!(
        got.outcomes["key-gen-5"].0,
        LineOutcome::Refused {
            status: 400,
            message: "scripted refusal".into()
        }
    );
    assert_eq!(
        answered(&got.outcomes["key-gen-0"].0).as_deref(),
        Some("echo q0")
    );
    assert_eq!(
        answered(&got.outcomes["key-gen-3"].0).as_deref(),
        Some("echo q3")
    );
    b.settle().unwrap();
    drop(b);

    // the next run asks the three unfinished calls again, in a new batch of exactly those
    let again: Vec<BatchCall> = [1, 2, 4].iter().map(|&q| call("gen", q)).collect();
    let b = batcher(&srv, dir.path(), None);
    let (got, _) = run(&b, again).await;
    assert_eq!(got.submitted, ["batch_1"]);
    assert_eq!(
        srv.batch_lines()[1],
        [
            "generate|cfg|q-001#0",
            "generate|cfg|q-002#1",
            "generate|cfg|q-004#2"
        ]
    );
    assert_eq!(
        answered(&got.outcomes["key-gen-4"].0).as_deref(),
        Some("echo q4")
    );
}

#[tokio::test]
async fn an_expired_batch_returns_what_it_answered_and_leaves_the_rest_unfinished() {
    let srv = BatchServer::start(echo()).await;
    srv.script(vec![Fault {
        expire_after: Some(2),
        ..Default::default()
    }]);
    let dir = tempfile::tempdir().unwrap();
    let b = batcher(&srv, dir.path(), None);
    let (got, _) = run(&b, (0..3).map(|q| call("gen", q)).collect()).await;
    assert_eq!(
        answered(&got.outcomes["key-gen-1"].0).as_deref(),
        Some("echo q1")
    );
    assert_eq!(
        got.outcomes["key-gen-2"].0,
        LineOutcome::Unfinished {
            reason: "batch batch_0 expired before answering it".into()
        }
    );
}

#[tokio::test]
async fn cancelling_asks_the_server_for_every_batch_still_running() {
    let srv = BatchServer::start(echo()).await;
    srv.script(vec![Fault {
        polls_in_progress: 100,
        ..Default::default()
    }]);
    let dir = tempfile::tempdir().unwrap();
    let b = batcher(&srv, dir.path(), Some(0));
    let (got, _) = run(&b, vec![call("gen", 0)]).await;
    assert!(got.stopped);
    assert_eq!(b.cancel_open().await.unwrap(), ["batch_0"]);
    assert_eq!(srv.count("POST /batches/batch_0/cancel"), 1);
    let book = BatchBook::open(&dir.path().join("batches.json")).unwrap();
    assert_eq!(book.entries[0].status, BatchStatus::Cancelling);
}

#[tokio::test]
async fn a_client_in_batch_mode_falls_back_from_a_refused_format_and_records_the_batch_price() {
    let srv = BatchServer::start(Arc::new(|_: &Value| {
        r#"{"verdict": "pass", "reason": "ok"}"#.to_string()
    }))
    .await;
    // the first batch refuses its line (as a server without json_schema would)
    srv.script(vec![
        Fault {
            refused: vec![0],
            ..Default::default()
        },
        Fault::default(),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = llm_support::config(&srv.url(), dir.path());
    cfg.batch.enabled = true;
    let client = llm_support::client(cfg);
    client.use_batches(batcher(&srv, dir.path(), None));
    let schema = json!({"type": "object",
        "properties": {"verdict": {"type": "string", "enum": ["pass", "fail"]},
                       "reason": {"type": "string"}},
        "required": ["verdict", "reason"]});
    let ask = || {
        client.chat_json(
            "faithfulness\u{1f}cfg\u{1f}q1",
            llm_support::req("q1"),
            &schema,
        )
    };
    let none = |_: &BatchProgress| {};

    assert_eq!(
        ask().await.unwrap_err(),
        chunksweep::llm::LlmError::Deferred
    );
    assert_eq!(client.flush_batches(&none).await.unwrap(), 1);
    // refused json_schema: falls back to json_object, which waits for the next batch
    assert_eq!(
        ask().await.unwrap_err(),
        chunksweep::llm::LlmError::Deferred
    );
    assert_eq!(client.flush_batches(&none).await.unwrap(), 1);
    let out = ask().await.unwrap();
    assert_eq!(out.value["verdict"], "pass");
    assert_eq!(out.format, chunksweep::llm::ResponseFormatKind::JsonObject);
    assert_eq!(client.flush_batches(&none).await.unwrap(), 0);
    srv.assert_only_batch_endpoints();
    let lines = srv.state.lock().unwrap().batches["batch_1"].lines.clone();
    assert_eq!(lines[0]["body"]["response_format"]["type"], "json_object");

    // one record, as for a direct call that fell back: the answer, at half the price, with
    // its batch and no latency of its own
    let recs = client.records();
    assert_eq!(recs.len(), 1, "{recs:?}");
    let r = &recs[0];
    assert_eq!(r.batch_id.as_deref(), Some("batch_1"));
    assert_eq!(
        r.batch_submitted_at.as_deref(),
        Some("2025-12-02T06:00:00.000Z")
    );
    assert_eq!(r.latency_ms_total, None);
    // 10 prompt and 2 completion tokens at $2.50 and $10 per million, halved
    assert!((r.cost_usd.unwrap() - 0.0000225).abs() < 1e-12, "{r:?}");

    // answered batch lines went into the cache: a direct client gets them with nothing sent
    let before = srv.log().len();
    let direct = llm_support::client(llm_support::config(&srv.url(), dir.path()));
    let hit = direct
        .chat_json(
            "faithfulness\u{1f}cfg\u{1f}q1",
            llm_support::req("q1"),
            &schema,
        )
        .await
        .unwrap();
    assert!(hit.record.cache_hit);
    assert_eq!(srv.log().len(), before);
}
