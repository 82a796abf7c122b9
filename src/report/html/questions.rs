//! The questions section of report.html: per question, for each candidate, where the evidence
//! stands, the retrieved chunks (texts filled in by the page's script), the answer, the verdicts
//! with their reasons, latency and tokens.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use maud::{Markup, PreEscaped, html};
use serde::Serialize;

use super::model::{Page, TextStore, fmt3, script_json};
use super::review::{self, SpanStatus};
use crate::corpus::Corpus;
use crate::golden::Question;
use crate::judge::rows::JudgeQuestionRow;
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
            cells.push(cell_data(
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
            details .q .(class) id=(format!("q-{id}")) open[n == 0] {
                summary {
                    b { (id) } " "
                    @if let Some(q) = q { (q.text) }
                    @for b in &summary_badges { " " (b) }
                }
                @if let Some(reference) = q.and_then(|q| q.answer.as_deref()) {
                    p { b { "Reference answer: " } (reference) }
                }
                div .cands {}
                script .qd type="application/json" { (PreEscaped(script_json(&cells))) }
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

/// One candidate's view of one question, as the page's script reads it (JSON): every text in
/// it is inserted with `textContent`.
#[derive(Serialize)]
struct CellData<'a> {
    config: &'a str,
    /// First correct rank and the question's metrics, or why they are missing.
    metrics: String,
    spans: Vec<SpanData<'a>>,
    chunks: Vec<ChunkData>,
    answer: Option<&'a str>,
    verdicts: Vec<VerdictData<'a>>,
    /// Latency, tokens and cost.
    cost: Option<String>,
}

#[derive(Serialize)]
struct SpanData<'a> {
    status: &'static str,
    rank: Option<usize>,
    /// The span's text, for a span no retrieved chunk touches.
    text: Option<&'a str>,
}

#[derive(Serialize)]
struct ChunkData {
    rank: usize,
    id: String,
    score: String,
    /// Index of the chunk's text in the page's store (`None`: not available).
    text: Option<usize>,
    /// Evidence marks, `start-end-w` in UTF-16 units ([`review::utf16_marks`]).
    marks: String,
}

#[derive(Serialize)]
struct VerdictData<'a> {
    criterion: &'static str,
    verdict: &'static str,
    reason: &'a str,
}

fn cell_data<'a>(
    cell: &Cell<'a>,
    question: Option<&'a Question>,
    corpus: Option<&'a Corpus>,
    store: &mut TextStore,
    classes: &mut BTreeSet<&'static str>,
) -> CellData<'a> {
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
    let mut spans = Vec::with_capacity(statuses.len());
    for (i, s) in statuses.iter().enumerate() {
        match s {
            SpanStatus::Cut => classes.insert("has-cut"),
            SpanStatus::Missing => classes.insert("has-missing"),
            SpanStatus::Whole(_) => false,
        };
        let text = match (s, question, corpus) {
            (SpanStatus::Missing, Some(q), Some(corpus)) => q.spans[i]
                .locations
                .first()
                .map(|loc| corpus.docs[loc.doc].slice_chars(loc.start, loc.end)),
            _ => None,
        };
        spans.push(SpanData {
            status: s.class(),
            rank: match s {
                SpanStatus::Whole(r) => Some(*r),
                _ => None,
            },
            text,
        });
    }
    let chunks = chunks
        .iter()
        .map(|c| {
            let (text, marks) = match (c.location, corpus) {
                (Some(loc), Some(corpus)) => {
                    let (i, text) = store.add(corpus, loc);
                    let marks = question
                        .map(|q| review::utf16_marks(text, &review::marks(q, &loc)))
                        .unwrap_or_default();
                    (Some(i), marks)
                }
                _ => (None, String::new()),
            };
            ChunkData {
                rank: c.rank,
                id: c.id.clone(),
                score: c.score.clone(),
                text,
                marks,
            }
        })
        .collect();
    let metrics = match cell.row {
        Some(r) => format!(
            "first correct rank (whole index): {} · span recall {} · coverage {} · margin {}",
            r.first_correct_rank
                .map_or_else(|| "none (unreachable)".to_string(), |k| k.to_string()),
            fmt3(r.span_recall),
            fmt3(r.coverage),
            fmt3(r.margin)
        ),
        None => "not in sweep_questions.csv".into(),
    };
    let j = cell.judge;
    if let Some(j) = j
        && Criterion::ALL
            .iter()
            .any(|&c| matches!(j.verdict(c).as_str(), "fail" | "error"))
    {
        classes.insert("has-fail");
    }
    CellData {
        config: cell.config_id,
        metrics,
        spans,
        chunks,
        answer: j.map(|j| j.answer.as_str()),
        verdicts: j.map(verdicts).unwrap_or_default(),
        cost: j.map(cost_line),
    }
}

fn verdicts(j: &JudgeQuestionRow) -> Vec<VerdictData<'_>> {
    Criterion::ALL
        .into_iter()
        .filter(|&c| j.verdict(c).as_str() != "na")
        .map(|c| VerdictData {
            criterion: c.name(),
            verdict: j.verdict(c).as_str(),
            reason: match c {
                Criterion::Faithfulness => &j.faithfulness_reason,
                Criterion::Relevancy => &j.relevancy_reason,
                Criterion::Correctness => &j.correctness_reason,
            },
        })
        .collect()
}

fn cost_line(j: &JudgeQuestionRow) -> String {
    let mut line = format!(
        "latency: retrieve {:.0} ms, generate {:.0} ms, judge {:.0} ms · tokens: {} prompt + {} \
         completion ({} to generate) in {} calls",
        j.retrieve_ms,
        j.generate_ms,
        j.judge_ms,
        j.prompt_tokens,
        j.completion_tokens,
        j.generate_tokens,
        j.calls
    );
    if let Some(usd) = j.cost_usd {
        let _ = write!(line, " · cost ${usd:.5}");
    }
    line
}
