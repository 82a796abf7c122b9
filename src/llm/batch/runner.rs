//! [`Batcher`]: submits the calls of a phase as one batch per model, waits for the batches,
//! and reads their answers back, resuming the batches a killed run left in `batches.json`.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use jiff::Timestamp;

use super::api::{BatchApi, BatchInfo, BatchStatus, RequestCounts};
use super::book::{BatchBook, BatchEntry, BookedCall, Phase};
use super::error::BatchError;
use super::settings::BatchConfig;
use super::waiter::Waiter;
use super::wire::{LineOutcome, custom_id, input_line, read_lines};
use crate::llm::config::ClientConfig;
use crate::llm::error::LlmError;
use crate::llm::record::timestamp;

/// One call to put in a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchCall {
    /// The caller's tag of the call (kind or criterion, configuration, question), which its
    /// custom id shows.
    pub stage: String,
    /// The model asked (every line of a batch asks the same model).
    pub model: String,
    /// The request key: equal keys are one line, and a later run's call is matched by it.
    pub key: String,
    /// The request body (`/v1/chat/completions`).
    pub body: Value,
}

/// Where an outcome came from: the batch, when it was submitted and when this run saw it end.
#[derive(Debug, Clone, PartialEq)]
pub struct Stamp {
    /// The batch's id.
    pub batch_id: String,
    /// Submitted at.
    pub submitted_at: Timestamp,
    /// Seen ended at; `None` for a batch still running.
    pub completed_at: Option<Timestamp>,
}

/// What [`Batcher::run`] got back: an outcome for every call asked, by request key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Collected {
    /// Each call's outcome and its batch.
    pub outcomes: HashMap<String, (LineOutcome, Stamp)>,
    /// Batches submitted by this call (the others were found in `batches.json` and polled).
    pub submitted: Vec<String>,
    /// Whether the wait was stopped (Ctrl-C) with a batch still running.
    pub stopped: bool,
}

/// A batch's progress, reported at every poll.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchProgress {
    /// The batch's id.
    pub batch_id: String,
    /// The model it asks.
    pub model: String,
    /// Its status.
    pub status: BatchStatus,
    /// Its request counts.
    pub counts: RequestCounts,
    /// Seconds since it was submitted (by this run or an earlier one).
    pub elapsed_s: f64,
}

/// Submits, waits for and reads back batches, keeping the run folder's `batches.json`.
pub struct Batcher {
    api: BatchApi,
    cfg: BatchConfig,
    waiter: Arc<dyn Waiter>,
    book: Mutex<BatchBook>,
    /// Batches whose outcomes the last [`Batcher::run`] returned: collected once the caller has
    /// used them ([`Batcher::settle`]).
    returned: Mutex<Vec<String>>,
}

/// Who is told of every poll of a batch.
pub type OnProgress<'a> = &'a (dyn Fn(&BatchProgress) + Sync);

impl Batcher {
    /// A batcher on `api` with `cfg`, keeping `book`, waiting with `waiter`.
    pub fn new(api: BatchApi, cfg: BatchConfig, book: BatchBook, waiter: Arc<dyn Waiter>) -> Self {
        Batcher {
            api,
            cfg,
            waiter,
            book: Mutex::new(book),
            returned: Mutex::new(Vec::new()),
        }
    }

    /// The batcher of a run: the batch endpoints of `cfg`'s server with its key and retry
    /// settings, the book at `book` (`<run folder>/batches.json`), the real clock (Ctrl-C stops
    /// a wait).
    ///
    /// # Errors
    /// [`LlmError`] as [`ClientConfig::api_key`]; [`LlmError::Config`] for a `batches.json`
    /// that cannot be read (naming it).
    pub fn open(cfg: &ClientConfig, book: &Path) -> Result<Self, LlmError> {
        let config = |e: BatchError| LlmError::Config(e.to_string());
        let api = BatchApi::new(&cfg.resolved_base_url(), cfg.api_key()?, cfg.retry.clone())
            .map_err(config)?;
        let book = BatchBook::open(book).map_err(config)?;
        Ok(Batcher::new(
            api,
            cfg.batch.clone(),
            book,
            Arc::new(super::waiter::RealWaiter),
        ))
    }

    /// A copy of the book as it is now.
    pub fn book(&self) -> BatchBook {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BatchBook> {
        self.book.lock().expect("batch book lock")
    }

    /// Marks collected every ended batch whose outcomes an earlier [`run`](Self::run) returned:
    /// the caller has stored their answers, so a later run puts their unanswered calls into a
    /// new batch instead of reading these again. Call it once the outcomes are used.
    ///
    /// # Errors
    /// [`BatchError::Book`] when `batches.json` cannot be written.
    pub fn settle(&self) -> Result<(), BatchError> {
        let ids = std::mem::take(&mut *self.returned.lock().expect("returned lock"));
        let mut book = self.lock();
        let mut changed = false;
        for id in ids {
            if let Some(e) = book.entry_mut(&id)
                && let Phase::Ended { at } = e.phase
            {
                e.phase = Phase::Collected { ended_at: at };
                changed = true;
            }
        }
        if changed {
            book.save()?;
        }
        Ok(())
    }

    /// Gets an outcome for every call of `calls`: calls held by a batch of `batches.json` not
    /// yet collected are read from that batch (polled, never submitted again); the others go
    /// into one new batch per model, recorded in `batches.json` as soon as it exists. Waits until
    /// every batch involved has ended (or the wait is stopped), then reads the output and error
    /// files; `progress` is told of every poll. Outcomes an earlier call returned are settled
    /// first ([`settle`](Self::settle)).
    ///
    /// # Errors
    /// [`BatchError`] when a batch cannot be submitted or polled, a file cannot be read, or
    /// `batches.json` cannot be written. Batches already submitted stay recorded: the same
    /// command polls them.
    pub async fn run(
        &self,
        calls: Vec<BatchCall>,
        progress: OnProgress<'_>,
    ) -> Result<Collected, BatchError> {
        self.settle()?;
        let mut held: Vec<String> = Vec::new();
        let mut new: BTreeMap<String, Vec<BatchCall>> = BTreeMap::new();
        let mut seen = std::collections::HashSet::new();
        for call in calls {
            if !seen.insert(call.key.clone()) {
                continue;
            }
            match self.lock().open_holding(&call.key) {
                Some(e) if !held.contains(&e.id) => held.push(e.id.clone()),
                Some(_) => {}
                None => new.entry(call.model.clone()).or_default().push(call),
            }
        }
        let mut out = Collected::default();
        for (model, calls) in new {
            let id = self.submit(&model, &calls).await?;
            out.submitted.push(id.clone());
            held.push(id);
        }
        let infos = self.wait(&held, &mut out.stopped, progress).await?;
        for (id, info) in held.iter().zip(&infos) {
            self.collect(id, info, &mut out).await?;
        }
        self.returned.lock().expect("returned lock").extend(held);
        Ok(out)
    }

    /// Uploads `calls` as one input file and creates its batch; records it.
    async fn submit(&self, model: &str, calls: &[BatchCall]) -> Result<String, BatchError> {
        let booked: Vec<BookedCall> = calls
            .iter()
            .enumerate()
            .map(|(n, c)| BookedCall {
                custom_id: custom_id(&c.stage, n),
                key: c.key.clone(),
            })
            .collect();
        let mut jsonl = String::new();
        for (c, b) in calls.iter().zip(&booked) {
            jsonl.push_str(&input_line(&b.custom_id, &c.body));
            jsonl.push('\n');
        }
        let file_name = format!("chunksweep-{}.jsonl", file_safe(model));
        let file_id = self.api.upload(&file_name, &jsonl).await?;
        let info = self
            .api
            .create(&file_id, &self.cfg.completion_window)
            .await?;
        let mut book = self.lock();
        book.entries.push(BatchEntry {
            id: info.id.clone(),
            model: model.to_string(),
            input_file_id: file_id,
            calls: booked,
            status: info.status.clone(),
            total: calls.len() as u64,
            completed: 0,
            failed: 0,
            submitted_at: timestamp(self.waiter.now()),
            phase: Phase::Running,
        });
        book.save()?;
        Ok(info.id)
    }

    /// Polls `ids` every `poll_s` seconds until each has ended or the wait is stopped
    /// (`stopped` set); the last state of each, in order.
    async fn wait(
        &self,
        ids: &[String],
        stopped: &mut bool,
        progress: OnProgress<'_>,
    ) -> Result<Vec<BatchInfo>, BatchError> {
        let mut last: Vec<Option<BatchInfo>> = vec![None; ids.len()];
        loop {
            for (id, slot) in ids.iter().zip(last.iter_mut()) {
                if slot.as_ref().is_some_and(BatchInfo::is_terminal) {
                    continue;
                }
                let info = self.api.get(id).await?;
                self.record_poll(id, &info, progress)?;
                *slot = Some(info);
            }
            if last.iter().flatten().all(BatchInfo::is_terminal) {
                break;
            }
            if !self
                .waiter
                .sleep(Duration::from_secs_f64(self.cfg.poll_s))
                .await
            {
                *stopped = true;
                break;
            }
        }
        Ok(last.into_iter().map(Option::unwrap_or_default).collect())
    }

    /// Stores a poll's status in the book (and when the batch ended) and reports it.
    fn record_poll(
        &self,
        id: &str,
        info: &BatchInfo,
        progress: OnProgress<'_>,
    ) -> Result<(), BatchError> {
        let now = timestamp(self.waiter.now());
        let mut book = self.lock();
        let Some(e) = book.entry_mut(id) else {
            return Ok(());
        };
        e.update(&info.status, info.request_counts);
        if info.is_terminal() && e.phase == Phase::Running {
            e.phase = Phase::Ended { at: now };
        }
        let seen = BatchProgress {
            batch_id: id.to_string(),
            model: e.model.clone(),
            status: e.status.clone(),
            counts: RequestCounts {
                total: e.total,
                completed: e.completed,
                failed: e.failed,
            },
            elapsed_s: elapsed_since(e.submitted_at, now),
        };
        book.save()?;
        drop(book);
        progress(&seen);
        Ok(())
    }

    /// Reads batch `id`'s output and error files into `out`: every call of the batch gets its
    /// line's outcome, or unfinished when no line answers it.
    async fn collect(
        &self,
        id: &str,
        info: &BatchInfo,
        out: &mut Collected,
    ) -> Result<(), BatchError> {
        let mut lines: HashMap<String, LineOutcome> = HashMap::new();
        if info.is_terminal() {
            // error lines first, so that an answer in the output file wins
            for file in [&info.error_file_id, &info.output_file_id]
                .into_iter()
                .flatten()
            {
                let (read, _unreadable) = read_lines(&self.api.content(file).await?);
                lines.extend(read);
            }
        }
        let entry = self.recorded(id)?;
        let missing = missing_reason(id, info);
        let stamp = Stamp {
            batch_id: id.to_string(),
            submitted_at: entry.submitted_at,
            completed_at: entry.phase.ended_at(),
        };
        for call in &entry.calls {
            let outcome =
                lines
                    .remove(&call.custom_id)
                    .unwrap_or_else(|| LineOutcome::Unfinished {
                        reason: missing.clone(),
                    });
            out.outcomes
                .insert(call.key.clone(), (outcome, stamp.clone()));
        }
        Ok(())
    }

    /// A copy of batch `id`'s entry in the book, taking the book's lock once (the error names
    /// the book's file under the same guard).
    ///
    /// # Errors
    /// [`BatchError::Book`] when the book holds no batch `id`.
    fn recorded(&self, id: &str) -> Result<BatchEntry, BatchError> {
        let book = self.lock();
        let found = book.entries.iter().find(|e| e.id == id).cloned();
        found.ok_or_else(|| BatchError::Book {
            path: book.path().display().to_string(),
            message: format!("batch {id} is not recorded"),
        })
    }

    /// Cancels every recorded batch that has not ended (`--cancel-batches`); the ids cancelled.
    /// Lines the provider already answered are still returned by its output file, which the
    /// next run reads.
    ///
    /// # Errors
    /// [`BatchError`] when a cancel request fails or `batches.json` cannot be written.
    pub async fn cancel_open(&self) -> Result<Vec<String>, BatchError> {
        let open: Vec<String> = self
            .lock()
            .entries
            .iter()
            .filter(|e| e.phase == Phase::Running)
            .map(|e| e.id.clone())
            .collect();
        for id in &open {
            let info = self.api.cancel(id).await?;
            let mut book = self.lock();
            if let Some(e) = book.entry_mut(id) {
                e.update(&info.status, info.request_counts);
            }
            book.save()?;
        }
        Ok(open)
    }
}

/// Why a call of batch `id` (last seen as `info`) has no line.
fn missing_reason(id: &str, info: &BatchInfo) -> String {
    match &info.status {
        BatchStatus::Completed => format!("no line for it in the output of batch {id}"),
        BatchStatus::Expired => format!("batch {id} expired before answering it"),
        BatchStatus::Cancelled => format!("batch {id} was cancelled before answering it"),
        BatchStatus::Failed => format!(
            "batch {id} failed{}",
            info.errors
                .as_ref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ),
        s => format!(
            "batch {id} is still {s} (the wait was stopped); rerun the same command to collect it"
        ),
    }
}

/// Seconds from `since` to `now` (0 when `now` is earlier).
fn elapsed_since(since: Timestamp, now: Timestamp) -> f64 {
    (now.as_millisecond() - since.as_millisecond()).max(0) as f64 / 1e3
}

/// `name` with every character but ASCII letters, digits, `-`, `_` and `.` as `_`.
fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    #[test]
    fn reasons_name_the_batch_and_what_happened() {
        let info = |s: &str| BatchInfo {
            id: "b".into(),
            status: s.into(),
            ..Default::default()
        };
        assert_eq!(
            missing_reason("b", &info("completed")),
            "no line for it in the output of batch b"
        );
        assert!(missing_reason("b", &info("expired")).contains("expired"));
        assert!(missing_reason("b", &info("in_progress")).contains("rerun the same command"));
    }

    /// A batcher with an empty book at `dir/batches.json` and a server nobody asks.
    fn idle_batcher(dir: &Path) -> Batcher {
        let api = BatchApi::new("http://127.0.0.1:9/v1", None, Default::default()).unwrap();
        let book = BatchBook::open(&dir.join("batches.json")).unwrap();
        let waiter = Arc::new(super::super::waiter::VirtualWaiter::new(
            SystemTime::UNIX_EPOCH,
            None,
        ));
        Batcher::new(api, BatchConfig::default(), book, waiter)
    }

    /// Collecting a batch the book does not hold is an error naming the book, and leaves the
    /// book's lock free. The error once locked the book a second time while the first guard
    /// still lived, which blocks a `std::sync::Mutex` forever: the body runs on its own thread
    /// so that such a regression fails this test (the wait is a failure detector, not a speed
    /// bound) instead of hanging the suite.
    #[test]
    fn collecting_an_unrecorded_batch_is_an_error_not_a_deadlock() {
        let dir = tempfile::tempdir().unwrap();
        let batcher = Arc::new(idle_batcher(dir.path()));
        let (tx, rx) = std::sync::mpsc::channel();
        let b = Arc::clone(&batcher);
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            let info = BatchInfo {
                id: "batch_gone".into(),
                status: BatchStatus::InProgress,
                ..Default::default()
            };
            let mut out = Collected::default();
            let got = rt.block_on(b.collect("batch_gone", &info, &mut out));
            let _ = tx.send((got, out));
        });
        let (got, out) = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("collect never returned: the book's lock is taken twice on the error path");
        match got {
            Err(BatchError::Book { path, message }) => {
                assert!(path.ends_with("batches.json"), "{path}");
                assert_eq!(message, "batch batch_gone is not recorded");
            }
            other => panic!("expected a book error, got {other:?}"),
        }
        assert!(out.outcomes.is_empty());
        assert!(batcher.book.try_lock().is_ok(), "the book stays locked");
    }

    #[test]
    fn elapsed_and_file_names() {
        let t = timestamp(SystemTime::UNIX_EPOCH + Duration::from_secs(90));
        let since = "1970-01-01T00:00:30.000Z".parse().unwrap();
        assert_eq!(elapsed_since(since, t), 60.0);
        assert_eq!(elapsed_since(t, since), 0.0);
        assert_eq!(file_safe("org/model:v1"), "org_model_v1");
    }
}
