//! Selection: from the sweep's table to a decision a reviewer can check.
//!
//! Input: the rows of sweep.csv ([`SweepRow`], one per configuration) and sweep_questions.csv
//! ([`QuestionRow`], one per configuration × question). Output: a [`Selection`] with
//!
//! 1. the [plateau rule](plateau) over all configurations: kept or dropped and why, rank by
//!    tokens per query, the pick (rank 1) and the judge candidates (ranks 1..=N); by default
//!    a configuration stays unless the best is significantly better on the same questions
//!    (exact sign test on per-question span recall, Holm-corrected) or its span recall is more
//!    than 0.02 below the best's; `Rule::Seed` keeps the seeds' literal rule;
//! 2. [split-half stability](halves): how often each configuration is the pick on seeded random
//!    halves of the questions; when the pick wins fewer than 90% of them the report says the
//!    sizes are indistinguishable at this sample size and that the pick is made on cost;
//! 3. 95% intervals per configuration: Wilson (1927) for hit@k (a proportion of questions) and
//!    for micro span recall (spans found / spans; this treats spans as independent, which
//!    spans of one question are not, so read it as optimistic), and a seeded percentile
//!    bootstrap over questions for the macro means (span recall@k, coverage@k, margin);
//! 4. exact McNemar (1947) on hit@k between the pick and every other configuration, paired on
//!    the same questions;
//! 5. the [cost–quality frontier](frontier) in (tokens per query, span recall);
//! 6. [diagnoses](diagnose) with their triggering numbers.
//!
//! Everything is recomputed from the per-question rows, so `chunksweep report` reproduces the
//! decision of `chunksweep sweep` exactly, without re-retrieval.

pub mod diagnose;
pub mod frontier;
pub mod halves;
pub mod plateau;
pub mod prefix;

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use thiserror::Error;

use crate::stats::{self, McNemar};
use crate::sweep::{QuestionRow, SweepRow};
use diagnose::Diagnosis;
use halves::split_halves;
pub use plateau::Rule;
use plateau::{Plateau, PlateauInput, RuleSettings, VsBest, mean_at, plateau};

/// Settings of the selection. Defaults: the paired rule at α = 0.05, 3% margin tolerance (seed
/// rule only), 0.02 recall tolerance, 3 judge candidates, 200 halves, seed 42, 90% to call a
/// pick stable, 95% intervals, 2000 bootstrap resamples, 30 questions minimum, 0.15 boundary
/// gap, 10 questions per type, 0.7 span recall below which retrieval is the bottleneck.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SelectionSettings {
    /// Which plateau rule decides ([`Rule::Paired`] by default).
    pub rule: Rule,
    /// Significance level of the Holm-corrected paired tests, in (0, 1).
    pub alpha: f64,
    /// Seed rule only: relative margin tolerance, keep margin ≥ best − tolerance × |best|
    /// (0.03 = 3%).
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
    /// A best span recall@k below this triggers "retrieval is the bottleneck".
    pub weak_recall: f64,
}

impl SelectionSettings {
    /// The plateau rule's part of the settings.
    pub fn rule_settings(&self) -> RuleSettings {
        RuleSettings {
            rule: self.rule,
            margin_tolerance: self.margin_tolerance,
            recall_tolerance: self.recall_tolerance,
            alpha: self.alpha,
        }
    }
}

impl Default for SelectionSettings {
    fn default() -> Self {
        SelectionSettings {
            rule: Rule::Paired,
            alpha: 0.05,
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
            weak_recall: 0.7,
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
    /// chunk_size in tokenizer units.
    pub chunk_size: usize,
    /// Requested chunk_overlap in tokenizer units.
    pub chunk_overlap: usize,
    /// Token unit of the sizes (`cl100k_base`, `o200k_base` or `words`).
    pub tokenizer: String,
    /// Contextual prefix (`none`, `title`, `heading_path`, `title_heading`, `llm_context`).
    pub prefix: String,
    /// top_k (0 for a budget cut).
    pub top_k: usize,
    /// `k` or `budget`: where the ranked list is cut.
    pub cut: String,
    /// The context budget in tokens per query, for a budget cut.
    pub budget_tokens: Option<usize>,
    /// Chunks in the index.
    pub n_chunks: usize,
    /// Tokens over all chunks, prefixes included.
    pub index_tokens: usize,
    /// Mean tokens retrieved per query, prefixes included.
    pub tokens_per_query: f64,
    /// Mean chunks retrieved per query.
    pub chunks_retrieved_mean: f64,
    /// Documents that are a single chunk.
    pub single_chunk_docs: usize,
    /// Documents in the corpus.
    pub n_docs: usize,
    /// Evidence spans longer than `chunk_size` (no chunk of this size can hold them whole).
    pub spans_longer_than_chunk: usize,
    /// Not dominated in (tokens per query, span recall@k) by any other configuration.
    pub pareto: bool,
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
    /// Questions where the best configuration's span recall is higher (empty for the best).
    pub best_better: Option<u64>,
    /// Questions where this configuration's span recall is higher than the best's.
    pub this_better: Option<u64>,
    /// Exact sign-test two-sided p-value on per-question span recall against the best.
    pub sign_p: Option<f64>,
    /// `sign_p` Holm-corrected across every configuration compared with the best.
    pub sign_p_holm: Option<f64>,
}

impl ConfigSelection {
    /// The unit of its sizes and token counts: `words` or `tokens`.
    pub fn unit(&self) -> &'static str {
        if self.tokenizer == "words" {
            "words"
        } else {
            "tokens"
        }
    }
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
    /// Index into [`Selection::configs`] of the type's best configuration.
    pub best: usize,
    /// The overall pick against the type's best on that type's questions (empty when the
    /// overall pick is the type's best).
    pub overall_vs_best: Option<VsBest>,
}

impl TypePick {
    /// The type's best is significantly better than the overall pick on that type's questions.
    pub fn significant(&self) -> bool {
        self.overall_vs_best.is_some_and(|t| t.significant)
    }
}

/// The decision and everything a reviewer needs to check it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Selection {
    /// The settings used (the rule that decided is `settings.rule`).
    pub settings: SelectionSettings,
    /// Questions (the same for every configuration).
    pub n_questions: usize,
    /// Evidence spans over all questions (0 for runs that did not record their lengths).
    pub n_spans_measured: usize,
    /// Every configuration, in sweep.csv order.
    pub configs: Vec<ConfigSelection>,
    /// Index of the pick in `configs`.
    pub winner: usize,
    /// Indices of the judge candidates, cheapest first (the pick first).
    pub candidates: Vec<usize>,
    /// Index of the best configuration: highest span recall@k (ties: higher margin, cheaper).
    pub best: usize,
    /// Best margin over all configurations.
    pub best_margin: f64,
    /// Best span recall@k over all configurations.
    pub best_span_recall: f64,
    /// Seed rule: `best_margin − margin_tolerance × |best_margin|`; paired rule: none.
    pub margin_floor: Option<f64>,
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

    /// The best configuration (highest span recall@k).
    pub fn best(&self) -> &ConfigSelection {
        &self.configs[self.best]
    }

    /// The context budget of this selection's cut (`None`: top k).
    pub fn budget_tokens(&self) -> Option<usize> {
        self.winner().budget_tokens
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
    /// Token length of every evidence span of every question (empty for runs that did not
    /// record them).
    span_tokens: Vec<usize>,
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
    let span_tokens: Vec<usize> = reference
        .iter()
        .flat_map(|q| q.span_tokens.split('|'))
        .filter_map(|t| t.parse().ok())
        .collect();
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
        span_tokens,
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

/// The selection at every cut of the ranked list: each cut's configurations compared with each
/// other on the same questions. `selections[0]` is the primary cut, which decides (and the judge
/// retrieves with): the first context budget when the sweep has budgets (the equal-budget
/// comparison is the fair one: at a fixed k bigger chunks simply send more text), else top k.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cuts {
    /// One selection per cut, the primary first, then the other budgets in sweep order, then k.
    pub selections: Vec<Selection>,
}

impl Cuts {
    /// The primary cut's selection.
    pub fn primary(&self) -> &Selection {
        &self.selections[0]
    }
}

/// Groups the rows by cut (`budget_tokens`; none is top k) and runs [`select`] on each (see
/// [`Cuts`] for the order).
///
/// # Errors
/// As [`select`], for any cut.
pub fn select_cuts(
    rows: &[SweepRow],
    questions: &[QuestionRow],
    settings: &SelectionSettings,
) -> Result<Cuts, SelectError> {
    let mut keys: Vec<Option<usize>> = Vec::new();
    for r in rows {
        if !keys.contains(&r.budget_tokens) {
            keys.push(r.budget_tokens);
        }
    }
    // Budgets first, in sweep order; top k last.
    keys.sort_by_key(|k| k.is_none());
    let selections = keys
        .iter()
        .map(|key| {
            let at: Vec<SweepRow> = rows
                .iter()
                .filter(|r| r.budget_tokens == *key)
                .cloned()
                .collect();
            let ids: std::collections::HashSet<&str> =
                at.iter().map(|r| r.config_id.as_str()).collect();
            let qs: Vec<QuestionRow> = questions
                .iter()
                .filter(|q| ids.contains(q.config_id.as_str()))
                .cloned()
                .collect();
            select(&at, &qs, settings)
        })
        .collect::<Result<Vec<_>, _>>()?;
    if selections.is_empty() {
        return Err(SelectError::NoConfigurations);
    }
    Ok(Cuts { selections })
}

/// Runs the whole selection on the rows of one cut (see the module documentation).
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
        span_tokens,
        columns,
    } = align(rows, questions)?;
    let n = ids.len();
    let all: Vec<usize> = (0..n).collect();

    let inputs: Vec<PlateauInput<'_>> = rows
        .iter()
        .zip(&columns)
        .map(|(r, c)| PlateauInput {
            config_id: &r.config_id,
            chunk_size: r.chunk_size,
            has_prefix: !r.prefix.is_empty() && r.prefix != "none",
            tokens_per_query: r.tokens_per_query,
            span_recall: &c.span_recall,
            margin: &c.margin,
        })
        .collect();
    let rule = settings.rule_settings();
    let p: Plateau = plateau(&inputs, &all, &rule);
    let winner = p.winner().expect("at least one configuration");
    let wins = split_halves(&inputs, &rule, settings.halves, settings.seed);
    let on_frontier = frontier::pareto(
        &rows
            .iter()
            .zip(&p.span_recall)
            .map(|(r, &recall)| (r.tokens_per_query, recall))
            .collect::<Vec<_>>(),
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
        let vs_best = p.vs_best[i];
        let span_recall = p.span_recall[i];
        let coverage = mean_at(&col.coverage, &all);
        configs.push(ConfigSelection {
            config_id: row.config_id.clone(),
            strategy: row.strategy.clone(),
            chunk_size: row.chunk_size,
            chunk_overlap: row.chunk_overlap,
            tokenizer: row.tokenizer.clone(),
            prefix: row.prefix.clone(),
            top_k: row.top_k,
            cut: row.cut.clone(),
            budget_tokens: row.budget_tokens,
            n_chunks: row.n_chunks,
            index_tokens: row.index_tokens,
            tokens_per_query: row.tokens_per_query,
            chunks_retrieved_mean: row.chunks_retrieved_mean,
            single_chunk_docs: row.single_chunk_docs,
            n_docs: row.n_docs,
            spans_longer_than_chunk: span_tokens.iter().filter(|&&t| t > row.chunk_size).count(),
            pareto: on_frontier[i],
            status,
            kept: p.kept[i],
            rank,
            reason: reason(&p, i, rows, settings),
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
            margin: p.margin[i],
            margin_lo: margin_ci.lo,
            margin_hi: margin_ci.hi,
            mcnemar_b: test.map(|t| t.b),
            mcnemar_c: test.map(|t| t.c),
            mcnemar_p: test.map(|t| t.p_value),
            best_better: vs_best.map(|t| t.best_better),
            this_better: vs_best.map(|t| t.this_better),
            sign_p: vs_best.map(|t| t.p_value),
            sign_p_holm: vs_best.map(|t| t.p_holm),
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

    let by_type = picks_by_type(&inputs, &types, winner, settings);
    let candidates: Vec<usize> = p.order.iter().take(settings.candidates).copied().collect();
    let mut selection = Selection {
        settings: settings.clone(),
        n_questions: n,
        n_spans_measured: span_tokens.len(),
        configs,
        winner,
        candidates,
        best: p.best,
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
fn reason(p: &Plateau, i: usize, rows: &[SweepRow], s: &SelectionSettings) -> String {
    let recall = p.span_recall[i];
    let recall_fail = format!(
        "span recall {} < floor {} (best {} − {})",
        fmt3(recall),
        fmt3(p.recall_floor),
        fmt3(p.best_recall),
        trim(s.recall_tolerance)
    );
    let versus = |t: &VsBest| {
        format!(
            "vs best `{}`: higher on {} questions, lower on {}, sign test Holm p {}",
            rows[p.best].config_id,
            t.this_better,
            t.best_better,
            fmt_p(t.p_holm)
        )
    };
    let place = match p.rank_of(i) {
        Some(1) => "cheapest kept".to_string(),
        Some(rank) => format!("rank {rank} by tokens per query"),
        None => String::new(),
    };
    match p.rule {
        Rule::Paired => {
            let sig = p.vs_best[i].filter(|t| t.significant);
            if p.kept[i] {
                let why = match &p.vs_best[i] {
                    None => "the best span recall".to_string(),
                    Some(t) => format!("not significantly worse ({})", versus(t)),
                };
                format!(
                    "on the plateau: {why}; span recall {} ≥ {}; {place}",
                    fmt3(recall),
                    fmt3(p.recall_floor)
                )
            } else {
                let mut parts = Vec::new();
                if let Some(t) = sig {
                    parts.push(format!(
                        "significantly worse than the best at α = {} ({})",
                        trim(s.alpha),
                        versus(&t)
                    ));
                }
                if !p.recall_ok[i] {
                    parts.push(recall_fail);
                }
                format!("dropped: {}", parts.join("; "))
            }
        }
        Rule::Seed => {
            let floor = p.margin_floor.unwrap_or(f64::NEG_INFINITY);
            let margin = p.margin[i];
            let margin_fail = format!(
                "margin {} < floor {} (best {} − {}% of |best|)",
                fmt3(margin),
                fmt3(floor),
                fmt3(p.best_margin),
                trim(s.margin_tolerance * 100.0)
            );
            if p.kept[i] && p.fallback {
                format!(
                    "kept on span recall alone (no configuration passed both tests); {place}; {margin_fail}"
                )
            } else if p.kept[i] {
                format!(
                    "inside the plateau (margin {} ≥ {}, span recall {} ≥ {}); {place}",
                    fmt3(margin),
                    fmt3(floor),
                    fmt3(recall),
                    fmt3(p.recall_floor)
                )
            } else {
                match (p.margin_ok[i], p.recall_ok[i]) {
                    (false, false) => format!("dropped: {margin_fail}; {recall_fail}"),
                    (false, true) => format!("dropped: {margin_fail}"),
                    (true, false) => format!("dropped: {recall_fail}"),
                    (true, true) => "dropped".to_string(),
                }
            }
        }
    }
}

/// A p-value with its relation: "= 0.039", or "< 0.001".
pub(crate) fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("= {p:.3}")
    }
}

/// The selection rule applied to each question type with enough questions (empty when fewer
/// than two types qualify), with the overall pick tested against each type's best on that type's
/// questions (Holm-corrected within the type).
fn picks_by_type(
    inputs: &[PlateauInput<'_>],
    types: &[String],
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
            let p = plateau(inputs, &idx, &s.rule_settings());
            let w = p.winner().expect("at least one configuration");
            TypePick {
                question_type: t.to_string(),
                n_questions: idx.len(),
                winner: w,
                span_recall: p.span_recall[w],
                margin: p.margin[w],
                overall_pick_span_recall: p.span_recall[overall],
                best: p.best,
                overall_vs_best: p.vs_best[overall],
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
