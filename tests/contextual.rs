//! Contextual retrieval as published: a chunk is embedded with its prefix, as BM25 indexes it,
//! against a mock embeddings server that records every input and chooses vectors by keyword, so
//! the inputs, the rankings and the failure-rate reduction are known by hand.

mod csv_support;
mod embed_support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use csv_support::read_csv;
use embed_support::{embeddings_reply, mock_config};
use serde_json::{Value, json};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Keyword groups of the mock vectors: e0 invoices, e1 refunds, e2 shipping, e3 otherwise.
const KEYWORDS: &[&[&str]] = &[&["invoice"], &["refund"], &["shipping"]];

/// Answers /v1/embeddings with [`embed_support::keyword_vector`] of each input and keeps (model, input) of every
/// request.
#[derive(Clone, Default)]
struct Recorder {
    inputs: Arc<Mutex<Vec<(String, String)>>>,
    requests: Arc<Mutex<usize>>,
}

impl Respond for Recorder {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let (model, inputs, reply) = embeddings_reply(&body, KEYWORDS);
        *self.requests.lock().unwrap() += 1;
        self.inputs
            .lock()
            .unwrap()
            .extend(inputs.into_iter().map(|s| (model.clone(), s)));
        reply
    }
}

impl Recorder {
    /// Document inputs received so far, sorted.
    fn documents(&self) -> Vec<String> {
        let mut d: Vec<String> = self
            .inputs
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _)| m == "e5-passage")
            .map(|(_, s)| s.clone())
            .collect();
        d.sort();
        d
    }

    fn requests(&self) -> usize {
        *self.requests.lock().unwrap()
    }
}

async fn server() -> (MockServer, Recorder) {
    let server = MockServer::builder().start().await;
    let recorder = Recorder::default();
    Mock::given(path("/v1/embeddings"))
        .respond_with(recorder.clone())
        .mount(&server)
        .await;
    (server, recorder)
}

/// Writes `docs` (name, text) and `golden` under `dir` with a config file for `base`; returns
/// the config's path.
fn fixture(dir: &Path, base: &str, docs: &[(&str, &str)], golden: &[Value]) -> PathBuf {
    std::fs::create_dir_all(dir.join("corpus")).unwrap();
    for (name, text) in docs {
        std::fs::write(dir.join("corpus").join(name), text).unwrap();
    }
    let lines: Vec<String> = golden.iter().map(Value::to_string).collect();
    std::fs::write(dir.join("golden.jsonl"), lines.join("\n") + "\n").unwrap();
    let cfg = mock_config(base);
    let path = dir.join("config.toml");
    std::fs::write(&path, cfg).unwrap();
    path
}

/// Runs `chunksweep sweep --config cfg --out out <args>` and asserts it succeeded.
async fn sweep(cfg: &Path, out: &Path, args: &[&str]) {
    let (cfg, out) = (cfg.to_path_buf(), out.to_path_buf());
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_chunksweep"))
            .args(["sweep", "--quiet", "--config"])
            .arg(&cfg)
            .arg("--out")
            .arg(&out)
            .args(&args)
            .env_remove("OPENAI_BASE_URL")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

const GUIDE: &str = "# Guide\n\n## Refunds\n\nMoney returns within fourteen days.\n";

/// The chunk of [`GUIDE`] at size 64 with the markdown strategy: the document is one section
/// per heading, and the `Refunds` section is one chunk.
const SECTION: &str = "## Refunds\n\nMoney returns within fourteen days.";

const GRID: [&str; 10] = [
    "--retrievers",
    "dense",
    "--strategies",
    "markdown",
    "--sizes",
    "64",
    "--overlap",
    "0",
    "--prefixes",
    "none,title,heading_path",
];

fn guide_golden() -> Vec<Value> {
    vec![
        json!({"id": "q1", "question": "How long do refunds take?", "evidence": ["Money returns within fourteen days."]}),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunks_are_embedded_with_their_prefix_once_and_a_rerun_sends_nothing() {
    let (server, seen) = server().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(
        dir.path(),
        &server.uri(),
        &[("guide.md", GUIDE)],
        &guide_golden(),
    );
    sweep(&cfg, &dir.path().join("run"), &GRID).await;
    let docs = seen.documents();
    // The Refunds chunk as BM25 indexes it: bare (none), after the title, after the heading
    // path; each variant once.
    for text in [
        SECTION.to_string(),
        format!("Guide\n\n{SECTION}"),
        format!("Guide > Refunds\n\n{SECTION}"),
    ] {
        assert_eq!(
            docs.iter().filter(|d| **d == text).count(),
            1,
            "{text:?} in {docs:?}"
        );
    }
    let rows = read_csv(&dir.path().join("run/sweep.csv"));
    assert!(
        rows.iter().all(|r| r["embed_input"] == "prefixed"),
        "{rows:?}"
    );
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("run/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["config"]["embed"]["embed_prefix"], json!(true));

    // The same grid again, into a new folder: every vector comes from the cache.
    let before = seen.requests();
    sweep(&cfg, &dir.path().join("rerun"), &GRID).await;
    assert_eq!(seen.requests(), before);
    let stats: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("rerun/embeddings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(stats["sent"], json!(0));
    assert_eq!(stats["cached"], stats["texts"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bare_mode_embeds_the_chunk_text_alone() {
    let (server, seen) = server().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(
        dir.path(),
        &server.uri(),
        &[("guide.md", GUIDE)],
        &guide_golden(),
    );
    let mut args = GRID.to_vec();
    args.push("--no-embed-prefix");
    sweep(&cfg, &dir.path().join("run"), &args).await;
    let docs = seen.documents();
    assert!(docs.contains(&SECTION.to_string()), "{docs:?}");
    assert!(
        docs.iter()
            .all(|d| !d.starts_with("Guide\n\n") && !d.starts_with("Guide > ")),
        "no prefixed input: {docs:?}"
    );
    let rows = read_csv(&dir.path().join("run/sweep.csv"));
    assert!(rows.iter().all(|r| r["embed_input"] == "bare"), "{rows:?}");
    let table = read_csv(&dir.path().join("run/prefix_comparison.csv"));
    assert!(table.iter().all(|r| r["embed_input"] == "bare"));
    let report = std::fs::read_to_string(dir.path().join("run/report.md")).unwrap();
    assert!(
        report.contains("Dense and hybrid embed the bare chunk text"),
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_failure_rate_reduction_is_the_one_computed_by_hand() {
    // Three one-chunk documents without a heading: the title prefix is the file name, the only
    // place the keyword is. Bare, every chunk has the vector e3; a question with a keyword
    // scores 0 against each, and ties go to document order: invoices.txt first.
    let (server, _seen) = server().await;
    let dir = tempfile::tempdir().unwrap();
    let golden = vec![
        // bare: tie → invoices.txt, hit; title: invoices, hit
        json!({"id": "q1", "question": "When are invoices due?", "evidence": ["Totals are due within thirty days."]}),
        // bare: tie → invoices.txt, miss; title: refunds, hit
        json!({"id": "q2", "question": "How long do refunds take?", "evidence": ["Money returns within fourteen days."]}),
        // bare: miss; title: shipping, hit
        json!({"id": "q3", "question": "When does shipping leave?", "evidence": ["Parcels leave the depot within two days."]}),
        // no keyword (e3): bare, cosine 1 with all, tie → invoices.txt, miss; title: cosine 0
        // with all, tie → invoices.txt, miss
        json!({"id": "q4", "question": "Which parcels leave the depot?", "evidence": ["Parcels leave the depot within two days."]}),
    ];
    let cfg = fixture(
        dir.path(),
        &server.uri(),
        &[
            ("invoices.txt", "Totals are due within thirty days.\n"),
            ("refunds.txt", "Money returns within fourteen days.\n"),
            ("shipping.txt", "Parcels leave the depot within two days.\n"),
        ],
        &golden,
    );
    let out = dir.path().join("run");
    sweep(
        &cfg,
        &out,
        &[
            "--retrievers",
            "dense",
            "--strategies",
            "fixed",
            "--sizes",
            "64",
            "--overlap",
            "0",
            "--k",
            "1",
            "--prefixes",
            "none,title",
        ],
    )
    .await;
    let table = read_csv(&out.join("prefix_comparison.csv"));
    assert_eq!(table.len(), 1);
    let row = &table[0];
    assert_eq!(row["retriever"], "dense");
    assert_eq!(row["prefix"], "title");
    // failures 3 of 4 bare, 1 of 4 with the title: (0.75 − 0.25) / 0.75 = 2/3
    let f = |c: &str| row[c].parse::<f64>().unwrap();
    assert_eq!(f("span_failure_none"), 0.75);
    assert_eq!(f("span_failure"), 0.25);
    assert!(
        (f("span_failure_reduction") - 2.0 / 3.0).abs() < 1e-12,
        "{row:?}"
    );
    assert!(
        (f("hit_failure_reduction") - 2.0 / 3.0).abs() < 1e-12,
        "{row:?}"
    );
    // q2 and q3 hit only with the prefix: b = 0, c = 2, exact McNemar p = 2 · 0.5² = 0.5
    assert_eq!(
        (row["mcnemar_b"].as_str(), row["mcnemar_c"].as_str()),
        ("0", "2")
    );
    assert!((f("mcnemar_p") - 0.5).abs() < 1e-12);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report.contains("| dense | fixed | 64 | title |"),
        "{report}"
    );
    assert!(report.contains("| 0.750 → 0.250 | +67% ["), "{report}");
}

/// Answers chat completions: an answer for the generator, a pass for every verdict.
struct Chat;

impl Respond for Chat {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let text = body["messages"].to_string();
        let reply = if text.contains("Task: answer the question from the documents.") {
            "Fourteen days."
        } else {
            r#"{"verdict": "pass", "reason": "supported"}"#
        };
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "x", "object": "chat.completion", "created": 1, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        }))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_prefix_judges_a_dense_pick_with_a_prefix_outside_the_grid() {
    let (server, seen) = server().await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(Chat)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(
        dir.path(),
        &server.uri(),
        &[("guide.md", GUIDE)],
        &guide_golden(),
    );
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let out = dir.path().join("run");
    let output = tokio::task::spawn_blocking({
        let (cfg, out) = (cfg.clone(), out.clone());
        move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_chunksweep"))
                .args(["run", "--quiet", "--config"])
                .arg(&cfg)
                .arg("--out")
                .arg(&out)
                .arg("--prompts")
                .arg(&prompts)
                .args([
                    "--retrievers",
                    "dense",
                    "--strategies",
                    "markdown",
                    "--sizes",
                    "64",
                    "--overlap",
                    "0",
                    "--generator-model",
                    "gen",
                    "--judge-model",
                    "judge",
                    "--compare-prefix",
                    "heading_path",
                ])
                .env_remove("OPENAI_BASE_URL")
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The grid has no prefix; the prepare step embedded the heading_path variant the judge
    // compares, and the judge judged the dense pick with and without it.
    assert!(
        seen.documents()
            .contains(&format!("Guide > Refunds\n\n{SECTION}")),
        "{:?}",
        seen.documents()
    );
    let judge = read_csv(&out.join("judge.csv"));
    let ids: Vec<&str> = judge.iter().map(|r| r["config_id"].as_str()).collect();
    assert_eq!(
        ids,
        [
            "markdown-64-o0-none-dense-k5",
            "markdown-64-o0-heading_path-dense-k5"
        ]
    );
    assert!(judge.iter().all(|r| r["n_questions"] == "1"), "{judge:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunk_too_long_once_prefixed_is_an_error_naming_its_configuration() {
    let (server, seen) = server().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(
        dir.path(),
        &server.uri(),
        &[("guide.md", GUIDE)],
        &guide_golden(),
    );
    // the section alone is 11 cl100k tokens; with "Guide > Refunds\n\n" before it, more
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, format!("{text}max_input_tokens = 11\n")).unwrap();
    let out = dir.path().join("run");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_chunksweep"))
        .args(["sweep", "--quiet", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&out)
        .args(GRID)
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("configuration markdown-64-o0-title-dense: document text of"),
        "{stderr}"
    );
    assert!(
        stderr.contains("exceeds embed.max_input_tokens = 11"),
        "{stderr}"
    );
    assert_eq!(seen.requests(), 0, "nothing sent");
}
