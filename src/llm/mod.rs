//! The one client that talks to models: chat completions, embeddings and reranking against any
//! OpenAI-compatible server (OpenAI, vLLM, llama.cpp's server, llama-cpp-python, Ollama).
//!
//! Every call goes through the same pipeline:
//!
//! 1. **Cache** ([`cache`]): a SQLite file keyed by the SHA-256 of (base URL, model, canonical request
//!    JSON). A hit sends nothing, costs nothing and is recorded with `cache_hit = true`.
//! 2. **Pacing** ([`limiter`]): per model, a cap on requests in flight (a tokio semaphore), a
//!    tokens-per-minute budget debited by the estimated tokens before sending and corrected upwards
//!    from the response's usage, and a requests-per-minute limiter with a burst of 1, so requests
//!    leave evenly spaced (N requests at R per minute take about N/R minutes and a provider that
//!    enforces its quota over one-second windows is not tripped).
//! 3. **Transport and retry** ([`retry`]): reqwest with a per-request timeout; 429, 408, 5xx,
//!    timeouts, broken connections and malformed bodies are retried with exponential backoff and
//!    full jitter, honouring `Retry-After` (seconds, fractional seconds or an HTTP date),
//!    `retry-after-ms` and `x-ratelimit-reset-{requests,tokens}`. Any other 4xx is not retried and
//!    its message is shown.
//! 4. **Structured output** ([`structured`]): `json_schema`, then `json_object` with the schema,
//!    then plain text with the schema in the prompt, remembered per server and model; lenient JSON
//!    parsing that never invents a value.
//! 5. **Accounting** ([`record`], [`cost`]): one flat [`CallRecord`] per call (latency, tokens,
//!    whether the tokens were estimated, cost in USD, attempts, cache hit, error), collected by the
//!    client and writable as CSV.
//!
//! # Why async-openai is used only for request types
//!
//! async-openai 0.43 is the requested client, and its request types (`CreateChatCompletionRequest`,
//! `CreateEmbeddingRequest`, `ResponseFormat`) are what we serialise. Its transport is not used,
//! because checked against 0.43 (see `shared/notes/crates.md`):
//!
//! - its response types reject replies that OpenAI-compatible servers really send: no `created` or
//!   `object`, `finish_reason: "eos"`, `service_tier: "on_demand"`, embeddings without `usage`;
//! - its built-in retry only fires on 429s whose body is OpenAI-shaped, reads `Retry-After` only as
//!   whole seconds (no HTTP date, no fraction, no `retry-after-ms` or `x-ratelimit-reset-*`), has no
//!   jitter, and gives up within about 0.7 s, far too soon for minute-based quotas;
//! - response headers never reach the caller, so per-attempt latency, rate-limit headers and the raw
//!   body (which the cache stores) are out of reach.
//!
//! So responses are parsed into our own tolerant types ([`types`]) and transport, timing and retry
//! are done here on reqwest.
//!
//! # Configuration
//!
//! [`ClientConfig`] deserialises from a TOML section; every field has a default:
//!
//! ```toml
//! [llm]
//! base_url = "http://localhost:8000/v1"   # default: $OPENAI_BASE_URL, else https://api.openai.com/v1
//! api_key_env = "OPENAI_API_KEY"          # a local server may need no key
//! cache = true
//! cache_path = "results/llm_cache.sqlite"
//!
//! [llm.retry]
//! base_delay_ms = 500
//! max_delay_s = 60.0
//!
//! [llm.models.gpt-4o-mini]
//! rpm = 500
//! tpm = 200000
//! max_in_flight = 8
//! timeout_s = 60.0
//! max_attempts = 6
//! input_usd_per_mtok = 0.15
//! output_usd_per_mtok = 0.60
//! ```
//!
//! The API key is only ever read from the environment variable the config names, is held in an
//! [`ApiKey`] whose `Debug` prints `***`, and is scrubbed from any server message we show.

#![warn(missing_docs)]

mod accounting;
pub mod batch;
pub mod cache;
pub mod client;
pub mod config;
pub mod cost;
pub mod error;
pub mod format;
mod learned;
pub mod limiter;
pub mod record;
pub mod retry;
pub mod structured;
mod transport;
pub mod types;

pub use client::LlmClient;
pub use client::rerank::{RerankApi, RerankOutcome, RerankRequest};
pub use config::{ApiKey, ClientConfig, ModelConfig, RetryConfig};
pub use error::LlmError;
pub use format::ResponseFormatKind;
pub use record::{CallKind, CallRecord};
pub use structured::parse_json_lenient;
pub use types::{
    ChatMessage, ChatOutcome, ChatRequest, EmbedOutcome, EmbedRequest, JsonOutcome, Role,
};
