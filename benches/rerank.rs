//! The reranked handbook sweep against a scripted server with a fixed latency.
//!
//! `cargo bench --bench rerank [-- --latency-ms 50 --runs 3]`
//!
//! A mock OpenAI-compatible server answers /v1/embeddings (keyword vectors) and /v1/rerank
//! (scores: the query's words found in the document) after a fixed delay. The handbook is swept
//! with dense retrieval, recursive chunking at 128, 256 and 512 tokens, k = 5 and `--rerank
//! none,mock-rerank` (depth 50), its embeddings cached beforehand, its rerank requests never:
//! - one request in flight, 50 documents per request (one request per question);
//! - 8 in flight, 50 documents per request;
//! - 8 in flight, 10 documents per request (five requests per question);
//! - the same sweep again, every request answered by the response cache.
//!
//! Each row gives the median over `--runs` of the sweep's wall time and of the rerank step's
//! (rerank.json), the requests sent, and the step's time per request. Figures are printed as a
//! Markdown table (results/benchmarks/rerank.md holds the committed one).

#[path = "../tests/embed_support/mod.rs"]
mod embed_support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use embed_support::{embeddings_reply, mock_config, rerank_reply};
use serde_json::Value;
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const KEYWORDS: &[&[&str]] = &[
    &["sync", "conflict"],
    &["billing", "refund", "invoice"],
    &["backup", "retention"],
    &["permission", "share", "sharing"],
];

struct Scripted {
    delay: Duration,
}

impl Respond for Scripted {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let reply = if req.url.path().ends_with("/embeddings") {
            embeddings_reply(&body, KEYWORDS).2
        } else {
            rerank_reply(&body).2
        };
        reply.set_delay(self.delay)
    }
}

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A config for the handbook at `base`, with `in_flight` rerank requests at once,
/// `per_request` documents per request and the response cache at `cache`.
fn config(dir: &Path, base: &str, in_flight: u32, per_request: usize, cache: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = mock_config(base)
        .replace(
            "corpus = \"corpus\"",
            &format!("corpus = {:?}", root.join("datasets/handbook")),
        )
        .replace(
            "golden = \"golden.jsonl\"",
            &format!("golden = {:?}", root.join("datasets/handbook-golden.jsonl")),
        )
        .replace(
            "cache_path = \"cache.sqlite\"",
            &format!("cache_path = {cache:?}"),
        );
    let path = dir.join(format!("{in_flight}-{per_request}-{cache}.toml"));
    std::fs::write(
        &path,
        format!(
            "{text}\n[llm.models.mock-rerank]\nrpm = 0\nmax_in_flight = {in_flight}\n\n[rerank]\ndocuments_per_request = {per_request}\n"
        ),
    )
    .unwrap();
    path
}

fn sweep(cfg: &Path, out: &Path, rerank: &str) -> f64 {
    let started = Instant::now();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_chunksweep"))
        .args(["sweep", "--quiet", "--config"])
        .arg(cfg)
        .arg("--out")
        .arg(out)
        .args(["--retrievers", "dense", "--strategies", "recursive"])
        .args(["--sizes", "128,256,512", "--k", "5", "--rerank", rerank])
        .env_remove("OPENAI_BASE_URL")
        .status()
        .unwrap();
    assert!(status.success());
    started.elapsed().as_secs_f64()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let latency = arg("--latency-ms", 50);
    let runs = arg("--runs", 3) as usize;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(async {
        let server = MockServer::start().await;
        for p in ["/v1/embeddings", "/v1/rerank"] {
            Mock::given(path(p))
                .respond_with(Scripted {
                    delay: Duration::from_millis(latency),
                })
                .mount(&server)
                .await;
        }
        server
    });
    let dir = tempfile::tempdir().unwrap();
    // the embeddings, once, into the shared vector cache
    let warm = config(dir.path(), &server.uri(), 8, 50, "warm.sqlite");
    sweep(&warm, &dir.path().join("warm"), "none");
    println!(
        "| setting | sweep wall s (median of {runs}) | rerank step s | rerank requests sent | ms per request |"
    );
    println!("|---|---:|---:|---:|---:|");
    let cases = [
        ("1 in flight, 50 documents per request", 1, 50, false),
        ("8 in flight, 50 documents per request", 8, 50, false),
        ("8 in flight, 10 documents per request", 8, 10, false),
        ("8 in flight, 50 per request, all cached", 8, 50, true),
    ];
    for (i, (name, in_flight, per_request, cached)) in cases.into_iter().enumerate() {
        let (mut walls, mut steps, mut sent) = (Vec::new(), Vec::new(), 0);
        for r in 0..runs {
            // a fresh response cache per run, except for the cached case (kept from run 0's
            // warm-up below)
            let cache = match cached {
                true => format!("cached-{i}.sqlite"),
                false => format!("fresh-{i}-{r}.sqlite"),
            };
            let cfg = config(dir.path(), &server.uri(), in_flight, per_request, &cache);
            if cached && r == 0 {
                sweep(
                    &cfg,
                    &dir.path().join(format!("fill-{i}")),
                    "none,mock-rerank",
                );
            }
            let out = dir.path().join(format!("out-{i}-{r}"));
            walls.push(sweep(&cfg, &out, "none,mock-rerank"));
            let summary: Value =
                serde_json::from_str(&std::fs::read_to_string(out.join("rerank.json")).unwrap())
                    .unwrap();
            steps.push(summary["wall_ms"].as_f64().unwrap() / 1e3);
            sent = summary["sent"].as_u64().unwrap();
        }
        let step = median(steps);
        let per = match sent {
            0 => "—".to_string(),
            n => format!("{:.1}", step * 1e3 / n as f64),
        };
        println!(
            "| {name} | {:.2} | {step:.2} | {sent} | {per} |",
            median(walls)
        );
    }
    println!("\nscripted latency {latency} ms per request (embeddings and rerank), {runs} runs");
}
