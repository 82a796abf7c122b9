//! The document cache: each converted file's [`Extracted`] text in SQLite, keyed by the file's
//! SHA-256 and its reader's name and version, beside the LLM response cache
//! (`documents.sqlite`, as the chunker cache's `chunkers.sqlite`). A second `sweep`, `check`
//! or `golden review` of the same files extracts nothing again; a new reader version misses.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension};

use super::extracted::Extracted;
use super::kind::ReaderKind;

/// The document cache's file name, beside the LLM response cache.
pub const DOCUMENT_CACHE: &str = "documents.sqlite";

/// An open document cache (one connection, shared by the reading threads).
pub struct DocumentCache {
    conn: Mutex<Connection>,
    path: PathBuf,
}

/// Why the cache failed: its file and the SQLite message.
#[derive(Debug, thiserror::Error)]
#[error(
    "document cache {path}: {message}; delete the file (it is rebuilt) or set [llm] cache = false"
)]
pub struct CacheError {
    /// The cache file.
    pub path: PathBuf,
    /// What SQLite said.
    pub message: String,
}

impl DocumentCache {
    /// Opens (creating it and its folder if needed) the cache at `path`.
    ///
    /// # Errors
    /// [`CacheError`] naming the file.
    pub fn open(path: &Path) -> Result<DocumentCache, CacheError> {
        let fail = |e: &dyn std::fmt::Display| CacheError {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
        }
        let conn = Connection::open(path).map_err(|e| fail(&e))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| fail(&e))?;
        conn.execute_batch(
            "PRAGMA synchronous=NORMAL;
             CREATE TABLE IF NOT EXISTS documents (
                 sha256 TEXT NOT NULL,
                 reader TEXT NOT NULL,
                 version TEXT NOT NULL,
                 extracted TEXT NOT NULL,
                 PRIMARY KEY (sha256, reader, version)
             );",
        )
        .map_err(|e| fail(&e))?;
        Ok(DocumentCache {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
        })
    }

    fn fail(&self, e: impl std::fmt::Display) -> CacheError {
        CacheError {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// The text stored for a file of SHA-256 `sha256` read by `reader` at its current
    /// version, if any (an unreadable entry counts as absent).
    ///
    /// # Errors
    /// [`CacheError`] when the database cannot be read.
    pub fn get(&self, sha256: &str, reader: ReaderKind) -> Result<Option<Extracted>, CacheError> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let json: Option<String> = conn
            .query_row(
                "SELECT extracted FROM documents WHERE sha256 = ?1 AND reader = ?2 AND version = ?3",
                (sha256, reader.name(), reader.version()),
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.fail(e))?;
        Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
    }

    /// Stores `extracted` for a file of SHA-256 `sha256` read by `reader`.
    ///
    /// # Errors
    /// [`CacheError`] when it cannot be written.
    pub fn put(
        &self,
        sha256: &str,
        reader: ReaderKind,
        extracted: &Extracted,
    ) -> Result<(), CacheError> {
        let json = serde_json::to_string(extracted).expect("an extracted text serialises");
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        conn.execute(
            "INSERT OR REPLACE INTO documents (sha256, reader, version, extracted) VALUES (?1, ?2, ?3, ?4)",
            (sha256, reader.name(), reader.version(), &json),
        )
        .map_err(|e| self.fail(e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_found_by_sha_and_reader_only() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DocumentCache::open(&dir.path().join("sub/documents.sqlite")).unwrap();
        let doc = Extracted {
            text: "One.\n\nTwo.".into(),
            pages: vec![0, 6],
            warnings: vec!["w".into()],
        };
        cache.put("abc", ReaderKind::Pdf, &doc).unwrap();
        assert_eq!(cache.get("abc", ReaderKind::Pdf).unwrap(), Some(doc));
        assert_eq!(cache.get("abc", ReaderKind::Html).unwrap(), None);
        assert_eq!(cache.get("abd", ReaderKind::Pdf).unwrap(), None);
    }
}
