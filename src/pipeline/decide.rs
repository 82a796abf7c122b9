//! The decision files of a run: the selection ([`crate::select`]) and the prefix comparison made
//! from the sweep's rows, then written as selection.csv, prefix_comparison.csv (when the grid has
//! prefixes), report.md (with the judge section when there is one), sweep.svg, frontier.svg and
//! report.html.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::files;
use crate::report::html::model::{Page, Texts};
use crate::report::html::{self, TextsError};
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
    /// The judge stage's section, when the folder has judged answers (report.html then shows
    /// the folder's judge_questions.csv).
    pub judge_section: Option<&'a str>,
}

/// What report.html shows besides the selection and report.md.
pub struct HtmlInputs<'a> {
    /// sweep.csv's rows.
    pub rows: &'a [SweepRow],
    /// sweep_questions.csv's rows.
    pub questions: &'a [QuestionRow],
    /// The corpus and golden set, or why they could not be read (the page then says so and
    /// shows the questions without their texts).
    pub texts: Result<Texts<'a>, &'a TextsError>,
}

/// Writes selection.csv, prefix_comparison.csv (when there is a comparison), report.md,
/// sweep.svg and report.html for a selection made by [`select`].
///
/// # Errors
/// [`crate::report::ReportError`] naming the file that failed; [`crate::judge::JudgeError`]
/// when the folder's judge_questions.csv cannot be read.
pub fn write(
    dir: &mut RunDir,
    cuts: Cuts,
    prefixes: Vec<PrefixComparison>,
    settings: &SelectionSettings,
    text: &ReportText<'_>,
    inputs: &HtmlInputs<'_>,
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
    let svg = std::fs::read_to_string(dir.path().join(files::PLOT)).ok();
    let judge = match text.judge_section {
        Some(_) => crate::judge::load_finished(dir.path())?,
        None => Vec::new(),
    };
    let note = inputs
        .texts
        .as_ref()
        .err()
        .map(|e| format!("The questions' and chunks' texts are not shown: {e}."));
    let page = Page {
        run_name: &run_name,
        markdown: &md,
        plot_svg: svg.as_deref(),
        sweep: inputs.rows,
        selection: &selection,
        questions: inputs.questions,
        judge: &judge,
        texts: inputs.texts.as_ref().ok().copied(),
        texts_note: note.as_deref(),
    };
    written.push(dir.write_text(files::HTML, &html::render(&page))?);
    written.extend(plot_paths);
    Ok(Decision {
        selection,
        other_cuts,
        prefixes,
        files: written,
    })
}
