//! The native golden-set format: one JSON object per line.
//!
//! ```text
//! {"id": "q-001", "question": "...", "evidence": [...], "answer": "optional", "type": "optional"}
//! ```
//! Each evidence item is a string (exact text, searched in every document), `{"doc", "text"}`
//! (exact text in one document) or `{"doc", "start", "end"}` (code points, end exclusive; an
//! optional `"text"` is checked against the range). Blank lines are skipped.

use std::path::Path;

use serde::Deserialize;

use super::types::{GoldenError, RawEvidence, RawQuestion};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    id: String,
    question: String,
    #[serde(default)]
    evidence: Vec<Item>,
    #[serde(default)]
    answer: Option<String>,
    #[serde(default, rename = "type")]
    question_type: Option<String>,
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
    DocText {
        doc: String,
        text: String,
    },
}

/// Reads a JSONL golden file.
///
/// # Errors
/// [`GoldenError::Io`] when unreadable or not UTF-8, [`GoldenError::Parse`] naming the first line
/// that is not a valid question object.
pub fn read(path: &Path) -> Result<Vec<RawQuestion>, GoldenError> {
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
    parse(path, &text)
}

/// Parses JSONL text (`path` is only used in error messages).
///
/// # Errors
/// [`GoldenError::Parse`] naming the first line that is not a valid question object.
pub fn parse(path: &Path, text: &str) -> Result<Vec<RawQuestion>, GoldenError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Line = serde_json::from_str(line).map_err(|e| GoldenError::Parse {
            path: path.to_path_buf(),
            line: i + 1,
            message: format!(
                "not a golden-set question ({e}); expected {{\"id\", \"question\", \"evidence\": [...], \"answer\"?, \"type\"?}}"
            ),
        })?;
        out.push(RawQuestion {
            line: i + 1,
            id: parsed.id,
            question: parsed.question,
            evidence: parsed
                .evidence
                .into_iter()
                .map(|item| match item {
                    Item::Text(text) => RawEvidence::Text(text),
                    Item::DocText { doc, text } => RawEvidence::DocText { doc, text },
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
                })
                .collect(),
            answer: parsed.answer.filter(|a| !a.trim().is_empty()),
            question_type: parsed.question_type.filter(|t| !t.trim().is_empty()),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_all_three_evidence_forms_and_skips_blank_lines() {
        let text = r#"{"id":"a","question":"q?","evidence":["x",{"doc":"d.md","text":"y"},{"doc":"d.md","start":1,"end":3}],"type":"fact"}

{"id":"b","question":"r?","evidence":["z"],"answer":"z"}"#;
        let qs = parse(Path::new("g.jsonl"), text).unwrap();
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
    fn bad_line_is_named() {
        let err = parse(
            Path::new("g.jsonl"),
            "{\"id\":\"a\",\"question\":\"q\"}\n{oops}\n",
        )
        .unwrap_err();
        assert!(err.to_string().starts_with("g.jsonl:2:"), "{err}");
    }
}
