//! The sweep: every configuration of the grid (strategy × chunk_size × overlap × prefix ×
//! retriever × top_k) is chunked, indexed, queried with every question and scored, in parallel
//! across configurations (rayon). Each configuration is independent and its result is plain data.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::chunking::enrich::{self, ContextMap, EnrichError, Prefix};
use crate::chunking::semantic::SemanticSettings;
use crate::chunking::{self, Chunk, ChunkError, ChunkParams, Strategy};
use crate::corpus::Corpus;
use crate::golden::GoldenSet;
use crate::metrics::MarginScale;
use crate::metrics::{self, Aggregate, ChunkTable, QuestionMetrics};
use crate::retrieval::dense::{DenseError, DenseIndex};
use crate::retrieval::embed::{EmbedError, Embeddings, Role};
use crate::retrieval::hybrid::HybridSettings;
use crate::retrieval::{Bm25Index, Ranking, RetrievalError, rank_top_k};
use crate::tokenize::{CorpusTokens, TokenizerKind};

/// Requested overlap: a ratio of chunk_size, or a token count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Overlap {
    /// A token count (the same for every size).
    Tokens(usize),
    /// A ratio of chunk_size in [0, 1): `floor(ratio × chunk_size)` tokens.
    Ratio(f64),
}

impl Default for Overlap {
    fn default() -> Self {
        Overlap::Ratio(0.15)
    }
}

impl Overlap {
    /// The overlap in tokens for a chunk size.
    pub fn tokens_for(&self, chunk_size: usize) -> usize {
        match *self {
            Overlap::Tokens(n) => n,
            Overlap::Ratio(r) => (r * chunk_size as f64).floor() as usize,
        }
    }
}

impl fmt::Display for Overlap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Overlap::Tokens(n) => write!(f, "{n}"),
            Overlap::Ratio(r) => write!(f, "{r}"),
        }
    }
}

impl FromStr for Overlap {
    type Err = String;
    /// `"0.15"` is a ratio (must be below 1); `"32"` is a token count.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if let Ok(n) = s.parse::<usize>() {
            return Ok(Overlap::Tokens(n));
        }
        match s.parse::<f64>() {
            Ok(r) if (0.0..1.0).contains(&r) => Ok(Overlap::Ratio(r)),
            Ok(r) => Err(format!(
                "overlap ratio {r} must be at least 0 and below 1 (or give a whole token count)"
            )),
            Err(_) => Err(format!(
                "overlap {s:?} is neither a ratio such as 0.15 nor a token count such as 32"
            )),
        }
    }
}

/// The retriever of a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RetrieverKind {
    /// BM25 over the chunks (tantivy).
    #[default]
    Bm25,
    /// Exact cosine over chunk embeddings ([`crate::retrieval::dense`]).
    Dense,
    /// Reciprocal rank fusion of BM25 and dense ([`crate::retrieval::hybrid`]).
    Hybrid,
}

impl RetrieverKind {
    /// Every retriever.
    pub const ALL: [RetrieverKind; 3] = [
        RetrieverKind::Bm25,
        RetrieverKind::Dense,
        RetrieverKind::Hybrid,
    ];

    /// Name used in CSVs.
    pub fn name(self) -> &'static str {
        match self {
            RetrieverKind::Bm25 => "bm25",
            RetrieverKind::Dense => "dense",
            RetrieverKind::Hybrid => "hybrid",
        }
    }

    /// Whether it needs chunk and question embeddings.
    pub fn needs_embeddings(self) -> bool {
        self != RetrieverKind::Bm25
    }
}

impl FromStr for RetrieverKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RetrieverKind::ALL
            .into_iter()
            .find(|r| r.name() == s.trim())
            .ok_or_else(|| format!("unknown retriever {s:?}: use bm25, dense or hybrid"))
    }
}

/// What to sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSpec {
    /// Chunking strategies.
    pub strategies: Vec<Strategy>,
    /// Chunk sizes, in tokens of `tokenizer` (words for the `words` strategy).
    pub sizes: Vec<usize>,
    /// Overlap, a ratio of the size or a token count.
    pub overlap: Overlap,
    /// Chunks retrieved per question.
    pub top_k: usize,
    /// Unit of sizes and costs.
    pub tokenizer: TokenizerKind,
    /// The retrievers (default `[bm25]`); every strategy × size runs with each.
    pub retrievers: Vec<RetrieverKind>,
    /// Reciprocal rank fusion settings of the `hybrid` retriever.
    #[serde(default)]
    pub hybrid: HybridSettings,
    /// Settings of the `semantic` strategy.
    #[serde(default)]
    pub semantic: SemanticSettings,
    /// Contextual prefixes (default `[none]`); every strategy × size runs with each.
    #[serde(default = "default_prefixes")]
    pub prefixes: Vec<Prefix>,
}

fn default_prefixes() -> Vec<Prefix> {
    vec![Prefix::None]
}

impl SweepSpec {
    /// Whether any configuration needs embeddings (a dense or hybrid retriever, or semantic
    /// chunking).
    pub fn needs_embeddings(&self) -> bool {
        self.retrievers.iter().any(|r| r.needs_embeddings())
            || self.strategies.contains(&Strategy::Semantic)
    }
}

impl Default for SweepSpec {
    fn default() -> Self {
        SweepSpec {
            strategies: vec![Strategy::Fixed, Strategy::Recursive, Strategy::Markdown],
            sizes: vec![64, 128, 256, 512, 1024],
            overlap: Overlap::default(),
            top_k: 5,
            tokenizer: TokenizerKind::default(),
            retrievers: vec![RetrieverKind::default()],
            hybrid: HybridSettings::default(),
            semantic: SemanticSettings::default(),
            prefixes: default_prefixes(),
        }
    }
}

/// One configuration of the grid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigSpec {
    /// Chunking parameters (overlap resolved to tokens).
    #[serde(skip)]
    pub params: ChunkParams,
    /// Contextual prefix put before each chunk's text (indexed and shown to the generator).
    pub prefix: Prefix,
    /// The retriever.
    pub retriever: RetrieverKind,
    /// Chunks retrieved per question.
    pub top_k: usize,
}

impl ConfigSpec {
    /// Stable, readable id: `<strategy>-<size>-o<overlap>-<prefix>-<retriever>-k<k>`.
    pub fn id(&self) -> String {
        format!(
            "{}-{}-o{}-{}-{}-k{}",
            self.params.strategy,
            self.params.chunk_size,
            self.params.chunk_overlap,
            self.prefix,
            self.retriever.name(),
            self.top_k
        )
    }
}

impl FromStr for ConfigSpec {
    type Err = String;
    /// Parses an id written by [`ConfigSpec::id`], e.g. `recursive-256-o38-none-bm25-k5`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = |why: &str| {
            format!(
                "configuration id {s:?}: {why} (expected <strategy>-<size>-o<overlap>-<prefix>-<retriever>-k<k>, e.g. recursive-256-o38-none-bm25-k5)"
            )
        };
        let parts: Vec<&str> = s.trim().split('-').collect();
        if parts.len() < 6 {
            return Err(bad("too few parts"));
        }
        let n = parts.len();
        let strategy: Strategy = parts[0].parse().map_err(|e: String| bad(&e))?;
        let chunk_size: usize = parts[1].parse().map_err(|_| bad("size is not a number"))?;
        let chunk_overlap: usize = parts[2]
            .strip_prefix('o')
            .and_then(|o| o.parse().ok())
            .ok_or_else(|| bad("overlap must be o<tokens>"))?;
        let prefix: Prefix = parts[3..n - 2]
            .join("-")
            .parse()
            .map_err(|e: String| bad(&e))?;
        let retriever: RetrieverKind = parts[n - 2].parse().map_err(|e: String| bad(&e))?;
        let top_k: usize = parts[n - 1]
            .strip_prefix('k')
            .and_then(|k| k.parse().ok())
            .filter(|&k| k > 0)
            .ok_or_else(|| bad("top_k must be k<n> with n >= 1"))?;
        let params = ChunkParams {
            strategy,
            chunk_size,
            chunk_overlap,
        };
        params.validate().map_err(|e| bad(&e.to_string()))?;
        Ok(ConfigSpec {
            params,
            prefix,
            retriever,
            top_k,
        })
    }
}

/// Errors of the sweep.
#[derive(Debug, Error)]
pub enum SweepError {
    /// A configuration's chunking parameters are invalid.
    #[error("{strategy} at chunk_size {size}: {source}")]
    Chunk {
        /// The strategy.
        strategy: Strategy,
        /// The size.
        size: usize,
        /// What is wrong.
        #[source]
        source: ChunkError,
    },
    /// top_k is zero.
    #[error("top_k (--k) must be at least 1")]
    ZeroK,
    /// Nothing to sweep.
    #[error("nothing to sweep: give at least one strategy and one size")]
    EmptyGrid,
    /// An overlap ratio outside [0, 1).
    #[error("overlap ratio {0} must be at least 0 and below 1 (or give a whole token count)")]
    BadOverlap(f64),
    /// The golden set has no question.
    #[error("the golden set has no question to score")]
    NoQuestions,
    /// The retriever failed.
    #[error(transparent)]
    Retrieval(#[from] RetrievalError),
    /// No retriever to sweep, or unusable hybrid or semantic settings.
    #[error("{0}")]
    Settings(String),
    /// An embedding is missing or unusable.
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// The dense index failed.
    #[error(transparent)]
    Dense(#[from] DenseError),
    /// A prefix could not be made (an `llm_context` chunk without its context).
    #[error(transparent)]
    Enrich(#[from] EnrichError),
    /// No prefix to sweep.
    #[error(
        "no prefix to sweep: give at least one (none, title, heading_path, title_heading, llm_context)"
    )]
    NoPrefix,
}

/// Expands and validates the grid (strategies in the given order, then sizes), before any work.
///
/// # Errors
/// [`SweepError::ZeroK`], [`SweepError::EmptyGrid`], or [`SweepError::Chunk`] for a size of 0 or
/// an overlap not below the size.
pub fn plan(spec: &SweepSpec) -> Result<Vec<ConfigSpec>, SweepError> {
    if spec.top_k == 0 {
        return Err(SweepError::ZeroK);
    }
    if spec.strategies.is_empty() || spec.sizes.is_empty() {
        return Err(SweepError::EmptyGrid);
    }
    if spec.retrievers.is_empty() {
        return Err(SweepError::Settings(
            "no retriever to sweep: give at least one of bm25, dense, hybrid".into(),
        ));
    }
    if spec.prefixes.is_empty() {
        return Err(SweepError::NoPrefix);
    }
    spec.hybrid.validate().map_err(SweepError::Settings)?;
    if !(0.0..=100.0).contains(&spec.semantic.percentile) {
        return Err(SweepError::Settings(format!(
            "semantic.percentile {} must be between 0 and 100",
            spec.semantic.percentile
        )));
    }
    if let Overlap::Ratio(r) = spec.overlap
        && !(0.0..1.0).contains(&r)
    {
        return Err(SweepError::BadOverlap(r));
    }
    let mut out = Vec::new();
    for &strategy in &spec.strategies {
        for &size in &spec.sizes {
            let params = ChunkParams {
                strategy,
                chunk_size: size,
                chunk_overlap: spec.overlap.tokens_for(size),
            };
            params.validate().map_err(|source| SweepError::Chunk {
                strategy,
                size,
                source,
            })?;
            for &prefix in &spec.prefixes {
                for &retriever in &spec.retrievers {
                    let config = ConfigSpec {
                        params,
                        prefix,
                        retriever,
                        top_k: spec.top_k,
                    };
                    if !out.contains(&config) {
                        out.push(config);
                    }
                }
            }
        }
    }
    Ok(out)
}

/// One row of sweep.csv: a configuration with its cost and aggregate metrics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    /// Configuration id.
    pub config_id: String,
    /// Chunking strategy.
    pub strategy: String,
    /// chunk_size in `tokenizer` units.
    pub chunk_size: usize,
    /// Requested chunk_overlap in `tokenizer` units.
    pub chunk_overlap: usize,
    /// Mean tokens shared with the previous chunk of the same document.
    pub realized_overlap: f64,
    /// Contextual prefix.
    pub prefix: String,
    /// Retriever.
    pub retriever: String,
    /// top_k.
    pub top_k: usize,
    /// Token unit.
    pub tokenizer: String,
    /// Number of chunks.
    pub n_chunks: usize,
    /// Mean tokens per chunk, prefix included.
    pub mean_chunk_tokens: f64,
    /// Mean tokens per chunk that the prefix adds (separator included; 0 for `none`).
    #[serde(default)]
    pub mean_prefix_tokens: f64,
    /// Tokens over all chunks, prefixes included (what indexing or embedding reads once).
    pub index_tokens: usize,
    /// `top_k × mean_chunk_tokens`: context tokens sent per query, prefixes included.
    pub tokens_per_query: f64,
    /// Questions scored.
    pub n_questions: usize,
    /// Macro span recall@k.
    pub span_recall: f64,
    /// Micro span recall@k.
    pub span_recall_micro: f64,
    /// hit@k.
    pub hit_rate: f64,
    /// Macro coverage@k.
    pub coverage: f64,
    /// Micro coverage@k.
    pub coverage_micro: f64,
    /// Mean normalised margin.
    pub margin: f64,
    /// MRR@k.
    pub mrr: f64,
    /// Macro token-level IoU.
    pub iou: f64,
    /// Micro token-level IoU.
    pub iou_micro: f64,
    /// Macro token-level precision.
    pub precision: f64,
    /// Macro token-level recall.
    pub token_recall: f64,
    /// Questions with no chunk holding a span whole.
    pub unreachable: usize,
    /// Questions whose top-k cut fell inside tied scores.
    pub ties_at_k: usize,
    /// Tokens this configuration embeds (cl100k count of each distinct text as sent: chunks for
    /// dense and hybrid, the corpus's sentences for semantic, and the questions; 0 for BM25 on
    /// non-semantic chunks), whether or not the cache already held them.
    #[serde(default)]
    pub embed_tokens: usize,
    /// Their cost in USD at the embedding models' input prices (empty when a price is unknown).
    #[serde(default)]
    pub embed_cost_usd: Option<f64>,
    /// Embedding time of those texts, ms: each text's share (by tokens) of its batch's latency
    /// when it was embedded, kept in the cache, so a cached rerun reports the same cost.
    #[serde(default)]
    pub embed_ms: f64,
}

/// One row of sweep_questions.csv: a configuration × question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionRow {
    /// Configuration id.
    pub config_id: String,
    /// Question id.
    pub question_id: String,
    /// Question type tag (empty if none).
    pub question_type: String,
    /// Evidence spans.
    pub n_spans: usize,
    /// 1 when a span lies wholly in a top-k chunk.
    pub hit: u8,
    /// Span recall@k.
    pub span_recall: f64,
    /// Coverage@k.
    pub coverage: f64,
    /// Normalised margin (−1 when unreachable).
    pub margin: f64,
    /// 1 when no chunk holds a span whole.
    pub unreachable: u8,
    /// Rank of the first correct chunk in the whole ranking (empty when unreachable).
    pub first_correct_rank: Option<usize>,
    /// Reciprocal rank at k.
    pub reciprocal_rank: f64,
    /// Token-level IoU.
    pub iou: f64,
    /// Token-level precision.
    pub precision: f64,
    /// Token-level recall.
    pub token_recall: f64,
    /// 1 when the top-k cut fell inside tied scores.
    pub tie_at_k: u8,
    /// Retrieved chunk ids, best first, `|`-separated.
    pub retrieved_chunk_ids: String,
    /// Their scores, `|`-separated.
    pub retrieved_scores: String,
    /// Their code-point ranges in their documents, `start-end`, `|`-separated (empty in run
    /// folders written before this column existed).
    #[serde(default)]
    pub retrieved_ranges: String,
}

/// Everything one configuration produced.
#[derive(Debug, Clone)]
pub struct ConfigOutcome {
    /// The configuration.
    pub config: ConfigSpec,
    /// Its sweep.csv row.
    pub row: SweepRow,
    /// Its sweep_questions.csv rows, in golden-set order.
    pub questions: Vec<QuestionRow>,
    /// Per-question metrics, in golden-set order.
    pub metrics: Vec<QuestionMetrics>,
    /// The chunks (kept for `--dump-chunks`; empty otherwise).
    pub chunks: Vec<Chunk>,
    /// Wall time to chunk, index, retrieve and score this configuration, in milliseconds (kept
    /// out of sweep.csv so that equal inputs give byte-identical CSVs).
    pub elapsed_ms: u64,
    /// Where that time went.
    pub times: StageTimes,
}

/// Wall time of one configuration's stages, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct StageTimes {
    /// Tokenizing and chunking the corpus (token counts, heading paths included).
    pub chunk_ms: f64,
    /// Building the BM25 index.
    pub index_ms: f64,
    /// Scoring every chunk for every question and taking the top k.
    pub retrieve_ms: f64,
    /// Computing the metrics (and realized overlap) from the rankings.
    pub score_ms: f64,
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Mean tokens shared by each chunk with the previous chunk of the same document (0 when no
/// document has two chunks), counted in the documents' token streams.
pub fn realized_overlap(tokens: &CorpusTokens, chunks: &[Chunk]) -> f64 {
    let mut pairs = 0usize;
    let mut shared = 0usize;
    for w in chunks.windows(2) {
        let (prev, cur) = (&w[0], &w[1]);
        if prev.doc != cur.doc {
            continue;
        }
        pairs += 1;
        if prev.byte_end > cur.byte_start {
            let end = prev.byte_end.min(cur.byte_end);
            shared += tokens.doc(cur.doc).count_in(cur.byte_start, end);
        }
    }
    if pairs == 0 {
        0.0
    } else {
        shared as f64 / pairs as f64
    }
}

/// A configuration's chunks and retriever, built once and queried per question. The sweep and
/// the judge stage both retrieve through it, so they see the same top-k.
pub struct ConfigIndex {
    /// The configuration.
    pub config: ConfigSpec,
    /// Its chunks, in corpus order, with their prefixes set.
    pub chunks: Vec<Chunk>,
    /// BM25 over the chunks' indexed texts (prefix + text; chunk order).
    pub index: Bm25Index,
    /// Time spent chunking, in ms.
    pub chunk_ms: f64,
    /// Time spent indexing, in ms.
    pub index_ms: f64,
    /// Unit chunk vectors, for dense and hybrid.
    pub dense: Option<DenseIndex>,
    /// Embeddings and retriever settings.
    pub context: Arc<RetrievalContext>,
}

/// What dense, hybrid and semantic configurations need beyond the corpus: the embeddings of
/// every text (computed before the sweep, see [`crate::sweep_embed`]) and their settings.
/// The default (no embeddings) serves BM25 configurations.
#[derive(Debug, Clone, Default)]
pub struct RetrievalContext {
    /// Vectors of chunks, sentences and questions.
    pub embeddings: Embeddings,
    /// Fusion settings.
    pub hybrid: HybridSettings,
    /// Semantic chunking settings.
    pub semantic: SemanticSettings,
    /// Model-written contexts of the `llm_context` prefix (empty when not swept).
    pub contexts: ContextMap,
}

impl RetrievalContext {
    /// A context with `embeddings` and the spec's hybrid and semantic settings (no model-written
    /// contexts; set `contexts` for `llm_context` prefixes).
    pub fn new(embeddings: Embeddings, spec: &SweepSpec) -> Self {
        RetrievalContext {
            embeddings,
            hybrid: spec.hybrid,
            semantic: spec.semantic,
            contexts: ContextMap::default(),
        }
    }

    /// The chunking context (sentence vectors when there are embeddings).
    pub fn chunk_context(&self) -> chunking::ChunkContext<'_> {
        chunking::ChunkContext {
            sentence_vectors: (!self.embeddings.is_empty())
                .then_some(&self.embeddings as &dyn chunking::semantic::SentenceVectors),
            semantic: self.semantic,
        }
    }
}

impl ConfigIndex {
    /// Chunks the corpus with `config` (token streams from [`CorpusTokens::new`]), puts the
    /// configuration's prefix on each chunk (model-written ones from `contexts`, for
    /// `llm_context`) and indexes the prefixed texts.
    ///
    /// # Errors
    /// [`SweepError::Chunk`] for invalid parameters, [`SweepError::Enrich`] for an
    /// `llm_context` chunk missing from `contexts`, [`SweepError::Retrieval`] if indexing fails.
    pub fn build(
        corpus: &Corpus,
        tokens: &CorpusTokens,
        config: &ConfigSpec,
        contexts: &ContextMap,
    ) -> Result<Self, SweepError> {
        let context = RetrievalContext {
            contexts: contexts.clone(),
            ..RetrievalContext::default()
        };
        Self::build_with(corpus, tokens, config, &Arc::new(context))
    }

    /// [`ConfigIndex::build`] with embeddings (dense, hybrid, semantic): the chunk vectors are
    /// looked up in `context` and normalised once.
    ///
    /// # Errors
    /// As [`ConfigIndex::build`]; [`SweepError::Embed`] for a chunk or sentence not embedded.
    pub fn build_with(
        corpus: &Corpus,
        tokens: &CorpusTokens,
        config: &ConfigSpec,
        context: &Arc<RetrievalContext>,
    ) -> Result<Self, SweepError> {
        let started = Instant::now();
        let params = config.params;
        let mut chunks =
            chunking::chunk_corpus_with(corpus, tokens, &params, &context.chunk_context())
                .map_err(|source| SweepError::Chunk {
                    strategy: params.strategy,
                    size: params.chunk_size,
                    source,
                })?;
        enrich::enrich(
            corpus,
            tokens.counter(),
            config.prefix,
            &mut chunks,
            &context.contexts,
        )?;
        let chunk_ms = ms_since(started);
        let t = Instant::now();
        let texts: Vec<_> = chunks.iter().map(|c| c.indexed_text(corpus)).collect();
        let index = Bm25Index::build(texts.iter().map(|t| t.as_ref()))?;
        // Dense vectors are of the chunk text alone: the embedding step does not know the
        // prefixes (a known gap: prefixes reach BM25 and the generator, not the embeddings).
        let dense = if config.retriever.needs_embeddings() {
            let mut vectors = Vec::with_capacity(chunks.len());
            for c in &chunks {
                vectors.push(
                    context
                        .embeddings
                        .get(Role::Document, c.text(corpus))?
                        .vector
                        .clone(),
                );
            }
            Some(DenseIndex::build(vectors.iter().map(|v| &v[..]))?)
        } else {
            None
        };
        Ok(ConfigIndex {
            config: config.clone(),
            chunks,
            index,
            chunk_ms,
            index_ms: ms_since(t),
            dense,
            context: Arc::clone(context),
        })
    }

    /// One score per chunk for `query`, on the retriever's scale: BM25 scores, cosines, or
    /// fused reciprocal-rank scores.
    ///
    /// # Errors
    /// [`SweepError::Retrieval`], or [`SweepError::Embed`] for a question not embedded.
    pub fn scores(&self, query: &str) -> Result<Vec<f32>, SweepError> {
        let dense = |d: &DenseIndex| -> Result<Vec<f32>, SweepError> {
            let q = self.context.embeddings.get(Role::Query, query)?;
            Ok(d.scores(&q.vector)?)
        };
        match (self.config.retriever, &self.dense) {
            (RetrieverKind::Bm25, _) => Ok(self.index.scores(query)?),
            (RetrieverKind::Dense, Some(d)) => dense(d),
            (RetrieverKind::Hybrid, Some(d)) => {
                let bm25 = self.index.scores(query)?;
                Ok(self.context.hybrid.fuse(&bm25, &dense(d)?))
            }
            (_, None) => unreachable!("dense and hybrid indexes are built with vectors"),
        }
    }

    /// The margin's scale for this retriever.
    pub fn margin_scale(&self) -> MarginScale {
        match self.config.retriever {
            RetrieverKind::Bm25 => MarginScale::TopScore,
            RetrieverKind::Dense => MarginScale::Raw,
            RetrieverKind::Hybrid => MarginScale::Divide(self.context.hybrid.max_score()),
        }
    }

    /// The top-k (`config.top_k`) chunks for `query`, best first, ties in chunk order.
    ///
    /// # Errors
    /// [`SweepError::Retrieval`] if the engine fails.
    pub fn retrieve(&self, query: &str) -> Result<Ranking, SweepError> {
        let scores = self.scores(query)?;
        Ok(rank_top_k(&scores, self.config.top_k))
    }
}

/// Runs one configuration: chunk, prefix, index, retrieve top-k for every question, score.
/// `tokens` is the corpus's token streams ([`CorpusTokens::new`]), shared by every
/// configuration; `contexts` holds the model-written contexts of `llm_context` configurations
/// (empty otherwise). Spans are scored on the chunks' original ranges, whatever the prefix.
///
/// # Errors
/// [`SweepError::Chunk`] for invalid parameters, [`SweepError::Enrich`] for a missing context,
/// [`SweepError::Retrieval`] if the index fails.
pub fn run_config(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    golden: &GoldenSet,
    config: &ConfigSpec,
    contexts: &ContextMap,
    keep_chunks: bool,
) -> Result<ConfigOutcome, SweepError> {
    let context = RetrievalContext {
        contexts: contexts.clone(),
        ..RetrievalContext::default()
    };
    run_config_with(
        corpus,
        tokens,
        golden,
        config,
        &Arc::new(context),
        keep_chunks,
    )
}

/// [`run_config`] with embeddings, for dense, hybrid and semantic configurations.
///
/// # Errors
/// As [`run_config`]; [`SweepError::Embed`] for a text not embedded beforehand.
pub fn run_config_with(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    golden: &GoldenSet,
    config: &ConfigSpec,
    context: &Arc<RetrievalContext>,
    keep_chunks: bool,
) -> Result<ConfigOutcome, SweepError> {
    let started = Instant::now();
    let tokenizer = tokens.counter().kind();
    let params = config.params;
    let built = ConfigIndex::build_with(corpus, tokens, config, context)?;
    let scale = built.margin_scale();
    let embed_cost = crate::sweep_embed::config_embed_cost(corpus, golden, config, &built)?;
    let (chunk_ms, index_ms) = (built.chunk_ms, built.index_ms);
    let chunks = &built.chunks;
    let mut times = StageTimes {
        chunk_ms,
        index_ms,
        ..StageTimes::default()
    };
    let table = ChunkTable::new(chunks, corpus.docs.len());
    let config_id = config.id();
    let mut metrics = Vec::with_capacity(golden.questions.len());
    let mut rows = Vec::with_capacity(golden.questions.len());
    for q in &golden.questions {
        let t = Instant::now();
        let scores = built.scores(&q.text)?;
        let ranking = rank_top_k(&scores, config.top_k);
        times.retrieve_ms += ms_since(t);
        let t = Instant::now();
        let m = metrics::score_question_scaled(q, &table, &scores, &ranking, scale);
        rows.push(QuestionRow {
            config_id: config_id.clone(),
            question_id: q.id.clone(),
            question_type: q.question_type.clone().unwrap_or_default(),
            n_spans: m.n_spans,
            hit: u8::from(m.hit),
            span_recall: m.span_recall,
            coverage: m.coverage,
            margin: m.margin,
            unreachable: u8::from(m.unreachable),
            first_correct_rank: m.first_correct_rank,
            reciprocal_rank: m.reciprocal_rank,
            iou: m.iou,
            precision: m.precision,
            token_recall: m.token_recall,
            tie_at_k: u8::from(m.tie_at_k),
            retrieved_chunk_ids: ranking
                .top
                .iter()
                .map(|&i| chunks[i].id(corpus))
                .collect::<Vec<_>>()
                .join("|"),
            retrieved_scores: ranking
                .scores
                .iter()
                .map(|s| format!("{s:.4}"))
                .collect::<Vec<_>>()
                .join("|"),
            retrieved_ranges: ranking
                .top
                .iter()
                .map(|&i| format!("{}-{}", chunks[i].start, chunks[i].end))
                .collect::<Vec<_>>()
                .join("|"),
        });
        metrics.push(m);
        times.score_ms += ms_since(t);
    }
    let t = Instant::now();
    let agg: Aggregate = metrics::aggregate(&metrics);
    let index_tokens: usize = chunks.iter().map(Chunk::total_tokens).sum();
    let prefix_tokens: usize = chunks.iter().map(|c| c.prefix_tokens).sum();
    let per_chunk = |total: usize| {
        if chunks.is_empty() {
            0.0
        } else {
            total as f64 / chunks.len() as f64
        }
    };
    let mean_chunk_tokens = per_chunk(index_tokens);
    let mean_prefix_tokens = per_chunk(prefix_tokens);
    let row = SweepRow {
        config_id,
        strategy: params.strategy.name().into(),
        chunk_size: params.chunk_size,
        chunk_overlap: params.chunk_overlap,
        realized_overlap: realized_overlap(tokens, chunks),
        prefix: config.prefix.to_string(),
        retriever: config.retriever.name().into(),
        top_k: config.top_k,
        tokenizer: tokenizer.name().into(),
        n_chunks: chunks.len(),
        mean_chunk_tokens,
        mean_prefix_tokens,
        index_tokens,
        tokens_per_query: config.top_k as f64 * mean_chunk_tokens,
        n_questions: agg.n_questions,
        span_recall: agg.span_recall,
        span_recall_micro: agg.span_recall_micro,
        hit_rate: agg.hit_rate,
        coverage: agg.coverage,
        coverage_micro: agg.coverage_micro,
        margin: agg.margin,
        mrr: agg.mrr,
        iou: agg.iou,
        iou_micro: agg.iou_micro,
        precision: agg.precision,
        token_recall: agg.token_recall,
        unreachable: agg.unreachable,
        ties_at_k: agg.ties_at_k,
        embed_tokens: embed_cost.tokens,
        embed_cost_usd: embed_cost.cost_usd,
        embed_ms: embed_cost.ms,
    };
    times.score_ms += ms_since(t);
    Ok(ConfigOutcome {
        config: config.clone(),
        row,
        questions: rows,
        metrics,
        chunks: if keep_chunks {
            built.chunks.clone()
        } else {
            Vec::new()
        },
        elapsed_ms: started.elapsed().as_millis() as u64,
        times,
    })
}

/// Runs every configuration of `spec` (in parallel), calling `on_done` as each finishes.
/// Results come back in plan order whatever the finishing order. `tokens` must be the corpus's
/// token streams in `spec.tokenizer`'s unit ([`CorpusTokens::new`]); they are computed once and
/// shared by every configuration. `contexts` holds the model-written contexts when
/// `spec.prefixes` has `llm_context` (see [`crate::llm_context::generate_contexts`]), else it
/// may be empty.
///
/// # Errors
/// Any error of [`plan`] (before any work), [`SweepError::NoQuestions`], or the first error of
/// [`run_config`].
pub fn run_sweep(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    golden: &GoldenSet,
    spec: &SweepSpec,
    contexts: &ContextMap,
    keep_chunks: bool,
    on_done: impl Fn(&ConfigOutcome) + Sync,
) -> Result<Vec<ConfigOutcome>, SweepError> {
    let context = Arc::new(RetrievalContext {
        contexts: contexts.clone(),
        ..RetrievalContext::new(Embeddings::default(), spec)
    });
    run_sweep_with(corpus, tokens, golden, spec, &context, keep_chunks, on_done)
}

/// [`run_sweep`] with embeddings ([`crate::sweep_embed::embed_for_sweep`] makes the context).
///
/// # Errors
/// As [`run_sweep`]; [`SweepError::Embed`] for a text not embedded beforehand.
pub fn run_sweep_with(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    golden: &GoldenSet,
    spec: &SweepSpec,
    context: &Arc<RetrievalContext>,
    keep_chunks: bool,
    on_done: impl Fn(&ConfigOutcome) + Sync,
) -> Result<Vec<ConfigOutcome>, SweepError> {
    let configs = plan(spec)?;
    if golden.questions.is_empty() {
        return Err(SweepError::NoQuestions);
    }
    assert_eq!(
        tokens.counter().kind(),
        spec.tokenizer,
        "token streams must be in the sweep's unit"
    );
    configs
        .par_iter()
        .map(|config| {
            let outcome = run_config_with(corpus, tokens, golden, config, context, keep_chunks)?;
            on_done(&outcome);
            Ok(outcome)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_parses_ratios_and_counts() {
        assert_eq!("0.15".parse::<Overlap>(), Ok(Overlap::Ratio(0.15)));
        assert_eq!("32".parse::<Overlap>(), Ok(Overlap::Tokens(32)));
        assert!("1.5".parse::<Overlap>().is_err());
        assert!("x".parse::<Overlap>().is_err());
        assert_eq!(Overlap::Ratio(0.25).tokens_for(12), 3);
        assert_eq!(Overlap::Ratio(0.15).tokens_for(64), 9);
    }

    #[test]
    fn plan_rejects_overlap_not_below_size_and_zero_k() {
        let spec = SweepSpec {
            sizes: vec![64, 16],
            overlap: Overlap::Tokens(16),
            ..SweepSpec::default()
        };
        let err = plan(&spec).unwrap_err();
        assert!(
            err.to_string()
                .contains("chunk_overlap 16 must be smaller than chunk_size 16"),
            "{err}"
        );
        let spec = SweepSpec {
            top_k: 0,
            ..SweepSpec::default()
        };
        assert!(matches!(plan(&spec), Err(SweepError::ZeroK)));
        assert_eq!(plan(&SweepSpec::default()).unwrap().len(), 15);
        assert_eq!(
            plan(&SweepSpec::default()).unwrap()[0].id(),
            "fixed-64-o9-none-bm25-k5"
        );
    }

    #[test]
    fn config_ids_parse_back() {
        for c in plan(&SweepSpec::default()).unwrap() {
            assert_eq!(c.id().parse::<ConfigSpec>().unwrap(), c);
        }
        let c: ConfigSpec = "recursive-256-o38-none-bm25-k5".parse().unwrap();
        assert_eq!(c.params.chunk_size, 256);
        assert_eq!(c.params.chunk_overlap, 38);
        assert_eq!(c.top_k, 5);
        assert!(
            "recursive-256-o300-none-bm25-k5"
                .parse::<ConfigSpec>()
                .is_err()
        );
        assert_eq!(
            "recursive-256-o38-none-hybrid-k5"
                .parse::<ConfigSpec>()
                .unwrap()
                .retriever,
            RetrieverKind::Hybrid
        );
        assert!(
            "recursive-256-o38-none-colbert-k5"
                .parse::<ConfigSpec>()
                .is_err()
        );
        assert!("blob-256-o38-none-bm25-k5".parse::<ConfigSpec>().is_err());
    }
}

#[cfg(test)]
mod prefix_tests {
    //! The prefix is indexed but never moves a range: the same configuration with and without a
    //! prefix has the same chunks (ranges, token counts of the text) and its spans are scored on
    //! the original text.
    use super::*;
    use crate::corpus::Document;
    use crate::golden::{EvidenceSpan, Location, Question};

    const A: &str = "# Billing\n\n## Refunds\n\nIt takes fourteen days to arrive.\n\n## Invoices\n\nIt is sent on the first of the month.\n";
    const Z: &str = "# Sync\n\n## Conflicts\n\nIt keeps both copies side by side.\n";

    fn setup() -> (Corpus, CorpusTokens, GoldenSet) {
        let corpus = Corpus::from_documents(
            "t",
            vec![Document::new("a.md", A), Document::new("z.md", Z)],
        );
        let tokens = CorpusTokens::new(&corpus, TokenizerKind::Cl100kBase);
        let span = |doc: usize, text: &str, needle: &str| {
            let start = text.find(needle).unwrap();
            EvidenceSpan {
                locations: vec![Location {
                    doc,
                    start,
                    end: start + needle.len(),
                }],
            }
        };
        let q = |id: &str, text: &str, spans| Question {
            line: 1,
            id: id.into(),
            text: text.into(),
            spans,
            answer: None,
            question_type: None,
        };
        let golden = GoldenSet {
            path: "g.jsonl".into(),
            questions: vec![
                q(
                    "conflicts",
                    "conflicts",
                    vec![span(1, Z, "It keeps both copies side by side.")],
                ),
                q(
                    "refunds",
                    "how many days",
                    vec![span(0, A, "It takes fourteen days to arrive.")],
                ),
            ],
        };
        (corpus, tokens, golden)
    }

    fn config(prefix: Prefix, top_k: usize) -> ConfigSpec {
        ConfigSpec {
            params: ChunkParams {
                strategy: Strategy::Recursive,
                chunk_size: 12,
                chunk_overlap: 0,
            },
            prefix,
            retriever: RetrieverKind::Bm25,
            top_k,
        }
    }

    #[test]
    fn the_prefix_never_shifts_ranges_and_spans_are_scored_on_the_original_text() {
        let (corpus, tokens, golden) = setup();
        let none = run_config(
            &corpus,
            &tokens,
            &golden,
            &config(Prefix::None, 2),
            &ContextMap::new(),
            true,
        )
        .unwrap();
        let head = run_config(
            &corpus,
            &tokens,
            &golden,
            &config(Prefix::HeadingPath, 2),
            &ContextMap::new(),
            true,
        )
        .unwrap();
        let ranges = |o: &ConfigOutcome| -> Vec<(usize, usize, usize, usize, usize)> {
            o.chunks
                .iter()
                .map(|c| (c.doc, c.start, c.end, c.byte_start, c.tokens))
                .collect()
        };
        assert_eq!(ranges(&none), ranges(&head));
        // The body of the Conflicts section is its own chunk; its prefix is the heading path and
        // its indexed text is the prefix, a blank line, then the untouched text.
        let body = head
            .chunks
            .iter()
            .find(|c| c.text(&corpus) == "It keeps both copies side by side.")
            .expect("the section body is one chunk");
        assert_eq!(body.prefix, "Sync > Conflicts");
        assert_eq!(
            body.indexed_text(&corpus),
            "Sync > Conflicts\n\nIt keeps both copies side by side."
        );
        assert_eq!(
            &Z[body.byte_start..body.byte_end],
            "It keeps both copies side by side."
        );
        assert!(
            none.chunks
                .iter()
                .all(|c| c.prefix.is_empty() && c.prefix_tokens == 0)
        );
        // Costs include the prefix tokens: "Sync > Conflicts\n\n" is 5 cl100k tokens.
        assert_eq!(body.prefix_tokens, 5);
        let extra: usize = head.chunks.iter().map(|c| c.prefix_tokens).sum();
        assert_eq!(head.row.index_tokens, none.row.index_tokens + extra);
        assert!(
            (head.row.tokens_per_query
                - none.row.tokens_per_query
                - 2.0 * extra as f64 / head.chunks.len() as f64)
                .abs()
                < 1e-9
        );
        // Only the heading names "conflicts": without the prefix the body is not retrieved, with
        // it the body is, and the span (on the original text) is found whole.
        assert_eq!(none.questions[0].hit, 0, "{:?}", none.questions[0]);
        assert_eq!(head.questions[0].hit, 1, "{:?}", head.questions[0]);
        assert_eq!(head.questions[0].coverage, 1.0);

        // Retrieving every chunk, every metric computed from ranges is the same with and without
        // the prefix (a shifted range would change coverage and token precision).
        let all = none.chunks.len();
        let none = run_config(
            &corpus,
            &tokens,
            &golden,
            &config(Prefix::None, all),
            &ContextMap::new(),
            false,
        )
        .unwrap();
        let title = run_config(
            &corpus,
            &tokens,
            &golden,
            &config(Prefix::TitleHeading, all),
            &ContextMap::new(),
            false,
        )
        .unwrap();
        for (a, b) in none.metrics.iter().zip(&title.metrics) {
            assert_eq!(a.span_recall, 1.0);
            assert_eq!(
                (
                    a.span_recall,
                    a.coverage,
                    a.iou,
                    a.precision,
                    a.token_recall,
                    a.unreachable
                ),
                (
                    b.span_recall,
                    b.coverage,
                    b.iou,
                    b.precision,
                    b.token_recall,
                    b.unreachable
                )
            );
        }
    }

    #[test]
    fn llm_context_without_its_context_is_an_error_and_with_it_is_the_prefix() {
        let (corpus, tokens, golden) = setup();
        let err = run_config(
            &corpus,
            &tokens,
            &golden,
            &config(Prefix::LlmContext, 2),
            &ContextMap::new(),
            false,
        )
        .unwrap_err();
        assert!(
            matches!(err, SweepError::Enrich(EnrichError::MissingContext { .. })),
            "{err}"
        );
        let chunks =
            chunking::chunk_corpus(&corpus, &tokens, &config(Prefix::None, 2).params).unwrap();
        let contexts: ContextMap = chunks
            .iter()
            .map(|c| {
                (
                    enrich::ChunkKey::of(c),
                    format!("From {}.", corpus.docs[c.doc].id),
                )
            })
            .collect();
        let o = run_config(
            &corpus,
            &tokens,
            &golden,
            &config(Prefix::LlmContext, 2),
            &contexts,
            true,
        )
        .unwrap();
        assert_eq!(o.chunks.len(), chunks.len());
        assert_eq!(
            o.chunks[0].indexed_text(&corpus).split("\n\n").next(),
            Some("From a.md.")
        );
        assert_eq!(o.row.prefix, "llm_context");
        assert_eq!(o.row.config_id, "recursive-12-o0-llm_context-bm25-k2");
        assert_eq!(
            "recursive-12-o0-llm_context-bm25-k2"
                .parse::<ConfigSpec>()
                .unwrap()
                .prefix,
            Prefix::LlmContext
        );
    }

    #[test]
    fn the_grid_crosses_prefixes_with_strategies_and_sizes() {
        let spec = SweepSpec {
            strategies: vec![Strategy::Fixed],
            sizes: vec![64, 128],
            prefixes: vec![Prefix::None, Prefix::Title],
            ..SweepSpec::default()
        };
        let ids: Vec<String> = plan(&spec).unwrap().iter().map(ConfigSpec::id).collect();
        assert_eq!(
            ids,
            [
                "fixed-64-o9-none-bm25-k5",
                "fixed-64-o9-title-bm25-k5",
                "fixed-128-o19-none-bm25-k5",
                "fixed-128-o19-title-bm25-k5"
            ]
        );
        let spec = SweepSpec {
            prefixes: vec![],
            ..SweepSpec::default()
        };
        assert!(matches!(plan(&spec), Err(SweepError::NoPrefix)));
    }
}
