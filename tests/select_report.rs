//! The decision files end to end: `chunksweep sweep` writes selection.csv, report.md and
//! sweep.svg; `chunksweep report` regenerates the same bytes from the run's CSVs; settings given
//! to `report` show in the report; a folder that is not a run is a usage error.
//!
//! The run is seed 000's toy corpus (8 questions, `words` strategy, overlap 25%, k = 2). There,
//! sizes 24, 48 and 64 all reach recall 1.00. The default rule (`equivalence`) keeps all three
//! (none differs from the best on any question, so each is non-inferior within δ = 0.05) and
//! picks the cheapest, 24, as seed 000's rule does ("the smallest size within 0.02 recall of the
//! best"); so does `--rule paired`. The seeds' literal rule (`--rule seed`)
//! keeps only 48 (margin 0.442) and 64 (0.398) near the best margin, and 64's 0.398 is below the
//! 3% floor 0.429, so it picks 48.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed000")
}

fn chunksweep() -> Command {
    Command::cargo_bin("chunksweep").unwrap()
}

fn sweep(out: &Path) {
    chunksweep()
        .arg("sweep")
        .arg("--corpus")
        .arg(fixture().join("corpus"))
        .arg("--golden")
        .arg(fixture().join("golden.jsonl"))
        .args(["--strategies", "words", "--sizes", "8,12,16,24,32,48,64"])
        .args(["--overlap", "0.25", "--k", "2", "--tokenizer", "words"])
        .arg("--config")
        .arg(fixture().join("seed-analyzer.toml"))
        .arg("--out")
        .arg(out)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "pick: words-24-o6-none-bm25+seed-k2 (47 words/query, span recall@k 1.000)",
        ));
}

/// `text` with the characters that a regular expression treats specially escaped.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if r"\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn records(path: &Path) -> (csv::StringRecord, Vec<csv::StringRecord>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().clone();
    let rows = reader.records().map(Result::unwrap).collect();
    (header, rows)
}

#[test]
fn sweep_writes_the_decision_and_report_regenerates_it_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    sweep(&run);

    // selection.csv: one row per configuration, flat columns, exactly one winner.
    let (header, rows) = records(&run.join("selection.csv"));
    for column in [
        "config_id",
        "status",
        "kept",
        "rank",
        "reason",
        "win_share",
        "span_recall_lo",
        "span_recall_hi",
        "hit_rate_lo",
        "hit_rate_hi",
        "coverage_lo",
        "margin_hi",
        "mcnemar_p",
        "pareto",
        "sign_p_holm",
        "vs_best_class",
        "diff_mean",
        "diff_lower",
        "diff_upper",
        "questions_needed",
        "questions_skipped_for_size",
        "chunks_over_budget",
    ] {
        assert!(header.iter().any(|h| h == column), "no column {column}");
    }
    assert_eq!(rows.len(), 7);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let winners: Vec<&str> = rows
        .iter()
        .filter(|r| &r[col("status")] == "winner")
        .map(|r| &r[col("config_id")])
        .collect();
    assert_eq!(winners, ["words-24-o6-none-bm25+seed-k2"]);
    // 16 (recall 0.625: 0 on 3 of the 8 questions where the best has 1) is undetermined: the
    // differences −1, −1, −1, 0 × 5 have mean −0.375 and sd 0.517549; t(0.95, 7) = 1.894579 gives
    // the one-sided bounds −0.375 ∓ 0.346672. Had it been as good as the best (a true difference
    // of 0), ((1.644854 + 0.841621) · 0.517549 / 0.05)² = 662.41 → 663 questions would show it
    // within δ; P(worse by more than δ) = F_t(7)((−0.05 + 0.375) / 0.182980) = F_t(7)(1.776) =
    // 0.94.
    let r16 = &rows[2];
    assert_eq!(&r16[col("status")], "dropped");
    assert_eq!(&r16[col("vs_best_class")], "undetermined");
    assert_eq!(&r16[col("questions_needed")], "663");
    assert!(
        r16[col("p_worse")].starts_with("0.94"),
        "{}",
        &r16[col("p_worse")]
    );
    assert!(
        r16[col("reason")].contains(
            "undetermined within δ = 0.05 (mean difference to the best -0.375, one-sided 95% \
             bounds -0.722 to -0.028 straddle −0.05); P(worse by more than δ) = 0.94; if it were \
             as good as the best, about 663 questions in all would show it within δ (have 8) at \
             α = 0.05 and 80% power"
        ),
        "{}",
        &r16[col("reason")]
    );
    // Win shares are shares of the same 200 halves.
    let total: f64 = rows
        .iter()
        .map(|r| r[col("win_share")].parse::<f64>().unwrap())
        .sum();
    assert!((total - 1.0).abs() < 1e-9, "{total}");

    // report.md and selection.csv as a whole, against the reviewed snapshots in
    // tests/snapshots/ (the temporary run folder and the binary's path redacted). The decision
    // comes first: `words-24-o6-none-bm25+seed-k2`, as good as 48 and 64 on every question and
    // cheaper, stable on 95% of the halves although there are only 8 questions.
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    // The decision sentence a reviewer checks against selection.csv.
    assert!(md.contains(
        "At k = 2 (about 47 words per query), `words-24-o6-none-bm25+seed-k2` is non-inferior to \
         the best within δ = 0.05 (`words-48-o12-none-bm25+seed-k2`: span recall@k 1.000 vs 1.000; \
         mean difference 0.000, one-sided 95% lower bound 0.000 ≥ −0.05) and costs 47% fewer words \
         per query and 11% more index words; cheaper but undetermined against the best: \
         `words-16-o4-none-bm25+seed-k2` (P(worse by more than δ) = 0.94; if it were as good as \
         the best, about 663 questions in all would show it within δ (have 8))."
    ));
    let selection = std::fs::read_to_string(run.join("selection.csv")).unwrap();
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(&regex_escape(&dir.path().display().to_string()), "[TMP]");
    settings.add_filter(&regex_escape(&fixture().display().to_string()), "[FIXTURE]");
    settings.add_filter(r"\S*/chunksweep(\.exe)? sweep", "chunksweep sweep");
    settings.bind(|| {
        insta::assert_snapshot!("seed000_report_md", md);
        insta::assert_snapshot!("seed000_selection_csv", selection);
    });

    // The figure is SVG text with the panel titles in it.
    let svg = std::fs::read_to_string(run.join("sweep.svg")).unwrap();
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains("span recall@k (95% bootstrap CI)"));
    assert!(svg.contains("tokens per query"));

    // The manifest lists the decision files.
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    let outputs = manifest["outputs"].as_array().unwrap();
    for f in ["selection.csv", "report.md", "sweep.svg", "frontier.svg"] {
        assert!(outputs.iter().any(|o| o == f), "manifest lacks {f}");
    }

    // `report` regenerates the same bytes without the sweep.
    let files = ["selection.csv", "report.md", "sweep.svg", "frontier.svg"];
    let before: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(run.join(f)).unwrap())
        .collect();
    for f in files {
        std::fs::remove_file(run.join(f)).unwrap();
    }
    chunksweep()
        .arg("report")
        .arg(&run)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "pick: words-24-o6-none-bm25+seed-k2",
        ));
    let after: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(run.join(f)).unwrap())
        .collect();
    assert!(
        before == after,
        "report did not reproduce the sweep's files"
    );
}

#[test]
fn report_settings_show_in_the_report_and_can_change_the_pick() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    sweep(&run);
    // The seeds' literal rule: 24 reaches recall 1.00 but is dropped on the margin, with its
    // numbers (it is judged as a challenger, the plateau holding one), and the pick is 48.
    chunksweep()
        .args(["report", "--rule", "seed"])
        .arg(&run)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "pick: words-48-o12-none-bm25+seed-k2",
        ));
    let (header, rows) = records(&run.join("selection.csv"));
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert!(
        rows[3][col("reason")].starts_with(
            "challenger (outside the plateau): margin 0.128 < floor 0.428 (best 0.441"
        ),
        "{}",
        &rows[3][col("reason")]
    );
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(md.contains("- **Plateau (rule `seed`):** 1 of 7"));
    // With the seed rule, an 80% margin tolerance (floor 0.088) and a 0.3 recall tolerance
    // (floor 0.7) let 24 (margin 0.128, recall 1.0, 47 words/query) and 32 (0.129, 0.75, 59)
    // in: 24 is cheapest.
    chunksweep()
        .args([
            "report",
            "--rule",
            "seed",
            "--margin-tolerance",
            "0.8",
            "--recall-tolerance",
            "0.3",
        ])
        .args(["--halves", "50", "--seed", "7"])
        .arg(&run)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "pick: words-24-o6-none-bm25+seed-k2",
        ));
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(md.contains("Draw 50 random halves of the questions (seed 7)"));
    assert!(md.contains("margin tolerance 80% (rule `seed` only), recall tolerance 0.3"));
}

#[test]
fn report_on_a_folder_without_a_sweep_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    chunksweep()
        .arg("report")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("sweep.csv not found"));
}

#[test]
fn a_prefix_sweep_writes_the_comparison_and_report_regenerates_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    chunksweep()
        .arg("sweep")
        .arg("--config")
        .arg(root.join("datasets/handbook.toml"))
        .args(["--strategies", "markdown", "--sizes", "64,256"])
        .args(["--prefixes", "none,title,heading_path", "--quiet"])
        .arg("--out")
        .arg(&run)
        .assert()
        .success();
    let (header, rows) = records(&run.join("prefix_comparison.csv"));
    assert_eq!(&header[0], "strategy");
    assert!(header.iter().any(|h| h == "mcnemar_p"));
    // 2 sizes × 2 prefixes, each against its own `none`
    assert_eq!(rows.len(), 4);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for r in &rows {
        assert_eq!(
            &r[col("baseline_id")],
            format!(
                "markdown-{}-o{}-none-bm25-k5",
                &r[col("chunk_size")],
                &r[col("chunk_overlap")]
            )
        );
        let with: f64 = r[col("tokens_per_query")].parse().unwrap();
        let without: f64 = r[col("tokens_per_query_none")].parse().unwrap();
        assert!(with > without, "a prefix costs tokens");
    }
    let (sh, sweep_rows) = records(&run.join("sweep.csv"));
    assert_eq!(sweep_rows.len(), 6);
    let prefix_col = sh.iter().position(|h| h == "prefix").unwrap();
    assert_eq!(
        sweep_rows
            .iter()
            .map(|r| r[prefix_col].to_string())
            .collect::<Vec<_>>(),
        [
            "none",
            "title",
            "heading_path",
            "none",
            "title",
            "heading_path"
        ]
    );
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(md.contains("## Prefixes"));
    assert!(md.contains("| markdown | 64 | heading_path |"));
    let before = std::fs::read(run.join("report.md")).unwrap();
    chunksweep().arg("report").arg(&run).assert().success();
    assert_eq!(std::fs::read(run.join("report.md")).unwrap(), before);
}

#[test]
fn report_lists_the_runs_own_number_of_judge_candidates_unless_told() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("one.toml");
    std::fs::write(
        &cfg,
        "[sweep.bm25]\nanalyzer = \"seed\"\n[judge]\ncandidates = 1\n",
    )
    .unwrap();
    let run = dir.path().join("run");
    chunksweep()
        .arg("sweep")
        .arg("--corpus")
        .arg(fixture().join("corpus"))
        .arg("--golden")
        .arg(fixture().join("golden.jsonl"))
        .args(["--strategies", "words", "--sizes", "8,12,16,24,32,48,64"])
        .args([
            "--overlap",
            "0.25",
            "--k",
            "2",
            "--tokenizer",
            "words",
            "--quiet",
        ])
        .arg("--config")
        .arg(&cfg)
        .arg("--out")
        .arg(&run)
        .assert()
        .success();
    let listed = |run: &Path| -> usize {
        let md = std::fs::read_to_string(run.join("report.md")).unwrap();
        let line = md
            .lines()
            .find(|l| l.starts_with("- **Judge candidates**"))
            .unwrap()
            .to_string();
        line.matches("tokens/query").count() + line.matches("words/query").count()
    };
    let (header, rows) = records(&run.join("selection.csv"));
    let status = header.iter().position(|h| h == "status").unwrap();
    let judged = |rows: &[csv::StringRecord]| {
        rows.iter()
            .filter(|r| ["winner", "candidate", "challenger"].contains(&&r[status]))
            .count()
    };
    assert_eq!(judged(&rows), 1);
    assert_eq!(listed(&run), 1);
    // `report` without --candidates keeps the run's one candidate ...
    chunksweep().arg("report").arg(&run).assert().success();
    assert_eq!(judged(&records(&run.join("selection.csv")).1), 1);
    assert_eq!(listed(&run), 1);
    // ... and lists three when told.
    chunksweep()
        .args(["report", "--candidates", "3"])
        .arg(&run)
        .assert()
        .success();
    assert_eq!(judged(&records(&run.join("selection.csv")).1), 3);
    assert_eq!(listed(&run), 3);
}
