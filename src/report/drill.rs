//! The per-question drill-down of a run: per question, for each candidate, where the evidence
//! stands, the retrieved chunks (each distinct chunk text stored once), the answer, the verdicts
//! with their reasons, latency and tokens. Built once into the run's
//! [`crate::report::outcome::Outcome`]; report.html shows it.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use serde::Serialize;

use super::review::{self, SpanStatus};
use super::texts::{Texts, TextsError};
use crate::corpus::Corpus;
use crate::golden::{Location, Question};
use crate::judge::rows::JudgeQuestionRow;
use crate::select::Selection;
use crate::sweep::rows::QuestionRow;

/// The drill-down: the candidates shown and every question of the first one.
#[derive(Debug, Clone, Default)]
pub struct DrillDown {
    /// The configurations shown per question: those judged (in the judge rows' order), else the
    /// selection's judge candidates.
    pub candidates: Vec<String>,
    /// The questions, in sweep_questions.csv's order for the first candidate.
    pub questions: Vec<QuestionView>,
    /// Distinct chunk texts, referred to by index from [`ChunkData::text`].
    pub texts: Vec<String>,
    /// Why the questions' and chunks' texts are not shown, when they are not.
    pub texts_note: Option<String>,
}

/// One question of the drill-down.
#[derive(Debug, Clone)]
pub struct QuestionView {
    /// The question's id.
    pub id: String,
    /// Its text, when the golden set could be read.
    pub text: Option<String>,
    /// Its reference answer, when it has one.
    pub reference: Option<String>,
    /// Per candidate (in [`DrillDown::candidates`] order), its badges: hit@k, then each verdict.
    pub badges: Vec<Vec<Badge>>,
    /// What the question has, for filtering: `has-cut`, `has-fail`, `has-missing` (sorted).
    pub classes: Vec<&'static str>,
    /// Per candidate, its view of the question.
    pub cells: Vec<CellData>,
}

/// A short label with its class (`pass`, `fail`, or a verdict) and, for a verdict, its
/// criterion.
#[derive(Debug, Clone, PartialEq)]
pub struct Badge {
    /// `pass`/`fail` for hit@k, else the verdict (`pass`, `fail`, `error`).
    pub class: String,
    /// The criterion's name, for a verdict.
    pub title: Option<String>,
    /// What it says: `hit 1`, `F pass`.
    pub label: String,
}

/// One candidate's view of one question, as the page's script reads it (JSON).
#[derive(Debug, Clone, Serialize)]
pub struct CellData {
    /// The configuration id.
    pub config: String,
    /// First correct rank and the question's metrics, or why they are missing.
    pub metrics: String,
    /// Where each evidence span stands.
    pub spans: Vec<SpanData>,
    /// The retrieved chunks, best first.
    pub chunks: Vec<ChunkData>,
    /// The generated answer, when judged.
    pub answer: Option<String>,
    /// The verdicts with their reasons.
    pub verdicts: Vec<VerdictData>,
    /// Latency, tokens and cost.
    pub cost: Option<String>,
}

/// Where one evidence span stands.
#[derive(Debug, Clone, Serialize)]
pub struct SpanData {
    /// `whole`, `cut` or `missing`.
    pub status: &'static str,
    /// The 1-based rank of the chunk that holds it whole.
    pub rank: Option<usize>,
    /// The span's text, for a span no retrieved chunk touches.
    pub text: Option<String>,
}

/// One retrieved chunk.
#[derive(Debug, Clone, Serialize)]
pub struct ChunkData {
    /// 1-based rank.
    pub rank: usize,
    /// Chunk id.
    pub id: String,
    /// Retriever score, as written.
    pub score: String,
    /// Index of the chunk's text in [`DrillDown::texts`] (`None`: not available).
    pub text: Option<usize>,
    /// Evidence marks, `start-end-w` in UTF-16 units ([`review::utf16_marks`]).
    pub marks: String,
}

/// One verdict.
#[derive(Debug, Clone, Serialize)]
pub struct VerdictData {
    /// The criterion's name.
    pub criterion: String,
    /// `pass`, `fail` or `error`.
    pub verdict: &'static str,
    /// The judge's reason.
    pub reason: String,
}

/// Distinct chunk texts, each stored once, by location.
#[derive(Default)]
struct TextStore {
    texts: Vec<String>,
    index: HashMap<Location, usize>,
}

impl TextStore {
    /// The index of the text at `loc` (stored on first sight) and the text.
    fn add(&mut self, corpus: &Corpus, loc: Location) -> (usize, &str) {
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
}

/// The configurations shown per question: those judged (in `judge`'s order), else the
/// selection's judge candidates.
fn candidates<'a>(selection: &'a Selection, judge: &'a [JudgeQuestionRow]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for r in judge {
        if !out.contains(&r.config_id.as_str()) {
            out.push(&r.config_id);
        }
    }
    if out.is_empty() {
        out = selection
            .candidates
            .iter()
            .map(|&i| selection.configs[i].config_id.as_str())
            .collect();
    }
    out
}

/// The drill-down of `selection`'s candidates (or of the configurations in `judge`, when there
/// are judge rows) over `questions` (sweep_questions.csv's rows), with the texts of `texts`
/// when they could be read.
pub fn build(
    selection: &Selection,
    questions: &[QuestionRow],
    judge: &[JudgeQuestionRow],
    texts: Result<Texts<'_>, &TextsError>,
) -> DrillDown {
    let texts_note = texts
        .as_ref()
        .err()
        .map(|e| format!("The questions' and chunks' texts are not shown: {e}."));
    let texts = texts.ok();
    let cands = candidates(selection, judge);
    let rows: HashMap<(&str, &str), &QuestionRow> = questions
        .iter()
        .map(|r| ((r.config_id.as_str(), r.question_id.as_str()), r))
        .collect();
    let judged: HashMap<(&str, &str), &JudgeQuestionRow> = judge
        .iter()
        .map(|r| ((r.config_id.as_str(), r.question_id.as_str()), r))
        .collect();
    let golden: HashMap<&str, &Question> = texts
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
            questions
                .iter()
                .filter(|r| r.config_id == *c)
                .map(|r| r.question_id.as_str())
                .collect()
        })
        .unwrap_or_default();
    let mut store = TextStore::default();
    let mut views = Vec::with_capacity(ids.len());
    for id in &ids {
        let q = golden.get(id).copied();
        let mut cells = Vec::with_capacity(cands.len());
        let mut badges = Vec::with_capacity(cands.len());
        let mut classes = BTreeSet::new();
        for c in &cands {
            let row = rows.get(&(*c, *id)).copied();
            let judge = judged.get(&(*c, *id)).copied();
            let cell = Cell {
                config_id: c,
                row,
                judge,
            };
            let corpus = texts.map(|t| t.corpus);
            cells.push(cell_data(&cell, q, corpus, &mut store, &mut classes));
            badges.push(badges_of(row, judge));
        }
        views.push(QuestionView {
            id: (*id).to_string(),
            text: q.map(|q| q.text.clone()),
            reference: q.and_then(|q| q.answer.clone()),
            badges,
            classes: classes.into_iter().collect(),
            cells,
        });
    }
    DrillDown {
        candidates: cands.iter().map(|c| (*c).to_string()).collect(),
        questions: views,
        texts: store.texts,
        texts_note,
    }
}

/// One candidate's rows for one question.
struct Cell<'a> {
    config_id: &'a str,
    row: Option<&'a QuestionRow>,
    judge: Option<&'a JudgeQuestionRow>,
}

/// hit@k, then a badge per verdict given (criteria marked `na` have none).
fn badges_of(row: Option<&QuestionRow>, judge: Option<&JudgeQuestionRow>) -> Vec<Badge> {
    let hit = row.map_or(0, |r| r.hit);
    let mut out = vec![Badge {
        class: if hit == 1 { "pass" } else { "fail" }.into(),
        title: None,
        label: format!("hit {hit}"),
    }];
    if let Some(j) = judge {
        for (c, g) in j.verdicts.iter() {
            let v = g.verdict.as_str();
            if v != "na" {
                out.push(Badge {
                    class: v.into(),
                    title: Some(c.into()),
                    label: format!("{} {v}", c[..1].to_uppercase()),
                });
            }
        }
    }
    out
}

fn cell_data(
    cell: &Cell<'_>,
    question: Option<&Question>,
    corpus: Option<&Corpus>,
    store: &mut TextStore,
    classes: &mut BTreeSet<&'static str>,
) -> CellData {
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
            (SpanStatus::Missing, Some(q), Some(corpus)) => {
                q.spans[i].locations.first().map(|loc| {
                    corpus.docs[loc.doc]
                        .slice_chars(loc.start, loc.end)
                        .to_string()
                })
            }
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
            "first correct rank (whole index): {} · span recall {:.3} · coverage {:.3} · margin \
             {:.3}",
            r.first_correct_rank
                .map_or_else(|| "none (unreachable)".to_string(), |k| k.to_string()),
            r.span_recall,
            r.coverage,
            r.margin
        ),
        None => "not in sweep_questions.csv".into(),
    };
    let j = cell.judge;
    if let Some(j) = j
        && j.verdicts
            .iter()
            .any(|(_, g)| matches!(g.verdict.as_str(), "fail" | "error"))
    {
        classes.insert("has-fail");
    }
    CellData {
        config: cell.config_id.to_string(),
        metrics,
        spans,
        chunks,
        answer: j.map(|j| j.answer.clone()),
        verdicts: j.map(verdicts).unwrap_or_default(),
        cost: j.map(cost_line),
    }
}

fn verdicts(j: &JudgeQuestionRow) -> Vec<VerdictData> {
    j.verdicts
        .iter()
        .filter(|(_, g)| g.verdict.as_str() != "na")
        .map(|(c, g)| VerdictData {
            criterion: c.to_string(),
            verdict: g.verdict.as_str(),
            reason: g.reason.clone(),
        })
        .collect()
}

fn cost_line(j: &JudgeQuestionRow) -> String {
    // a question judged through the Batch API has no latency of its own (NaN)
    let ms = |x: f64| {
        if x.is_nan() {
            "n/a (batch)".to_string()
        } else {
            format!("{x:.0} ms")
        }
    };
    let mut line = format!(
        "latency: retrieve {:.0} ms, generate {}, judge {} · tokens: {} prompt + {} \
         completion ({} to generate) in {} calls",
        j.retrieve_ms,
        ms(j.generate_ms),
        ms(j.judge_ms),
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
