//! The cost budget of the commands that send paid calls (`sweep`, `run`, `check --judge`,
//! `judge-check`, `golden draft`): the `--max-cost` flag ([`MaxCostFlag`], flattened into each), the estimate
//! of what the calls will cost ([`CostEstimate`]), and the refusal of an estimate the budget
//! cannot hold ([`refusal`]). Each command words the refusal in its own error (what to do
//! differs), from the one [`Refusal`].

use serde::Serialize;

/// `--max-cost`, declared once: every command with a budget flattens it.
#[derive(Debug, Clone, Copy, Default, PartialEq, clap::Args)]
pub struct MaxCostFlag {
    /// Spending cap in USD over the paid calls of the command: refuse before sending anything
    /// when the estimate (plus any spend already recorded in the run folder) passes it or a
    /// model has no price.
    #[arg(long = "max-cost", value_name = "USD", value_parser = max_cost_usd, allow_negative_numbers = true)]
    pub max_cost: Option<f64>,
}

/// `--max-cost`'s value: a finite number of USD, 0 or more (a NaN compares false with
/// everything, so `--max-cost nan` would allow any spend).
///
/// # Errors
/// The range, for clap to print after the flag's name and value.
pub fn max_cost_usd(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err("must be a finite number of USD, 0 or more (e.g. 2.5)".into()),
    }
}

/// Calls, tokens and cost expected before anything is sent.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct CostEstimate {
    /// Chat calls.
    pub calls: usize,
    /// Prompt tokens (estimated with cl100k_base counts).
    pub prompt_tokens: u64,
    /// Completion tokens, at the caps: an upper bound.
    pub completion_tokens: u64,
    /// Cost in USD at list prices (at the batch price in batch mode); `None` when a model has
    /// no price.
    pub cost_usd: Option<f64>,
}

impl CostEstimate {
    /// Adds `more` (calls, tokens, cost; no cost when either has none).
    pub fn add(&mut self, more: &CostEstimate) {
        self.calls += more.calls;
        self.prompt_tokens += more.prompt_tokens;
        self.completion_tokens += more.completion_tokens;
        self.cost_usd = self.cost_usd.zip(more.cost_usd).map(|(a, b)| a + b);
    }

    /// The cost as shown before the first call: `$0.0123`, or `unknown (<no_price>)`.
    pub fn cost_text(&self, no_price: &str) -> String {
        self.cost_usd
            .map(|c| format!("${c:.4}"))
            .unwrap_or_else(|| format!("unknown ({no_price})"))
    }
}

/// Why a budget refuses an estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Refusal {
    /// The estimate has no price, so the spend cannot be held to the budget.
    Unpriced {
        /// The budget, USD.
        max: f64,
    },
    /// The estimate plus the spend already recorded passes the budget.
    Over {
        /// The estimate, USD.
        estimate: f64,
        /// Spend already recorded, USD.
        spent: f64,
        /// The budget, USD.
        max: f64,
    },
}

/// The refusal of `estimate` under the budget `max_usd` (`--max-cost`) with `spent_usd` already
/// recorded, if any: none without a budget.
pub fn refusal(max_usd: Option<f64>, estimate: &CostEstimate, spent_usd: f64) -> Option<Refusal> {
    let max = max_usd?;
    match estimate.cost_usd {
        None => Some(Refusal::Unpriced { max }),
        Some(c) if spent_usd + c > max => Some(Refusal::Over {
            estimate: c,
            spent: spent_usd,
            max,
        }),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn costing(c: Option<f64>) -> CostEstimate {
        CostEstimate {
            calls: 2,
            prompt_tokens: 10,
            completion_tokens: 5,
            cost_usd: c,
        }
    }

    #[test]
    fn a_budget_refuses_an_unpriced_estimate_and_one_it_cannot_hold() {
        assert_eq!(refusal(None, &costing(None), 9.0), None);
        assert_eq!(
            refusal(Some(1.0), &costing(None), 0.0),
            Some(Refusal::Unpriced { max: 1.0 })
        );
        assert_eq!(refusal(Some(1.0), &costing(Some(1.0)), 0.0), None);
        assert_eq!(
            refusal(Some(1.0), &costing(Some(0.6)), 0.5),
            Some(Refusal::Over {
                estimate: 0.6,
                spent: 0.5,
                max: 1.0
            })
        );
    }

    #[test]
    fn nan_infinite_and_negative_budgets_are_refused() {
        for bad in ["nan", "NaN", "inf", "-inf", "-0.5", "abc", ""] {
            assert!(max_cost_usd(bad).is_err(), "{bad}");
        }
        assert_eq!(max_cost_usd("0"), Ok(0.0));
        assert_eq!(max_cost_usd("2.5"), Ok(2.5));
    }

    #[test]
    fn estimates_add_up_and_lose_their_cost_with_an_unpriced_one() {
        let mut e = costing(Some(1.0));
        e.add(&costing(Some(0.5)));
        assert_eq!((e.calls, e.prompt_tokens, e.cost_usd), (4, 20, Some(1.5)));
        e.add(&costing(None));
        assert_eq!(e.cost_usd, None);
        assert_eq!(e.cost_text("no price"), "unknown (no price)");
    }
}
