//! The corpus and golden set a run scored, for the drill-down's question and chunk texts, and
//! loading them again for a run folder from the paths its record holds.

use std::path::Path;

use thiserror::Error;

use crate::corpus::{Corpus, CorpusError, Reading, load_corpus};
use crate::exit::ExitClass;
use crate::golden::{self, GoldenError, GoldenFormat, GoldenSet};

/// The corpus and golden set the run scored, for the questions' and chunks' texts.
#[derive(Debug, Clone, Copy)]
pub struct Texts<'a> {
    /// The corpus (chunk text).
    pub corpus: &'a Corpus,
    /// The golden set (question text, reference answer, evidence locations).
    pub golden: &'a GoldenSet,
}

/// Why the questions' texts could not be loaded for a run folder.
#[derive(Debug, Error)]
pub enum TextsError {
    /// The corpus could not be read.
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    /// The golden set could not be read.
    #[error(transparent)]
    Golden(#[from] GoldenError),
}

impl TextsError {
    /// The class of the cause (the page is written without the texts either way).
    pub fn exit_class(&self) -> ExitClass {
        match self {
            TextsError::Corpus(e) => e.exit_class(),
            TextsError::Golden(e) => e.exit_class(),
        }
    }
}

/// Loads the corpus and golden set a run recorded (relative paths are taken from the current
/// folder, as the run took them).
///
/// # Errors
/// [`TextsError`] when they cannot be read.
pub fn load_texts(
    corpus_dir: &Path,
    reading: &Reading,
    golden_path: &Path,
    format: GoldenFormat,
) -> Result<(Corpus, GoldenSet), TextsError> {
    let corpus = load_corpus(corpus_dir, reading)?;
    let golden = golden::load(golden_path, format, &corpus)?;
    Ok((corpus, golden))
}
