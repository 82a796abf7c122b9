//! Errors of the judge stage.

use std::path::{Path, PathBuf};

use thiserror::Error;

use super::prompts::PromptError;
use crate::budget::Refusal;
use crate::exit::ExitClass;
use crate::sweep::SweepError;

/// Errors of the judge stage. Failed LLM calls are mostly not among them: an unreadable verdict
/// is an `error` verdict, and a rejected request or a transient failure leaves the question
/// unfinished for the next run; only a refused key or unknown model stops the run
/// ([`JudgeError::Stopped`]).
#[derive(Debug, Error)]
pub enum JudgeError {
    /// A prompt template is missing or invalid.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// A candidate could not be chunked or indexed.
    #[error(transparent)]
    Sweep(#[from] SweepError),
    /// A labels file for `judge-check` is unreadable or invalid.
    #[error(transparent)]
    Labels(#[from] super::labels::LabelError),
    /// A labelled judge_questions.csv row names a configuration or question the run does not
    /// have.
    #[error("{path}:{line}: {message}")]
    UnknownRow {
        /// The labels file.
        path: PathBuf,
        /// The row's line.
        line: usize,
        /// What is missing.
        message: String,
    },
    /// A run file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A CSV file could not be read or written.
    #[error("{path}: {source}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: csv::Error,
    },
    /// The run folder holds judge results made with other settings (models, prompts, caps).
    #[error(
        "{dir} holds judge results made with other settings ({what}); use a new --out folder or delete judge_questions.csv there"
    )]
    SettingsChanged {
        /// The run folder.
        dir: PathBuf,
        /// What differs.
        what: String,
    },
    /// The spend already recorded in the run folder plus the estimate passes the budget before
    /// the judge stage sends anything (the sweep before it may have spent: `sweep`).
    #[error(
        "the judge stage is estimated at ${estimate:.4}, and ${spent:.4} is already spent in this folder: more than --max-cost ${max:.4}; the sweep spent ${sweep:.4} of it; the judge stage sent nothing (raise --max-cost, or use fewer candidates or questions)"
    )]
    OverBudget {
        /// Estimated cost of what is left, in USD.
        estimate: f64,
        /// Spend recorded in the folder (calls.csv and the sweep's call files), in USD.
        spent: f64,
        /// Of it, the spend of the sweep's call files (embed_calls.csv, context_calls.csv,
        /// rerank_calls.csv), in USD.
        sweep: f64,
        /// The cap, in USD.
        max: f64,
    },
    /// judge-check's estimate passes the budget before anything is sent.
    #[error(
        "judge-check is estimated at ${estimate:.4}: more than --max-cost ${max:.4}; nothing was sent (raise --max-cost, or judge fewer labelled items)"
    )]
    CheckOverBudget {
        /// Estimated cost of the labelled items, in USD.
        estimate: f64,
        /// The cap, in USD.
        max: f64,
    },
    /// A budget was set but a model has no price, so the spend cannot be held to it.
    #[error(
        "--max-cost ${max:.4} needs prices to hold: set input_usd_per_mtok and output_usd_per_mtok for {models} in [llm.models.<name>] (or [llm.defaults]); nothing was sent"
    )]
    Unpriced {
        /// The cap, in USD.
        max: f64,
        /// The models without a price.
        models: String,
    },
    /// The LLM client could not be built.
    #[error(transparent)]
    Client(#[from] crate::llm::LlmError),
    /// The server refused the key or does not know the model ([`crate::llm::LlmError::stops_run`]):
    /// the run stopped early. Finished questions are kept.
    #[error(
        "stopped: {source}. Check the API key and the model name; {not_run} question(s) not judged, finished ones are kept: run the same command again"
    )]
    Stopped {
        /// The refusal.
        source: crate::llm::LlmError,
        /// Questions of this run left without a row.
        not_run: usize,
    },
    /// Some candidate got no valid verdict (every verdict an error, or no answer generated), so
    /// the judge confirms nothing. The report is written and says so.
    #[error(
        "no valid verdict for {candidates}: the judge cannot confirm any configuration (see judge_questions.csv for the reasons)"
    )]
    NoValidVerdict {
        /// The candidates without a valid verdict, comma-separated.
        candidates: String,
    },
    /// `--compare-prefix` without a prefixed configuration at the pick's strategy and size.
    #[error(
        "--compare-prefix: the sweep has no prefixed configuration at {strategy} {size}; add --prefixes none,heading_path (say) or name the prefix (--compare-prefix heading_path)"
    )]
    NoPrefixToCompare {
        /// The pick's strategy.
        strategy: String,
        /// The pick's chunk size.
        size: usize,
    },
    /// No question got a row: every one is unfinished (timeouts, retries exhausted, rejected
    /// requests), so nothing is judged and nothing can be confirmed. Incomplete (exit 4): the
    /// same command finishes them once the server answers.
    #[error(
        "no question could be judged; the first failure ({config_id}, {question_id}): {error}. Check the server ({server}) and the model names, then run the same command again"
    )]
    NothingJudged {
        /// The candidate of the first failure.
        config_id: String,
        /// Its question.
        question_id: String,
        /// The error.
        error: String,
        /// The server's base URL.
        server: String,
    },
}

impl JudgeError {
    /// Usage (2) for prompts, settings and budgets the user chose; the sweep's or the client's
    /// class for theirs; incomplete (4) when nothing could be judged yet; failure (1) for files
    /// and for a judge that gave some candidate no valid verdict.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            JudgeError::Prompt(e) => e.exit_class(),
            JudgeError::Sweep(e) => e.exit_class(),
            JudgeError::Labels(e) => e.exit_class(),
            JudgeError::UnknownRow { .. } => ExitClass::Usage,
            JudgeError::Client(e) => e.exit_class(),
            JudgeError::Stopped { source, .. } => source.exit_class(),
            JudgeError::SettingsChanged { .. }
            | JudgeError::OverBudget { .. }
            | JudgeError::CheckOverBudget { .. }
            | JudgeError::Unpriced { .. }
            | JudgeError::NoPrefixToCompare { .. } => ExitClass::Usage,
            JudgeError::NothingJudged { .. } => ExitClass::Incomplete,
            JudgeError::NoValidVerdict { .. } => ExitClass::Failure,
            JudgeError::Io { .. } | JudgeError::Csv { .. } => ExitClass::Failure,
        }
    }
}

impl JudgeError {
    /// The refusal of a judge stage's estimate (`run`, `check --judge`) under `--max-cost`;
    /// `models` names the models a price may be missing for, `sweep` the USD the sweep's call
    /// files hold of the spend counted.
    pub fn over_budget(refusal: Refusal, models: &str, sweep: f64) -> Self {
        match refusal {
            Refusal::Unpriced { max } => JudgeError::Unpriced {
                max,
                models: models.to_string(),
            },
            Refusal::Over {
                estimate,
                spent,
                max,
            } => JudgeError::OverBudget {
                estimate,
                spent,
                sweep,
                max,
            },
        }
    }

    /// The refusal of judge-check's estimate under `--max-cost` (its folder holds no earlier
    /// spend); `model` is the judge model.
    pub fn check_over_budget(refusal: Refusal, model: &str) -> Self {
        match refusal {
            Refusal::Unpriced { max } => JudgeError::Unpriced {
                max,
                models: model.to_string(),
            },
            Refusal::Over { estimate, max, .. } => JudgeError::CheckOverBudget { estimate, max },
        }
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        JudgeError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
    pub(crate) fn csv(path: &Path, source: csv::Error) -> Self {
        JudgeError::Csv {
            path: path.to_path_buf(),
            source,
        }
    }
}
