//! The embedding client: sends every text the sweep needs to an OpenAI-compatible
//! `/v1/embeddings` endpoint through the [`LlmClient`] (rate limits, retries, call records),
//! once: each text is looked up first in the [`EmbedCache`] by (model, SHA-256 of the text as
//! sent), and the missing ones are sent in batches of `batch_size`. The result is a plain
//! [`Embeddings`] map that configurations read.

use std::time::Instant;

use serde::Serialize;
use thiserror::Error;

use super::embed_cache::{CacheError, EmbedCache};
use crate::exit::ExitClass;
use crate::llm::cost::{count_tokens, estimate_embed_tokens};
use crate::llm::{CallRecord, ClientConfig, EmbedRequest, LlmClient, LlmError};
use crate::retrieval::embeddings::{
    EmbedRole, EmbedSettings, EmbeddingError, Embeddings, text_hash,
};
use crate::sweep::error::SweepError;

/// Errors of the embedding step.
#[derive(Debug, Error)]
pub enum EmbedError {
    /// The LLM client failed (after its retries).
    #[error("embeddings request failed: {0}")]
    Llm(#[from] LlmError),
    /// The embedding cache failed.
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// A text, vector or setting is unusable.
    #[error(transparent)]
    Embedding(#[from] EmbeddingError),
    /// A configuration's chunk, as embedded (prefix included), is longer than
    /// `max_input_tokens` and overflow is `error`.
    #[error("configuration {config}: {source}")]
    TooLongIn {
        /// The configuration's id.
        config: String,
        /// [`EmbeddingError::TooLong`].
        #[source]
        source: EmbeddingError,
    },
    /// The grid could not be chunked or prefixed to find the texts to embed.
    #[error("chunking before embedding: {0}")]
    Chunking(#[from] SweepError),
}

impl EmbedError {
    /// The client's class for its errors, failure (1) for the cache, the value's own class
    /// otherwise.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            EmbedError::Llm(e) => e.exit_class(),
            EmbedError::Cache(_) => ExitClass::Failure,
            EmbedError::Embedding(e) | EmbedError::TooLongIn { source: e, .. } => e.exit_class(),
            EmbedError::Chunking(e) => e.exit_class(),
        }
    }
}

/// What an [`Embedder::embed_all`] did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EmbedStats {
    /// Distinct texts asked for (both sides).
    pub texts: usize,
    /// Of them, found in the cache.
    pub cached: usize,
    /// Of them, sent to the server.
    pub sent: usize,
    /// Requests made (batches).
    pub requests: usize,
    /// Input tokens of the requests made (server usage, or cl100k estimates).
    pub tokens_sent: u64,
    /// Cost of the requests made, USD (0 when every model has no price).
    pub cost_usd: f64,
    /// Texts truncated to `max_input_tokens`.
    pub truncated: usize,
    /// Wall time of the whole step, ms.
    pub wall_ms: f64,
}

impl EmbedStats {
    /// Adds the counts of a later step.
    pub fn add(&mut self, o: &EmbedStats) {
        self.texts += o.texts;
        self.cached += o.cached;
        self.sent += o.sent;
        self.requests += o.requests;
        self.tokens_sent += o.tokens_sent;
        self.cost_usd += o.cost_usd;
        self.truncated += o.truncated;
        self.wall_ms += o.wall_ms;
    }
}

/// Embeds texts through the client and the cache.
pub struct Embedder {
    client: LlmClient,
    cache: Option<EmbedCache>,
    settings: EmbedSettings,
    /// A dry run's embedder ([`Embedder::offline`]): sends nothing.
    offline: bool,
}

impl Embedder {
    /// An embedder with its own client: `llm` with the base URL replaced by
    /// `settings.base_url` (when set) and the response cache off (the vector cache replaces it),
    /// and the vector cache at `settings.cache_path` when `use_cache`.
    ///
    /// # Errors
    /// [`EmbeddingError::Config`], [`EmbedError::Llm`] for an unusable client config,
    /// [`EmbedError::Cache`].
    pub fn new(
        settings: EmbedSettings,
        mut llm: ClientConfig,
        use_cache: bool,
    ) -> Result<Self, EmbedError> {
        settings.validate()?;
        if let Some(url) = &settings.base_url {
            llm.base_url = Some(url.clone());
        }
        llm.cache = false;
        let client = LlmClient::new(llm)?;
        let cache = if use_cache {
            Some(EmbedCache::open(&settings.cache_path)?)
        } else {
            None
        };
        Ok(Embedder {
            client,
            cache,
            settings,
            offline: false,
        })
    }

    /// A dry run's embedder: the vector cache at `settings.cache_path` answers what it holds
    /// (a missing cache file is not created), and nothing is sent: [`embed_all`](Self::embed_all) counts what it would send instead
    /// (no API key is read, as no request leaves).
    ///
    /// # Errors
    /// As [`Embedder::new`], without the key's.
    pub fn offline(settings: EmbedSettings, mut llm: ClientConfig) -> Result<Self, EmbedError> {
        settings.validate()?;
        if let Some(url) = &settings.base_url {
            llm.base_url = Some(url.clone());
        }
        llm.cache = false;
        // a cache file that does not exist yet holds nothing: it is not created
        let cache = match settings.cache_path.exists() {
            true => Some(EmbedCache::open(&settings.cache_path)?),
            false => None,
        };
        Ok(Embedder {
            client: LlmClient::with_api_key(llm, None)?,
            cache,
            settings,
            offline: true,
        })
    }

    /// An embedder over a given client and cache.
    pub fn with_client(
        settings: EmbedSettings,
        client: LlmClient,
        cache: Option<EmbedCache>,
    ) -> Self {
        Embedder {
            client,
            cache,
            settings,
            offline: false,
        }
    }

    /// The server's base URL.
    pub fn base_url(&self) -> String {
        self.client.base_url().to_string()
    }

    /// The settings.
    pub fn settings(&self) -> &EmbedSettings {
        &self.settings
    }

    /// The client's call records so far (one per request sent).
    pub fn records(&self) -> Vec<CallRecord> {
        self.client.records()
    }

    /// Embeds every distinct document and query text: from the cache where it is there, else in
    /// batches of `batch_size` sent concurrently (the client paces them), storing each new
    /// vector in the cache as its batch returns. An [`offline`](Self::offline) embedder returns
    /// the cached vectors only, and its stats count what it would send (`sent`, `requests`,
    /// `tokens_sent` as cl100k estimates, `cost_usd`).
    ///
    /// # Errors
    /// [`EmbeddingError::TooLong`] (as [`EmbedError::Embedding`]) before anything is sent;
    /// [`EmbedError::Llm`] for a failed request (vectors of batches that finished stay cached);
    /// [`EmbedError::Cache`]; [`EmbeddingError::Vector`] for a zero vector.
    pub async fn embed_all(
        &self,
        documents: &[&str],
        queries: &[&str],
    ) -> Result<(Embeddings, EmbedStats), EmbedError> {
        let t0 = Instant::now();
        let mut stats = EmbedStats::default();
        let llm = self.client.config();
        let mut out = Embeddings::new(
            self.settings.clone(),
            llm.model(&self.settings.model).input_usd_per_mtok,
            llm.model(self.settings.model_for(EmbedRole::Query))
                .input_usd_per_mtok,
        );
        let mut tasks = tokio::task::JoinSet::new();
        for (role, texts) in [
            (EmbedRole::Document, documents),
            (EmbedRole::Query, queries),
        ] {
            let model = self.settings.model_for(role).to_string();
            let mut seen = std::collections::HashSet::new();
            let mut todo: Vec<String> = Vec::new();
            for text in texts {
                let (sent, truncated) = self.settings.prepare(role, text)?;
                let hash = text_hash(&sent);
                if !seen.insert(hash) {
                    continue;
                }
                stats.texts += 1;
                stats.truncated += usize::from(truncated);
                let hit = match &self.cache {
                    Some(c) => c.get(&model, &hash)?,
                    None => None,
                };
                match hit {
                    Some(h) => {
                        stats.cached += 1;
                        out.insert(role, &sent, h.vector, h.ms)?;
                    }
                    None => todo.push(sent),
                }
            }
            stats.sent += todo.len();
            if self.offline {
                // a dry run: what these requests would be, at the cl100k estimate of their input
                let tokens = estimate_embed_tokens(&todo);
                stats.requests += todo.len().div_ceil(self.settings.batch_size.max(1));
                stats.tokens_sent += tokens;
                stats.cost_usd += llm
                    .model(&model)
                    .input_usd_per_mtok
                    .map_or(0.0, |p| p * tokens as f64 / 1e6);
                continue;
            }
            for batch in todo.chunks(self.settings.batch_size) {
                let client = self.client.clone();
                let req = EmbedRequest {
                    model: model.clone(),
                    inputs: batch.to_vec(),
                };
                tasks.spawn(async move {
                    let r = client.embed("embed", req.clone()).await;
                    (role, req, r)
                });
            }
        }
        let mut failure = None;
        while let Some(joined) = tasks.join_next().await {
            let (role, req, result) = joined.expect("embedding task does not panic");
            let outcome = match result {
                Ok(o) => o,
                Err(e) => {
                    failure.get_or_insert(EmbedError::Llm(e));
                    continue;
                }
            };
            stats.requests += 1;
            stats.tokens_sent += outcome.record.prompt_tokens;
            stats.cost_usd += outcome.record.cost_usd.unwrap_or(0.0);
            let latency = outcome
                .record
                .latency_ms_total
                .unwrap_or(outcome.record.wall_ms);
            let tokens: Vec<f64> = req.inputs.iter().map(|s| count_tokens(s) as f64).collect();
            let total: f64 = tokens.iter().sum::<f64>().max(1.0);
            let mut rows = Vec::with_capacity(req.inputs.len());
            for ((sent, v), t) in req.inputs.iter().zip(&outcome.embeddings).zip(&tokens) {
                let ms = latency * t / total;
                rows.push((text_hash(sent), v.as_slice(), ms));
                out.insert(role, sent, v.clone(), ms)?;
            }
            if let Some(c) = &self.cache {
                c.put_many(&req.model, &rows)?;
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
        stats.wall_ms = t0.elapsed().as_secs_f64() * 1e3;
        Ok((out, stats))
    }
}
