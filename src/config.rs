//! The configuration file (TOML) and the command-line flags, as given: [`ConfigFile`], whose
//! sections ([`sections`]) also declare the flags, and [`RunOptions`]. [`crate::plan::Plan`]
//! merges the flags' sections over the file's with [`merge`] (a flag wins over the file, the
//! file over the defaults) and validates the result once.
//! Relative paths in the file are relative to the file's folder. Secrets never live here: API keys
//! are read from the environment only.
//!
//! ```toml
//! corpus = "datasets/handbook"     # or, with reading settings, a [corpus] table:
//! # [corpus]
//! # path = "datasets/handbook"
//! # readers = { htm = "html", adoc = "text" }   # extension → text, markdown, rst, html, docx, pdf
//! # skip_unreadable = true                      # skip files no reader reads (default: an error)
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
//! rerank = ["none", "bge-reranker-base"]     # default ["none"]; at most one model
//! expand = ["none", "neighbours:1", "parent:1024"]  # default ["none"]; see expand
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
//! [embed]                          # dense, hybrid, semantic; an external retriever gets vectors
//!                                  # only when a model is named; see retrieval::embed::EmbedSettings
//! base_url = "http://127.0.0.1:8092/v1"
//! model = "e5-passage"
//! query_model = "e5-query"
//! embed_prefix = true              # false: embed the bare chunk text (prefixes reach BM25 only)
//!
//! [rerank]                         # reranked configurations; see retrieval::rerank
//! base_url = "http://127.0.0.1:8093/v1"   # default: the [llm] server
//! api = "v1"                       # or "tei"
//! depth = 50                       # first-stage candidates reranked per question
//! documents_per_request = 50
//!
//! [selection]                      # the plateau rule and the stability check
//! rule = "equivalence"             # or "paired" (the rule before), "seed" (the seeds' literal rule)
//! alpha = 0.05
//! delta = 0.05                     # non-inferiority margin on span recall (rule "equivalence")
//! recall_tolerance = 0.02          # rules "paired" and "seed"
//! margin_tolerance = 0.03          # rule "seed" only
//! halves = 200
//! seed = 42
//!
//! [context]                        # llm_context prefixes (the model's server is in [llm])
//! model = "gpt-4o-mini"            # default $CHUNKSWEEP_CHAT_MODEL, else gpt-4o-mini
//! window_tokens = 2048             # longer documents are cut to this window around the chunk
//! max_tokens = 100
//! concurrency = 4
//! prompt = "prompts/context.md"
//! ```

use std::path::{Path, PathBuf};

use clap::Args;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;

use crate::chunking::enrich::Prefix;
use crate::golden::GoldenFormat;
use crate::sweep::grid::ConfigCut;

pub mod flag_values;
pub mod sections;

pub use sections::{
    Bm25Section, ContextSection, EmbedSection, JudgeSection, RerankSection, SelectionSection,
    SemanticSection, SweepSection,
};

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

/// The whole file; every key optional. Each section is the struct that also declares its flags
/// ([`sections`]).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Corpus folder, and how its files are read (`corpus = "DIR"` or a `[corpus]` table).
    #[serde(default)]
    pub corpus: CorpusSection,
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
    /// Selection settings.
    #[serde(default)]
    pub selection: SelectionSection,
    /// Embedding settings (dense, hybrid, semantic); defaults and environment when absent.
    #[serde(default)]
    pub embed: EmbedSection,
    /// Context generation for `llm_context` prefixes.
    #[serde(default)]
    pub context: ContextSection,
    /// Reranking (`--rerank`).
    #[serde(default)]
    pub rerank: RerankSection,
    /// External chunkers (`[[chunkers]]`), swept as strategies by name (docs/chunkers.md).
    #[serde(default)]
    pub chunkers: Vec<crate::chunking::external::ChunkerSpec>,
    /// A folder of precomputed chunks files (docs/chunkers.md).
    pub chunks: Option<PathBuf>,
    /// External retrievers (`[[retrievers]]`), swept as retrievers by name
    /// (docs/retrievers.md).
    #[serde(default)]
    pub retrievers: Vec<crate::retrieval::external::RetrieverSpec>,
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
            message: corpus_message(&text).unwrap_or_else(|| e.to_string()),
        })?;
        // named here, with the file: the flag's own parser refuses a bad --max-cost
        if let Some(m) = file
            .judge
            .max_cost_usd
            .filter(|m| !m.is_finite() || *m < 0.0)
        {
            return Err(ConfigError::Parse {
                path: path.to_path_buf(),
                message: format!(
                    "[judge] max_cost_usd = {m}: it must be a finite number of USD, 0 or more (e.g. 2.5)"
                ),
            });
        }
        let base = path.parent().unwrap_or(Path::new(""));
        // Only a cache path written in the file is relative to it; the defaults stay under the
        // working directory's results/.
        let llm_cache = text
            .parse::<toml::Table>()
            .ok()
            .is_some_and(|t| t.get("llm").and_then(|l| l.get("cache_path")).is_some());
        let cache = file
            .llm
            .as_mut()
            .filter(|_| llm_cache)
            .map(|l| &mut l.cache_path);
        for p in [
            &mut file.corpus.path,
            &mut file.golden,
            &mut file.out,
            &mut file.judge.prompts_dir,
            &mut file.context.prompt,
            &mut file.embed.cache_path,
            &mut file.chunks,
        ]
        .into_iter()
        .flatten()
        .chain(cache)
        {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
        // a chunker runs in the config file's folder ("" for a file in the current folder)
        let folder = match base.as_os_str().is_empty() {
            true => Path::new("."),
            false => base,
        };
        for chunker in &mut file.chunkers {
            chunker.dir = folder.to_path_buf();
        }
        for retriever in &mut file.retrievers {
            retriever.dir = folder.to_path_buf();
        }
        Ok(file)
    }
}

/// The corpus setting: `corpus = "DIR"`, or a `[corpus]` table with `path`, `readers` (an
/// extension, lower case without the dot, `rst.txt` for a double one, → a reader's name) and
/// `skip_unreadable`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(from = "CorpusForm")]
pub struct CorpusSection {
    /// The corpus folder.
    pub path: Option<PathBuf>,
    /// Extensions mapped to readers, over the defaults.
    pub readers: std::collections::BTreeMap<String, crate::documents::kind::ReaderKind>,
    /// Skip files that no reader reads (with a warning) instead of failing.
    pub skip_unreadable: Option<bool>,
}

impl CorpusSection {
    /// The folder `path`, read with the default readers.
    pub fn at(path: impl Into<PathBuf>) -> Self {
        CorpusSection {
            path: Some(path.into()),
            ..CorpusSection::default()
        }
    }
}

/// The two ways to write [`CorpusSection`].
#[derive(Deserialize)]
#[serde(untagged)]
enum CorpusForm {
    Path(PathBuf),
    Table(CorpusTable),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CorpusTable {
    path: Option<PathBuf>,
    #[serde(default)]
    readers: std::collections::BTreeMap<String, crate::documents::kind::ReaderKind>,
    skip_unreadable: Option<bool>,
}

/// The precise message for a bad `[corpus]` table (an untagged form's own error says only that
/// neither form matched), when the file's `corpus` is a table that does not parse.
fn corpus_message(text: &str) -> Option<String> {
    let table = text.parse::<toml::Table>().ok()?;
    let corpus = table.get("corpus")?.as_table()?.clone();
    CorpusTable::deserialize(corpus)
        .err()
        .map(|e| format!("[corpus]: {e}"))
}

impl From<CorpusForm> for CorpusSection {
    fn from(form: CorpusForm) -> Self {
        match form {
            CorpusForm::Path(path) => CorpusSection::at(path),
            CorpusForm::Table(t) => CorpusSection {
                path: t.path,
                readers: t
                    .readers
                    .into_iter()
                    .map(|(ext, r)| (ext.trim_start_matches('.').to_ascii_lowercase(), r))
                    .collect(),
                skip_unreadable: t.skip_unreadable,
            },
        }
    }
}

/// The settings of a section, merged: each key from `flags` when given there, else from `base`
/// (the config file's section, or a run's recorded settings), else the default of `T` (its
/// `#[serde(default)]`). `base` and `flags` are serialised with serde; a `null` (an unset
/// `Option`) is "not given"; tables merge key by key, anything else is replaced whole. Keys are
/// matched by their serde names, so a section's fields must be named as the fields of `T`.
///
/// # Errors
/// [`ConfigError::Invalid`] naming `section` when the merged keys do not fit `T` (a value of the
/// wrong type).
pub fn merge<B: Serialize, F: Serialize, T: DeserializeOwned>(
    section: &str,
    base: &B,
    flags: &F,
) -> Result<T, ConfigError> {
    let invalid = |e: serde_json::Error| ConfigError::Invalid(format!("[{section}]: {e}"));
    let mut merged = Value::Object(serde_json::Map::new());
    overlay(&mut merged, serde_json::to_value(base).map_err(invalid)?);
    overlay(&mut merged, serde_json::to_value(flags).map_err(invalid)?);
    serde_json::from_value(merged).map_err(invalid)
}

/// Lays `top` over `base`: a `null` in `top` leaves `base` as it is, objects merge key by key
/// (no `null` is kept), any other value replaces.
fn overlay(base: &mut Value, top: Value) {
    match top {
        Value::Null => {}
        Value::Object(top) => {
            if !base.is_object() {
                *base = Value::Object(serde_json::Map::new());
            }
            if let Value::Object(b) = base {
                for (key, value) in top {
                    overlay(b.entry(key).or_insert(Value::Null), value);
                }
                b.retain(|_, v| !v.is_null());
            }
        }
        top => *base = top,
    }
}

/// Options of `chunksweep run` that are no setting of the config file: what to judge instead of
/// the selection's candidates, and whether to send anything.
#[derive(Debug, Clone, Default, Args)]
pub struct RunOptions {
    /// Judge these configuration ids instead of the selection's candidates, comma-separated
    /// (e.g. recursive-256-o38-none-bm25-k5).
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub candidates: Option<Vec<ConfigCut>>,
    /// Print the number of calls and the estimated tokens and cost, then stop (no judge-stage
    /// call is sent; the sweep still sends and caches the embeddings and contexts its grid needs).
    #[arg(long)]
    pub dry_run: bool,
    /// Judge the selection's pick with and without a prefix, on the same questions: its
    /// strategy, size and overlap with prefix none and with PREFIX, or, given without a value,
    /// with the prefix whose span recall@k gained most at that strategy and size in the sweep.
    /// Replaces the selection's candidates.
    #[arg(long, value_name = "PREFIX", num_args = 0..=1, default_missing_value = "best")]
    pub compare_prefix: Option<ComparePrefix>,
    /// Send the judge stage's calls through the Batch API ([llm] batch = true): half the price,
    /// results within the completion window (24h); a rerun polls the batches already submitted.
    #[arg(long)]
    pub batch: bool,
    /// With --batch: cancel the batches of the --out folder that have not ended, keep what they
    /// answered, and leave the rest unfinished (exit 4; a later run submits it again).
    #[arg(long)]
    pub cancel_batches: bool,
    /// Continue from the sweep that `chunksweep merge` wrote into --out: read its sweep.csv
    /// and sweep_questions.csv instead of sweeping (the inputs and grid must be the ones it
    /// records), then select, judge and report into the same folder.
    #[arg(long, conflicts_with = "shard")]
    pub merged: bool,
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
    fn the_corpus_is_a_path_or_a_table_with_readers() {
        use crate::documents::kind::ReaderKind;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "corpus = \"docs\"\n").unwrap();
        assert_eq!(
            ConfigFile::load(&path).unwrap().corpus,
            CorpusSection::at(dir.path().join("docs"))
        );
        std::fs::write(
            &path,
            "[corpus]\npath = \"docs\"\nreaders = { \".HTM\" = \"html\", \"rst.txt\" = \"text\" }\nskip_unreadable = true\n",
        )
        .unwrap();
        let corpus = ConfigFile::load(&path).unwrap().corpus;
        assert_eq!(corpus.path, Some(dir.path().join("docs")));
        assert_eq!(
            corpus.readers.into_iter().collect::<Vec<_>>(),
            vec![
                ("htm".to_string(), ReaderKind::Html),
                ("rst.txt".to_string(), ReaderKind::Text)
            ]
        );
        assert_eq!(corpus.skip_unreadable, Some(true));
        std::fs::write(&path, "[corpus]\nreaders = { adoc = \"asciidoc\" }\n").unwrap();
        let message = ConfigFile::load(&path).unwrap_err().to_string();
        assert!(
            message.contains(
                "[corpus]: unknown reader \"asciidoc\": use text, markdown, rst, html, docx or pdf"
            ),
            "{message}"
        );
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
    fn merge_takes_each_key_from_the_flags_then_the_file_then_the_default() {
        use crate::retrieval::{AnalyzerKind, Bm25Settings};
        use crate::sweep::grid::SweepSpec;
        let file: ConfigFile =
            toml::from_str("[sweep]\ntop_k = 3\nsizes = [8]\n[sweep.bm25]\nk1 = 0.5\nb = 0.1\n")
                .unwrap();
        let flags = SweepSection {
            top_k: Some(9),
            bm25: Bm25Section {
                analyzer: Some(AnalyzerKind::Seed),
                b: Some(0.2),
                ..Bm25Section::default()
            },
            ..SweepSection::default()
        };
        let spec: SweepSpec = merge("sweep", &file.sweep, &flags).unwrap();
        let expected = SweepSpec {
            top_k: 9,
            sizes: vec![8],
            bm25: Bm25Settings {
                analyzer: AnalyzerKind::Seed,
                stem: false,
                k1: 0.5,
                b: 0.2,
            },
            ..SweepSpec::default()
        };
        assert_eq!(spec, expected);
        // nothing given anywhere: the defaults
        let none: SweepSpec =
            merge("sweep", &SweepSection::default(), &SweepSection::default()).unwrap();
        assert_eq!(none, SweepSpec::default());
    }

    /// Every key of `section` (as serialised) reaches `T` under the same name with the same value.
    fn every_key_reaches<S: Serialize, T: Serialize + DeserializeOwned>(name: &str, section: &S) {
        let given = serde_json::to_value(section).unwrap();
        let settings: T = merge(name, section, &Value::Null).unwrap();
        let resolved = serde_json::to_value(&settings).unwrap();
        let keys = given.as_object().unwrap();
        for (key, value) in keys {
            assert!(!value.is_null(), "[{name}] {key} set in the test");
            assert_eq!(&resolved[key], value, "[{name}] {key}");
        }
    }

    #[test]
    fn every_key_of_every_section_fills_its_setting() {
        use crate::judge::JudgeSettings;
        use crate::prepare::contexts::ContextSettings;
        use crate::retrieval::embeddings::EmbedSettings;
        use crate::select::SelectionSettings;
        use crate::sweep::grid::SweepSpec;
        // every key of each section, each away from its default
        let file: ConfigFile = toml::from_str(
            r#"
            [sweep]
            strategies = ["words"]
            sizes = [8]
            overlap = 2
            top_k = 3
            budgets = [100]
            tokenizer = "words"
            retrievers = ["dense"]
            prefixes = ["title"]
            rerank = ["none", "r"]
            expand = ["none", "parent:512"]
            dump_chunks = true
            hybrid = { rrf_k = 5.0, bm25_weight = 2.0, dense_weight = 0.5 }
            semantic = { percentile = 80.0 }
            bm25 = { analyzer = "seed", stem = true, k1 = 0.5, b = 0.2 }
            [embed]
            base_url = "http://127.0.0.1:1/v1"
            model = "m"
            query_model = "q"
            query_prefix = "query: "
            document_prefix = "passage: "
            batch_size = 7
            max_input_tokens = 99
            overflow = "truncate"
            embed_prefix = false
            cache_path = "/c.sqlite"
            [rerank]
            base_url = "http://127.0.0.1:2"
            api = "tei"
            depth = 7
            documents_per_request = 3
            [context]
            model = "c"
            window_tokens = 9
            max_tokens = 8
            concurrency = 2
            prompt = "/p.md"
            [judge]
            generator_model = "g"
            judge_model = "j"
            candidates = 2
            max_tokens = 10
            judge_max_tokens = 11
            temperature = 0.5
            seed = 3
            concurrency = 1
            max_cost_usd = 1.5
            alpha = 0.1
            max_questions = 4
            prompts = "/prompts"
            controls = false
            control_fraction = 0.2
            repeat_fraction = 0.3
            min_control_tnr = 0.6
            min_repeat_kappa = 0.5
            min_judged_answers = 9
            mode = "combined"
            [selection]
            rule = "seed"
            alpha = 0.1
            delta = 0.1
            margin_tolerance = 0.1
            recall_tolerance = 0.1
            halves = 10
            seed = 1
            stable_share = 0.8
            confidence = 0.9
            bootstrap_resamples = 100
            min_questions = 5
            boundary_gap = 0.2
            min_type_questions = 3
            weak_recall = 0.5
            "#,
        )
        .unwrap();
        let mut sweep = serde_json::to_value(&file.sweep).unwrap();
        // dump_chunks is the plan's own field, not the grid's
        sweep.as_object_mut().unwrap().remove("dump_chunks");
        every_key_reaches::<_, SweepSpec>("sweep", &sweep);
        every_key_reaches::<_, EmbedSettings>("embed", &file.embed);
        every_key_reaches::<_, ContextSettings>("context", &file.context);
        every_key_reaches::<_, crate::retrieval::rerank::RerankSettings>("rerank", &file.rerank);
        every_key_reaches::<_, JudgeSettings>("judge", &file.judge);
        every_key_reaches::<_, SelectionSettings>("selection", &file.selection);
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
