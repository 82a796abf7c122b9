//! Reranking swept as a factor (`--rerank none,MODEL`) against a mock server whose /v1/rerank
//! scores are a known function of the query and the text ([`overlap_score`]), so every
//! reranked order is known by hand: the recall of each configuration, the requests sent in
//! batches of `documents_per_request`, a rerun answered by the cache, `run --dry-run`'s count,
//! and each bad reply as a clear error with nothing half-scored and finished work kept.

mod csv_support;
mod embed_support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use csv_support::read_csv;
use embed_support::{embeddings_reply, mock_config, rerank_reply};
use serde_json::{Value, json};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// One keyword no text holds: every vector is the same, every cosine ties, so dense ranks the
/// chunks in chunk order.
const KEYWORDS: &[&[&str]] = &[&["zzzz"]];

/// A bad reply the mock gives to the question about invoices.
#[derive(Clone, Copy, Debug)]
enum Fault {
    OutOfRange,
    Repeated,
    Fewer,
    NotANumber,
}

#[derive(Clone, Default)]
struct Mock3 {
    /// Rerank requests received: (query, documents).
    reranks: Arc<Mutex<Vec<(String, usize)>>>,
    fault: Arc<Mutex<Option<Fault>>>,
}

impl Respond for Mock3 {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        if req.url.path().ends_with("/embeddings") {
            return embeddings_reply(&body, KEYWORDS).2;
        }
        let (query, n, reply) = rerank_reply(&body);
        self.reranks.lock().unwrap().push((query.clone(), n));
        let fault = *self.fault.lock().unwrap();
        // the invoice question's request of 2 documents; its request of 1 is answered
        match fault.filter(|_| query.contains("invoice") && n == 2) {
            None => reply,
            Some(f) => {
                let results = match f {
                    Fault::OutOfRange => json!([{"index": n, "relevance_score": 1.0}]),
                    Fault::Repeated => json!([
                        {"index": 0, "relevance_score": 1.0},
                        {"index": 0, "relevance_score": 0.5}
                    ]),
                    Fault::Fewer => json!([{"index": 0, "relevance_score": 1.0}]),
                    Fault::NotANumber => json!([
                        {"index": 0, "relevance_score": "high"},
                        {"index": 1, "relevance_score": 0.5}
                    ]),
                };
                ResponseTemplate::new(200).set_body_json(json!({ "results": results }))
            }
        }
    }
}

const DOC: &str = "Apples grow on trees in the old orchard. Apples are picked in autumn.\n\nThe invoice total must be paid within thirty days. A late payment costs a fee.\n\nRivers flood the valley every spring after snowmelt.\n";

fn fixture(dir: &Path, base: &str) -> PathBuf {
    std::fs::create_dir_all(dir.join("corpus")).unwrap();
    std::fs::write(dir.join("corpus/a.md"), DOC).unwrap();
    let golden = [
        json!({"id": "q1", "question": "When must the invoice be paid?", "evidence": ["paid within thirty days"]}),
        json!({"id": "q2", "question": "Where do apples grow?", "evidence": ["grow on trees in the old orchard"]}),
    ];
    let lines: Vec<String> = golden.iter().map(Value::to_string).collect();
    std::fs::write(dir.join("golden.jsonl"), lines.join("\n") + "\n").unwrap();
    let cfg = format!(
        "{}\n[llm.models.mock-rerank]\nrpm = 0\nmax_in_flight = 4\nusd_per_request = 0.001\n\n[rerank]\ndocuments_per_request = 2\n",
        mock_config(base)
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, cfg).unwrap();
    path
}

async fn start() -> (MockServer, Mock3) {
    let server = MockServer::start().await;
    let mock = Mock3::default();
    for p in ["/v1/embeddings", "/v1/rerank"] {
        Mock::given(path(p))
            .respond_with(mock.clone())
            .mount(&server)
            .await;
    }
    (server, mock)
}

/// Runs chunksweep `verb` over the fixture's grid (recursive at 24 tokens, no overlap, dense,
/// k = 1) with `rerank`, into `out`.
async fn chunksweep(
    cfg: &Path,
    verb: &str,
    out: &Path,
    rerank: &str,
    extra: &[&str],
) -> std::process::Output {
    let mut args: Vec<String> = vec![verb.into(), "--quiet".into(), "--config".into()];
    args.push(cfg.display().to_string());
    args.extend(["--out".into(), out.display().to_string()]);
    for a in [
        "--retrievers",
        "dense",
        "--strategies",
        "recursive",
        "--sizes",
        "24",
        "--overlap",
        "0",
        "--k",
        "1",
        "--rerank",
        rerank,
    ] {
        args.push(a.into());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_chunksweep"))
            .args(&args)
            .env_remove("OPENAI_BASE_URL")
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

const NONE: &str = "recursive-24-o0-none-dense-k1";
const RERANKED: &str = "recursive-24-o0-none-dense+rerank-k1";

fn recall_of(rows: &[std::collections::HashMap<String, String>], id: &str) -> String {
    rows.iter()
        .find(|r| r["config_id"] == id)
        .unwrap_or_else(|| panic!("no row {id}"))["span_recall"]
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reranking_reorders_the_first_stage_and_a_rerun_sends_nothing() {
    let (server, mock) = start().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri());

    // nothing cached: the dry run cannot rank the first stage without its embeddings
    let dry = chunksweep(
        &cfg,
        "run",
        &dir.path().join("dry"),
        "none,mock-rerank",
        &["--dry-run"],
    )
    .await;
    let stdout = String::from_utf8_lossy(&dry.stdout).to_string();
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    assert!(
        stdout.contains(&format!(
            "the rerank requests of {}",
            RERANKED.trim_end_matches("-k1")
        )),
        "{stdout}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 0);

    // the embeddings cached by a sweep without reranking, the dry run counts the rerank
    // requests: 3 chunks per question in batches of 2 = 2 requests × 2 questions
    let plain = chunksweep(&cfg, "sweep", &dir.path().join("plain"), "none", &[]).await;
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    let dry = chunksweep(
        &cfg,
        "run",
        &dir.path().join("dry2"),
        "none,mock-rerank",
        &["--dry-run"],
    )
    .await;
    let stdout = String::from_utf8_lossy(&dry.stdout).to_string();
    assert!(
        stdout.contains("4 rerank request(s) (4 of 4 not in the cache, 6 documents in all, about "),
        "{stdout}"
    );
    assert!(stdout.contains("$0.0040)"), "{stdout}");
    assert!(mock.reranks.lock().unwrap().is_empty());

    // the sweep: dense ties every chunk, so its top 1 is the first chunk (the apples) for both
    // questions: recall 0.5; reranked by word overlap, each question gets its own paragraph
    let out = dir.path().join("reranked");
    let swept = chunksweep(&cfg, "sweep", &out, "none,mock-rerank", &[]).await;
    assert!(
        swept.status.success(),
        "{}",
        String::from_utf8_lossy(&swept.stderr)
    );
    let rows = read_csv(&out.join("sweep.csv"));
    assert_eq!(recall_of(&rows, NONE), "0.5");
    assert_eq!(recall_of(&rows, RERANKED), "1.0");
    let reranked_row = rows.iter().find(|r| r["config_id"] == RERANKED).unwrap();
    assert_eq!(reranked_row["rerank"], "mock-rerank");
    assert_eq!(
        rows.iter().find(|r| r["config_id"] == NONE).unwrap()["rerank"],
        "none"
    );
    {
        let seen = mock.reranks.lock().unwrap();
        let mut sizes: Vec<usize> = seen.iter().map(|(_, n)| *n).collect();
        sizes.sort();
        assert_eq!(sizes, vec![1, 1, 2, 2], "documents per request");
    }
    let calls = read_csv(&out.join("rerank_calls.csv"));
    assert_eq!(calls.len(), 4);
    assert!(
        calls
            .iter()
            .all(|c| c["cache_hit"] == "false" && c["kind"] == "rerank")
    );
    assert!(calls.iter().all(|c| c["cost_usd"] == "0.001"), "{calls:?}");
    let q1 = read_csv(&out.join("sweep_questions.csv"));
    let first = |id: &str, q: &str| {
        q1.iter()
            .find(|r| r["config_id"] == id && r["question_id"] == q)
            .unwrap()["first_correct_rank"]
            .clone()
    };
    assert_eq!(first(NONE, "q1"), "2");
    assert_eq!(first(RERANKED, "q1"), "1");

    // a rerun is answered by the cache: no rerank request is sent
    let again = dir.path().join("again");
    let rerun = chunksweep(&cfg, "sweep", &again, "none,mock-rerank", &[]).await;
    assert!(
        rerun.status.success(),
        "{}",
        String::from_utf8_lossy(&rerun.stderr)
    );
    assert_eq!(mock.reranks.lock().unwrap().len(), 4);
    let calls = read_csv(&again.join("rerank_calls.csv"));
    assert_eq!(calls.len(), 4);
    assert!(calls.iter().all(|c| c["cache_hit"] == "true"));
    assert_eq!(
        recall_of(&read_csv(&again.join("sweep.csv")), RERANKED),
        "1.0"
    );
    let report = std::fs::read_to_string(again.join("report.md")).unwrap();
    assert!(report.contains("## Reranking"), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_bad_rerank_reply_fails_the_sweep_with_nothing_half_scored() {
    let cases = [
        (
            Fault::OutOfRange,
            "result 1 names document 2, out of range for 2 documents",
        ),
        (Fault::Repeated, "document 0 is scored twice"),
        (
            Fault::Fewer,
            "1 results for 2 documents (1 documents not scored)",
        ),
        (
            Fault::NotANumber,
            "result 1 (document 0) has relevance_score \"high\", not a number",
        ),
    ];
    for (fault, message) in cases {
        let (server, mock) = start().await;
        let dir = tempfile::tempdir().unwrap();
        let cfg = fixture(dir.path(), &server.uri());
        *mock.fault.lock().unwrap() = Some(fault);
        let out = dir.path().join("bad");
        let bad = chunksweep(&cfg, "sweep", &out, "none,mock-rerank", &[]).await;
        let stderr = String::from_utf8_lossy(&bad.stderr).to_string();
        assert_eq!(bad.status.code(), Some(1), "{fault:?}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "reranking {}, question \"q1\": unusable response from /rerank: {message}",
                RERANKED.trim_end_matches("-k1")
            )),
            "{fault:?}: {stderr}"
        );
        assert!(!out.join("sweep.csv").exists(), "{fault:?}: nothing scored");
        // the other 3 requests were answered and cached; the rerun sends only the one that
        // failed
        let sent_before = mock.reranks.lock().unwrap().len();
        assert_eq!(sent_before, 4, "{fault:?}");
        *mock.fault.lock().unwrap() = None;
        let good = chunksweep(
            &cfg,
            "sweep",
            &dir.path().join("good"),
            "none,mock-rerank",
            &[],
        )
        .await;
        assert!(
            good.status.success(),
            "{}",
            String::from_utf8_lossy(&good.stderr)
        );
        let seen = mock.reranks.lock().unwrap();
        assert_eq!(seen.len(), 5, "{fault:?}");
        assert_eq!(seen[4], ("When must the invoice be paid?".to_string(), 2));
    }
}

/// The handbook (40 questions) swept with dense retrieval, reranking none and on: one request
/// per question and reranked configuration (its 50 candidates in one request), the report's
/// Reranking section with a row per reranked configuration, and a rerun that sends nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handbook_reranked() {
    let (server, mock) = start().await;
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cfg = dir.path().join("config.toml");
    let text = mock_config(&server.uri())
        .replace(
            "corpus = \"corpus\"",
            &format!("corpus = {:?}", root.join("datasets/handbook")),
        )
        .replace(
            "golden = \"golden.jsonl\"",
            &format!("golden = {:?}", root.join("datasets/handbook-golden.jsonl")),
        );
    std::fs::write(
        &cfg,
        text + "\n[llm.models.mock-rerank]\nrpm = 0\nmax_in_flight = 8\n",
    )
    .unwrap();
    let sweep = |out: PathBuf| {
        let cfg = cfg.clone();
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_chunksweep"))
                .args(["sweep", "--quiet", "--config"])
                .arg(&cfg)
                .arg("--out")
                .arg(&out)
                .args(["--retrievers", "dense", "--strategies", "recursive"])
                .args([
                    "--sizes",
                    "128,256",
                    "--k",
                    "3",
                    "--rerank",
                    "none,mock-rerank",
                ])
                .env_remove("OPENAI_BASE_URL")
                .output()
                .unwrap()
        })
    };
    let out = dir.path().join("handbook");
    let first = sweep(out.clone()).await.unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert_eq!(mock.reranks.lock().unwrap().len(), 2 * 40);
    let rows = read_csv(&out.join("rerank_comparison.csv"));
    let ids: Vec<&str> = rows.iter().map(|r| r["config_id"].as_str()).collect();
    assert_eq!(
        ids,
        [
            "recursive-128-o19-none-dense+rerank-k3",
            "recursive-256-o38-none-dense+rerank-k3"
        ]
    );
    let sweep_rows = read_csv(&out.join("sweep.csv"));
    for r in &rows {
        assert_eq!(r["n_questions"], "40");
        assert_eq!(r["baseline_id"], r["config_id"].replace("+rerank", ""));
        assert_eq!(r["span_recall"], recall_of(&sweep_rows, &r["config_id"]));
        assert_eq!(
            r["span_recall_none"],
            recall_of(&sweep_rows, &r["baseline_id"])
        );
    }
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Reranking"), "{report}");
    assert!(
        report
            .contains("The selection over the configurations without reranking picks `recursive-"),
        "{report}"
    );
    let again = sweep(dir.path().join("again")).await.unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(
        mock.reranks.lock().unwrap().len(),
        2 * 40,
        "a rerun sends no rerank call"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("again/rerank_comparison.csv")).unwrap(),
        std::fs::read_to_string(out.join("rerank_comparison.csv")).unwrap()
    );
}

/// `check` against a baseline whose pick is reranked sweeps that one configuration again,
/// reranked with the recorded settings (its requests answered by the cache).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_against_a_reranked_pick() {
    let (server, mock) = start().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri());
    let base = dir.path().join("base");
    let swept = chunksweep(&cfg, "sweep", &base, "none,mock-rerank", &[]).await;
    assert!(
        swept.status.success(),
        "{}",
        String::from_utf8_lossy(&swept.stderr)
    );
    assert_eq!(mock.reranks.lock().unwrap().len(), 4);
    let (cfg2, base2, now) = (cfg.clone(), base.clone(), dir.path().join("now"));
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_chunksweep"))
            .args(["check", "--quiet", "--baseline"])
            .arg(&base2)
            .arg("--config")
            .arg(&cfg2)
            .arg("--out")
            .arg(&now)
            .env_remove("OPENAI_BASE_URL")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let rows = read_csv(&dir.path().join("now/sweep.csv"));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["config_id"], RERANKED);
    assert_eq!(rows[0]["span_recall"], "1.0");
    // 2 questions × 2 requests, from the cache: nothing sent again
    assert_eq!(mock.reranks.lock().unwrap().len(), 4);
}

/// A reranked grid with no reranker server (no `[rerank] base_url`, the `[llm]` server the
/// default OpenAI one) is refused before anything runs, naming `[rerank] base_url`; a local
/// server that refuses the connection fails at once with what to check, and a base URL without
/// `/v1` that gets a 404 says which URL was called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_unreachable_or_unversioned_rerank_server_is_named() {
    let (server, mock) = start().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri());
    let text = std::fs::read_to_string(&cfg).unwrap();

    let no_server = text.replace(&format!("base_url = \"{}/v1\"\n", server.uri()), "");
    std::fs::write(&cfg, &no_server).unwrap();
    let out = chunksweep(
        &cfg,
        "sweep",
        &dir.path().join("a"),
        "none,mock-rerank",
        &[],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("rerank: no reranker server for mock-rerank: set [rerank] base_url (or --rerank-base-url)"),
        "{stderr}"
    );
    assert!(server.received_requests().await.unwrap().is_empty());

    // nothing listens on port 9 of this machine
    std::fs::write(
        &cfg,
        format!("{text}base_url = \"http://127.0.0.1:9/v1\"\n"),
    )
    .unwrap();
    let out = chunksweep(
        &cfg,
        "sweep",
        &dir.path().join("b"),
        "none,mock-rerank",
        &[],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "http://127.0.0.1:9/v1/rerank: gave up after 1 attempts; last error: connection failed"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("(a server on this machine that cannot be reached is not retried: is it running on that port?)"),
        "{stderr}"
    );
    assert!(!dir.path().join("b/sweep.csv").exists());

    // the mock serves /v1/rerank, not /rerank: a 404 naming the URL called
    std::fs::write(&cfg, format!("{text}base_url = \"{}\"\n", server.uri())).unwrap();
    let out = chunksweep(
        &cfg,
        "sweep",
        &dir.path().join("c"),
        "none,mock-rerank",
        &[],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let want = format!(
        "(the base URL {0} has no /v1: {0}/rerank was called; a v1 server's base URL ends in /v1, so try {0}/v1, or --rerank-api tei for text-embeddings-inference)",
        server.uri()
    );
    assert!(stderr.contains(&want), "{stderr}");
    assert!(mock.reranks.lock().unwrap().is_empty());
}

/// `--max-cost` caps the sweep's paid calls before they are sent: an unpriced model is refused;
/// on a fresh cache the embeddings plus the rerank requests' upper bound pass the cap and
/// nothing is sent; once the embeddings are cached the exact count is refused before any call; a cap that holds it
/// runs, its spend in rerank_calls.csv; a rerun the caches answer holds even a zero cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_cost_caps_the_sweeps_embeddings_and_rerank_requests() {
    let (server, mock) = start().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri());
    let sent = || async { server.received_requests().await.unwrap().len() };
    let sweep = |name: &str, cap: &str| {
        let (cfg, out, cap) = (cfg.clone(), dir.path().join(name), cap.to_string());
        async move {
            chunksweep(
                &cfg,
                "sweep",
                &out,
                "none,mock-rerank",
                &["--max-cost", &cap],
            )
            .await
        }
    };
    let refused = |o: &std::process::Output| {
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stderr).to_string()
    };

    // the embedding models have no price: refused, nothing sent
    let err = refused(&sweep("unpriced", "1").await);
    assert!(
        err.contains("--max-cost $1.0000 needs prices to hold: set input_usd_per_mtok for e5-passage, e5-query in [llm.models.<name>]"),
        "{err}"
    );
    assert_eq!(sent().await, 0);

    let priced = "\n[llm.models.e5-passage]\ninput_usd_per_mtok = 0.02\n\n[llm.models.e5-query]\ninput_usd_per_mtok = 0.02\n";
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, text + priced).unwrap();

    // nothing cached: the first stage needs embeddings, so the rerank requests cannot be
    // counted yet; they count at their upper bound (every configuration × question, none
    // cached), which with the embeddings passes the cap: refused before anything is sent
    let err = refused(&sweep("fresh", "0.001").await);
    assert!(
        err.contains("at most 4 rerank request(s): an upper bound, every reranked configuration × question taken as not cached"),
        "{err}"
    );
    assert!(
        err.contains("more than --max-cost $0.0010; nothing was sent"),
        "{err}"
    );
    assert_eq!(sent().await, 0);
    assert!(!dir.path().join("fresh/sweep.csv").exists());

    // the embeddings alone fit the cap: sent, and recorded
    let ok = chunksweep(
        &cfg,
        "sweep",
        &dir.path().join("embedded"),
        "none",
        &["--max-cost", "0.001"],
    )
    .await;
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(sent().await > 0, "the embeddings were sent");
    assert!(dir.path().join("embedded/embed_calls.csv").exists());
    assert!(mock.reranks.lock().unwrap().is_empty());

    // the embeddings cached, the whole estimate is counted and refused before any call
    let before = sent().await;
    let err = refused(&sweep("counted", "0.001").await);
    assert!(
        err.contains("the sweep is estimated at $0.0040 (4 rerank request(s)), and $0.0000 is already spent in this folder: more than --max-cost $0.0010; nothing was sent (raise --max-cost"),
        "{err}"
    );
    assert_eq!(sent().await, before);

    // a cap that holds it: the sweep runs, its spend recorded
    let ok = sweep("held", "0.0041").await;
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(mock.reranks.lock().unwrap().len(), 4);
    let calls = read_csv(&dir.path().join("held/rerank_calls.csv"));
    let spend: f64 = calls
        .iter()
        .map(|c| c["cost_usd"].parse::<f64>().unwrap())
        .sum();
    assert!((spend - 0.004).abs() < 1e-12, "{calls:?}");

    // `check --max-cost` without --judge caps the check's own sweep: another chunk size needs
    // new embeddings, refused before anything is sent
    let before = sent().await;
    let (bin, cfg2, base, ck) = (
        env!("CARGO_BIN_EXE_chunksweep"),
        cfg.clone(),
        dir.path().join("held"),
        dir.path().join("ck"),
    );
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(bin)
            .args(["check", "--quiet", "--config"])
            .arg(&cfg2)
            .arg("--baseline")
            .arg(&base)
            .arg("--out")
            .arg(&ck)
            .args(["--sizes", "32", "--max-cost", "0"])
            .env_remove("OPENAI_BASE_URL")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let err = refused(&out);
    assert!(
        err.contains("embedding request(s)")
            && err.contains("more than --max-cost $0.0000; nothing was sent"),
        "{err}"
    );
    assert_eq!(sent().await, before);
    assert!(!dir.path().join("ck/sweep.csv").exists());

    // the caches answer everything: nothing to spend, a zero cap holds, nothing is sent
    let before = sent().await;
    let ok = sweep("cached", "0").await;
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(sent().await, before);
}
