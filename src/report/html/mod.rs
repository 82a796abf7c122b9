//! report.html: one self-contained page for reviewers, from the same data as report.md.
//!
//! Sections: the decision (and the judge's, when the run has one), the figure (sweep.svg, inline),
//! the configuration table (sortable, filterable by strategy, size, prefix and retriever), the
//! rest of report.md, and per question, for each candidate, the retrieved chunks in rank order
//! with the evidence marked inside them ([`review`]), the first correct rank, the answer, each
//! verdict with its reason, latency and tokens.
//!
//! No external request: CSS, JavaScript and the figure are inline. Every text from the corpus,
//! the golden set, answers and reasons is escaped: by maud in the markup, and the chunks' texts
//! travel as one JSON array (with `<` written `\u003c`, so nothing can close the script block)
//! that the page's script inserts with `createTextNode` when a question is opened. A question's
//! chunks are therefore built only when it is opened (the first is open), which keeps the page
//! light at thousands of questions: each distinct chunk text is stored once.

mod questions;
pub mod review;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use maud::{DOCTYPE, Markup, PreEscaped, html};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use thiserror::Error;

use super::ReportError;
use super::read::{ReadError, read_rows};
use crate::corpus::{Corpus, CorpusError, load_corpus};
use crate::golden::{self, GoldenError, GoldenFormat, GoldenSet, Location};
use crate::judge::pipeline::JudgeQuestionRow;
use crate::select::{ConfigSelection, Selection, Status};
use crate::sweep::{QuestionRow, SweepRow};

/// File name of the HTML report.
pub const HTML_FILE: &str = "report.html";

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// The corpus and golden set the run scored, for the questions' and chunks' texts.
#[derive(Debug, Clone, Copy)]
pub struct Texts<'a> {
    /// The corpus (chunk text).
    pub corpus: &'a Corpus,
    /// The golden set (question text, reference answer, evidence locations).
    pub golden: &'a GoldenSet,
}

/// Everything the page shows.
#[derive(Debug, Clone, Copy)]
pub struct Page<'a> {
    /// The run's name (its folder's name).
    pub run_name: &'a str,
    /// report.md as written: its sections are shown as HTML.
    pub markdown: &'a str,
    /// sweep.svg's text, shown inline.
    pub plot_svg: Option<&'a str>,
    /// Rows of sweep.csv (the retriever of each configuration).
    pub sweep: &'a [SweepRow],
    /// The selection.
    pub selection: &'a Selection,
    /// Rows of sweep_questions.csv.
    pub questions: &'a [QuestionRow],
    /// Rows of judge_questions.csv (empty without a judge run).
    pub judge: &'a [JudgeQuestionRow],
    /// Texts of the questions and chunks; without them the questions show ids and figures only.
    pub texts: Option<Texts<'a>>,
    /// Why `texts` is missing, shown on the page.
    pub texts_note: Option<&'a str>,
}

/// Renders report.html.
pub fn render(page: &Page) -> String {
    let sections = md_sections(page.markdown);
    let section = |title: &str| sections.iter().find(|(t, _)| *t == title).map(|s| s.1);
    let mut store = TextStore::default();
    let questions = questions::questions_html(page, &mut store);
    let judged = section("Answer quality (judge)");
    let rest: Vec<(&str, &str)> = sections
        .iter()
        .filter(|(t, _)| !matches!(*t, "Decision" | "Answer quality (judge)"))
        .copied()
        .collect();
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta http-equiv="Content-Security-Policy"
                    content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";
                title { "chunksweep report: " (page.run_name) }
                style { (PreEscaped(CSS)) }
            }
            body {
                h1 { "chunksweep report: " (page.run_name) }
                nav {
                    a href="#decision" { "Decision" }
                    @if judged.is_some() { a href="#judge" { "Answer quality" } }
                    @if page.plot_svg.is_some() { a href="#figure" { "Figure" } }
                    a href="#configurations" { "Configurations" }
                    a href="#questions" { "Questions" }
                }
                section #decision .decision { (md_html(section("Decision").unwrap_or(""))) }
                @if let Some(j) = judged { section #judge { (md_html(j)) } }
                @if let Some(svg) = page.plot_svg.and_then(svg_element) {
                    section #figure .plot { h2 { "Figure" } (PreEscaped(svg)) }
                }
                @for (title, body) in &rest {
                    @if *title == "Configurations" {
                        section #configurations { (config_table(page)) }
                    } @else {
                        section { (md_html(body)) }
                    }
                }
                @if section("Configurations").is_none() {
                    section #configurations { (config_table(page)) }
                }
                section #questions { (questions) }
                script #chunk-texts type="application/json" { (PreEscaped(store.json())) }
                script { (PreEscaped(JS)) }
            }
        }
    };
    markup.into_string()
}

/// Writes [`render`]'s page to `dir/report.html` and returns its path.
///
/// # Errors
/// [`ReportError::Io`] when the file cannot be written.
pub fn write_html(dir: &Path, page: &Page) -> Result<PathBuf, ReportError> {
    let path = dir.join(HTML_FILE);
    std::fs::write(&path, render(page)).map_err(|source| ReportError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// Why the questions' texts could not be loaded for a run folder.
#[derive(Debug, Error)]
pub enum TextsError {
    /// manifest.json is missing or does not record the corpus and golden set.
    #[error("manifest.json does not record the corpus and the golden set")]
    NotRecorded,
    /// The corpus could not be read.
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    /// The golden set could not be read.
    #[error(transparent)]
    Golden(#[from] GoldenError),
}

/// Loads the corpus and golden set a run folder's manifest records (`config.corpus`,
/// `config.golden`, `config.golden_format`; relative paths are taken from the current folder, as
/// the run took them).
///
/// # Errors
/// [`TextsError`] when the manifest does not name them or they cannot be read.
pub fn load_texts(manifest: Option<&serde_json::Value>) -> Result<(Corpus, GoldenSet), TextsError> {
    let config = manifest
        .and_then(|m| m.get("config"))
        .ok_or(TextsError::NotRecorded)?;
    let path = |key: &str| config.get(key)?.as_str().map(PathBuf::from);
    let (corpus_dir, golden_path) = path("corpus")
        .zip(path("golden"))
        .ok_or(TextsError::NotRecorded)?;
    let format = config
        .get("golden_format")
        .and_then(|f| serde_json::from_value(f.clone()).ok())
        .unwrap_or_else(|| GoldenFormat::from_path(&golden_path));
    let corpus = load_corpus(&corpus_dir)?;
    let golden = golden::load(&golden_path, format, &corpus)?;
    Ok((corpus, golden))
}

/// Writes report.html into `dir` for a run whose decision files are written: report.md and
/// sweep.svg are read from `dir`, and judge_questions.csv when it is there. `texts` are the
/// corpus and golden set, or why they are missing (the questions then show ids and figures).
///
/// # Errors
/// [`HtmlError::Read`] for an unreadable report.md or judge_questions.csv, [`HtmlError::Write`].
pub fn write_for_run(
    dir: &Path,
    run_name: &str,
    sweep: &[SweepRow],
    questions: &[QuestionRow],
    selection: &Selection,
    texts: Result<Texts, &TextsError>,
) -> Result<PathBuf, HtmlError> {
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read_to_string(&path).map_err(|source| ReadError::Io { path, source })
    };
    let markdown = read(super::decision::REPORT_FILE)?;
    let plot_svg = read(super::plot::PLOT_FILE).ok();
    let judge_path = crate::judge::pipeline::questions_path(dir);
    let judge: Vec<JudgeQuestionRow> = if judge_path.exists() {
        read_rows(&judge_path)?
    } else {
        Vec::new()
    };
    let note = texts
        .as_ref()
        .err()
        .map(|e| format!("The questions' and chunks' texts are not shown: {e}."));
    let page = Page {
        run_name,
        markdown: &markdown,
        plot_svg: plot_svg.as_deref(),
        sweep,
        selection,
        questions,
        judge: &judge,
        texts: texts.ok(),
        texts_note: note.as_deref(),
    };
    Ok(write_html(dir, &page)?)
}

/// Errors of [`write_for_run`].
#[derive(Debug, Error)]
pub enum HtmlError {
    /// A file of the run folder could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// report.html could not be written.
    #[error(transparent)]
    Write(#[from] ReportError),
}

/// report.md's `## ` sections as (title, text with its heading); the title line (`# …`) before
/// the first is dropped. Headings inside code fences do not count.
fn md_sections(md: &str) -> Vec<(&str, &str)> {
    let mut starts = Vec::new();
    let mut fenced = false;
    let mut offset = 0;
    for line in md.split_inclusive('\n') {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && let Some(title) = line.strip_prefix("## ") {
            starts.push((title.trim(), offset));
        }
        offset += line.len();
    }
    let ends = starts.iter().skip(1).map(|s| s.1).chain([md.len()]);
    starts
        .iter()
        .zip(ends)
        .map(|(&(title, start), end)| (title, &md[start..end]))
        .collect()
}

/// Markdown to HTML, with any raw HTML in it shown as text and images left out (report.md's
/// figure is a file next to it; the page has it inline).
fn md_html(md: &str) -> Markup {
    let mut in_image = 0usize;
    let events = Parser::new_ext(md, Options::ENABLE_TABLES).filter_map(move |e| {
        match e {
            Event::Start(Tag::Image { .. }) => in_image += 1,
            Event::End(TagEnd::Image) => in_image -= 1,
            Event::Html(t) | Event::InlineHtml(t) => return Some(Event::Text(t)),
            e if in_image == 0 => return Some(e),
            _ => {}
        }
        None
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    PreEscaped(out)
}

/// The `<svg …>…</svg>` element of an SVG file (plotters writes no prologue, but one is skipped).
fn svg_element(svg: &str) -> Option<&str> {
    let start = svg.find("<svg")?;
    let end = svg.rfind("</svg>")? + "</svg>".len();
    (start < end).then(|| &svg[start..end])
}

pub(super) fn fmt3(x: f64) -> String {
    format!("{x:.3}")
}

fn config_table(page: &Page) -> Markup {
    let retriever: HashMap<&str, &str> = page
        .sweep
        .iter()
        .map(|r| (r.config_id.as_str(), r.retriever.as_str()))
        .collect();
    let configs = &page.selection.configs;
    let ret = |c: &ConfigSelection| retriever.get(c.config_id.as_str()).copied().unwrap_or("");
    let distinct = |f: &dyn Fn(&ConfigSelection) -> String| {
        let set: BTreeSet<(usize, String)> = configs
            .iter()
            .map(|c| {
                let v = f(c);
                (v.parse().unwrap_or(usize::MAX), v)
            })
            .collect();
        set.into_iter().map(|(_, v)| v).collect::<Vec<_>>()
    };
    let filters: [(&str, &str, Vec<String>); 4] = [
        ("strategy", "strategy", distinct(&|c| c.strategy.clone())),
        ("size", "size", distinct(&|c| c.chunk_size.to_string())),
        ("prefix", "prefix", distinct(&|c| c.prefix.clone())),
        ("retriever", "retriever", distinct(&|c| ret(c).to_string())),
    ];
    html! {
        h2 { "Configurations" }
        p .meta { "Click a column to sort; the pick is green, the other judge candidates pale green." }
        div .filters {
            @for (key, label, values) in &filters {
                label { (label) " "
                    select data-f=(key) {
                        option value="" { "all" }
                        @for v in values { option value=(v) { (v) } }
                    }
                }
            }
        }
        table #configs {
            thead { tr {
                th { "configuration" } th { "strategy" } th { "size" } th { "overlap" }
                th { "prefix" } th { "retriever" } th { "k" } th { "tokens/query" }
                th { "span recall@k" } th { "hit@k" } th { "coverage@k" } th { "margin" }
                th { "status" } th { "rank" } th { "half wins" } th { "reason" }
            } }
            tbody {
                @for c in configs {
                    tr .(status_class(c.status)) data-strategy=(c.strategy) data-size=(c.chunk_size)
                        data-prefix=(c.prefix) data-retriever=(ret(c)) {
                        td { code { (c.config_id) } }
                        td { (c.strategy) }
                        td data-v=(c.chunk_size) { (c.chunk_size) }
                        td data-v=(c.chunk_overlap) { (c.chunk_overlap) }
                        td { (c.prefix) }
                        td { (ret(c)) }
                        td data-v=(c.top_k) { (c.top_k) }
                        td data-v=(c.tokens_per_query) { (format!("{:.0}", c.tokens_per_query)) }
                        td data-v=(c.span_recall) title=(format!("[{:.3}, {:.3}]", c.span_recall_lo, c.span_recall_hi)) { (fmt3(c.span_recall)) }
                        td data-v=(c.hit_rate) { (fmt3(c.hit_rate)) }
                        td data-v=(c.coverage) { (fmt3(c.coverage)) }
                        td data-v=(c.margin) { (fmt3(c.margin)) }
                        td { (status_class(c.status)) }
                        td data-v=(c.rank.map_or(f64::NAN, |r| r as f64)) { (c.rank.map(|r| r.to_string()).unwrap_or_default()) }
                        td data-v=(c.win_share) { (format!("{:.0}%", c.win_share * 100.0)) }
                        td .meta { (c.reason) }
                    }
                }
            }
        }
    }
}

fn status_class(s: Status) -> &'static str {
    match s {
        Status::Winner => "winner",
        Status::Candidate => "candidate",
        Status::Kept => "kept",
        Status::Dropped => "dropped",
    }
}

/// Distinct chunk texts, each stored once, by location.
#[derive(Default)]
pub(super) struct TextStore {
    texts: Vec<String>,
    index: HashMap<Location, usize>,
}

impl TextStore {
    pub(super) fn add(&mut self, corpus: &Corpus, loc: Location) -> (usize, &str) {
        let i = *self.index.entry(loc).or_insert_with(|| {
            self.texts.push(
                corpus.docs[loc.doc]
                    .slice_chars(loc.start, loc.end)
                    .to_string(),
            );
            self.texts.len() - 1
        });
        (i, &self.texts[i])
    }

    /// The texts as a JSON array that is safe inside a `<script>` element.
    fn json(&self) -> String {
        serde_json::to_string(&self.texts)
            .unwrap_or_else(|_| "[]".into())
            .replace('<', "\\u003c")
    }
}
