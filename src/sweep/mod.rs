//! The sweep: every configuration of the grid (strategy × chunk_size × overlap × prefix ×
//! retriever) is chunked, indexed and queried once with every question, and each question is
//! scored at every cut of that one ranked list (top k and each context budget), one
//! configuration at a time, each on every core (rayon). Each configuration is independent and
//! its result is plain data.
//!
//! - [`grid`]: what to sweep and its expansion into configurations;
//! - [`index`]: a configuration's chunks and retriever ([`ConfigIndex`]), also used by the judge;
//! - [`score`]: one configuration, end to end, into its rows;
//! - [`driver`]: every configuration, one at a time;
//! - [`memory`]: freed memory given back between configurations;
//! - [`rows`]: the plain results (sweep.csv, sweep_questions.csv);
//! - [`error`]: what can go wrong.

pub mod driver;
pub mod error;
pub mod grid;
pub mod index;
pub mod memory;
pub mod merge_error;
pub mod rows;
pub mod score;
pub mod shard;

pub use driver::{Grid, run_sweep};
pub use error::SweepError;
pub use grid::{ConfigCut, ConfigSpec, Overlap, RetrieverKind, SweepSpec, expand};
pub use index::{ConfigIndex, RetrievalContext};
pub use rows::{ConfigOutcome, CutOutcome, QuestionRow, StageTimes, SweepRow};
pub use score::{CutScores, EmbedCost, realized_overlap, run_config, score_cuts};

#[cfg(test)]
mod tests;
