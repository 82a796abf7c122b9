//! Embedding before the sweep: collect every distinct text the grid's dense, hybrid and semantic
//! configurations need, embed it once (cache first), and hand the sweep a plain map.
//!
//! Two steps, because semantic chunks exist only once their sentences are embedded:
//! 1. the corpus's sentences (when the grid has `semantic`);
//! 2. the chunks of every `dense`/`hybrid` configuration, chunked with the sentence vectors of
//!    step 1, and the questions.
//!
//! Within a step every text's length is checked before any request is sent.
//!
//! Each step runs inside the caller's tokio runtime ([`embed_for_sweep`] is async); the sweep
//! itself stays synchronous.

use std::collections::HashSet;

use rayon::prelude::*;

use crate::chunking::{self, Strategy, semantic};
use crate::corpus::Corpus;
use crate::golden::GoldenSet;
use crate::retrieval::embed::{EmbedStats, Embedder, Embeddings, Role};
use crate::sweep::{ConfigIndex, ConfigSpec, RetrievalContext, SweepError, SweepSpec, plan};
use crate::tokenize::CorpusTokens;

/// Every distinct sentence of the corpus as semantic chunking embeds it, in corpus order.
pub fn corpus_sentences(corpus: &Corpus) -> Vec<&str> {
    let mut seen = HashSet::new();
    corpus
        .docs
        .iter()
        .flat_map(|d| {
            semantic::sentences(&d.text)
                .into_iter()
                .map(move |(s, e)| &d.text[s..e])
        })
        .filter(|s| seen.insert(*s))
        .collect()
}

/// Embeds everything the grid of `spec` needs (nothing for a BM25-only grid on non-semantic
/// strategies) and returns the sweep's [`RetrievalContext`] with what the embedding did.
///
/// # Errors
/// [`SweepError::Embed`] (a failed request, an input too long, the cache), or any error of
/// [`plan`] or of chunking.
pub async fn embed_for_sweep(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    golden: &GoldenSet,
    spec: &SweepSpec,
    embedder: &Embedder,
) -> Result<(RetrievalContext, EmbedStats), SweepError> {
    let configs = plan(spec)?;
    let dense = spec.retrievers.iter().any(|r| r.needs_embeddings());
    let semantic = spec.strategies.contains(&Strategy::Semantic);
    let mut stats = EmbedStats::default();
    let mut embeddings = Embeddings::default();
    if !dense && !semantic {
        return Ok((RetrievalContext::new(corpus, embeddings, spec), stats));
    }
    // Step 1: sentences (semantic chunks need them before they exist).
    if semantic {
        let (first, s) = embedder.embed_all(&corpus_sentences(corpus), &[]).await?;
        stats.add(&s);
        embeddings.extend(first);
    }
    let mut context = RetrievalContext::new(corpus, embeddings, spec);
    if !dense {
        return Ok((context, stats));
    }
    // Step 2: chunks of the dense and hybrid configurations.
    let ctx = context.chunk_context();
    let per_config: Vec<Vec<chunking::Chunk>> = configs
        .par_iter()
        .filter(|c| c.retriever.needs_embeddings())
        .map(|c| chunking::chunk_corpus_with(corpus, tokens, &c.params, &ctx))
        .collect::<Result<_, _>>()
        .map_err(|source| SweepError::Settings(format!("chunking before embedding: {source}")))?;
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
    Ok((context, stats))
}

/// Embedding cost of one configuration (see [`crate::sweep::SweepRow::embed_tokens`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EmbedCost {
    /// cl100k tokens of the distinct texts as sent.
    pub tokens: usize,
    /// USD at the models' input prices; `None` when a side used has no price.
    pub cost_usd: Option<f64>,
    /// Embedding time attributed to those texts, ms.
    pub ms: f64,
}

/// What embedding `built`'s configuration costs: its distinct chunk texts (dense, hybrid), the
/// corpus's sentences (semantic) and the questions (dense, hybrid). Zero for BM25 on other
/// strategies.
///
/// # Errors
/// [`SweepError::Embed`] for a text not embedded.
pub fn config_embed_cost(
    corpus: &Corpus,
    golden: &GoldenSet,
    config: &ConfigSpec,
    built: &ConfigIndex,
) -> Result<EmbedCost, SweepError> {
    let dense = config.retriever.needs_embeddings();
    let semantic = config.params.strategy == Strategy::Semantic;
    if !dense && !semantic {
        return Ok(EmbedCost {
            cost_usd: Some(0.0),
            ..EmbedCost::default()
        });
    }
    let emb = &built.context.embeddings;
    let mut docs: Vec<&str> = Vec::new();
    let mut queries: Vec<&str> = Vec::new();
    if semantic {
        docs.extend(corpus_sentences(corpus));
    }
    if dense {
        docs.extend(built.chunks.iter().map(|c| c.text(corpus)));
        queries.extend(golden.questions.iter().map(|q| q.text.as_str()));
    }
    let mut cost = EmbedCost {
        cost_usd: Some(0.0),
        ..EmbedCost::default()
    };
    for (role, texts) in [(Role::Document, docs), (Role::Query, queries)] {
        let mut seen = HashSet::new();
        let mut role_tokens = 0;
        for t in texts {
            if !seen.insert(t) {
                continue;
            }
            let e = emb.get(role, t)?;
            role_tokens += e.tokens;
            cost.ms += e.ms;
        }
        cost.tokens += role_tokens;
        if role_tokens > 0 {
            cost.cost_usd = match (cost.cost_usd, emb.cost_usd(role, role_tokens)) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            };
        }
    }
    Ok(cost)
}
