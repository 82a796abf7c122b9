//! The driver: every configuration of the grid, one at a time, results in grid order.

use std::sync::Arc;

use super::error::SweepError;
use super::grid::ConfigSpec;
use super::index::RetrievalContext;
use super::memory::release_free_memory;
use super::rows::ConfigOutcome;
use super::score::run_config;
use crate::corpus::Corpus;
use crate::golden::GoldenSet;
use crate::metrics::Cut;
use crate::tokenize::CorpusTokens;

/// What a sweep runs: configurations, each read at every cut.
#[derive(Debug, Clone, Copy)]
pub struct Grid<'a> {
    /// The configurations ([`crate::sweep::expand`]).
    pub configs: &'a [ConfigSpec],
    /// Where each configuration's ranked list is cut ([`crate::sweep::SweepSpec::cuts`]).
    pub cuts: &'a [Cut],
}

/// Runs every configuration of `configs`, each read at every cut of `cuts` (see
/// [`run_config`]; the grid's configurations and cuts: [`crate::sweep::expand`] and
/// [`crate::sweep::SweepSpec::cuts`]), calling `on_done` as each finishes. Results come back in the order of
/// `configs`. The configurations run one at a time, each using every core inside (documents
/// chunked in parallel, questions ranked in parallel), so that one configuration's chunks and
/// index are in memory at a time, not one per core: they are the largest part of the sweep's
/// memory after the corpus's shared structures. `tokens` must be
/// the corpus's token streams in the grid's unit ([`CorpusTokens::new`]); they are computed once
/// and shared by every configuration. `context` holds what the prepare step made (embeddings,
/// model-written contexts).
///
/// # Errors
/// [`SweepError::NoQuestions`] (before any work), or the first error of [`run_config`].
pub fn run_sweep(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    golden: &GoldenSet,
    Grid { configs, cuts }: Grid<'_>,
    context: &Arc<RetrievalContext>,
    keep_chunks: bool,
    on_done: impl Fn(&ConfigOutcome) + Sync,
) -> Result<Vec<ConfigOutcome>, SweepError> {
    if golden.questions.is_empty() {
        return Err(SweepError::NoQuestions);
    }
    // what the analysis freed, then what each configuration freed
    release_free_memory();
    configs
        .iter()
        .map(|config| {
            let outcome = run_config(corpus, tokens, golden, config, cuts, context, keep_chunks)?;
            release_free_memory();
            on_done(&outcome);
            Ok(outcome)
        })
        .collect()
}
