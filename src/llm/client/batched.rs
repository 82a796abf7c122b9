//! A chat call in batch mode ([`crate::llm::batch`]): answered from the batches read back as the
//! transport would answer it from the server, or queued for the next batch.

use serde_json::json;

use super::LlmClient;
use crate::llm::batch::{Deferrals, LineOutcome};
use crate::llm::error::LlmError;
use crate::llm::format::ResponseFormatKind;
use crate::llm::structured::is_format_refusal;
use crate::llm::transport::{Attempts, BodyFn, SendError, Sent};

/// The endpoint named in the errors of batched calls.
const ENDPOINT: &str = "/chat/completions (batch)";

impl LlmClient {
    /// The call tagged `stage` whose body `build` makes, from the batches of `d`: a 2xx line is
    /// the reply, a refused line [`LlmError::Rejected`] (or a refused structured-output mode, so
    /// that the caller falls back as in a direct run, known at once to every call of the
    /// model), a line without an answer [`LlmError::Unbatched`]. A call no batch has seen yet
    /// is queued: [`LlmError::Deferred`].
    pub(super) fn send_batched<T>(
        &self,
        d: &Deferrals,
        stage: &str,
        model: &str,
        build: &BodyFn<'_>,
        att: &mut Attempts,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Sent<T>, SendError> {
        let (body, mode) = build();
        let Some((outcome, stamp)) = d.lookup(stage, model, body) else {
            return Err(SendError::Fatal(LlmError::Deferred));
        };
        let batch_id = stamp
            .as_ref()
            .map(|s| s.batch_id.clone())
            .unwrap_or_default();
        att.batch = stamp;
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
                    Some(m) if is_format_refusal(status, &body) => {
                        self.inner.formats.mark_refused(model, m);
                        Err(SendError::Refused(err, m))
                    }
                    _ => Err(SendError::Fatal(err)),
                }
            }
            LineOutcome::Unfinished { reason } => {
                Err(SendError::Fatal(LlmError::Unbatched { reason }))
            }
        }
    }
}
