//! `--max-cost` over the prepare step's paid calls (embedding requests, context calls, rerank
//! requests): the cap ([`SpendCap`]) and its refusals ([`SpendCapError`]). The estimate of what
//! a sweep would send is refused in [`crate::prepare::sweep_budget`], before anything is sent:
//! no step refuses half-way.

use thiserror::Error;

/// The budget of a sweep's prepare step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpendCap {
    /// The cap, USD (`--max-cost`, `[judge] max_cost_usd`).
    pub max_usd: f64,
    /// Spend already recorded in the run folder's calls.csv (the judge's, of earlier runs into
    /// it), USD. The sweep's own call files are rewritten by this sweep, so they do not count.
    pub spent_usd: f64,
}

/// A sweep refused under `--max-cost`, before it sent anything.
#[derive(Debug, Error)]
pub enum SpendCapError {
    /// The estimate plus the spend already recorded passes the cap.
    #[error(
        "the sweep is estimated at ${estimate:.4} ({what}), and ${spent:.4} is already spent in this folder: more than --max-cost ${max:.4}; nothing was sent (raise --max-cost, or sweep fewer configurations or questions: cached calls cost nothing)"
    )]
    Over {
        /// Estimated cost of the calls the caches do not answer, USD.
        estimate: f64,
        /// Spend recorded in the folder's calls.csv, USD.
        spent: f64,
        /// The cap, USD.
        max: f64,
        /// The calls counted: `3 embedding request(s), 4 rerank request(s)`.
        what: String,
    },
    /// `run`: the sweep's estimate, then the judge stage's estimate at the largest context (its
    /// candidates are chosen by the sweep), plus the spend already recorded, pass the cap.
    #[error(
        "the sweep is estimated at ${sweep:.4} ({what}) and would spend first, then the judge stage at about ${judge:.4} ({bound}); with ${spent:.4} already spent in this folder, that is more than --max-cost ${max:.4}; nothing was sent (raise --max-cost, or sweep fewer configurations, or use fewer candidates or questions: cached calls cost nothing)"
    )]
    RunOver {
        /// Estimated cost of the sweep's calls the caches do not answer, USD.
        sweep: f64,
        /// The sweep's calls counted: `15 embedding request(s)`.
        what: String,
        /// The judge stage's estimate at the largest context, USD.
        judge: f64,
        /// How the judge stage's estimate stands in for the candidates.
        bound: String,
        /// Spend recorded in the folder's calls.csv, USD.
        spent: f64,
        /// The cap, USD.
        max: f64,
    },
    /// A model the sweep would call has no price.
    #[error(
        "--max-cost ${max:.4} needs prices to hold: set {keys} for {models} in [llm.models.<name>] (or [llm.defaults]); nothing was sent"
    )]
    Unpriced {
        /// The cap, USD.
        max: f64,
        /// The models without a price.
        models: String,
        /// The price keys to set.
        keys: String,
    },
    /// Some calls cannot be counted before others are answered, so the cap cannot be held.
    #[error(
        "--max-cost ${max:.4} cannot be held: {what} cannot be counted before other calls are answered (the calls counted are estimated at {counted}); nothing was sent (run without --max-cost; `run --dry-run` shows what can be counted)"
    )]
    Uncounted {
        /// The cap, USD.
        max: f64,
        /// What cannot be counted.
        what: String,
        /// The estimate of what was counted: `$0.0012`.
        counted: String,
    },
}
