//! Documents as they come, through the command line: PDF, HTML and DOCX read (the texts, pages
//! and warnings `extract` writes, the cache), and each bad input's message and exit code.
#![cfg(feature = "pdf")]

use std::io::Write as _;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn chunksweep(cwd: &Path) -> Command {
    let mut c = Command::cargo_bin("chunksweep").unwrap();
    c.current_dir(cwd);
    c
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// A PDF with one page per entry of `pages` (an empty entry: a page without text), written by
/// hand with Helvetica and a correct cross-reference table.
fn pdf(pages: &[&str]) -> Vec<u8> {
    let n = pages.len();
    // objects: 1 catalog, 2 pages, 3 font, then per page: page, contents
    let mut objects: Vec<String> = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".into(),
        format!(
            "<< /Type /Pages /Count {n} /Kids [{}] >>",
            (0..n)
                .map(|i| format!("{} 0 R", 4 + 2 * i))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".into(),
    ];
    for (i, text) in pages.iter().enumerate() {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ));
        let stream = match text.is_empty() {
            true => String::new(),
            false => format!("BT /F1 12 Tf 72 720 Td ({text}) Tj ET"),
        };
        objects.push(format!(
            "<< /Length {} >>\nstream\n{stream}\nendstream",
            stream.len()
        ));
    }
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        write!(out, "{} 0 obj\n{o}\nendobj\n", i + 1).unwrap();
    }
    let xref = out.len();
    write!(out, "xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).unwrap();
    for off in offsets {
        writeln!(out, "{off:010} 00000 n ").unwrap();
    }
    write!(
        out,
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    )
    .unwrap();
    out
}

/// Where `needle` first occurs in `bytes`.
fn find(bytes: &[u8], needle: &[u8]) -> usize {
    bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap()
}

/// `extract` over a folder holding `files`: (exit code, stdout, stderr).
fn extract(files: &[(&str, Vec<u8>)], extra: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    for (name, bytes) in files {
        std::fs::write(corpus.join(name), bytes).unwrap();
    }
    let out = chunksweep(dir.path())
        .args(["extract", "--corpus", "corpus", "--out", "out"])
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_pdf_keeps_its_pages_and_a_textless_page_is_named() {
    let (code, stdout, stderr) = extract(
        &[("scan.pdf", pdf(&["First page.", "", "Third page."]))],
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("scan.pdf → scan.pdf.txt: pdf "), "{stdout}");
    assert!(stdout.contains(", 3 pages, "), "{stdout}");
    assert!(
        stdout.contains("warning: scan.pdf: 1 of 3 page(s) hold no text (page 2): scanned pages or images; OCR it first (for example with ocrmypdf) and put the OCR'd PDF in the corpus"),
        "{stdout}"
    );
}

#[test]
fn extract_writes_texts_and_extract_json_and_reads_the_cache_the_second_time() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(corpus.join("api")).unwrap();
    std::fs::write(corpus.join("a.pdf"), pdf(&["Alpha one.", "Beta two."])).unwrap();
    std::fs::write(
        corpus.join("b.html"),
        b"<html><head><meta charset=\"windows-1252\"><script>x()</script></head><body><h1>Caf\xe9</h1></body></html>",
    )
    .unwrap();
    std::fs::write(corpus.join("api/index.rst.txt"), "Title\n=====\n\nBody.\n").unwrap();
    let run = || {
        chunksweep(dir.path())
            .args(["extract", "--corpus", "corpus", "--out", "out"])
            .output()
            .unwrap()
    };
    let first = run();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let text = std::fs::read_to_string(dir.path().join("out/a.pdf.txt")).unwrap();
    assert_eq!(text, "Alpha one.\n\nBeta two.");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/b.html.md")).unwrap(),
        "# Caf\u{e9}\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/api/index.rst.txt")).unwrap(),
        "Title\n=====\n\nBody.\n"
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out/extract.json")).unwrap(),
    )
    .unwrap();
    let a = &json["documents"][0];
    assert_eq!(a["id"], "a.pdf");
    assert_eq!(a["reader"], "pdf");
    assert_eq!(a["pages"], serde_json::json!([0, 12]));
    assert_eq!(a["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(json["documents"][1]["id"], "api/index.rst.txt");
    assert_eq!(json["documents"][1]["reader"], "rst");
    assert!(dir.path().join("results/documents.sqlite").exists());
    let second = String::from_utf8(run().stdout).unwrap();
    assert!(second.contains("a.pdf → a.pdf.txt: pdf "), "{second}");
    assert_eq!(second.matches(", from the cache").count(), 2, "{second}");
    // the written folder is a corpus of its texts: extract.json is not taken for a document
    let again = chunksweep(dir.path())
        .args(["extract", "--corpus", "out", "--out", "out2"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(
        again.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert!(stdout.contains("wrote 3 document(s)"), "{stdout}");
    assert!(!stdout.contains("extract.json →"), "{stdout}");
}

#[test]
fn bad_inputs_name_the_file_and_what_to_do() {
    // an encrypted PDF, written by pdf_oxide with a user password
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.pdf");
    let locked = dir.path().join("locked.pdf");
    std::fs::write(&plain, pdf(&["Secret."])).unwrap();
    let mut doc = pdf_oxide::api::Pdf::open(&plain).unwrap();
    doc.save_encrypted(&locked, "user", "owner").unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "locked.pdf",
            std::fs::read(&locked).unwrap(),
            "locked.pdf: the PDF is encrypted: chunksweep cannot read a password-protected PDF; save an unprotected copy (or extract its text yourself) and put that in the corpus",
        ),
        (
            "broken.pdf",
            b"%PDF-1.7\nthis is not a PDF body".to_vec(),
            "broken.pdf: cannot read it as pdf: ",
        ),
        (
            "notes.docx",
            {
                let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
                zip.start_file("notes.txt", zip::write::SimpleFileOptions::default())
                    .unwrap();
                zip.write_all(b"hello").unwrap();
                zip.finish().unwrap().into_inner()
            },
            "notes.docx: cannot read it as docx: a zip without word/document.xml, so not a Word document; check that the file opens, or map its extension to another reader in [corpus] readers",
        ),
        (
            "cut.pdf",
            {
                // a PDF cut short inside the last page's content stream: its pages parse
                // (pdf_oxide rebuilds the cross-references) but page 3's text is gone
                let whole = pdf(&["First page.", "Second page.", "Third page."]);
                let at = find(&whole, b"9 0 obj") + 20;
                whole[..at].to_vec()
            },
            "cut.pdf: the PDF is cut short or damaged (no %%EOF marker at its end), and page(s) 3 show no text because of it, not because they are scanned: get a complete copy of the file (download or copy it again)",
        ),
        (
            "latin1.md",
            b"Caf\xe9\n".to_vec(),
            "latin1.md: not valid UTF-8 (first bad byte at offset 3, line 1): re-encode it as UTF-8 or move it out of the corpus",
        ),
        (
            "data.csv",
            b"a,b\n".to_vec(),
            "1 file(s) under corpus have no reader: data.csv; map their extension to a reader in [corpus] readers (text, markdown, rst, html, docx, pdf), move them out, or pass --skip-unreadable to skip them",
        ),
    ];
    for (name, bytes, message) in cases {
        let (code, _, stderr) = extract(&[(name, bytes), ("ok.md", b"# Fine\n".to_vec())], &[]);
        assert_eq!(code, 2, "{name}: {stderr}");
        assert!(stderr.contains(message), "{name}: {stderr}");
        println!("| {name} | {code} | {} |", stderr.trim().replace('\n', " "));
    }
}

#[test]
fn files_without_a_reader_are_skipped_only_when_asked_and_then_named() {
    let files = [
        ("a.md", b"# A\n".to_vec()),
        ("logo.png", b"\x89PNG".to_vec()),
    ];
    let (code, stdout, stderr) = extract(&files, &["--skip-unreadable"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("warning: 1 file(s) skipped, no reader reads them: logo.png"),
        "{stdout}"
    );
}

#[test]
fn an_html_page_in_a_legacy_charset_is_read_in_it() {
    let mut page = b"<html><head><meta charset=\"iso-8859-1\"></head><body><p>Na\xefve caf\xe9</p></body></html>".to_vec();
    page.push(b'\n');
    let (code, stdout, stderr) = extract(&[("old.html", page)], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("old.html → old.html.md: html "), "{stdout}");
    assert!(!stdout.contains("warning"), "{stdout}");
}

#[test]
fn page_sweeps_a_pdf_and_refuses_a_document_without_pages() {
    let dir = tempfile::tempdir().unwrap();
    let ok = chunksweep(dir.path())
        .arg("validate")
        .arg("--corpus")
        .arg(root().join("datasets/handbook-pdf"))
        .arg("--golden")
        .arg(root().join("datasets/handbook-pdf-golden.jsonl"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let md = chunksweep(dir.path())
        .arg("sweep")
        .arg("--corpus")
        .arg(root().join("datasets/handbook"))
        .arg("--golden")
        .arg(root().join("datasets/handbook-golden.jsonl"))
        .args(["--strategies", "page", "--sizes", "256", "--out", "run"])
        .output()
        .unwrap();
    assert_eq!(md.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&md.stderr);
    assert!(
        stderr.contains("the page strategy needs documents with pages, and 01-installation.md has none (only PDF files have pages)"),
        "{stderr}"
    );
}

/// Runs `chunksweep` in `dir` with `args`: (exit code, stdout, stderr).
fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = chunksweep(dir).args(args).output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn extract_writes_only_to_a_new_folder_or_its_own_earlier_output_and_removes_what_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(corpus.join("old")).unwrap();
    std::fs::write(corpus.join("a.md"), "# A\n").unwrap();
    std::fs::write(corpus.join("old/b.html"), "<h1>B</h1>").unwrap();
    // a folder holding other files is refused before anything is read or written
    std::fs::create_dir(dir.path().join("mine")).unwrap();
    std::fs::write(dir.path().join("mine/notes.txt"), "keep me").unwrap();
    let args = ["extract", "--corpus", "corpus", "--out"];
    let (code, _, stderr) = run_in(dir.path(), &[&args[..], &["mine"]].concat());
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr.trim(),
        "error: extract corpus: --out mine is not empty and holds no extract.json from an earlier extract: choose a new or empty folder (extract replaces only its own earlier output)"
    );
    assert_eq!(
        std::fs::read_dir(dir.path().join("mine")).unwrap().count(),
        1
    );
    // an empty folder is fine; a second extract there after b.html is gone removes its text
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let (code, _, stderr) = run_in(dir.path(), &[&args[..], &["out"]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(dir.path().join("out/old/b.html.md").exists());
    std::fs::write(dir.path().join("out/mine.txt"), "not extract's").unwrap();
    std::fs::remove_dir_all(corpus.join("old")).unwrap();
    let (code, stdout, stderr) = run_in(dir.path(), &[&args[..], &["out"]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(
            "removed 1 file(s) the earlier extract wrote there that this one did not: old/b.html.md"
        ),
        "{stdout}"
    );
    assert!(
        !dir.path().join("out/old").exists(),
        "its emptied folder goes too"
    );
    assert!(dir.path().join("out/a.md").exists());
    // files extract did not write are left alone
    assert!(dir.path().join("out/mine.txt").exists());
}

#[test]
fn extract_takes_the_corpus_from_the_config_and_a_bad_reader_name_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("docs/a.adoc"), "= A\n").unwrap();
    std::fs::write(
        dir.path().join("c.toml"),
        "[corpus]\npath = \"docs\"\nreaders = { adoc = \"text\" }\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run_in(
        dir.path(),
        &["extract", "--config", "c.toml", "--out", "out"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("a.adoc → a.adoc: text"), "{stdout}");
    // without --corpus or [corpus] path
    std::fs::write(
        dir.path().join("none.toml"),
        "[corpus]\nskip_unreadable = true\n",
    )
    .unwrap();
    let (code, _, stderr) = run_in(
        dir.path(),
        &["extract", "--config", "none.toml", "--out", "o2"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr.trim(),
        "error: extract: no corpus given: pass --corpus or set `corpus = ...` in the config file"
    );
    std::fs::write(
        dir.path().join("bad.toml"),
        "[corpus]\nreaders = { adoc = \"asciidoc\" }\n",
    )
    .unwrap();
    let (code, _, stderr) = run_in(
        dir.path(),
        &[
            "extract", "--config", "bad.toml", "--corpus", "docs", "--out", "o3",
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "[corpus]: unknown reader \"asciidoc\": use text, markdown, rst, html, docx or pdf"
        ),
        "{stderr}"
    );
    println!(
        "| unknown reader name in [corpus] readers | {code} | {} |",
        stderr.trim()
    );
}

#[test]
fn bad_page_evidence_names_the_golden_file_line_and_what_to_write() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("g.jsonl"),
        concat!(
            r#"{"id":"a","question":"q?","evidence":[{"doc":"01-installation.pdf","page":1}]}"#,
            "\n",
            r#"{"id":"b","question":"q?","evidence":[{"doc":"01-installation.pdf","page":-1}]}"#,
            "\n",
            r#"{"id":"c","question":"q?","evidence":[{"doc":"01-installation.pdf","page":2,"text":"Install"}]}"#,
            "\n",
        ),
    )
    .unwrap();
    let corpus = root().join("datasets/handbook-pdf");
    let (code, stdout, stderr) = run_in(
        dir.path(),
        &[
            "validate",
            "--corpus",
            corpus.to_str().unwrap(),
            "--golden",
            "g.jsonl",
        ],
    );
    let all = format!("{stdout}{stderr}");
    assert_eq!(code, 2, "{all}");
    for line in [
        r#"g.jsonl:2: error: question "b", evidence 1: "page" is -1, not a page number: write the page's number as a whole number counting from 1, as in {"doc": "report.pdf", "page": 12}"#,
        r#"g.jsonl:3: error: question "c", evidence 1: gives both "page" and "text": a page item is the whole page; write {"doc", "page"} for the page or {"doc", "text"} for the text, not both"#,
    ] {
        assert!(all.contains(line), "{all}");
        println!("| {line} | {code} |");
    }
}
