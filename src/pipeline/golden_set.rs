//! `chunksweep golden draft` and `golden review`. Drafting: load the corpus, plan the passages, estimate (`--dry-run` stops
//! there, `--max-cost` refuses a larger estimate), draft through the LLM client, write the
//! golden set and its drafting CSV ([`crate::golden::draft`]). Review: write the page
//! ([`crate::report::golden_review`]).

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::runtime;
use crate::budget::{self, CostEstimate};
use crate::config::ConfigFile;
use crate::corpus;
use crate::error::Error;
use crate::events::{Events, RunEvent};
use crate::golden::draft::ask::drafting_line;
use crate::golden::draft::{self, DraftError, DraftSettings, Drafted};
use crate::llm::config::redact_url;
use crate::llm::{ClientConfig, LlmClient};
use crate::report::golden_review::Reviewed;

/// The inputs of `golden draft`.
#[derive(Debug, Clone)]
pub struct DraftRequest {
    /// The corpus folder.
    pub corpus: PathBuf,
    /// The golden set to write (JSONL).
    pub out: PathBuf,
    /// A config file: its `[llm]` section (server, limits, prices, cache) and `[embed]
    /// base_url` / `query_prefix` for the near-duplicate filter's embeddings.
    pub config: Option<PathBuf>,
    /// The drafting settings.
    pub settings: DraftSettings,
    /// Print the estimate and send nothing.
    pub dry_run: bool,
    /// `--max-cost`: refuse to start when the estimate passes this, USD.
    pub max_cost_usd: Option<f64>,
}

/// What `golden draft` did.
#[derive(Debug, Clone)]
pub enum DraftOutcome {
    /// `--dry-run`: the plan's size and estimate; nothing was sent.
    DryRun {
        /// Passages (calls) planned.
        passages: usize,
        /// Documents they come from.
        documents: usize,
        /// The estimate.
        estimate: CostEstimate,
        /// The server, credentials redacted.
        server: String,
        /// The model.
        model: String,
        /// With `--max-cost`: why the real run would be refused before any call (the estimate
        /// passes the budget or has no price).
        refused: Option<String>,
    },
    /// The set was drafted and written.
    Drafted {
        /// Every item and the calls' accounting.
        drafted: Box<Drafted>,
        /// The golden set written.
        out: PathBuf,
        /// The drafting CSV written beside it.
        csv: PathBuf,
        /// Wall time, seconds.
        wall_s: f64,
    },
}

/// The `[llm]` and `[embed]` sections of `config` (defaults without a file).
fn client_configs(config: Option<&Path>) -> Result<(ClientConfig, ConfigFile), Error> {
    let file = match config {
        Some(path) => ConfigFile::load(path)?,
        None => ConfigFile::default(),
    };
    Ok((file.llm.clone().unwrap_or_default(), file))
}

/// Runs `golden draft`.
///
/// # Errors
/// [`Error::Golden`] for an `out` that exists, is a folder or has no parent folder (refused
/// first); [`Error::Config`] and [`Error::Corpus`] for the inputs; [`Error::Draft`] for the budget, the client,
/// the calls and the files, and for a run that kept no item (after writing the drafting CSV:
/// [`Drafted::failure`]).
pub fn draft(req: &DraftRequest, events: Events<'_>) -> Result<DraftOutcome, Error> {
    let started = Instant::now();
    crate::golden::out_path::check_new_golden_set(&req.out)?;
    let (llm, file) = client_configs(req.config.as_deref())?;
    let corpus = corpus::load_corpus(&req.corpus, &super::extract::reading(&file, false))?;
    let mut settings = req.settings.clone();
    if settings.embed_prefix.is_empty() {
        settings.embed_prefix = file.embed.query_prefix.clone().unwrap_or_default();
    }
    let planned = draft::plan(&corpus, &settings, &llm)?;
    let server = redact_url(&llm.resolved_base_url());
    if req.dry_run {
        let mut docs: Vec<usize> = planned.passages.iter().map(|p| p.doc).collect();
        docs.sort_unstable();
        docs.dedup();
        let refused = check_budget(req.max_cost_usd, &planned.estimate, &settings.model)
            .err()
            .map(|e| e.to_string());
        return Ok(DraftOutcome::DryRun {
            passages: planned.passages.len(),
            documents: docs.len(),
            estimate: planned.estimate,
            server,
            refused,
            model: settings.model,
        });
    }
    check_budget(req.max_cost_usd, &planned.estimate, &settings.model)?;
    let client = LlmClient::new(llm.clone()).map_err(DraftError::from)?;
    let embedder = match &settings.embed_model {
        Some(_) => {
            let base_url = file
                .embed
                .base_url
                .clone()
                .or_else(|| std::env::var("CHUNKSWEEP_EMBED_BASE_URL").ok())
                .or(llm.base_url.clone());
            Some(
                LlmClient::new(ClientConfig {
                    base_url,
                    ..llm.clone()
                })
                .map_err(DraftError::from)?,
            )
        }
        None => None,
    };
    events(RunEvent::Note(format!(
        "drafting from {} passage(s): {}",
        planned.passages.len(),
        drafting_line(&planned.estimate, client.base_url(), &settings.model)
    )));
    let drafted = runtime()?.block_on(draft::run(
        &corpus,
        planned,
        &settings,
        &client,
        embedder.as_ref(),
        events,
    ))?;
    let csv = draft::output::write(&req.out, &corpus, &drafted)?;
    if let Some(failure) = drafted.failure(&server, &req.out, &csv) {
        return Err(failure.into());
    }
    Ok(DraftOutcome::Drafted {
        drafted: Box::new(drafted),
        out: req.out.clone(),
        csv,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

/// `chunksweep golden review`: writes the review page of the JSONL golden set `file`, its
/// evidence located in the corpus folder `corpus`, to `out`.
///
/// # Errors
/// [`Error::Golden`] for an `out` that is `file` or inside `corpus` (refused first);
/// [`Error::Corpus`] and [`Error::Golden`] for the inputs (a malformed line included: a download
/// would lose it); [`Error::Draft`] ([`DraftError::Write`]) when the page cannot be written.
pub fn review(file: &Path, corpus: &Path, out: &Path) -> Result<Reviewed, Error> {
    crate::golden::out_path::check_review_page(file, corpus, out)?;
    let corpus = corpus::load_corpus(
        corpus,
        &super::extract::reading(&ConfigFile::default(), false),
    )?;
    let (page, counts) = crate::report::golden_review::render(file, &corpus)?;
    std::fs::write(out, page).map_err(|source| DraftError::Write {
        path: out.to_path_buf(),
        source,
    })?;
    Ok(counts)
}

/// Refuses a drafting estimate without a price for `model`, or passing `max_usd`, under a budget
/// (`--max-cost`, [`budget::refusal`]); without one, `Ok`.
fn check_budget(
    max_usd: Option<f64>,
    estimate: &CostEstimate,
    model: &str,
) -> Result<(), DraftError> {
    match budget::refusal(max_usd, estimate, 0.0) {
        Some(r) => Err(DraftError::over_budget(r, model)),
        None => Ok(()),
    }
}
