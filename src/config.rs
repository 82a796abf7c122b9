//! The configuration file (TOML) and its merge with command-line flags.
//!
//! Every key can also be given as a flag; a flag wins over the file, the file over the defaults.
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
//! [embed]                          # dense, hybrid, semantic; see retrieval::embed::EmbedSettings
//! base_url = "http://127.0.0.1:8092/v1"
//! model = "e5-passage"
//! query_model = "e5-query"
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
use crate::judge::JudgeSettings;
use crate::llm_context::ContextSettings;
use crate::retrieval::embed::EmbedSettings;
use crate::retrieval::hybrid::HybridSettings;
use crate::sweep::{Overlap, RetrieverKind, SweepSpec};
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
}

/// Judge settings given on the command line (each overrides the file).
#[derive(Debug, Clone, Default)]
pub struct JudgeOverrides {
    /// --generator-model
    pub generator_model: Option<String>,
    /// --judge-model
    pub judge_model: Option<String>,
    /// --max-cost
    pub max_cost_usd: Option<f64>,
    /// --prompts
    pub prompts: Option<PathBuf>,
    /// --n-candidates
    pub candidates: Option<usize>,
    /// --judge-questions
    pub max_questions: Option<usize>,
}

/// Merges the defaults (models from `CHUNKSWEEP_CHAT_MODEL`, else `gpt-4o-mini`), the `[judge]`
/// section and the flags.
///
/// # Errors
/// [`ConfigError::Invalid`] for a zero concurrency or candidate count, an alpha outside (0, 1) or
/// a negative budget.
pub fn resolve_judge(
    file: &JudgeSection,
    flags: JudgeOverrides,
) -> Result<JudgeSettings, ConfigError> {
    let d = JudgeSettings::default();
    let s = JudgeSettings {
        generator_model: flags
            .generator_model
            .or(file.generator_model.clone())
            .unwrap_or(d.generator_model),
        judge_model: flags
            .judge_model
            .or(file.judge_model.clone())
            .unwrap_or(d.judge_model),
        candidates: flags.candidates.or(file.candidates).unwrap_or(d.candidates),
        max_tokens: file.max_tokens.unwrap_or(d.max_tokens),
        judge_max_tokens: file.judge_max_tokens.unwrap_or(d.judge_max_tokens),
        temperature: file.temperature.unwrap_or(d.temperature),
        seed: file.seed.or(d.seed),
        concurrency: file.concurrency.unwrap_or(d.concurrency),
        max_cost_usd: flags.max_cost_usd.or(file.max_cost_usd),
        alpha: file.alpha.unwrap_or(d.alpha),
        max_questions: flags.max_questions.or(file.max_questions),
        prompts_dir: flags
            .prompts
            .or(file.prompts.clone())
            .unwrap_or(d.prompts_dir),
    };
    if s.concurrency == 0 || s.candidates == 0 || s.max_questions == Some(0) {
        return Err(ConfigError::Invalid(
            "judge.concurrency, judge.candidates and judge.max_questions must be at least 1".into(),
        ));
    }
    if !(s.alpha > 0.0 && s.alpha < 1.0) {
        return Err(ConfigError::Invalid(format!(
            "judge.alpha {} must be strictly between 0 and 1",
            s.alpha
        )));
    }
    if s.max_cost_usd.is_some_and(|m| m.is_nan() || m < 0.0) {
        return Err(ConfigError::Invalid(
            "--max-cost must be a non-negative number of USD".into(),
        ));
    }
    Ok(s)
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
        // Only a cache path written in the file is relative to it; the default stays under the
        // working directory's results/.
        let cache_given = text
            .parse::<toml::Table>()
            .ok()
            .and_then(|t| t.get("llm")?.get("cache_path").cloned())
            .is_some();
        let cache = file
            .llm
            .as_mut()
            .filter(|_| cache_given)
            .map(|l| &mut l.cache_path);
        for p in [&mut file.corpus, &mut file.golden, &mut file.out]
            .into_iter()
            .flatten()
            .chain(file.judge.prompts.as_mut())
            .chain(file.context.prompt.as_mut())
            .chain(cache)
            .chain(file.embed.as_mut().map(|e| &mut e.cache_path))
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
    /// --semantic-percentile
    pub semantic_percentile: Option<f64>,
}

/// The resolved configuration of a sweep, as recorded in the manifest.
#[derive(Debug, Clone, Serialize)]
pub struct SweepConfig {
    /// Corpus folder.
    pub corpus: PathBuf,
    /// Golden-set file.
    pub golden: PathBuf,
    /// Golden-set format.
    pub golden_format: GoldenFormat,
    /// Run folder, if chosen (otherwise `results/<run-id>`).
    pub out: Option<PathBuf>,
    /// The grid.
    pub sweep: SweepSpec,
    /// Whether chunks are dumped.
    pub dump_chunks: bool,
    /// Embedding settings, when the grid needs embeddings (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed: Option<EmbedSettings>,
    /// Context generation, when the grid has `llm_context` (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextSettings>,
}

impl SweepConfig {
    /// Merges defaults, the file (if any) and the flags.
    ///
    /// # Errors
    /// [`ConfigError::Missing`] when no corpus or golden set is given; [`ConfigError::Invalid`]
    /// for a zero context window or concurrency.
    pub fn resolve(file: ConfigFile, flags: Overrides) -> Result<Self, ConfigError> {
        let defaults = SweepSpec::default();
        let mut semantic = file.sweep.semantic.unwrap_or_default();
        if let Some(p) = flags.semantic_percentile {
            semantic.percentile = p;
        }
        let mut embed = file.embed.clone().unwrap_or_default();
        if let Some(url) = flags.embed_base_url {
            embed.base_url = Some(url);
        }
        if let Some(m) = flags.embed_model {
            embed.model = m;
        }
        if let Some(m) = flags.embed_query_model {
            embed.query_model = Some(m);
        }
        let prefixes = flags
            .prefixes
            .or(file.sweep.prefixes)
            .unwrap_or(defaults.prefixes);
        let context = if prefixes.contains(&Prefix::LlmContext) {
            let d = ContextSettings::default();
            let c = &file.context;
            let s = ContextSettings {
                model: flags.context_model.or(c.model.clone()).unwrap_or(d.model),
                window_tokens: flags
                    .context_window
                    .or(c.window_tokens)
                    .unwrap_or(d.window_tokens),
                max_tokens: c.max_tokens.unwrap_or(d.max_tokens),
                concurrency: c.concurrency.unwrap_or(d.concurrency),
                prompt: c.prompt.clone().unwrap_or(d.prompt),
                ..d
            };
            if s.window_tokens == 0 || s.concurrency == 0 {
                return Err(ConfigError::Invalid(
                    "context.window_tokens (--context-window) and context.concurrency must be at least 1"
                        .into(),
                ));
            }
            Some(s)
        } else {
            None
        };
        let golden = flags
            .golden
            .or(file.golden)
            .ok_or(ConfigError::Missing("golden"))?;
        let golden_format = flags
            .golden_format
            .or(file.golden_format)
            .unwrap_or_else(|| GoldenFormat::from_path(&golden));
        Ok(SweepConfig {
            corpus: flags
                .corpus
                .or(file.corpus)
                .ok_or(ConfigError::Missing("corpus"))?,
            golden,
            golden_format,
            out: flags.out.or(file.out),
            sweep: SweepSpec {
                strategies: flags
                    .strategies
                    .or(file.sweep.strategies)
                    .unwrap_or(defaults.strategies),
                sizes: flags.sizes.or(file.sweep.sizes).unwrap_or(defaults.sizes),
                overlap: flags
                    .overlap
                    .or(file.sweep.overlap)
                    .unwrap_or(defaults.overlap),
                top_k: flags.top_k.or(file.sweep.top_k).unwrap_or(defaults.top_k),
                tokenizer: flags
                    .tokenizer
                    .or(file.sweep.tokenizer)
                    .unwrap_or(defaults.tokenizer),
                retrievers: flags
                    .retrievers
                    .or(file.sweep.retrievers)
                    .unwrap_or(defaults.retrievers),
                hybrid: file.sweep.hybrid.unwrap_or_default(),
                semantic,
                prefixes,
                bm25: file.sweep.bm25.unwrap_or_default(),
            },
            dump_chunks: flags.dump_chunks || file.sweep.dump_chunks.unwrap_or(false),
            embed: None,
            context,
        })
        .map(|mut cfg: SweepConfig| {
            if cfg.sweep.needs_embeddings() {
                cfg.embed = Some(embed);
            }
            cfg
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_the_file_and_paths_are_relative_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            "corpus = \"docs\"\ngolden = \"g.csv\"\n[sweep]\nsizes = [32, 64]\noverlap = 8\ntop_k = 3\n",
        )
        .unwrap();
        let file = ConfigFile::load(&path).unwrap();
        let cfg = SweepConfig::resolve(
            file,
            Overrides {
                top_k: Some(7),
                ..Overrides::default()
            },
        )
        .unwrap();
        assert_eq!(cfg.corpus, dir.path().join("docs"));
        assert_eq!(cfg.golden_format, GoldenFormat::Chroma);
        assert_eq!(cfg.sweep.sizes, vec![32, 64]);
        assert_eq!(cfg.sweep.overlap, Overlap::Tokens(8));
        assert_eq!(cfg.sweep.top_k, 7);
        assert_eq!(cfg.sweep.prefixes, vec![Prefix::None]);
        assert!(cfg.context.is_none());
    }

    #[test]
    fn prefixes_and_context_settings_resolve() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            "corpus = \"docs\"\ngolden = \"g.jsonl\"\n[sweep]\nprefixes = [\"none\", \"heading_path\"]\n[context]\nwindow_tokens = 512\nprompt = \"p/context.md\"\n",
        )
        .unwrap();
        let cfg =
            SweepConfig::resolve(ConfigFile::load(&path).unwrap(), Overrides::default()).unwrap();
        assert_eq!(cfg.sweep.prefixes, vec![Prefix::None, Prefix::HeadingPath]);
        assert!(cfg.context.is_none(), "no llm_context, no context settings");
        let cfg = SweepConfig::resolve(
            ConfigFile::load(&path).unwrap(),
            Overrides {
                prefixes: Some(vec![Prefix::LlmContext]),
                context_model: Some("small".into()),
                ..Overrides::default()
            },
        )
        .unwrap();
        let c = cfg.context.unwrap();
        assert_eq!(c.model, "small");
        assert_eq!(c.window_tokens, 512);
        assert_eq!(c.prompt, dir.path().join("p/context.md"));
    }

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
