//! Where a worse question's evidence went, in words: check.md's last column of "Questions that
//! got worse" ([`super::compare::Fate`]).

use super::compare::{Fate, QuestionPair, Retrieved};

/// Where a worse question's evidence went, in words.
pub fn fate_text(q: &QuestionPair) -> String {
    let rank =
        |r: Option<usize>| r.map_or_else(|| "not ranked".to_string(), |r| format!("rank {r}"));
    let (before, now) = (&q.baseline, &q.candidate);
    match q.fate {
        Some(Fate::CutByBoundary) => "cut by a boundary: no chunk holds the evidence whole".into(),
        Some(Fate::RetrievedLower) => format!(
            "retrieved lower: first whole at {} (baseline {}), below the {}",
            rank(now.first_correct_rank),
            rank(before.first_correct_rank),
            retrieved(now)
        ),
        Some(Fate::PartlyLower) => format!(
            "partly retrieved: a span is whole at {}, another below the {}",
            rank(now.first_correct_rank),
            retrieved(now)
        ),
        Some(Fate::Missing) => {
            "missing: no chunk in the retriever's list holds the evidence".into()
        }
        Some(Fate::NotSent) => format!(
            "no longer sent: {}, but the units sent now ({}) hold less of it than the baseline's ({})",
            ranked_as_before(now),
            sent(now),
            sent(before)
        ),
        Some(Fate::FewerTaken) => format!(
            "the budget no longer takes it: its first whole chunk is at {} in both, taken by the baseline ({}) but not now ({}: its unit is over what is left of the budget, or over the whole budget)",
            rank(now.first_correct_rank),
            sent(before),
            sent(now)
        ),
        None => String::new(),
    }
}

/// What one side's cut retrieved, after "below the": `10 retrieved`, or under an expansion
/// `hits taken (3 units sent, neighbours:1)`.
fn retrieved(r: &Retrieved) -> String {
    match r.expand.is_expanded() {
        true => format!("hits taken ({})", sent(r)),
        false => format!("{} retrieved", r.chunks_retrieved),
    }
}

/// One side's units in a few words: `expand none, 10 sent`.
fn sent(r: &Retrieved) -> String {
    format!("expand {}, {} sent", r.expand, r.chunks_retrieved)
}

/// Where the evidence ranks on both sides: `its first whole chunk is at rank 16 in both`, or
/// `no chunk holds it whole in either`.
fn ranked_as_before(r: &Retrieved) -> String {
    match r.first_correct_rank {
        _ if r.unreachable => "no chunk holds it whole in either run".into(),
        Some(rank) => format!("its first whole chunk is at rank {rank} in both"),
        None => "no chunk in either retriever's list holds it whole".into(),
    }
}
