//! Records the versions of the libraries that read documents (src/documents/kind.rs), split and
//! tokenize text, as Cargo.lock resolves
//! them, for the chunker's fingerprint (`src/fingerprint.rs`): a new version of one of them can
//! move chunk boundaries without a setting changing. Emitted as the environment variable
//! `CHUNKSWEEP_LIBRARIES`, `name=version` pairs joined by `;` (several versions of one crate
//! joined by `,`).

use std::collections::BTreeMap;

/// The crates whose version can change a chunk or a token count (see `src/fingerprint.rs`).
const LIBRARIES: &[&str] = &[
    "text-splitter",
    "icu_segmenter",
    "pulldown-cmark",
    "unicode-segmentation",
    "bpe-openai",
    "bpe",
    "rust-stemmers",
    "pdf_oxide",
    "htmd",
    "quick-xml",
];

fn main() {
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=build.rs");
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
    let mut versions: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut name = None;
    for line in lock.lines() {
        if line == "[[package]]" {
            name = None;
        } else if let Some(n) = quoted(line, "name = ") {
            name = Some(n);
        } else if let (Some(n), Some(v)) = (name, quoted(line, "version = "))
            && LIBRARIES.contains(&n)
        {
            versions.entry(n).or_default().push(v);
        }
    }
    let pairs: Vec<String> = LIBRARIES
        .iter()
        .map(|n| {
            let v = versions
                .get(n)
                .map_or("unknown".to_string(), |v| v.join(","));
            format!("{n}={v}")
        })
        .collect();
    println!("cargo:rustc-env=CHUNKSWEEP_LIBRARIES={}", pairs.join(";"));
}

/// The quoted value of `line` when it starts with `key`.
fn quoted<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.strip_prefix(key)?.strip_prefix('"')?.strip_suffix('"')
}
