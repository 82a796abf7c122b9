//! The decision of a run: the selection ([`crate::select`]) and the prefix comparison made from
//! the sweep's rows, built with the judge's part and the per-question drill-down into one
//! [`Outcome`], then rendered from it as selection.csv, prefix_comparison.csv (when the grid has
//! prefixes), sweep.svg, frontier.svg, report.md and report.html.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::files;
use crate::report::outcome::{Inputs, Outcome};
use crate::report::run_dir::RunDir;
use crate::report::{ReportError, html, markdown, plot};
use crate::select::prefix::{PrefixComparison, compare};
use crate::select::{self, Cuts, Selection, SelectionSettings};
use crate::sweep::rows::{QuestionRow, SweepRow};

/// The selection, the prefix comparison and the files written.
#[derive(Debug, Clone)]
pub struct Decision {
    /// The selection at the primary cut (see [`Cuts`]), which decides.
    pub selection: Selection,
    /// The selections at the other cuts (other budgets, then top k).
    pub other_cuts: Vec<Selection>,
    /// The prefix comparison (empty when the grid has no prefix but `none`).
    pub prefixes: Vec<PrefixComparison>,
    /// Files written, as paths.
    pub files: Vec<PathBuf>,
}

/// Selects from `rows` and `questions` at every cut (every configuration scored on the same
/// questions), and compares prefixes at the primary cut.
///
/// # Errors
/// [`crate::select::SelectError`] when the rows cannot be selected from.
pub fn select(
    rows: &[SweepRow],
    questions: &[QuestionRow],
    settings: &SelectionSettings,
) -> Result<(Cuts, Vec<PrefixComparison>), Error> {
    let cuts = select::select_cuts(rows, questions, settings)?;
    let primary = cuts.primary().budget_tokens();
    let at: Vec<SweepRow> = rows
        .iter()
        .filter(|r| r.budget_tokens == primary)
        .cloned()
        .collect();
    let prefixes = compare(&at, questions, settings);
    Ok((cuts, prefixes))
}

/// Builds the run's [`Outcome`] from a selection made by [`select`] and `inputs`, then writes
/// every report of it into `dir`: selection.csv, prefix_comparison.csv (when there is a
/// comparison), report.md, report.html, sweep.svg and frontier.svg.
///
/// # Errors
/// [`crate::report::ReportError`] naming the file that failed.
pub fn write(
    dir: &mut RunDir,
    cuts: Cuts,
    prefixes: Vec<PrefixComparison>,
    settings: &SelectionSettings,
    inputs: Inputs<'_, '_>,
) -> Result<Decision, Error> {
    let run_name = run_name(dir.path(), inputs.label);
    let outcome = Outcome::build(&run_name, cuts, prefixes, settings, inputs);
    let files = write_reports(dir, &outcome)?;
    Ok(Decision {
        selection: outcome.selection,
        other_cuts: outcome.other_cuts,
        prefixes: outcome.prefixes,
        files,
    })
}

/// The run's name: the last part of `label` (the folder as the reader types it), else of the
/// folder's absolute path.
fn run_name(dir: &Path, label: &str) -> String {
    let absolute = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    Path::new(label)
        .file_name()
        .or_else(|| absolute.file_name())
        .map_or_else(|| label.to_string(), |n| n.to_string_lossy().into())
}

/// Renders every report of `outcome` and writes it into `dir`; the paths written, in the order
/// the command lists them.
fn write_reports(dir: &mut RunDir, outcome: &Outcome) -> Result<Vec<PathBuf>, ReportError> {
    let mut written = vec![dir.write_csv(files::SELECTION, &outcome.selection_rows())?];
    if !outcome.prefixes.is_empty() {
        written.push(dir.write_csv(files::PREFIX_COMPARISON, &outcome.prefixes)?);
    }
    if let Some(r) = &outcome.reranking {
        written.push(dir.write_csv(files::RERANK_COMPARISON, &r.rows)?);
    }
    if let Some(e) = &outcome.expansions {
        written.push(dir.write_csv(files::EXPAND_COMPARISON, &e.rows)?);
    }
    if !outcome.engines.is_empty() {
        written.push(dir.write_csv(files::RETRIEVER_COMPARISON, &outcome.engines)?);
    }
    let [sweep_svg, frontier_svg] = plot::figures(&outcome.selection, &outcome.run_name)?;
    written.push(dir.write_text(files::REPORT, &markdown::render(outcome))?);
    written.push(dir.write_text(files::HTML, &html::render(outcome, Some(&sweep_svg)))?);
    written.push(dir.write_text(files::PLOT, &sweep_svg)?);
    written.push(dir.write_text(files::FRONTIER, &frontier_svg)?);
    Ok(written)
}
