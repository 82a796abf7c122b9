//! The golden set: questions with evidence spans, resolved against a corpus.
//!
//! Two input formats are read ([`jsonl`] is the native one, [`chroma`] is the format of Chroma's
//! chunking-evaluation data). Both produce [`RawQuestion`]s with the line they came from; [`resolve`]
//! turns each evidence item into every acceptable location (document, code-point range) and
//! collects every [`Problem`] instead of stopping at the first, so `chunksweep validate` can list
//! them all.

pub mod chroma;
pub mod draft;
pub mod jsonl;
pub mod out_path;
mod resolve;
pub mod section;
mod types;

use std::path::Path;

use crate::corpus::Corpus;
pub use resolve::{Finder, page_location, resolve};
pub use types::{
    EvidenceSpan, GoldenError, GoldenFormat, GoldenSet, Location, Origin, Problem, ProblemKind,
    Question, RawEvidence, RawQuestion, Read, Severity,
};

/// Reads a golden file in either format, going on past malformed lines.
///
/// # Errors
/// [`GoldenError::Io`] or [`GoldenError::Parse`] (with the line) when the file cannot be read at
/// all (unreadable, not UTF-8, no CSV header), and [`GoldenError::Empty`] when it holds neither a
/// question nor a malformed line.
pub fn read_raw(path: &Path, format: GoldenFormat) -> Result<Read, GoldenError> {
    let (raw, problems) = match format {
        GoldenFormat::Jsonl => jsonl::read(path)?,
        GoldenFormat::Chroma => chroma::read(path)?,
    };
    if raw.is_empty() && problems.is_empty() {
        return Err(GoldenError::Empty(path.to_path_buf()));
    }
    Ok((raw, problems))
}

/// Reads and resolves a golden set, returning it with every problem found (malformed lines and
/// warnings included), in line order.
///
/// # Errors
/// As [`read_raw`]; problems with single entries are returned, not raised (see [`load`]).
pub fn load_with_problems(
    path: &Path,
    format: GoldenFormat,
    corpus: &Corpus,
) -> Result<(GoldenSet, Vec<Problem>), GoldenError> {
    let (raw, mut problems) = read_raw(path, format)?;
    let (set, resolved) = resolve(path, &raw, corpus);
    problems.extend(resolved);
    problems.sort_by_key(|p| p.line);
    Ok((set, problems))
}

/// Reads and resolves a golden set, refusing it when any entry has an error-level problem.
///
/// # Errors
/// As [`read_raw`], and [`GoldenError::Invalid`] listing every error-level problem (the first
/// [`GoldenError::LISTED`] and the count when there are more).
pub fn load(path: &Path, format: GoldenFormat, corpus: &Corpus) -> Result<GoldenSet, GoldenError> {
    let (set, problems) = load_with_problems(path, format, corpus)?;
    let errors: Vec<&Problem> = problems
        .iter()
        .filter(|p| p.kind.severity() == Severity::Error)
        .collect();
    if !errors.is_empty() {
        return Err(GoldenError::Invalid {
            path: path.to_path_buf(),
            count: errors.len(),
            listed: errors
                .iter()
                .take(GoldenError::LISTED)
                .map(|p| p.to_string())
                .collect(),
        });
    }
    Ok(set)
}
