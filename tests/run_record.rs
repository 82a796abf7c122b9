//! The run record: a run folder's manifest.json holds the resolved plan with a schema version,
//! and `report` and `judge-check` open the run through it. A setting missing from a current
//! manifest is an error naming it (exit 2); a manifest without a schema version reads each
//! missing setting as its default and names it in a warning.
//!
//! The run is seed 000's toy corpus as in select_report.rs (8 questions, `words`, overlap 25%,
//! k = 2): the default rule picks size 24, the seeds' literal rule (`--rule seed`) picks 48.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed000")
}

fn chunksweep() -> Command {
    Command::cargo_bin("chunksweep").unwrap()
}

const PICK_24: &str = "pick: words-24-o6-none-bm25+seed-k2";
const PICK_48: &str = "pick: words-48-o12-none-bm25+seed-k2";

/// `sweep` of the fixture into `out` with the config file `config` and `extra` flags.
fn sweep_command(out: &Path, config: &Path, extra: &[&str]) -> Command {
    let mut cmd = chunksweep();
    cmd.arg("sweep")
        .arg("--corpus")
        .arg(fixture().join("corpus"))
        .arg("--golden")
        .arg(fixture().join("golden.jsonl"))
        .args(["--strategies", "words", "--sizes", "8,12,16,24,32,48,64"])
        .args(["--overlap", "0.25", "--k", "2", "--tokenizer", "words"])
        .arg("--config")
        .arg(config)
        .args(extra)
        .arg("--out")
        .arg(out);
    cmd
}

/// Sweeps the fixture into `out` with `extra` flags; its stdout must name `pick`.
fn sweep(out: &Path, extra: &[&str], pick: &str) {
    sweep_command(out, &fixture().join("seed-analyzer.toml"), extra)
        .assert()
        .success()
        .stdout(predicate::str::contains(pick));
}

fn manifest(run: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap()
}

/// Rewrites the run's manifest.json with `edit` applied.
fn edit_manifest(run: &Path, edit: impl FnOnce(&mut Value)) {
    let mut m = manifest(run);
    edit(&mut m);
    std::fs::write(
        run.join("manifest.json"),
        serde_json::to_string_pretty(&m).unwrap(),
    )
    .unwrap();
}

fn remove(m: &mut Value, section: &str, key: &str) {
    m["config"][section].as_object_mut().unwrap().remove(key);
}

/// `report RUN` with `flags`: (exit code, stdout, stderr).
fn report(run: &Path, flags: &[&str]) -> (Option<i32>, String, String) {
    let o = chunksweep()
        .arg("report")
        .args(flags)
        .arg(run)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn selection_settings_given_to_sweep_are_recorded_and_report_reads_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    sweep(&run, &["--rule", "seed", "--halves", "50"], PICK_48);
    let m = manifest(&run);
    assert_eq!(m["schema_version"], 6);
    assert_eq!(m["config"]["selection"]["rule"], "seed");
    assert_eq!(m["config"]["selection"]["halves"], 50);
    assert_eq!(m["config"]["selection"]["alpha"], 0.05);
    let before = std::fs::read(run.join("report.md")).unwrap();
    assert!(String::from_utf8_lossy(&before).contains("Draw 50 random halves"));
    std::fs::remove_file(run.join("report.md")).unwrap();
    // No flag: the recorded rule and halves, the same bytes, no warning.
    let (code, stdout, stderr) = report(&run, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(PICK_48), "{stdout}");
    assert_eq!(stderr, "");
    assert!(std::fs::read(run.join("report.md")).unwrap() == before);
    // A flag overrides the record for this report only.
    let (code, stdout, _) = report(&run, &["--rule", "paired"]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains(PICK_24), "{stdout}");
    assert_eq!(manifest(&run)["config"]["selection"]["rule"], "seed");
}

#[test]
fn a_manifest_without_its_selection_settings_is_an_error_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    sweep(&run, &[], PICK_24);
    let path = run.join("manifest.json");
    let report_md = std::fs::read(run.join("report.md")).unwrap();
    edit_manifest(&run, |m| {
        m["config"].as_object_mut().unwrap().remove("selection");
    });
    let (code, _, stderr) = report(&run, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "error: report of {}: {} lacks config.selection: a manifest of schema_version 6 \
             records every setting; restore it or rerun the command that wrote the folder\n",
            run.display(),
            path.display()
        )
    );
    // Two fields missing are both named; nothing was rewritten.
    sweep(&run, &[], PICK_24);
    edit_manifest(&run, |m| {
        remove(m, "selection", "alpha");
        remove(m, "selection", "recall_tolerance");
    });
    let (code, _, stderr) = report(&run, &["--rule", "seed"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{} lacks config.selection.alpha, config.selection.recall_tolerance: a manifest of \
             schema_version 6 records every setting; restore them or rerun",
            path.display()
        )),
        "{stderr}"
    );
    assert!(std::fs::read(run.join("report.md")).unwrap() == report_md);
}

#[test]
fn a_manifest_without_its_command_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    sweep(&run, &[], PICK_24);
    edit_manifest(&run, |m| {
        m.as_object_mut().unwrap().remove("command");
    });
    let (code, _, stderr) = report(&run, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "error: report of {}: {} lacks command: a manifest of schema_version 6 records \
             every setting; restore it or rerun the command that wrote the folder\n",
            run.display(),
            run.join("manifest.json").display()
        )
    );
}

#[test]
fn a_wrong_typed_manifest_field_is_named_by_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    sweep(&run, &[], PICK_24);
    let path = run.join("manifest.json");
    for (edit, message) in [
        (
            ("selection", "alpha", Value::from("0.05")),
            "config.selection.alpha: invalid type: string \"0.05\", expected f64",
        ),
        (
            ("sweep", "sizes", serde_json::json!([8, "x"])),
            "config.sweep.sizes[1]: invalid type: string \"x\", expected usize",
        ),
    ] {
        sweep(&run, &[], PICK_24);
        let (section, key, value) = edit;
        edit_manifest(&run, |m| m["config"][section][key] = value);
        let (code, _, stderr) = report(&run, &[]);
        assert_eq!(code, Some(2), "{stderr}");
        assert_eq!(
            stderr,
            format!(
                "error: report of {}: cannot read {}: {message}\n",
                run.display(),
                path.display()
            )
        );
    }
    sweep(&run, &[], PICK_24);
    edit_manifest(&run, |m| m["command"] = 7.into());
    let (code, _, stderr) = report(&run, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.ends_with("command: invalid type: integer `7`, expected a sequence\n"),
        "{stderr}"
    );
}

#[test]
fn a_manifest_missing_a_judge_setting_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    sweep(&run, &[], PICK_24);
    edit_manifest(&run, |m| remove(m, "judge", "candidates"));
    let (code, _, stderr) = report(&run, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{} lacks config.judge.candidates: a manifest of schema_version 6 records every \
             setting",
            run.join("manifest.json").display()
        )),
        "{stderr}"
    );
}

#[test]
fn an_older_manifest_reads_each_missing_setting_as_its_default_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    sweep(&run, &[], PICK_24);
    let report_md = std::fs::read(run.join("report.md")).unwrap();
    edit_manifest(&run, |m| {
        m.as_object_mut().unwrap().remove("schema_version");
        m["config"].as_object_mut().unwrap().remove("selection");
        remove(m, "judge", "mode");
    });
    let (code, stdout, stderr) = report(&run, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(PICK_24), "{stdout}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    let prefix = format!(
        "warning: {} (no schema_version: written by an older chunksweep) lacks ",
        run.join("manifest.json").display()
    );
    assert_eq!(
        lines[0],
        format!("{prefix}config.judge.mode: read as its default \"per_criterion\"")
    );
    assert!(
        lines[1].starts_with(&format!("{prefix}config.selection: read as its default {{")),
        "{}",
        lines[1]
    );
    // every defaulted field of the section is named, with the value used
    for field in [
        "\"rule\":\"equivalence\"",
        "\"alpha\":0.05",
        "\"delta\":0.05",
        "\"margin_tolerance\":0.03",
        "\"recall_tolerance\":0.02",
        "\"candidates\":3",
        "\"halves\":200",
        "\"seed\":42",
        "\"stable_share\":0.9",
        "\"confidence\":0.95",
        "\"bootstrap_resamples\":2000",
        "\"min_questions\":30",
        "\"boundary_gap\":0.15",
        "\"min_type_questions\":10",
        "\"weak_recall\":0.7",
    ] {
        assert!(lines[1].contains(field), "{field} in {}", lines[1]);
    }
    // The defaults are what the sweep ran with: the same report.
    assert!(std::fs::read(run.join("report.md")).unwrap() == report_md);
}

#[test]
fn a_newer_manifest_or_none_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    sweep(&run, &[], PICK_24);
    edit_manifest(&run, |m| m["schema_version"] = 99.into());
    let (code, _, stderr) = report(&run, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("has schema_version 99, newer than this chunksweep reads (6)"),
        "{stderr}"
    );
    std::fs::remove_file(run.join("manifest.json")).unwrap();
    let (code, _, stderr) = report(&run, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("manifest.json not found: is this a chunksweep run folder?"),
        "{stderr}"
    );
}

#[test]
fn a_schema_version_that_is_not_a_whole_number_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    sweep(&run, &[], PICK_24);
    let path = run.join("manifest.json");
    for (found, shown) in [
        (Value::from("1"), "\"1\""),
        (Value::Null, "null"),
        (Value::from(-1), "-1"),
        (Value::from(1.5), "1.5"),
    ] {
        edit_manifest(&run, |m| {
            m["schema_version"] = found;
            // without its settings, a null would read as an old manifest's defaults
            m["config"].as_object_mut().unwrap().remove("selection");
        });
        let (code, _, stderr) = report(&run, &[]);
        assert_eq!(code, Some(2), "{stderr}");
        assert_eq!(
            stderr,
            format!(
                "error: report of {}: {} has schema_version {shown}: it must be a whole number \
                 (6 for this chunksweep), absent only in manifests written before it existed\n",
                run.display(),
                path.display()
            )
        );
    }
}

#[test]
fn zero_halves_or_candidates_are_refused_from_flags_config_file_and_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    const HALVES: &str = "selection.halves (--halves) is 0: it must be at least 1";
    const CANDIDATES: &str = "judge.candidates (--n-candidates of run, --candidates of report) is 0: it must be at least 1";
    let refused = |cmd: &mut Command, message: &str| {
        let o = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.ends_with(&format!(": invalid setting: {message}\n")),
            "{stderr}"
        );
    };
    let seed = fixture().join("seed-analyzer.toml");
    refused(&mut sweep_command(&run, &seed, &["--halves", "0"]), HALVES);
    let config = dir.path().join("halves.toml");
    std::fs::write(&config, "[selection]\nhalves = 0\n").unwrap();
    refused(&mut sweep_command(&run, &config, &[]), HALVES);
    assert!(!run.exists());
    sweep(&run, &[], PICK_24);
    for (flags, message) in [
        (["--halves", "0"], HALVES),
        (["--candidates", "0"], CANDIDATES),
    ] {
        let (code, _, stderr) = report(&run, &flags);
        assert_eq!(code, Some(2), "{stderr}");
        assert_eq!(
            stderr,
            format!(
                "error: report of {}: invalid setting: {message}\n",
                run.display()
            )
        );
    }
    for (key, message) in [("halves", HALVES), ("candidates", CANDIDATES)] {
        sweep(&run, &[], PICK_24);
        edit_manifest(&run, |m| m["config"]["selection"][key] = 0.into());
        let (code, _, stderr) = report(&run, &[]);
        assert_eq!(code, Some(2), "{stderr}");
        assert_eq!(
            stderr,
            format!(
                "error: report of {}: invalid setting: {message}\n",
                run.display()
            )
        );
    }
}

#[test]
fn judge_check_rebuilds_a_labelled_csv_from_its_run_record() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    sweep(&run, &[], PICK_24);
    let labels = run.join("judge_questions.csv");
    std::fs::write(
        &labels,
        "config_id,question_id,answer,human_label_faithfulness\n\
         words-24-o6-none-bm25+seed-k2,s1,300 seconds,pass\n\
         words-48-o12-none-bm25+seed-k2,s2,it is ignored,fail\n",
    )
    .unwrap();
    // No --config: the corpus, golden set and grid come from the run's manifest.json.
    chunksweep()
        .arg("judge-check")
        .arg("--labels")
        .arg(&labels)
        .args(["--judge-model", "m1", "--dry-run"])
        .assert()
        .success()
        .stdout(predicate::str::contains("dry run: 2 labelled item(s)"))
        .stdout(predicate::str::contains("judge m1"));
    // A judge setting missing from the record is named, as for `report`.
    edit_manifest(&run, |m| remove(m, "judge", "judge_max_tokens"));
    chunksweep()
        .arg("judge-check")
        .arg("--labels")
        .arg(&labels)
        .arg("--dry-run")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "lacks config.judge.judge_max_tokens",
        ));
}

/// Copies the files of `from` (no subfolders) into `to`.
fn copy_files(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn the_committed_examples_are_reported_again_byte_for_byte() {
    // The README links these two; a schema raised without a default for an older folder's
    // missing settings would make `report` refuse them (exit 2).
    for name in ["chroma-general", "handbook-judged"] {
        let example = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("results/examples")
            .join(name);
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join(name);
        copy_files(&example, &run);
        let (code, _, stderr) = report(&run, &[]);
        assert_eq!(code, Some(0), "{name}: {stderr}");
        for file in ["report.md", "selection.csv"] {
            assert!(
                std::fs::read(run.join(file)).unwrap()
                    == std::fs::read(example.join(file)).unwrap(),
                "{name}: {file} differs from the committed one"
            );
        }
    }
}
