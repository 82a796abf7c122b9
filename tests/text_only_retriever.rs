//! An external retriever without an embeddings model (docs/retrievers.md): a text-only
//! retriever (tests/fixtures/retrievers/overlap.py, word overlap) sweeps a tiny corpus with no
//! `[embed]`: the metrics known by hand, no embeddings request, lines without a `vector` field,
//! a rerun answered by the retriever cache, and a run with a model sent the vectors (answered
//! apart from the cache of the run without). A retriever that needs vectors
//! (examples/retrievers/cosine.py) stops the run with its own message.

mod csv_support;
mod embed_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use csv_support::read_csv;
use embed_support::embeddings_reply;
use serde_json::{Value, json};
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

struct Embed;

impl Respond for Embed {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        embeddings_reply(&body, &[&["invoice"], &["apples"], &["rivers"]]).2
    }
}

const DOC: &str = "Apples grow on trees in the old orchard. Apples are picked in autumn.\n\nThe invoice total must be paid within thirty days. A late payment costs a fee.\n\nRivers flood the valley every spring after snowmelt.\n";

fn repo(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(rel)
        .display()
        .to_string()
}

/// The folder's corpus, golden set and config: no `[embed]`, the `[llm]` server the mock (so
/// an embeddings request would reach it), retrievers `overlap` and `cosine` declared.
fn fixture(dir: &Path, base: &str) -> PathBuf {
    std::fs::create_dir_all(dir.join("corpus")).unwrap();
    std::fs::write(dir.join("corpus/a.md"), DOC).unwrap();
    let golden = [
        json!({"id": "q1", "question": "When must the invoice be paid?", "evidence": ["paid within thirty days"]}),
        json!({"id": "q2", "question": "Where do apples grow?", "evidence": ["grow on trees in the old orchard"]}),
        // shares the, within, thirty, days (and payment) with the invoice chunk, only the,
        // valley, after with the chunk that holds the evidence: a miss
        json!({"id": "q3", "question": "Which payment is due within thirty days after the valley floods?", "evidence": ["flood the valley every spring after snowmelt"]}),
    ];
    let lines: Vec<String> = golden.iter().map(Value::to_string).collect();
    std::fs::write(dir.join("golden.jsonl"), lines.join("\n") + "\n").unwrap();
    let cfg = format!(
        "corpus = \"corpus\"\ngolden = \"golden.jsonl\"\n\n[llm]\nbase_url = \"{base}/v1\"\napi_key_env = \"CHUNKSWEEP_TEST_NO_SUCH_KEY\"\ncache_path = \"cache.sqlite\"\n\n\
         [[retrievers]]\nname = \"overlap\"\ncommand = [\"python3\", {:?}]\ntimeout_s = 60\n\n\
         [[retrievers]]\nname = \"cosine\"\ncommand = [\"python3\", {:?}]\ntimeout_s = 60\n",
        repo("tests/fixtures/retrievers/overlap.py"),
        repo("examples/retrievers/cosine.py"),
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, cfg).unwrap();
    path
}

/// `chunksweep sweep` over recursive 16 and 24 tokens, no overlap, k = 1, with `retrievers`
/// and the `extra` flags, no embeddings model in the environment.
async fn sweep(cfg: &Path, out: &str, retrievers: &str, extra: &[&str]) -> std::process::Output {
    let dir = cfg.parent().unwrap().to_path_buf();
    let mut args: Vec<String> = vec!["sweep".into(), "--quiet".into(), "--config".into()];
    args.push(cfg.display().to_string());
    args.extend(["--out".into(), dir.join(out).display().to_string()]);
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
    ]
    .iter()
    .chain(extra)
    {
        args.push(a.to_string());
    }
    chunksweep(dir, args).await
}

/// `chunksweep ARGS` in `dir`, with no embeddings model in the environment.
async fn chunksweep(dir: PathBuf, args: Vec<String>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_chunksweep"))
            .args(&args)
            .current_dir(&dir)
            .env_remove("OPENAI_BASE_URL")
            .env_remove("CHUNKSWEEP_EMBED_MODEL")
            .env_remove("CHUNKSWEEP_EMBED_QUERY_MODEL")
            .env_remove("CHUNKSWEEP_EMBED_BASE_URL")
            .env("SCRIPTED_LOG", dir.join("log.txt"))
            .output()
            .unwrap()
    })
    .await
    .unwrap()
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

fn value(r: &HashMap<String, String>, col: &str) -> f64 {
    r[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col} = {:?}", r[col]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_only_retriever_sweeps_without_embeddings_and_a_rerun_asks_nothing() {
    let server = MockServer::start().await;
    Mock::given(path("/v1/embeddings"))
        .respond_with(Embed)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri());
    let out = sweep(&cfg, "one", "overlap", &[]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        server.received_requests().await.unwrap().is_empty(),
        "an embeddings request was sent"
    );
    let mut want = Vec::new();
    for size in [16, 24] {
        let id = format!("recursive-{size}-o0-none-overlap");
        want.push(format!("index {id} vectors=no"));
        for q in ["q1", "q2", "q3"] {
            want.push(format!("query {id} {q} vectors=no"));
        }
    }
    assert_eq!(log(dir.path()), want);
    let rows = read_csv(&dir.path().join("one/sweep.csv"));
    for size in [16, 24] {
        let r = row(&rows, &format!("recursive-{size}-o0-none-overlap-k1"));
        // q1 and q2: the chunk sharing the most words holds the whole evidence; q3: a miss
        assert_eq!(value(r, "hit_rate"), 2.0 / 3.0, "hit_rate at size {size}");
        assert_eq!(
            value(r, "span_recall"),
            2.0 / 3.0,
            "span_recall at size {size}"
        );
        assert_eq!(r["embed_input"], "", "embed_input at size {size}");
        assert_eq!(value(r, "embed_tokens"), 0.0, "embed_tokens at size {size}");
    }
    // no dense twin: nothing to compare against exact cosine
    let compared = dir.path().join("one/retriever_comparison.csv");
    if compared.exists() {
        assert!(read_csv(&compared).is_empty());
    }
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("one/manifest.json")).unwrap(),
    )
    .unwrap();
    let chunker = &manifest["fingerprints"]["chunker"];
    assert_eq!(chunker["external_retriever"]["reported"], "word-overlap");
    assert!(chunker["embed_model"].is_null(), "{chunker}");

    // the same command again: every configuration from the retriever cache
    let again = sweep(&cfg, "two", "overlap", &[]).await;
    assert!(again.status.success());
    assert_eq!(log(dir.path()).len(), 8, "the rerun asked the retriever");
    let rows2 = read_csv(&dir.path().join("two/sweep.csv"));
    for size in [16, 24] {
        let id = format!("recursive-{size}-o0-none-overlap-k1");
        assert_eq!(
            row(&rows, &id)["span_recall"],
            row(&rows2, &id)["span_recall"]
        );
    }

    // check against the run: the pick's retriever started from the config file, its
    // answers from the cache, the chunker unchanged (no embeddings model on either side)
    let args = [
        "check",
        "--baseline",
        "one",
        "--config",
        "config.toml",
        "--out",
        "chk",
    ];
    let checked = chunksweep(dir.path().to_path_buf(), args.map(String::from).to_vec()).await;
    let said = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(
        checked.status.code(),
        Some(0),
        "{said}{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    assert!(said.contains("- Chunker: unchanged."), "{said}");
    assert_eq!(log(dir.path()).len(), 8, "check asked the retriever");

    // with an embeddings model the vectors are sent, and the answers without them are not reused
    let with = sweep(&cfg, "three", "overlap", &["--embed-model", "e5-passage"]).await;
    assert!(
        with.status.success(),
        "{}",
        String::from_utf8_lossy(&with.stderr)
    );
    assert!(!server.received_requests().await.unwrap().is_empty());
    let sent = log(dir.path());
    assert_eq!(sent.len(), 16, "{sent:?}");
    assert!(
        sent[8..].iter().all(|l| l.ends_with("vectors=yes")),
        "{sent:?}"
    );
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("three/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        manifest["fingerprints"]["chunker"]["embed_model"],
        "e5-passage"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retriever_that_needs_vectors_says_so_when_none_come() {
    let server = MockServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri());
    let out = sweep(&cfg, "one", "cosine", &[]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "retriever cosine, configuration recursive-16-o0-none-cosine: it reported an error: cosine.py ranks by the vectors chunksweep sends, and this run sends none: set an embeddings model ([embed] model, --embed-model or $CHUNKSWEEP_EMBED_MODEL) (once what it names is fixed, such as its database started, run the same command again: the configurations already answered are cached)"
        ),
        "{stderr}"
    );
    assert!(!dir.path().join("one/sweep.csv").exists());
    assert!(server.received_requests().await.unwrap().is_empty());
}

/// A sharded sweep through an external retriever: each shard records the retriever's identity
/// in shard.json, `merge` writes it to the merged manifest as the whole sweep does (the same
/// fingerprint, byte for byte), so `check` sees the same fingerprint against either baseline
/// (check.json equal but for the baseline's name); shards that disagree on the identity are
/// refused, naming the field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merged_run_records_the_retrievers_identity_as_the_whole_sweep_does() {
    let server = MockServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let cfg = fixture(&d, &server.uri());
    let ok = |o: &std::process::Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    ok(&sweep(&cfg, "whole", "overlap", &[]).await);
    for i in 0..2 {
        ok(&sweep(&cfg, "sharded", "overlap", &["--shard", &format!("{i}/2")]).await);
    }
    let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let merge = |out: &str| {
        args(&[
            "merge",
            "--quiet",
            "sharded/shard-0-of-2",
            "sharded/shard-1-of-2",
            "--out",
            out,
        ])
    };
    ok(&chunksweep(d.clone(), merge("merged")).await);
    let json = |rel: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(d.join(rel)).unwrap()).unwrap()
    };
    let shard = json("sharded/shard-0-of-2/shard.json");
    assert_eq!(shard["retrievers"]["overlap"]["reported"], "word-overlap");
    let (whole, merged) = (json("whole/manifest.json"), json("merged/manifest.json"));
    assert_eq!(
        merged["fingerprints"]["chunker"]["external_retriever"],
        shard["retrievers"]["overlap"]
    );
    assert_eq!(
        serde_json::to_string(&whole["fingerprints"]).unwrap(),
        serde_json::to_string(&merged["fingerprints"]).unwrap()
    );

    // check against either baseline: the same fingerprints, the same verdict
    for base in ["whole", "merged"] {
        let chk = format!("chk-{base}");
        let c = cfg.display().to_string();
        let o = chunksweep(
            d.clone(),
            args(&[
                "check",
                "--quiet",
                "--config",
                &c,
                "--baseline",
                base,
                "--out",
                &chk,
            ]),
        )
        .await;
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let (mut a, mut b) = (json("chk-whole/check.json"), json("chk-merged/check.json"));
    assert_eq!(a["changes"]["chunker"]["settings"], json!([]));
    assert_eq!(
        a["changes"]["chunker"]["baseline_sha256"],
        a["changes"]["chunker"]["candidate_sha256"]
    );
    a["baseline"] = Value::Null;
    b["baseline"] = Value::Null;
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    for f in ["sweep.csv", "sweep_questions.csv"] {
        assert_eq!(
            std::fs::read(d.join("chk-whole").join(f)).unwrap(),
            std::fs::read(d.join("chk-merged").join(f)).unwrap(),
            "{f}"
        );
    }

    // a shard whose retriever reported another version: refused, naming it
    let path = d.join("sharded/shard-1-of-2/shard.json");
    let mut other = json("sharded/shard-1-of-2/shard.json");
    other["retrievers"]["overlap"]["versions"]["overlap"] = json!("2");
    std::fs::write(&path, serde_json::to_string_pretty(&other).unwrap()).unwrap();
    let o = chunksweep(d.clone(), merge("merged-2")).await;
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("is not a shard of the same sweep as")
            && err.contains("the external retriever overlap (versions.overlap) differ(s)"),
        "{err}"
    );
    assert!(!d.join("merged-2").exists());
}
