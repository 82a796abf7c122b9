//! Chat completions: [`LlmClient::chat`] (a text reply) and [`LlmClient::chat_json`] (a JSON
//! reply checked against a schema, with the structured-output fallbacks).

use serde_json::{Value, json};

use super::{CHAT, LlmClient};
use crate::llm::accounting::chat_tokens;
use crate::llm::cost::{count_tokens, estimate_chat_prompt_tokens};
use crate::llm::error::LlmError;
use crate::llm::format::ResponseFormatKind;
use crate::llm::record::CallKind;
use crate::llm::structured::{apply_mode, instruction_message, parse_json_checked};
use crate::llm::transport::{Attempts, SendError};
use crate::llm::types::{ChatOutcome, ChatRequest, JsonOutcome, WireChat};

impl LlmClient {
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
        if let Some(hit) = self.cached_chat(stage, &req).await? {
            return Ok(hit);
        }
        let body = req.to_body();
        let (key, info) = self.key_for("chat", &req.model, json!({"request": body}));
        let ctx = self.ctx(stage, CallKind::Chat, &req.model, &key);

        let est_prompt = estimate_chat_prompt_tokens(&req.messages);
        let est = est_prompt + u64::from(req.max_tokens.unwrap_or(0));
        let mut att = Attempts::estimated_at(est_prompt);
        let build = || (body.clone(), None);
        match self
            .send(CHAT, stage, &req.model, &build, est, &mut att, parse_chat)
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

    /// The usable reply to `req` in the response cache, as [`chat`](Self::chat) would return
    /// it (and recorded as a cache hit); `None` without a cache or when it holds none. Nothing is
    /// sent: what a dry run uses to tell the calls it would make from those already answered.
    ///
    /// # Errors
    /// [`LlmError::Cache`] when the cache cannot be read.
    pub async fn cached_chat(
        &self,
        stage: &str,
        req: &ChatRequest,
    ) -> Result<Option<ChatOutcome>, LlmError> {
        let body = req.to_body();
        let (key, _) = self.key_for("chat", &req.model, json!({"request": body}));
        let ctx = self.ctx(stage, CallKind::Chat, &req.model, &key);
        let Some(hit) = self.cached(&key, &ctx).await? else {
            return Ok(None);
        };
        let Some((content, finish)) = serde_json::from_str::<WireChat>(&hit.body)
            .ok()
            .and_then(|w| w.first())
            .filter(|(c, f)| unusable(c, f.as_deref(), req.reject_truncated).is_none())
        else {
            return Ok(None);
        };
        let record = self.hit(&ctx, &hit);
        Ok(Some(ChatOutcome {
            content,
            finish_reason: finish,
            record,
        }))
    }

    /// A chat completion whose reply must be a JSON value matching `schema` (a JSON Schema
    /// object). Asks for `json_schema`; if the server refuses it, falls back to `json_object`
    /// and then to plain text with the schema in the prompt, and remembers per base URL and model
    /// what worked. The reply is parsed leniently (code fences, surrounding prose) and checked
    /// shallowly against the schema (required keys, enums); nothing is invented.
    ///
    /// # Errors
    /// As [`chat`](Self::chat), plus [`LlmError::NoJson`] when the reply holds no usable JSON (the
    /// call's tokens and cost are still recorded), and [`LlmError::NoContent`] (`finish_reason
    /// length (cut at max_tokens)`) for a reply cut at `max_tokens` when `req.reject_truncated`. If every mode is refused, the last refusal.
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

        if let Some(hit) = self.cached(&key, &ctx).await? {
            let parsed = serde_json::from_str::<WireChat>(&hit.body)
                .ok()
                .and_then(|w| w.first())
                .and_then(|(text, _)| parse_json_checked(&text, schema).ok().map(|v| (text, v)));
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
            att.est_prompt = est_prompt;
            match self
                .send(CHAT, stage, &req.model, &build, est, &mut att, parse_chat)
                .await
            {
                Ok(sent) => {
                    let mode = sent.mode.unwrap_or(floor);
                    self.remember_format(&req.model, mode).await;
                    let (text, finish) = sent.reply.first().unwrap_or_default();
                    let tokens = chat_tokens(sent.reply.usage.as_ref(), est_prompt, &text);
                    let read = match cut(finish.as_deref(), req.reject_truncated) {
                        Some(reason) => Err(LlmError::NoContent { reason }),
                        None => parse_json_checked(&text, schema).map_err(|why| LlmError::NoJson {
                            reason: why.to_string(),
                            excerpt: self.scrub(&text.chars().take(200).collect::<String>()),
                        }),
                    };
                    match read {
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
                        Err(err) => {
                            self.limiter(&req.model)
                                .correct(sent.debited, tokens.prompt + tokens.completion);
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
}

/// Why a chat reply is no reply: empty or null content, a `content_filter` finish, or (when
/// `reject_truncated`) a `length` finish. `None` for a usable reply.
fn unusable(content: &str, finish: Option<&str>, reject_truncated: bool) -> Option<String> {
    if finish == Some("content_filter") {
        return Some("finish_reason content_filter".into());
    }
    cut(finish, reject_truncated)
        .or_else(|| content.trim().is_empty().then(|| "empty content".into()))
}

/// `finish_reason length (cut at max_tokens)` for a reply cut at `max_tokens` when
/// `reject_truncated`; `None` otherwise.
fn cut(finish: Option<&str>, reject_truncated: bool) -> Option<String> {
    (reject_truncated && finish == Some("length"))
        .then(|| "finish_reason length (cut at max_tokens)".to_string())
}

fn parse_chat(text: &str) -> Result<WireChat, String> {
    let w: WireChat = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    if w.choices.is_empty() {
        return Err("no choices".into());
    }
    Ok(w)
}
