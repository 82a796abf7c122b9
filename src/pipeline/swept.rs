//! The sweep part of `sweep` and `run`: load the inputs, prepare (embeddings, contexts), score
//! every configuration, and write the sweep's files. What it made stays in [`Swept`] for the
//! selection and the judge step.

use std::sync::Arc;
use std::time::Instant;

use crate::chunking::external::{self, ExternalInputs, Identity};
use crate::corpus::{self, Corpus};
use crate::error::Error;
use crate::events::{Events, RunEvent, Step};
use crate::files;
use crate::golden::{self, GoldenSet};
use crate::pipeline::out_run;
use crate::pipeline::record::{self, RunRecord};
use crate::plan::Plan;
use crate::prepare::spend_cap::{SpendCap, SpendCapError};
use crate::prepare::sweep_budget;
use crate::prepare::{self, PrepareInputs, Prepared, WouldSend};
use crate::report::manifest::ManifestInputs;
use crate::report::manifest::PhaseTimes;
use crate::report::read;
use crate::report::run_dir::RunDir;
use crate::retrieval::external::{RetrieverError, RetrieverIdentity, RetrieverProblem};
use crate::sweep::SweepError;
use crate::sweep::driver::{Grid, run_sweep};
use crate::sweep::grid::ConfigCut;
use crate::sweep::index::RetrievalContext;
use crate::sweep::merge_error::MergeError;
use crate::sweep::rows::{ConfigOutcome, CutOutcome, QuestionRow, StageTimes, SweepRow};
use crate::tokenize::CorpusTokens;

/// What the sweep part of a command made, kept for the judge step.
pub struct Swept {
    /// The corpus.
    pub corpus: Corpus,
    /// The golden set.
    pub golden: GoldenSet,
    /// Token streams of every document, in the grid's unit.
    pub tokens: CorpusTokens,
    /// What the prepare step made (embeddings, contexts), shared by every configuration.
    pub context: Arc<RetrievalContext>,
    /// Every configuration's result, in grid order.
    pub outcomes: Vec<ConfigOutcome>,
    /// Phase times, ms.
    pub phases: PhaseTimes,
    /// What the prepare step did (for the manifest).
    pub prepared: Prepared,
}

impl Swept {
    /// sweep.csv's rows.
    pub fn rows(&self) -> Vec<SweepRow> {
        self.outcomes
            .iter()
            .flat_map(|o| o.rows().cloned())
            .collect()
    }

    /// The configuration and cut of the sweep.csv row `config_id`.
    ///
    /// # Errors
    /// [`SweepError::UnknownConfig`] when no row has that id.
    pub fn config_cut(&self, config_id: &str) -> Result<ConfigCut, SweepError> {
        self.outcomes
            .iter()
            .find_map(|o| {
                o.cuts
                    .iter()
                    .find(|c| c.row.config_id == config_id)
                    .map(|c| ConfigCut {
                        config: o.config.clone(),
                        cut: c.cut,
                    })
            })
            .ok_or_else(|| SweepError::UnknownConfig(config_id.to_string()))
    }

    /// sweep_questions.csv's rows.
    pub fn questions(&self) -> Vec<QuestionRow> {
        self.outcomes
            .iter()
            .flat_map(|o| o.question_rows().cloned())
            .collect()
    }
}

impl Swept {
    /// What the manifest records of this sweep, with the external chunker of `pick`.
    pub(super) fn record(&self, pick: &ConfigCut) -> record::SweepRecord<'_> {
        record::SweepRecord {
            corpus: &self.corpus,
            golden: &self.golden,
            embed: self.prepared.embed.as_ref().map(|e| &e.stats),
            contexts: self.prepared.contexts.as_ref().map(|c| &c.summary),
            external: self
                .context
                .external
                .get(&pick.config.params)
                .map(|c| &c.identity),
            external_retriever: self
                .context
                .retrieved
                .identities
                .get(pick.config.retriever.name()),
            phases: self.phases,
            config_times: self
                .outcomes
                .iter()
                .map(|o| (o.config.id(), o.times))
                .collect(),
        }
    }
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// The inputs of a sweep, loaded and tokenized.
pub(super) struct Loaded {
    pub(super) corpus: Corpus,
    pub(super) golden: GoldenSet,
    tokens: CorpusTokens,
    phases: PhaseTimes,
}

/// What a dry run's sweep would send when the caches do not answer every call its grid needs:
/// nothing was sent, swept or written.
pub struct Unsent {
    /// The corpus.
    pub corpus: Corpus,
    /// The golden set.
    pub golden: GoldenSet,
    /// What the prepare step would send.
    pub would_send: WouldSend,
}

/// Loads and tokenizes the inputs of `plan` (after checking its `--out`), warning about
/// duplicate documents.
pub(super) fn load(plan: &Plan, events: Events<'_>) -> Result<Loaded, Error> {
    RunDir::check_out(&plan.run_dir, files::RUN_OUTPUTS)?;
    if let Some(note) =
        crate::expand::left_out::left_out_note(&plan.sweep.expand, &plan.sweep.sizes)
    {
        events(RunEvent::Warning(note));
    }
    let mut phases = PhaseTimes::default();
    let t = Instant::now();
    let corpus = corpus::load_corpus(&plan.corpus, &plan.reading())?;
    let golden = golden::load(&plan.golden, plan.golden_format, &corpus)?;
    phases.load_ms = ms_since(t);
    for warning in corpus
        .reading_warnings()
        .into_iter()
        .chain(corpus.duplicate_warnings())
    {
        events(RunEvent::Warning(warning));
    }
    let unreviewed = golden
        .questions
        .iter()
        .filter(|q| q.origin.is_unreviewed_draft())
        .count();
    if unreviewed > 0 {
        events(RunEvent::Warning(format!(
            "{unreviewed} of {} questions are unreviewed drafts (\"source\": \"draft\", \"reviewed\" not true): review them with `chunksweep golden review` before trusting the pick (report.md, \"Drafted questions\")",
            golden.questions.len()
        )));
    }
    let t = Instant::now();
    let tokens = CorpusTokens::new(&corpus, plan.sweep.tokenizer);
    phases.tokenize_ms = ms_since(t);
    Ok(Loaded {
        corpus,
        golden,
        tokens,
        phases,
    })
}

/// Refuses to sweep `loaded` into a `--out` that holds another run ([`out_run::refuse_other_run`]).
fn refuse_other_run(plan: &Plan, loaded: &Loaded) -> Result<(), Error> {
    out_run::refuse_other_run(&plan.run_dir, &plan.sweep, || {
        let n = loaded.golden.questions.len();
        Ok(ManifestInputs::new(&loaded.corpus, &plan.golden, n)?)
    })
}

/// The identity of the external chunker that makes `config`'s chunks under `plan`, from its
/// hello alone (nothing is chunked): `check` fingerprints the chunker under test before it
/// writes anything.
///
/// # Errors
/// [`crate::chunking::external::ExternalError`] (in [`crate::prepare::PrepareError`]) when the
/// chunker cannot start or answer its hello, or is not declared.
pub(super) fn identify_external(
    plan: &Plan,
    loaded: &Loaded,
    config: &ConfigCut,
    events: Events<'_>,
) -> Result<Identity, Error> {
    let sink = prepare::chunker_log(events);
    let inputs = ExternalInputs {
        corpus: &loaded.corpus,
        tokenizer: plan.sweep.tokenizer,
        chunkers: &plan.chunkers,
        files: &plan.chunk_files,
        params: &[],
        cache: None,
        stderr: &sink,
    };
    external::identify(&inputs, &config.config.params)
        .map_err(|e| Error::Prepare(prepare::PrepareError::External(e)))
}

/// The identity of `config`'s external retriever under `plan`, from its hello (it is sent
/// nothing else), for `check`'s fingerprint.
///
/// # Errors
/// [`crate::retrieval::external::RetrieverError`] (in [`crate::prepare::PrepareError`]) when
/// the retriever is not declared for this command, cannot start or answer its hello.
pub(super) fn identify_retriever(
    plan: &Plan,
    config: &ConfigCut,
    events: Events<'_>,
) -> Result<RetrieverIdentity, Error> {
    let name = config.config.retriever.name();
    let fail = |e| Error::Prepare(prepare::PrepareError::Retriever(e));
    let Some(spec) = plan.retrievers.iter().find(|r| r.name == name) else {
        return Err(fail(RetrieverError::new(
            name,
            RetrieverProblem::Inputs(
                "no retriever of this name is declared for this command: declare it in the config file's [[retrievers]] (a baseline never supplies a command)".into(),
            ),
        )));
    };
    prepare::retrievers::identify(spec, &prepare::chunker_log(events)).map_err(fail)
}

/// What `--max-cost` must also hold after the sweep, checked with what the sweep would send
/// before it sends anything: `run`'s judge stage, bounded before its candidates are known.
pub(super) type AfterSweep<'a> = &'a dyn Fn(&Loaded, &WouldSend) -> Result<(), Error>;

/// The prepare step for `plan` over `loaded` (a dry run when `dry_run`: nothing sent). A real
/// one under `--max-cost` first counts what it would send ([`refuse_over_cap`]) and refuses before
/// sending anything when that (with `after`'s stage, when the sweep sends something) passes the
/// cap.
fn prepare_for(
    plan: &Plan,
    loaded: &Loaded,
    rt: &tokio::runtime::Runtime,
    dry_run: bool,
    after: Option<AfterSweep<'_>>,
    events: Events<'_>,
) -> Result<Prepared, Error> {
    if !dry_run {
        refuse_over_cap(plan, loaded, rt, after)?;
    }
    prepare_with(plan, loaded, rt, dry_run, events)
}

/// The prepare step's inputs for `plan` over `loaded`, run.
fn prepare_with(
    plan: &Plan,
    loaded: &Loaded,
    rt: &tokio::runtime::Runtime,
    dry_run: bool,
    events: Events<'_>,
) -> Result<Prepared, Error> {
    // The judge may be asked for configurations outside the grid: prepare them too.
    let configs = plan.prepared_configs();
    let inputs = PrepareInputs {
        corpus: &loaded.corpus,
        tokens: &loaded.tokens,
        golden: &loaded.golden,
        spec: &plan.sweep,
        configs: &configs,
        embed: plan.embed.as_ref(),
        context: plan.context.as_ref(),
        rerank: plan.rerank.as_ref(),
        llm: &plan.llm,
        dry_run,
        chunkers: &plan.chunkers,
        chunk_files: &plan.chunk_files,
        retrievers: &plan.retrievers,
    };
    Ok(rt.block_on(prepare::prepare(&inputs, events))?)
}

/// Refuses, under `cap`, the sweep of `plan` that would send `would` ([`sweep_budget::refuse`], with
/// the models of `plan`'s `[embed]`, `[context]` and `[rerank]`).
///
/// # Errors
/// [`SpendCapError`].
pub(super) fn refuse_sweep(
    plan: &Plan,
    cap: SpendCap,
    would: &WouldSend,
) -> Result<(), SpendCapError> {
    let models = sweep_budget::Models {
        embed: plan.embed.as_ref().map_or_else(Vec::new, |e| {
            let mut m = vec![e.model.as_str()];
            m.extend(e.query_model.as_deref().filter(|q| *q != e.model));
            m
        }),
        context: plan.context.as_ref().map(|c| c.model.as_str()),
        rerank: plan.rerank.as_ref().map(|r| {
            let price = plan.llm.model(&r.model);
            let priced = price.usd_per_request.is_some() || price.input_usd_per_mtok.is_some();
            (r.model.as_str(), priced)
        }),
    };
    sweep_budget::refuse(cap, would, &models)
}

/// `--max-cost` over the sweep of `plan` (`None` without one, or for a grid that calls no model):
/// what the prepare step would send is counted from the caches and the grid, as `--dry-run`
/// counts it (nothing is sent, nothing is printed), and refused when it, plus the spend in the
/// run folder's calls.csv, passes the cap ([`sweep_budget::refuse`]).
///
/// # Errors
/// [`SpendCapError`] (in [`prepare::PrepareError`]); the counting's own errors.
fn refuse_over_cap(
    plan: &Plan,
    loaded: &Loaded,
    rt: &tokio::runtime::Runtime,
    after: Option<AfterSweep<'_>>,
) -> Result<(), Error> {
    let Some(max_usd) = plan.judge.max_cost_usd else {
        return Ok(());
    };
    if plan.embed.is_none() && plan.context.is_none() && plan.rerank.is_none() {
        return Ok(());
    }
    let cap = SpendCap {
        max_usd,
        spent_usd: crate::judge::judge_spend(&plan.run_dir)?,
    };
    let counted = prepare_with(plan, loaded, rt, true, &|_| {})?;
    let would = counted.would_send.unwrap_or_default();
    refuse_sweep(plan, cap, &would).map_err(prepare::PrepareError::from)?;
    match after {
        // a sweep the caches answer spends nothing: the later stage checks its own estimate
        Some(after) if !would.is_nothing() => after(loaded, &would),
        _ => Ok(()),
    }
}

/// Loads the inputs, prepares, and sweeps every configuration of `plan`, writing the sweep's
/// files (sweep.csv, sweep_questions.csv, the prepare step's call records, chunks) into the run
/// folder, which it creates (and locks) once the inputs have loaded, and returns.
pub(super) fn load_and_sweep(
    plan: &Plan,
    rt: &tokio::runtime::Runtime,
    after: Option<AfterSweep<'_>>,
    events: Events<'_>,
) -> Result<(Swept, RunDir), Error> {
    sweep_loaded(plan, load(plan, events)?, rt, after, events)
}

/// [`load_and_sweep`] on inputs already loaded ([`load`]): `check --judge` looks at them
/// before anything is written.
///
/// # Errors
/// As [`load_and_sweep`].
pub(super) fn sweep_loaded(
    plan: &Plan,
    loaded: Loaded,
    rt: &tokio::runtime::Runtime,
    after: Option<AfterSweep<'_>>,
    events: Events<'_>,
) -> Result<(Swept, RunDir), Error> {
    // The run folder is created (and locked) only once the inputs are known to be good, so bad
    // input leaves no empty folder behind.
    refuse_other_run(plan, &loaded)?;
    let dir = RunDir::create(&plan.run_dir)?;
    let prepared = prepare_for(plan, &loaded, rt, false, after, events)?;
    sweep_prepared(plan, loaded, prepared, dir, events)
}

/// `run --merged`: loads the inputs and prepares as [`load_and_sweep`] does (a dry run when
/// `plan.dry_run`), then reads every configuration's rows from the sweep that `chunksweep
/// merge` wrote into `plan.run_dir` instead of sweeping, after checking that its manifest
/// records this plan's corpus, golden set and grid. Each configuration's stage times are the
/// manifest's (from its shard); its chunks are not kept.
///
/// # Errors
/// [`MergeError::OtherSweep`] naming what differs, [`MergeError::MissingRow`];
/// [`crate::report::read::ReadError`] for a folder without a readable manifest or CSVs; as
/// [`load_and_sweep`] otherwise.
pub(super) fn load_merged(
    plan: &Plan,
    rt: &tokio::runtime::Runtime,
    events: Events<'_>,
) -> Result<(Swept, RunDir), Error> {
    let loaded = load(plan, events)?;
    let record = RunRecord::open(&plan.run_dir)?;
    let inputs = ManifestInputs::new(&loaded.corpus, &plan.golden, loaded.golden.questions.len())?;
    if let Some(what) = out_run::recorded_difference(&plan.run_dir, &record, &inputs, &plan.sweep) {
        return Err(MergeError::OtherSweep {
            dir: plan.run_dir.clone(),
            what,
        }
        .into());
    }
    let mut dir = RunDir::create(&plan.run_dir)?;
    let prepared = prepare_for(plan, &loaded, rt, plan.dry_run, None, events)?;
    let run = read::read_run(&plan.run_dir)?;
    let manifest: serde_json::Value = std::fs::read_to_string(plan.run_dir.join(files::MANIFEST))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let times: std::collections::BTreeMap<String, StageTimes> =
        serde_json::from_value(manifest["config_time_ms"].clone()).unwrap_or_default();
    let outcomes = outcomes_of(plan, run, &times)?;
    for name in [files::SWEEP, files::SWEEP_QUESTIONS, files::CHUNKERS] {
        if plan.run_dir.join(name).is_file() {
            dir.record(name);
        }
    }
    let Loaded {
        corpus,
        golden,
        tokens,
        mut phases,
    } = loaded;
    phases.analyze_ms = prepared.context.analysis.elapsed_ms();
    let context = Arc::new(prepared.context.clone());
    let swept = Swept {
        corpus,
        golden,
        tokens,
        context,
        outcomes,
        phases,
        prepared,
    };
    Ok((swept, dir))
}

/// Every configuration of `plan`'s grid with its rows at each cut, read from a run folder's
/// CSVs, and its stage times from `times`.
fn outcomes_of(
    plan: &Plan,
    run: read::RunData,
    times: &std::collections::BTreeMap<String, StageTimes>,
) -> Result<Vec<ConfigOutcome>, Error> {
    let mut rows: std::collections::HashMap<String, Vec<SweepRow>> = Default::default();
    for row in run.sweep {
        rows.entry(row.config_id.clone()).or_default().push(row);
    }
    let mut questions: std::collections::HashMap<String, Vec<QuestionRow>> = Default::default();
    for q in run.questions {
        questions.entry(q.config_id.clone()).or_default().push(q);
    }
    let cuts = plan.sweep.cuts();
    let mut outcomes = Vec::with_capacity(plan.configs.len());
    for config in &plan.configs {
        let mut read = Vec::with_capacity(cuts.len());
        for &cut in &cuts {
            let id = ConfigCut {
                config: config.clone(),
                cut,
            }
            .id();
            let row = match rows.remove(&id) {
                Some(mut r) if r.len() == 1 => r.remove(0),
                found => {
                    return Err(MergeError::MissingRow {
                        path: plan.run_dir.join(files::SWEEP),
                        config_id: id,
                        rows: found.map_or(0, |r| r.len()),
                    }
                    .into());
                }
            };
            read.push(CutOutcome {
                cut,
                row,
                questions: questions.remove(&id).unwrap_or_default(),
                metrics: Vec::new(),
            });
        }
        outcomes.push(ConfigOutcome {
            config: config.clone(),
            cuts: read,
            chunks: Vec::new(),
            elapsed_ms: 0,
            times: times.get(&config.id()).copied().unwrap_or_default(),
        });
    }
    Ok(outcomes)
}

/// `run --dry-run`'s sweep: the prepare step counts what it would send from the caches and the
/// grid ([`WouldSend`]), sending nothing. When the caches answer everything, the sweep runs on
/// them as [`load_and_sweep`]'s does (its `prepared.would_send` says so); otherwise nothing is
/// swept or written and what would be sent is returned ([`Unsent`]).
pub(super) fn dry_sweep(
    plan: &Plan,
    rt: &tokio::runtime::Runtime,
    events: Events<'_>,
) -> Result<Result<(Swept, RunDir), Unsent>, Error> {
    let loaded = load(plan, events)?;
    let prepared = prepare_for(plan, &loaded, rt, true, None, events)?;
    let would_send = prepared.would_send.clone().unwrap_or_default();
    if !would_send.is_nothing() {
        return Ok(Err(Unsent {
            corpus: loaded.corpus,
            golden: loaded.golden,
            would_send,
        }));
    }
    refuse_other_run(plan, &loaded)?;
    let dir = RunDir::create(&plan.run_dir)?;
    sweep_prepared(plan, loaded, prepared, dir, events).map(Ok)
}

/// Sweeps every configuration of `plan` with what the prepare step made, writing the sweep's
/// files into `dir`.
fn sweep_prepared(
    plan: &Plan,
    loaded: Loaded,
    prepared: Prepared,
    mut dir: RunDir,
    events: Events<'_>,
) -> Result<(Swept, RunDir), Error> {
    let Loaded {
        corpus,
        golden,
        tokens,
        mut phases,
    } = loaded;
    if let Some(e) = &prepared.embed {
        dir.write_csv(files::EMBED_CALLS, &e.records)?;
        dir.write_json(files::EMBEDDINGS, e)?;
    }
    if let Some(c) = &prepared.contexts {
        dir.write_csv(files::CONTEXT_CALLS, &c.records)?;
    }
    if let Some(r) = &prepared.rerank {
        dir.write_csv(files::RERANK_CALLS, &r.records)?;
        dir.write_json(files::RERANK, &r.summary)?;
    }
    if !prepared.context.external.is_empty() {
        dir.write_csv(files::CHUNKERS, &prepared.context.external.counts())?;
    }
    phases.analyze_ms = prepared.context.analysis.elapsed_ms();
    let context = Arc::new(prepared.context.clone());
    events(RunEvent::Started {
        step: Step::Sweep,
        total: plan.configs.len() as u64,
    });
    let t = Instant::now();
    let outcomes = run_sweep(
        &corpus,
        &tokens,
        &golden,
        Grid {
            configs: &plan.configs,
            cuts: &plan.sweep.cuts(),
        },
        &context,
        plan.dump_chunks,
        |o| {
            events(RunEvent::Advanced {
                step: Step::Sweep,
                label: o.config.id(),
                cost_usd: None,
                cached: false,
            })
        },
    )?;
    phases.configs_ms = ms_since(t);
    events(RunEvent::Finished {
        step: Step::Sweep,
        summary: format!(
            "{} configurations × {} questions, read at {} cut(s) from one ranking each",
            outcomes.len(),
            golden.questions.len(),
            plan.sweep.cuts().len()
        ),
    });
    let t = Instant::now();
    dir.write_sweep(&outcomes)?;
    if plan.dump_chunks {
        dir.write_chunks(&corpus, &outcomes)?;
    }
    phases.write_ms = ms_since(t);
    let swept = Swept {
        corpus,
        golden,
        tokens,
        context,
        outcomes,
        phases,
        prepared,
    };
    Ok((swept, dir))
}
