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

use super::types::{GoldenError, Problem, ProblemKind, RawEvidence, RawQuestion, Read};

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
        let parsed: Line = match serde_json::from_str(line) {
            Ok(parsed) => parsed,
            Err(e) => {
                problems.push(Problem {
                    file: path.to_path_buf(),
                    line: i + 1,
                    kind: ProblemKind::Malformed,
                    message: format!(
                        "not a golden-set question ({e}); expected {{\"id\", \"question\", \"evidence\": [...], \"answer\"?, \"type\"?}}"
                    ),
                });
                continue;
            }
        };
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
    (out, problems)
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
