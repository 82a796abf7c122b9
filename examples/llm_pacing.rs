//! Pacing benchmark for the LLM client (issue 4): a mock OpenAI-compatible server answering after
//! 150 ms, a model limited to 600 requests/minute and 16 in flight, 300 requests fired at once.
//! Ideal: 300 / 600 per minute = 30 s. Prints efficiency = ideal / measured, and the largest number
//! of requests the mock saw in any 1 s window (at most 10 plus the burst is the goal). Then a second
//! run on the same cache file must be served entirely from disk and send nothing.
//!
//! Run with `cargo run --release --example llm_pacing`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chunksweep::llm::{ChatMessage, ChatRequest, ClientConfig, LlmClient, ModelConfig};
use serde_json::json;
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const N: usize = 300;
const RPM: u32 = 600;
const IN_FLIGHT: u32 = 16;
const LATENCY: Duration = Duration::from_millis(150);
const MODEL: &str = "bench-model";

#[derive(Clone)]
struct Recorder {
    start: Instant,
    arrivals: Arc<Mutex<Vec<Duration>>>,
}

impl Respond for Recorder {
    fn respond(&self, _r: &Request) -> ResponseTemplate {
        self.arrivals.lock().unwrap().push(self.start.elapsed());
        ResponseTemplate::new(200)
            .set_body_json(json!({
                "choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 1}
            }))
            .set_delay(LATENCY)
    }
}

fn max_in_window(sorted: &[Duration], w: Duration) -> usize {
    let (mut best, mut lo) = (0, 0);
    for hi in 0..sorted.len() {
        while sorted[hi] - sorted[lo] >= w {
            lo += 1;
        }
        best = best.max(hi - lo + 1);
    }
    best
}

async fn run(client: &LlmClient) -> Duration {
    let t = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..N {
        let c = client.clone();
        set.spawn(async move {
            let req = ChatRequest::new(MODEL, vec![ChatMessage::user(format!("question {i}"))]);
            c.chat("bench", req).await.expect("call succeeds")
        });
    }
    while let Some(r) = set.join_next().await {
        r.expect("task");
    }
    t.elapsed()
}

#[tokio::main]
async fn main() {
    let server = MockServer::start().await;
    let rec = Recorder {
        start: Instant::now(),
        arrivals: Arc::new(Mutex::new(Vec::new())),
    };
    Mock::given(path("/v1/chat/completions"))
        .respond_with(rec.clone())
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = ClientConfig {
        base_url: Some(format!("{}/v1", server.uri())),
        cache_path: dir.path().join("cache.sqlite"),
        ..Default::default()
    };
    cfg.models.insert(
        MODEL.into(),
        ModelConfig {
            rpm: RPM,
            max_in_flight: IN_FLIGHT,
            timeout_s: 10.0,
            input_usd_per_mtok: Some(0.15),
            output_usd_per_mtok: Some(0.6),
            ..Default::default()
        },
    );

    let ideal = N as f64 / f64::from(RPM) * 60.0;
    println!(
        "run 1: {N} requests, {RPM} rpm, {IN_FLIGHT} in flight, mock latency {} ms",
        LATENCY.as_millis()
    );
    let client = LlmClient::with_api_key(cfg.clone(), None).expect("client");
    let measured = run(&client).await.as_secs_f64();
    let mut arrivals = rec.arrivals.lock().unwrap().clone();
    arrivals.sort();
    let records = client.records();
    let gaps: Vec<f64> = arrivals
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64() * 1000.0)
        .collect();
    let min_gap = gaps.iter().cloned().fold(f64::INFINITY, f64::min);
    let mean_lat = records
        .iter()
        .filter_map(|r| r.latency_ms_total)
        .sum::<f64>()
        / records.len() as f64;
    println!("  requests seen by mock:      {}", arrivals.len());
    println!("  measured:                   {measured:.3} s (ideal {ideal:.1} s)");
    println!("  efficiency (ideal/measured): {:.4}", ideal / measured);
    println!(
        "  max requests in any 1 s window: {}",
        max_in_window(&arrivals, Duration::from_secs(1))
    );
    println!(
        "  max requests in any 100 ms window: {}",
        max_in_window(&arrivals, Duration::from_millis(100))
    );
    println!("  smallest gap between arrivals: {min_gap:.1} ms");
    println!("  mean per-request latency (total): {mean_lat:.1} ms");
    println!(
        "  attempts: {}, errors: {}, cost: ${:.6}",
        records.iter().map(|r| r.attempts).sum::<u32>(),
        records.iter().filter(|r| r.error.is_some()).count(),
        records.iter().filter_map(|r| r.cost_usd).sum::<f64>()
    );
    drop(client);

    println!("run 2: same {N} requests, same cache file, new client");
    let before = server.received_requests().await.unwrap().len();
    let client = LlmClient::with_api_key(cfg, None).expect("client");
    let measured2 = run(&client).await.as_secs_f64();
    let sent = server.received_requests().await.unwrap().len() - before;
    let records = client.records();
    println!("  requests sent: {sent}");
    println!(
        "  cache hits: {}/{}",
        records.iter().filter(|r| r.cache_hit).count(),
        records.len()
    );
    println!(
        "  cost: ${:.6}, wall: {measured2:.3} s",
        records.iter().filter_map(|r| r.cost_usd).sum::<f64>()
    );
    assert_eq!(sent, 0, "second run must send nothing");
}
