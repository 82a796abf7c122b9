//! Configuration of the LLM client, readable from a `[llm]` TOML section.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::error::LlmError;
use super::format::ResponseFormatKind;

/// OpenAI's API, used when neither the config nor `OPENAI_BASE_URL` names a server.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The chat model of every setting that names one and is not given (the judge's generator and
/// judge, `[context] model`): `$CHUNKSWEEP_CHAT_MODEL` when set and not blank, else
/// `gpt-4o-mini`.
pub fn default_chat_model() -> String {
    std::env::var("CHUNKSWEEP_CHAT_MODEL")
        .ok()
        .filter(|m| !m.trim().is_empty())
        .unwrap_or_else(|| "gpt-4o-mini".to_string())
}

/// Client-wide settings. Deserialises from TOML with a default for every field; serialises
/// (for a run's manifest) without any secret, since it holds only the key's variable name.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ClientConfig {
    /// Base URL of the OpenAI-compatible API, including `/v1`. `None`: the `OPENAI_BASE_URL`
    /// environment variable, else [`DEFAULT_BASE_URL`]. Credentials in it
    /// (`http://user:secret@host/v1`) are sent as basic authentication and are redacted wherever
    /// the URL is shown or stored, this config's own serialisation included.
    #[serde(serialize_with = "serialize_redacted")]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key (default `OPENAI_API_KEY`). If the
    /// variable is unset or empty, requests go without an `Authorization` header, which is
    /// allowed only for a server on this machine; `""` says the server needs no key wherever
    /// it is.
    pub api_key_env: String,
    /// Whether the response cache is used (default `true`).
    pub cache: bool,
    /// Location of the SQLite cache file (default `results/llm_cache.sqlite`).
    pub cache_path: PathBuf,
    /// Structured-output mode to try first for models with nothing remembered (default
    /// `json_schema`). Set `json_object` or `text` for servers known not to support schemas.
    pub json_mode: ResponseFormatKind,
    /// Retry and backoff settings.
    pub retry: RetryConfig,
    /// Limits and prices for models that have no entry in `models`.
    pub defaults: ModelConfig,
    /// Limits and prices per model name (as sent in the request's `model` field).
    pub models: BTreeMap<String, ModelConfig>,
    /// The Batch API (`[llm] batch = true` or `[llm.batch]`): judge calls as batches at the
    /// batch price ([`super::batch`]). Off by default.
    pub batch: super::batch::BatchConfig,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            base_url: None,
            api_key_env: "OPENAI_API_KEY".to_string(),
            cache: true,
            cache_path: PathBuf::from("results/llm_cache.sqlite"),
            json_mode: ResponseFormatKind::JsonSchema,
            retry: RetryConfig::default(),
            defaults: ModelConfig::default(),
            models: BTreeMap::new(),
            batch: super::batch::BatchConfig::default(),
        }
    }
}

/// Serialises an optional URL with its credentials redacted ([`redact_url`]): for every
/// serialised setting that holds a server's URL.
///
/// # Errors
/// The serializer's.
pub fn serialize_redacted<S: serde::Serializer>(
    url: &Option<String>,
    s: S,
) -> Result<S::Ok, S::Error> {
    url.as_deref().map(redact_url).serialize(s)
}

/// Splits `scheme://userinfo@rest` into (`scheme://`, userinfo, `rest`); no userinfo gives
/// (`""`, `None`, the whole URL).
fn split_userinfo(url: &str) -> (&str, Option<&str>, &str) {
    let Some(i) = url.find("://") else {
        return ("", None, url);
    };
    let (scheme, after) = url.split_at(i + 3);
    let authority_end = after.find(['/', '?', '#']).unwrap_or(after.len());
    match after[..authority_end].rfind('@') {
        Some(at) => (scheme, Some(&after[..at]), &after[at + 1..]),
        None => ("", None, url),
    }
}

/// `url` with any credentials replaced by `***` (`http://***@host/v1`); other URLs unchanged.
pub fn redact_url(url: &str) -> String {
    match split_userinfo(url) {
        (scheme, Some(_), rest) => format!("{scheme}***@{rest}"),
        _ => url.to_string(),
    }
}

/// `url` without its credentials (`http://host/v1`): what identifies the server in cache keys.
pub(crate) fn url_without_credentials(url: &str) -> String {
    match split_userinfo(url) {
        (scheme, Some(_), rest) => format!("{scheme}{rest}"),
        _ => url.to_string(),
    }
}

/// The secret strings of a URL's credentials, as written and as a URL parser re-encodes them:
/// `userinfo@` and the password alone (when 4 characters or more, so that scrubbing it does not
/// mangle ordinary text).
pub(crate) fn url_secrets(url: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let (_, Some(info), _) = split_userinfo(url) {
        out.push(format!("{info}@"));
        let mut passwords = vec![info.split_once(':').map(|(_, p)| p.to_string())];
        if let Ok(parsed) = reqwest::Url::parse(url) {
            out.push(match parsed.password() {
                Some(p) => format!("{}:{p}@", parsed.username()),
                None => format!("{}@", parsed.username()),
            });
            passwords.push(parsed.password().map(str::to_string));
        }
        out.extend(
            passwords
                .into_iter()
                .flatten()
                .filter(|p| p.chars().count() >= 4),
        );
    }
    out.retain(|s| s != "@");
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out.dedup();
    out
}

/// Whether the URL's host is this machine (`localhost`, `127.0.0.0/8`, `::1`), where servers
/// commonly need no API key.
pub fn is_local_url(url: &str) -> bool {
    let Some(host) = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
    else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl ClientConfig {
    /// Names of the `[llm.models.NAME]` sections that no stage uses (`used`: the models the run
    /// will call), in name order: most likely typos, since such a section's limits and prices
    /// apply to nothing.
    pub fn unused_models<'a>(&'a self, used: &[&str]) -> Vec<&'a str> {
        self.models
            .keys()
            .map(String::as_str)
            .filter(|name| !used.contains(name))
            .collect()
    }

    /// The API key the client will send: read from `api_key_env` (none when that is `""`).
    /// Cheap, and sends nothing: a run calls it before any work to stop at once.
    ///
    /// # Errors
    /// [`LlmError::BadKey`] for a key with a control character; [`LlmError::MissingKey`] when
    /// there is no key and the server is not on this machine; [`LlmError::Config`] for a variable
    /// that is not Unicode.
    pub fn api_key(&self) -> Result<Option<ApiKey>, LlmError> {
        if self.api_key_env.is_empty() {
            return Ok(None);
        }
        let key = ApiKey::from_env(&self.api_key_env)?;
        let server = self.resolved_base_url();
        if key.is_none() && !is_local_url(&server) {
            return Err(LlmError::MissingKey {
                server: redact_url(&server),
                var: self.api_key_env.clone(),
            });
        }
        Ok(key)
    }

    /// The settings for `model`: its own entry, else `defaults`.
    pub fn model(&self, model: &str) -> &ModelConfig {
        self.models.get(model).unwrap_or(&self.defaults)
    }

    /// The base URL this config resolves to (without a trailing slash): `base_url`, else
    /// `OPENAI_BASE_URL`, else [`DEFAULT_BASE_URL`].
    pub fn resolved_base_url(&self) -> String {
        let raw = match &self.base_url {
            Some(url) => url.clone(),
            None => std::env::var("OPENAI_BASE_URL")
                .ok()
                .filter(|s| !s.trim().is_empty())
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_string()),
        };
        raw.trim().trim_end_matches('/').to_string()
    }

    /// Checks that every limit can be enforced.
    ///
    /// # Errors
    /// [`LlmError::Config`] naming the first bad field.
    pub fn validate(&self) -> Result<(), LlmError> {
        self.defaults.validate("defaults")?;
        for (name, m) in &self.models {
            m.validate(name)?;
        }
        if !positive(self.retry.max_delay_s) || !non_negative(self.retry.max_retry_after_s) {
            return Err(LlmError::Config(
                "retry.max_delay_s must be > 0 and retry.max_retry_after_s >= 0".into(),
            ));
        }
        self.batch.validate().map_err(LlmError::Config)?;
        if self.batch.enabled && !self.cache {
            return Err(LlmError::Config(
                "batch mode needs the response cache (batch answers are stored there): set [llm] cache = true".into(),
            ));
        }
        Ok(())
    }
}

fn positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

fn non_negative(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}

/// Limits, timeout and prices of one model.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// Requests per minute; 0 means no limit. Default 60.
    pub rpm: u32,
    /// Tokens (prompt + completion) per minute; 0 means no limit. Default 0.
    pub tpm: u32,
    /// Maximum requests in flight at once. Default 4.
    pub max_in_flight: u32,
    /// Timeout of one attempt, from sending until the whole body is read, in seconds. Default 60.
    pub timeout_s: f64,
    /// Maximum attempts per call (first try included). Default 6.
    pub max_attempts: u32,
    /// Price in USD per million input (prompt) tokens. `None`: unknown, cost is not reported.
    pub input_usd_per_mtok: Option<f64>,
    /// Price in USD per million output (completion) tokens. `None`: unknown.
    pub output_usd_per_mtok: Option<f64>,
    /// What a call through the Batch API costs, as a fraction of the prices above. Default 0.5
    /// (OpenAI's batch price: half).
    pub batch_discount: f64,
    /// Price in USD per request, for services that bill per call (a rerank search, as Cohere
    /// bills it); added to the token price. `None`: none. Read for rerank calls only.
    pub usd_per_request: Option<f64>,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            rpm: 60,
            tpm: 0,
            max_in_flight: 4,
            timeout_s: 60.0,
            max_attempts: 6,
            input_usd_per_mtok: None,
            output_usd_per_mtok: None,
            batch_discount: 0.5,
            usd_per_request: None,
        }
    }
}

impl ModelConfig {
    fn validate(&self, name: &str) -> Result<(), LlmError> {
        let bad = |what: &str| Err(LlmError::Config(format!("model {name}: {what}")));
        if self.max_in_flight == 0 {
            return bad("max_in_flight must be at least 1");
        }
        if self.max_attempts == 0 {
            return bad("max_attempts must be at least 1");
        }
        if !positive(self.timeout_s) {
            return bad("timeout_s must be > 0");
        }
        if !(non_negative(self.batch_discount) && self.batch_discount <= 1.0) {
            return bad("batch_discount must be between 0 and 1");
        }
        for p in [
            self.input_usd_per_mtok,
            self.output_usd_per_mtok,
            self.usd_per_request,
        ]
        .into_iter()
        .flatten()
        {
            if !non_negative(p) {
                return bad("prices must be >= 0");
            }
        }
        Ok(())
    }
}

/// Backoff settings shared by all models.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct RetryConfig {
    /// First backoff ceiling in milliseconds; attempt n waits a uniform random time in
    /// `[0, min(max_delay, base * 2^(n-1))]` (full jitter). Default 500.
    pub base_delay_ms: u64,
    /// Largest computed backoff in seconds. Default 60.
    pub max_delay_s: f64,
    /// Longest server-requested wait (`Retry-After` and friends) we honour, in seconds; a longer
    /// request ends the call with [`LlmError::RetryAfterTooLong`]. Default 300.
    pub max_retry_after_s: f64,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            base_delay_ms: 500,
            max_delay_s: 60.0,
            max_retry_after_s: 300.0,
        }
    }
}

/// An API key. Its `Debug` prints `***`; it has no `Display` and no `Serialize`, so it cannot
/// reach a log, a record or the cache by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// Reads the key from environment variable `var`, without surrounding whitespace. Unset or
    /// empty gives `Ok(None)`.
    ///
    /// # Errors
    /// [`LlmError::Config`] if the variable is set but not valid Unicode; [`LlmError::BadKey`]
    /// if the key holds a newline or another control character (it could not be sent).
    pub fn from_env(var: &str) -> Result<Option<Self>, LlmError> {
        match std::env::var(var) {
            Ok(v) if v.trim().is_empty() => Ok(None),
            Ok(v) if v.trim().chars().any(char::is_control) => Err(LlmError::BadKey {
                var: var.to_string(),
            }),
            Ok(v) => Ok(Some(ApiKey(v.trim().to_string()))),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(LlmError::Config(format!(
                "environment variable {var} is not valid Unicode"
            ))),
        }
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// Replaces every occurrence of the key in `text` with `***`.
    pub fn scrub(&self, text: &str) -> String {
        if self.0.len() < 4 {
            return text.to_string();
        }
        text.replace(&self.0, "***")
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_redacted_and_stripped() {
        let url = "http://user:s3cret-pw@host:8080/v1";
        assert_eq!(redact_url(url), "http://***@host:8080/v1");
        assert_eq!(url_without_credentials(url), "http://host:8080/v1");
        assert_eq!(url_secrets(url), vec!["user:s3cret-pw@", "s3cret-pw"]);
        // an @ after the authority is not a credential
        let plain = "https://api.example.com/v1?user=a@b";
        assert_eq!(redact_url(plain), plain);
        assert!(url_secrets(plain).is_empty());
        // percent-encoded as a URL parser prints it
        let odd = "http://u:p%40ss word@h/v1";
        assert!(
            url_secrets(odd).contains(&"u:p%40ss%20word@".to_string()),
            "{:?}",
            url_secrets(odd)
        );
        let cfg = ClientConfig {
            base_url: Some(url.into()),
            ..Default::default()
        };
        let json = serde_json::to_string(&cfg).unwrap();
        assert!(json.contains("\"http://***@host:8080/v1\""), "{json}");
        assert!(!json.contains("s3cret"), "{json}");
    }

    #[test]
    fn local_hosts() {
        assert!(is_local_url("http://127.0.0.1:8091/v1"));
        assert!(is_local_url("http://localhost/v1"));
        assert!(is_local_url("http://[::1]:80/v1"));
        assert!(!is_local_url("https://api.openai.com/v1"));
        assert!(!is_local_url("http://10.0.0.5/v1"));
    }

    #[test]
    fn unused_model_sections_are_named() {
        let mut cfg = ClientConfig::default();
        for name in ["gpt-4o-mini", "gpt-4o-mnii", "judge"] {
            cfg.models.insert(name.into(), ModelConfig::default());
        }
        assert_eq!(
            cfg.unused_models(&["gpt-4o-mini", "judge"]),
            vec!["gpt-4o-mnii"]
        );
    }
}
