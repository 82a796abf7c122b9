//! The judge pipeline: for every candidate × question, retrieve (the sweep's frozen BM25), generate
//! an answer, grade it, and append the finished row to judge_questions.csv at once (flushed), so a
//! killed run loses nothing that finished. A rerun with the same run folder skips finished rows
//! and, through the client's response cache, resends no finished call.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use tokio::task::JoinSet;

use super::asking::{Ask, VerdictInputs, generate_request};
use super::criteria::{self, Criterion};
use super::error::JudgeError;
use super::journal::{Appender, CallLog, Finished, questions_path, rewrite_rows};
use super::prompts::{PromptSet, fence_context};
use super::rows::{JudgeQuestionRow, Judgement, Verdicts, tag};
use super::settings::JudgeSettings;
use super::verdict::{Graded, Verdict, last_record};
use super::work::{DriveLimits, drive};
use crate::budget::CostEstimate;
use crate::corpus::Corpus;
use crate::events::{Events, RunEvent};
use crate::golden::GoldenSet;
use crate::llm::cost::{cost_usd, count_tokens, estimate_chat_prompt_tokens, planned_cost_usd};
use crate::llm::structured::schema_instruction;
use crate::llm::{CallRecord, ClientConfig, LlmClient, LlmError};
use crate::sweep::grid::ConfigCut;
use crate::sweep::index::{ConfigIndex, RetrievalContext};
use crate::tokenize::CorpusTokens;

/// One unit of work: a candidate × question with its retrieved chunks (retrieval is done up
/// front, locally, so the estimate and the prompts are exact).
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// Position of the candidate in the candidate list.
    pub config_index: usize,
    /// Configuration id.
    pub config_id: String,
    /// Position of the question in the golden set.
    pub question_index: usize,
    /// Question id.
    pub question_id: String,
    /// Question type tag (empty if none).
    pub question_type: String,
    /// The question.
    pub question: String,
    /// The reference answer, if the golden set has one.
    pub reference: Option<String>,
    /// Retrieved chunk ids, best first.
    pub chunk_ids: Vec<String>,
    /// The fenced context given to the generator and the faithfulness judge.
    pub context: String,
    /// Time spent retrieving, in ms.
    pub retrieve_ms: f64,
}

/// Builds every candidate's index once (token streams from [`CorpusTokens::new`]; embeddings and
/// model-written contexts from the prepare step in `context`, so dense, hybrid, semantic and
/// `llm_context` candidates retrieve exactly as in the sweep) and retrieves every question at
/// the candidate's cut.
/// The generator sees what the sweep sends ([`ConfigIndex::send`]): each retrieved chunk as it
/// was indexed (its prefix, then its text), or under an expansion each unit sent.
///
/// # Errors
/// [`JudgeError::Sweep`] if a configuration cannot be chunked, prefixed or indexed.
pub fn plan_jobs(
    corpus: &Corpus,
    golden: &GoldenSet,
    candidates: &[ConfigCut],
    tokens: &CorpusTokens,
    context: &Arc<RetrievalContext>,
) -> Result<Vec<Job>, JudgeError> {
    let mut jobs = Vec::new();
    for (ci, candidate) in candidates.iter().enumerate() {
        let index = ConfigIndex::build(corpus, tokens, &candidate.config, context)?;
        let config_id = candidate.id();
        for (qi, q) in golden.questions.iter().enumerate() {
            let t0 = Instant::now();
            let chunks = index.send(corpus, tokens, &q.text, candidate.cut)?;
            let retrieve_ms = t0.elapsed().as_secs_f64() * 1e3;
            jobs.push(Job {
                config_index: ci,
                config_id: config_id.clone(),
                question_index: qi,
                question_id: q.id.clone(),
                question_type: q.question_type.clone().unwrap_or_default(),
                question: q.text.clone(),
                reference: q.answer.clone().filter(|a| !a.trim().is_empty()),
                context: fence_context(chunks.iter().map(|(id, t)| (id.as_str(), t.as_ref()))),
                chunk_ids: chunks.into_iter().map(|(id, _)| id).collect(),
                retrieve_ms,
            });
        }
    }
    Ok(jobs)
}

/// The golden set's first `max_questions` questions, the ones the judge stage asks (all
/// without a cap).
pub fn judged_questions(golden: &GoldenSet, max_questions: Option<usize>) -> GoldenSet {
    match max_questions {
        Some(n) if n < golden.questions.len() => GoldenSet {
            questions: golden.questions[..n].to_vec(),
            ..golden.clone()
        },
        _ => golden.clone(),
    }
}

/// One line saying where the calls go and what they should cost, printed before the first
/// call (and by a dry run): `server URL; generator M, judge M; N chat calls, about P prompt
/// tokens and at most C completion tokens; estimated cost $X`. `server` should be shown
/// redacted ([`LlmClient::base_url`]); `generator_model` is `None` when nothing is generated
/// (`judge-check`), and the line then names the judge only.
pub fn estimate_line(
    e: &CostEstimate,
    server: &str,
    generator_model: Option<&str>,
    judge_model: &str,
) -> String {
    let models = match generator_model {
        Some(g) => format!("generator {g}, judge {judge_model}"),
        None => format!("judge {judge_model}"),
    };
    let cost = e.cost_text("no price for a model in [llm.models]");
    format!(
        "server {server}; {models}; {} chat calls, about {} prompt tokens and at most {} completion tokens; estimated cost {cost} (cache hits cost nothing)",
        e.calls, e.prompt_tokens, e.completion_tokens
    )
}

/// The criteria of `all` graded for `job`: those that need a reference only when it has one.
fn applicable<'a>(all: &'a [Criterion], job: &Job) -> Vec<&'a Criterion> {
    all.iter()
        .filter(|c| c.applies(job.reference.is_some()))
        .collect()
}

/// The inputs of `job`'s verdicts on `answer`.
fn inputs<'a>(job: &'a Job, answer: &'a str) -> VerdictInputs<'a> {
    [
        job.question.as_str(),
        job.context.as_str(),
        answer,
        job.reference.as_deref().unwrap_or(""),
    ]
}

/// Tokens of the verdict schema's instruction, added to a verdict's prompt by servers without
/// structured output (an upper bound of what the estimate counts).
pub(crate) fn schema_tokens() -> u64 {
    count_tokens(&schema_instruction(&super::verdict::verdict_schema())) + 4
}

/// Estimates calls, tokens and cost of `jobs`: one generation and 2 or 3 verdicts each (format
/// reminders not included); prompt tokens exact for generation, for verdicts the answer counted
/// at `max_tokens`; completion tokens at the caps (`max_tokens`, `judge_max_tokens`).
pub fn estimate(
    jobs: &[Job],
    prompts: &PromptSet,
    s: &JudgeSettings,
    cfg: &ClientConfig,
) -> CostEstimate {
    let schema_tokens = schema_tokens();
    let placeholder_answer = "x ".repeat(s.max_tokens as usize);
    let mut e = CostEstimate::default();
    let (mut gen_p, mut gen_c, mut jud_p, mut jud_c) = (0u64, 0u64, 0u64, 0u64);
    for job in jobs {
        e.calls += 1;
        let gen_req = generate_request(prompts, s, &job.question, &job.context);
        gen_p += estimate_chat_prompt_tokens(&gen_req.messages);
        gen_c += u64::from(s.max_tokens);
        for ask in Ask::plan(s.mode, &s.criteria, applicable(&s.criteria, job)) {
            e.calls += 1;
            let r = ask.request(prompts, s, inputs(job, &placeholder_answer));
            jud_p += estimate_chat_prompt_tokens(&r.messages) + schema_tokens;
            jud_c += u64::from(s.judge_max_tokens);
        }
    }
    e.prompt_tokens = gen_p + jud_p;
    e.completion_tokens = gen_c + jud_c;
    e.cost_usd = match (
        planned_cost_usd(cfg, &s.generator_model, gen_p, gen_c),
        planned_cost_usd(cfg, &s.judge_model, jud_p, jud_c),
    ) {
        (Some(a), Some(b)) => Some(a + b),
        _ => None,
    };
    e
}

/// Cost at list price of `records`, in USD; `None` when a model has no price.
pub(crate) fn records_cost(client: &LlmClient, records: &[CallRecord]) -> Option<f64> {
    let cfg = client.config();
    records.iter().try_fold(0.0, |acc, rec| {
        cost_usd(
            cfg.model(&rec.model),
            rec.prompt_tokens,
            rec.completion_tokens,
        )
        .map(|c| acc + c)
    })
}

/// Generates `job`'s answer: the answer (trimmed) or why the server gave none, with the calls
/// made.
///
/// # Errors
/// An error that is not a result (timeouts, retries exhausted, a rejected request).
async fn generate(
    client: &LlmClient,
    prompts: &PromptSet,
    s: &JudgeSettings,
    job: &Job,
    records: &mut Vec<CallRecord>,
) -> Result<(String, Option<String>), LlmError> {
    let gen_tag = tag("generate", &job.config_id, &job.question_id);
    let req = generate_request(prompts, s, &job.question, &job.context);
    match client.chat(&gen_tag, req).await {
        Ok(out) => {
            records.push(out.record);
            Ok((out.content.trim().to_string(), None))
        }
        Err(e) if e.is_result() => {
            records.extend(last_record(client, &gen_tag));
            Ok((String::new(), Some(e.to_string())))
        }
        Err(e) => Err(e),
    }
}

/// Grades `answer` of `job` on every criterion that applies, the calls of the judge mode
/// ([`Ask::plan`]) concurrently, and returns the verdicts in the criteria's order.
///
/// # Errors
/// The first error of a call that is not a result.
async fn grade_all(
    client: &LlmClient,
    prompts: &PromptSet,
    s: &JudgeSettings,
    job: &Job,
    answer: &str,
    records: &mut Vec<CallRecord>,
) -> Result<Verdicts, LlmError> {
    let mut set = JoinSet::new();
    for ask in Ask::plan(s.mode, &s.criteria, applicable(&s.criteria, job)) {
        let req = ask.request(prompts, s, inputs(job, answer));
        let t = tag(ask.stage(), &job.config_id, &job.question_id);
        let client = client.clone();
        set.spawn(async move { ask.grade(&client, &t, req).await });
    }
    let mut graded: BTreeMap<String, Graded> = BTreeMap::new();
    let mut first_err = None;
    while let Some(joined) = set.join_next().await {
        match joined.expect("judge task does not panic") {
            Ok(gs) => graded.extend(gs),
            Err(e) => first_err = first_err.or(Some(e)),
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    // in the criteria's order, whatever order the calls ended in, so that sums over the calls
    // (tokens, cost) do not depend on timing
    Ok(s.criteria
        .iter()
        .map(|c| {
            let j = match graded.remove(&c.name) {
                Some(g) => {
                    records.extend(g.records);
                    Judgement {
                        verdict: g.verdict,
                        reason: g.reason,
                    }
                }
                None => Judgement {
                    verdict: Verdict::NotApplicable,
                    reason: String::new(),
                },
            };
            (c.name.clone(), j)
        })
        .collect())
}

/// Runs one job: generate, then grade every criterion. An answer the server declined to give (an
/// [`LlmError::is_result`] error: empty or filtered content, cut at the cap) is recorded with
/// its reason and not graded.
///
/// # Errors
/// An error that is not a result (timeouts, retries exhausted, a rejected request): the
/// question stays unfinished, with no row, for a rerun.
async fn run_job(
    client: LlmClient,
    prompts: Arc<PromptSet>,
    s: Arc<JudgeSettings>,
    job: Job,
) -> Result<JudgeQuestionRow, LlmError> {
    let t0 = Instant::now();
    let mut records: Vec<CallRecord> = Vec::new();
    let (answer, gen_error) = generate(&client, &prompts, &s, &job, &mut records).await?;
    // a batched call has no latency of its own: the row's times are n/a
    let elapsed_ms = |t: Instant| {
        if client.is_batching() {
            f64::NAN
        } else {
            t.elapsed().as_secs_f64() * 1e3
        }
    };
    let generate_ms = elapsed_ms(t0);
    let generate_tokens: u64 = records
        .iter()
        .map(|r| r.prompt_tokens + r.completion_tokens)
        .sum();
    let t1 = Instant::now();
    let verdicts = match &gen_error {
        Some(why) => s
            .criteria
            .iter()
            .map(|c| {
                let verdict = if c.applies(job.reference.is_some()) {
                    Verdict::Error
                } else {
                    Verdict::NotApplicable
                };
                let reason = match verdict {
                    Verdict::Error => format!("not graded: no answer ({why})"),
                    _ => String::new(),
                };
                (c.name.clone(), Judgement { verdict, reason })
            })
            .collect(),
        None => grade_all(&client, &prompts, &s, &job, &answer, &mut records).await?,
    };
    let judge_ms = elapsed_ms(t1);
    let errors = if gen_error.is_some() {
        1
    } else {
        verdicts
            .iter()
            .filter(|(_, j)| j.verdict == Verdict::Error)
            .count() as u32
    };
    Ok(JudgeQuestionRow {
        config_id: job.config_id.clone(),
        question_id: job.question_id.clone(),
        question_type: job.question_type.clone(),
        retrieved_chunk_ids: job.chunk_ids.join("|"),
        answer,
        generate_error: gen_error.unwrap_or_default(),
        verdicts,
        errors,
        retrieve_ms: job.retrieve_ms,
        generate_ms,
        judge_ms,
        calls: records.len() as u32,
        prompt_tokens: records.iter().map(|r| r.prompt_tokens).sum(),
        completion_tokens: records.iter().map(|r| r.completion_tokens).sum(),
        generate_tokens,
        calls_without_usage: records.iter().filter(|r| r.tokens_estimated).count() as u32,
        cost_usd: records_cost(&client, &records),
    })
}

/// The result of [`run_judge`].
#[derive(Debug, Clone)]
pub struct JudgeRun {
    /// The criteria of the run's judge_questions.csv, in order.
    pub criteria: Vec<String>,
    /// Every finished row of the planned jobs (from earlier runs of the folder and this one), in
    /// candidate order, then golden-set order. Rows of the folder outside the plan stay in
    /// judge_questions.csv but are not here.
    pub rows: Vec<JudgeQuestionRow>,
    /// Rows that were already in the run folder when this run started.
    pub resumed: usize,
    /// Questions left unfinished by a transient failure: (config id, question id, error).
    pub unfinished: Vec<(String, String, String)>,
    /// Questions not started because the budget would have been passed.
    pub skipped_for_budget: usize,
    /// Money actually spent by this run, in USD (cache hits cost nothing).
    pub spent_usd: f64,
    /// Money recorded in the folder before the judge stage started, in USD: its calls.csv
    /// (earlier runs) and the sweep's call files ([`super::journal::recorded_spend`]).
    pub spent_before_usd: f64,
}

impl JudgeRun {
    /// Whether every planned question has a row.
    pub fn is_complete(&self) -> bool {
        self.unfinished.is_empty() && self.skipped_for_budget == 0
    }
}

/// What a judge run starts from: its settings, templates and client, and the rows already in the
/// folder ([`super::journal::load_finished`], read once by the caller).
pub struct Setup<'a> {
    /// The settings (models, caps, concurrency, budget, mode, criteria).
    pub settings: Arc<JudgeSettings>,
    /// The templates.
    pub prompts: Arc<PromptSet>,
    /// The client.
    pub client: &'a LlmClient,
    /// The rows of the folder's judge_questions.csv when the run starts.
    pub done: Finished,
}

/// The indices of the `jobs` (candidate × question) without a row in `done`, in order.
pub fn pending(jobs: &[Job], done: &Finished) -> Vec<usize> {
    let keys: HashSet<(&str, &str)> = done
        .rows
        .iter()
        .map(|r| (r.config_id.as_str(), r.question_id.as_str()))
        .collect();
    (0..jobs.len())
        .filter(|&i| !keys.contains(&(jobs[i].config_id.as_str(), jobs[i].question_id.as_str())))
        .collect()
}

/// Runs every job not yet in `dir/judge_questions.csv` (`setup.done`) through the job loop
/// ([`super::work`]): at most `settings.concurrency` questions at a time, each finished row
/// appended (flushed) and every call written to `dir/calls.csv` as it ends (see [`CallLog`]).
/// Stops starting questions when the spend recorded in the folder (earlier runs included) plus
/// the estimate of what is running and of the next question would pass
/// `settings.max_cost_usd`. At the end, if this run finished a question, judge_questions.csv is
/// rewritten in candidate order, then golden-set order, so equal inputs give equal files;
/// finished rows outside this run's plan are kept after them.
///
/// An authentication failure or an unknown model ([`LlmError::stops_run`]) stops the run early:
/// no question is started after it, the questions in flight end, and every finished row and call
/// is kept.
///
/// # Errors
/// [`JudgeError::Io`]/[`JudgeError::Csv`] for the run files; [`JudgeError::Stopped`] after an
/// authentication or unknown-model error. Other failed calls are not errors here: see
/// [`JudgeRun::unfinished`].
pub async fn run_judge(
    dir: &Path,
    jobs: &[Job],
    setup: Setup<'_>,
    events: Events<'_>,
) -> Result<JudgeRun, JudgeError> {
    let Setup {
        settings,
        prompts,
        client,
        done,
    } = setup;
    let criteria = criteria::names(&settings.criteria);
    let resumed = done.rows.len();
    let todo = pending(jobs, &done);
    let mut rows_out = Appender::open(
        &questions_path(dir),
        Some(JudgeQuestionRow::header(&criteria)),
    )?;
    let mut calls = Some(CallLog::open(dir)?);
    let cost = |i: usize| {
        estimate(
            std::slice::from_ref(&jobs[i]),
            &prompts,
            &settings,
            client.config(),
        )
        .cost_usd
        .unwrap_or(0.0)
    };
    let limits = DriveLimits::new(settings.concurrency, settings.max_cost_usd, &cost);
    let start = |i: usize| {
        run_job(
            client.clone(),
            Arc::clone(&prompts),
            Arc::clone(&settings),
            jobs[i].clone(),
        )
    };
    let ended = drive(
        &todo,
        &limits,
        client,
        &mut calls,
        events,
        start,
        |i, res| match res {
            Ok(row) => rows_out.append(&row.cells(&criteria)),
            Err(e) => {
                events(RunEvent::Unfinished {
                    config_id: jobs[i].config_id.clone(),
                    question_id: jobs[i].question_id.clone(),
                    error: e.to_string(),
                });
                Ok(())
            }
        },
    )
    .await?;
    drop(rows_out);
    let calls = calls.expect("opened above");
    let mut new_rows = Vec::new();
    let mut unfinished = Vec::new();
    for (i, res) in ended.results {
        match res {
            Ok(row) => new_rows.push((i, row)),
            Err(e) => unfinished.push((
                jobs[i].config_id.clone(),
                jobs[i].question_id.clone(),
                e.to_string(),
            )),
        }
    }
    let finished_now = new_rows.len();
    let rows = canonical(dir, jobs, &criteria, done.rows, new_rows)?;
    if let Some(source) = ended.stopped {
        return Err(JudgeError::Stopped {
            source,
            not_run: todo.len() - finished_now,
        });
    }
    Ok(JudgeRun {
        criteria,
        rows,
        resumed,
        unfinished,
        skipped_for_budget: ended.skipped,
        spent_usd: calls.spent_now(),
        spent_before_usd: calls.spent_before(),
    })
}

/// The planned rows in job order (candidate, then question): the rows of earlier runs (`done`)
/// and of this one (`new`, by job index). When this run finished a question, judge_questions.csv
/// is rewritten in that order, with the rows of earlier runs that this run did not plan (other
/// candidates, more questions) after them, in file order.
fn canonical(
    dir: &Path,
    jobs: &[Job],
    criteria: &[String],
    done: Vec<JudgeQuestionRow>,
    new: Vec<(usize, JudgeQuestionRow)>,
) -> Result<Vec<JudgeQuestionRow>, JudgeError> {
    let order: BTreeMap<(&str, &str), usize> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| ((j.config_id.as_str(), j.question_id.as_str()), i))
        .collect();
    let mut planned: Vec<(usize, JudgeQuestionRow)> = Vec::new();
    let mut unplanned: Vec<JudgeQuestionRow> = Vec::new();
    for r in done {
        match order.get(&(r.config_id.as_str(), r.question_id.as_str())) {
            Some(&i) => planned.push((i, r)),
            None => unplanned.push(r),
        }
    }
    let finished_now = !new.is_empty();
    planned.extend(new);
    planned.sort_by_key(|(i, _)| *i);
    let rows: Vec<JudgeQuestionRow> = planned.into_iter().map(|(_, r)| r).collect();
    if finished_now {
        rewrite_rows(dir, criteria, rows.iter().chain(&unplanned))?;
    }
    Ok(rows)
}
