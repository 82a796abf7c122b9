//! What one query's ranked list ([`Ranked`]) gives the metrics: the facts of the whole list
//! (the first correct rank and the margin, [`rank_facts`]) and the list read at each cut
//! ([`Depth`], [`cut_ranking`]). A configuration is retrieved once per question; every cut is
//! read from that one list. See [`crate::retrieval::retriever`] for what a retriever that returns
//! only a top-n gives each metric.

use super::{ChunkTable, Cut, fit_budget};
use crate::golden::Question;
use crate::retrieval::rank::TIE_EPSILON;
use crate::retrieval::retriever::cut_head;
use crate::retrieval::{Hit, MarginScale, Ranked, Ranking};

/// What a question's whole ranked list says, whatever the cut.
#[derive(Debug, Clone, PartialEq)]
pub struct RankFacts {
    /// No chunk of the index holds any evidence span whole.
    pub unreachable: bool,
    /// Normalised margin (see [`crate::metrics`]); −1 when unreachable.
    pub margin: f64,
    /// 1-based rank of the first correct chunk in the list; `None` when unreachable, or when a
    /// top-n list holds no correct chunk.
    pub first_correct_rank: Option<usize>,
    /// The correct chunks (each wholly holds an evidence span at one of its locations), as
    /// sorted chunk indices; empty when unreachable. MRR reads the first of them a cut takes.
    pub correct: Vec<usize>,
}

/// How deep a configuration's ranked lists are read for a set of cuts, worked out once per
/// configuration from its chunks' token counts (prefixes included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Depth {
    /// Hits the deepest cut can read, plus one for its tie flag: `max(k, n_b) + 1`, where `n_b`
    /// is how many of the smallest chunks fit the largest budget (at least 1). The depth a
    /// retriever is asked for; no cut takes more.
    pub ask: usize,
    /// Hits ranked first for a budget: twice the chunks of mean size the largest budget holds
    /// (at least `k + 1` and 16), so that one pass usually reaches past the budget.
    start: usize,
    /// The largest k of the cuts (0 without one).
    max_k: usize,
    /// The largest budget of the cuts.
    budget: Option<usize>,
}

impl Depth {
    /// The depth for `cuts` over chunks of `chunk_tokens` tokens.
    pub fn new(cuts: &[Cut], chunk_tokens: &[usize]) -> Self {
        let max_k = cuts.iter().map(|c| c.top_k()).max().unwrap_or(0);
        let mut sorted = chunk_tokens.to_vec();
        sorted.sort_unstable();
        // Per budget: the smallest chunks that fit it, plus every chunk larger than it (a top-n
        // list may rank all of those first, and they are skipped).
        let fits = cuts
            .iter()
            .filter_map(|c| c.budget_tokens())
            .map(|b| {
                let over = sorted.iter().filter(|&&t| t > b).count();
                fit_budget(sorted.iter().copied(), b).taken.len().max(1) + over
            })
            .max()
            .unwrap_or(0);
        let budget = cuts.iter().filter_map(|c| c.budget_tokens()).max();
        let start = budget.map_or(0, |b| {
            let total: usize = sorted.iter().sum();
            let mean = total.div_ceil(sorted.len().max(1)).max(1);
            (2 * b.div_ceil(mean)).max(16)
        });
        Depth {
            ask: max_k.max(fits) + 1,
            start: start.max(max_k + 1),
            max_k,
            budget,
        }
    }

    /// The leading hits of `ranked` that every cut reads, with the hit after the deepest cut
    /// (for its tie flag) when the list has one: at least `k + 1` hits, and enough that the
    /// largest budget is cut inside them ([`fit_budget`] stops; or the whole list). A budget's
    /// first pass ranks [`Depth::start`] hits and doubles while the budget is not cut inside
    /// them, so a budget that takes a handful of chunks never ranks the whole index.
    pub fn head(&self, ranked: &Ranked, chunk_tokens: &[usize]) -> Vec<Hit> {
        let n = ranked.len();
        let Some(budget) = self.budget else {
            return ranked.head(self.max_k + 1);
        };
        let mut depth = self.start.min(n);
        loop {
            let head = ranked.head(depth);
            let fit = fit_budget(head.iter().map(|h| chunk_tokens[h.chunk]), budget);
            if fit.stop.is_some() || depth >= n {
                return head;
            }
            depth = (depth * 2).min(n);
        }
    }
}

/// A cut of one question's ranked list: what is sent, and how many chunks a budget passed over.
#[derive(Debug, Clone, PartialEq)]
pub struct CutList {
    /// The chunks sent, best first, with the tie flag at the cut.
    pub ranking: Ranking,
    /// The 1-based rank in the ranked list of each chunk sent (`ranking.top`'s order): a
    /// budget cut may skip a chunk larger than the whole budget and take the ones after it.
    pub ranks: Vec<usize>,
    /// Budget cuts: chunks ranked before the cut that were skipped because each alone is larger
    /// than the budget ([`fit_budget`]); 0 for a top-k cut.
    pub skipped_for_size: usize,
}

/// The ranked list's `head` (from [`Depth::head`]) cut at `cut`: the top k, or the chunks that
/// [fit](fit_budget) the budget given each chunk's `chunk_tokens` (prefixes included; never more
/// than the budget in all), with the tie flag at the cut (a budget cut: between the last chunk
/// taken and the chunk that stopped it).
///
/// # Panics
/// If a hit names a chunk beyond `chunk_tokens`.
pub fn cut_ranking(head: &[Hit], cut: Cut, chunk_tokens: &[usize]) -> CutList {
    match cut {
        Cut::K(k) => {
            let ranking = cut_head(head, k);
            CutList {
                ranks: (1..=ranking.top.len()).collect(),
                ranking,
                skipped_for_size: 0,
            }
        }
        Cut::Budget(b) => {
            let fit = fit_budget(head.iter().map(|h| chunk_tokens[h.chunk]), b);
            let tie_at_k = match (fit.taken.last(), fit.stop) {
                (Some(&last), Some(stop)) => {
                    (head[last].score - head[stop].score).abs() <= TIE_EPSILON
                }
                _ => false,
            };
            CutList {
                ranking: Ranking {
                    top: fit.taken.iter().map(|&i| head[i].chunk).collect(),
                    scores: fit.taken.iter().map(|&i| head[i].score).collect(),
                    tie_at_k,
                },
                ranks: fit.taken.iter().map(|&i| i + 1).collect(),
                skipped_for_size: fit.skipped_for_size,
            }
        }
    }
}

/// The margin and the first correct rank of `question` over its ranked list, with the
/// retriever's `scale` (definitions in [`crate::metrics`]; for a top-n list, the rules of
/// [`crate::retrieval::retriever`]).
pub fn rank_facts(
    question: &Question,
    table: &ChunkTable<'_>,
    ranked: &Ranked,
    scale: MarginScale,
) -> RankFacts {
    let mut correct: Vec<usize> = question
        .spans
        .iter()
        .flat_map(|s| s.locations.iter())
        .flat_map(|loc| table.containing(loc))
        .collect();
    correct.sort_unstable();
    correct.dedup();
    if correct.is_empty() {
        return RankFacts {
            unreachable: true,
            margin: -1.0,
            first_correct_rank: None,
            correct,
        };
    }
    let (best_correct, best_wrong, top_score, first_correct_rank) = match ranked {
        Ranked::Every(scores) => over_every(scores, &correct),
        Ranked::Top(hits) => over_top(hits, &correct, table.chunks().len()),
    };
    let diff = best_correct - best_wrong;
    let margin = match scale {
        MarginScale::TopScore if top_score > 0.0 => diff / top_score,
        MarginScale::TopScore => 0.0,
        MarginScale::Raw => diff,
        MarginScale::Divide(d) => diff / d,
    };
    RankFacts {
        unreachable: false,
        margin,
        first_correct_rank,
        correct,
    }
}

/// Best correct score, best wrong score (0 when every chunk is correct), top score (at least 0)
/// and the first correct rank, over a score for every chunk; `correct` is sorted and not empty.
fn over_every(scores: &[f64], correct: &[usize]) -> (f64, f64, f64, Option<usize>) {
    let best_correct = correct
        .iter()
        .copied()
        .fold(correct[0], |b, i| if scores[i] > scores[b] { i } else { b });
    // one pass: the top score (at least 0), the best score of a chunk not in `correct` (sorted,
    // so walked alongside), and the chunks ranked before the best correct one (higher score,
    // or equal and earlier in chunk order, as `rank_top_k` orders them)
    let target = scores[best_correct];
    let mut top_score = 0.0f64;
    let mut best_wrong: Option<f64> = None;
    let mut before = 0usize;
    let mut next_correct = correct.iter().copied().peekable();
    for (i, &s) in scores.iter().enumerate() {
        top_score = top_score.max(s);
        if next_correct.next_if_eq(&i).is_none() {
            best_wrong = Some(best_wrong.map_or(s, |a| a.max(s)));
        }
        before += usize::from(s > target || (s == target && i < best_correct));
    }
    (
        target,
        best_wrong.unwrap_or(0.0),
        top_score,
        Some(before + 1),
    )
}

/// As [`over_every`] over a top-n list of an index of `n_chunks` chunks: a chunk the list does
/// not hold counts as scoring the last hit's score; an empty list gives a margin of 0.
fn over_top(hits: &[Hit], correct: &[usize], n_chunks: usize) -> (f64, f64, f64, Option<usize>) {
    let Some(last) = hits.last() else {
        return (0.0, 0.0, 0.0, None);
    };
    let complete = hits.len() >= n_chunks;
    let is_correct = |h: &&Hit| correct.binary_search(&h.chunk).is_ok();
    let first_correct = hits.iter().position(|h| is_correct(&h));
    let best_correct = first_correct.map_or(last.score, |i| hits[i].score);
    let best_wrong = match hits.iter().find(|h| !is_correct(h)) {
        Some(h) => h.score,
        None if complete => 0.0,
        None => last.score,
    };
    (
        best_correct,
        best_wrong,
        hits[0].score.max(0.0),
        first_correct.map(|i| i + 1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn over_every_agrees_with_a_full_sort_with_ties() {
        // few distinct scores, so most chunks tie with others
        let scores: Vec<f64> = (0..300).map(|i| f64::from((i * 7919) % 11 / 2)).collect();
        let mut order: Vec<usize> = (0..scores.len()).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        for correct in [vec![0], vec![5, 17, 299], (100..140).collect::<Vec<_>>()] {
            let (best, wrong, top, rank) = over_every(&scores, &correct);
            let first = order.iter().position(|i| correct.contains(i)).unwrap();
            assert_eq!(rank, Some(first + 1), "{correct:?}");
            assert_eq!(best, scores[order[first]]);
            let first_wrong = order.iter().find(|i| !correct.contains(i)).unwrap();
            assert_eq!(wrong, scores[*first_wrong]);
            assert_eq!(top, scores[order[0]]);
        }
    }
}
