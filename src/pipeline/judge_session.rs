//! The judge session of the three commands that ask a judge (`run`, `check --judge`,
//! `judge-check`), set up one way: the client, its batch mode, the `--max-cost` refusal, the
//! judge's fingerprint in the run folder, and the announcement of what is about to be sent.

use std::path::Path;

use super::batching;
use crate::budget::{self, CostEstimate};
use crate::error::Error;
use crate::events::{Events, RunEvent, Step};
use crate::files;
use crate::judge::{self, Fingerprint, JudgeError, JudgeSettings};
use crate::llm::{ClientConfig, LlmClient};
use crate::report::run_dir::RunDir;

/// Refuses a judge stage's estimate `est` under `settings.max_cost_usd` when it has no price,
/// or when it plus `spent` USD passes the budget ([`budget::refusal`]); `sweep` USD of `spent`
/// is the sweep's, named in the message.
///
/// # Errors
/// [`JudgeError::Unpriced`] or [`JudgeError::OverBudget`].
pub(super) fn refuse_run(
    settings: &JudgeSettings,
    est: &CostEstimate,
    spent: f64,
    sweep: f64,
) -> Result<(), JudgeError> {
    match budget::refusal(settings.max_cost_usd, est, spent) {
        Some(r) => Err(JudgeError::over_budget(
            r,
            &format!("{} and {}", settings.generator_model, settings.judge_model),
            sweep,
        )),
        None => Ok(()),
    }
}

/// [`refuse_run`] with the spend already recorded in the run folder `dir` (read only under a
/// budget).
///
/// # Errors
/// As [`refuse_run`]; [`JudgeError`] when calls.csv cannot be read.
pub(super) fn refuse_run_in(
    settings: &JudgeSettings,
    est: &CostEstimate,
    dir: &Path,
) -> Result<(), Error> {
    let (judged, sweep) = match settings.max_cost_usd {
        Some(_) => (judge::judge_spend(dir)?, judge::sweep_spend(dir)?),
        None => (0.0, 0.0),
    };
    Ok(refuse_run(settings, est, judged + sweep, sweep)?)
}

/// Refuses a judge-check whose estimate passes `--max-cost`, or that has a budget and no price
/// for the judge model, before anything is sent (judge-check's folder holds no earlier spend:
/// its calls.csv is its own).
///
/// # Errors
/// [`JudgeError::Unpriced`] or [`JudgeError::CheckOverBudget`].
pub(super) fn refuse_check(settings: &JudgeSettings, est: &CostEstimate) -> Result<(), JudgeError> {
    match budget::refusal(settings.max_cost_usd, est, 0.0) {
        Some(r) => Err(JudgeError::check_over_budget(r, &settings.judge_model)),
        None => Ok(()),
    }
}

/// How the budget of a session is held.
pub(super) enum Budget {
    /// Refuse the estimate plus the spend recorded in the run folder ([`refuse_run_in`]).
    WithRecordedSpend,
    /// The caller refused it already, before the run folder was made ([`refuse_check`]).
    Checked,
}

/// What a judge session is about to send.
pub(super) struct Session<'a> {
    /// The client's settings (batch mode included).
    pub llm: &'a ClientConfig,
    /// The judge's settings.
    pub settings: &'a JudgeSettings,
    /// What is left to ask.
    pub estimate: &'a CostEstimate,
    /// How `--max-cost` is held.
    pub budget: Budget,
    /// The judge's fingerprint, checked against the folder's judge_settings.json and stored
    /// there (`None`: the folder keeps none, as judge-check's).
    pub fingerprint: Option<&'a Fingerprint>,
    /// Whether answers are generated (the announcement then names the generator too, and the
    /// judge step's progress starts).
    pub generates: bool,
    /// The announcement's start: `judging 3 candidate(s) on 40 question(s), …`.
    pub what: String,
}

/// Opens the session in the run folder `dir`: builds the client, puts it in batch mode when
/// `[llm] batch` is on, holds the budget, checks and stores the fingerprint, and announces the
/// server, the models and the estimate ([`RunEvent::Note`]); a session that generates also
/// starts the judge step's progress.
///
/// # Errors
/// [`JudgeError`] for a client that cannot be built, a batches.json that cannot be read, a
/// budget the estimate passes or that has no prices, or settings that changed since the folder's
/// judge_settings.json.
pub(super) async fn open(
    s: Session<'_>,
    dir: &mut RunDir,
    events: Events<'_>,
) -> Result<LlmClient, Error> {
    let client = LlmClient::new(s.llm.clone()).map_err(JudgeError::from)?;
    let batch = s.llm.batch.estimate_note();
    if s.llm.batch.enabled {
        batching::start(s.llm, &client, dir, events).await?;
    }
    if let Budget::WithRecordedSpend = s.budget {
        refuse_run_in(s.settings, s.estimate, dir.path())?;
    }
    if let Some(f) = s.fingerprint {
        f.check_and_store(dir.path())?;
        dir.record(files::JUDGE_SETTINGS);
    }
    let generator = s.generates.then_some(s.settings.generator_model.as_str());
    events(RunEvent::Note(format!(
        "{}: {}{}",
        s.what,
        judge::estimate_line(
            s.estimate,
            client.base_url(),
            generator,
            &s.settings.judge_model
        ),
        batch.map(|b| format!("; {b}")).unwrap_or_default()
    )));
    if s.generates {
        events(RunEvent::Started {
            step: Step::Judge,
            total: s.estimate.calls as u64,
        });
    }
    Ok(client)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One cap for the whole run: the judge stage's estimate is refused when it, plus the
    /// judge's earlier spend (calls.csv) and the sweep's (its call files), passes `--max-cost`.
    #[test]
    fn the_judge_stage_counts_the_sweeps_spend_against_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let header = "stage,kind,model,request_key,cost_usd,cache_hit,error\n";
        let write = |name: &str, cost: &str| {
            std::fs::write(
                dir.path().join(name),
                format!("{header}s,k,m,key,{cost},false,\n"),
            )
            .unwrap();
        };
        write(files::CALLS, "0.5");
        write(files::EMBED_CALLS, "0.25");
        write(files::RERANK_CALLS, "0.5");
        let settings = JudgeSettings {
            max_cost_usd: Some(2.0),
            ..JudgeSettings::default()
        };
        let est = |c: f64| CostEstimate {
            calls: 3,
            cost_usd: Some(c),
            ..CostEstimate::default()
        };
        assert!(refuse_run_in(&settings, &est(0.75), dir.path()).is_ok());
        let e = refuse_run_in(&settings, &est(0.8), dir.path()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the judge stage is estimated at $0.8000, and $1.2500 is already spent in this folder: more than --max-cost $2.0000; the sweep spent $0.7500 of it; the judge stage sent nothing (raise --max-cost, or use fewer candidates or questions)"
        );
        assert_eq!(e.exit_class(), crate::exit::ExitClass::Usage);
    }
}
