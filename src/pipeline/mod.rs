//! The pipeline, end to end, as the commands run it (the binary only parses flags into a
//! [`Plan`], calls one of these, and prints):
//!
//! - [`sweep`]: load → prepare → sweep → select → report;
//! - [`run`]: the same, then judge → report;
//! - [`report`]: select → report again from a run folder's CSVs;
//! - [`validate`]: load the inputs and list every problem of the golden set;
//! - [`judge_accuracy::judge_check`]: `judge-check`, the judge's accuracy on human-labelled items;
//! - [`check::check`]: one chunker against a baseline run, as a CI gate.
//!
//! This module owns the one async runtime (for the prepare and judge steps, which talk to
//! servers); the sweep itself runs on rayon. Stages pass plain values forward and report
//! progress through one [`Events`] stream.

mod batching;
pub mod check;
pub mod decide;
pub mod dry_run;
pub mod extract;
pub mod golden_set;
pub mod judge_accuracy;
mod judge_session;
pub mod judge_step;
pub mod merge;
mod out_run;
pub mod record;
pub mod shard;
pub mod swept;

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::config::{SelectionSection, merge};
use crate::corpus;
use crate::error::Error;
use crate::events::Events;
use crate::exit::ExitClass;
use crate::golden::{self, Problem};
use crate::judge::JudgeError;
use crate::judge::summary::JudgeSummary;
use crate::plan::{Plan, validate_selection};
use crate::report::outcome::Inputs;
use crate::report::read;
use crate::report::run_dir::RunDir;
use crate::report::texts::{self, Texts};
use crate::select::prefix::PrefixComparison;
use crate::select::{Cuts, SelectionSettings};
use crate::sweep::rows::{QuestionRow, SweepRow};
use decide::Decision;
use judge_step::JudgeOutcome;

/// What `sweep` did.
pub struct SweepOutput {
    /// The run folder.
    pub run_dir: PathBuf,
    /// sweep.csv's rows.
    pub rows: Vec<SweepRow>,
    /// Questions scored per configuration.
    pub n_questions: usize,
    /// The selection and the decision files.
    pub decision: Decision,
    /// Wall time, seconds.
    pub wall_s: f64,
}

/// What `run` did.
pub struct RunOutput {
    /// The sweep part (`None`: a dry run whose sweep would have had to send calls, so it did
    /// not run; see [`dry_run::DryRun::unswept`]).
    pub sweep: Option<SweepOutput>,
    /// The judge part.
    pub judge: JudgeOutcome,
}

impl RunOutput {
    /// Success, or incomplete (4) when the judge stage left questions for a rerun.
    pub fn exit_class(&self) -> Option<ExitClass> {
        match &self.judge {
            JudgeOutcome::Judged(j) if j.incomplete.is_some() => Some(ExitClass::Incomplete),
            _ => None,
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)
}

fn label(plan: &Plan) -> String {
    plan.out
        .as_ref()
        .unwrap_or(&plan.run_dir)
        .display()
        .to_string()
}

/// What a sweep measured and what the selection made of it.
struct Measured<'a> {
    /// sweep.csv's rows.
    rows: &'a [SweepRow],
    /// sweep_questions.csv's rows.
    questions: &'a [QuestionRow],
    /// The selection at each cut.
    cuts: Cuts,
    /// The prefix comparisons.
    prefixes: Vec<PrefixComparison>,
}

/// The decision files of a `sweep` or `run` (selection.csv, prefix_comparison.csv, report.md
/// with the judge's part, the figures, report.html), the run folder named as `plan` gives it.
fn write_decision(
    dir: &mut RunDir,
    plan: &Plan,
    command: &[String],
    swept: &swept::Swept,
    measured: Measured<'_>,
    judge: Option<&JudgeSummary>,
) -> Result<Decision, Error> {
    let Measured {
        rows,
        questions,
        cuts,
        prefixes,
    } = measured;
    let label = label(plan);
    decide::write(
        dir,
        cuts,
        prefixes,
        &plan.selection,
        Inputs {
            label: &label,
            command: Some(command),
            rows,
            questions,
            texts: Ok(Texts {
                corpus: &swept.corpus,
                golden: &swept.golden,
            }),
            chunkers: &swept.context.external.counts(),
            judge,
        },
    )
}

/// `chunksweep sweep`: load → prepare → sweep → select → report, into `plan.run_dir`.
/// `command` is the command line, recorded in the manifest and the report.
///
/// # Errors
/// [`Error`] from the first stage that fails (files already written stay).
pub fn sweep(plan: &Plan, command: &[String], events: Events<'_>) -> Result<SweepOutput, Error> {
    let started = Instant::now();
    let started_at = jiff::Timestamp::now();
    let rt = runtime()?;
    let (swept, mut dir) = swept::load_and_sweep(plan, &rt, None, events)?;
    let rows = swept.rows();
    let questions = swept.questions();
    let (cuts, prefixes) = decide::select(&rows, &questions, &plan.selection)?;
    let pick = cuts.primary().winner().config_id.clone();
    // A judge section is kept only when the folder's journal is of this sweep's candidates.
    let judged =
        judge_step::summary_from_folder(dir.path(), &rows, &plan.judge, false, Some(&pick))?;
    let decision = write_decision(
        &mut dir,
        plan,
        command,
        &swept,
        Measured {
            rows: &rows,
            questions: &questions,
            cuts,
            prefixes,
        },
        judged.as_ref(),
    )?;
    let wall_s = started.elapsed().as_secs_f64();
    let pick = swept.config_cut(&pick)?;
    record::write_manifest(
        &mut dir,
        plan,
        command,
        record::Timing { started_at, wall_s },
        swept.record(&pick),
        &pick,
        None,
    )?;
    Ok(SweepOutput {
        run_dir: plan.run_dir.clone(),
        n_questions: swept.golden.questions.len(),
        rows,
        decision,
        wall_s,
    })
}

/// `chunksweep sweep --shard I/N` (and `run --shard I/N`, which stops after its sweep step):
/// the configurations of `shard` swept into `<plan.run_dir>/shard-I-of-N`, with shard.json
/// written last ([`shard::sweep_shard`]).
///
/// # Errors
/// [`crate::sweep::shard::ShardError`] for more shards than
/// configurations or a grid whose prepare step calls a model; otherwise as [`sweep`].
pub fn sweep_shard(
    plan: &Plan,
    shard: crate::sweep::shard::Shard,
    command: &[String],
    events: Events<'_>,
) -> Result<shard::ShardOutput, Error> {
    shard::sweep_shard(plan, shard, command, &runtime()?, events)
}

/// `chunksweep run`: the sweep, then the judge stage on the candidates, then the report with the
/// judge's section. With `plan.dry_run` nothing is sent: the sweep's prepare step counts what it
/// would send from the caches; when the caches answer everything the sweep runs and the judge
/// stage's estimate is exact, otherwise nothing is swept or written and the judge stage is
/// estimated without its candidates ([`dry_run::estimate_unswept`]).
///
/// # Errors
/// [`Error`] from the first stage that fails; finished judge rows stay in the folder.
pub fn run(plan: &Plan, command: &[String], events: Events<'_>) -> Result<RunOutput, Error> {
    let started = Instant::now();
    let started_at = jiff::Timestamp::now();
    if !plan.dry_run {
        // an unusable client (no key for a remote server, zero limits): stop before anything is
        // written or sent
        plan.llm.validate().map_err(JudgeError::from)?;
        plan.llm.api_key().map_err(JudgeError::from)?;
    }
    let rt = runtime()?;
    let (swept, mut dir) = if plan.merged {
        swept::load_merged(plan, &rt, events)?
    } else if plan.dry_run {
        match swept::dry_sweep(plan, &rt, events)? {
            Ok(done) => done,
            Err(unsent) => {
                return Ok(RunOutput {
                    sweep: None,
                    judge: JudgeOutcome::DryRun(Box::new(dry_run::estimate_unswept(
                        plan, &unsent,
                    )?)),
                });
            }
        }
    } else {
        // one cap for the whole run: the sweep's estimate plus the judge stage's estimate at
        // the largest context, checked before the sweep sends anything
        let judge_bound = |loaded: &swept::Loaded, would: &crate::prepare::WouldSend| {
            dry_run::refuse_unswept(plan, &loaded.corpus, &loaded.golden, would)
        };
        swept::load_and_sweep(plan, &rt, Some(&judge_bound), events)?
    };
    let rows = swept.rows();
    let questions = swept.questions();
    let (cuts, prefixes) = decide::select(&rows, &questions, &plan.selection)?;
    let pick = cuts.primary().winner().config_id.clone();
    // The judge retrieves with the cut the pick was chosen at (each candidate's own).
    let candidates = judge_step::choose_candidates(plan, &swept, cuts.primary(), &prefixes)?;
    let judged = rt.block_on(judge_step::judge(
        plan,
        &swept,
        &candidates,
        Some(&pick),
        &mut dir,
        events,
    ))?;
    // The judge's summary as this run made it (judge_questions.csv is not read back); a dry
    // run shows the folder's earlier one, if any.
    let from_folder = match &judged {
        JudgeOutcome::Judged(_) => None,
        JudgeOutcome::DryRun(_) => {
            judge_step::summary_from_folder(dir.path(), &rows, &plan.judge, true, Some(&pick))?
        }
    };
    let judge = match &judged {
        JudgeOutcome::Judged(j) => Some(&j.summary),
        JudgeOutcome::DryRun(_) => from_folder.as_ref(),
    };
    let decision = write_decision(
        &mut dir,
        plan,
        command,
        &swept,
        Measured {
            rows: &rows,
            questions: &questions,
            cuts,
            prefixes,
        },
        judge,
    )?;
    let wall_s = started.elapsed().as_secs_f64();
    let pick = swept.config_cut(&pick)?;
    record::write_manifest(
        &mut dir,
        plan,
        command,
        record::Timing { started_at, wall_s },
        swept.record(&pick),
        &pick,
        judge_record(&judged),
    )?;
    // the report says the judge confirms nothing; the command fails (unless a rerun may help)
    if let JudgeOutcome::Judged(j) = &judged
        && !j.unjudged.is_empty()
        && j.incomplete.is_none()
    {
        return Err(JudgeError::NoValidVerdict {
            candidates: j.unjudged.join(", "),
        }
        .into());
    }
    Ok(RunOutput {
        sweep: Some(SweepOutput {
            run_dir: plan.run_dir.clone(),
            n_questions: swept.golden.questions.len(),
            rows,
            decision,
            wall_s,
        }),
        judge: judged,
    })
}

/// What the manifest records of a judge stage that ran (nothing for a dry run).
fn judge_record(judged: &JudgeOutcome) -> Option<record::JudgeRecord<'_>> {
    match judged {
        JudgeOutcome::Judged(j) => Some(record::JudgeRecord {
            candidates: &j.candidates,
            prompt_sha256: &j.prompt_sha256,
            server: &j.server,
        }),
        JudgeOutcome::DryRun(_) => None,
    }
}

/// What `report` did.
pub struct Reported {
    /// The selection and the decision files.
    pub decision: Decision,
    /// One line per setting the run's manifest lacks that was read as its default
    /// ([`record::RunRecord::warnings`]).
    pub warnings: Vec<String>,
}

/// `chunksweep report`: opens a run folder (sweep.csv, sweep_questions.csv, its record in
/// manifest.json, and the judge's journal when there is one) and rewrites its decision files
/// without recomputing the sweep. The selection settings are the run's recorded ones with
/// `flags` laid over them; `candidates`, when given, replaces the recorded number of judge
/// candidates. The folder is named as the run's recorded `--out` when there is one, so the
/// result does not depend on how `dir` was typed.
///
/// # Errors
/// [`Error::Read`] naming the file that is missing or malformed, or the settings missing from
/// the manifest; [`Error::Config`] for flags out of range; [`Error::Select`]; [`Error::Report`]
/// for a file that cannot be written.
pub fn report(
    dir: &Path,
    flags: &SelectionSection,
    candidates: Option<usize>,
) -> Result<Reported, Error> {
    let run = read::read_run(dir)?;
    let record = record::RunRecord::open(dir)?;
    let plan = &record.plan;
    let mut settings: SelectionSettings = merge("selection", &plan.selection, flags)?;
    settings.candidates = candidates.unwrap_or(settings.candidates);
    validate_selection(&settings)?;
    let label = plan.out.as_deref().unwrap_or(dir).display().to_string();
    let (cuts, prefixes) = decide::select(&run.sweep, &run.questions, &settings)?;
    let pick = cuts.primary().winner().config_id.clone();
    let judged = judge_step::summary_from_folder(dir, &run.sweep, &plan.judge, true, Some(&pick))?;
    let loaded = texts::load_texts(
        &plan.corpus,
        &plan.reading(),
        &plan.golden,
        plan.golden_format,
    );
    let mut out = RunDir::create(dir)?;
    let decision = decide::write(
        &mut out,
        cuts,
        prefixes,
        &settings,
        Inputs {
            label: &label,
            command: record.command.as_deref(),
            rows: &run.sweep,
            questions: &run.questions,
            texts: loaded
                .as_ref()
                .map(|(corpus, golden)| Texts { corpus, golden }),
            chunkers: &run.chunkers,
            judge: judged.as_ref(),
        },
    )?;
    out.update_manifest_outputs()?;
    Ok(Reported {
        decision,
        warnings: record.warnings,
    })
}

/// What `validate` found.
pub struct Validation {
    /// Every problem, errors and warnings, with file and line.
    pub problems: Vec<Problem>,
    /// Questions read.
    pub questions: usize,
    /// Evidence spans over all questions.
    pub spans: usize,
    /// Spans whose text occurs at several places.
    pub ambiguous: usize,
    /// Spans trimmed of whitespace at their edges ([`golden::GoldenSet::trimmed_spans`]).
    pub trimmed: usize,
    /// Documents in the corpus.
    pub documents: usize,
    /// One warning per group of byte-identical documents ([`Corpus::duplicate_warnings`]).
    ///
    /// [`Corpus::duplicate_warnings`]: crate::corpus::Corpus::duplicate_warnings
    pub duplicates: Vec<String>,
    /// The readers' warnings (pages without text...) and the files skipped for lack of a
    /// reader ([`crate::corpus::Corpus::reading_warnings`]).
    pub reading: Vec<String>,
    /// Drafted questions no person has accepted yet (`"source": "draft"`, `"reviewed"` not
    /// true): (line, id), in file order.
    pub unreviewed: Vec<(usize, String)>,
}

/// `chunksweep validate`: reads the corpus and the golden set of `plan` and lists every problem.
///
/// # Errors
/// [`Error::Corpus`] or [`Error::Golden`] when a file cannot be read at all.
pub fn validate(plan: &Plan) -> Result<Validation, Error> {
    let corpus = corpus::load_corpus(&plan.corpus, &plan.reading())?;
    let (set, problems) = golden::load_with_problems(&plan.golden, plan.golden_format, &corpus)?;
    Ok(Validation {
        problems,
        questions: set.questions.len(),
        spans: set.questions.iter().map(|q| q.spans.len()).sum(),
        ambiguous: set
            .questions
            .iter()
            .flat_map(|q| &q.spans)
            .filter(|s| s.locations.len() > 1)
            .count(),
        trimmed: set.trimmed_spans,
        documents: corpus.docs.len(),
        duplicates: corpus.duplicate_warnings(),
        reading: corpus.reading_warnings(),
        unreviewed: set
            .questions
            .iter()
            .filter(|q| q.origin.is_unreviewed_draft())
            .map(|q| (q.line, q.id.clone()))
            .collect(),
    })
}
