//! The BPE chunksweep counts with (bpe-openai) gives exactly tiktoken's tokens (tiktoken-rs, the
//! reference port) on the test corpora, for cl100k_base and o200k_base: the same token byte
//! ranges over every document, and the same counts on every line, paragraph and sliding window.

use std::path::Path;

use chunksweep::tokenize::{TokenCounter, TokenizerKind};
use tiktoken_rs::CoreBPE;
use walkdir::WalkDir;

/// Every text file of the shipped datasets and test fixtures, plus hand-made edge cases.
fn texts() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in ["datasets", "tests/fixtures"] {
        for e in WalkDir::new(root.join(dir)).sort_by_file_name() {
            let e = e.unwrap();
            let p = e.path();
            if p.extension().is_some_and(|x| {
                ["md", "txt", "rst", "jsonl", "csv"].contains(&x.to_str().unwrap())
            }) && let Ok(t) = std::fs::read_to_string(p)
            {
                out.push((p.display().to_string(), t));
            }
        }
    }
    for (i, t) in [
        "Zoë paid €12 🙂 for “Café” — ok   \n\n\t  trailing   ",
        "  leading spaces\r\n\r\nwindows lines\u{a0}nbsp 東京に行きます 退款在十四天内支付。",
        "I'm you're we've they'll she'd IT'S 12345678 a1b2 ___ --flag ~/.config",
        "",
        " ",
        "\n\n\n",
    ]
    .iter()
    .enumerate()
    {
        out.push((format!("edge case {i}"), t.to_string()));
    }
    assert!(out.len() > 15, "the corpora are found");
    out
}

/// Token byte ranges from tiktoken, widened to char boundaries as chunksweep does.
fn tiktoken_spans(bpe: &CoreBPE, text: &str) -> Vec<(usize, usize)> {
    let (mut raw, mut prev) = (0, 0);
    bpe.encode_ordinary(text)
        .into_iter()
        .map(|t| {
            raw += bpe.decode_bytes(&[t]).unwrap().len();
            let mut end = raw.min(text.len()).max(prev);
            while !text.is_char_boundary(end) {
                end += 1;
            }
            let span = (prev, end);
            prev = end;
            span
        })
        .collect()
}

/// Lines, paragraphs and windows of about 300 bytes every 97 bytes (on char boundaries).
fn slices(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = text.split('\n').collect();
    out.extend(text.split("\n\n"));
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + 300).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start += 97;
        while start < text.len() && !text.is_char_boundary(start) {
            start += 1;
        }
    }
    out
}

fn check(kind: TokenizerKind, reference: &CoreBPE) {
    let ours = TokenCounter::new(kind);
    let mut compared = 0;
    for (name, text) in texts() {
        assert_eq!(
            ours.token_spans(&text),
            tiktoken_spans(reference, &text),
            "{kind}: {name}"
        );
        for s in slices(&text) {
            assert_eq!(
                ours.count(s),
                reference.encode_ordinary(s).len(),
                "{kind}: a slice of {name}: {s:?}"
            );
            compared += 1;
        }
    }
    assert!(compared > 5000, "{compared}");
}

#[test]
fn cl100k_base_equals_tiktoken() {
    check(
        TokenizerKind::Cl100kBase,
        tiktoken_rs::cl100k_base_singleton(),
    );
}

#[test]
fn o200k_base_equals_tiktoken() {
    check(
        TokenizerKind::O200kBase,
        tiktoken_rs::o200k_base_singleton(),
    );
}
