//! `chunksweep golden draft` against a scripted server: quotes that are exact, differently spaced,
//! changed by one word and invented are kept, kept with the document's own text and offsets,
//! rejected and rejected; the summary and the drafting CSV count them; `validate` accepts the
//! output; `--dry-run` sends nothing; a run killed midway resumes without repeating a finished
//! call; with an embeddings model, near-duplicate questions are found by cosine; an unreadable
//! reply is counted as sent and unusable; a run keeping no item fails without a golden set;
//! replies cut at the token cap are reported as cut.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

mod embed_support;
mod llm_support;

use llm_support::{chat_body, prompt_text};

const EXACT: &str = "# Refunds\n\nThe refund window is fourteen days from the date of delivery. Refunds are paid to the original card within five working days.\n";
const SPACED: &str = "# Parking\n\nVisitors may park in the north lot on weekdays,\nbut only after registering their car at the front desk.\n";
const CHANGED: &str = "# Security\n\nBadges must be worn visibly at all times inside the building and returned at the end of every visit.\n";
const INVENTED: &str = "# Lunch\n\nThe canteen on the second floor serves lunch from noon until two o'clock every weekday.\n";

/// The model's reply for the passage of each document: (document, question, answer, quote).
const REPLIES: [(&str, &str, &str, &str); 4] = [
    (
        "exact.md",
        "How long do customers have to ask for their money back?",
        "Fourteen days from delivery.",
        "The refund window is fourteen days from the date of delivery.",
    ),
    (
        "spaced.md",
        "Where can guests leave their vehicle during the week?",
        "In the north lot, once registered at the front desk.",
        "Visitors may park in the north lot on weekdays, but only after registering",
    ),
    (
        "changed.md",
        "When do staff have to show their badge?",
        "At all times.",
        "Badges must be worn visibly at all times inside the office",
    ),
    (
        "invented.md",
        "Is lunch free on Fridays?",
        "Yes.",
        "Lunch is free for all employees on Fridays.",
    ),
];

fn write_corpus(root: &Path) -> PathBuf {
    let corpus = root.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    for (name, text) in [
        ("exact.md", EXACT),
        ("spaced.md", SPACED),
        ("changed.md", CHANGED),
        ("invented.md", INVENTED),
    ] {
        std::fs::write(corpus.join(name), text).unwrap();
    }
    corpus
}

fn write_config(root: &Path, server: &MockServer) -> PathBuf {
    let config = format!(
        "[llm]\nbase_url = \"{}/v1\"\napi_key_env = \"CHUNKSWEEP_TEST_NO_SUCH_KEY\"\n\
         cache_path = \"cache.sqlite\"\n\n[llm.models.drafter]\nrpm = 6000\nmax_in_flight = 1\n",
        server.uri()
    );
    let path = root.join("config.toml");
    std::fs::write(&path, config).unwrap();
    path
}

/// Answers each drafting prompt with the scripted reply for its document. After `answer_first`
/// replies, while `hang` is set, replies come only after a minute.
#[derive(Clone)]
struct Scripted {
    answered: Arc<AtomicUsize>,
    answer_first: usize,
    hang: Arc<AtomicBool>,
}

impl Scripted {
    fn new(answer_first: usize, hang: bool) -> Self {
        Scripted {
            answered: Arc::new(AtomicUsize::new(0)),
            answer_first,
            hang: Arc::new(AtomicBool::new(hang)),
        }
    }
}

/// The document a drafting prompt names and the scripted reply for it.
fn scripted_reply(req: &Request) -> (&'static str, Value) {
    let text = prompt_text(req);
    let (doc, question, answer, quote) = REPLIES
        .iter()
        .find(|(doc, ..)| text.contains(&format!("Document: {doc}\n")))
        .expect("a prompt naming one of the documents");
    let reply = json!({"question": question, "answer": answer, "evidence": [quote]});
    (doc, reply)
}

impl Respond for Scripted {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let (_, reply) = scripted_reply(req);
        let template =
            ResponseTemplate::new(200).set_body_json(chat_body(&reply.to_string(), Some((50, 20))));
        let n = self.answered.fetch_add(1, Ordering::SeqCst);
        if n >= self.answer_first && self.hang.load(Ordering::SeqCst) {
            template.set_delay(Duration::from_secs(60))
        } else {
            template
        }
    }
}

async fn scripted_server(responder: Scripted) -> MockServer {
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(responder)
        .mount(&server)
        .await;
    server
}

fn draft_command(root: &Path, corpus: &Path, config: &Path) -> std::process::Command {
    draft_into(root, corpus, config, &root.join("golden.jsonl"))
}

fn draft_into(root: &Path, corpus: &Path, config: &Path, out: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_chunksweep"));
    cmd.current_dir(root)
        .args(["golden", "draft", "--corpus"])
        .arg(corpus)
        .arg("--out")
        .arg(out)
        .args(["--questions", "4", "--model", "drafter", "--config"])
        .arg(config)
        .env_remove("OPENAI_BASE_URL");
    cmd
}

fn run_ok(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exact_and_respaced_quotes_are_kept_with_true_text_and_near_misses_rejected() {
    let server = scripted_server(Scripted::new(usize::MAX, false)).await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let corpus = write_corpus(root);
    let config = write_config(root, &server);
    let stdout = run_ok(&mut draft_command(root, &corpus, &config));
    assert_eq!(server.received_requests().await.unwrap().len(), 4);

    // The summary counts what the files hold: 4 drafted, 2 kept, 2 quotes not found.
    assert!(stdout.contains("drafted 4 item(s), kept 2"), "{stdout}");
    assert!(
        stdout.contains(
            "4 call(s) sent, 0 from the cache; 0 answered but unusable, 0 without a reply)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("  rejected, {:<20} 2\n", "quote_not_found")),
        "{stdout}"
    );
    for other in [
        "no_reply",
        "too_many_quotes",
        "evidence_too_short",
        "evidence_not_unique",
        "copies_evidence",
        "answer_unsupported",
        "near_duplicate",
    ] {
        assert!(
            stdout.contains(&format!("  rejected, {other:<20} 0\n")),
            "{other}: {stdout}"
        );
    }

    let items = jsonl(&root.join("golden.jsonl"));
    assert_eq!(items.len(), 2);
    let by_doc = |doc: &str| {
        items
            .iter()
            .find(|i| i["evidence"][0]["doc"] == doc)
            .unwrap_or_else(|| panic!("no item from {doc}"))
    };
    // Exact: the quote's own offsets (ASCII: bytes are code points).
    let exact = by_doc("exact.md");
    let quote = REPLIES[0].3;
    let start = EXACT.find(quote).unwrap();
    assert_eq!(
        exact["evidence"][0],
        json!({"doc": "exact.md", "start": start, "end": start + quote.len(), "text": quote})
    );
    // Differently spaced: the document's own text, with its line break, and its offsets.
    let spaced = by_doc("spaced.md");
    let truth = "Visitors may park in the north lot on weekdays,\nbut only after registering";
    let start = SPACED.find(truth).unwrap();
    assert_eq!(
        spaced["evidence"][0],
        json!({"doc": "spaced.md", "start": start, "end": start + truth.len(), "text": truth})
    );
    // Provenance on every item.
    let sha = hex_sha256(
        &std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts/draft.md")).unwrap(),
    );
    for item in &items {
        assert_eq!(item["source"], "draft");
        assert_eq!(item["model"], "drafter");
        assert_eq!(item["reviewed"], false);
        assert_eq!(item["prompt_sha256"], sha.as_str());
    }
    assert_eq!(exact["question"], REPLIES[0].1);
    assert_eq!(exact["answer"], REPLIES[0].2);

    // The drafting CSV: one row per drafted item with its outcome.
    let csv = std::fs::read_to_string(root.join("golden.draft.csv")).unwrap();
    let mut outcomes: Vec<(String, String)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[1].to_string(), f[7].to_string())
        })
        .collect();
    outcomes.sort();
    assert_eq!(
        outcomes,
        [
            ("changed.md", "quote_not_found"),
            ("exact.md", "kept"),
            ("invented.md", "quote_not_found"),
            ("spaced.md", "kept"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    assert!(csv.starts_with("id,doc,passage_start,passage_end,position,kind,length,outcome,detail,question,whitespace_forgiven\n"));

    // validate accepts the drafted set as it is, and names both as unreviewed drafts.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunksweep"))
        .args(["validate", "--corpus"])
        .arg(&corpus)
        .arg("--golden")
        .arg(root.join("golden.jsonl"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("2 questions, 2 evidence spans"), "{text}");
    assert!(text.contains("0 error(s)"), "{text}");
    assert!(
        text.contains("2 of 2 questions are unreviewed drafts"),
        "{text}"
    );
    assert!(text.contains(":1: unreviewed draft \"draft-"), "{text}");
}

fn hex_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_sends_nothing_and_gives_the_estimate() {
    let server = scripted_server(Scripted::new(usize::MAX, false)).await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let corpus = write_corpus(root);
    let config = write_config(root, &server);
    let stdout = run_ok(draft_command(root, &corpus, &config).arg("--dry-run"));
    assert!(server.received_requests().await.unwrap().is_empty());
    assert!(
        stdout.contains("dry run: 4 passage(s) from 4 document(s); nothing sent"),
        "{stdout}"
    );
    assert!(stdout.contains("4 chat calls to "), "{stdout}");
    assert!(!root.join("golden.jsonl").exists());
    // A budget the unpriced model cannot be checked against is refused before any call.
    let out = draft_command(root, &corpus, &config)
        .args(["--max-cost", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--max-cost $1 needs a price for drafter")
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_midway_resumes_without_repeating_finished_calls() {
    // Two calls are answered, the third hangs; the run is killed while it waits.
    let responder = Scripted::new(2, true);
    let hang = Arc::clone(&responder.hang);
    let server = scripted_server(responder).await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let corpus = write_corpus(root);
    let config = write_config(root, &server);
    let mut child = draft_command(root, &corpus, &config)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut waited = 0;
    while server.received_requests().await.unwrap().len() < 3 {
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        tokio::time::sleep(Duration::from_millis(50)).await;
        waited += 1;
        assert!(waited < 2400, "the third call never came");
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!root.join("golden.jsonl").exists());

    // Rerun: the two finished calls come from the cache; only the other two are sent.
    hang.store(false, Ordering::SeqCst);
    let stdout = run_ok(&mut draft_command(root, &corpus, &config));
    assert_eq!(server.received_requests().await.unwrap().len(), 3 + 2);
    assert!(
        stdout.contains(
            "2 call(s) sent, 2 from the cache; 0 answered but unusable, 0 without a reply)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("drafted 4 item(s), kept 2"), "{stdout}");
    assert_eq!(jsonl(&root.join("golden.jsonl")).len(), 2);
}

/// Embeds every question as the same vector: any two are near-duplicates by cosine.
struct SameVector;

impl Respond for SameVector {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        embed_support::embeddings_reply(&body, &[&["money", "vehicle"]]).2
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_embeddings_model_near_duplicates_are_found_by_cosine() {
    let server = scripted_server(Scripted::new(usize::MAX, false)).await;
    Mock::given(method("POST"))
        .and(path("/v1/embeddings"))
        .respond_with(SameVector)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let corpus = write_corpus(root);
    let config = write_config(root, &server);
    let stdout = run_ok(draft_command(root, &corpus, &config).args(["--embed-model", "e5"]));
    assert!(stdout.contains("drafted 4 item(s), kept 1"), "{stdout}");
    assert!(
        stdout.contains(&format!("  rejected, {:<20} 1\n", "near_duplicate")),
        "{stdout}"
    );
    // One embeddings call with both questions that passed the quote filters.
    let embeds: Vec<Value> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path() == "/v1/embeddings")
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(embeds.len(), 1);
    let mut inputs: Vec<&str> = embeds[0]["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    inputs.sort();
    assert_eq!(inputs, [REPLIES[0].1, REPLIES[1].1]);
    let kept = jsonl(&root.join("golden.jsonl"));
    assert_eq!(kept.len(), 1);
    let csv = std::fs::read_to_string(root.join("golden.draft.csv")).unwrap();
    let dup = csv
        .lines()
        .find(|l| l.contains(",near_duplicate,"))
        .unwrap();
    assert!(
        dup.contains(&format!(
            "embedding cosine 1.00 with {} (limit 0.92)",
            kept[0]["id"].as_str().unwrap()
        )),
        "{dup}"
    );
}

/// Drafts as [`Scripted`]; answers the answer check "no" for the parking item, "yes" otherwise.
struct WithCheck(Scripted);

impl Respond for WithCheck {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let text = prompt_text(req);
        if !text.contains("Does the evidence below support the answer") {
            return self.0.respond(req);
        }
        let supported = if text.contains("north lot") {
            "no"
        } else {
            "yes"
        };
        let reply = json!({"supported": supported, "reason": "scripted"});
        ResponseTemplate::new(200).set_body_json(chat_body(&reply.to_string(), Some((30, 5))))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_check_rejects_an_answer_the_model_says_its_evidence_does_not_support() {
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(WithCheck(Scripted::new(usize::MAX, false)))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let corpus = write_corpus(root);
    let config = write_config(root, &server);
    let stdout = run_ok(draft_command(root, &corpus, &config).arg("--check-answers"));
    // 4 drafts and a check for each of the 2 items whose answer is not in its evidence.
    assert_eq!(server.received_requests().await.unwrap().len(), 6);
    assert!(stdout.contains("drafted 4 item(s), kept 1"), "{stdout}");
    assert!(
        stdout.contains(&format!("  rejected, {:<20} 1\n", "answer_unsupported")),
        "{stdout}"
    );
    let kept = jsonl(&root.join("golden.jsonl"));
    assert_eq!(kept[0]["evidence"][0]["doc"], "exact.md");
}

/// Answers each drafting prompt with the chat body `reply(document, scripted reply)` builds.
struct Replying(fn(&str, Value) -> Value);

impl Respond for Replying {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let (doc, reply) = scripted_reply(req);
        ResponseTemplate::new(200).set_body_json((self.0)(doc, reply))
    }
}

async fn replying_server(reply: fn(&str, Value) -> Value) -> MockServer {
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Replying(reply))
        .mount(&server)
        .await;
    server
}

fn run_failing(cmd: &mut std::process::Command) -> String {
    run_exiting(1, cmd)
}

/// The stderr of `cmd`, which must exit with `code`.
fn run_exiting(code: i32, cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stderr).unwrap()
}

/// The drafting CSV's (doc, outcome, detail) per row, sorted by document.
fn csv_outcomes(path: &Path) -> Vec<(String, String, String)> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let mut rows: Vec<(String, String, String)> = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[1].to_string(), r[7].to_string(), r[8].to_string())
        })
        .collect();
    rows.sort();
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_reply_counts_as_sent_and_unusable_and_its_tokens_as_spent() {
    // The lunch passage gets prose instead of JSON; every reply reports 50 + 20 tokens.
    let server = replying_server(|doc, reply| {
        let content = match doc {
            "invented.md" => "I am not sure which question to ask here.".to_string(),
            _ => reply.to_string(),
        };
        chat_body(&content, Some((50, 20)))
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let corpus = write_corpus(root);
    let config = write_config(root, &server);
    // $1,000 per million tokens both ways: 70 tokens cost $0.07 a call.
    let priced = std::fs::read_to_string(&config).unwrap()
        + "input_usd_per_mtok = 1000.0\noutput_usd_per_mtok = 1000.0\n";
    std::fs::write(&config, priced).unwrap();
    let stdout = run_ok(&mut draft_command(root, &corpus, &config));
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 4);
    // All 4 were sent and paid for; the unreadable one is counted as such.
    assert!(stdout.contains("drafted 4 item(s), kept 2"), "{stdout}");
    assert!(
        stdout.contains(
            "(4 call(s) sent, 0 from the cache; 1 answered but unusable, 0 without a reply, $0.2800)"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("  rejected, {:<20} 1\n", "no_reply")),
        "{stdout}"
    );
    // The schema sent forbids keys of the model's own and requires the three it asks for.
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    let schema = &body["response_format"]["json_schema"]["schema"];
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(
        schema["required"],
        json!(["question", "answer", "evidence"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_keeps_no_item_fails_names_the_counts_and_writes_no_golden_set() {
    // Every quote is invented: each item is rejected by the quote filter.
    let server = replying_server(|_, mut reply| {
        reply["evidence"] = json!(["This sentence is in none of the documents at all."]);
        chat_body(&reply.to_string(), Some((50, 20)))
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let corpus = write_corpus(root);
    let config = write_config(root, &server);
    let stderr = run_failing(&mut draft_command(root, &corpus, &config));
    let (out, csv) = (root.join("golden.jsonl"), root.join("golden.draft.csv"));
    assert!(
        stderr.contains(&format!(
            "kept 0 of 4 drafted item(s), no golden set written to {}: rejected by filter quote_not_found 4; each item's outcome is in {}",
            out.display(),
            csv.display()
        )),
        "{stderr}"
    );
    assert!(!out.exists());
    let outcomes = csv_outcomes(&csv);
    assert_eq!(outcomes.len(), 4);
    assert!(
        outcomes.iter().all(|(_, o, _)| o == "quote_not_found"),
        "{outcomes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_cut_at_max_tokens_are_reported_as_cut_and_no_usable_reply_fails_with_the_csv() {
    // Every reply is cut at the token cap mid-question.
    let server = replying_server(|_, _| {
        let mut body = chat_body(
            "{\"answer\": \"Fourteen days\", \"evidence\": [\"The re",
            Some((50, 400)),
        );
        body["choices"][0]["finish_reason"] = json!("length");
        body
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let corpus = write_corpus(root);
    let config = write_config(root, &server);
    let stderr = run_failing(&mut draft_command(root, &corpus, &config));
    // A cut reply is not asked again: one call per passage.
    assert_eq!(server.received_requests().await.unwrap().len(), 4);
    let (out, csv) = (root.join("golden.jsonl"), root.join("golden.draft.csv"));
    let cut = "no usable reply: finish_reason length (cut at max_tokens)";
    assert!(
        stderr.contains(&format!(
            "no usable reply (4 calls answered, none readable; 0 got no reply) from {}/v1; the first error: {cut}; each item's outcome is in {}",
            server.uri(),
            csv.display()
        )),
        "{stderr}"
    );
    assert!(!out.exists());
    // The CSV is written all the same, each item with its outcome.
    let outcomes = csv_outcomes(&csv);
    assert_eq!(
        outcomes,
        ["changed.md", "exact.md", "invented.md", "spaced.md"].map(|d| (
            d.to_string(),
            "no_reply".to_string(),
            cut.to_string()
        ))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_existing_out_a_folder_or_a_missing_parent_is_refused_before_any_call() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let corpus = write_corpus(root);
    let server = scripted_server(Scripted::new(usize::MAX, false)).await;
    let config = write_config(root, &server);
    let reviewed = "{\"id\": \"q1\", \"reviewed\": true}\n";
    let existing = root.join("golden.jsonl");
    std::fs::write(&existing, reviewed).unwrap();

    let err = run_exiting(2, &mut draft_command(root, &corpus, &config));
    assert!(
        err.contains(&format!(
            "--out {} exists: choose another --out or remove it",
            existing.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), reviewed);

    let folder = root.join("sets");
    std::fs::create_dir(&folder).unwrap();
    let err = run_exiting(2, &mut draft_into(root, &corpus, &config, &folder));
    assert!(
        err.contains(&format!(
            "--out {} is a folder: give the golden set's file name (e.g. {})",
            folder.display(),
            folder.join("golden.jsonl").display()
        )),
        "{err}"
    );

    let orphan = root.join("no-such-folder").join("golden.jsonl");
    let err = run_exiting(2, &mut draft_into(root, &corpus, &config, &orphan));
    assert!(
        err.contains(&format!(
            "--out {}: its folder {} does not exist: create it or choose another --out",
            orphan.display(),
            root.join("no-such-folder").display()
        )),
        "{err}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_says_the_real_draft_would_be_refused_by_max_cost() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let corpus = write_corpus(root);
    let server = scripted_server(Scripted::new(usize::MAX, false)).await;
    let config = write_config(root, &server);
    let stdout =
        run_ok(draft_command(root, &corpus, &config).args(["--dry-run", "--max-cost", "1"]));
    assert!(
        stdout.contains("dry run: the real run would be refused by --max-cost: --max-cost $1 needs a price for drafter: set input_usd_per_mtok and output_usd_per_mtok in [llm.models.\"drafter\"]"),
        "{stdout}"
    );
    let priced = std::fs::read_to_string(&config).unwrap()
        + "input_usd_per_mtok = 2.5\noutput_usd_per_mtok = 10.0\n";
    std::fs::write(&config, priced).unwrap();
    let stdout =
        run_ok(draft_command(root, &corpus, &config).args(["--dry-run", "--max-cost", "0.001"]));
    assert!(
        stdout.contains("dry run: the real run would be refused by --max-cost: the estimate $0.0194 passes --max-cost $0.001: draft fewer questions (--questions) or raise the budget"),
        "{stdout}"
    );
    let stdout =
        run_ok(draft_command(root, &corpus, &config).args(["--dry-run", "--max-cost", "1"]));
    assert!(!stdout.contains("would be refused"), "{stdout}");
    assert_eq!(server.received_requests().await.unwrap().len(), 0);
}
