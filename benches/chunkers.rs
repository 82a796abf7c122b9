//! What chunksweep adds around an external chunker (docs/chunkers.md).
//!
//! `cargo bench --bench chunkers [-- --mb 10 --runs 3 --size 2000]`
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
//! chunksweep's added time is the difference of the medians; the target is at most 10 % of the
//! chunker's own time. Then placement alone on one document of 1 and of 10 times the size (the
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
    let script = root.join("examples/chunkers/fixed_chars.py");
    let name = ExternalName::new("fixed-chars").unwrap();
    let params = ChunkParams {
        strategy: Strategy::External(name),
        chunk_size: size,
        chunk_overlap: 0,
    };
    let spec = ChunkerSpec {
        name: name.as_str().into(),
        command: vec![
            "python3".into(),
            script.display().to_string(),
            "--no-offsets".into(),
        ],
        unit: SizeUnit::Characters,
        timeout_s: 600.0,
        max_unlocated_share: 0.0,
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
                unit: "characters",
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
    let mut chunks = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let status = Command::new("python3")
            .arg(&script)
            .arg("--no-offsets")
            .stdin(std::fs::File::open(&requests).unwrap())
            .stdout(std::fs::File::create(work.join("responses.jsonl")).unwrap())
            .stderr(Stdio::inherit())
            .status()
            .unwrap();
        assert!(status.success());
        alone.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let out = run_chunkers(&inputs).unwrap();
        through.push(t.elapsed().as_secs_f64());
        chunks = out.get(&params).unwrap().counts.chunks;
    }
    let (a, b) = (median(alone), median(through));
    println!(
        "External chunker overhead: {} documents, {:.1} MB, fixed_chars.py --no-offsets at {size} characters ({chunks} chunks), median of {runs} runs, {} cores\n",
        corpus.docs.len(),
        bytes as f64 / 1e6,
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("| chunker alone (s) | through chunksweep (s) | added (s) | added / chunker |");
    println!("|---|---|---|---|");
    println!(
        "| {a:.2} | {b:.2} | {:.2} | {:.1} % |\n",
        b - a,
        100.0 * (b - a) / a
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
