//! chunksweep: choose a RAG chunk size by measurement.
//!
//! The stages follow the data flow of the design: [`corpus`] and [`golden`] load the inputs,
//! [`tokenize`] counts tokens, [`chunking`] splits documents, [`retrieval`] ranks chunks,
//! [`metrics`] scores each question, [`sweep`] runs the grid of configurations, and [`report`]
//! writes the CSVs and the manifest. [`llm`] is the only code that talks to a network.
#![warn(missing_docs)]

pub mod chunking;
pub mod config;
pub mod corpus;
pub mod golden;
pub mod judge;
pub mod llm;
pub mod llm_context;
pub mod metrics;
pub mod prompts;
pub mod report;
pub mod retrieval;
pub mod select;
pub mod stats;
pub mod sweep;
pub mod sweep_embed;
pub mod tokenize;
