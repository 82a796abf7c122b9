//! The judge stage's settings.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::criteria::{self, Criterion};

/// How verdicts are asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgeMode {
    /// One call per criterion (`faithfulness.md`, `relevancy.md`, `correctness.md`).
    #[default]
    PerCriterion,
    /// One call returns every criterion's verdict (`combined.md`): fewer calls and tokens per
    /// answer; `judge-check` measures whether it is as accurate.
    Combined,
}

impl JudgeMode {
    /// `per-criterion` or `combined`, as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            JudgeMode::PerCriterion => "per-criterion",
            JudgeMode::Combined => "combined",
        }
    }
}

impl std::str::FromStr for JudgeMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "per-criterion" | "per_criterion" => Ok(JudgeMode::PerCriterion),
            "combined" => Ok(JudgeMode::Combined),
            other => Err(format!(
                "unknown judge mode {other:?}: use per-criterion or combined"
            )),
        }
    }
}

/// Settings of the judge stage (the `[judge]` section, [`crate::config::JudgeSection`],
/// resolved). Recorded in the manifest and read back from it (a field missing from a manifest is
/// reported there, see [`crate::pipeline::record::RunRecord`]; deserialised, it takes its default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
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
    /// Significance level of the paired McNemar tests (default [`crate::stats::DEFAULT_ALPHA`]).
    pub alpha: f64,
    /// Judge only the first this many questions of the golden set, in file order (`None`: all).
    /// A cost control for smoke tests and slow local models; the sweep always scores all.
    pub max_questions: Option<usize>,
    /// Folder of the prompt templates (`None`, the default: the templates compiled into the
    /// binary, [`crate::prompts::DEFAULTS`] and each criterion's own).
    pub prompts_dir: Option<PathBuf>,
    /// Planted controls in every judged run (default on; see [`super::controls`]).
    pub controls: bool,
    /// Share of the judged answers sampled for each kind of control, at least 5 each (default
    /// 0.1).
    pub control_fraction: f64,
    /// Share of the judged answers graded again with another seed, at least 5 (default 0.1; 0:
    /// none).
    pub repeat_fraction: f64,
    /// A criterion's verdicts cannot confirm the pick when the 95% Wilson lower bound of its
    /// true-negative rate on planted failures is under this (default 0.5).
    pub min_control_tnr: f64,
    /// … or when Cohen's κ of its repeated verdicts is under this (default 0.4).
    pub min_repeat_kappa: f64,
    /// The judge's decision confirms the pick only when every candidate has at least this many
    /// answers with a pass or fail verdict (default 5; 0: no minimum; see
    /// [`super::gates`]).
    pub min_judged_answers: usize,
    /// One call per criterion (default) or one for all.
    pub mode: JudgeMode,
    /// The criteria graded, in report order (default [`criteria::builtin`]: faithfulness,
    /// relevancy, correctness). Set through the library; not written to the manifest (a run
    /// folder's criteria are the columns of its judge_questions.csv).
    #[serde(skip, default = "criteria::builtin")]
    pub criteria: Vec<Criterion>,
}

impl Default for JudgeSettings {
    fn default() -> Self {
        let model = crate::llm::config::default_chat_model();
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
            alpha: crate::stats::DEFAULT_ALPHA,
            prompts_dir: None,
            controls: true,
            control_fraction: 0.1,
            repeat_fraction: 0.1,
            min_control_tnr: 0.5,
            min_repeat_kappa: 0.4,
            min_judged_answers: 5,
            mode: JudgeMode::PerCriterion,
            criteria: criteria::builtin(),
        }
    }
}
