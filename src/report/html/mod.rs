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
//! travel as JSON (with `<` written `\u003c`, so nothing can close the script block) that the
//! page's script inserts with `createTextNode` / `textContent`. A question's
//! candidates (chunks, answers, verdicts) travel as a JSON block per question and are built only
//! when it is opened (the first is open, and `report.html#q-ID` opens question ID), which keeps
//! the page light at thousands of questions; each distinct chunk text is stored once.

mod configs;
pub mod model;
mod questions;
pub mod review;

use std::path::Path;

use maud::{DOCTYPE, Markup, PreEscaped, html};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use thiserror::Error;

use crate::corpus::{Corpus, CorpusError, load_corpus};
use crate::exit::ExitClass;
use crate::golden::{self, GoldenError, GoldenFormat, GoldenSet};
use model::{Page, TextStore};

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

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
                        section #configurations { (configs::config_table(page)) }
                    } @else {
                        section { (md_html(body)) }
                    }
                }
                @if section("Configurations").is_none() {
                    section #configurations { (configs::config_table(page)) }
                }
                section #questions { (questions) }
                script #chunk-texts type="application/json" { (PreEscaped(store.json())) }
                script { (PreEscaped(JS)) }
            }
        }
    };
    markup.into_string()
}

/// Why the questions' texts could not be loaded for a run folder.
#[derive(Debug, Error)]
pub enum TextsError {
    /// The corpus could not be read.
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    /// The golden set could not be read.
    #[error(transparent)]
    Golden(#[from] GoldenError),
}

impl TextsError {
    /// The class of the cause (the page is written without the texts either way).
    pub fn exit_class(&self) -> ExitClass {
        match self {
            TextsError::Corpus(e) => e.exit_class(),
            TextsError::Golden(e) => e.exit_class(),
        }
    }
}

/// Loads the corpus and golden set a run recorded (relative paths are taken from the current
/// folder, as the run took them).
///
/// # Errors
/// [`TextsError`] when they cannot be read.
pub fn load_texts(
    corpus_dir: &Path,
    golden_path: &Path,
    format: GoldenFormat,
) -> Result<(Corpus, GoldenSet), TextsError> {
    let corpus = load_corpus(corpus_dir)?;
    let golden = golden::load(golden_path, format, &corpus)?;
    Ok((corpus, golden))
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
