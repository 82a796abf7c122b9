//! The configuration file (TOML) and the command-line flags, as given: [`ConfigFile`] and
//! [`Overrides`]. [`crate::plan::Plan`] merges them (a flag wins over the file, the file over
//! the defaults) and validates the result once.
//! Relative paths in the file are relative to the file's folder. Secrets never live here: API keys
//! are read from the environment only.
//!
//! ```toml
//! corpus = "datasets/handbook"
//! golden = "datasets/handbook-golden.jsonl"
//! golden_format = "jsonl"          # or "chroma"
//! out = "results/handbook"
//!
//! [sweep]
//! strategies = ["fixed", "recursive", "markdown"]
//! sizes = [64, 128, 256, 512, 1024]
//! overlap = 0.15                   # a ratio of chunk_size, or a whole token count such as 32
//! top_k = 5
//! budgets = [1000, 2000, 4000]     # context budgets in tokens per query (optional)
//! tokenizer = "cl100k_base"        # or "o200k_base", "words"
//! prefixes = ["none", "title", "heading_path"]   # also title_heading, llm_context
//! dump_chunks = false
//! retrievers = ["bm25", "dense", "hybrid"]   # default ["bm25"]
//!
//! [sweep.hybrid]                   # reciprocal rank fusion (Cormack et al. 2009)
//! rrf_k = 60
//! bm25_weight = 1.0
//! dense_weight = 1.0
//!
//! [sweep.semantic]
//! percentile = 95                  # boundary where the sentence distance exceeds this percentile
//!
//! [sweep.bm25]                     # textbook BM25 (retrieval::bm25)
//! analyzer = "standard"            # or "seed" (seed 000's regex)
//! stem = false                     # English stemming
//! k1 = 1.2
//! b = 0.75
//!
//! [embed]                          # dense, hybrid, semantic; see retrieval::embed::EmbedSettings
//! base_url = "http://127.0.0.1:8092/v1"
//! model = "e5-passage"
//! query_model = "e5-query"
//! embed_prefix = true              # false: embed the bare chunk text (prefixes reach BM25 only)
//!
//! [context]                        # llm_context prefixes (the model's server is in [llm])
//! model = "gpt-4o-mini"            # default $CHUNKSWEEP_CHAT_MODEL, else gpt-4o-mini
//! window_tokens = 2048             # longer documents are cut to this window around the chunk
//! max_tokens = 100
//! concurrency = 4
//! prompt = "prompts/context.md"
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::chunking::Strategy;
use crate::chunking::enrich::Prefix;
use crate::chunking::semantic::SemanticSettings;
use crate::golden::GoldenFormat;
use crate::retrieval::embeddings::EmbedSettings;
use crate::retrieval::hybrid::HybridSettings;
use crate::sweep::grid::{ConfigSpec, Overlap, RetrieverKind};
use crate::tokenize::TokenizerKind;

/// Errors reading the configuration.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML for this schema.
    #[error("config {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A setting has an unusable value.
    #[error("invalid setting: {0}")]
    Invalid(String),
    /// A required setting is missing.
    #[error("no {0} given: pass --{0} or set `{0} = ...` in the config file")]
    Missing(&'static str),
}

impl ConfigError {
    /// Always usage (2): the configuration is the user's input.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        match self {
            ConfigError::Io { .. }
            | ConfigError::Parse { .. }
            | ConfigError::Invalid(_)
            | ConfigError::Missing(_) => crate::exit::ExitClass::Usage,
        }
    }
}

/// The `[sweep]` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepSection {
    /// Strategies to sweep.
    pub strategies: Option<Vec<Strategy>>,
    /// Chunk sizes.
    pub sizes: Option<Vec<usize>>,
    /// Overlap ratio or token count.
    pub overlap: Option<Overlap>,
    /// Chunks retrieved per question.
    pub top_k: Option<usize>,
    /// Context budgets in tokens per query.
    pub budgets: Option<Vec<usize>>,
    /// Token unit.
    pub tokenizer: Option<TokenizerKind>,
    /// Contextual prefixes.
    pub prefixes: Option<Vec<Prefix>>,
    /// Write chunks/<config_id>.jsonl.
    pub dump_chunks: Option<bool>,
    /// Retrievers to sweep.
    pub retrievers: Option<Vec<RetrieverKind>>,
    /// Fusion settings of `hybrid`.
    pub hybrid: Option<HybridSettings>,
    /// Settings of `semantic` chunking.
    pub semantic: Option<SemanticSettings>,
    /// BM25's analyzer, stemming, k1 and b.
    pub bm25: Option<crate::retrieval::Bm25Settings>,
}

/// The `[context]` section (model-written `llm_context` prefixes); every key optional (see
/// [`ContextSettings`] for the defaults).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextSection {
    /// Model that writes the contexts.
    pub model: Option<String>,
    /// Window around the chunk, in tokens.
    pub window_tokens: Option<usize>,
    /// Cap on a context, in tokens.
    pub max_tokens: Option<u32>,
    /// Requests in progress at once.
    pub concurrency: Option<usize>,
    /// Prompt template (relative to the config file's folder).
    pub prompt: Option<PathBuf>,
}

/// The whole file; every key optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Corpus folder.
    pub corpus: Option<PathBuf>,
    /// Golden-set file.
    pub golden: Option<PathBuf>,
    /// Golden-set format.
    pub golden_format: Option<GoldenFormat>,
    /// Run folder.
    pub out: Option<PathBuf>,
    /// Sweep settings.
    #[serde(default)]
    pub sweep: SweepSection,
    /// The LLM client (`chunksweep run`); defaults when absent.
    pub llm: Option<crate::llm::ClientConfig>,
    /// Judge settings (`chunksweep run`).
    #[serde(default)]
    pub judge: JudgeSection,
    /// Embedding settings (dense, hybrid, semantic); defaults and environment when absent.
    pub embed: Option<EmbedSettings>,
    /// Context generation for `llm_context` prefixes.
    #[serde(default)]
    pub context: ContextSection,
}

/// The `[judge]` section; every key optional (see [`JudgeSettings`] for the defaults).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeSection {
    /// Model that writes the answers.
    pub generator_model: Option<String>,
    /// Model that grades them.
    pub judge_model: Option<String>,
    /// Candidates taken from the selection.
    pub candidates: Option<usize>,
    /// Cap on an answer, tokens.
    pub max_tokens: Option<u32>,
    /// Cap on a verdict, tokens.
    pub judge_max_tokens: Option<u32>,
    /// Temperature.
    pub temperature: Option<f32>,
    /// Seed.
    pub seed: Option<i64>,
    /// Questions in progress at once.
    pub concurrency: Option<usize>,
    /// Budget, USD.
    pub max_cost_usd: Option<f64>,
    /// Significance level of the paired tests.
    pub alpha: Option<f64>,
    /// Judge only the first this many questions.
    pub max_questions: Option<usize>,
    /// Prompt folder.
    pub prompts: Option<PathBuf>,
    /// Planted controls on or off.
    pub controls: Option<bool>,
    /// Share of judged answers per control kind.
    pub control_fraction: Option<f64>,
    /// Share of judged answers graded again.
    pub repeat_fraction: Option<f64>,
    /// Lowest acceptable lower bound of a true-negative rate.
    pub min_control_tnr: Option<f64>,
    /// Lowest acceptable repeat κ.
    pub min_repeat_kappa: Option<f64>,
    /// `per_criterion` or `combined`.
    pub mode: Option<crate::judge::settings::JudgeMode>,
}

impl ConfigFile {
    /// Reads a TOML file; relative paths in it become relative to the file's folder.
    ///
    /// # Errors
    /// [`ConfigError::Io`] or [`ConfigError::Parse`] (with line and column).
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut file: ConfigFile = toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let base = path.parent().unwrap_or(Path::new(""));
        // Only a cache path written in the file is relative to it; the defaults stay under the
        // working directory's results/.
        let table = text.parse::<toml::Table>().ok();
        let given = |section: &str| {
            table
                .as_ref()
                .and_then(|t| t.get(section)?.get("cache_path"))
                .is_some()
        };
        let (llm_cache, embed_cache) = (given("llm"), given("embed"));
        let cache = file
            .llm
            .as_mut()
            .filter(|_| llm_cache)
            .map(|l| &mut l.cache_path);
        for p in [&mut file.corpus, &mut file.golden, &mut file.out]
            .into_iter()
            .flatten()
            .chain(file.judge.prompts.as_mut())
            .chain(file.context.prompt.as_mut())
            .chain(cache)
            .chain(
                file.embed
                    .as_mut()
                    .filter(|_| embed_cache)
                    .map(|e| &mut e.cache_path),
            )
        {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
        Ok(file)
    }
}

/// Settings given on the command line (each overrides the file).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// --corpus
    pub corpus: Option<PathBuf>,
    /// --golden
    pub golden: Option<PathBuf>,
    /// --golden-format
    pub golden_format: Option<GoldenFormat>,
    /// --out
    pub out: Option<PathBuf>,
    /// --strategies
    pub strategies: Option<Vec<Strategy>>,
    /// --sizes
    pub sizes: Option<Vec<usize>>,
    /// --overlap
    pub overlap: Option<Overlap>,
    /// --k
    pub top_k: Option<usize>,
    /// --budget
    pub budgets: Option<Vec<usize>>,
    /// --tokenizer
    pub tokenizer: Option<TokenizerKind>,
    /// --prefixes
    pub prefixes: Option<Vec<Prefix>>,
    /// --context-model
    pub context_model: Option<String>,
    /// --context-window
    pub context_window: Option<usize>,
    /// --dump-chunks
    pub dump_chunks: bool,
    /// --retrievers
    pub retrievers: Option<Vec<RetrieverKind>>,
    /// --embed-base-url
    pub embed_base_url: Option<String>,
    /// --embed-model
    pub embed_model: Option<String>,
    /// --embed-query-model
    pub embed_query_model: Option<String>,
    /// --no-embed-prefix: `Some(false)` embeds bare chunk texts
    pub embed_prefix: Option<bool>,
    /// --semantic-percentile
    pub semantic_percentile: Option<f64>,
    /// --analyzer
    pub analyzer: Option<crate::retrieval::AnalyzerKind>,
    /// --stem
    pub stem: bool,
    /// --bm25-k1
    pub bm25_k1: Option<f64>,
    /// --bm25-b
    pub bm25_b: Option<f64>,
    /// --generator-model (run)
    pub generator_model: Option<String>,
    /// --judge-model (run)
    pub judge_model: Option<String>,
    /// --judge-mode (run, judge-check)
    pub judge_mode: Option<crate::judge::settings::JudgeMode>,
    /// --max-cost (run), USD
    pub max_cost_usd: Option<f64>,
    /// --prompts (run)
    pub prompts: Option<PathBuf>,
    /// --n-candidates (run)
    pub n_candidates: Option<usize>,
    /// --judge-questions (run)
    pub judge_questions: Option<usize>,
    /// --candidates (run)
    pub candidates: Option<Vec<ConfigSpec>>,
    /// --compare-prefix (run)
    pub compare_prefix: Option<ComparePrefix>,
    /// --dry-run (run)
    pub dry_run: bool,
}

/// Which prefix `run --compare-prefix` judges beside `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ComparePrefix {
    /// The prefix whose span recall gained most at the pick's strategy and size in the sweep.
    Best,
    /// This prefix (never `none`).
    Prefix(Prefix),
}

impl std::str::FromStr for ComparePrefix {
    type Err = String;
    /// `best`, or a prefix name other than `none`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "best" => Ok(ComparePrefix::Best),
            other => match other.parse::<Prefix>()? {
                Prefix::None => Err("--compare-prefix needs a prefix other than none".into()),
                p => Ok(ComparePrefix::Prefix(p)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_cache_path_written_in_the_file_is_relative_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[llm.defaults]\ntimeout_s = 5.0\n").unwrap();
        let file = ConfigFile::load(&path).unwrap();
        assert_eq!(
            file.llm.unwrap().cache_path,
            PathBuf::from("results/llm_cache.sqlite")
        );
        std::fs::write(&path, "[llm]\ncache_path = \"cache.sqlite\"\n").unwrap();
        let file = ConfigFile::load(&path).unwrap();
        assert_eq!(
            file.llm.unwrap().cache_path,
            dir.path().join("cache.sqlite")
        );
    }

    #[test]
    fn unknown_keys_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[sweep]\nsize = [32]\n").unwrap();
        let err = ConfigFile::load(&path).unwrap_err().to_string();
        assert!(err.contains("unknown field `size`"), "{err}");
    }
}
