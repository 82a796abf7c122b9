//! The library's one error type: every stage's error, each with its exit class
//! ([`crate::exit::ExitClass`]); the binary maps the class to the process's exit code.

use thiserror::Error;

use crate::exit::ExitClass;

use crate::check::CheckError;
use crate::config::ConfigError;
use crate::corpus::CorpusError;
use crate::golden::GoldenError;
use crate::golden::draft::DraftError;
use crate::judge::JudgeError;
use crate::prepare::PrepareError;
use crate::prompts::ExportError;
use crate::report::ReportError;
use crate::report::read::ReadError;
use crate::select::SelectError;
use crate::sweep::SweepError;
use crate::sweep::merge_error::MergeError;
use crate::sweep::shard::ShardError;

/// Any error of the pipeline, by stage.
#[derive(Debug, Error)]
pub enum Error {
    /// The configuration file or the flags.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Reading the corpus.
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    /// Reading or resolving the golden set.
    #[error(transparent)]
    Golden(#[from] GoldenError),
    /// Drafting a golden set (`chunksweep golden draft`).
    #[error(transparent)]
    Draft(#[from] DraftError),
    /// The prepare step (embeddings, model-written contexts).
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    /// The sweep.
    #[error(transparent)]
    Sweep(#[from] SweepError),
    /// The selection.
    #[error(transparent)]
    Select(#[from] SelectError),
    /// The judge stage.
    #[error(transparent)]
    Judge(#[from] JudgeError),
    /// Writing the run folder.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// Reading a run folder back.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// Writing the built-in prompt templates out.
    #[error(transparent)]
    Prompts(#[from] ExportError),
    /// `chunksweep check`'s comparison with its baseline.
    #[error(transparent)]
    Check(#[from] CheckError),
    /// `--shard` or the environment it reads is wrong, or the grid cannot be split.
    #[error(transparent)]
    Shard(#[from] ShardError),
    /// `chunksweep merge` refused the shards.
    #[error(transparent)]
    Merge(#[from] MergeError),
    /// `chunksweep extract`'s output.
    #[error(transparent)]
    Extract(#[from] crate::documents::written::ExtractError),
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

impl Error {
    /// The exit class of the stage's error.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            Error::Config(e) => e.exit_class(),
            Error::Corpus(e) => e.exit_class(),
            Error::Golden(e) => e.exit_class(),
            Error::Draft(e) => e.exit_class(),
            Error::Prepare(e) => e.exit_class(),
            Error::Sweep(e) => e.exit_class(),
            Error::Select(e) => e.exit_class(),
            Error::Judge(e) => e.exit_class(),
            Error::Report(e) => e.exit_class(),
            Error::Read(e) => e.exit_class(),
            Error::Prompts(e) => e.exit_class(),
            Error::Check(e) => e.exit_class(),
            Error::Shard(e) => e.exit_class(),
            Error::Merge(e) => e.exit_class(),
            Error::Extract(e) => e.exit_class(),
            Error::Runtime(_) => ExitClass::Failure,
        }
    }
}
