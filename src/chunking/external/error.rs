//! What can go wrong with an external chunker: a [`Problem`], and where it happened
//! ([`ExternalError`]: the chunker, the configuration, the document).

use thiserror::Error;

use super::locate::PlaceError;
use super::protocol::LineProblem;
use crate::exit::ExitClass;

/// What went wrong.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// The command could not be started (not found, not executable).
    Start(String),
    /// No line came within the timeout; the chunker and its children were ended.
    Hung {
        /// The timeout, seconds.
        timeout_s: f64,
        /// What was awaited.
        expected: String,
    },
    /// Its stdout closed before the line awaited.
    Exited {
        /// Its exit status.
        status: String,
        /// What was awaited.
        expected: String,
        /// Its last stderr lines.
        stderr: Vec<String>,
    },
    /// It exited non-zero after its last response.
    Failed {
        /// Its exit status.
        status: String,
        /// Its last stderr lines.
        stderr: Vec<String>,
    },
    /// A line that is not JSON or not the protocol's.
    BadLine {
        /// The line, shortened.
        line: String,
        /// What is wrong with it.
        problem: LineProblem,
        /// What was awaited.
        expected: String,
    },
    /// A response for another document than the one asked (`given` was answered before when
    /// `twice`).
    WrongDocument {
        /// The document whose response was due.
        expected: String,
        /// The document the response names.
        given: String,
        /// Whether `given` was already answered for this configuration.
        twice: bool,
    },
    /// Output after the last response.
    ExtraLines(String),
    /// A chunk that cannot be used, by its position (1-based) in the document's response.
    Chunk {
        /// Its position, 1-based.
        position: usize,
        /// Why.
        problem: PlaceError,
    },
    /// More chunks were found nowhere in their documents than `max_unlocated_share` allows.
    Unlocated {
        /// Chunks found nowhere.
        unlocated: usize,
        /// The configuration's chunks.
        chunks: usize,
        /// The first one's document and position (1-based).
        first: (String, usize),
        /// The share allowed.
        allowed: f64,
    },
    /// A configuration names a chunker that this command does not declare.
    NotDeclared,
    /// A precomputed chunks file or folder is unusable.
    Precomputed(String),
    /// The chunker cache failed.
    Cache(String),
    /// Reading the chunker's output failed.
    Io(String),
}

fn tail(stderr: &[String]) -> String {
    match stderr.is_empty() {
        true => "; it wrote nothing to stderr".into(),
        false => format!("; its last stderr lines:\n    {}", stderr.join("\n    ")),
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Start(why) => write!(f, "{why}"),
            Problem::Hung {
                timeout_s,
                expected,
            } => write!(
                f,
                "no line for {timeout_s} s while waiting for {expected}: ended it and its children (a hang? raise timeout_s if it is only slow; the command must flush each line it writes)"
            ),
            Problem::Exited {
                status,
                expected,
                stderr,
            } => write!(
                f,
                "its output ended before {expected} ({status}){}",
                tail(stderr)
            ),
            Problem::Failed { status, stderr } => {
                write!(
                    f,
                    "it failed after its last response ({status}){}",
                    tail(stderr)
                )
            }
            Problem::BadLine {
                line,
                problem,
                expected,
            } => {
                write!(f, "the line {line:?} is {problem}; expected {expected}")
            }
            Problem::WrongDocument {
                expected,
                given,
                twice: true,
            } => write!(
                f,
                "the document {given:?} came twice; the response due was for {expected:?} (one response per request, in request order)"
            ),
            Problem::WrongDocument {
                expected,
                given,
                twice: false,
            } => write!(
                f,
                "a response for {given:?} where the one for {expected:?} was due (one response per request, in request order)"
            ),
            Problem::ExtraLines(line) => write!(
                f,
                "it wrote {line:?} after its last response (a document answered twice?)"
            ),
            Problem::Chunk { position, problem } => write!(f, "chunk {position} {problem}"),
            Problem::Unlocated {
                unlocated,
                chunks,
                first,
                allowed,
            } => write!(
                f,
                "{unlocated} of {chunks} chunks are nowhere in their documents (the first: chunk {} of {:?}), more than max_unlocated_share = {allowed} allows: does the chunker rewrite the text?",
                first.1, first.0
            ),
            Problem::NotDeclared => write!(
                f,
                "no chunker of this name is declared for this command: declare it in the config file's [[chunkers]] or with --chunker NAME=COMMAND, or give its chunks with --chunks DIR (a run folder never supplies a command)"
            ),
            Problem::Precomputed(why) => write!(f, "{why}"),
            Problem::Cache(why) => write!(f, "the chunker cache: {why}"),
            Problem::Io(why) => write!(f, "reading its output: {why}"),
        }
    }
}

/// An external chunker's problem and where it happened.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("chunker {chunker}{}: {problem}", where_text(.config, .document))]
pub struct ExternalError {
    /// The strategy name the chunker was declared under.
    pub chunker: String,
    /// The configuration (`lc-recursive-256-o38`), when one was being chunked.
    pub config: Option<String>,
    /// The document, when one was being chunked.
    pub document: Option<String>,
    /// What went wrong.
    pub problem: Box<Problem>,
}

fn where_text(config: &Option<String>, document: &Option<String>) -> String {
    let mut s = String::new();
    if let Some(c) = config {
        s += &format!(", configuration {c}");
    }
    if let Some(d) = document {
        s += &format!(", document {d:?}");
    }
    s
}

impl ExternalError {
    /// A problem of `chunker` outside any configuration (its start, its hello).
    pub fn new(chunker: &str, problem: Problem) -> ExternalError {
        ExternalError {
            chunker: chunker.to_string(),
            config: None,
            document: None,
            problem: Box::new(problem),
        }
    }

    /// Usage (2): the chunker is the user's code or input, to fix there; failure (1) for the
    /// cache.
    pub fn exit_class(&self) -> ExitClass {
        match *self.problem {
            Problem::Cache(_) => ExitClass::Failure,
            _ => ExitClass::Usage,
        }
    }
}
