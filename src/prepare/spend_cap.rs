//! `--max-cost` over the prepare step's paid calls (embedding requests, context calls, rerank
//! requests): the estimate of what a sweep would send, counted from the caches and the grid as
//! `--dry-run` counts it ([`WouldSend`]; cached calls cost nothing), and its refusal before
//! anything is sent ([`refuse`]). The rerank requests of configurations whose first stage cannot
//! rank before the embeddings are made are checked again by the rerank step itself, before it
//! sends, with what the earlier steps spent ([`refuse_rerank`]).

use thiserror::Error;

use crate::budget::{self, CostEstimate, Refusal};
use crate::prepare::would_send::WouldSend;

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

/// What `would` sends, as one estimate: calls, tokens (cl100k_base estimates; completion tokens
/// at the context cap) and cost (`None` when a part with calls to send has no price), with the
/// parts that have no price (`embeddings`, `contexts`, `rerank`).
pub fn estimate(would: &WouldSend) -> (CostEstimate, Vec<&'static str>) {
    let mut total = CostEstimate {
        cost_usd: Some(0.0),
        ..CostEstimate::default()
    };
    let mut unpriced = Vec::new();
    if let Some(e) = would.embed.as_ref().filter(|e| e.sent > 0) {
        let cost = would.embed_priced.then_some(e.cost_usd);
        if cost.is_none() {
            unpriced.push("embeddings");
        }
        total.add(&CostEstimate {
            calls: e.requests,
            prompt_tokens: e.tokens_sent,
            completion_tokens: 0,
            cost_usd: cost,
        });
    }
    if let Some(c) = would.contexts.as_ref().filter(|c| c.calls > 0) {
        if c.cost_usd.is_none() {
            unpriced.push("contexts");
        }
        total.add(&CostEstimate {
            calls: c.calls,
            prompt_tokens: c.prompt_tokens,
            completion_tokens: c.completion_tokens,
            cost_usd: c.cost_usd,
        });
    }
    if let Some(r) = would.rerank.as_ref().filter(|r| r.sent > 0) {
        if r.cost_usd.is_none() {
            unpriced.push("rerank");
        }
        total.add(&CostEstimate {
            calls: r.sent,
            prompt_tokens: r.tokens_sent,
            completion_tokens: 0,
            cost_usd: r.cost_usd,
        });
    }
    (total, unpriced)
}

/// The calls of `would` in words: `3 embedding request(s), 4 rerank request(s)`.
fn counted_calls(would: &WouldSend) -> String {
    let mut parts = Vec::new();
    if let Some(e) = would.embed.as_ref().filter(|e| e.sent > 0) {
        parts.push(format!("{} embedding request(s)", e.requests));
    }
    if let Some(c) = would.contexts.as_ref().filter(|c| c.calls > 0) {
        parts.push(format!("{} context call(s)", c.calls));
    }
    if let Some(r) = would.rerank.as_ref().filter(|r| r.sent > 0) {
        parts.push(format!("{} rerank request(s)", r.sent));
    }
    parts.join(", ")
}

/// The models of a sweep, by part, for [`refuse`]'s message.
pub struct Models<'a> {
    /// The embedding models (documents, queries).
    pub embed: Vec<&'a str>,
    /// The model that writes contexts.
    pub context: Option<&'a str>,
    /// The reranker, and whether it has a price (`usd_per_request` or `input_usd_per_mtok`).
    pub rerank: Option<(&'a str, bool)>,
}

/// Refuses the sweep whose prepare step would send `would` under `cap`: when a part with calls
/// to send has no price (or the reranker has none while its requests cannot be counted yet),
/// when calls other than rerank requests cannot be counted before others are answered, or when
/// the estimate plus `cap.spent_usd` passes `cap.max_usd`. Rerank requests that cannot be counted
/// yet are left to [`refuse_rerank`].
///
/// # Errors
/// [`SpendCapError::Unpriced`], [`SpendCapError::Uncounted`] or [`SpendCapError::Over`].
pub fn refuse(cap: SpendCap, would: &WouldSend, models: &Models<'_>) -> Result<(), SpendCapError> {
    let (est, mut unpriced) = estimate(would);
    if !would.later.is_empty() && models.rerank.is_some_and(|(_, priced)| !priced) {
        unpriced.push("rerank");
    }
    if !unpriced.is_empty() {
        let mut names = Vec::new();
        let mut keys = vec!["input_usd_per_mtok"];
        for part in unpriced {
            match part {
                "embeddings" => names.extend(models.embed.iter().copied()),
                "contexts" => {
                    names.extend(models.context);
                    keys.push("output_usd_per_mtok");
                }
                _ => {
                    names.extend(models.rerank.map(|(m, _)| m));
                    keys.push("or usd_per_request (a reranker)");
                }
            }
        }
        names.dedup();
        return Err(SpendCapError::Unpriced {
            max: cap.max_usd,
            models: names.join(", "),
            keys: keys.join(", "),
        });
    }
    if !would.uncounted.is_empty() {
        return Err(SpendCapError::Uncounted {
            max: cap.max_usd,
            what: would.uncounted.join(", "),
            counted: est.cost_text("no price"),
        });
    }
    match budget::refusal(Some(cap.max_usd), &est, cap.spent_usd) {
        Some(Refusal::Over {
            estimate,
            spent,
            max,
        }) => Err(SpendCapError::Over {
            estimate,
            spent,
            max,
            what: counted_calls(would),
        }),
        // unpriced parts were refused above
        _ => Ok(()),
    }
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
    use crate::prepare::embed::EmbedStats;
    use crate::prepare::rerank::RerankSummary;

    fn would(embed_sent: usize, rerank_sent: usize) -> WouldSend {
        WouldSend {
            embed: Some(EmbedStats {
                texts: 10,
                sent: embed_sent,
                requests: embed_sent.div_ceil(4),
                tokens_sent: 100 * embed_sent as u64,
                cost_usd: 0.001 * embed_sent as f64,
                ..EmbedStats::default()
            }),
            embed_priced: true,
            rerank: Some(Box::new(RerankSummary {
                model: "rr".into(),
                requests: 8,
                sent: rerank_sent,
                tokens_sent: 50,
                cost_usd: Some(0.01 * rerank_sent as f64),
                ..RerankSummary::default()
            })),
            ..WouldSend::default()
        }
    }

    fn models() -> Models<'static> {
        Models {
            embed: vec!["e"],
            context: None,
            rerank: Some(("rr", true)),
        }
    }

    fn cap(max_usd: f64, spent_usd: f64) -> SpendCap {
        SpendCap { max_usd, spent_usd }
    }

    #[test]
    fn the_estimate_adds_what_the_caches_do_not_answer() {
        let (est, unpriced) = estimate(&would(8, 3));
        assert_eq!((est.calls, est.prompt_tokens), (2 + 3, 800 + 50));
        assert!((est.cost_usd.unwrap() - 0.038).abs() < 1e-12);
        assert!(unpriced.is_empty());
        // everything cached: nothing, at no cost
        let (est, _) = estimate(&would(0, 0));
        assert_eq!((est.calls, est.cost_usd), (0, Some(0.0)));
    }

    #[test]
    fn a_sweep_over_the_cap_is_refused_naming_estimate_spend_and_cap() {
        assert!(refuse(cap(0.04, 0.0), &would(8, 3), &models()).is_ok());
        let e = refuse(cap(0.04, 0.005), &would(8, 3), &models()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the sweep is estimated at $0.0380 (2 embedding request(s), 3 rerank request(s)), and $0.0050 is already spent in this folder: more than --max-cost $0.0400; nothing was sent (raise --max-cost, or sweep fewer configurations or questions: cached calls cost nothing)"
        );
        // the caches answer everything: a zero cap holds
        assert!(refuse(cap(0.0, 0.0), &would(0, 0), &models()).is_ok());
    }

    #[test]
    fn unpriced_and_uncounted_calls_are_refused_under_a_cap() {
        let mut w = would(8, 0);
        w.embed_priced = false;
        let e = refuse(cap(5.0, 0.0), &w, &models()).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "--max-cost $5.0000 needs prices to hold: set input_usd_per_mtok for e in"
            ),
            "{e}"
        );
        // an unpriced reranker whose requests are counted later
        let mut w = would(8, 0);
        w.later = vec!["the rerank requests of x".into()];
        let m = Models {
            rerank: Some(("rr", false)),
            ..models()
        };
        let e = refuse(cap(5.0, 0.0), &w, &m).unwrap_err();
        assert!(matches!(e, SpendCapError::Unpriced { ref models, .. } if models == "rr"));
        // a priced one: allowed, its step checks again
        assert!(refuse(cap(5.0, 0.0), &w, &models()).is_ok());
        w.uncounted = vec!["the chunk embeddings of semantic-256".into()];
        let e = refuse(cap(5.0, 0.0), &w, &models()).unwrap_err();
        assert!(matches!(e, SpendCapError::Uncounted { .. }), "{e}");
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
