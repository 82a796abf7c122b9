//! The prepare step: what the grid needs from a server before the sweep scores anything, made
//! once for `sweep` and `run` alike, through the LLM client (rate limits, retries, caches):
//!
//! 1. the corpus's sentences embedded ([`vectors::embed_sentences`]), for semantic
//!    configurations, whose chunks exist only once their sentences have vectors;
//! 2. model-written contexts ([`contexts`]) for `llm_context` prefixes;
//! 3. the chunks of dense and hybrid configurations embedded with their prefixes (contexts
//!    included, so after step 2), and the questions ([`vectors::embed_chunks`]).
//!
//! Embedding goes through [`embed`] and [`embed_cache`] (each distinct text once, cache first).
//! The result is a plain [`RetrievalContext`] that every configuration reads, with what each step
//! did and cost. A grid that needs neither sends nothing.

pub mod contexts;
pub mod embed;
pub mod embed_cache;
pub mod vectors;

use serde::Serialize;
use thiserror::Error;

use crate::corpus::Corpus;
use crate::events::{Events, RunEvent, Step};
use crate::exit::ExitClass;
use crate::golden::GoldenSet;
use crate::llm::{CallRecord, ClientConfig, LlmClient};
use crate::retrieval::embeddings::EmbedSettings;
use crate::sweep::grid::{ConfigSpec, SweepSpec};
use crate::sweep::index::RetrievalContext;
use crate::tokenize::CorpusTokens;
use contexts::{
    ContextError, ContextPrompt, ContextSettings, ContextSummary, generate_contexts, needed_chunks,
};
use embed::{EmbedError, EmbedStats, Embedder};

/// Errors of the prepare step.
#[derive(Debug, Error)]
pub enum PrepareError {
    /// Embedding failed.
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// Writing the contexts failed.
    #[error(transparent)]
    Contexts(#[from] ContextError),
}

impl PrepareError {
    /// The step's own class.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            PrepareError::Embed(e) => e.exit_class(),
            PrepareError::Contexts(e) => e.exit_class(),
        }
    }
}

/// What the embedding step did, for embeddings.json.
#[derive(Debug, Clone, Serialize)]
pub struct EmbedReport {
    /// The settings used.
    pub settings: EmbedSettings,
    /// The server, as configured (credentials are never part of a base URL kept here).
    pub base_url: String,
    /// Counts, tokens, cost, time.
    #[serde(flatten)]
    pub stats: EmbedStats,
    /// One record per request sent (none when everything was cached).
    #[serde(skip)]
    pub records: Vec<CallRecord>,
}

/// What the context step did.
#[derive(Debug, Clone)]
pub struct ContextReport {
    /// Counts and cost, for the manifest.
    pub summary: ContextSummary,
    /// One record per call, in chunk order.
    pub records: Vec<CallRecord>,
}

/// The prepare step's result.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// What every configuration reads: embeddings, contexts, fusion and semantic settings.
    pub context: RetrievalContext,
    /// The embedding step, when the grid needed it.
    pub embed: Option<EmbedReport>,
    /// The context step, when the grid has `llm_context`.
    pub contexts: Option<ContextReport>,
}

/// What the prepare step reads.
pub struct PrepareInputs<'a> {
    /// The corpus.
    pub corpus: &'a Corpus,
    /// Its token streams in the grid's unit.
    pub tokens: &'a CorpusTokens,
    /// The golden set (its questions are embedded for dense and hybrid).
    pub golden: &'a GoldenSet,
    /// What to sweep (hybrid and semantic settings).
    pub spec: &'a SweepSpec,
    /// The grid.
    pub configs: &'a [ConfigSpec],
    /// Embedding settings, when the grid needs embeddings.
    pub embed: Option<&'a EmbedSettings>,
    /// Context settings, when the grid has `llm_context`.
    pub context: Option<&'a ContextSettings>,
    /// The LLM client's settings (server, limits, prices, cache).
    pub llm: &'a ClientConfig,
}

/// Runs the steps the grid needs, in order, reporting progress to `events`.
///
/// # Errors
/// [`PrepareError`] from the first step that fails; what finished is in the caches, so the same
/// command again sends only what is missing.
pub async fn prepare(
    inputs: &PrepareInputs<'_>,
    events: Events<'_>,
) -> Result<Prepared, PrepareError> {
    let mut context = RetrievalContext::for_spec(inputs.corpus, inputs.spec);
    let embedder = match inputs.embed {
        Some(settings) if vectors::needs_embeddings(inputs.configs) => {
            let embedder = Embedder::new(settings.clone(), inputs.llm.clone(), true)?;
            events(RunEvent::Note(format!(
                "embedding with {} at {} ({} chunk text)",
                settings.model,
                embedder.base_url(),
                settings.chunk_input()
            )));
            Some(embedder)
        }
        _ => None,
    };
    let mut stats = EmbedStats::default();
    if let Some(embedder) = &embedder {
        stats.add(
            &vectors::embed_sentences(inputs.corpus, inputs.configs, embedder, &mut context)
                .await?,
        );
    }
    let contexts = match inputs.context {
        Some(settings) => {
            let run = write_contexts(inputs, settings, &context, events).await?;
            context.contexts = run.contexts;
            context.context_costs = run.costs;
            Some(ContextReport {
                summary: run.summary,
                records: run.records,
            })
        }
        None => None,
    };
    let embed = match embedder {
        Some(embedder) => {
            stats.add(
                &vectors::embed_chunks(
                    inputs.corpus,
                    inputs.tokens,
                    inputs.golden,
                    inputs.configs,
                    &embedder,
                    &mut context,
                )
                .await?,
            );
            events(RunEvent::Finished {
                step: Step::Embed,
                summary: format!(
                    "{} distinct texts, {} from the cache, {} sent in {} requests ({} tokens, ${:.6}) in {:.1} s",
                    stats.texts,
                    stats.cached,
                    stats.sent,
                    stats.requests,
                    stats.tokens_sent,
                    stats.cost_usd,
                    stats.wall_ms / 1e3
                ),
            });
            Some(EmbedReport {
                settings: embedder.settings().clone(),
                base_url: embedder.base_url(),
                stats,
                records: embedder.records(),
            })
        }
        None => None,
    };
    Ok(Prepared {
        context,
        embed,
        contexts,
    })
}

/// The contexts of every `llm_context` chunk of the grid (chunked with the sentence vectors in
/// `context`), through the LLM client and its cache.
async fn write_contexts(
    inputs: &PrepareInputs<'_>,
    settings: &ContextSettings,
    context: &RetrievalContext,
    events: Events<'_>,
) -> Result<contexts::ContextRun, PrepareError> {
    let prompt = ContextPrompt::load_or_default(settings.prompt.as_deref())?;
    let client = LlmClient::new(inputs.llm.clone()).map_err(ContextError::from)?;
    let needed = needed_chunks(
        inputs.corpus,
        inputs.tokens,
        inputs.configs,
        &context.chunk_context(),
    )?;
    let run = generate_contexts(
        &client,
        inputs.corpus,
        inputs.tokens,
        &needed,
        &prompt,
        settings,
        events,
    )
    .await?;
    let s = &run.summary;
    events(RunEvent::Finished {
        step: Step::Contexts,
        summary: format!(
            "{} distinct chunks ({} over the configurations), {} calls sent, {} from the cache; {} prompt + {} completion tokens; cost {}",
            s.chunks,
            s.chunk_occurrences,
            s.calls_sent,
            s.cache_hits,
            s.prompt_tokens,
            s.completion_tokens,
            s.cost_usd.map_or_else(
                || "unknown (no price in [llm.models])".into(),
                |c| format!("${c:.4}")
            )
        ),
    });
    Ok(run)
}
