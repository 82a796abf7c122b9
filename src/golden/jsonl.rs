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
    evidence: Vec<serde_json::Value>,
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
        let mut evidence = Vec::with_capacity(parsed.evidence.len());
        let mut bad = Vec::new();
        for (n, item) in parsed.evidence.iter().enumerate() {
            match evidence_item(item) {
                Ok(item) => evidence.push(item),
                Err(why) => bad.push(Problem {
                    file: path.to_path_buf(),
                    line: i + 1,
                    kind: ProblemKind::Malformed,
                    message: format!("question {id:?}, evidence {}: {why}", n + 1),
                }),
            }
        }
        if !bad.is_empty() {
            problems.extend(bad);
            continue;
        }
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

/// The forms an evidence item takes, for messages.
const FORMS: &str = r#"an evidence item is "exact text", {"doc", "text"}, {"doc", "start", "end", "text"?} or {"doc", "page"}"#;

/// One evidence item of a line: a string, or an object of one of the forms in [`FORMS`]. A
/// page is a whole number from 1, offsets whole numbers from 0; a page item holds nothing but
/// `doc` and `page` (a page with `text` or offsets is refused: which one is meant cannot be
/// told).
///
/// # Errors
/// What is wrong and what to write, without the question or item (the caller adds them).
fn evidence_item(item: &serde_json::Value) -> Result<RawEvidence, String> {
    use serde_json::Value;
    let object = match item {
        Value::String(text) => return Ok(RawEvidence::Text(text.clone())),
        Value::Object(object) => object,
        other => return Err(format!("{other} is not evidence: {FORMS}")),
    };
    if let Some(key) = object
        .keys()
        .find(|k| !matches!(k.as_str(), "doc" | "text" | "start" | "end" | "page"))
    {
        return Err(format!("unknown field {key:?}: {FORMS}"));
    }
    let doc = match object.get("doc") {
        Some(Value::String(doc)) => doc.clone(),
        Some(other) => {
            return Err(format!(
                "\"doc\" is {other}, not a document id: write the file's path under the corpus folder as a string"
            ));
        }
        None => return Err(format!("no \"doc\": {FORMS}")),
    };
    let text = match object.get("text") {
        None => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(other) => {
            return Err(format!(
                "\"text\" is {other}, not a string: write the evidence text as a JSON string"
            ));
        }
    };
    let number = |key: &str, from: u64, what: &str| -> Result<Option<usize>, String> {
        match object.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .filter(|&n| n >= from)
                .and_then(|n| usize::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| format!("{key:?} is {v}, not {what}")),
        }
    };
    let page = number(
        "page",
        1,
        "a page number: write the page's number as a whole number counting from 1, as in {\"doc\": \"report.pdf\", \"page\": 12}",
    )?;
    let offsets = "a code-point offset: write a whole number from 0";
    let (start, end) = (number("start", 0, offsets)?, number("end", 0, offsets)?);
    match (page, start, end, text) {
        (Some(_), _, _, Some(_)) => Err(r#"gives both "page" and "text": a page item is the whole page; write {"doc", "page"} for the page or {"doc", "text"} for the text, not both"#.to_string()),
        (Some(_), Some(_), _, _) | (Some(_), _, Some(_), _) => Err(r#"gives "page" with "start"/"end": write {"doc", "page"} for the whole page or {"doc", "start", "end"} for a range, not both"#.to_string()),
        (Some(page), None, None, None) => Ok(RawEvidence::Page { doc, page }),
        (None, Some(start), Some(end), content) => Ok(RawEvidence::DocRange { doc, start, end, content }),
        (None, Some(_), None, _) | (None, None, Some(_), _) => Err(r#"a range needs both "start" and "end" (code points, end exclusive)"#.to_string()),
        (None, None, None, Some(text)) => Ok(RawEvidence::DocText { doc, text }),
        (None, None, None, None) => Err(format!("{{\"doc\": {doc:?}}} alone says nothing to find: {FORMS}")),
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

    #[test]
    fn bad_page_evidence_is_named_with_its_line_and_what_to_write() {
        let text = concat!(
            r#"{"id":"a","question":"q?","evidence":[{"doc":"f.pdf","page":2}]}"#,
            "\n",
            r#"{"id":"b","question":"q?","evidence":["x",{"doc":"f.pdf","page":-1}]}"#,
            "\n",
            r#"{"id":"c","question":"q?","evidence":[{"doc":"f.pdf","page":"2"}]}"#,
            "\n",
            r#"{"id":"d","question":"q?","evidence":[{"doc":"f.pdf","page":1.5}]}"#,
            "\n",
            r#"{"id":"e","question":"q?","evidence":[{"doc":"f.pdf","page":3,"text":"Refunds"}]}"#,
            "\n",
            r#"{"id":"f","question":"q?","evidence":[{"doc":"f.pdf","page":0}]}"#,
            "\n",
            r#"{"id":"g","question":"q?","evidence":[{"doc":"f.pdf","pages":3}]}"#,
        );
        let (qs, problems) = parse(Path::new("g.jsonl"), text);
        assert_eq!(
            qs.iter().map(|q| &q.evidence).collect::<Vec<_>>(),
            vec![&vec![RawEvidence::Page {
                doc: "f.pdf".into(),
                page: 2
            }]]
        );
        let page = r#"not a page number: write the page's number as a whole number counting from 1, as in {"doc": "report.pdf", "page": 12}"#;
        let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            vec![
                format!(r#"g.jsonl:2: error: question "b", evidence 2: "page" is -1, {page}"#),
                format!(r#"g.jsonl:3: error: question "c", evidence 1: "page" is "2", {page}"#),
                format!(r#"g.jsonl:4: error: question "d", evidence 1: "page" is 1.5, {page}"#),
                r#"g.jsonl:5: error: question "e", evidence 1: gives both "page" and "text": a page item is the whole page; write {"doc", "page"} for the page or {"doc", "text"} for the text, not both"#.to_string(),
                format!(r#"g.jsonl:6: error: question "f", evidence 1: "page" is 0, {page}"#),
                format!(r#"g.jsonl:7: error: question "g", evidence 1: unknown field "pages": {FORMS}"#),
            ]
        );
    }
}
