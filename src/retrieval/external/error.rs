//! What can go wrong with an external retriever ([`RetrieverProblem`]) and where it happened
//! ([`RetrieverError`]: the retriever, the configuration, the question).

use thiserror::Error;

use crate::chunking::external::Problem;
use crate::exit::ExitClass;

/// What went wrong.
#[derive(Debug, Clone, PartialEq)]
pub enum RetrieverProblem {
    /// The process: it could not start, hung, exited early or non-zero, wrote a line that is
    /// not the protocol's, or wrote past its last reply (as for an external chunker).
    Process(Problem),
    /// A reply of the protocol's shape that cannot be used.
    BadReply {
        /// The line, shortened.
        line: String,
        /// What is wrong with it.
        why: String,
    },
    /// The retriever replied with an error of its own (its database is down or went away, or
    /// it needs vectors and the run has no embeddings model).
    Reported(String),
    /// A configuration's chunks or vectors cannot be had (a vector the embedding step did not
    /// make).
    Inputs(String),
    /// The retriever cache failed.
    Cache(String),
}

impl std::fmt::Display for RetrieverProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RetrieverProblem::Process(p) => write!(f, "{p}"),
            RetrieverProblem::BadReply { line, why } => write!(
                f,
                "unusable reply {line:?}: {why} (the retriever's reply must follow docs/retrievers.md)"
            ),
            RetrieverProblem::Reported(message) => write!(
                f,
                "it reported an error: {message} (once what it names is fixed, such as its database started, run the same command again: the configurations already answered are cached)"
            ),
            RetrieverProblem::Inputs(why) => write!(f, "{why}"),
            RetrieverProblem::Cache(why) => write!(f, "the retriever cache: {why}"),
        }
    }
}

/// An external retriever's problem and where it happened. Nothing of a configuration is
/// scored unless every question of it was answered.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("retriever {retriever}{}: {problem}", where_text(.config, .question))]
pub struct RetrieverError {
    /// The name the retriever was declared under.
    pub retriever: String,
    /// The configuration being indexed or queried, if one was.
    pub config: Option<String>,
    /// The question being answered, if one was.
    pub question: Option<String>,
    /// What went wrong.
    pub problem: Box<RetrieverProblem>,
}

fn where_text(config: &Option<String>, question: &Option<String>) -> String {
    let mut s = String::new();
    if let Some(c) = config {
        s += &format!(", configuration {c}");
    }
    if let Some(q) = question {
        s += &format!(", question {q:?}");
    }
    s
}

impl RetrieverError {
    /// A problem of `retriever` outside any configuration (its start, its hello, its exit).
    pub fn new(retriever: &str, problem: RetrieverProblem) -> RetrieverError {
        RetrieverError {
            retriever: retriever.to_string(),
            config: None,
            question: None,
            problem: Box::new(problem),
        }
    }

    /// A process problem of `retriever` outside any configuration.
    pub fn process(retriever: &str, problem: Problem) -> RetrieverError {
        RetrieverError::new(retriever, RetrieverProblem::Process(problem))
    }

    /// Failure (1) when its database or the cache failed, or a vector is missing: the same
    /// command may succeed once that is fixed; usage (2) for the retriever's own code (it
    /// cannot start, hangs, crashes, or breaks the protocol), as for an external chunker.
    pub fn exit_class(&self) -> ExitClass {
        match *self.problem {
            RetrieverProblem::Reported(_)
            | RetrieverProblem::Cache(_)
            | RetrieverProblem::Inputs(_) => ExitClass::Failure,
            RetrieverProblem::Process(_) | RetrieverProblem::BadReply { .. } => ExitClass::Usage,
        }
    }
}
