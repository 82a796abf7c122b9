//! The decision files of a run: the selection ([`crate::select`]) and the prefix comparison made
//! from the sweep's rows, then written as selection.csv, prefix_comparison.csv (when the grid has
//! prefixes), report.md (with the judge section when there is one), sweep.svg and frontier.svg.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::files;
use crate::report::run_dir::RunDir;
use crate::report::{markdown, plot, prefix as prefix_report};
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

/// What heads and closes report.md.
pub struct ReportText<'a> {
    /// How the run folder is named in the report (its `--out` as given, so a report
    /// regenerated from another working directory is byte-identical).
    pub label: &'a str,
    /// The command line that made the run (shown under "Reproduce").
    pub command: Option<&'a [String]>,
    /// The judge stage's section, when the folder has judged answers.
    pub judge_section: Option<&'a str>,
}

/// Writes selection.csv, prefix_comparison.csv (when there is a comparison), report.md and
/// sweep.svg for a selection made by [`select`].
///
/// # Errors
/// [`crate::report::ReportError`] naming the file that failed.
pub fn write(
    dir: &mut RunDir,
    cuts: Cuts,
    prefixes: Vec<PrefixComparison>,
    settings: &SelectionSettings,
    text: &ReportText<'_>,
) -> Result<Decision, Error> {
    let all: Vec<&select::ConfigSelection> =
        cuts.selections.iter().flat_map(|s| &s.configs).collect();
    let mut written = vec![dir.write_csv(files::SELECTION, &all)?];
    let mut selections = cuts.selections.into_iter();
    let selection = selections.next().expect("at least one cut");
    let other_cuts: Vec<Selection> = selections.collect();
    let named = Path::new(text.label);
    let absolute = dir
        .path()
        .canonicalize()
        .unwrap_or_else(|_| dir.path().to_path_buf());
    let run_name = named
        .file_name()
        .or_else(|| absolute.file_name())
        .map_or_else(|| text.label.to_string(), |n| n.to_string_lossy().into());
    let plot_paths = plot::write_plots(dir.path(), &selection, &run_name)
        .map_err(crate::report::ReportError::from)?;
    dir.record(files::PLOT);
    dir.record(files::FRONTIER);
    let mut md = markdown::render(
        &selection,
        &other_cuts,
        &run_name,
        text.label,
        text.command,
        Some(files::PLOT),
        Some(files::FRONTIER),
    );
    if !prefixes.is_empty() {
        written.push(dir.write_csv(files::PREFIX_COMPARISON, &prefixes)?);
        md.push('\n');
        md.push_str(&prefix_report::markdown(&prefixes, settings));
    }
    if let Some(section) = text.judge_section {
        md.push('\n');
        md.push_str(section);
    }
    written.push(dir.write_text(files::REPORT, &md)?);
    written.extend(plot_paths);
    Ok(Decision {
        selection,
        other_cuts,
        prefixes,
        files: written,
    })
}
