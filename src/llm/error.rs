//! The error type of the LLM client.

/// Why an LLM call failed. Messages never contain the API key: server messages are scrubbed
/// before they are stored here.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum LlmError {
    /// The configuration is unusable (bad base URL, zero limits, unreadable environment).
    #[error("invalid LLM configuration: {0}")]
    Config(String),
    /// The API key in the environment variable `var` cannot be sent in a header: it holds a
    /// newline or another control character (often a key pasted with its line break).
    #[error(
        "the API key in ${var} contains a newline or another control character; set it to the key alone"
    )]
    BadKey {
        /// The environment variable's name.
        var: String,
    },
    /// No API key for a server that is not on this machine: the calls would only fail (or, with
    /// a key picked up elsewhere, spend money nobody asked for), so nothing is sent.
    #[error(
        "no API key: ${var} is unset or empty, and {server} is not on this machine; set ${var} (or set [llm] api_key_env = \"\" for a server that needs no key, or point [llm] base_url at a local server)"
    )]
    MissingKey {
        /// The server's base URL, credentials redacted.
        server: String,
        /// The environment variable that should hold the key.
        var: String,
    },
    /// The server rejected the request with a status that is not worth retrying (400, 401, 403,
    /// 404, 422, ...). `message` is the server's own message (or the start of its body). Not a
    /// result: the work stays unfinished, and see [`LlmError::stops_run`].
    #[error("HTTP {status} from {url} for model {model} (not retried): {message}")]
    Rejected {
        /// HTTP status code.
        status: u16,
        /// The endpoint's URL, e.g. `http://localhost:8000/v1/chat/completions`, credentials
        /// redacted.
        url: String,
        /// The model asked for.
        model: String,
        /// The server's message, scrubbed of the API key.
        message: String,
    },
    /// Every attempt timed out (no response within the model's `timeout_s`).
    #[error("timeout: all {attempts} attempts to {endpoint} timed out")]
    TimedOut {
        /// Endpoint path.
        endpoint: String,
        /// Number of attempts made.
        attempts: u32,
    },
    /// The server answered, but with nothing usable as a reply: empty or null content, a
    /// `content_filter` finish, or (for requests with
    /// [`ChatRequest::reject_truncated`](super::ChatRequest::reject_truncated)) a reply cut at
    /// `max_tokens`. Never cached; the call's tokens are still recorded.
    #[error("no usable reply: {reason}")]
    NoContent {
        /// `empty content`, `finish_reason content_filter` or `finish_reason length`.
        reason: String,
    },
    /// Every attempt failed with a transient error (429, 5xx, timeout, broken connection,
    /// malformed body); `last` describes the last one.
    #[error("{endpoint}: gave up after {attempts} attempts; last error: {last}")]
    Exhausted {
        /// Endpoint path.
        endpoint: String,
        /// Number of attempts made.
        attempts: u32,
        /// Description of the last failure.
        last: String,
    },
    /// The server asked us to wait longer than `max_retry_after_s` before retrying.
    #[error("{endpoint}: server asked to wait {wait_s:.1} s, more than the allowed {max_s:.1} s")]
    RetryAfterTooLong {
        /// Endpoint path.
        endpoint: String,
        /// Requested wait in seconds.
        wait_s: f64,
        /// Configured maximum in seconds.
        max_s: f64,
    },
    /// The server accepted the request but the reply lacks what we need (no choices, wrong number
    /// of embeddings).
    #[error("unusable response from {endpoint}: {detail}")]
    BadResponse {
        /// Endpoint path.
        endpoint: String,
        /// What was wrong.
        detail: String,
    },
    /// A structured-output call got a reply, but no JSON value that satisfies the schema could be
    /// read from it. Nothing is invented: this is an error, never a default value.
    #[error("no usable JSON in the reply ({reason}); reply starts: {excerpt:?}")]
    NoJson {
        /// Why the reply was not accepted.
        reason: String,
        /// The first 200 characters of the reply.
        excerpt: String,
    },
    /// The response cache failed (open, read or write).
    #[error("response cache: {0}")]
    Cache(String),
    /// Batch mode: the call went into the next batch ([`super::batch`]); the job that made it
    /// is run again once the batch is read back. Never recorded.
    #[error("waiting for the next batch")]
    Deferred,
    /// Batch mode: the batch gave no answer to this call (an error line, a line missing from
    /// the output, a batch that expired, failed or was cancelled, a wait stopped, a batch that
    /// could not be submitted). The work stays unfinished; the same command asks it again.
    #[error("no answer from the batch: {reason}")]
    Unbatched {
        /// What happened, naming the batch.
        reason: String,
    },
}

impl LlmError {
    /// Whether the error means no call to this server and model can succeed until the user
    /// changes something: an authentication failure (401, 403) or an unknown model or endpoint
    /// (404). A run stops starting work when it sees one.
    pub fn stops_run(&self) -> bool {
        matches!(
            self,
            LlmError::Rejected {
                status: 401 | 403 | 404,
                ..
            }
        )
    }

    /// Whether the error is the server's answer to this request, so that asking again would
    /// give the same: a reply with no usable JSON ([`LlmError::NoJson`]) or no usable content
    /// ([`LlmError::NoContent`]). Everything else leaves the work unfinished for a rerun, never
    /// recorded as a result: a transient failure (every attempt timed out, retries exhausted
    /// after 429s, 5xx, broken connections or 2xx bodies that could not be read, a wait longer
    /// than allowed), a rejected request, a cache or configuration failure.
    pub fn is_result(&self) -> bool {
        matches!(self, LlmError::NoJson { .. } | LlmError::NoContent { .. })
    }

    /// Usage (2) for what the user must fix before anything can be sent or succeed: an unusable
    /// client configuration, a key that cannot be sent or is missing for a remote server, a key
    /// or model the server refuses ([`stops_run`](Self::stops_run)); failure (1) for anything
    /// else a server did.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        match self {
            LlmError::Config(_) | LlmError::BadKey { .. } | LlmError::MissingKey { .. } => {
                crate::exit::ExitClass::Usage
            }
            LlmError::Rejected { .. } if self.stops_run() => crate::exit::ExitClass::Usage,
            LlmError::Rejected { .. }
            | LlmError::Exhausted { .. }
            | LlmError::TimedOut { .. }
            | LlmError::RetryAfterTooLong { .. }
            | LlmError::BadResponse { .. }
            | LlmError::NoJson { .. }
            | LlmError::NoContent { .. }
            | LlmError::Cache(_)
            | LlmError::Deferred
            | LlmError::Unbatched { .. } => crate::exit::ExitClass::Failure,
        }
    }

    pub(crate) fn bad_response(endpoint: &str, detail: impl Into<String>) -> Self {
        LlmError::BadResponse {
            endpoint: endpoint.to_string(),
            detail: detail.into(),
        }
    }
}
