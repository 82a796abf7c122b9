//! The judge step of `run`: which candidates (the selection's, `--candidates`, or the pick with
//! and without a prefix), the estimate (`--dry-run`, `--max-cost`), the resumable judge run
//! through the LLM client, and the judge's summary (also rebuilt from a run folder by
//! `chunksweep report`).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;

pub use super::dry_run::DryRun;
use super::judge_session::{self, Budget, Session, refuse_run_in};
use super::swept::Swept;
use crate::budget::CostEstimate;
use crate::chunking::enrich::Prefix;
use crate::config::ComparePrefix;
use crate::error::Error;
use crate::events::{Events, RunEvent, Step};
use crate::files;
use crate::golden::GoldenSet;
use crate::judge::controls::{placeholders, plan_probes, sources};
use crate::judge::gates::{LeftToJudge, unfinished_note};
use crate::judge::probes::{ProbeRow, estimate_probes, load_probes, run_probes};
use crate::judge::table::CandidateInfo;
use crate::judge::{
    self, Fingerprint, Finished, Job, JudgeError, JudgeQuestionRow, JudgeRun, JudgeSettings,
    JudgeSummary, PromptSet, Setup, SummaryInputs, Verdict,
};
use crate::llm::LlmClient;
use crate::llm::config::redact_url;
use crate::plan::Plan;
use crate::report::run_dir::RunDir;
use crate::select::Selection;
use crate::select::prefix::{PrefixComparison, best_prefix};
use crate::sweep::grid::{ConfigCut, ConfigSpec};
use crate::sweep::rows::SweepRow;
use crate::sweep::score::run_config;

/// What the judge stage did.
#[derive(Debug, Clone)]
pub struct Judged {
    /// The rows and counts of the run.
    pub run: JudgeRun,
    /// Everything the judge found, as one value (judge.csv is written from it; the reports render
    /// it: [`crate::report::judge_section`]).
    pub summary: JudgeSummary,
    /// Why the run is incomplete, when it is (rerun the same command).
    pub incomplete: Option<String>,
    /// The candidates' ids, in order.
    pub candidates: Vec<String>,
    /// SHA-256 of each prompt template used, by file name.
    pub prompt_sha256: BTreeMap<String, String>,
    /// Candidates without a single valid verdict: when there is one, the judge confirms
    /// nothing.
    pub unjudged: Vec<String>,
    /// The server the calls went to, credentials redacted.
    pub server: String,
}

/// The judge step's result.
#[derive(Debug, Clone)]
pub enum JudgeOutcome {
    /// `--dry-run`: the estimate only.
    DryRun(Box<DryRun>),
    /// The candidates were judged (perhaps not completely).
    Judged(Box<Judged>),
}

/// The configurations to judge, each at its cut: `--candidates`, else the pick with and without
/// a prefix (`--compare-prefix`), else the selection's candidates. The selection's
/// configurations are found in `swept` by id.
///
/// # Errors
/// [`JudgeError::NoPrefixToCompare`] when `--compare-prefix` finds no prefix to compare;
/// [`crate::sweep::SweepError::UnknownConfig`] for a selected id the sweep does not have.
pub fn choose_candidates(
    plan: &Plan,
    swept: &Swept,
    selection: &Selection,
    prefixes: &[PrefixComparison],
) -> Result<Vec<ConfigCut>, Error> {
    if let Some(list) = &plan.candidates {
        return Ok(list.clone());
    }
    let Some(choice) = plan.compare_prefix else {
        return Ok(selection
            .candidates
            .iter()
            .map(|&i| swept.config_cut(&selection.configs[i].config_id))
            .collect::<Result<_, _>>()?);
    };
    let pick = swept.config_cut(&selection.winner().config_id)?;
    let prefix = match choice {
        ComparePrefix::Prefix(p) => p,
        ComparePrefix::Best => {
            let best = best_prefix(
                prefixes,
                pick.config.retriever.name(),
                pick.config.params.strategy.name(),
                pick.config.params.chunk_size,
            )
            .ok_or_else(|| JudgeError::NoPrefixToCompare {
                strategy: pick.config.params.strategy.to_string(),
                size: pick.config.params.chunk_size,
            })?;
            swept.config_cut(&best.config_id)?.config.prefix
        }
    };
    Ok([Prefix::None, prefix]
        .map(|prefix| ConfigCut {
            config: ConfigSpec {
                prefix,
                ..pick.config.clone()
            },
            cut: pick.cut,
        })
        .to_vec())
}

/// What the judge stage will do, planned before anything is sent.
struct Planned {
    prompts: PromptSet,
    judged: GoldenSet,
    jobs: Vec<Job>,
    /// The rows already in the folder (judge_questions.csv, read once).
    done: Finished,
    /// Jobs without a row yet.
    todo: usize,
    /// Calls, tokens and cost of what is left, controls and repeats included.
    estimate: CostEstimate,
    control_calls: usize,
    repeat_calls: usize,
}

/// Loads the templates, retrieves for every candidate × question, reads the folder's finished
/// rows and estimates what is left, controls and repeats included.
fn plan(
    plan: &Plan,
    swept: &Swept,
    candidates: &[ConfigCut],
    dir: &RunDir,
) -> Result<Planned, Error> {
    let settings = &plan.judge;
    let prompts = PromptSet::load_or_defaults(settings.prompts_dir.as_deref(), &settings.criteria)
        .map_err(JudgeError::from)?;
    let judged = judge::judged_questions(&swept.golden, settings.max_questions);
    let jobs = judge::plan_jobs(
        &swept.corpus,
        &judged,
        candidates,
        &swept.tokens,
        &swept.context,
    )?;
    let done = judge::load_finished(dir.path())?;
    let todo: Vec<Job> = judge::pending(&jobs, &done)
        .into_iter()
        .map(|i| jobs[i].clone())
        .collect();
    let mut estimate = judge::estimate(&todo, &prompts, settings, &plan.llm);
    let probes = plan_probes(
        settings,
        &sources(&jobs, &judged, &swept.corpus, &placeholders(settings)),
    );
    let control_calls = probes.iter().filter(|i| i.kind != "repeat").count();
    estimate.add(&estimate_probes(&probes, &prompts, settings, &plan.llm));
    Ok(Planned {
        todo: todo.len(),
        repeat_calls: probes.len() - control_calls,
        control_calls,
        prompts,
        judged,
        jobs,
        done,
        estimate,
    })
}

/// Estimates (`--dry-run`) or runs the judge stage for `candidates` in `dir`, resuming from the
/// rows already there.
///
/// Before the first call, the server, the models and the estimate are announced
/// ([`RunEvent::Note`]); a remote server without an API key stops everything at once.
///
/// # Errors
/// [`JudgeError`] for prompts, settings that changed, a budget that the spend already recorded in
/// the folder plus the estimate passes or that has no prices, run files, a client that cannot be
/// built (no key for a remote server: usage); [`JudgeError::Stopped`] when the server refuses the
/// key or the model; [`JudgeError::NothingJudged`] when every question failed;
/// [`JudgeError::NoValidVerdict`] when a candidate got no valid verdict (the judge section is
/// written first).
pub async fn judge(
    plan: &Plan,
    swept: &Swept,
    candidates: &[ConfigCut],
    pick: Option<&str>,
    dir: &mut RunDir,
    events: Events<'_>,
) -> Result<JudgeOutcome, Error> {
    let settings = &plan.judge;
    for name in unused_models(plan) {
        events(RunEvent::Warning(format!(
            "[llm.models.{name}] is used by no stage of this run (a typo?); its limits and prices apply to nothing"
        )));
    }
    let infos = candidate_infos(swept, candidates)?;
    let planned = self::plan(plan, swept, candidates, dir)?;
    let server = redact_url(&plan.llm.resolved_base_url());
    let batch = plan.llm.batch.estimate_note();
    let ids: Vec<String> = candidates.iter().map(ConfigCut::id).collect();
    if plan.dry_run {
        return Ok(JudgeOutcome::DryRun(Box::new(DryRun {
            candidates: ids,
            questions: planned.judged.questions.len(),
            done: planned.jobs.len() - planned.todo,
            todo: planned.todo,
            estimate: planned.estimate,
            control_calls: planned.control_calls,
            repeat_calls: planned.repeat_calls,
            generator_model: settings.generator_model.clone(),
            judge_model: settings.judge_model.clone(),
            server,
            sweep: swept.prepared.would_send.clone(),
            unswept: None,
            batch,
            refused: refuse_run_in(settings, &planned.estimate, dir.path())
                .err()
                .map(|e| e.to_string()),
        })));
    }
    let session = Session {
        llm: &plan.llm,
        settings,
        estimate: &planned.estimate,
        budget: Budget::WithRecordedSpend,
        fingerprint: Some(&Fingerprint::new(settings, &planned.prompts)),
        generates: true,
        what: format!(
            "judging {} candidate(s) on {} question(s), {} of {} already done",
            candidates.len(),
            planned.judged.questions.len(),
            planned.jobs.len() - planned.todo,
            planned.jobs.len(),
        ),
    };
    let client = judge_session::open(session, dir, events).await?;
    let prompt_sha256 = planned.prompts.hashes();
    let planned_jobs = planned.jobs.len();
    let judged = run(planned, swept, settings, &client, dir, events).await?;
    let (run, probes) = judged;
    let incomplete = unfinished_note(LeftToJudge {
        missing: run.unfinished.len() + run.skipped_for_budget,
        planned: planned_jobs,
        not_started_for_budget: run.skipped_for_budget,
        probes_missing: probes.iter().filter(|r| is_unfinished(r)).count(),
        probes_asked: probes.len(),
    });
    let summary = JudgeSummary::build(SummaryInputs {
        candidates: &infos,
        criteria: &run.criteria,
        questions: run.rows.clone(),
        probes,
        settings,
        pick,
        incomplete: incomplete.clone(),
    });
    let path = dir.path().join(files::JUDGE);
    summary.write_csv(&path)?;
    dir.record(files::JUDGE);
    events(RunEvent::Finished {
        step: Step::Judge,
        summary: format!(
            "{} judged question(s) ({} resumed), ${:.4} spent",
            run.rows.len(),
            run.resumed,
            run.spent_usd
        ),
    });
    Ok(JudgeOutcome::Judged(Box::new(Judged {
        unjudged: summary.decision.unjudged.clone(),
        summary,
        run,
        incomplete,
        candidates: ids,
        prompt_sha256,
        server: client.base_url().to_string(),
    })))
}

/// Runs the planned jobs, then the controls and repeats over their answers (only when the
/// budget let every question run), writing judge_checks.csv.
///
/// # Errors
/// As [`judge`].
async fn run(
    planned: Planned,
    swept: &Swept,
    settings: &JudgeSettings,
    client: &LlmClient,
    dir: &mut RunDir,
    events: Events<'_>,
) -> Result<(JudgeRun, Vec<ProbeRow>), Error> {
    let prompts = Arc::new(planned.prompts);
    let settings_arc = Arc::new(settings.clone());
    let setup = Setup {
        settings: Arc::clone(&settings_arc),
        prompts: Arc::clone(&prompts),
        client,
        done: planned.done,
    };
    let run = judge::run_judge(dir.path(), &planned.jobs, setup, events).await?;
    dir.record(files::JUDGE_QUESTIONS);
    dir.record(files::CALLS);
    if run.rows.is_empty()
        && let Some((config_id, question_id, error)) = run.unfinished.first()
    {
        return Err(JudgeError::NothingJudged {
            config_id: config_id.clone(),
            question_id: question_id.clone(),
            error: error.clone(),
            server: client.base_url().to_string(),
        }
        .into());
    }
    let answered: BTreeMap<(&str, &str), &JudgeQuestionRow> = run
        .rows
        .iter()
        .map(|r| ((r.config_id.as_str(), r.question_id.as_str()), r))
        .collect();
    let items = if run.skipped_for_budget > 0 {
        Vec::new()
    } else {
        let answer = |j: &Job| {
            let r = answered.get(&(j.config_id.as_str(), j.question_id.as_str()))?;
            let verdicts = r
                .verdicts
                .iter()
                .map(|(c, v)| (c.to_string(), v.verdict))
                .collect();
            r.generate_error
                .is_empty()
                .then(|| (r.answer.clone(), verdicts))
        };
        plan_probes(
            settings,
            &sources(&planned.jobs, &planned.judged, &swept.corpus, &answer),
        )
    };
    let mut probes = run_probes(
        &items,
        prompts,
        settings_arc,
        client,
        Some(dir.path()),
        None,
        events,
    )
    .await?;
    for row in &mut probes {
        if row.verdict == Verdict::Error.as_str() && row.calls == 0 {
            row.verdict = UNFINISHED.into();
        }
    }
    dir.write_csv(files::JUDGE_CHECKS, &probes)?;
    Ok((run, probes))
}

/// The `verdict` of a judge_checks.csv row whose call got no answer (timeouts, retries
/// exhausted): left for the next run, in no figure, never stored as a verdict.
const UNFINISHED: &str = "unfinished";

/// Whether a judge_checks.csv row is unfinished ([`UNFINISHED`]). Such a row is recognised when
/// it is written: an `error` row without a single call recorded is one whose call failed without
/// an answer ([`run_probes`] records every call of a verdict the server answered, one at least).
fn is_unfinished(row: &ProbeRow) -> bool {
    row.verdict == UNFINISHED
}

/// The `[llm.models.NAME]` sections that name no model this run calls (generator, judge,
/// embedding models, the context model).
fn unused_models(plan: &Plan) -> Vec<String> {
    let mut used = vec![
        plan.judge.generator_model.as_str(),
        plan.judge.judge_model.as_str(),
    ];
    if let Some(e) = &plan.embed {
        used.push(&e.model);
        used.extend(e.query_model.as_deref());
    }
    if let Some(c) = &plan.context {
        used.push(&c.model);
    }
    plan.llm
        .unused_models(&used)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// Each candidate's sweep figures: from the sweep when it was in the grid, else scored now with
/// the same prepared context.
fn candidate_infos(swept: &Swept, candidates: &[ConfigCut]) -> Result<Vec<CandidateInfo>, Error> {
    candidates
        .iter()
        .map(|c| {
            let id = c.id();
            let row = match swept
                .outcomes
                .iter()
                .flat_map(|o| o.rows())
                .find(|r| r.config_id == id)
            {
                Some(row) => row.clone(),
                None => {
                    run_config(
                        &swept.corpus,
                        &swept.tokens,
                        &swept.golden,
                        &c.config,
                        &[c.cut],
                        &swept.context,
                        false,
                    )?
                    .cuts
                    .swap_remove(0)
                    .row
                }
            };
            Ok(info(&row))
        })
        .collect()
}

fn info(row: &SweepRow) -> CandidateInfo {
    CandidateInfo {
        config_id: row.config_id.clone(),
        chunk_size: row.chunk_size,
        tokens_per_query: row.tokens_per_query,
        span_recall: row.span_recall,
    }
}

/// The judge's summary rebuilt from a run folder: the rows of judge_questions.csv (its criteria
/// from its columns, candidates in the order they appear there), the controls and repeats of
/// judge_checks.csv, the models of judge_settings.json, the significance level and trust
/// thresholds of `settings` and each candidate's figures in `sweep`; `pick` is the selection's
/// pick. The run is unfinished when judge_checks.csv holds unfinished rows and, when
/// `settings` are the judge run's own (`own_settings`: `report` reads them from the manifest,
/// `run --dry-run` is given them; not `sweep`), when a candidate lacks some of the questions
/// its `max_questions` asks. `None` when the folder holds no judged answer.
///
/// # Errors
/// [`JudgeError`] when the journal or the settings file cannot be read.
pub fn summary_from_folder(
    dir: &Path,
    sweep: &[SweepRow],
    settings: &JudgeSettings,
    own_settings: bool,
    pick: Option<&str>,
) -> Result<Option<JudgeSummary>, Error> {
    let Finished { criteria, rows } = judge::load_finished(dir)?;
    if rows.is_empty() {
        return Ok(None);
    }
    let probes = load_probes(dir)?;
    let Some(fingerprint) = Fingerprint::load(dir)? else {
        return Ok(None);
    };
    let mut seen = HashSet::new();
    let infos: Vec<CandidateInfo> = rows
        .iter()
        .filter(|r| seen.insert(r.config_id.clone()))
        .filter_map(|r| sweep.iter().find(|s| s.config_id == r.config_id))
        .map(info)
        .collect();
    if infos.is_empty() {
        return Ok(None);
    }
    let settings = JudgeSettings {
        generator_model: fingerprint.generator_model,
        judge_model: fingerprint.judge_model,
        ..settings.clone()
    };
    let asked = own_settings.then_some((sweep, settings.max_questions));
    let incomplete = folder_unfinished(&rows, &infos, asked, &probes);
    Ok(Some(JudgeSummary::build(SummaryInputs {
        candidates: &infos,
        criteria: &criteria,
        questions: rows,
        probes,
        settings: &settings,
        pick,
        incomplete,
    })))
}

/// What a run folder's judge stage is missing: the unfinished planted controls and repeats of
/// judge_checks.csv, and, given sweep.csv's rows and the run's `max_questions` (`asked`), for
/// each candidate with a row the judged questions (the golden set's, up to `max_questions`, as
/// sweep.csv counts them) without one ([`unfinished_note`]; a candidate without a single row is
/// not seen).
fn folder_unfinished(
    rows: &[JudgeQuestionRow],
    infos: &[CandidateInfo],
    asked: Option<(&[SweepRow], Option<usize>)>,
    probes: &[ProbeRow],
) -> Option<String> {
    let (mut missing, mut planned) = (0, 0);
    for info in infos {
        let have = rows
            .iter()
            .filter(|r| r.config_id == info.config_id)
            .count();
        let wanted = match asked {
            Some((sweep, max_questions)) => {
                let n = sweep
                    .iter()
                    .find(|s| s.config_id == info.config_id)
                    .map_or(0, |s| s.n_questions);
                max_questions.map_or(n, |m| m.min(n))
            }
            None => have,
        };
        missing += wanted.saturating_sub(have);
        planned += wanted.max(have);
    }
    let unfinished_checks = probes.iter().filter(|r| is_unfinished(r)).count();
    unfinished_note(LeftToJudge {
        missing,
        planned,
        not_started_for_budget: 0,
        probes_missing: unfinished_checks,
        probes_asked: probes.len(),
    })
}
