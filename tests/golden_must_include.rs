//! Seed 002's golden-set format, `{"q", "must_include": "path" or "path#anchor"}`, on a tiny
//! corpus with known sections: the section (or the whole document) is the evidence, a section
//! retrieved whole scores span recall 1, one that no chunk holds whole scores 0, and `validate`
//! names an unknown anchor.

use std::collections::BTreeMap;
use std::path::Path;

use assert_cmd::Command;
use predicates::str::contains;

const TIMEOUTS: &str = "# Timeouts\n\nEvery call has two limits.\n\n## Connect timeout\n\nOpening a connection gives up after five seconds.\n\n## Request timeout\n\nThe default request timeout is thirty seconds; raise it with the timeout setting.\n";
const KEYS: &str = "# Keys\n\nKeys sign every request.\n\n## Rotation\n\nTo rotate an API key without downtime, create the new key, deploy it, then revoke the old key.\n";
const GOLDEN: &str = concat!(
    r#"{"q": "What is the default request timeout?", "must_include": "docs/api/timeouts.md#section-3"}"#,
    "\n",
    r#"{"q": "How do I rotate an API key without downtime?", "must_include": "docs/security/keys.md#rotation"}"#,
    "\n",
    r#"{"q": "Which timeouts does every call have?", "must_include": "docs/api/timeouts.md#timeouts"}"#,
    "\n",
);

fn write_inputs(root: &Path, golden: &str) {
    for (path, text) in [
        ("corpus/docs/api/timeouts.md", TIMEOUTS),
        ("corpus/docs/security/keys.md", KEYS),
    ] {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    std::fs::write(root.join("golden.jsonl"), golden).unwrap();
}

#[test]
fn a_section_retrieved_whole_scores_span_recall_1_and_a_section_cut_scores_0() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_inputs(root, GOLDEN);
    Command::cargo_bin("chunksweep")
        .unwrap()
        .arg("validate")
        .arg("--corpus")
        .arg(root.join("corpus"))
        .arg("--golden")
        .arg(root.join("golden.jsonl"))
        .assert()
        .success()
        .stdout(contains("3 questions, 3 evidence spans"));
    // Markdown chunks of at most 20 words: each level-2 section is one chunk; the level-1
    // section "timeouts" (the whole document, 36 words) is in no single chunk.
    let run = root.join("run");
    Command::cargo_bin("chunksweep")
        .unwrap()
        .arg("sweep")
        .arg("--corpus")
        .arg(root.join("corpus"))
        .arg("--golden")
        .arg(root.join("golden.jsonl"))
        .args([
            "--strategies",
            "markdown",
            "--sizes",
            "20",
            "--overlap",
            "0",
        ])
        .args(["--k", "1", "--tokenizer", "words", "--quiet", "--out"])
        .arg(&run)
        .assert()
        .success();
    let mut reader = csv::Reader::from_path(run.join("sweep_questions.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (id, recall, chunks) = (
        col("question_id"),
        col("span_recall"),
        col("retrieved_chunk_ids"),
    );
    let got: BTreeMap<String, (String, String)> = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (
                r[id].to_string(),
                (r[recall].to_string(), r[chunks].to_string()),
            )
        })
        .collect();
    // Ids are the lines; the two sections are retrieved whole at rank 1.
    assert_eq!(got["line-1"].0, "1.0");
    assert_eq!(got["line-2"].0, "1.0");
    assert!(
        got["line-1"].1.starts_with("docs/api/timeouts.md#"),
        "{:?}",
        got["line-1"]
    );
    assert!(
        got["line-2"].1.starts_with("docs/security/keys.md#"),
        "{:?}",
        got["line-2"]
    );
    assert_eq!(got["line-3"].0, "0.0");
}

#[test]
fn validate_names_an_unknown_anchor_and_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_inputs(
        root,
        "{\"q\": \"How do I rotate keys?\", \"must_include\": \"docs/security/keys.md#rotate\"}\n\
         {\"q\": \"What is in keys?\", \"must_include\": \"docs/security/keys.md\"}\n\
         {\"q\": \"Fourth heading?\", \"must_include\": \"docs/security/keys.md#section-3\"}\n",
    );
    Command::cargo_bin("chunksweep")
        .unwrap()
        .arg("validate")
        .arg("--corpus")
        .arg(root.join("corpus"))
        .arg("--golden")
        .arg(root.join("golden.jsonl"))
        .assert()
        .code(2)
        .stdout(contains(
            "golden.jsonl:1: error: question \"line-1\", evidence 1: no heading with anchor \"rotate\" in \"docs/security/keys.md\" (its anchors: keys, rotation; or section-1 … section-2)",
        ))
        .stdout(contains("golden.jsonl:3: error: question \"line-3\", evidence 1: no heading with anchor \"section-3\""))
        .stdout(contains("3 questions, 1 evidence spans"))
        .stdout(contains("2 error(s)"));
}
