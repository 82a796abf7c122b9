//! External chunkers: the user's own chunker (LangChain, LlamaIndex, Chonkie, a script) swept as
//! a strategy of the grid, through a JSON-lines protocol over its stdin and stdout
//! (docs/chunkers.md), or read from precomputed files (`--chunks DIR`).
//!
//! The prepare step runs them once per sweep, before any configuration is scored
//! ([`run::run_chunkers`]): each declared chunker is started once ([`session`]), answers a
//! hello with its versions ([`protocol`]), and is sent every (configuration, document) that its
//! cache ([`cache`]) does not hold; every chunk is then placed in its document ([`locate`]). The
//! result ([`ExternalChunks`]) holds each configuration's placed chunks, which
//! [`crate::chunking::chunk_document`] turns into chunks as it does a built-in strategy's ranges.
//!
//! A chunker runs only because the config file or the flags of this command declare it
//! ([`ChunkerSpec`]): a run's recorded plan never carries one back (see
//! [`crate::plan::Plan::chunkers`]).

pub mod cache;
pub mod error;
pub mod locate;
pub mod name;
pub mod precomputed;
pub mod protocol;
pub mod run;
pub mod session;
pub mod types;

pub use error::{ExternalError, Problem};
pub use locate::{Placed, Placement};
pub use name::ExternalName;
pub use run::{ExternalInputs, identify, run_chunkers};
pub use types::{
    ChunkerSpec, ConfigChunks, ExternalChunks, Identity, PlacementCounts, SizeUnit, config_label,
};
