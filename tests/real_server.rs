//! The whole pipeline against real OpenAI-compatible servers: llama.cpp's own server (the
//! prebuilt xllamacpp wheel) serving SmolLM2-135M, started by `scripts/local-models.sh start`.
//! The test is ignored by a plain `cargo test` (the runner reports it as ignored, with the
//! reason); run it with the servers up: `cargo test --test real_server -- --ignored` (CI does).
//! Asked to run without the servers, it fails saying how to start them.

mod csv_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use csv_support::read_csv;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// KEY=VALUE lines of `.local-models/env`, if the servers are up.
fn servers() -> Option<HashMap<String, String>> {
    let up = Command::new(root().join("scripts/local-models.sh"))
        .arg("status")
        .output()
        .is_ok_and(|o| o.status.success());
    let env = std::fs::read_to_string(root().join(".local-models/env")).ok()?;
    up.then(|| {
        env.lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect()
    })
}

/// The servers' environment, or a panic saying how to start them.
fn servers_or_panic() -> HashMap<String, String> {
    servers().expect(
        "no local model server is running: start them with `scripts/local-models.sh start` \
         (the first time installs them: downloads, about a minute), then run this test again",
    )
}

/// Writes `dir/real.toml`: the handbook, markdown at 64 tokens, k = 2, one candidate, two judged
/// questions (short prompts: a handful of calls to a 135M model), the cache in `dir`.
fn handbook_config(dir: &Path) -> PathBuf {
    let fixture = root().join("datasets");
    let config = dir.join("real.toml");
    std::fs::write(
        &config,
        format!(
            "corpus = {:?}\ngolden = {:?}\n\n[sweep]\nstrategies = [\"markdown\"]\nsizes = [64]\ntop_k = 2\n\n[judge]\ncandidates = 1\nmax_questions = 2\nmax_tokens = 160\njudge_max_tokens = 48\nconcurrency = 1\n\n[llm]\ncache_path = {:?}\n",
            fixture.join("handbook"),
            fixture.join("handbook-golden.jsonl"),
            dir.join("cache.sqlite"),
        ),
    )
    .unwrap();
    config
}

fn run(env: &HashMap<String, String>, config: &Path, out: &Path) {
    let status = Command::new(env!("CARGO_BIN_EXE_chunksweep"))
        .args(["run", "--quiet", "--config"])
        .arg(config)
        .arg("--out")
        .arg(out)
        .env_remove("OPENAI_API_KEY")
        .envs(env)
        .status()
        .unwrap();
    assert!(status.success(), "chunksweep run failed: {status}");
}

#[test]
#[ignore = "needs the local model servers: scripts/local-models.sh start, then --ignored"]
fn run_against_local_llama_cpp_server() {
    let env = servers_or_panic();
    let dir = tempfile::tempdir().unwrap();
    // Two questions, one candidate, short prompts: a handful of calls to a 135M model. The
    // answer's cap leaves room for a whole answer: one cut at the cap is a generation error.
    let config = handbook_config(dir.path());
    let out = dir.path().join("run");
    run(&env, &config, &out);

    let judged = read_csv(&out.join("judge_questions.csv"));
    assert_eq!(judged.len(), 2, "two questions judged");
    for row in &judged {
        assert!(
            !row["answer"].trim().is_empty(),
            "the model answered: {row:?}"
        );
        for criterion in ["faithfulness", "relevancy", "correctness"] {
            let v = &row[criterion];
            assert!(
                ["pass", "fail", "error"].contains(&v.as_str()),
                "{criterion} verdict {v:?}"
            );
        }
    }
    let calls = read_csv(&out.join("calls.csv"));
    let sent: Vec<_> = calls.iter().filter(|c| c["cache_hit"] == "false").collect();
    assert!(
        sent.len() >= 8,
        "2 questions × (1 answer + 3 verdicts) at least"
    );
    for c in &sent {
        assert_eq!(
            c["tokens_estimated"], "false",
            "the server reports usage: {c:?}"
        );
        assert!(c["prompt_tokens"].parse::<u64>().unwrap() > 0);
    }
    let verdicts: Vec<_> = sent.iter().filter(|c| c["stage"] != "generate").collect();
    assert!(!verdicts.is_empty());
    assert!(
        verdicts
            .iter()
            .all(|c| c["response_format"] == "json_schema"),
        "llama.cpp's server honours json_schema, so no verdict falls back: {verdicts:?}"
    );
    assert!(
        std::fs::read_to_string(out.join("judge.csv"))
            .unwrap()
            .lines()
            .count()
            == 2
    );

    // The same command again finds every question finished: nothing is sent.
    let before = calls.len();
    run(&env, &config, &out);
    let calls = read_csv(&out.join("calls.csv"));
    assert!(
        calls[before..].iter().all(|c| c["cache_hit"] == "true"),
        "a rerun of a finished run sends nothing: {:?}",
        &calls[before..]
    );
    assert_eq!(read_csv(&out.join("judge_questions.csv")), judged);

    // A new run folder with the same cache: every answer comes from the cache. (A verdict the
    // model wrote unreadably is not cached, by design, so only those calls may be sent again.)
    let again = dir.path().join("again");
    run(&env, &config, &again);
    let calls = read_csv(&again.join("calls.csv"));
    let generated: Vec<_> = calls.iter().filter(|c| c["stage"] == "generate").collect();
    assert_eq!(generated.len(), 2);
    assert!(
        generated.iter().all(|c| c["cache_hit"] == "true"),
        "{generated:?}"
    );
    let answers = |r: &[HashMap<String, String>]| -> Vec<String> {
        r.iter().map(|row| row["answer"].clone()).collect()
    };
    assert_eq!(
        answers(&read_csv(&again.join("judge_questions.csv"))),
        answers(&judged)
    );
}

#[test]
#[ignore = "needs the local model servers: scripts/local-models.sh start, then --ignored"]
fn check_judge_against_local_llama_cpp_server() {
    let env = servers_or_panic();
    let dir = tempfile::tempdir().unwrap();
    let config = handbook_config(dir.path());
    let base = dir.path().join("base");
    run(&env, &config, &base);
    // SmolLM2-135M cannot tell a planted failure apart (results/examples/handbook-judged), so
    // against its own thresholds it could gate on nothing and `check --judge` would send
    // nothing. The baseline's recorded thresholds are lowered here so that it gates: this test
    // is of the calls, the files and the figures, not of the judge.
    let manifest = base.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    m["config"]["judge"]["min_control_tnr"] = 0.0.into();
    m["config"]["judge"]["min_repeat_kappa"] = (-1.0).into();
    std::fs::write(&manifest, serde_json::to_string_pretty(&m).unwrap()).unwrap();

    let out = dir.path().join("check");
    let check = || {
        let o = Command::new(env!("CARGO_BIN_EXE_chunksweep"))
            .args(["check", "--quiet", "--judge", "--sizes", "32", "--baseline"])
            .arg(&base)
            .arg("--out")
            .arg(&out)
            .env_remove("OPENAI_API_KEY")
            .envs(&env)
            .output()
            .unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("check.json")).unwrap())
                .unwrap();
        (o, json)
    };
    let (o, json) = check();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let judge = &json["judge"];
    let fails = json["verdict"]["fails"] == true || judge["fails"] == true;
    assert_eq!(o.status.code(), Some(i32::from(fails)), "{text}");
    assert_eq!(judge["questions"], 2, "{judge}");
    assert_eq!(judge["unfinished"], 0, "{judge}");
    let rows = read_csv(&out.join("judge_questions.csv"));
    assert_eq!(
        rows.len(),
        2,
        "both questions judged for markdown at 32 tokens"
    );
    assert!(
        rows.iter()
            .all(|r| r["config_id"] == "markdown-32-o4-none-bm25-k2"),
        "{rows:?}"
    );
    for c in judge["criteria"].as_array().unwrap() {
        // two paired answers can never show a regression (five would be needed at α = 0.05)
        assert_ne!(c["outcome"], "regression", "{c}");
        let (n, errors) = (c["n"].as_u64().unwrap(), c["errors"].as_u64().unwrap());
        assert!(n + errors <= 2, "{c}");
        let worse = c["worse"].as_u64().unwrap();
        let better = c["better"].as_u64().unwrap();
        assert!(worse + better <= n, "{c}");
        if c["cannot_gate"].is_null() {
            // not worse, or, when error verdicts (answers cut at the token cap) decide it,
            // inconclusive
            let outcome = c["outcome"].as_str().unwrap();
            assert!(["not_worse", "inconclusive"].contains(&outcome), "{c}");
            assert_eq!(
                outcome == "inconclusive",
                c["p_value_if_unknown_worse"].as_f64().unwrap() < 0.05,
                "{c}"
            );
        }
    }
    let calls = read_csv(&out.join("calls.csv"));
    let generated = calls.iter().filter(|c| c["stage"] == "generate").count();
    assert_eq!(generated, 2, "{calls:?}");
    let md = std::fs::read_to_string(out.join("check.md")).unwrap();
    assert!(md.contains("## Answer quality (judge)"), "{md}");

    // The same command again: every question is finished, nothing is sent, same figures.
    let before = read_csv(&out.join("calls.csv")).len();
    let (o, again) = check();
    assert_eq!(o.status.code(), Some(i32::from(fails)));
    assert_eq!(again["judge"], json["judge"]);
    assert_eq!(read_csv(&out.join("calls.csv")).len(), before);
}
