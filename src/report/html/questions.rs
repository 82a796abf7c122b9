//! The questions section of report.html: per question, for each candidate, where the evidence
//! stands, the retrieved chunks (texts filled in by the page's script), the answer, the verdicts
//! with their reasons, latency and tokens.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use maud::{Markup, html};

use super::model::{Page, TextStore, fmt3};
use super::review::{self, SpanStatus};
use crate::corpus::Corpus;
use crate::golden::Question;
use crate::judge::pipeline::JudgeQuestionRow;
use crate::judge::verdict::Criterion;
use crate::sweep::rows::QuestionRow;

/// The configurations shown per question: those judged (in judge_questions.csv order), else the
/// selection's judge candidates.
fn candidates<'a>(page: &Page<'a>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for r in page.judge {
        if !out.contains(&r.config_id.as_str()) {
            out.push(&r.config_id);
        }
    }
    if out.is_empty() {
        out = page
            .selection
            .candidates
            .iter()
            .map(|&i| page.selection.configs[i].config_id.as_str())
            .collect();
    }
    out
}

pub(super) fn questions_html(page: &Page, store: &mut TextStore) -> Markup {
    let cands = candidates(page);
    let rows: HashMap<(&str, &str), &QuestionRow> = page
        .questions
        .iter()
        .map(|r| ((r.config_id.as_str(), r.question_id.as_str()), r))
        .collect();
    let judged: HashMap<(&str, &str), &JudgeQuestionRow> = page
        .judge
        .iter()
        .map(|r| ((r.config_id.as_str(), r.question_id.as_str()), r))
        .collect();
    let golden: HashMap<&str, &Question> = page
        .texts
        .map(|t| {
            t.golden
                .questions
                .iter()
                .map(|q| (q.id.as_str(), q))
                .collect()
        })
        .unwrap_or_default();
    let ids: Vec<&str> = cands
        .first()
        .map(|c| {
            page.questions
                .iter()
                .filter(|r| r.config_id == *c)
                .map(|r| r.question_id.as_str())
                .collect()
        })
        .unwrap_or_default();
    let mut items = Vec::with_capacity(ids.len());
    for (n, id) in ids.iter().enumerate() {
        let q = golden.get(id).copied();
        let mut cells = Vec::with_capacity(cands.len());
        let mut classes = BTreeSet::new();
        for c in &cands {
            let cell = Cell {
                config_id: c,
                row: rows.get(&(*c, *id)).copied(),
                judge: judged.get(&(*c, *id)).copied(),
            };
            cells.push(candidate_html(
                &cell,
                q,
                page.texts.map(|t| t.corpus),
                store,
                &mut classes,
            ));
        }
        let summary_badges = cands.iter().map(|c| {
            let row = rows.get(&(*c, *id));
            let judge = judged.get(&(*c, *id));
            badges(row.copied(), judge.copied())
        });
        let summary_badges: Vec<Markup> = summary_badges.collect();
        let class = classes.into_iter().collect::<Vec<_>>().join(" ");
        items.push(html! {
            details .q .(class) open[n == 0] {
                summary {
                    b { (id) } " "
                    @if let Some(q) = q { (q.text) }
                    @for b in &summary_badges { " " (b) }
                }
                @if let Some(reference) = q.and_then(|q| q.answer.as_deref()) {
                    p { b { "Reference answer: " } (reference) }
                }
                div .cands { @for cell in &cells { (cell) } }
            }
        });
    }
    html! {
        h2 { "Questions" }
        p .meta {
            (ids.len()) " questions × " (cands.len()) " candidates. "
            "Evidence in a retrieved chunk is marked "
            mark .whole { "whole" } " when the chunk holds the span entirely, "
            mark .cut { "cut" } " when a chunk boundary splits it; a span no retrieved chunk "
            "touches is listed as " span .badge .missing { "missing" } ". "
            "Badges: hit@k, then the verdicts (F faithfulness, R relevancy, C correctness)."
        }
        @if let Some(note) = page.texts_note { p .note { (note) } }
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
        @for item in &items { (item) }
    }
}

/// One candidate's data for one question.
struct Cell<'a> {
    config_id: &'a str,
    row: Option<&'a QuestionRow>,
    judge: Option<&'a JudgeQuestionRow>,
}

fn badges(row: Option<&QuestionRow>, judge: Option<&JudgeQuestionRow>) -> Markup {
    html! {
        span .badge .(if row.is_some_and(|r| r.hit == 1) { "pass" } else { "fail" }) {
            "hit " (row.map_or(0, |r| r.hit))
        }
        @if let Some(j) = judge {
            @for c in Criterion::ALL {
                @let v = j.verdict(c);
                @if v.as_str() != "na" {
                    span .badge .(v.as_str()) title=(c.name()) {
                        (c.name()[..1].to_uppercase()) " " (v.as_str())
                    }
                }
            }
        }
    }
}

fn candidate_html(
    cell: &Cell,
    question: Option<&Question>,
    corpus: Option<&Corpus>,
    store: &mut TextStore,
    classes: &mut BTreeSet<&'static str>,
) -> Markup {
    let chunks = cell
        .row
        .map(|r| review::retrieved(r, corpus))
        .unwrap_or_default();
    let statuses: Vec<SpanStatus> = question
        .map(|q| {
            q.spans
                .iter()
                .map(|s| review::span_status(s, &chunks))
                .collect()
        })
        .unwrap_or_default();
    for s in &statuses {
        match s {
            SpanStatus::Cut => classes.insert("has-cut"),
            SpanStatus::Missing => classes.insert("has-missing"),
            SpanStatus::Whole(_) => false,
        };
    }
    if let Some(j) = cell.judge
        && Criterion::ALL
            .iter()
            .any(|&c| matches!(j.verdict(c).as_str(), "fail" | "error"))
    {
        classes.insert("has-fail");
    }
    let mut bodies = Vec::with_capacity(chunks.len());
    for c in &chunks {
        let body = match (c.location, corpus) {
            (Some(loc), Some(corpus)) => {
                let (i, text) = store.add(corpus, loc);
                let marks = question
                    .map(|q| review::utf16_marks(text, &review::marks(q, &loc)))
                    .unwrap_or_default();
                html! { pre .ct data-t=(i) data-m=(marks) {} }
            }
            _ => html! { p .meta { "(text not available)" } },
        };
        bodies.push(body);
    }
    html! {
        div .cand {
            h4 { (cell.config_id) }
            @match cell.row {
                Some(r) => p .meta {
                    "first correct rank (whole index): "
                    b { (r.first_correct_rank.map_or_else(|| "none (unreachable)".to_string(), |k| k.to_string())) }
                    " · span recall " (fmt3(r.span_recall)) " · coverage " (fmt3(r.coverage))
                    " · margin " (fmt3(r.margin))
                },
                None => p .note { "not in sweep_questions.csv" },
            }
            @if !statuses.is_empty() {
                ul .spans {
                    @for (i, s) in statuses.iter().enumerate() {
                        li {
                            "evidence " (i + 1) ": " span .badge .(s.class()) { (s.class()) }
                            @if let SpanStatus::Whole(rank) = s { " in rank " (rank) }
                            @if let (SpanStatus::Missing, Some(q), Some(corpus)) = (s, question, corpus) {
                                @if let Some(loc) = q.spans[i].locations.first() {
                                    " " q { (corpus.docs[loc.doc].slice_chars(loc.start, loc.end)) }
                                }
                            }
                        }
                    }
                }
            }
            @for (c, body) in chunks.iter().zip(&bodies) {
                div .chunk {
                    div .head { "rank " (c.rank) " · " code { (c.id) } " · score " (c.score) }
                    (body)
                }
            }
            @if let Some(j) = cell.judge { (judge_html(j)) }
        }
    }
}

fn judge_html(j: &JudgeQuestionRow) -> Markup {
    let reason = |c: Criterion| match c {
        Criterion::Faithfulness => &j.faithfulness_reason,
        Criterion::Relevancy => &j.relevancy_reason,
        Criterion::Correctness => &j.correctness_reason,
    };
    let mut cost = String::new();
    if let Some(usd) = j.cost_usd {
        let _ = write!(cost, " · cost ${usd:.5}");
    }
    html! {
        p { b { "Answer" } }
        div .answer { (j.answer) }
        ul .verdicts {
            @for c in Criterion::ALL {
                @let v = j.verdict(c);
                @if v.as_str() != "na" {
                    li { span .badge .(v.as_str()) { (c.name()) ": " (v.as_str()) } " " (reason(c)) }
                }
            }
        }
        p .meta {
            "latency: retrieve " (format!("{:.0}", j.retrieve_ms)) " ms, generate "
            (format!("{:.0}", j.generate_ms)) " ms, judge " (format!("{:.0}", j.judge_ms)) " ms · tokens: "
            (j.prompt_tokens) " prompt + " (j.completion_tokens) " completion ("
            (j.generate_tokens) " to generate) in " (j.calls) " calls" (cost)
        }
    }
}
