//! report.html: one self-contained page for reviewers, rendered from the run's
//! [`Outcome`], as report.md is: the page parses no Markdown and reads no file (the judge's
//! section is [`crate::report::judge_section::html`] of the judge's summary).
//!
//! Sections: the decision (and the judge's, when the run has one), the figure (sweep.svg as drawn
//! for the outcome, inline), the rule, the configuration table (sortable, filterable by
//! strategy, size, prefix and retriever), the other sections of report.md, and per question,
//! for each candidate, the retrieved chunks in rank order with the evidence marked inside them
//! ([`crate::report::drill`]), the first correct rank, the answer, each verdict with its reason,
//! latency and tokens.
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
mod prose;
mod questions;

use maud::{DOCTYPE, PreEscaped, html};

use super::judge_section;
use super::outcome::Outcome;
use super::sections::sections;
use model::script_json;

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// Renders report.html for `outcome`; `figure` is sweep.svg's text as drawn for it (shown
/// inline).
pub fn render(outcome: &Outcome, figure: Option<&str>) -> String {
    let sections = sections(outcome);
    let (decision, rest) = sections.split_first().expect("the decision section");
    let judge = outcome.judge;
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta http-equiv="Content-Security-Policy"
                    content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";
                title { "chunksweep report: " (outcome.run_name) }
                style { (PreEscaped(CSS)) }
            }
            body {
                h1 { "chunksweep report: " (outcome.run_name) }
                nav {
                    a href="#decision" { "Decision" }
                    @if judge.is_some() { a href="#judge" { "Answer quality" } }
                    @if figure.is_some() { a href="#figure" { "Figure" } }
                    a href="#configurations" { "Configurations" }
                    a href="#questions" { "Questions" }
                }
                section #decision .decision { (prose::section(decision)) }
                @if let Some(j) = judge { (judge_section::html(j)) }
                @if let Some(svg) = figure.and_then(svg_element) {
                    section #figure .plot { h2 { "Figure" } (PreEscaped(svg)) }
                }
                @for s in rest {
                    @if s.title == "Configurations" {
                        section #configurations { (configs::config_table(outcome)) }
                    } @else {
                        section { (prose::section(s)) }
                    }
                }
                section #questions { (questions::questions_html(&outcome.drill)) }
                script #chunk-texts type="application/json" { (PreEscaped(script_json(&outcome.drill.texts))) }
                script { (PreEscaped(JS)) }
            }
        }
    };
    markup.into_string()
}

/// The `<svg …>…</svg>` element of an SVG text (plotters writes no prologue, but one is skipped).
fn svg_element(svg: &str) -> Option<&str> {
    let start = svg.find("<svg")?;
    let end = svg.rfind("</svg>")? + "</svg>".len();
    (start < end).then(|| &svg[start..end])
}
