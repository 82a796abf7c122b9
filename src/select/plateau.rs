//! The plateau: which configurations are as good as the best, and which of those is cheapest.
//!
//! Three rules ([`Rule`]), all computed from per-question values over a set of questions (all of
//! them, a random half, or one question type). The *best* configuration is the one with the
//! highest macro span recall@k (ties: higher mean margin, then cheaper, then the order below).
//!
//! **`equivalence`** (the default). Every other configuration is compared with the best on the
//! same questions by a paired non-inferiority test within the margin `delta` (δ,
//! [`super::DEFAULT_DELTA`] span recall; [`crate::stats::non_inferiority`]: the one-sided 95% t
//! bound of the mean per-question difference against −δ) and put in one of three classes:
//! non-inferior (lower bound ≥ −δ), worse (upper bound < −δ: worse by more than δ) or
//! undetermined. The best and the non-inferior ones are **kept**. No fixed tolerance: "as good"
//! is what the test shows. Each comparison is made at α on its own (the claim made of the pick
//! is one comparison).
//!
//! **`paired`** (the rule before `equivalence`). Every other configuration is compared with it on
//! the same questions by the
//! exact sign test on per-question span recall ([`crate::stats::sign_test`]; on single-span
//! questions that is McNemar's test on hit@k), and the p-values are Holm-corrected across the
//! configurations compared ([`crate::stats::holm`]). A configuration is **kept** unless
//! - the best is significantly better: Holm-adjusted p < `alpha` (0.05) and the best is higher
//!   on more questions than it is, or
//! - its span recall is more than `recall_tolerance` (0.02, seed 000's rule) below the best's.
//!
//! The margin does not filter: it can be near zero or negative, where no relative tolerance
//! means anything. It only breaks ties: between configurations of equal span recall when
//! naming the best, and between kept configurations of equal cost.
//!
//! **`seed`** (seed 001's literal rule, kept for reproduction). Keep every configuration whose
//! margin ≥ `best_margin − margin_tolerance × |best_margin|` (relative to the magnitude, because
//! margins can be negative) **and** whose span recall ≥ `best_recall − recall_tolerance`; if none
//! passes both, fall back to the recall test alone and say so ([`Plateau::fallback`]).
//!
//! Under every rule the kept configurations are ranked by tokens per query ascending, then (the
//! `equivalence` and `paired` rules) the higher margin, then the smaller chunk size, then a
//! configuration without a prefix before one with a prefix (an empty prefix, such as a heading path in a document
//! without headings, costs nothing and changes nothing), then by config id; rank 1 is the pick.
//! The paired tests and the non-inferiority classes are computed under every rule, so the report
//! can show them either way.

use serde::{Deserialize, Serialize};

use crate::stats;

/// Rounding allowance for the inclusive comparisons, in metric units.
pub const EPS: f64 = 1e-9;

/// Which rule decides the plateau (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// Paired non-inferiority within δ against the best: kept when non-inferior.
    #[default]
    Equivalence,
    /// Paired sign test against the best, Holm-corrected, plus the recall tolerance.
    Paired,
    /// Seed 001's "within 3% of the best margin" with seed 000's recall tolerance.
    Seed,
}

impl Rule {
    /// The name used by `--rule` and in the report: `equivalence`, `paired` or `seed`.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Equivalence => "equivalence",
            Rule::Paired => "paired",
            Rule::Seed => "seed",
        }
    }
}

impl std::str::FromStr for Rule {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "equivalence" => Ok(Rule::Equivalence),
            "paired" => Ok(Rule::Paired),
            "seed" => Ok(Rule::Seed),
            other => Err(format!(
                "unknown rule {other:?} (expected equivalence, paired or seed)"
            )),
        }
    }
}

/// The settings a rule needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RuleSettings {
    /// Which rule.
    pub rule: Rule,
    /// Seed rule only: relative margin tolerance (0.03 = 3% of |best margin|).
    pub margin_tolerance: f64,
    /// Absolute span-recall tolerance, in recall units (0.02).
    pub recall_tolerance: f64,
    /// Significance level of the Holm-corrected paired tests and of the one-sided
    /// non-inferiority bound (0.05).
    pub alpha: f64,
    /// Non-inferiority margin δ on span recall, in recall units ([`super::DEFAULT_DELTA`]).
    pub delta: f64,
}

/// What the plateau needs to know about one configuration: cost, tie-breakers and its
/// per-question values (one per question, in an order shared by all configurations).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlateauInput<'a> {
    /// Configuration id (last tie-breaker).
    pub config_id: &'a str,
    /// chunk_size in tokenizer units (a tie-breaker).
    pub chunk_size: usize,
    /// Whether it has a contextual prefix other than `none` (a tie-breaker).
    pub has_prefix: bool,
    /// Context tokens per query (the cost being minimised).
    pub tokens_per_query: f64,
    /// Per-question span recall@k, in [0, 1].
    pub span_recall: &'a [f64],
    /// Per-question normalised margin, in [−1, 1].
    pub margin: &'a [f64],
}

/// A configuration against the best, paired on the same questions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct VsBest {
    /// Questions where the best's span recall is higher.
    pub best_better: u64,
    /// Questions where this configuration's span recall is higher.
    pub this_better: u64,
    /// Two-sided exact sign-test p-value.
    pub p_value: f64,
    /// Holm-adjusted p-value across all configurations compared with the best.
    pub p_holm: f64,
    /// The best is significantly better: `p_holm < alpha` and `best_better > this_better`.
    pub significant: bool,
    /// Non-inferiority of this configuration to the best within δ at one-sided α (differences
    /// are this − best), with its class.
    pub ni: stats::NonInferiority,
}

/// The outcome of a rule over a list of configurations (indices refer to that list).
#[derive(Debug, Clone, PartialEq)]
pub struct Plateau {
    /// The rule applied.
    pub rule: Rule,
    /// Index of the best configuration (highest span recall; see the module documentation).
    pub best: usize,
    /// Highest mean margin over all configurations.
    pub best_margin: f64,
    /// Highest macro span recall over all configurations.
    pub best_recall: f64,
    /// Seed rule: `best_margin − margin_tolerance × |best_margin|`; paired rule: `None`.
    pub margin_floor: Option<f64>,
    /// `best_recall − recall_tolerance`.
    pub recall_floor: f64,
    /// Per configuration: macro span recall over the questions.
    pub span_recall: Vec<f64>,
    /// Per configuration: mean margin over the questions.
    pub margin: Vec<f64>,
    /// Per configuration: the paired test against the best (`None` for the best itself).
    pub vs_best: Vec<Option<VsBest>>,
    /// Per configuration: margin ≥ margin floor (always true under the paired rule).
    pub margin_ok: Vec<bool>,
    /// Per configuration: span recall ≥ recall floor.
    pub recall_ok: Vec<bool>,
    /// Per configuration: kept by the rule.
    pub kept: Vec<bool>,
    /// Kept configurations, cheapest first (rank 1 = `order[0]`).
    pub order: Vec<usize>,
    /// Seed rule: no configuration passed both tests and the recall test alone was used.
    pub fallback: bool,
}

/// The order of "cheapest first" between configurations `a` and `b` of `items` with mean margins
/// `margin`, before the last tie-breaker (the id): tokens per query, then (rules `equivalence`
/// and `paired`) the higher margin, then the smaller chunk size, then no prefix before a prefix.
pub fn cost_order(
    items: &[PlateauInput<'_>],
    margin: &[f64],
    rule: Rule,
    a: usize,
    b: usize,
) -> std::cmp::Ordering {
    let (x, y) = (&items[a], &items[b]);
    let by_margin = if rule == Rule::Seed {
        std::cmp::Ordering::Equal
    } else {
        margin[b].total_cmp(&margin[a])
    };
    x.tokens_per_query
        .total_cmp(&y.tokens_per_query)
        .then(by_margin)
        .then(x.chunk_size.cmp(&y.chunk_size))
        .then(x.has_prefix.cmp(&y.has_prefix))
}

impl Plateau {
    /// The kept configurations tied with the pick on every tie-breaker but the id (the pick
    /// first): `items` and the plateau's own margins decide. One element unless two distinct
    /// configurations cost, score and measure exactly alike.
    pub fn tied_winners(&self, items: &[PlateauInput<'_>]) -> Vec<usize> {
        let Some(w) = self.winner() else {
            return Vec::new();
        };
        self.order
            .iter()
            .copied()
            .take_while(|&j| {
                cost_order(items, &self.margin, self.rule, w, j) == std::cmp::Ordering::Equal
            })
            .collect()
    }

    /// The pick (rank 1), if any configuration was given.
    pub fn winner(&self) -> Option<usize> {
        self.order.first().copied()
    }

    /// 1-based rank of configuration `i` among the kept ones.
    pub fn rank_of(&self, i: usize) -> Option<usize> {
        self.order.iter().position(|&j| j == i).map(|p| p + 1)
    }
}

/// Mean of `values` at `idx` (0 for no index).
pub(crate) fn mean_at(values: &[f64], idx: &[usize]) -> f64 {
    if idx.is_empty() {
        0.0
    } else {
        idx.iter().map(|&i| values[i]).sum::<f64>() / idx.len() as f64
    }
}

/// Applies `settings.rule` (see the module documentation) to `items` on the questions at
/// `questions` (indices into each item's per-question vectors). An empty input gives an empty
/// plateau with `best` 0.
///
/// # Panics
/// If an index in `questions` is out of range for an item's vectors.
pub fn plateau(
    items: &[PlateauInput<'_>],
    questions: &[usize],
    settings: &RuleSettings,
) -> Plateau {
    let span_recall: Vec<f64> = items
        .iter()
        .map(|c| mean_at(c.span_recall, questions))
        .collect();
    let margin: Vec<f64> = items.iter().map(|c| mean_at(c.margin, questions)).collect();
    let cheaper = |a: usize, b: usize| {
        cost_order(items, &margin, settings.rule, a, b)
            .then(items[a].config_id.cmp(items[b].config_id))
    };
    let best = (0..items.len())
        .min_by(|&a, &b| {
            span_recall[b]
                .total_cmp(&span_recall[a])
                .then(margin[b].total_cmp(&margin[a]))
                .then(cheaper(a, b))
        })
        .unwrap_or(0);
    let best_margin = margin.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let best_recall = span_recall.get(best).copied().unwrap_or(f64::NEG_INFINITY);
    let recall_floor = best_recall - settings.recall_tolerance;

    // Paired tests against the best, Holm-corrected over the others.
    let pick = |v: &[f64]| -> Vec<f64> { questions.iter().map(|&q| v[q]).collect() };
    let best_values = items
        .get(best)
        .map(|b| pick(b.span_recall))
        .unwrap_or_default();
    let tests: Vec<Option<(stats::McNemar, stats::NonInferiority)>> = items
        .iter()
        .enumerate()
        .map(|(i, c)| {
            (i != best).then(|| {
                let values = pick(c.span_recall);
                (
                    stats::sign_test(&best_values, &values),
                    stats::non_inferiority(&best_values, &values, settings.delta, settings.alpha),
                )
            })
        })
        .collect();
    let raw: Vec<f64> = tests.iter().flatten().map(|(t, _)| t.p_value).collect();
    let mut adjusted = stats::holm(&raw).into_iter();
    let vs_best: Vec<Option<VsBest>> = tests
        .iter()
        .map(|t| {
            t.map(|(t, ni)| {
                let p_holm = adjusted.next().expect("one adjusted p-value per test");
                VsBest {
                    best_better: t.b,
                    this_better: t.c,
                    p_value: t.p_value,
                    p_holm,
                    significant: p_holm < settings.alpha && t.b > t.c,
                    ni,
                }
            })
        })
        .collect();

    let recall_ok: Vec<bool> = span_recall
        .iter()
        .map(|&r| r >= recall_floor - EPS)
        .collect();
    let margin_floor = (settings.rule == Rule::Seed)
        .then(|| best_margin - settings.margin_tolerance * best_margin.abs());
    let margin_ok: Vec<bool> = margin
        .iter()
        .map(|&m| margin_floor.is_none_or(|f| m >= f - EPS))
        .collect();
    let mut fallback = false;
    let kept: Vec<bool> = match settings.rule {
        Rule::Equivalence => vs_best
            .iter()
            .map(|t| t.is_none_or(|t| t.ni.class == stats::Class::NonInferior))
            .collect(),
        Rule::Paired => (0..items.len())
            .map(|i| recall_ok[i] && !vs_best[i].is_some_and(|t| t.significant))
            .collect(),
        Rule::Seed => {
            let both: Vec<bool> = (0..items.len())
                .map(|i| margin_ok[i] && recall_ok[i])
                .collect();
            fallback = !items.is_empty() && !both.contains(&true);
            if fallback { recall_ok.clone() } else { both }
        }
    };
    let mut order: Vec<usize> = (0..items.len()).filter(|&i| kept[i]).collect();
    order.sort_by(|&a, &b| cheaper(a, b));
    Plateau {
        rule: settings.rule,
        best,
        best_margin,
        best_recall,
        margin_floor,
        recall_floor,
        span_recall,
        margin,
        vs_best,
        margin_ok,
        recall_ok,
        kept,
        order,
        fallback,
    }
}

#[cfg(test)]
mod tests;
