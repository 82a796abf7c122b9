//! External retrievers (`[[retrievers]]`, docs/retrievers.md): a scripted retriever
//! (tests/fixtures/retrievers/scripted.py, exact cosine over the vectors chunksweep sends)
//! swept beside the built-in dense retriever on the same chunks and embeddings (a mock
//! /embeddings server with keyword vectors): the same metrics, a rerun answered by the
//! retriever cache, and each fault (a crash, a hang, a bad reply, the database down or gone
//! mid-run) a clear error with its exit code, nothing scored, and the configurations answered
//! before kept for the rerun.

mod csv_support;
mod embed_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use csv_support::read_csv;
use embed_support::{embeddings_reply, mock_config};
use serde_json::{Value, json};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const KEYWORDS: &[&[&str]] = &[&["invoice"], &["apples"], &["rivers"]];

struct Embed;

impl Respond for Embed {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        embeddings_reply(&body, KEYWORDS).2
    }
}

const DOC: &str = "Apples grow on trees in the old orchard. Apples are picked in autumn.\n\nThe invoice total must be paid within thirty days. A late payment costs a fee.\n\nRivers flood the valley every spring after snowmelt.\n";

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/retrievers/scripted.py")
}

/// The folder's corpus, golden set and config (the scripted retriever logs to log.txt, named by SCRIPTED_LOG).
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
        "{}\n[[retrievers]]\nname = \"scripted\"\ncommand = [\"python3\", {:?}]\ntimeout_s = 60\n",
        mock_config(base),
        script().display().to_string()
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, cfg).unwrap();
    path
}

/// `chunksweep sweep` over recursive 16 and 24 tokens, no overlap, k = 1, with `retrievers`,
/// the scripted retriever's fault set to `fault`.
async fn sweep(cfg: &Path, out: &Path, retrievers: &str, fault: &str) -> std::process::Output {
    let mut args: Vec<String> = vec!["sweep".into(), "--quiet".into(), "--config".into()];
    args.push(cfg.display().to_string());
    args.extend(["--out".into(), out.display().to_string()]);
    for a in [
        "--retrievers",
        retrievers,
        "--strategies",
        "recursive",
        "--sizes",
        "16,24",
        "--overlap",
        "0",
        "--k",
        "1",
    ] {
        args.push(a.into());
    }
    let (dir, fault) = (cfg.parent().unwrap().to_path_buf(), fault.to_string());
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_chunksweep"))
            .args(&args)
            .current_dir(&dir)
            .env_remove("OPENAI_BASE_URL")
            .env("FAULT", fault)
            .env("SCRIPTED_LOG", dir.join("log.txt"))
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

async fn server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(path("/v1/embeddings"))
        .respond_with(Embed)
        .mount(&server)
        .await;
    server
}

fn log(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("log.txt"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn row<'a>(rows: &'a [HashMap<String, String>], id: &str) -> &'a HashMap<String, String> {
    rows.iter()
        .find(|r| r["config_id"] == id)
        .unwrap_or_else(|| panic!("no row {id}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_exact_cosine_scores_as_dense_and_a_rerun_asks_nothing() {
    let server = server().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri());
    let out = sweep(&cfg, &dir.path().join("one"), "dense,scripted", "").await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        log(dir.path()),
        [
            "index recursive-16-o0-none-scripted",
            "query recursive-16-o0-none-scripted q1",
            "query recursive-16-o0-none-scripted q2",
            "index recursive-24-o0-none-scripted",
            "query recursive-24-o0-none-scripted q1",
            "query recursive-24-o0-none-scripted q2",
        ]
    );
    let rows = read_csv(&dir.path().join("one/sweep.csv"));
    for size in [16, 24] {
        let dense = row(&rows, &format!("recursive-{size}-o0-none-dense-k1"));
        let ours = row(&rows, &format!("recursive-{size}-o0-none-scripted-k1"));
        for col in [
            "span_recall",
            "hit_rate",
            "mrr",
            "ties_at_k",
            "tokens_per_query",
        ] {
            assert_eq!(dense[col], ours[col], "{col} at size {size}");
        }
        // cosines in f32 (dense) and in f64 (the script)
        let margin = |r: &HashMap<String, String>| r["margin"].parse::<f64>().unwrap();
        assert!(
            (margin(dense) - margin(ours)).abs() < 1e-6,
            "margin at size {size}"
        );
        assert_eq!(ours["retriever"], "scripted");
    }
    // each question's keyword picks the one chunk that holds its evidence
    assert_eq!(
        row(&rows, "recursive-24-o0-none-scripted-k1")["span_recall"],
        "1.0"
    );

    let again = sweep(&cfg, &dir.path().join("two"), "dense,scripted", "").await;
    assert!(again.status.success());
    assert_eq!(log(dir.path()).len(), 6, "the rerun asked the retriever");
    let rows2 = read_csv(&dir.path().join("two/sweep.csv"));
    for id in [
        "recursive-16-o0-none-scripted-k1",
        "recursive-24-o0-none-scripted-k1",
    ] {
        assert_eq!(
            row(&rows, id)["span_recall"],
            row(&rows2, id)["span_recall"]
        );
    }
    // the report pairs each with its dense twin: the same hits, no discordant question
    let compared = read_csv(&dir.path().join("one/retriever_comparison.csv"));
    assert_eq!(compared.len(), 2);
    for c in &compared {
        assert_eq!(c["exact_id"], c["config_id"].replace("scripted", "dense"));
        assert_eq!(
            (
                c["delta_span_recall"].as_str(),
                c["mcnemar_b"].as_str(),
                c["mcnemar_c"].as_str()
            ),
            ("0.0", "0", "0")
        );
    }
    let report = std::fs::read_to_string(dir.path().join("one/report.md")).unwrap();
    assert!(report.contains("## Your retriever against exact cosine"));

    // a pick retrieved by the scripted retriever carries its identity in its fingerprint
    let only = sweep(&cfg, &dir.path().join("three"), "scripted", "").await;
    assert!(only.status.success());
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("three/manifest.json")).unwrap(),
    )
    .unwrap();
    let identity = &manifest["fingerprints"]["chunker"]["external_retriever"];
    assert_eq!(identity["reported"], "scripted-cosine");
    assert_eq!(identity["versions"], json!({"scripted": "1"}));
    assert_eq!(identity["command"][0], "python3");
}

/// Each fault (on the second configuration, but `db_down`): its exit code and its message
/// (after `error: sweep into DIR: `).
const FAULTS: &[(&str, i32, &str)] = &[
    (
        "crash",
        2,
        "retriever scripted, configuration recursive-24-o0-none-scripted, question \"q1\": its output ended before the hits for question \"q1\" (exit status: 3); its last stderr lines:\n    scripted: lost the index",
    ),
    (
        "hang",
        2,
        "retriever scripted, configuration recursive-24-o0-none-scripted, question \"q1\": no line for 5 s while waiting for the hits for question \"q1\": ended it and its children",
    ),
    (
        "bad_json",
        2,
        "retriever scripted, configuration recursive-24-o0-none-scripted, question \"q1\": unusable reply \"{not json\": not JSON",
    ),
    (
        "out_of_range",
        2,
        "retriever scripted, configuration recursive-24-o0-none-scripted, question \"q1\": unusable reply",
    ),
    (
        "repeated",
        2,
        "retriever scripted, configuration recursive-24-o0-none-scripted, question \"q1\": unusable reply",
    ),
    (
        "too_few",
        2,
        "retriever scripted, configuration recursive-24-o0-none-scripted, question \"q1\": unusable reply",
    ),
    (
        "not_a_number",
        2,
        "retriever scripted, configuration recursive-24-o0-none-scripted, question \"q1\": unusable reply",
    ),
    (
        "db_restarted",
        1,
        "retriever scripted, configuration recursive-24-o0-none-scripted: it reported an error: cannot reach the database at 127.0.0.1:9 (connection refused) (once what it names is fixed, such as its database started, run the same command again: the configurations already answered are cached)",
    ),
    (
        "db_down",
        1,
        "retriever scripted, configuration recursive-16-o0-none-scripted: it reported an error: cannot reach the database at 127.0.0.1:9 (connection refused)",
    ),
];

/// What each bad reply's message says after `unusable reply "…": `.
const WHY: &[(&str, &str)] = &[
    (
        "out_of_range",
        "hit 1 names chunk 3, out of range for an index of 3 chunks (0 to 2)",
    ),
    (
        "repeated",
        "hit 2 names chunk 1 again (hit 1 named it): each chunk at most once",
    ),
    (
        "too_few",
        "1 hits where 2 were asked (top_n 2 of an index of 3 chunks): fewer than asked",
    ),
    (
        "not_a_number",
        "hit 1 (chunk 1) has score \"high\", not a finite number",
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_is_named_nothing_is_scored_and_the_rerun_sends_only_the_rest() {
    let server = server().await;
    for &(fault, code, message) in FAULTS {
        let dir = tempfile::tempdir().unwrap();
        let cfg = fixture(dir.path(), &server.uri());
        if fault == "hang" {
            // the only wait of this file: 5 s for a line from a retriever that answered its
            // hello (awaited at least 60 s: an interpreter's start is no hang) and its index
            let text = std::fs::read_to_string(&cfg).unwrap();
            std::fs::write(&cfg, text.replace("timeout_s = 60", "timeout_s = 5")).unwrap();
        }
        let out = sweep(&cfg, &dir.path().join("run"), "scripted", fault).await;
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(code), "{fault}: {stderr}");
        assert!(stderr.contains(message), "{fault}: {stderr}");
        if let Some((_, why)) = WHY.iter().find(|(f, _)| *f == fault) {
            assert!(stderr.contains(why), "{fault}: {stderr}");
        }
        assert!(
            !dir.path().join("run/sweep.csv").exists(),
            "{fault}: scored"
        );
        let before = log(dir.path()).len();
        let again = sweep(&cfg, &dir.path().join("again"), "scripted", "").await;
        assert!(
            again.status.success(),
            "{fault}: {}",
            String::from_utf8_lossy(&again.stderr)
        );
        let sent: Vec<String> = log(dir.path())[before..].to_vec();
        let first_cached = fault != "db_down";
        let indexed: Vec<&String> = sent.iter().filter(|l| l.starts_with("index")).collect();
        match first_cached {
            // the first configuration came from the cache: only the second was sent
            true => assert_eq!(indexed, ["index recursive-24-o0-none-scripted"], "{fault}"),
            false => assert_eq!(indexed.len(), 2, "{fault}"),
        }
        assert!(dir.path().join("again/sweep.csv").exists());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undeclared_retriever_is_refused_before_anything_runs() {
    let server = server().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri());
    let out = sweep(&cfg, &dir.path().join("run"), "dense,dnese", "").await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown retriever \"dnese\": it is no built-in (bm25, dense, hybrid) and no retriever of that name is declared"),
        "{stderr}"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_gates_a_pick_made_by_an_external_retriever_declared_in_its_config() {
    let server = server().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri());
    let base = dir.path().join("base");
    let out = sweep(&cfg, &base, "scripted", "").await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (d, chk) = (dir.path().to_path_buf(), dir.path().join("chk"));
    let o = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_chunksweep"))
            .args(["check", "--quiet", "--config"])
            .arg(&cfg)
            .arg("--baseline")
            .arg(&base)
            .arg("--out")
            .arg(&chk)
            .current_dir(&d)
            .env_remove("OPENAI_BASE_URL")
            .env("SCRIPTED_LOG", d.join("log.txt"))
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    // nothing changed: the same chunks through the same retriever pass the gate
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("chk/check.json")).unwrap())
            .unwrap();
    assert_eq!(json["verdict"]["outcome"], "pass", "{json}");
    assert_eq!(
        json["changes"]["chunker"]["candidate"],
        "recursive-16-o0-none-scripted-k1"
    );
}
