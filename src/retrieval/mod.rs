//! Retrieval: rank a configuration's chunks for a question.
//!
//! Every retriever implements [`Retriever`] ([`retriever`] states the contract and what each
//! metric reads of a ranked list). The built-in ones (BM25, dense, hybrid) score every chunk;
//! their ranking ([`rank`]) is done here, not by the engine, so equal scores are always ordered
//! the same way: by document order (document id, then position), which is chunk order. BM25
//! reads the corpus analyzed once ([`analyze`]).

pub mod analyze;
pub mod bm25;
pub mod dense;
pub mod embeddings;
pub mod engines;
pub mod external;
pub mod hybrid;
pub mod listed;
mod postings;
pub mod rank;
pub mod rerank;
pub mod retriever;

pub use analyze::{AnalyzedCorpus, AnalyzerKind, AnalyzerSettings};
pub use bm25::{Bm25Error, Bm25Index, Bm25Settings};
pub use rank::{Ranking, rank_top_k};
pub use retriever::{Hit, MarginScale, Ranked, RetrievalError, Retriever};
