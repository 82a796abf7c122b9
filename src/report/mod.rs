//! Run outputs: the run folder writer ([`run_dir`]) through which every file is written and
//! recorded in the manifest, the Markdown report, the figure, and reading a run folder back.
//! Reports render plain values that earlier stages made; they compute no statistics.

pub mod error;
pub mod lock;
pub mod manifest;
pub mod markdown;
pub mod plot;
pub mod prefix;
pub mod read;
pub mod run_dir;

pub use error::ReportError;
