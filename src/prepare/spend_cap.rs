//! `--max-cost` over the prepare step's paid calls (embedding requests, context calls, rerank
//! requests): the cap ([`SpendCap`]) and its refusals ([`SpendCapError`]). The estimate of what
//! a sweep would send is refused in [`crate::prepare::sweep_budget`]; the rerank requests of
//! configurations whose first stage cannot rank before the embeddings are made are checked by
//! the rerank step itself, before it sends, with what the earlier steps spent
//! ([`refuse_rerank`]).

use thiserror::Error;

use crate::budget::{self, CostEstimate, Refusal};

/// The budget of a sweep's prepare step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpendCap {
    /// The cap, USD (`--max-cost`, `[judge] max_cost_usd`).
    pub max_usd: f64,
    /// Spend already recorded in the run folder's calls.csv (the judge's, of earlier runs into
    /// it), USD. The sweep's own call files are rewritten by this sweep, so they do not count.
    pub spent_usd: f64,
}

/// A sweep refused under `--max-cost`, before it sent anything (or, for [`Self::RerankOver`],
/// before it sent any rerank request).
#[derive(Debug, Error)]
pub enum SpendCapError {
    /// The estimate plus the spend already recorded passes the cap.
    #[error(
        "the sweep is estimated at ${estimate:.4} ({what}), and ${spent:.4} is already spent in this folder: more than --max-cost ${max:.4}; nothing was sent (raise --max-cost, or sweep fewer configurations or questions: cached calls cost nothing)"
    )]
    Over {
        /// Estimated cost of the calls the caches do not answer, USD.
        estimate: f64,
        /// Spend recorded in the folder's calls.csv, USD.
        spent: f64,
        /// The cap, USD.
        max: f64,
        /// The calls counted: `3 embedding request(s), 4 rerank request(s)`.
        what: String,
    },
    /// A model the sweep would call has no price.
    #[error(
        "--max-cost ${max:.4} needs prices to hold: set {keys} for {models} in [llm.models.<name>] (or [llm.defaults]); nothing was sent"
    )]
    Unpriced {
        /// The cap, USD.
        max: f64,
        /// The models without a price.
        models: String,
        /// The price keys to set.
        keys: String,
    },
    /// Some calls cannot be counted before others are answered, so the cap cannot be held.
    #[error(
        "--max-cost ${max:.4} cannot be held: {what} cannot be counted before other calls are answered (the calls counted are estimated at {counted}); nothing was sent (run without --max-cost; `run --dry-run` shows what can be counted)"
    )]
    Uncounted {
        /// The cap, USD.
        max: f64,
        /// What cannot be counted.
        what: String,
        /// The estimate of what was counted: `$0.0012`.
        counted: String,
    },
    /// The rerank requests, counted once the first stages could rank, plus what is spent
    /// (the folder's calls.csv and this sweep's earlier steps) pass the cap.
    #[error(
        "the rerank requests are estimated at ${estimate:.4} ({requests} request(s) not in the cache), and ${spent:.4} is already spent (in this folder and by this sweep's embeddings and contexts, which stay cached): more than --max-cost ${max:.4}; no rerank request was sent (raise --max-cost and run again: cached calls cost nothing)"
    )]
    RerankOver {
        /// Estimated cost of the rerank requests the cache does not answer, USD.
        estimate: f64,
        /// Their number.
        requests: usize,
        /// Spend so far, USD.
        spent: f64,
        /// The cap, USD.
        max: f64,
    },
}

/// Refuses `requests` rerank requests estimated at `estimate_usd` (`None`: no price) when they,
/// plus `cap.spent_usd` and `spent_here_usd` (what this sweep's earlier steps spent), pass
/// `cap.max_usd`.
///
/// # Errors
/// [`SpendCapError::RerankOver`], or [`SpendCapError::Unpriced`] naming `model`.
pub fn refuse_rerank(
    cap: SpendCap,
    spent_here_usd: f64,
    requests: usize,
    estimate_usd: Option<f64>,
    model: &str,
) -> Result<(), SpendCapError> {
    let est = CostEstimate {
        calls: requests,
        cost_usd: estimate_usd,
        ..CostEstimate::default()
    };
    match budget::refusal(Some(cap.max_usd), &est, cap.spent_usd + spent_here_usd) {
        None => Ok(()),
        Some(Refusal::Unpriced { max }) => Err(SpendCapError::Unpriced {
            max,
            models: model.to_string(),
            keys: "input_usd_per_mtok, or usd_per_request (a reranker)".into(),
        }),
        Some(Refusal::Over {
            estimate,
            spent,
            max,
        }) => Err(SpendCapError::RerankOver {
            estimate,
            requests,
            spent,
            max,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(max_usd: f64, spent_usd: f64) -> SpendCap {
        SpendCap { max_usd, spent_usd }
    }

    #[test]
    fn the_rerank_step_counts_what_earlier_steps_spent() {
        assert!(refuse_rerank(cap(1.0, 0.2), 0.3, 4, Some(0.5), "rr").is_ok());
        let e = refuse_rerank(cap(1.0, 0.2), 0.31, 4, Some(0.5), "rr").unwrap_err();
        assert!(matches!(e, SpendCapError::RerankOver { requests: 4, .. }));
        assert!(matches!(
            refuse_rerank(cap(1.0, 0.0), 0.0, 4, None, "rr").unwrap_err(),
            SpendCapError::Unpriced { .. }
        ));
    }
}
