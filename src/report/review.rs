//! The per-question review of the drill-down ([`crate::report::drill`]): for one question and
//! one candidate configuration, the retrieved chunks in rank order with the evidence marked
//! inside them, and where each evidence span stands (whole inside a chunk, cut by a chunk
//! boundary, or not retrieved).
//!
//! Offsets are code points into the corpus's documents, as everywhere else; [`utf16_marks`]
//! converts a chunk's marks to the UTF-16 offsets a browser's strings use.

use crate::corpus::Corpus;
use crate::golden::{EvidenceSpan, Location, Question};
use crate::sweep::rows::QuestionRow;

/// One chunk of a configuration's top-k, as sweep_questions.csv records it.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrievedChunk {
    /// 1-based rank in the top-k.
    pub rank: usize,
    /// Chunk id, `<document id>#<ordinal>`.
    pub id: String,
    /// Its place in the corpus (document index, code-point range), when the row records ranges
    /// and the document is in the corpus.
    pub location: Option<Location>,
    /// Retriever score, as written (4 decimals).
    pub score: String,
}

/// Where one evidence span stands in a configuration's top-k.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanStatus {
    /// One of its locations lies wholly inside the chunk at this 1-based rank (the best such).
    Whole(usize),
    /// Retrieved chunks overlap one of its locations, but none holds it whole: a chunk boundary
    /// cut it.
    Cut,
    /// No retrieved chunk touches any of its locations.
    Missing,
}

impl SpanStatus {
    /// CSS class and label: `whole`, `cut` or `missing`.
    pub fn class(self) -> &'static str {
        match self {
            SpanStatus::Whole(_) => "whole",
            SpanStatus::Cut => "cut",
            SpanStatus::Missing => "missing",
        }
    }
}

/// A marked stretch of a chunk: code points relative to the chunk's start, end exclusive;
/// `whole` when the evidence location it belongs to lies wholly inside this chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// First code point, relative to the chunk's start.
    pub start: usize,
    /// One past the last code point.
    pub end: usize,
    /// The location is whole in this chunk (else the chunk holds only part of it).
    pub whole: bool,
}

/// The retrieved chunks of `row`, best first. Ranges come from `retrieved_ranges`
/// (`start-end|…`, aligned with `retrieved_chunk_ids`); rows written before that column existed
/// give chunks without a location.
pub fn retrieved(row: &QuestionRow, corpus: Option<&Corpus>) -> Vec<RetrievedChunk> {
    let ids = split(&row.retrieved_chunk_ids);
    let scores = split(&row.retrieved_scores);
    let ranges = split(&row.retrieved_ranges);
    ids.iter()
        .enumerate()
        .map(|(i, id)| {
            let doc = id.rsplit_once('#').and_then(|(doc, _)| corpus?.find(doc));
            let range = ranges.get(i).and_then(|r| {
                let (s, e) = r.split_once('-')?;
                Some((s.parse().ok()?, e.parse().ok()?))
            });
            let location = doc
                .zip(range)
                .map(|(doc, (start, end))| Location { doc, start, end });
            RetrievedChunk {
                rank: i + 1,
                id: id.to_string(),
                location,
                score: scores.get(i).map_or_else(String::new, |s| s.to_string()),
            }
        })
        .collect()
}

fn split(s: &str) -> Vec<&str> {
    if s.is_empty() {
        Vec::new()
    } else {
        s.split('|').collect()
    }
}

fn overlaps(a: &Location, b: &Location) -> bool {
    a.doc == b.doc && a.start < b.end && b.start < a.end
}

fn contains(chunk: &Location, loc: &Location) -> bool {
    chunk.doc == loc.doc && chunk.start <= loc.start && loc.end <= chunk.end
}

/// Where `span` stands among `chunks` (the top-k, best first): whole at the best rank that holds
/// one of its locations wholly (the containment rule of span recall), else cut when a chunk
/// overlaps a location, else missing.
pub fn span_status(span: &EvidenceSpan, chunks: &[RetrievedChunk]) -> SpanStatus {
    let placed = || chunks.iter().filter_map(|c| Some((c.rank, c.location?)));
    if let Some((rank, _)) =
        placed().find(|(_, c)| span.locations.iter().any(|loc| contains(c, loc)))
    {
        return SpanStatus::Whole(rank);
    }
    if placed().any(|(_, c)| span.locations.iter().any(|loc| overlaps(&c, loc))) {
        SpanStatus::Cut
    } else {
        SpanStatus::Missing
    }
}

/// The evidence inside `chunk`: every location of every span of `question` that overlaps it,
/// clipped to the chunk, relative to its start, as sorted stretches that do not overlap (where a
/// whole location and a cut one overlap, the shared part is whole).
pub fn marks(question: &Question, chunk: &Location) -> Vec<Mark> {
    let pieces: Vec<Mark> = question
        .spans
        .iter()
        .flat_map(|s| &s.locations)
        .filter(|loc| overlaps(chunk, loc))
        .map(|loc| Mark {
            start: loc.start.max(chunk.start) - chunk.start,
            end: loc.end.min(chunk.end) - chunk.start,
            whole: contains(chunk, loc),
        })
        .collect();
    let mut cuts: Vec<usize> = pieces.iter().flat_map(|m| [m.start, m.end]).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut out: Vec<Mark> = Vec::new();
    for w in cuts.windows(2) {
        let (start, end) = (w[0], w[1]);
        let covering = pieces.iter().filter(|m| m.start <= start && end <= m.end);
        let Some(whole) = covering.map(|m| m.whole).reduce(|a, b| a || b) else {
            continue;
        };
        match out.last_mut() {
            Some(last) if last.end == start && last.whole == whole => last.end = end,
            _ => out.push(Mark { start, end, whole }),
        }
    }
    out
}

/// `marks` of `text` with code-point offsets turned into UTF-16 offsets (what JavaScript's
/// `String.prototype.slice` counts), as `start-end-w` (`w` 1 for whole, 0 for cut), `,`-separated.
pub fn utf16_marks(text: &str, marks: &[Mark]) -> String {
    let mut out = Vec::with_capacity(marks.len());
    let mut chars = text.chars();
    let (mut cp, mut unit) = (0usize, 0usize);
    let mut to_unit = |target: usize| {
        while cp < target {
            match chars.next() {
                Some(c) => unit += c.len_utf16(),
                None => break,
            }
            cp += 1;
        }
        unit
    };
    for m in marks {
        let start = to_unit(m.start);
        let end = to_unit(m.end);
        out.push(format!("{start}-{end}-{}", u8::from(m.whole)));
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Document;

    fn loc(doc: usize, start: usize, end: usize) -> Location {
        Location { doc, start, end }
    }

    fn chunk(rank: usize, l: Location) -> RetrievedChunk {
        RetrievedChunk {
            rank,
            id: format!("d#{rank}"),
            location: Some(l),
            score: "1.0000".into(),
        }
    }

    fn question(spans: Vec<Vec<Location>>) -> Question {
        Question {
            line: 1,
            id: "q".into(),
            text: "?".into(),
            spans: spans
                .into_iter()
                .map(|locations| EvidenceSpan { locations })
                .collect(),
            answer: None,
            question_type: None,
            origin: Default::default(),
        }
    }

    #[test]
    fn a_span_is_whole_at_the_best_rank_that_holds_it_cut_when_only_touched_missing_otherwise() {
        let chunks = [chunk(1, loc(0, 0, 10)), chunk(2, loc(0, 20, 40))];
        // Whole in rank 2 only (rank 1 ends before it).
        let whole = EvidenceSpan {
            locations: vec![loc(0, 25, 30)],
        };
        assert_eq!(span_status(&whole, &chunks), SpanStatus::Whole(2));
        // Second location whole in rank 1 wins over nothing.
        let two = EvidenceSpan {
            locations: vec![loc(1, 0, 5), loc(0, 2, 8)],
        };
        assert_eq!(span_status(&two, &chunks), SpanStatus::Whole(1));
        // Straddles the end of rank 1: cut.
        let cut = EvidenceSpan {
            locations: vec![loc(0, 8, 12)],
        };
        assert_eq!(span_status(&cut, &chunks), SpanStatus::Cut);
        // Touches nothing (end exclusive: 10..20 lies between the chunks).
        let missing = EvidenceSpan {
            locations: vec![loc(0, 10, 20)],
        };
        assert_eq!(span_status(&missing, &chunks), SpanStatus::Missing);
    }

    #[test]
    fn marks_are_clipped_relative_and_do_not_overlap() {
        let m = |start, end, whole| Mark { start, end, whole };
        let q = question(vec![
            vec![loc(0, 5, 15)],  // cut by the chunk's start (10): 0..5
            vec![loc(0, 12, 14)], // whole, inside the cut one: 2..4
            vec![loc(0, 20, 22)], // whole: 10..12
            vec![loc(1, 10, 20)], // another document
        ]);
        assert_eq!(
            marks(&q, &loc(0, 10, 30)),
            vec![
                m(0, 2, false),
                m(2, 4, true),
                m(4, 5, false),
                m(10, 12, true)
            ]
        );
        // Two touching whole locations make one stretch.
        let q = question(vec![vec![loc(0, 10, 12)], vec![loc(0, 12, 15)]]);
        assert_eq!(marks(&q, &loc(0, 10, 30)), vec![m(0, 5, true)]);
        // Cut by the chunk's end.
        let q = question(vec![vec![loc(0, 25, 35)]]);
        assert_eq!(marks(&q, &loc(0, 10, 30)), vec![m(15, 20, false)]);
    }

    #[test]
    fn utf16_offsets_count_surrogate_pairs_twice() {
        // "é" is one unit, "𝄞" two; the mark covers "b𝄞c" (code points 2..5).
        let text = "é a b𝄞c";
        let marks = [Mark {
            start: 4,
            end: 7,
            whole: false,
        }];
        assert_eq!(utf16_marks(text, &marks), "4-8-0");
    }

    #[test]
    fn retrieved_reads_ids_ranges_and_scores() {
        let corpus = Corpus::from_documents(
            "c",
            vec![
                Document::new("a#b.md", "xxxx"),
                Document::new("c.md", "yyyy"),
            ],
        );
        let row = QuestionRow {
            config_id: "x".into(),
            cut: "k".into(),
            budget_tokens: None,
            question_id: "q".into(),
            question_type: String::new(),
            n_spans: 1,
            hit: 0,
            span_recall: 0.0,
            coverage: 0.0,
            margin: 0.0,
            unreachable: 0,
            first_correct_rank: None,
            reciprocal_rank: 0.0,
            char_iou: 0.0,
            char_precision: 0.0,
            char_recall: 0.0,
            tie_at_k: 0,
            chunks_retrieved: 3,
            tokens_retrieved: 0,
            span_tokens: String::new(),
            retrieved_chunk_ids: "c.md#3|a#b.md#0|gone.md#1".into(),
            retrieved_scores: "2.5000|1.0000|0.5000".into(),
            retrieved_ranges: "30-40|0-12|5-6".into(),
        };
        let r = retrieved(&row, Some(&corpus));
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].location, Some(loc(1, 30, 40)));
        // A '#' inside the document id: the ordinal is after the last one.
        assert_eq!(r[1].location, Some(loc(0, 0, 12)));
        assert_eq!(r[1].score, "1.0000");
        // A document the corpus does not hold has no location.
        assert_eq!(r[2].location, None);
        assert_eq!(r[2].rank, 3);
    }
}
