//! The baseline and the run under test, question by question: their sweep_questions.csv rows
//! for the same question at the same cut, and, for a question that got worse, where its
//! evidence went.

use std::collections::HashMap;

use serde::Serialize;

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
    /// Chunks retrieved at the cut.
    pub chunks_retrieved: usize,
}

impl From<&QuestionRow> for Retrieved {
    fn from(row: &QuestionRow) -> Self {
        Retrieved {
            span_recall: row.span_recall,
            unreachable: row.unreachable == 1,
            first_correct_rank: row.first_correct_rank,
            chunks_retrieved: row.chunks_retrieved,
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
}

impl Fate {
    /// Where the evidence of a question went, from what the run under test retrieved.
    pub fn of(now: &Retrieved) -> Fate {
        match now.first_correct_rank {
            _ if now.unreachable => Fate::CutByBoundary,
            Some(rank) if rank > now.chunks_retrieved => Fate::RetrievedLower,
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
/// under test (each one configuration at one cut). A question id missing from either side is
/// left out.
pub fn pair(shared: &[String], baseline: &[QuestionRow], now: &[QuestionRow]) -> Vec<QuestionPair> {
    let by_id = |rows: &[QuestionRow]| -> HashMap<String, Retrieved> {
        rows.iter()
            .map(|r| (r.question_id.clone(), Retrieved::from(r)))
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
            pair.fate = pair.worse().then(|| Fate::of(c));
            Some(pair)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now(unreachable: bool, rank: Option<usize>, retrieved: usize) -> Retrieved {
        Retrieved {
            span_recall: 0.0,
            unreachable,
            first_correct_rank: rank,
            chunks_retrieved: retrieved,
        }
    }

    #[test]
    fn the_evidence_is_cut_retrieved_lower_partly_lower_or_missing() {
        assert_eq!(Fate::of(&now(true, None, 3)), Fate::CutByBoundary);
        assert_eq!(Fate::of(&now(false, Some(7), 3)), Fate::RetrievedLower);
        assert_eq!(Fate::of(&now(false, Some(2), 3)), Fate::PartlyLower);
        assert_eq!(Fate::of(&now(false, None, 3)), Fate::Missing);
    }
}
