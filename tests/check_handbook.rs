//! `chunksweep check` on the handbook (datasets/handbook, 40 questions): a baseline swept with
//! markdown at 256 tokens and k = 3 (span recall 0.850), then the gate run against it with the
//! same chunker, another chunker, edited questions, an edited document, a damaged baseline and
//! baseline rows raised by hand (to make the run under test lose exactly the questions chosen).

use std::path::{Path, PathBuf};

use serde_json::Value;

use chunksweep::fingerprint::ChunkerFingerprint;
use chunksweep::sweep::rows::QuestionRow;

mod check_support;

use check_support::{check, chunksweep, root};

const PICK: &str = "markdown-256-o38-none-bm25-k3";

/// Sweeps the handbook with markdown at 256 tokens, k = 3, into `out`.
fn baseline(out: &Path) {
    chunksweep()
        .args(["sweep", "--corpus", "datasets/handbook"])
        .args(["--golden", "datasets/handbook-golden.jsonl"])
        .args([
            "--strategies",
            "markdown",
            "--sizes",
            "256",
            "--k",
            "3",
            "--quiet",
        ])
        .arg("--out")
        .arg(out)
        .assert()
        .success();
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

fn manifest(run: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap()
}

fn write_manifest(run: &Path, m: &Value) {
    std::fs::write(
        run.join("manifest.json"),
        serde_json::to_string_pretty(m).unwrap(),
    )
    .unwrap();
}

/// A temporary folder holding the baseline in `base/`.
fn baseline_in_temp() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base");
    baseline(&base);
    (dir, base)
}

#[test]
fn the_unchanged_chunker_passes() {
    let (dir, base) = baseline_in_temp();
    let (code, stdout, stderr, json) = check(&base, &dir.path().join("now"), &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.starts_with("# chunksweep check: ✅ pass\n"),
        "{stdout}"
    );
    assert!(stdout.contains(&format!(
        "**pass: `{PICK}` against the baseline's `{PICK}` on 40 question(s): span recall 0.850 vs 0.850 (0.000)"
    )), "{stdout}");
    assert!(
        stdout.contains("- Chunker: unchanged.\n- Corpus: unchanged.\n- Questions: unchanged.")
    );
    assert_eq!(json["verdict"]["outcome"], "pass");
    assert_eq!(json["verdict"]["n"], 40);
    assert_eq!(
        json["changes"]["chunker"]["baseline_sha256"],
        json["changes"]["chunker"]["candidate_sha256"]
    );
    // the run under test records its own fingerprints
    let now = manifest(&dir.path().join("now"));
    assert_eq!(now["fingerprints"]["chunker"]["config_id"], PICK);
}

/// `--delta` is the selection's name for the non-inferiority margin; `--margin`, its older name,
/// still sets it for one release, with a warning, and not together with `--delta`.
#[test]
fn the_old_margin_flag_sets_delta_with_a_deprecation_warning() {
    let (dir, base) = baseline_in_temp();
    let (code, stdout, stderr, json) = check(&base, &dir.path().join("new"), &["--delta", "0.07"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(!stderr.contains("deprecated"), "{stderr}");
    assert_eq!(json["settings"]["margin"], 0.07);
    let (code, stdout, stderr, json) = check(&base, &dir.path().join("old"), &["--margin", "0.07"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains(
            "warning: --margin is deprecated and will be removed in the next release: use --delta"
        ),
        "{stderr}"
    );
    assert_eq!(json["settings"]["margin"], 0.07);
    assert!(stdout.contains("non-inferior within δ = 0.07"), "{stdout}");
    let (code, _, stderr, _) = check(
        &base,
        &dir.path().join("both"),
        &["--margin", "0.07", "--delta", "0.07"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}

/// The README's CI job, as this repository runs it: the committed baseline (ci/chunk-baseline)
/// against the shipped chunker (ci/chunker.toml), warning-free. A baseline the current manifest
/// schema cannot read fails here first, not in a user's pull request.
#[test]
fn the_committed_ci_baseline_passes_against_the_shipped_chunker() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr, json) = check(
        &root().join("ci/chunk-baseline"),
        &dir.path().join("now"),
        &["--config", "ci/chunker.toml"],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(stderr, "", "no warning reading the committed baseline");
    assert!(
        stdout.contains("- Chunker: unchanged.\n- Corpus: unchanged.\n- Questions: unchanged."),
        "{stdout}"
    );
    assert_eq!(json["verdict"]["outcome"], "pass");
    assert_eq!(json["verdict"]["n"], 40);
}

#[test]
fn fixed_32_against_a_markdown_256_baseline_is_a_regression_naming_the_questions() {
    let (dir, base) = baseline_in_temp();
    let junit = dir.path().join("junit.xml");
    let out = dir.path().join("now");
    let (code, stdout, _, json) = check(
        &base,
        &out,
        &[
            "--strategies",
            "fixed",
            "--sizes",
            "32",
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{stdout}");
    let md = std::fs::read_to_string(out.join("check.md")).unwrap();
    assert!(stdout.starts_with(&md), "check.md is what is printed");
    assert!(
        md.starts_with("# chunksweep check: ❌ regression\n"),
        "{md}"
    );
    assert!(md.contains("**regression: `fixed-32-o4-none-bm25-k3` against the baseline's `markdown-256-o38-none-bm25-k3` on 40 question(s): span recall 0.138 vs 0.850 (−0.712); significantly worse (29 question(s) worse, 0 better, one-sided sign test p < 0.001 at α = 0.05)"), "{md}");
    assert!(md.contains("## Questions that got worse (29)"), "{md}");
    assert!(
        md.contains(
            "| q-004 | 1.00 → 0.00 | cut by a boundary: no chunk holds the evidence whole |"
        ),
        "{md}"
    );
    assert!(md.contains("| q-002 | 1.00 → 0.00 | retrieved lower: first whole at rank 76 (baseline rank 1), below the 3 retrieved |"), "{md}");
    assert!(
        md.contains(
            "- Chunker: strategy markdown → fixed; chunk_size 256 → 32; chunk_overlap 38 → 4;"
        ),
        "{md}"
    );
    assert_eq!(json["verdict"]["outcome"], "regression");
    let worse: Vec<&Value> = json["questions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["fate"].is_string())
        .collect();
    assert_eq!(worse.len(), 29);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(
            "<testsuites name=\"chunksweep check\" tests=\"1\" failures=\"1\" skipped=\"0\">"
        ),
        "{xml}"
    );
    assert!(
        xml.contains("<failure message=\"regression: `fixed-32-o4-none-bm25-k3`"),
        "{xml}"
    );
}

#[test]
fn removed_and_edited_questions_are_listed_and_the_shared_ones_compared() {
    let (dir, base) = baseline_in_temp();
    let text = std::fs::read_to_string(root().join("datasets/handbook-golden.jsonl")).unwrap();
    let golden: String = text
        .lines()
        .filter(|l| !l.contains("\"id\": \"q-039\"") && !l.contains("\"id\": \"q-040\""))
        .map(|l| {
            if l.contains("\"id\": \"q-005\"") {
                l.replace(
                    "What is the default block size",
                    "What block size is the default",
                )
            } else {
                l.to_string()
            }
        })
        .map(|l| l + "\n")
        .collect();
    assert!(golden.contains("What block size is the default"));
    let path = dir.path().join("golden.jsonl");
    std::fs::write(&path, golden).unwrap();
    let (code, stdout, stderr, json) = check(
        &base,
        &dir.path().join("now"),
        &["--golden", path.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        strings(&json["changes"]["questions"]["removed"]),
        ["q-039", "q-040"]
    );
    assert_eq!(strings(&json["changes"]["questions"]["changed"]), ["q-005"]);
    assert!(strings(&json["changes"]["questions"]["added"]).is_empty());
    assert_eq!(json["verdict"]["n"], 37);
    assert!(!strings(&json["changes"]["shared"]).contains(&"q-005"));
    assert!(
        stdout.contains("- Questions: edited (1): `q-005`; removed (2): `q-039`, `q-040`."),
        "{stdout}"
    );
    assert!(
        stdout.contains("- Compared: the 37 question(s) both share unchanged; not compared: 3"),
        "{stdout}"
    );
}

#[test]
fn a_changed_corpus_file_is_named() {
    let (dir, base) = baseline_in_temp();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    for entry in std::fs::read_dir(root().join("datasets/handbook")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), corpus.join(entry.file_name())).unwrap();
    }
    let edited = corpus.join("07-backups-and-retention.md");
    let mut text = std::fs::read_to_string(&edited).unwrap();
    text.push_str("\n## Archive tiers\n\nCold archives are kept on tape for seven years.\n");
    std::fs::write(&edited, text).unwrap();
    std::fs::write(
        corpus.join("11-glossary.md"),
        "# Glossary\n\nA vault is a shared folder.\n",
    )
    .unwrap();
    let (code, stdout, stderr, json) = check(
        &base,
        &dir.path().join("now"),
        &["--corpus", corpus.to_str().unwrap()],
    );
    assert!(code == 0 || code == 1, "{stdout}{stderr}");
    assert_eq!(
        strings(&json["changes"]["corpus"]["changed"]),
        ["07-backups-and-retention.md"]
    );
    assert_eq!(
        strings(&json["changes"]["corpus"]["added"]),
        ["11-glossary.md"]
    );
    assert!(
        stdout.contains(
            "- Corpus: changed (1): `07-backups-and-retention.md`; added (1): `11-glossary.md`."
        ),
        "{stdout}"
    );
    // the questions are the same: every one is compared
    assert_eq!(json["verdict"]["n"], 40);
}

#[test]
fn a_baseline_without_sweep_questions_or_without_its_settings_is_exit_2() {
    let (dir, base) = baseline_in_temp();
    let questions = std::fs::read(base.join("sweep_questions.csv")).unwrap();
    std::fs::remove_file(base.join("sweep_questions.csv")).unwrap();
    let (code, stdout, stderr, _) = check(&base, &dir.path().join("a"), &[]);
    assert_eq!(code, 2, "{stdout}");
    assert_eq!(
        stderr,
        format!(
            "error: check against {}: {} not found: is this a chunksweep run folder?\n",
            base.display(),
            base.join("sweep_questions.csv").display()
        )
    );
    std::fs::write(base.join("sweep_questions.csv"), questions).unwrap();
    let mut m = manifest(&base);
    m["config"].as_object_mut().unwrap().remove("sweep");
    write_manifest(&base, &m);
    let (code, _, stderr, _) = check(&base, &dir.path().join("b"), &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "manifest.json lacks config.sweep: a manifest of schema_version 6 records every setting"
        ),
        "{stderr}"
    );
}

#[test]
fn no_question_shared_is_exit_2() {
    let (dir, base) = baseline_in_temp();
    let text = std::fs::read_to_string(root().join("datasets/handbook-golden.jsonl")).unwrap();
    let path = dir.path().join("golden.jsonl");
    std::fs::write(&path, text.replace("\"id\": \"q-", "\"id\": \"new-")).unwrap();
    let (code, _, stderr, _) = check(
        &base,
        &dir.path().join("now"),
        &["--golden", path.to_str().unwrap()],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("no question to compare: the baseline"),
        "{stderr}"
    );
    assert!(
        stderr.contains("(40 removed, 40 added, 0 edited since the baseline)"),
        "{stderr}"
    );
}

/// Raises the baseline's rows of `ids` to span recall 1 and hit 1, so that the unchanged
/// chunker loses exactly those questions against it.
fn raise(base: &Path, ids: &[&str]) {
    let path = base.join("sweep_questions.csv");
    let mut reader = csv::Reader::from_path(&path).unwrap();
    let mut rows: Vec<QuestionRow> = reader.deserialize().map(Result::unwrap).collect();
    for r in rows
        .iter_mut()
        .filter(|r| ids.contains(&r.question_id.as_str()))
    {
        assert_eq!(
            r.span_recall, 0.0,
            "{} is lost by the pick already",
            r.question_id
        );
        r.span_recall = 1.0;
        r.hit = 1;
    }
    let mut writer = csv::Writer::from_path(&path).unwrap();
    for r in &rows {
        writer.serialize(r).unwrap();
    }
    writer.flush().unwrap();
}

/// The questions the baseline's pick misses (span recall 0).
fn missed(base: &Path) -> Vec<String> {
    let mut reader = csv::Reader::from_path(base.join("sweep_questions.csv")).unwrap();
    reader
        .deserialize::<QuestionRow>()
        .map(Result::unwrap)
        .filter(|r| r.span_recall == 0.0)
        .map(|r| r.question_id)
        .collect()
}

#[test]
fn one_question_of_forty_is_no_regression_and_max_drop_catches_a_large_drop() {
    let (dir, base) = baseline_in_temp();
    let missed = missed(&base);
    assert!(missed.len() >= 3, "{missed:?}");
    raise(&base, &[&missed[0]]);
    let (code, stdout, stderr, json) = check(&base, &dir.path().join("one"), &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(json["verdict"]["outcome"], "inconclusive");
    assert_eq!(json["verdict"]["sign"]["reference_better"], 1);
    assert!(
        stdout.starts_with("# chunksweep check: ⚠️ pass, inconclusive\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "if it were as good as the baseline, about 62 questions would show it within δ"
        ),
        "{stdout}"
    );
    assert!(
        stderr.contains("warning: the retrieval check is inconclusive (see check.md); it fails the check only with --fail-on-inconclusive"),
        "{stderr}"
    );
    // even with no allowance for a drop, one question never fails alone
    let (code, ..) = check(&base, &dir.path().join("one-strict"), &["--max-drop", "0"]);
    assert_eq!(code, 0);
    // ... but an inconclusive check fails when asked to
    let (code, ..) = check(
        &base,
        &dir.path().join("one-fail"),
        &["--fail-on-inconclusive"],
    );
    assert_eq!(code, 1);
    // three questions lost: the sign test (p = 1/8) and the margin cannot tell; a drop of 0.075
    raise(&base, &[&missed[1], &missed[2]]);
    let (code, _, _, json) = check(&base, &dir.path().join("three"), &[]);
    assert_eq!(code, 0);
    assert_eq!(json["verdict"]["outcome"], "inconclusive");
    let p = json["verdict"]["sign"]["p_value"].as_f64().unwrap();
    assert!((p - 0.125).abs() < 1e-12, "{p}");
    let (code, stdout, _, json) = check(
        &base,
        &dir.path().join("three-floor"),
        &["--max-drop", "0.05"],
    );
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(
        json["verdict"]["reasons"],
        serde_json::json!(["large_drop"])
    );
    assert!(
        stdout.contains("mean span recall dropped 0.075 > --max-drop 0.05"),
        "{stdout}"
    );
}

#[test]
fn the_chunker_fingerprint_changes_with_a_setting_or_a_splitting_library_version() {
    let (dir, base) = baseline_in_temp();
    let mut m = manifest(&base);
    let recorded: ChunkerFingerprint =
        serde_json::from_value(m["fingerprints"]["chunker"].clone()).unwrap();
    // the recorded hash is the hash of the recorded settings
    assert_eq!(ChunkerFingerprint::new(recorded.chunker.clone()), recorded);
    let mut size = recorded.chunker.clone();
    size.chunk_size = 128;
    assert_ne!(ChunkerFingerprint::new(size).sha256, recorded.sha256);
    let mut older = recorded.chunker.clone();
    older
        .libraries
        .insert("text-splitter".into(), "0.32.0".into());
    let older = ChunkerFingerprint::new(older);
    assert_ne!(older.sha256, recorded.sha256);
    // a baseline built with the older text-splitter: check names the version change
    m["fingerprints"]["chunker"] = serde_json::to_value(&older).unwrap();
    write_manifest(&base, &m);
    let (code, stdout, _, json) = check(&base, &dir.path().join("now"), &[]);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("- Chunker: libraries.text-splitter 0.32.0 → 0.33.1."),
        "{stdout}"
    );
    assert_eq!(
        json["changes"]["chunker"]["baseline_sha256"],
        older.sha256.as_str()
    );
}

#[test]
fn a_baseline_written_before_fingerprints_is_checked_by_question_id_with_a_warning() {
    let (dir, base) = baseline_in_temp();
    let mut m = manifest(&base);
    m["schema_version"] = 1.into();
    m.as_object_mut().unwrap().remove("fingerprints");
    write_manifest(&base, &m);
    let (code, stdout, stderr, json) = check(&base, &dir.path().join("now"), &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("(schema_version 1, older than 6) lacks fingerprints"),
        "{stderr}"
    );
    assert!(
        stdout.contains("The baseline's manifest records no fingerprints"),
        "{stdout}"
    );
    assert_eq!(json["changes"]["baseline_fingerprinted"], false);
    assert_eq!(json["verdict"]["n"], 40);
    // the current schema must have them
    m["schema_version"] = 6.into();
    write_manifest(&base, &m);
    let (code, _, stderr, _) = check(&base, &dir.path().join("again"), &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("lacks fingerprints: a manifest of schema_version 6 records every setting"),
        "{stderr}"
    );
}

#[test]
fn flags_giving_two_chunkers_or_another_cut_are_refused() {
    let (dir, base) = baseline_in_temp();
    let (code, _, stderr, _) = check(&base, &dir.path().join("a"), &["--sizes", "128,256"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("check tests one chunker, but the flags and config file give 2 (markdown-128-o19-none-bm25, markdown-256-o38-none-bm25)"), "{stderr}");
    let (code, _, stderr, _) = check(&base, &dir.path().join("b"), &["--k", "5"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "check compares at the baseline's cut (k = 3), but the flags or config file give k = 5"
        ),
        "{stderr}"
    );
}

/// Sweeps the handbook with recursive at 128 tokens, budget 1,000, and `expand`, into `out`.
fn expanded_baseline(out: &Path, expand: &str) {
    chunksweep()
        .args(["sweep", "--config", "datasets/handbook.toml"])
        .args(["--strategies", "recursive", "--sizes", "128"])
        .args(["--budget", "1000", "--expand", expand, "--quiet"])
        .arg("--out")
        .arg(out)
        .assert()
        .success();
}

#[test]
fn a_change_of_expansion_alone_says_what_was_sent() {
    let dir = tempfile::tempdir().unwrap();
    // the same chunks and ranking, parents sent in the baseline and chunks alone now: q-034's
    // evidence was in the parent of a higher hit, its own chunk ranks 118th on both sides
    let parents = dir.path().join("parents");
    expanded_baseline(&parents, "parent:1024");
    let (_, stdout, stderr, json) =
        check(&parents, &dir.path().join("alone"), &["--expand", "none"]);
    assert!(stdout.contains("| q-034 | 1.00 → 0.00 | no longer sent: its first whole chunk is at rank 118 in both, but the units sent now (expand none, 10 sent) hold less of it than the baseline's (expand parent:1024, 4 sent) |\n"), "{stdout}{stderr}");
    assert!(
        stdout.contains("- Chunker: expand parent:1024 → not used."),
        "{stdout}"
    );
    assert!(!stdout.contains("retrieved lower"), "{stdout}");
    let q034 = json["questions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["question_id"] == "q-034")
        .unwrap();
    assert_eq!(q034["fate"], "not_sent");
    assert_eq!(q034["baseline"]["expand"], "parent:1024");
    // chunks alone in the baseline, parents now: the budget fits fewer of the larger units and
    // stops above the chunk (rank 5) that it took before
    let alone = dir.path().join("alone-base");
    expanded_baseline(&alone, "none");
    let (_, stdout, stderr, _) = check(
        &alone,
        &dir.path().join("parents-now"),
        &["--expand", "parent:1024"],
    );
    assert!(stdout.contains("| q-006 | 1.00 → 0.00 | the budget no longer takes it: its first whole chunk is at rank 5 in both, taken by the baseline (expand none, 9 sent) but not now (expand parent:1024, 4 sent: its unit is over what is left of the budget, or over the whole budget) |\n"), "{stdout}{stderr}");
}
