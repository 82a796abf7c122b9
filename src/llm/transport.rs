//! The transport: one call's HTTP attempts against the server, with pacing, retries and the
//! server's waits, and everything the server must not see shown: its credentials and the API key
//! are scrubbed from every message.

use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use super::config::{ApiKey, ModelConfig, RetryConfig, redact_url, url_secrets};
use super::error::LlmError;
use super::format::ResponseFormatKind;
use super::limiter::ModelLimiter;
use super::retry::{backoff, hinted_wait, is_retryable_status, retry_hint};
use super::structured::is_format_refusal;

/// What happened over the HTTP attempts of one call.
#[derive(Default)]
pub(super) struct Attempts {
    pub(super) count: u32,
    pub(super) last_status: Option<u16>,
    /// (first byte, total) of the last attempt that got a response, in ms.
    pub(super) latency: Option<(f64, f64)>,
    /// The prompt tokens the request was estimated at before it was sent (cl100k_base): what a
    /// call that fails without a readable reply records, flagged as an estimate.
    pub(super) est_prompt: u64,
    /// The last 2xx body that could not be read (the server did answer, so its tokens were
    /// probably spent).
    pub(super) unreadable_2xx: Option<String>,
    /// The batch that answered (or failed to answer) the call, in batch mode.
    pub(super) batch: Option<super::batch::Stamp>,
}

impl Attempts {
    /// No attempt yet, for a request estimated at `est_prompt` prompt tokens.
    pub(super) fn estimated_at(est_prompt: u64) -> Self {
        Attempts {
            est_prompt,
            ..Attempts::default()
        }
    }
}

/// Why [`Transport::send`] got no reply.
pub(super) enum SendError {
    /// The server refused the structured-output mode it was sent.
    Refused(LlmError, ResponseFormatKind),
    /// Any other failure, final.
    Fatal(LlmError),
}

/// A 2xx reply read by [`Transport::send`].
pub(super) struct Sent<T> {
    pub(super) reply: T,
    pub(super) raw: String,
    /// Tokens debited from the TPM budget for the last attempt.
    pub(super) debited: u64,
    /// The structured-output mode of the body that got the reply.
    pub(super) mode: Option<ResponseFormatKind>,
}

/// Builds an attempt's body once the attempt is admitted, with its structured-output mode.
pub(super) type BodyFn<'a> = dyn Fn() -> (Value, Option<ResponseFormatKind>) + Sync + 'a;

/// What one call sends, and to whom: the endpoint, the model with its settings and limiter, the
/// estimated tokens, and who to tell of a refused structured-output mode.
pub(super) struct Call<'a> {
    pub(super) endpoint: &'static str,
    pub(super) model: &'a str,
    pub(super) mcfg: &'a ModelConfig,
    pub(super) retry: &'a RetryConfig,
    pub(super) limiter: &'a ModelLimiter,
    pub(super) est_tokens: u64,
    pub(super) on_refused: &'a (dyn Fn(ResponseFormatKind) + Sync),
}

/// The HTTP side of a client: the URL requests go to (credentials included: reqwest sends them
/// as basic authentication), the key, and the strings to scrub from what is shown.
pub(super) struct Transport {
    send_url: String,
    /// The URL as shown: credentials replaced by `***`.
    pub(super) shown_url: String,
    url_secrets: Vec<String>,
    pub(super) key: Option<ApiKey>,
    http: reqwest::Client,
}

impl Transport {
    /// A transport to `base_url` (no trailing slash) with `key`.
    ///
    /// # Errors
    /// [`LlmError::Config`] when the HTTP client cannot be built.
    pub(super) fn new(base_url: &str, key: Option<ApiKey>) -> Result<Self, LlmError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!("chunksweep/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Config(format!("HTTP client: {e}")))?;
        Ok(Transport {
            send_url: base_url.to_string(),
            shown_url: redact_url(base_url),
            url_secrets: url_secrets(base_url),
            key,
            http,
        })
    }

    /// `s` without the URL's credentials and the API key.
    pub(super) fn scrub(&self, s: &str) -> String {
        let mut out = s.to_string();
        for secret in &self.url_secrets {
            let mask = if secret.ends_with('@') { "***@" } else { "***" };
            out = out.replace(secret.as_str(), mask);
        }
        match &self.key {
            Some(k) => k.scrub(&out),
            None => out,
        }
    }

    /// Sends the body `build` makes (after each attempt is admitted by `pace`) to `endpoint`
    /// with retries, and parses a 2xx body with `parse`. A body with a structured-output mode
    /// other than `text` that the server refuses ends the call with [`SendError::Refused`], after
    /// `on_refused` was told, before the slot is released (so every call to the model knows).
    pub(super) async fn send<T>(
        &self,
        call: Call<'_>,
        build: &BodyFn<'_>,
        att: &mut Attempts,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Sent<T>, SendError> {
        let Call {
            endpoint,
            model,
            mcfg,
            retry,
            limiter,
            est_tokens,
            on_refused,
        } = call;
        let url = format!("{}{}", self.send_url, endpoint);
        let timeout = Duration::from_secs_f64(mcfg.timeout_s);
        let rejected = |status: u16, text: &str| LlmError::Rejected {
            status,
            url: format!("{}{endpoint}", self.shown_url),
            model: model.to_string(),
            message: self.scrub(&server_message(text)),
        };
        let mut last = String::new();
        let mut tries = 0;
        let mut timeouts = 0;
        while tries < mcfg.max_attempts {
            tries += 1;
            let adm = limiter.admit(est_tokens).await;
            let (body, mode) = build();
            att.count += 1;
            let t0 = Instant::now();
            let mut rb = self.http.post(&url).timeout(timeout).json(&body);
            if let Some(k) = &self.key {
                rb = rb.bearer_auth(k.expose());
            }
            let mut hint = None;
            match rb.send().await {
                Err(e) => {
                    if e.is_builder() {
                        let msg = self.scrub(&describe(&e));
                        return Err(SendError::Fatal(LlmError::Config(msg)));
                    }
                    timeouts += u32::from(e.is_timeout());
                    last = self.scrub(&describe(&e));
                    if e.is_connect() && crate::llm::config::is_local_url(&self.send_url) {
                        // a server on this machine that refuses the connection is not
                        // running: waiting for it would only delay the same error
                        return Err(SendError::Fatal(LlmError::Exhausted {
                            endpoint: format!("{}{endpoint}", self.shown_url),
                            attempts: tries,
                            last: format!(
                                "{last} (a server on this machine that cannot be reached is not retried: is it running on that port?)"
                            ),
                        }));
                    }
                }
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let first = t0.elapsed();
                    let headers = resp.headers().clone();
                    att.last_status = Some(status);
                    match resp.text().await {
                        Err(e) => {
                            timeouts += u32::from(e.is_timeout());
                            last = self.scrub(&format!(
                                "HTTP {status}, reading the body failed: {}",
                                describe(&e)
                            ));
                        }
                        Ok(text) => {
                            att.latency = Some((ms(first), ms(t0.elapsed())));
                            if (200..300).contains(&status) {
                                match parse(&text) {
                                    Ok(reply) => {
                                        return Ok(Sent {
                                            reply,
                                            raw: text,
                                            debited: adm.debited_tokens,
                                            mode,
                                        });
                                    }
                                    Err(why) => {
                                        att.unreadable_2xx = Some(text.clone());
                                        last = self.scrub(&format!(
                                            "HTTP {status} with a malformed body ({why}): {}",
                                            excerpt(&text, 200)
                                        ))
                                    }
                                }
                            } else if let Some(m) = mode.filter(|&m| m != ResponseFormatKind::Text)
                                && is_format_refusal(status, &text)
                            {
                                on_refused(m);
                                return Err(SendError::Refused(rejected(status, &text), m));
                            } else if is_retryable_status(status) {
                                last = self
                                    .scrub(&format!("HTTP {status}: {}", server_message(&text)));
                                hint = retry_hint(&headers, SystemTime::now());
                            } else {
                                return Err(SendError::Fatal(rejected(status, &text)));
                            }
                        }
                    }
                }
            }
            if let Some(h) = hint
                && h.as_secs_f64() <= retry.max_retry_after_s
            {
                // before the slot is released, so nobody else slips through
                limiter.pause_for(h);
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
                Some(h) => hinted_wait(h),
                None => backoff(retry, tries),
            };
            tokio::time::sleep(wait).await;
        }
        Err(SendError::Fatal(if timeouts == tries {
            LlmError::TimedOut {
                endpoint: endpoint.to_string(),
                attempts: tries,
            }
        } else {
            LlmError::Exhausted {
                endpoint: endpoint.to_string(),
                attempts: tries,
                last,
            }
        }))
    }
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

/// Milliseconds, rounded to the microsecond.
pub(super) fn ms(d: Duration) -> f64 {
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
}
