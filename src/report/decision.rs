//! Writes the decision files of a run: selection.csv, prefix_comparison.csv (when the sweep has
//! prefixes), report.md and the figure (sweep.svg),
//! either from a sweep just run or from a run folder's CSVs (`chunksweep report`).

use std::path::{Path, PathBuf};

use thiserror::Error;

use super::ReportError;
use super::plot::{self, PlotError};
use super::read::{self, ReadError};
use crate::select::{self, SelectError, Selection, SelectionSettings};
use crate::sweep::{QuestionRow, SweepRow};

/// File name of the selection table.
pub const SELECTION_FILE: &str = "selection.csv";
/// File name of the Markdown report.
pub const REPORT_FILE: &str = "report.md";
/// File name of the judge stage's section of the report (written by `chunksweep run`); when it
/// is in the run folder, report.md ends with it, also when regenerated.
pub const JUDGE_SECTION_FILE: &str = "judge.md";

/// Names of the files [`write_decision`] writes, relative to the run folder.
pub fn output_names() -> [&'static str; 4] {
    [
        SELECTION_FILE,
        REPORT_FILE,
        plot::PLOT_FILE,
        plot::FRONTIER_FILE,
    ]
}

/// Errors while writing the decision.
#[derive(Debug, Error)]
pub enum DecisionError {
    /// The run folder could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The selection could not be made.
    #[error(transparent)]
    Select(#[from] SelectError),
    /// A file could not be written.
    #[error(transparent)]
    Write(#[from] ReportError),
    /// The figure could not be drawn.
    #[error(transparent)]
    Plot(#[from] PlotError),
}

/// The selection and the files written.
#[derive(Debug, Clone)]
pub struct Decision {
    /// The selection.
    pub selection: Selection,
    /// The prefix comparison (empty when the sweep has no prefix but `none`).
    pub prefixes: Vec<super::prefix::PrefixComparison>,
    /// Files written (selection.csv, prefix_comparison.csv when there is one, report.md,
    /// sweep.svg).
    pub files: Vec<PathBuf>,
}

/// Selects from `rows` and `questions` and writes selection.csv, report.md and sweep.svg into
/// `dir`. `command` is the sweep's command line (shown under "Reproduce").
///
/// # Errors
/// [`DecisionError`] when the selection fails or a file cannot be written.
pub fn write_decision(
    dir: &Path,
    rows: &[SweepRow],
    questions: &[QuestionRow],
    command: Option<&[String]>,
    settings: &SelectionSettings,
) -> Result<Decision, DecisionError> {
    write_labelled(
        dir,
        &dir.display().to_string(),
        rows,
        questions,
        command,
        settings,
    )
}

/// [`write_decision`] with the run folder shown as `label` in the report (the folder's name
/// heads the report; `label` appears in the `chunksweep report` line), so a report regenerated
/// from another working directory is byte-identical.
fn write_labelled(
    dir: &Path,
    label: &str,
    rows: &[SweepRow],
    questions: &[QuestionRow],
    command: Option<&[String]>,
    settings: &SelectionSettings,
) -> Result<Decision, DecisionError> {
    let selection = select::select(rows, questions, settings)?;
    let csv_path = dir.join(SELECTION_FILE);
    super::csv::write_rows(&csv_path, &selection.configs)?;
    let named = Path::new(label);
    let absolute = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let run_name = named
        .file_name()
        .or_else(|| absolute.file_name())
        .map_or_else(|| label.to_string(), |n| n.to_string_lossy().into());
    let plot_paths = plot::write_plots(dir, &selection, &run_name)?;
    let mut md = super::markdown::render(
        &selection,
        &run_name,
        label,
        command,
        Some(plot::PLOT_FILE),
        Some(plot::FRONTIER_FILE),
    );
    let mut files = vec![csv_path];
    let prefixes = super::prefix::compare(rows, questions, settings);
    if !prefixes.is_empty() {
        let path = dir.join(super::prefix::PREFIX_FILE);
        super::csv::write_rows(&path, &prefixes)?;
        md.push('\n');
        md.push_str(&super::prefix::markdown(&prefixes, settings));
        files.push(path);
    }
    if let Ok(section) = std::fs::read_to_string(dir.join(JUDGE_SECTION_FILE)) {
        md.push('\n');
        md.push_str(&section);
    }
    let md_path = dir.join(REPORT_FILE);
    std::fs::write(&md_path, md).map_err(|source| ReportError::Io {
        path: md_path.clone(),
        source,
    })?;
    files.push(md_path);
    files.extend(plot_paths);
    Ok(Decision {
        selection,
        prefixes,
        files,
    })
}

/// Reads a run folder (sweep.csv, sweep_questions.csv, manifest.json) and rewrites its decision
/// files without recomputing the sweep. The folder is shown as the sweep's `--out` recorded in the
/// manifest when there is one, so the result does not depend on how `dir` was typed.
///
/// # Errors
/// [`DecisionError`] naming the file that is missing, malformed or unwritable.
pub fn regenerate(dir: &Path, settings: &SelectionSettings) -> Result<Decision, DecisionError> {
    let run = read::read_run(dir)?;
    let command = run.command();
    let label = run
        .manifest
        .as_ref()
        .and_then(|m| m.get("config")?.get("out")?.as_str().map(str::to_string))
        .unwrap_or_else(|| dir.display().to_string());
    write_labelled(
        dir,
        &label,
        &run.sweep,
        &run.questions,
        command.as_deref(),
        settings,
    )
}
