//! Probes: verdicts asked to measure the judge rather than the answers: planted controls and
//! repeats in a run ([`super::controls`]), labelled items in `chunksweep judge-check`
//! ([`super::labels`]). They go through the same prompts, model, cache and cost accounting as
//! every other verdict, and never enter a pass rate. A run keeps them in judge_checks.csv.

use std::path::Path;
use std::sync::Arc;

use super::asking::Ask;
use super::criteria;
use super::error::JudgeError;
use super::journal::CallLog;
use super::pipeline::{records_cost, schema_tokens};
use super::prompts::PromptSet;
use super::rows::tag;
use super::settings::JudgeSettings;
use super::verdict::Verdict;
use super::work::{DriveLimits, drive};
use crate::budget::CostEstimate;
use crate::events::Events;
use crate::llm::cost::{estimate_chat_prompt_tokens, planned_cost_usd};
use crate::llm::{ClientConfig, LlmClient};
use serde::{Deserialize, Serialize};

/// How the reason of an item left unasked by the budget starts.
pub const NOT_STARTED_FOR_BUDGET: &str = "not started: --max-cost";

/// One verdict to ask, with the verdict it should get when that is known.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// What the item is: a control kind ([`super::controls::ControlKind::name`]), `repeat`, or
    /// `label` (judge-check).
    pub kind: String,
    /// Configuration whose answer or context is used (empty for labelled items).
    pub config_id: String,
    /// The item's id: the question graded (or the labelled item's id).
    pub item_id: String,
    /// The other question whose context, answer or reference was planted (empty if none).
    pub other_id: String,
    /// Name of the criterion graded (one of the settings' criteria).
    pub criterion: String,
    /// The question.
    pub question: String,
    /// The context, fenced ([`super::prompts::fence_context`]).
    pub context: String,
    /// The answer graded.
    pub answer: String,
    /// The reference answer (empty if none).
    pub reference: String,
    /// The right verdict (pass = `true`), when known; for a repeat, the first verdict.
    pub expected: Option<bool>,
    /// Added to the settings' seed (a repeat asks again with another seed; 0 otherwise).
    pub seed_offset: i64,
}

impl Probe {
    /// The one call that asks this item's verdict in the settings' mode.
    ///
    /// # Panics
    /// If the item's criterion is not one of the settings' (items are built from them).
    fn ask(&self, s: &JudgeSettings) -> Ask {
        let c = criteria::find(&s.criteria, &self.criterion).expect("a criterion of the run");
        Ask::plan(s.mode, &s.criteria, vec![c]).remove(0)
    }

    fn request(
        &self,
        ask: &Ask,
        prompts: &PromptSet,
        s: &JudgeSettings,
    ) -> crate::llm::ChatRequest {
        let mut r = ask.request(
            prompts,
            s,
            [&self.question, &self.context, &self.answer, &self.reference],
        );
        if self.seed_offset != 0 {
            r.seed = Some(s.seed.unwrap_or(0) + self.seed_offset);
        }
        r
    }

    /// The call tag: `<kind>-<criterion>␟<config_id>␟<item_id>[/<other_id>]`.
    fn tag(&self) -> String {
        let id = if self.other_id.is_empty() {
            self.item_id.clone()
        } else {
            format!("{}/{}", self.item_id, self.other_id)
        };
        tag(
            &format!("{}-{}", self.kind, self.criterion),
            &self.config_id,
            &id,
        )
    }
}

/// One asked verdict: a row of judge_checks.csv (run) or judge_check_items.csv (judge-check).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRow {
    /// See [`Probe::kind`].
    pub kind: String,
    /// Criterion name.
    pub criterion: String,
    /// See [`Probe::config_id`].
    pub config_id: String,
    /// See [`Probe::item_id`].
    pub item_id: String,
    /// See [`Probe::other_id`].
    pub other_id: String,
    /// `pass`, `fail`, or empty when unknown.
    pub expected: String,
    /// The judge's `pass`, `fail` or `error`.
    pub verdict: String,
    /// The judge's reason, or why the verdict is an error.
    pub reason: String,
    /// Calls made (one, two with the format reminder).
    pub calls: u32,
    /// Prompt tokens of those calls.
    pub prompt_tokens: u64,
    /// Completion tokens of those calls.
    pub completion_tokens: u64,
    /// Cost at list price, USD; empty when the judge model has no price.
    pub cost_usd: Option<f64>,
}

impl ProbeRow {
    /// `(expected, said)` when both are pass or fail.
    pub fn pair(&self) -> Option<(bool, bool)> {
        let e = Verdict::parse(&self.expected)?.outcome()?;
        let s = Verdict::parse(&self.verdict)?.outcome()?;
        Some((e, s))
    }

    /// Whether the item was left unasked because the budget would have been passed.
    pub fn not_started_for_budget(&self) -> bool {
        self.verdict == Verdict::Error.as_str() && self.reason.starts_with(NOT_STARTED_FOR_BUDGET)
    }

    /// Whether the item is unfinished: an `error` with no reply from the judge behind it (its
    /// call failed for good at the server or in transport, or it was not started). A rerun with
    /// the same `--out` asks it again; an unreadable reply (an `error` with calls) is the judge's.
    pub fn unfinished(&self) -> bool {
        self.verdict == Verdict::Error.as_str() && self.calls == 0
    }

    /// `(verdict, reason)` when the verdict is pass or fail (pass = `true`), for
    /// [`super::parroting::Parroting::of`].
    pub fn reply(&self) -> Option<(bool, &str)> {
        let v = Verdict::parse(&self.verdict)?.outcome()?;
        Some((v, self.reason.as_str()))
    }
}

fn outcome_str(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "pass",
        Some(false) => "fail",
        None => "",
    }
}

/// Calls, tokens and cost of `items` (one verdict call each, completion at the cap).
pub fn estimate_probes(
    items: &[Probe],
    prompts: &PromptSet,
    s: &JudgeSettings,
    cfg: &ClientConfig,
) -> CostEstimate {
    let schema_tokens = schema_tokens();
    let prompt_tokens: u64 = items
        .iter()
        .map(|i| {
            let r = i.request(&i.ask(s), prompts, s);
            estimate_chat_prompt_tokens(&r.messages) + schema_tokens
        })
        .sum();
    let completion_tokens = items.len() as u64 * u64::from(s.judge_max_tokens);
    CostEstimate {
        calls: items.len(),
        prompt_tokens,
        completion_tokens,
        cost_usd: planned_cost_usd(cfg, &s.judge_model, prompt_tokens, completion_tokens),
    }
}

/// Asks every item's verdict through the job loop ([`super::work`]), `settings.concurrency` at a
/// time, in item order in the result. A call that fails for good (retries exhausted) is an
/// `error` row with the failure as its reason; a rerun asks it again (finished calls come from
/// the response cache). With `dir`, every call is appended to `dir/calls.csv` ([`CallLog`]), so
/// the run's spend includes them. With `budget` (USD), no item is started once the spend
/// recorded in calls.csv plus the estimates of the items running and of the next one would pass
/// it: the items left are `error` rows whose reason starts with [`NOT_STARTED_FOR_BUDGET`].
///
/// # Errors
/// [`JudgeError::Stopped`] after an authentication or unknown-model error (no item is started
/// after it); [`JudgeError::Io`]/[`JudgeError::Csv`] for calls.csv.
pub async fn run_probes(
    items: &[Probe],
    prompts: Arc<PromptSet>,
    settings: Arc<JudgeSettings>,
    client: &LlmClient,
    dir: Option<&Path>,
    budget: Option<f64>,
    events: Events<'_>,
) -> Result<Vec<ProbeRow>, JudgeError> {
    let mut log = dir.map(CallLog::open).transpose()?;
    let cost = |i: usize| {
        estimate_probes(
            std::slice::from_ref(&items[i]),
            &prompts,
            &settings,
            client.config(),
        )
        .cost_usd
        .unwrap_or(0.0)
    };
    let limits = DriveLimits::new(settings.concurrency, budget, &cost);
    let start = |i: usize| {
        let item = &items[i];
        let ask = item.ask(&settings);
        let req = item.request(&ask, &prompts, &settings);
        let (client, t) = (client.clone(), item.tag());
        async move {
            let mut graded = ask.grade(&client, &t, req).await?;
            Ok(graded.remove(0).1)
        }
    };
    let all: Vec<usize> = (0..items.len()).collect();
    let ended = drive(
        &all,
        &limits,
        client,
        &mut log,
        events,
        start,
        |_, _| Ok(()),
    )
    .await?;
    let rows: Vec<ProbeRow> = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let (verdict, reason, records) = match ended.results.get(&i) {
                Some(Ok(g)) => (g.verdict, g.reason.clone(), g.records.clone()),
                Some(Err(e)) => (Verdict::Error, e.to_string(), Vec::new()),
                None if ended.stopped.is_none() && ended.skipped > 0 => (
                    Verdict::Error,
                    format!(
                        "{NOT_STARTED_FOR_BUDGET} ${:.4} would have been passed (raise it and run again)",
                        budget.unwrap_or(0.0)
                    ),
                    Vec::new(),
                ),
                None => (
                    Verdict::Error,
                    "not started: the run stopped".into(),
                    Vec::new(),
                ),
            };
            ProbeRow {
                kind: item.kind.clone(),
                criterion: item.criterion.clone(),
                config_id: item.config_id.clone(),
                item_id: item.item_id.clone(),
                other_id: item.other_id.clone(),
                expected: outcome_str(item.expected).into(),
                verdict: verdict.as_str().into(),
                reason,
                calls: records.len() as u32,
                prompt_tokens: records.iter().map(|r| r.prompt_tokens).sum(),
                completion_tokens: records.iter().map(|r| r.completion_tokens).sum(),
                cost_usd: records_cost(client, &records),
            }
        })
        .collect();
    if let Some(source) = ended.stopped {
        let not_run = rows.iter().filter(|r| r.verdict == "error").count();
        return Err(JudgeError::Stopped { source, not_run });
    }
    Ok(rows)
}

/// Reads `dir/judge_checks.csv`; empty when the folder has none.
///
/// # Errors
/// [`JudgeError::Csv`] when it exists but cannot be read.
pub fn load_probes(dir: &Path) -> Result<Vec<ProbeRow>, JudgeError> {
    let path = dir.join(crate::files::JUDGE_CHECKS);
    if !path.exists() {
        return Ok(Vec::new());
    }
    csv::Reader::from_path(&path)
        .map_err(|e| JudgeError::csv(&path, e))?
        .deserialize::<ProbeRow>()
        .map(|r| r.map_err(|e| JudgeError::csv(&path, e)))
        .collect()
}

/// A planted-control or repeat row of configuration `A`, item `q`: `kind`, `criterion`, the
/// `expected` verdict and the judge's `verdict`, one call and no tokens, for tests.
#[cfg(test)]
pub(crate) fn test_probe(kind: &str, criterion: &str, expected: &str, verdict: &str) -> ProbeRow {
    ProbeRow {
        kind: kind.into(),
        criterion: criterion.into(),
        config_id: "A".into(),
        item_id: "q".into(),
        other_id: String::new(),
        expected: expected.into(),
        verdict: verdict.into(),
        reason: String::new(),
        calls: 1,
        prompt_tokens: 0,
        completion_tokens: 0,
        cost_usd: None,
    }
}
