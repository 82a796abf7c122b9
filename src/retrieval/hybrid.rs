//! Hybrid retrieval by reciprocal rank fusion (RRF; Cormack, Clarke & Büttcher, "Reciprocal
//! rank fusion outperforms Condorcet and individual rank learning methods", SIGIR 2009).
//!
//! Each retriever ranks every chunk of the configuration (1-based, higher score first); chunks
//! whose scores tie (within [`crate::retrieval::rank::TIE_EPSILON`] of the group's best) share
//! the mean of the ranks they span (fractional ranking: scores 9, 5, 5, 1 rank 1, 2.5, 2.5, 4), so
//! equal inputs give equal fused scores. A chunk's fused score is `Σ_r w_r / (k + rank_r(chunk))`,
//! with `k = 60` by default (the paper's constant) and one weight per retriever (BM25 and dense, 1
//! each by default). Ties of the fused scores are then ties as for any retriever: counted in
//! `ties_at_k` and ordered by chunk order ([`crate::retrieval::rank_top_k`]).
//!
//! **Scale.** Fused scores lie in `(0, W / (k + 1)]` with `W = Σ w_r`: the maximum is reached by
//! a chunk ranked first by every retriever. Raw differences are tiny (two chunks at ranks 1 and 2
//! of one list differ by `w / 61 − w / 62 ≈ 0.00026 w`), so the margin divides the difference by
//! that maximum `W / (k + 1)` (see [`HybridSettings::max_score`] and
//! [`crate::metrics::MarginScale::Divide`]): a fixed, query-independent scale on which 1 is
//! "first in every list", comparable across chunk sizes and configurations.

use serde::{Deserialize, Serialize};

use super::rank::TIE_EPSILON;

/// Settings of the fusion.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HybridSettings {
    /// The RRF constant `k` (default 60, Cormack et al. 2009). Larger values flatten the
    /// difference between top ranks.
    pub rrf_k: f64,
    /// Weight of the BM25 ranking (default 1).
    pub bm25_weight: f64,
    /// Weight of the dense ranking (default 1).
    pub dense_weight: f64,
}

impl Default for HybridSettings {
    fn default() -> Self {
        HybridSettings {
            rrf_k: 60.0,
            bm25_weight: 1.0,
            dense_weight: 1.0,
        }
    }
}

impl HybridSettings {
    /// The largest fused score, `(bm25_weight + dense_weight) / (rrf_k + 1)`.
    pub fn max_score(&self) -> f64 {
        (self.bm25_weight + self.dense_weight) / (self.rrf_k + 1.0)
    }

    /// Checks `rrf_k >= 0`, weights >= 0 and finite, and a positive weight sum.
    ///
    /// # Errors
    /// A message naming the bad setting.
    pub fn validate(&self) -> Result<(), String> {
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        if !ok(self.rrf_k) || !ok(self.bm25_weight) || !ok(self.dense_weight) {
            return Err("hybrid.rrf_k and the hybrid weights must be finite and >= 0".into());
        }
        if self.bm25_weight + self.dense_weight <= 0.0 {
            return Err("hybrid.bm25_weight + hybrid.dense_weight must be > 0".into());
        }
        Ok(())
    }

    /// Fused scores of BM25 scores and dense scores (each one per chunk, chunk order).
    pub fn fuse(&self, bm25: &[f64], dense: &[f64]) -> Vec<f64> {
        rrf(
            &[(self.bm25_weight, bm25), (self.dense_weight, dense)],
            self.rrf_k,
        )
    }
}

/// 1-based rank of every chunk under `scores` (higher first); tied chunks (within
/// [`TIE_EPSILON`] of the best score of their group) share the mean of the ranks they span.
pub fn ranks(scores: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    idx.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b)));
    let mut out = vec![0.0; scores.len()];
    let mut first = 0;
    while first < idx.len() {
        let top = scores[idx[first]];
        let end = first
            + idx[first..]
                .iter()
                .take_while(|&&i| (top - scores[i]).abs() <= TIE_EPSILON)
                .count();
        // positions first..end (0-based) are ranks first + 1 ..= end; their mean
        let shared = (first + 1 + end) as f64 / 2.0;
        for &i in &idx[first..end] {
            out[i] = shared;
        }
        first = end;
    }
    out
}

/// Reciprocal rank fusion of weighted score lists (all of the same length):
/// `Σ w / (k + rank)` per chunk, with the shared ranks of [`ranks`].
pub fn rrf(lists: &[(f64, &[f64])], k: f64) -> Vec<f64> {
    let n = lists.first().map_or(0, |l| l.1.len());
    let mut fused = vec![0.0f64; n];
    for (w, scores) in lists {
        assert_eq!(scores.len(), n, "every list scores every chunk");
        for (i, r) in ranks(scores).into_iter().enumerate() {
            fused[i] += w / (k + r);
        }
    }
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rrf_on_hand_made_ranks() {
        // BM25 ranks: c0=1, c1=2, c2=3, c3=4. Dense ranks: c2=1, c3=2, c1=3, c0=4.
        let bm25 = [9.0, 5.0, 3.0, 1.0];
        let dense = [0.1, 0.2, 0.9, 0.5];
        assert_eq!(ranks(&bm25), vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(ranks(&dense), vec![4.0, 3.0, 1.0, 2.0]);
        let s = HybridSettings::default().fuse(&bm25, &dense);
        let want = [
            1.0 / 61.0 + 1.0 / 64.0,
            1.0 / 62.0 + 1.0 / 63.0,
            1.0 / 63.0 + 1.0 / 61.0,
            1.0 / 64.0 + 1.0 / 62.0,
        ];
        for (g, w) in s.iter().zip(want) {
            assert!((g - w).abs() < 1e-15, "{s:?}");
        }
        // c2 (3rd and 1st) beats c0 (1st and 4th) and c1 (2nd and 3rd).
        assert_eq!(crate::retrieval::rank_top_k(&s, 4).top, vec![2, 0, 1, 3]);
        // With k = 0 and dense weighted 0, the fusion is BM25's order.
        let only_bm25 = HybridSettings {
            rrf_k: 0.0,
            bm25_weight: 1.0,
            dense_weight: 0.0,
        };
        let s = only_bm25.fuse(&bm25, &dense);
        assert_eq!(s, vec![1.0, 0.5, 1.0 / 3.0, 0.25]);
        assert!((HybridSettings::default().max_score() - 2.0 / 61.0).abs() < 1e-12);
    }

    #[test]
    fn tied_scores_share_the_mean_of_their_ranks() {
        assert_eq!(ranks(&[1.0, 2.0, 2.0, 0.0]), vec![3.0, 1.5, 1.5, 4.0]);
        assert_eq!(
            ranks(&[0.0, 5.0, 0.0, 0.0, 5.0 + 1e-12]),
            vec![4.0, 1.5, 4.0, 4.0, 1.5]
        );
        assert!(
            HybridSettings {
                bm25_weight: 0.0,
                dense_weight: 0.0,
                ..Default::default()
            }
            .validate()
            .is_err()
        );
    }

    #[test]
    fn ties_survive_fusion_and_are_counted_at_the_cut() {
        // c1 and c2 tie in BM25 and in dense; c0 leads both; c3 is last in both.
        let bm25 = [9.0, 4.0, 4.0, 0.0];
        let dense = [0.9, 0.5, 0.5, 0.1];
        let s = HybridSettings::default().fuse(&bm25, &dense);
        // ranks 1, 2.5, 2.5, 4 in both lists
        assert_eq!(s[1], s[2], "equal inputs, equal fused scores");
        assert!((s[1] - 2.0 / 62.5).abs() < 1e-15, "{s:?}");
        assert!((s[0] - 2.0 / 61.0).abs() < 1e-15, "{s:?}");
        let top = crate::retrieval::rank_top_k(&s, 2);
        // the documented rule orders the tie by chunk order, and the cut at k = 2 is flagged
        assert_eq!(top.top, vec![0, 1]);
        assert!(top.tie_at_k);
        assert!(!crate::retrieval::rank_top_k(&s, 3).tie_at_k);
        // a tie in one list only is broken by the other list
        let s = HybridSettings::default().fuse(&bm25, &[0.9, 0.4, 0.5, 0.1]);
        assert_eq!(crate::retrieval::rank_top_k(&s, 4).top, vec![0, 2, 1, 3]);
        assert!(!crate::retrieval::rank_top_k(&s, 2).tie_at_k);
    }
}
