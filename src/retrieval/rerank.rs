//! Two-stage retrieval: a first-stage retriever ranks a configuration's chunks, a reranker
//! (a cross-encoder behind a `/rerank` API, [`crate::llm::LlmClient::rerank`]) scores the
//! first `depth` of them against the question, and the reranked list is what every cut reads.
//!
//! The scores are asked for before the sweep (the prepare step, [`crate::prepare::rerank`]),
//! so a configuration's retriever is a plain lookup ([`super::listed::ListedRetriever`]): a top-n engine
//! ([`Ranked::Top`]) under the contract of [`super::retriever`]. Its list holds the first
//! stage's `depth` candidates (all the chunks when there are fewer), ordered by the reranker's
//! score, higher first; equal scores keep the first stage's order. A cut deeper than `depth`
//! takes the whole list (see the contract); the margin reads the reranker's scores as they are
//! ([`super::retriever::MarginScale::Raw`]), and a chunk below the depth counts as scoring what the list's last
//! hit scored.

use serde::{Deserialize, Serialize};

use super::retriever::Hit;
use crate::llm::RerankApi;

/// First-stage candidates reranked per question by default.
pub const DEFAULT_DEPTH: usize = 50;

/// Documents per rerank request by default.
pub const DEFAULT_DOCUMENTS_PER_REQUEST: usize = 50;

/// The value of the rerank factor that leaves the first stage's ranking as it is.
pub const NO_RERANK: &str = "none";

/// How reranked configurations are reranked (`[rerank]`; the model comes from the swept
/// values, `--rerank none,MODEL`). Keys missing when deserialised take their defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RerankSettings {
    /// The reranker model: the one value of `[sweep] rerank` other than `none` (set by the
    /// plan).
    pub model: String,
    /// The reranker's server: a base URL ending in `/v1` for `api = "v1"`, the server's root for
    /// `api = "tei"`. Default: the `[llm]` server.
    pub base_url: Option<String>,
    /// The wire shape: `v1` (Cohere, Jina, llama.cpp's server, vLLM; default) or `tei`.
    pub api: RerankApi,
    /// First-stage candidates reranked per question (default [`DEFAULT_DEPTH`]).
    pub depth: usize,
    /// Documents per request (default [`DEFAULT_DOCUMENTS_PER_REQUEST`]); a question's
    /// candidates take `ceil(depth / documents_per_request)` requests, sent concurrently up to
    /// the model's limits in `[llm.models]`. Scores of one question from several requests are
    /// compared as they are: right for a cross-encoder, which scores each pair alone.
    pub documents_per_request: usize,
}

impl Default for RerankSettings {
    fn default() -> Self {
        RerankSettings {
            model: String::new(),
            base_url: None,
            api: RerankApi::default(),
            depth: DEFAULT_DEPTH,
            documents_per_request: DEFAULT_DOCUMENTS_PER_REQUEST,
        }
    }
}

impl RerankSettings {
    /// Checks the counts and the model.
    ///
    /// # Errors
    /// What is wrong, naming the key.
    pub fn validate(&self) -> Result<(), String> {
        if self.model.trim().is_empty() || self.model == NO_RERANK {
            return Err("rerank: no reranker model (give one in --rerank none,MODEL)".into());
        }
        if self.depth == 0 || self.documents_per_request == 0 {
            return Err(
                "rerank.depth (--rerank-depth) and rerank.documents_per_request must be at least 1"
                    .into(),
            );
        }
        Ok(())
    }
}

/// The first stage's candidates `candidates` (chunk indices, best first) with the reranker's
/// `scores` (one per candidate, same order) as a ranked list: higher score first, equal scores
/// in the first stage's order.
///
/// # Panics
/// If the two lengths differ (the client checks that every candidate was scored).
pub fn reranked(candidates: &[usize], scores: &[f64]) -> Vec<Hit> {
    assert_eq!(candidates.len(), scores.len(), "one score per candidate");
    let mut hits: Vec<Hit> = candidates
        .iter()
        .zip(scores)
        .map(|(&chunk, &score)| Hit { chunk, score })
        .collect();
    // a stable sort keeps the first stage's order among equal scores
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::retriever::Ranked;

    #[test]
    fn higher_scores_first_and_ties_keep_the_first_stage_order() {
        let hits = reranked(&[4, 1, 7, 2], &[0.1, 0.9, 0.5, 0.9]);
        let order: Vec<usize> = hits.iter().map(|h| h.chunk).collect();
        assert_eq!(order, vec![1, 2, 7, 4]);
        assert_eq!(hits[0].score, 0.9);
        assert!(Ranked::Top(hits).check(8).is_ok());
    }

    #[test]
    fn settings_need_a_model_and_counts() {
        let s = RerankSettings::default();
        assert!(s.validate().unwrap_err().contains("no reranker model"));
        let s = RerankSettings {
            model: "m".into(),
            depth: 0,
            ..RerankSettings::default()
        };
        assert!(s.validate().unwrap_err().contains("rerank.depth"));
    }
}
