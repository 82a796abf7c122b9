//! The chunker cache: each external chunker's response for one document at one configuration,
//! in SQLite, keyed by the chunker's [`Identity`] (command, hashed files, reported versions),
//! the configuration (size, overlap, unit, tokenizer) and the document's SHA-256. A rerun,
//! `report` and `check` of an unchanged chunker send it no document. The same store, in a file
//! of its own, keeps an external retriever's answers for a configuration
//! ([`crate::prepare::retrievers`]).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use super::error::Problem;

use crate::chunking::chunk::ChunkParams;

/// An open cache of an external process's replies (a chunker's, a retriever's).
pub struct ChunkerCache {
    conn: Connection,
    path: PathBuf,
}

/// The cache key of one document (its text `doc_text`) chunked at `params` by the chunker
/// whose [`super::types::Identity::sha256`] is `identity_sha` (its unit is part of that identity), under
/// `tokenizer`.
pub fn key(identity_sha: &str, params: &ChunkParams, tokenizer: &str, doc_text: &str) -> String {
    let mut h = Sha256::new();
    for part in [
        identity_sha.as_bytes(),
        params.chunk_size.to_string().as_bytes(),
        params.chunk_overlap.to_string().as_bytes(),
        tokenizer.as_bytes(),
        &Sha256::digest(doc_text.as_bytes())[..],
    ] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    hex::encode(h.finalize())
}

impl ChunkerCache {
    /// Opens (creating it and its folder if needed) the cache at `path`.
    ///
    /// # Errors
    /// [`Problem::Cache`] naming the file.
    pub fn open(path: &Path) -> Result<ChunkerCache, Problem> {
        let fail = |e: &dyn std::fmt::Display| Problem::Cache(format!("{}: {e}", path.display()));
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
        }
        let conn = Connection::open(path).map_err(|e| fail(&e))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| fail(&e))?;
        conn.execute_batch(
            "PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS chunks (
                 key TEXT PRIMARY KEY,
                 chunker TEXT NOT NULL,
                 document TEXT NOT NULL,
                 response TEXT NOT NULL
             );",
        )
        .map_err(|e| fail(&e))?;
        Ok(ChunkerCache {
            conn,
            path: path.to_path_buf(),
        })
    }

    fn fail(&self, e: impl std::fmt::Display) -> Problem {
        Problem::Cache(format!("{}: {e}", self.path.display()))
    }

    /// The reply stored under `key`, if any (an unreadable one counts as absent).
    ///
    /// # Errors
    /// [`Problem::Cache`] when the database cannot be read.
    pub fn get<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<Option<T>, Problem> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT response FROM chunks WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.fail(e))?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Runs `f` in one transaction, committed whether or not `f` fails (what it stored stays).
    ///
    /// # Errors
    /// [`Problem::Cache`] when the transaction cannot be opened or committed (`f`'s own result
    /// is inside).
    pub fn batch<T>(&self, f: impl FnOnce(&Self) -> T) -> Result<T, Problem> {
        self.conn.execute_batch("BEGIN").map_err(|e| self.fail(e))?;
        let result = f(self);
        self.conn
            .execute_batch("COMMIT")
            .map_err(|e| self.fail(e))?;
        Ok(result)
    }

    /// Stores `reply` under `key`, made by the process declared as `name` for `label` (a
    /// document's id, a configuration's).
    ///
    /// # Errors
    /// [`Problem::Cache`] when it cannot be written.
    pub fn put<T: serde::Serialize>(
        &self,
        key: &str,
        name: &str,
        label: &str,
        reply: &T,
    ) -> Result<(), Problem> {
        let text = serde_json::to_string(reply).expect("a reply serialises");
        self.conn
            .execute(
                "INSERT OR REPLACE INTO chunks (key, chunker, document, response) VALUES (?1, ?2, ?3, ?4)",
                (key, name, label, &text),
            )
            .map_err(|e| self.fail(e))?;
        Ok(())
    }
}
