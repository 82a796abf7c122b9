//! The judge stage's one job loop, for `run` (candidate × question jobs) and for controls,
//! repeats and `judge-check` (one verdict each): at most `concurrency` jobs at a time, every call
//! written to calls.csv as it ends, the budget checked before each job starts, and an
//! authentication failure or an unknown model stopping the loop (no job started after it, the
//! jobs in flight end).
//!
//! In batch mode (`run --batch`, [`crate::llm::batch`]) a job whose call went into the next batch
//! ends with [`LlmError::Deferred`]: it is not ended but kept, and when every job of the round
//! has ended, the waiting calls are sent as batches and the waiting jobs run again, until no job
//! waits. The rounds follow the jobs' own order of calls: all generations, then all verdicts,
//! then format reminders.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::error::JudgeError;
use super::journal::CallLog;
use super::rows::TAG_SEP;
use crate::events::{Events, RunEvent, Step};
use crate::llm::batch::BatchProgress;
use crate::llm::{CallRecord, LlmClient, LlmError};

/// How the loop runs.
pub(crate) struct DriveLimits<'a> {
    /// Jobs in progress at once (at least 1).
    pub concurrency: usize,
    /// The spending cap (`--max-cost`), if any.
    pub budget: Option<SpendCap<'a>>,
}

/// Stop starting jobs when the spend recorded in calls.csv plus the estimates of the jobs
/// running and of the next one would pass `max_usd`.
pub(crate) struct SpendCap<'a> {
    /// The cap, USD.
    pub max_usd: f64,
    /// Job `i`'s estimated cost, USD.
    pub cost_of: &'a (dyn Fn(usize) -> f64 + Sync),
}

impl<'a> DriveLimits<'a> {
    /// `concurrency` jobs at once under the cap `max_usd` (none: no cap), job `i` estimated at
    /// `cost_of(i)`.
    pub fn new(
        concurrency: usize,
        max_usd: Option<f64>,
        cost_of: &'a (dyn Fn(usize) -> f64 + Sync),
    ) -> Self {
        DriveLimits {
            concurrency,
            budget: max_usd.map(|max_usd| SpendCap { max_usd, cost_of }),
        }
    }
}

/// What the loop did.
pub(crate) struct Ended<T> {
    /// Each job that ran, by index: its result.
    pub results: BTreeMap<usize, Result<T, LlmError>>,
    /// Jobs not started because the budget would have been passed.
    pub skipped: usize,
    /// The authentication or unknown-model error that stopped the loop.
    pub stopped: Option<LlmError>,
}

/// Runs `jobs` (indices of the caller's jobs; `start(i)` makes job `i`'s future) under `limits`,
/// writing every call of `client` to `calls` as it ends and reporting it to `events`; `ended`
/// is told of each job as it ends (before the next one is waited for).
///
/// # Errors
/// What `ended` or writing calls.csv returns.
pub(crate) async fn drive<T, Fut>(
    jobs: &[usize],
    limits: &DriveLimits<'_>,
    client: &LlmClient,
    calls: &mut Option<CallLog>,
    events: Events<'_>,
    start: impl Fn(usize) -> Fut,
    mut ended: impl FnMut(usize, &Result<T, LlmError>) -> Result<(), JudgeError>,
) -> Result<Ended<T>, JudgeError>
where
    T: Send + 'static,
    Fut: Future<Output = Result<T, LlmError>> + Send + 'static,
{
    let mut calls_rx = client.subscribe();
    let sem = Arc::new(Semaphore::new(limits.concurrency.max(1)));
    let mut set: JoinSet<(usize, Result<T, LlmError>)> = JoinSet::new();
    let mut running: BTreeMap<usize, f64> = BTreeMap::new();
    let mut out = Ended {
        results: BTreeMap::new(),
        skipped: 0,
        stopped: None,
    };
    let mut next = 0usize;
    let mut queue: Vec<usize> = jobs.to_vec();
    // batch mode: jobs whose calls wait for the next batch
    let mut waiting: Vec<usize> = Vec::new();
    let record = |calls: &mut Option<CallLog>, rec: &CallRecord| -> Result<(), JudgeError> {
        if let Some(log) = calls.as_mut() {
            log.record(rec)?;
        }
        call_event(events, rec);
        Ok(())
    };
    loop {
        // start as many jobs as permits and the budget allow
        while next < queue.len() && out.skipped == 0 && out.stopped.is_none() {
            let Ok(permit) = Arc::clone(&sem).try_acquire_owned() else {
                break;
            };
            let i = queue[next];
            if let Some(cap) = &limits.budget {
                let est = (cap.cost_of)(i);
                let spent = calls.as_ref().map_or(0.0, CallLog::spent_total);
                if spent + running.values().sum::<f64>() + est > cap.max_usd {
                    out.skipped = queue.len() - next;
                    break;
                }
                running.insert(i, est);
            }
            next += 1;
            let fut = start(i);
            set.spawn(async move {
                let r = fut.await;
                drop(permit);
                (i, r)
            });
        }
        // wait for the next job to end, writing every call to calls.csv as it ends
        let joined = loop {
            tokio::select! {
                biased;
                Some(rec) = calls_rx.recv() => record(calls, &rec)?,
                joined = set.join_next() => break joined,
            }
        };
        let Some(joined) = joined else {
            if !waiting.is_empty() && out.stopped.is_none() && send_batches(client, events).await {
                queue = std::mem::take(&mut waiting);
                next = 0;
                continue;
            }
            for i in std::mem::take(&mut waiting) {
                let res = Err(LlmError::Deferred);
                ended(i, &res)?;
                out.results.insert(i, res);
            }
            break;
        };
        let (i, res) = joined.expect("judge task does not panic");
        running.remove(&i);
        while let Ok(rec) = calls_rx.try_recv() {
            record(calls, &rec)?;
        }
        if let Err(LlmError::Deferred) = &res {
            waiting.push(i);
            continue;
        }
        if let Err(e) = &res
            && e.stops_run()
            && out.stopped.is_none()
        {
            out.stopped = Some(e.clone());
        }
        ended(i, &res)?;
        out.results.insert(i, res);
    }
    while let Ok(rec) = calls_rx.try_recv() {
        record(calls, &rec)?;
    }
    if let Err(e) = client.settle_batches() {
        events(RunEvent::Warning(format!(
            "{e} (the next run reads those batches again)"
        )));
    }
    Ok(out)
}

/// Sends the calls waiting for a batch and waits for the answers, reporting each poll;
/// whether any call was waiting. A batch that cannot be submitted or read leaves its calls
/// unfinished, with a warning.
async fn send_batches(client: &LlmClient, events: Events<'_>) -> bool {
    let progress = |p: &BatchProgress| events(RunEvent::Note(progress_line(p)));
    match client.flush_batches(&progress).await {
        Ok(n) => n > 0,
        Err(e) => {
            events(RunEvent::Warning(format!(
                "{e}; the calls waiting for it are left unfinished"
            )));
            true
        }
    }
}

/// One poll of a batch, for the display: `batch batch_abc (gpt-4o-mini): in_progress, 120/400
/// answered, 2 failed, 95 s since it was submitted`.
fn progress_line(p: &BatchProgress) -> String {
    format!(
        "batch {} ({}): {}, {}/{} answered, {} failed, {:.0} s since it was submitted",
        p.batch_id,
        p.model,
        p.status,
        p.counts.completed,
        p.counts.total,
        p.counts.failed,
        p.elapsed_s
    )
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
