//! Resolving evidence items to locations in the corpus, collecting every problem.

use std::collections::HashSet;
use std::path::Path;

use super::types::{
    EvidenceSpan, GoldenSet, Location, Problem, ProblemKind, Question, RawEvidence, RawQuestion,
};
use crate::corpus::{Corpus, Document};

/// Resolves raw questions against `corpus`. Every evidence item becomes an [`EvidenceSpan`] with
/// all its occurrences; what cannot be resolved becomes a [`Problem`] naming `path` and the line.
/// Exact text is preferred; text found only after collapsing runs of whitespace (line wraps) is
/// accepted with a warning. Every location is trimmed of the whitespace at its edges (see
/// [`GoldenSet::trimmed_spans`]).
pub fn resolve(path: &Path, raw: &[RawQuestion], corpus: &Corpus) -> (GoldenSet, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut seen = HashSet::new();
    let mut normalized: Vec<Option<Normalized>> = vec![None; corpus.docs.len()];
    let mut questions = Vec::with_capacity(raw.len());
    let mut trimmed_spans = 0;
    for q in raw {
        let mut report = |kind: ProblemKind, message: String| {
            problems.push(Problem {
                file: path.to_path_buf(),
                line: q.line,
                kind,
                message,
            })
        };
        if !seen.insert(q.id.as_str()) {
            report(
                ProblemKind::DuplicateId,
                format!(
                    "duplicate question id {:?}: give every question its own id",
                    q.id
                ),
            );
        }
        if q.question.trim().is_empty() {
            report(
                ProblemKind::EmptyQuestion,
                format!("question {:?} has empty text", q.id),
            );
        }
        if q.evidence.is_empty() {
            report(
                ProblemKind::NoEvidence,
                format!(
                    "question {:?} has no evidence: add the exact text that answers it",
                    q.id
                ),
            );
        }
        let mut spans = Vec::with_capacity(q.evidence.len());
        for (n, item) in q.evidence.iter().enumerate() {
            match locate(item, corpus, &mut normalized) {
                Ok((locations, forgiven)) => {
                    if forgiven {
                        report(
                            ProblemKind::WhitespaceForgiven,
                            format!(
                                "question {:?}, evidence {}: matched only after collapsing whitespace",
                                q.id,
                                n + 1
                            ),
                        );
                    }
                    let (locations, trimmed) = trim_edges(corpus, locations);
                    trimmed_spans += usize::from(trimmed);
                    spans.push(EvidenceSpan { locations });
                }
                Err((kind, message)) => report(
                    kind,
                    format!("question {:?}, evidence {}: {message}", q.id, n + 1),
                ),
            }
        }
        questions.push(Question {
            line: q.line,
            id: q.id.clone(),
            text: q.question.clone(),
            spans,
            answer: q.answer.clone(),
            question_type: q.question_type.clone(),
            origin: q.origin.clone(),
        });
    }
    let set = GoldenSet {
        path: path.to_path_buf(),
        questions,
        trimmed_spans,
    };
    (set, problems)
}

/// `locations` without the whitespace at their edges, and whether any had some. A location of
/// whitespace only is kept as it is (text search refuses empty evidence; ranges are checked in
/// [`locate`]).
pub(crate) fn trim_edges(corpus: &Corpus, locations: Vec<Location>) -> (Vec<Location>, bool) {
    let mut trimmed = false;
    let out = locations
        .into_iter()
        .map(|loc| {
            let text = corpus.docs[loc.doc].slice_chars(loc.start, loc.end);
            let lead = text.chars().take_while(|c| c.is_whitespace()).count();
            let trail = text.chars().rev().take_while(|c| c.is_whitespace()).count();
            if lead + trail == 0 || lead == loc.len() {
                return loc;
            }
            trimmed = true;
            Location {
                start: loc.start + lead,
                end: loc.end - trail,
                ..loc
            }
        })
        .collect();
    (out, trimmed)
}

type Located = (Vec<Location>, bool);

fn locate(
    item: &RawEvidence,
    corpus: &Corpus,
    normalized: &mut [Option<Normalized>],
) -> Result<Located, (ProblemKind, String)> {
    let find_doc = |doc: &str| {
        corpus.find(doc).ok_or_else(|| {
            (
                ProblemKind::UnknownDocument,
                format!("document {doc:?} is not in the corpus ({} documents under {}); ids are paths relative to the corpus folder", corpus.docs.len(), corpus.root.display()),
            )
        })
    };
    match item {
        RawEvidence::Text(text) => search(text, 0..corpus.docs.len(), corpus, normalized),
        RawEvidence::DocText { doc, text } => {
            let d = find_doc(doc)?;
            search(text, d..d + 1, corpus, normalized)
        }
        RawEvidence::DocRange {
            doc,
            start,
            end,
            content,
        } => {
            let d = find_doc(doc)?;
            let document = &corpus.docs[d];
            if start >= end
                || *end > document.char_len()
                || document.slice_chars(*start, *end).trim().is_empty()
            {
                return Err((
                    ProblemKind::BadRange,
                    format!(
                        "range {start}..{end} is empty, whitespace only or outside {doc:?} ({} code points)",
                        document.char_len()
                    ),
                ));
            }
            if let Some(content) = content {
                let actual = document.slice_chars(*start, *end);
                if actual != content {
                    return Err((
                        ProblemKind::BadRange,
                        format!(
                            "range {start}..{end} of {doc:?} holds {:?}, not the given text {:?}",
                            excerpt(actual),
                            excerpt(content)
                        ),
                    ));
                }
            }
            Ok((
                vec![Location {
                    doc: d,
                    start: *start,
                    end: *end,
                }],
                false,
            ))
        }
        RawEvidence::Page { doc, page } => {
            let d = find_doc(doc)?;
            page_location(&corpus.docs[d], d, *page).map(|l| (vec![l], false))
        }
        RawEvidence::Section { doc, anchor } => {
            let d = find_doc(doc)?;
            let document = &corpus.docs[d];
            let (start, end) = match anchor {
                None => (0, document.char_len()),
                Some(anchor) => super::section::find(document, anchor)
                    .map_err(|message| (ProblemKind::UnknownAnchor, message))?,
            };
            if document.slice_chars(start, end).trim().is_empty() {
                return Err((
                    ProblemKind::BadRange,
                    format!("{doc:?} is empty or whitespace only: it cannot be evidence"),
                ));
            }
            Ok((vec![Location { doc: d, start, end }], false))
        }
    }
}

/// Page `page` (1-based) of document `d` as a location, without the whitespace at its edges:
/// what `{"doc", "page"}` evidence resolves to.
///
/// # Errors
/// [`ProblemKind::BadRange`] with the message for a document without pages, a page outside it,
/// or a page that holds no text.
pub fn page_location(
    document: &Document,
    d: usize,
    page: usize,
) -> Result<Location, (ProblemKind, String)> {
    let bad = |message: String| Err((ProblemKind::BadRange, message));
    let doc = &document.id;
    if document.pages.is_empty() {
        return bad(format!(
            "{doc:?} has no pages (page evidence needs a PDF): give the evidence as text"
        ));
    }
    let Some((start, end)) = document.page_bytes(page) else {
        return bad(format!(
            "page {page} is outside {doc:?}, which has {} pages (pages count from 1)",
            document.pages.len()
        ));
    };
    let text = &document.text[start..end];
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return bad(format!(
            "page {page} of {doc:?} holds no text (a scanned page?): OCR the PDF first, or give other evidence"
        ));
    }
    let start = start + (text.len() - text.trim_start().len());
    Ok(location(document, d, start, start + trimmed.len()))
}

/// Finds evidence text in a corpus as [`resolve`] does: every exact occurrence, else every
/// occurrence after collapsing runs of whitespace (the documents' collapsed forms are built once
/// each, on first use).
pub struct Finder<'a> {
    corpus: &'a Corpus,
    normalized: Vec<Option<Normalized>>,
}

impl<'a> Finder<'a> {
    /// A finder over `corpus`.
    pub fn new(corpus: &'a Corpus) -> Self {
        Finder {
            corpus,
            normalized: vec![None; corpus.docs.len()],
        }
    }

    /// Every location of `text` in the documents `docs` (indices into the corpus), and whether
    /// they were found only after collapsing whitespace; `None` when it occurs nowhere there
    /// (or is blank).
    pub fn find(
        &mut self,
        text: &str,
        docs: std::ops::Range<usize>,
    ) -> Option<(Vec<Location>, bool)> {
        search(text, docs, self.corpus, &mut self.normalized).ok()
    }
}

fn search(
    text: &str,
    docs: std::ops::Range<usize>,
    corpus: &Corpus,
    normalized: &mut [Option<Normalized>],
) -> Result<Located, (ProblemKind, String)> {
    if text.trim().is_empty() {
        return Err((ProblemKind::SpanNotFound, "evidence text is empty".into()));
    }
    let mut found = Vec::new();
    for d in docs.clone() {
        let doc = &corpus.docs[d];
        for (byte, m) in doc.text.match_indices(text) {
            found.push(location(doc, d, byte, byte + m.len()));
        }
    }
    if !found.is_empty() {
        return Ok((found, false));
    }
    let needle = collapse(text);
    for d in docs.clone() {
        let doc = &corpus.docs[d];
        let norm = normalized[d].get_or_insert_with(|| Normalized::new(&doc.text));
        for (nbyte, m) in norm.text.match_indices(needle.as_str()) {
            let start = norm.orig_start[nbyte];
            let end = norm.orig_end[nbyte + m.len() - 1];
            found.push(location(doc, d, start, end));
        }
    }
    if !found.is_empty() {
        return Ok((found, true));
    }
    let scope = if docs.len() == 1 {
        format!("document {:?}", corpus.docs[docs.start].id)
    } else {
        "any document".to_string()
    };
    Err((
        ProblemKind::SpanNotFound,
        format!(
            "text {:?} not found in {scope}: copy the evidence exactly from the document",
            excerpt(text)
        ),
    ))
}

fn location(doc: &Document, d: usize, byte_start: usize, byte_end: usize) -> Location {
    Location {
        doc: d,
        start: doc.byte_to_char(byte_start),
        end: doc.byte_to_char(byte_end),
    }
}

/// `text`, cut to its first 60 characters (with `…`) to quote it in a message.
pub(crate) fn excerpt(text: &str) -> String {
    const MAX: usize = 60;
    if text.chars().count() <= MAX {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(MAX).collect::<String>())
    }
}

/// `text` with every run of whitespace replaced by one space, trimmed.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A document's text with whitespace runs collapsed, and for every byte of it the original
/// byte range of the character (or whitespace run) it came from.
#[derive(Clone)]
struct Normalized {
    text: String,
    orig_start: Vec<usize>,
    orig_end: Vec<usize>,
}

impl Normalized {
    fn new(original: &str) -> Self {
        let mut n = Normalized {
            text: String::with_capacity(original.len()),
            orig_start: Vec::with_capacity(original.len()),
            orig_end: Vec::with_capacity(original.len()),
        };
        let mut chars = original.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c.is_whitespace() {
                let mut end = i + c.len_utf8();
                while let Some(&(j, w)) = chars.peek() {
                    if !w.is_whitespace() {
                        break;
                    }
                    end = j + w.len_utf8();
                    chars.next();
                }
                n.push(' ', i, end);
            } else {
                n.push(c, i, i + c.len_utf8());
            }
        }
        n
    }

    fn push(&mut self, c: char, start: usize, end: usize) {
        self.text.push(c);
        for _ in 0..c.len_utf8() {
            self.orig_start.push(start);
            self.orig_end.push(end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Document;

    fn corpus() -> Corpus {
        Corpus::from_documents(
            "root",
            vec![
                Document::new(
                    "a.md",
                    "“Café” costs €5.\nRefunds take 14\n   days. Refunds take 14 days.",
                ),
                Document::new("b.md", "Refunds take 14 days."),
            ],
        )
    }

    fn raw(line: usize, id: &str, evidence: Vec<RawEvidence>) -> RawQuestion {
        RawQuestion {
            line,
            id: id.into(),
            question: "q?".into(),
            evidence,
            answer: None,
            question_type: None,
            origin: Default::default(),
        }
    }

    #[test]
    fn page_evidence_is_the_whole_page_trimmed_and_bad_pages_are_named() {
        let mut pdf = Document::new("f.pdf", "Café one.\n\n  Page two.\n\n\n\nFour.");
        pdf.pages = vec![0, 12, 25, 27];
        let c = Corpus::from_documents("root", vec![pdf, Document::new("a.md", "No pages.")]);
        let page = |doc: &str, page| RawEvidence::Page {
            doc: doc.into(),
            page,
        };
        let questions = [
            raw(1, "a", vec![page("f.pdf", 2)]),
            raw(2, "b", vec![page("f.pdf", 5)]),
            raw(3, "c", vec![page("f.pdf", 3)]),
            raw(4, "d", vec![page("a.md", 1)]),
        ];
        let (set, problems) = resolve(Path::new("g.jsonl"), &questions, &c);
        let loc = &set.questions[0].spans[0].locations[0];
        assert_eq!((loc.doc, loc.start, loc.end), (1, 13, 22));
        assert_eq!(c.docs[1].slice_chars(13, 22), "Page two.");
        let messages: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(
            messages,
            vec![
                "g.jsonl:2: error: question \"b\", evidence 1: page 5 is outside \"f.pdf\", which has 4 pages (pages count from 1)",
                "g.jsonl:3: error: question \"c\", evidence 1: page 3 of \"f.pdf\" holds no text (a scanned page?): OCR the PDF first, or give other evidence",
                "g.jsonl:4: error: question \"d\", evidence 1: \"a.md\" has no pages (page evidence needs a PDF): give the evidence as text",
            ]
        );
    }

    #[test]
    fn text_occurring_several_times_gives_every_location_in_code_points() {
        let c = corpus();
        let (set, problems) = resolve(
            Path::new("g"),
            &[raw(
                1,
                "a",
                vec![RawEvidence::Text("Refunds take 14 days.".into())],
            )],
            &c,
        );
        assert!(problems.is_empty(), "{problems:?}");
        // In a.md the exact text occurs once (after the wrapped one), at code point 42 (byte 49);
        // in b.md at 0.
        assert_eq!(
            set.questions[0].spans[0].locations,
            vec![
                Location {
                    doc: 0,
                    start: 42,
                    end: 63
                },
                Location {
                    doc: 1,
                    start: 0,
                    end: 21
                },
            ]
        );
        assert_eq!(c.docs[0].slice_chars(42, 63), "Refunds take 14 days.");
    }

    #[test]
    fn whitespace_differences_are_forgiven_with_a_warning() {
        let c = corpus();
        let (set, problems) = resolve(
            Path::new("g"),
            &[raw(
                3,
                "a",
                vec![RawEvidence::DocText {
                    doc: "a.md".into(),
                    text: "€5. Refunds take 14 days. Refunds".into(),
                }],
            )],
            &c,
        );
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].kind, ProblemKind::WhitespaceForgiven);
        assert_eq!(problems[0].line, 3);
        let loc = set.questions[0].spans[0].locations[0];
        assert_eq!(
            c.docs[0].slice_chars(loc.start, loc.end),
            "€5.\nRefunds take 14\n   days. Refunds"
        );
    }

    #[test]
    fn every_problem_is_reported_with_its_line() {
        let c = corpus();
        let mut empty = raw(4, "b", vec![]);
        empty.question = " ".into();
        let (_, problems) = resolve(
            Path::new("g.jsonl"),
            &[
                raw(1, "a", vec![RawEvidence::Text("nowhere to be seen".into())]),
                raw(
                    2,
                    "a",
                    vec![RawEvidence::DocText {
                        doc: "missing.md".into(),
                        text: "x".into(),
                    }],
                ),
                raw(
                    3,
                    "c",
                    vec![RawEvidence::DocRange {
                        doc: "b".into(),
                        start: 0,
                        end: 7,
                        content: Some("Refund!".into()),
                    }],
                ),
                empty,
            ],
            &c,
        );
        let got: Vec<(usize, ProblemKind)> = problems.iter().map(|p| (p.line, p.kind)).collect();
        assert_eq!(
            got,
            vec![
                (1, ProblemKind::SpanNotFound),
                (2, ProblemKind::DuplicateId),
                (2, ProblemKind::UnknownDocument),
                (3, ProblemKind::BadRange),
                (4, ProblemKind::EmptyQuestion),
                (4, ProblemKind::NoEvidence),
            ]
        );
        assert!(problems[0].to_string().starts_with("g.jsonl:1: error:"));
    }

    #[test]
    fn whitespace_at_span_edges_is_trimmed_so_every_strategy_can_hold_the_span() {
        use crate::chunking::{ChunkContext, ChunkParams, Strategy, chunk_corpus};
        use crate::metrics::ChunkTable;
        use crate::tokenize::{CorpusTokens, TokenizerKind};
        let text = "The refund window is fourteen days. Partial refunds are prorated by the day.";
        let c = Corpus::from_documents("root", vec![Document::new("refunds.md", text)]);
        // Chroma's reference: range 0..36 with its trailing space, and the same as JSONL text.
        let (set, problems) = resolve(
            Path::new("questions_df.csv"),
            &[
                raw(
                    2,
                    "q001",
                    vec![RawEvidence::DocRange {
                        doc: "refunds".into(),
                        start: 0,
                        end: 36,
                        content: Some("The refund window is fourteen days. ".into()),
                    }],
                ),
                raw(
                    3,
                    "q002",
                    vec![RawEvidence::Text(" fourteen days. ".into())],
                ),
                raw(4, "q003", vec![RawEvidence::Text("Partial refunds".into())]),
            ],
            &c,
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(set.trimmed_spans, 2);
        let locs: Vec<Location> = set
            .questions
            .iter()
            .map(|q| q.spans[0].locations[0])
            .collect();
        assert_eq!(
            locs,
            vec![
                Location {
                    doc: 0,
                    start: 0,
                    end: 35
                },
                Location {
                    doc: 0,
                    start: 21,
                    end: 35
                },
                Location {
                    doc: 0,
                    start: 36,
                    end: 51
                },
            ]
        );
        let tokens = CorpusTokens::new(&c, TokenizerKind::Cl100kBase);
        for strategy in [
            Strategy::Fixed,
            Strategy::Recursive,
            Strategy::Sentence,
            Strategy::Markdown,
        ] {
            let params = ChunkParams {
                strategy,
                chunk_size: 10,
                chunk_overlap: 0,
            };
            let chunks = chunk_corpus(&c, &tokens, &params, &ChunkContext::default()).unwrap();
            let table = ChunkTable::new(&chunks, 1);
            let holding: Vec<&str> = table
                .containing(&locs[0])
                .map(|i| chunks[i].text(&c))
                .collect();
            let expected = if strategy == Strategy::Fixed {
                "The refund window is fourteen days. Partial refunds are"
            } else {
                "The refund window is fourteen days."
            };
            assert_eq!(holding, vec![expected], "{strategy}");
        }
        // A range of whitespace only is refused.
        let (_, problems) = resolve(
            Path::new("questions_df.csv"),
            &[raw(
                2,
                "q001",
                vec![RawEvidence::DocRange {
                    doc: "refunds".into(),
                    start: 35,
                    end: 36,
                    content: None,
                }],
            )],
            &c,
        );
        assert_eq!(problems[0].kind, ProblemKind::BadRange);
    }
}
