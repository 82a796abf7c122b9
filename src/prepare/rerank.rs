//! The rerank step: for every reranked configuration of the grid, its first stage (the same
//! configuration without reranking) ranks every question `depth` deep, and the reranker scores
//! those candidates through the LLM client ([`LlmClient::rerank`]: rate limits, retries, the
//! response cache, call records). The result is a plain [`TopLists`] that the configuration's
//! [`crate::retrieval::listed::ListedRetriever`] reads.
//!
//! A question's candidates go out in requests of `documents_per_request` documents (the chunk's
//! indexed text: prefix, blank line, text), all requests of the grid at once, paced by the
//! model's limits. A request is the same in every run (the first stage is deterministic), so a
//! rerun is answered by the cache. Every request is checked whole; when one fails, nothing of
//! any configuration is scored (the step fails) and those that finished stay cached.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use thiserror::Error;
use tokio::task::JoinSet;

use crate::chunking::Chunk;
use crate::corpus::Corpus;
use crate::events::{Events, RunEvent, Step};
use crate::exit::ExitClass;
use crate::golden::GoldenSet;
use crate::llm::client::rerank::rerank_cost_usd;
use crate::llm::cost::count_tokens;
use crate::llm::{CallRecord, ClientConfig, LlmClient, LlmError, RerankRequest};
use crate::numbers::thousands;
use crate::retrieval::listed::TopLists;
use crate::retrieval::rerank::{RerankSettings, reranked};
use crate::sweep::error::SweepError;
use crate::sweep::grid::ConfigSpec;
use crate::sweep::index::{ConfigIndex, RetrievalContext, prefixed_chunks};
use crate::tokenize::CorpusTokens;

/// Errors of the rerank step.
#[derive(Debug, Error)]
pub enum RerankError {
    /// A rerank request failed after the client's retries, or its reply was unusable.
    #[error("reranking {config}, question {question:?}: {source}{hint}")]
    Call {
        /// The reranked configuration's id.
        config: String,
        /// The question's id.
        question: String,
        /// The client's error.
        #[source]
        source: Box<LlmError>,
        /// What to check, when known (a 404 from a base URL without `/v1`), else empty.
        hint: String,
    },
    /// The client could not be made.
    #[error("rerank client: {0}")]
    Client(#[source] LlmError),
    /// A first stage could not be built or ranked.
    #[error("first stage before reranking: {0}")]
    FirstStage(#[from] SweepError),
}

impl RerankError {
    /// The client's class for its errors, the sweep's for a first stage.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            RerankError::Call { source, .. } => source.exit_class(),
            RerankError::Client(source) => source.exit_class(),
            RerankError::FirstStage(e) => e.exit_class(),
        }
    }
}

/// What the rerank step did (or, in a dry run, would do).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RerankSummary {
    /// The reranker model.
    pub model: String,
    /// Reranked configurations.
    pub configs: usize,
    /// Questions reranked (over the configurations).
    pub questions: usize,
    /// Requests (one per question and `documents_per_request` candidates).
    pub requests: usize,
    /// Of them, answered by the cache.
    pub cached: usize,
    /// Of them, sent (a dry run: would be sent).
    pub sent: usize,
    /// Documents scored (candidates over the questions).
    pub documents: usize,
    /// Input tokens of the requests sent: the server's usage, else (and in a dry run) the
    /// cl100k_base estimate.
    pub tokens_sent: u64,
    /// Their cost in USD; `None` when the model has no price.
    pub cost_usd: Option<f64>,
    /// Wall time of the step, ms.
    pub wall_ms: f64,
}

/// The step's result.
#[derive(Debug, Clone, Default)]
pub struct RerankRun {
    /// Every reranked configuration's lists (empty in a dry run with requests to send).
    pub lists: TopLists,
    /// Counts and cost.
    pub summary: RerankSummary,
    /// One record per request, cache hits included (none in a dry run).
    pub records: Vec<CallRecord>,
}

/// One question's candidates of one configuration, and its requests.
struct Candidates {
    config: String,
    question: String,
    query: String,
    chunks: Vec<usize>,
    requests: Vec<RerankRequest>,
}

/// What the step reads.
pub struct RerankInputs<'a> {
    /// The corpus.
    pub corpus: &'a Corpus,
    /// Its token streams.
    pub tokens: &'a CorpusTokens,
    /// The golden set.
    pub golden: &'a GoldenSet,
    /// The grid (its reranked configurations are reranked).
    pub configs: &'a [ConfigSpec],
    /// The reranker's settings.
    pub settings: &'a RerankSettings,
    /// The LLM client's settings (limits and prices per model, retries, the response cache).
    pub llm: &'a ClientConfig,
    /// Send nothing: count what would be sent.
    pub dry_run: bool,
}

/// The client of the step: `llm` at the reranker's server. A dry run reads no key (nothing is
/// sent) and creates no cache file.
///
/// # Errors
/// [`RerankError::Client`].
fn client(inputs: &RerankInputs<'_>) -> Result<LlmClient, RerankError> {
    let mut llm = inputs.llm.clone();
    if let Some(url) = &inputs.settings.base_url {
        llm.base_url = Some(url.clone());
    }
    let client = match inputs.dry_run {
        true => {
            llm.cache &= llm.cache_path.exists();
            LlmClient::with_api_key(llm, None)
        }
        false => LlmClient::new(llm),
    };
    client.map_err(RerankError::Client)
}

/// Ranks every question through the first stage of every reranked configuration and forms
/// its requests. `context` is what the first stages read (embeddings, contexts).
fn candidates(
    inputs: &RerankInputs<'_>,
    context: &Arc<RetrievalContext>,
) -> Result<Vec<Candidates>, RerankError> {
    let s = inputs.settings;
    let mut out = Vec::new();
    for config in inputs.configs.iter().filter(|c| c.rerank) {
        let first = ConfigSpec {
            rerank: false,
            ..config.clone()
        };
        let built = ConfigIndex::build(inputs.corpus, inputs.tokens, &first, context)?;
        let text = |c: &Chunk| c.indexed_text(inputs.corpus).into_owned();
        for q in &inputs.golden.questions {
            let chunks: Vec<usize> = built
                .rank(&q.text, s.depth)?
                .head(s.depth)
                .iter()
                .map(|h| h.chunk)
                .collect();
            let requests = chunks
                .chunks(s.documents_per_request)
                .map(|part| RerankRequest {
                    model: s.model.clone(),
                    query: q.text.clone(),
                    documents: part.iter().map(|&i| text(&built.chunks[i])).collect(),
                    api: s.api,
                })
                .collect();
            out.push(Candidates {
                config: config.id(),
                question: q.id.clone(),
                query: q.text.clone(),
                chunks,
                requests,
            });
        }
    }
    Ok(out)
}

/// Reranks every question of every reranked configuration of `inputs.configs` (see the module
/// documentation). A dry run sends nothing: it counts the requests the cache does not answer,
/// and returns the lists only when the cache answers every one.
///
/// # Errors
/// [`RerankError::FirstStage`] before anything is sent; [`RerankError::Call`] for the first
/// request that failed (after every request ended; those answered are cached).
pub async fn rerank_candidates(
    inputs: &RerankInputs<'_>,
    context: &Arc<RetrievalContext>,
    events: Events<'_>,
) -> Result<RerankRun, RerankError> {
    let started = Instant::now();
    let client = client(inputs)?;
    let all = candidates(inputs, context)?;
    let mcfg = client.config().model(&inputs.settings.model).clone();
    let mut summary = RerankSummary {
        model: inputs.settings.model.clone(),
        configs: inputs.configs.iter().filter(|c| c.rerank).count(),
        questions: all.len(),
        documents: all.iter().map(|c| c.chunks.len()).sum(),
        requests: all.iter().map(|c| c.requests.len()).sum(),
        ..RerankSummary::default()
    };
    if inputs.dry_run {
        (summary.sent, summary.tokens_sent) = uncached(&client, &all).await?;
        summary.cached = summary.requests - summary.sent;
        summary.cost_usd = dry_run_cost(&mcfg, summary.sent, summary.tokens_sent);
        if summary.sent > 0 {
            return Ok(RerankRun {
                summary,
                ..RerankRun::default()
            });
        }
    }
    events(RunEvent::Note(format!(
        "reranking with {} at {}: {} requests of up to {} documents over {} configuration(s)",
        summary.model,
        client.config().resolved_base_url(),
        thousands(summary.requests as f64),
        inputs.settings.documents_per_request,
        summary.configs
    )));
    events(RunEvent::Started {
        step: Step::Rerank,
        total: summary.requests as u64,
    });
    let mut tasks = JoinSet::new();
    for (i, c) in all.iter().enumerate() {
        for (j, req) in c.requests.iter().enumerate() {
            let (client, req) = (client.clone(), req.clone());
            tasks.spawn(async move { (i, j, client.rerank("rerank", &req).await) });
        }
    }
    let mut scores: Vec<Vec<Option<Vec<f64>>>> =
        all.iter().map(|c| vec![None; c.requests.len()]).collect();
    let mut first_error = None;
    let mut records = Vec::new();
    let mut cost: Option<f64> = None;
    while let Some(joined) = tasks.join_next().await {
        let (i, j, result) = joined.expect("rerank task does not panic");
        match result {
            Ok(o) => {
                events(RunEvent::Advanced {
                    step: Step::Rerank,
                    label: all[i].config.clone(),
                    cost_usd: o.record.cost_usd,
                    cached: o.record.cache_hit,
                });
                if o.record.cache_hit {
                    summary.cached += 1;
                } else {
                    summary.sent += 1;
                    summary.tokens_sent += o.record.prompt_tokens;
                    if let Some(c) = o.record.cost_usd {
                        *cost.get_or_insert(0.0) += c;
                    }
                }
                records.push(o.record);
                scores[i][j] = Some(o.scores);
            }
            Err(source) => {
                let hint = not_found_hint(&source, &client, inputs.settings);
                first_error.get_or_insert(RerankError::Call {
                    config: all[i].config.clone(),
                    question: all[i].question.clone(),
                    source: Box::new(source),
                    hint,
                });
            }
        }
    }
    summary.cost_usd = match summary.sent {
        0 if rerank_cost_usd(&mcfg, 0).is_some() => Some(0.0),
        _ => cost,
    };
    summary.wall_ms = started.elapsed().as_secs_f64() * 1e3;
    let line = match &first_error {
        None => summary_line(&summary),
        Some(_) => format!(
            "{}: stopped: {} of {} requests answered ({} from the cache); nothing is scored, and the answered ones stay cached",
            summary.model,
            thousands((summary.cached + summary.sent) as f64),
            thousands(summary.requests as f64),
            thousands(summary.cached as f64)
        ),
    };
    events(RunEvent::Finished {
        step: Step::Rerank,
        summary: line,
    });
    if let Some(e) = first_error {
        return Err(e);
    }
    let mut lists = TopLists::new();
    for (c, parts) in all.into_iter().zip(scores) {
        let joined: Vec<f64> = parts.into_iter().flatten().flatten().collect();
        lists
            .entry(c.config)
            .or_default()
            .insert(c.query, reranked(&c.chunks, &joined));
    }
    Ok(RerankRun {
        lists,
        summary,
        records,
    })
}

/// For a 404 from a `v1` server whose base URL does not end in a version (`/v1`, `/v2`): the
/// URL called and what to try; else empty.
fn not_found_hint(e: &LlmError, client: &LlmClient, settings: &RerankSettings) -> String {
    let base = client.config().resolved_base_url();
    let versioned = base.rsplit('/').next().is_some_and(|last| {
        last.len() > 1 && last.starts_with('v') && last[1..].chars().all(|c| c.is_ascii_digit())
    });
    match e {
        LlmError::Rejected {
            status: 404, url, ..
        } if settings.api == crate::llm::RerankApi::V1 && !versioned => {
            format!(
                " (the base URL {base} has no /v1: {url} was called; a v1 server's base URL ends in /v1, so try {base}/v1, or --rerank-api tei for text-embeddings-inference)"
            )
        }
        _ => String::new(),
    }
}

/// The requests of `all` the response cache does not answer, and their estimated input tokens
/// (cl100k_base); nothing is sent.
///
/// # Errors
/// [`RerankError::Client`] when the cache cannot be read.
async fn uncached(client: &LlmClient, all: &[Candidates]) -> Result<(usize, u64), RerankError> {
    let (mut sent, mut tokens) = (0, 0);
    for req in all.iter().flat_map(|c| &c.requests) {
        if !client
            .rerank_is_cached(req)
            .await
            .map_err(RerankError::Client)?
        {
            sent += 1;
            tokens += req.estimated_tokens();
        }
    }
    Ok((sent, tokens))
}

/// An upper bound on the rerank requests of `inputs.configs`, for a dry run whose first stages
/// cannot rank yet (their embeddings are not made): every reranked configuration × question,
/// `ceil(min(depth, chunks) / documents_per_request)` requests each, none taken as cached
/// (rankings that do not exist yet cannot be in the cache), and as input tokens (cl100k_base,
/// as [`RerankRequest::estimated_tokens`] counts them) the question once per document plus the
/// `depth` longest chunks' indexed text. Only the chunks are made (no ranking, no call); the
/// cost is `None` when the reranker has no price.
///
/// # Errors
/// [`RerankError::FirstStage`] when a configuration's chunks cannot be made.
pub fn upper_bound(
    inputs: &RerankInputs<'_>,
    context: &RetrievalContext,
) -> Result<RerankSummary, RerankError> {
    let s = inputs.settings;
    let mut bound = RerankSummary {
        model: s.model.clone(),
        ..RerankSummary::default()
    };
    let question_tokens: Vec<u64> = inputs
        .golden
        .questions
        .iter()
        .map(|q| count_tokens(&q.text))
        .collect();
    for config in inputs.configs.iter().filter(|c| c.rerank) {
        let first = ConfigSpec {
            rerank: false,
            ..config.clone()
        };
        let chunks = prefixed_chunks(inputs.corpus, inputs.tokens, &first, context)?;
        let mut lengths: Vec<u64> = chunks
            .iter()
            .map(|c| count_tokens(&c.indexed_text(inputs.corpus)))
            .collect();
        lengths.sort_unstable_by(|a, b| b.cmp(a));
        let n = s.depth.min(lengths.len());
        let longest: u64 = lengths[..n].iter().sum();
        bound.configs += 1;
        for q in &question_tokens {
            bound.questions += 1;
            bound.documents += n;
            let requests = n.div_ceil(s.documents_per_request.max(1));
            bound.requests += requests;
            bound.sent += requests;
            bound.tokens_sent += q * n as u64 + longest;
        }
    }
    let mcfg = inputs.llm.model(&s.model);
    bound.cost_usd = dry_run_cost(mcfg, bound.sent, bound.tokens_sent);
    Ok(bound)
}

/// What `sent` requests of `tokens` estimated input tokens would cost.
fn dry_run_cost(mcfg: &crate::llm::ModelConfig, sent: usize, tokens: u64) -> Option<f64> {
    let per_request = mcfg.usd_per_request.map(|p| p * sent as f64);
    let per_token = crate::llm::cost::cost_usd(mcfg, tokens, 0);
    match (per_request, per_token) {
        (None, None) => None,
        (r, t) => Some(r.unwrap_or(0.0) + t.unwrap_or(0.0)),
    }
}

/// The step's line: `MODEL: 80 questions over 2 configuration(s), 2400 documents in 80
/// requests, 78 from the cache, 2 sent (1200 tokens, cost $0.0001) in 0.4 s`.
pub fn summary_line(s: &RerankSummary) -> String {
    format!(
        "{}: {} questions over {} configuration(s), {} documents in {} requests, {} from the cache, {} sent ({} tokens, cost {}) in {:.1} s",
        s.model,
        s.questions,
        s.configs,
        s.documents,
        s.requests,
        s.cached,
        s.sent,
        s.tokens_sent,
        s.cost_usd.map_or_else(
            || "unknown (no price in [llm.models])".into(),
            |c| format!("${c:.4}")
        ),
        s.wall_ms / 1e3
    )
}
