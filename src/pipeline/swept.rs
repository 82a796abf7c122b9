//! The sweep part of `sweep` and `run`: load the inputs, prepare (embeddings, contexts), score
//! every configuration, and write the sweep's files. What it made stays in [`Swept`] for the
//! selection and the judge step.

use std::sync::Arc;
use std::time::Instant;

use crate::corpus::{self, Corpus};
use crate::error::Error;
use crate::events::{Events, RunEvent, Step};
use crate::files;
use crate::golden::{self, GoldenSet};
use crate::plan::Plan;
use crate::prepare::{self, PrepareInputs, Prepared};
use crate::report::manifest::PhaseTimes;
use crate::report::run_dir::RunDir;
use crate::sweep::SweepError;
use crate::sweep::driver::run_sweep;
use crate::sweep::grid::ConfigCut;
use crate::sweep::index::RetrievalContext;
use crate::sweep::rows::{ConfigOutcome, QuestionRow, SweepRow};
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

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Loads the inputs, prepares, and sweeps every configuration of `plan`, writing the sweep's
/// files (sweep.csv, sweep_questions.csv, the prepare step's call records, chunks) into the run
/// folder, which it creates (and locks) once the inputs have loaded, and returns.
pub(super) fn load_and_sweep(
    plan: &Plan,
    rt: &tokio::runtime::Runtime,
    events: Events<'_>,
) -> Result<(Swept, RunDir), Error> {
    RunDir::check_out(&plan.run_dir)?;
    let mut phases = PhaseTimes::default();
    let t = Instant::now();
    let corpus = corpus::load_corpus(&plan.corpus)?;
    let golden = golden::load(&plan.golden, plan.golden_format, &corpus)?;
    phases.load_ms = ms_since(t);
    for warning in corpus.duplicate_warnings() {
        events(RunEvent::Warning(warning));
    }
    // The run folder is created (and locked) only once the inputs are known to be good, so bad
    // input leaves no empty folder behind.
    let mut dir = RunDir::create(&plan.run_dir)?;
    let t = Instant::now();
    let tokens = CorpusTokens::new(&corpus, plan.sweep.tokenizer);
    phases.tokenize_ms = ms_since(t);
    // The judge may be asked for configurations outside the grid: prepare them too.
    let configs = plan.prepared_configs();
    let inputs = PrepareInputs {
        corpus: &corpus,
        tokens: &tokens,
        golden: &golden,
        spec: &plan.sweep,
        configs: &configs,
        embed: plan.embed.as_ref(),
        context: plan.context.as_ref(),
        llm: &plan.llm,
    };
    let prepared = rt.block_on(prepare::prepare(&inputs, events))?;
    if let Some(e) = &prepared.embed {
        dir.write_csv(files::EMBED_CALLS, &e.records)?;
        dir.write_json(files::EMBEDDINGS, e)?;
    }
    if let Some(c) = &prepared.contexts {
        dir.write_csv(files::CONTEXT_CALLS, &c.records)?;
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
        (&plan.configs, &plan.sweep.cuts()),
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
