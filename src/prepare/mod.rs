//! The prepare step: what the grid needs from a server before the sweep scores anything, made
//! once for `sweep` and `run` alike, through the LLM client (rate limits, retries, caches):
//!
//! 1. the corpus's sentences embedded ([`vectors::embed_sentences`]), for semantic
//!    configurations, whose chunks exist only once their sentences have vectors;
//! 2. model-written contexts ([`contexts`]) for `llm_context` prefixes;
//! 3. the chunks of dense and hybrid configurations embedded with their prefixes (contexts
//!    included, so after step 2), and the questions ([`vectors::embed_chunks`]);
//! 4. the configurations of external retrievers indexed and queried through the user's engine
//!    ([`retrievers`]; after step 3: it is sent the vectors);
//! 5. the first stage's candidates of reranked configurations reranked ([`rerank`]; after
//!    steps 3 and 4, as a dense or external first stage reads what they made).
//!
//! Embedding goes through [`embed`] and [`embed_cache`] (each distinct text once, cache first).
//! The result is a plain [`RetrievalContext`] that every configuration reads, with what each step
//! did and cost. A grid that needs neither sends nothing.

pub mod contexts;
pub mod embed;
pub mod embed_cache;
pub mod rerank;
pub mod retrievers;
pub mod spend_cap;
pub mod sweep_budget;
pub mod vectors;
pub mod would_send;

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use thiserror::Error;

use crate::chunking::ChunkParams;
use crate::chunking::external::precomputed::ChunksFile;
use crate::chunking::external::{
    ChunkerSpec, ExternalChunks, ExternalError, ExternalInputs, run_chunkers,
};
use crate::corpus::Corpus;
use crate::events::{Events, RunEvent, Step};
use crate::exit::ExitClass;
use crate::golden::GoldenSet;
use crate::llm::{CallRecord, ClientConfig, LlmClient};
use crate::retrieval::embeddings::{EmbedRole, EmbedSettings};
use crate::retrieval::external::{RetrieverError, RetrieverSpec};
use crate::retrieval::rerank::RerankSettings;
use crate::sweep::grid::{ConfigSpec, SweepSpec};
use crate::sweep::index::RetrievalContext;
use crate::tokenize::CorpusTokens;
use contexts::{
    ContextCount, ContextError, ContextPrompt, ContextSettings, ContextSummary, count_contexts,
    generate_contexts, needed_chunks,
};
use embed::{EmbedError, EmbedStats, Embedder};
use rerank::{RerankError, RerankRun};
pub use would_send::WouldSend;

/// Errors of the prepare step.
#[derive(Debug, Error)]
pub enum PrepareError {
    /// An external chunker failed.
    #[error(transparent)]
    External(#[from] ExternalError),
    /// Embedding failed.
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// Writing the contexts failed.
    #[error(transparent)]
    Contexts(#[from] ContextError),
    /// Reranking failed.
    #[error(transparent)]
    Rerank(#[from] RerankError),
    /// An external retriever failed.
    #[error(transparent)]
    Retriever(#[from] RetrieverError),
    /// The sweep would pass `--max-cost`; nothing was sent.
    #[error(transparent)]
    Cap(#[from] spend_cap::SpendCapError),
}

impl PrepareError {
    /// The step's own class.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            PrepareError::External(e) => e.exit_class(),
            PrepareError::Embed(e) => e.exit_class(),
            PrepareError::Contexts(e) => e.exit_class(),
            PrepareError::Rerank(e) => e.exit_class(),
            PrepareError::Retriever(e) => e.exit_class(),
            PrepareError::Cap(_) => ExitClass::Usage,
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
    /// The rerank step, when the grid reranks (not in a dry run that would send requests).
    pub rerank: Option<RerankRun>,
    /// A dry run's count of what the step would send (`None` when not a dry run).
    pub would_send: Option<WouldSend>,
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
    /// Rerank settings, when the grid reranks.
    pub rerank: Option<&'a RerankSettings>,
    /// The LLM client's settings (server, limits, prices, cache).
    pub llm: &'a ClientConfig,
    /// A dry run: send nothing, count what would be sent ([`WouldSend`]).
    pub dry_run: bool,
    /// The external chunkers declared for this command.
    pub chunkers: &'a [ChunkerSpec],
    /// The precomputed chunks files the grid sweeps.
    pub chunk_files: &'a [ChunksFile],
    /// The external retrievers declared for this command.
    pub retrievers: &'a [RetrieverSpec],
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
    let mut context = RetrievalContext::for_spec(inputs.corpus, inputs.spec, inputs.golden);
    context.external = Arc::new(chunk_externally(inputs, events)?);
    let embedder = match inputs.embed {
        Some(settings) if vectors::needs_embeddings(inputs.configs) => {
            let embedder = if inputs.dry_run {
                Embedder::offline(settings.clone(), inputs.llm.clone())?
            } else {
                Embedder::new(settings.clone(), inputs.llm.clone(), true)?
            };
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
    let mut would = WouldSend::default();
    let mut configs = inputs.configs.to_vec();
    if let Some(embedder) = &embedder {
        stats.add(
            &vectors::embed_sentences(inputs.corpus, inputs.configs, embedder, &mut context)
                .await?,
        );
        if stats.sent > 0 && inputs.dry_run {
            // semantic chunks exist only once their sentences have vectors
            would.uncounted.extend(not_counted(&mut configs, true, |c| {
                c.params.strategy == crate::chunking::Strategy::Semantic
            }));
        }
    }
    let contexts = match inputs.context {
        Some(settings) if inputs.dry_run => {
            let count = count_contexts_of(inputs, settings, &configs, &context).await?;
            let run = match count.calls {
                // every context is in the cache: made from it, as a run would
                0 => Some(write_contexts(inputs, settings, &configs, &context, events).await?),
                _ => None,
            };
            if count.calls > 0 {
                would
                    .uncounted
                    .extend(not_counted(&mut configs, false, |c| {
                        c.prefix == crate::chunking::enrich::Prefix::LlmContext
                    }));
            }
            would.contexts = Some(count);
            run
        }
        Some(settings) => Some(write_contexts(inputs, settings, &configs, &context, events).await?),
        None => None,
    };
    let contexts = contexts.map(|run| {
        context.contexts = run.contexts;
        context.context_costs = run.costs;
        ContextReport {
            summary: run.summary,
            records: run.records,
        }
    });
    let embed = match embedder {
        Some(embedder) => {
            stats.add(
                &vectors::embed_chunks(
                    inputs.corpus,
                    inputs.tokens,
                    inputs.golden,
                    &configs,
                    &embedder,
                    &mut context,
                )
                .await?,
            );
            let verb = if inputs.dry_run {
                "to send (a dry run: nothing sent)"
            } else {
                "sent"
            };
            events(RunEvent::Finished {
                step: Step::Embed,
                summary: format!(
                    "{} distinct texts, {} from the cache, {} {verb} in {} requests ({} tokens, ${:.6}) in {:.1} s",
                    stats.texts,
                    stats.cached,
                    stats.sent,
                    stats.requests,
                    stats.tokens_sent,
                    stats.cost_usd,
                    stats.wall_ms / 1e3
                ),
            });
            would.embed = Some(stats.clone());
            let settings = embedder.settings();
            would.embed_priced = [EmbedRole::Document, EmbedRole::Query].iter().all(|&r| {
                inputs
                    .llm
                    .model(settings.model_for(r))
                    .input_usd_per_mtok
                    .is_some()
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
    // an expansion reads its configuration's ranking: each ranking is retrieved and reranked once
    let mut ranked: Vec<ConfigSpec> = Vec::new();
    for c in configs.iter().map(ConfigSpec::ranked) {
        if !ranked.contains(&c) {
            ranked.push(c);
        }
    }
    let context = retriever_step(inputs, &ranked, context, &mut would, events)?;
    let (context, rerank) = rerank_step(inputs, &ranked, context, &mut would, events).await?;
    Ok(Prepared {
        context,
        embed,
        contexts,
        rerank,
        would_send: inputs.dry_run.then_some(would),
    })
}

/// Step 4: the reranked configurations of `configs` reranked ([`rerank::rerank_candidates`]),
/// their lists put in `context`. In a dry run that sends something before this step, their
/// first stages cannot be ranked yet: they are named in `would.later`, and bounded in
/// `would.rerank_bound` ([`rerank::upper_bound`]) so that `--max-cost` counts them before
/// anything is sent.
async fn rerank_step(
    inputs: &PrepareInputs<'_>,
    configs: &[ConfigSpec],
    mut context: RetrievalContext,
    would: &mut WouldSend,
    events: Events<'_>,
) -> Result<(RetrievalContext, Option<RerankRun>), PrepareError> {
    let Some(settings) = inputs.rerank.filter(|_| configs.iter().any(|c| c.rerank)) else {
        return Ok((context, None));
    };
    context.rerank_model = settings.model.clone();
    let rerank_inputs = rerank::RerankInputs {
        corpus: inputs.corpus,
        tokens: inputs.tokens,
        golden: inputs.golden,
        configs,
        settings,
        llm: inputs.llm,
        dry_run: inputs.dry_run,
    };
    if inputs.dry_run && !would.is_nothing() {
        let ids = configs.iter().filter(|c| c.rerank).map(|c| c.id());
        would
            .later
            .extend(ids.map(|id| format!("the rerank requests of {id}")));
        would.rerank_bound = Some(Box::new(rerank::upper_bound(&rerank_inputs, &context)?));
        return Ok((context, None));
    }
    let shared = Arc::new(context);
    let run = rerank::rerank_candidates(&rerank_inputs, &shared, events).await?;
    let mut context = Arc::try_unwrap(shared).unwrap_or_else(|a| (*a).clone());
    would.rerank = Some(Box::new(run.summary.clone()));
    if run.summary.sent > 0 && inputs.dry_run {
        return Ok((context, None));
    }
    context.reranked = Arc::new(run.lists.clone());
    Ok((context, Some(run)))
}

/// Step 4: the configurations of `configs` with an external retriever indexed and queried
/// ([`retrievers::retrieve_externally`]), their lists put in `context`, through the retriever
/// cache beside the LLM response cache unless `[llm] cache = false`. In a dry run that sends
/// something before this step, their vectors do not exist yet: they are named in
/// `would.later`.
fn retriever_step(
    inputs: &PrepareInputs<'_>,
    configs: &[ConfigSpec],
    mut context: RetrievalContext,
    would: &mut WouldSend,
    events: Events<'_>,
) -> Result<RetrievalContext, PrepareError> {
    let external = configs.iter().filter(|c| c.retriever.is_external());
    if inputs.dry_run && !would.is_nothing() {
        let ids = external.map(|c| format!("the external retrieval of {}", c.id()));
        would.later.extend(ids);
        return Ok(context);
    }
    if external.count() == 0 {
        return Ok(context);
    }
    let cache = inputs.llm.cache.then(|| {
        inputs
            .llm
            .cache_path
            .with_file_name(retrievers::RETRIEVER_CACHE)
    });
    let sink = chunker_log(events);
    let shared = Arc::new(context);
    let (lists, _) = retrievers::retrieve_externally(
        &retrievers::RetrieverInputs {
            corpus: inputs.corpus,
            tokens: inputs.tokens,
            golden: inputs.golden,
            configs,
            cuts: &inputs.spec.cuts(),
            retrievers: inputs.retrievers,
            vectors: inputs.embed.is_some(),
            cache: cache.as_deref(),
            stderr: &sink,
        },
        &shared,
        events,
    )?;
    context = Arc::try_unwrap(shared).unwrap_or_else(|a| (*a).clone());
    context.retrieved = lists;
    Ok(context)
}

/// The external configurations' chunks ([`run_chunkers`]; none when the grid has no external
/// strategy), through the chunker cache beside the LLM response cache (`chunkers.sqlite`)
/// unless `[llm] cache = false`; the chunkers' stderr lines go to `events` as notes.
fn chunk_externally(
    inputs: &PrepareInputs<'_>,
    events: Events<'_>,
) -> Result<ExternalChunks, PrepareError> {
    let params: Vec<ChunkParams> = inputs
        .configs
        .iter()
        .map(|c| c.params)
        .filter(|p| p.strategy.is_external())
        .collect();
    if params.is_empty() {
        return Ok(ExternalChunks::default());
    }
    let started = Instant::now();
    let cache = inputs
        .llm
        .cache
        .then(|| inputs.llm.cache_path.with_file_name(CHUNKER_CACHE));
    let sink = chunker_log(events);
    let chunks = run_chunkers(&ExternalInputs {
        corpus: inputs.corpus,
        tokenizer: inputs.spec.tokenizer,
        chunkers: inputs.chunkers,
        files: inputs.chunk_files,
        params: &params,
        cache: cache.as_deref(),
        stderr: &sink,
    })?;
    for c in chunks.counts() {
        events(RunEvent::Note(format!(
            "{}: {} chunks of {} documents ({} from the chunker cache) from {}; placed by given offsets {}, exactly {}, with whitespace forgiven {}, after an added prefix {}; {} dropped as unlocated",
            c.config,
            c.chunks,
            c.documents,
            c.documents_cached,
            c.reported,
            c.placed_given,
            c.placed_exact,
            c.placed_whitespace,
            c.placed_added_prefix,
            c.unlocated
        )));
    }
    events(RunEvent::Note(format!(
        "external chunkers: {} configuration(s) chunked in {:.1} s",
        chunks.configs.len(),
        started.elapsed().as_secs_f64()
    )));
    Ok(chunks)
}

/// Where external chunkers' and retrievers' stderr lines go: a note each, prefixed with the
/// name it was declared under.
pub fn chunker_log<'a>(events: Events<'a>) -> impl Fn(&str, &str) + Sync + 'a {
    move |name, line| events(RunEvent::Note(format!("[{name}] {line}")))
}

/// The chunker cache's file name, beside the LLM response cache.
pub const CHUNKER_CACHE: &str = "chunkers.sqlite";

/// Removes from `configs` those `which` picks, whose chunks or texts do not exist yet, and
/// returns what a dry run therefore cannot count: `the chunk embeddings of <id>` for those that
/// embed their chunks, and `the contexts of <id>` for `llm_context` ones when `contexts` (their
/// contexts are counted after this).
fn not_counted(
    configs: &mut Vec<ConfigSpec>,
    contexts: bool,
    which: impl Fn(&ConfigSpec) -> bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for c in configs.iter().filter(|c| which(c)) {
        if c.retriever.embeds(true) {
            out.push(format!("the chunk embeddings of {}", c.id()));
        }
        if contexts && c.prefix == crate::chunking::enrich::Prefix::LlmContext {
            out.push(format!("the contexts of {}", c.id()));
        }
    }
    configs.retain(|c| !which(c));
    out
}

/// The context calls the grid's `llm_context` configurations of `configs` would send
/// ([`count_contexts`]), through a client that reads no API key (nothing is sent).
async fn count_contexts_of(
    inputs: &PrepareInputs<'_>,
    settings: &ContextSettings,
    configs: &[ConfigSpec],
    context: &RetrievalContext,
) -> Result<ContextCount, PrepareError> {
    let prompt = ContextPrompt::load_or_default(settings.prompt.as_deref())?;
    let mut llm = inputs.llm.clone();
    // a response cache that does not exist yet holds nothing: it is not created
    llm.cache &= llm.cache_path.exists();
    let client = LlmClient::with_api_key(llm, None).map_err(ContextError::from)?;
    let needed = needed_chunks(
        inputs.corpus,
        inputs.tokens,
        configs,
        &context.chunk_context(),
    )?;
    Ok(count_contexts(
        &client,
        inputs.corpus,
        inputs.tokens,
        &needed,
        &prompt,
        settings,
    )
    .await?)
}

/// The contexts of every `llm_context` chunk of the grid (chunked with the sentence vectors in
/// `context`), through the LLM client and its cache.
async fn write_contexts(
    inputs: &PrepareInputs<'_>,
    settings: &ContextSettings,
    configs: &[ConfigSpec],
    context: &RetrievalContext,
    events: Events<'_>,
) -> Result<contexts::ContextRun, PrepareError> {
    let prompt = ContextPrompt::load_or_default(settings.prompt.as_deref())?;
    // a dry run reaches here only when the cache answers every call: no key is read
    let client = if inputs.dry_run {
        LlmClient::with_api_key(inputs.llm.clone(), None)
    } else {
        LlmClient::new(inputs.llm.clone())
    }
    .map_err(ContextError::from)?;
    let needed = needed_chunks(
        inputs.corpus,
        inputs.tokens,
        configs,
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
