//! The command line on good and bad input: exit codes, messages naming the file and line, and
//! the files a sweep writes.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed000")
}

fn chunksweep() -> Command {
    Command::cargo_bin("chunksweep").unwrap()
}

fn sweep_seed(out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    chunksweep()
        .arg("sweep")
        .arg("--corpus")
        .arg(fixture().join("corpus"))
        .arg("--golden")
        .arg(fixture().join("golden.jsonl"))
        .args([
            "--strategies",
            "words,recursive",
            "--sizes",
            "16,24",
            "--overlap",
            "0.25",
        ])
        .args(["--k", "2", "--tokenizer", "words", "--quiet", "--config"])
        .arg(fixture().join("seed-analyzer.toml"))
        .arg("--out")
        .arg(out)
        .args(extra)
        .assert()
}

#[test]
fn sweep_writes_csvs_manifest_and_stable_chunk_ids() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    sweep_seed(&a, &["--dump-chunks"]).success();
    sweep_seed(&b, &[]).success();
    let sweep = std::fs::read_to_string(a.join("sweep.csv")).unwrap();
    let header = sweep.lines().next().unwrap();
    for column in [
        "config_id",
        "strategy",
        "chunk_size",
        "chunk_overlap",
        "realized_overlap",
        "prefix",
        "retriever",
        "top_k",
        "n_chunks",
        "max_chunk_tokens",
        "n_oversize",
        "mean_chunk_tokens",
        "index_tokens",
        "tokens_per_query",
        "n_questions",
        "span_recall",
        "hit_rate",
        "coverage",
        "margin",
        "mrr",
        "char_iou",
        "char_iou_micro",
        "char_precision",
        "char_recall",
        "unreachable",
        "ties_at_k",
    ] {
        assert!(
            header.split(',').any(|c| c == column),
            "sweep.csv lacks {column}"
        );
    }
    assert_eq!(sweep.lines().count(), 1 + 4);
    // words at 16 reproduces seed 000's row: 20 chunks, recall 0.625, one tie at k.
    let row = sweep
        .lines()
        .find(|l| l.starts_with("words-16-o4-"))
        .unwrap();
    assert!(row.contains(",20,"), "{row}");
    assert!(row.contains(",0.625,"), "{row}");
    // Equal inputs give byte-identical per-question CSVs, chunk ids included.
    let qa = std::fs::read_to_string(a.join("sweep_questions.csv")).unwrap();
    let qb = std::fs::read_to_string(b.join("sweep_questions.csv")).unwrap();
    assert_eq!(qa, qb);
    assert_eq!(qa.lines().count(), 1 + 4 * 8);
    assert!(qa.contains("limits.md#"), "chunk ids name their document");
    let chunks =
        std::fs::read_to_string(a.join("chunks/words-16-o4-none-bm25+seed-k2.jsonl")).unwrap();
    assert_eq!(chunks.lines().count(), 20);
    let first: serde_json::Value = serde_json::from_str(chunks.lines().next().unwrap()).unwrap();
    assert_eq!(first["id"], "config.md#0");
    assert_eq!(first["start"], 0);
    assert_eq!(first["tokens"], 16);
    // sizes are labelled with their unit: words here (the words tokenizer)
    let selection = std::fs::read_to_string(a.join("selection.csv")).unwrap();
    let mut lines = selection.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .contains(",chunk_size,size_unit,chunk_overlap,")
    );
    assert!(lines.all(|l| l.contains(",words,")), "{selection}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["inputs"]["n_documents"], 3);
    assert_eq!(manifest["config"]["sweep"]["top_k"], 2);
    assert_eq!(manifest["bm25"]["analyzer"], "seed");
    assert_eq!(manifest["bm25"]["k1"], 1.2);
    assert_eq!(
        manifest["inputs"]["corpus_sha256"].as_str().unwrap().len(),
        64
    );
}

#[test]
fn missing_corpus_is_a_usage_error_naming_the_path_and_leaves_no_run_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    chunksweep()
        .args(["sweep", "--corpus", "/nonexistent/docs", "--golden"])
        .arg(fixture().join("golden.jsonl"))
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/docs does not exist"));
    assert!(!out.exists(), "bad input creates no run folder");
}

#[test]
fn empty_golden_set_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("g.jsonl");
    std::fs::write(&golden, "\n\n").unwrap();
    chunksweep()
        .arg("sweep")
        .arg("--corpus")
        .arg(fixture().join("corpus"))
        .arg("--golden")
        .arg(&golden)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("holds no question"));
}

#[test]
fn span_not_found_names_file_and_line_and_validate_lists_every_problem() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("g.jsonl");
    std::fs::write(
        &golden,
        concat!(
            r#"{"id":"a","question":"ok?","evidence":["600 API requests per minute"]}"#,
            "\n",
            r#"{"id":"b","question":"where?","evidence":["this sentence is in no document"]}"#,
            "\n",
            r#"{"id":"a","question":"","evidence":[{"doc":"nope.md","text":"x"}]}"#,
            "\n",
        ),
    )
    .unwrap();
    let g = golden.display().to_string();
    chunksweep()
        .arg("sweep")
        .arg("--corpus")
        .arg(fixture().join("corpus"))
        .arg("--golden")
        .arg(&golden)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "{g}:2: error: question \"b\""
        )))
        .stderr(predicate::str::contains("not found in any document"));
    chunksweep()
        .arg("validate")
        .arg("--corpus")
        .arg(fixture().join("corpus"))
        .arg("--golden")
        .arg(&golden)
        .assert()
        .code(2)
        .stdout(predicate::str::contains(format!("{g}:2: error:")))
        .stdout(predicate::str::contains(format!(
            "{g}:3: error: duplicate question id"
        )))
        .stdout(predicate::str::contains(format!(
            "{g}:3: error: question \"a\" has empty text"
        )))
        .stdout(predicate::str::contains("\"nope.md\" is not in the corpus"))
        .stdout(predicate::str::contains("4 error(s)"));
}

#[test]
fn validate_goes_on_past_a_malformed_line_and_reports_every_problem() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("g.jsonl");
    std::fs::write(
        &golden,
        concat!(
            r#"{"id":"a","question":"ok?","evidence":["600 API requests per minute"]}"#,
            "\n",
            r#"{"id":"b","question":"ok too?","evidence":["600 API requests per minute"]}"#,
            "\n",
            r#"{"id":"c","question":"broken?","evidence":["600 API"#,
            "\n",
            r#"{"id":"d","question":"fine?","evidence":["600 API requests per minute"]}"#,
            "\n",
            r#"{"id":"e","question":"where?","evidence":["this sentence is in no document"]}"#,
            "\n",
        ),
    )
    .unwrap();
    let g = golden.display().to_string();
    let assert = chunksweep()
        .arg("validate")
        .arg("--corpus")
        .arg(fixture().join("corpus"))
        .arg("--golden")
        .arg(&golden)
        .assert()
        .code(2)
        .stdout(predicate::str::contains(format!(
            "{g}:3: error: not a golden-set question"
        )))
        .stdout(predicate::str::contains(format!(
            "{g}:5: error: question \"e\", evidence 1: text \"this sentence is in no document\" not found"
        )))
        .stdout(predicate::str::contains("4 questions"))
        .stdout(predicate::str::contains("2 error(s)"));
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    println!("{stdout}");
    // `sweep` lists both too, before any work.
    let out = dir.path().join("run");
    chunksweep()
        .arg("sweep")
        .arg("--corpus")
        .arg(fixture().join("corpus"))
        .arg("--golden")
        .arg(&golden)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has 2 error(s):"))
        .stderr(predicate::str::contains(format!("{g}:3: error:")))
        .stderr(predicate::str::contains(format!("{g}:5: error:")));
    assert!(!out.exists());
}

#[test]
fn a_grid_with_four_invalid_configurations_names_all_four() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let assert = chunksweep()
        .arg("sweep")
        .arg("--corpus")
        .arg(fixture().join("corpus"))
        .arg("--golden")
        .arg(fixture().join("golden.jsonl"))
        .args(["--strategies", "fixed,recursive", "--sizes", "0,32,40,64"])
        .args(["--overlap", "32", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "4 invalid configuration(s) in the grid:",
        ));
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    println!("{stderr}");
    for named in [
        "fixed at chunk_size 0:",
        "fixed at chunk_size 32: chunk_overlap 32 must be smaller than chunk_size 32",
        "recursive at chunk_size 0:",
        "recursive at chunk_size 32: chunk_overlap 32 must be smaller than chunk_size 32",
    ] {
        assert!(stderr.contains(named), "{named} missing from {stderr}");
    }
    assert!(!out.exists(), "nothing is written for a refused grid");
}

#[test]
fn byte_identical_documents_are_warned_about_by_validate_and_the_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("docs");
    std::fs::create_dir(&corpus).unwrap();
    for name in ["config.md", "install.md", "limits.md"] {
        std::fs::copy(fixture().join("corpus").join(name), corpus.join(name)).unwrap();
    }
    std::fs::copy(
        fixture().join("corpus/limits.md"),
        corpus.join("limits-copy.md"),
    )
    .unwrap();
    let warning = format!(
        "warning: 2 documents under {} are byte-identical: limits-copy.md, limits.md",
        corpus.display()
    );
    chunksweep()
        .arg("validate")
        .arg("--corpus")
        .arg(&corpus)
        .arg("--golden")
        .arg(fixture().join("golden.jsonl"))
        .assert()
        .success()
        .stdout(predicate::str::contains(&warning))
        .stdout(predicate::str::contains("0 error(s), 1 warning(s)"));
    chunksweep()
        .arg("sweep")
        .arg("--corpus")
        .arg(&corpus)
        .arg("--golden")
        .arg(fixture().join("golden.jsonl"))
        .args([
            "--strategies",
            "words",
            "--sizes",
            "24",
            "--tokenizer",
            "words",
        ])
        .args(["--quiet", "--out"])
        .arg(dir.path().join("run"))
        .assert()
        .success()
        .stderr(predicate::str::contains(&warning));
}

#[test]
fn a_folder_of_copies_is_warned_about_once_on_the_terminal() {
    // 50 byte-identical copies: the sweep's whole output (stdout and stderr, not --quiet) holds
    // the warning once, its list of names capped at the first
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("docs");
    std::fs::create_dir(&corpus).unwrap();
    for i in 0..50 {
        std::fs::write(
            corpus.join(format!("c{i:02}.md")),
            "# Refunds\n\nThe refund window is thirty days from the date of purchase.\n",
        )
        .unwrap();
    }
    let golden = dir.path().join("golden.jsonl");
    std::fs::write(
        &golden,
        r#"{"id": "q1", "question": "How long is the refund window?", "evidence": [{"doc": "c00.md", "text": "The refund window is thirty days"}]}"#,
    )
    .unwrap();
    let out = chunksweep()
        .arg("sweep")
        .arg("--corpus")
        .arg(&corpus)
        .arg("--golden")
        .arg(&golden)
        .args([
            "--strategies",
            "words",
            "--sizes",
            "24",
            "--tokenizer",
            "words",
        ])
        .arg("--out")
        .arg(dir.path().join("run"))
        .assert()
        .success()
        .get_output()
        .clone();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let warning = format!(
        "warning: 50 documents under {} are byte-identical: c00.md and 49 byte-identical copies;",
        corpus.display()
    );
    assert_eq!(all.matches(&warning).count(), 1, "{all}");
    assert_eq!(all.matches("byte-identical:").count(), 1, "{all}");
    assert!(!all.contains("c01.md"), "{all}");
}

#[test]
fn out_that_is_a_file_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    std::fs::write(&out, "not a folder").unwrap();
    sweep_seed(&out, &[])
        .code(2)
        .stderr(predicate::str::contains(format!(
            "--out {} is a file, not a folder",
            out.display()
        )));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "not a folder");
}

#[test]
fn out_folder_holding_files_chunksweep_does_not_write_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    std::fs::write(out.join("sweep.csv"), "an older run's").unwrap();
    sweep_seed(&out, &[])
        .code(2)
        .stderr(predicate::str::contains(format!(
            "--out {} holds files that are not a chunksweep run's (notes.txt)",
            out.display()
        )));
    assert_eq!(
        std::fs::read_to_string(out.join("sweep.csv")).unwrap(),
        "an older run's",
        "nothing is written into a refused folder"
    );
    assert!(!out.join("manifest.json").exists());
}

#[test]
fn the_lock_file_goes_when_the_run_ends_and_a_rerun_into_the_run_folder_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    sweep_seed(&out, &["--dump-chunks"]).success();
    assert!(out.join("sweep.csv").exists());
    assert!(!out.join(".chunksweep.lock").exists());
    // a run folder of chunksweep's own (outputs, chunks/) takes a rerun
    sweep_seed(&out, &["--dump-chunks"]).success();
    assert!(!out.join(".chunksweep.lock").exists());
    // so does one with an expansion's comparison
    let expanded = dir.path().join("expanded");
    sweep_seed(&expanded, &["--expand", "none,neighbours:1"]).success();
    assert!(expanded.join("expand_comparison.csv").exists());
    sweep_seed(&expanded, &["--expand", "none,neighbours:1"]).success();
}

#[test]
fn a_folder_holding_the_run_of_another_corpus_or_grid_is_not_swept_over() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    sweep_seed(&out, &[]).success();
    let before = std::fs::read(out.join("sweep.csv")).unwrap();
    // the same documents under another path are the same corpus: a rerun, accepted
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    for name in ["config.md", "install.md", "limits.md"] {
        std::fs::copy(fixture().join("corpus").join(name), corpus.join(name)).unwrap();
    }
    let sweep = |corpus: &Path, extra: &[&str]| {
        chunksweep()
            .arg("sweep")
            .arg("--corpus")
            .arg(corpus)
            .arg("--golden")
            .arg(fixture().join("golden.jsonl"))
            .args(["--strategies", "words,recursive", "--sizes", "16,24"])
            .args(["--overlap", "0.25", "--tokenizer", "words", "--quiet"])
            .arg("--config")
            .arg(fixture().join("seed-analyzer.toml"))
            .arg("--out")
            .arg(&out)
            .args(extra)
            .assert()
    };
    sweep(&corpus, &["--k", "2"]).success();
    assert_eq!(std::fs::read(out.join("sweep.csv")).unwrap(), before);
    // another grid (k = 3)
    sweep(&corpus, &["--k", "3"])
        .code(2)
        .stderr(predicate::str::contains(format!(
            "--out {} holds another run (another grid than this one's): writing into it would replace that run's files; give a new --out folder, or delete {} first",
            out.display(),
            out.display()
        )));
    // another corpus (one document edited)
    let limits = corpus.join("limits.md");
    let text = std::fs::read_to_string(&limits).unwrap();
    std::fs::write(&limits, format!("{text}\nOne more line.\n")).unwrap();
    sweep(&corpus, &["--k", "2"])
        .code(2)
        .stderr(predicate::str::contains(format!(
            "--out {} holds another run (another corpus than this one's)",
            out.display()
        )));
    assert_eq!(
        std::fs::read(out.join("sweep.csv")).unwrap(),
        before,
        "nothing is written over the other run"
    );
    assert!(!out.join(".chunksweep.lock").exists());
}

#[test]
fn overlap_not_below_size_and_k_zero_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    sweep_seed(&out, &["--overlap", "16"])
        .code(2)
        .stderr(predicate::str::contains(
            "chunk_overlap 16 must be smaller than chunk_size 16",
        ));
    sweep_seed(&out, &["--k", "0"])
        .code(2)
        .stderr(predicate::str::contains("top_k (--k) must be at least 1"));
    sweep_seed(&out, &["--overlap", "1.5"]).code(2);
    assert!(!out.exists(), "nothing is written for a refused grid");
}

#[test]
fn non_utf8_document_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("docs");
    std::fs::create_dir(&corpus).unwrap();
    std::fs::write(corpus.join("good.md"), "600 API requests per minute").unwrap();
    std::fs::write(corpus.join("bad.txt"), b"line one\nlatin-1 caf\xe9\n").unwrap();
    chunksweep()
        .arg("sweep")
        .arg("--corpus")
        .arg(&corpus)
        .arg("--golden")
        .arg(fixture().join("golden.jsonl"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.txt: not valid UTF-8"))
        .stderr(predicate::str::contains("line 2"));
}

#[test]
fn config_file_is_read_and_flags_win() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("sweep.toml");
    std::fs::write(
        &config,
        format!(
            "corpus = {:?}\ngolden = {:?}\n[sweep]\nstrategies = [\"words\"]\nsizes = [24]\noverlap = 0.25\ntop_k = 3\ntokenizer = \"words\"\n[sweep.bm25]\nanalyzer = \"seed\"\n",
            fixture().join("corpus"),
            fixture().join("golden.jsonl")
        ),
    )
    .unwrap();
    let out = dir.path().join("run");
    chunksweep()
        .args(["sweep", "--quiet", "--k", "2", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let sweep = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert!(sweep.contains("words-24-o6-none-bm25+seed-k2,"), "{sweep}");
    assert!(
        sweep.contains(",1.0,"),
        "recall@2 at 24 words is 1.00 in seed 000"
    );
}

#[test]
fn compare_prefix_judges_the_pick_with_and_without_the_best_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cfg = dir.path().join("c.toml");
    std::fs::write(
        &cfg,
        format!(
            "corpus = {:?}\ngolden = {:?}\n[sweep]\nstrategies = [\"markdown\"]\nsizes = [256]\nprefixes = [\"none\", \"title\", \"heading_path\"]\n[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\ncache_path = {:?}\n",
            root.join("datasets/handbook"),
            root.join("datasets/handbook-golden.jsonl"),
            dir.path().join("cache.sqlite")
        ),
    )
    .unwrap();
    // On the handbook at markdown 256, heading_path gains most span recall (0.825 → 0.875).
    chunksweep()
        .arg("run")
        .arg("--config")
        .arg(&cfg)
        .args(["--compare-prefix", "--dry-run", "--quiet"])
        .arg("--prompts")
        .arg(root.join("prompts"))
        .arg("--out")
        .arg(dir.path().join("run"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "candidates: markdown-256-o38-none-bm25-k5, markdown-256-o38-heading_path-bm25-k5",
        ))
        .stdout(predicate::str::contains(
            "dry run: 2 candidate(s) × 40 question(s)",
        ));
    // A named prefix is taken as given.
    chunksweep()
        .arg("run")
        .arg("--config")
        .arg(&cfg)
        .args(["--compare-prefix", "title", "--dry-run", "--quiet"])
        .arg("--prompts")
        .arg(root.join("prompts"))
        .arg("--out")
        .arg(dir.path().join("run"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "candidates: markdown-256-o38-none-bm25-k5, markdown-256-o38-title-bm25-k5",
        ));
}

#[test]
fn the_table_and_the_pick_count_words_for_the_words_tokenizer() {
    let dir = tempfile::tempdir().unwrap();
    let out = chunksweep()
        .arg("sweep")
        .arg("--corpus")
        .arg(fixture().join("corpus"))
        .arg("--golden")
        .arg(fixture().join("golden.jsonl"))
        .args(["--strategies", "words", "--sizes", "16,24", "--k", "2"])
        .args(["--tokenizer", "words", "--out"])
        .arg(dir.path().join("run"))
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let header = stdout.lines().next().unwrap();
    assert!(header.contains(" words/query "), "{header}");
    assert!(!stdout.contains("tok"), "{stdout}");
    let pick = stdout.lines().find(|l| l.starts_with("pick: ")).unwrap();
    assert!(pick.contains(" words/query, span recall@k "), "{pick}");
}

#[test]
fn a_max_cost_that_is_not_a_finite_number_of_usd_or_more_is_a_usage_error() {
    let range = "must be a finite number of USD, 0 or more (e.g. 2.5)";
    for value in ["nan", "inf", "-1"] {
        for command in [
            vec!["run", "--corpus", "c", "--golden", "g.jsonl"],
            vec!["judge-check", "--labels", "l.jsonl"],
            vec!["golden", "draft", "--corpus", "c", "--out", "o.jsonl"],
        ] {
            chunksweep()
                .args(&command)
                .arg(format!("--max-cost={value}"))
                .assert()
                .code(2)
                .stderr(predicate::str::contains(format!(
                    "invalid value '{value}' for '--max-cost <USD>': {range}"
                )));
        }
    }
    // a negative value as its own argument reaches the same check (not clap's "unexpected
    // argument '-1' found")
    for command in [
        vec!["sweep", "--corpus", "c", "--golden", "g.jsonl"],
        vec!["run", "--corpus", "c", "--golden", "g.jsonl"],
    ] {
        chunksweep()
            .args(&command)
            .args(["--max-cost", "-1"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "invalid value '-1' for '--max-cost <USD>': {range}"
            )));
    }
}

#[test]
fn a_max_cost_out_of_range_in_the_config_file_is_a_usage_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.toml");
    for (value, shown) in [("nan", "NaN"), ("-1", "-1")] {
        std::fs::write(&config, format!("[judge]\nmax_cost_usd = {value}\n")).unwrap();
        chunksweep()
            .current_dir(dir.path())
            .arg("run")
            .arg("--corpus")
            .arg(fixture().join("corpus"))
            .arg("--golden")
            .arg(fixture().join("golden.jsonl"))
            .arg("--config")
            .arg(&config)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "config {}: [judge] max_cost_usd = {shown}: it must be a finite number of USD, 0 or more (e.g. 2.5)",
                config.display()
            )));
    }
}

#[test]
fn golden_draft_thresholds_outside_their_range_are_usage_errors() {
    for (flag, value, range) in [
        ("--max-jaccard", "nan", "must be a number from 0 to 1"),
        ("--max-cosine", "1.5", "must be a number from 0 to 1"),
        ("--max-copied-share", "-0.1", "must be a number from 0 to 1"),
        ("--max-quotes", "0", "must be a whole number, at least 1"),
        ("--questions", "0", "must be a whole number, at least 1"),
    ] {
        let name = match flag {
            "--max-jaccard" => "J",
            "--max-cosine" => "C",
            "--max-copied-share" => "SHARE",
            _ => "N",
        };
        chunksweep()
            .args(["golden", "draft", "--corpus", "c", "--out", "o.jsonl"])
            .arg(format!("{flag}={value}"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!(
                "invalid value '{value}' for '{flag} <{name}>': {range}"
            )));
    }
}

#[test]
fn dumped_chunks_carry_the_text_sent_and_its_tokens_with_a_tables_header() {
    // markdown at 12 words: the table's last row is sent under its header rows ("| group |
    // limit |" 5 words, "|---|---|" 1): 6 words of its own, 6 carried
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    std::fs::write(
        corpus.join("t.md"),
        "# Limits\n\n| group | limit |\n|---|---|\n| auth | ten requests |\n| files | six hundred requests |\n| search | thirty requests |\n",
    )
    .unwrap();
    let golden = dir.path().join("golden.jsonl");
    std::fs::write(
        &golden,
        r#"{"id": "q-1", "question": "What is the search limit?", "evidence": [{"doc": "t.md", "text": "| search | thirty requests |"}]}"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    chunksweep()
        .args([
            "sweep",
            "--strategies",
            "markdown",
            "--sizes",
            "12",
            "--overlap",
            "0",
        ])
        .args([
            "--tokenizer",
            "words",
            "--k",
            "1",
            "--dump-chunks",
            "--quiet",
        ])
        .arg("--corpus")
        .arg(&corpus)
        .arg("--golden")
        .arg(&golden)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let dumped =
        std::fs::read_to_string(out.join("chunks/markdown-12-o0-none-bm25-k1.jsonl")).unwrap();
    let lines: Vec<&str> = dumped.lines().collect();
    assert_eq!(
        lines[1],
        r#"{"id":"t.md#1","doc":"t.md","start":10,"end":61,"heading_path":["Limits"],"tokens":12,"prefix_tokens":0,"text":"| group | limit |\n|---|---|\n| auth | ten requests |"}"#
    );
    assert_eq!(
        lines[3],
        r#"{"id":"t.md#3","doc":"t.md","start":95,"end":123,"heading_path":["Limits"],"tokens":12,"prefix_tokens":6,"text":"| group | limit |\n|---|---|\n| search | thirty requests |"}"#
    );
}

#[test]
fn a_parent_no_larger_than_a_swept_size_is_left_out_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let sweep = |expand: &str| {
        chunksweep()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["sweep", "--config", "datasets/handbook.toml"])
            .args(["--strategies", "markdown", "--sizes", "128,512", "--k", "1"])
            .args(["--quiet", "--expand", expand, "--out"])
            .arg(&out)
            .assert()
    };
    sweep("none,parent:256")
        .success()
        .stderr(predicate::str::contains(
            "warning: left out of the grid: parent:256 on chunk size 512 (a parent no larger than \
         its chunk sends nothing more)\n",
        ));
    let ids: Vec<String> = std::fs::read_to_string(out.join("sweep.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect();
    assert_eq!(
        ids,
        [
            "markdown-128-o19-none-bm25-k1",
            "markdown-128-o19-none-bm25+parent256-k1",
            "markdown-512-o76-none-bm25-k1",
        ]
    );
    // no size below the cap: refused, nothing swept
    let refused = dir.path().join("refused");
    chunksweep()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["sweep", "--config", "datasets/handbook.toml"])
        .args(["--strategies", "markdown", "--sizes", "128,512"])
        .args(["--quiet", "--expand", "none,parent:128", "--out"])
        .arg(&refused)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the expansion parent:128 has no configuration left to sweep: every chunk size swept (128, 512) is at least 128 tokens",
        ));
    assert!(!refused.join("sweep.csv").exists());
}
