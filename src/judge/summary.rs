//! The judge stage's outcome as one typed value, built once: judge.csv's figures per candidate
//! ([`super::table`]), the decision ([`super::decision`]), the judge's trust per criterion
//! ([`super::trust`]) and the verdicts it rests on (the questions' rows, the controls and
//! repeats). Reports render it (`crate::report::judge_section`); judge.csv is written from it.

use std::path::Path;

use super::decision::{JudgeDecision, decide};
use super::error::JudgeError;
use super::gates::{self, Gates};
use super::probes::ProbeRow;
use super::rows::JudgeQuestionRow;
use super::settings::JudgeSettings;
use super::table::{self, CandidateInfo, JudgeRow};
use super::trust::{CriterionTrust, trust};

/// What the judge found, ready to render.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeSummary {
    /// The generator model.
    pub generator_model: String,
    /// The judge model.
    pub judge_model: String,
    /// The criteria graded (names), in report order.
    pub criteria: Vec<String>,
    /// Why the run is incomplete, when it is (rerun the same command).
    pub incomplete: Option<String>,
    /// judge.csv's rows, one per candidate, in candidate order.
    pub table: Vec<JudgeRow>,
    /// The decision, amended by the trust figures.
    pub decision: JudgeDecision,
    /// The judge's trust per criterion that has a control or a repeat.
    pub trust: Vec<CriterionTrust>,
    /// The judged questions (judge_questions.csv's rows the figures come from).
    pub questions: Vec<JudgeQuestionRow>,
    /// The planted controls and repeats (judge_checks.csv).
    pub probes: Vec<ProbeRow>,
}

/// What a summary is built from.
pub struct SummaryInputs<'a> {
    /// The candidates' sweep figures, in candidate order.
    pub candidates: &'a [CandidateInfo],
    /// The criteria (names), in report order.
    pub criteria: &'a [String],
    /// The judged questions.
    pub questions: Vec<JudgeQuestionRow>,
    /// The controls and repeats.
    pub probes: Vec<ProbeRow>,
    /// Models, significance level and trust thresholds.
    pub settings: &'a JudgeSettings,
    /// The selection's pick (its configuration id), when the candidates came from it.
    pub pick: Option<&'a str>,
    /// Why the run is incomplete, when it is: what is missing ([`gates::unfinished_note`]).
    pub incomplete: Option<String>,
}

impl JudgeSummary {
    /// Builds the figures, the trust per criterion and the decision, amended by the trust
    /// ([`JudgeDecision::unconfirm`]) and by what was not measured ([`gates::withhold`]: controls off,
    /// an unfinished run, too few judged answers).
    ///
    /// # Panics
    /// If there is no candidate.
    pub fn build(inputs: SummaryInputs<'_>) -> Self {
        let s = inputs.settings;
        let trust = trust(
            &inputs.probes,
            inputs.criteria,
            s.min_control_tnr,
            s.min_repeat_kappa,
        );
        let table = table::summarise(inputs.candidates, &inputs.questions, inputs.criteria);
        let mut decision = decide(
            inputs.candidates,
            &inputs.questions,
            inputs.criteria,
            s.alpha,
            inputs.pick,
            &trust,
        );
        decision.unconfirm(&trust);
        gates::withhold(
            &mut decision,
            &Gates {
                criteria: inputs.criteria,
                candidates: inputs.candidates,
                questions: &inputs.questions,
                probes: &inputs.probes,
                controls: s.controls,
                min_judged_answers: s.min_judged_answers,
                unfinished: inputs.incomplete.as_deref(),
            },
        );
        JudgeSummary {
            generator_model: s.generator_model.clone(),
            judge_model: s.judge_model.clone(),
            criteria: inputs.criteria.to_vec(),
            incomplete: inputs.incomplete,
            table,
            decision,
            trust,
            questions: inputs.questions,
            probes: inputs.probes,
        }
    }

    /// Writes judge.csv (columns generated from the criteria; see [`super::table`]) to `path`.
    ///
    /// # Errors
    /// [`JudgeError::Csv`]/[`JudgeError::Io`] naming the file.
    pub fn write_csv(&self, path: &Path) -> Result<(), JudgeError> {
        let file = std::fs::File::create(path).map_err(|e| JudgeError::io(path, e))?;
        crate::table::write_cells(
            file,
            &table::header(&self.criteria),
            self.table
                .iter()
                .map(|r| table::cells(r, &self.criteria, &self.trust)),
        )
        .map_err(|e| JudgeError::csv(path, e))
    }

    /// Error verdicts and generation errors over every candidate.
    pub fn errors(&self) -> u32 {
        self.table.iter().map(|r| r.errors).sum()
    }
}
