//! The judge stage: confirm the chunk size with answer quality.
//!
//! For each candidate configuration and each question: retrieve top-k with the sweep's frozen
//! retriever ([`crate::sweep::ConfigIndex`]), generate an answer with the generator model
//! (`prompts/generate.md`), then grade it with the judge model, pass/fail with a one-sentence
//! reason in JSON: **faithfulness** (every claim supported by the retrieved context),
//! **relevancy** (answers the question asked), and **correctness** against the reference answer
//! when the golden set has one.
//!
//! - [`settings`]: the `[judge]` settings and the fingerprint a journal was made with;
//!   [`error`]: the stage's errors; [`rows`]: judge_questions.csv's row and the call tag.
//! - [`prompts`]: templates with named placeholders, loaded at run time, hashed for the manifest;
//!   every value fenced (documents, question, answer, reference) so that no text can close its
//!   block.
//! - [`verdict`]: the verdict schema; an unreadable verdict is retried once with a reminder of the
//!   format, then recorded as `error`, never as a pass.
//! - [`pipeline`]: the resumable run (the response cache for calls), the budget and the
//!   estimate.
//! - [`journal`]: the run folder's judge_questions.csv (appended and flushed per question) and
//!   calls.csv (per call as it ends, each answered call once), never losing a finished row.
//! - [`controls`]: planted controls and repeats, asked through [`check`] (also used by
//!   `judge-check` on labelled items, [`labels`]); [`accuracy`]: TPR, TNR, balanced accuracy,
//!   Cohen's κ; [`trust`]: whether the verdicts can confirm the pick, per criterion.
//! - [`summary`]: judge.csv (pass rates over judged questions with Wilson intervals, errors
//!   apart, latency, tokens, cost), the paired McNemar comparison and the decision (none without
//!   a valid verdict), and the report's judge section.

pub mod accuracy;
pub mod check;
pub mod controls;
pub mod error;
pub mod journal;
pub mod labels;
pub mod pipeline;
pub mod prompts;
pub mod rows;
pub mod settings;
pub mod summary;
pub mod trust;
pub mod verdict;

pub use error::JudgeError;

pub use journal::{CallLog, CallRow, load_finished, recorded_spend};
pub use pipeline::{Estimate, Job, JudgeRun, estimate, plan_jobs, run_judge};
pub use prompts::{PromptError, PromptKind, PromptSet};
pub use rows::JudgeQuestionRow;
pub use settings::{Fingerprint, JudgeMode, JudgeSettings};
pub use verdict::{Criterion, Verdict};
