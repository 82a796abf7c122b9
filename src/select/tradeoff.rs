//! The budget trade-off: what each context budget's best configuration finds, what the next
//! budget adds (a paired test on the same questions), and the smallest budget whose best is as
//! good as the best at the largest budget (non-inferior within δ, [`crate::stats::non_inferiority`]).

use std::collections::HashMap;

use serde::Serialize;

use super::types::{Selection, SelectionSettings};
use crate::stats::{self, Class, McNemar, NonInferiority};
use crate::sweep::QuestionRow;

/// The best configuration at one budget against a larger budget's best, paired on the same
/// questions (differences: this budget's best − the other's).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetComparison {
    /// The larger budget, in tokens per query.
    pub budget_tokens: usize,
    /// Its best configuration.
    pub config_id: String,
    /// Non-inferiority within δ at one-sided α, with the mean difference and its bounds.
    pub ni: NonInferiority,
    /// Exact two-sided sign test (`b`: questions where the larger budget's best is higher).
    pub sign: McNemar,
}

/// One budget's line of the trade-off.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetStep {
    /// The budget, in tokens per query.
    pub budget_tokens: usize,
    /// Its best configuration (highest span recall@k).
    pub best: String,
    /// Its span recall@k.
    pub span_recall: f64,
    /// Its tokens per query.
    pub tokens_per_query: f64,
    /// Against the next larger budget's best (`None` at the largest budget).
    pub vs_next: Option<BudgetComparison>,
    /// Against the largest budget's best (`None` at the largest budget).
    pub vs_largest: Option<BudgetComparison>,
}

/// Every budget's best, smallest budget first, and the recommendation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tradeoff {
    /// One line per budget, smallest first.
    pub steps: Vec<BudgetStep>,
    /// The smallest budget whose best is non-inferior within δ to the best at the largest
    /// budget (the largest budget when none is).
    pub recommended: usize,
}

impl Tradeoff {
    /// The line of budget `budget_tokens`, if it is one of the sweep's.
    pub fn step(&self, budget_tokens: usize) -> Option<&BudgetStep> {
        self.steps.iter().find(|s| s.budget_tokens == budget_tokens)
    }
}

/// The trade-off over the budget cuts of `selections` (`None` with fewer than two budgets),
/// from the per-question span recall of `questions` at δ and α of `settings`.
pub fn tradeoff(
    selections: &[Selection],
    questions: &[QuestionRow],
    settings: &SelectionSettings,
) -> Option<Tradeoff> {
    let mut budgets: Vec<&Selection> = selections
        .iter()
        .filter(|s| s.budget_tokens().is_some())
        .collect();
    if budgets.len() < 2 {
        return None;
    }
    budgets.sort_by_key(|s| s.budget_tokens());
    let mut recall: HashMap<&str, HashMap<&str, f64>> = HashMap::new();
    for q in questions {
        recall
            .entry(q.config_id.as_str())
            .or_default()
            .insert(q.question_id.as_str(), q.span_recall);
    }
    let largest = budgets[budgets.len() - 1];
    let mut ids: Vec<&str> = recall
        .get(largest.best().config_id.as_str())
        .map(|m| m.keys().copied().collect())
        .unwrap_or_default();
    ids.sort_unstable();
    let column = |config: &str| -> Vec<f64> {
        let per = recall.get(config);
        ids.iter()
            .map(|q| per.and_then(|m| m.get(q)).copied().unwrap_or(0.0))
            .collect()
    };
    let compare = |this: &Selection, other: &Selection| {
        let (a, b) = (
            column(&other.best().config_id),
            column(&this.best().config_id),
        );
        BudgetComparison {
            budget_tokens: other.budget_tokens().unwrap_or(0),
            config_id: other.best().config_id.clone(),
            ni: stats::non_inferiority(&a, &b, settings.delta, settings.alpha),
            sign: stats::sign_test(&a, &b),
        }
    };
    let steps: Vec<BudgetStep> = budgets
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let last = i + 1 == budgets.len();
            BudgetStep {
                budget_tokens: s.budget_tokens().unwrap_or(0),
                best: s.best().config_id.clone(),
                span_recall: s.best().span_recall,
                tokens_per_query: s.best().tokens_per_query,
                vs_next: (!last).then(|| compare(s, budgets[i + 1])),
                vs_largest: (!last).then(|| compare(s, largest)),
            }
        })
        .collect();
    let recommended = steps
        .iter()
        .find(|s| {
            s.vs_largest
                .as_ref()
                .is_none_or(|c| c.ni.class == Class::NonInferior)
        })
        .map_or(0, |s| s.budget_tokens);
    Some(Tradeoff { steps, recommended })
}
