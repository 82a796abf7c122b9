//! `run --merged` against a scripted OpenAI-compatible mock: the grid swept as two shards and
//! merged, then judged from the merged folder, gives the judge files and the report of a `run`
//! that swept the grid whole (timing columns, the folder and the command line aside).

use std::path::Path;
use std::process::{Command, Output, Stdio};

mod csv_support;
mod llm_support;

use csv_support::{read_csv, untimed};
use llm_support::{
    LARGE, SMALL, SMALL_AND_LARGE_SWEEP, bin, mock_llm_toml, prompt_text, scripted_answer,
    write_larkspur_corpus,
};
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const QUESTIONS: [(&str, &str, &str); 2] = [
    (
        "q1",
        "How many CPU cores does Larkspur need?",
        "two CPU cores",
    ),
    ("q2", "When are invoices sent?", "first day of each month"),
];

/// Answers as the scripted generator; every verdict a pass.
struct Passing;

impl Respond for Passing {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let text = prompt_text(req);
        let id_of = |q: &str| {
            QUESTIONS
                .iter()
                .find(|(_, t, _)| *t == q)
                .map(|(id, _, _)| id.to_string())
                .unwrap()
        };
        let reply = scripted_answer(&text, id_of)
            .unwrap_or_else(|| r#"{"verdict": "pass", "reason": "supported"}"#.to_string());
        ResponseTemplate::new(200).set_body_json(llm_support::chat_body(&reply, Some((50, 5))))
    }
}

fn fixture(dir: &Path, base: &str) -> std::path::PathBuf {
    write_larkspur_corpus(dir);
    let golden: String = QUESTIONS
        .iter()
        .map(|(id, q, ev)| json!({"id": id, "question": q, "evidence": [ev]}).to_string() + "\n")
        .collect();
    std::fs::write(dir.join("golden.jsonl"), golden).unwrap();
    let cfg = format!(
        "corpus = \"corpus\"\ngolden = \"golden.jsonl\"\n\n{SMALL_AND_LARGE_SWEEP}{}\n[judge]\ngenerator_model = \"gen\"\njudge_model = \"judge\"\ncontrols = false\nrepeat_fraction = 0\n",
        mock_llm_toml(&format!("{base}/v1"), "cache.sqlite", 30.0, 3),
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, cfg).unwrap();
    path
}

fn chunksweep(args: &[&str], cfg: &Path, out: &Path) -> Output {
    let o = Command::new(bin())
        .args(args)
        .arg("--config")
        .arg(cfg)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .env_remove("OPENAI_BASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_merged_judges_the_merged_sweep_as_a_whole_run_would() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Passing)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = fixture(dir.path(), &server.uri());
    let candidates = format!("{SMALL},{LARGE}");
    let whole = dir.path().join("whole/run");
    chunksweep(&["run", "--candidates", &candidates], &cfg, &whole);

    let shards = dir.path().join("shards");
    for i in 0..2 {
        // run's sweep step alone: no call is sent for a shard
        let before = server.received_requests().await.unwrap().len();
        chunksweep(&["run", "--shard", &format!("{i}/2")], &cfg, &shards);
        assert_eq!(server.received_requests().await.unwrap().len(), before);
        assert!(!shards.join(format!("shard-{i}-of-2/judge.csv")).exists());
    }
    let merged = dir.path().join("merged/run");
    let o = Command::new(bin())
        .arg("merge")
        .arg(shards.join("shard-0-of-2"))
        .arg(shards.join("shard-1-of-2"))
        .arg("--out")
        .arg(&merged)
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    chunksweep(
        &["run", "--merged", "--candidates", &candidates],
        &cfg,
        &merged,
    );
    for f in [
        "judge.csv",
        "judge_questions.csv",
        "sweep.csv",
        "selection.csv",
    ] {
        assert_eq!(
            untimed(&read_csv(&merged.join(f))),
            untimed(&read_csv(&whole.join(f))),
            "{f} differs from the whole run's"
        );
    }
    let report = |run: &Path| {
        std::fs::read_to_string(run.join("report.md"))
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("chunksweep "))
            .map(|l| l.replace(&run.display().to_string(), "RUN"))
            .collect::<Vec<_>>()
    };
    assert_eq!(report(&merged), report(&whole));
    assert!(report(&merged).contains(&"## Answer quality (judge)".to_string()));

    // another grid than the merged folder's is refused, and the folder is left as it was
    let o = Command::new(bin())
        .args(["run", "--merged", "--k", "1", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(&merged)
        .arg("--quiet")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "--merged: {} holds a sweep of another grid than this run's",
            merged.display()
        )),
        "{err}"
    );
}
