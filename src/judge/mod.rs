//! The judge stage: confirm the chunk size with answer quality.
//!
//! For each candidate configuration and each question: retrieve top-k with the sweep's frozen
//! retriever ([`crate::sweep::ConfigIndex`]), generate an answer with the generator model
//! (`prompts/generate.md`), then grade it with the judge model, pass/fail with a one-sentence
//! reason in JSON: **faithfulness** (every claim supported by the retrieved context),
//! **relevancy** (answers the question asked), and **correctness** against the reference answer
//! when the golden set has one.
//!
//! - [`criteria`]: a criterion as a value (name, template, what it needs); every file and
//!   column of the stage is generated from the run's list. [`settings`]: the `[judge]` settings;
//!   [`fingerprint`]: those a journal was made with; [`error`]: the stage's errors; [`rows`]:
//!   judge_questions.csv's row (a question's verdicts are a map from criterion to verdict) and
//!   the call tag.
//! - [`prompts`]: templates with named placeholders, loaded at run time, hashed for the manifest;
//!   every value fenced (documents, question, answer, reference) so that no text can close its
//!   block.
//! - [`asking`]: the requests, and the one place the judge mode (per criterion or combined)
//!   decides which calls grade an answer; [`verdict`]: the verdict schema; an unreadable verdict
//!   is retried once with a reminder of the format, then recorded as `error`, never as a pass.
//! - [`work`]: the one job loop (concurrency, budget, calls.csv, stopping on a refused key) that
//!   serves both [`pipeline`] (the resumable run of candidate × question jobs, the estimate) and
//!   [`probes`] (controls, repeats and `judge-check`'s labelled items).
//! - [`journal`]: the run folder's judge_questions.csv (appended and flushed per question) and
//!   calls.csv (per call as it ends, each answered call once), never losing a finished row.
//! - [`controls`]: planted controls and repeats ([`perturb`]: a fact the context states changed),
//!   asked through [`probes`] (also used by
//!   `judge-check` on labelled items, [`labels`]); [`accuracy`]: TPR, TNR, balanced accuracy,
//!   Cohen's κ; [`trust`]: whether the verdicts can confirm the pick, per criterion;
//!   [`parroting`]: reasons that repeat the prompt's text or contradict their verdict.
//! - [`table`]: judge.csv (pass rates over judged questions with Wilson intervals, errors apart,
//!   latency, tokens, cost); [`decision`]: the paired McNemar comparison and the decision (none
//!   without a valid verdict); [`gates`]: what must hold beyond the verdicts before the decision
//!   confirms the pick (accuracy measured, the run finished, enough judged answers);
//!   [`summary`]: all of it as one typed value, built once, that the reports render
//!   (`crate::report::judge_section`).

pub mod accuracy;
pub mod answer_quality;
pub mod asking;
pub mod controls;
pub mod criteria;
pub mod decision;
pub mod error;
pub mod fingerprint;
pub mod gates;
pub mod journal;
pub mod labels;
pub mod parroting;
pub mod perturb;
pub mod pipeline;
pub mod probes;
pub mod prompts;
pub mod rows;
pub mod settings;
pub mod summary;
pub mod table;
pub mod trust;
pub mod verdict;
pub mod work;

pub use error::JudgeError;

pub use criteria::Criterion;
pub use fingerprint::Fingerprint;
pub use journal::{
    CallLog, CallRow, Finished, judge_spend, load_finished, recorded_spend, sweep_spend,
};
pub use pipeline::{
    Job, JudgeRun, Setup, estimate, estimate_line, judged_questions, pending, plan_jobs, run_judge,
};
pub use prompts::{PromptError, PromptSet};
pub use rows::{JudgeQuestionRow, Judgement, Verdicts};
pub use settings::{JudgeMode, JudgeSettings};
pub use summary::{JudgeSummary, SummaryInputs};
pub use verdict::Verdict;
