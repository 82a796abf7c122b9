//! The embedding step of a grid: collect every distinct text that its dense, hybrid and semantic
//! configurations need, embed it once (cache first), and put the vectors in the sweep's
//! [`RetrievalContext`].
//!
//! Two steps, because semantic chunks exist only once their sentences are embedded:
//! 1. the corpus's sentences (when the grid has `semantic`);
//! 2. the chunks of every `dense`/`hybrid` configuration, chunked with the sentence vectors of
//!    step 1, and the questions.
//!
//! Within a step every text's length is checked before any request is sent.

use std::collections::HashSet;

use rayon::prelude::*;

use super::embed::{EmbedError, EmbedStats, Embedder};
use crate::chunking::{self, Strategy, semantic};
use crate::corpus::Corpus;
use crate::golden::GoldenSet;
use crate::sweep::grid::ConfigSpec;
use crate::sweep::index::RetrievalContext;
use crate::tokenize::CorpusTokens;

/// Whether any configuration needs embeddings (a dense or hybrid retriever, or semantic
/// chunking).
pub fn needs_embeddings(configs: &[ConfigSpec]) -> bool {
    configs
        .iter()
        .any(|c| c.retriever.needs_embeddings() || c.params.strategy == Strategy::Semantic)
}

/// Embeds everything `configs` need (nothing for BM25 on non-semantic strategies) into
/// `context.embeddings` and returns what the embedding did. `context` carries the semantic
/// settings (see [`RetrievalContext::for_spec`]).
///
/// # Errors
/// [`EmbedError`] for a failed request, an input too long, the cache, or a grid that cannot be
/// chunked.
pub async fn embed_grid(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    golden: &GoldenSet,
    configs: &[ConfigSpec],
    embedder: &Embedder,
    context: &mut RetrievalContext,
) -> Result<EmbedStats, EmbedError> {
    let dense = configs.iter().any(|c| c.retriever.needs_embeddings());
    let semantic = configs
        .iter()
        .any(|c| c.params.strategy == Strategy::Semantic);
    let mut stats = EmbedStats::default();
    // Step 1: sentences (semantic chunks need them before they exist).
    if semantic {
        let (first, s) = embedder
            .embed_all(&semantic::corpus_sentences(corpus), &[])
            .await?;
        stats.add(&s);
        context.embeddings.extend(first);
    }
    if !dense {
        return Ok(stats);
    }
    // Step 2: chunks of the dense and hybrid configurations, and the questions.
    let ctx = context.chunk_context();
    let per_config: Vec<Vec<chunking::Chunk>> = configs
        .par_iter()
        .filter(|c| c.retriever.needs_embeddings())
        .map(|c| chunking::chunk_corpus(corpus, tokens, &c.params, &ctx))
        .collect::<Result<_, _>>()?;
    let mut seen = HashSet::new();
    let texts: Vec<&str> = per_config
        .iter()
        .flatten()
        .map(|c| c.text(corpus))
        .filter(|t| seen.insert(*t))
        .collect();
    let questions: Vec<&str> = golden.questions.iter().map(|q| q.text.as_str()).collect();
    let (second, s) = embedder.embed_all(&texts, &questions).await?;
    stats.add(&s);
    context.embeddings.extend(second);
    Ok(stats)
}
