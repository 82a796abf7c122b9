//! chunksweep: choose a RAG chunk size by measurement.
//!
//! The modules follow the data flow of the design (see the README's code map):
//! [`config`] and [`plan`] resolve the settings once; [`corpus`] and [`golden`] load the inputs;
//! [`tokenize`] counts tokens; [`chunking`] splits documents; [`prepare`] embeds and writes
//! model contexts before the sweep; [`retrieval`] ranks chunks; [`expand`] turns a ranked list
//! into what is sent (small-to-big retrieval); [`metrics`] scores each question;
//! [`sweep`] runs the grid; [`select`] narrows it with statistics; [`judge`] generates and grades
//! answers; [`report`] writes the run folder; [`pipeline`] runs the stages in order and
//! [`events`] reports their progress; [`check`] compares a chunker with a baseline run through
//! the runs' [`fingerprint`]s. [`llm`] is the only code that talks to a network.
#![warn(missing_docs)]

pub mod budget;
pub mod check;
pub mod chunking;
pub mod config;
pub mod corpus;
pub mod documents;
pub mod error;
pub mod events;
pub mod exit;
pub mod expand;
pub mod files;
pub mod fingerprint;
pub mod golden;
pub mod judge;
pub mod llm;
pub mod metrics;
pub mod numbers;
pub mod pipeline;
pub mod plan;
pub mod prepare;
pub mod prompts;
pub mod report;
pub mod retrieval;
pub mod select;
pub mod stats;
pub mod sweep;
pub mod table;
pub mod template;
pub mod tokenize;
pub mod vector;

pub use error::Error;
pub use exit::ExitClass;
