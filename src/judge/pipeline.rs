//! The judge pipeline: for every candidate × question, retrieve (the sweep's frozen BM25), generate
//! an answer, grade it, and append the finished row to judge_questions.csv at once (flushed), so a
//! killed run loses nothing that finished. A rerun with the same run folder skips finished rows
//! and, through the client's response cache, resends no finished call.

use std::collections::{BTreeMap, HashSet};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::prompts::{PromptKind, PromptSet, fence_context};
use super::verdict::{Criterion, Verdict, grade, is_final, last_record};
use super::{JudgeError, JudgeSettings};
use crate::corpus::Corpus;
use crate::events::{Events, RunEvent, Step};
use crate::files;
use crate::golden::GoldenSet;
use crate::llm::cost::{cost_usd, count_tokens, estimate_chat_prompt_tokens};
use crate::llm::structured::schema_instruction;
use crate::llm::{CallRecord, ChatMessage, ChatRequest, LlmClient, LlmError};
use crate::sweep::grid::ConfigSpec;
use crate::sweep::index::{ConfigIndex, RetrievalContext};
use crate::tokenize::CorpusTokens;

/// Separates the parts of the call tag carried in [`CallRecord::stage`].
const TAG_SEP: char = '\u{1f}';

/// The tag of one call: `<stage>␟<config_id>␟<question_id>`.
fn tag(stage: &str, config_id: &str, question_id: &str) -> String {
    format!("{stage}{TAG_SEP}{config_id}{TAG_SEP}{question_id}")
}

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
/// `llm_context` candidates retrieve exactly as in the sweep) and retrieves top-k for every
/// question.
/// The generator sees each retrieved chunk as it was indexed: its prefix, then its text.
///
/// # Errors
/// [`JudgeError::Sweep`] if a configuration cannot be chunked, prefixed or indexed.
pub fn plan_jobs(
    corpus: &Corpus,
    golden: &GoldenSet,
    candidates: &[ConfigSpec],
    tokens: &CorpusTokens,
    context: &Arc<RetrievalContext>,
) -> Result<Vec<Job>, JudgeError> {
    let mut jobs = Vec::new();
    for (ci, config) in candidates.iter().enumerate() {
        let index = ConfigIndex::build(corpus, tokens, config, context)?;
        let config_id = config.id();
        for (qi, q) in golden.questions.iter().enumerate() {
            let t0 = Instant::now();
            let ranking = index.retrieve(&q.text)?;
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

/// One row of judge_questions.csv: a candidate × question. Flat, so it is one CSV row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeQuestionRow {
    /// Configuration id.
    pub config_id: String,
    /// Question id.
    pub question_id: String,
    /// Question type tag (empty if none).
    pub question_type: String,
    /// Retrieved chunk ids, best first, `|`-separated.
    pub retrieved_chunk_ids: String,
    /// The generator's answer (empty if generation was rejected).
    pub answer: String,
    /// `pass`, `fail` or `error`.
    pub faithfulness: String,
    /// The judge's reason, or why the verdict is an error.
    pub faithfulness_reason: String,
    /// `pass`, `fail` or `error`.
    pub relevancy: String,
    /// The judge's reason, or why the verdict is an error.
    pub relevancy_reason: String,
    /// `pass`, `fail`, `error`, or `na` without a reference answer.
    pub correctness: String,
    /// The judge's reason, or why the verdict is an error (empty for `na`).
    pub correctness_reason: String,
    /// Error verdicts in this row (0 to 3), plus 1 if generation was rejected.
    pub errors: u32,
    /// Retrieval time, in ms.
    pub retrieve_ms: f64,
    /// Generation call wall time (queueing, retries included), in ms.
    pub generate_ms: f64,
    /// Wall time of the judge calls (run concurrently), in ms.
    pub judge_ms: f64,
    /// Chat calls made for this row (generate, verdicts, format reminders).
    pub calls: u32,
    /// Prompt tokens over all calls of the row.
    pub prompt_tokens: u64,
    /// Completion tokens over all calls of the row.
    pub completion_tokens: u64,
    /// Generator prompt + completion tokens (what a production query costs).
    pub generate_tokens: u64,
    /// Cost at list price of all calls of the row, in USD, whether or not a call was answered from
    /// the cache; empty when a model has no price.
    pub cost_usd: Option<f64>,
}

impl JudgeQuestionRow {
    /// The verdict of `c` in this row.
    pub fn verdict(&self, c: Criterion) -> Verdict {
        let s = match c {
            Criterion::Faithfulness => &self.faithfulness,
            Criterion::Relevancy => &self.relevancy,
            Criterion::Correctness => &self.correctness,
        };
        Verdict::parse(s).unwrap_or(Verdict::Error)
    }
}

/// One row of calls.csv: a [`CallRecord`] with its configuration and question.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRow {
    /// `generate`, `faithfulness`, `relevancy` or `correctness`.
    pub stage: String,
    /// Configuration id.
    pub config_id: String,
    /// Question id.
    pub question_id: String,
    /// Model.
    pub model: String,
    /// Start time (RFC 3339 UTC).
    pub started_at: String,
    /// Last attempt's time to the end of the body, in ms (empty for cache hits).
    pub latency_ms_total: Option<f64>,
    /// Whole call including queueing and retries, in ms.
    pub wall_ms: f64,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Whether the tokens are estimates.
    pub tokens_estimated: bool,
    /// Money actually spent, in USD (0 for a cache hit; empty without a price).
    pub cost_usd: Option<f64>,
    /// HTTP attempts.
    pub attempts: u32,
    /// Answered from the cache.
    pub cache_hit: bool,
    /// Structured-output mode, if any.
    pub response_format: String,
    /// Last HTTP status.
    pub http_status: Option<u16>,
    /// Error, if the call failed.
    pub error: String,
}

impl From<&CallRecord> for CallRow {
    fn from(r: &CallRecord) -> Self {
        let mut parts = r.stage.split(TAG_SEP);
        let stage = parts.next().unwrap_or_default().to_string();
        CallRow {
            stage,
            config_id: parts.next().unwrap_or_default().to_string(),
            question_id: parts.next().unwrap_or_default().to_string(),
            model: r.model.clone(),
            started_at: r.started_at.clone(),
            latency_ms_total: r.latency_ms_total,
            wall_ms: r.wall_ms,
            prompt_tokens: r.prompt_tokens,
            completion_tokens: r.completion_tokens,
            tokens_estimated: r.tokens_estimated,
            cost_usd: r.cost_usd,
            attempts: r.attempts,
            cache_hit: r.cache_hit,
            response_format: r
                .response_format
                .map(|f| f.as_str().to_string())
                .unwrap_or_default(),
            http_status: r.http_status,
            error: r.error.clone().unwrap_or_default(),
        }
    }
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

fn generate_request(prompts: &PromptSet, s: &JudgeSettings, job: &Job) -> ChatRequest {
    let text = prompts.render(
        PromptKind::Generate,
        &[("question", &job.question), ("context", &job.context)],
    );
    request(&s.generator_model, text, s.max_tokens, s)
}

fn judge_request(
    prompts: &PromptSet,
    s: &JudgeSettings,
    job: &Job,
    c: Criterion,
    answer: &str,
) -> ChatRequest {
    let reference = job.reference.as_deref().unwrap_or("");
    let values = [
        ("question", job.question.as_str()),
        ("context", job.context.as_str()),
        ("answer", answer),
        ("reference", reference),
    ];
    let kind = match c {
        Criterion::Faithfulness => PromptKind::Faithfulness,
        Criterion::Relevancy => PromptKind::Relevancy,
        Criterion::Correctness => PromptKind::Correctness,
    };
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
    client: &LlmClient,
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
        for c in criteria(job) {
            e.calls += 1;
            let r = judge_request(prompts, s, job, c, &placeholder_answer);
            jud_p += estimate_chat_prompt_tokens(&r.messages) + schema_tokens;
            jud_c += u64::from(s.judge_max_tokens);
        }
    }
    e.prompt_tokens = gen_p + jud_p;
    e.completion_tokens = gen_c + jud_c;
    let cfg = client.config();
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

/// Runs one job: generate, then grade every criterion concurrently.
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
        Err(e) if is_final(&e) => {
            records.extend(last_record(&client, &gen_tag));
            (String::new(), Some(e.to_string()))
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
            graded.insert(c, (Verdict::Error, format!("no answer to grade: {why}")));
        }
    } else {
        let mut set = JoinSet::new();
        for c in criteria(&job) {
            let req = judge_request(&prompts, &s, &job, c, &answer);
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
    let errors = [f, r, c].iter().filter(|v| **v == Verdict::Error).count() as u32
        + u32::from(gen_error.is_some());
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
        cost_usd: cost,
    })
}

/// The result of [`run_judge`].
#[derive(Debug, Clone)]
pub struct JudgeRun {
    /// Every finished row (from earlier runs of the folder and this one), in candidate order,
    /// then golden-set order.
    pub rows: Vec<JudgeQuestionRow>,
    /// Rows that were already in the run folder when this run started.
    pub resumed: usize,
    /// Questions left unfinished by a transient failure: (config id, question id, error).
    pub unfinished: Vec<(String, String, String)>,
    /// Questions not started because the budget would have been passed.
    pub skipped_for_budget: usize,
    /// Money actually spent by this run, in USD (cache hits cost nothing).
    pub spent_usd: f64,
}

impl JudgeRun {
    /// Whether every planned question has a row.
    pub fn is_complete(&self) -> bool {
        self.unfinished.is_empty() && self.skipped_for_budget == 0
    }
}

/// judge_questions.csv in `dir`.
pub fn questions_path(dir: &Path) -> PathBuf {
    dir.join(files::JUDGE_QUESTIONS)
}

/// Reads the finished rows of a run folder's judge_questions.csv, dropping a torn last line (a
/// run killed mid-write), and rewrites the file with exactly those rows.
///
/// # Errors
/// [`JudgeError::Io`] if the file exists but cannot be read or rewritten.
pub fn load_finished(dir: &Path) -> Result<Vec<JudgeQuestionRow>, JudgeError> {
    let path = questions_path(dir);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = std::fs::read(&path).map_err(|e| JudgeError::io(&path, e))?;
    let mut rows = Vec::new();
    let mut reader = csv::Reader::from_reader(text.as_slice());
    let complete = text.ends_with(b"\n");
    let records: Vec<_> = reader.deserialize::<JudgeQuestionRow>().collect();
    let n = records.len();
    for (i, rec) in records.into_iter().enumerate() {
        match rec {
            Ok(row) if complete || i + 1 < n => rows.push(row),
            _ => break,
        }
    }
    let mut w = csv::Writer::from_path(&path).map_err(|e| JudgeError::csv(&path, e))?;
    for r in &rows {
        w.serialize(r).map_err(|e| JudgeError::csv(&path, e))?;
    }
    w.flush().map_err(|e| JudgeError::io(&path, e))?;
    Ok(rows)
}

/// Appends rows to a CSV file, writing the header only if the file is empty; flushes each row.
pub(crate) struct Appender {
    path: PathBuf,
    writer: csv::Writer<File>,
}

impl Appender {
    pub(crate) fn open(path: &Path) -> Result<Self, JudgeError> {
        let fresh = std::fs::metadata(path)
            .map(|m| m.len() == 0)
            .unwrap_or(true);
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| JudgeError::io(path, e))?;
        let writer = csv::WriterBuilder::new()
            .has_headers(fresh)
            .from_writer(file);
        Ok(Appender {
            path: path.to_path_buf(),
            writer,
        })
    }

    pub(crate) fn append<T: Serialize>(&mut self, row: &T) -> Result<(), JudgeError> {
        self.writer
            .serialize(row)
            .map_err(|e| JudgeError::csv(&self.path, e))?;
        self.writer
            .flush()
            .map_err(|e| JudgeError::io(&self.path, e))
    }
}

/// Runs every job not yet in `dir/judge_questions.csv`, at most `settings.concurrency` questions
/// at a time, appending each finished row (flushed) and every call to `dir/calls.csv`. Stops
/// starting questions when the spend so far plus the estimate of what is running and of the
/// next question would pass `settings.max_cost_usd`. At the end judge_questions.csv is rewritten
/// in candidate order, then golden-set order, so equal inputs give equal files.
///
/// # Errors
/// [`JudgeError::Io`]/[`JudgeError::Csv`] for the run files. Failed calls are not errors here:
/// see [`JudgeRun::unfinished`].
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
    let mut calls_out = Appender::open(&dir.join(files::CALLS))?;
    let mut calls_rx = client.subscribe();

    let todo: Vec<usize> = (0..jobs.len())
        .filter(|&i| !done_keys.contains(&(jobs[i].config_id.clone(), jobs[i].question_id.clone())))
        .collect();
    let sem = Arc::new(Semaphore::new(settings.concurrency.max(1)));
    let mut set: JoinSet<(usize, Result<JudgeQuestionRow, LlmError>)> = JoinSet::new();
    let mut new_rows: Vec<Finished> = Vec::new();
    let mut unfinished = Vec::new();
    let mut spent = 0.0f64;
    let mut running_estimate: BTreeMap<usize, f64> = BTreeMap::new();
    let mut skipped = 0usize;
    let mut next = 0usize;

    let drain = |rx: &mut tokio::sync::mpsc::UnboundedReceiver<CallRecord>,
                 out: &mut Appender,
                 spent: &mut f64|
     -> Result<(), JudgeError> {
        while let Ok(rec) = rx.try_recv() {
            *spent += rec.cost_usd.unwrap_or(0.0);
            out.append(&CallRow::from(&rec))?;
            events(RunEvent::Advanced {
                step: Step::Judge,
                label: rec.stage.replace(TAG_SEP, " "),
                cost_usd: rec.cost_usd,
                cached: rec.cache_hit,
            });
        }
        Ok(())
    };

    loop {
        // start as many jobs as permits and the budget allow
        while next < todo.len() && skipped == 0 {
            let Ok(permit) = Arc::clone(&sem).try_acquire_owned() else {
                break;
            };
            let ji = todo[next];
            let job = &jobs[ji];
            if let Some(max) = settings.max_cost_usd {
                let est = estimate(std::slice::from_ref(job), &prompts, &settings, client)
                    .cost_usd
                    .unwrap_or(0.0);
                let committed: f64 = running_estimate.values().sum();
                if spent + committed + est > max {
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
        let Some(joined) = set.join_next().await else {
            break;
        };
        let (ji, res) = joined.expect("judge task does not panic");
        running_estimate.remove(&ji);
        drain(&mut calls_rx, &mut calls_out, &mut spent)?;
        match res {
            Ok(row) => {
                rows_out.append(&row)?;
                new_rows.push(Finished { row, job_index: ji });
            }
            Err(e) => {
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
    drain(&mut calls_rx, &mut calls_out, &mut spent)?;
    drop(rows_out);

    // canonical order: the job order (candidate, then question)
    let order: BTreeMap<(String, String), usize> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| ((j.config_id.clone(), j.question_id.clone()), i))
        .collect();
    let mut all: Vec<(usize, JudgeQuestionRow)> = done
        .into_iter()
        .filter_map(|r| {
            order
                .get(&(r.config_id.clone(), r.question_id.clone()))
                .map(|&i| (i, r))
        })
        .chain(new_rows.into_iter().map(|f| (f.job_index, f.row)))
        .collect();
    all.sort_by_key(|(i, _)| *i);
    let rows: Vec<JudgeQuestionRow> = all.into_iter().map(|(_, r)| r).collect();
    let path = questions_path(dir);
    let tmp = dir.join(format!("{}.tmp", files::JUDGE_QUESTIONS));
    crate::table::write_rows(&tmp, &rows).map_err(|source| JudgeError::Csv {
        path: tmp.clone(),
        source,
    })?;
    std::fs::rename(&tmp, &path).map_err(|e| JudgeError::io(&path, e))?;
    Ok(JudgeRun {
        rows,
        resumed,
        unfinished,
        skipped_for_budget: skipped,
        spent_usd: spent,
    })
}
