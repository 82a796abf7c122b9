//! chunksweep: choose a RAG chunk size by measurement.
