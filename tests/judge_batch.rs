//! `chunksweep run --batch` end to end against a scripted server with the batch endpoints: no
//! direct chat completion, the same judge.csv as a direct run, half the estimated price, a run
//! killed while a batch is in progress resumed on the same batch, unanswered lines asked again
//! and nothing else, and a finished run that sends nothing.

mod batch_support;
mod csv_support;
mod llm_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use batch_support::{BatchServer, Fault};
use csv_support::{read_csv, untimed};
use llm_support::{
    LARGE, SMALL, SMALL_AND_LARGE_SWEEP, bin, graded_answer, mock_llm_toml, scripted_answer,
    write_larkspur_corpus,
};
use serde_json::{Value, json};

const QUESTIONS: [(&str, &str, &str, &str); 4] = [
    (
        "q1",
        "How many CPU cores does Larkspur need?",
        "Two CPU cores.",
        "two CPU cores",
    ),
    (
        "q2",
        "Which user does the container run as?",
        "User 1750.",
        "user 1750",
    ),
    (
        "q3",
        "How long are deleted files recoverable?",
        "Thirty days.",
        "recoverable for thirty days",
    ),
    (
        "q4",
        "When are invoices sent?",
        "On the first day of each month.",
        "first day of each month",
    ),
];

/// The scripted model: an answer names its question and whether a chunk of more than 8 words
/// was in its context (`ANSWER q2 large`); the judge fails faithfulness and correctness of q2
/// with small chunks, answers q3's small relevancy unreadably until reminded (not its repeat),
/// and passes the rest (planted controls included).
fn answer() -> batch_support::Answer {
    Arc::new(|body: &Value| {
        let text: String = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let id_of = |q: &str| QUESTIONS.iter().find(|x| x.1 == q).unwrap().0.to_string();
        if let Some(answer) = scripted_answer(&text, id_of) {
            return answer;
        }
        let crit = ["faithfulness", "relevancy", "correctness"]
            .into_iter()
            .find(|c| {
                let task = match *c {
                    "faithfulness" => "Task: grade faithfulness.",
                    "relevancy" => "Task: grade answer relevancy.",
                    _ => "Task: grade correctness against the reference.",
                };
                text.contains(task)
            })
            .unwrap_or("other");
        let (id, class) = graded_answer(&text);
        let reminded = text.contains("Your previous reply could not be read");
        // a repeat asks with a seed: it is answered at once (an unreadable reply is never
        // cached, so a rerun would ask its repeat again, batched or not)
        let repeat = !body["seed"].is_null();
        match (class, id, crit) {
            ("small", "q2", "faithfulness" | "correctness") => {
                r#"{"verdict": "fail", "reason": "scripted fail"}"#.to_string()
            }
            ("small", "q3", "relevancy") if !reminded && !repeat => {
                "I would rather not say.".to_string()
            }
            _ => r#"{"verdict": "pass", "reason": "scripted pass"}"#.to_string(),
        }
    })
}

/// Writes corpus, golden set and config into `dir` for the server at `url` (with `/v1`).
fn fixture(dir: &Path, url: &str) -> PathBuf {
    write_larkspur_corpus(dir);
    let golden: String = QUESTIONS
        .iter()
        .map(|(id, q, a, ev)| {
            json!({"id": id, "question": q, "answer": a, "evidence": [ev]}).to_string() + "\n"
        })
        .collect();
    std::fs::write(dir.join("golden.jsonl"), golden).unwrap();
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let cfg = format!(
        r#"corpus = "corpus"
golden = "golden.jsonl"

{sweep}{llm}
[llm.batch]
enabled = false
poll_s = 0.02

[judge]
generator_model = "gen"
judge_model = "judge"
concurrency = 4
prompts = "{}"
"#,
        prompts.display(),
        sweep = SMALL_AND_LARGE_SWEEP,
        llm = mock_llm_toml(url, "cache.sqlite", 10.0, 3),
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, cfg).unwrap();
    path
}

fn cmd(cfg: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.arg("run")
        .arg("--config")
        .arg(cfg)
        .arg("--out")
        .arg(out)
        .arg("--candidates")
        .arg(format!("{SMALL},{LARGE}"))
        .args(extra)
        .current_dir(cfg.parent().unwrap())
        .env_remove("OPENAI_BASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn run(cfg: &Path, out: &Path, extra: &[&str]) -> Output {
    cmd(cfg, out, extra).output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The estimated cost a dry run prints, in USD.
fn estimated_cost(o: &Output) -> f64 {
    let t = text(o);
    let at = t.find("estimated cost $").expect(&t) + "estimated cost $".len();
    t[at..]
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Starts `run --batch` and kills it (SIGKILL) once it has polled batch_0 three times.
fn kill_while_waiting(srv: &BatchServer, cfg: &Path, out: &Path) {
    let mut child = cmd(cfg, out, &["--batch"]).spawn().unwrap();
    let t0 = Instant::now();
    while srv.count("GET /batches/batch_0") < 3 {
        assert!(t0.elapsed() < Duration::from_secs(120), "never polled");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batched_run_sends_no_chat_completion_and_gives_the_direct_runs_judge_csv() {
    let direct_srv = BatchServer::start(answer()).await;
    let batch_srv = BatchServer::start(answer()).await;
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let direct_cfg = fixture(d1.path(), &direct_srv.url());
    let batch_cfg = fixture(d2.path(), &batch_srv.url());

    // the estimate: half the direct price
    let direct_est = run(&direct_cfg, &d1.path().join("dry"), &["--dry-run"]);
    let batch_est = run(
        &batch_cfg,
        &d2.path().join("dry"),
        &["--dry-run", "--batch"],
    );
    assert!(direct_est.status.success(), "{}", text(&direct_est));
    let (full, half) = (estimated_cost(&direct_est), estimated_cost(&batch_est));
    assert!(full > 0.0);
    assert!((half - full / 2.0).abs() < 1e-4, "{full} {half}");
    assert!(
        text(&batch_est).contains("results may take up to the 24h completion window"),
        "{}",
        text(&batch_est)
    );

    let direct_out = d1.path().join("out");
    let o = run(&direct_cfg, &direct_out, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let batch_out = d2.path().join("out");
    let o = run(&batch_cfg, &batch_out, &["--batch"]);
    assert!(o.status.success(), "{}", text(&o));

    batch_srv.assert_only_batch_endpoints();
    // rounds: generations, verdicts, the reminder, then controls and repeats
    let lines = batch_srv.batch_lines();
    assert!(
        lines[0].iter().all(|l| l.starts_with("generate|")),
        "{lines:?}"
    );
    assert_eq!(lines[0].len(), 8);
    assert!(lines[1].iter().all(|l| !l.starts_with("generate|")));

    let q = read_csv(&batch_out.join("judge_questions.csv"));
    assert_eq!(q.len(), 8, "every question judged");
    let direct_judge = read_csv(&direct_out.join("judge.csv"));
    let batch_judge = read_csv(&batch_out.join("judge.csv"));
    assert_eq!(untimed(&batch_judge), untimed(&direct_judge));
    for r in &batch_judge {
        for col in [
            "generate_ms_p50",
            "generate_ms_p95",
            "judge_ms_p50",
            "judge_ms_p95",
        ] {
            assert_eq!(r[col], "n/a", "{col}");
        }
    }
    // calls.csv: each batched call names its batch, at half the list price
    let calls = read_csv(&batch_out.join("calls.csv"));
    let batched: Vec<_> = calls.iter().filter(|c| !c["batch_id"].is_empty()).collect();
    assert!(!batched.is_empty());
    for c in &batched {
        assert!(c["batch_id"].starts_with("batch_"));
        assert!(!c["batch_submitted_at"].is_empty());
        assert!(c["latency_ms_total"].is_empty());
        if c["error"].is_empty() {
            // 10 prompt and 2 completion tokens at $2.50 and $10 per million, halved
            let cost: f64 = c["cost_usd"].parse().unwrap();
            assert!((cost - 0.0000225).abs() < 1e-12, "{cost}");
        }
    }

    // a rerun of the finished batch run sends nothing
    let before = batch_srv.log().len();
    let o = run(&batch_cfg, &batch_out, &["--batch"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        batch_srv.log().len(),
        before,
        "{:?}",
        &batch_srv.log()[before..]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn lines_missing_or_failed_leave_their_questions_unfinished_and_only_they_are_asked_again() {
    let srv = BatchServer::start(answer()).await;
    // the generations' batch: lines 1 and 4 missing from the output, line 2 in the error file
    srv.script(vec![Fault {
        missing: vec![1, 4],
        errors: vec![2],
        ..Default::default()
    }]);
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &srv.url());
    let out = dir.path().join("out");
    let o = run(&cfg, &out, &["--batch"]);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    let first = srv.batch_lines()[0].clone();
    let mut unanswered: Vec<String> = [1, 2, 4]
        .iter()
        .map(|&i| first[i].split('#').next().unwrap().to_string())
        .collect();
    unanswered.sort();
    assert_eq!(read_csv(&out.join("judge_questions.csv")).len(), 5);

    let batches_before = srv.batch_lines().len();
    let o = run(&cfg, &out, &["--batch"]);
    assert!(o.status.success(), "{}", text(&o));
    let lines = srv.batch_lines();
    let mut asked: Vec<String> = lines[batches_before]
        .iter()
        .map(|l| l.split('#').next().unwrap().to_string())
        .collect();
    asked.sort();
    assert_eq!(asked, unanswered);
    assert_eq!(read_csv(&out.join("judge_questions.csv")).len(), 8);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_killed_while_its_batch_runs_is_resumed_on_the_same_batch() {
    let srv = BatchServer::start(answer()).await;
    srv.script(vec![Fault {
        polls_in_progress: usize::MAX,
        ..Default::default()
    }]);
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &srv.url());
    let out = dir.path().join("out");
    kill_while_waiting(&srv, &cfg, &out);
    let book: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("batches.json")).unwrap()).unwrap();
    assert_eq!(book[0]["id"], "batch_0");
    assert_eq!(book[0]["status"], "in_progress");
    assert_eq!(book[0]["calls"].as_array().unwrap().len(), 8);

    // the batch finishes at the provider; the rerun polls it and submits none of its calls
    srv.state
        .lock()
        .unwrap()
        .batches
        .get_mut("batch_0")
        .unwrap()
        .fault
        .polls_in_progress = 0;
    let polls = srv.count("GET /batches/batch_0");
    let o = run(&cfg, &out, &["--batch"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(srv.count("GET /batches/batch_0") > polls);
    let lines = srv.batch_lines();
    assert!(
        lines[1..]
            .iter()
            .flatten()
            .all(|l| !l.starts_with("generate|")),
        "{lines:?}"
    );
    assert_eq!(srv.count("POST /chat/completions"), 0);
    assert_eq!(read_csv(&out.join("judge_questions.csv")).len(), 8);
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelled_batches_leave_their_calls_unfinished_for_a_later_run() {
    let srv = BatchServer::start(answer()).await;
    srv.script(vec![Fault {
        polls_in_progress: usize::MAX,
        ..Default::default()
    }]);
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &srv.url());
    let out = dir.path().join("out");
    kill_while_waiting(&srv, &cfg, &out);

    let o = run(&cfg, &out, &["--cancel-batches"]);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert_eq!(srv.count("POST /batches/batch_0/cancel"), 1);
    assert_eq!(
        srv.batch_lines().len(),
        1,
        "nothing submitted while cancelling"
    );
    let book: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("batches.json")).unwrap()).unwrap();
    assert_eq!(book[0]["status"], "cancelled");

    let o = run(&cfg, &out, &["--batch"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(srv.batch_lines()[1].len(), 8);
    assert_eq!(srv.count("POST /batches/batch_0/cancel"), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn judge_check_with_batch_asks_every_labelled_item_in_one_batch() {
    let srv = BatchServer::start(Arc::new(|_: &Value| {
        r#"{"verdict": "pass", "reason": "scripted pass"}"#.to_string()
    }))
    .await;
    let dir = tempfile::tempdir().unwrap();
    // the run's fixture config, without its corpus and golden set: [llm] and [judge] are read
    let cfg = fixture(dir.path(), &srv.url());
    let labels = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/judge-labels.jsonl");
    let out = dir.path().join("check");
    let o = Command::new(bin())
        .arg("judge-check")
        .arg("--labels")
        .arg(&labels)
        .arg("--config")
        .arg(&cfg)
        .arg("--out")
        .arg(&out)
        .arg("--batch")
        .current_dir(dir.path())
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    // exit 1: a judge that passes everything can tell no pass from a fail (judge-check's
    // verdict on the judge, not a failure of the batch)
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    srv.assert_only_batch_endpoints();
    assert_eq!(srv.batch_lines().len(), 1);
    assert_eq!(srv.batch_lines()[0].len(), 12);
    let items = read_csv(&out.join("judge_check_items.csv"));
    assert_eq!(items.len(), 12);
    assert!(items.iter().all(|r| r["verdict"] == "pass"));
    assert!(out.join("batches.json").exists());
}
