//! `run --dry-run`: what it prints, sending nothing. The sweep's part is counted by the prepare
//! step from the caches and the grid ([`WouldSend`]); the judge stage's estimate is exact when
//! the caches let the sweep run (`judge_step::judge`), and without its candidates otherwise
//! ([`estimate_unswept`]). A dry run reports what `--max-cost` would refuse
//! ([`super::judge_session::refuse_run`]); a real run enforces it.

use super::judge_session::refuse_run;
use super::swept::{Unsent, refuse_sweep};
use crate::budget::CostEstimate;
use crate::chunking::chunk::size_unit;
use crate::corpus::Corpus;
use crate::error::Error;
use crate::golden::GoldenSet;
use crate::judge::controls::{placeholders, plan_probes, sources};
use crate::judge::probes::estimate_probes;
use crate::judge::prompts::fence_context;
use crate::judge::{self, Job, JudgeError, PromptSet};
use crate::llm::config::redact_url;
use crate::plan::Plan;
use crate::prepare::PrepareError;
use crate::prepare::WouldSend;
use crate::prepare::spend_cap::{SpendCap, SpendCapError};
use crate::prepare::sweep_budget;

/// What `--dry-run` found: the work left and its estimate; nothing was sent.
#[derive(Debug, Clone)]
pub struct DryRun {
    /// The candidates' ids.
    pub candidates: Vec<String>,
    /// Questions judged per candidate.
    pub questions: usize,
    /// Candidate × question pairs already in the run folder.
    pub done: usize,
    /// Pairs left to run.
    pub todo: usize,
    /// Calls, tokens and cost of what is left, controls and repeats included.
    pub estimate: CostEstimate,
    /// Planted control calls in the estimate (over every judged answer, finished ones too:
    /// those are cache hits).
    pub control_calls: usize,
    /// Repeat calls in the estimate.
    pub repeat_calls: usize,
    /// The generator model.
    pub generator_model: String,
    /// The judge model.
    pub judge_model: String,
    /// The server the calls would go to, credentials redacted.
    pub server: String,
    /// What the sweep's prepare step sends for the grid, or would send (embeddings, contexts),
    /// counted from the caches: in a dry run nothing is sent.
    pub sweep: Option<WouldSend>,
    /// When the sweep could not run without sending, so the candidates are not known: how the
    /// estimate stands in for them (its calls exact, its tokens an estimate at the largest
    /// context).
    pub unswept: Option<String>,
    /// With `--batch`: that the estimate is at the batch price and the completion window the
    /// results may take.
    pub batch: Option<String>,
    /// With `--max-cost`: why the real run would be refused before sending anything (the
    /// estimate, plus any spend already in the folder, passes the budget, or has no price).
    pub refused: Option<String>,
}

/// Why `--max-cost` refuses the run whose sweep would send `would` before its candidates are
/// known, whose judge stage is bounded at `judge` (`bound` says how): the sweep's refusal (the
/// spend in the folder's calls.csv counted), else the sweep's estimate plus the judge stage's
/// bound ([`SpendCapError::RunOver`]), or the judge's model without a price. `None` without a
/// cap or when the cap holds both.
///
/// # Errors
/// [`JudgeError`] when calls.csv cannot be read.
fn refusal(
    plan: &Plan,
    would: &WouldSend,
    judge: &CostEstimate,
    bound: &str,
) -> Result<Option<Error>, Error> {
    let Some(max_usd) = plan.judge.max_cost_usd else {
        return Ok(None);
    };
    let cap = SpendCap {
        max_usd,
        spent_usd: crate::judge::judge_spend(&plan.run_dir)?,
    };
    if let Err(e) = refuse_sweep(plan, cap, would) {
        return Ok(Some(PrepareError::from(e).into()));
    }
    let sweep = sweep_budget::estimate(would).0.cost_usd.unwrap_or(0.0);
    Ok(
        match refuse_run(&plan.judge, judge, cap.spent_usd + sweep, sweep) {
            Ok(()) => None,
            Err(JudgeError::OverBudget { estimate, max, .. }) => Some(
                PrepareError::from(SpendCapError::RunOver {
                    sweep,
                    what: sweep_budget::counted_calls(would),
                    judge: estimate,
                    bound: bound.to_string(),
                    spent: cap.spent_usd,
                    max,
                })
                .into(),
            ),
            Err(e) => Some(e.into()),
        },
    )
}

/// `run` under `--max-cost` whose sweep would send `would` (its candidates not known yet):
/// refused before the sweep sends anything when the sweep's estimate plus the judge stage's
/// estimate at the largest context ([`judge_bound`]) pass the cap.
///
/// # Errors
/// [`SpendCapError`] (in [`PrepareError`]) or [`JudgeError`]; the estimate's own errors.
pub fn refuse_unswept(
    plan: &Plan,
    corpus: &Corpus,
    golden: &GoldenSet,
    would: &WouldSend,
) -> Result<(), Error> {
    if plan.judge.max_cost_usd.is_none() {
        return Ok(());
    }
    let (dry, bound) = judge_bound(plan, corpus, golden)?;
    match refusal(plan, would, &dry.estimate, &bound)? {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The largest retrieval of a candidate of `plan` for one question, in the grid's size unit: the
/// first context budget when there is one (it decides), else k chunks of the grid's largest
/// size, each with the largest prefix a model may write (`[context] max_tokens`) when the grid
/// has `llm_context`.
fn largest_context(plan: &Plan) -> usize {
    if let Some(&budget) = plan.sweep.budgets.first() {
        return budget;
    }
    let size = plan
        .prepared_configs()
        .iter()
        .map(|c| c.params.chunk_size)
        .max()
        .unwrap_or(0);
    let prefix = plan.context.as_ref().map_or(0, |c| c.max_tokens as usize);
    plan.sweep.top_k * (size + prefix)
}

/// `run --dry-run`'s estimate when the sweep could not run without sending
/// ([`super::swept::Unsent`]), with what `--max-cost` would refuse ([`judge_bound`] and the
/// sweep's estimate, [`refusal`]).
///
/// # Errors
/// [`JudgeError::Prompt`] for the templates; [`JudgeError`] when calls.csv cannot be read.
pub fn estimate_unswept(plan: &Plan, unsent: &Unsent) -> Result<DryRun, Error> {
    let (mut dry, bound) = judge_bound(plan, &unsent.corpus, &unsent.golden)?;
    dry.refused = refusal(plan, &unsent.would_send, &dry.estimate, &bound)?.map(|e| e.to_string());
    dry.sweep = Some(unsent.would_send.clone());
    Ok(dry)
}

/// The judge stage's estimate before the sweep has chosen its candidates: as many stand in for
/// them as the run would judge (`--candidates`, two with `--compare-prefix`, else `[judge]
/// candidates`, at most the grid's configurations), each retrieving for every judged question a
/// context of the largest retrieval ([`largest_context`]) in one document fence. The calls are
/// exact; the tokens and cost an estimate, not a bound: a context of many small chunks adds a
/// fence per chunk, and an expansion sends units larger than the chunks. Also returns how the
/// candidates are stood in for, in words, for a refusal.
///
/// # Errors
/// [`JudgeError::Prompt`] for the templates.
fn judge_bound(
    plan: &Plan,
    corpus: &Corpus,
    golden: &GoldenSet,
) -> Result<(DryRun, String), Error> {
    let settings = &plan.judge;
    let prompts = PromptSet::load_or_defaults(settings.prompts_dir.as_deref(), &settings.criteria)
        .map_err(JudgeError::from)?;
    let judged = judge::judged_questions(golden, settings.max_questions);
    let n = match (&plan.candidates, plan.compare_prefix) {
        (Some(list), _) => list.len(),
        (None, Some(_)) => 2,
        (None, None) => settings.candidates.min(plan.configs.len()).max(1),
    };
    let tokens = largest_context(plan);
    // budgets count in the tokenizer's unit (words with the `words` tokenizer)
    let unit = size_unit("", plan.sweep.tokenizer.name());
    let context = fence_context([("…", "x ".repeat(tokens).trim_end())]);
    let ids: Vec<String> = (1..=n).map(|i| format!("candidate {i}")).collect();
    let jobs: Vec<Job> = ids
        .iter()
        .enumerate()
        .flat_map(|(ci, id)| {
            judged.questions.iter().enumerate().map({
                let context = &context;
                move |(qi, q)| Job {
                    config_index: ci,
                    config_id: id.clone(),
                    question_index: qi,
                    question_id: q.id.clone(),
                    question_type: q.question_type.clone().unwrap_or_default(),
                    question: q.text.clone(),
                    reference: q.answer.clone().filter(|a| !a.trim().is_empty()),
                    chunk_ids: Vec::new(),
                    context: context.clone(),
                    retrieve_ms: 0.0,
                }
            })
        })
        .collect();
    let mut estimate = judge::estimate(&jobs, &prompts, settings, &plan.llm);
    let probes = plan_probes(
        settings,
        &sources(&jobs, &judged, corpus, &placeholders(settings)),
    );
    let control_calls = probes.iter().filter(|i| i.kind != "repeat").count();
    estimate.add(&estimate_probes(&probes, &prompts, settings, &plan.llm));
    let bound = format!(
        "estimated at the largest context: the sweep chooses the candidates, so {n} stand in for them, each retrieving {tokens} {unit} per question in one document fence; a context of many small chunks, each in its own fence, or of expanded units can take more"
    );
    let dry = DryRun {
        questions: judged.questions.len(),
        done: 0,
        todo: jobs.len(),
        estimate,
        control_calls,
        repeat_calls: probes.len() - control_calls,
        generator_model: settings.generator_model.clone(),
        judge_model: settings.judge_model.clone(),
        server: redact_url(&plan.llm.resolved_base_url()),
        sweep: None,
        batch: plan.llm.batch.estimate_note(),
        refused: None,
        unswept: Some(format!(
            "the candidates are chosen by the sweep, which needs the calls above: {n} stand in for them, each retrieving {tokens} {unit} per question in one document fence, so the calls are exact and the tokens and cost an estimate (a context of many small chunks, each in its own fence, or of expanded units can take more)"
        )),
        candidates: ids,
    };
    Ok((dry, bound))
}
