//! The BPE chunksweep counts with (bpe-openai) gives exactly tiktoken's tokens (tiktoken-rs, the
//! reference port) on the test corpora, for cl100k_base and o200k_base: the same token byte
//! ranges over every document, and the same counts on every line, paragraph and sliding window.
//! The counts of slices of a document through its stream ([`SliceCounter`], which encodes only
//! the slice's edges) equal the slices' own encodings.

use std::path::Path;

use chunksweep::tokenize::{SliceCounter, TokenCounter, TokenStream, TokenizerKind};
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
        "12345678901 x  \n  y\t\t\n\n  z 3.14159   \r\n 'll 'S  \u{3000}end  ",
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

/// Byte ranges of slices of `text` on char boundaries: pseudo-random starts and ends, ranges
/// ending just before, inside and after whitespace runs, and every line.
fn slice_ranges(text: &str) -> Vec<(usize, usize)> {
    let floor = |mut i: usize| {
        i = i.min(text.len());
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let mut out = Vec::new();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n.max(1) as u64) as usize
    };
    for _ in 0..400 {
        let start = floor(next(text.len() + 1));
        let len = [1, 2, 3, 5, 9, 40, 300, 2000][next(8)];
        out.push((start, floor(start + len)));
    }
    for (i, c) in text
        .char_indices()
        .filter(|(_, c)| c.is_whitespace())
        .take(400)
    {
        let start = floor(i.saturating_sub(next(200)));
        out.extend([(start, i), (start, i + c.len_utf8()), (start, floor(i + 3))]);
    }
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        out.push((at, at + line.len()));
        at += line.len();
    }
    out
}

#[test]
fn slice_counts_through_the_stream_equal_encoding_alone() {
    for kind in [
        TokenizerKind::Cl100kBase,
        TokenizerKind::O200kBase,
        TokenizerKind::Words,
    ] {
        let counter = TokenCounter::new(kind);
        let mut compared = 0;
        for (name, text) in texts() {
            let stream = TokenStream::new(&text, counter);
            let slices = SliceCounter::new(&text, &stream, counter);
            for (s, e) in slice_ranges(&text) {
                assert_eq!(
                    slices.count(s, e),
                    counter.count(&text[s..e]),
                    "{kind}: {name} [{s}, {e}): {:?}",
                    &text[s..e]
                );
                compared += 1;
            }
        }
        assert!(compared > 10_000, "{compared}");
    }
}
