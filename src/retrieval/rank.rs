//! Top-k ranking of a dense score vector, with ties broken by chunk order and a flag when the
//! top-k cut falls inside a group of tied scores.

/// Scores closer than this are a tie for `ties_at_k`. Scores are `f64`; equal statistics give
/// bitwise-equal BM25 scores, and 1e-9 also absorbs the last-bit differences that summing the
/// same terms in another order can make.
pub const TIE_EPSILON: f64 = 1e-9;

/// The top-k of one query.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    /// Chunk indices, best first; `min(k, number of chunks)` of them.
    pub top: Vec<usize>,
    /// Their scores.
    pub scores: Vec<f64>,
    /// Whether the score at rank k equals (within [`TIE_EPSILON`]) the score at rank k + 1, so the
    /// tie-break, not the retriever, decided which chunk made the cut.
    pub tie_at_k: bool,
}

/// Ranks `scores` (one per chunk) and keeps the best `k`: higher score first, equal scores in
/// chunk order (lower index first). Chunks with score 0 are ranked too, as the seed harness does.
/// One pass over the scores keeping the best `k + 1` in order (O(n · k), no copy of the n
/// indices).
pub fn rank_top_k(scores: &[f64], k: usize) -> Ranking {
    let n = scores.len();
    let want = (k + 1).min(n);
    // Whether chunk `a` ranks before chunk `b`.
    let before = |a: usize, b: usize| match scores[a].total_cmp(&scores[b]) {
        std::cmp::Ordering::Equal => a < b,
        o => o == std::cmp::Ordering::Greater,
    };
    let mut idx: Vec<usize> = Vec::with_capacity(want + 1);
    if want > 0 {
        for i in 0..n {
            if idx.len() == want {
                if !before(i, idx[want - 1]) {
                    continue;
                }
                idx.pop();
            }
            let at = idx.partition_point(|&j| before(j, i));
            idx.insert(at, i);
        }
    }
    let tie_at_k = k < n && k > 0 && (scores[idx[k - 1]] - scores[idx[k]]).abs() <= TIE_EPSILON;
    idx.truncate(k.min(n));
    Ranking {
        scores: idx.iter().map(|&i| scores[i]).collect(),
        top: idx,
        tie_at_k,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_are_broken_by_chunk_order_and_flagged_at_the_cut() {
        let scores = [1.0, 3.0, 2.0, 3.0, 2.0];
        let r = rank_top_k(&scores, 3);
        assert_eq!(r.top, vec![1, 3, 2]);
        assert_eq!(r.scores, vec![3.0, 3.0, 2.0]);
        assert!(
            r.tie_at_k,
            "rank 3 (chunk 2) and rank 4 (chunk 4) both score 2"
        );
        let r = rank_top_k(&scores, 2);
        assert_eq!(r.top, vec![1, 3]);
        assert!(!r.tie_at_k);
    }

    #[test]
    fn the_one_pass_top_k_equals_a_full_sort() {
        // Scores with many ties and a few distinct values, in a scrambled order.
        let scores: Vec<f64> = (0..500).map(|i| f64::from((i * 7919) % 13 / 3)).collect();
        let mut all: Vec<usize> = (0..scores.len()).collect();
        all.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        for k in [1, 2, 5, 40, 499, 500, 800] {
            let r = rank_top_k(&scores, k);
            assert_eq!(r.top, all[..k.min(500)].to_vec(), "k = {k}");
            let tie = k < 500 && scores[all[k - 1]] == scores[all[k]];
            assert_eq!(r.tie_at_k, tie, "k = {k}");
        }
        assert!(rank_top_k(&scores, 0).top.is_empty());
        assert!(rank_top_k(&[], 3).top.is_empty());
    }

    #[test]
    fn k_larger_than_the_index_returns_everything() {
        let r = rank_top_k(&[0.5, 0.5], 5);
        assert_eq!(r.top, vec![0, 1]);
        assert!(!r.tie_at_k);
    }
}
