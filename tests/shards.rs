//! `sweep --shard I/N` and `chunksweep merge` on the handbook: the merged folder equals the whole
//! sweep's byte for byte except where the run's folder, command line, start time and times are
//! written (N = 1, 3 and one shard per configuration); shards of another grid or corpus, a
//! missing shard, a shard given twice, a shard killed midway and a changed shard file are
//! refused with their messages, and nothing is merged; a merged folder is a baseline for `check`.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

mod check_support;

use check_support::{check, chunksweep};

/// 3 strategies × 3 sizes = 9 configurations, each read at k = 5 and at a 1,500-token budget.
const GRID: [&str; 12] = [
    "--corpus",
    "datasets/handbook",
    "--golden",
    "datasets/handbook-golden.jsonl",
    "--strategies",
    "fixed,recursive,markdown",
    "--sizes",
    "128,256,512",
    "--budget",
    "1500",
    "--quiet",
    "--k",
];

fn sweep(out: &Path, extra: &[&str]) -> Output {
    chunksweep()
        .arg("sweep")
        .args(GRID)
        .arg("5")
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn ok(o: Output) -> Output {
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Sweeps every shard of `n` under `parent` as separate processes; their folders.
fn shards(parent: &Path, n: usize, extra: &[&str]) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let mut flags = vec!["--shard".to_string(), format!("{i}/{n}")];
            flags.extend(extra.iter().map(|s| s.to_string()));
            let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
            ok(sweep(parent, &flags));
            parent.join(format!("shard-{i}-of-{n}"))
        })
        .collect()
}

fn merge(dirs: &[PathBuf], out: &Path) -> Output {
    chunksweep()
        .arg("merge")
        .args(dirs)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".chunksweep.lock")
        .collect();
    n.sort();
    n
}

/// The command line report.md shows under "Reproduce".
fn reproduce_line(run: &Path) -> String {
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    let at = md.find("## Reproduce\n\n```sh\n").unwrap() + "## Reproduce\n\n```sh\n".len();
    md[at..].lines().next().unwrap().to_string()
}

/// manifest.json without what names the run (`command`, `config.out`) and its times.
fn manifest_without_run_id_and_times(run: &Path) -> Value {
    let mut m: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    let map = m.as_object_mut().unwrap();
    for key in [
        "command",
        "started_at",
        "wall_time_s",
        "phase_time_ms",
        "config_time_ms",
    ] {
        assert!(map.remove(key).is_some(), "{key}");
    }
    map["config"]
        .as_object_mut()
        .unwrap()
        .remove("out")
        .unwrap();
    m
}

/// Asserts that `merged` holds the files of `whole`, each byte for byte the same once the
/// whole run's folder and command line are written as the merged run's, and the same
/// manifest.json but for the run's command, folder, start and times.
fn assert_same_run(whole: &Path, merged: &Path) {
    assert_eq!(names(whole), names(merged));
    let (whole_cmd, merged_cmd) = (reproduce_line(whole), reproduce_line(merged));
    assert!(whole_cmd.starts_with("chunksweep sweep "), "{whole_cmd}");
    assert!(merged_cmd.starts_with("chunksweep merge "), "{merged_cmd}");
    let (whole_dir, merged_dir) = (whole.display().to_string(), merged.display().to_string());
    for name in names(whole) {
        if name == "manifest.json" {
            continue;
        }
        let a = std::fs::read_to_string(whole.join(&name)).unwrap();
        let b = std::fs::read_to_string(merged.join(&name)).unwrap();
        if ["sweep.csv", "sweep_questions.csv", "selection.csv"].contains(&name.as_str()) {
            assert!(a == b, "{name} differs");
        }
        let a = a
            .replace(&whole_cmd, &merged_cmd)
            .replace(&whole_dir, &merged_dir);
        assert!(a == b, "{name} differs beyond the run's folder and command");
    }
    assert_eq!(
        manifest_without_run_id_and_times(whole),
        manifest_without_run_id_and_times(merged)
    );
    // every configuration's times are there, from its shard
    let times = |run: &Path| -> Vec<String> {
        let m: Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap())
                .unwrap();
        m["config_time_ms"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(times(whole), times(merged));
    assert_eq!(times(merged).len(), 9);
}

#[test]
fn merged_shards_equal_the_whole_sweep_for_one_three_and_nine_shards() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole/run");
    ok(sweep(&whole, &[]));
    for n in [1, 3, 9] {
        let parent = dir.path().join(format!("shards-{n}"));
        let dirs = shards(&parent, n, &[]);
        // every configuration in exactly one shard
        let mut configs: Vec<String> = dirs
            .iter()
            .flat_map(|d| {
                let r: Value =
                    serde_json::from_str(&std::fs::read_to_string(d.join("shard.json")).unwrap())
                        .unwrap();
                r["configs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c.as_str().unwrap().to_string())
                    .collect::<Vec<_>>()
            })
            .collect();
        configs.sort();
        configs.dedup();
        assert_eq!(configs.len(), 9, "{n} shards");
        let merged = dir.path().join(format!("merged-{n}/run"));
        // the shards in any order
        let mut given = dirs.clone();
        given.reverse();
        let o = ok(merge(&given, &merged));
        assert!(o.stdout.is_empty());
        assert_same_run(&whole, &merged);
    }
    // a merged folder is a baseline for `check`: the same pick passes against it
    let merged = dir.path().join("merged-3/run");
    let (code, stdout, stderr, _) = check(&merged, &dir.path().join("check"), &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.starts_with("# chunksweep check: ✅ pass\n"),
        "{stdout}"
    );
}

#[test]
fn merge_does_not_write_over_the_run_of_another_grid_and_merges_again_into_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let dirs = shards(&dir.path().join("shards"), 2, &[]);
    let merged = dir.path().join("merged");
    ok(merge(&dirs, &merged));
    // merging the same shards again into their merged folder is a rerun
    let before = std::fs::read(merged.join("sweep.csv")).unwrap();
    ok(merge(&dirs, &merged));
    assert_eq!(std::fs::read(merged.join("sweep.csv")).unwrap(), before);
    // a folder holding a whole sweep at k = 3 is another run
    let other = dir.path().join("k3");
    chunksweep()
        .arg("sweep")
        .args(GRID)
        .arg("3")
        .arg("--out")
        .arg(&other)
        .assert()
        .success();
    let before = std::fs::read(other.join("sweep.csv")).unwrap();
    let o = merge(&dirs, &other);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "--out {} holds another run (another grid than this one's): writing into it would replace that run's files; give a new --out folder, or delete {} first",
            other.display(),
            other.display()
        )),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(other.join("sweep.csv")).unwrap(), before);
}

/// Merges `dirs` into a fresh folder, expecting exit 2 and nothing merged; the message.
fn refused(dirs: &[PathBuf], work: &Path) -> String {
    let out = work.join("refused");
    let o = merge(dirs, &out);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!out.exists(), "{} was written", out.display());
    stderr(&o)
}

#[test]
fn shards_of_another_grid_or_corpus_missing_repeated_or_changed_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path();
    let dirs = shards(&w.join("a"), 3, &[]);
    let d = |i: usize| dirs[i].display().to_string();

    // a shard of another grid (k = 3)
    let other = w.join("k3");
    ok(chunksweep()
        .arg("sweep")
        .args(GRID)
        .args(["3", "--shard", "1/3", "--out"])
        .arg(&other)
        .output()
        .unwrap());
    let other = other.join("shard-1-of-3");
    let msg = refused(&[dirs[0].clone(), other.clone(), dirs[2].clone()], w);
    assert!(
        msg.contains(&format!(
            "{} is not a shard of the same sweep as {}: the grid or settings (config.sweep.top_k) differ(s); merge only the shards of one `sweep --shard I/N` command",
            other.display(),
            d(0)
        )),
        "{msg}"
    );

    // a shard of another corpus: the handbook with one document edited
    let corpus = w.join("handbook");
    std::fs::create_dir(&corpus).unwrap();
    let root = check_support::root().join("datasets/handbook");
    for e in std::fs::read_dir(&root).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), corpus.join(e.file_name())).unwrap();
    }
    let doc = corpus.join("10-release-notes.md");
    let text = std::fs::read_to_string(&doc).unwrap() + "\nOne more line.\n";
    std::fs::write(&doc, text).unwrap();
    let edited = w.join("edited");
    ok(sweep(
        &edited,
        &["--shard", "2/3", "--corpus", corpus.to_str().unwrap()],
    ));
    let edited = edited.join("shard-2-of-3");
    let msg = refused(&[dirs[0].clone(), dirs[1].clone(), edited.clone()], w);
    assert!(
        msg.contains(&format!(
            "{} is not a shard of the same sweep as {}: the corpus (corpus_sha256 ",
            edited.display(),
            d(0)
        )),
        "{msg}"
    );

    // a missing shard
    let msg = refused(&[dirs[0].clone(), dirs[2].clone()], w);
    assert!(
        msg.contains("shard(s) 1 of 3 missing: the folders given hold shard(s) 0, 2; run the missing ones (`sweep --shard I/3`) and merge all 3"),
        "{msg}"
    );

    // the same shard twice, as one folder and as a copy
    let msg = refused(&[dirs[0].clone(), dirs[1].clone(), dirs[1].clone()], w);
    assert!(
        msg.contains(&format!(
            "shard 1/3 is given twice: {} and {}; give each shard once",
            d(1),
            d(1)
        )),
        "{msg}"
    );

    // a file of a shard changed after it finished
    let changed = w.join("changed");
    std::fs::create_dir(&changed).unwrap();
    for name in ["shard.json", "sweep.csv", "sweep_questions.csv"] {
        std::fs::copy(dirs[1].join(name), changed.join(name)).unwrap();
    }
    let csv = changed.join("sweep.csv");
    let text = std::fs::read_to_string(&csv)
        .unwrap()
        .replacen(",0.", ",1.", 1);
    std::fs::write(&csv, text).unwrap();
    let msg = refused(&[dirs[0].clone(), changed.clone(), dirs[2].clone()], w);
    assert!(
        msg.contains(&format!(
            "{} is not the file its shard wrote (shard.json records its SHA-256): run the shard again",
            csv.display()
        )),
        "{msg}"
    );

    // a run folder given as a shard
    let run = w.join("run");
    ok(sweep(&run, &[]));
    let msg = refused(&[dirs[0].clone(), run.clone(), dirs[2].clone()], w);
    assert!(
        msg.contains(&format!("{} is a run folder, not a shard", run.display())),
        "{msg}"
    );
}

#[test]
fn a_shard_killed_midway_is_not_merged_and_a_rerun_completes_it() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path();
    let dirs = shards(&w.join("a"), 2, &[]);
    // shard 1 again, killed once it has removed its old shard.json (after its inputs load,
    // before it sweeps)
    let killed = w.join("a/shard-1-of-2");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("chunksweep"))
        .current_dir(check_support::root())
        .arg("sweep")
        .args(GRID)
        .arg("5")
        .args(["--shard", "1/2", "--out"])
        .arg(w.join("a"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while killed.join("shard.json").exists() {
        assert!(
            started.elapsed().as_secs() < 120,
            "shard.json never removed"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !killed.join("shard.json").exists(),
        "the shard finished before it was killed"
    );
    let msg = refused(&dirs, w);
    assert!(
        msg.contains(&format!(
            "{} is not a complete shard: it has no shard.json, which a shard writes last",
            killed.display()
        )),
        "{msg}"
    );
    // the same command again completes it
    ok(sweep(&w.join("a"), &["--shard", "1/2"]));
    ok(merge(&dirs, &w.join("merged")));
}

/// A grid whose prepare step calls a model is refused before anything is sent or written: a
/// reranked grid (its rerank_calls.csv and rerank.json are not joined by merge) and a dense one.
#[test]
fn grids_that_call_a_model_are_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    for (extra, needs) in [
        (
            &[
                "--rerank",
                "none,some-reranker",
                "--rerank-base-url",
                "http://127.0.0.1:9/v1",
            ][..],
            "a reranker (--rerank)",
        ),
        (
            &["--retrievers", "dense"][..],
            "embeddings (a dense or hybrid retriever",
        ),
    ] {
        let out = tmp.path().join("refused");
        let mut flags = vec!["--shard", "0/2"];
        flags.extend_from_slice(extra);
        let o = sweep(&out, &flags);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "--shard splits only grids whose prepare step calls no model; this grid needs {needs}"
            )),
            "{stderr}"
        );
        assert!(!out.join("shard-0-of-2").exists(), "{stderr}");
    }
}
