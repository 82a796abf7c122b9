//! The error type of the LLM client.

/// Why an LLM call failed. Messages never contain the API key: server messages are scrubbed
/// before they are stored here.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[non_exhaustive]
pub enum LlmError {
    /// The configuration is unusable (bad base URL, zero limits, unreadable environment).
    #[error("invalid LLM configuration: {0}")]
    Config(String),
    /// The server rejected the request with a status that is not worth retrying (400, 401, 403,
    /// 404, 422, ...). `message` is the server's own message (or the start of its body).
    #[error("HTTP {status} from {endpoint} (not retried): {message}")]
    Rejected {
        /// HTTP status code.
        status: u16,
        /// Endpoint path, e.g. `/chat/completions`.
        endpoint: String,
        /// The server's message, scrubbed of the API key.
        message: String,
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
}

impl LlmError {
    /// Usage (2) for an unusable client configuration; failure (1) for what a server did.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        match self {
            LlmError::Config(_) => crate::exit::ExitClass::Usage,
            LlmError::Rejected { .. }
            | LlmError::Exhausted { .. }
            | LlmError::RetryAfterTooLong { .. }
            | LlmError::BadResponse { .. }
            | LlmError::NoJson { .. }
            | LlmError::Cache(_) => crate::exit::ExitClass::Failure,
        }
    }
}

impl LlmError {
    pub(crate) fn bad_response(endpoint: &str, detail: impl Into<String>) -> Self {
        LlmError::BadResponse {
            endpoint: endpoint.to_string(),
            detail: detail.into(),
        }
    }
}
