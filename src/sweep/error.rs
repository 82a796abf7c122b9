//! Errors of the sweep, each with its exit class.

use thiserror::Error;

use crate::chunking::enrich::EnrichError;
use crate::chunking::{ChunkError, Strategy};
use crate::exit::ExitClass;
use crate::retrieval::RetrievalError;
use crate::retrieval::dense::DenseError;
use crate::retrieval::embeddings::EmbeddingError;

/// Errors of the sweep.
#[derive(Debug, Error)]
pub enum SweepError {
    /// A configuration's chunking parameters are invalid.
    #[error("{strategy} at chunk_size {size}: {source}")]
    Chunk {
        /// The strategy.
        strategy: Strategy,
        /// The size.
        size: usize,
        /// What is wrong.
        #[source]
        source: ChunkError,
    },
    /// Configurations of the grid whose chunking parameters are invalid, every one formatted as
    /// [`SweepError::Chunk`], in grid order.
    #[error("{} invalid configuration(s) in the grid:\n  {}", .0.len(), .0.join("\n  "))]
    InvalidConfigs(Vec<String>),
    /// top_k is zero.
    #[error("top_k (--k) must be at least 1")]
    ZeroK,
    /// Nothing to sweep.
    #[error("nothing to sweep: give at least one strategy and one size")]
    EmptyGrid,
    /// An overlap ratio outside [0, 1).
    #[error("overlap ratio {0} must be at least 0 and below 1 (or give a whole token count)")]
    BadOverlap(f64),
    /// The golden set has no question.
    #[error("the golden set has no question to score")]
    NoQuestions,
    /// No retriever to sweep, unusable hybrid, semantic or BM25 settings, or a retrieval
    /// context made for another corpus or analyzer.
    #[error("{0}")]
    Settings(String),
    /// An embedding is missing or unusable.
    #[error(transparent)]
    Embed(#[from] EmbeddingError),
    /// The dense index failed.
    #[error(transparent)]
    Dense(#[from] DenseError),
    /// A retriever could not answer a query.
    #[error(transparent)]
    Retrieval(#[from] RetrievalError),
    /// A prefix could not be made (an `llm_context` chunk without its context).
    #[error(transparent)]
    Enrich(#[from] EnrichError),
    /// A configuration id that no row of the sweep has.
    #[error("configuration {0} is not one of the sweep's rows")]
    UnknownConfig(String),
    /// No prefix to sweep.
    #[error(
        "no prefix to sweep: give at least one (none, title, heading_path, title_heading, llm_context)"
    )]
    NoPrefix,
}

impl SweepError {
    /// Usage (2) for what the user's grid or inputs got wrong, failure (1) for the engine.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            SweepError::Chunk { .. }
            | SweepError::InvalidConfigs(_)
            | SweepError::ZeroK
            | SweepError::EmptyGrid
            | SweepError::BadOverlap(_)
            | SweepError::NoQuestions
            | SweepError::Settings(_)
            | SweepError::NoPrefix => ExitClass::Usage,
            SweepError::Embed(e) | SweepError::Retrieval(RetrievalError::Embed(e)) => {
                e.exit_class()
            }
            SweepError::Enrich(_)
            | SweepError::Dense(_)
            | SweepError::Retrieval(_)
            | SweepError::UnknownConfig(_) => ExitClass::Failure,
        }
    }
}
