//! Run outputs: the run folder writer ([`run_dir`]) through which every file is written and
//! recorded in the manifest, and the reports of a run, each rendered from one typed
//! [`outcome::Outcome`] built once: report.md ([`markdown`]), report.html ([`html`]), the
//! figures ([`plot`]) and the CSVs of the selection; reading a run folder back ([`read`]).
//! Reports render plain values that earlier stages made; they compute no statistics.

pub mod chunkers;
pub mod doc;
pub mod drafts;
pub mod drill;
pub mod engines;
pub mod error;
pub mod expand;
pub mod golden_review;
pub mod headline;
pub mod html;
pub mod judge_section;
pub mod lock;
pub mod manifest;
pub mod markdown;
pub mod outcome;
pub mod page_evidence;
pub mod paired_text;
pub mod plot;
pub mod prefix;
pub mod read;
pub mod rerank;
pub mod review;
pub mod run_dir;
pub mod sections;
pub mod sentence;
#[cfg(test)]
mod sentence_guard;
pub mod texts;

pub use error::ReportError;
