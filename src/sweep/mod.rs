//! The sweep: every configuration of the grid (strategy × chunk_size × overlap × prefix ×
//! retriever × top_k) is chunked, indexed, queried with every question and scored, in parallel
//! across configurations (rayon). Each configuration is independent and its result is plain data.
//!
//! - [`grid`]: what to sweep and its expansion into configurations;
//! - [`index`]: a configuration's chunks and retriever ([`ConfigIndex`]), also used by the judge;
//! - [`score`]: one configuration, end to end, into its rows;
//! - [`driver`]: every configuration in parallel;
//! - [`rows`]: the plain results (sweep.csv, sweep_questions.csv);
//! - [`error`]: what can go wrong.

pub mod driver;
pub mod error;
pub mod grid;
pub mod index;
pub mod rows;
pub mod score;

pub use driver::run_sweep;
pub use error::SweepError;
pub use grid::{ConfigSpec, Overlap, RetrieverKind, SweepSpec, expand};
pub use index::{ConfigIndex, RetrievalContext};
pub use rows::{ConfigOutcome, QuestionRow, StageTimes, SweepRow};
pub use score::{EmbedCost, realized_overlap, run_config};

#[cfg(test)]
mod tests;
