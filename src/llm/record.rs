//! One flat accounting record per call, writable as CSV.

use std::io::Write;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::format::ResponseFormatKind;

/// Which endpoint a call used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    /// `POST /chat/completions` without structured output.
    Chat,
    /// `POST /chat/completions` asking for JSON ([`LlmClient::chat_json`](super::LlmClient::chat_json)).
    ChatJson,
    /// `POST /embeddings`.
    Embed,
    /// `POST /rerank` ([`LlmClient::rerank`](super::LlmClient::rerank)).
    Rerank,
}

/// What one call cost and how it went. Flat (no maps, no nesting) so it is one CSV row; the
/// column order is the field order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// Caller-chosen pipeline stage, e.g. `"judge"`, `"generate"`, `"embed"`.
    pub stage: String,
    /// Endpoint kind.
    pub kind: CallKind,
    /// Model name as requested.
    pub model: String,
    /// The first 16 hex digits of the request's cache key (SHA-256 of the server without
    /// credentials, model, body and schema): equal requests have equal keys in every run, so a
    /// call answered from the cache can be matched with the paid call it repeats.
    pub request_key: String,
    /// When the call started (RFC 3339, UTC, milliseconds).
    pub started_at: String,
    /// Time from sending the last attempt to its response headers, in ms. Empty for cache hits
    /// and for calls that got no response.
    pub latency_ms_first_byte: Option<f64>,
    /// Time from sending the last attempt to the end of its body, in ms. Empty for cache hits and
    /// calls that got no response.
    pub latency_ms_total: Option<f64>,
    /// Wall time of the whole call in ms: queueing for limits, every attempt and every backoff.
    pub wall_ms: f64,
    /// Prompt (input) tokens: the server's usage, or our estimate if `tokens_estimated`.
    pub prompt_tokens: u64,
    /// Completion (output) tokens: the server's usage, or our estimate if `tokens_estimated`.
    pub completion_tokens: u64,
    /// True when the server sent no usage and the token counts are tiktoken (cl100k) estimates.
    pub tokens_estimated: bool,
    /// Cost in USD from the price table; 0 for cache hits; empty when the model has no price or
    /// the call failed.
    pub cost_usd: Option<f64>,
    /// HTTP attempts made (0 for a cache hit), including format fallbacks and retries.
    pub attempts: u32,
    /// True when the answer came from the response cache and nothing was sent.
    pub cache_hit: bool,
    /// Structured-output mode used (`json_schema`, `json_object`, `text`); empty for plain chat and
    /// embeddings.
    pub response_format: Option<ResponseFormatKind>,
    /// HTTP status of the last response, if any.
    pub http_status: Option<u16>,
    /// Why the call failed; empty on success.
    pub error: Option<String>,
    /// The batch that carried the call ([`super::batch`]); `None` for a direct call. A batched
    /// call has no latency of its own: its latency fields are `None`. Not in this record's own
    /// CSV (embed_calls.csv, context_calls.csv: those calls are never batched); calls.csv has
    /// it.
    #[serde(skip)]
    pub batch_id: Option<String>,
    /// When that batch was submitted (RFC 3339, UTC); `None` for a direct call.
    #[serde(skip)]
    pub batch_submitted_at: Option<String>,
    /// When this run saw that batch end (RFC 3339, UTC); `None` for a direct call.
    #[serde(skip)]
    pub batch_completed_at: Option<String>,
}

/// Writes records as CSV with a header row.
///
/// # Errors
/// Any I/O or serialisation error from the csv writer.
pub fn write_csv<W: Write>(records: &[CallRecord], out: W) -> Result<(), csv::Error> {
    let mut w = csv::Writer::from_writer(out);
    for r in records {
        w.serialize(r)?;
    }
    w.flush()?;
    Ok(())
}

/// Formats a time as RFC 3339 in UTC with milliseconds, e.g. `2026-11-29T21:30:05.123Z`
/// (jiff's formatting; a time before 1970 or past jiff's range is shown as the epoch).
pub fn rfc3339_utc(t: SystemTime) -> String {
    rfc3339(timestamp(t))
}

/// `t` as a timestamp (a time before 1970 or past jiff's range as the epoch).
pub fn timestamp(t: SystemTime) -> jiff::Timestamp {
    jiff::Timestamp::try_from(t).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

/// Formats a timestamp as RFC 3339 in UTC with milliseconds, as [`rfc3339_utc`] does.
pub fn rfc3339(ts: jiff::Timestamp) -> String {
    format!("{ts:.3}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        // 2024-02-29T12:34:56.789Z = 1709210096.789
        let t = UNIX_EPOCH + Duration::from_millis(1_709_210_096_789);
        assert_eq!(rfc3339_utc(t), "2024-02-29T12:34:56.789Z");
    }

    #[test]
    fn csv_is_flat_with_header() {
        let r = CallRecord {
            stage: "judge".into(),
            kind: CallKind::ChatJson,
            model: "m".into(),
            request_key: "0123456789abcdef".into(),
            started_at: "t".into(),
            latency_ms_first_byte: None,
            latency_ms_total: Some(12.5),
            wall_ms: 13.0,
            prompt_tokens: 10,
            completion_tokens: 2,
            tokens_estimated: true,
            cost_usd: None,
            attempts: 1,
            cache_hit: false,
            response_format: Some(ResponseFormatKind::JsonObject),
            http_status: Some(200),
            error: None,
            batch_id: None,
            batch_submitted_at: None,
            batch_completed_at: None,
        };
        let mut buf = Vec::new();
        write_csv(&[r], &mut buf).unwrap();
        let s = String::from_utf8(buf).unwrap();
        let mut lines = s.lines();
        assert_eq!(
            lines.next().unwrap(),
            "stage,kind,model,request_key,started_at,latency_ms_first_byte,latency_ms_total,wall_ms,\
             prompt_tokens,completion_tokens,tokens_estimated,cost_usd,attempts,cache_hit,\
             response_format,http_status,error"
        );
        assert_eq!(
            lines.next().unwrap(),
            "judge,chat_json,m,0123456789abcdef,t,,12.5,13.0,10,2,true,,1,false,json_object,200,"
        );
    }
}
