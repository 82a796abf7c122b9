//! The baseline and the run under test, question by question: their sweep_questions.csv rows
//! for the same question at the same cut, and, for a question that got worse, where its
//! evidence went.

use std::collections::HashMap;

use serde::Serialize;

use crate::expand::Expand;
use crate::stats::SIGN_TIE;
use crate::sweep::rows::QuestionRow;

/// What one side retrieved for one question.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Retrieved {
    /// Span recall at the cut.
    pub span_recall: f64,
    /// Whether no chunk holds any evidence span whole.
    pub unreachable: bool,
    /// Rank of the first chunk holding a span whole, in the whole ranking (`None`:
    /// unreachable, or not in a top-n retriever's list).
    pub first_correct_rank: Option<usize>,
    /// Chunks retrieved at the cut; under an expansion, the units sent.
    pub chunks_retrieved: usize,
    /// Whether the cut took the hit at `first_correct_rank` (the reciprocal rank is
    /// `1 / first_correct_rank`; a budget skips a hit larger than the whole budget): under an expansion the hits taken are not the units sent, so the rank cannot be
    /// compared with `chunks_retrieved`.
    pub first_correct_taken: bool,
    /// What its configuration sends for each hit ([`crate::expand`]).
    pub expand: Expand,
}

impl Retrieved {
    /// One side's row, under its configuration's expansion `expand`.
    pub fn of(row: &QuestionRow, expand: Expand) -> Self {
        Retrieved {
            span_recall: row.span_recall,
            unreachable: row.unreachable == 1,
            first_correct_rank: row.first_correct_rank,
            chunks_retrieved: row.chunks_retrieved,
            // the reciprocal rank reads the first correct hit taken: the one at
            // `first_correct_rank` when that hit was taken, a lower one when it was skipped
            first_correct_taken: row
                .first_correct_rank
                .is_some_and(|r| (row.reciprocal_rank * r as f64 - 1.0).abs() < 1e-9),
            expand,
        }
    }
}

/// Where a question's evidence went when its span recall fell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    /// Cut by a boundary: no chunk holds an evidence span whole any more.
    CutByBoundary,
    /// Retrieved lower: a chunk holds the evidence whole, but it ranks below the cut.
    RetrievedLower,
    /// Partly lower: the first chunk holding a span is retrieved, but another span's is not.
    PartlyLower,
    /// Missing: the retriever's list holds no chunk with the evidence (a top-n retriever).
    Missing,
    /// Not sent: the expansion changed, the evidence's first whole chunk is at the same rank
    /// (or no chunk holds it whole, on both sides) and the cut takes it as before, but the
    /// units sent now hold less of the evidence.
    NotSent,
    /// Fewer taken: the expansion changed, the evidence's first whole chunk is at the same
    /// rank, the baseline's budget took it and today's does not (its units cost more).
    FewerTaken,
}

impl Fate {
    /// Where the evidence of a question went, from what the baseline and the run under test
    /// retrieved. When only what is sent can explain it (the expansions differ and the
    /// evidence ranks as before), [`Fate::FewerTaken`] or [`Fate::NotSent`]; otherwise from
    /// the run under test alone.
    pub fn of(before: &Retrieved, now: &Retrieved) -> Fate {
        let ranked_as_before = before.expand != now.expand
            && before.first_correct_rank == now.first_correct_rank
            && before.unreachable == now.unreachable;
        if ranked_as_before {
            return match before.first_correct_taken && !now.first_correct_taken {
                true => Fate::FewerTaken,
                false => Fate::NotSent,
            };
        }
        match now.first_correct_rank {
            _ if now.unreachable => Fate::CutByBoundary,
            Some(_) if !now.first_correct_taken => Fate::RetrievedLower,
            Some(_) => Fate::PartlyLower,
            None => Fate::Missing,
        }
    }
}

/// One question both runs scored: its span recall before and now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuestionPair {
    /// Question id.
    pub question_id: String,
    /// The baseline's.
    pub baseline: Retrieved,
    /// The run under test's.
    pub candidate: Retrieved,
    /// Where its evidence went, when its span recall fell.
    pub fate: Option<Fate>,
}

impl QuestionPair {
    /// Span recall now minus before (negative: worse).
    pub fn difference(&self) -> f64 {
        self.candidate.span_recall - self.baseline.span_recall
    }

    /// Whether span recall fell (by more than rounding, [`SIGN_TIE`]).
    pub fn worse(&self) -> bool {
        self.difference() < -SIGN_TIE
    }

    /// Whether span recall rose (by more than rounding).
    pub fn better(&self) -> bool {
        self.difference() > SIGN_TIE
    }
}

/// The pairs of the questions `shared` (in that order) from the baseline's rows and the rows
/// under test (each one configuration at one cut, with its expansion). A question id missing
/// from either side is left out.
pub fn pair(
    shared: &[String],
    baseline: (&[QuestionRow], Expand),
    now: (&[QuestionRow], Expand),
) -> Vec<QuestionPair> {
    let by_id = |(rows, expand): (&[QuestionRow], Expand)| -> HashMap<String, Retrieved> {
        rows.iter()
            .map(|r| (r.question_id.clone(), Retrieved::of(r, expand)))
            .collect()
    };
    let (before, after) = (by_id(baseline), by_id(now));
    shared
        .iter()
        .filter_map(|id| {
            let (b, c) = (before.get(id)?, after.get(id)?);
            let mut pair = QuestionPair {
                question_id: id.clone(),
                baseline: *b,
                candidate: *c,
                fate: None,
            };
            pair.fate = pair.worse().then(|| Fate::of(b, c));
            Some(pair)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(rank: Option<usize>, taken: bool, retrieved: usize, expand: Expand) -> Retrieved {
        Retrieved {
            span_recall: 0.0,
            unreachable: false,
            first_correct_rank: rank,
            chunks_retrieved: retrieved,
            first_correct_taken: taken,
            expand,
        }
    }

    fn now(unreachable: bool, rank: Option<usize>, taken: bool) -> Retrieved {
        Retrieved {
            unreachable,
            ..side(rank, taken, 3, Expand::None)
        }
    }

    #[test]
    fn the_first_correct_hit_is_taken_only_when_its_reciprocal_rank_is_counted() {
        let row = |rank: Option<usize>, rr: f64| QuestionRow {
            config_id: "c".into(),
            cut: "budget".into(),
            budget_tokens: Some(700),
            question_id: "q".into(),
            question_type: String::new(),
            n_spans: 1,
            hit: 0,
            span_recall: 0.0,
            coverage: 0.0,
            margin: 0.0,
            unreachable: 0,
            first_correct_rank: rank,
            reciprocal_rank: rr,
            char_iou: 0.0,
            char_precision: 0.0,
            char_recall: 0.0,
            tie_at_k: 0,
            chunks_retrieved: 1,
            tokens_retrieved: 600,
            span_tokens: String::new(),
            retrieved_chunk_ids: String::new(),
            retrieved_scores: String::new(),
            retrieved_ranges: String::new(),
        };
        let taken = |rank, rr| Retrieved::of(&row(rank, rr), Expand::None).first_correct_taken;
        assert!(taken(Some(1), 1.0));
        assert!(taken(Some(3), 1.0 / 3.0));
        // rank 1 skipped for size, a correct chunk at rank 3 sent
        assert!(!taken(Some(1), 1.0 / 3.0));
        assert!(!taken(Some(1), 0.0));
        assert!(!taken(None, 0.0));
    }

    #[test]
    fn the_evidence_is_cut_retrieved_lower_partly_lower_or_missing() {
        let before = side(Some(1), true, 3, Expand::None);
        let of = |now| Fate::of(&before, &now);
        assert_eq!(of(now(true, None, false)), Fate::CutByBoundary);
        assert_eq!(of(now(false, Some(7), false)), Fate::RetrievedLower);
        assert_eq!(of(now(false, Some(2), true)), Fate::PartlyLower);
        assert_eq!(of(now(false, None, false)), Fate::Missing);
    }

    #[test]
    fn an_expanded_cut_reads_the_hits_taken_not_the_units_sent() {
        // 2 units sent hold hits 1 to 6: rank 5 was taken, though 5 > 2
        let before = side(Some(1), true, 3, Expand::Neighbours(1));
        let now = side(Some(5), true, 2, Expand::Neighbours(1));
        assert_eq!(Fate::of(&before, &now), Fate::PartlyLower);
    }

    #[test]
    fn only_the_expansion_changed_names_what_is_sent() {
        let parent = Expand::Parent(1024);
        // the baseline's parent of a higher hit held the span; its chunk (rank 16) is taken
        // by neither
        let before = side(Some(16), false, 4, parent);
        let now = side(Some(16), false, 10, Expand::None);
        assert_eq!(Fate::of(&before, &now), Fate::NotSent);
        // the baseline's budget took rank 4, the larger units sent now stop above it
        let before = side(Some(4), true, 10, Expand::None);
        let now = side(Some(4), false, 2, parent);
        assert_eq!(Fate::of(&before, &now), Fate::FewerTaken);
        // no chunk holds it whole on either side: only the units sent could hold it
        let unreachable = |expand| Retrieved {
            unreachable: true,
            ..side(None, false, 3, expand)
        };
        assert_eq!(
            Fate::of(&unreachable(parent), &unreachable(Expand::None)),
            Fate::NotSent
        );
        // the same expansion and rank: what the run under test retrieved
        let before = side(Some(16), false, 4, parent);
        assert_eq!(Fate::of(&before, &before), Fate::RetrievedLower);
    }
}
