//! The client's batch mode: a chat call that the cache does not answer is answered from the
//! batches already read back, or queued for the next batch ([`LlmError::Deferred`]). The caller
//! runs its jobs, sends what they queued as batches ([`Deferrals::flush`]), and runs the jobs
//! that waited again: they then find their answers, and the calls that depend on them (a
//! verdict on a generated answer, a format reminder) are queued in turn. Nothing is sent to
//! `/chat/completions`.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::json;

use super::error::BatchError;
use super::runner::{BatchCall, Batcher, OnProgress, Stamp};
use super::wire::LineOutcome;
use crate::llm::cache::{cache_key, canonical_json};
use crate::llm::error::LlmError;
use crate::llm::format::ResponseFormatKind;
use crate::llm::structured::is_format_refusal;
use crate::llm::transport::{Attempts, BodyFn, SendError, Sent};

/// The endpoint named in the errors of batched calls.
const ENDPOINT: &str = "/chat/completions (batch)";

/// The calls waiting for a batch and the answers of the batches read back.
pub struct Deferrals {
    batcher: Batcher,
    queue: Mutex<Vec<BatchCall>>,
    outcomes: Mutex<HashMap<String, (LineOutcome, Stamp)>>,
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

    /// Answers the call tagged `stage` whose body `build` makes from the batches read back, as
    /// [`crate::llm::transport::Transport::send`] would from the server: a 2xx line is the reply,
    /// a refused line is [`LlmError::Rejected`] (or a refused structured-output mode, so the
    /// caller falls back as in a direct run), a line without an answer is
    /// [`LlmError::Unbatched`]. A call no batch has seen yet is queued:
    /// [`LlmError::Deferred`].
    pub(in crate::llm) fn send<T>(
        &self,
        stage: &str,
        model: &str,
        build: &BodyFn<'_>,
        att: &mut Attempts,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Sent<T>, SendError> {
        let (body, mode) = build();
        let key = cache_key(&canonical_json(&body));
        let Some((outcome, stamp)) = self.outcomes.lock().expect("outcomes").get(&key).cloned()
        else {
            self.queue.lock().expect("queue").push(BatchCall {
                stage: stage.to_string(),
                model: model.to_string(),
                key,
                body,
            });
            return Err(SendError::Fatal(LlmError::Deferred));
        };
        let batch_id = stamp.batch_id.clone();
        att.batch = Some(stamp);
        match outcome {
            LineOutcome::Answered { body: text } => {
                att.count = 1;
                att.last_status = Some(200);
                match parse(&text) {
                    Ok(reply) => Ok(Sent {
                        reply,
                        raw: text,
                        debited: 0,
                        mode,
                    }),
                    Err(why) => {
                        att.unreadable_2xx = Some(text);
                        Err(SendError::Fatal(LlmError::Exhausted {
                            endpoint: ENDPOINT.to_string(),
                            attempts: 1,
                            last: format!(
                                "a line of batch {batch_id} with a malformed body ({why})"
                            ),
                        }))
                    }
                }
            }
            LineOutcome::Refused { status, message } => {
                att.count = 1;
                att.last_status = Some(status);
                let err = LlmError::Rejected {
                    status,
                    url: format!("batch {batch_id}"),
                    model: model.to_string(),
                    message: message.clone(),
                };
                let body = json!({"error": {"message": message}}).to_string();
                match mode.filter(|&m| m != ResponseFormatKind::Text) {
                    Some(m) if is_format_refusal(status, &body) => Err(SendError::Refused(err, m)),
                    _ => Err(SendError::Fatal(err)),
                }
            }
            LineOutcome::Unfinished { reason } => {
                Err(SendError::Fatal(LlmError::Unbatched { reason }))
            }
        }
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
                outcomes.extend(c.outcomes);
                Ok(n)
            }
            Err(e) => {
                let stamp = Stamp {
                    batch_id: String::new(),
                    submitted_at: String::new(),
                    completed_at: None,
                };
                for k in keys {
                    let reason = e.to_string();
                    outcomes.insert(k, (LineOutcome::Unfinished { reason }, stamp.clone()));
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
