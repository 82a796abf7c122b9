//! The plan of a command: every setting resolved once (defaults, then the config file, then the
//! flags), validated once, with the grid expanded and the run folder chosen, before any work.
//! Every stage of the pipeline reads it; nothing re-reads the file or re-expands the grid.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::chunking::enrich::Prefix;
use crate::chunking::external::ChunkerSpec;
use crate::chunking::external::precomputed::ChunksFile;
use crate::config::{ComparePrefix, ConfigError, ConfigFile, RunOptions, merge};
use crate::corpus::Reading;
use crate::error::Error;
use crate::golden::GoldenFormat;
use crate::judge::JudgeSettings;
use crate::llm::ClientConfig;
use crate::prepare::contexts::ContextSettings;
use crate::retrieval::embeddings::EmbedSettings;
use crate::retrieval::external::RetrieverSpec;
use crate::retrieval::rerank::RerankSettings;
use crate::select::SelectionSettings;
use crate::sweep::grid::{ConfigCut, ConfigSpec, SweepSpec, expand};

/// The resolved, validated settings of one command. Recorded in the run's manifest (secrets
/// never: API keys are read from the environment by the LLM client and never stored here) and
/// read back from it ([`crate::pipeline::record::RunRecord`]); the fields skipped there are the
/// command's own (the run folder, the expanded grid, `run`'s options).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Corpus folder.
    pub corpus: PathBuf,
    /// How the corpus's files are read (`[corpus] readers`, `skip_unreadable`); the document
    /// cache is set by [`Plan::reading`].
    #[serde(default, skip_serializing_if = "Reading::is_plain")]
    pub reading: Reading,
    /// Golden-set file.
    pub golden: PathBuf,
    /// Golden-set format.
    pub golden_format: GoldenFormat,
    /// The run folder as given (`--out` or `out = ...`), if it was.
    pub out: Option<PathBuf>,
    /// The run folder used: `out`, or `results/<UTC yyyymmdd-hhmmss>` (with `-2`, `-3`… when
    /// that folder exists).
    #[serde(skip)]
    pub run_dir: PathBuf,
    /// What to sweep.
    pub sweep: SweepSpec,
    /// The grid, expanded: strategies in the given order, then sizes, prefixes, retrievers. Each
    /// is read at every cut of `sweep.cuts()`.
    #[serde(skip)]
    pub configs: Vec<ConfigSpec>,
    /// The external chunkers declared for this command by its config file and flags
    /// (docs/chunkers.md). Recorded in the manifest for the reader, never read back: a run's
    /// record cannot make a later command run a chunker.
    #[serde(default, skip_deserializing, skip_serializing_if = "Vec::is_empty")]
    pub chunkers: Vec<ChunkerSpec>,
    /// The external retrievers declared for this command by its config file's `[[retrievers]]`
    /// (docs/retrievers.md), recorded likewise: never read back.
    #[serde(default, skip_deserializing, skip_serializing_if = "Vec::is_empty")]
    pub retrievers: Vec<RetrieverSpec>,
    /// The folder of precomputed chunks files given (`--chunks`), recorded likewise.
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub chunks_dir: Option<PathBuf>,
    /// The precomputed chunks files the grid sweeps.
    #[serde(skip)]
    pub chunk_files: Vec<ChunksFile>,
    /// Whether chunks/<config_id>.jsonl are written.
    pub dump_chunks: bool,
    /// Embedding settings, when the grid needs embeddings (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed: Option<EmbedSettings>,
    /// Context generation, when the grid has `llm_context` (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextSettings>,
    /// Reranking, when the grid reranks (`--rerank none,MODEL`; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerank: Option<RerankSettings>,
    /// The LLM client (chat and embeddings).
    pub llm: ClientConfig,
    /// The judge stage (`run`).
    pub judge: JudgeSettings,
    /// The selection.
    pub selection: SelectionSettings,
    /// `run --candidates`: configurations to judge, each at its cut, instead of the selection's
    /// candidates.
    #[serde(skip)]
    pub candidates: Option<Vec<ConfigCut>>,
    /// `run --compare-prefix`: judge the pick with and without a prefix.
    #[serde(skip)]
    pub compare_prefix: Option<ComparePrefix>,
    /// `run --dry-run`: estimate the judge stage, send nothing.
    #[serde(skip)]
    pub dry_run: bool,
    /// `run --merged`: `run_dir` holds a sweep joined by `chunksweep merge`; read it instead of
    /// sweeping.
    #[serde(skip)]
    pub merged: bool,
}

impl Plan {
    /// Reads the config file at `config` (if any) and resolves it with `flags` and `options`;
    /// the default run folder is stamped with `now`.
    ///
    /// # Errors
    /// As [`ConfigFile::load`] and [`Plan::resolve`].
    pub fn load(
        config: Option<&Path>,
        flags: ConfigFile,
        options: RunOptions,
        now: jiff::Timestamp,
    ) -> Result<Plan, Error> {
        Plan::resolve(read_file(config)?, flags, options, now)
    }

    /// Merges the defaults, `file` and `flags` section by section with [`merge`] (a flag wins
    /// over the file, the file over the defaults; models default to `$CHUNKSWEEP_CHAT_MODEL`,
    /// else `gpt-4o-mini`) and validates the result.
    ///
    /// # Errors
    /// [`ConfigError::Missing`] without a corpus or golden set; [`ConfigError::Invalid`] for a
    /// zero count, an alpha outside (0, 1), a negative budget or unusable embedding settings;
    /// [`crate::sweep::SweepError`] for a grid that cannot run (k = 0, overlap ≥ size, …).
    pub fn resolve(
        file: ConfigFile,
        flags: ConfigFile,
        options: RunOptions,
        now: jiff::Timestamp,
    ) -> Result<Plan, Error> {
        let judge = resolve_judge(&file, &flags)?;
        let selection = SelectionSettings {
            candidates: judge.candidates,
            ..merge("selection", &file.selection, &flags.selection)?
        };
        validate_selection(&selection)?;
        let mut sweep: SweepSpec = merge("sweep", &file.sweep, &flags.sweep)?;
        let declared = external::declared(&file, &flags, &mut sweep)?;
        let configs = expand(&sweep)?;
        let prepared = prepared_configs(
            &configs,
            options.candidates.as_deref(),
            options.compare_prefix,
        );
        let embed = if sweep.needs_embeddings()
            || prepared.iter().any(|c| c.retriever.needs_embeddings())
            || (prepared.iter().any(|c| c.retriever.is_external())
                && embed_model_named(&file, &flags))
        {
            let e: EmbedSettings = merge("embed", &file.embed, &flags.embed)?;
            e.validate()
                .map_err(|err| ConfigError::Invalid(err.to_string()))?;
            Some(e)
        } else {
            None
        };
        let context = if prepared.iter().any(|c| c.prefix == Prefix::LlmContext) {
            let s: ContextSettings = merge("context", &file.context, &flags.context)?;
            if s.window_tokens == 0 || s.concurrency == 0 {
                return Err(ConfigError::Invalid(
                    "context.window_tokens (--context-window) and context.concurrency must be at least 1"
                        .into(),
                )
                .into());
            }
            Some(s)
        } else {
            None
        };
        let rerank = resolve_rerank(&file, &flags, &sweep, &prepared)?;
        let golden = flags
            .golden
            .or(file.golden)
            .ok_or(ConfigError::Missing("golden"))?;
        let golden_format = flags
            .golden_format
            .or(file.golden_format)
            .unwrap_or_else(|| GoldenFormat::from_path(&golden));
        let reading = Reading {
            readers: match flags.corpus.readers.is_empty() {
                true => file.corpus.readers.clone(),
                false => flags.corpus.readers.clone(),
            },
            skip_unreadable: flags
                .corpus
                .skip_unreadable
                .or(file.corpus.skip_unreadable)
                .unwrap_or(false),
            cache: None,
        };
        let corpus = flags
            .corpus
            .path
            .or(file.corpus.path)
            .ok_or(ConfigError::Missing("corpus"))?;
        let out = flags.out.or(file.out);
        let run_dir = match &out {
            Some(dir) => dir.clone(),
            None => new_run_dir(Path::new("results"), now),
        };
        let plan = Plan {
            corpus,
            reading,
            golden,
            golden_format,
            out,
            run_dir,
            sweep,
            configs,
            chunkers: declared.chunkers,
            retrievers: declared.retrievers,
            chunks_dir: declared.dir,
            chunk_files: declared.files,
            dump_chunks: flags
                .sweep
                .dump_chunks
                .or(file.sweep.dump_chunks)
                .unwrap_or(false),
            embed,
            context,
            rerank,
            llm: {
                let mut llm = file.llm.unwrap_or_default();
                llm.batch.enabled |= options.batch || options.cancel_batches;
                llm.batch.cancel = options.cancel_batches;
                llm
            },
            selection,
            judge,
            candidates: options.candidates,
            compare_prefix: options.compare_prefix,
            dry_run: options.dry_run,
            merged: options.merged,
        };
        plan.check_rerank_server()?;
        Ok(plan)
    }

    /// Refuses a reranked grid whose reranker server resolves to OpenAI's API, which serves no
    /// `/rerank`: no `[rerank] base_url` (`--rerank-base-url`) and the `[llm]` server is the
    /// default one.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] saying to set `[rerank] base_url`.
    fn check_rerank_server(&self) -> Result<(), ConfigError> {
        let Some(r) = self.rerank.as_ref().filter(|r| r.base_url.is_none()) else {
            return Ok(());
        };
        if self.llm.resolved_base_url() != crate::llm::config::DEFAULT_BASE_URL {
            return Ok(());
        }
        Err(ConfigError::Invalid(format!(
            "rerank: no reranker server for {}: set [rerank] base_url (or --rerank-base-url), e.g. http://127.0.0.1:8080/v1 for llama.cpp's server; the [llm] server it would otherwise use is {}, which serves no /rerank",
            r.model,
            crate::llm::config::DEFAULT_BASE_URL
        )))
    }
}

impl Plan {
    /// How the corpus is read: [`Plan::reading`]'s settings, and the document cache beside
    /// the LLM response cache unless `[llm] cache = false`.
    pub fn reading(&self) -> Reading {
        Reading {
            cache: self.llm.cache.then(|| {
                self.llm
                    .cache_path
                    .with_file_name(crate::documents::cache::DOCUMENT_CACHE)
            }),
            ..self.reading.clone()
        }
    }
}

impl Plan {
    /// This plan (a run's record) without what the run chose for itself alone: its spending cap
    /// (`--max-cost`, `[judge] max_cost_usd`) and whether its calls went through the Batch API
    /// (`run --batch`, `[llm] batch`). A command that re-reads a run's record (`check` on a
    /// baseline, `judge-check` on a run's folder) takes them only from its own flags and config
    /// file, never from the record.
    pub fn without_run_choices(mut self) -> Plan {
        self.judge.max_cost_usd = None;
        self.llm.batch.enabled = false;
        self
    }

    /// This plan (a run's record, [`crate::pipeline::record::RunRecord`]) for a command that
    /// re-reads the run: [`Plan::without_run_choices`], then the judge settings of `flags` laid
    /// over its own with [`merge`], and the output folder `flags`' `out`, else a new
    /// `results/<UTC yyyymmdd-hhmmss>` stamped with `now` (never the run's own folder).
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] for judge settings out of range.
    pub fn with_judge_flags(
        mut self,
        flags: &ConfigFile,
        now: jiff::Timestamp,
    ) -> Result<Plan, Error> {
        self = self.without_run_choices();
        self.judge = merge("judge", &self.judge, &flags.judge)?;
        validate_judge(&self.judge)?;
        self.out = flags.out.clone();
        self.run_dir = match &self.out {
            Some(dir) => dir.clone(),
            None => new_run_dir(Path::new("results"), now),
        };
        Ok(self)
    }
}

/// Whether the run has an embeddings model without a dense, hybrid or semantic configuration:
/// the config file's `[embed]` or a flag names a model (`model`, `query_model`, `--embed-model`,
/// `--embed-query-model`), or `$CHUNKSWEEP_EMBED_MODEL` is set. Only then is an external
/// retriever sent vectors (docs/retrievers.md); the built-in default model does not count.
fn embed_model_named(file: &ConfigFile, flags: &ConfigFile) -> bool {
    [&file.embed, &flags.embed]
        .iter()
        .any(|e| e.model.is_some() || e.query_model.is_some())
        || std::env::var("CHUNKSWEEP_EMBED_MODEL").is_ok_and(|m| !m.is_empty())
}

/// The `[rerank]` settings with the grid's reranker model, when a configuration of `prepared`
/// is reranked.
fn resolve_rerank(
    file: &ConfigFile,
    flags: &ConfigFile,
    sweep: &SweepSpec,
    prepared: &[ConfigSpec],
) -> Result<Option<RerankSettings>, Error> {
    let model = sweep.rerank_model()?;
    if !prepared.iter().any(|c| c.rerank) {
        return Ok(None);
    }
    let Some(model) = model else {
        return Err(ConfigError::Invalid(
            "a reranked configuration (+rerank) needs a reranker model: pass --rerank none,MODEL"
                .into(),
        )
        .into());
    };
    let mut r: RerankSettings = merge("rerank", &file.rerank, &flags.rerank)?;
    r.model = model.to_string();
    r.validate().map_err(ConfigError::Invalid)?;
    Ok(Some(r))
}

/// The config file at `path`, or an empty one.
fn read_file(path: Option<&Path>) -> Result<ConfigFile, ConfigError> {
    path.map_or_else(|| Ok(ConfigFile::default()), ConfigFile::load)
}

impl Plan {
    /// Every configuration this command may retrieve with, so the prepare step makes what each
    /// needs (embeddings of its prefixed chunks, `llm_context` contexts): the grid, then
    /// `--candidates` outside it, then for `--compare-prefix PREFIX` each grid configuration with
    /// that prefix and with none (the pick is known only after the sweep).
    pub fn prepared_configs(&self) -> Vec<ConfigSpec> {
        prepared_configs(
            &self.configs,
            self.candidates.as_deref(),
            self.compare_prefix,
        )
    }
}

fn prepared_configs(
    grid: &[ConfigSpec],
    candidates: Option<&[ConfigCut]>,
    compare_prefix: Option<ComparePrefix>,
) -> Vec<ConfigSpec> {
    let mut out = grid.to_vec();
    let variants = match compare_prefix {
        Some(ComparePrefix::Prefix(p)) => grid
            .iter()
            .flat_map(|c| {
                [Prefix::None, p].map(|prefix| ConfigSpec {
                    prefix,
                    ..c.clone()
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    let candidates = candidates.into_iter().flatten().map(|c| &c.config);
    for c in candidates.chain(&variants) {
        if !out.contains(c) {
            out.push(c.clone());
        }
    }
    out
}

/// What `judge-check` needs: the judge's and the client's settings and an output folder (no
/// corpus or golden set).
#[derive(Debug, Clone)]
pub struct JudgeOnly {
    /// The judge settings (`[judge]` and the flags).
    pub judge: JudgeSettings,
    /// The LLM client (`[llm]`).
    pub llm: crate::llm::ClientConfig,
    /// Output folder: `--out`, the file's `out`, else `results/<UTC yyyymmdd-hhmmss>`.
    pub run_dir: PathBuf,
}

impl JudgeOnly {
    /// Reads the config file at `config` (if any) and resolves its judge and client settings
    /// with `flags`; the default folder is stamped with `now`.
    ///
    /// # Errors
    /// As [`ConfigFile::load`]; [`ConfigError::Invalid`] for judge settings out of range.
    pub fn load(
        config: Option<&Path>,
        flags: ConfigFile,
        now: jiff::Timestamp,
    ) -> Result<JudgeOnly, Error> {
        let file = read_file(config)?;
        let judge = resolve_judge(&file, &flags)?;
        let run_dir = flags
            .out
            .or(file.out)
            .unwrap_or_else(|| new_run_dir(Path::new("results"), now));
        Ok(JudgeOnly {
            judge,
            llm: file.llm.unwrap_or_default(),
            run_dir,
        })
    }
}

/// The `[judge]` section and the judge flags over [`JudgeSettings::default`], validated.
fn resolve_judge(file: &ConfigFile, flags: &ConfigFile) -> Result<JudgeSettings, ConfigError> {
    // Checked before the merge: its JSON layer turns a NaN into null, which would drop the cap.
    check_max_cost(file.judge.max_cost_usd)?;
    check_max_cost(flags.judge.max_cost_usd)?;
    let s: JudgeSettings = merge("judge", &file.judge, &flags.judge)?;
    validate_judge(&s)?;
    Ok(s)
}

/// Checks the judge settings' shares, κ, counts, α and budget are in range.
///
/// # Errors
/// [`ConfigError::Invalid`] naming the setting.
pub fn validate_judge(s: &JudgeSettings) -> Result<(), ConfigError> {
    if ![s.control_fraction, s.repeat_fraction, s.min_control_tnr]
        .iter()
        .all(|x| (0.0..=1.0).contains(x))
        || !(-1.0..=1.0).contains(&s.min_repeat_kappa)
    {
        return Err(ConfigError::Invalid(
            "judge.control_fraction, judge.repeat_fraction and judge.min_control_tnr must be between 0 and 1, judge.min_repeat_kappa between -1 and 1".into(),
        ));
    }
    if s.concurrency == 0 || s.candidates == 0 || s.max_questions == Some(0) {
        return Err(ConfigError::Invalid(
            "judge.concurrency, judge.candidates (--n-candidates) and judge.max_questions (--judge-questions) must be at least 1".into(),
        ));
    }
    if !(s.alpha > 0.0 && s.alpha < 1.0) {
        return Err(ConfigError::Invalid(format!(
            "judge.alpha {} must be strictly between 0 and 1",
            s.alpha
        )));
    }
    check_max_cost(s.max_cost_usd)
}

/// Refuses a budget that is not a finite number of USD, 0 or more: a NaN compares false with
/// every spend and would turn the cap off.
fn check_max_cost(max_cost_usd: Option<f64>) -> Result<(), ConfigError> {
    match max_cost_usd.filter(|m| !m.is_finite() || *m < 0.0) {
        Some(m) => Err(ConfigError::Invalid(format!(
            "judge.max_cost_usd (--max-cost) is {m}: it must be a finite number of USD, 0 or more (e.g. 2.5)"
        ))),
        None => Ok(()),
    }
}

/// Checks the selection's halves and judge candidates are at least 1, its α and confidence are
/// in (0, 1), δ in (0, 1), its tolerances, gap and recall floor are non-negative numbers, its stable share in
/// [0, 1]. Every path to a selection calls it: flags and config file ([`Plan::resolve`]), and
/// `report`'s recorded settings with its flags laid over them.
///
/// # Errors
/// [`ConfigError::Invalid`] naming the setting, its flag and its valid range.
pub fn validate_selection(s: &SelectionSettings) -> Result<(), ConfigError> {
    if s.halves == 0 {
        return Err(ConfigError::Invalid(
            "selection.halves (--halves) is 0: it must be at least 1".into(),
        ));
    }
    if s.candidates == 0 {
        return Err(ConfigError::Invalid(
            "judge.candidates (--n-candidates of run, --candidates of report) is 0: it must be at least 1"
                .into(),
        ));
    }
    let open_unit = |x: f64| x > 0.0 && x < 1.0;
    if !open_unit(s.alpha) || !open_unit(s.confidence) {
        return Err(ConfigError::Invalid(format!(
            "selection.alpha (--alpha) {} and selection.confidence {} must be strictly between 0 and 1",
            s.alpha, s.confidence
        )));
    }
    if !(s.delta.is_finite() && s.delta > 0.0 && s.delta < 1.0) {
        return Err(ConfigError::Invalid(format!(
            "selection.delta (--delta) {} must be strictly between 0 and 1 (a margin in span recall, e.g. 0.05)",
            s.delta
        )));
    }
    let non_negative = |x: f64| x.is_finite() && x >= 0.0;
    if ![
        s.margin_tolerance,
        s.recall_tolerance,
        s.boundary_gap,
        s.weak_recall,
    ]
    .into_iter()
    .all(non_negative)
        || !(0.0..=1.0).contains(&s.stable_share)
    {
        return Err(ConfigError::Invalid(
            "selection.margin_tolerance (--margin-tolerance), selection.recall_tolerance (--recall-tolerance), selection.boundary_gap and selection.weak_recall must be numbers ≥ 0, selection.stable_share between 0 and 1".into(),
        ));
    }
    Ok(())
}

/// `root/<UTC yyyymmdd-hhmmss>`, with `-2`, `-3`… appended if that folder exists.
fn new_run_dir(root: &Path, at: jiff::Timestamp) -> PathBuf {
    let stamp = at.strftime("%Y%m%d-%H%M%S").to_string();
    let mut dir = root.join(&stamp);
    let mut n = 2;
    while dir.exists() {
        dir = root.join(format!("{stamp}-{n}"));
        n += 1;
    }
    dir
}

mod external;
#[cfg(test)]
mod tests;
