//! The grid of a sweep: what to sweep ([`SweepSpec`]), one configuration of it ([`ConfigSpec`],
//! with its stable id), and the expansion of the one into the other, validated before any work.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::error::SweepError;
use crate::chunking::enrich::Prefix;
use crate::chunking::semantic::SemanticSettings;
use crate::chunking::{ChunkParams, Strategy};
use crate::retrieval::hybrid::HybridSettings;
use crate::tokenize::TokenizerKind;

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
    /// BM25 over the chunks ([`crate::retrieval::bm25`]).
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

/// Expands and validates the grid (strategies in the given order, then sizes), before any work.
///
/// # Errors
/// [`SweepError::ZeroK`], [`SweepError::EmptyGrid`], or [`SweepError::Chunk`] for a size of 0 or
/// an overlap not below the size.
pub fn expand(spec: &SweepSpec) -> Result<Vec<ConfigSpec>, SweepError> {
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
