//! `--max-cost` over what a sweep would send: the estimate, counted from the caches and the
//! grid as `--dry-run` counts it ([`WouldSend`]; cached calls cost nothing), and its refusal
//! before anything is sent ([`refuse`]).

use crate::budget::{self, CostEstimate, Refusal};
use crate::prepare::spend_cap::{SpendCap, SpendCapError};
use crate::prepare::would_send::WouldSend;

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
    if let Some(r) = would.rerank_bound.as_ref().filter(|r| r.sent > 0) {
        // its price is checked by `refuse` (a reranker with neither price key)
        total.add(&CostEstimate {
            calls: r.sent,
            prompt_tokens: r.tokens_sent,
            completion_tokens: 0,
            cost_usd: r.cost_usd,
        });
    }
    (total, unpriced)
}

/// The calls of `would` in words: `3 embedding request(s), 4 rerank request(s)`, or `…, at most
/// 80 rerank request(s): an upper bound, …` when the rerank requests cannot be counted yet.
pub fn counted_calls(would: &WouldSend) -> String {
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
    if let Some(r) = would.rerank_bound.as_ref().filter(|r| r.sent > 0) {
        parts.push(format!(
            "at most {} rerank request(s): an upper bound, every reranked configuration × question taken as not cached, since the rankings they rerank do not exist before the embeddings are made",
            r.sent
        ));
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

/// Refuses the sweep whose prepare step would send `would` under `cap`, before anything is sent:
/// when a part with calls to send has no price (or the reranker has none while its requests
/// cannot be counted yet), when calls other than rerank requests cannot be counted before others
/// are answered, or when the estimate plus `cap.spent_usd` passes `cap.max_usd`. Rerank requests
/// that cannot be counted yet (their first stage needs embeddings not made) count at their upper
/// bound (`would.rerank_bound`), so no step has to refuse half-way.
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
}
