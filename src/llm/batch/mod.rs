//! Chat completions through the OpenAI Batch API: half the price, its own rate-limit pool, the
//! results within a completion window (24 hours by default) instead of at once.
//!
//! The same JSONL format is served by OpenAI, Together, Fireworks, OpenRouter and vLLM's batch
//! runner. One batch goes through these steps ([`Batcher::run`]):
//!
//! 1. **Lines** ([`wire`]): one line per call, `{"custom_id", "method": "POST", "url":
//!    "/v1/chat/completions", "body"}` (async-openai's `BatchRequestInput`), the `custom_id`
//!    naming the call: its stage tag (kind or criterion, configuration, question), then `#` and
//!    the line's position, so that ids are unique in a file and a reader can tell what a line
//!    asked.
//! 2. **Upload and submit** ([`api`]): the file goes to `POST /files` with `purpose=batch`,
//!    the batch to `POST /batches` for `/v1/chat/completions` with the configured completion
//!    window. As soon as the batch exists, the run folder's `batches.json` ([`book`]) records its
//!    id, model, input file, the calls it holds (custom id and request key) and its state,
//!    written atomically (a temporary file renamed over the old one), so a run killed from then
//!    on finds it again.
//! 3. **Wait** ([`waiter`]): `GET /batches/{id}` every `poll_s` seconds until the batch is
//!    `completed`, `expired`, `failed` or `cancelled`, reporting its request counts and the time
//!    elapsed. The sleeper is injected, so tests never wait; the real one ends the wait on
//!    Ctrl-C, which leaves the batch running at the provider (`--cancel-batches` cancels it).
//! 4. **Collect**: the output and error files (`GET /files/{id}/content`) are read back by
//!    `custom_id` ([`wire::read_lines`]): a 2xx line is an answer, another status a refusal with
//!    its status (a 400 is counted as refused, as in a direct run), an error line, a line missing
//!    from both files, or a batch that expired, failed or was cancelled leaves its call
//!    unfinished ([`LineOutcome::Unfinished`]), so the same command asks it again.
//!
//! A batch already recorded in `batches.json` and not yet collected is never submitted again: a
//! rerun that needs any call it holds polls it instead. Only what no open batch holds goes into
//! a new one.
//!
//! # Configuration
//!
//! ```toml
//! [llm]
//! batch = true                 # or, with settings:
//!
//! [llm.batch]
//! enabled = true
//! poll_s = 30.0                # seconds between two polls of a batch
//! completion_window = "24h"    # sent as is; OpenAI accepts "24h"
//! ```
//!
//! The price of a batched call is the model's list price times its `batch_discount` (default
//! 0.5, OpenAI's).

pub mod api;
pub mod book;
pub mod defer;
pub mod error;
pub mod runner;
pub mod settings;
pub mod waiter;
pub mod wire;

pub use api::{BatchApi, BatchInfo, BatchStatus, RequestCounts};
pub use book::{BatchBook, BatchEntry, BookedCall, Phase};
pub use defer::Deferrals;
pub use error::BatchError;
pub use runner::{BatchCall, BatchProgress, Batcher, Collected, OnProgress, Stamp};
pub use settings::BatchConfig;
pub use waiter::{RealWaiter, VirtualWaiter, Waiter};
pub use wire::LineOutcome;
