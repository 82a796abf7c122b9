//! The embedding step of a grid: collect every distinct text that its dense, hybrid and semantic
//! configurations need, embed it once (cache first), and put the vectors in the sweep's
//! [`RetrievalContext`].
//!
//! Two steps, because semantic chunks exist only once their sentences are embedded, and a
//! chunk's embedded text holds its prefix, which for `llm_context` exists only once the contexts
//! are written ([`crate::prepare`] runs: [`embed_sentences`] → contexts → [`embed_chunks`]):
//! 1. the corpus's sentences (when the grid has `semantic`);
//! 2. the chunks of every `dense`/`hybrid` configuration, chunked with the sentence vectors of
//!    step 1 and prefixed as BM25 indexes them ([`prefixed_chunks`]; the bare text with
//!    `embed_prefix = false`), and the questions.
//!
//! Within a step every text's length is checked before any request is sent; a chunk too long
//! once prefixed is an error naming its configuration (or, with `overflow = "truncate"`, cut and
//! counted).

use std::collections::HashSet;

use rayon::prelude::*;

use super::embed::{EmbedError, EmbedStats, Embedder};
use crate::chunking::{Chunk, Strategy, semantic};
use crate::corpus::Corpus;
use crate::golden::GoldenSet;
use crate::retrieval::embeddings::EmbedRole;
use crate::sweep::grid::ConfigSpec;
use crate::sweep::index::{RetrievalContext, prefixed_chunks};
use crate::tokenize::CorpusTokens;

/// Whether any configuration embeds something in a run with an embeddings model (a dense,
/// hybrid or external retriever, or semantic chunking).
pub fn needs_embeddings(configs: &[ConfigSpec]) -> bool {
    configs
        .iter()
        .any(|c| c.retriever.embeds(true) || c.params.strategy == Strategy::Semantic)
}

/// Step 1: embeds the corpus's sentences when a configuration of `configs` is `semantic`
/// (nothing otherwise) into `context.embeddings`.
///
/// # Errors
/// [`EmbedError`] for a failed request, an input too long or the cache.
pub async fn embed_sentences(
    corpus: &Corpus,
    configs: &[ConfigSpec],
    embedder: &Embedder,
    context: &mut RetrievalContext,
) -> Result<EmbedStats, EmbedError> {
    if !configs
        .iter()
        .any(|c| c.params.strategy == Strategy::Semantic)
    {
        return Ok(EmbedStats::default());
    }
    let (vectors, stats) = embedder
        .embed_all(&semantic::corpus_sentences(corpus), &[])
        .await?;
    context.embeddings.extend(vectors);
    Ok(stats)
}

/// Step 2: embeds the chunks of every dense, hybrid and external configuration of `configs`, each with its
/// configuration's prefix as BM25 indexes it (or bare, per the embedder's `embed_prefix`), and
/// the questions, into `context.embeddings` (nothing without a dense, hybrid or external
/// configuration; it runs only when the run has an embeddings model).
/// `context` must hold the sentence vectors of step 1 and the `llm_context` contexts.
///
/// # Errors
/// [`EmbedError`] for a failed request, an input too long (checked for every text before any
/// request), the cache, or a grid that cannot be chunked or prefixed.
pub async fn embed_chunks(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    golden: &GoldenSet,
    configs: &[ConfigSpec],
    embedder: &Embedder,
    context: &mut RetrievalContext,
) -> Result<EmbedStats, EmbedError> {
    if !configs.iter().any(|c| c.retriever.embeds(true)) {
        return Ok(EmbedStats::default());
    }
    let ctx: &RetrievalContext = context;
    let per_config: Vec<(&ConfigSpec, Vec<Chunk>)> = configs
        .par_iter()
        .filter(|c| c.retriever.embeds(true))
        .map(|c| prefixed_chunks(corpus, tokens, c, ctx).map(|chunks| (c, chunks)))
        .collect::<Result<_, _>>()?;
    let settings = embedder.settings();
    let mut seen = HashSet::new();
    let mut texts: Vec<String> = Vec::new();
    for (config, chunks) in &per_config {
        for chunk in chunks {
            let text = settings.chunk_text(chunk, corpus);
            if !seen.insert(text.clone()) {
                continue;
            }
            // over-long input (prefix included) is named with its configuration
            settings
                .prepare(EmbedRole::Document, &text)
                .map_err(|source| EmbedError::TooLongIn {
                    config: config.id(),
                    source,
                })?;
            texts.push(text.into_owned());
        }
    }
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let questions: Vec<&str> = golden.questions.iter().map(|q| q.text.as_str()).collect();
    let (vectors, stats) = embedder.embed_all(&texts, &questions).await?;
    context.embeddings.extend(vectors);
    Ok(stats)
}
