//! The judge pipeline: for every candidate × question, retrieve (the sweep's frozen BM25), generate
//! an answer, grade it, and append the finished row to judge_questions.csv at once (flushed), so a
//! killed run loses nothing that finished. A rerun with the same run folder skips finished rows
//! and, through the client's response cache, resends no finished call.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::error::JudgeError;
use super::journal::{Appender, CallLog, load_finished, questions_path, rewrite_rows};
use super::prompts::{PromptKind, PromptSet, fence_context};
use super::rows::{JudgeQuestionRow, TAG_SEP, tag};
use super::settings::{JudgeMode, JudgeSettings};
use super::verdict::{Criterion, Verdict, grade, grade_combined, last_record};
use crate::corpus::Corpus;
use crate::events::{Events, RunEvent, Step};
use crate::golden::GoldenSet;
use crate::llm::cost::{cost_usd, count_tokens, estimate_chat_prompt_tokens};
use crate::llm::structured::schema_instruction;
use crate::llm::{CallRecord, ChatMessage, ChatRequest, ClientConfig, LlmClient, LlmError};
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
/// The generator sees each retrieved chunk as it was indexed: its prefix, then its text.
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
            let ranking = index.retrieve(&q.text, candidate.cut)?;
            let retrieve_ms = t0.elapsed().as_secs_f64() * 1e3;
            let chunks: Vec<(String, std::borrow::Cow<'_, str>)> = ranking
                .top
                .iter()
                .map(|&i| {
                    (
                        index.chunks[i].id(corpus),
                        index.chunks[i].indexed_text(corpus),
                    )
                })
                .collect();
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

/// Calls, tokens and cost expected for a set of jobs, before anything is sent.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Estimate {
    /// Questions (candidate × question) to run.
    pub questions: usize,
    /// Chat calls (1 generate + 2 or 3 verdicts each; format reminders not included).
    pub calls: usize,
    /// Prompt tokens (exact for generation; for verdicts, the answer counted at `max_tokens`).
    pub prompt_tokens: u64,
    /// Completion tokens, at the caps (`max_tokens`, `judge_max_tokens`): an upper bound.
    pub completion_tokens: u64,
    /// Cost in USD at list prices; `None` when a model has no price.
    pub cost_usd: Option<f64>,
}

impl Estimate {
    /// One line saying where the calls go and what they should cost, printed before the first
    /// call (and by a dry run): `server URL; generator M, judge M; N chat calls, about P prompt
    /// tokens and at most C completion tokens; estimated cost $X`. `server` should be shown
    /// redacted ([`LlmClient::base_url`]); `generator_model` is `None` when nothing is generated
    /// (`judge-check`), and the line then names the judge only.
    pub fn summary(
        &self,
        server: &str,
        generator_model: Option<&str>,
        judge_model: &str,
    ) -> String {
        let models = match generator_model {
            Some(g) => format!("generator {g}, judge {judge_model}"),
            None => format!("judge {judge_model}"),
        };
        let cost = self
            .cost_usd
            .map(|c| format!("${c:.4}"))
            .unwrap_or_else(|| "unknown (no price for a model in [llm.models])".into());
        format!(
            "server {server}; {models}; {} chat calls, about {} prompt tokens and at most {} completion tokens; estimated cost {cost} (cache hits cost nothing)",
            self.calls, self.prompt_tokens, self.completion_tokens
        )
    }
}

fn generate_request(prompts: &PromptSet, s: &JudgeSettings, job: &Job) -> ChatRequest {
    let text = prompts.render(
        PromptKind::Generate,
        &[("question", &job.question), ("context", &job.context)],
    );
    let mut r = request(&s.generator_model, text, s.max_tokens, s);
    r.reject_truncated = true;
    r
}

fn judge_request(
    prompts: &PromptSet,
    s: &JudgeSettings,
    job: &Job,
    kind: PromptKind,
    answer: &str,
) -> ChatRequest {
    verdict_request(
        prompts,
        s,
        kind,
        [
            job.question.as_str(),
            job.context.as_str(),
            answer,
            job.reference.as_deref().unwrap_or(""),
        ],
    )
}

/// The prompt that grades criterion `c` on its own.
pub(crate) fn prompt_of(c: Criterion) -> PromptKind {
    match c {
        Criterion::Faithfulness => PromptKind::Faithfulness,
        Criterion::Relevancy => PromptKind::Relevancy,
        Criterion::Correctness => PromptKind::Correctness,
    }
}

/// The judge's request with the template of `kind` (a criterion's, or
/// [`PromptKind::Combined`]) on `[question, context (fenced), answer, reference]` (an empty
/// reference when there is none), with the settings' model, cap, temperature and seed.
pub(crate) fn verdict_request(
    prompts: &PromptSet,
    s: &JudgeSettings,
    kind: PromptKind,
    [question, context, answer, reference]: [&str; 4],
) -> ChatRequest {
    let values = [
        ("question", question),
        ("context", context),
        ("answer", answer),
        ("reference", reference),
    ];
    request(
        &s.judge_model,
        prompts.render(kind, &values),
        s.judge_max_tokens,
        s,
    )
}

fn request(model: &str, text: String, max_tokens: u32, s: &JudgeSettings) -> ChatRequest {
    let mut r = ChatRequest::new(model, vec![ChatMessage::user(text)]);
    r.temperature = Some(s.temperature);
    r.max_tokens = Some(max_tokens);
    r.seed = s.seed;
    r
}

fn criteria(job: &Job) -> Vec<Criterion> {
    let mut c = vec![Criterion::Faithfulness, Criterion::Relevancy];
    if job.reference.is_some() {
        c.push(Criterion::Correctness);
    }
    c
}

/// Estimates calls, tokens and cost of `jobs` (see [`Estimate`] for what is exact and what is a
/// cap).
pub fn estimate(
    jobs: &[Job],
    prompts: &PromptSet,
    s: &JudgeSettings,
    cfg: &ClientConfig,
) -> Estimate {
    let schema_tokens = count_tokens(&schema_instruction(&super::verdict::verdict_schema())) + 4;
    let placeholder_answer = "x ".repeat(s.max_tokens as usize);
    let mut e = Estimate::default();
    let (mut gen_p, mut gen_c, mut jud_p, mut jud_c) = (0u64, 0u64, 0u64, 0u64);
    for job in jobs {
        e.questions += 1;
        e.calls += 1;
        gen_p += estimate_chat_prompt_tokens(&generate_request(prompts, s, job).messages);
        gen_c += u64::from(s.max_tokens);
        let kinds: Vec<PromptKind> = match s.mode {
            JudgeMode::Combined => vec![PromptKind::Combined],
            JudgeMode::PerCriterion => criteria(job).into_iter().map(prompt_of).collect(),
        };
        for kind in kinds {
            e.calls += 1;
            let r = judge_request(prompts, s, job, kind, &placeholder_answer);
            jud_p += estimate_chat_prompt_tokens(&r.messages) + schema_tokens;
            jud_c += u64::from(s.judge_max_tokens);
        }
    }
    e.prompt_tokens = gen_p + jud_p;
    e.completion_tokens = gen_c + jud_c;
    e.cost_usd = match (
        cost_usd(cfg.model(&s.generator_model), gen_p, gen_c),
        cost_usd(cfg.model(&s.judge_model), jud_p, jud_c),
    ) {
        (Some(a), Some(b)) => Some(a + b),
        _ => None,
    };
    e
}

/// What one finished question produced.
struct Finished {
    row: JudgeQuestionRow,
    job_index: usize,
}

/// Runs one job: generate, then grade every criterion concurrently. An answer that could not be
/// generated (an [`LlmError::is_result`] error: empty or filtered content, cut at the cap,
/// timeouts) is recorded with its reason and not graded.
///
/// # Errors
/// An error that is not a result (rejected, retries exhausted): the question stays unfinished.
async fn run_job(
    client: LlmClient,
    prompts: Arc<PromptSet>,
    s: Arc<JudgeSettings>,
    job: Job,
) -> Result<JudgeQuestionRow, LlmError> {
    let gen_tag = tag("generate", &job.config_id, &job.question_id);
    let t0 = Instant::now();
    let mut records: Vec<CallRecord> = Vec::new();
    let (answer, gen_error) = match client
        .chat(&gen_tag, generate_request(&prompts, &s, &job))
        .await
    {
        Ok(out) => {
            records.push(out.record);
            (out.content.trim().to_string(), None)
        }
        Err(e) if e.is_result() => {
            records.extend(last_record(&client, &gen_tag));
            (String::new(), Some(e.reason()))
        }
        Err(e) => return Err(e),
    };
    let generate_ms = t0.elapsed().as_secs_f64() * 1e3;
    let generate_tokens: u64 = records
        .iter()
        .map(|r| r.prompt_tokens + r.completion_tokens)
        .sum();

    let t1 = Instant::now();
    let mut graded: BTreeMap<Criterion, (Verdict, String)> = BTreeMap::new();
    if let Some(why) = &gen_error {
        for c in criteria(&job) {
            graded.insert(
                c,
                (Verdict::Error, format!("not graded: no answer ({why})")),
            );
        }
    } else if s.mode == JudgeMode::Combined {
        let cs = criteria(&job);
        let req = judge_request(&prompts, &s, &job, PromptKind::Combined, &answer);
        let t = tag("combined", &job.config_id, &job.question_id);
        for (c, g) in cs.iter().zip(grade_combined(&client, &t, req, &cs).await?) {
            records.extend(g.records);
            graded.insert(*c, (g.verdict, g.reason));
        }
    } else {
        let mut set = JoinSet::new();
        for c in criteria(&job) {
            let req = judge_request(&prompts, &s, &job, prompt_of(c), &answer);
            let client = client.clone();
            let t = tag(c.name(), &job.config_id, &job.question_id);
            set.spawn(async move { (c, grade(&client, &t, req).await) });
        }
        let mut first_err = None;
        while let Some(joined) = set.join_next().await {
            let (c, res) = joined.expect("judge task does not panic");
            match res {
                Ok(g) => {
                    records.extend(g.records);
                    graded.insert(c, (g.verdict, g.reason));
                }
                Err(e) => first_err = first_err.or(Some(e)),
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
    }
    let judge_ms = t1.elapsed().as_secs_f64() * 1e3;

    let get = |c: Criterion| {
        graded
            .get(&c)
            .cloned()
            .unwrap_or((Verdict::NotApplicable, String::new()))
    };
    let (f, fr) = get(Criterion::Faithfulness);
    let (r, rr) = get(Criterion::Relevancy);
    let (c, cr) = get(Criterion::Correctness);
    let errors = if gen_error.is_some() {
        1
    } else {
        [f, r, c].iter().filter(|v| **v == Verdict::Error).count() as u32
    };
    let cfg = client.config();
    let cost = records.iter().try_fold(0.0, |acc, rec| {
        cost_usd(
            cfg.model(&rec.model),
            rec.prompt_tokens,
            rec.completion_tokens,
        )
        .map(|c| acc + c)
    });
    Ok(JudgeQuestionRow {
        config_id: job.config_id.clone(),
        question_id: job.question_id.clone(),
        question_type: job.question_type.clone(),
        retrieved_chunk_ids: job.chunk_ids.join("|"),
        answer,
        generate_error: gen_error.unwrap_or_default(),
        faithfulness: f.as_str().into(),
        faithfulness_reason: fr,
        relevancy: r.as_str().into(),
        relevancy_reason: rr,
        correctness: c.as_str().into(),
        correctness_reason: cr,
        errors,
        retrieve_ms: job.retrieve_ms,
        generate_ms,
        judge_ms,
        calls: records.len() as u32,
        prompt_tokens: records.iter().map(|r| r.prompt_tokens).sum(),
        completion_tokens: records.iter().map(|r| r.completion_tokens).sum(),
        generate_tokens,
        calls_without_usage: records.iter().filter(|r| r.tokens_estimated).count() as u32,
        cost_usd: cost,
    })
}

/// The result of [`run_judge`].
#[derive(Debug, Clone)]
pub struct JudgeRun {
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
    /// Money spent by earlier runs of the folder, from its calls.csv, in USD.
    pub spent_before_usd: f64,
}

impl JudgeRun {
    /// Whether every planned question has a row.
    pub fn is_complete(&self) -> bool {
        self.unfinished.is_empty() && self.skipped_for_budget == 0
    }
}

/// Runs every job not yet in `dir/judge_questions.csv`, at most `settings.concurrency` questions
/// at a time, appending each finished row (flushed) and every call to `dir/calls.csv` as it ends
/// (see [`CallLog`]). Stops starting questions when the spend recorded in the folder (earlier
/// runs included) plus the estimate of what is running and of the next question would pass
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
    prompts: Arc<PromptSet>,
    settings: Arc<JudgeSettings>,
    client: &LlmClient,
    events: Events<'_>,
) -> Result<JudgeRun, JudgeError> {
    let done = load_finished(dir)?;
    let resumed = done.len();
    let done_keys: HashSet<(String, String)> = done
        .iter()
        .map(|r| (r.config_id.clone(), r.question_id.clone()))
        .collect();
    let mut rows_out = Appender::open(&questions_path(dir))?;
    let mut calls = CallLog::open(dir)?;
    let mut calls_rx = client.subscribe();

    let todo: Vec<usize> = (0..jobs.len())
        .filter(|&i| !done_keys.contains(&(jobs[i].config_id.clone(), jobs[i].question_id.clone())))
        .collect();
    let sem = Arc::new(Semaphore::new(settings.concurrency.max(1)));
    let mut set: JoinSet<(usize, Result<JudgeQuestionRow, LlmError>)> = JoinSet::new();
    let mut new_rows: Vec<Finished> = Vec::new();
    let mut unfinished = Vec::new();
    let mut running_estimate: BTreeMap<usize, f64> = BTreeMap::new();
    let mut skipped = 0usize;
    let mut next = 0usize;
    // an authentication or unknown-model error: start nothing more
    let mut stopped: Option<LlmError> = None;

    loop {
        // start as many jobs as permits and the budget allow
        while next < todo.len() && skipped == 0 && stopped.is_none() {
            let Ok(permit) = Arc::clone(&sem).try_acquire_owned() else {
                break;
            };
            let ji = todo[next];
            let job = &jobs[ji];
            if let Some(max) = settings.max_cost_usd {
                let est = estimate(
                    std::slice::from_ref(job),
                    &prompts,
                    &settings,
                    client.config(),
                )
                .cost_usd
                .unwrap_or(0.0);
                let committed: f64 = running_estimate.values().sum();
                if calls.spent_total() + committed + est > max {
                    skipped = todo.len() - next;
                    drop(permit);
                    break;
                }
                running_estimate.insert(ji, est);
            }
            next += 1;
            let (c, p, s, j) = (
                client.clone(),
                Arc::clone(&prompts),
                Arc::clone(&settings),
                job.clone(),
            );
            set.spawn(async move {
                let r = run_job(c, p, s, j).await;
                drop(permit);
                (ji, r)
            });
        }
        // wait for the next question to end, writing every call to calls.csv as it ends
        let joined = loop {
            tokio::select! {
                biased;
                Some(rec) = calls_rx.recv() => {
                    calls.record(&rec)?;
                    call_event(events, &rec);
                }
                joined = set.join_next() => break joined,
            }
        };
        let Some(joined) = joined else {
            break;
        };
        let (ji, res) = joined.expect("judge task does not panic");
        running_estimate.remove(&ji);
        while let Ok(rec) = calls_rx.try_recv() {
            calls.record(&rec)?;
            call_event(events, &rec);
        }
        match res {
            Ok(row) => {
                rows_out.append(&row)?;
                new_rows.push(Finished { row, job_index: ji });
            }
            Err(e) => {
                if e.stops_run() && stopped.is_none() {
                    stopped = Some(e.clone());
                }
                let job = &jobs[ji];
                events(RunEvent::Unfinished {
                    config_id: job.config_id.clone(),
                    question_id: job.question_id.clone(),
                    error: e.to_string(),
                });
                unfinished.push((
                    job.config_id.clone(),
                    job.question_id.clone(),
                    e.to_string(),
                ));
            }
        }
    }
    while let Ok(rec) = calls_rx.try_recv() {
        calls.record(&rec)?;
        call_event(events, &rec);
    }
    drop(rows_out);

    let finished_now = new_rows.len();
    // canonical order: the job order (candidate, then question); rows of earlier runs that
    // this run did not plan (other candidates, more questions) are kept after them, in file order
    let order: BTreeMap<(String, String), usize> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| ((j.config_id.clone(), j.question_id.clone()), i))
        .collect();
    let mut planned: Vec<(usize, JudgeQuestionRow)> = Vec::new();
    let mut unplanned: Vec<JudgeQuestionRow> = Vec::new();
    for r in done {
        match order.get(&(r.config_id.clone(), r.question_id.clone())) {
            Some(&i) => planned.push((i, r)),
            None => unplanned.push(r),
        }
    }
    planned.extend(new_rows.into_iter().map(|f| (f.job_index, f.row)));
    planned.sort_by_key(|(i, _)| *i);
    let rows: Vec<JudgeQuestionRow> = planned.into_iter().map(|(_, r)| r).collect();
    if finished_now > 0 {
        rewrite_rows(dir, rows.iter().chain(&unplanned))?;
    }
    if let Some(source) = stopped {
        return Err(JudgeError::Stopped {
            source,
            not_run: todo.len() - finished_now,
        });
    }
    Ok(JudgeRun {
        rows,
        resumed,
        unfinished,
        skipped_for_budget: skipped,
        spent_usd: calls.spent_now(),
        spent_before_usd: calls.spent_before(),
    })
}

/// Reports a finished call to the display.
fn call_event(events: Events<'_>, rec: &CallRecord) {
    events(RunEvent::Advanced {
        step: Step::Judge,
        label: rec.stage.replace(TAG_SEP, " "),
        cost_usd: rec.cost_usd,
        cached: rec.cache_hit,
    });
}
