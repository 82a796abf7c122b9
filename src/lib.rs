//! chunksweep: choose a RAG chunk size by measurement.

pub mod llm;
