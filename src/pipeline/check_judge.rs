//! `check --judge`: the baseline's judged answers for its pick (judge_questions.csv), what its
//! planted controls (judge_checks.csv) say of its judge, and the same questions judged again for
//! the chunker under test through the same client and cache, into the check's run folder
//! (judge_questions.csv, calls.csv, judge_settings.json: resumable as `run` is). The gate itself
//! is [`crate::check::judged`].
//!
//! Nothing is sent when no criterion can gate: the judge is not the one the baseline's controls
//! measured (other models, prompts, caps, seed or mode), the controls were off, or they showed
//! a judge that cannot tell a failing answer from a passing one.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use super::batching;
use super::judge_step::check_budget;
use super::swept::Swept;
use crate::check::CheckError;
use crate::check::judged::{self, JudgeGate};
use crate::error::Error;
use crate::events::{Events, RunEvent, Step};
use crate::files;
use crate::golden::GoldenSet;
use crate::judge::check::{CheckRow, load_checks};
use crate::judge::trust::trust;
use crate::judge::{
    self, Fingerprint, Finished, JudgeError, JudgeQuestionRow, JudgeSettings, PromptSet, Setup,
};
use crate::llm::LlmClient;
use crate::llm::config::redact_url;
use crate::plan::Plan;
use crate::report::run_dir::RunDir;
use crate::sweep::grid::ConfigCut;

/// What the baseline's judge stage left: its criteria, its rows for its pick, its planted
/// controls and repeats, the judge they measured and the settings it ran with.
pub(super) struct BaselineJudge {
    criteria: Vec<String>,
    rows: Vec<JudgeQuestionRow>,
    checks: Vec<CheckRow>,
    fingerprint: Option<Fingerprint>,
    settings: JudgeSettings,
}

impl BaselineJudge {
    /// Reads the judge stage of the baseline folder `dir` for its pick `pick_id`; `settings` are
    /// the `[judge]` settings its manifest records.
    ///
    /// # Errors
    /// [`CheckError::NoJudgedAnswers`] (exit 2) when judge_questions.csv is missing or has no
    /// row of the pick; [`JudgeError`] for files that cannot be read.
    pub(super) fn open(
        dir: &Path,
        pick_id: &str,
        settings: &JudgeSettings,
    ) -> Result<BaselineJudge, Error> {
        let Finished { criteria, rows } = judge::load_finished(dir)?;
        let rows: Vec<JudgeQuestionRow> = rows
            .into_iter()
            .filter(|r| r.config_id == pick_id)
            .collect();
        if rows.is_empty() {
            return Err(CheckError::NoJudgedAnswers {
                path: dir.join(files::JUDGE_QUESTIONS).display().to_string(),
                config_id: pick_id.to_string(),
            }
            .into());
        }
        Ok(BaselineJudge {
            criteria,
            rows,
            checks: load_checks(dir)?,
            fingerprint: Fingerprint::load(dir)?,
            settings: settings.clone(),
        })
    }

    /// Per criterion, `None` when its verdicts can gate, else why not
    /// ([`judged::standing`]): what its planted controls say of the judge they measured, and
    /// whether the judge `now` is that judge.
    fn standing(&self, now: &Fingerprint) -> Vec<(String, Option<String>)> {
        let changed = match &self.fingerprint {
            Some(before) => {
                let what = before.differences(now);
                (!what.is_empty()).then(|| format!("{} changed", what.join(", ")))
            }
            None => Some(format!("the baseline has no {}", files::JUDGE_SETTINGS)),
        };
        let measured = trust(
            &self.checks,
            &self.criteria,
            self.settings.min_control_tnr,
            self.settings.min_repeat_kappa,
        );
        judged::standing(
            &self.criteria,
            &measured,
            self.settings.controls,
            changed.as_deref(),
        )
    }
}

/// What [`judge`] did: the gate, and, when anything was judged, what the manifest records of it.
pub(super) struct Judged {
    /// The answer-quality gate.
    pub gate: JudgeGate,
    /// SHA-256 of each prompt template used, by file name (`None`: nothing was judged).
    pub prompt_sha256: Option<BTreeMap<String, String>>,
    /// The server the calls went to, credentials redacted.
    pub server: String,
}

/// Judges `candidate` on the questions of `shared` (unchanged since the baseline, golden-set
/// order) that the baseline judged for its pick, with `plan`'s judge settings and client,
/// resuming from the rows already in `dir`, and gates at one-sided level `alpha`.
///
/// # Errors
/// [`JudgeError`] for prompts, a budget the estimate passes (or unpriced under a budget), run
/// files, a client that cannot be built, a server that refuses the key or the model; the
/// sweep's errors when the candidate cannot be retrieved with.
pub(super) async fn judge(
    plan: &Plan,
    swept: &Swept,
    (candidate, shared): (&ConfigCut, &[String]),
    baseline: &BaselineJudge,
    alpha: f64,
    dir: &mut RunDir,
    events: Events<'_>,
) -> Result<Judged, Error> {
    let settings = &plan.judge;
    let server = redact_url(&plan.llm.resolved_base_url());
    let prompts = PromptSet::load_or_defaults(settings.prompts_dir.as_deref(), &settings.criteria)
        .map_err(JudgeError::from)?;
    let now = Fingerprint::new(settings, &prompts);
    let standing = baseline.standing(&now);
    let judged_ids: HashSet<&str> = baseline
        .rows
        .iter()
        .map(|r| r.question_id.as_str())
        .collect();
    let questions: Vec<String> = shared
        .iter()
        .filter(|q| judged_ids.contains(q.as_str()))
        .cloned()
        .collect();
    let models = baseline.fingerprint.as_ref().map_or_else(
        || {
            (
                settings.generator_model.clone(),
                settings.judge_model.clone(),
            )
        },
        |f| (f.generator_model.clone(), f.judge_model.clone()),
    );
    if standing.iter().all(|(_, why)| why.is_some()) || questions.is_empty() {
        events(RunEvent::Note(
            "the judge cannot gate on any criterion (see check.md): nothing is sent".into(),
        ));
        return Ok(Judged {
            gate: judged::gate(
                &standing,
                &questions,
                (&baseline.rows, &[]),
                alpha,
                (models, false),
            ),
            prompt_sha256: None,
            server,
        });
    }
    let asked: HashSet<&str> = questions.iter().map(String::as_str).collect();
    let subset = GoldenSet {
        questions: swept
            .golden
            .questions
            .iter()
            .filter(|q| asked.contains(q.id.as_str()))
            .cloned()
            .collect(),
        ..swept.golden.clone()
    };
    let jobs = judge::plan_jobs(
        &swept.corpus,
        &subset,
        std::slice::from_ref(candidate),
        &swept.tokens,
        &swept.context,
    )?;
    let done = judge::load_finished(dir.path())?;
    let finished: HashSet<(&str, &str)> = done
        .rows
        .iter()
        .map(|r| (r.config_id.as_str(), r.question_id.as_str()))
        .collect();
    let todo: Vec<judge::Job> = jobs
        .iter()
        .filter(|j| !finished.contains(&(j.config_id.as_str(), j.question_id.as_str())))
        .cloned()
        .collect();
    let estimate = judge::estimate(&todo, &prompts, settings, &plan.llm);
    let client = LlmClient::new(plan.llm.clone()).map_err(JudgeError::from)?;
    if plan.llm.batch.enabled {
        batching::start(&plan.llm, &client, dir, events).await?;
    }
    check_budget(settings, &estimate, dir.path())?;
    now.check_and_store(dir.path())?;
    dir.record(files::JUDGE_SETTINGS);
    events(RunEvent::Note(format!(
        "judging `{}` on {} question(s) the baseline judged, {} already done: {}",
        candidate.id(),
        jobs.len(),
        jobs.len() - todo.len(),
        estimate.summary(
            client.base_url(),
            Some(&settings.generator_model),
            &settings.judge_model
        )
    )));
    events(RunEvent::Started {
        step: Step::Judge,
        total: estimate.calls as u64,
    });
    let prompt_sha256 = Some(prompts.hashes());
    let setup = Setup {
        settings: Arc::new(settings.clone()),
        prompts: Arc::new(prompts),
        client: &client,
        done,
    };
    let run = judge::run_judge(dir.path(), &jobs, setup, events).await?;
    dir.record(files::JUDGE_QUESTIONS);
    dir.record(files::CALLS);
    events(RunEvent::Finished {
        step: Step::Judge,
        summary: format!(
            "{} of {} answer(s) judged ({} resumed), ${:.4} spent",
            run.rows.len(),
            jobs.len(),
            run.resumed,
            run.spent_usd
        ),
    });
    Ok(Judged {
        gate: judged::gate(
            &standing,
            &questions,
            (&baseline.rows, &run.rows),
            alpha,
            (models, true),
        ),
        prompt_sha256,
        server,
    })
}
