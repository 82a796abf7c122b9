//! The batch endpoints over HTTP: upload an input file, create, poll and cancel a batch, read a
//! file's content. Like the chat transport, on reqwest with our own tolerant reply types
//! (OpenAI-compatible batch servers omit fields async-openai's `Batch` requires); 429, 5xx and
//! broken connections are retried with the client's backoff, other statuses are final.

use std::time::Duration;

use reqwest::multipart::{Form, Part};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::error::BatchError;
use crate::llm::config::{ApiKey, RetryConfig, redact_url, url_secrets};
use crate::llm::retry::{backoff, is_retryable_status};

/// Attempts of one batch-endpoint request (first try included).
const ATTEMPTS: u32 = 5;

/// A batch's request counts, as the server reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct RequestCounts {
    /// Requests in the batch.
    pub total: u64,
    /// Requests answered.
    pub completed: u64,
    /// Requests that failed.
    pub failed: u64,
}

/// A batch as `POST /batches` and `GET /batches/{id}` return it; everything but the id
/// optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct BatchInfo {
    /// The batch's id (`batch_…`).
    pub id: String,
    /// Its status.
    pub status: BatchStatus,
    /// The input file's id.
    pub input_file_id: Option<String>,
    /// The file of answered lines, once there is one.
    pub output_file_id: Option<String>,
    /// The file of failed lines, once there is one.
    pub error_file_id: Option<String>,
    /// Request counts.
    pub request_counts: Option<RequestCounts>,
    /// Why a batch failed as a whole (OpenAI's `errors.data[].message`), as sent.
    pub errors: Option<Value>,
}

impl BatchInfo {
    /// Whether the batch will not change any more ([`BatchStatus::is_terminal`]).
    pub fn is_terminal(&self) -> bool {
        self.status.is_terminal()
    }
}

/// A batch's status, as the server words it (OpenAI's batch lifecycle); a word it does not
/// know is kept as sent, and is never terminal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum BatchStatus {
    /// `validating`: the input file is being checked.
    Validating,
    /// `in_progress`: lines are being answered.
    InProgress,
    /// `finalizing`: the output files are being written.
    Finalizing,
    /// `completed`: every line has an answer or an error.
    Completed,
    /// `failed`: the batch failed as a whole.
    Failed,
    /// `expired`: the completion window passed first.
    Expired,
    /// `cancelling`: a cancel was asked for.
    Cancelling,
    /// `cancelled`.
    Cancelled,
    /// Any other word (empty when the server sent none).
    Other(String),
}

impl BatchStatus {
    /// The server's word for it.
    pub fn as_str(&self) -> &str {
        match self {
            BatchStatus::Validating => "validating",
            BatchStatus::InProgress => "in_progress",
            BatchStatus::Finalizing => "finalizing",
            BatchStatus::Completed => "completed",
            BatchStatus::Failed => "failed",
            BatchStatus::Expired => "expired",
            BatchStatus::Cancelling => "cancelling",
            BatchStatus::Cancelled => "cancelled",
            BatchStatus::Other(s) => s,
        }
    }

    /// Whether a batch with it will not change any more: completed, expired, failed or
    /// cancelled.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            BatchStatus::Completed
                | BatchStatus::Expired
                | BatchStatus::Failed
                | BatchStatus::Cancelled
        )
    }
}

impl Default for BatchStatus {
    /// No word sent: [`BatchStatus::Other`] with an empty word.
    fn default() -> Self {
        BatchStatus::Other(String::new())
    }
}

impl From<String> for BatchStatus {
    fn from(s: String) -> Self {
        match s.as_str() {
            "validating" => BatchStatus::Validating,
            "in_progress" => BatchStatus::InProgress,
            "finalizing" => BatchStatus::Finalizing,
            "completed" => BatchStatus::Completed,
            "failed" => BatchStatus::Failed,
            "expired" => BatchStatus::Expired,
            "cancelling" => BatchStatus::Cancelling,
            "cancelled" => BatchStatus::Cancelled,
            _ => BatchStatus::Other(s),
        }
    }
}

impl From<&str> for BatchStatus {
    fn from(s: &str) -> Self {
        BatchStatus::from(s.to_string())
    }
}

impl From<BatchStatus> for String {
    fn from(s: BatchStatus) -> Self {
        s.as_str().to_string()
    }
}

impl std::fmt::Display for BatchStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The batch endpoints of one server.
pub struct BatchApi {
    base_url: String,
    shown_url: String,
    secrets: Vec<String>,
    key: Option<ApiKey>,
    retry: RetryConfig,
    http: reqwest::Client,
}

impl BatchApi {
    /// The endpoints under `base_url` (with `/v1`, no trailing slash), with `key` as bearer
    /// token, retrying transient failures with `retry`'s backoff.
    ///
    /// # Errors
    /// [`BatchError::Http`] when the HTTP client cannot be built.
    pub fn new(
        base_url: &str,
        key: Option<ApiKey>,
        retry: RetryConfig,
    ) -> Result<Self, BatchError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(600))
            .user_agent(concat!("chunksweep/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| BatchError::Http {
                what: "build the HTTP client".into(),
                message: e.to_string(),
            })?;
        Ok(BatchApi {
            base_url: base_url.trim_end_matches('/').to_string(),
            shown_url: redact_url(base_url),
            secrets: url_secrets(base_url),
            key,
            retry,
            http,
        })
    }

    /// Uploads `jsonl` as `file_name` with `purpose=batch`; returns the file's id.
    ///
    /// # Errors
    /// [`BatchError::Http`] when the upload fails or the reply has no `id`.
    pub async fn upload(&self, file_name: &str, jsonl: &str) -> Result<String, BatchError> {
        let what = format!("upload the input file {file_name}");
        let v = self
            .request(&what, || {
                let part = Part::bytes(jsonl.as_bytes().to_vec())
                    .file_name(file_name.to_string())
                    .mime_str("application/jsonl")
                    .expect("a valid MIME type");
                let form = Form::new().text("purpose", "batch").part("file", part);
                self.http
                    .post(format!("{}/files", self.base_url))
                    .multipart(form)
            })
            .await?;
        let id = v.get("id").and_then(Value::as_str).unwrap_or_default();
        if id.is_empty() {
            return Err(self.error(&what, format!("no file id in the reply: {v}")));
        }
        Ok(id.to_string())
    }

    /// Creates a batch of the uploaded `input_file_id` for `/v1/chat/completions` with
    /// `completion_window` (`24h`).
    ///
    /// # Errors
    /// [`BatchError::Http`] when the request fails or the reply is not a batch.
    pub async fn create(
        &self,
        input_file_id: &str,
        completion_window: &str,
    ) -> Result<BatchInfo, BatchError> {
        let body = json!({
            "input_file_id": input_file_id,
            "endpoint": "/v1/chat/completions",
            "completion_window": completion_window,
        });
        let what = format!("create a batch of {input_file_id}");
        let v = self
            .request(&what, || {
                self.http
                    .post(format!("{}/batches", self.base_url))
                    .json(&body)
            })
            .await?;
        self.batch(&what, v)
    }

    /// The batch `id` as it is now.
    ///
    /// # Errors
    /// [`BatchError::Http`] when the request fails or the reply is not a batch.
    pub async fn get(&self, id: &str) -> Result<BatchInfo, BatchError> {
        let what = format!("poll batch {id}");
        let v = self
            .request(&what, || {
                self.http.get(format!("{}/batches/{id}", self.base_url))
            })
            .await?;
        self.batch(&what, v)
    }

    /// Asks the server to cancel batch `id` (answered lines are still returned).
    ///
    /// # Errors
    /// [`BatchError::Http`] when the request fails or the reply is not a batch.
    pub async fn cancel(&self, id: &str) -> Result<BatchInfo, BatchError> {
        let what = format!("cancel batch {id}");
        let v = self
            .request(&what, || {
                self.http
                    .post(format!("{}/batches/{id}/cancel", self.base_url))
            })
            .await?;
        self.batch(&what, v)
    }

    /// The content of file `id` (an output or error file: JSONL).
    ///
    /// # Errors
    /// [`BatchError::Http`] when the download fails.
    pub async fn content(&self, id: &str) -> Result<String, BatchError> {
        let what = format!("download file {id}");
        self.send(&what, || {
            self.http
                .get(format!("{}/files/{id}/content", self.base_url))
        })
        .await
    }

    fn batch(&self, what: &str, v: Value) -> Result<BatchInfo, BatchError> {
        serde_json::from_value::<BatchInfo>(v.clone())
            .ok()
            .filter(|b| !b.id.is_empty())
            .ok_or_else(|| self.error(what, format!("the reply is not a batch: {v}")))
    }

    /// Sends the request `build` makes and reads a JSON reply.
    async fn request(
        &self,
        what: &str,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<Value, BatchError> {
        let text = self.send(what, build).await?;
        serde_json::from_str(&text).map_err(|e| self.error(what, format!("not JSON ({e})")))
    }

    /// Sends the request `build` makes, retrying 429, 5xx and failed connections; the body of
    /// the 2xx reply.
    async fn send(
        &self,
        what: &str,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> Result<String, BatchError> {
        let mut last = String::new();
        for attempt in 1..=ATTEMPTS {
            let mut rb = build();
            if let Some(k) = &self.key {
                rb = rb.bearer_auth(k.expose());
            }
            match rb.send().await {
                Err(e) => last = format!("{e}"),
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let text = resp.text().await.unwrap_or_default();
                    if (200..300).contains(&status) {
                        return Ok(text);
                    }
                    last = format!("HTTP {status} from {}: {}", self.shown_url, excerpt(&text));
                    if !is_retryable_status(status) {
                        break;
                    }
                }
            }
            if attempt < ATTEMPTS {
                tokio::time::sleep(backoff(&self.retry, attempt)).await;
            }
        }
        Err(self.error(what, last))
    }

    fn error(&self, what: &str, message: String) -> BatchError {
        BatchError::Http {
            what: what.to_string(),
            message: self.scrub(&message),
        }
    }

    /// `s` without the URL's credentials and the API key.
    fn scrub(&self, s: &str) -> String {
        let mut out = s.to_string();
        for secret in &self.secrets {
            out = out.replace(secret.as_str(), "***");
        }
        match &self.key {
            Some(k) => k.scrub(&out),
            None => out,
        }
    }
}

fn excerpt(s: &str) -> String {
    let t: String = s.trim().chars().take(300).collect();
    if t.is_empty() {
        "(empty body)".into()
    } else {
        t
    }
}
