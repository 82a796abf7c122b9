//! `batches.json` in the run folder: every batch a run submitted, written as soon as the batch
//! exists, so a run killed while it waits finds its batches again and never submits them twice.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::api::RequestCounts;
use super::error::BatchError;

/// One call in a batch: its line's custom id and its request key (the SHA-256 of the request
/// line's body, as hex), which matches a later run's call to the line that asks it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BookedCall {
    /// The line's `custom_id`.
    pub custom_id: String,
    /// The request key.
    pub key: String,
}

/// One submitted batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchEntry {
    /// The batch's id at the provider.
    pub id: String,
    /// The model every line asks.
    pub model: String,
    /// The uploaded input file's id.
    pub input_file_id: String,
    /// The calls the batch holds, in line order.
    pub calls: Vec<BookedCall>,
    /// The batch's last known status (`validating`, `in_progress`, `completed`, `expired`, ...).
    pub status: String,
    /// Request counts at the last poll (total, completed, failed).
    pub total: u64,
    /// Requests answered at the last poll.
    pub completed: u64,
    /// Requests failed at the last poll.
    pub failed: u64,
    /// When the batch was submitted (RFC 3339, UTC).
    pub submitted_at: String,
    /// When this run saw it end (RFC 3339, UTC), once it has.
    pub completed_at: Option<String>,
    /// Whether its output was read back and every answer stored: a collected batch is never
    /// polled again, and its unanswered calls go into a new batch.
    pub collected: bool,
}

impl BatchEntry {
    /// Takes the status and request counts of a poll.
    pub fn update(&mut self, status: &str, counts: Option<RequestCounts>) {
        self.status = status.to_string();
        if let Some(c) = counts {
            (self.total, self.completed, self.failed) = (c.total, c.completed, c.failed);
        }
    }
}

/// The batches of a run folder, as in its `batches.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchBook {
    path: PathBuf,
    /// Every batch recorded, in submission order.
    pub entries: Vec<BatchEntry>,
}

impl BatchBook {
    /// The book at `path` (`<run folder>/batches.json`): empty when the file does not exist.
    ///
    /// # Errors
    /// [`BatchError::Book`] when the file cannot be read or is not a list of batches (naming
    /// the file: a hand-edited file should be restored or removed, which forgets its batches).
    pub fn open(path: &Path) -> Result<Self, BatchError> {
        let entries = match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| BatchError::Book {
                path: path.display().to_string(),
                message: format!(
                    "not a list of batches ({e}); restore it, or remove it to forget its batches (they then run again)"
                ),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(book_error(path, &e)),
        };
        Ok(BatchBook {
            path: path.to_path_buf(),
            entries,
        })
    }

    /// The file the book is kept in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the book: to `<path>.tmp`, flushed, then renamed over `path`, so the file is
    /// always a whole book.
    ///
    /// # Errors
    /// [`BatchError::Book`] when the file cannot be written.
    pub fn save(&self) -> Result<(), BatchError> {
        let tmp = tmp_path(&self.path);
        let text = serde_json::to_string_pretty(&self.entries).expect("batches serialise");
        let write = || -> std::io::Result<()> {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.write_all(b"\n")?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        };
        write().map_err(|e| book_error(&self.path, &e))
    }

    /// The entry of batch `id`.
    pub fn entry_mut(&mut self, id: &str) -> Option<&mut BatchEntry> {
        self.entries.iter_mut().find(|e| e.id == id)
    }

    /// The batch not yet collected that holds the call with request `key`, if any.
    pub fn open_holding(&self, key: &str) -> Option<&BatchEntry> {
        self.entries
            .iter()
            .find(|e| !e.collected && e.calls.iter().any(|c| c.key == key))
    }
}

/// `<path>.tmp`: where [`BatchBook::save`] writes before renaming.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

fn book_error(path: &Path, e: &std::io::Error) -> BatchError {
    BatchError::Book {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, keys: &[&str], collected: bool) -> BatchEntry {
        BatchEntry {
            id: id.into(),
            model: "m".into(),
            input_file_id: format!("file-{id}"),
            calls: keys
                .iter()
                .enumerate()
                .map(|(i, k)| BookedCall {
                    custom_id: format!("c#{i}"),
                    key: (*k).into(),
                })
                .collect(),
            status: "in_progress".into(),
            total: 0,
            completed: 0,
            failed: 0,
            submitted_at: "2026-12-02T06:00:00.000Z".into(),
            completed_at: None,
            collected,
        }
    }

    #[test]
    fn a_saved_book_reads_back_and_finds_open_batches_by_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("batches.json");
        let mut book = BatchBook::open(&path).unwrap();
        assert!(book.entries.is_empty());
        book.entries.push(entry("b1", &["k1", "k2"], true));
        book.entries.push(entry("b2", &["k2", "k3"], false));
        book.save().unwrap();
        assert!(!tmp_path(&path).exists());
        let back = BatchBook::open(&path).unwrap();
        assert_eq!(back, book);
        assert_eq!(back.open_holding("k2").unwrap().id, "b2");
        assert_eq!(back.open_holding("k3").unwrap().id, "b2");
        assert!(back.open_holding("k1").is_none());
    }

    #[test]
    fn a_broken_book_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("batches.json");
        std::fs::write(&path, "{oops").unwrap();
        let err = BatchBook::open(&path).unwrap_err().to_string();
        assert!(err.contains("batches.json"), "{err}");
        assert!(err.contains("remove it"), "{err}");
    }
}
