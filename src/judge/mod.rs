//! The judge stage: confirm the chunk size with answer quality.
//!
//! For each candidate configuration and each question: retrieve top-k with the sweep's frozen
//! retriever ([`crate::sweep::ConfigIndex`]), generate an answer with the generator model
//! (`prompts/generate.md`), then grade it with the judge model, pass/fail with a one-sentence
//! reason in JSON: **faithfulness** (every claim supported by the retrieved context),
//! **relevancy** (answers the question asked), and **correctness** against the reference answer
//! when the golden set has one.
//!
//! - [`prompts`]: templates with named placeholders, loaded at run time, hashed for the manifest;
//!   retrieved chunks are fenced in `<document id>` blocks that text cannot close.
//! - [`verdict`]: the verdict schema; an unreadable verdict is retried once with a reminder of the
//!   format, then recorded as `error`, never as a pass.
//! - [`pipeline`]: the resumable run (judge_questions.csv appended and flushed per question,
//!   calls.csv per call, the response cache for calls), the budget and the estimate.
//! - `summary`: judge.csv (pass rates with Wilson intervals, errors, latency, tokens, cost), the
//!   paired McNemar comparison and the decision, and the report's judge section.

pub mod pipeline;
pub mod prompts;
pub mod summary;
pub mod verdict;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use pipeline::{
    CallRow, Estimate, Job, JudgeQuestionRow, JudgeRun, estimate, load_finished, plan_jobs,
    run_judge,
};
pub use prompts::{PromptError, PromptKind, PromptSet};
pub use verdict::{Criterion, Verdict};

use crate::exit::ExitClass;
use crate::sweep::SweepError;

/// Settings of the judge stage (the `[judge]` section, resolved). Recorded in the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeSettings {
    /// Model that writes the answers.
    pub generator_model: String,
    /// Model that grades them.
    pub judge_model: String,
    /// How many candidates to take from the selection (default 3).
    pub candidates: usize,
    /// Cap on the generator's answer, in tokens (default 256).
    pub max_tokens: u32,
    /// Cap on a verdict, in tokens (default 128).
    pub judge_max_tokens: u32,
    /// Sampling temperature of both models (default 0).
    pub temperature: f32,
    /// Seed sent to servers that accept one (default 7).
    pub seed: Option<i64>,
    /// Questions in progress at once (default 4); the client's per-model limits still apply.
    pub concurrency: usize,
    /// Stop before spending more than this, in USD (`None`: no cap).
    pub max_cost_usd: Option<f64>,
    /// Significance level of the paired McNemar tests (default 0.05).
    pub alpha: f64,
    /// Judge only the first this many questions of the golden set, in file order (`None`: all).
    /// A cost control for smoke tests and slow local models; the sweep always scores all.
    pub max_questions: Option<usize>,
    /// Folder of the prompt templates (`None`, the default: the templates compiled into the
    /// binary, [`crate::prompts::DEFAULTS`]).
    pub prompts_dir: Option<PathBuf>,
}

impl Default for JudgeSettings {
    fn default() -> Self {
        let model = std::env::var("CHUNKSWEEP_CHAT_MODEL")
            .ok()
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| "gpt-4o-mini".to_string());
        JudgeSettings {
            generator_model: model.clone(),
            judge_model: model,
            candidates: 3,
            max_tokens: 256,
            judge_max_tokens: 128,
            temperature: 0.0,
            seed: Some(7),
            concurrency: 4,
            max_cost_usd: None,
            max_questions: None,
            alpha: 0.05,
            prompts_dir: None,
        }
    }
}

/// Errors of the judge stage. Failed LLM calls are not among them: an unreadable verdict is an
/// `error` verdict, and a transient failure leaves the question unfinished for the next run.
#[derive(Debug, Error)]
pub enum JudgeError {
    /// A prompt template is missing or invalid.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// A candidate could not be chunked or indexed.
    #[error(transparent)]
    Sweep(#[from] SweepError),
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
    /// The estimate passes the budget before anything is sent.
    #[error(
        "the judge stage is estimated at ${estimate:.4}, more than --max-cost ${max:.4}; nothing was sent (raise --max-cost, or use fewer candidates or questions)"
    )]
    OverBudget {
        /// Estimated cost, in USD.
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
    /// Every question failed: nothing was judged, so nothing can be confirmed.
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
    /// class for theirs; failure (1) for files.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            JudgeError::Prompt(e) => e.exit_class(),
            JudgeError::Sweep(e) => e.exit_class(),
            JudgeError::Client(e) => e.exit_class(),
            JudgeError::SettingsChanged { .. }
            | JudgeError::OverBudget { .. }
            | JudgeError::Unpriced { .. }
            | JudgeError::NoPrefixToCompare { .. } => ExitClass::Usage,
            JudgeError::NothingJudged { .. } => ExitClass::Failure,
            JudgeError::Io { .. } | JudgeError::Csv { .. } => ExitClass::Failure,
        }
    }
}

impl JudgeError {
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

/// What must not change between runs that share judge_questions.csv: models, caps, temperature,
/// seed and prompt hashes. Written to `judge_settings.json` in the run folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Generator model.
    pub generator_model: String,
    /// Judge model.
    pub judge_model: String,
    /// Generator cap, tokens.
    pub max_tokens: u32,
    /// Verdict cap, tokens.
    pub judge_max_tokens: u32,
    /// Temperature.
    pub temperature: f32,
    /// Seed.
    pub seed: Option<i64>,
    /// Prompt file → SHA-256.
    pub prompts: std::collections::BTreeMap<String, String>,
}

impl Fingerprint {
    /// The fingerprint of a setup.
    pub fn new(s: &JudgeSettings, prompts: &PromptSet) -> Self {
        Fingerprint {
            generator_model: s.generator_model.clone(),
            judge_model: s.judge_model.clone(),
            max_tokens: s.max_tokens,
            judge_max_tokens: s.judge_max_tokens,
            temperature: s.temperature,
            seed: s.seed,
            prompts: prompts.hashes(),
        }
    }

    /// Reads `dir/judge_settings.json`; `None` when the folder has none.
    ///
    /// # Errors
    /// [`JudgeError::Io`] when it exists but cannot be read or parsed.
    pub fn load(dir: &Path) -> Result<Option<Self>, JudgeError> {
        let path = dir.join(crate::files::JUDGE_SETTINGS);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
                JudgeError::io(
                    &path,
                    std::io::Error::new(std::io::ErrorKind::InvalidData, e),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(JudgeError::io(&path, e)),
        }
    }

    /// Checks `dir/judge_settings.json` against `self` when the folder already has judge rows,
    /// then writes `self` there.
    ///
    /// # Errors
    /// [`JudgeError::SettingsChanged`] naming the differing fields; [`JudgeError::Io`].
    pub fn check_and_store(&self, dir: &Path) -> Result<(), JudgeError> {
        let path = dir.join(crate::files::JUDGE_SETTINGS);
        let has_rows = pipeline::questions_path(dir)
            .metadata()
            .map(|m| m.len() > 0)
            .unwrap_or(false);
        if has_rows
            && let Ok(text) = std::fs::read_to_string(&path)
            && let Ok(old) = serde_json::from_str::<Fingerprint>(&text)
            && old != *self
        {
            let mut what = Vec::new();
            if old.generator_model != self.generator_model {
                what.push("generator_model");
            }
            if old.judge_model != self.judge_model {
                what.push("judge_model");
            }
            if old.prompts != self.prompts {
                what.push("prompts");
            }
            if what.is_empty() {
                what.push("max_tokens, temperature or seed");
            }
            return Err(JudgeError::SettingsChanged {
                dir: dir.to_path_buf(),
                what: what.join(", "),
            });
        }
        let text = serde_json::to_string_pretty(self).expect("fingerprint serialises");
        std::fs::write(&path, text + "\n").map_err(|e| JudgeError::io(&path, e))
    }
}
