//! The plan of a command: every setting resolved once (defaults, then the config file, then the
//! flags), validated once, with the grid expanded and the run folder chosen, before any work.
//! Every stage of the pipeline reads it; nothing re-reads the file or re-expands the grid.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::chunking::enrich::Prefix;
use crate::config::{ComparePrefix, ConfigError, ConfigFile, Overrides};
use crate::error::Error;
use crate::golden::GoldenFormat;
use crate::judge::JudgeSettings;
use crate::llm::ClientConfig;
use crate::prepare::contexts::ContextSettings;
use crate::retrieval::Bm25Settings;
use crate::retrieval::embeddings::EmbedSettings;
use crate::select::SelectionSettings;
use crate::sweep::grid::{ConfigSpec, SweepSpec, expand};

/// The resolved, validated settings of one command. Recorded in the run's manifest (secrets
/// never: API keys are read from the environment by the LLM client and never stored here).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// Corpus folder.
    pub corpus: PathBuf,
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
    /// The grid, expanded: strategies in the given order, then sizes, prefixes, retrievers.
    #[serde(skip)]
    pub configs: Vec<ConfigSpec>,
    /// Whether chunks/<config_id>.jsonl are written.
    pub dump_chunks: bool,
    /// Embedding settings, when the grid needs embeddings (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed: Option<EmbedSettings>,
    /// Context generation, when the grid has `llm_context` (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextSettings>,
    /// The LLM client (chat and embeddings).
    pub llm: ClientConfig,
    /// The judge stage (`run`).
    pub judge: JudgeSettings,
    /// The selection.
    pub selection: SelectionSettings,
    /// `run --candidates`: configurations to judge instead of the selection's candidates.
    #[serde(skip)]
    pub candidates: Option<Vec<ConfigSpec>>,
    /// `run --compare-prefix`: judge the pick with and without a prefix.
    #[serde(skip)]
    pub compare_prefix: Option<ComparePrefix>,
    /// `run --dry-run`: estimate the judge stage, send nothing.
    #[serde(skip)]
    pub dry_run: bool,
}

impl Plan {
    /// Reads the config file at `config` (if any) and resolves it with `flags`; the default run
    /// folder is stamped with `now`.
    ///
    /// # Errors
    /// As [`ConfigFile::load`] and [`Plan::resolve`].
    pub fn load(
        config: Option<&Path>,
        flags: Overrides,
        now: jiff::Timestamp,
    ) -> Result<Plan, Error> {
        let file = match config {
            Some(path) => ConfigFile::load(path)?,
            None => ConfigFile::default(),
        };
        Plan::resolve(file, flags, now)
    }

    /// Merges the defaults, `file` and `flags` (a flag wins over the file, the file over the
    /// defaults; models default to `$CHUNKSWEEP_CHAT_MODEL`, else `gpt-4o-mini`) and validates
    /// the result.
    ///
    /// # Errors
    /// [`ConfigError::Missing`] without a corpus or golden set; [`ConfigError::Invalid`] for a
    /// zero count, an alpha outside (0, 1), a negative budget or unusable embedding settings;
    /// [`crate::sweep::SweepError`] for a grid that cannot run (k = 0, overlap ≥ size, …).
    pub fn resolve(
        file: ConfigFile,
        flags: Overrides,
        now: jiff::Timestamp,
    ) -> Result<Plan, Error> {
        let judge = resolve_judge(&file, &flags)?;
        let defaults = SweepSpec::default();
        let mut semantic = file.sweep.semantic.unwrap_or_default();
        if let Some(p) = flags.semantic_percentile {
            semantic.percentile = p;
        }
        let prefixes = flags
            .prefixes
            .or(file.sweep.prefixes)
            .unwrap_or(defaults.prefixes);
        let sweep = SweepSpec {
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
            budgets: flags
                .budgets
                .or(file.sweep.budgets)
                .unwrap_or(defaults.budgets),
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
            bm25: {
                let f = file.sweep.bm25.unwrap_or_default();
                Bm25Settings {
                    analyzer: flags.analyzer.unwrap_or(f.analyzer),
                    stem: flags.stem || f.stem,
                    k1: flags.bm25_k1.unwrap_or(f.k1),
                    b: flags.bm25_b.unwrap_or(f.b),
                }
            },
        };
        let configs = expand(&sweep)?;
        let prepared =
            prepared_configs(&configs, flags.candidates.as_deref(), flags.compare_prefix);
        let embed = if sweep.needs_embeddings()
            || prepared.iter().any(|c| c.retriever.needs_embeddings())
        {
            let mut e = file.embed.clone().unwrap_or_default();
            if let Some(url) = flags.embed_base_url {
                e.base_url = Some(url);
            }
            if let Some(m) = flags.embed_model {
                e.model = m;
            }
            if let Some(m) = flags.embed_query_model {
                e.query_model = Some(m);
            }
            if flags.embed_prefix == Some(false) {
                e.embed_prefix = false;
            }
            e.validate()
                .map_err(|err| ConfigError::Invalid(err.to_string()))?;
            Some(e)
        } else {
            None
        };
        let context = if prepared.iter().any(|c| c.prefix == Prefix::LlmContext) {
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
                prompt: c.prompt.clone().or(d.prompt),
                ..d
            };
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
        let golden = flags
            .golden
            .or(file.golden)
            .ok_or(ConfigError::Missing("golden"))?;
        let golden_format = flags
            .golden_format
            .or(file.golden_format)
            .unwrap_or_else(|| GoldenFormat::from_path(&golden));
        let corpus = flags
            .corpus
            .or(file.corpus)
            .ok_or(ConfigError::Missing("corpus"))?;
        let out = flags.out.or(file.out);
        let run_dir = match &out {
            Some(dir) => dir.clone(),
            None => new_run_dir(Path::new("results"), now),
        };
        Ok(Plan {
            corpus,
            golden,
            golden_format,
            out,
            run_dir,
            sweep,
            configs,
            dump_chunks: flags.dump_chunks || file.sweep.dump_chunks.unwrap_or(false),
            embed,
            context,
            llm: file.llm.unwrap_or_default(),
            selection: SelectionSettings {
                candidates: judge.candidates,
                ..SelectionSettings::default()
            },
            judge,
            candidates: flags.candidates,
            compare_prefix: flags.compare_prefix,
            dry_run: flags.dry_run,
        })
    }
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
    candidates: Option<&[ConfigSpec]>,
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
    for c in candidates.into_iter().flatten().chain(&variants) {
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
        flags: Overrides,
        now: jiff::Timestamp,
    ) -> Result<JudgeOnly, Error> {
        let file = match config {
            Some(path) => ConfigFile::load(path)?,
            None => ConfigFile::default(),
        };
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

/// The `[judge]` section and the judge flags over [`JudgeSettings::default`].
fn resolve_judge(file: &ConfigFile, flags: &Overrides) -> Result<JudgeSettings, ConfigError> {
    let d = JudgeSettings::default();
    let f = &file.judge;
    let s = JudgeSettings {
        generator_model: flags
            .generator_model
            .clone()
            .or(f.generator_model.clone())
            .unwrap_or(d.generator_model),
        judge_model: flags
            .judge_model
            .clone()
            .or(f.judge_model.clone())
            .unwrap_or(d.judge_model),
        candidates: flags.n_candidates.or(f.candidates).unwrap_or(d.candidates),
        max_tokens: f.max_tokens.unwrap_or(d.max_tokens),
        judge_max_tokens: f.judge_max_tokens.unwrap_or(d.judge_max_tokens),
        temperature: f.temperature.unwrap_or(d.temperature),
        seed: f.seed.or(d.seed),
        concurrency: f.concurrency.unwrap_or(d.concurrency),
        max_cost_usd: flags.max_cost_usd.or(f.max_cost_usd),
        alpha: f.alpha.unwrap_or(d.alpha),
        max_questions: flags.judge_questions.or(f.max_questions),
        prompts_dir: flags
            .prompts
            .clone()
            .or(f.prompts.clone())
            .or(d.prompts_dir),
        controls: f.controls.unwrap_or(d.controls),
        control_fraction: f.control_fraction.unwrap_or(d.control_fraction),
        repeat_fraction: f.repeat_fraction.unwrap_or(d.repeat_fraction),
        min_control_tnr: f.min_control_tnr.unwrap_or(d.min_control_tnr),
        min_repeat_kappa: f.min_repeat_kappa.unwrap_or(d.min_repeat_kappa),
        mode: flags.judge_mode.or(f.mode).unwrap_or(d.mode),
    };
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
    if s.max_cost_usd.is_some_and(|m| m.is_nan() || m < 0.0) {
        return Err(ConfigError::Invalid(
            "--max-cost must be a non-negative number of USD".into(),
        ));
    }
    Ok(s)
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

#[cfg(test)]
mod tests;
