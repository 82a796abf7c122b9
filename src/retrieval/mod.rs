//! Retrieval: score every chunk of a configuration for a question, then rank with a deterministic
//! tie-break.
//!
//! A retriever returns a dense score vector (one `f64` score per chunk, in chunk order). The
//! ranking ([`rank`]) is done here, not by the engine, so equal scores are always ordered the same
//! way: by document order (document id, then position), which is chunk order. BM25 reads the
//! corpus analyzed once ([`analyze`]).

pub mod analyze;
pub mod bm25;
pub mod dense;
pub mod embeddings;
pub mod hybrid;
pub mod rank;

pub use analyze::{AnalyzedCorpus, AnalyzerKind, AnalyzerSettings};
pub use bm25::{Bm25Index, Bm25Settings};
pub use rank::{Ranking, rank_top_k};
