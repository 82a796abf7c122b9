//! Request and outcome types of the public API, and the tolerant wire types replies are parsed
//! into.
//!
//! Requests are serialised through async-openai's request types. Replies are parsed into our own
//! structs in which everything but the payload is optional and enums are plain strings, because
//! OpenAI-compatible servers omit `created`/`object`, send `finish_reason: "eos"`,
//! `service_tier: "on_demand"`, integer error codes, or no `usage`.

use async_openai::types::chat::{
    ChatCompletionRequestAssistantMessage, ChatCompletionRequestMessage,
    ChatCompletionRequestSystemMessage, ChatCompletionRequestUserMessage,
    CreateChatCompletionRequest, StopConfiguration,
};
use async_openai::types::embeddings::{CreateEmbeddingRequest, EmbeddingInput};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::format::ResponseFormatKind;
use super::record::CallRecord;

/// Author of a chat message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions.
    System,
    /// The user's turn.
    User,
    /// A previous model turn.
    Assistant,
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Author.
    pub role: Role,
    /// Text content.
    pub content: String,
}

impl ChatMessage {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::System,
            content: content.into(),
        }
    }
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::User,
            content: content.into(),
        }
    }
    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        ChatMessage {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// A chat-completion request. All parameters are part of the cache key.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    /// Model name as the server knows it; also selects the limits and prices in the config.
    pub model: String,
    /// The conversation.
    pub messages: Vec<ChatMessage>,
    /// Sampling temperature (0 for reproducible judging).
    pub temperature: Option<f32>,
    /// Nucleus sampling.
    pub top_p: Option<f32>,
    /// Maximum completion tokens, sent as `max_tokens` (understood by OpenAI-compatible servers).
    /// Also counted in the tokens-per-minute estimate.
    pub max_tokens: Option<u32>,
    /// Seed, for servers that accept one.
    pub seed: Option<i64>,
    /// Stop sequences.
    pub stop: Option<Vec<String>>,
    /// Whether a reply cut at `max_tokens` (finish reason `length`) is an error
    /// ([`LlmError::NoContent`](super::LlmError::NoContent), never cached) rather than a reply.
    /// Not sent, and not part of the cache key.
    pub reject_truncated: bool,
}

impl ChatRequest {
    /// A request with the given model and messages and no parameters.
    pub fn new(model: impl Into<String>, messages: Vec<ChatMessage>) -> Self {
        ChatRequest {
            model: model.into(),
            messages,
            ..Default::default()
        }
    }

    /// The JSON body, built with async-openai's request type (no `response_format`).
    pub(crate) fn to_body(&self) -> Value {
        let messages = self
            .messages
            .iter()
            .map(|m| match m.role {
                Role::System => ChatCompletionRequestMessage::from(
                    ChatCompletionRequestSystemMessage::from(m.content.as_str()),
                ),
                Role::User => ChatCompletionRequestUserMessage::from(m.content.as_str()).into(),
                Role::Assistant => {
                    ChatCompletionRequestAssistantMessage::from(m.content.as_str()).into()
                }
            })
            .collect();
        #[allow(deprecated)] // `max_tokens` and `seed` are what non-OpenAI servers understand
        let req = CreateChatCompletionRequest {
            model: self.model.clone(),
            messages,
            temperature: self.temperature,
            top_p: self.top_p,
            max_tokens: self.max_tokens,
            seed: self.seed,
            stop: self.stop.clone().map(StopConfiguration::StringArray),
            ..Default::default()
        };
        serde_json::to_value(&req).expect("chat request serialises")
    }
}

/// An embeddings request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EmbedRequest {
    /// Embedding model name.
    pub model: String,
    /// Texts to embed, in order; the outcome has one vector per input, in the same order.
    pub inputs: Vec<String>,
}

impl EmbedRequest {
    pub(crate) fn to_body(&self) -> Value {
        let req = CreateEmbeddingRequest {
            model: self.model.clone(),
            input: EmbeddingInput::StringArray(self.inputs.clone()),
            ..Default::default()
        };
        serde_json::to_value(&req).expect("embedding request serialises")
    }
}

/// The result of [`LlmClient::chat`](super::LlmClient::chat).
#[derive(Debug, Clone, PartialEq)]
pub struct ChatOutcome {
    /// Text of the first choice (empty if the server sent no content).
    pub content: String,
    /// The first choice's finish reason as sent (`"stop"`, `"length"`, `"eos"`, ...).
    pub finish_reason: Option<String>,
    /// The accounting record of this call (also appended to the client's records).
    pub record: CallRecord,
}

/// The result of [`LlmClient::chat_json`](super::LlmClient::chat_json).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonOutcome {
    /// The JSON value read from the reply.
    pub value: Value,
    /// The reply's raw text.
    pub text: String,
    /// The response format that produced it.
    pub format: ResponseFormatKind,
    /// The accounting record of this call.
    pub record: CallRecord,
}

/// The result of [`LlmClient::embed`](super::LlmClient::embed).
#[derive(Debug, Clone, PartialEq)]
pub struct EmbedOutcome {
    /// One vector per input, in input order.
    pub embeddings: Vec<Vec<f32>>,
    /// The accounting record of this call.
    pub record: CallRecord,
}

// ---- tolerant wire types ----

/// Token usage as servers really send it: integers, integers written as floats (`57.0`), `null`,
/// `{}` or no `usage` at all. A value that is not a whole non-negative number counts as missing,
/// never as a malformed reply: the answer is still good, only its tokens get estimated.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct WireUsage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

impl WireUsage {
    /// Reads the counts of a `usage` object (see [`WireUsage`]).
    pub(crate) fn from_value(v: &Value) -> Self {
        let count = |k: &str| {
            let n = v.get(k)?;
            n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite() && *f >= 0.0 && f.fract() == 0.0)
                    .map(|f| f as u64)
            })
        };
        WireUsage {
            prompt_tokens: count("prompt_tokens"),
            completion_tokens: count("completion_tokens"),
        }
    }
}

/// Reads `usage` leniently (see [`WireUsage`]); absent or not an object gives `None`.
fn lenient_usage<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<WireUsage>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    Ok(v.filter(Value::is_object)
        .map(|v| WireUsage::from_value(&v)))
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireChat {
    #[serde(default)]
    pub choices: Vec<WireChoice>,
    #[serde(default, deserialize_with = "lenient_usage")]
    pub usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireChoice {
    pub message: Option<WireMessage>,
    /// Legacy completions-style servers put the text here.
    pub text: Option<String>,
    pub finish_reason: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireMessage {
    /// A string, or an array of content parts.
    pub content: Option<Value>,
}

impl WireChat {
    /// The first choice's text and finish reason, or `None` if there is no choice.
    pub fn first(&self) -> Option<(String, Option<String>)> {
        let c = self.choices.first()?;
        let text = match c.message.as_ref().and_then(|m| m.content.as_ref()) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(""),
            _ => c.text.clone().unwrap_or_default(),
        };
        let finish = c.finish_reason.as_ref().and_then(|f| match f {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        });
        Some((text, finish))
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireEmbeddings {
    pub data: Vec<WireEmbedding>,
    #[serde(default, deserialize_with = "lenient_usage")]
    pub usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireEmbedding {
    pub index: Option<usize>,
    pub embedding: Vec<f32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_is_read_leniently() {
        let usage = |u: &str| {
            let body = format!(r#"{{"choices":[{{"message":{{"content":"hi"}}}}]{u}}}"#);
            serde_json::from_str::<WireChat>(&body).unwrap().usage
        };
        let both = |p, c| {
            Some(WireUsage {
                prompt_tokens: p,
                completion_tokens: c,
            })
        };
        assert_eq!(
            usage(r#","usage":{"prompt_tokens":57.0,"completion_tokens":3}"#),
            both(Some(57), Some(3))
        );
        assert_eq!(
            usage(r#","usage":{"prompt_tokens":null,"completion_tokens":2.5}"#),
            both(None, None)
        );
        assert_eq!(usage(r#","usage":{}"#), both(None, None));
        assert_eq!(usage(r#","usage":null"#), None);
        assert_eq!(usage(r#","usage":"n/a""#), None);
        assert_eq!(usage(""), None);
        assert_eq!(
            usage(r#","usage":{"prompt_tokens":-1,"completion_tokens":"7"}"#),
            both(None, None)
        );
    }
}
