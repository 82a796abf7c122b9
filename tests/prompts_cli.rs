//! The prompts compiled into the binary: `run` works from a folder without `prompts/`,
//! `prompts export DIR` writes them out, and `--prompts DIR` overrides them.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;

fn chunksweep() -> Command {
    Command::cargo_bin("chunksweep").unwrap()
}

/// A config with absolute paths to the handbook, and a server that is never called (dry run).
fn config(dir: &Path) -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cfg = dir.join("c.toml");
    std::fs::write(
        &cfg,
        format!(
            "corpus = {:?}\ngolden = {:?}\n[sweep]\nstrategies = [\"markdown\"]\nsizes = [256]\n[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\ncache_path = {:?}\n",
            root.join("datasets/handbook"),
            root.join("datasets/handbook-golden.jsonl"),
            dir.join("cache.sqlite")
        ),
    )
    .unwrap();
    cfg
}

#[test]
fn run_works_from_an_empty_folder_and_prompts_can_be_exported_and_overridden() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("elsewhere");
    std::fs::create_dir(&empty).unwrap();
    let cfg = config(dir.path());
    // No prompts/ folder here: the built-in templates are used.
    chunksweep()
        .current_dir(&empty)
        .args(["run", "--dry-run", "--quiet", "--config"])
        .arg(&cfg)
        .arg("--out")
        .arg(dir.path().join("run"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "dry run: 1 candidate(s) × 40 question(s)",
        ));
    assert!(dir.path().join("run/report.html").exists());

    // Export writes the five templates as the repository has them, and never overwrites.
    let exported = empty.join("my-prompts");
    chunksweep()
        .current_dir(&empty)
        .args(["prompts", "export", "my-prompts"])
        .assert()
        .success()
        .stdout(predicate::str::contains("wrote my-prompts/generate.md"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
    for name in [
        "generate.md",
        "faithfulness.md",
        "relevancy.md",
        "correctness.md",
        "context.md",
    ] {
        assert_eq!(
            std::fs::read(exported.join(name)).unwrap(),
            std::fs::read(root.join(name)).unwrap(),
            "{name}"
        );
    }
    chunksweep()
        .current_dir(&empty)
        .args(["prompts", "export", "my-prompts"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));

    // An edited folder overrides the built-in templates (and is checked).
    std::fs::write(exported.join("generate.md"), "Answer {question}.").unwrap();
    chunksweep()
        .current_dir(&empty)
        .args([
            "run",
            "--dry-run",
            "--quiet",
            "--prompts",
            "my-prompts",
            "--config",
        ])
        .arg(&cfg)
        .arg("--out")
        .arg(dir.path().join("run2"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "my-prompts/generate.md has no {context} placeholder",
        ));
}
