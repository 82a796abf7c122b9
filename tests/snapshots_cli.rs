//! Snapshots of the texts users read, so that each change of wording shows as one reviewed diff
//! (`cargo insta review`, or compare the `.snap.new` file beside the snapshot):
//!
//! - every command's `--help`;
//! - report.md and selection.csv that `chunksweep report` writes from a copy of each committed
//!   example under results/examples/, and the judge section of the judged example's report.md;
//! - check.md and check.json of `chunksweep check` on the committed CI baseline
//!   (ci/chunk-baseline, ci/chunker.toml), for the shipped chunker and for fixed windows of 32
//!   tokens (a regression).
//!
//! Run-specific values (the temporary folder, SHA-256 digests, which change with library
//! versions) are replaced by placeholders before the comparison.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The binary, run from the repository's root with no server configured.
fn chunksweep() -> Command {
    let mut cmd = Command::cargo_bin("chunksweep").unwrap();
    cmd.current_dir(root())
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env("NO_COLOR", "1");
    cmd
}

/// Every command and subcommand, as typed after `chunksweep` (src/cli/args.rs, src/cli/golden.rs).
const COMMANDS: &[&[&str]] = &[
    &[],
    &["sweep"],
    &["run"],
    &["report"],
    &["merge"],
    &["validate"],
    &["check"],
    &["judge-check"],
    &["prompts"],
    &["prompts", "export"],
    &["golden"],
    &["golden", "draft"],
    &["golden", "review"],
    &["extract"],
];

#[test]
fn every_help_text() {
    for words in COMMANDS {
        let output = chunksweep().args(*words).arg("--help").output().unwrap();
        assert!(output.status.success(), "{words:?} --help failed");
        let text = String::from_utf8(output.stdout).unwrap();
        let name = if words.is_empty() {
            "help".to_string()
        } else {
            format!("help_{}", words.join("_").replace('-', "_"))
        };
        insta::with_settings!({ description => format!("chunksweep {} --help", words.join(" ")) }, {
            insta::assert_snapshot!(name, text);
        });
    }
}

fn copy_files(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
}

/// The committed examples that `report` can read again (manifest.json and sweep_questions.csv
/// at the top).
fn examples() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("results/examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("manifest.json").is_file() && p.join("sweep_questions.csv").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `chunksweep report` on a copy of the example `name`: (report.md, selection.csv).
fn report_again(name: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join(name);
    copy_files(&root().join("results/examples").join(name), &run);
    let output = chunksweep().arg("report").arg(&run).output().unwrap();
    assert!(
        output.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let read = |file: &str| std::fs::read_to_string(run.join(file)).unwrap();
    (read("report.md"), read("selection.csv"))
}

#[test]
fn the_committed_examples_reports() {
    let names = examples();
    assert!(names.len() >= 2, "examples: {names:?}");
    for name in names {
        let (md, selection) = report_again(&name);
        let snap = name.replace('-', "_");
        insta::assert_snapshot!(format!("example_{snap}_report_md"), md);
        insta::assert_snapshot!(format!("example_{snap}_selection_csv"), selection);
    }
}

#[test]
fn the_judge_section_of_the_judged_example() {
    let (md, _) = report_again("handbook-judged");
    let start = md
        .find("\n## Answer quality (judge)")
        .expect("the judged example's report.md has a judge section");
    insta::assert_snapshot!("example_handbook_judged_judge_section", &md[start + 1..]);
}

/// `chunksweep check` on the committed baseline with ci/chunker.toml and `flags`, into a
/// temporary folder: (exit code, check.md, check.json), the folder's path redacted.
fn check(flags: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("now");
    let output = chunksweep()
        .args(["check", "--baseline", "ci/chunk-baseline"])
        .args(["--config", "ci/chunker.toml", "--quiet", "--out"])
        .arg(&out)
        .args(flags)
        .output()
        .unwrap();
    let read = |file: &str| std::fs::read_to_string(out.join(file)).unwrap();
    let tmp = dir.path().to_string_lossy().into_owned();
    let redact = |text: String| text.replace(&tmp, "[tmp]");
    (
        output.status.code().unwrap(),
        redact(read("check.md")),
        redact(read("check.json")),
    )
}

fn redacted<T>(f: impl FnOnce() -> T) -> T {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"\b[0-9a-f]{64}\b", "[sha256]");
    settings.add_filter(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z?", "[time]");
    settings.bind(f)
}

#[test]
fn check_on_the_committed_baseline_with_the_shipped_chunker() {
    let (code, md, json) = check(&[]);
    assert_eq!(code, 0, "{md}");
    redacted(|| {
        insta::assert_snapshot!("check_ci_baseline_pass_md", md);
        insta::assert_snapshot!("check_ci_baseline_pass_json", json);
    });
}

#[test]
fn check_on_the_committed_baseline_with_fixed_32() {
    let (code, md, json) = check(&["--strategies", "fixed", "--sizes", "32"]);
    assert_eq!(code, 1, "{md}");
    redacted(|| {
        insta::assert_snapshot!("check_ci_baseline_regression_md", md);
        insta::assert_snapshot!("check_ci_baseline_regression_json", json);
    });
}
