//! [`LlmClient`]: the cache → pacing → transport/retry → accounting pipeline.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::cache::{CacheEntryInfo, CachedResponse, ResponseCache, cache_key, canonical_json};
use super::config::{ApiKey, ClientConfig, ModelConfig};
use super::cost::{cost_usd, count_tokens, estimate_chat_prompt_tokens, estimate_embed_tokens};
use super::error::LlmError;
use super::format::ResponseFormatKind;
use super::limiter::ModelLimiter;
use super::record::{CallKind, CallRecord, rfc3339_utc};
use super::retry::{backoff, hinted_wait, is_retryable_status, retry_hint};
use super::structured::{apply_mode, instruction_message, is_format_refusal, parse_json_checked};
use super::types::{
    ChatOutcome, ChatRequest, EmbedOutcome, EmbedRequest, JsonOutcome, WireChat, WireEmbeddings,
    WireUsage,
};

const CHAT: &str = "/chat/completions";
const EMBED: &str = "/embeddings";
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
    base_url: String,
    key: Option<ApiKey>,
    http: reqwest::Client,
    cache: Option<ResponseCache>,
    limiters: Mutex<HashMap<String, Arc<ModelLimiter>>>,
    formats: Mutex<HashMap<String, ResponseFormatKind>>,
    records: Mutex<Vec<CallRecord>>,
    subscribers: Mutex<Vec<mpsc::UnboundedSender<CallRecord>>>,
}

impl fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmClient")
            .field("base_url", &self.inner.base_url)
            .field("api_key", &self.inner.key)
            .field(
                "cache",
                &self.inner.cache.as_ref().map(|c| c.path().to_path_buf()),
            )
            .field("models", &self.inner.cfg.models.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// What happened over the HTTP attempts of one call.
#[derive(Default)]
struct Attempts {
    count: u32,
    last_status: Option<u16>,
    /// (first byte, total) of the last attempt that got a response, in ms.
    latency: Option<(f64, f64)>,
}

enum SendError {
    /// The server refused the structured-output mode.
    Refused(LlmError),
    /// Any other failure, final.
    Fatal(LlmError),
}

/// Token accounting of a successful reply.
struct Tokens {
    prompt: u64,
    completion: u64,
    estimated: bool,
}

struct CallCtx<'a> {
    stage: &'a str,
    kind: CallKind,
    model: &'a str,
    started: SystemTime,
    t0: Instant,
}

impl LlmClient {
    /// Builds a client, reading the API key from the environment variable `cfg.api_key_env`
    /// (unset or empty: no `Authorization` header) and opening the cache if enabled.
    ///
    /// # Errors
    /// [`LlmError::Config`] for an invalid config or unreadable key variable, [`LlmError::Cache`]
    /// if the cache file cannot be opened.
    pub fn new(cfg: ClientConfig) -> Result<Self, LlmError> {
        let key = ApiKey::from_env(&cfg.api_key_env)?;
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
                "base URL {base_url:?} must start with http:// or https://"
            )));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!("chunksweep/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Config(format!("HTTP client: {e}")))?;
        let cache = if cfg.cache {
            Some(ResponseCache::open(&cfg.cache_path)?)
        } else {
            None
        };
        Ok(LlmClient {
            inner: Arc::new(Inner {
                cfg,
                base_url,
                key,
                http,
                cache,
                limiters: Mutex::new(HashMap::new()),
                formats: Mutex::new(HashMap::new()),
                records: Mutex::new(Vec::new()),
                subscribers: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The resolved base URL (no trailing slash).
    pub fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    /// The configuration in use.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.cfg
    }

    /// A copy of every record so far, in completion order.
    pub fn records(&self) -> Vec<CallRecord> {
        self.inner.records.lock().expect("records lock").clone()
    }

    /// Removes and returns the records so far.
    pub fn take_records(&self) -> Vec<CallRecord> {
        std::mem::take(&mut *self.inner.records.lock().expect("records lock"))
    }

    /// A channel that receives every record from now on (as well as [`records`](Self::records)).
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<CallRecord> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.inner.subscribers.lock().expect("lock").push(tx);
        rx
    }

    /// The structured-output mode the next [`chat_json`](Self::chat_json) for `model` starts
    /// with: what worked before (in this process, else in the cache file), else
    /// `config.json_mode`.
    pub async fn format_for(&self, model: &str) -> ResponseFormatKind {
        if let Some(m) = self.inner.formats.lock().expect("lock").get(model) {
            return *m;
        }
        if let Some(cache) = &self.inner.cache
            && let Ok(Some(m)) = cache.format_for(&self.inner.base_url, model).await
        {
            self.inner
                .formats
                .lock()
                .expect("lock")
                .insert(model.to_string(), m);
            return m;
        }
        self.inner.cfg.json_mode
    }

    async fn remember_format(&self, model: &str, mode: ResponseFormatKind) {
        let changed = self
            .inner
            .formats
            .lock()
            .expect("lock")
            .insert(model.to_string(), mode)
            != Some(mode);
        if changed && let Some(cache) = &self.inner.cache {
            // losing this only costs a rediscovery next run
            let _ = cache.set_format(&self.inner.base_url, model, mode).await;
        }
    }

    /// One chat completion. The reply is the first choice's text.
    ///
    /// # Errors
    /// [`LlmError::Rejected`] for a non-retryable status (its message included),
    /// [`LlmError::Exhausted`] when every attempt failed transiently,
    /// [`LlmError::RetryAfterTooLong`], [`LlmError::Cache`]. Every outcome, success or error, is
    /// also appended to [`records`](Self::records).
    pub async fn chat(&self, stage: &str, req: ChatRequest) -> Result<ChatOutcome, LlmError> {
        let ctx = self.ctx(stage, CallKind::Chat, &req.model);
        let body = req.to_body();
        let (key, info) = self.key_for("chat", &req.model, json!({"request": body}));

        match self.cache_get(&key).await {
            Err(e) => return Err(self.fail(&ctx, Attempts::default(), None, e)),
            Ok(Some(hit)) => {
                if let Some((content, finish)) = serde_json::from_str::<WireChat>(&hit.body)
                    .ok()
                    .and_then(|w| w.first())
                {
                    let record = self.hit(&ctx, &hit);
                    return Ok(ChatOutcome {
                        content,
                        finish_reason: finish,
                        record,
                    });
                }
            }
            Ok(None) => {}
        }

        let est_prompt = estimate_chat_prompt_tokens(&req.messages);
        let est = est_prompt + u64::from(req.max_tokens.unwrap_or(0));
        let mut att = Attempts::default();
        match self
            .send(CHAT, &req.model, &body, est, false, &mut att, parse_chat)
            .await
        {
            Ok((wire, raw, debited)) => {
                let (content, finish) = wire.first().unwrap_or_default();
                let tokens = chat_tokens(wire.usage.as_ref(), est_prompt, &content);
                let cache_note = self
                    .settle(&key, info, raw, &tokens, None, &req.model, debited)
                    .await;
                let record = self.ok(&ctx, att, &tokens, None, cache_note);
                Ok(ChatOutcome {
                    content,
                    finish_reason: finish,
                    record,
                })
            }
            Err(SendError::Refused(e) | SendError::Fatal(e)) => Err(self.fail(&ctx, att, None, e)),
        }
    }

    /// A chat completion whose reply must be a JSON value matching `schema` (a JSON Schema
    /// object). Asks for `json_schema`; if the server refuses it, falls back to `json_object`
    /// and then to plain text with the schema in the prompt, and remembers per base URL and model
    /// what worked. The reply is parsed leniently (code fences, surrounding prose) and checked
    /// shallowly against the schema (required keys, enums); nothing is invented.
    ///
    /// # Errors
    /// As [`chat`](Self::chat), plus [`LlmError::NoJson`] when the reply holds no usable JSON (the
    /// call's tokens and cost are still recorded). If every mode is refused, the last refusal.
    pub async fn chat_json(
        &self,
        stage: &str,
        req: ChatRequest,
        schema: &Value,
    ) -> Result<JsonOutcome, LlmError> {
        let ctx = self.ctx(stage, CallKind::ChatJson, &req.model);
        let base_body = req.to_body();
        // the format mode is not part of the key: any mode's valid answer answers the request
        let (key, info) = self.key_for(
            "chat_json",
            &req.model,
            json!({"request": base_body, "schema": schema}),
        );

        match self.cache_get(&key).await {
            Err(e) => return Err(self.fail(&ctx, Attempts::default(), None, e)),
            Ok(Some(hit)) => {
                let parsed = serde_json::from_str::<WireChat>(&hit.body)
                    .ok()
                    .and_then(|w| w.first())
                    .and_then(|(text, _)| {
                        parse_json_checked(&text, schema).ok().map(|v| (text, v))
                    });
                if let Some((text, value)) = parsed {
                    let record = self.hit(&ctx, &hit);
                    return Ok(JsonOutcome {
                        value,
                        text,
                        format: hit.response_format.unwrap_or(ResponseFormatKind::Text),
                        record,
                    });
                }
            }
            Ok(None) => {}
        }

        let mut mode = self.format_for(&req.model).await;
        let mut att = Attempts::default();
        loop {
            let mut body = base_body.clone();
            apply_mode(&mut body, mode, schema);
            let est_prompt = match mode {
                ResponseFormatKind::JsonSchema => {
                    estimate_chat_prompt_tokens(&req.messages) + count_tokens(&schema.to_string())
                }
                _ => {
                    let mut msgs = req.messages.clone();
                    msgs.push(instruction_message(schema));
                    estimate_chat_prompt_tokens(&msgs)
                }
            };
            let est = est_prompt + u64::from(req.max_tokens.unwrap_or(0));
            let sensitive = mode != ResponseFormatKind::Text;
            match self
                .send(
                    CHAT, &req.model, &body, est, sensitive, &mut att, parse_chat,
                )
                .await
            {
                Ok((wire, raw, debited)) => {
                    self.remember_format(&req.model, mode).await;
                    let (text, _) = wire.first().unwrap_or_default();
                    let tokens = chat_tokens(wire.usage.as_ref(), est_prompt, &text);
                    match parse_json_checked(&text, schema) {
                        Ok(value) => {
                            let note = self
                                .settle(&key, info, raw, &tokens, Some(mode), &req.model, debited)
                                .await;
                            let record = self.ok(&ctx, att, &tokens, Some(mode), note);
                            return Ok(JsonOutcome {
                                value,
                                text,
                                format: mode,
                                record,
                            });
                        }
                        Err(why) => {
                            self.limiter(&req.model)
                                .correct(debited, tokens.prompt + tokens.completion);
                            let err = LlmError::NoJson {
                                reason: why.to_string(),
                                excerpt: self.scrub(&text.chars().take(200).collect::<String>()),
                            };
                            let mut record = self.build_ok(&ctx, att, &tokens, Some(mode));
                            record.error = Some(err.to_string());
                            self.push(record);
                            return Err(err);
                        }
                    }
                }
                Err(SendError::Refused(e)) => match mode.next() {
                    Some(next) => mode = next,
                    None => return Err(self.fail(&ctx, att, Some(mode), e)),
                },
                Err(SendError::Fatal(e)) => return Err(self.fail(&ctx, att, Some(mode), e)),
            }
        }
    }

    /// Embeds `req.inputs` in one request; one vector per input, in input order.
    ///
    /// # Errors
    /// As [`chat`](Self::chat); [`LlmError::BadResponse`] if the server returns a different
    /// number of vectors than inputs; [`LlmError::Config`] for an empty input list.
    pub async fn embed(&self, stage: &str, req: EmbedRequest) -> Result<EmbedOutcome, LlmError> {
        let ctx = self.ctx(stage, CallKind::Embed, &req.model);
        if req.inputs.is_empty() {
            let e = LlmError::Config("embeddings request with no inputs".into());
            return Err(self.fail(&ctx, Attempts::default(), None, e));
        }
        let body = req.to_body();
        let (key, info) = self.key_for("embed", &req.model, json!({"request": body}));
        let n = req.inputs.len();

        match self.cache_get(&key).await {
            Err(e) => return Err(self.fail(&ctx, Attempts::default(), None, e)),
            Ok(Some(hit)) => {
                if let Some(embeddings) = serde_json::from_str::<WireEmbeddings>(&hit.body)
                    .ok()
                    .and_then(|w| ordered_embeddings(w, n).ok())
                {
                    let record = self.hit(&ctx, &hit);
                    return Ok(EmbedOutcome { embeddings, record });
                }
            }
            Ok(None) => {}
        }

        let est = estimate_embed_tokens(&req.inputs);
        let mut att = Attempts::default();
        let parse = |text: &str| {
            serde_json::from_str::<WireEmbeddings>(text).map_err(|e| format!("not JSON: {e}"))
        };
        match self
            .send(EMBED, &req.model, &body, est, false, &mut att, parse)
            .await
        {
            Ok((wire, raw, debited)) => {
                let tokens = match wire.usage.as_ref().and_then(|u| u.prompt_tokens) {
                    Some(p) => Tokens {
                        prompt: p,
                        completion: 0,
                        estimated: false,
                    },
                    None => Tokens {
                        prompt: est,
                        completion: 0,
                        estimated: true,
                    },
                };
                let embeddings = match ordered_embeddings(wire, n) {
                    Ok(e) => e,
                    Err(detail) => {
                        let e = LlmError::bad_response(EMBED, detail);
                        return Err(self.fail(&ctx, att, None, e));
                    }
                };
                let note = self
                    .settle(&key, info, raw, &tokens, None, &req.model, debited)
                    .await;
                let record = self.ok(&ctx, att, &tokens, None, note);
                Ok(EmbedOutcome { embeddings, record })
            }
            Err(SendError::Refused(e) | SendError::Fatal(e)) => Err(self.fail(&ctx, att, None, e)),
        }
    }

    // ---- pipeline pieces ----

    fn ctx<'a>(&self, stage: &'a str, kind: CallKind, model: &'a str) -> CallCtx<'a> {
        CallCtx {
            stage,
            kind,
            model,
            started: SystemTime::now(),
            t0: Instant::now(),
        }
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

    fn scrub(&self, s: &str) -> String {
        match &self.inner.key {
            Some(k) => k.scrub(s),
            None => s.to_string(),
        }
    }

    fn key_for(&self, kind: &str, model: &str, payload: Value) -> (String, CacheEntryInfo) {
        let mut v = json!({
            "v": KEY_VERSION,
            "kind": kind,
            "base_url": self.inner.base_url,
            "model": model,
        });
        if let (Some(o), Value::Object(p)) = (v.as_object_mut(), payload) {
            o.extend(p);
        }
        let canonical = canonical_json(&v);
        let info = CacheEntryInfo {
            kind: kind.to_string(),
            base_url: self.inner.base_url.clone(),
            model: model.to_string(),
            request: canonical.clone(),
        };
        (cache_key(&canonical), info)
    }

    async fn cache_get(&self, key: &str) -> Result<Option<CachedResponse>, LlmError> {
        match &self.inner.cache {
            Some(c) => c.get(key).await,
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

    /// Sends `body` to `endpoint` with pacing and retries, and parses a 2xx body with `parse`.
    /// Returns the parsed reply, the raw body and the tokens debited for the last attempt.
    #[allow(clippy::too_many_arguments)]
    async fn send<T>(
        &self,
        endpoint: &'static str,
        model: &str,
        body: &Value,
        est_tokens: u64,
        format_sensitive: bool,
        att: &mut Attempts,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<(T, String, u64), SendError> {
        let mcfg = self.model_cfg(model).clone();
        let retry = &self.inner.cfg.retry;
        let limiter = self.limiter(model);
        let url = format!("{}{}", self.inner.base_url, endpoint);
        let timeout = Duration::from_secs_f64(mcfg.timeout_s);
        let mut last = String::new();
        let mut tries = 0;
        while tries < mcfg.max_attempts {
            tries += 1;
            let adm = limiter.admit(est_tokens).await;
            att.count += 1;
            let t0 = Instant::now();
            let mut rb = self.inner.http.post(&url).timeout(timeout).json(body);
            if let Some(k) = &self.inner.key {
                rb = rb.bearer_auth(k.expose());
            }
            let mut hint = None;
            match rb.send().await {
                Err(e) => {
                    if e.is_builder() {
                        let msg = self.scrub(&describe(&e));
                        return Err(SendError::Fatal(LlmError::Config(msg)));
                    }
                    last = self.scrub(&describe(&e));
                }
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let first = t0.elapsed();
                    let headers = resp.headers().clone();
                    att.last_status = Some(status);
                    match resp.text().await {
                        Err(e) => {
                            last = self.scrub(&format!(
                                "HTTP {status}, reading the body failed: {}",
                                describe(&e)
                            ));
                        }
                        Ok(text) => {
                            att.latency = Some((ms(first), ms(t0.elapsed())));
                            if (200..300).contains(&status) {
                                match parse(&text) {
                                    Ok(v) => return Ok((v, text, adm.debited_tokens)),
                                    Err(why) => {
                                        last = self.scrub(&format!(
                                            "HTTP {status} with a malformed body ({why}): {}",
                                            excerpt(&text, 200)
                                        ))
                                    }
                                }
                            } else if format_sensitive && is_format_refusal(status, &text) {
                                return Err(SendError::Refused(LlmError::Rejected {
                                    status,
                                    endpoint: endpoint.to_string(),
                                    message: self.scrub(&server_message(&text)),
                                }));
                            } else if is_retryable_status(status) {
                                last = self
                                    .scrub(&format!("HTTP {status}: {}", server_message(&text)));
                                hint = retry_hint(&headers, SystemTime::now());
                            } else {
                                return Err(SendError::Fatal(LlmError::Rejected {
                                    status,
                                    endpoint: endpoint.to_string(),
                                    message: self.scrub(&server_message(&text)),
                                }));
                            }
                        }
                    }
                }
            }
            drop(adm);
            if tries >= mcfg.max_attempts {
                break;
            }
            let wait = match hint {
                Some(h) if h.as_secs_f64() > retry.max_retry_after_s => {
                    return Err(SendError::Fatal(LlmError::RetryAfterTooLong {
                        endpoint: endpoint.to_string(),
                        wait_s: h.as_secs_f64(),
                        max_s: retry.max_retry_after_s,
                    }));
                }
                Some(h) => {
                    limiter.pause_for(h);
                    hinted_wait(h)
                }
                None => backoff(retry, tries),
            };
            tokio::time::sleep(wait).await;
        }
        Err(SendError::Fatal(LlmError::Exhausted {
            endpoint: endpoint.to_string(),
            attempts: tries,
            last,
        }))
    }

    // ---- records ----

    fn base_record(&self, ctx: &CallCtx<'_>) -> CallRecord {
        CallRecord {
            stage: ctx.stage.to_string(),
            kind: ctx.kind,
            model: ctx.model.to_string(),
            started_at: rfc3339_utc(ctx.started),
            latency_ms_first_byte: None,
            latency_ms_total: None,
            wall_ms: ms(ctx.t0.elapsed()),
            prompt_tokens: 0,
            completion_tokens: 0,
            tokens_estimated: false,
            cost_usd: None,
            attempts: 0,
            cache_hit: false,
            response_format: None,
            http_status: None,
            error: None,
        }
    }

    fn push(&self, record: CallRecord) {
        self.inner
            .records
            .lock()
            .expect("records lock")
            .push(record.clone());
        self.inner
            .subscribers
            .lock()
            .expect("lock")
            .retain(|tx| tx.send(record.clone()).is_ok());
    }

    fn hit(&self, ctx: &CallCtx<'_>, hit: &CachedResponse) -> CallRecord {
        let r = CallRecord {
            prompt_tokens: hit.prompt_tokens,
            completion_tokens: hit.completion_tokens,
            tokens_estimated: hit.tokens_estimated,
            cost_usd: Some(0.0),
            cache_hit: true,
            response_format: hit.response_format,
            ..self.base_record(ctx)
        };
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
        CallRecord {
            latency_ms_first_byte: att.latency.map(|l| l.0),
            latency_ms_total: att.latency.map(|l| l.1),
            prompt_tokens: tokens.prompt,
            completion_tokens: tokens.completion,
            tokens_estimated: tokens.estimated,
            cost_usd: cost_usd(self.model_cfg(ctx.model), tokens.prompt, tokens.completion),
            attempts: att.count,
            response_format: mode,
            http_status: att.last_status,
            ..self.base_record(ctx)
        }
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

    fn fail(
        &self,
        ctx: &CallCtx<'_>,
        att: Attempts,
        mode: Option<ResponseFormatKind>,
        err: LlmError,
    ) -> LlmError {
        let r = CallRecord {
            latency_ms_first_byte: att.latency.map(|l| l.0),
            latency_ms_total: att.latency.map(|l| l.1),
            attempts: att.count,
            response_format: mode,
            http_status: att.last_status,
            error: Some(self.scrub(&err.to_string())),
            ..self.base_record(ctx)
        };
        self.push(r);
        err
    }
}

fn parse_chat(text: &str) -> Result<WireChat, String> {
    let w: WireChat = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    if w.choices.is_empty() {
        return Err("no choices".into());
    }
    Ok(w)
}

/// Usage from the server when complete; otherwise estimates for what is missing, flagged.
fn chat_tokens(usage: Option<&WireUsage>, est_prompt: u64, content: &str) -> Tokens {
    let p = usage.and_then(|u| u.prompt_tokens);
    let c = usage.and_then(|u| u.completion_tokens);
    Tokens {
        prompt: p.unwrap_or(est_prompt),
        completion: c.unwrap_or_else(|| count_tokens(content)),
        estimated: p.is_none() || c.is_none(),
    }
}

fn ordered_embeddings(w: WireEmbeddings, n: usize) -> Result<Vec<Vec<f32>>, String> {
    if w.data.len() != n {
        return Err(format!("{} vectors for {n} inputs", w.data.len()));
    }
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; n];
    for (pos, e) in w.data.into_iter().enumerate() {
        let i = e.index.unwrap_or(pos);
        match slots.get_mut(i) {
            Some(slot @ None) => *slot = Some(e.embedding),
            _ => return Err(format!("bad or repeated embedding index {i}")),
        }
    }
    Ok(slots.into_iter().map(|s| s.unwrap_or_default()).collect())
}

/// The server's error message: `error.message`, `error` (string), `message` or `detail`, else
/// the start of the body.
fn server_message(body: &str) -> String {
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        let candidates = [
            v.pointer("/error/message"),
            v.get("error").filter(|e| e.is_string()),
            v.get("message"),
            v.get("detail"),
        ];
        for c in candidates.into_iter().flatten() {
            let s = match c {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if !s.trim().is_empty() {
                return excerpt(&s, 500);
            }
        }
    }
    let t = body.trim();
    if t.is_empty() {
        "(empty body)".to_string()
    } else {
        excerpt(t, 500)
    }
}

fn excerpt(s: &str, max_chars: usize) -> String {
    let mut out: String = s.chars().take(max_chars).collect();
    if s.chars().count() > max_chars {
        out.push('…');
    }
    out
}

/// A reqwest error with its source chain (reqwest's own Display hides the cause).
fn describe(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timeout"
    } else if e.is_connect() {
        "connection failed"
    } else if e.is_body() || e.is_decode() {
        "response body broken"
    } else {
        "request failed"
    };
    let mut msg = format!("{kind}: {e}");
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        src = s.source();
    }
    msg
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_messages() {
        assert_eq!(
            server_message(r#"{"error":{"message":"bad thing","code":400}}"#),
            "bad thing"
        );
        assert_eq!(
            server_message(r#"{"object":"error","message":"vllm says no","code":400}"#),
            "vllm says no"
        );
        assert_eq!(server_message(r#"{"error":"plain"}"#), "plain");
        assert_eq!(server_message(r#"{"detail":"fastapi"}"#), "fastapi");
        assert_eq!(server_message("  upstream exploded "), "upstream exploded");
        assert_eq!(server_message(""), "(empty body)");
    }

    #[test]
    fn embeddings_reordered_by_index() {
        let w: WireEmbeddings = serde_json::from_str(
            r#"{"data":[{"index":1,"embedding":[2.0]},{"index":0,"embedding":[1.0]}]}"#,
        )
        .unwrap();
        assert_eq!(
            ordered_embeddings(w, 2).unwrap(),
            vec![vec![1.0], vec![2.0]]
        );
        let w: WireEmbeddings = serde_json::from_str(r#"{"data":[{"embedding":[1.0]}]}"#).unwrap();
        assert!(ordered_embeddings(w, 2).is_err());
    }

    #[test]
    fn partial_usage_is_flagged() {
        let u = WireUsage {
            prompt_tokens: Some(100),
            completion_tokens: None,
        };
        let t = chat_tokens(Some(&u), 7, "hello world");
        assert_eq!((t.prompt, t.completion, t.estimated), (100, 2, true));
        let u = WireUsage {
            prompt_tokens: Some(100),
            completion_tokens: Some(9),
        };
        let t = chat_tokens(Some(&u), 7, "hello world");
        assert_eq!((t.prompt, t.completion, t.estimated), (100, 9, false));
        let t = chat_tokens(None, 7, "hello world");
        assert_eq!((t.prompt, t.completion, t.estimated), (7, 2, true));
    }
}
