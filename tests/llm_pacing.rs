//! Pacing end to end: with many tasks waiting and a generous in-flight cap, requests take at
//! least as long as the rate allows. Lower bounds only; the spacing itself is checked on
//! governor's fake clock in llm::limiter, and the full 300-request measurement is the
//! `llm_pacing` example.

mod llm_support;

use std::time::{Duration, Instant};

use llm_support::*;
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn requests_are_spaced_by_the_rpm_limit() {
    let s = MockServer::builder().start().await;
    let rec = Recording::new(ok_chat("x").set_delay(Duration::from_millis(50)));
    Mock::given(path("/v1/chat/completions"))
        .respond_with(rec.clone())
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&format!("{}/v1", s.uri()), dir.path());
    cfg.cache = false;
    model_mut(&mut cfg).rpm = 1200; // one per 50 ms
    model_mut(&mut cfg).max_in_flight = 16;
    let c = client(cfg);
    // Load the tokenizer used for request estimates before timing: in a debug build its first
    // use takes about a second, which would hold the first request back and bunch the next ones.
    chunksweep::llm::cost::count_tokens("warm up");
    let t = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..20 {
        let c = c.clone();
        set.spawn(async move { c.chat("gen", req(&format!("q{i}"))).await.unwrap() });
    }
    while set.join_next().await.is_some() {}
    let elapsed = t.elapsed();
    let arrivals = rec.arrivals();
    assert_eq!(arrivals.len(), 20);
    // 20 requests at 20/s: the last cannot leave before 0.95 s. (No upper bound on time: a
    // loaded machine is slower, and speed belongs to the `llm_pacing` benchmark.)
    // (The spacing itself, one per slot and never two, is checked on governor's fake clock
    // in llm::limiter's tests: arrival times at a mock server depend on the machine's load.)
    assert!(elapsed >= Duration::from_millis(950), "{elapsed:?}");
}

#[tokio::test]
async fn in_flight_cap_is_respected() {
    let s = MockServer::builder().start().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ok_chat("x").set_delay(Duration::from_millis(200)))
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&format!("{}/v1", s.uri()), dir.path());
    cfg.cache = false;
    model_mut(&mut cfg).rpm = 0;
    model_mut(&mut cfg).max_in_flight = 2;
    let c = client(cfg);
    let t = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..6 {
        let c = c.clone();
        set.spawn(async move { c.chat("gen", req(&format!("q{i}"))).await.unwrap() });
    }
    while set.join_next().await.is_some() {}
    // 6 requests of 200 ms, 2 at a time: at least 3 rounds (a cap that let more through would
    // finish in 2 or 1).
    let e = t.elapsed();
    assert!(e >= Duration::from_millis(600), "{e:?}");
}

#[tokio::test]
async fn a_429_with_retry_after_pauses_the_whole_model() {
    let s = MockServer::builder().start().await;
    // the first request is throttled at once; the others are answered after 500 ms, so the
    // calls waiting behind them are admitted only after the 429 has been seen
    let throttled = Recording::new(ResponseTemplate::new(429).insert_header("retry-after", "2"));
    Mock::given(path("/v1/chat/completions"))
        .respond_with(throttled.clone())
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&s)
        .await;
    let ok = Recording {
        start: throttled.start,
        ..Recording::new(ok_chat("x").set_delay(Duration::from_millis(500)))
    };
    Mock::given(path("/v1/chat/completions"))
        .respond_with(ok.clone())
        .with_priority(2)
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&format!("{}/v1", s.uri()), dir.path());
    cfg.cache = false;
    model_mut(&mut cfg).rpm = 0;
    model_mut(&mut cfg).max_in_flight = 3;
    let c = client(cfg);
    chunksweep::llm::cost::count_tokens("warm up");
    let mut set = tokio::task::JoinSet::new();
    for i in 0..8 {
        let c = c.clone();
        set.spawn(async move { c.chat("gen", req(&format!("q{i}"))).await.unwrap() });
    }
    while set.join_next().await.is_some() {}
    let t429 = throttled.arrivals()[0];
    let answered = ok.arrivals();
    // 8 calls, one of them throttled once: 9 requests
    assert_eq!(answered.len() + 1, 9);
    // the first wave (3 in flight) left together with the throttled one; every later request
    // waited out the 2 s the server asked for (a lower bound only: a loaded machine is slower)
    let first_wave: Vec<_> = answered
        .iter()
        .filter(|&&a| a < t429 + Duration::from_millis(250))
        .collect();
    assert_eq!(first_wave.len(), 2, "{answered:?}");
    for &a in answered
        .iter()
        .filter(|&&a| a >= t429 + Duration::from_millis(250))
    {
        assert!(
            a >= t429 + Duration::from_secs(2),
            "request at {a:?}, 429 at {t429:?}"
        );
    }
}
