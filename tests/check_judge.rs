//! `chunksweep check --judge` on the handbook (datasets/handbook, 40 questions with evidence spans
//! and reference answers): a baseline made by `chunksweep run` (markdown at 256 tokens, k = 3)
//! against a rule-based OpenAI-compatible mock, then the gate run against it.
//!
//! The mock ([`Handbook`]) plays the generator and a judge that is actually good, by rules over the
//! golden set; every rule reads only the prompt's blocks (`<documents>`, `<question>`,
//! `<answer>`, `<reference>`). Texts are compared as *words*: lower-case runs of letters and
//! digits, a `.` or `,` between two digits kept inside the number (`2.5`, `1,750`); *content
//! words* are the distinct words less a few function words ([`FUNCTION_WORDS`]). The fence lines
//! of the documents (`<document id="…">`, `</document>`) are not part of their text.
//! - generator: finds the golden question by its text; when the documents hold any of its
//!   evidence texts (lower case, white space collapsed), it answers with those texts, joined by
//!   a space, in golden-set order; else with [`REFUSAL`].
//! - faithfulness: pass for [`REFUSAL`] when the documents hold none of the question's evidence
//!   texts (the prompt's rule: a refusal passes only if the documents indeed lack the answer),
//!   or when every word of the answer is a word of the documents; else fail.
//! - relevancy: fail for [`REFUSAL`]; pass when more than half of the answer's content words are
//!   words of the question's evidence texts or reference answer; else fail.
//! - correctness: fail for [`REFUSAL`]; pass when more than half of the reference's content
//!   words are words of the answer; else fail.
//!
//! Each verdict comes as `{"verdict": …, "reason": …}` with a reason that counts words (never
//! the template's text, which the parroting check would flag). The planted failures get the
//! right verdict from these rules: a changed number or an added claim brings a word the
//! documents do not hold, another question's answer or reference shares few content words with
//! this question's. On the handbook's baseline the judge fails 9 of 10 planted faithfulness
//! failures (the tenth is a refusal against another question's context, which indeed lacks the
//! answer) and 5 of 5 each of relevancy and correctness: trusted on all three. It is strict on
//! faithfulness: reference answers that say a word their evidence does not fail (3 of 5). The
//! lenient variant ([`JudgeKind::AlwaysPass`]) passes every verdict: a judge that cannot be
//! trusted.
//!
//! The check tests (`check --judge`): the unchanged chunker answered from the cache, nothing
//! worse; fixed at 32 tokens, relevancy and correctness regress (the generator refuses 34 of the
//! 40 questions instead of 6); a baseline without planted controls, or judged by the lenient
//! judge, cannot gate; a `sweep` folder has no judged answer (exit 2); a changed chunker while
//! the server answers HTTP 500 to everything leaves the judge's work unfinished (exit 4), and
//! the same command against the healthy server finishes it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

mod check_support;
mod csv_support;
mod llm_support;

use check_support::{check, chunksweep, root};
use csv_support::{Rows, read_csv};
use llm_support::{between, chat_body, mock_llm_toml, prompt_text};

/// The baseline's pick.
const PICK: &str = "markdown-256-o38-none-bm25-k3";
/// The generator's answer when the documents hold no evidence text of the question.
const REFUSAL: &str = "The documents do not say.";
/// Words left out of the content words.
const FUNCTION_WORDS: [&str; 24] = [
    "a", "an", "the", "of", "to", "in", "on", "and", "or", "is", "are", "be", "it", "its", "for",
    "by", "as", "at", "with", "from", "that", "this", "you", "can",
];
/// The built-in criteria, in report order.
const CRITERIA: [&str; 3] = ["faithfulness", "relevancy", "correctness"];

/// Lower case, white space collapsed to single spaces.
fn normal(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The words of `s` (see the module documentation).
fn words(s: &str) -> Vec<String> {
    let cs: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in cs.iter().enumerate() {
        let in_number = matches!(c, '.' | ',')
            && i > 0
            && cs[i - 1].is_ascii_digit()
            && cs.get(i + 1).is_some_and(char::is_ascii_digit);
        if c.is_alphanumeric() || in_number {
            cur.extend(c.to_lowercase());
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The distinct words of `s` less [`FUNCTION_WORDS`].
fn content_words(s: &str) -> HashSet<String> {
    words(s)
        .into_iter()
        .filter(|w| !FUNCTION_WORDS.contains(&w.as_str()))
        .collect()
}

/// The text of fenced documents without their fence lines.
fn documents_text(docs: &str) -> String {
    docs.lines()
        .filter(|l| !(l.starts_with("<document id=") || *l == "</document>"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A golden question's evidence texts and reference answer.
struct Entry {
    evidence: Vec<String>,
    reference: String,
}

/// The handbook's golden set by question text.
fn golden() -> HashMap<String, Entry> {
    let text = std::fs::read_to_string(root().join("datasets/handbook-golden.jsonl")).unwrap();
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let evidence = v["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["text"].as_str().unwrap().to_string())
                .collect();
            let entry = Entry {
                evidence,
                reference: v["answer"].as_str().unwrap_or("").to_string(),
            };
            (v["question"].as_str().unwrap().to_string(), entry)
        })
        .collect()
}

/// Which judge the mock plays.
#[derive(Clone, Copy, PartialEq)]
enum JudgeKind {
    /// The rules of the module documentation.
    Good,
    /// Every verdict a pass.
    AlwaysPass,
}

/// The rule-based generator and judge (see the module documentation).
#[derive(Clone)]
struct Handbook {
    golden: Arc<HashMap<String, Entry>>,
    judge: JudgeKind,
    /// While set, every request gets HTTP 500 (a server that is down for a while).
    down: Arc<AtomicBool>,
}

/// A verdict reply.
fn verdict(pass: bool, reason: String) -> String {
    json!({"verdict": if pass { "pass" } else { "fail" }, "reason": reason}).to_string()
}

impl Handbook {
    fn entry(&self, question: &str) -> &Entry {
        self.golden
            .get(question)
            .unwrap_or_else(|| panic!("not a golden question: {question}"))
    }

    /// The evidence texts of `question` that `docs` holds, in golden-set order.
    fn evidence_in(&self, question: &str, docs: &str) -> Vec<&str> {
        let docs = normal(docs);
        self.entry(question)
            .evidence
            .iter()
            .filter(|e| docs.contains(&normal(e)))
            .map(String::as_str)
            .collect()
    }

    fn generate(&self, question: &str, docs: &str) -> String {
        let found = self.evidence_in(question, docs);
        if found.is_empty() {
            REFUSAL.to_string()
        } else {
            found.join(" ")
        }
    }

    fn faithfulness(&self, question: &str, docs: &str, answer: &str) -> String {
        if answer == REFUSAL {
            let held = self.evidence_in(question, docs).len();
            return verdict(
                held == 0,
                format!(
                    "the answer declines and the documents hold {held} evidence passage(s) for the question"
                ),
            );
        }
        let known: HashSet<String> = words(&documents_text(docs)).into_iter().collect();
        let all = words(answer);
        let missing: Vec<&String> = all.iter().filter(|w| !known.contains(*w)).collect();
        verdict(
            missing.is_empty(),
            format!(
                "{} of {} answer words are missing from the documents",
                missing.len(),
                all.len()
            ),
        )
    }

    fn relevancy(&self, question: &str, answer: &str) -> String {
        if answer == REFUSAL {
            return verdict(false, "the reply declines to answer".into());
        }
        let e = self.entry(question);
        let topic: HashSet<String> = words(&format!("{} {}", e.evidence.join(" "), e.reference))
            .into_iter()
            .collect();
        let said = content_words(answer);
        let on_topic = said.iter().filter(|w| topic.contains(*w)).count();
        verdict(
            2 * on_topic > said.len(),
            format!(
                "{on_topic} of {} content words match what was asked about",
                said.len()
            ),
        )
    }

    fn correctness(&self, reference: &str, answer: &str) -> String {
        if answer == REFUSAL {
            return verdict(false, "the reply gives no value at all".into());
        }
        let given: HashSet<String> = words(answer).into_iter().collect();
        let expected = content_words(reference);
        let found = expected.iter().filter(|w| given.contains(*w)).count();
        verdict(
            2 * found > expected.len(),
            format!(
                "{found} of {} reference content words are given",
                expected.len()
            ),
        )
    }

    fn reply(&self, text: &str) -> String {
        let block = |name: &str| {
            between(text, &format!("<{name}>\n"), &format!("\n</{name}>"))
                .unwrap_or_else(|| panic!("no <{name}> block in {text}"))
        };
        let question = block("question");
        if text.contains("Task: answer the question from the documents.") {
            return self.generate(question, block("documents"));
        }
        if self.judge == JudgeKind::AlwaysPass {
            return verdict(true, "looks fine to me overall".into());
        }
        if text.contains("Task: grade faithfulness.") {
            self.faithfulness(question, block("documents"), block("answer"))
        } else if text.contains("Task: grade answer relevancy.") {
            self.relevancy(question, block("answer"))
        } else if text.contains("Task: grade correctness against the reference.") {
            self.correctness(block("reference"), block("answer"))
        } else {
            panic!("unknown request: {text}")
        }
    }
}

impl Respond for Handbook {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        if self.down.load(Ordering::SeqCst) {
            return ResponseTemplate::new(500);
        }
        let reply = self.reply(&prompt_text(req));
        ResponseTemplate::new(200).set_body_json(chat_body(&reply, Some((100, 20))))
    }
}

/// A mock server playing `judge`, and the switch that makes it answer HTTP 500 to everything
/// while set. (A scoped failing mock is not used: wiremock 0.6 sorts its mocks by priority in
/// place, so dropping a scoped mock's guard can switch off another mock.)
async fn switchable_server(judge: JudgeKind) -> (MockServer, Arc<AtomicBool>) {
    let s = MockServer::builder().start().await;
    let down = Arc::new(AtomicBool::new(false));
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Handbook {
            golden: Arc::new(golden()),
            judge,
            down: Arc::clone(&down),
        })
        .mount(&s)
        .await;
    (s, down)
}

/// A mock server playing `judge`.
async fn server(judge: JudgeKind) -> MockServer {
    switchable_server(judge).await.0
}

/// Requests `server` received so far.
async fn requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap().len()
}

/// Writes `dir/config.toml` for the mock at `base`: the handbook (absolute paths), the cache in
/// `dir`, fast retries (3 attempts), prices, the two models, and `judge_extra` lines appended to
/// `[judge]`.
fn config(dir: &Path, base: &str, judge_extra: &str) -> PathBuf {
    let root = root();
    let cfg = format!(
        r#"corpus = "{corpus}"
golden = "{golden}"
{llm}
[judge]
generator_model = "gen"
judge_model = "judge"
concurrency = 8
{judge_extra}
"#,
        corpus = root.join("datasets/handbook").display(),
        golden = root.join("datasets/handbook-golden.jsonl").display(),
        llm = mock_llm_toml(
            &format!("{base}/v1"),
            &dir.join("cache.sqlite").display().to_string(),
            300.0,
            3
        ),
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, cfg).unwrap();
    path
}

/// `chunksweep run` of the handbook (markdown at 256 tokens, k = 3) with the config `cfg` into
/// `dir/name`; asserts exit 0 and returns the folder.
fn run_baseline(cfg: &Path, dir: &Path, name: &str) -> PathBuf {
    let out = dir.join(name);
    let o = chunksweep()
        .arg("run")
        .arg("--config")
        .arg(cfg)
        .arg("--out")
        .arg(&out)
        .args(["--strategies", "markdown", "--sizes", "256", "--k", "3"])
        .arg("--quiet")
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// A baseline judged by the mock at `base`, in `dir/name` (its cache and config beside it).
fn baseline(dir: &Path, name: &str, base: &str, judge_extra: &str) -> PathBuf {
    let home = dir.join(format!("{name}-home"));
    std::fs::create_dir_all(&home).unwrap();
    let cfg = config(&home, base, judge_extra);
    run_baseline(&cfg, dir, name)
}

/// The judge's figures on one criterion's planted controls (judge_checks.csv).
#[derive(Debug, PartialEq)]
struct Controls {
    /// Planted failures failed, of those with a pass or fail.
    negatives: (usize, usize),
    /// Planted passes passed, of those with a pass or fail.
    positives: (usize, usize),
    /// Repeats that gave the first verdict again, of those with a pass or fail.
    repeats: (usize, usize),
}

fn controls(checks: &Rows, criterion: &str) -> Controls {
    let count = |f: &dyn Fn(&HashMap<String, String>) -> bool| {
        let mine: Vec<_> = checks
            .iter()
            .filter(|r| r["criterion"] == criterion && f(r))
            .filter(|r| r["verdict"] == "pass" || r["verdict"] == "fail")
            .collect();
        (
            mine.iter()
                .filter(|r| r["verdict"] == r["expected"])
                .count(),
            mine.len(),
        )
    };
    Controls {
        negatives: count(&|r| r["kind"] != "repeat" && r["expected"] == "fail"),
        positives: count(&|r| r["kind"] != "repeat" && r["expected"] == "pass"),
        repeats: count(&|r| r["kind"] == "repeat"),
    }
}

/// The report's trust table row of `criterion`.
fn trust_row<'a>(report: &'a str, criterion: &str) -> &'a str {
    report
        .lines()
        .find(|l| l.starts_with(&format!("| {criterion} | ")) && l.contains(" of "))
        .unwrap_or_else(|| panic!("no trust row for {criterion}: {report}"))
}

/// Pass rate of each criterion in judge_questions.csv's rows of `config`: (pass, judged).
fn pass_rates(rows: &Rows, config: &str) -> Vec<(usize, usize)> {
    CRITERIA
        .iter()
        .map(|c| {
            let mine: Vec<_> = rows
                .iter()
                .filter(|r| r["config_id"] == config)
                .map(|r| r[*c].as_str())
                .filter(|v| *v == "pass" || *v == "fail")
                .collect();
            (mine.iter().filter(|v| **v == "pass").count(), mine.len())
        })
        .collect()
}

/// The baseline's judged questions whose retrieved chunks hold no evidence text: the generator
/// refuses them (span recall 0.850 at markdown 256, k = 3: 34 of 40 questions found).
const REFUSED: [&str; 6] = ["q-001", "q-006", "q-009", "q-011", "q-019", "q-023"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_good_judge_is_trusted_on_every_criterion_and_an_always_pass_judge_on_none() {
    let good = server(JudgeKind::Good).await;
    let lenient = server(JudgeKind::AlwaysPass).await;
    let dir = tempfile::tempdir().unwrap();

    let base = baseline(dir.path(), "good", &good.uri(), "");
    let questions = read_csv(&base.join("judge_questions.csv"));
    assert_eq!(questions.len(), 40);
    let refused: Vec<&str> = questions
        .iter()
        .filter(|r| r["answer"] == REFUSAL)
        .map(|r| r["question_id"].as_str())
        .collect();
    assert_eq!(refused, REFUSED);
    // faithfulness passes every answer (evidence texts, and refusals whose documents lack the
    // evidence); relevancy fails the 6 refusals; correctness fails them and 5 evidence texts that
    // state the reference in other words (q-016, q-020, q-024, q-033, q-040)
    assert_eq!(pass_rates(&questions, PICK), [(40, 40), (34, 40), (29, 40)]);
    // 40 answers, 40 × 3 verdicts, 35 planted controls (5 per kind of 7, perturbed and
    // added_claim sharing 5) and 15 repeats
    let checks = read_csv(&base.join("judge_checks.csv"));
    assert_eq!(requests(&good).await, 40 + 120 + 35 + 15);
    // the one planted failure passed: another question's context for a refusal (q-011 against
    // q-012's), which does lack the answer; 3 reference answers say a word their evidence does
    // not ("Yes", "versions", "words"), which this strict judge fails
    let expected = [((9, 10), (2, 5)), ((5, 5), (5, 5)), ((5, 5), (5, 5))];
    let report = std::fs::read_to_string(base.join("report.md")).unwrap();
    for (c, (negatives, positives)) in CRITERIA.into_iter().zip(expected) {
        let got = controls(&checks, c);
        assert_eq!(
            got,
            Controls {
                negatives,
                positives,
                repeats: (5, 5)
            },
            "{c}"
        );
        let row = trust_row(&report, c);
        assert!(row.ends_with("| yes |"), "{row}");
        assert!(
            !report.contains(&format!("The judge's {c} verdicts cannot confirm")),
            "{report}"
        );
    }
    assert!(
        trust_row(&report, "faithfulness").contains("| 0.90 [0.60, 0.98] of 10 |"),
        "{report}"
    );
    assert!(!report.contains("cannot be trusted"), "{report}");

    let base = baseline(dir.path(), "lenient", &lenient.uri(), "");
    let report = std::fs::read_to_string(base.join("report.md")).unwrap();
    let checks = read_csv(&base.join("judge_checks.csv"));
    for c in CRITERIA {
        let planted = if c == "faithfulness" { 10 } else { 5 };
        assert_eq!(controls(&checks, c).negatives, (0, planted), "{c}");
        let row = trust_row(&report, c);
        assert!(row.ends_with("| **no** |"), "{row}");
        assert!(
            report.contains(&format!(
                "The judge's {c} verdicts cannot confirm the pick: it failed 0 of {planted} planted failures"
            )),
            "{report}"
        );
    }
    assert!(
        report.contains("not confirmed on faithfulness, relevancy, correctness: the judge's verdicts there cannot be trusted"),
        "{report}"
    );
}

/// The chunker under test of the regression: fixed at 32 tokens (span recall 0.138).
const FIXED_32: &str = "fixed-32-o4-none-bm25-k3";
/// A changed chunker that keeps the baseline's span recall (0.850): markdown at 512 tokens.
const MARKDOWN_512: &str = "markdown-512-o76-none-bm25-k3";

/// check.json's judge entry of `criterion`.
fn criterion<'a>(json: &'a Value, criterion: &str) -> &'a Value {
    json["judge"]["criteria"]
        .as_array()
        .unwrap_or_else(|| panic!("no judge.criteria in {json}"))
        .iter()
        .find(|c| c["criterion"] == criterion)
        .unwrap_or_else(|| panic!("no {criterion} in {json}"))
}

/// check.md's judge section: from its heading to the next `## ` heading or the end.
fn judge_section(md: &str) -> &str {
    let at = md
        .find("## Answer quality (judge)")
        .unwrap_or_else(|| panic!("no judge section: {md}"));
    let rest = &md[at..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 4);
    &rest[..end]
}

/// Paired counts of `criterion` between the baseline's rows of `PICK` and the candidate's rows
/// of `config` (judge_questions.csv), by question: (n, worse, better) over the questions both
/// have a pass or fail for.
fn paired(base: &Rows, candidate: &Rows, config: &str, criterion: &str) -> (u64, u64, u64) {
    let outcome = |v: &str| match v {
        "pass" => Some(true),
        "fail" => Some(false),
        _ => None,
    };
    let mut counts = (0, 0, 0);
    for b in base.iter().filter(|r| r["config_id"] == PICK) {
        let Some(c) = candidate
            .iter()
            .find(|r| r["config_id"] == config && r["question_id"] == b["question_id"])
        else {
            continue;
        };
        if let (Some(was), Some(now)) = (outcome(&b[criterion]), outcome(&c[criterion])) {
            counts.0 += 1;
            counts.1 += u64::from(was && !now);
            counts.2 += u64::from(!was && now);
        }
    }
    counts
}

/// One-sided exact McNemar p-value: P(X ≥ worse) for X ~ Binomial(worse + better, 1/2).
fn mcnemar(worse: u64, better: u64) -> f64 {
    let n = worse + better;
    let choose = |k: u64| (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64);
    (worse..=n).map(choose).sum::<f64>() / 2f64.powi(n as i32)
}

/// Asserts that every criterion of `json` cannot gate, with a reason that `reason_ok` accepts,
/// and that the judge does not fail the check.
fn assert_cannot_gate(json: &Value, reason_ok: impl Fn(&str) -> bool) {
    for c in CRITERIA {
        let v = criterion(json, c);
        assert_eq!(v["outcome"], "cannot_gate", "{c}: {json}");
        let reason = v["cannot_gate"]
            .as_str()
            .unwrap_or_else(|| panic!("{c}: {json}"));
        assert!(reason_ok(reason), "{c}: {reason}");
    }
    assert_eq!(json["judge"]["fails"], false, "{json}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_judge_against_a_trusted_baseline() {
    let (good, down) = switchable_server(JudgeKind::Good).await;
    let dir = tempfile::tempdir().unwrap();
    let base = baseline(dir.path(), "base", &good.uri(), "");
    let base_rows = read_csv(&base.join("judge_questions.csv"));

    // (a) the unchanged chunker: every call answered from the cache, nothing worse or better
    let sent = requests(&good).await;
    let out = dir.path().join("same");
    let (code, stdout, stderr, json) = check(&base, &out, &["--judge"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        requests(&good).await,
        sent,
        "no new request: all from the cache"
    );
    for c in CRITERIA {
        let v = criterion(&json, c);
        assert_eq!(v["outcome"], "not_worse", "{c}: {json}");
        assert_eq!(v["cannot_gate"], Value::Null, "{c}: {json}");
        assert_eq!(
            (&v["n"], &v["worse"], &v["better"]),
            (&json!(40), &json!(0), &json!(0)),
            "{c}"
        );
        assert_eq!(v["errors"], 0, "{c}");
    }
    assert_eq!(json["judge"]["fails"], false);
    assert_eq!(json["judge"]["unfinished"], 0);
    assert_eq!(
        (
            &json["judge"]["generator_model"],
            &json["judge"]["judge_model"]
        ),
        (&json!("gen"), &json!("judge"))
    );
    assert_eq!(json["judge"]["questions"], 40);
    let md = std::fs::read_to_string(out.join("check.md")).unwrap();
    for c in CRITERIA {
        assert!(judge_section(&md).contains(c), "{md}");
    }

    // (f) a changed chunker (markdown 512, the same span recall) while the server answers 500
    // to everything: the judge's work is unfinished, exit 4
    down.store(true, Ordering::SeqCst);
    let sent = requests(&good).await;
    let out = dir.path().join("512");
    let flags = ["--sizes", "512", "--judge"];
    let (code, stdout, stderr, json) = check(&base, &out, &flags);
    assert_eq!(code, 4, "{stdout}{stderr}");
    assert!(requests(&good).await > sent, "new calls were needed");
    assert!(json["judge"]["unfinished"].as_u64().unwrap() > 0, "{json}");
    assert_eq!(json["judge"]["fails"], false, "{json}");
    assert!(
        CRITERIA
            .iter()
            .all(|c| criterion(&json, c)["outcome"] == "unfinished"),
        "{json}"
    );
    // the same command once the server is healthy: finished; the answers are the same evidence
    // texts (markdown 512 finds the same 34 questions), so nothing is worse or better
    down.store(false, Ordering::SeqCst);
    let (code, stdout, stderr, json) = check(&base, &out, &flags);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(json["judge"]["unfinished"], 0, "{json}");
    let rows = read_csv(&out.join("judge_questions.csv"));
    assert_eq!(
        rows.iter()
            .filter(|r| r["config_id"] == MARKDOWN_512)
            .count(),
        40
    );
    for c in CRITERIA {
        assert_eq!(
            paired(&base_rows, &rows, MARKDOWN_512, c),
            (40, 0, 0),
            "{c}"
        );
        let v = criterion(&json, c);
        assert_eq!(v["outcome"], "not_worse", "{c}: {json}");
        assert_eq!(
            (&v["n"], &v["worse"], &v["better"]),
            (&json!(40), &json!(0), &json!(0)),
            "{c}"
        );
    }

    // (b) fixed at 32 tokens: most answers become refusals; relevancy and correctness regress
    let out = dir.path().join("fixed");
    let (code, stdout, stderr, json) = check(
        &base,
        &out,
        &[
            "--strategies",
            "fixed",
            "--sizes",
            "32",
            "--judge",
            "--junit",
            dir.path().join("fixed-junit.xml").to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert_eq!(json["judge"]["fails"], true, "{json}");
    assert_eq!(json["judge"]["unfinished"], 0, "{json}");
    let rows = read_csv(&out.join("judge_questions.csv"));
    for c in CRITERIA {
        let v = criterion(&json, c);
        let (n, worse, better) = paired(&base_rows, &rows, FIXED_32, c);
        assert_eq!(
            (&v["n"], &v["worse"], &v["better"]),
            (&json!(n), &json!(worse), &json!(better)),
            "{c}"
        );
        assert_eq!(v["errors"], 0, "{c}");
        let p = v["p_value"].as_f64().unwrap();
        assert!((p - mcnemar(worse, better)).abs() < 1e-9, "{c}: {p}");
        // fixed 32 finds the evidence of 6 questions: relevancy passes 6, correctness 5; an
        // evidence text and a refusal against documents that lack the evidence both stay
        // faithful
        let (outcome, want) = match c {
            "faithfulness" => ("not_worse", (40, 0, 0)),
            "relevancy" => ("regression", (40, 28, 0)),
            _ => ("regression", (40, 24, 0)),
        };
        assert_eq!((n, worse, better), want, "{c}");
        assert_eq!(v["outcome"], outcome, "{c}: {json}");
        if outcome == "regression" {
            assert!(worse >= 5 && p < 0.05, "{c}: {v}");
        }
    }
    let md = std::fs::read_to_string(out.join("check.md")).unwrap();
    let section = judge_section(&md);
    for row in [
        "| faithfulness | not significantly worse | 40/40 → 40/40 | 0 | 0 | p = 1.000 | 0 | 0 → 0 |",
        "| relevancy | ❌ regression | 34/40 → 6/40 | 28 | 0 | p < 0.001 | 0 | 0 → 0 |",
        "| correctness | ❌ regression | 29/40 → 5/40 | 24 | 0 | p < 0.001 | 0 | 0 → 0 |",
    ] {
        assert!(section.contains(row), "{row}\n{section}");
    }
    assert!(
        md.contains("**answer quality: regression in relevancy, correctness"),
        "{md}"
    );
    let junit = std::fs::read_to_string(dir.path().join("fixed-junit.xml")).unwrap();
    assert!(
        junit.contains("tests=\"2\" failures=\"2\"") && junit.contains("name=\"answer quality: "),
        "{junit}"
    );

    // a rerun into that folder with another chunker would resume from answers to other
    // contexts: refused before anything is sent
    let sent = requests(&good).await;
    let md_before = std::fs::read(out.join("check.md")).unwrap();
    let (code, stdout, stderr, _) = check(
        &base,
        &out,
        &["--strategies", "fixed", "--sizes", "64", "--judge"],
    );
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("holds judged answers made from other inputs (the chunker differs)"),
        "{stderr}"
    );
    assert_eq!(requests(&good).await, sent);
    assert_eq!(
        std::fs::read(out.join("check.md")).unwrap(),
        md_before,
        "refused before anything is written"
    );

    // a judge stage that stops (here: the estimate passes --max-cost 0) leaves the retrieval
    // verdict in check.md, says the answers were not judged, and fails the JUnit case
    let stopped = dir.path().join("stopped");
    let junit_path = dir.path().join("stopped-junit.xml");
    let (code, stdout, stderr, json) = check(
        &base,
        &stopped,
        &[
            "--sizes",
            "128",
            "--judge",
            "--max-cost",
            "0",
            "--junit",
            junit_path.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert_eq!(requests(&good).await, sent, "nothing sent");
    let md = std::fs::read_to_string(stopped.join("check.md")).unwrap();
    assert!(
        md.starts_with("# chunksweep check: retrieval ")
            && md
                .lines()
                .next()
                .unwrap()
                .ends_with("· answer quality ⛔ not judged (the judge stage stopped)"),
        "{md}"
    );
    assert!(md.contains("**answer quality: not judged: "), "{md}");
    assert!(
        json["judge_error"].as_str().unwrap().contains("max-cost"),
        "{json}"
    );
    assert_eq!(json["verdict"]["n"], 40);
    let junit = std::fs::read_to_string(&junit_path).unwrap();
    // markdown at 128 tokens is also a retrieval regression (0.675 vs 0.850): both cases fail
    assert!(junit.contains("tests=\"2\" failures=\"2\""), "{junit}");
    assert!(
        junit.contains("<failure message=\"answer quality: not judged: "),
        "{junit}"
    );

    // a check without --judge into a folder of judged answers would leave them beside results
    // they do not belong to: refused
    let (code, _, stderr, _) = check(&base, &dir.path().join("same"), &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("holds judged answers (judge_questions.csv)"),
        "{stderr}"
    );

    // --out at the baseline itself: refused, the baseline untouched
    let before = std::fs::read(base.join("sweep_questions.csv")).unwrap();
    let (code, _, stderr, _) = check(&base, &base, &["--sizes", "512", "--judge"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is the baseline folder"), "{stderr}");
    assert_eq!(
        std::fs::read(base.join("sweep_questions.csv")).unwrap(),
        before
    );

    // a damaged judge file of the baseline is a baseline that cannot be read: exit 2, not 1
    let damaged = dir.path().join("damaged");
    std::fs::create_dir(&damaged).unwrap();
    for e in std::fs::read_dir(&base).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), damaged.join(e.file_name())).unwrap();
        }
    }
    std::fs::write(
        damaged.join("judge_checks.csv"),
        "kind,criterion\n\"unclosed\n",
    )
    .unwrap();
    let (code, _, stderr, _) = check(&damaged, &dir.path().join("d"), &["--judge"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("the baseline's judge stage cannot be read"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_baseline_without_planted_controls_cannot_gate() {
    let good = server(JudgeKind::Good).await;
    let dir = tempfile::tempdir().unwrap();
    let base = baseline(dir.path(), "base", &good.uri(), "controls = false");
    assert!(
        read_csv(&base.join("judge_checks.csv"))
            .iter()
            .all(|r| r["kind"] == "repeat")
    );
    let sent = requests(&good).await;
    let (code, stdout, stderr, json) = check(&base, &dir.path().join("now"), &["--judge"]);
    // the retrieval verdict's exit code: the unchanged chunker passes
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(requests(&good).await, sent);
    assert_cannot_gate(&json, |r| {
        r.contains("controls") && (r.contains(" off") || r.contains("controls = false"))
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_baseline_judged_by_an_always_pass_judge_cannot_gate() {
    let lenient = server(JudgeKind::AlwaysPass).await;
    let dir = tempfile::tempdir().unwrap();
    let base = baseline(dir.path(), "base", &lenient.uri(), "");
    let (code, stdout, stderr, json) = check(&base, &dir.path().join("now"), &["--judge"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // it passed every planted failure on each criterion
    assert_cannot_gate(&json, |r| r.contains("planted"));
}

#[test]
fn judge_against_a_sweep_folder_is_exit_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("swept");
    chunksweep()
        .args(["sweep", "--corpus", "datasets/handbook"])
        .args(["--golden", "datasets/handbook-golden.jsonl"])
        .args(["--strategies", "markdown", "--sizes", "256", "--k", "3"])
        .arg("--quiet")
        .arg("--out")
        .arg(&base)
        .assert()
        .success();
    let (code, stdout, stderr, _) = check(&base, &dir.path().join("now"), &["--judge"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains(&base.display().to_string()), "{stderr}");
}
