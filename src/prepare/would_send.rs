//! What a dry run of the prepare step would send ([`WouldSend`]), and its one line.

use serde::Serialize;

use crate::numbers::thousands;
use crate::prepare::contexts::ContextCount;
use crate::prepare::embed::EmbedStats;
use crate::prepare::rerank::RerankSummary;

/// What the prepare step would send, found from the caches and the grid without sending anything
/// (`run --dry-run`). When it would send nothing, the dry run's [`Prepared`] is complete (every
/// vector and context from the caches) and the sweep runs on it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WouldSend {
    /// Embeddings (when the grid needs them): distinct texts, of them cached, and what the rest
    /// would take (`sent`: texts, `requests`, `tokens_sent`: cl100k_base estimates,
    /// `cost_usd`: 0 without a price).
    pub embed: Option<EmbedStats>,
    /// Whether the embedding models have a price (else `embed.cost_usd` is 0 for want of one).
    pub embed_priced: bool,
    /// `llm_context` contexts: the calls the response cache does not answer.
    pub contexts: Option<ContextCount>,
    /// Rerank requests: of them, `sent` are those the response cache does not answer.
    pub rerank: Option<Box<RerankSummary>>,
    /// What cannot be counted before the calls above are answered (semantic chunks exist only
    /// once their sentences have vectors, an `llm_context` chunk's embedded text only once its
    /// context is written): `the chunk embeddings of <id>`, `the contexts of <id>`.
    pub uncounted: Vec<String>,
    /// What is counted only by its own step, once the calls above are answered: `the rerank
    /// requests of <id>` (bounded in `rerank_bound`) and `the external retrieval of <id>` (no
    /// paid call).
    pub later: Vec<String>,
    /// An upper bound on the rerank requests named in `later`: every reranked configuration ×
    /// question at its full depth, none taken as cached (rankings that do not exist yet cannot
    /// be in the cache), input tokens from the `depth` longest chunks of each configuration.
    /// `--max-cost` counts it up front ([`crate::prepare::sweep_budget::refuse`]).
    #[serde(skip)]
    pub rerank_bound: Option<Box<RerankSummary>>,
}

impl WouldSend {
    /// Whether nothing would be sent (and everything was counted).
    pub fn is_nothing(&self) -> bool {
        self.embed.as_ref().is_none_or(|e| e.sent == 0)
            && self.contexts.as_ref().is_none_or(|c| c.calls == 0)
            && self.rerank.as_ref().is_none_or(|r| r.sent == 0)
            && self.uncounted.is_empty()
            && self.later.is_empty()
    }

    /// One line for the dry run: `the sweep would send 3 embedding request(s) (41 of 57 texts
    /// not in the cache, about 2310 tokens, $0.0001) and 12 context call(s) (…)`, naming what
    /// could not be counted; `the sweep sends nothing: …` when the caches answer everything;
    /// `None` for a grid that needs no embeddings or contexts.
    pub fn summary(&self) -> Option<String> {
        if self.embed.is_none() && self.contexts.is_none() && self.rerank.is_none() {
            return None;
        }
        if self.is_nothing() {
            let mut held = Vec::new();
            if let Some(e) = &self.embed {
                held.push(format!("{} text(s) to embed", e.texts));
            }
            if let Some(c) = &self.contexts {
                held.push(format!("{} context(s)", c.chunks));
            }
            if let Some(r) = &self.rerank {
                held.push(format!("{} rerank request(s)", r.requests));
            }
            return Some(format!(
                "the sweep sends nothing: its {} are in the caches",
                held.join(" and ")
            ));
        }
        let mut parts = Vec::new();
        if let Some(e) = self.embed.as_ref().filter(|e| e.sent > 0) {
            let cost = match self.embed_priced {
                true => format!("${:.4}", e.cost_usd),
                false => "cost unknown: no price".into(),
            };
            parts.push(format!(
                "{} embedding request(s) ({} of {} texts not in the cache, about {} tokens, {cost})",
                e.requests, e.sent, e.texts, e.tokens_sent
            ));
        }
        if let Some(c) = self.contexts.as_ref().filter(|c| c.calls > 0) {
            let cost = c.cost_usd.map_or_else(
                || "cost unknown: no price".to_string(),
                |u| format!("${u:.4}"),
            );
            parts.push(format!(
                "{} context call(s) ({} of {} chunks not in the cache, about {} prompt and at most {} completion tokens, {cost})",
                c.calls, c.calls, c.chunks, c.prompt_tokens, c.completion_tokens
            ));
        }
        if let Some(r) = self.rerank.as_ref().filter(|r| r.sent > 0) {
            let cost = r.cost_usd.map_or_else(
                || "cost unknown: no price".to_string(),
                |u| format!("${u:.4}"),
            );
            let n = |x: usize| thousands(x as f64);
            parts.push(format!(
                "{} rerank request(s) ({} of {} not in the cache, {} documents in all, about {} tokens, {cost})",
                n(r.sent),
                n(r.sent),
                n(r.requests),
                n(r.documents),
                thousands(r.tokens_sent as f64)
            ));
        }
        let mut line = format!("the sweep would send {}", parts.join(" and "));
        if !self.uncounted.is_empty() || !self.later.is_empty() {
            let all: Vec<&str> = self
                .uncounted
                .iter()
                .chain(&self.later)
                .map(String::as_str)
                .collect();
            line.push_str(&format!(
                ", then, not counted as their chunks or texts exist only once those are answered, {}",
                all.join(", ")
            ));
        }
        Some(line)
    }
}
