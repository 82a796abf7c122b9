//! The native golden-set format: one JSON object per line.
//!
//! ```text
//! {"id": "q-001", "question": "...", "evidence": [...], "answer": "optional", "type": "optional"}
//! ```
//! Each evidence item is a string (exact text, searched in every document), `{"doc", "text"}`
//! (exact text in one document), `{"doc", "start", "end"}` (code points, end exclusive; an
//! optional `"text"` is checked against the range) or `{"doc", "page"}` (a whole page of a PDF,
//! 1-based). Blank lines are skipped.
//!
//! Also read, all optional:
//! - provenance, written by `chunksweep golden draft` and `golden review`: `"source"` (`"draft"`
//!   for a drafted item), `"model"`, `"prompt_sha256"`, `"reviewed"` (true once a person
//!   accepted it);
//! - seed 002's format, `{"q": "...", "must_include": "path" or "path#anchor"}`: `q` is read as
//!   `question`, `must_include` as one more evidence item (the whole document or the section
//!   under that heading, [`super::section`]), and a line without `id` gets `line-N` (its line).

use std::path::Path;

use serde::Deserialize;

use super::types::{GoldenError, Origin, Problem, ProblemKind, RawEvidence, RawQuestion, Read};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    #[serde(default)]
    id: Option<String>,
    #[serde(alias = "q")]
    question: String,
    #[serde(default)]
    evidence: Vec<Item>,
    #[serde(default)]
    must_include: Option<String>,
    #[serde(default)]
    answer: Option<String>,
    #[serde(default, rename = "type")]
    question_type: Option<String>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    prompt_sha256: Option<String>,
    #[serde(default)]
    reviewed: Option<bool>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Item {
    Text(String),
    Range {
        doc: String,
        start: usize,
        end: usize,
        #[serde(default)]
        text: Option<String>,
    },
    Page {
        doc: String,
        page: usize,
    },
    DocText {
        doc: String,
        text: String,
    },
}

/// Reads a JSONL golden file: its questions, and a [`ProblemKind::Malformed`] problem for every
/// line that is not a valid question object.
///
/// # Errors
/// [`GoldenError::Io`] when unreadable, [`GoldenError::Parse`] naming the line where the text
/// stops being UTF-8.
pub fn read(path: &Path) -> Result<Read, GoldenError> {
    let bytes = std::fs::read(path).map_err(|source| GoldenError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let byte = e.utf8_error().valid_up_to();
        GoldenError::Parse {
            path: path.to_path_buf(),
            line: 1 + e.as_bytes()[..byte].iter().filter(|&&b| b == b'\n').count(),
            message: "not valid UTF-8: save the golden set as UTF-8".into(),
        }
    })?;
    Ok(parse(path, &text))
}

/// Parses JSONL text (`path` is only used in problems): the questions of the valid lines and a
/// [`ProblemKind::Malformed`] problem (1-based line) for every other non-blank line.
pub fn parse(path: &Path, text: &str) -> Read {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let malformed = |message: String| Problem {
            file: path.to_path_buf(),
            line: i + 1,
            kind: ProblemKind::Malformed,
            message: format!(
                "not a golden-set question ({message}); expected {{\"id\", \"question\", \"evidence\": [...], \"answer\"?, \"type\"?}} or {{\"q\", \"must_include\"}}"
            ),
        };
        let parsed: Line = match serde_json::from_str(line) {
            Ok(parsed) => parsed,
            Err(e) => {
                problems.push(malformed(e.to_string()));
                continue;
            }
        };
        let id = match (parsed.id, &parsed.must_include) {
            (Some(id), _) => id,
            (None, Some(_)) => format!("line-{}", i + 1),
            (None, None) => {
                problems.push(malformed("missing field `id`".into()));
                continue;
            }
        };
        let mut evidence: Vec<RawEvidence> = parsed.evidence.into_iter().map(raw_item).collect();
        if let Some(target) = parsed.must_include {
            evidence.push(section_item(&target));
        }
        out.push(RawQuestion {
            line: i + 1,
            id,
            question: parsed.question,
            evidence,
            answer: parsed.answer.filter(|a| !a.trim().is_empty()),
            question_type: parsed.question_type.filter(|t| !t.trim().is_empty()),
            origin: Origin {
                source: parsed.source,
                model: parsed.model,
                prompt_sha256: parsed.prompt_sha256,
                reviewed: parsed.reviewed,
            },
        });
    }
    (out, problems)
}

fn raw_item(item: Item) -> RawEvidence {
    match item {
        Item::Text(text) => RawEvidence::Text(text),
        Item::DocText { doc, text } => RawEvidence::DocText { doc, text },
        Item::Page { doc, page } => RawEvidence::Page { doc, page },
        Item::Range {
            doc,
            start,
            end,
            text,
        } => RawEvidence::DocRange {
            doc,
            start,
            end,
            content: text,
        },
    }
}

/// `path` or `path#anchor` (split at the last `#`) as a section item.
fn section_item(target: &str) -> RawEvidence {
    match target.rsplit_once('#') {
        Some((doc, anchor)) => RawEvidence::Section {
            doc: doc.to_string(),
            anchor: Some(anchor.to_string()),
        },
        None => RawEvidence::Section {
            doc: target.to_string(),
            anchor: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_all_three_evidence_forms_and_skips_blank_lines() {
        let text = r#"{"id":"a","question":"q?","evidence":["x",{"doc":"d.md","text":"y"},{"doc":"d.md","start":1,"end":3}],"type":"fact"}

{"id":"b","question":"r?","evidence":["z"],"answer":"z"}"#;
        let (qs, problems) = parse(Path::new("g.jsonl"), text);
        assert!(problems.is_empty());
        assert_eq!(qs.len(), 2);
        assert_eq!(qs[1].line, 3);
        assert_eq!(qs[0].question_type.as_deref(), Some("fact"));
        assert_eq!(
            qs[0].evidence,
            vec![
                RawEvidence::Text("x".into()),
                RawEvidence::DocText {
                    doc: "d.md".into(),
                    text: "y".into()
                },
                RawEvidence::DocRange {
                    doc: "d.md".into(),
                    start: 1,
                    end: 3,
                    content: None
                },
            ]
        );
        assert_eq!(qs[1].answer.as_deref(), Some("z"));
    }

    #[test]
    fn seed_002_lines_and_provenance_fields_are_read() {
        let text = concat!(
            r#"{"q": "Default timeout?", "must_include": "docs/api/timeouts.md#section-2"}"#,
            "\n",
            r#"{"q": "Keys?", "must_include": "docs/keys.md"}"#,
            "\n",
            r#"{"id": "d-1", "question": "Q?", "evidence": ["x"], "source": "draft", "model": "m", "prompt_sha256": "ab", "reviewed": false}"#,
            "\n",
            r#"{"q": "No target?"}"#,
        );
        let (qs, problems) = parse(Path::new("g.jsonl"), text);
        assert_eq!(qs[0].id, "line-1");
        assert_eq!(
            qs[0].evidence,
            vec![RawEvidence::Section {
                doc: "docs/api/timeouts.md".into(),
                anchor: Some("section-2".into())
            }]
        );
        assert_eq!(
            qs[1].evidence,
            vec![RawEvidence::Section {
                doc: "docs/keys.md".into(),
                anchor: None
            }]
        );
        assert_eq!(
            qs[2].origin,
            Origin {
                source: Some("draft".into()),
                model: Some("m".into()),
                prompt_sha256: Some("ab".into()),
                reviewed: Some(false),
            }
        );
        assert!(qs[2].origin.is_unreviewed_draft());
        assert_eq!(qs[0].origin, Origin::default());
        let lines: Vec<(usize, ProblemKind)> = problems.iter().map(|p| (p.line, p.kind)).collect();
        assert_eq!(lines, [(4, ProblemKind::Malformed)]);
        assert!(
            problems[0].message.contains("missing field `id`"),
            "{}",
            problems[0]
        );
    }

    #[test]
    fn every_bad_line_is_named_and_the_good_lines_are_still_read() {
        let (qs, problems) = parse(
            Path::new("g.jsonl"),
            "{\"id\":\"a\",\"question\":\"q\"}\n{oops}\n{\"id\":\"b\",\"question\":\"r\"}\n[1]\n",
        );
        let ids: Vec<&str> = qs.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        let lines: Vec<(usize, ProblemKind)> = problems.iter().map(|p| (p.line, p.kind)).collect();
        assert_eq!(
            lines,
            [(2, ProblemKind::Malformed), (4, ProblemKind::Malformed)]
        );
        assert!(
            problems[0]
                .to_string()
                .starts_with("g.jsonl:2: error: not a golden-set question"),
            "{}",
            problems[0]
        );
    }
}
