//! A fourth criterion added through the library's public types (a `Criterion` value with its
//! template, pushed onto the plan's criteria) and run end to end against a scripted server: its
//! verdicts land in judge_questions.csv, judge.csv, judge_checks.csv, calls.csv, the summary and
//! report.md, and `report` rebuilds the same report from the run folder.

use std::path::Path;

mod csv_support;
mod llm_support;

use chunksweep::judge::Criterion;
use chunksweep::pipeline::{self, judge_step::JudgeOutcome};
use chunksweep::plan::Plan;
use csv_support::read_csv;
use llm_support::{LARGE, SMALL, chat_body, graded_answer, prompt_text, scripted_answer};
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The new criterion's template: is the answer free of anything the question did not ask for?
const CONCISENESS: &str = "Task: grade conciseness.\n\nYou are a strict grader. Decide whether the ANSWER says only what the QUESTION asks.\n\n- pass: nothing beyond what was asked.\n- fail: padding, repetition or unasked detail.\n\n<question>\n{question}\n</question>\n\n<answer>\n{answer}\n</answer>\n\nReply with a JSON object only: {\"verdict\": \"pass\" or \"fail\", \"reason\": \"one sentence\"}.\n";

const DOC_A: &str = "Larkspur needs two CPU cores and four gigabytes of memory to run. The container runs as user 1750 by default. Settings live in a TOML file under the config folder.";
const DOC_B: &str = "Refunds are issued within fourteen days of a request. Invoices are sent on the first day of each month. Deleted files stay recoverable for thirty days.";

const QUESTIONS: [(&str, &str, &str, Option<&str>); 4] = [
    (
        "q1",
        "How many CPU cores does Larkspur need?",
        "two CPU cores",
        Some("Two CPU cores."),
    ),
    (
        "q2",
        "Which user does the container run as?",
        "user 1750",
        Some("User 1750."),
    ),
    (
        "q3",
        "How long are deleted files recoverable?",
        "recoverable for thirty days",
        Some("Thirty days."),
    ),
    (
        "q4",
        "When are invoices sent?",
        "first day of each month",
        None,
    ),
];

/// Answers `ANSWER <question id> <small|large>`; every built-in criterion passes; conciseness
/// fails the small configuration's answers to q1 and q2 and passes every other.
struct Script;

impl Respond for Script {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let text = prompt_text(req);
        let id_of = |q: &str| QUESTIONS.iter().find(|x| x.1 == q).unwrap().0.to_string();
        let reply = if let Some(answer) = scripted_answer(&text, id_of) {
            answer
        } else {
            let (id, class) = graded_answer(&text);
            let fail = text.contains("Task: grade conciseness.")
                && class == "small"
                && (id == "q1" || id == "q2");
            json!({
                "verdict": if fail { "fail" } else { "pass" },
                "reason": if text.contains("Task: grade conciseness.") { "scripted conciseness" } else { "scripted" },
            })
            .to_string()
        };
        ResponseTemplate::new(200).set_body_json(chat_body(&reply, Some((10, 2))))
    }
}

/// Corpus, golden set and config for the server at `base`, the run folder `out`.
fn fixture(dir: &Path, base: &str, out: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(dir.join("corpus")).unwrap();
    std::fs::write(dir.join("corpus/a.md"), DOC_A).unwrap();
    std::fs::write(dir.join("corpus/b.md"), DOC_B).unwrap();
    let golden: String = QUESTIONS
        .iter()
        .map(|(id, q, ev, a)| {
            let mut o = json!({"id": id, "question": q, "evidence": [ev]});
            if let Some(a) = a {
                o["answer"] = json!(a);
            }
            o.to_string() + "\n"
        })
        .collect();
    std::fs::write(dir.join("golden.jsonl"), golden).unwrap();
    let cfg = format!(
        r#"corpus = "{dir}/corpus"
golden = "{dir}/golden.jsonl"
out = "{out}"

[sweep]
strategies = ["words"]
sizes = [8, 32]
overlap = 0
top_k = 2
tokenizer = "words"

[llm]
base_url = "{base}/v1"
api_key_env = "CHUNKSWEEP_TEST_NO_SUCH_KEY"
cache_path = "{dir}/cache.sqlite"

[llm.defaults]
rpm = 0
max_in_flight = 8
timeout_s = 300.0
input_usd_per_mtok = 2.5
output_usd_per_mtok = 10.0

[judge]
generator_model = "gen"
judge_model = "judge"
controls = false
repeat_fraction = 1.0
"#,
        dir = dir.display(),
        out = out.display(),
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, cfg).unwrap();
    path
}

#[test]
fn a_fourth_criterion_is_graded_end_to_end_from_its_value_and_template() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(async {
        let s = MockServer::builder().start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(Script)
            .mount(&s)
            .await;
        s
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let cfg = fixture(dir.path(), &server.uri(), &out);

    let now = jiff::Timestamp::now();
    let mut plan = Plan::load(Some(&cfg), Default::default(), Default::default(), now).unwrap();
    plan.candidates = Some(vec![SMALL.parse().unwrap(), LARGE.parse().unwrap()]);
    plan.judge.criteria.push(Criterion::new(
        "conciseness",
        CONCISENESS,
        &["question", "answer"],
    ));
    let ran = pipeline::run(&plan, &["test".to_string()], &|_| {}).unwrap();

    // the summary: a fourth rate per candidate, compared and trusted like the others
    let JudgeOutcome::Judged(judged) = &ran.judge else {
        panic!("judged")
    };
    let s = &judged.summary;
    assert_eq!(
        s.criteria,
        ["faithfulness", "relevancy", "correctness", "conciseness"]
    );
    let rate = |i: usize| *s.table[i].rate("conciseness").unwrap();
    assert_eq!(
        (rate(0).judged, rate(0).pass, rate(0).rate),
        (4, 2, Some(0.5))
    );
    assert_eq!(
        (rate(1).judged, rate(1).pass, rate(1).rate),
        (4, 4, Some(1.0))
    );
    let c = s
        .decision
        .comparisons
        .iter()
        .find(|c| c.criterion == "conciseness")
        .unwrap();
    assert_eq!((c.n, c.a_only, c.b_only), (4, 0, 2));
    assert!((c.p_value - 0.5).abs() < 1e-12);
    let t = s
        .trust
        .iter()
        .find(|t| t.criterion == "conciseness")
        .unwrap();
    assert_eq!(t.repeat.agreement.unwrap().k, 8);
    assert_eq!(t.repeat.kappa.unwrap().value, 1.0);

    // judge_questions.csv: its verdict and reason columns after the built-in ones
    let header = std::fs::read_to_string(out.join("judge_questions.csv")).unwrap();
    assert!(
        header.starts_with("config_id,question_id,question_type,retrieved_chunk_ids,answer,generate_error,faithfulness,faithfulness_reason,relevancy,relevancy_reason,correctness,correctness_reason,conciseness,conciseness_reason,errors,"),
        "{header}"
    );
    let q = read_csv(&out.join("judge_questions.csv"));
    let verdict = |cfg: &str, id: &str| {
        let r = q
            .iter()
            .find(|r| r["config_id"] == cfg && r["question_id"] == id)
            .unwrap();
        (r["conciseness"].clone(), r["conciseness_reason"].clone())
    };
    assert_eq!(
        verdict(SMALL, "q1"),
        ("fail".into(), "scripted conciseness".into())
    );
    assert_eq!(
        verdict(SMALL, "q3"),
        ("pass".into(), "scripted conciseness".into())
    );
    assert_eq!(verdict(LARGE, "q2").0, "pass");
    // graded on q4 too, which has no reference answer (correctness there is na)
    assert_eq!(verdict(SMALL, "q4").0, "pass");
    let q4 = q
        .iter()
        .find(|r| r["config_id"] == SMALL && r["question_id"] == "q4")
        .unwrap();
    assert_eq!(
        (q4["correctness"].as_str(), q4["calls"].as_str()),
        ("na", "4")
    );

    // judge.csv: its rate and trust columns
    let j = read_csv(&out.join("judge.csv"));
    assert_eq!(j[0]["conciseness_judged"], "4");
    assert_eq!(j[0]["conciseness_pass"], "2");
    assert_eq!(j[0]["conciseness_rate"], "0.5");
    assert_eq!(j[1]["conciseness_rate"], "1.0");
    assert_eq!(j[0]["conciseness_repeat_kappa"], "1.0");
    assert_eq!(j[0]["conciseness_control_tnr"], "");

    // its calls and repeats
    let calls = read_csv(&out.join("calls.csv"));
    assert_eq!(
        calls.iter().filter(|r| r["stage"] == "conciseness").count(),
        8
    );
    let checks = read_csv(&out.join("judge_checks.csv"));
    assert_eq!(
        checks
            .iter()
            .filter(|r| r["kind"] == "repeat" && r["criterion"] == "conciseness")
            .count(),
        8
    );

    // report.md: its column, its paired test; `report` rebuilds the same file from the folder
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        report
            .contains("| faithfulness | relevancy | correctness | conciseness | error verdicts |"),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "| conciseness | `{SMALL}` | `{LARGE}` | 4 | 0 | 2 | 0.500 |"
        )),
        "{report}"
    );
    assert!(report.contains("| 0.50 [0.15, 0.85] of 4 |"), "{report}");
    assert!(
        report.contains(
            "| conciseness | n/a | n/a | n/a | 1.00 [0.68, 1.00] of 8 | 1.00 | 0 | yes |"
        ),
        "{report}"
    );
    pipeline::report(&out, &Default::default(), None).unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("report.md")).unwrap(),
        report
    );
    drop(server);
}
