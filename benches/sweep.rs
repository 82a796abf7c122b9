//! Sweep throughput and memory at scale, beside a Python baseline.
//!
//! `cargo bench --bench sweep [-- --mb 1,10,100 --baseline-max-mb 10 --runs 5 --budget-mb 10]`
//!
//! Builds corpora of about 1, 10 and 100 MB by repeating `datasets/chroma-general`'s documents
//! under new ids (the 276 questions keep pointing at the originals), then times, as separate
//! processes so that peak memory is each run's own (`wait4`'s `ru_maxrss`):
//! - `chunksweep sweep` with fixed, recursive and markdown at 64 128 256 512 1024 tokens, BM25,
//!   k = 5 (15 configurations), with the time of each phase and stage from its manifest;
//! - on corpora up to `--baseline-max-mb`: the `words` strategy at the same sizes with the `seed`
//!   analyzer (the same chunks, terms and BM25 scores as the baseline), and the same sweep in
//!   plain Python with seed 000's algorithm (`benches/baseline_seed000.py`), and their ratio.
//!
//! - on the `--budget-mb` corpus (default 10; 0 skips it): the same BPE sweep without and with
//!   `--budget 1000,2000,4000` (each configuration read at k and at three budgets from one
//!   ranking), `--runs` times each, interleaved (without, with, without, …), and the ratio of
//!   their medians and the median of the paired ratios. `--mb 0` skips the table above.
//!
//! Each chunksweep sweep runs `--runs` times (default 5; the BPE sweeps in rounds over the corpus
//! sizes, so a busy spell of the host slows every size alike); the table gives the run of median
//! wall time and the range, since a shared host's neighbours move single runs by up to a third.
//! Figures are printed as a Markdown table and written to `<target>/tmp/sweep-bench.md`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const SIZES: &str = "64,128,256,512,1024";

struct Run {
    wall_s: f64,
    /// User + system CPU time of the process, which a busy machine inflates less than wall time.
    cpu_s: f64,
    peak_mb: f64,
    stdout: String,
}

// The child is reaped by `wait4` (which also reports its peak memory), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run(cmd: &mut Command) -> Run {
    let started = Instant::now();
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id() as libc::pid_t;
    let mut out = child.stdout.expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut out, &mut s).ok();
        s
    });
    let mut status = 0;
    // SAFETY: plain FFI call on our own child; `rusage` is fully written by the kernel.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4 failed");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{cmd:?} failed with status {status}"
    );
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Run {
        wall_s: started.elapsed().as_secs_f64(),
        cpu_s: secs(usage.ru_utime) + secs(usage.ru_stime),
        peak_mb: usage.ru_maxrss as f64 / 1024.0,
        stdout: reader.join().unwrap_or_default(),
    }
}

fn build_corpus(source: &Path, dir: &Path, target_bytes: u64) -> (u64, usize) {
    let corpora = dir.join("corpora");
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(&corpora).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(source.join("corpora"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut total = 0;
    let mut n = 0;
    for f in &files {
        total += std::fs::copy(f, corpora.join(f.file_name().unwrap())).unwrap();
        n += 1;
    }
    let mut copy = 0;
    while total < target_bytes {
        for f in &files {
            let name = format!("copy{copy:05}-{}", f.file_name().unwrap().to_string_lossy());
            total += std::fs::copy(f, corpora.join(name)).unwrap();
            n += 1;
        }
        copy += 1;
    }
    std::fs::copy(
        source.join("questions_df.csv"),
        dir.join("questions_df.csv"),
    )
    .unwrap();
    (total, n)
}

/// Phase times (`phase_time_ms`) and stage times summed over configurations (`config_time_ms`)
/// of a run folder's manifest, as lookups by key returning seconds.
fn times(run_dir: &Path) -> (impl Fn(&str) -> f64 + use<>, impl Fn(&str) -> f64 + use<>) {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("manifest.json")).unwrap())
            .unwrap();
    let phases = manifest["phase_time_ms"].clone();
    let configs = manifest["config_time_ms"].clone();
    (
        move |k: &str| phases[k].as_f64().unwrap_or(0.0) / 1e3,
        move |k: &str| {
            configs
                .as_object()
                .unwrap()
                .values()
                .map(|v| v[k].as_f64().unwrap_or(0.0))
                .sum::<f64>()
                / 1e3
        },
    )
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// The run of median wall time among `all` (with its folder), and the fastest and slowest
/// wall times.
fn median_of(mut all: Vec<(Run, PathBuf)>) -> (Run, PathBuf, f64, f64) {
    all.sort_by(|a, b| a.0.wall_s.total_cmp(&b.0.wall_s));
    let (min, max) = (all[0].0.wall_s, all[all.len() - 1].0.wall_s);
    let (median, dir) = all.swap_remove(all.len() / 2);
    (median, dir, min, max)
}

/// The `chunksweep sweep` command over the corpus in `dir` with `strategies` at [`SIZES`],
/// k = 5, writing to `out`.
fn sweep(bin: &str, dir: &Path, out: &Path, strategies: &str, extra: &[&str]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(["sweep", "--quiet", "--golden-format", "chroma"])
        .arg("--corpus")
        .arg(dir.join("corpora"))
        .arg("--golden")
        .arg(dir.join("questions_df.csv"))
        .args(["--strategies", strategies, "--sizes", SIZES, "--k", "5"])
        .args(extra)
        .arg("--out")
        .arg(out);
    cmd
}

/// The BPE sweep of a `mb` corpus without and with `--budget 1000,2000,4000`, `runs` times
/// each, interleaved, as a Markdown table: medians of wall and CPU time, the ratio of the
/// medians and the median of the paired ratios (with / without, run by run).
fn budget_rows(bin: &str, source: &Path, work: &Path, mb: u64, runs: usize) -> Vec<String> {
    let dir = work.join(format!("{mb}mb"));
    let (bytes, _) = build_corpus(source, &dir, mb * 1_000_000);
    let mut without = Vec::new();
    let mut with = Vec::new();
    for round in 0..runs {
        for (budgets, done) in [(false, &mut without), (true, &mut with)] {
            let out = dir
                .join(if budgets { "budgets" } else { "k" })
                .join(format!("run-{round}"));
            let _ = std::fs::remove_dir_all(&out);
            let extra: &[&str] = if budgets {
                &["--budget", "1000,2000,4000"]
            } else {
                &[]
            };
            let r = run(&mut sweep(
                bin,
                &dir,
                &out,
                "fixed,recursive,markdown",
                extra,
            ));
            eprintln!(
                "{mb} MB, budgets {budgets}, run {round}: {:.2} s wall, {:.2} s CPU",
                r.wall_s, r.cpu_s
            );
            done.push(r);
        }
    }
    let median = |v: Vec<f64>| {
        let mut v = v;
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let pairs: Vec<f64> = without
        .iter()
        .zip(&with)
        .map(|(a, b)| b.wall_s / a.wall_s)
        .collect();
    let wall = |rs: &[Run]| median(rs.iter().map(|r| r.wall_s).collect());
    let cpu = |rs: &[Run]| median(rs.iter().map(|r| r.cpu_s).collect());
    let range = |rs: &[Run]| {
        let w: Vec<f64> = rs.iter().map(|r| r.wall_s).collect();
        let min = w.iter().copied().fold(f64::INFINITY, f64::min);
        let max = w.iter().copied().fold(0.0, f64::max);
        format!("{min:.2}–{max:.2}")
    };
    vec![
        format!("Budget cuts: the same 15-configuration BPE sweep without and with `--budget 1000,2000,4000` (60 rows from 15 rankings), {runs} runs each, interleaved (without, with, …); medians."),
        String::new(),
        "| corpus | runs | k only: wall (s) | range (s) | CPU (s) | k + 3 budgets: wall (s) | range (s) | CPU (s) | ratio of medians (wall) | median paired ratio (wall) | ratio of medians (CPU) |".into(),
        "|---|---|---|---|---|---|---|---|---|---|---|".into(),
        format!(
            "| {:.1} MB | {runs} + {runs} | {:.2} | {} | {:.2} | {:.2} | {} | {:.2} | {:.2} | {:.2} | {:.2} |",
            bytes as f64 / 1e6,
            wall(&without),
            range(&without),
            cpu(&without),
            wall(&with),
            range(&with),
            cpu(&with),
            wall(&with) / wall(&without),
            median(pairs),
            cpu(&with) / cpu(&without),
        ),
    ]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mbs: Vec<u64> = arg(&args, "--mb")
        .unwrap_or_else(|| "1,10,100".into())
        .split(',')
        .map(|s| s.trim().parse().expect("--mb takes sizes in MB"))
        .filter(|&mb| mb > 0)
        .collect();
    let budget_mb: u64 = arg(&args, "--budget-mb")
        .map(|s| s.parse().expect("--budget-mb takes a size in MB"))
        .unwrap_or(10);
    let baseline_max: u64 = arg(&args, "--baseline-max-mb")
        .map(|s| s.parse().expect("--baseline-max-mb takes a number"))
        .unwrap_or(10);
    let runs: usize = arg(&args, "--runs")
        .map(|s| s.parse().expect("--runs takes a number"))
        .unwrap_or(5)
        .max(1);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = root.join("datasets/chroma-general");
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sweep-bench");
    let bin = env!("CARGO_BIN_EXE_chunksweep");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());

    let mut table = vec![
        format!("Sweep benchmark: 15 configurations (fixed, recursive, markdown × {SIZES} tokens), BM25, k = 5, 276 questions, {threads} cores; each chunksweep figure is the run of median wall time among {runs} (its range beside it; the BPE sweeps run in rounds over the corpus sizes), the Python baseline runs once."),
        String::new(),
        "| corpus | docs | wall (s) | wall range (s) | CPU (s) | peak RSS (MB) | configs/s | questions×configs/s | load | tokenize | analyze | chunk | index | retrieve | score | write | words sweep (s) | words range (s) | Python baseline (s) | baseline / words | baseline peak (MB) |".into(),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|".into(),
    ];
    // every corpus first, then the BPE sweeps in rounds over the corpora, so that a busy spell
    // of the host slows every size alike and their ratio stays fair
    let corpora: Vec<(u64, PathBuf, u64, usize)> = mbs
        .iter()
        .map(|&mb| {
            let dir = work.join(format!("{mb}mb"));
            let (bytes, docs) = build_corpus(&source, &dir, mb * 1_000_000);
            (mb, dir, bytes, docs)
        })
        .collect();
    let mut bpe_runs: Vec<Vec<(Run, PathBuf)>> = corpora.iter().map(|_| Vec::new()).collect();
    for round in 0..runs {
        for ((_, dir, _, _), done) in corpora.iter().zip(&mut bpe_runs) {
            let out = dir.join("bpe").join(format!("run-{round}"));
            let _ = std::fs::remove_dir_all(&out);
            let cmd = &mut sweep(bin, dir, &out, "fixed,recursive,markdown", &[]);
            done.push((run(cmd), out));
        }
    }
    let mut words_stages = Vec::new();
    for ((mb, dir, bytes, docs), bpe) in corpora.into_iter().zip(bpe_runs) {
        let (main_run, out, min, max) = median_of(bpe);
        let (phase, stage) = times(&out);
        let configs = 15.0;
        let mut row = format!(
            "| {:.1} MB | {docs} | {:.2} | {:.2}–{:.2} | {:.2} | {:.0} | {:.2} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2}ᶜ | {:.2}ᶜ | {:.2}ᶜ | {:.2}ᶜ | {:.2} |",
            bytes as f64 / 1e6,
            main_run.wall_s,
            min,
            max,
            main_run.cpu_s,
            main_run.peak_mb,
            configs / main_run.wall_s,
            configs * 276.0 / main_run.wall_s,
            phase("load_ms"),
            phase("tokenize_ms"),
            phase("analyze_ms"),
            stage("chunk_ms"),
            stage("index_ms"),
            stage("retrieve_ms"),
            stage("score_ms"),
            phase("write_ms"),
        );
        if mb <= baseline_max {
            let words_runs = (0..runs)
                .map(|round| {
                    let out = dir.join("words").join(format!("run-{round}"));
                    let _ = std::fs::remove_dir_all(&out);
                    let extra = ["--tokenizer", "words", "--analyzer", "seed"];
                    (run(&mut sweep(bin, &dir, &out, "words", &extra)), out)
                })
                .collect();
            let (words, words_out, words_min, words_max) = median_of(words_runs);
            let py = run(Command::new("python3")
                .arg(root.join("benches/baseline_seed000.py"))
                .arg(dir.join("corpora"))
                .arg(dir.join("questions_df.csv"))
                .args(["--sizes", SIZES, "--overlap", "0.15", "--k", "5"]));
            eprintln!("{mb} MB baseline: {}", py.stdout.trim().replace('\n', " "));
            let (phase, stage) = times(&words_out);
            words_stages.push(format!(
                "- {:.1} MB, `words` sweep ({:.2} s wall): load {:.2}, tokenize {:.2}, analyze {:.2}, configurations {:.2} (summed: chunk {:.2}, index {:.2}, retrieve {:.2}, score {:.2}), write {:.2}.",
                bytes as f64 / 1e6,
                words.wall_s,
                phase("load_ms"),
                phase("tokenize_ms"),
                phase("analyze_ms"),
                phase("configs_ms"),
                stage("chunk_ms"),
                stage("index_ms"),
                stage("retrieve_ms"),
                stage("score_ms"),
                phase("write_ms"),
            ));
            row.push_str(&format!(
                " {:.2} | {:.2}–{:.2} | {:.1} | {:.0}× | {:.0} |",
                words.wall_s,
                words_min,
                words_max,
                py.wall_s,
                py.wall_s / words.wall_s,
                py.peak_mb
            ));
        } else {
            row.push_str(" – | – | – | – | – |");
        }
        eprintln!("{row}");
        table.push(row);
    }
    if budget_mb > 0 {
        table.push(String::new());
        table.extend(budget_rows(bin, &source, &work, budget_mb, runs));
    }
    table.push(String::new());
    table.push("Where the `words` sweep's time goes (seconds; the 5 configurations run in parallel, so their stages add up to more than their wall time):".into());
    table.push(String::new());
    table.extend(words_stages);
    table.push(String::new());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    table.push(format!(
        "Load average when the benchmark ended (1, 5, 15 min): {}.",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(", ")
    ));
    table.push("Times in seconds. ᶜ: summed over the 15 configurations (each stage's wall time inside its configuration; configurations run in parallel and each chunks its documents in parallel, so they add up to more than the wall time). Peak RSS is each process's own (wait4).".into());
    let text = table.join("\n");
    println!("{text}");
    std::fs::write(work.with_file_name("sweep-bench.md"), text + "\n").unwrap();
}
