//! A persistent cache of embedding vectors keyed by (model, SHA-256 of the text as sent), in its
//! own SQLite table `embeddings`.
//!
//! The LLM client's response cache keys whole requests, so the same text in two batches (or in
//! two configurations whose chunks coincide, or in the next run) would be embedded again; this
//! cache is per text, so a text is embedded once per model, ever. Each row also keeps the
//! embedding time attributed to the text (the batch's latency shared in proportion to tokens),
//! so a rerun from the cache reports the same `embed_ms` cost as the run that paid it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, params};

use thiserror::Error;

/// One cached vector.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedVector {
    /// The vector as the server returned it (not normalised).
    pub vector: Vec<f32>,
    /// Milliseconds of embedding time attributed to this text when it was embedded.
    pub ms: f64,
}

/// The cache file.
pub struct EmbedCache {
    conn: Mutex<Connection>,
    path: PathBuf,
}

/// An error of the cache file (SQLite), with its message.
#[derive(Debug, Error)]
#[error("embedding cache: {0}")]
pub struct CacheError(pub String);

fn err(e: impl std::fmt::Display) -> CacheError {
    CacheError(e.to_string())
}

impl EmbedCache {
    /// Opens (creating it and its folder if needed) the cache at `path`.
    ///
    /// # Errors
    /// [`CacheError`] if the file cannot be created or opened.
    pub fn open(path: &Path) -> Result<Self, CacheError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| err(format!("{}: {e}", dir.display())))?;
        }
        let conn = Connection::open(path).map_err(|e| err(format!("{}: {e}", path.display())))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(err)?;
        let _mode: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(err)?;
        conn.execute_batch(
            "PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS embeddings (
                 model TEXT NOT NULL,
                 text_sha256 BLOB NOT NULL,
                 dim INTEGER NOT NULL,
                 vector BLOB NOT NULL,
                 ms REAL NOT NULL,
                 PRIMARY KEY (model, text_sha256)
             );",
        )
        .map_err(err)?;
        Ok(EmbedCache {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The vector of `(model, hash)`, if cached.
    ///
    /// # Errors
    /// [`CacheError`] on a database error or a corrupt row.
    pub fn get(&self, model: &str, hash: &[u8; 32]) -> Result<Option<CachedVector>, CacheError> {
        let conn = self.conn.lock().expect("embed cache lock");
        let mut stmt = conn
            .prepare_cached(
                "SELECT dim, vector, ms FROM embeddings WHERE model = ?1 AND text_sha256 = ?2",
            )
            .map_err(err)?;
        let mut rows = stmt.query(params![model, &hash[..]]).map_err(err)?;
        let Some(row) = rows.next().map_err(err)? else {
            return Ok(None);
        };
        let dim: i64 = row.get(0).map_err(err)?;
        let blob: Vec<u8> = row.get(1).map_err(err)?;
        let ms: f64 = row.get(2).map_err(err)?;
        if blob.len() != dim as usize * 4 {
            return Err(err(format!(
                "corrupt row for model {model}: {} bytes for dimension {dim}",
                blob.len()
            )));
        }
        let vector = blob
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Ok(Some(CachedVector { vector, ms }))
    }

    /// Stores vectors (in one transaction); an existing row is replaced.
    ///
    /// # Errors
    /// [`CacheError`] on a database error.
    pub fn put_many(
        &self,
        model: &str,
        rows: &[([u8; 32], &[f32], f64)],
    ) -> Result<(), CacheError> {
        let mut conn = self.conn.lock().expect("embed cache lock");
        let tx = conn.transaction().map_err(err)?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO embeddings (model, text_sha256, dim, vector, ms)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(err)?;
            for (hash, v, ms) in rows {
                let blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                stmt.execute(params![model, &hash[..], v.len() as i64, blob, ms])
                    .map_err(err)?;
            }
        }
        tx.commit().map_err(err)
    }

    /// Rows stored for `model`.
    ///
    /// # Errors
    /// [`CacheError`] on a database error.
    pub fn count(&self, model: &str) -> Result<usize, CacheError> {
        let conn = self.conn.lock().expect("embed cache lock");
        conn.query_row(
            "SELECT COUNT(*) FROM embeddings WHERE model = ?1",
            params![model],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n as usize)
        .map_err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_round_trip_per_model() {
        let dir = tempfile::tempdir().unwrap();
        let c = EmbedCache::open(&dir.path().join("e.sqlite")).unwrap();
        let h = [7u8; 32];
        c.put_many("m", &[(h, &[1.5, -2.0, 0.25][..], 3.5)])
            .unwrap();
        assert_eq!(
            c.get("m", &h).unwrap(),
            Some(CachedVector {
                vector: vec![1.5, -2.0, 0.25],
                ms: 3.5
            })
        );
        assert_eq!(c.get("other", &h).unwrap(), None);
        assert_eq!(c.count("m").unwrap(), 1);
        drop(c);
        let c = EmbedCache::open(&dir.path().join("e.sqlite")).unwrap();
        assert_eq!(c.get("m", &h).unwrap().unwrap().vector.len(), 3);
    }
}
