//! The Batch API setup of `run --batch` and `judge-check --batch` ([`crate::llm::batch`]): the
//! client's batch mode on the run folder's batches.json, and `--cancel-batches`.

use crate::error::Error;
use crate::events::{Events, RunEvent};
use crate::files;
use crate::judge::JudgeError;
use crate::llm::batch::Batcher;
use crate::llm::{ClientConfig, LlmClient};
use crate::report::run_dir::RunDir;

/// Puts `client` in batch mode on `dir`'s batches.json (recorded as a file of the run) and, with
/// `--cancel-batches`, cancels the batches there that have not ended, saying which.
///
/// # Errors
/// [`JudgeError`] for a batches.json that cannot be read or an API key that cannot be used.
pub(crate) async fn start(
    cfg: &ClientConfig,
    client: &LlmClient,
    dir: &mut RunDir,
    events: Events<'_>,
) -> Result<(), Error> {
    let book = dir.path().join(files::BATCHES);
    client.use_batches(Batcher::open(cfg, &book).map_err(JudgeError::from)?);
    dir.record(files::BATCHES);
    if cfg.batch.cancel {
        events(match client.cancel_batches().await {
            Ok(ids) if ids.is_empty() => {
                RunEvent::Note("no batch of this run folder is in progress".to_string())
            }
            Ok(ids) => RunEvent::Note(format!(
                "cancelled batch(es) {}: what they answered is kept, the rest is left unfinished",
                ids.join(", ")
            )),
            Err(e) => RunEvent::Warning(format!("cancelling the batches failed: {e}")),
        });
    }
    Ok(())
}
