//! Hand-checked metrics on a tiny corpus whose first document has curly quotes, accents, a euro
//! sign and an emoji, so code-point offsets (76 in all) and byte offsets (89) differ.
//!
//! ```text
//! a.md: “Zoë’s café” costs €5 🙂. Refunds take 14 days. Partial refunds are prorated.
//!       span A "Refunds take 14 days."          = [25, 46)  (bytes 38..)
//!       span B "Partial refunds are prorated."  = [47, 76)
//! chunks: c0 = a[0, 30)  c1 = a[20, 50)  c2 = a[40, 76)  c3 = b[0, 22)
//! scores: c0 4.0  c1 1.0  c2 2.0  c3 3.0   → ranking c0, c3, c2, c1
//! ```

use super::*;
use crate::corpus::{Corpus, Document};
use crate::golden::{EvidenceSpan, Location, Question};
use crate::retrieval::rank_top_k;

fn corpus() -> Corpus {
    Corpus::from_documents(
        "t",
        vec![
            Document::new(
                "a.md",
                "“Zoë’s café” costs €5 🙂. Refunds take 14 days. Partial refunds are prorated.",
            ),
            Document::new("b.md", "Nothing relevant here."),
        ],
    )
}

fn chunk(corpus: &Corpus, doc: usize, ordinal: usize, start: usize, end: usize) -> Chunk {
    let d = &corpus.docs[doc];
    Chunk {
        doc,
        ordinal,
        start,
        end,
        byte_start: d.char_to_byte(start),
        byte_end: d.char_to_byte(end),
        heading_path: vec![],
        tokens: 0,
        prefix: String::new(),
        prefix_tokens: 0,
        table_header: String::new(),
    }
}

fn chunks(corpus: &Corpus) -> Vec<Chunk> {
    vec![
        chunk(corpus, 0, 0, 0, 30),
        chunk(corpus, 0, 1, 20, 50),
        chunk(corpus, 0, 2, 40, 76),
        chunk(corpus, 1, 0, 0, 22),
    ]
}

const SCORES: [f32; 4] = [4.0, 1.0, 2.0, 3.0];

fn loc(doc: usize, start: usize, end: usize) -> Location {
    Location { doc, start, end }
}

fn question(spans: Vec<Vec<Location>>) -> Question {
    Question {
        line: 1,
        id: "q".into(),
        text: "refunds".into(),
        spans: spans
            .into_iter()
            .map(|locations| EvidenceSpan { locations })
            .collect(),
        answer: None,
        question_type: None,
    }
}

fn two_spans() -> Question {
    question(vec![vec![loc(0, 25, 46)], vec![loc(0, 47, 76)]])
}

fn score(q: &Question, k: usize) -> QuestionMetrics {
    let c = corpus();
    let cs = chunks(&c);
    let table = ChunkTable::new(&cs, c.docs.len());
    score_question(q, &table, &SCORES, &rank_top_k(&SCORES, k))
}

#[test]
fn fixture_offsets_are_code_points_not_bytes() {
    let c = corpus();
    assert_eq!(c.docs[0].char_len(), 76);
    assert_eq!(c.docs[0].text.len(), 89);
    assert_eq!(c.docs[0].slice_chars(25, 46), "Refunds take 14 days.");
    assert_eq!(
        c.docs[0].slice_chars(47, 76),
        "Partial refunds are prorated."
    );
    let cs = chunks(&c);
    assert_eq!(cs[1].text(&c), "5 🙂. Refunds take 14 days. Par");
    assert_eq!(cs[1].byte_start, 30);
}

#[test]
fn two_spans_at_k2_nothing_whole_partial_coverage() {
    let m = score(&two_spans(), 2);
    assert_eq!(m.n_spans, 2);
    assert_eq!(m.spans_found, 0);
    assert_eq!(m.span_recall, 0.0);
    assert!(!m.hit);
    // c0 = [0,30) covers [25,30) of span A: 5 of 21 + 29 = 50 characters.
    assert_eq!((m.covered_chars, m.evidence_chars), (5, 50));
    assert!((m.coverage - 0.1).abs() < 1e-12);
    // Best correct chunk c2 (2.0), best wrong c0 (4.0), top 4.0: (2 - 4) / 4.
    assert!((m.margin - -0.5).abs() < 1e-12);
    assert_eq!(m.first_correct_rank, Some(3));
    assert_eq!(m.reciprocal_rank, 0.0);
    // |G ∩ R| = 5; Σ|chunk| = 30 + 22; |G \ R| = 50 - 5.
    assert_eq!(m.intersection_chars, 5);
    assert_eq!(m.retrieved_chars, 52);
    assert_eq!(m.unused_gold_chars, 45);
    assert!((m.char_iou - 5.0 / 97.0).abs() < 1e-12);
    assert!((m.char_precision - 5.0 / 52.0).abs() < 1e-12);
    assert!((m.char_recall - 0.1).abs() < 1e-12);
    assert!(!m.tie_at_k);
}

#[test]
fn two_spans_at_k3_one_whole() {
    let m = score(&two_spans(), 3);
    assert_eq!(m.spans_found, 1);
    assert_eq!(m.span_recall, 0.5);
    assert!(m.hit);
    // A: [25,30) from c0 and [40,46) from c2 = 11; B whole = 29.
    assert_eq!((m.covered_chars, m.evidence_chars), (40, 50));
    assert_eq!(m.first_correct_rank, Some(3));
    assert!((m.reciprocal_rank - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(m.retrieved_chars, 30 + 22 + 36);
    assert!((m.char_iou - 40.0 / 98.0).abs() < 1e-12);
    assert!((m.char_precision - 40.0 / 88.0).abs() < 1e-12);
    assert!((m.char_recall - 0.8).abs() < 1e-12);
}

#[test]
fn any_location_of_a_span_counts_and_coverage_takes_the_best() {
    // One span with two acceptable locations: a[25,46) (not retrieved whole at k = 2) and b[0,7)
    // (inside c3, retrieved second).
    let m = score(&question(vec![vec![loc(0, 25, 46), loc(1, 0, 7)]]), 2);
    assert_eq!(m.span_recall, 1.0);
    assert_eq!((m.covered_chars, m.evidence_chars), (7, 7));
    assert_eq!(m.first_correct_rank, Some(2));
    assert_eq!(m.reciprocal_rank, 0.5);
    // Correct: c1 (1.0), c3 (3.0). Best wrong c0 (4.0): (3 - 4) / 4.
    assert!((m.margin - -0.25).abs() < 1e-12);
}

#[test]
fn a_span_no_chunk_holds_whole_is_unreachable() {
    let m = score(&question(vec![vec![loc(0, 10, 35)]]), 2);
    assert!(m.unreachable);
    assert_eq!(m.margin, -1.0);
    assert_eq!(m.first_correct_rank, None);
    assert_eq!(m.reciprocal_rank, 0.0);
    // c0 = [0,30) covers [10,30): 20 of 25.
    assert!((m.coverage - 0.8).abs() < 1e-12);
}

#[test]
fn margin_is_positive_when_the_correct_chunk_leads() {
    // Span inside c0 only ([0,12) is “Zoë’s café”), which scores 4.0; best wrong is c3 (3.0).
    let m = score(&question(vec![vec![loc(0, 0, 12)]]), 1);
    assert!((m.margin - 0.25).abs() < 1e-12);
    assert_eq!(m.reciprocal_rank, 1.0);
}

#[test]
fn macro_and_micro_means_differ_as_defined() {
    let one = score(&question(vec![vec![loc(0, 0, 12)]]), 1); // 1 of 1 span
    let two = score(&two_spans(), 2); // 0 of 2 spans
    let agg = aggregate(&[one, two]);
    assert_eq!(agg.n_questions, 2);
    assert!((agg.span_recall - 0.5).abs() < 1e-12);
    assert!((agg.span_recall_micro - 1.0 / 3.0).abs() < 1e-12);
    assert!((agg.hit_rate - 0.5).abs() < 1e-12);
    // Coverage: macro (1 + 0.1) / 2; micro (12 + 5) / (12 + 50).
    assert!((agg.coverage - 0.55).abs() < 1e-12);
    assert!((agg.coverage_micro - 17.0 / 62.0).abs() < 1e-12);
    assert!((agg.margin - (0.25 - 0.5) / 2.0).abs() < 1e-12);
    assert_eq!(agg.unreachable, 0);
}
