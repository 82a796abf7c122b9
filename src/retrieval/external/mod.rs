//! External retrievers: the user's own search engine (a vector database such as Chroma,
//! Qdrant or pgvector, Elasticsearch, a script) as a retriever of the grid, by the name it is
//! declared under (`[[retrievers]]`, docs/retrievers.md), through a JSON-lines protocol over its
//! stdin and stdout ([`protocol`]).
//!
//! The prepare step runs each declared retriever once per sweep ([`crate::prepare::retrievers`]):
//! started as an external chunker is ([`crate::chunking::external::session`]: its own process
//! group, a timeout per line, ended with its children when it hangs or fails), greeted, then
//! for each configuration that names it sent the configuration's chunks to index (text, and the
//! vector chunksweep embedded) and every question (text and vector) to answer with a top-n of
//! chunk indices and scores. The answers are checked whole ([`protocol::check_hits`]) and kept
//! as lists ([`crate::retrieval::listed`]) that the configuration's retriever reads: a top-n
//! engine under the contract of [`super::retriever`]. A configuration's answers are cached once
//! all of its questions are answered, so a rerun after a failure sends only the rest.
//!
//! A retriever runs only because the config file of this command declares it: a run's recorded
//! plan never carries one back.

pub mod error;
pub mod protocol;
pub mod spec;

pub use error::{RetrieverError, RetrieverProblem};
pub use spec::{RetrieverIdentity, RetrieverSpec};
