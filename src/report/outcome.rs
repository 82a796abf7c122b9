//! The outcome of a run, built once: the selection at every cut, the prefix comparison, the
//! judge's part, the per-question drill-down and how the run is named and reproduced. Every
//! report renders from it: report.md ([`crate::report::markdown`]), report.html
//! ([`crate::report::html`]), selection.csv and prefix_comparison.csv (its rows), the figures
//! ([`crate::report::plot`]).

use std::collections::HashMap;

use super::drill::{self, DrillDown};
use super::texts::{Texts, TextsError};
use crate::judge::rows::JudgeQuestionRow;
use crate::select::prefix::PrefixComparison;
use crate::select::{ConfigSelection, Cuts, Selection, SelectionSettings};
use crate::sweep::rows::{QuestionRow, SweepRow};

/// The judge stage's part of the reports, when the run has judged answers.
///
/// Today the judge summary reaches reports as report.md's section, already written as Markdown
/// (by [`crate::pipeline::judge_step`]); report.md appends it as it is and report.html converts
/// this section, and only it, from Markdown (see [`crate::report::html`]). The per-question
/// verdicts are in the drill-down.
#[derive(Debug, Clone)]
pub struct JudgeSlot {
    /// The section, starting with `## Answer quality (judge)`.
    pub markdown: String,
}

/// Everything the reports of a run show.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The run's name (its folder's name), heading the reports and the figures.
    pub run_name: String,
    /// The run folder as the reader should type it (its `--out` as given).
    pub label: String,
    /// The command line that made the run, its program path first, when known.
    pub command: Option<Vec<String>>,
    /// The selection settings.
    pub settings: SelectionSettings,
    /// The selection at the primary cut (see [`Cuts`]), which decides.
    pub selection: Selection,
    /// The selections at the other cuts (other budgets, then top k).
    pub other_cuts: Vec<Selection>,
    /// The prefix comparison at the primary cut (empty when the grid has no prefix but
    /// `none`).
    pub prefixes: Vec<PrefixComparison>,
    /// The retriever of each configuration, by configuration id.
    pub retrievers: HashMap<String, String>,
    /// The judge's part, when the run has judged answers.
    pub judge: Option<JudgeSlot>,
    /// Per question, each candidate's retrieved chunks, evidence, answer and verdicts.
    pub drill: DrillDown,
}

/// What the outcome is built from besides the selection.
pub struct Inputs<'a> {
    /// The run's name (its folder's name).
    pub run_name: &'a str,
    /// The run folder as the reader should type it.
    pub label: &'a str,
    /// The command line that made the run.
    pub command: Option<&'a [String]>,
    /// sweep.csv's rows.
    pub rows: &'a [SweepRow],
    /// sweep_questions.csv's rows.
    pub questions: &'a [QuestionRow],
    /// The corpus and golden set, or why they could not be read (the drill-down then says so
    /// and shows the questions without their texts).
    pub texts: Result<Texts<'a>, &'a TextsError>,
    /// The judge's part, when the run has judged answers.
    pub judge: Option<JudgeInput<'a>>,
}

/// The judge stage's results as the reports take them.
pub struct JudgeInput<'a> {
    /// The judge's section of report.md (see [`JudgeSlot`]).
    pub section: String,
    /// The judged answers (judge_questions.csv's rows), for the drill-down.
    pub rows: &'a [JudgeQuestionRow],
}

impl Outcome {
    /// Builds the outcome from the selection at every cut (`cuts`, as
    /// [`crate::select::select_cuts`] made it), the prefix comparison at the primary cut and
    /// `inputs`.
    pub fn build(
        cuts: Cuts,
        prefixes: Vec<PrefixComparison>,
        settings: &SelectionSettings,
        inputs: Inputs<'_>,
    ) -> Self {
        let mut selections = cuts.selections.into_iter();
        let selection = selections.next().expect("at least one cut");
        let other_cuts: Vec<Selection> = selections.collect();
        let judge_rows = inputs.judge.as_ref().map_or(&[][..], |j| j.rows);
        let drill = drill::build(&selection, inputs.questions, judge_rows, inputs.texts);
        Outcome {
            run_name: inputs.run_name.to_string(),
            label: inputs.label.to_string(),
            command: inputs.command.map(<[String]>::to_vec),
            settings: settings.clone(),
            retrievers: inputs
                .rows
                .iter()
                .map(|r| (r.config_id.clone(), r.retriever.clone()))
                .collect(),
            judge: inputs.judge.map(|j| JudgeSlot {
                markdown: j.section,
            }),
            selection,
            other_cuts,
            prefixes,
            drill,
        }
    }

    /// selection.csv's rows: every configuration at every cut, the deciding cut first.
    pub fn selection_rows(&self) -> Vec<&ConfigSelection> {
        std::iter::once(&self.selection)
            .chain(&self.other_cuts)
            .flat_map(|s| &s.configs)
            .collect()
    }

    /// The retriever of configuration `config_id` (empty when sweep.csv has no row for it).
    pub fn retriever(&self, config_id: &str) -> &str {
        self.retrievers.get(config_id).map_or("", String::as_str)
    }
}
