//! The judge's measured accuracy against three scripted judges on an OpenAI-compatible mock:
//! a perfect one (word rules that give the right verdict on these tiny inputs), one that always
//! passes, and a coin flip with a fixed seed. `judge-check` on a labelled set, and a `run` with
//! planted controls and repeats, report the rates computed here by hand; the always-pass judge
//! cannot confirm the pick; `--dry-run` counts the control and repeat calls.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod csv_support;
mod llm_support;

use csv_support::{Rows, read_csv};
use llm_support::{between, bin, chat_body, mock_llm_toml, prompt_text};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

#[derive(Clone, Copy, PartialEq, Debug)]
enum Judge {
    /// faithfulness: every word of the answer is in the documents; relevancy: the answer shares a
    /// word of four letters or more with the question; correctness: every word of the answer is
    /// in the reference.
    Perfect,
    AlwaysPass,
    /// pass when bit 40 of FNV-1a(seed of the request, criterion, answer, 42) is 1 (a low bit
    /// would only be the parity of the bytes).
    Coin,
    /// Always passes, and every reason is the template's placeholder "one sentence".
    Placeholder,
    /// Always passes; the reason, by the first number n of the answer: "one sentence" when n % 3
    /// is 0, "fail" when it is 1, else a reason of its own.
    Parrot,
    /// Always passes, and reports 200,000 prompt tokens a call ($0.50 at the test's prices).
    Expensive,
}

fn words(s: &str) -> BTreeSet<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn fnv(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for b in p.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}

/// The coin's verdict.
fn coin(seed: i64, criterion: &str, answer: &str) -> bool {
    (fnv(&[&seed.to_string(), criterion, answer, "42"]) >> 40) & 1 == 1
}

/// The perfect judge's verdict.
fn perfect(criterion: &str, question: &str, docs: &str, answer: &str, reference: &str) -> bool {
    let a = words(answer);
    match criterion {
        "faithfulness" => a.is_subset(&words(docs)),
        "relevancy" => a
            .intersection(&words(question))
            .any(|w| w.chars().count() >= 4),
        _ => a.is_subset(&words(reference)),
    }
}

/// The text of every `<document>` of a fenced context.
fn documents(fenced: &str) -> Vec<&str> {
    fenced
        .split("<document id=")
        .skip(1)
        .filter_map(|d| between(d, ">\n", "\n</document>"))
        .collect()
}

impl Judge {
    /// This judge's verdict on `criterion` for the request `body` (its prompt text `text`).
    fn says(self, body: &Value, text: &str, criterion: &str) -> bool {
        let field = |name: &str| {
            between(text, &format!("<{name}>\n"), &format!("\n</{name}>")).unwrap_or("")
        };
        let answer = field("answer");
        match self {
            Judge::AlwaysPass | Judge::Placeholder | Judge::Parrot | Judge::Expensive => true,
            Judge::Perfect => perfect(
                criterion,
                field("question"),
                &documents(field("documents")).join("\n"),
                answer,
                field("reference"),
            ),
            Judge::Coin => coin(body["seed"].as_i64().unwrap_or(0), criterion, answer),
        }
    }
}

impl Judge {
    /// This judge's reason for `answer`.
    fn reason(self, answer: &str) -> &'static str {
        let n: Option<u64> = answer
            .split(|c: char| !c.is_ascii_digit())
            .find(|w| !w.is_empty())
            .map(|w| w.parse().unwrap());
        match (self, n.map(|n| n % 3)) {
            (Judge::Placeholder, _) | (Judge::Parrot, Some(0)) => "one sentence",
            (Judge::Parrot, Some(1)) => "fail",
            (Judge::Parrot, _) => "The context states this number.",
            _ => "scripted",
        }
    }

    /// Prompt and completion tokens it reports for a verdict.
    fn usage(self) -> (u64, u64) {
        if self == Judge::Expensive {
            (200_000, 2)
        } else {
            (10, 2)
        }
    }
}

impl Respond for Judge {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let text = prompt_text(req);
        let field = |name: &str| {
            between(&text, &format!("<{name}>\n"), &format!("\n</{name}>")).unwrap_or("")
        };
        if text.contains("Task: answer the question from the documents.") {
            // the generator repeats the first document
            let docs = field("documents");
            return ResponseTemplate::new(200)
                .set_body_json(chat_body(documents(docs)[0], Some((10, 2))));
        }
        if text.contains("Task: grade faithfulness, relevancy and correctness.") {
            // combined: every criterion in one reply (correctness na without a reference)
            let mut reply = json!({"reason": "scripted"});
            for c in ["faithfulness", "relevancy", "correctness"] {
                let pass = self.says(&body, &text, c);
                reply[c] = json!(if pass { "pass" } else { "fail" });
            }
            if field("reference").is_empty() {
                reply["correctness"] = json!("na");
            }
            return ResponseTemplate::new(200)
                .set_body_json(chat_body(&reply.to_string(), Some((10, 2))));
        }
        let criterion = ["faithfulness", "relevancy", "correctness"]
            .into_iter()
            .find(|c| {
                text.contains(&format!("Task: grade {c}"))
                    || (*c == "relevancy" && text.contains("Task: grade answer relevancy"))
            })
            .unwrap_or_else(|| panic!("unknown request: {text}"));
        let pass = self.says(&body, &text, criterion);
        let verdict = if pass { "pass" } else { "fail" };
        let reply = json!({"verdict": verdict, "reason": self.reason(field("answer"))});
        ResponseTemplate::new(200).set_body_json(chat_body(&reply.to_string(), Some(self.usage())))
    }
}

async fn mock(judge: Judge) -> MockServer {
    // A server (and listener) of its own: `MockServer::start()` takes one from wiremock's pool,
    // which may have served an earlier test of this binary whose requests it is still reading
    // (the timed-out calls of `a_server_down_or_failing_…`, on a loaded machine), and a test
    // that counts requests counts those too. Every test in tests/ starts its servers this way.
    let s = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(judge)
        .mount(&s)
        .await;
    s
}

/// The [llm] and [judge] sections for the mock at `base`.
fn llm_config(base: &str, dir: &Path) -> String {
    format!(
        r#"{}
[judge]
generator_model = "gen"
judge_model = "judge"
concurrency = 4
"#,
        mock_llm_toml(
            &format!("{base}/v1"),
            &dir.join("cache.sqlite").display().to_string(),
            300.0,
            4
        )
    )
}

/// What a command did: its exit code and output.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn ran(cmd: &mut Command) -> Ran {
    let o = cmd
        .env_remove("OPENAI_BASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    Ran {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The standard output of a command that must exit `code`.
fn output_exiting(code: i32, cmd: &mut Command) -> String {
    let r = ran(cmd);
    assert_eq!(r.code, Some(code), "{}\n{}", r.stdout, r.stderr);
    r.stdout
}

fn output(cmd: &mut Command) -> String {
    output_exiting(0, cmd)
}

fn num(row: &HashMap<String, String>, col: &str) -> Option<f64> {
    let v = &row[col];
    (!v.is_empty()).then(|| v.parse().unwrap())
}

fn labels_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/judge-labels.jsonl")
}

/// `judge-check` of the 12 labelled items of tests/fixtures/judge-labels.jsonl (4 per criterion,
/// too few for any criterion to show it can tell pass from fail: exit 1).
async fn judge_check(judge: Judge, extra: &[&str]) -> (Rows, String) {
    let (rows, r) = judge_check_of(judge, &labels_path(), 12, extra).await;
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    (rows, r.stdout)
}

/// `judge-check --labels labels` (of `n` items) against a mock of `judge`: judge_check.csv and
/// what the command did, after checking that every item was asked once and written.
async fn judge_check_of(judge: Judge, labels: &Path, n: usize, extra: &[&str]) -> (Rows, Ran) {
    let server = mock(judge).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.toml");
    std::fs::write(&cfg, llm_config(&server.uri(), dir.path())).unwrap();
    let out = dir.path().join("check");
    let r = ran(Command::new(bin())
        .arg("judge-check")
        .arg("--labels")
        .arg(labels)
        .arg("--config")
        .arg(&cfg)
        .arg("--out")
        .arg(&out)
        .args(extra));
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        n,
        "{}",
        r.stderr
    );
    let items = read_csv(&out.join("judge_check_items.csv"));
    assert_eq!(items.len(), n);
    assert_eq!(read_csv(&out.join("calls.csv")).len(), n);
    (read_csv(&out.join("judge_check.csv")), r)
}

fn row<'a>(rows: &'a Rows, c: &str) -> &'a HashMap<String, String> {
    rows.iter().find(|r| r["criterion"] == c).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn judge_check_measures_three_scripted_judges() {
    // perfect: every verdict right, but 2 + 2 items per criterion cannot show that it tells
    // pass from fail (exit 1)
    let (rows, text) = judge_check(Judge::Perfect, &[]).await;
    assert_eq!(rows.len(), 4, "three criteria and all");
    for c in ["faithfulness", "relevancy", "correctness"] {
        let r = row(&rows, c);
        assert_eq!((r["n"].as_str(), r["labelled_pass"].as_str()), ("4", "2"));
        assert_eq!(
            (r["said_pass"].as_str(), r["said_fail"].as_str()),
            ("2", "2")
        );
        assert_eq!(r["verdict"], "cannot tell");
        assert!(
            r["verdict_reason"].contains("(too few labelled items: TNR is 2 of 2 right, and with every one right the bound reaches 0.5 from 4 items"),
            "{}",
            r["verdict_reason"]
        );
        for col in ["balanced_accuracy", "tpr", "tnr", "kappa", "accuracy"] {
            assert_eq!(num(r, col), Some(1.0), "{c} {col}");
        }
        assert_eq!(num(r, "majority_baseline"), Some(0.5));
    }
    let all = row(&rows, "all");
    assert_eq!(all["n"], "12");
    assert_eq!(
        (all["verdict"].as_str(), all["verdict_reason"].as_str()),
        ("", "")
    );
    assert_eq!(num(all, "balanced_accuracy"), Some(1.0));
    // Wilson 95% of 6/6: [0.6097, 1]; balanced accuracy's MOVER lower bound
    // 1 − √2 · (1 − 0.6097) / 2 = 0.7240; κ is 1 in every resample: no interval
    assert!((num(all, "tpr_lo").unwrap() - 0.6097).abs() < 1e-4);
    assert!((num(all, "balanced_accuracy_lo").unwrap() - 0.7240).abs() < 1e-4);
    assert_eq!((num(all, "kappa"), num(all, "kappa_lo")), (Some(1.0), None));
    assert!(text.contains("all"), "{text}");
    assert!(text.contains("1.00 [0.72, 1.00]"), "{text}");
    assert!(text.contains("1.00, no interval"), "{text}");
    assert!(!text.contains("[1.00, 1.00]"), "{text}");
    assert!(
        text.contains("No criterion can tell pass from fail"),
        "{text}"
    );

    // always pass: TPR 1, TNR 0, balanced accuracy 0.5, κ 0, accuracy = the baseline
    let (rows, _) = judge_check(Judge::AlwaysPass, &[]).await;
    for c in ["faithfulness", "relevancy", "correctness", "all"] {
        let r = row(&rows, c);
        assert_eq!(num(r, "tpr"), Some(1.0), "{c}");
        assert_eq!(num(r, "tnr"), Some(0.0), "{c}");
        assert_eq!(num(r, "tnr_lo"), Some(0.0), "{c}");
        assert_eq!(num(r, "balanced_accuracy"), Some(0.5), "{c}");
        assert_eq!(num(r, "kappa"), Some(0.0), "{c}");
        assert_eq!(num(r, "accuracy"), Some(0.5), "{c}");
        assert_eq!(num(r, "majority_baseline"), Some(0.5), "{c}");
    }

    // coin flip, seed 7 (the default): count its verdicts on the labelled items by hand
    let items: Vec<Value> = std::fs::read_to_string(labels_path())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (rows, _) = judge_check(Judge::Coin, &[]).await;
    // the coin's verdicts on the 12 items, counted once by hand: faithfulness passes one of
    // its two pass items and both fail items (TPR 1/2, TNR 0/2); relevancy one of each (1/2,
    // 1/2); correctness one pass item and no fail item (1/2, 2/2)
    for (c, tpr, tnr) in [
        ("faithfulness", 0.5, 0.0),
        ("relevancy", 0.5, 0.5),
        ("correctness", 0.5, 1.0),
    ] {
        let r = row(&rows, c);
        assert_eq!(
            (num(r, "tpr"), num(r, "tnr")),
            (Some(tpr), Some(tnr)),
            "{c}"
        );
        assert_eq!(num(r, "balanced_accuracy"), Some((tpr + tnr) / 2.0), "{c}");
    }
    for c in ["faithfulness", "relevancy", "correctness"] {
        let mine: Vec<(bool, bool)> = items
            .iter()
            .filter(|i| i["criterion"] == c)
            .map(|i| {
                (
                    i["label"] == "pass",
                    coin(7, c, i["answer"].as_str().unwrap()),
                )
            })
            .collect();
        let count = |t: bool, s: bool| mine.iter().filter(|p| **p == (t, s)).count() as f64;
        let (tp, fn_, tn, fp) = (
            count(true, true),
            count(true, false),
            count(false, false),
            count(false, true),
        );
        let tpr = tp / (tp + fn_);
        let tnr = tn / (tn + fp);
        eprintln!("coin, judge-check, {c}: tp {tp} fn {fn_} tn {tn} fp {fp}");
        let r = row(&rows, c);
        assert_eq!(num(r, "tpr"), Some(tpr), "{c}");
        assert_eq!(num(r, "tnr"), Some(tnr), "{c}");
        assert_eq!(num(r, "balanced_accuracy"), Some((tpr + tnr) / 2.0), "{c}");
        let n = 4.0;
        let po = (tp + tn) / n;
        let (pa, pb) = ((tp + fn_) / n, (tp + fp) / n);
        let pe = pa * pb + (1.0 - pa) * (1.0 - pb);
        let kappa = num(r, "kappa");
        if pe < 1.0 {
            assert!(
                (kappa.unwrap() - (po - pe) / (1.0 - pe)).abs() < 1e-12,
                "{c}"
            );
        } else {
            assert_eq!(kappa, None, "{c}");
        }
    }
}

/// Six one-sentence documents with words of their own; each question retrieves its own.
const DOCS: [(&str, &str, &str); 6] = [
    (
        "q1",
        "How many processor cores does Larkspur need?",
        "Larkspur needs 2 processor cores.",
    ),
    (
        "q2",
        "How long do deleted files remain recoverable?",
        "Deleted files remain recoverable for 30 days.",
    ),
    (
        "q3",
        "When do invoices arrive?",
        "Invoices arrive on day 1 of each month.",
    ),
    (
        "q4",
        "Which uploads use multipart transfer?",
        "Uploads above 5 gigabytes use multipart transfer.",
    ),
    (
        "q5",
        "How often do backups run?",
        "Backups run every 6 hours at night.",
    ),
    (
        "q6",
        "Which port does the container listen on?",
        "The container listens on port 8080.",
    ),
];

/// The documents with their one number increased by one (the `perturbed` control).
const PERTURBED: [&str; 6] = [
    "Larkspur needs 3 processor cores.",
    "Deleted files remain recoverable for 31 days.",
    "Invoices arrive on day 2 of each month.",
    "Uploads above 6 gigabytes use multipart transfer.",
    "Backups run every 7 hours at night.",
    "The container listens on port 8081.",
];

const CANDIDATE: &str = "words-64-o0-none-bm25-k1";

fn run_fixture(dir: &Path, base: &str) -> PathBuf {
    std::fs::create_dir_all(dir.join("corpus")).unwrap();
    let mut golden = String::new();
    for (i, (id, q, doc)) in DOCS.iter().enumerate() {
        std::fs::write(dir.join(format!("corpus/d{i}.md")), doc).unwrap();
        golden += &(json!({"id": id, "question": q, "evidence": [doc], "answer": doc}).to_string()
            + "\n");
    }
    std::fs::write(dir.join("golden.jsonl"), golden).unwrap();
    let cfg = format!(
        "corpus = \"corpus\"\ngolden = \"golden.jsonl\"\n\n[sweep]\nstrategies = [\"words\"]\nsizes = [64]\noverlap = 0\ntop_k = 1\ntokenizer = \"words\"\n{}",
        llm_config(base, dir)
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, cfg).unwrap();
    path
}

fn run(cfg: &Path, out: &Path, extra: &[&str]) -> String {
    output(
        Command::new(bin())
            .arg("run")
            .arg("--config")
            .arg(cfg)
            .arg("--out")
            .arg(out)
            .arg("--candidates")
            .arg(CANDIDATE)
            .args(extra),
    )
}

/// The answer a check row graded, rebuilt from the fixture.
fn checked_answer(r: &HashMap<String, String>) -> &'static str {
    let at = |id: &str| DOCS.iter().position(|d| d.0 == id).unwrap();
    match r["kind"].as_str() {
        "perturbed" => PERTURBED[at(&r["item_id"])],
        "other_answer" | "other_reference" => DOCS[at(&r["other_id"])].2,
        _ => DOCS[at(&r["item_id"])].2,
    }
}

/// Counts of (expected, verdict) over the rows of `c` that are controls (`repeat` false) or
/// repeats.
fn counts(rows: &Rows, c: &str, repeat: bool) -> [usize; 4] {
    let mine = rows
        .iter()
        .filter(|r| r["criterion"] == c && (r["kind"] == "repeat") == repeat);
    let mut n = [0; 4]; // tp, fn, tn, fp
    for r in mine {
        let i = match (r["expected"].as_str(), r["verdict"].as_str()) {
            ("pass", "pass") => 0,
            ("pass", "fail") => 1,
            ("fail", "fail") => 2,
            ("fail", "pass") => 3,
            other => panic!("{other:?}"),
        };
        n[i] += 1;
    }
    n
}

async fn judged_run(judge: Judge) -> (Rows, Rows, String, String) {
    judged_run_in(judge, &[], 24).await
}

/// A run with `extra` flags whose answers take `answer_calls` calls.
async fn judged_run_in(
    judge: Judge,
    extra: &[&str],
    answer_calls: usize,
) -> (Rows, Rows, String, String) {
    let server = mock(judge).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = run_fixture(dir.path(), &server.uri());
    let out = dir.path().join("run");
    let text = run(&cfg, &out, extra);
    let checks = read_csv(&out.join("judge_checks.csv"));
    let judge_csv = read_csv(&out.join("judge.csv"));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    // every control and repeat call is in calls.csv beside those of the answers
    assert_eq!(
        read_csv(&out.join("calls.csv")).len(),
        answer_calls + checks.len(),
        "{judge:?}"
    );
    (checks, judge_csv, report, text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_counts_the_control_and_repeat_calls() {
    let server = mock(Judge::Perfect).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = run_fixture(dir.path(), &server.uri());
    let text = run(&cfg, &dir.path().join("run"), &["--dry-run"]);
    // 7 control kinds × max(ceil(0.1 × 6), 5) = 35; repeats 5 answers × 3 criteria = 15;
    // answers 6 × (generate + 3 verdicts) = 24
    assert!(
        text.contains("with 35 planted control call(s) and 15 repeat call(s)"),
        "{text}"
    );
    assert!(text.contains("74 chat calls"), "{text}");
    assert_eq!(server.received_requests().await.unwrap().len(), 0);

    // controls off: the answers' calls and the repeats only
    let cfg_text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        cfg_text.replace("[judge]\n", "[judge]\ncontrols = false\n"),
    )
    .unwrap();
    let text = run(&cfg, &dir.path().join("run2"), &["--dry-run"]);
    assert!(
        text.contains("with 0 planted control call(s) and 15 repeat call(s)"),
        "{text}"
    );
    assert!(text.contains("39 chat calls"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_perfect_judge_confirms_with_every_control_right() {
    let (checks, judge_csv, report, _) = judged_run(Judge::Perfect).await;
    assert_eq!(checks.len(), 35 + 15);
    // faithfulness: 10 planted failures (5 other_context, 5 perturbed), 5 planted passes;
    // relevancy and correctness: 5 and 5
    assert_eq!(counts(&checks, "faithfulness", false), [5, 0, 10, 0]);
    assert_eq!(counts(&checks, "relevancy", false), [5, 0, 5, 0]);
    assert_eq!(counts(&checks, "correctness", false), [5, 0, 5, 0]);
    // the repeats agree 5 of 5; every first verdict was a pass, so κ is undefined
    for c in ["faithfulness", "relevancy", "correctness"] {
        assert_eq!(counts(&checks, c, true), [5, 0, 0, 0]);
    }
    let r = &judge_csv[0];
    assert_eq!(r["faithfulness_rate"], "1.0");
    assert_eq!(num(r, "faithfulness_control_tnr"), Some(1.0));
    assert_eq!(num(r, "faithfulness_control_tpr"), Some(1.0));
    // Wilson 95% of 10/10: lower bound 0.7225
    assert!((num(r, "faithfulness_control_tnr_lo").unwrap() - 0.7225).abs() < 1e-4);
    assert_eq!(num(r, "relevancy_repeat_agreement"), Some(1.0));
    assert_eq!(num(r, "relevancy_repeat_kappa"), None);
    assert!(
        report.contains("| faithfulness | 1.00 [0.72, 1.00] of 10 | 1.00 [0.57, 1.00] of 5 | 1.00 | 1.00 [0.57, 1.00] of 5 | n/a | 0 | yes |"),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "The judge confirms the selection's pick `{CANDIDATE}`."
        )),
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_always_pass_judge_cannot_confirm_the_pick() {
    let (checks, judge_csv, report, text) = judged_run(Judge::AlwaysPass).await;
    assert_eq!(counts(&checks, "faithfulness", false), [5, 0, 0, 10]);
    assert_eq!(counts(&checks, "relevancy", false), [5, 0, 0, 5]);
    assert_eq!(counts(&checks, "correctness", false), [5, 0, 0, 5]);
    let r = &judge_csv[0];
    assert_eq!(
        r["faithfulness_rate"], "1.0",
        "the pass rate alone looks perfect"
    );
    assert_eq!(num(r, "faithfulness_control_tnr"), Some(0.0));
    assert_eq!(num(r, "faithfulness_control_tnr_lo"), Some(0.0));
    assert!(!report.contains("The judge confirms"), "{report}");
    assert!(
        report.contains(&format!(
            "**Decision: `{CANDIDATE}`, not confirmed on faithfulness, relevancy, correctness"
        )),
        "{report}"
    );
    assert!(
        report.contains("The judge's faithfulness verdicts cannot confirm the pick: it failed 0 of 10 planted failures (true-negative rate 0.00 [0.00, 0.28])"),
        "{report}"
    );
    // the command line prints the same section
    assert!(
        text.contains("The judge's relevancy verdicts cannot confirm the pick"),
        "{text}"
    );
    assert!(
        report.contains("| relevancy | 0.00 [0.00, 0.43] of 5 | 1.00 [0.57, 1.00] of 5 | 0.50 |"),
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coin_flip_judge_is_measured_as_one() {
    let (checks, judge_csv, report, _) = judged_run(Judge::Coin).await;
    // every verdict is the coin on the graded answer (seed 7; repeats seed 8)
    for r in &checks {
        let seed = if r["kind"] == "repeat" { 8 } else { 7 };
        let want = coin(seed, &r["criterion"], checked_answer(r));
        assert_eq!(r["verdict"] == "pass", want, "{r:?}");
    }
    let passes = checks.iter().filter(|r| r["verdict"] == "pass").count();
    assert!(
        passes > 0 && passes < checks.len(),
        "a coin gives both verdicts: {passes} of {}",
        checks.len()
    );
    let jr = &judge_csv[0];
    for c in ["faithfulness", "relevancy", "correctness"] {
        let [tp, fn_, tn, fp] = counts(&checks, c, false).map(|x| x as f64);
        assert_eq!(
            num(jr, &format!("{c}_control_tnr")),
            Some(tn / (tn + fp)),
            "{c}"
        );
        assert_eq!(
            num(jr, &format!("{c}_control_tpr")),
            Some(tp / (tp + fn_)),
            "{c}"
        );
        eprintln!(
            "coin, run, {c}: controls (tp, fn, tn, fp) {:?}, repeats (first, second) pp pf ff fp {:?}",
            counts(&checks, c, false),
            counts(&checks, c, true)
        );
        let [a, b, d, e] = counts(&checks, c, true).map(|x| x as f64);
        let n = a + b + d + e;
        assert_eq!(
            num(jr, &format!("{c}_repeat_agreement")),
            Some((a + d) / n),
            "{c}"
        );
        // κ of the repeats against the first verdicts, by hand
        let (p_first, p_second) = ((a + b) / n, (a + e) / n);
        let pe = p_first * p_second + (1.0 - p_first) * (1.0 - p_second);
        let kappa = num(jr, &format!("{c}_repeat_kappa"));
        if pe < 1.0 {
            assert!(
                (kappa.unwrap() - ((a + d) / n - pe) / (1.0 - pe)).abs() < 1e-12,
                "{c}"
            );
        }
    }
    // by hand from the counts above: (criterion, TNR, TPR, repeat agreement, repeat κ)
    // faithfulness: 3 of 10 planted failures failed, 4 of 5 planted passes passed; repeats
    // (pass, pass) 3, (pass, fail) 1, (fail, fail) 1: po 0.8, pe 0.8·0.6 + 0.2·0.4 = 0.56
    for (c, tnr, tpr, agree, kappa) in [
        ("faithfulness", 0.3, 0.8, 0.8, (0.8 - 0.56) / 0.44),
        ("relevancy", 0.8, 0.4, 0.8, (0.8 - 0.48) / 0.52),
        ("correctness", 0.4, 0.6, 0.4, (0.4 - 0.48) / 0.52),
    ] {
        assert_eq!(num(jr, &format!("{c}_control_tnr")), Some(tnr), "{c}");
        assert_eq!(num(jr, &format!("{c}_control_tpr")), Some(tpr), "{c}");
        assert_eq!(
            num(jr, &format!("{c}_repeat_agreement")),
            Some(agree),
            "{c}"
        );
        let k = num(jr, &format!("{c}_repeat_kappa")).unwrap();
        assert!((k - kappa).abs() < 1e-12, "{c}: {k}");
    }
    // every TNR's lower bound is under 0.5 (and correctness' κ is negative): a coin confirms
    // nothing
    assert!(
        report.contains(&format!(
            "**Decision: `{CANDIDATE}`, not confirmed on faithfulness, relevancy, correctness"
        )),
        "{report}"
    );
    assert!(report.contains("Cohen's κ -0.15, under 0.4"), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn judge_check_reads_labels_added_to_judge_questions_csv() {
    let server = mock(Judge::Perfect).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = run_fixture(dir.path(), &server.uri());
    let out = dir.path().join("run");
    run(&cfg, &out, &[]);
    // a reviewer labels faithfulness of every row; the answers of q4 to q6 are first replaced
    // with a changed fact (so those labels are fail), and relevancy of q1 is labelled too
    let rows = read_csv(&out.join("judge_questions.csv"));
    let mut w = csv::Writer::from_path(dir.path().join("labelled.csv")).unwrap();
    w.write_record([
        "config_id",
        "question_id",
        "answer",
        "human_label_faithfulness",
        "human_label_relevancy",
    ])
    .unwrap();
    for (i, r) in rows.iter().enumerate() {
        let (answer, label) = if i < 3 {
            (r["answer"].as_str(), "pass")
        } else {
            (PERTURBED[i], "fail")
        };
        let relevancy = if i == 0 { "pass" } else { "" };
        w.write_record([&r["config_id"], &r["question_id"], answer, label, relevancy])
            .unwrap();
    }
    w.flush().unwrap();
    let check = dir.path().join("check");
    let judge_check = || {
        let mut c = Command::new(bin());
        c.arg("judge-check")
            .arg("--labels")
            .arg(dir.path().join("labelled.csv"))
            .arg("--config")
            .arg(&cfg)
            .arg("--out")
            .arg(&check);
        c
    };
    // the dry run rebuilds every row's context and sends nothing
    let sent = server.received_requests().await.unwrap().len();
    let text = output(judge_check().arg("--dry-run"));
    assert!(text.contains("dry run: 7 labelled item(s)"), "{text}");
    assert_eq!(server.received_requests().await.unwrap().len(), sent);
    assert!(!check.exists(), "a dry run writes nothing");
    // 3 + 3 faithfulness labels, all right, cannot show a lower bound of 0.5: exit 1
    let text = output_exiting(1, &mut judge_check());
    // the run asked these verdicts already (the last three as its perturbed controls): all 7
    // come from the cache, and are this judge-check's calls
    assert_eq!(server.received_requests().await.unwrap().len(), sent);
    assert_eq!(read_csv(&check.join("calls.csv")).len(), 7);
    let table = read_csv(&check.join("judge_check.csv"));
    let f = row(&table, "faithfulness");
    assert_eq!((f["n"].as_str(), f["labelled_pass"].as_str()), ("6", "3"));
    assert_eq!(num(f, "balanced_accuracy"), Some(1.0), "{text}");
    assert_eq!(f["verdict"], "cannot tell");
    let r = row(&table, "relevancy");
    assert_eq!((r["n"].as_str(), num(r, "tpr")), ("1", Some(1.0)));
    assert_eq!(num(r, "tnr"), None, "no item labelled fail");
    assert_eq!(
        r["verdict_reason"],
        "no item labelled fail got a pass or fail verdict, so whether it catches failures was not measured"
    );
    assert_eq!(row(&table, "all")["n"], "7");
    // each row was judged with its own question and retrieved context, rebuilt from the run
    let items = read_csv(&check.join("judge_check_items.csv"));
    assert!(items.iter().all(|i| i["config_id"] == CANDIDATE));
    assert_eq!(items[0]["item_id"], "q1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn combined_mode_asks_once_per_answer_and_is_measured_the_same_way() {
    // judge-check in combined mode: the same labelled items, one call each, the same figures
    let (rows, text) = judge_check(Judge::Perfect, &["--judge-mode", "combined"]).await;
    assert!(text.contains("(combined)"), "{text}");
    for c in ["faithfulness", "relevancy", "correctness"] {
        let r = row(&rows, c);
        assert_eq!(r["judge_mode"], "combined");
        assert_eq!(num(r, "balanced_accuracy"), Some(1.0), "{c}");
    }
    let (rows, _) = judge_check(Judge::AlwaysPass, &["--judge-mode", "combined"]).await;
    assert_eq!(num(row(&rows, "all"), "tnr"), Some(0.0));

    // the dry run: 6 answers × (generate + 1 combined verdict) + 35 controls + 15 repeats
    let server = mock(Judge::Perfect).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = run_fixture(dir.path(), &server.uri());
    let text = run(
        &cfg,
        &dir.path().join("dry"),
        &["--judge-mode", "combined", "--dry-run"],
    );
    assert!(text.contains("62 chat calls"), "{text}");

    // the run: every answer's three verdicts from one call, and the controls still all right
    let (checks, judge_csv, report, _) =
        judged_run_in(Judge::Perfect, &["--judge-mode", "combined"], 12).await;
    assert_eq!(counts(&checks, "faithfulness", false), [5, 0, 10, 0]);
    assert_eq!(counts(&checks, "correctness", false), [5, 0, 5, 0]);
    let r = &judge_csv[0];
    for c in ["faithfulness", "relevancy", "correctness"] {
        assert_eq!(r[&format!("{c}_rate")], "1.0", "{c}");
    }
    assert!(
        report.contains(&format!(
            "The judge confirms the selection's pick `{CANDIDATE}`."
        )),
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_check_dry_run_counts_one_call_per_item_and_sends_nothing() {
    let server = mock(Judge::AlwaysPass).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.toml");
    std::fs::write(&cfg, llm_config(&server.uri(), dir.path())).unwrap();
    let text = output(
        Command::new(bin())
            .arg("judge-check")
            .arg("--labels")
            .arg(labels_path())
            .arg("--config")
            .arg(&cfg)
            .arg("--dry-run"),
    );
    assert!(text.contains("dry run: 12 labelled item(s)"), "{text}");
    // Nothing is generated, so the line names the judge only.
    assert!(text.contains("; judge "), "{text}");
    assert!(!text.contains("generator"), "{text}");
    assert!(text.contains("; 12 chat calls, "), "{text}");
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[test]
fn a_labelled_judge_questions_csv_without_its_config_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("judge_questions.csv");
    std::fs::write(
        &csv,
        "config_id,question_id,answer,human_label_faithfulness\nA,q1,x,pass\n",
    )
    .unwrap();
    let o = Command::new(bin())
        .arg("judge-check")
        .arg("--labels")
        .arg(&csv)
        .arg("--dry-run")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("judge_questions.csv needs --config <the run's config file>"),
        "{stderr}"
    );
}

#[test]
fn a_judge_check_that_reaches_no_server_is_unfinished_not_a_bad_judge() {
    // Nothing listens on port 9: every call fails in transport, no reply from the judge, so no
    // criterion is judged "cannot tell": each is not measured, and the command exits 4
    // (unfinished), the label counts still those of the file (2 pass, 2 fail per criterion).
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.toml");
    let text = llm_config("http://127.0.0.1:9", dir.path())
        .replace("max_attempts = 4", "max_attempts = 1");
    std::fs::write(&cfg, text).unwrap();
    let out = dir.path().join("check");
    let r = ran(&mut judge_check_cmd(&cfg, &out));
    assert_eq!(r.code, Some(4), "{}\n{}", r.stdout, r.stderr);
    let rows = read_csv(&out.join("judge_check.csv"));
    let all = row(&rows, "all");
    assert_eq!(
        (
            all["n"].as_str(),
            all["labelled_pass"].as_str(),
            all["labelled_fail"].as_str(),
            all["errors"].as_str(),
            all["unfinished"].as_str()
        ),
        ("0", "6", "6", "12", "12")
    );
    for c in ["faithfulness", "relevancy", "correctness"] {
        let f = row(&rows, c);
        assert_eq!(
            (
                f["verdict"].as_str(),
                f["verdict_reason"].as_str(),
                f["labelled_pass"].as_str(),
                f["labelled_fail"].as_str()
            ),
            (
                "not measured",
                "4 items unfinished (rerun the same command)",
                "2",
                "2"
            )
        );
        assert!(
            r.stdout.contains(&format!(
                "{c}: not measured: 4 items unfinished (rerun the same command)."
            )),
            "{}",
            r.stdout
        );
    }
    assert!(!r.stdout.contains("No criterion can tell"), "{}", r.stdout);
    assert!(!r.stdout.contains("cannot tell"), "{}", r.stdout);
    assert!(
        r.stdout.contains("12 item(s) unfinished (no reply from the judge): nothing is concluded from them; rerun the same command (exit 4)."),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("12 verdict(s) were errors"),
        "{}",
        r.stderr
    );
}

/// A labelled set of 16 faithfulness items, 8 labelled pass and 8 fail: the context states a
/// number n (2 to 9), a pass answer repeats it, a fail answer says n + 1. Enough for a judge that
/// gets every one right to clear a lower bound of 0.5 on both rates (Wilson 8/8: 0.68).
fn sixteen_labels(dir: &Path) -> PathBuf {
    let mut text = String::new();
    for i in 0..8 {
        let n = i + 2;
        let context = format!("Larkspur needs {n} cores.");
        for (id, answer, label) in [
            (
                format!("p{i}"),
                format!("Larkspur needs {n} cores."),
                "pass",
            ),
            (
                format!("f{i}"),
                format!("Larkspur needs {} cores.", n + 1),
                "fail",
            ),
        ] {
            let item = json!({"id": id, "criterion": "faithfulness",
                "question": "How many cores does Larkspur need?", "context": context,
                "answer": answer, "label": label});
            text += &(item.to_string() + "\n");
        }
    }
    let path = dir.join("sixteen.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn judge_check_says_whether_the_judge_can_tell_pass_from_fail() {
    let dir = tempfile::tempdir().unwrap();
    let labels = sixteen_labels(dir.path());

    // a perfect judge can tell: exit 0
    let (rows, r) = judge_check_of(Judge::Perfect, &labels, 16, &[]).await;
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let f = row(&rows, "faithfulness");
    assert_eq!(f["verdict"], "can tell pass from fail");
    assert!(
        r.stdout.contains("faithfulness: can tell pass from fail — it caught 8 of 8 failures (TNR 1.00 [0.68, 1.00]) and passed 8 of 8 passes (TPR 1.00 [0.68, 1.00]); both lower bounds are at least 0.5."),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Positive class: pass."), "{}", r.stdout);
    assert!(!r.stdout.contains("parroted"), "{}", r.stdout);
    // the estimate is announced before the first call
    assert!(
        r.stderr.contains("judging 16 labelled item(s): server "),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("; 16 chat calls, "), "{}", r.stderr);

    // an always-pass judge cannot: exit 1, and no interval collapses to a point
    let (rows, r) = judge_check_of(Judge::AlwaysPass, &labels, 16, &[]).await;
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    let f = row(&rows, "faithfulness");
    assert_eq!(f["verdict"], "cannot tell");
    assert_eq!(f["same_verdict"], "pass");
    assert_eq!(
        (f["labelled_pass"].as_str(), f["labelled_fail"].as_str()),
        ("8", "8")
    );
    assert_eq!(
        (f["said_pass"].as_str(), f["said_fail"].as_str()),
        ("16", "0")
    );
    let text = &r.stdout;
    assert!(
        text.contains("faithfulness: cannot tell — every verdict was pass: it caught 0 of 8 failures (TNR 0.00 [0.00, 0.32]) and passed 8 of 8 passes (TPR 1.00 [0.68, 1.00]); the lower bound of the TNR is under 0.5."),
        "{text}"
    );
    // balanced accuracy from the rates' Wilson intervals (MOVER): [(1 − 0.3244) / 2,
    // (1 + 0.3244) / 2]; κ is 0 in every resample: printed without an interval
    assert!(text.contains("0.50 [0.34, 0.66]"), "{text}");
    assert!(text.contains("0.00, no interval"), "{text}");
    assert_eq!((num(f, "kappa"), num(f, "kappa_lo")), (Some(0.0), None));
    for degenerate in ["[0.50, 0.50]", "[0.00, 0.00]", "[1.00, 1.00]"] {
        assert!(!text.contains(degenerate), "{degenerate} in {text}");
    }
    assert!(
        text.contains("No criterion can tell pass from fail"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parroted_reasons_are_flagged_with_their_share() {
    let dir = tempfile::tempdir().unwrap();
    let labels = sixteen_labels(dir.path());
    // reasons by the answer's number n (pass answers 2–9, fail answers 3–10): "one sentence"
    // for n = 3, 6, 9 (6 answers), "fail" for n = 4, 7, 10 (5), their own for the 5 others;
    // every verdict is pass, so the 5 "fail" reasons also contradict their verdict
    let (rows, r) = judge_check_of(Judge::Parrot, &labels, 16, &[]).await;
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    let f = row(&rows, "faithfulness");
    assert_eq!(
        (
            f["parroted"].as_str(),
            f["parroted_template"].as_str(),
            f["parroted_contradicting"].as_str()
        ),
        ("11", "11", "5")
    );
    assert_eq!(num(f, "parroted_share"), Some(11.0 / 16.0));
    assert!(
        r.stdout.contains("warning: parroted replies: 11 of 16 faithfulness reasons (69 %) repeat the prompt template's text or contradict their verdict (11 repeat the template, 5 contradict): the judge may be echoing its instructions rather than grading; see judge_check_items.csv."),
        "{}",
        r.stdout
    );

    // a judge whose every reason is the placeholder: 16 of 16
    let (rows, r) = judge_check_of(Judge::Placeholder, &labels, 16, &[]).await;
    assert_eq!(num(row(&rows, "faithfulness"), "parroted_share"), Some(1.0));
    assert!(
        r.stdout
            .contains("16 of 16 faithfulness reasons (100 %) repeat the prompt template's text"),
        "{}",
        r.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_trust_table_flags_parroted_replies() {
    // every control and repeat reason is the placeholder: 15 controls and 5 repeats of
    // faithfulness, 10 and 5 of relevancy and of correctness
    let (_, _, report, text) = judged_run(Judge::Placeholder).await;
    for (c, n) in [("faithfulness", 20), ("relevancy", 15), ("correctness", 15)] {
        let want = format!(
            "**Parroted replies:** {n} of {n} {c} reasons (100 %) repeat the prompt template's text or contradict their verdict ({n} repeat the template, 0 contradict): the judge may be echoing its instructions rather than grading."
        );
        assert!(report.contains(&want), "{report}");
        assert!(text.contains(&want), "{text}");
    }
    // reasons of their own are not flagged
    let (_, _, report, _) = judged_run(Judge::AlwaysPass).await;
    assert!(!report.contains("Parroted replies"), "{report}");
}

/// A config for the mock at `server` in `dir`, with `edit` applied to its text.
fn check_config(server: &MockServer, dir: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let cfg = dir.join("config.toml");
    std::fs::write(&cfg, edit(llm_config(&server.uri(), dir))).unwrap();
    cfg
}

fn judge_check_cmd(cfg: &Path, out: &Path) -> Command {
    let mut c = Command::new(bin());
    c.arg("judge-check")
        .arg("--labels")
        .arg(labels_path())
        .arg("--config")
        .arg(cfg)
        .arg("--out")
        .arg(out);
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn judge_check_max_cost_refuses_before_sending_and_stops_when_spent() {
    // refused: 12 items at about $0.0018 each (prompt and 128 completion tokens) pass $0.001
    let server = mock(Judge::AlwaysPass).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = check_config(&server, dir.path(), |t| t);
    let out = dir.path().join("check");
    let r = ran(judge_check_cmd(&cfg, &out).args(["--max-cost", "0.001"]));
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "more than --max-cost $0.0010; nothing was sent (raise --max-cost, or judge fewer labelled items)"
        ),
        "{}",
        r.stderr
    );
    assert!(server.received_requests().await.unwrap().is_empty());
    assert!(!out.join("calls.csv").exists());

    // stopped: the estimate fits $0.10, but each call reports 200,000 prompt tokens ($0.50); one
    // item at a time, so after the first nothing more is started: exit 4, 11 items not asked
    let server = mock(Judge::Expensive).await;
    let cfg = check_config(&server, dir.path(), |t| {
        t.replace("concurrency = 4", "concurrency = 1")
    });
    let out = dir.path().join("check2");
    let r = ran(judge_check_cmd(&cfg, &out).args(["--max-cost", "0.10"]));
    assert_eq!(r.code, Some(4), "{}\n{}", r.stdout, r.stderr);
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    assert!(
        r.stderr
            .contains("incomplete: 11 item(s) not asked: the spend would have passed --max-cost"),
        "{}",
        r.stderr
    );
    let items = read_csv(&out.join("judge_check_items.csv"));
    let unasked: Vec<_> = items
        .iter()
        .filter(|i| i["reason"].starts_with("not started: --max-cost $0.1000"))
        .collect();
    assert_eq!(unasked.len(), 11);
    assert!(unasked.iter().all(|i| i["verdict"] == "error"));
    assert_eq!(read_csv(&out.join("calls.csv")).len(), 1);
    assert_eq!(
        row(&read_csv(&out.join("judge_check.csv")), "all")["errors"],
        "11"
    );

    // an unpriced judge model under a budget is refused too
    let server = mock(Judge::AlwaysPass).await;
    let cfg = check_config(&server, dir.path(), |t| {
        t.replace("input_usd_per_mtok = 2.5\n", "")
            .replace("output_usd_per_mtok = 10.0\n", "")
    });
    let r = ran(judge_check_cmd(&cfg, &dir.path().join("check3")).args(["--max-cost", "1"]));
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("needs prices to hold"), "{}", r.stderr);
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_judge_check_into_the_same_folder_has_its_own_calls_csv() {
    let server = mock(Judge::AlwaysPass).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = check_config(&server, dir.path(), |t| t);
    let out = dir.path().join("check");
    output_exiting(1, &mut judge_check_cmd(&cfg, &out));
    let first = read_csv(&out.join("calls.csv"));
    assert_eq!(first.len(), 12);
    assert!(first.iter().all(|c| c["cache_hit"] == "false"));
    // again into the same folder: the answers come from the cache, and calls.csv lists this
    // run's 12 calls, not 24
    output_exiting(1, &mut judge_check_cmd(&cfg, &out));
    assert_eq!(server.received_requests().await.unwrap().len(), 12);
    let second = read_csv(&out.join("calls.csv"));
    assert_eq!(second.len(), 12);
    assert!(second.iter().all(|c| c["cache_hit"] == "true"));
    assert_eq!(read_csv(&out.join("judge_check_items.csv")).len(), 12);
    assert!(
        !out.join(".chunksweep.lock").exists(),
        "the lock goes with the run"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn judge_check_out_must_be_a_folder_of_its_own() {
    let server = mock(Judge::AlwaysPass).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = check_config(&server, dir.path(), |t| t);
    // a file
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let r = ran(&mut judge_check_cmd(&cfg, &file));
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("is a file, not a folder"), "{}", r.stderr);
    // a folder with someone else's file, and a run's folder (its calls.csv must not be
    // replaced): refused, naming what is in the way
    for (name, foreign) in [("notes", "notes.txt"), ("run", "sweep.csv")] {
        let folder = dir.path().join(name);
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join(foreign), "x").unwrap();
        std::fs::write(folder.join("calls.csv"), "kept").unwrap();
        let r = ran(&mut judge_check_cmd(&cfg, &folder));
        assert_eq!(r.code, Some(2), "{}", r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "holds files that are not judge-check's ({foreign})"
            )),
            "{}",
            r.stderr
        );
        assert_eq!(
            std::fs::read_to_string(folder.join("calls.csv")).unwrap(),
            "kept"
        );
    }
    assert!(server.received_requests().await.unwrap().is_empty());
}

/// `judge-check --labels labels` with `cfg` into `out`.
fn judge_check_labels(cfg: &Path, labels: &Path, out: &Path) -> Ran {
    ran(Command::new(bin())
        .arg("judge-check")
        .arg("--labels")
        .arg(labels)
        .arg("--config")
        .arg(cfg)
        .arg("--out")
        .arg(out))
}

/// How many times the request's answer appears in its prompt: 2 for the sixteen labels' pass
/// items (the context states it), 1 for their fail items.
fn answer_repeats(req: &Request) -> usize {
    let text = prompt_text(req);
    let answer = between(&text, "<answer>\n", "\n</answer>")
        .unwrap_or("")
        .to_string();
    text.matches(&answer).count()
}

/// A pass verdict in a reply of the judge.
fn pass_reply() -> ResponseTemplate {
    let reply = json!({"verdict": "pass", "reason": "scripted"});
    ResponseTemplate::new(200).set_body_json(chat_body(&reply.to_string(), Some((10, 2))))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_down_or_failing_leaves_items_unfinished_not_cannot_tell() {
    let dir = tempfile::tempdir().unwrap();
    let labels = sixteen_labels(dir.path());

    // HTTP 500 on every call after retries, and timeouts: not measured, exit 4, label counts
    // of the file (8 pass, 8 fail)
    let failing = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&failing)
        .await;
    let hanging = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(pass_reply().set_delay(std::time::Duration::from_secs(5)))
        .mount(&hanging)
        .await;
    for (name, server, edit) in [
        ("500", &failing, ("max_attempts = 4", "max_attempts = 2")),
        (
            "timeout",
            &hanging,
            ("timeout_s = 300.0", "timeout_s = 0.5"),
        ),
    ] {
        let cfg = check_config(server, dir.path(), |t| {
            t.replace(edit.0, edit.1)
                .replace("max_attempts = 4", "max_attempts = 2")
                .replace("concurrency = 4", "concurrency = 16")
                .replace("max_in_flight = 8", "max_in_flight = 16")
        });
        let out = dir.path().join(name);
        let r = judge_check_labels(&cfg, &labels, &out);
        assert_eq!(r.code, Some(4), "{name}: {}\n{}", r.stdout, r.stderr);
        let f = row(&read_csv(&out.join("judge_check.csv")), "faithfulness").clone();
        assert_eq!(
            (
                f["verdict"].as_str(),
                f["verdict_reason"].as_str(),
                f["n"].as_str(),
                f["labelled_pass"].as_str(),
                f["labelled_fail"].as_str(),
                f["errors"].as_str(),
                f["unfinished"].as_str()
            ),
            (
                "not measured",
                "16 items unfinished (rerun the same command)",
                "0",
                "8",
                "8",
                "16",
                "16"
            ),
            "{name}"
        );
        assert!(
            r.stdout.contains(
                "faithfulness: not measured: 16 items unfinished (rerun the same command)."
            ),
            "{name}: {}",
            r.stdout
        );
        assert!(
            r.stdout.contains("16 item(s) unfinished (no reply from the judge): nothing is concluded from them; rerun the same command (exit 4)."),
            "{name}: {}",
            r.stdout
        );
        assert!(
            !r.stdout.contains("No criterion can tell"),
            "{name}: {}",
            r.stdout
        );
    }

    // the judge passes every item labelled pass; the calls for items labelled fail fail with
    // HTTP 500: the TPR is measured (8 of 8), the TNR has no data, so not measured (8 items
    // unfinished), and the counts are the file's
    let half = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(|req: &Request| {
            if answer_repeats(req) == 2 {
                pass_reply()
            } else {
                ResponseTemplate::new(500)
            }
        })
        .mount(&half)
        .await;
    let cfg = check_config(&half, dir.path(), |t| {
        t.replace("max_attempts = 4", "max_attempts = 2")
    });
    let out = dir.path().join("half");
    let r = judge_check_labels(&cfg, &labels, &out);
    assert_eq!(r.code, Some(4), "{}\n{}", r.stdout, r.stderr);
    let rows = read_csv(&out.join("judge_check.csv"));
    let f = row(&rows, "faithfulness");
    assert_eq!(
        (
            f["verdict"].as_str(),
            f["verdict_reason"].as_str(),
            f["n"].as_str(),
            f["labelled_pass"].as_str(),
            f["labelled_fail"].as_str(),
            f["said_pass"].as_str(),
            f["unfinished"].as_str()
        ),
        (
            "not measured",
            "8 items unfinished (rerun the same command)",
            "8",
            "8",
            "8",
            "8",
            "8"
        )
    );
    assert_eq!((num(f, "tpr"), num(f, "tnr")), (Some(1.0), None));
    assert!(!r.stdout.contains("No criterion can tell"), "{}", r.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_closing_line_names_the_exit_code_the_process_returns() {
    // an always-pass judge whose replies to two items labelled fail are unreadable (twice, with
    // the format reminder): those are the judge's replies, not unfinished items, so the
    // criterion cannot tell (0 of 6 failures caught), and the process exits 4 for the errors:
    // the closing line says so
    let dir = tempfile::tempdir().unwrap();
    let labels = sixteen_labels(dir.path());
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(|req: &Request| {
            let text = prompt_text(req);
            if text.contains("<answer>\nLarkspur needs 3 cores.\n</answer>")
                && text.contains("Larkspur needs 2 cores.")
                || text.contains("<answer>\nLarkspur needs 4 cores.\n</answer>")
                    && text.contains("Larkspur needs 3 cores.")
            {
                ResponseTemplate::new(200).set_body_json(chat_body("no idea", Some((10, 2))))
            } else {
                pass_reply()
            }
        })
        .mount(&server)
        .await;
    let cfg = check_config(&server, dir.path(), |t| t);
    let out = dir.path().join("check");
    let r = judge_check_labels(&cfg, &labels, &out);
    assert_eq!(r.code, Some(4), "{}\n{}", r.stdout, r.stderr);
    let rows = read_csv(&out.join("judge_check.csv"));
    let f = row(&rows, "faithfulness");
    assert_eq!(
        (
            f["verdict"].as_str(),
            f["n"].as_str(),
            f["labelled_fail"].as_str(),
            f["errors"].as_str(),
            f["unfinished"].as_str()
        ),
        ("cannot tell", "14", "8", "2", "0")
    );
    assert!(
        r.stdout.contains("No criterion can tell pass from fail: this judge's verdicts on these criteria cannot confirm a chunk size (exit 4)."),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("(exit 1)"), "{}", r.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_refuses_a_judge_check_folder() {
    // judge-check's folder holds its own calls.csv: a run into it would mix both commands' calls
    let server = mock(Judge::AlwaysPass).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = check_config(&server, dir.path(), |t| t);
    let out = dir.path().join("check");
    output_exiting(1, &mut judge_check_cmd(&cfg, &out));
    let calls = std::fs::read_to_string(out.join("calls.csv")).unwrap();
    let cfg = run_fixture(&dir.path().join("run"), &server.uri());
    for command in ["run", "sweep"] {
        let r = ran(Command::new(bin())
            .arg(command)
            .arg("--config")
            .arg(&cfg)
            .arg("--out")
            .arg(&out));
        assert_eq!(r.code, Some(2), "{command}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "--out {} holds files that are not a chunksweep run's (judge_check.csv, judge_check_items.csv): a chunksweep run writes only into an empty folder or one holding its own earlier outputs; give another --out, or move them away",
                out.display()
            )),
            "{command}: {}",
            r.stderr
        );
    }
    assert_eq!(
        std::fs::read_to_string(out.join("calls.csv")).unwrap(),
        calls
    );
    assert!(!out.join("manifest.json").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_says_the_real_run_would_be_refused_by_max_cost() {
    let server = mock(Judge::AlwaysPass).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = run_fixture(dir.path(), &server.uri());
    let text = run(
        &cfg,
        &dir.path().join("run"),
        &["--dry-run", "--max-cost", "0.001"],
    );
    assert!(
        text.contains("dry run: the real run would be refused by --max-cost: the judge stage is estimated at $0.1776, and $0.0000 is already spent in this folder: more than --max-cost $0.0010; the sweep spent $0.0000 of it; the judge stage sent nothing (raise --max-cost, or use fewer candidates or questions)"),
        "{text}"
    );
    let text = run(
        &cfg,
        &dir.path().join("run2"),
        &["--dry-run", "--max-cost", "100"],
    );
    assert!(!text.contains("would be refused"), "{text}");

    let cfg = check_config(&server, dir.path(), |t| t);
    let check = dir.path().join("check");
    let text = output(judge_check_cmd(&cfg, &check).args(["--dry-run", "--max-cost", "0.001"]));
    assert!(
        text.contains("dry run: the real run would be refused by --max-cost: judge-check is estimated at $0.0226: more than --max-cost $0.0010; nothing was sent (raise --max-cost, or judge fewer labelled items)"),
        "{text}"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}
