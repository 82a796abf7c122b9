//! report.md, rendered from the run's [`Outcome`]: the title, the sections of
//! [`crate::report::sections`] as Markdown, the prefix, rerank and expansion comparisons
//! ([`crate::report::rerank`], [`crate::report::expand`]), the external chunkers' ([`crate::report::chunkers`]),
//! then the judge's section
//! ([`crate::report::judge_section::markdown`] of the judge's summary), then the drafted
//! questions' ([`crate::report::drafts`]) when the golden set has drafts.

use super::doc::to_markdown;
use super::outcome::Outcome;
use super::{judge_section, prefix, sections};

/// Renders report.md. The prefix comparison, when there is one, ends with a blank line (as
/// report.md has always had it).
pub fn render(outcome: &Outcome) -> String {
    let mut md = format!("# chunksweep report: {}\n\n", outcome.run_name);
    md.push_str(&to_markdown(&sections::main(outcome)));
    let prefixes = prefix::markdown(&outcome.prefixes, &outcome.settings);
    if !prefixes.is_empty() {
        md.push('\n');
        md.push_str(&prefixes);
    }
    if let Some(r) = &outcome.reranking {
        md.push('\n');
        md.push_str(&to_markdown(&[super::rerank::section(
            r,
            &outcome.settings,
        )]));
    }
    if let Some(e) = &outcome.expansions {
        md.push('\n');
        md.push_str(&to_markdown(&[super::expand::section(
            e,
            &outcome.settings,
        )]));
    }
    if !outcome.engines.is_empty() {
        md.push('\n');
        md.push_str(&to_markdown(&[super::engines::section(
            &outcome.engines,
            &outcome.settings,
        )]));
    }
    if let Some(chunkers) = super::chunkers::section(&outcome.chunkers) {
        md.push('\n');
        md.push_str(&to_markdown(&[chunkers]));
    }
    if let Some(judge) = &outcome.judge {
        md.push('\n');
        md.push_str(&judge_section::markdown(judge));
    }
    if let Some(drafts) = &outcome.drafts {
        md.push('\n');
        md.push_str(&to_markdown(&[super::drafts::section(drafts)]));
    }
    md
}
