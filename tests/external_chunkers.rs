//! External chunkers through the real binary and a real Python process
//! (tests/fixtures/chunkers/toy.py): chunks placed in their documents, counted in chunkers.csv,
//! cached, fingerprinted for `check`, and every way a chunker can fail reported with exit 2 and
//! nothing scored.

mod check_support;

use std::path::{Path, PathBuf};

use check_support::{check, chunksweep, root};

/// Two documents whose paragraphs the toy chunker packs into chunks of at most 25 characters:
/// a.md into "Alpha one.\n\nAlpha two." and "Alpha three.", b.md into one chunk.
fn inputs(dir: &Path) {
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(
        corpus.join("a.md"),
        "Alpha one.\n\nAlpha two.\n\nAlpha three.",
    )
    .unwrap();
    std::fs::write(corpus.join("b.md"), "Beta only.").unwrap();
    let golden = [
        r#"{"id": "q1", "question": "What is the third alpha?", "evidence": [{"doc": "a.md", "text": "Alpha three."}]}"#,
        r#"{"id": "q2", "question": "What is beta?", "evidence": [{"doc": "b.md", "text": "Beta only."}]}"#,
    ];
    std::fs::write(dir.join("golden.jsonl"), golden.join("\n")).unwrap();
}

fn toy() -> PathBuf {
    root().join("tests/fixtures/chunkers/toy.py")
}

/// A config file in `dir` sweeping the toy chunker in `mode` at 25 characters, k = 2, waiting up
/// to 60 s for each line (no test but the hanging chunker's waits for it).
fn config(dir: &Path, script: &Path, mode: &str, extra: &str) -> PathBuf {
    inputs(dir);
    let path = dir.join("chunksweep.toml");
    let text = format!(
        r#"corpus = "corpus"
golden = "golden.jsonl"

[sweep]
strategies = ["toy"]
sizes = [25]
overlap = 0
top_k = 2

[llm]
cache_path = "llm_cache.sqlite"

[[chunkers]]
name = "toy"
command = ["python3", "{}", "{mode}"]
unit = "characters"
timeout_s = 60
{extra}
"#,
        script.display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// `sweep --config CONFIG --out OUT --quiet`: (exit code, stderr).
fn sweep(config: &Path, out: &Path) -> (i32, String) {
    let o = chunksweep()
        .arg("sweep")
        .arg("--config")
        .arg(config)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .output()
        .unwrap();
    (
        o.status.code().unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

/// chunkers.csv's one row as (column, value) pairs.
fn placement(out: &Path) -> Vec<(String, String)> {
    let mut r = csv::Reader::from_path(out.join("chunkers.csv")).unwrap();
    let headers: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let row = r.records().next().unwrap().unwrap();
    headers
        .into_iter()
        .zip(row.iter().map(String::from))
        .collect()
}

fn column(row: &[(String, String)], name: &str) -> String {
    row.iter().find(|(k, _)| k == name).unwrap().1.clone()
}

#[test]
fn chunks_without_offsets_are_found_and_scored() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("run");
    let (code, stderr) = sweep(&config(t.path(), &toy(), "ok", ""), &out);
    assert_eq!(code, 0, "{stderr}");
    let row = placement(&out);
    assert_eq!(column(&row, "config"), "toy-25-o0");
    assert_eq!(column(&row, "reported"), "toy (toy 1.0)");
    assert_eq!(column(&row, "size_unit"), "characters");
    assert_eq!(column(&row, "chunks"), "3");
    assert_eq!(column(&row, "placed_exact"), "3");
    assert_eq!(column(&row, "documents_cached"), "0");
    // both evidence spans lie whole in one chunk each: span recall 1 at k = 2
    let mut r = csv::Reader::from_path(out.join("sweep.csv")).unwrap();
    let headers = r.headers().unwrap().clone();
    let row = r.records().next().unwrap().unwrap();
    let get = |name: &str| row[headers.iter().position(|h| h == name).unwrap()].to_string();
    assert_eq!(get("config_id"), "toy-25-o0-none-bm25-k2");
    assert_eq!(get("size_unit"), "characters");
    assert_eq!(get("n_chunks"), "3");
    assert_eq!(get("span_recall"), "1.0");
    // the second run is answered by the chunker cache
    let again = t.path().join("again");
    let (code, stderr) = sweep(&t.path().join("chunksweep.toml"), &again);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(column(&placement(&again), "documents_cached"), "2");
}

#[test]
fn given_offsets_and_added_titles_are_placed_as_such() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("run");
    let (code, stderr) = sweep(&config(t.path(), &toy(), "offsets", ""), &out);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(column(&placement(&out), "placed_given"), "3");
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("run");
    let (code, stderr) = sweep(&config(t.path(), &toy(), "title", ""), &out);
    assert_eq!(code, 0, "{stderr}");
    let row = placement(&out);
    assert_eq!(column(&row, "placed_added_prefix"), "3");
    // the added titles cost tokens: "a.md\n\n" and "b.md\n\n" in front of the chunks
    let mut r = csv::Reader::from_path(out.join("sweep.csv")).unwrap();
    let headers = r.headers().unwrap().clone();
    let rec = r.records().next().unwrap().unwrap();
    let prefix: f64 = rec[headers
        .iter()
        .position(|h| h == "mean_prefix_tokens")
        .unwrap()]
    .parse()
    .unwrap();
    assert!(prefix > 0.0, "{prefix}");
}

#[test]
fn unlocated_chunks_fail_unless_the_share_allows_them() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("run");
    let (code, stderr) = sweep(&config(t.path(), &toy(), "invented", ""), &out);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("2 of 5 chunks are nowhere in their documents"),
        "{stderr}"
    );
    assert!(!out.join("sweep.csv").exists());
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("run");
    let extra = "max_unlocated_share = 0.5";
    let (code, stderr) = sweep(&config(t.path(), &toy(), "invented", extra), &out);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(column(&placement(&out), "unlocated"), "2");
}

/// Runs the toy chunker in `mode` (or the command `script` in its place) and returns exit code
/// and stderr, checking that nothing was scored.
fn bad(mode: &str, script: &Path) -> (i32, String) {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("run");
    let (code, stderr) = sweep(&config(t.path(), script, mode, ""), &out);
    assert!(!out.join("sweep.csv").exists(), "{mode}: rows written");
    (code, stderr)
}

#[test]
fn every_bad_chunker_is_named_with_exit_2() {
    let at = "chunker toy, configuration toy-25-o0";
    let cases: &[(&str, &[&str])] = &[
        (
            "not-json",
            &[
                at,
                "document \"a.md\"",
                "is not JSON",
                "the response for \"a.md\"",
            ],
        ),
        (
            "wrong-shape",
            &[at, "document \"a.md\"", "not a line of the protocol"],
        ),
        ("old-protocol", &["chunker toy: ", "version 99"]),
        (
            "fail",
            &["exit status: 3", "toy: something broke while chunking"],
        ),
        (
            "skip",
            &[
                at,
                "document \"b.md\"",
                "its output ended before the response for \"b.md\"",
            ],
        ),
        (
            "twice",
            &[at, "document \"b.md\"", "the document \"a.md\" came twice"],
        ),
        (
            "empty",
            &[
                at,
                "document \"a.md\"",
                "chunk 3 is empty or only whitespace",
            ],
        ),
        (
            "reversed",
            &[
                at,
                "document \"a.md\"",
                "chunk 2 starts at character 0, not after the previous chunk's start 24",
            ],
        ),
        (
            "beyond",
            &[
                at,
                "document \"a.md\"",
                "chunk 2 has offsets 24..41 beyond the document's 36 characters",
            ],
        ),
        (
            "mismatch",
            &[
                at,
                "document \"a.md\"",
                "chunk 1 does not match the document's text at its offsets 1..22",
            ],
        ),
    ];
    for (mode, wanted) in cases {
        let (code, stderr) = bad(mode, &toy());
        assert_eq!(code, 2, "{mode}: {stderr}");
        for w in *wanted {
            assert!(stderr.contains(w), "{mode}: {w:?} not in {stderr}");
        }
    }
}

#[test]
fn a_command_that_does_not_exist_is_named() {
    let t = tempfile::tempdir().unwrap();
    let missing = t.path().join("no-such-chunker.py");
    let config = config(t.path(), &missing, "ok", "");
    // the interpreter exists and the script does not: python3 exits 2 before its hello
    let (code, stderr) = sweep(&config, &t.path().join("run"));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("its output ended before its hello"),
        "{stderr}"
    );
    assert!(stderr.contains("no-such-chunker.py"), "{stderr}");
    // a program that does not exist
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "command = [\"python3\"",
        "command = [\"no-such-program-3171\"",
    );
    std::fs::write(&config, text).unwrap();
    let (code, stderr) = sweep(&config, &t.path().join("run2"));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("chunker toy: cannot start \"no-such-program-3171"),
        "{stderr}"
    );
    assert!(stderr.contains("No such file or directory"), "{stderr}");
}

/// `sweep` with `$TOY_CHILD_PID_FILE` set to `pid_file` (where the toy writes its child's process
/// id): (exit code, stderr).
fn sweep_with_child(config: &Path, out: &Path, pid_file: &Path) -> (i32, String) {
    let o = chunksweep()
        .env("TOY_CHILD_PID_FILE", pid_file)
        .arg("sweep")
        .arg("--config")
        .arg(config)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .output()
        .unwrap();
    (
        o.status.code().unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    )
}

/// Makes this test process the reaper of the orphans its descendants leave
/// (`PR_SET_CHILD_SUBREAPER`): when the chunker ends, the child it started becomes a child of
/// this process, whose end can then be awaited and read.
fn adopt_orphans() {
    // SAFETY: prctl(2) with PR_SET_CHILD_SUBREAPER only sets a flag of this process.
    let r = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
    assert_eq!(r, 0, "prctl: {}", std::io::Error::last_os_error());
}

/// Whether SIGKILL ended the toy's child whose process id is in `pid_file` (after
/// [`adopt_orphans`], once the run has ended). Waits for it to end however long that takes
/// (a machine under load may run it a while after the signal): the child sleeps 300 s, so one
/// that was left running ends with exit 0 and this says false. False also when it is not this
/// process's child (the chunker itself still runs it).
fn ended_by_sigkill(pid_file: &Path) -> bool {
    let pid: libc::pid_t = std::fs::read_to_string(pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut status = 0;
    loop {
        // SAFETY: waitpid(2) writes the status into the integer it is given.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL;
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            eprintln!("waitpid({pid}): {e}");
            return false;
        }
    }
}

#[test]
fn a_hanging_chunker_is_ended_with_its_children() {
    adopt_orphans();
    let t = tempfile::tempdir().unwrap();
    let config = config(t.path(), &toy(), "hang", "");
    // the only wait of this file: 10 s without a line (the toy's hello comes well before)
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("timeout_s = 60", "timeout_s = 10")).unwrap();
    let pid_file = t.path().join("child.pid");
    let out = t.path().join("run");
    let (code, stderr) = sweep_with_child(&config, &out, &pid_file);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("no line for 10 s while waiting for the response for \"a.md\""),
        "{stderr}"
    );
    assert!(!out.join("sweep.csv").exists(), "rows written");
    // the toy's child `sleep 300` was in its process group and was ended with it
    assert!(
        ended_by_sigkill(&pid_file),
        "the chunker's child outlived it"
    );
}

#[test]
fn an_undeclared_strategy_is_refused_before_anything_runs() {
    let t = tempfile::tempdir().unwrap();
    let config = config(t.path(), &toy(), "ok", "");
    let o = chunksweep()
        .arg("sweep")
        .arg("--config")
        .arg(&config)
        .args(["--strategies", "toy,mine", "--quiet", "--out"])
        .arg(t.path().join("run"))
        .output()
        .unwrap();
    let stderr = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown strategy \"mine\""), "{stderr}");
    assert!(
        stderr.contains("no chunker of that name is declared"),
        "{stderr}"
    );
    assert!(!t.path().join("run").exists());
}

#[test]
fn check_names_a_changed_script_and_a_new_version_and_passes_an_unchanged_chunker() {
    let t = tempfile::tempdir().unwrap();
    let script = t.path().join("toy.py");
    std::fs::copy(toy(), &script).unwrap();
    let config = config(t.path(), &script, "ok", "");
    let base = t.path().join("base");
    let (code, stderr) = sweep(&config, &base);
    assert_eq!(code, 0, "{stderr}");
    let conf = config.display().to_string();
    // unchanged: passes, every document from the chunker cache
    let (code, _, stderr, json) = check(&base, &t.path().join("same"), &["--config", &conf]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        json["changes"]["chunker"]["settings"],
        serde_json::json!([])
    );
    assert_eq!(
        column(&placement(&t.path().join("same")), "documents_cached"),
        "2"
    );
    // a new version reported
    let o = chunksweep()
        .env("TOY_VERSION", "2.0")
        .args(["check", "--quiet", "--config", &conf, "--baseline"])
        .arg(&base)
        .arg("--out")
        .arg(t.path().join("v2"))
        .output()
        .unwrap();
    let stdout = String::from_utf8(o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    let md = std::fs::read_to_string(t.path().join("v2/check.md")).unwrap();
    assert!(md.contains("- Chunker: toy 1.0 → 2.0."), "{md}");
    // the script changed
    let mut text = std::fs::read_to_string(&script).unwrap();
    text.push_str("\n# changed\n");
    std::fs::write(&script, text).unwrap();
    let (code, _, stderr, json) = check(&base, &t.path().join("edited"), &["--config", &conf]);
    assert_eq!(code, 0, "{stderr}");
    let names: Vec<String> = json["changes"]["chunker"]["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, [format!("external.files.{}", script.display())]);
    let md = std::fs::read_to_string(t.path().join("edited/check.md")).unwrap();
    let said = format!("- Chunker: script {} changed.", script.display());
    assert!(md.contains(&said), "{md}");
}

#[test]
fn a_baseline_never_supplies_the_command() {
    let t = tempfile::tempdir().unwrap();
    let config = config(t.path(), &toy(), "ok", "");
    let base = t.path().join("base");
    assert_eq!(sweep(&config, &base).0, 0);
    // without the config file that declares it, check cannot run the baseline's chunker
    let (code, _, stderr, _) = check(&base, &t.path().join("run"), &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("no chunker of that name is declared"),
        "{stderr}"
    );
}

#[test]
fn a_config_in_the_current_folder_runs_its_chunker_there() {
    // `--config chunksweep.toml` from its own folder, the script named relative to it
    let t = tempfile::tempdir().unwrap();
    std::fs::copy(toy(), t.path().join("toy.py")).unwrap();
    config(t.path(), Path::new("toy.py"), "ok", "");
    let o = chunksweep()
        .current_dir(t.path())
        .args([
            "sweep",
            "--config",
            "chunksweep.toml",
            "--out",
            "run",
            "--quiet",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert_eq!(column(&placement(&t.path().join("run")), "chunks"), "3");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.path().join("run/manifest.json")).unwrap())
            .unwrap();
    let files = &manifest["fingerprints"]["chunker"]["external"]["files"];
    assert_eq!(
        files.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["toy.py"]
    );
}

#[test]
fn precomputed_chunks_equal_to_a_built_ins_are_its_alias() {
    // the recursive strategy's own chunks at 64 tokens, written as a precomputed chunks file
    let t = tempfile::tempdir().unwrap();
    let dump = t.path().join("dump");
    let handbook = [
        "--config",
        "datasets/handbook.toml",
        "--sizes",
        "64",
        "--quiet",
    ];
    let o = chunksweep()
        .args(["sweep", "--strategies", "recursive", "--dump-chunks"])
        .args(handbook)
        .arg("--out")
        .arg(&dump)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let corpus = root().join("datasets/handbook");
    let mut by_doc: std::collections::BTreeMap<String, Vec<serde_json::Value>> = Default::default();
    let dumped =
        std::fs::read_to_string(dump.join("chunks/recursive-64-o9-none-bm25-k5.jsonl")).unwrap();
    for line in dumped.lines() {
        let c: serde_json::Value = serde_json::from_str(line).unwrap();
        let doc = c["doc"].as_str().unwrap().to_string();
        let text: Vec<char> = std::fs::read_to_string(corpus.join(&doc))
            .unwrap()
            .chars()
            .collect();
        let (s, e) = (
            c["start"].as_u64().unwrap() as usize,
            c["end"].as_u64().unwrap() as usize,
        );
        let chunk = text[s..e].iter().collect::<String>();
        by_doc
            .entry(doc)
            .or_default()
            .push(serde_json::json!({"text": chunk, "start": s, "end": e}));
    }
    let chunks = t.path().join("chunks");
    std::fs::create_dir_all(&chunks).unwrap();
    let mut file = vec![r#"{"protocol": "chunksweep-chunker", "version": 1, "chunker": "copy", "versions": {"copy": "1"}}"#.to_string()];
    for (doc, cs) in &by_doc {
        file.push(serde_json::json!({"id": doc, "chunks": cs}).to_string());
    }
    std::fs::write(chunks.join("mine-64-o9.jsonl"), file.join("\n")).unwrap();
    let out = t.path().join("run");
    let o = chunksweep()
        .args(["sweep", "--strategies", "recursive,mine", "--chunks"])
        .arg(&chunks)
        .args(handbook)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let row = placement(&out);
    assert_eq!(column(&row, "config"), "mine-64-o9");
    assert_eq!(column(&row, "placed_given"), column(&row, "chunks"));
    // one row of the selection, the external configuration named as the built-in's alias
    let mut r = csv::Reader::from_path(out.join("selection.csv")).unwrap();
    let headers = r.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let get = |rec: &csv::StringRecord, name: &str| {
        rec[headers.iter().position(|h| h == name).unwrap()].to_string()
    };
    assert_eq!(rows.len(), 1);
    assert_eq!(get(&rows[0], "config_id"), "recursive-64-o9-none-bm25-k5");
    assert_eq!(get(&rows[0], "aliases"), "mine-64-o9-none-bm25-k5");
}

#[test]
fn a_file_the_chunker_imports_is_in_its_fingerprint_when_listed() {
    let t = tempfile::tempdir().unwrap();
    std::fs::copy(toy(), t.path().join("toy.py")).unwrap();
    std::fs::write(t.path().join("helper.py"), "SIZE = 1\n").unwrap();
    let config = config(
        t.path(),
        Path::new("toy.py"),
        "ok",
        r#"files = ["helper.py"]"#,
    );
    let base = t.path().join("base");
    assert_eq!(sweep(&config, &base).0, 0);
    std::fs::write(t.path().join("helper.py"), "SIZE = 2\n").unwrap();
    let conf = config.display().to_string();
    let out = t.path().join("changed");
    let (code, _, stderr, json) = check(&base, &out, &["--config", &conf]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        json["changes"]["chunker"]["settings"][0]["name"],
        "external.files.helper.py"
    );
    // chunked again, not read from the cache
    assert_eq!(column(&placement(&out), "documents_cached"), "0");
    let md = std::fs::read_to_string(out.join("check.md")).unwrap();
    assert!(md.contains("- Chunker: script helper.py changed."), "{md}");
    // a listed file that does not exist is refused before anything runs
    std::fs::remove_file(t.path().join("helper.py")).unwrap();
    let (code, stderr) = sweep(&config, &t.path().join("missing"));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("files names helper.py, which is not in"),
        "{stderr}"
    );
}

#[test]
fn a_chunker_that_exits_leaves_nothing_running() {
    // the toy starts `sleep 300` in its process group, answers everything and exits 0
    adopt_orphans();
    let t = tempfile::tempdir().unwrap();
    let pid_file = t.path().join("child.pid");
    let (code, stderr) = sweep_with_child(
        &config(t.path(), &toy(), "leave-child", ""),
        &t.path().join("run"),
        &pid_file,
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        ended_by_sigkill(&pid_file),
        "the chunker's child outlived the run"
    );
}
