//! End-to-end `chunksweep run` against a scripted OpenAI-compatible mock: known pass rates,
//! unreadable verdicts counted as errors, a 429 storm, and a SIGKILL midway with a restart.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod csv_support;

use csv_support::{Rows, read_csv};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const SMALL: &str = "words-8-o0-none-bm25-k2";
const LARGE: &str = "words-32-o0-none-bm25-k2";

/// What the judge says for (size class, question id, criterion).
#[derive(Clone, Copy, PartialEq)]
enum Say {
    Pass,
    Fail,
    /// Unreadable, also after the reminder.
    Garbage,
    /// Unreadable first, a pass after the reminder.
    GarbageThenPass,
}

#[derive(Clone)]
struct Script {
    questions: HashMap<String, String>, // question text -> id
    verdicts: HashMap<(String, String, String), Say>,
    delay: Duration,
}

fn chat(content: &str) -> Value {
    json!({
        "id": "x", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    })
}

fn between<'a>(s: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let a = s.find(open)? + open.len();
    let b = s[a..].find(close)? + a;
    Some(&s[a..b])
}

impl Respond for Script {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let text: String = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["content"].as_str().unwrap_or("").to_string())
            .collect::<Vec<_>>()
            .join("\n");
        let reply = if text.contains("Task: answer the question from the documents.") {
            let q = between(&text, "<question>\n", "\n</question>").unwrap();
            let id = &self.questions[q];
            // a chunk of more than 8 words can only come from the large configuration
            let docs = between(&text, "<documents>\n", "\n</documents>").unwrap();
            let large = docs.split("<document id=").skip(1).any(|d| {
                between(d, ">\n", "\n</document>")
                    .unwrap()
                    .split_whitespace()
                    .count()
                    > 8
            });
            format!("ANSWER {id} {}", if large { "large" } else { "small" })
        } else {
            let crit = if text.contains("Task: grade faithfulness.") {
                "faithfulness"
            } else if text.contains("Task: grade answer relevancy.") {
                "relevancy"
            } else if text.contains("Task: grade correctness against the reference.") {
                "correctness"
            } else {
                panic!("unknown request: {text}")
            };
            let ans = between(&text, "<answer>\n", "\n</answer>").unwrap();
            let mut parts = ans.split_whitespace().skip(1);
            let (id, class) = (parts.next().unwrap(), parts.next().unwrap());
            let say = self
                .verdicts
                .get(&(class.to_string(), id.to_string(), crit.to_string()))
                .copied()
                .unwrap_or(Say::Pass);
            let reminded = text.contains("Your previous reply could not be read");
            match (say, reminded) {
                (Say::Pass, _) | (Say::GarbageThenPass, true) => {
                    r#"{"verdict": "pass", "reason": "scripted pass"}"#.to_string()
                }
                (Say::Fail, _) => r#"{"verdict": "fail", "reason": "scripted fail"}"#.to_string(),
                _ => "I would rather not say.".to_string(),
            }
        };
        ResponseTemplate::new(200)
            .set_body_json(chat(&reply))
            .set_delay(self.delay)
    }
}

const DOC_A: &str = "Larkspur needs two CPU cores and four gigabytes of memory to run. The container runs as user 1750 by default. Settings live in a TOML file under the config folder. The sync interval defaults to three hundred seconds.";
const DOC_B: &str = "Refunds are issued within fourteen days of a request. Invoices are sent on the first day of each month. Deleted files stay recoverable for thirty days. Uploads above five gigabytes use the multipart command.";

const QUESTIONS: [(&str, &str, Option<&str>); 4] = [
    (
        "q1",
        "How many CPU cores does Larkspur need?",
        Some("Two CPU cores."),
    ),
    (
        "q2",
        "Which user does the container run as?",
        Some("User 1750."),
    ),
    (
        "q3",
        "How long are deleted files recoverable?",
        Some("Thirty days."),
    ),
    ("q4", "When are invoices sent?", None),
];

fn script(delay: Duration) -> Script {
    let mut verdicts = HashMap::new();
    let mut say = |class: &str, q: &str, c: &str, s: Say| {
        verdicts.insert((class.to_string(), q.to_string(), c.to_string()), s);
    };
    say("small", "q2", "faithfulness", Say::Fail);
    say("small", "q2", "correctness", Say::Fail);
    say("small", "q3", "faithfulness", Say::Garbage);
    say("small", "q4", "relevancy", Say::GarbageThenPass);
    say("large", "q2", "correctness", Say::Fail);
    Script {
        questions: QUESTIONS
            .iter()
            .map(|(id, q, _)| (q.to_string(), id.to_string()))
            .collect(),
        verdicts,
        delay,
    }
}

/// Writes corpus, golden set and config into `dir` for the mock at `base`.
fn fixture(dir: &Path, base: &str, concurrency: usize) -> PathBuf {
    std::fs::create_dir_all(dir.join("corpus")).unwrap();
    std::fs::write(dir.join("corpus/a.md"), DOC_A).unwrap();
    std::fs::write(dir.join("corpus/b.md"), DOC_B).unwrap();
    let evidence = [
        "two CPU cores",
        "user 1750",
        "recoverable for thirty days",
        "first day of each month",
    ];
    let golden: String = QUESTIONS
        .iter()
        .zip(evidence)
        .map(|((id, q, a), ev)| {
            let mut o = json!({"id": id, "question": q, "evidence": [ev]});
            if let Some(a) = a {
                o["answer"] = json!(a);
            }
            o.to_string() + "\n"
        })
        .collect();
    std::fs::write(dir.join("golden.jsonl"), golden).unwrap();
    let prompts = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    let cfg = format!(
        r#"corpus = "corpus"
golden = "golden.jsonl"

[sweep]
strategies = ["words"]
sizes = [8, 32]
overlap = 0
top_k = 2
tokenizer = "words"

[llm]
base_url = "{base}/v1"
api_key_env = "CHUNKSWEEP_TEST_NO_SUCH_KEY"
cache_path = "cache.sqlite"

[llm.retry]
base_delay_ms = 5
max_delay_s = 0.05

[llm.defaults]
rpm = 0
max_in_flight = 8
timeout_s = 10.0
max_attempts = 40
input_usd_per_mtok = 2.5
output_usd_per_mtok = 10.0

[judge]
generator_model = "gen"
judge_model = "judge"
concurrency = {concurrency}
prompts = "{}"
"#,
        prompts.display()
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, cfg).unwrap();
    path
}

/// The binary under test; `CHUNKSWEEP_BIN` overrides it (useful when several checkouts share one
/// CARGO_TARGET_DIR, where target/debug/chunksweep is whichever was built last).
fn bin() -> PathBuf {
    std::env::var_os("CHUNKSWEEP_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_chunksweep")))
}

fn run_cmd(cfg: &Path, out: &Path) -> Command {
    let mut c = Command::new(bin());
    c.arg("run")
        .arg("--config")
        .arg(cfg)
        .arg("--out")
        .arg(out)
        .arg("--candidates")
        .arg(format!("{SMALL},{LARGE}"))
        .arg("--quiet")
        .env_remove("OPENAI_BASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Rows without the columns that measure time.
fn untimed(rows: &Rows) -> Vec<Vec<(String, String)>> {
    rows.iter()
        .map(|r| {
            let mut v: Vec<(String, String)> = r
                .iter()
                .filter(|(k, _)| !k.ends_with("_ms") && !k.contains("_ms_"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            v.sort();
            v
        })
        .collect()
}

fn find<'a>(rows: &'a Rows, config: &str, q: &str) -> &'a HashMap<String, String> {
    rows.iter()
        .find(|r| r["config_id"] == config && r["question_id"] == q)
        .unwrap()
}

async fn mock(script: Script) -> MockServer {
    let s = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(script)
        .mount(&s)
        .await;
    s
}

/// The hand-computed outcome of the script (see `script`).
fn assert_scripted_results(out: &Path) {
    let q = read_csv(&out.join("judge_questions.csv"));
    assert_eq!(q.len(), 8);
    // canonical order: candidate, then golden order
    let order: Vec<(String, String)> = q
        .iter()
        .map(|r| (r["config_id"].clone(), r["question_id"].clone()))
        .collect();
    assert_eq!(order[0], (SMALL.to_string(), "q1".to_string()));
    assert_eq!(order[4], (LARGE.to_string(), "q1".to_string()));
    let s3 = find(&q, SMALL, "q3");
    assert_eq!(s3["answer"], "ANSWER q3 small");
    assert_eq!(s3["faithfulness"], "error");
    assert!(
        s3["faithfulness_reason"].contains("no usable JSON"),
        "{}",
        s3["faithfulness_reason"]
    );
    assert_eq!(s3["errors"], "1");
    assert_eq!(s3["calls"], "5"); // generate, faithfulness twice, relevancy, correctness
    assert_eq!(s3["prompt_tokens"], "50");
    assert_eq!(s3["completion_tokens"], "10");
    let cost: f64 = s3["cost_usd"].parse().unwrap();
    assert!(
        (cost - (50.0 * 2.5 + 10.0 * 10.0) / 1e6).abs() < 1e-12,
        "{cost}"
    );
    let s4 = find(&q, SMALL, "q4");
    assert_eq!(
        (s4["relevancy"].as_str(), s4["correctness"].as_str()),
        ("pass", "na")
    );
    assert_eq!(s4["calls"], "4");
    assert_eq!(find(&q, LARGE, "q2")["correctness"], "fail");
    assert_eq!(find(&q, LARGE, "q2")["answer"], "ANSWER q2 large");
    assert!(!find(&q, LARGE, "q1")["retrieved_chunk_ids"].is_empty());

    let j = read_csv(&out.join("judge.csv"));
    assert_eq!(j.len(), 2);
    let (small, large) = (&j[0], &j[1]);
    assert_eq!(small["config_id"], SMALL);
    assert_eq!(small["faithfulness_pass"], "2"); // q1, q4; q2 fail, q3 error
    assert_eq!(small["faithfulness_rate"], "0.5");
    assert_eq!(small["faithfulness_errors"], "1");
    assert_eq!(small["relevancy_pass"], "4");
    assert_eq!(small["correctness_n"], "3");
    assert_eq!(small["correctness_pass"], "2");
    assert_eq!(small["errors"], "1");
    assert_eq!(large["faithfulness_rate"], "1.0");
    assert_eq!(large["correctness_pass"], "2");
    assert_eq!(large["errors"], "0");
    let lo: f64 = small["faithfulness_lo"].parse().unwrap();
    assert!((lo - 0.1500).abs() < 1e-3, "Wilson 2/4 lower bound {lo}");

    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    // 2/4 vs 4/4 on the same 4 questions: 2 discordant pairs, p = 0.5: not significant
    assert!(
        report.contains(&format!("**Decision: `{SMALL}`.**")),
        "{report}"
    );
    assert!(report.contains("do not differ significantly"), "{report}");
    assert!(
        report.contains(&format!(
            "| faithfulness | `{SMALL}` | `{LARGE}` | 4 | 0 | 2 | 0.500 |"
        )),
        "{report}"
    );
    assert!(
        report.contains(&format!("`{SMALL}`: 1")),
        "errors per configuration: {report}"
    );
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(
        manifest.contains("\"faithfulness.md\""),
        "prompt hashes in the manifest"
    );
    // One report: the sweep's decision first, the judge section after it, the figure beside it;
    // regenerating it from the run's files keeps the judge section.
    let decision_at = report.find("## Decision\n").expect("selection section");
    let judge_at = report.find(&format!("**Decision: `{SMALL}`.**")).unwrap();
    assert!(decision_at < judge_at, "{report}");
    assert!(out.join("sweep.svg").exists());
    let status = std::process::Command::new(bin())
        .arg("report")
        .arg(out)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(
        std::fs::read_to_string(out.join("report.md")).unwrap(),
        report
    );
}

/// Requests the scripted run must make: per row 1 generate + verdicts, plus a reminder for each
/// unreadable verdict (small q3 faithfulness, small q4 relevancy): 4+4+5+4 + 4+4+4+3.
const EXPECTED_REQUESTS: usize = 32;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripted_pass_rates_errors_and_a_dry_run() {
    let server = mock(script(Duration::ZERO)).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri(), 2);
    let out = dir.path().join("run");

    let dry = run_cmd(&cfg, &out).arg("--dry-run").output().unwrap();
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    let text = String::from_utf8_lossy(&dry.stdout);
    assert!(text.contains("30 chat calls"), "{text}"); // 8 generate + 8×2 + 6 correctness
    assert!(text.contains("estimated cost $"), "{text}");
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        0,
        "a dry run sends nothing"
    );

    let o = run_cmd(&cfg, &out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        EXPECTED_REQUESTS
    );
    assert_scripted_results(&out);
    let calls = read_csv(&out.join("calls.csv"));
    assert_eq!(calls.len(), EXPECTED_REQUESTS);
    assert_eq!(
        calls.iter().filter(|c| !c["error"].is_empty()).count(),
        3,
        "three unreadable replies"
    );

    // a second run is answered from the cache and the CSVs: only the unreadable replies, which
    // are never cached, could be sent again, and no question is left to run
    let again = run_cmd(&cfg, &out).output().unwrap();
    assert!(again.status.success());
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        EXPECTED_REQUESTS
    );
    assert_scripted_results(&out);

    // a budget below the estimate stops before anything is sent
    let out2 = dir.path().join("run2");
    let capped = run_cmd(&cfg, &out2)
        .args(["--max-cost", "0.00001"])
        .output()
        .unwrap();
    assert_eq!(capped.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&capped.stderr).contains("more than --max-cost"));
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        EXPECTED_REQUESTS
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_storm_loses_nothing() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "0"))
        .up_to_n_times(25)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(script(Duration::ZERO))
        .with_priority(2)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri(), 4);
    let out = dir.path().join("run");
    let o = run_cmd(&cfg, &out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let received = server.received_requests().await.unwrap();
    assert_eq!(received.len(), EXPECTED_REQUESTS + 25);
    assert_scripted_results(&out);
    let calls = read_csv(&out.join("calls.csv"));
    let attempts: usize = calls
        .iter()
        .map(|c| c["attempts"].parse::<usize>().unwrap())
        .sum();
    assert_eq!(
        attempts,
        EXPECTED_REQUESTS + 25,
        "every 429 is accounted to a call"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_midway_then_restart_equals_an_uninterrupted_run() {
    let delay = Duration::from_millis(120);
    // uninterrupted reference run
    let ref_server = mock(script(delay)).await;
    let ref_dir = tempfile::tempdir().unwrap();
    let ref_cfg = fixture(ref_dir.path(), &ref_server.uri(), 1);
    let ref_out = ref_dir.path().join("run");
    let o = run_cmd(&ref_cfg, &ref_out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ref_requests = ref_server.received_requests().await.unwrap().len();
    assert_eq!(ref_requests, EXPECTED_REQUESTS);

    // killed run
    let server = mock(script(delay)).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri(), 1);
    let out = dir.path().join("run");
    let mut child = run_cmd(&cfg, &out).spawn().unwrap();
    let rows_file = out.join("judge_questions.csv");
    let t0 = Instant::now();
    loop {
        let lines = std::fs::read_to_string(&rows_file)
            .map(|s| s.lines().count())
            .unwrap_or(0);
        if lines >= 4 {
            break; // header + 3 finished questions
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "run made no progress"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let at_kill = read_csv(&rows_file).len();
    assert!(
        (3..8).contains(&at_kill),
        "killed midway, with {at_kill} rows written"
    );
    let before = server.received_requests().await.unwrap();

    let o = run_cmd(&cfg, &out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let all = server.received_requests().await.unwrap();

    // the same results as the uninterrupted run, timing columns aside
    for f in ["judge_questions.csv", "judge.csv"] {
        assert_eq!(
            untimed(&read_csv(&out.join(f))),
            untimed(&read_csv(&ref_out.join(f))),
            "{f} differs from the uninterrupted run"
        );
    }
    assert_scripted_results(&out);

    // no finished call sent twice: a body is sent again only if it was in flight at the kill
    // (at most 3 at once with one question at a time) or was an unreadable, uncached verdict
    let mut seen: HashMap<Vec<u8>, usize> = HashMap::new();
    for r in &all {
        *seen.entry(r.body.clone()).or_default() += 1;
    }
    let repeated = seen.values().filter(|&&n| n > 1).count();
    assert!(seen.values().all(|&n| n <= 2));
    assert!(
        repeated <= 3 + 2,
        "{repeated} request bodies were sent twice"
    );
    assert!(
        all.len() - before.len() < ref_requests,
        "the restart redid only the missing work"
    );
    assert!(
        all.len() <= ref_requests + 3 + 2,
        "{} requests in total",
        all.len()
    );
}
