//! `chunksweep run` on a grid that needs embeddings (dense and hybrid retrievers, semantic
//! chunking), against one mock OpenAI-compatible server serving both /v1/embeddings and
//! /v1/chat/completions: the prepare step runs for `run` as for `sweep`, and the judge stage
//! judges dense, hybrid and semantic candidates, retrieving exactly as the sweep did.

mod csv_support;
mod embed_support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use csv_support::read_csv;
use embed_support::{embeddings_reply, mock_config};
use serde_json::{Value, json};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Keyword groups of the mock vectors: e0 apples, e1 invoices and payments, e2 rivers, e3 otherwise.
const KEYWORDS: &[&[&str]] = &[&["apple"], &["invoice", "payment", "paid"], &["river"]];

/// One request: (endpoint, model, the inputs or the joined messages).
type Seen = (String, String, Vec<String>);

/// Answers both endpoints and keeps every request it received.
#[derive(Clone, Default)]
struct Mock2 {
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Respond for Mock2 {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let model = body["model"].as_str().unwrap().to_string();
        if req.url.path().ends_with("/embeddings") {
            let (model, inputs, reply) = embeddings_reply(&body, KEYWORDS);
            self.seen
                .lock()
                .unwrap()
                .push(("embeddings".into(), model, inputs));
            return reply;
        }
        let text = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let reply = if text.contains("Task: answer the question from the documents.") {
            "The answer is in the documents."
        } else {
            r#"{"verdict": "pass", "reason": "supported"}"#
        };
        self.seen
            .lock()
            .unwrap()
            .push(("chat".into(), model.clone(), vec![text]));
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "x", "object": "chat.completion", "created": 1, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        }))
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
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let cfg = format!(
        "{}\n[judge]\ngenerator_model = \"gen\"\njudge_model = \"judge\"\nprompts = \"{}\"\n",
        mock_config(base),
        prompts.display()
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, cfg).unwrap();
    path
}

const DENSE: &str = "recursive-24-o0-none-dense-k1";
const HYBRID: &str = "recursive-24-o0-none-hybrid-k1";
const SEMANTIC: &str = "semantic-24-o0-none-bm25-k1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_judges_dense_hybrid_and_semantic_candidates() {
    let server = MockServer::builder().start().await;
    let mock = Mock2::default();
    Mock::given(path("/v1/embeddings"))
        .respond_with(mock.clone())
        .mount(&server)
        .await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(mock.clone())
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri());
    let out = dir.path().join("run");
    let output = tokio::task::spawn_blocking({
        let (cfg, out) = (cfg.clone(), out.clone());
        move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_chunksweep"))
                .args(["run", "--quiet", "--config"])
                .arg(&cfg)
                .arg("--out")
                .arg(&out)
                .args([
                    "--retrievers",
                    "bm25,dense,hybrid",
                    "--strategies",
                    "recursive,semantic",
                    "--sizes",
                    "24",
                    "--overlap",
                    "0",
                    "--k",
                    "1",
                    "--candidates",
                    &format!("{DENSE},{HYBRID},{SEMANTIC}"),
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

    // The judge judged every candidate on both questions.
    let judge = read_csv(&out.join("judge.csv"));
    let ids: Vec<&str> = judge.iter().map(|r| r["config_id"].as_str()).collect();
    assert_eq!(ids, [DENSE, HYBRID, SEMANTIC]);
    for r in &judge {
        assert_eq!(r["n_questions"], "2", "{r:?}");
        assert_eq!(r["faithfulness_pass"], "2", "{r:?}");
    }
    // Dense retrieval found the invoice paragraph for q1 (e1 against e1), as the sweep did.
    let rows = read_csv(&out.join("judge_questions.csv"));
    let q1_dense = rows
        .iter()
        .find(|r| r["config_id"] == DENSE && r["question_id"] == "q1")
        .unwrap();
    let sweep_q = read_csv(&out.join("sweep_questions.csv"));
    let swept = sweep_q
        .iter()
        .find(|r| r["config_id"] == DENSE && r["question_id"] == "q1")
        .unwrap();
    assert_eq!(
        q1_dense["retrieved_chunk_ids"],
        swept["retrieved_chunk_ids"]
    );
    assert_eq!(swept["hit"], "1");

    // The mock received the questions as query embeddings, with the query model, once each
    // (the embedding cache serves the judge step), and the corpus's sentences for semantic.
    let seen = mock.seen.lock().unwrap();
    let queries: Vec<&String> = seen
        .iter()
        .filter(|(kind, model, _)| kind == "embeddings" && model == "e5-query")
        .flat_map(|(_, _, inputs)| inputs)
        .collect();
    assert_eq!(
        queries,
        ["When must the invoice be paid?", "Where do apples grow?"]
    );
    let documents: Vec<&String> = seen
        .iter()
        .filter(|(kind, model, _)| kind == "embeddings" && model == "e5-passage")
        .flat_map(|(_, _, inputs)| inputs)
        .collect();
    assert!(
        documents.contains(&&"Rivers flood the valley every spring after snowmelt.".to_string())
    );
    // 3 candidates × 2 questions × (1 answer + 2 verdicts; no reference answers), then one call
    // per planted control and repeat; a request equal to an earlier one (dense and hybrid
    // retrieving the same chunk) is a cache hit.
    let checks = read_csv(&out.join("judge_checks.csv"));
    // repeats: max(ceil(0.1 × 6), 5) = 5 answers × 2 criteria
    assert_eq!(checks.iter().filter(|c| c["kind"] == "repeat").count(), 10);
    let calls = read_csv(&out.join("calls.csv"));
    assert_eq!(calls.len(), 18 + checks.len());
    let sent = calls.iter().filter(|c| c["cache_hit"] == "false").count();
    let chats = seen.iter().filter(|(kind, _, _)| kind == "chat").count();
    assert_eq!(chats, sent);
    assert!(sent < calls.len(), "{sent}");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let outputs: Vec<&str> = manifest["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for f in [
        "embed_calls.csv",
        "embeddings.json",
        "judge.csv",
        "judge_questions.csv",
        "judge_checks.csv",
        "calls.csv",
        "report.md",
        "manifest.json",
    ] {
        assert!(outputs.contains(&f), "{f} in {outputs:?}");
        assert!(out.join(f).exists(), "{f} exists");
    }
    for f in &outputs {
        assert!(
            out.join(f).exists(),
            "the manifest lists only written files: {f}"
        );
    }
}

/// Runs the binary with `args` (the config's server, no `OPENAI_BASE_URL`) off the async
/// runtime, so the mock keeps answering.
async fn chunksweep(args: Vec<std::ffi::OsString>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_chunksweep"))
            .args(args)
            .env_remove("OPENAI_BASE_URL")
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_with_a_dense_grid_sends_nothing_and_counts_what_the_sweep_sends() {
    let server = MockServer::builder().start().await;
    let mock = Mock2::default();
    Mock::given(path("/v1/embeddings"))
        .respond_with(mock.clone())
        .mount(&server)
        .await;
    Mock::given(path("/v1/chat/completions"))
        .respond_with(mock.clone())
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri());
    let grid = [
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
    ];
    let command = |verb: &str, out: &str, dry: bool| {
        let mut a: Vec<std::ffi::OsString> =
            vec![verb.into(), "--config".into(), cfg.clone().into()];
        a.extend(["--out".into(), dir.path().join(out).into()]);
        a.extend(grid.iter().map(|s| s.into()));
        if dry {
            a.push("--dry-run".into());
        }
        a
    };

    // nothing in the caches: the dry run sends no request, writes nothing, and says what the
    // sweep would send and what the judge stage would cost without knowing its candidates
    let dry = chunksweep(command("run", "dry", true)).await;
    let stdout = String::from_utf8_lossy(&dry.stdout).to_string();
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        0,
        "{stdout}"
    );
    assert!(!dir.path().join("dry").exists());
    assert!(
        !dir.path().join("embed.sqlite").exists(),
        "no cache created"
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("dry run: the sweep would send "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        stdout.contains("candidates: not known before the sweep: the candidates are chosen by the sweep, which needs the calls above: 1 stand in for them"),
        "{stdout}"
    );
    // 1 candidate × 2 questions × (1 answer + 2 verdicts), with controls and repeats
    assert!(
        stdout.contains("dry run: 1 candidate(s) × 2 question(s)"),
        "{stdout}"
    );

    // the sweep then sends exactly the texts the dry run counted, in as many requests
    let swept = chunksweep(command("sweep", "swept", false)).await;
    assert!(
        swept.status.success(),
        "{}",
        String::from_utf8_lossy(&swept.stderr)
    );
    let (requests, texts) = {
        let seen = mock.seen.lock().unwrap();
        let embeds: Vec<&Seen> = seen.iter().filter(|(k, _, _)| k == "embeddings").collect();
        (
            embeds.len(),
            embeds.iter().map(|(_, _, i)| i.len()).sum::<usize>(),
        )
    };
    assert!(requests > 0 && texts > 2);
    assert!(
        line.starts_with(&format!(
            "dry run: the sweep would send {requests} embedding request(s) ({texts} of {texts} texts not in the cache, about "
        )),
        "{line}"
    );

    // now that the cache holds every vector, the dry run sweeps from it, still sending nothing,
    // and estimates the judge stage on the candidate it picked
    let sent = server.received_requests().await.unwrap().len();
    let dry = chunksweep(command("run", "dry2", true)).await;
    let stdout = String::from_utf8_lossy(&dry.stdout).to_string();
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        sent,
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "dry run: the sweep sends nothing: its {texts} text(s) to embed are in the caches"
        )),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("candidates: {DENSE}")), "{stdout}");
    assert!(dir.path().join("dry2/sweep.csv").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_check_dry_run_on_dense_rows_sends_nothing() {
    // labelled rows of a dense configuration, with empty caches: rebuilding their retrieved
    // contexts needs embeddings, which a dry run does not ask for; it says what it would send
    let server = MockServer::builder().start().await;
    let mock = Mock2::default();
    Mock::given(path("/v1/embeddings"))
        .respond_with(mock.clone())
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri());
    // the run's grid (a run's manifest.json would record it): dense retrieval needs [embed]
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replacen(
            "golden = \"golden.jsonl\"\n",
            "golden = \"golden.jsonl\"\n\n[sweep]\nretrievers = [\"dense\"]\n",
            1,
        ),
    )
    .unwrap();
    let labels = dir.path().join("labelled.csv");
    std::fs::write(
        &labels,
        format!(
            "config_id,question_id,answer,human_label_faithfulness\n{DENSE},q1,Within thirty days.,pass\n{DENSE},q2,On trees.,pass\n"
        ),
    )
    .unwrap();
    let args: Vec<std::ffi::OsString> = vec![
        "judge-check".into(),
        "--labels".into(),
        labels.into(),
        "--config".into(),
        cfg.into(),
        "--out".into(),
        dir.path().join("check").into(),
        "--dry-run".into(),
    ];
    let dry = chunksweep(args).await;
    let stdout = String::from_utf8_lossy(&dry.stdout).to_string();
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        0,
        "{stdout}"
    );
    assert!(stdout.contains("dry run: 2 labelled item(s)"), "{stdout}");
    assert!(
        stdout.contains("the labelled rows' retrieved contexts cannot be rebuilt from the caches (the sweep would send "),
        "{stdout}"
    );
    assert!(
        stdout.contains("2 chat call(s) to judge judge at "),
        "{stdout}"
    );
    assert!(!dir.path().join("check").exists());
}

/// One cap for the whole run: before the sweep sends anything, `run --max-cost` adds the sweep's
/// estimate and the judge stage's estimate at the largest context (its candidates are not known
/// yet) and refuses
/// when they pass the cap, with no request sent; the dry run says the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_max_cost_counts_the_judge_stage_before_the_sweep_sends_anything() {
    let server = MockServer::builder().start().await;
    let mock = Mock2::default();
    for endpoint in ["/v1/embeddings", "/v1/chat/completions"] {
        Mock::given(path(endpoint))
            .respond_with(mock.clone())
            .mount(&server)
            .await;
    }
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri());
    // embeddings cheap (well under the cap); every judge-stage token costs $1
    let prices = "\n[llm.models.e5-passage]\ninput_usd_per_mtok = 1.0\n\n[llm.models.e5-query]\ninput_usd_per_mtok = 1.0\n\n[llm.models.gen]\ninput_usd_per_mtok = 1000000.0\noutput_usd_per_mtok = 1000000.0\n\n[llm.models.judge]\ninput_usd_per_mtok = 1000000.0\noutput_usd_per_mtok = 1000000.0\n";
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, text + prices).unwrap();
    let command = |out: &str, dry: bool| {
        let mut a: Vec<std::ffi::OsString> =
            vec!["run".into(), "--config".into(), cfg.clone().into()];
        a.extend(["--out".into(), dir.path().join(out).into()]);
        for s in [
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
            "--max-cost",
            "1",
        ] {
            a.push(s.into());
        }
        if dry {
            a.push("--dry-run".into());
        }
        a
    };
    let want = "and would spend first, then the judge stage at about $";
    let stands_in = "(estimated at the largest context: the sweep chooses the candidates, so 1 stand in for them";
    let tail = "that is more than --max-cost $1.0000; nothing was sent (raise --max-cost, or sweep fewer configurations, or use fewer candidates or questions: cached calls cost nothing)";

    let dry = chunksweep(command("dry", true)).await;
    let stdout = String::from_utf8_lossy(&dry.stdout).to_string();
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    assert!(
        stdout.contains(
            "dry run: the real run would be refused by --max-cost: the sweep is estimated at $"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(want) && stdout.contains(stands_in) && stdout.contains(tail),
        "{stdout}"
    );

    let real = chunksweep(command("real", false)).await;
    let stderr = String::from_utf8_lossy(&real.stderr).to_string();
    assert_eq!(real.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the sweep is estimated at $") && stderr.contains("embedding request(s)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(want) && stderr.contains(stands_in) && stderr.contains(tail),
        "{stderr}"
    );
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        0,
        "nothing sent"
    );
    assert!(!dir.path().join("real/embed_calls.csv").exists());
}
