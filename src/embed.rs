//! The embedding step of `chunksweep sweep`: when the grid has dense, hybrid or semantic
//! configurations, embed what they need (cache first) inside a tokio runtime, and write
//! embed_calls.csv (one row per request sent; none when everything was cached) and
//! embeddings.json (counts, tokens, cost, time, settings).

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};

use chunksweep::config::{ConfigFile, SweepConfig};
use chunksweep::corpus::Corpus;
use chunksweep::golden::GoldenSet;
use chunksweep::llm::ClientConfig;
use chunksweep::llm::record::write_csv;
use chunksweep::retrieval::embed::{EmbedSettings, EmbedStats, Embedder};
use chunksweep::sweep::RetrievalContext;
use chunksweep::sweep_embed::embed_for_sweep;
use chunksweep::tokenize::CorpusTokens;

use crate::InputArgs;

/// File of the embedding calls.
pub(crate) const EMBED_CALLS_FILE: &str = "embed_calls.csv";
/// File of the embedding step's summary.
pub(crate) const EMBED_SUMMARY_FILE: &str = "embeddings.json";

#[derive(serde::Serialize)]
struct Summary<'a> {
    settings: &'a EmbedSettings,
    base_url: String,
    #[serde(flatten)]
    stats: &'a EmbedStats,
}

/// Embeds what the grid needs; returns the sweep's context and the files written.
pub(crate) fn embed_step(
    cfg: &SweepConfig,
    input: &InputArgs,
    corpus: &Corpus,
    tokens: &CorpusTokens,
    golden: &GoldenSet,
    out: &Path,
    quiet: bool,
) -> Result<(Arc<RetrievalContext>, Vec<String>)> {
    let Some(settings) = &cfg.embed else {
        return Ok((
            Arc::new(RetrievalContext::new(
                corpus,
                Default::default(),
                &cfg.sweep,
            )),
            Vec::new(),
        ));
    };
    let llm: ClientConfig = match &input.config {
        Some(path) => ConfigFile::load(path)?.llm.unwrap_or_default(),
        None => ClientConfig::default(),
    };
    let embedder = Embedder::new(settings.clone(), llm, true)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime for embeddings")?;
    let (context, stats) = runtime.block_on(embed_for_sweep(
        corpus, tokens, golden, &cfg.sweep, &embedder,
    ))?;
    let records = embedder.records();
    let calls = out.join(EMBED_CALLS_FILE);
    let file = std::fs::File::create(&calls)
        .with_context(|| format!("cannot write {}", calls.display()))?;
    write_csv(&records, file).with_context(|| format!("cannot write {}", calls.display()))?;
    let base_url = settings
        .base_url
        .clone()
        .unwrap_or_else(|| llm_base_url(input));
    let summary = Summary {
        settings,
        base_url,
        stats: &stats,
    };
    let path = out.join(EMBED_SUMMARY_FILE);
    std::fs::write(&path, serde_json::to_string_pretty(&summary)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))?;
    if !quiet {
        println!(
            "embeddings: {} distinct texts, {} from the cache, {} sent in {} requests ({} tokens, ${:.6}) in {:.1} s",
            stats.texts,
            stats.cached,
            stats.sent,
            stats.requests,
            stats.tokens_sent,
            stats.cost_usd,
            stats.wall_ms / 1e3
        );
    }
    Ok((
        Arc::new(context),
        vec![EMBED_CALLS_FILE.into(), EMBED_SUMMARY_FILE.into()],
    ))
}

fn llm_base_url(input: &InputArgs) -> String {
    input
        .config
        .as_ref()
        .and_then(|p| ConfigFile::load(p).ok())
        .and_then(|f| f.llm)
        .unwrap_or_default()
        .resolved_base_url()
}
