//! The document readers' speed, and what the document cache saves a sweep.
//!
//! `cargo bench --bench readers [-- --runs 5]`
//!
//! - Generates a PDF of about 500 pages (the handbook's Markdown repeated 26 times, written by
//!   pdf_oxide's Markdown-to-PDF writer) and the same Markdown as one HTML page and as one DOCX,
//!   then times the `pdf`, `html` and `docx` readers on them (`--runs` times each; the median):
//!   pages per second for the PDF, and for HTML and DOCX the same text's 500-odd pages' worth
//!   per second.
//! - Sweeps `datasets/handbook-pdf` (recursive and sentence, 64 to 1,024 tokens, BM25, the
//!   golden set's text-evidence questions) once to fill a fresh document cache, then `--runs`
//!   times from the cache, interleaved with the same sweep on the texts `chunksweep extract`
//!   wrote (the golden set's ids renamed to the written files), and gives both medians and their
//!   ratio; then the same on a corpus of 504 pages (those 10 PDFs and 20 copies of them), where
//!   process start and opening the caches weigh less. `validate` of each corpus (reading it and
//!   the golden set, no sweep) shows what reading from the cache costs apart from the sweep.
//!
//! Figures are printed as a Markdown table and written to `<target>/tmp/readers-bench.md`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[path = "../examples/support/markdown_docx.rs"]
mod markdown_docx;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let out = f();
    (out, t.elapsed().as_secs_f64())
}

/// The handbook's Markdown, repeated `copies` times.
fn handbook(root: &Path, copies: usize) -> String {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("datasets/handbook"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    let one: String = files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap().replace('`', ""))
        .collect::<Vec<_>>()
        .join("\n\n");
    vec![one; copies].join("\n\n")
}

/// Copies of the handbook's 10 PDFs added under `copies/NN/` for the large corpus: with the 10
/// at the root, 21 × 24 = 504 pages.
const COPIES: usize = 20;

/// How the large corpus is named in the table.
const LARGE: &str = "the same 10 PDFs plus 20 copies (210 PDFs, 504 pages)";

/// `chunksweep <args>` in `dir`, timed; panics unless it succeeds.
fn timed_run(bin: &str, dir: &Path, args: &[&str]) -> f64 {
    let (status, secs) = timed(|| {
        Command::new(bin)
            .current_dir(dir)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
    });
    assert!(status.success(), "chunksweep {args:?} failed");
    secs
}

/// The table rows of one PDF corpus: `extract` it, sweep it once to fill a fresh document cache,
/// then `runs` times from the cache interleaved with the same sweep of the extracted texts, and
/// `validate` (reading the corpus and the golden set, no sweep) of both the same way.
fn cached_against_text(
    bin: &str,
    work: &Path,
    corpus: &Path,
    name: &str,
    label: &str,
    runs: usize,
) -> String {
    let extracted = format!("extracted-{name}");
    let corpus_s = corpus.display().to_string();
    timed_run(
        bin,
        work,
        &["extract", "--corpus", &corpus_s, "--out", &extracted],
    );
    let grid = format!(
        "[sweep]\nstrategies = [\"recursive\", \"sentence\"]\nsizes = [64, 128, 256, 512, 1024]\n[llm]\ncache_path = \"cache-{name}/llm_cache.sqlite\"\n"
    );
    let pdf_config = format!("pdf-{name}.toml");
    std::fs::write(
        work.join(&pdf_config),
        format!("corpus = \"{corpus_s}\"\ngolden = \"pdf-golden.jsonl\"\n{grid}"),
    )
    .unwrap();
    let text_config = format!("text-{name}.toml");
    std::fs::write(
        work.join(&text_config),
        format!("corpus = \"{extracted}\"\ngolden = \"text-golden.jsonl\"\n{grid}"),
    )
    .unwrap();
    let sweep = |config: &str, out: &str| {
        timed_run(bin, work, &["sweep", "--config", config, "--out", out])
    };
    // validate has no --config: it reads through the default document cache (results/ under
    // `work`), filled by a first, untimed run
    let validate = |corpus: &str, golden: &str| {
        timed_run(
            bin,
            work,
            &["validate", "--corpus", corpus, "--golden", golden],
        )
    };
    let cold = sweep(&pdf_config, &format!("run-{name}-cold"));
    validate(&corpus_s, "pdf-golden.jsonl");
    let (mut cached, mut text, mut load_pdf, mut load_text) = (vec![], vec![], vec![], vec![]);
    for i in 0..runs {
        cached.push(sweep(&pdf_config, &format!("run-{name}-pdf-{i}")));
        text.push(sweep(&text_config, &format!("run-{name}-text-{i}")));
        load_pdf.push(validate(&corpus_s, "pdf-golden.jsonl"));
        load_text.push(validate(&extracted, "text-golden.jsonl"));
    }
    let (c, t) = (median(cached), median(text));
    let (lp, lt) = (median(load_pdf), median(load_text));
    // each sweep's own phase times (manifest.json): reading the corpus, and everything after it
    let phases = |kind: &str| -> (f64, f64) {
        let (mut load, mut rest) = (Vec::new(), Vec::new());
        for i in 0..runs {
            let path = work.join(format!("run-{name}-{kind}-{i}/manifest.json"));
            let m: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let p = &m["phase_time_ms"];
            let ms = |k: &str| p[k].as_f64().unwrap();
            load.push(ms("load_ms"));
            rest.push(ms("tokenize_ms") + ms("analyze_ms") + ms("configs_ms") + ms("write_ms"));
        }
        (median(load), median(rest))
    };
    let ((pl, pr), (tl, tr)) = (phases("pdf"), phases("text"));
    format!(
        "| sweep of {label}, 10 configurations, first run (extracting) | {cold:.2} s | 1 |\n\
         | the same, second run (document cache) | {c:.2} s | {runs} |\n\
         | the same sweep on the extracted texts | {t:.2} s | {runs} |\n\
         | cached PDF sweep ÷ extracted-text sweep | {:.2} | medians |\n\
         | `validate` of the same (corpus and golden set read, no sweep): cached PDFs, texts | {lp:.2} s, {lt:.2} s | {runs} |\n\
         | inside the sweeps (manifest.json's phase times): reading the corpus, cached PDFs against texts | {pl:.0} ms, {tl:.0} ms | {runs} |\n\
         | inside the sweeps: tokenize, analyze, configurations and writing, cached PDFs against texts (the same work on the same texts) | {pr:.0} ms, {tr:.0} ms | {runs} |\n",
        c / t
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .map_or(5, |v| v.parse().expect("--runs N"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target"));
    let work = target.join("tmp/readers-bench");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let mut table = String::from("| what | result | runs |\n|---|---|---|\n");

    // 1. readers on a ~500-page document
    let md = handbook(root, 26);
    let mut pdf = pdf_oxide::api::Pdf::from_markdown(&md).unwrap();
    let pdf_bytes = pdf.save_to_bytes().unwrap();
    let pages = chunksweep::documents::pdf::read(&pdf_bytes)
        .unwrap()
        .pages
        .len();
    let pdf_s = median(
        (0..runs)
            .map(|_| timed(|| chunksweep::documents::pdf::read(&pdf_bytes).unwrap()).1)
            .collect(),
    );
    table.push_str(&format!(
        "| `pdf` reader (pdf_oxide {}), {pages}-page PDF of {:.1} MB | {:.2} s, {:.0} pages/s | {runs} |\n",
        chunksweep::documents::kind::ReaderKind::Pdf.version(),
        pdf_bytes.len() as f64 / 1e6,
        pdf_s,
        pages as f64 / pdf_s
    ));
    let mut html = String::from("<html><head><meta charset=\"utf-8\"></head><body>");
    pulldown_cmark::html::push_html(
        &mut html,
        pulldown_cmark::Parser::new_ext(&md, pulldown_cmark::Options::ENABLE_TABLES),
    );
    html.push_str("</body></html>");
    let html_s = median(
        (0..runs)
            .map(|_| timed(|| chunksweep::documents::html::read(html.as_bytes()).unwrap()).1)
            .collect(),
    );
    table.push_str(&format!(
        "| `html` reader (htmd {}), the same text as one {:.1} MB page | {:.2} s, {:.0} page-equivalents/s | {runs} |\n",
        chunksweep::documents::kind::ReaderKind::Html.version(),
        html.len() as f64 / 1e6,
        html_s,
        pages as f64 / html_s
    ));

    let docx_bytes = markdown_docx::docx(&md);
    let docx_s = median(
        (0..runs)
            .map(|_| timed(|| chunksweep::documents::docx::read(&docx_bytes).unwrap()).1)
            .collect(),
    );
    table.push_str(&format!(
        "| `docx` reader (quick-xml {}), the same text as one {:.1} MB DOCX (examples/support/markdown_docx.rs) | {:.2} s, {:.0} page-equivalents/s | {runs} |\n",
        chunksweep::documents::kind::ReaderKind::Docx.version(),
        docx_bytes.len() as f64 / 1e6,
        docx_s,
        pages as f64 / docx_s
    ));

    // 2. a cached sweep of PDFs against the same sweep of their extracted texts: the handbook's
    //    10 PDFs (24 pages), and a corpus of about 500 pages (the same 10 at the root, so the
    //    golden set's ids hold, and COPIES copies of them under copies/NN/ as more documents)
    let bin = env!("CARGO_BIN_EXE_chunksweep");
    let golden = std::fs::read_to_string(root.join("datasets/handbook-pdf-golden.jsonl")).unwrap();
    let text_only: Vec<&str> = golden.lines().filter(|l| !l.contains("\"page\"")).collect();
    std::fs::write(work.join("pdf-golden.jsonl"), text_only.join("\n")).unwrap();
    std::fs::write(
        work.join("text-golden.jsonl"),
        text_only.join("\n").replace(".pdf\"", ".pdf.txt\""),
    )
    .unwrap();
    let small = root.join("datasets/handbook-pdf");
    let large = work.join("handbook-pdf-large");
    for dir in std::iter::once(large.clone())
        .chain((1..=COPIES).map(|i| large.join(format!("copies/{i:02}"))))
    {
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&small).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    for (label, corpus, name) in [
        (
            "datasets/handbook-pdf (10 PDFs, 24 pages)",
            small.as_path(),
            "small",
        ),
        (LARGE, large.as_path(), "large"),
    ] {
        table.push_str(&cached_against_text(bin, &work, corpus, name, label, runs));
    }
    print!("{table}");
    std::fs::write(target.join("tmp/readers-bench.md"), &table).unwrap();
}
