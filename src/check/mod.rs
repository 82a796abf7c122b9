//! `chunksweep check`: a gate for chunking changes. One chunker (the baseline's pick, or the one
//! the flags give) is swept on today's corpus and golden set at the baseline's cut
//! ([`crate::pipeline::check`] runs it), and compared here with the baseline's rows for its pick,
//! question by question, on the questions both runs share unchanged:
//!
//! - [`changes`]: what changed since the baseline, from the two runs' fingerprints
//!   ([`crate::fingerprint`]);
//! - [`compare`]: the questions paired, and where the evidence of a worse one went ([`fate`]
//!   says it in words);
//! - [`verdict`]: regression, pass or inconclusive (seed 002: "Chunking changes are exactly the
//!   kind of thing that should fail CI, not production");
//! - [`judged`]: with `--judge`, answer quality: the baseline's judged answers against the run
//!   under test's, a one-sided exact McNemar test per criterion the baseline's planted controls
//!   trust;
//! - [`render`]: check.md (short enough for a pull-request comment); [`junit`]: the JUnit XML
//!   file;
//!   check.json is [`Check`] serialised.

pub mod changes;
pub mod compare;
pub mod fate;
pub mod judged;
pub mod junit;
pub mod render;
pub mod verdict;

use serde::Serialize;
use thiserror::Error;

use crate::exit::ExitClass;
use crate::expand::Expand;
use crate::fingerprint::Fingerprints;
use crate::sweep::rows::QuestionRow;
use changes::{Changes, Side};
use compare::QuestionPair;
use judged::JudgeGate;
use verdict::{GateSettings, RetrievalVerdict};

/// Errors of the check itself (reading the baseline and sweeping are the pipeline's).
#[derive(Debug, Error)]
pub enum CheckError {
    /// The baseline and the run under test share no unchanged question.
    #[error(
        "no question to compare: the baseline {baseline} and the golden set share no unchanged question ({removed} removed, {added} added, {edited} edited since the baseline); refresh the baseline (see README, \"CI\")"
    )]
    NoSharedQuestion {
        /// The baseline folder.
        baseline: String,
        /// Questions only the baseline has.
        removed: usize,
        /// Questions only the golden set has now.
        added: usize,
        /// Questions both have, edited.
        edited: usize,
    },
    /// The baseline's sweep_questions.csv has no row of its pick.
    #[error(
        "{path} has no row for {config_id}, the baseline's pick: is the folder complete? Rerun the command that wrote it"
    )]
    NoBaselineRows {
        /// The file.
        path: String,
        /// The pick's configuration id.
        config_id: String,
    },
    /// `--judge`, but the baseline holds no judged answer for its pick.
    #[error(
        "--judge needs the baseline's judged answers, but {path} {what}: make the baseline with `chunksweep run` (its judge stage), or check without --judge"
    )]
    NoJudgedAnswers {
        /// judge_questions.csv of the baseline.
        path: String,
        /// What is wrong with it: `does not exist`, `has no row for <id>, the baseline's pick`.
        what: String,
    },
    /// `--judge`: the baseline's judge files cannot be read.
    #[error(
        "the baseline's judge stage cannot be read: {0}; restore the folder (or make it again with `chunksweep run`), or check without --judge"
    )]
    DamagedBaselineJudge(String),
    /// `--judge`: the run folder under test holds judged answers of other inputs.
    #[error(
        "{dir} holds judged answers made from other inputs ({what}): resuming from them would compare answers to other contexts; give a new --out"
    )]
    OtherJudgedInputs {
        /// The run folder under test.
        dir: String,
        /// What differs, or that the folder does not say.
        what: String,
    },
    /// A check without `--judge` into a folder that holds judged answers.
    #[error(
        "{0} holds judged answers (judge_questions.csv) that a check without --judge would leave beside results they do not belong to; give a new --out"
    )]
    JudgedFolder(String),
    /// `--out` is the baseline folder.
    #[error(
        "--out {0} is the baseline folder: the check would overwrite the baseline it compares with; give another --out"
    )]
    OutIsBaseline(String),
    /// The flags and config file give more than one configuration (or none).
    #[error(
        "check tests one chunker, but the flags and config file give {}: narrow them to one (for example --strategies fixed --sizes 32), or give none to test the baseline's pick",
        if .0.is_empty() { "none".to_string() } else { format!("{} ({})", .0.len(), .0.join(", ")) }
    )]
    NotOneConfiguration(Vec<String>),
    /// The flags or config file change where the ranked list is cut.
    #[error(
        "check compares at the baseline's cut ({baseline}), but the flags or config file give {given}: drop --k and --budget (and top_k, budgets in the config file), or refresh the baseline"
    )]
    CutChanged {
        /// The baseline's cut, as `k = 3` or `budget 1000`.
        baseline: String,
        /// The cuts given.
        given: String,
    },
    /// A gate setting is out of range.
    #[error("invalid setting: {0}")]
    Invalid(String),
}

impl CheckError {
    /// Usage (2): the baseline, the inputs or the flags cannot be checked as they are.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            CheckError::NoSharedQuestion { .. }
            | CheckError::NoBaselineRows { .. }
            | CheckError::NoJudgedAnswers { .. }
            | CheckError::DamagedBaselineJudge(_)
            | CheckError::OtherJudgedInputs { .. }
            | CheckError::OutIsBaseline(_)
            | CheckError::JudgedFolder(_)
            | CheckError::NotOneConfiguration(_)
            | CheckError::CutChanged { .. }
            | CheckError::Invalid(_) => ExitClass::Usage,
        }
    }
}

/// One side of the check: its configuration id at the cut, its sweep_questions.csv rows for it
/// (golden-set order) and its fingerprints (the baseline's are `None` when its manifest
/// predates them).
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    /// Configuration id at the cut.
    pub config_id: &'a str,
    /// What its configuration sends for each hit.
    pub expand: Expand,
    /// Its rows.
    pub rows: &'a [QuestionRow],
    /// Its fingerprints.
    pub fingerprints: Option<&'a Fingerprints>,
}

/// The two sides a check compares.
#[derive(Debug, Clone, Copy)]
pub struct Runs<'a> {
    /// The baseline's pick.
    pub baseline: Run<'a>,
    /// The chunker under test.
    pub candidate: Run<'a>,
}

/// The check: what changed, the questions compared, the verdict (check.json).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// The baseline folder, as given.
    pub baseline: String,
    /// The cut both are read at (`k3`, `b1000`).
    pub cut: String,
    /// The gate's settings.
    pub settings: GateSettings,
    /// The verdict.
    pub verdict: RetrievalVerdict,
    /// What changed since the baseline.
    pub changes: Changes,
    /// Every question compared, in golden-set order.
    pub questions: Vec<QuestionPair>,
    /// With `--judge`: answer quality on the questions the baseline judged for its pick.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeGate>,
    /// With `--judge`: why the judge stage stopped before the gate could be asked (a refused
    /// key, the budget); the command then exits with that error's class.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge_error: Option<String>,
}

impl Check {
    /// The questions that got worse, in golden-set order.
    pub fn worse(&self) -> impl Iterator<Item = &QuestionPair> {
        self.questions.iter().filter(|q| q.worse())
    }

    /// Whether the check fails: the retrieval verdict fails, or a criterion the judge gates on
    /// is a regression.
    pub fn fails(&self) -> bool {
        self.verdict.fails || self.judge.as_ref().is_some_and(|j| j.fails)
    }

    /// Whether the judge left answers under test without a verdict while nothing fails: the
    /// same command again finishes it.
    pub fn is_unfinished(&self) -> bool {
        !self.fails() && self.judge.as_ref().is_some_and(JudgeGate::is_unfinished)
    }

    /// The process's exit code: 1 when the check fails, 4 when it is unfinished
    /// ([`ExitClass::Incomplete`]), else 0.
    pub fn exit_code(&self) -> u8 {
        if self.fails() {
            ExitClass::Failure.code()
        } else if self.is_unfinished() {
            ExitClass::Incomplete.code()
        } else {
            0
        }
    }
}

/// Compares `runs`' candidate (whose fingerprints are known) with its baseline at the cut `cut` (its
/// tag, `k3`) with `settings`; `label` names the baseline folder.
///
/// # Errors
/// [`CheckError::Invalid`] for settings out of range; [`CheckError::NoSharedQuestion`] when no
/// unchanged question is in both.
pub fn check(
    label: &str,
    cut: &str,
    runs: Runs<'_>,
    now: &Fingerprints,
    settings: GateSettings,
) -> Result<Check, CheckError> {
    let Runs {
        baseline,
        candidate,
    } = runs;
    settings.validate().map_err(CheckError::Invalid)?;
    let ids = |rows: &[QuestionRow]| rows.iter().map(|r| r.question_id.clone()).collect();
    let (before_ids, now_ids): (Vec<String>, Vec<String>) =
        (ids(baseline.rows), ids(candidate.rows));
    let changes = changes::changes(
        Side {
            config_id: baseline.config_id,
            questions: &before_ids,
            fingerprints: baseline.fingerprints,
        },
        Side {
            config_id: candidate.config_id,
            questions: &now_ids,
            fingerprints: candidate.fingerprints,
        },
        now,
    );
    let questions = compare::pair(
        &changes.shared,
        (baseline.rows, baseline.expand),
        (candidate.rows, candidate.expand),
    );
    if questions.is_empty() {
        return Err(CheckError::NoSharedQuestion {
            baseline: label.to_string(),
            removed: changes.questions.removed.len(),
            added: changes.questions.added.len(),
            edited: changes.questions.changed.len(),
        });
    }
    Ok(Check {
        baseline: label.to_string(),
        cut: cut.to_string(),
        settings,
        verdict: verdict::decide(&questions, &settings),
        changes,
        questions,
        judge: None,
        judge_error: None,
    })
}
