//! What chunksweep adds around an external chunker (docs/chunkers.md).
//!
//! `cargo bench --bench chunkers [-- --mb 10 --runs 3 --size 2000] [--langchain PYTHON]`
//!
//! With `--langchain PYTHON` the chunker is `examples/chunkers/langchain_recursive.py` run by
//! PYTHON (a venv with its packages, as scripts/external-chunkers.sh makes; TIKTOKEN_CACHE_DIR
//! set as that script sets it), at `--size` tokens: a chunker that does real work.
//!
//! Builds an in-memory corpus of about `--mb` MB by repeating `datasets/chroma-general`'s
//! documents, and a trivial chunker: `examples/chunkers/fixed_chars.py --no-offsets` (fixed
//! windows of `--size` characters, no offsets, so every chunk is searched for). Then, `--runs`
//! times, interleaved:
//! - **the chunker alone**: the same hello and requests chunksweep sends, written to a file
//!   first, piped into the chunker from that file, its output to a file: the chunker's own time
//!   (start, reading and parsing JSON, chunking, writing JSON);
//! - **through chunksweep**: `run_chunkers` (no cache): requests serialised and piped, responses
//!   read, parsed, checked and every chunk placed in its document.
//!
//! Wall times on a shared two-core machine move by a third from run to run, so the decomposition
//! that decides is in CPU time, measured in the same runs through chunksweep: the chunker's own
//! CPU (user + system of the child, `RUSAGE_CHILDREN`) against the CPU chunksweep's process spent
//! around it (`RUSAGE_SELF`: serialising requests, piping, reading and parsing responses,
//! placing chunks). The target is at most 10 % of the chunker's own time. The wall times are
//! given beside it. Then placement alone on one document of 1 and of 10 times the size (the
//! corpus's text joined), to show it linear in document length. Printed as Markdown.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use chunksweep::chunking::external::locate::place;
use chunksweep::chunking::external::protocol::{self, ChunkOut, Hello, Request};
use chunksweep::chunking::external::{
    ChunkerSpec, ExternalInputs, ExternalName, SizeUnit, run_chunkers,
};
use chunksweep::chunking::{ChunkParams, Strategy};
use chunksweep::corpus::{Corpus, Document};
use chunksweep::tokenize::TokenizerKind;

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("a number"))
}

/// chroma-general's documents, repeated under new ids until about `bytes`.
fn corpus(root: &Path, bytes: usize) -> Corpus {
    let dir = root.join("datasets/chroma-general/corpora");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(f).unwrap())
        })
        .collect();
    let mut docs = Vec::new();
    let (mut total, mut copy) = (0, 0);
    while total < bytes {
        for (name, text) in &texts {
            docs.push(Document::new(format!("copy{copy:04}-{name}"), text.clone()));
            total += text.len();
        }
        copy += 1;
    }
    Corpus::from_documents("bench", docs)
}

/// User + system CPU seconds of this process (`RUSAGE_SELF`) or of its reaped children
/// (`RUSAGE_CHILDREN`).
fn cpu(who: libc::c_int) -> f64 {
    // SAFETY: getrusage writes the whole struct, which is plain data.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(who, &mut u) }, 0);
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    s(u.ru_utime) + s(u.ru_stime)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mb = arg(&args, "--mb", 10);
    let runs = arg(&args, "--runs", 3).max(1);
    let size = arg(&args, "--size", 2000);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = corpus(root, mb * 1_000_000);
    let bytes: usize = corpus.docs.iter().map(|d| d.text.len()).sum();
    let langchain = args
        .iter()
        .position(|a| a == "--langchain")
        .and_then(|i| args.get(i + 1).cloned());
    let (python, script, flags, unit) = match &langchain {
        Some(python) => (
            python.clone(),
            root.join("examples/chunkers/langchain_recursive.py"),
            Vec::new(),
            SizeUnit::Tokens,
        ),
        None => (
            "python3".to_string(),
            root.join("examples/chunkers/fixed_chars.py"),
            vec!["--no-offsets".to_string()],
            SizeUnit::Characters,
        ),
    };
    let label = format!(
        "{}{} at {size} {}",
        script.file_name().unwrap().to_string_lossy(),
        flags.iter().map(|f| format!(" {f}")).collect::<String>(),
        unit.name()
    );
    let name = ExternalName::new("bench-chunker").unwrap();
    let params = ChunkParams {
        strategy: Strategy::External(name),
        chunk_size: size,
        chunk_overlap: 0,
    };
    let spec = ChunkerSpec {
        name: name.as_str().into(),
        command: [python.clone(), script.display().to_string()]
            .into_iter()
            .chain(flags.iter().cloned())
            .collect(),
        unit,
        timeout_s: 600.0,
        max_unlocated_share: 0.0,
        files: Vec::new(),
        dir: root.to_path_buf(),
    };
    // the requests chunksweep sends, in a file
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("chunkers-bench");
    std::fs::create_dir_all(&work).unwrap();
    let requests = work.join("requests.jsonl");
    let mut lines = vec![
        serde_json::to_string(&Hello {
            protocol: protocol::PROTOCOL,
            version: protocol::VERSION,
            chunksweep: env!("CARGO_PKG_VERSION"),
            chunker: name.as_str(),
        })
        .unwrap(),
    ];
    for d in &corpus.docs {
        lines.push(
            serde_json::to_string(&Request {
                id: &d.id,
                text: &d.text,
                chunk_size: size,
                chunk_overlap: 0,
                unit: unit.name(),
                tokenizer: "cl100k_base",
            })
            .unwrap(),
        );
    }
    std::fs::write(&requests, lines.join("\n") + "\n").unwrap();
    let sink = |_: &str, line: &str| eprintln!("{line}");
    let inputs = ExternalInputs {
        corpus: &corpus,
        tokenizer: TokenizerKind::Cl100kBase,
        chunkers: std::slice::from_ref(&spec),
        files: &[],
        params: &[params],
        cache: None,
        stderr: &sink,
    };
    let (mut alone, mut through) = (Vec::new(), Vec::new());
    let (mut child_cpu, mut own_cpu) = (Vec::new(), Vec::new());
    let mut chunks = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let status = Command::new(&python)
            .arg(&script)
            .args(&flags)
            .stdin(std::fs::File::open(&requests).unwrap())
            .stdout(std::fs::File::create(work.join("responses.jsonl")).unwrap())
            .stderr(Stdio::inherit())
            .status()
            .unwrap();
        assert!(status.success());
        alone.push(t.elapsed().as_secs_f64());
        let (t, own, child) = (
            Instant::now(),
            cpu(libc::RUSAGE_SELF),
            cpu(libc::RUSAGE_CHILDREN),
        );
        let out = run_chunkers(&inputs).unwrap();
        through.push(t.elapsed().as_secs_f64());
        own_cpu.push(cpu(libc::RUSAGE_SELF) - own);
        child_cpu.push(cpu(libc::RUSAGE_CHILDREN) - child);
        chunks = out.get(&params).unwrap().counts.chunks;
    }
    let (a, b) = (median(alone), median(through));
    let (c, o) = (median(child_cpu), median(own_cpu));
    println!(
        "External chunker overhead: {} documents, {:.1} MB, {label} ({chunks} chunks), median of {runs} runs, {} cores\n",
        corpus.docs.len(),
        bytes as f64 / 1e6,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "| chunker's CPU (s) | chunksweep's CPU around it (s) | ratio | wall, chunker alone (s) | wall, through chunksweep (s) |"
    );
    println!("|---|---|---|---|---|");
    println!(
        "| {c:.2} | {o:.2} | {:.1} % | {a:.2} | {b:.2} |\n",
        100.0 * o / c
    );
    // placement alone, on one document of one and of ten times the text
    let joined: String = corpus
        .docs
        .iter()
        .take(200)
        .map(|d| d.text.as_str())
        .collect();
    println!("| one document (MB) | chunks | placement (ms) | ms per MB |");
    println!("|---|---|---|---|");
    for times in [1, 10] {
        let text = joined.repeat(times);
        let doc = Document::new("one", text.clone());
        let outs: Vec<ChunkOut> = text
            .char_indices()
            .step_by(size)
            .map(|(b, _)| b)
            .collect::<Vec<_>>()
            .windows(2)
            .map(|w| ChunkOut {
                text: text[w[0]..w[1]].to_string(),
                start: None,
                end: None,
            })
            .filter(|c| !c.text.trim().is_empty())
            .collect();
        let t = Instant::now();
        let placed = place(&doc, &outs).unwrap();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        assert!(placed.iter().all(Option::is_some));
        let mb = text.len() as f64 / 1e6;
        println!("| {mb:.1} | {} | {ms:.1} | {:.2} |", outs.len(), ms / mb);
    }
}
