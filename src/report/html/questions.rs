//! The questions section of report.html, from the outcome's drill-down
//! ([`crate::report::drill`]): a collapsible block per question with its badges and reference
//! answer, and each candidate's view as a JSON block the page's script builds when the question
//! is opened.

use maud::{Markup, PreEscaped, html};

use super::model::script_json;
use crate::report::drill::{Badge, DrillDown};

pub(super) fn questions_html(drill: &DrillDown) -> Markup {
    html! {
        h2 { "Questions" }
        p .meta {
            (drill.questions.len()) " questions × " (drill.candidates.len()) " candidates. "
            "Evidence in a retrieved chunk is marked "
            mark .whole { "whole" } " when the chunk holds the span entirely, "
            mark .cut { "cut" } " when a chunk boundary splits it; a span no retrieved chunk "
            "touches is listed as " span .badge .missing { "missing" } ". "
            "Badges: hit@k, then the verdicts (F faithfulness, R relevancy, C correctness)."
        }
        @if let Some(note) = &drill.texts_note { p .note { (note) } }
        div .filters {
            label { "Find " input #qfilter type="search" placeholder="id or text"; }
            label { "Show "
                select #qclass {
                    option value="" { "all questions" }
                    option value="has-fail" { "with a failed or error verdict" }
                    option value="has-cut" { "with evidence cut by a boundary" }
                    option value="has-missing" { "with evidence not retrieved" }
                }
            }
        }
        @for (n, q) in drill.questions.iter().enumerate() {
            details .q .(q.classes.join(" ")) id=(format!("q-{}", q.id)) open[n == 0] {
                summary {
                    b { (q.id) } " "
                    @if let Some(text) = &q.text { (text) }
                    @for group in &q.badges { " " (badges(group)) }
                }
                @if let Some(reference) = &q.reference {
                    p { b { "Reference answer: " } (reference) }
                }
                div .cands {}
                script .qd type="application/json" { (PreEscaped(script_json(&q.cells))) }
            }
        }
    }
}

fn badges(group: &[Badge]) -> Markup {
    html! {
        @for b in group {
            @if let Some(title) = &b.title {
                span .badge .(b.class) title=(title) { (b.label) }
            } @else {
                span .badge .(b.class) { (b.label) }
            }
        }
    }
}
