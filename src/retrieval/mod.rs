//! Retrieval: score every chunk of a configuration for a question, then rank with a deterministic
//! tie-break.
//!
//! A retriever returns a dense score vector (one score per chunk, in chunk order). The ranking
//! ([`rank`]) is done here, not by the engine, so equal scores are always ordered the same way:
//! by document order (document id, then position), which is chunk order.

pub mod bm25;
pub mod dense;
pub mod embeddings;
pub mod hybrid;
pub mod rank;

pub use bm25::Bm25Index;
pub use rank::{Ranking, rank_top_k};

use thiserror::Error;

/// Errors from building or querying a retriever.
#[derive(Debug, Error)]
pub enum RetrievalError {
    /// The search engine failed.
    #[error("BM25 index error: {0}")]
    Engine(#[from] tantivy::TantivyError),
}
