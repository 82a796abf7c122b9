//! The settings sections as given: one struct per section of the config file, whose fields are
//! at once the section's keys (serde) and the section's flags (clap, `#[command(flatten)]` into a
//! command). Every field is optional: `None` is "not given here", so that
//! [`super::merge`] can lay the flags over the file and the file over the settings' defaults.
//! A field is documented once: its doc comment is the flag's `--help` text.
//!
//! A new setting is written in two places: a field here (its key, its flag or `#[arg(skip)]`,
//! its help) and the field of the resolved settings it fills (with its default), which must
//! have the same serde name.

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::chunking::Strategy;
use crate::chunking::enrich::Prefix;
use crate::expand::Expand;
use crate::judge::JudgeMode;
use crate::llm::RerankApi;
use crate::retrieval::AnalyzerKind;
use crate::retrieval::embeddings::Overflow;
use crate::retrieval::hybrid::HybridSettings;
use crate::select::Rule;
use crate::sweep::grid::{Overlap, RetrieverKind};
use crate::tokenize::TokenizerKind;

/// `[sweep]`: the grid; fills [`crate::sweep::grid::SweepSpec`] (and the plan's `dump_chunks`).
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSection {
    /// Chunking strategies, comma-separated: fixed, words, recursive, markdown, sentence, page
    /// (PDF pages), semantic (needs an embeddings server, see [embed]), or the name of an
    /// external chunker (--chunker, [[chunkers]], --chunks).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub strategies: Option<Vec<Strategy>>,
    /// Chunk sizes in tokens, comma-separated (default 64,128,256,512,1024).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub sizes: Option<Vec<usize>>,
    /// Overlap: a ratio of the size below 1 (default 0.15) or a whole token count.
    #[arg(long, value_name = "RATIO")]
    pub overlap: Option<Overlap>,
    /// Chunks retrieved per question (default 5).
    #[arg(long = "k", value_name = "N")]
    pub top_k: Option<usize>,
    /// Context budgets in tokens per query, comma-separated (e.g. 1000,2000,4000): every
    /// configuration is also cut at each (chunks in rank order while they fit); the first
    /// budget decides and the judge retrieves with it.
    #[arg(long = "budget", value_delimiter = ',', value_name = "LIST")]
    pub budgets: Option<Vec<usize>>,
    /// Token unit: cl100k_base (default), o200k_base or words.
    #[arg(long, value_name = "NAME")]
    pub tokenizer: Option<TokenizerKind>,
    /// Retrievers, comma-separated: bm25 (default), dense, hybrid, or a [[retrievers]] name
    /// (your own engine, sent vectors only when an embeddings model is set; docs/retrievers.md);
    /// dense and hybrid need an embeddings server, see [embed].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub retrievers: Option<Vec<RetrieverKind>>,
    /// Contextual prefixes, comma-separated: none (default), title, heading_path, title_heading,
    /// llm_context (a model-written context per chunk; uses [llm] and [context], cached).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub prefixes: Option<Vec<Prefix>>,
    /// Reranking, comma-separated: none (default) and a reranker model, e.g. none,MODEL: each
    /// retriever's top candidates reordered through a /rerank API (see [rerank]; cached).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub rerank: Option<Vec<String>>,
    /// What is sent for each retrieved chunk, comma-separated: none (default), neighbours:N
    /// (N chunks before and after it, merged where they touch), parent:P (its section, cut to
    /// at most P tokens); applied after ranking, before the cut (docs/retrieval.md).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub expand: Option<Vec<Expand>>,
    /// An external chunker swept as a strategy, NAME=COMMAND (repeatable; the command split as
    /// a shell would, run in the current folder; docs/chunkers.md). Name it in --strategies.
    #[arg(long = "chunker", value_name = "NAME=COMMAND")]
    #[serde(skip)]
    pub chunker: Vec<String>,
    /// A folder of precomputed chunks, one <name>-<chunk_size>-o<chunk_overlap>.jsonl per
    /// configuration (docs/chunkers.md); a file is swept when its name is in --strategies and
    /// its size in --sizes.
    #[arg(long = "chunks", value_name = "DIR")]
    #[serde(skip)]
    pub chunks: Option<PathBuf>,
    /// Also write chunks/<config_id>.jsonl for every configuration.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub dump_chunks: Option<bool>,
    /// `[sweep.hybrid]`: reciprocal rank fusion of the `hybrid` retriever (config file only).
    #[arg(skip)]
    pub hybrid: Option<HybridSettings>,
    /// `[sweep.semantic]`.
    #[command(flatten)]
    #[serde(default)]
    pub semantic: SemanticSection,
    /// `[sweep.bm25]`.
    #[command(flatten)]
    #[serde(default)]
    pub bm25: Bm25Section,
}

/// `[sweep.semantic]`: fills [`crate::chunking::semantic::SemanticSettings`].
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SemanticSection {
    /// Semantic chunking: boundary where the sentence distance exceeds this percentile (default 95).
    #[arg(long = "semantic-percentile", value_name = "P")]
    pub percentile: Option<f64>,
}

/// `[sweep.bm25]`: fills [`crate::retrieval::Bm25Settings`].
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bm25Section {
    /// BM25 analyzer: standard (default: Unicode words, identifiers split and kept whole, CJK
    /// bigrams) or seed (seed 000's regex).
    #[arg(long, value_name = "NAME")]
    pub analyzer: Option<AnalyzerKind>,
    /// English stemming of BM25 terms.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub stem: Option<bool>,
    /// BM25 term saturation k1 (default 1.2).
    #[arg(long = "bm25-k1", value_name = "K1")]
    pub k1: Option<f64>,
    /// BM25 length normalisation b, 0 to 1 (default 0.75).
    #[arg(long = "bm25-b", value_name = "B")]
    pub b: Option<f64>,
}

/// `[embed]`: fills [`crate::retrieval::embeddings::EmbedSettings`] (its documentation gives
/// the keys' defaults and environment variables).
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbedSection {
    /// Embeddings server (default $CHUNKSWEEP_EMBED_BASE_URL, else the [llm] server).
    #[arg(long = "embed-base-url", value_name = "URL")]
    pub base_url: Option<String>,
    /// Embedding model for documents (default $CHUNKSWEEP_EMBED_MODEL).
    #[arg(long = "embed-model", id = "embed_model", value_name = "MODEL")]
    pub model: Option<String>,
    /// Embedding model for queries (default $CHUNKSWEEP_EMBED_QUERY_MODEL, else --embed-model).
    #[arg(long = "embed-query-model", value_name = "MODEL")]
    pub query_model: Option<String>,
    /// Prepended to every query (e.g. "query: ").
    #[arg(skip)]
    pub query_prefix: Option<String>,
    /// Prepended to every document (e.g. "passage: ").
    #[arg(skip)]
    pub document_prefix: Option<String>,
    /// Inputs per request.
    #[arg(skip)]
    pub batch_size: Option<usize>,
    /// Longest input, in cl100k tokens, prefix included.
    #[arg(skip)]
    pub max_input_tokens: Option<usize>,
    /// Longer inputs: error or truncate.
    #[arg(skip)]
    pub overflow: Option<Overflow>,
    /// Embed each chunk's bare text instead of its prefix + text (as BM25 indexes it), so a
    /// prefix reaches BM25 and the generator only ([embed] embed_prefix = false).
    #[arg(
        long = "no-embed-prefix",
        num_args = 0,
        default_missing_value = "false"
    )]
    pub embed_prefix: Option<bool>,
    /// The vector cache (SQLite); relative to the config file's folder when given there.
    #[arg(skip)]
    pub cache_path: Option<PathBuf>,
}

/// `[rerank]`: how reranked configurations are reranked; fills
/// [`crate::retrieval::rerank::RerankSettings`] (the model is the one swept in `--rerank`).
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RerankSection {
    /// Reranker server: a base URL ending in /v1 for --rerank-api v1, the server's root for
    /// tei (default: the [llm] server).
    #[arg(long = "rerank-base-url", id = "rerank_base_url", value_name = "URL")]
    pub base_url: Option<String>,
    /// Rerank wire shape: v1 (default; Cohere, Jina, llama.cpp's server, vLLM) or tei.
    #[arg(long = "rerank-api", id = "rerank_api", value_name = "API")]
    pub api: Option<RerankApi>,
    /// First-stage candidates reranked per question (default 50).
    #[arg(long = "rerank-depth", id = "rerank_depth", value_name = "N")]
    pub depth: Option<usize>,
    /// Documents per rerank request (default 50).
    #[arg(skip)]
    pub documents_per_request: Option<usize>,
}

/// `[context]`: model-written `llm_context` prefixes; fills
/// [`crate::prepare::contexts::ContextSettings`] (the model's server is in `[llm]`).
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextSection {
    /// Model that writes llm_context prefixes (default $CHUNKSWEEP_CHAT_MODEL, else gpt-4o-mini).
    #[arg(long = "context-model", id = "context_model", value_name = "MODEL")]
    pub model: Option<String>,
    /// Most document tokens shown with a chunk when writing its llm_context (default 2048).
    #[arg(long = "context-window", value_name = "TOKENS")]
    pub window_tokens: Option<usize>,
    /// Cap on a context, in completion tokens (default 100).
    #[arg(skip)]
    pub max_tokens: Option<u32>,
    /// Requests in progress at once (default 4).
    #[arg(skip)]
    pub concurrency: Option<usize>,
    /// Prompt template (relative to the config file's folder; default: the built-in one).
    #[arg(skip)]
    pub prompt: Option<PathBuf>,
}

/// `[judge]`: the judge stage of `run`; fills [`crate::judge::JudgeSettings`] (its documentation
/// gives the defaults).
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeSection {
    /// Model that writes the answers (default $CHUNKSWEEP_CHAT_MODEL, else gpt-4o-mini).
    #[arg(long, value_name = "MODEL")]
    pub generator_model: Option<String>,
    /// Model that grades them (default $CHUNKSWEEP_CHAT_MODEL, else gpt-4o-mini).
    #[arg(long, value_name = "MODEL")]
    pub judge_model: Option<String>,
    /// How many of the selection's candidates to judge (default 3).
    #[arg(long = "n-candidates", id = "n_candidates", value_name = "N")]
    pub candidates: Option<usize>,
    /// Cap on an answer, in tokens (default 256).
    #[arg(skip)]
    pub max_tokens: Option<u32>,
    /// Cap on a verdict, in tokens (default 128).
    #[arg(skip)]
    pub judge_max_tokens: Option<u32>,
    /// Sampling temperature of both models (default 0).
    #[arg(skip)]
    pub temperature: Option<f32>,
    /// Seed sent to servers that accept one (default 7).
    #[arg(skip)]
    pub seed: Option<i64>,
    /// Questions in progress at once (default 4).
    #[arg(skip)]
    pub concurrency: Option<usize>,
    /// Stop cleanly before the estimate or the spend passes this many USD (the flag is
    /// [`crate::budget::MaxCostFlag`]).
    #[arg(skip)]
    pub max_cost_usd: Option<f64>,
    /// Significance level of the paired McNemar tests (default
    /// [`crate::stats::DEFAULT_ALPHA`]).
    #[arg(skip)]
    pub alpha: Option<f64>,
    /// Judge only the first N questions of the golden set (the sweep still scores all).
    #[arg(long = "judge-questions", value_name = "N")]
    pub max_questions: Option<usize>,
    /// Folder of prompt templates overriding the built-in ones (`chunksweep prompts export DIR`
    /// writes those out for editing).
    #[arg(long = "prompts", value_name = "DIR")]
    #[serde(rename(deserialize = "prompts"))]
    pub prompts_dir: Option<PathBuf>,
    /// Planted controls on or off (default on).
    #[arg(skip)]
    pub controls: Option<bool>,
    /// Share of judged answers per control kind (default 0.1).
    #[arg(skip)]
    pub control_fraction: Option<f64>,
    /// Share of judged answers graded again (default 0.1).
    #[arg(skip)]
    pub repeat_fraction: Option<f64>,
    /// Lowest acceptable lower bound of a true-negative rate (default 0.5).
    #[arg(skip)]
    pub min_control_tnr: Option<f64>,
    /// Lowest acceptable repeat κ (default 0.4).
    #[arg(skip)]
    pub min_repeat_kappa: Option<f64>,
    /// Fewest judged answers per candidate for the judge to confirm the pick (default 5).
    #[arg(skip)]
    pub min_judged_answers: Option<usize>,
    /// per-criterion (default: one verdict call per criterion) or combined (one call returns
    /// every criterion's verdict).
    #[arg(long = "judge-mode", value_name = "MODE")]
    pub mode: Option<JudgeMode>,
}

/// `[selection]`: the plateau rule and the stability check; fills
/// [`crate::select::SelectionSettings`] (its documentation gives the defaults). The number of
/// judge candidates is `[judge] candidates`.
#[derive(Debug, Clone, Default, PartialEq, Args, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectionSection {
    /// Plateau rule: `equivalence` (default: non-inferior to the best within δ, paired on the
    /// same questions), `paired` (not significantly worse than the best, Holm-corrected, and
    /// within the recall tolerance) or `seed` (the seeds' literal rule: within 3% of the best
    /// margin and the recall tolerance).
    #[arg(long, value_name = "RULE")]
    pub rule: Option<Rule>,
    /// Significance level of the paired tests and the one-sided non-inferiority bound (default
    /// [`crate::stats::DEFAULT_ALPHA`]).
    #[arg(long, value_name = "P", help = concat!(
        "Significance level of the paired tests and the one-sided non-inferiority bound (default ",
        crate::default_alpha!(),
        ")"
    ))]
    pub alpha: Option<f64>,
    /// Non-inferiority margin δ on span recall@k, rule `equivalence` (absolute; default
    /// [`crate::select::DEFAULT_DELTA`]).
    #[arg(long, value_name = "RECALL", help = concat!(
        "Non-inferiority margin δ on span recall@k, rule `equivalence` (absolute; default ",
        crate::default_delta!(),
        ")"
    ))]
    pub delta: Option<f64>,
    /// Rule `seed` only: keep margins >= best − this × |best| (relative; default 0.03 = 3%).
    #[arg(long, value_name = "RATIO")]
    pub margin_tolerance: Option<f64>,
    /// Rules `paired` and `seed`: keep span recall@k >= best − this (absolute; default 0.02).
    #[arg(long, value_name = "RECALL")]
    pub recall_tolerance: Option<f64>,
    /// Random halves for the stability check (default 200).
    #[arg(long, value_name = "N")]
    pub halves: Option<usize>,
    /// Seed of the halves and the bootstrap (default 42).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Share of halves the pick must win to be called stable (default 0.9).
    #[arg(skip)]
    pub stable_share: Option<f64>,
    /// Confidence level of the intervals (default 0.95).
    #[arg(skip)]
    pub confidence: Option<f64>,
    /// Bootstrap resamples for the intervals of means (default 2000).
    #[arg(skip)]
    pub bootstrap_resamples: Option<usize>,
    /// Fewer questions than this triggers "too few questions" (default 30).
    #[arg(skip)]
    pub min_questions: Option<usize>,
    /// coverage − span recall above this triggers "boundary damage" (default 0.15).
    #[arg(skip)]
    pub boundary_gap: Option<f64>,
    /// Questions a type needs for its own pick (default 10).
    #[arg(skip)]
    pub min_type_questions: Option<usize>,
    /// Best span recall@k below which retrieval is the bottleneck (default 0.7).
    #[arg(skip)]
    pub weak_recall: Option<f64>,
}
