//! The client's batch mode: a chat call that the cache does not answer is answered from the
//! batches already read back, or queued for the next batch (the client then fails it with
//! `LlmError::Deferred`). The caller
//! runs its jobs, sends what they queued as batches ([`Deferrals::flush`]), and runs the jobs
//! that waited again: they then find their answers, and the calls that depend on them (a
//! verdict on a generated answer, a format reminder) are queued in turn. Nothing is sent to
//! `/chat/completions`.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

use super::error::BatchError;
use super::runner::{BatchCall, Batcher, OnProgress, Stamp};
use super::wire::LineOutcome;
use crate::llm::cache::{cache_key, canonical_json};

/// The calls waiting for a batch and the answers of the batches read back.
pub struct Deferrals {
    batcher: Batcher,
    queue: Mutex<Vec<BatchCall>>,
    /// Each call's outcome, by request key, with the batch that answered it (`None` when the
    /// batches could not be sent or read).
    outcomes: Mutex<HashMap<String, (LineOutcome, Option<Stamp>)>>,
}

impl Deferrals {
    /// Batch mode through `batcher`.
    pub fn new(batcher: Batcher) -> Self {
        Deferrals {
            batcher,
            queue: Mutex::new(Vec::new()),
            outcomes: Mutex::new(HashMap::new()),
        }
    }

    /// The batcher (its book and its cancelling).
    pub fn batcher(&self) -> &Batcher {
        &self.batcher
    }

    /// The outcome of the call tagged `stage` to `model` with `body` in the batches read back;
    /// `None` when no batch has seen it yet: it is then queued for the next one.
    pub fn lookup(
        &self,
        stage: &str,
        model: &str,
        body: Value,
    ) -> Option<(LineOutcome, Option<Stamp>)> {
        let key = cache_key(&canonical_json(&body));
        let found = self.outcomes.lock().expect("outcomes").get(&key).cloned();
        if found.is_none() {
            self.queue.lock().expect("queue").push(BatchCall {
                stage: stage.to_string(),
                model: model.to_string(),
                key,
                body,
            });
        }
        found
    }

    /// Sends the queued calls as batches (one per model; calls held by an open batch of the run
    /// folder are read from it) and keeps their outcomes for the calls to come. `Ok(n)`: the
    /// calls sent or found, 0 when nothing was queued. When the batches cannot be submitted or
    /// read, every queued call is left unfinished with the error as its reason, and the error is
    /// returned.
    ///
    /// # Errors
    /// [`BatchError`] from the batch endpoints or `batches.json`.
    pub async fn flush(&self, progress: OnProgress<'_>) -> Result<usize, BatchError> {
        let calls = std::mem::take(&mut *self.queue.lock().expect("queue"));
        if calls.is_empty() {
            return Ok(0);
        }
        let n = calls.len();
        let keys: Vec<String> = calls.iter().map(|c| c.key.clone()).collect();
        let got = self.batcher.run(calls, progress).await;
        let mut outcomes = self.outcomes.lock().expect("outcomes");
        match got {
            Ok(c) => {
                outcomes.extend(c.outcomes.into_iter().map(|(k, (o, s))| (k, (o, Some(s)))));
                Ok(n)
            }
            Err(e) => {
                for k in keys {
                    let reason = e.to_string();
                    outcomes.insert(k, (LineOutcome::Unfinished { reason }, None));
                }
                Err(e)
            }
        }
    }

    /// Marks collected the batches whose outcomes have been used ([`Batcher::settle`]).
    ///
    /// # Errors
    /// [`BatchError::Book`] when `batches.json` cannot be written.
    pub fn settle(&self) -> Result<(), BatchError> {
        self.batcher.settle()
    }
}
