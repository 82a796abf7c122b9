//! `batches.json` in the run folder: every batch a run submitted, written as soon as the batch
//! exists, so a run killed while it waits finds its batches again and never submits them twice.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use jiff::Timestamp;

use super::api::{BatchStatus, RequestCounts};
use super::error::BatchError;
use crate::llm::record::rfc3339;

/// One call in a batch: its line's custom id and its request key (the SHA-256 of the request
/// line's body, as hex), which matches a later run's call to the line that asks it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BookedCall {
    /// The line's `custom_id`.
    pub custom_id: String,
    /// The request key.
    pub key: String,
}

/// One submitted batch. In `batches.json` its phase is written as two fields,
/// `completed_at` (RFC 3339, UTC, or null) and `collected`, and its times as RFC 3339 text: a
/// time that cannot be read, or a batch collected before it ended, is an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "EntryFile", into = "EntryFile")]
pub struct BatchEntry {
    /// The batch's id at the provider.
    pub id: String,
    /// The model every line asks.
    pub model: String,
    /// The uploaded input file's id.
    pub input_file_id: String,
    /// The calls the batch holds, in line order.
    pub calls: Vec<BookedCall>,
    /// The batch's last known status.
    pub status: BatchStatus,
    /// Request counts at the last poll (total, completed, failed).
    pub total: u64,
    /// Requests answered at the last poll.
    pub completed: u64,
    /// Requests failed at the last poll.
    pub failed: u64,
    /// When the batch was submitted.
    pub submitted_at: Timestamp,
    /// Where it stands for this run folder.
    pub phase: Phase,
}

/// Where a batch stands for the run folder that submitted it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Not seen ended yet: polled until it ends.
    Running,
    /// Seen ended at `at`, its output not yet used.
    Ended {
        /// When this run saw it end.
        at: Timestamp,
    },
    /// Its output was read back and every answer stored: never polled again, and its
    /// unanswered calls go into a new batch.
    Collected {
        /// When a run saw it end.
        ended_at: Timestamp,
    },
}

impl Phase {
    /// When the batch was seen ended, once it was.
    pub fn ended_at(self) -> Option<Timestamp> {
        match self {
            Phase::Running => None,
            Phase::Ended { at } | Phase::Collected { ended_at: at } => Some(at),
        }
    }

    /// Whether its output was read back and stored.
    pub fn is_collected(self) -> bool {
        matches!(self, Phase::Collected { .. })
    }
}

impl BatchEntry {
    /// Takes the status and request counts of a poll.
    pub fn update(&mut self, status: &BatchStatus, counts: Option<RequestCounts>) {
        self.status = status.clone();
        if let Some(c) = counts {
            (self.total, self.completed, self.failed) = (c.total, c.completed, c.failed);
        }
    }
}

/// A [`BatchEntry`] as `batches.json` words it.
#[derive(Serialize, Deserialize)]
struct EntryFile {
    id: String,
    model: String,
    input_file_id: String,
    calls: Vec<BookedCall>,
    status: BatchStatus,
    total: u64,
    completed: u64,
    failed: u64,
    submitted_at: String,
    completed_at: Option<String>,
    collected: bool,
}

impl TryFrom<EntryFile> for BatchEntry {
    type Error = String;

    fn try_from(f: EntryFile) -> Result<Self, String> {
        let time = |what: &str, text: &str| {
            text.parse::<Timestamp>().map_err(|e| {
                format!(
                    "batch {}: {what} {text:?} is not an RFC 3339 time ({e})",
                    f.id
                )
            })
        };
        let submitted_at = time("submitted_at", &f.submitted_at)?;
        let ended = f
            .completed_at
            .as_deref()
            .map(|t| time("completed_at", t))
            .transpose()?;
        let phase = match (ended, f.collected) {
            (None, false) => Phase::Running,
            (Some(at), false) => Phase::Ended { at },
            (Some(ended_at), true) => Phase::Collected { ended_at },
            (None, true) => {
                return Err(format!("batch {}: collected but never seen ended", f.id));
            }
        };
        Ok(BatchEntry {
            id: f.id,
            model: f.model,
            input_file_id: f.input_file_id,
            calls: f.calls,
            status: f.status,
            total: f.total,
            completed: f.completed,
            failed: f.failed,
            submitted_at,
            phase,
        })
    }
}

impl From<BatchEntry> for EntryFile {
    fn from(e: BatchEntry) -> Self {
        EntryFile {
            id: e.id,
            model: e.model,
            input_file_id: e.input_file_id,
            calls: e.calls,
            status: e.status,
            total: e.total,
            completed: e.completed,
            failed: e.failed,
            submitted_at: rfc3339(e.submitted_at),
            completed_at: e.phase.ended_at().map(rfc3339),
            collected: e.phase.is_collected(),
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
            .find(|e| !e.phase.is_collected() && e.calls.iter().any(|c| c.key == key))
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
            status: BatchStatus::InProgress,
            total: 0,
            completed: 0,
            failed: 0,
            submitted_at: "2026-12-02T06:00:00.000Z".parse().unwrap(),
            phase: if collected {
                Phase::Collected {
                    ended_at: "2026-12-02T07:00:00.000Z".parse().unwrap(),
                }
            } else {
                Phase::Running
            },
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
    fn a_book_keeps_its_file_format_and_refuses_a_time_it_cannot_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("batches.json");
        let mut book = BatchBook::open(&path).unwrap();
        book.entries.push(entry("b1", &["k1"], true));
        book.save().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(r#""status": "in_progress""#), "{text}");
        assert!(
            text.contains(r#""submitted_at": "2026-12-02T06:00:00.000Z""#),
            "{text}"
        );
        assert!(
            text.contains(r#""completed_at": "2026-12-02T07:00:00.000Z""#),
            "{text}"
        );
        assert!(text.contains(r#""collected": true"#), "{text}");
        std::fs::write(&path, text.replace("2026-12-02T06:00:00.000Z", "yesterday")).unwrap();
        let err = BatchBook::open(&path).unwrap_err().to_string();
        assert!(
            err.contains(r#"submitted_at "yesterday" is not an RFC 3339 time"#),
            "{err}"
        );
        std::fs::write(&path, text.replace(r#""2026-12-02T07:00:00.000Z""#, "null")).unwrap();
        let err = BatchBook::open(&path).unwrap_err().to_string();
        assert!(err.contains("collected but never seen ended"), "{err}");
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
