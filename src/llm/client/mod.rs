//! [`LlmClient`]: the cache → pacing → transport/retry → accounting pipeline.
//!
//! This file holds the client's state and the steps every call shares (cache key and lookup,
//! pacing, sending, settling, records); `chat` holds the chat completions (plain and JSON),
//! `embed` the embeddings and `rerank` the rerank calls.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::accounting::{CallCtx, Ledger, Tokens};
use super::batch::{BatchError, Batcher, Deferrals, OnProgress};
use super::cache::{CacheEntryInfo, CachedResponse, ResponseCache, cache_key, canonical_json};
use super::config::{ApiKey, ClientConfig, ModelConfig, redact_url, url_without_credentials};
use super::cost::cost_usd;
use super::error::LlmError;
use super::format::ResponseFormatKind;
use super::learned::FormatMemory;
use super::limiter::ModelLimiter;
use super::record::{CallKind, CallRecord};
use super::transport::{Attempts, BodyFn, Call, SendError, Sent, Transport};

/// The chat completions endpoint, after the base URL.
const CHAT: &str = "/chat/completions";

/// Version of the cache-key layout; bump to invalidate old entries.
const KEY_VERSION: u32 = 1;

/// Client for one OpenAI-compatible server. Cheap to clone (shared state behind an `Arc`); clones
/// share limits, cache, remembered formats and records.
#[derive(Clone)]
pub struct LlmClient {
    inner: Arc<Inner>,
}

struct Inner {
    cfg: ClientConfig,
    transport: Transport,
    /// The URL without credentials: what identifies the server in the cache.
    key_url: String,
    cache: Option<ResponseCache>,
    limiters: Mutex<HashMap<String, Arc<ModelLimiter>>>,
    formats: FormatMemory,
    ledger: Ledger,
    /// Batch mode ([`LlmClient::use_batches`]): chat calls answered by batches.
    batch: OnceLock<Deferrals>,
}

impl fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmClient")
            .field("base_url", &self.inner.transport.shown_url)
            .field("api_key", &self.inner.transport.key)
            .field(
                "cache",
                &self.inner.cache.as_ref().map(|c| c.path().to_path_buf()),
            )
            .field("models", &self.inner.cfg.models.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl LlmClient {
    /// Builds a client, reading the API key from the environment variable `cfg.api_key_env`
    /// (unset or empty: no `Authorization` header, which only a server on this machine is
    /// assumed to accept; `api_key_env = ""` says the server needs no key) and opening the cache
    /// if enabled.
    ///
    /// # Errors
    /// [`LlmError::Config`] for an invalid config or unreadable key variable,
    /// [`LlmError::BadKey`] for a key with a control character, [`LlmError::MissingKey`] for a
    /// server not on this machine and no key, [`LlmError::Cache`] if the cache file cannot be
    /// opened.
    pub fn new(cfg: ClientConfig) -> Result<Self, LlmError> {
        let key = cfg.api_key()?;
        Self::with_api_key(cfg, key)
    }

    /// Builds a client with an explicit key instead of reading the environment.
    ///
    /// # Errors
    /// As [`LlmClient::new`].
    pub fn with_api_key(cfg: ClientConfig, key: Option<ApiKey>) -> Result<Self, LlmError> {
        cfg.validate()?;
        let base_url = cfg.resolved_base_url();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(LlmError::Config(format!(
                "base URL {:?} must start with http:// or https://",
                redact_url(&base_url)
            )));
        }
        let transport = Transport::new(&base_url, key)?;
        let cache = if cfg.cache {
            Some(ResponseCache::open(&cfg.cache_path)?)
        } else {
            None
        };
        Ok(LlmClient {
            inner: Arc::new(Inner {
                cfg,
                transport,
                key_url: url_without_credentials(&base_url),
                cache,
                limiters: Mutex::new(HashMap::new()),
                formats: FormatMemory::default(),
                ledger: Ledger::default(),
                batch: OnceLock::new(),
            }),
        })
    }

    /// The resolved base URL (no trailing slash), credentials replaced by `***`: the form to
    /// show and to record.
    pub fn base_url(&self) -> &str {
        &self.inner.transport.shown_url
    }

    /// The configuration with the base URL actually used filled in, credentials redacted, wherever
    /// it came from (the config, `OPENAI_BASE_URL` or the default): what a run's manifest
    /// records.
    pub fn resolved_config(&self) -> ClientConfig {
        ClientConfig {
            base_url: Some(self.inner.transport.shown_url.clone()),
            ..self.inner.cfg.clone()
        }
    }

    /// Whether requests will carry an API key.
    pub fn has_api_key(&self) -> bool {
        self.inner.transport.key.is_some()
    }

    /// The configuration in use.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.cfg
    }

    /// A copy of every record so far, in completion order.
    pub fn records(&self) -> Vec<CallRecord> {
        self.inner.ledger.records()
    }

    /// Removes and returns the records so far.
    pub fn take_records(&self) -> Vec<CallRecord> {
        self.inner.ledger.take()
    }

    /// A channel that receives every record from now on (as well as [`records`](Self::records)).
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<CallRecord> {
        self.inner.ledger.subscribe()
    }

    /// Puts the client in batch mode ([`super::batch`]): from now on a chat call the cache does
    /// not answer is answered from the batches `batcher` read back, or waits for the next one
    /// ([`LlmError::Deferred`]; [`flush_batches`](Self::flush_batches) sends them). Nothing is
    /// sent to `/chat/completions`. A second call changes nothing.
    pub fn use_batches(&self, batcher: Batcher) {
        let _ = self.inner.batch.set(Deferrals::new(batcher));
    }

    /// Whether the client is in batch mode.
    pub fn is_batching(&self) -> bool {
        self.inner.batch.get().is_some()
    }

    /// Sends the calls waiting for a batch and waits for their answers ([`Deferrals::flush`]);
    /// the number of calls sent or found in open batches, 0 when none waited (or not in batch
    /// mode).
    ///
    /// # Errors
    /// [`BatchError`]: the waiting calls are then left unfinished.
    pub async fn flush_batches(&self, progress: OnProgress<'_>) -> Result<usize, BatchError> {
        match self.inner.batch.get() {
            Some(d) => d.flush(progress).await,
            None => Ok(0),
        }
    }

    /// Marks collected the batches whose answers were used (call after the jobs that waited ran
    /// again).
    ///
    /// # Errors
    /// [`BatchError::Book`] when the run folder's batches.json cannot be written.
    pub fn settle_batches(&self) -> Result<(), BatchError> {
        self.inner.batch.get().map_or(Ok(()), Deferrals::settle)
    }

    /// Cancels the batches of the run folder that have not ended (`--cancel-batches`); their
    /// ids. None without batch mode.
    ///
    /// # Errors
    /// [`BatchError`] when a cancel request fails.
    pub async fn cancel_batches(&self) -> Result<Vec<String>, BatchError> {
        match self.inner.batch.get() {
            Some(d) => d.batcher().cancel_open().await,
            None => Ok(Vec::new()),
        }
    }

    /// The structured-output mode the next [`chat_json`](Self::chat_json) for `model` starts
    /// with: what worked before or was learnt from a refusal (in this process, else in the cache
    /// file), else `config.json_mode`.
    pub async fn format_for(&self, model: &str) -> ResponseFormatKind {
        if let Some(m) = self.inner.formats.known(model) {
            return m;
        }
        if let Some(cache) = &self.inner.cache
            && let Ok(Some(mode)) = cache.format_for(&self.inner.key_url, model).await
        {
            return self.inner.formats.adopt(model, mode);
        }
        self.inner.cfg.json_mode
    }

    async fn remember_format(&self, model: &str, mode: ResponseFormatKind) {
        if self.inner.formats.confirm(model, mode)
            && let Some(cache) = &self.inner.cache
        {
            // losing this only costs a rediscovery next run
            let _ = cache.set_format(&self.inner.key_url, model, mode).await;
        }
    }

    // ---- pipeline pieces ----

    fn ctx<'a>(&self, stage: &'a str, kind: CallKind, model: &'a str, key: &str) -> CallCtx<'a> {
        CallCtx::new(stage, kind, model, key)
    }

    fn model_cfg(&self, model: &str) -> &ModelConfig {
        self.inner.cfg.model(model)
    }

    fn limiter(&self, model: &str) -> Arc<ModelLimiter> {
        let mut map = self.inner.limiters.lock().expect("limiters lock");
        Arc::clone(
            map.entry(model.to_string())
                .or_insert_with(|| Arc::new(ModelLimiter::new(self.inner.cfg.model(model)))),
        )
    }

    // ---- records ----

    fn push(&self, record: CallRecord) {
        self.inner.ledger.push(record);
    }

    fn hit(&self, ctx: &CallCtx<'_>, hit: &CachedResponse) -> CallRecord {
        let r = ctx.hit(hit);
        self.push(r.clone());
        r
    }

    fn build_ok(
        &self,
        ctx: &CallCtx<'_>,
        att: Attempts,
        tokens: &Tokens,
        mode: Option<ResponseFormatKind>,
    ) -> CallRecord {
        let mcfg = self.model_cfg(ctx.model);
        let discount = if att.batch.is_some() {
            mcfg.batch_discount
        } else {
            1.0
        };
        let cost = cost_usd(mcfg, tokens.prompt, tokens.completion).map(|c| c * discount);
        ctx.answered(att, tokens, mode, cost)
    }

    fn ok(
        &self,
        ctx: &CallCtx<'_>,
        att: Attempts,
        tokens: &Tokens,
        mode: Option<ResponseFormatKind>,
        note: Option<String>,
    ) -> CallRecord {
        let mut r = self.build_ok(ctx, att, tokens, mode);
        r.error = note;
        self.push(r.clone());
        r
    }

    /// Records a failed call and returns its error. Its tokens are estimated
    /// ([`super::accounting::unanswered_tokens`]); a call whose server answered 2xx with a body
    /// that could not be read also gets the cost of those tokens (it was probably billed).
    fn fail(
        &self,
        ctx: &CallCtx<'_>,
        att: Attempts,
        mode: Option<ResponseFormatKind>,
        err: LlmError,
    ) -> LlmError {
        if err == LlmError::Deferred {
            return err; // not a call yet: it is made when its batch is read back
        }
        let answered = att.unreadable_2xx.is_some();
        let mut record = ctx.failed(att, mode, self.scrub(&err.to_string()));
        if answered {
            record.cost_usd = cost_usd(
                self.model_cfg(ctx.model),
                record.prompt_tokens,
                record.completion_tokens,
            );
        }
        self.push(record);
        err
    }

    /// `s` without the URL's credentials and the API key.
    fn scrub(&self, s: &str) -> String {
        self.inner.transport.scrub(s)
    }

    /// Sends one call through the transport with `model`'s settings and limiter; a refused
    /// structured-output mode is known at once to every call to `model`.
    /// In batch mode a chat call (tagged `stage`) is answered by a batch instead
    /// ([`LlmClient::send_batched`]).
    #[allow(clippy::too_many_arguments)]
    async fn send<T>(
        &self,
        endpoint: &'static str,
        stage: &str,
        model: &str,
        build: &BodyFn<'_>,
        est_tokens: u64,
        att: &mut Attempts,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Sent<T>, SendError> {
        if let Some(d) = self.inner.batch.get()
            && endpoint == CHAT
        {
            return self.send_batched(d, stage, model, build, att, parse);
        }
        let on_refused = |mode| self.inner.formats.mark_refused(model, mode);
        let limiter = self.limiter(model);
        let call = Call {
            endpoint,
            model,
            mcfg: self.model_cfg(model),
            retry: &self.inner.cfg.retry,
            limiter: &limiter,
            est_tokens,
            on_refused: &on_refused,
        };
        self.inner.transport.send(call, build, att, parse).await
    }

    fn key_for(&self, kind: &str, model: &str, payload: Value) -> (String, CacheEntryInfo) {
        let mut v = json!({
            "v": KEY_VERSION,
            "kind": kind,
            "base_url": self.inner.key_url,
            "model": model,
        });
        if let (Some(o), Value::Object(p)) = (v.as_object_mut(), payload) {
            o.extend(p);
        }
        let canonical = canonical_json(&v);
        let info = CacheEntryInfo {
            kind: kind.to_string(),
            base_url: self.inner.key_url.clone(),
            model: model.to_string(),
            request: canonical.clone(),
        };
        (cache_key(&canonical), info)
    }

    /// The cached reply under `key`, if any (none without a cache). A cache that cannot be read
    /// fails the call, and the failure is recorded.
    async fn cached(
        &self,
        key: &str,
        ctx: &CallCtx<'_>,
    ) -> Result<Option<CachedResponse>, LlmError> {
        match &self.inner.cache {
            Some(c) => c
                .get(key)
                .await
                .map_err(|e| self.fail(ctx, Attempts::default(), None, e)),
            None => Ok(None),
        }
    }

    /// After a successful reply: correct the token budget, store in the cache. Returns a note
    /// if the cache write failed (the reply itself is still good).
    #[allow(clippy::too_many_arguments)]
    async fn settle(
        &self,
        key: &str,
        info: CacheEntryInfo,
        raw: String,
        tokens: &Tokens,
        mode: Option<ResponseFormatKind>,
        model: &str,
        debited: u64,
    ) -> Option<String> {
        self.limiter(model)
            .correct(debited, tokens.prompt + tokens.completion);
        let cache = self.inner.cache.as_ref()?;
        let value = CachedResponse {
            body: raw,
            prompt_tokens: tokens.prompt,
            completion_tokens: tokens.completion,
            tokens_estimated: tokens.estimated,
            response_format: mode,
        };
        cache
            .put(key, info, value)
            .await
            .err()
            .map(|e| format!("reply not cached: {e}"))
    }
}

mod batched;
mod chat;
mod embed;
pub mod rerank;
