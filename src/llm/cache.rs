//! The response cache: one SQLite file (WAL mode), keyed by the SHA-256 of the canonical JSON of
//! (base URL, model, call kind, request body without `response_format`, schema).
//!
//! The value is the raw response body plus the token counts and the response format that produced
//! it. Only successful, usable replies are stored. rusqlite is blocking, so every access runs on
//! tokio's blocking pool. The file never holds the API key: neither the key nor any header is part
//! of what is hashed or stored.
//!
//! A second table remembers, per base URL and model, which structured-output mode the server
//! accepted, so a later run does not have to rediscover it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::error::LlmError;
use super::format::ResponseFormatKind;

/// A stored reply.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedResponse {
    /// The raw response body as received.
    pub body: String,
    /// Prompt tokens recorded when the reply was fetched.
    pub prompt_tokens: u64,
    /// Completion tokens recorded when the reply was fetched.
    pub completion_tokens: u64,
    /// Whether those counts were estimates.
    pub tokens_estimated: bool,
    /// Structured-output mode that produced the reply, if any.
    pub response_format: Option<ResponseFormatKind>,
}

/// Handle to the cache file; cheap to clone.
#[derive(Debug, Clone)]
pub struct ResponseCache {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

fn cache_err(e: impl std::fmt::Display) -> LlmError {
    LlmError::Cache(e.to_string())
}

impl ResponseCache {
    /// Opens (creating if needed, with parent directories) the cache at `path`.
    ///
    /// # Errors
    /// [`LlmError::Cache`] if the directory or the database cannot be created.
    pub fn open(path: &Path) -> Result<Self, LlmError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| cache_err(format!("creating {}: {e}", dir.display())))?;
        }
        let conn = Connection::open(path)
            .map_err(|e| cache_err(format!("opening {}: {e}", path.display())))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(cache_err)?;
        // journal_mode returns a row, so query it rather than execute
        let _mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(cache_err)?;
        conn.execute_batch(
            "PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS responses (
                 key TEXT PRIMARY KEY,
                 kind TEXT NOT NULL,
                 base_url TEXT NOT NULL,
                 model TEXT NOT NULL,
                 request TEXT NOT NULL,
                 body TEXT NOT NULL,
                 prompt_tokens INTEGER NOT NULL,
                 completion_tokens INTEGER NOT NULL,
                 tokens_estimated INTEGER NOT NULL,
                 response_format TEXT,
                 created_at TEXT NOT NULL
             );
             CREATE TABLE IF NOT EXISTS formats (
                 base_url TEXT NOT NULL,
                 model TEXT NOT NULL,
                 mode TEXT NOT NULL,
                 PRIMARY KEY (base_url, model)
             );",
        )
        .map_err(cache_err)?;
        Ok(ResponseCache {
            conn: Arc::new(Mutex::new(conn)),
            path: path.to_path_buf(),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    async fn with_conn<T, F>(&self, f: F) -> Result<T, LlmError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            let c = conn.lock().map_err(|_| cache_err("cache lock poisoned"))?;
            f(&c).map_err(cache_err)
        })
        .await
        .map_err(cache_err)?
    }

    /// Looks up `key`.
    ///
    /// # Errors
    /// [`LlmError::Cache`] on a database error.
    pub async fn get(&self, key: &str) -> Result<Option<CachedResponse>, LlmError> {
        let key = key.to_string();
        self.with_conn(move |c| {
            c.query_row(
                "SELECT body, prompt_tokens, completion_tokens, tokens_estimated, response_format
                 FROM responses WHERE key = ?1",
                params![key],
                |r| {
                    let fmt: Option<String> = r.get(4)?;
                    Ok(CachedResponse {
                        body: r.get(0)?,
                        prompt_tokens: r.get::<_, i64>(1)? as u64,
                        completion_tokens: r.get::<_, i64>(2)? as u64,
                        tokens_estimated: r.get::<_, i64>(3)? != 0,
                        response_format: fmt.as_deref().and_then(ResponseFormatKind::parse),
                    })
                },
            )
            .optional()
        })
        .await
    }

    /// Stores a reply under `key` (replacing any previous one). `entry` describes the request
    /// (kind, base URL, model, canonical request JSON) for whoever opens the file by hand.
    ///
    /// # Errors
    /// [`LlmError::Cache`] on a database error.
    pub async fn put(
        &self,
        key: &str,
        entry: CacheEntryInfo,
        value: CachedResponse,
    ) -> Result<(), LlmError> {
        let key = key.to_string();
        self.with_conn(move |c| {
            c.execute(
                "INSERT OR REPLACE INTO responses
                 (key, kind, base_url, model, request, body, prompt_tokens, completion_tokens,
                  tokens_estimated, response_format, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    key,
                    entry.kind,
                    entry.base_url,
                    entry.model,
                    entry.request,
                    value.body,
                    value.prompt_tokens as i64,
                    value.completion_tokens as i64,
                    value.tokens_estimated as i64,
                    value.response_format.map(|f| f.as_str()),
                    super::record::rfc3339_utc(std::time::SystemTime::now()),
                ],
            )
            .map(|_| ())
        })
        .await
    }

    /// The structured-output mode remembered for (base URL, model).
    ///
    /// # Errors
    /// [`LlmError::Cache`] on a database error.
    pub async fn format_for(
        &self,
        base_url: &str,
        model: &str,
    ) -> Result<Option<ResponseFormatKind>, LlmError> {
        let (b, m) = (base_url.to_string(), model.to_string());
        let mode: Option<String> = self
            .with_conn(move |c| {
                c.query_row(
                    "SELECT mode FROM formats WHERE base_url = ?1 AND model = ?2",
                    params![b, m],
                    |r| r.get(0),
                )
                .optional()
            })
            .await?;
        Ok(mode.as_deref().and_then(ResponseFormatKind::parse))
    }

    /// Remembers the structured-output mode that worked for (base URL, model).
    ///
    /// # Errors
    /// [`LlmError::Cache`] on a database error.
    pub async fn set_format(
        &self,
        base_url: &str,
        model: &str,
        mode: ResponseFormatKind,
    ) -> Result<(), LlmError> {
        let (b, m) = (base_url.to_string(), model.to_string());
        self.with_conn(move |c| {
            c.execute(
                "INSERT OR REPLACE INTO formats (base_url, model, mode) VALUES (?1, ?2, ?3)",
                params![b, m, mode.as_str()],
            )
            .map(|_| ())
        })
        .await
    }
}

/// Descriptive columns stored next to a cached reply.
#[derive(Debug, Clone)]
pub struct CacheEntryInfo {
    /// `chat`, `chat_json` or `embed`.
    pub kind: String,
    /// Base URL the request went to.
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// The canonical JSON that was hashed.
    pub request: String,
}

/// Serialises `v` with object keys sorted at every level, so equal requests give equal bytes
/// whatever order their maps were built in.
pub fn canonical_json(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::new();
                for k in keys {
                    out.insert(k.clone(), sort(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_string(&sort(v)).expect("JSON value serialises")
}

/// Hex SHA-256 of `canonical`.
pub fn cache_key(canonical: &str) -> String {
    hex::encode(Sha256::digest(canonical.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_ignores_key_order() {
        let a = json!({"b": 1, "a": {"y": [1, {"d": 2, "c": 3}], "x": null}});
        let b = json!({"a": {"x": null, "y": [1, {"c": 3, "d": 2}]}, "b": 1});
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":null,"y":[1,{"c":3,"d":2}]},"b":1}"#
        );
        // array order matters
        assert_ne!(
            canonical_json(&json!([1, 2])),
            canonical_json(&json!([2, 1]))
        );
        assert_eq!(cache_key("abc").len(), 64);
        assert_eq!(
            cache_key("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[tokio::test]
    async fn roundtrip_and_formats() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/cache.sqlite");
        let c = ResponseCache::open(&path).unwrap();
        assert_eq!(c.get("k").await.unwrap(), None);
        let v = CachedResponse {
            body: "{}".into(),
            prompt_tokens: 12,
            completion_tokens: 3,
            tokens_estimated: true,
            response_format: Some(ResponseFormatKind::JsonObject),
        };
        let info = CacheEntryInfo {
            kind: "chat".into(),
            base_url: "http://x".into(),
            model: "m".into(),
            request: "{}".into(),
        };
        c.put("k", info, v.clone()).await.unwrap();
        drop(c);
        let c = ResponseCache::open(&path).unwrap();
        assert_eq!(c.get("k").await.unwrap(), Some(v));
        assert_eq!(c.format_for("http://x", "m").await.unwrap(), None);
        c.set_format("http://x", "m", ResponseFormatKind::Text)
            .await
            .unwrap();
        assert_eq!(
            c.format_for("http://x", "m").await.unwrap(),
            Some(ResponseFormatKind::Text)
        );
        assert_eq!(c.format_for("http://y", "m").await.unwrap(), None);
    }
}
