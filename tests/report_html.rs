//! report.html on a tiny run: a document holding `<script>alert(1)</script>` and an answer holding
//! `</div>` stay text; the evidence is marked in the retrieved chunks; and, with headless
//! Chromium (the ignored tests, which .ci/run runs with `-- --ignored`), the rendered page shows
//! the decision, a marked evidence span and a verdict, with nothing requested from the network.

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use assert_cmd::Command;
use chunksweep::judge::rows::{JudgeQuestionRow, Judgement};
use chunksweep::judge::{Verdict, criteria};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

mod llm_support;

use llm_support::{chat_body, prompt_text};

const EVIL: &str = "# Gate\n\nThe alarm code is <script>alert(1)</script> and the gate opens at nine every morning.\n\nVisitors sign in at the front desk before entering the building.\n";
const OTHER: &str =
    "# Parking\n\nParking is free on weekends and costs two euros per hour on weekdays.\n";
const GOLDEN: &str = concat!(
    r#"{"id": "q1", "question": "When does the gate open?", "evidence": ["the gate opens at nine"], "answer": "At nine."}"#,
    "\n",
    r#"{"id": "q2", "question": "Where do visitors sign in?", "evidence": ["Visitors sign in at the front desk"]}"#,
    "\n",
    r#"{"id": "q3", "question": "What does parking cost on weekdays?", "evidence": ["costs two euros per hour on weekdays"]}"#,
    "\n",
);
const ANSWER: &str = "It opens at nine.</div><b>not bold</b>";

/// The tiny corpus in `root/corpus` and its golden set in `root/golden.jsonl`.
fn write_inputs(root: &Path) {
    let corpus = root.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("gate.md"), EVIL).unwrap();
    std::fs::write(corpus.join("parking.md"), OTHER).unwrap();
    std::fs::write(root.join("golden.jsonl"), GOLDEN).unwrap();
}

/// A swept tiny run in `root/run` with one judged row, and its report.html rendered.
fn tiny_run(root: &Path) -> PathBuf {
    write_inputs(root);
    let corpus = root.join("corpus");
    let run = root.join("run");
    Command::cargo_bin("chunksweep")
        .unwrap()
        .arg("sweep")
        .arg("--corpus")
        .arg(&corpus)
        .arg("--golden")
        .arg(root.join("golden.jsonl"))
        .args(["--strategies", "fixed", "--sizes", "8,64", "--overlap", "0"])
        .args(["--k", "1", "--tokenizer", "words", "--quiet", "--out"])
        .arg(&run)
        .assert()
        .success();
    let judged = JudgeQuestionRow {
        config_id: "fixed-64-o0-none-bm25-k1".into(),
        question_id: "q1".into(),
        question_type: String::new(),
        retrieved_chunk_ids: "gate.md#0".into(),
        answer: ANSWER.into(),
        generate_error: String::new(),
        verdicts: [
            (
                "faithfulness",
                Verdict::Pass,
                "The context says the gate opens at nine.",
            ),
            (
                "relevancy",
                Verdict::Pass,
                "It answers when the gate opens.",
            ),
            (
                "correctness",
                Verdict::Fail,
                "<i>The reference</i> says nine & so does the answer.",
            ),
        ]
        .into_iter()
        .map(|(c, verdict, reason)| {
            let reason = reason.to_string();
            (c.to_string(), Judgement { verdict, reason })
        })
        .collect(),
        errors: 0,
        retrieve_ms: 1.0,
        generate_ms: 120.0,
        judge_ms: 80.0,
        calls: 4,
        prompt_tokens: 300,
        completion_tokens: 40,
        generate_tokens: 170,
        cost_usd: None,
        calls_without_usage: 0,
    };
    // Both configurations judged on q1, as `run --candidates` would.
    let small = JudgeQuestionRow {
        config_id: "fixed-8-o0-none-bm25-k1".into(),
        retrieved_chunk_ids: "gate.md#1".into(),
        answer: "Nine.".into(),
        ..judged.clone()
    };
    let builtin = criteria::builtin();
    let names = criteria::names(&builtin);
    chunksweep::judge::journal::rewrite_rows(&run, &names, [&judged, &small]).unwrap();
    let fingerprint = chunksweep::judge::Fingerprint::new(
        &chunksweep::judge::JudgeSettings {
            generator_model: "gen".into(),
            judge_model: "judge".into(),
            ..Default::default()
        },
        &chunksweep::judge::prompts::PromptSet::defaults(&builtin),
    );
    std::fs::write(
        run.join("judge_settings.json"),
        serde_json::to_string(&fingerprint).unwrap(),
    )
    .unwrap();
    render(&run);
    run
}

/// Rewrites the run folder's decision files and report.html, now with the judged rows.
fn render(run: &Path) {
    Command::cargo_bin("chunksweep")
        .unwrap()
        .arg("report")
        .arg(run)
        .assert()
        .success();
}

#[test]
fn a_document_script_and_an_answer_tag_stay_text_and_evidence_is_marked() {
    let dir = tempfile::tempdir().unwrap();
    let run = tiny_run(dir.path());
    let page = std::fs::read_to_string(run.join("report.html")).unwrap();
    // The only <script> elements are the page's own: its script, the chunk texts and one data
    // block per question. Texts travel as JSON with '<' escaped; the script inserts them as text.
    assert_eq!(page.matches("<script").count(), 2 + 3);
    assert!(!page.contains("alert(1)</script>"));
    assert!(page.contains(r"\u003cscript>alert(1)\u003c/script>"));
    assert!(page.contains(r#""answer":"It opens at nine.\u003c/div>\u003cb>not bold\u003c/b>""#));
    assert!(page.contains(r"\u003ci>The reference\u003c/i> says nine & so does the answer."));
    assert!(!page.contains("<b>not bold"));
    // Nothing refers outside the file.
    for external in ["src=\"http", "href=\"http", "url(", "@import"] {
        assert!(!page.contains(external), "{external}");
    }
    // q1 under fixed-64 (one 36-word chunk holds all of gate.md): the span is whole in rank 1,
    // marked at its UTF-16 offsets in the chunk's text.
    let chunk = EVIL.trim_end();
    let start = chunk.find("the gate opens at nine").unwrap();
    let marks = format!(
        r#""marks":"{}-{}-1""#,
        start,
        start + "the gate opens at nine".len()
    );
    assert!(page.contains(&marks), "no {marks}");
    assert!(page.contains(r#""spans":[{"status":"whole","rank":1,"text":null}]"#));
    // Under fixed-8 (windows of 8 words) q2's span "Visitors sign in at the front desk" starts
    // on the last word of gate.md's second window: cut, whichever window is retrieved.
    assert!(page.contains(r#""spans":[{"status":"cut","rank":null,"text":null}]"#));
    // The verdicts with their reasons, latency and tokens.
    assert!(page.contains(r#"{"criterion":"faithfulness","verdict":"pass","reason":"The context says the gate opens at nine."}"#));
    assert!(page.contains(r#""criterion":"correctness","verdict":"fail""#));
    assert!(page.contains("300 prompt + 40 completion"));
}

#[test]
fn the_page_has_the_figure_drawn_with_it_and_every_section_of_report_md_as_markup() {
    let dir = tempfile::tempdir().unwrap();
    let run = tiny_run(dir.path());
    let page = std::fs::read_to_string(run.join("report.html")).unwrap();
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    // The figure inline is the one drawn for sweep.svg in the same command.
    let svg = std::fs::read_to_string(run.join("sweep.svg")).unwrap();
    let inline = &page[page.find("<svg").unwrap()..page.rfind("</svg>").unwrap() + 6];
    assert!(inline == svg[svg.find("<svg").unwrap()..].trim_end());
    // Rendered again from the run folder, the page is the same.
    render(&run);
    let again = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(again == page, "report.html differs when rendered again");
    // Every section of report.md is a heading of the page, the judge's included, and no
    // Markdown syntax is left in the page's markup.
    for title in md.lines().filter_map(|l| l.strip_prefix("## ")) {
        assert!(page.contains(&format!("<h2>{title}</h2>")), "no {title}");
    }
    assert!(md.contains("\n## Answer quality (judge)\n"));
    let markup = &page[..page.find("<script").unwrap()];
    assert!(!markup.contains("**") && !markup.contains('`'));
}

/// A server that answers every question "It opens at nine." and passes every answer, saying
/// which question it graded.
struct PassEverything;

impl Respond for PassEverything {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let text = prompt_text(req);
        let reply = match text.split_once("<answer>") {
            None => "It opens at nine.".to_string(),
            Some(_) => {
                let q = text
                    .split_once("<question>\n")
                    .and_then(|(_, rest)| rest.split_once('\n'))
                    .map_or("?", |(q, _)| q);
                format!(r#"{{"verdict": "pass", "reason": "graded: {q}"}}"#)
            }
        };
        ResponseTemplate::new(200).set_body_json(chat_body(&reply, Some((10, 5))))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_run_the_page_shows_the_answers_and_verdicts_the_run_made() {
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(PassEverything)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_inputs(root);
    let config = format!(
        "corpus = \"corpus\"\ngolden = \"golden.jsonl\"\n\n[llm]\nbase_url = \"{}/v1\"\n\
         api_key_env = \"CHUNKSWEEP_TEST_NO_SUCH_KEY\"\ncache_path = \"cache.sqlite\"\n\n\
         [judge]\ngenerator_model = \"gen\"\njudge_model = \"judge\"\ncontrols = false\n\
         repeat_fraction = 0\n",
        server.uri()
    );
    std::fs::write(root.join("config.toml"), config).unwrap();
    let run = root.join("run");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_chunksweep"))
        .arg("run")
        .arg("--config")
        .arg(root.join("config.toml"))
        .args(["--strategies", "fixed", "--sizes", "64", "--overlap", "0"])
        .args(["--k", "1", "--tokenizer", "words", "--quiet", "--out"])
        .arg(&run)
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(run.join("report.html")).unwrap();
    // One candidate, three questions: each question's answer and its verdicts, with the reason
    // the server gave for that question, and the judge's section.
    assert!(page.contains("<section class=\"judge\" id=\"judge\"><h2>Answer quality (judge)</h2>"));
    assert_eq!(page.matches(r#""answer":"It opens at nine.""#).count(), 3);
    for q in [
        "When does the gate open?",
        "Where do visitors sign in?",
        "What does parking cost on weekdays?",
    ] {
        let verdict =
            format!(r#"{{"criterion":"faithfulness","verdict":"pass","reason":"graded: {q}"}}"#);
        assert!(page.contains(&verdict), "no verdict for {q}");
    }
}

/// Headless Chromium, or None with the reason the browser tests cannot run.
fn chromium() -> Option<String> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Process::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(str::to_string)
}

/// Loads `page` in headless Chromium with every host unresolvable and a dead proxy, and returns
/// the rendered DOM and the URLs of network requests the net log recorded.
fn dump_dom(browser: &str, page: &Path, work: &Path) -> (String, Vec<String>) {
    dump_dom_at(browser, page, "", work)
}

/// A mark the page's script put on evidence whole inside a retrieved chunk.
const WHOLE_MARK: &str = "<mark class=\"whole\" title=\"evidence, whole in this chunk\">";

/// [`dump_dom`] of `page` opened at `fragment` (`#q-ID` opens that question).
fn dump_dom_at(browser: &str, page: &Path, fragment: &str, work: &Path) -> (String, Vec<String>) {
    let netlog = work.join("netlog.json");
    let out = Process::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=http://127.0.0.1:9",
            "--virtual-time-budget=5000",
        ])
        .arg(format!(
            "--user-data-dir={}",
            work.join("profile").display()
        ))
        .arg(format!("--log-net-log={}", netlog.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}{fragment}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = std::fs::read_to_string(&netlog).unwrap_or_default();
    let urls = network_urls(&log);
    (String::from_utf8(out.stdout).unwrap(), urls)
}

/// URLs the page itself requested, from a Chromium net log: the `URL_REQUEST_START_JOB` events
/// whose network isolation key is the file's (`file://`). The browser's own background requests
/// (time, updates; made unresolvable by the host rules) are keyed otherwise and not counted.
fn network_urls(log: &str) -> Vec<String> {
    let log: serde_json::Value = serde_json::from_str(log).expect("a complete net log");
    let start_job = &log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"];
    log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| &e["type"] == start_job)
        .filter(|e| {
            e["params"]["network_isolation_key"]
                .as_str()
                .is_some_and(|k| k.contains("file://"))
        })
        .map(|e| e["params"]["url"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn require_browser() -> String {
    match chromium() {
        Some(b) => b,
        None => panic!("no chromium found for the browser tests: apt-get install -y chromium"),
    }
}

#[test]
#[ignore = "needs headless Chromium (apt-get install -y chromium); .ci/run runs it"]
fn browser_net_log_catches_a_page_request() {
    // The control: a page that does request something is caught by the check the others use.
    let browser = require_browser();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("leaky.html");
    std::fs::write(
        &page,
        "<!doctype html><p>x</p><img src=\"http://example.com/a.png\">",
    )
    .unwrap();
    let (_, urls) = dump_dom(&browser, &page, dir.path());
    assert_eq!(urls, ["http://example.com/a.png"]);
}

#[test]
#[ignore = "needs headless Chromium (apt-get install -y chromium); .ci/run runs it"]
fn browser_shows_script_and_tag_as_text_with_nothing_requested() {
    let browser = require_browser();
    let dir = tempfile::tempdir().unwrap();
    let run = tiny_run(dir.path());
    let (dom, urls) = dump_dom(&browser, &run.join("report.html"), dir.path());
    assert!(urls.is_empty(), "network requests: {urls:?}");
    // The script of the document ran nothing and is shown as text (serialised as entities in
    // the dumped DOM), inside the chunk that the page's script filled.
    assert!(
        dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{dom}"
    );
    assert!(dom.contains("It opens at nine.&lt;/div&gt;&lt;b&gt;not bold&lt;/b&gt;"));
    assert!(!dom.contains("<b>not bold</b>"));
    assert!(dom.contains("&lt;i&gt;The reference&lt;/i&gt; says nine &amp; so does the answer."));
    assert!(dom.contains(WHOLE_MARK));
    assert!(dom.contains("<span class=\"badge pass\">faithfulness: pass</span>"));
}

#[test]
#[ignore = "needs headless Chromium (apt-get install -y chromium); .ci/run runs it"]
fn browser_renders_the_committed_examples_offline() {
    let browser = require_browser();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/examples");
    // The handbook judged by the local models, opened at q-003, whose answer quotes a path in
    // Markdown backticks (shown as typed, not rendered); and Chroma's data at its first question
    // (open by default).
    for (name, fragment, judged) in [
        ("handbook-judged", "#q-q-003", true),
        ("chroma-general", "", false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let page = examples.join(name).join("report.html");
        let (dom, urls) = dump_dom_at(&browser, &page, fragment, dir.path());
        assert!(urls.is_empty(), "{name}: network requests: {urls:?}");
        assert!(dom.contains("id=\"decision\""), "{name}: no decision");
        assert!(
            dom.contains("<p><strong>At ") && dom.contains(" use <code>"),
            "{name}: no decision"
        );
        assert!(dom.contains("<svg"), "{name}: no figure");
        // The opened question's chunks are built, with evidence marked inside a chunk (the
        // legend's own <mark> has no title).
        assert!(dom.contains(WHOLE_MARK), "{name}: no marked evidence");
        if judged {
            assert!(
                dom.contains("stored in the `~/.config/larkspur/config.toml` file."),
                "{name}: answer not text"
            );
            // The judge's own accuracy, from the planted controls: a 135M judge that passes
            // everything cannot confirm the pick.
            assert!(
                dom.contains("true-negative rate"),
                "{name}: no control figures"
            );
            assert!(
                dom.contains("not confirmed on faithfulness"),
                "{name}: confirmed"
            );
            let verdict = ["pass", "fail"].iter().any(|v| {
                dom.contains(&format!(
                    "<span class=\"badge {v}\">faithfulness: {v}</span>"
                ))
            });
            assert!(verdict, "{name}: no verdict");
        }
    }
}
