//! The files of a drafting run: the kept items as golden-set JSONL, and every drafted item with
//! its outcome as CSV beside it.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{DraftError, Drafted};
use crate::corpus::Corpus;
use crate::golden::Origin;

/// One evidence item of a drafted line: the document's own text at its code-point range.
#[derive(Debug, Clone, Serialize)]
pub struct EvidenceOut<'a> {
    /// Document id.
    pub doc: &'a str,
    /// First code point.
    pub start: usize,
    /// One past the last code point.
    pub end: usize,
    /// The document's text there.
    pub text: &'a str,
}

/// One line of the drafted golden set (the native JSONL format with its provenance fields).
#[derive(Debug, Clone, Serialize)]
pub struct DraftLine<'a> {
    /// `draft-NNN`.
    pub id: &'a str,
    /// The question.
    pub question: &'a str,
    /// The reference answer.
    pub answer: &'a str,
    /// The located quotes.
    pub evidence: Vec<EvidenceOut<'a>>,
    /// Always `"draft"`.
    pub source: &'static str,
    /// The model.
    pub model: &'a str,
    /// SHA-256 of the drafting prompt.
    pub prompt_sha256: &'a str,
    /// Always false: no person has looked at it yet.
    pub reviewed: bool,
}

/// The drafting CSV beside `out`: `golden.jsonl` → `golden.draft.csv`.
pub fn csv_path(out: &Path) -> PathBuf {
    out.with_extension("draft.csv")
}

/// The kept items as JSONL lines.
pub fn lines<'a>(corpus: &'a Corpus, drafted: &'a Drafted) -> Vec<DraftLine<'a>> {
    drafted
        .kept()
        .map(|(item, reply, quotes)| DraftLine {
            id: &item.id,
            question: &reply.question,
            answer: &reply.answer,
            evidence: quotes
                .iter()
                .map(|q| EvidenceOut {
                    doc: &corpus.docs[q.doc].id,
                    start: q.start,
                    end: q.end,
                    text: &q.text,
                })
                .collect(),
            source: Origin::DRAFT,
            model: &drafted.model,
            prompt_sha256: &drafted.prompt_sha256,
            reviewed: false,
        })
        .collect()
}

#[derive(Serialize)]
struct CsvRow<'a> {
    id: &'a str,
    doc: &'a str,
    passage_start: usize,
    passage_end: usize,
    position: &'static str,
    kind: &'static str,
    length: &'static str,
    outcome: &'static str,
    detail: &'a str,
    question: &'a str,
    whitespace_forgiven: usize,
}

/// Writes the kept items to `out` (JSONL; not written when no item was kept, so no empty golden
/// set is left for `validate` to refuse) and every item to [`csv_path`] (columns id, doc,
/// passage_start, passage_end (code points), position, kind, length, outcome (`kept` or the
/// filter's name), detail, question, whitespace_forgiven (quotes found only after collapsing
/// whitespace)). Returns the CSV's path.
///
/// # Errors
/// [`DraftError::Write`] naming the file.
pub fn write(out: &Path, corpus: &Corpus, drafted: &Drafted) -> Result<PathBuf, DraftError> {
    let fail = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DraftError::Write { path, source }
    };
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(fail(parent))?;
    }
    let mut text = String::new();
    for line in lines(corpus, drafted) {
        text.push_str(&serde_json::to_string(&line).expect("a drafted line serialises"));
        text.push('\n');
    }
    if !text.is_empty() {
        std::fs::write(out, text).map_err(fail(out))?;
    }
    let csv = csv_path(out);
    let mut w = csv::Writer::from_writer(Vec::new());
    for item in &drafted.items {
        let (outcome, detail, forgiven) = match &item.outcome {
            Ok(quotes) => ("kept", "", quotes.iter().filter(|q| q.forgiven).count()),
            Err((reason, detail)) => (reason.name(), detail.as_str(), 0),
        };
        w.serialize(CsvRow {
            id: &item.id,
            doc: &corpus.docs[item.passage.doc].id,
            passage_start: item.passage.start,
            passage_end: item.passage.end,
            position: item.passage.position.name(),
            kind: item.passage.kind.name(),
            length: item.passage.length.name(),
            outcome,
            detail,
            question: item.reply.as_ref().map_or("", |r| r.question.as_str()),
            whitespace_forgiven: forgiven,
        })
        .map_err(|e| DraftError::Write {
            path: csv.clone(),
            source: std::io::Error::other(e),
        })?;
    }
    let bytes = w.into_inner().map_err(|e| DraftError::Write {
        path: csv.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;
    std::fs::write(&csv, bytes).map_err(fail(&csv))?;
    Ok(csv)
}
