//! `chunksweep golden review`: one self-contained page to review a golden set, drafted or not.
//!
//! Each item shows its question and answer and each evidence span highlighted in its document's
//! context; the reviewer accepts, rejects or edits the question and answer (buttons and keyboard
//! shortcuts), sees the progress, and downloads the reviewed set as JSONL: every line as the file
//! had it, accepted and edited items with `"reviewed": true` (and the edit), rejected items left
//! out, items not yet decided unchanged. Opening the page on a partly reviewed file (a download
//! of an unfinished review) starts at the first item not yet reviewed; decisions are also kept in
//! the browser's storage for the same file, so reloading the page loses nothing.
//!
//! Nothing is fetched and nothing is trusted: the items and the documents travel as one JSON
//! block with `<` written `\u003c` ([`crate::report::html::model::script_json`], as report.html
//! does), and the page's script inserts every text with `textContent` and text nodes; a
//! Content-Security-Policy forbids every request.

use std::collections::BTreeMap;
use std::path::Path;

use maud::{DOCTYPE, PreEscaped, html};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::html::model::script_json;
use crate::corpus::Corpus;
use crate::golden::{GoldenError, Problem, ProblemKind, Question, Severity};

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// How many items the page holds, and how many the file already marks reviewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reviewed {
    /// Items (questions) in the file.
    pub items: usize,
    /// Items with `"reviewed": true`.
    pub reviewed: usize,
}

/// One evidence span, in UTF-16 code units of its document's text (what the page's script
/// indexes).
#[derive(Serialize)]
struct PageSpan {
    doc: String,
    start: usize,
    end: usize,
}

#[derive(Serialize)]
struct PageItem {
    line: usize,
    id: String,
    question: String,
    answer: String,
    /// The line as the file has it: what the download writes back, with the edits applied.
    raw: Value,
    spans: Vec<PageSpan>,
    problems: Vec<String>,
}

#[derive(Serialize)]
struct PageData<'a> {
    file: &'a str,
    /// SHA-256 of the file: the key of the decisions kept in the browser.
    sha256: String,
    items: Vec<PageItem>,
    docs: BTreeMap<String, String>,
}

/// UTF-16 offset of code point `chars` of `text`.
fn utf16_at(text: &str, chars: usize) -> usize {
    text.chars().take(chars).map(char::len_utf16).sum()
}

fn page_item(q: &Question, raw: Value, corpus: &Corpus, problems: Vec<String>) -> PageItem {
    let spans = q
        .spans
        .iter()
        .filter_map(|s| s.locations.first())
        .map(|loc| {
            let doc = &corpus.docs[loc.doc];
            PageSpan {
                doc: doc.id.clone(),
                start: utf16_at(&doc.text, loc.start),
                end: utf16_at(&doc.text, loc.end),
            }
        })
        .collect();
    PageItem {
        line: q.line,
        id: q.id.clone(),
        question: q.text.clone(),
        answer: q.answer.clone().unwrap_or_default(),
        raw,
        spans,
        problems,
    }
}

/// Renders the review page of the JSONL golden set `path` against `corpus`.
///
/// # Errors
/// [`GoldenError::Io`] when the file cannot be read; [`GoldenError::Invalid`] when a line is not a golden-set item (a
/// download would lose it). Evidence that cannot be located is shown on its item, not refused:
/// the reviewer can reject it.
pub fn render(path: &Path, corpus: &Corpus) -> Result<(String, Reviewed), GoldenError> {
    let text = std::fs::read_to_string(path).map_err(|source| GoldenError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let (raw, malformed) = crate::golden::jsonl::parse(path, &text);
    if !malformed.is_empty() {
        return Err(GoldenError::Invalid {
            path: path.to_path_buf(),
            count: malformed.len(),
            listed: malformed.iter().map(Problem::to_string).collect(),
        });
    }
    let (set, problems) = crate::golden::resolve(path, &raw, corpus);
    let lines: Vec<&str> = text
        .strip_prefix('\u{feff}')
        .unwrap_or(&text)
        .lines()
        .collect();
    let mut docs = BTreeMap::new();
    let items: Vec<PageItem> = set
        .questions
        .iter()
        .map(|q| {
            let raw = serde_json::from_str(lines[q.line - 1]).unwrap_or(Value::Null);
            let mine = problems
                .iter()
                .filter(|p| p.line == q.line && p.kind.severity() == Severity::Error)
                .filter(|p| p.kind != ProblemKind::DuplicateId)
                .map(|p| p.message.clone())
                .collect();
            let item = page_item(q, raw, corpus, mine);
            for s in &item.spans {
                docs.entry(s.doc.clone()).or_insert_with(|| {
                    let d = corpus.find(&s.doc).expect("a located document");
                    corpus.docs[d].text.clone()
                });
            }
            item
        })
        .collect();
    let reviewed = set
        .questions
        .iter()
        .filter(|q| q.origin.reviewed == Some(true))
        .count();
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let data = PageData {
        file: &name,
        sha256: hex::encode(Sha256::digest(text.as_bytes())),
        items,
        docs,
    };
    let counts = Reviewed {
        items: data.items.len(),
        reviewed,
    };
    Ok((page(&name, &data), counts))
}

fn page(name: &str, data: &PageData<'_>) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta http-equiv="Content-Security-Policy"
                    content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'";
                title { "chunksweep golden review: " (name) }
                style { (PreEscaped(CSS)) }
            }
            body {
                header {
                    h1 { "Golden-set review: " (name) }
                    div #progress {
                        progress #bar max="1" value="0" {}
                        span #count {}
                    }
                    button #download type="button" { "Download reviewed JSONL (d)" }
                }
                p .help {
                    "Keys: a accept · r reject · e edit · Ctrl+Enter save the edit (and accept) · Esc cancel · n or → next · p or ← previous · d download. "
                    "The download keeps every line of the file: accepted and edited items with \"reviewed\": true, rejected ones left out, undecided ones unchanged."
                }
                div .layout {
                    nav #list {}
                    main #item {
                        div #meta {}
                        h2 { "Question" }
                        div #question .text {}
                        textarea #question-edit hidden rows="3" {}
                        h2 { "Answer" }
                        div #answer .text {}
                        textarea #answer-edit hidden rows="3" {}
                        div #buttons {
                            button #accept type="button" { "Accept (a)" }
                            button #reject type="button" { "Reject (r)" }
                            button #edit type="button" { "Edit (e)" }
                            button #save type="button" hidden { "Save edit (Ctrl+Enter)" }
                            button #prev type="button" { "← Previous (p)" }
                            button #next type="button" { "Next (n) →" }
                        }
                        ul #problems {}
                        h2 { "Evidence in its document" }
                        div #evidence {}
                    }
                }
                script #review-data type="application/json" { (PreEscaped(script_json(data))) }
                script { (PreEscaped(JS)) }
            }
        }
    }
    .into_string()
}
