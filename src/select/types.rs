//! The selection's data: its settings, errors, one row of selection.csv per configuration, the
//! split-half summary, the per-type picks, the diagnoses and the selection at every cut.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::plateau::{Rule, RuleSettings, VsBest};

/// The power at which [`ConfigSelection::questions_needed`] is worked out (80%).
pub const POWER: f64 = 0.8;

/// The default non-inferiority margin δ on span recall, as a literal for help texts built
/// with `concat!` ([`DEFAULT_DELTA`] is its value).
#[macro_export]
macro_rules! default_delta {
    () => {
        0.05
    };
}

/// The default non-inferiority margin δ on span recall (recall units): the selection's `delta`
/// (`--delta`) and the check's `--delta`, one idea under one name.
pub const DEFAULT_DELTA: f64 = default_delta!();

/// Settings of the selection. Defaults: the equivalence rule at α = 0.05 with δ =
/// [`DEFAULT_DELTA`], 3% margin
/// tolerance (seed rule only), 0.02 recall tolerance (paired and seed rules), 3 judge candidates, 200 halves, seed 42, 90% to call a
/// pick stable, 95% intervals, 2000 bootstrap resamples, 30 questions minimum, 0.15 boundary
/// gap, 10 questions per type, 0.7 span recall below which retrieval is the bottleneck.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SelectionSettings {
    /// Which plateau rule decides ([`Rule::Equivalence`] by default).
    pub rule: Rule,
    /// Significance level of the Holm-corrected paired tests and of the one-sided
    /// non-inferiority bound, in (0, 1).
    pub alpha: f64,
    /// Non-inferiority margin δ on span recall@k (recall units, > 0): a configuration whose
    /// one-sided (1 − α) lower bound of the mean per-question difference to the best is at least
    /// −δ is non-inferior to the best ([`crate::stats::non_inferiority`]).
    pub delta: f64,
    /// Seed rule only: relative margin tolerance, keep margin ≥ best − tolerance × |best|
    /// (0.03 = 3%).
    pub margin_tolerance: f64,
    /// Paired and seed rules: absolute span-recall tolerance, keep recall ≥ best − tolerance
    /// (recall units).
    pub recall_tolerance: f64,
    /// How many configurations the judge gets: the kept ones cheapest first, filled up with
    /// challengers (the best dropped ones) when fewer are kept.
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
            delta: self.delta,
        }
    }
}

impl Default for SelectionSettings {
    fn default() -> Self {
        SelectionSettings {
            rule: Rule::Equivalence,
            alpha: crate::stats::DEFAULT_ALPHA,
            delta: DEFAULT_DELTA,
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
    /// Outside the plateau but judged: when the plateau holds fewer configurations than
    /// [`SelectionSettings::candidates`], the best of the dropped ones (by span recall, then
    /// tokens per query) fill the judge's list, so that the judge compares the pick with
    /// something.
    Challenger,
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
    /// Identical configurations merged into this row (the same chunk ranges retrieved with the
    /// same scores for every question, from an index of the same size), space-separated; empty
    /// for most. They are counted once in every statistic.
    pub aliases: String,
    /// Chunking strategy.
    pub strategy: String,
    /// chunk_size, in `size_unit`.
    pub chunk_size: usize,
    /// Unit of chunk_size and chunk_overlap: `words` for the `words` strategy (or tokenizer),
    /// else `tokens` (see [`crate::chunking::size_unit`]).
    pub size_unit: String,
    /// Requested chunk_overlap, in `size_unit`.
    pub chunk_overlap: usize,
    /// Token unit of the sizes (`cl100k_base`, `o200k_base` or `words`).
    pub tokenizer: String,
    /// Contextual prefix (`none`, `title`, `heading_path`, `title_heading`, `llm_context`).
    pub prefix: String,
    /// What is sent for each retrieved chunk (`none`, `neighbours:N`, `parent:P`; sweep.csv's
    /// `expand`). Not a column of selection.csv: the configuration id carries it.
    #[serde(skip)]
    pub expand: String,
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
    /// The most tokens (in [`ConfigSelection::unit`]) one chunk holds: `chunk_size` when it is
    /// counted in that unit, else (a `words` chunk size counted in tokens) the largest chunk's
    /// own tokens.
    pub chunk_limit: usize,
    /// Evidence spans longer than `chunk_limit`, in the same unit (no chunk of this
    /// configuration can hold them whole).
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
    /// Median per-question margin: the typical question's (the mean is pulled by a few
    /// questions with a large margin of either sign).
    pub margin_median: f64,
    /// Questions whose margin is below 0: a wrong chunk scores above every right one.
    pub margin_below_zero: usize,
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
    /// Against the best within δ ([`crate::stats::non_inferiority`], whatever the rule): `best`,
    /// `non-inferior`, `worse` (by more than δ) or `undetermined`.
    pub vs_best_class: String,
    /// Mean per-question span recall@k difference to the best (this − best; empty for the best).
    pub diff_mean: Option<f64>,
    /// One-sided (1 − α) lower bound of that difference (paired t).
    pub diff_lower: Option<f64>,
    /// One-sided (1 − α) upper bound of that difference (paired t).
    pub diff_upper: Option<f64>,
    /// Undetermined only: questions (in all) that would show it non-inferior at α and 80% power
    /// if it were as good as the best (planned at a true difference of 0,
    /// [`crate::stats::PLANNING_DIFFERENCE`]; [`crate::stats::questions_needed`]); empty
    /// otherwise, or when it cannot be computed.
    pub questions_needed: Option<u64>,
    /// How likely it is worse than the best by more than δ, given the data
    /// ([`crate::stats::NonInferiority::probability_worse`]: the flat-prior posterior
    /// probability, in [0, 1]); empty for the best.
    pub p_worse: Option<f64>,
    /// Budget cuts: questions where a chunk larger than the whole budget was skipped (see
    /// [`crate::metrics::fit_budget`]; under an expansion, a hit whose unit was); 0 for top k.
    pub questions_skipped_for_size: usize,
    /// Budget cuts: chunks of the index larger than the budget (never sent at this cut).
    pub chunks_over_budget: usize,
    /// The distinct units a single hit can send alone (sweep.csv's `n_units`: the chunks, or
    /// under an expansion each chunk's window or parent); `n_chunks` for a sweep.csv written
    /// before it was counted. Not a column of selection.csv.
    #[serde(skip)]
    pub n_units: usize,
    /// Budget cuts: of those, the ones larger than the budget (sweep.csv's
    /// `units_over_budget`; `chunks_over_budget` without an expansion or in an older
    /// sweep.csv). Not a column of selection.csv.
    #[serde(skip)]
    pub units_over_budget: usize,
}

impl ConfigSelection {
    /// Budget cuts: most of the units a hit can send alone are larger than the budget (its
    /// chunks; under an expansion their windows or parents), so most of its index is never
    /// sent at this cut.
    pub fn mostly_over_budget(&self) -> bool {
        self.n_units > 0 && 2 * self.units_over_budget > self.n_units
    }

    /// Whether it sends more than each chunk (sweep.csv's `expand` is not `none`).
    pub fn is_expanded(&self) -> bool {
        !self.expand.is_empty() && self.expand != "none"
    }

    /// What a budget compares, in words, after "N of M": `chunks`, or under an expansion
    /// `neighbours:1 windows` (a chunk with its neighbours) or `parent:1024 parents`.
    pub fn units_noun(&self) -> String {
        match self.expand.split(':').next() {
            _ if !self.is_expanded() => "chunks".into(),
            Some("parent") => format!("{} parents", self.expand),
            _ => format!("{} windows", self.expand),
        }
    }

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
    /// Every expanded configuration ([`crate::expand`]; index into [`Selection::configs`]) with
    /// its span recall on that type and its test against the type's best on that type's
    /// questions (`None` when it is the type's best).
    #[serde(skip)]
    pub expanded: Vec<(usize, f64, Option<VsBest>)>,
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
    /// Indices of the judge candidates: the plateau cheapest first (the pick first), then the
    /// [`Status::Challenger`]s when the plateau holds fewer than `settings.candidates`.
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

/// The selection at every cut of the ranked list: each cut's configurations compared with each
/// other on the same questions. `selections[0]` is the primary cut, which decides (and the judge
/// retrieves with): the first context budget when the sweep has budgets (the equal-budget
/// comparison is the fair one: at a fixed k bigger chunks simply send more text), else top k.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cuts {
    /// One selection per cut, the primary first, then the other budgets in sweep order, then k.
    pub selections: Vec<Selection>,
    /// The budget trade-off (two budgets or more).
    pub tradeoff: Option<super::tradeoff::Tradeoff>,
}

impl Cuts {
    /// The primary cut's selection.
    pub fn primary(&self) -> &Selection {
        &self.selections[0]
    }
}

/// Which diagnosis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosisKind {
    /// coverage − span recall above the threshold.
    BoundaryDamage,
    /// Every configuration inside the pick's confidence intervals.
    FlatCurve,
    /// The pick's chunk size differs between question types.
    WinnerByQuestionType,
    /// Fewer questions than the minimum.
    TooFewQuestions,
    /// The plateau's two tests had no configuration in common.
    PlateauFallback,
    /// The pick is at the edge of the swept sizes and the curve still improves towards it.
    EdgeOfGrid,
    /// Low best span recall or a negative best margin.
    WeakRetrieval,
    /// k is at least the number of chunks of some configuration.
    KCoversIndex,
    /// Most documents are a single chunk at some size.
    ChunksAsLargeAsDocuments,
    /// At a budget cut, most chunks of some configuration are larger than the budget.
    ChunksOverBudget,
}

impl DiagnosisKind {
    /// Human title for the report.
    pub fn title(self) -> &'static str {
        match self {
            DiagnosisKind::BoundaryDamage => "Boundary damage",
            DiagnosisKind::FlatCurve => "Flat curve",
            DiagnosisKind::WinnerByQuestionType => "Winner differs by question type",
            DiagnosisKind::TooFewQuestions => "Too few questions",
            DiagnosisKind::PlateauFallback => "Margin and recall disagree",
            DiagnosisKind::EdgeOfGrid => "Pick at the edge of the grid",
            DiagnosisKind::WeakRetrieval => "Retrieval is the bottleneck",
            DiagnosisKind::KCoversIndex => "k covers the whole index",
            DiagnosisKind::ChunksAsLargeAsDocuments => "Chunks as large as the documents",
            DiagnosisKind::ChunksOverBudget => "Chunks larger than the budget",
        }
    }
}

/// One diagnosis: what triggered it (with numbers) and what to do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnosis {
    /// Which diagnosis.
    pub kind: DiagnosisKind,
    /// The triggering numbers, as a sentence.
    pub evidence: String,
    /// What to do about it.
    pub advice: String,
}
