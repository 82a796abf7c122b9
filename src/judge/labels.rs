//! Human labels for `chunksweep judge-check`, in one of two files.
//!
//! A labelled set (JSONL, one object per line; blank lines between items and `//` comments are
//! refused; labels are case-insensitive):
//!
//! ```text
//! {"id": "hb-f01", "criterion": "faithfulness" | "relevancy" | "correctness",
//!  "question": "...", "context": "...", "answer": "...", "reference": "..." (optional; needed
//!  for correctness), "label": "pass" | "fail", "note": "why this label" (optional)}
//! ```
//!
//! Or a run folder's judge_questions.csv with up to three columns added by hand,
//! `human_label_faithfulness`, `human_label_relevancy` and `human_label_correctness`: `pass` or
//! `fail` is the right verdict of that criterion for the row's answer; an empty cell is not
//! labelled. The question, context and reference of such a row are rebuilt from the run's
//! corpus and golden set (see `pipeline::judge_check`).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;

use super::criteria::Criterion;

/// Errors reading a labels file.
#[derive(Debug, Error)]
pub enum LabelError {
    /// The file cannot be read.
    #[error("cannot read labels {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A line or row is not a valid labelled item.
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line (for a CSV, the row's line, the header being line 1).
        line: usize,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The file holds no labelled item.
    #[error(
        "{0}: no labelled item (JSONL: one object per line; CSV: fill a human_label_<criterion> column with pass or fail)"
    )]
    Empty(PathBuf),
    /// A labelled judge_questions.csv without the run's config file.
    #[error(
        "{0}: a judge_questions.csv needs --config <the run's config file>, to rebuild each row's question, retrieved context and reference"
    )]
    CsvNeedsConfig(PathBuf),
}

impl LabelError {
    /// Usage (2): the labels are the user's input.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        crate::exit::ExitClass::Usage
    }
}

/// One labelled item: the inputs of a verdict and its right value.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelledItem {
    /// The item's id.
    pub id: String,
    /// Name of the criterion labelled.
    pub criterion: String,
    /// The question.
    pub question: String,
    /// The context, as given (fenced as one document when judged).
    pub context: String,
    /// The answer.
    pub answer: String,
    /// The reference answer (empty if none).
    pub reference: String,
    /// The right verdict: pass = `true`.
    pub label: bool,
    /// Why (free text).
    pub note: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    id: String,
    criterion: String,
    question: String,
    context: String,
    answer: String,
    #[serde(default)]
    reference: Option<String>,
    label: String,
    #[serde(default)]
    note: String,
}

fn criterion<'a>(criteria: &'a [Criterion], name: &str) -> Result<&'a Criterion, String> {
    super::criteria::find(criteria, name).ok_or_else(|| {
        let names: Vec<&str> = criteria.iter().map(|c| c.name.as_str()).collect();
        format!("unknown criterion {name:?}: use {}", or_list(&names))
    })
}

/// `a, b or c`.
fn or_list(items: &[&str]) -> String {
    match items.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.to_string(),
        None => String::new(),
    }
}

/// `pass` → `true`, `fail` → `false`.
pub fn label(value: &str) -> Result<bool, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "pass" => Ok(true),
        "fail" => Ok(false),
        _ => Err(format!("label {:?} is neither pass nor fail", value.trim())),
    }
}

fn read_text(path: &Path) -> Result<String, LabelError> {
    std::fs::read_to_string(path).map_err(|source| LabelError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads a JSONL labelled set of items of `criteria`.
///
/// # Errors
/// [`LabelError::Io`]; [`LabelError::Parse`] naming the first bad line (blank, a comment, not
/// an object of the format, an unknown criterion or label, a correctness item without a
/// reference, an empty question, answer or context, a repeated id); [`LabelError::Empty`].
pub fn read_jsonl(path: &Path, criteria: &[Criterion]) -> Result<Vec<LabelledItem>, LabelError> {
    let text = read_text(path)?;
    // Blank lines at the end (an editor's trailing newlines) are not items.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text).trim_end();
    let mut out: Vec<LabelledItem> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let err = |message: String| LabelError::Parse {
            path: path.to_path_buf(),
            line: i + 1,
            message,
        };
        if raw.trim().is_empty() {
            return Err(err("blank line: remove it (one object per line)".into()));
        }
        if raw.trim_start().starts_with("//") {
            return Err(err(
                "comment line: JSONL has no comments; put the reason in \"note\"".into(),
            ));
        }
        let l: Line = serde_json::from_str(raw).map_err(|e| {
            err(format!(
                "not a labelled item ({e}); expected {{\"id\", \"criterion\", \"question\", \"context\", \"answer\", \"reference\"?, \"label\", \"note\"?}}"
            ))
        })?;
        let c = criterion(criteria, &l.criterion).map_err(err)?;
        let verdict = label(&l.label).map_err(err)?;
        let reference = l.reference.unwrap_or_default();
        if c.needs_reference && reference.trim().is_empty() {
            return Err(err(format!(
                "item {:?} labels {} but has no \"reference\": add the reference answer",
                l.id, c.name
            )));
        }
        for (name, v) in [
            ("id", &l.id),
            ("question", &l.question),
            ("answer", &l.answer),
        ] {
            if v.trim().is_empty() {
                return Err(err(format!("\"{name}\" is empty")));
            }
        }
        if c.needs_context() && l.context.trim().is_empty() {
            return Err(err(format!(
                "item {:?} labels {} but its \"context\" is empty",
                l.id, c.name
            )));
        }
        if out.iter().any(|o| o.id == l.id) {
            return Err(err(format!("id {:?} is used twice", l.id)));
        }
        out.push(LabelledItem {
            id: l.id,
            criterion: c.name.clone(),
            question: l.question,
            context: l.context,
            answer: l.answer,
            reference,
            label: verdict,
            note: l.note,
        });
    }
    if out.is_empty() {
        return Err(LabelError::Empty(path.to_path_buf()));
    }
    Ok(out)
}

/// One labelled verdict of a judge_questions.csv row.
#[derive(Debug, Clone, PartialEq)]
pub struct RowLabel {
    /// 1-based line of the row (the header is line 1).
    pub line: usize,
    /// The row's configuration.
    pub config_id: String,
    /// The row's question.
    pub question_id: String,
    /// The row's answer.
    pub answer: String,
    /// Name of the criterion labelled.
    pub criterion: String,
    /// The right verdict: pass = `true`.
    pub label: bool,
}

/// The name of the column holding the label of criterion `c`.
pub fn column(c: &str) -> String {
    format!("human_label_{c}")
}

/// Reads the labelled cells of a judge_questions.csv (`human_label_<criterion>` columns of
/// `criteria`; empty cells skipped).
///
/// # Errors
/// [`LabelError::Io`]; [`LabelError::Parse`] for a file without `config_id`, `question_id` and
/// `answer` columns, without any label column, or with a label other than pass or fail;
/// [`LabelError::Empty`] when no cell is labelled.
pub fn read_csv(path: &Path, criteria: &[Criterion]) -> Result<Vec<RowLabel>, LabelError> {
    let text = read_text(path)?;
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let err = |line: usize, message: String| LabelError::Parse {
        path: path.to_path_buf(),
        line,
        message,
    };
    let headers = r.headers().map_err(|e| err(1, e.to_string()))?.clone();
    let find = |name: &str| headers.iter().position(|h| h == name);
    let (Some(ci), Some(qi), Some(ai)) = (find("config_id"), find("question_id"), find("answer"))
    else {
        return Err(err(
            1,
            "not a judge_questions.csv: it needs config_id, question_id and answer columns".into(),
        ));
    };
    let label_cols: Vec<(&str, usize)> = criteria
        .iter()
        .filter_map(|c| Some((c.name.as_str(), find(&column(&c.name))?)))
        .collect();
    if label_cols.is_empty() {
        let cols: Vec<String> = criteria.iter().map(|c| column(&c.name)).collect();
        let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
        return Err(err(
            1,
            format!(
                "no label column: add {} (pass, fail or empty)",
                or_list(&cols)
            ),
        ));
    }
    let mut out = Vec::new();
    for (i, rec) in r.records().enumerate() {
        // the record's first physical line (answers often span several lines)
        let line = rec
            .as_ref()
            .ok()
            .and_then(|r| r.position())
            .map_or(i + 2, |p| p.line() as usize);
        let rec = rec.map_err(|e| err(line, e.to_string()))?;
        for &(c, col) in &label_cols {
            let cell = rec.get(col).unwrap_or("").trim();
            if cell.is_empty() {
                continue;
            }
            let verdict = label(cell).map_err(|m| err(line, format!("{}: {m}", column(c))))?;
            out.push(RowLabel {
                line,
                config_id: rec.get(ci).unwrap_or("").to_string(),
                question_id: rec.get(qi).unwrap_or("").to_string(),
                answer: rec.get(ai).unwrap_or("").to_string(),
                criterion: c.to_string(),
                label: verdict,
            });
        }
    }
    if out.is_empty() {
        return Err(LabelError::Empty(path.to_path_buf()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::criteria::builtin;

    fn write(text: &str, name: &str) -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(name);
        std::fs::write(&p, text).unwrap();
        (d, p)
    }

    #[test]
    fn a_labelled_set_reads_and_bad_lines_are_named() {
        let good = r#"{"id": "a", "criterion": "faithfulness", "question": "Q?", "context": "C.", "answer": "A.", "label": "pass", "note": "in the context"}
{"id": "b", "criterion": "correctness", "question": "Q?", "context": "", "answer": "A.", "reference": "R.", "label": "fail"}"#;
        let (_d, p) = write(good, "l.jsonl");
        let items = read_jsonl(&p, &builtin()).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].criterion, "faithfulness");
        assert!(items[0].label && !items[1].label);
        assert_eq!(items[1].reference, "R.");
        assert_eq!(items[0].note, "in the context");
        // Trailing blank lines are no items, and a spreadsheet's "Pass" is a pass.
        let (_d2, p2) = write(
            &format!("{}\n\n\n", good.replace("\"pass\"", "\"Pass\"")),
            "t.jsonl",
        );
        let items2 = read_jsonl(&p2, &builtin()).unwrap();
        assert_eq!(items2.len(), 2);
        assert!(items2[0].label);

        let cases = [
            (format!("{good}\n\n{good}"), ":3: blank line"),
            (format!("// c\n{good}"), ":1: comment line"),
            (
                good.replace("\"faithfulness\"", "\"faith\""),
                ":1: unknown criterion \"faith\"",
            ),
            (
                good.replace("\"label\": \"fail\"", "\"label\": \"maybe\""),
                ":2: label \"maybe\" is neither pass nor fail",
            ),
            (
                good.replace(", \"reference\": \"R.\"", ""),
                ":2: item \"b\" labels correctness but has no \"reference\"",
            ),
            (
                good.replace("\"id\": \"b\"", "\"id\": \"a\""),
                ":2: id \"a\" is used twice",
            ),
            (
                good.replace("\"note\"", "\"notes\""),
                ":1: not a labelled item (unknown field `notes`",
            ),
        ];
        for (text, want) in cases {
            let (_d, p) = write(&text, "bad.jsonl");
            let e = read_jsonl(&p, &builtin()).unwrap_err().to_string();
            assert!(e.contains(&format!("bad.jsonl{want}")), "{e}");
        }
    }

    #[test]
    fn judge_questions_labels_skip_empty_cells() {
        let text = "config_id,question_id,answer,faithfulness,human_label_faithfulness,human_label_relevancy\n\
                    A,q1,Two cores.,pass,pass,\n\
                    A,q2,No idea.,pass,fail,fail\n\
                    A,q3,x,pass,,\n";
        let (_d, p) = write(text, "judge_questions.csv");
        let l = read_csv(&p, &builtin()).unwrap();
        assert_eq!(l.len(), 3);
        assert_eq!(
            (
                l[0].line,
                l[0].question_id.as_str(),
                l[0].criterion.as_str(),
                l[0].label
            ),
            (2, "q1", "faithfulness", true)
        );
        assert_eq!(
            (l[2].line, l[2].criterion.as_str(), l[2].label),
            (3, "relevancy", false)
        );
        let (_d, p) = write(&text.replace(",fail,fail", ",fial,fail"), "j.csv");
        let e = read_csv(&p, &builtin()).unwrap_err().to_string();
        assert!(
            e.contains("j.csv:3: human_label_faithfulness: label \"fial\""),
            "{e}"
        );
        // A multi-line answer: the error names the bad row's physical line (4), not its record (3).
        let multi = text
            .replace("Two cores.", "\"Two\ncores.\"")
            .replace(",fail,fail", ",fial,fail");
        let (_d, p) = write(&multi, "m.csv");
        let e = read_csv(&p, &builtin()).unwrap_err().to_string();
        assert!(e.contains("m.csv:4: human_label_faithfulness"), "{e}");
        let (_d, p) = write("config_id,question_id,answer\nA,q1,x\n", "j.csv");
        assert!(
            read_csv(&p, &builtin())
                .unwrap_err()
                .to_string()
                .contains("no label column")
        );
    }
}
