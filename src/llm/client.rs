//! [`LlmClient`]: the cache → pacing → transport/retry → accounting pipeline.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::accounting::{CallCtx, Ledger, Tokens, chat_tokens};
use super::cache::{CacheEntryInfo, CachedResponse, ResponseCache, cache_key, canonical_json};
use super::config::{ApiKey, ClientConfig, ModelConfig, redact_url, url_without_credentials};
use super::cost::{cost_usd, count_tokens, estimate_chat_prompt_tokens, estimate_embed_tokens};
use super::error::LlmError;
use super::format::ResponseFormatKind;
use super::learned::FormatMemory;
use super::limiter::ModelLimiter;
use super::record::{CallKind, CallRecord};
use super::structured::{apply_mode, instruction_message, parse_json_checked};
use super::transport::{Attempts, BodyFn, Call, SendError, Sent, Transport};
use super::types::{
    ChatOutcome, ChatRequest, EmbedOutcome, EmbedRequest, JsonOutcome, WireChat, WireEmbeddings,
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
    transport: Transport,
    /// The URL without credentials: what identifies the server in the cache.
    key_url: String,
    cache: Option<ResponseCache>,
    limiters: Mutex<HashMap<String, Arc<ModelLimiter>>>,
    formats: FormatMemory,
    ledger: Ledger,
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

    /// One chat completion. The reply is the first choice's text.
    ///
    /// # Errors
    /// [`LlmError::Rejected`] for a non-retryable status (its message included),
    /// [`LlmError::Exhausted`] when every attempt failed transiently, [`LlmError::TimedOut`]
    /// when every attempt timed out, [`LlmError::NoContent`] for a reply with empty or null
    /// content, a `content_filter` finish, or a `length` finish when `req.reject_truncated`
    /// (such a reply is never cached; its tokens are recorded), [`LlmError::RetryAfterTooLong`],
    /// [`LlmError::Cache`]. Every outcome, success or error, is also appended to
    /// [`records`](Self::records).
    pub async fn chat(&self, stage: &str, req: ChatRequest) -> Result<ChatOutcome, LlmError> {
        let body = req.to_body();
        let (key, info) = self.key_for("chat", &req.model, json!({"request": body}));
        let ctx = self.ctx(stage, CallKind::Chat, &req.model, &key);

        match self.cache_get(&key).await {
            Err(e) => return Err(self.fail(&ctx, Attempts::default(), None, e)),
            Ok(Some(hit)) => {
                if let Some((content, finish)) = serde_json::from_str::<WireChat>(&hit.body)
                    .ok()
                    .and_then(|w| w.first())
                    .filter(|(c, f)| unusable(c, f.as_deref(), req.reject_truncated).is_none())
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
        let build = || (body.clone(), None);
        match self
            .send(CHAT, &req.model, &build, est, &mut att, parse_chat)
            .await
        {
            Ok(sent) => {
                let (content, finish) = sent.reply.first().unwrap_or_default();
                let tokens = chat_tokens(sent.reply.usage.as_ref(), est_prompt, &content);
                if let Some(reason) = unusable(&content, finish.as_deref(), req.reject_truncated) {
                    self.limiter(&req.model)
                        .correct(sent.debited, tokens.prompt + tokens.completion);
                    let err = LlmError::NoContent { reason };
                    let mut record = self.build_ok(&ctx, att, &tokens, None);
                    record.error = Some(err.to_string());
                    self.push(record);
                    return Err(err);
                }
                let cache_note = self
                    .settle(
                        &key,
                        info,
                        sent.raw,
                        &tokens,
                        None,
                        &req.model,
                        sent.debited,
                    )
                    .await;
                let record = self.ok(&ctx, att, &tokens, None, cache_note);
                Ok(ChatOutcome {
                    content,
                    finish_reason: finish,
                    record,
                })
            }
            Err(SendError::Refused(e, _) | SendError::Fatal(e)) => {
                Err(self.fail(&ctx, att, None, e))
            }
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
        let base_body = req.to_body();
        // the format mode is not part of the key: any mode's valid answer answers the request
        let (key, info) = self.key_for(
            "chat_json",
            &req.model,
            json!({"request": base_body, "schema": schema}),
        );
        let ctx = self.ctx(stage, CallKind::ChatJson, &req.model, &key);

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

        // the lowest mode this call may use; the body of each attempt takes the mode known for
        // the model when the attempt is admitted, if that is lower still
        let mut floor = self.format_for(&req.model).await;
        let mut att = Attempts::default();
        loop {
            let f = floor;
            let build = || {
                let mode = self.inner.formats.known(&req.model).unwrap_or(f).max(f);
                let mut body = base_body.clone();
                apply_mode(&mut body, mode, schema);
                (body, Some(mode))
            };
            let est_prompt = match floor {
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
            match self
                .send(CHAT, &req.model, &build, est, &mut att, parse_chat)
                .await
            {
                Ok(sent) => {
                    let mode = sent.mode.unwrap_or(floor);
                    self.remember_format(&req.model, mode).await;
                    let (text, _) = sent.reply.first().unwrap_or_default();
                    let tokens = chat_tokens(sent.reply.usage.as_ref(), est_prompt, &text);
                    match parse_json_checked(&text, schema) {
                        Ok(value) => {
                            let note = self
                                .settle(
                                    &key,
                                    info,
                                    sent.raw,
                                    &tokens,
                                    Some(mode),
                                    &req.model,
                                    sent.debited,
                                )
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
                                .correct(sent.debited, tokens.prompt + tokens.completion);
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
                Err(SendError::Refused(e, refused)) => match refused.next() {
                    Some(next) => floor = floor.max(next),
                    None => return Err(self.fail(&ctx, att, Some(refused), e)),
                },
                Err(SendError::Fatal(e)) => {
                    if matches!(e, LlmError::Rejected { .. })
                        && floor > ResponseFormatKind::JsonSchema
                    {
                        self.inner.formats.forget_refusals(&req.model);
                    }
                    return Err(self.fail(&ctx, att, Some(floor), e));
                }
            }
        }
    }

    /// Embeds `req.inputs` in one request; one vector per input, in input order.
    ///
    /// # Errors
    /// As [`chat`](Self::chat); [`LlmError::BadResponse`] if the server returns a different
    /// number of vectors than inputs; [`LlmError::Config`] for an empty input list.
    pub async fn embed(&self, stage: &str, req: EmbedRequest) -> Result<EmbedOutcome, LlmError> {
        let body = req.to_body();
        let (key, info) = self.key_for("embed", &req.model, json!({"request": body}));
        let ctx = self.ctx(stage, CallKind::Embed, &req.model, &key);
        if req.inputs.is_empty() {
            let e = LlmError::Config("embeddings request with no inputs".into());
            return Err(self.fail(&ctx, Attempts::default(), None, e));
        }
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
        let build = || (body.clone(), None);
        match self
            .send(EMBED, &req.model, &build, est, &mut att, parse)
            .await
        {
            Ok(Sent {
                reply: wire,
                raw,
                debited,
                ..
            }) => {
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
            Err(SendError::Refused(e, _) | SendError::Fatal(e)) => {
                Err(self.fail(&ctx, att, None, e))
            }
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
        let cost = cost_usd(self.model_cfg(ctx.model), tokens.prompt, tokens.completion);
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

    fn fail(
        &self,
        ctx: &CallCtx<'_>,
        att: Attempts,
        mode: Option<ResponseFormatKind>,
        err: LlmError,
    ) -> LlmError {
        self.push(ctx.failed(att, mode, self.scrub(&err.to_string())));
        err
    }

    /// `s` without the URL's credentials and the API key.
    fn scrub(&self, s: &str) -> String {
        self.inner.transport.scrub(s)
    }

    /// Sends one call through the transport with `model`'s settings and limiter; a refused
    /// structured-output mode is known at once to every call to `model`.
    async fn send<T>(
        &self,
        endpoint: &'static str,
        model: &str,
        build: &BodyFn<'_>,
        est_tokens: u64,
        att: &mut Attempts,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Sent<T>, SendError> {
        let limiter = self.limiter(model);
        let on_refused = |mode| self.inner.formats.mark_refused(model, mode);
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
}

/// Why a chat reply is no reply: empty or null content, a `content_filter` finish, or (when
/// `reject_truncated`) a `length` finish. `None` for a usable reply.
fn unusable(content: &str, finish: Option<&str>, reject_truncated: bool) -> Option<String> {
    match finish {
        Some("content_filter") => Some("finish_reason content_filter".into()),
        Some("length") if reject_truncated => {
            Some("finish_reason length (cut at max_tokens)".into())
        }
        _ if content.trim().is_empty() => Some("empty content".into()),
        _ => None,
    }
}

fn parse_chat(text: &str) -> Result<WireChat, String> {
    let w: WireChat = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    if w.choices.is_empty() {
        return Err("no choices".into());
    }
    Ok(w)
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
