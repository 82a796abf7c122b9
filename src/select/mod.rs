//! Selection: from the sweep's table to a decision a reviewer can check.
//!
//! Input: the rows of sweep.csv ([`SweepRow`], one per configuration) and sweep_questions.csv
//! ([`QuestionRow`], one per configuration × question). Output: a [`Selection`] with
//!
//! 1. the [plateau rule](plateau) over all configurations: kept or dropped and why, rank by
//!    tokens per query, the pick (rank 1) and the judge candidates (ranks 1..=N);
//! 2. [split-half stability](halves): how often each configuration is the pick on seeded random
//!    halves of the questions; when the pick wins fewer than 90% of them the report says the
//!    sizes are indistinguishable at this sample size and that the pick is made on cost;
//! 3. 95% intervals per configuration: Wilson (1927) for hit@k (a proportion of questions) and
//!    for micro span recall (spans found / spans; this treats spans as independent, which
//!    spans of one question are not, so read it as optimistic), and a seeded percentile
//!    bootstrap over questions for the macro means (span recall@k, coverage@k, margin);
//! 4. exact McNemar (1947) on hit@k between the pick and every other configuration, paired on
//!    the same questions;
//! 5. [diagnoses](diagnose) with their triggering numbers.
//!
//! Everything is recomputed from the per-question rows, so `chunksweep report` reproduces the
//! decision of `chunksweep sweep` exactly, without re-retrieval.

pub mod diagnose;
pub mod halves;
pub mod plateau;
pub mod prefix;

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use thiserror::Error;

use crate::stats::{self, McNemar};
use crate::sweep::{QuestionRow, SweepRow};
use diagnose::Diagnosis;
use halves::{QuestionScores, mean_at, split_halves};
use plateau::{Plateau, PlateauInput, plateau};

/// Settings of the selection. Defaults: 3% margin tolerance, 0.02 recall tolerance, 3 judge
/// candidates, 200 halves, seed 42, 90% to call a pick stable, 95% intervals, 2000 bootstrap
/// resamples, 30 questions minimum, 0.15 boundary gap, 10 questions per type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SelectionSettings {
    /// Relative margin tolerance: keep margin ≥ best − tolerance × |best| (0.03 = 3%).
    pub margin_tolerance: f64,
    /// Absolute span-recall tolerance: keep recall ≥ best − tolerance (recall units).
    pub recall_tolerance: f64,
    /// How many of the kept configurations, cheapest first, become judge candidates.
    pub candidates: usize,
    /// Random halves drawn for the stability check.
    pub halves: usize,
    /// Seed of the halves and of the bootstrap.
    pub seed: u64,
    /// Share of halves the pick must win to be called stable, in [0, 1].
    pub stable_share: f64,
    /// Confidence level of the intervals, e.g. 0.95.
    pub confidence: f64,
    /// Bootstrap resamples for the intervals of means.
    pub bootstrap_resamples: usize,
    /// Fewer questions than this triggers the "too few questions" diagnosis.
    pub min_questions: usize,
    /// coverage − span recall above this triggers "boundary damage".
    pub boundary_gap: f64,
    /// A question type needs at least this many questions to get its own pick.
    pub min_type_questions: usize,
}

impl Default for SelectionSettings {
    fn default() -> Self {
        SelectionSettings {
            margin_tolerance: 0.03,
            recall_tolerance: 0.02,
            candidates: 3,
            halves: 200,
            seed: 42,
            stable_share: 0.9,
            confidence: 0.95,
            bootstrap_resamples: 2000,
            min_questions: 30,
            boundary_gap: 0.15,
            min_type_questions: 10,
        }
    }
}

/// Errors of the selection.
#[derive(Debug, Error)]
pub enum SelectError {
    /// No configuration to select from.
    #[error("sweep.csv has no configuration to select from")]
    NoConfigurations,
    /// A configuration of sweep.csv has no per-question rows.
    #[error("sweep_questions.csv has no rows for configuration {0}")]
    MissingQuestions(String),
    /// Configurations were scored on different questions.
    #[error(
        "configuration {config_id} was scored on different questions than {first} \
         ({detail}); selection needs the same questions for every configuration"
    )]
    DifferentQuestions {
        /// The configuration that differs.
        config_id: String,
        /// The reference configuration.
        first: String,
        /// What differs.
        detail: String,
    },
}

impl SelectError {
    /// Usage (2): the run folder's CSVs cannot be selected from as they are.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        match self {
            SelectError::NoConfigurations
            | SelectError::MissingQuestions(_)
            | SelectError::DifferentQuestions { .. } => crate::exit::ExitClass::Usage,
        }
    }
}

/// Where a configuration ended up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Rank 1 of the plateau: the pick.
    Winner,
    /// Kept and among the judge candidates (ranks 2..=N).
    Candidate,
    /// Kept, but beyond the judge candidates.
    Kept,
    /// Outside the plateau.
    Dropped,
}

/// One row of selection.csv: a configuration with its verdict, stability and intervals.
/// Flat on purpose (the csv crate cannot write nested structs). Intervals are 95% by default
/// ([`SelectionSettings::confidence`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigSelection {
    /// Configuration id.
    pub config_id: String,
    /// Chunking strategy.
    pub strategy: String,
    /// chunk_size, in `size_unit`.
    pub chunk_size: usize,
    /// Unit of chunk_size and chunk_overlap: `words` for the `words` strategy (or tokenizer),
    /// else `tokens` (see [`crate::chunking::size_unit`]).
    pub size_unit: String,
    /// Requested chunk_overlap, in `size_unit`.
    pub chunk_overlap: usize,
    /// Contextual prefix (`none`, `title`, `heading_path`, `title_heading`, `llm_context`).
    pub prefix: String,
    /// top_k.
    pub top_k: usize,
    /// Context tokens per query (`top_k × mean chunk tokens`, prefixes included).
    pub tokens_per_query: f64,
    /// winner, candidate, kept or dropped.
    pub status: Status,
    /// Whether the plateau rule kept it.
    pub kept: bool,
    /// 1-based rank among kept configurations by tokens per query (empty when dropped).
    pub rank: Option<usize>,
    /// Why it was kept or dropped, with the numbers.
    pub reason: String,
    /// Share of the random halves on which it was the pick, in [0, 1].
    pub win_share: f64,
    /// Questions scored.
    pub n_questions: usize,
    /// Macro span recall@k.
    pub span_recall: f64,
    /// Bootstrap lower bound of macro span recall@k.
    pub span_recall_lo: f64,
    /// Bootstrap upper bound of macro span recall@k.
    pub span_recall_hi: f64,
    /// Micro span recall@k (spans found / spans).
    pub span_recall_micro: f64,
    /// Wilson lower bound of micro span recall@k.
    pub span_recall_micro_lo: f64,
    /// Wilson upper bound of micro span recall@k.
    pub span_recall_micro_hi: f64,
    /// hit@k (share of questions with a span found).
    pub hit_rate: f64,
    /// Wilson lower bound of hit@k.
    pub hit_rate_lo: f64,
    /// Wilson upper bound of hit@k.
    pub hit_rate_hi: f64,
    /// Macro coverage@k.
    pub coverage: f64,
    /// Bootstrap lower bound of coverage@k.
    pub coverage_lo: f64,
    /// Bootstrap upper bound of coverage@k.
    pub coverage_hi: f64,
    /// coverage@k − span recall@k (boundary damage when above 0.15).
    pub boundary_gap: f64,
    /// Mean normalised margin.
    pub margin: f64,
    /// Bootstrap lower bound of the margin.
    pub margin_lo: f64,
    /// Bootstrap upper bound of the margin.
    pub margin_hi: f64,
    /// Questions where the pick hit and this configuration missed (empty for the pick).
    pub mcnemar_b: Option<u64>,
    /// Questions where this configuration hit and the pick missed (empty for the pick).
    pub mcnemar_c: Option<u64>,
    /// Exact McNemar two-sided p-value on hit@k against the pick (empty for the pick).
    pub mcnemar_p: Option<f64>,
}

/// Whether the pick survives the split halves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StabilityStatus {
    /// The pick won at least `stable_share` of the halves.
    Stable,
    /// No configuration won `stable_share` of the halves: indistinguishable at this sample
    /// size; the pick is made on cost.
    Indistinguishable,
    /// Another configuration won at least `stable_share` of the halves although the full set
    /// picks a different one.
    HalvesDisagree,
}

/// The split-half summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stability {
    /// Verdict.
    pub status: StabilityStatus,
    /// Halves drawn.
    pub halves: usize,
    /// Questions per half.
    pub half_size: usize,
    /// Share of halves the pick won.
    pub winner_share: f64,
    /// Index (into [`Selection::configs`]) of the configuration that won most halves.
    pub most_wins: usize,
    /// Its share.
    pub most_wins_share: f64,
}

/// The pick on one question type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TypePick {
    /// The question_type value.
    pub question_type: String,
    /// Questions of that type.
    pub n_questions: usize,
    /// Index into [`Selection::configs`] of the type's pick.
    pub winner: usize,
    /// The pick's span recall@k on that type.
    pub span_recall: f64,
    /// The pick's margin on that type.
    pub margin: f64,
    /// The overall pick's span recall@k on that type.
    pub overall_pick_span_recall: f64,
}

/// The decision and everything a reviewer needs to check it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Selection {
    /// The settings used.
    pub settings: SelectionSettings,
    /// Questions (the same for every configuration).
    pub n_questions: usize,
    /// Every configuration, in sweep.csv order.
    pub configs: Vec<ConfigSelection>,
    /// Index of the pick in `configs`.
    pub winner: usize,
    /// Indices of the judge candidates, cheapest first (the pick first).
    pub candidates: Vec<usize>,
    /// Best margin over all configurations.
    pub best_margin: f64,
    /// Best span recall@k over all configurations.
    pub best_span_recall: f64,
    /// `best_margin − margin_tolerance × |best_margin|`.
    pub margin_floor: f64,
    /// `best_span_recall − recall_tolerance`.
    pub recall_floor: f64,
    /// True when the plateau's two tests had nothing in common and recall alone was used.
    pub plateau_fallback: bool,
    /// Split-half stability.
    pub stability: Stability,
    /// The pick per question type (empty when fewer than two types qualify).
    pub by_type: Vec<TypePick>,
    /// Diagnoses, in report order.
    pub diagnoses: Vec<Diagnosis>,
}

impl Selection {
    /// The pick.
    pub fn winner(&self) -> &ConfigSelection {
        &self.configs[self.winner]
    }
}

/// Per-question columns of one configuration, in the shared question order.
struct Columns {
    hit: Vec<bool>,
    span_recall: Vec<f64>,
    coverage: Vec<f64>,
    margin: Vec<f64>,
    spans_found: u64,
    spans: u64,
}

/// Question ids and types in the shared order, and each configuration's columns in that order.
struct Aligned {
    ids: Vec<String>,
    types: Vec<String>,
    columns: Vec<Columns>,
}

/// Groups the per-question rows by configuration and aligns them on the first configuration's
/// question order.
fn align(rows: &[SweepRow], questions: &[QuestionRow]) -> Result<Aligned, SelectError> {
    let mut by_config: HashMap<&str, Vec<&QuestionRow>> = HashMap::new();
    for q in questions {
        by_config.entry(q.config_id.as_str()).or_default().push(q);
    }
    let first = &rows[0].config_id;
    let reference = by_config
        .get(first.as_str())
        .ok_or_else(|| SelectError::MissingQuestions(first.clone()))?;
    let ids: Vec<String> = reference.iter().map(|q| q.question_id.clone()).collect();
    let types: Vec<String> = reference.iter().map(|q| q.question_type.clone()).collect();
    let position: HashMap<&str, usize> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    if position.len() != ids.len() {
        return Err(SelectError::DifferentQuestions {
            config_id: first.clone(),
            first: first.clone(),
            detail: "a question id appears twice".into(),
        });
    }
    let mut columns = Vec::with_capacity(rows.len());
    for row in rows {
        let qs = by_config
            .get(row.config_id.as_str())
            .ok_or_else(|| SelectError::MissingQuestions(row.config_id.clone()))?;
        let differ = |detail: String| SelectError::DifferentQuestions {
            config_id: row.config_id.clone(),
            first: first.clone(),
            detail,
        };
        if qs.len() != ids.len() {
            return Err(differ(format!("{} questions, not {}", qs.len(), ids.len())));
        }
        let mut slots: Vec<Option<&QuestionRow>> = vec![None; ids.len()];
        for q in qs {
            let i = *position
                .get(q.question_id.as_str())
                .ok_or_else(|| differ(format!("question {} is not in both", q.question_id)))?;
            if slots[i].replace(q).is_some() {
                return Err(differ(format!("question {} appears twice", q.question_id)));
            }
        }
        let qs: Vec<&QuestionRow> = slots.into_iter().map(|s| s.expect("filled")).collect();
        columns.push(Columns {
            hit: qs.iter().map(|q| q.hit != 0).collect(),
            span_recall: qs.iter().map(|q| q.span_recall).collect(),
            coverage: qs.iter().map(|q| q.coverage).collect(),
            margin: qs.iter().map(|q| q.margin).collect(),
            // Spans found per question: span_recall × n_spans, an integer up to rounding.
            spans_found: qs
                .iter()
                .map(|q| (q.span_recall * q.n_spans as f64).round() as u64)
                .sum(),
            spans: qs.iter().map(|q| q.n_spans as u64).sum(),
        });
    }
    Ok(Aligned {
        ids,
        types,
        columns,
    })
}

fn fmt3(x: f64) -> String {
    format!("{x:.3}")
}

/// `x` with up to four decimals and no trailing zeros (0.03 → "0.03", 3.0 → "3").
pub(crate) fn trim(x: f64) -> String {
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// Runs the whole selection (see the module documentation).
///
/// # Errors
/// [`SelectError`] when there is no configuration, a configuration has no per-question rows,
/// or configurations were scored on different questions.
pub fn select(
    rows: &[SweepRow],
    questions: &[QuestionRow],
    settings: &SelectionSettings,
) -> Result<Selection, SelectError> {
    if rows.is_empty() {
        return Err(SelectError::NoConfigurations);
    }
    let Aligned {
        ids,
        types,
        columns,
    } = align(rows, questions)?;
    let n = ids.len();
    let all: Vec<usize> = (0..n).collect();

    // Point estimates from the per-question rows (equal to sweep.csv's macro means).
    let inputs: Vec<PlateauInput<'_>> = rows
        .iter()
        .zip(&columns)
        .map(|(r, c)| PlateauInput {
            config_id: &r.config_id,
            chunk_size: r.chunk_size,
            tokens_per_query: r.tokens_per_query,
            span_recall: mean_at(&c.span_recall, &all),
            margin: mean_at(&c.margin, &all),
        })
        .collect();
    let p: Plateau = plateau(
        &inputs,
        settings.margin_tolerance,
        settings.recall_tolerance,
    );
    let winner = p.winner().expect("at least one configuration");

    // Split halves over all configurations.
    let scores: Vec<QuestionScores> = columns
        .iter()
        .map(|c| QuestionScores {
            span_recall: c.span_recall.clone(),
            margin: c.margin.clone(),
        })
        .collect();
    let wins = split_halves(
        &inputs,
        &scores,
        settings.margin_tolerance,
        settings.recall_tolerance,
        settings.halves,
        settings.seed,
    );

    // Intervals: one shared set of bootstrap resamples (paired across configurations).
    let resamples = stats::bootstrap_indices(n, settings.bootstrap_resamples, settings.seed);
    let conf = settings.confidence;

    let mut configs = Vec::with_capacity(rows.len());
    for (i, (row, col)) in rows.iter().zip(&columns).enumerate() {
        let hits = col.hit.iter().filter(|&&h| h).count() as u64;
        let hit_ci = stats::wilson(hits, n as u64, conf);
        let micro_ci = stats::wilson(col.spans_found, col.spans, conf);
        let recall_ci = stats::bootstrap_mean(&col.span_recall, &resamples, conf);
        let coverage_ci = stats::bootstrap_mean(&col.coverage, &resamples, conf);
        let margin_ci = stats::bootstrap_mean(&col.margin, &resamples, conf);
        let rank = p.rank_of(i);
        let status = match rank {
            Some(1) => Status::Winner,
            Some(r) if r <= settings.candidates => Status::Candidate,
            Some(_) => Status::Kept,
            None => Status::Dropped,
        };
        let test: Option<McNemar> =
            (i != winner).then(|| stats::mcnemar_paired(&columns[winner].hit, &col.hit));
        let span_recall = inputs[i].span_recall;
        let margin = inputs[i].margin;
        let coverage = mean_at(&col.coverage, &all);
        configs.push(ConfigSelection {
            config_id: row.config_id.clone(),
            strategy: row.strategy.clone(),
            chunk_size: row.chunk_size,
            size_unit: crate::chunking::size_unit(&row.strategy, &row.tokenizer).to_string(),
            chunk_overlap: row.chunk_overlap,
            prefix: row.prefix.clone(),
            top_k: row.top_k,
            tokens_per_query: row.tokens_per_query,
            status,
            kept: p.kept[i],
            rank,
            reason: reason(&p, i, &inputs, settings),
            win_share: wins.share(i),
            n_questions: n,
            span_recall,
            span_recall_lo: recall_ci.lo,
            span_recall_hi: recall_ci.hi,
            span_recall_micro: if col.spans == 0 {
                0.0
            } else {
                col.spans_found as f64 / col.spans as f64
            },
            span_recall_micro_lo: micro_ci.lo,
            span_recall_micro_hi: micro_ci.hi,
            hit_rate: hits as f64 / n.max(1) as f64,
            hit_rate_lo: hit_ci.lo,
            hit_rate_hi: hit_ci.hi,
            coverage,
            coverage_lo: coverage_ci.lo,
            coverage_hi: coverage_ci.hi,
            boundary_gap: coverage - span_recall,
            margin,
            margin_lo: margin_ci.lo,
            margin_hi: margin_ci.hi,
            mcnemar_b: test.map(|t| t.b),
            mcnemar_c: test.map(|t| t.c),
            mcnemar_p: test.map(|t| t.p_value),
        });
    }

    let winner_share = wins.share(winner);
    let most_wins = (0..rows.len())
        .max_by(|&a, &b| {
            wins.wins[a]
                .cmp(&wins.wins[b])
                // Prefer the pick, then the earlier configuration, on equal counts.
                .then((a == winner).cmp(&(b == winner)))
                .then(b.cmp(&a))
        })
        .unwrap_or(winner);
    let most_wins_share = wins.share(most_wins);
    let status = if winner_share >= settings.stable_share - plateau::EPS {
        StabilityStatus::Stable
    } else if most_wins_share >= settings.stable_share - plateau::EPS {
        StabilityStatus::HalvesDisagree
    } else {
        StabilityStatus::Indistinguishable
    };
    let stability = Stability {
        status,
        halves: wins.halves,
        half_size: wins.half_size,
        winner_share,
        most_wins,
        most_wins_share,
    };

    let by_type = picks_by_type(rows, &types, &columns, winner, settings);
    let candidates: Vec<usize> = p.order.iter().take(settings.candidates).copied().collect();
    let mut selection = Selection {
        settings: settings.clone(),
        n_questions: n,
        configs,
        winner,
        candidates,
        best_margin: p.best_margin,
        best_span_recall: p.best_recall,
        margin_floor: p.margin_floor,
        recall_floor: p.recall_floor,
        plateau_fallback: p.fallback,
        stability,
        by_type,
        diagnoses: Vec::new(),
    };
    selection.diagnoses = diagnose::diagnose(&selection);
    Ok(selection)
}

/// Why configuration `i` was kept or dropped, with the numbers.
fn reason(p: &Plateau, i: usize, inputs: &[PlateauInput<'_>], s: &SelectionSettings) -> String {
    let c = &inputs[i];
    let margin_fail = format!(
        "margin {} < floor {} (best {} − {}% of |best|)",
        fmt3(c.margin),
        fmt3(p.margin_floor),
        fmt3(p.best_margin),
        trim(s.margin_tolerance * 100.0)
    );
    let recall_fail = format!(
        "span recall {} < floor {} (best {} − {})",
        fmt3(c.span_recall),
        fmt3(p.recall_floor),
        fmt3(p.best_recall),
        trim(s.recall_tolerance)
    );
    if p.kept[i] {
        let rank = p.rank_of(i).unwrap_or(0);
        let place = if rank == 1 {
            "cheapest kept".to_string()
        } else {
            format!("rank {rank} by tokens per query")
        };
        if p.fallback {
            format!(
                "kept on span recall alone (no configuration passed both tests); {place}; {margin_fail}"
            )
        } else {
            format!(
                "inside the plateau (margin {} ≥ {}, span recall {} ≥ {}); {place}",
                fmt3(c.margin),
                fmt3(p.margin_floor),
                fmt3(c.span_recall),
                fmt3(p.recall_floor)
            )
        }
    } else {
        match (p.margin_ok[i], p.recall_ok[i]) {
            (false, false) => format!("dropped: {margin_fail}; {recall_fail}"),
            (false, true) => format!("dropped: {margin_fail}"),
            (true, false) => format!("dropped: {recall_fail}"),
            (true, true) => "dropped".to_string(),
        }
    }
}

/// The selection rule applied to each question type with enough questions (empty when fewer
/// than two types qualify).
fn picks_by_type(
    rows: &[SweepRow],
    types: &[String],
    columns: &[Columns],
    overall: usize,
    s: &SelectionSettings,
) -> Vec<TypePick> {
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, t) in types.iter().enumerate() {
        if !t.is_empty() {
            groups.entry(t.as_str()).or_default().push(i);
        }
    }
    groups.retain(|_, idx| idx.len() >= s.min_type_questions);
    if groups.len() < 2 {
        return Vec::new();
    }
    groups
        .into_iter()
        .map(|(t, idx)| {
            let inputs: Vec<PlateauInput<'_>> = rows
                .iter()
                .zip(columns)
                .map(|(r, c)| PlateauInput {
                    config_id: &r.config_id,
                    chunk_size: r.chunk_size,
                    tokens_per_query: r.tokens_per_query,
                    span_recall: mean_at(&c.span_recall, &idx),
                    margin: mean_at(&c.margin, &idx),
                })
                .collect();
            let p = plateau(&inputs, s.margin_tolerance, s.recall_tolerance);
            let w = p.winner().expect("at least one configuration");
            TypePick {
                question_type: t.to_string(),
                n_questions: idx.len(),
                winner: w,
                span_recall: inputs[w].span_recall,
                margin: inputs[w].margin,
                overall_pick_span_recall: inputs[overall].span_recall,
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
