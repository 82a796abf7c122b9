//! `check --judge`: the baseline's judged answers for its pick (judge_questions.csv), what its
//! planted controls (judge_checks.csv) say of its judge, and the same questions judged again for
//! the chunker under test through the same client and cache, into the check's run folder
//! (judge_questions.csv, calls.csv, judge_settings.json: resumable as `run` is; and
//! judge_inputs.json, the fingerprints of the inputs those answers were made from, so that a
//! rerun never resumes from answers to other contexts: [`check_inputs`]). The gate itself is
//! [`crate::check::judged`].
//!
//! Nothing is sent when no criterion can gate: the judge is not the one the baseline's controls
//! measured (other models, prompts, caps, seed or mode, another server or json_mode), the
//! controls were off, or they showed a judge that cannot tell a failing answer from a passing
//! one.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use crate::check::CheckError;
use crate::check::judged::{self, Asked, Compared, JudgeGate, JudgeModels};
use crate::check::verdict::GateSettings;
use crate::error::Error;
use crate::events::{Events, RunEvent, Step};
use crate::files;
use crate::fingerprint::Fingerprints;
use crate::golden::GoldenSet;
use crate::judge::probes::{ProbeRow, load_probes};
use crate::judge::trust::trust;
use crate::judge::{
    self, Fingerprint, Finished, JudgeError, JudgeQuestionRow, JudgeSettings, PromptSet, Setup,
};
use crate::llm::config::redact_url;
use crate::llm::format::ResponseFormatKind;
use crate::pipeline::judge_session::{self, Budget, Session};
use crate::pipeline::swept::Swept;
use crate::plan::Plan;
use crate::report::run_dir::RunDir;
use crate::sweep::grid::ConfigCut;

/// What the baseline's judge stage left: its criteria, its rows for its pick, its planted
/// controls and repeats, the judge they measured and the settings it ran with.
pub(super) struct BaselineJudge {
    criteria: Vec<String>,
    rows: Vec<JudgeQuestionRow>,
    probes: Vec<ProbeRow>,
    fingerprint: Option<Fingerprint>,
    settings: JudgeSettings,
    /// How its judge stage asked for verdicts.
    client: JudgeClient,
}

/// How a baseline's judge stage asked for verdicts, beside what its fingerprint holds.
struct JudgeClient {
    /// The server it called (credentials redacted), from the manifest's
    /// `config.judged.server`; `None` in a manifest of an older chunksweep.
    server: Option<String>,
    /// The `[llm] json_mode` it asked verdicts with.
    json_mode: ResponseFormatKind,
}

/// The judge a check asks: its fingerprint, the server it calls (redacted) and the json_mode.
pub(super) struct JudgeNow<'a> {
    fingerprint: &'a Fingerprint,
    server: &'a str,
    json_mode: ResponseFormatKind,
}

impl BaselineJudge {
    /// Reads the judge stage of the baseline folder `dir` for its pick `pick_id`; `settings` are
    /// the `[judge]` settings its manifest records.
    ///
    /// # Errors
    /// [`CheckError::NoJudgedAnswers`] (exit 2) when judge_questions.csv is missing or has no
    /// row of the pick; [`JudgeError`] for files that cannot be read.
    pub(super) fn open(dir: &Path, pick_id: &str, recorded: &Plan) -> Result<BaselineJudge, Error> {
        let damaged = |e: JudgeError| CheckError::DamagedBaselineJudge(e.to_string());
        let path = dir.join(files::JUDGE_QUESTIONS);
        let Finished { criteria, rows } = judge::load_finished(dir).map_err(damaged)?;
        let rows: Vec<JudgeQuestionRow> = rows
            .into_iter()
            .filter(|r| r.config_id == pick_id)
            .collect();
        if rows.is_empty() {
            return Err(CheckError::NoJudgedAnswers {
                what: if path.exists() {
                    format!("has no row for {pick_id}, the baseline's pick")
                } else {
                    "does not exist".into()
                },
                path: path.display().to_string(),
            }
            .into());
        }
        let mut seen = HashSet::new();
        if let Some(twice) = rows.iter().find(|r| !seen.insert(&r.question_id)) {
            return Err(CheckError::DamagedBaselineJudge(format!(
                "{} has two rows for {pick_id} × {}",
                path.display(),
                twice.question_id
            ))
            .into());
        }
        let server = std::fs::read_to_string(dir.join(files::MANIFEST))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|m| m["config"]["judged"]["server"].as_str().map(str::to_string));
        Ok(BaselineJudge {
            criteria,
            rows,
            probes: load_probes(dir).map_err(damaged)?,
            fingerprint: Fingerprint::load(dir).map_err(damaged)?,
            settings: recorded.judge.clone(),
            client: JudgeClient {
                server,
                json_mode: recorded.llm.json_mode,
            },
        })
    }

    /// The questions of `shared` (golden-set order) it judged for its pick.
    fn judged_among(&self, shared: &[String]) -> Vec<String> {
        let judged: HashSet<&str> = self.rows.iter().map(|r| r.question_id.as_str()).collect();
        shared
            .iter()
            .filter(|q| judged.contains(q.as_str()))
            .cloned()
            .collect()
    }

    /// Its generator and judge models (from its judge_settings.json; `settings`' without one).
    fn models(&self, settings: &JudgeSettings) -> JudgeModels {
        let (generator, judge) = match &self.fingerprint {
            Some(f) => (&f.generator_model, &f.judge_model),
            None => (&settings.generator_model, &settings.judge_model),
        };
        JudgeModels {
            generator: generator.clone(),
            judge: judge.clone(),
        }
    }

    /// [`Self::standing`] on `questions` (those it judged among the shared ones): with none,
    /// no criterion can gate.
    fn standing_on(
        &self,
        questions: &[String],
        now: &JudgeNow<'_>,
    ) -> Vec<(String, Option<String>)> {
        let mut standing = self.standing(now);
        if questions.is_empty() {
            for (_, why) in &mut standing {
                why.get_or_insert_with(|| {
                    "none of the questions the baseline judged for its pick is still shared unchanged (each was edited or removed since)".into()
                });
            }
        }
        standing
    }

    /// Per criterion, `None` when its verdicts can gate, else why not
    /// ([`judged::standing`]): what its planted controls say of the judge they measured, and
    /// whether the judge `now` is that judge.
    fn standing(&self, now: &JudgeNow<'_>) -> Vec<(String, Option<String>)> {
        let changed = match &self.fingerprint {
            Some(before) => {
                let mut what = before.differences(now.fingerprint);
                match &self.client.server {
                    Some(server) if server != now.server => {
                        what.push(format!("server {server} → {}", now.server));
                    }
                    Some(_) => {}
                    None => what.push(format!(
                        "its manifest does not record the server its judge stage called (written by an older chunksweep), now {}",
                        now.server
                    )),
                }
                if self.client.json_mode != now.json_mode {
                    what.push(format!(
                        "json_mode {} → {}",
                        self.client.json_mode.as_str(),
                        now.json_mode.as_str()
                    ));
                }
                (!what.is_empty()).then(|| what.join("; "))
            }
            None => Some(format!("the baseline has no {}", files::JUDGE_SETTINGS)),
        };
        let measured = trust(
            &self.probes,
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

/// Refuses the run folder `dir` when it holds judged answers made from other inputs than
/// `inputs` (or its judge_inputs.json is missing, so that it cannot tell): resuming from them
/// would compare answers to other contexts. Called before anything is written.
///
/// # Errors
/// [`CheckError::OtherJudgedInputs`] (exit 2); [`JudgeError`] when judge_questions.csv cannot
/// be read.
pub(super) fn check_inputs(dir: &Path, inputs: &Fingerprints) -> Result<(), Error> {
    if judge::load_finished(dir)?.rows.is_empty() {
        return Ok(());
    }
    let before: Option<Fingerprints> = std::fs::read_to_string(dir.join(files::JUDGE_INPUTS))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let what = match before {
        None => Some(format!("it has no readable {}", files::JUDGE_INPUTS)),
        Some(b) if b.chunker != inputs.chunker => Some("the chunker differs".into()),
        Some(b) if b.corpus != inputs.corpus => Some("documents differ".into()),
        Some(b) if b.golden != inputs.golden => Some("questions differ".into()),
        Some(_) => None,
    };
    match what {
        Some(what) => Err(CheckError::OtherJudgedInputs {
            dir: dir.display().to_string(),
            what,
        }
        .into()),
        None => Ok(()),
    }
}

/// Refuses the run folder `dir` of a check without `--judge` when it holds judged answers (of
/// an earlier `check --judge` or a `run`): they would stay beside results they do not belong
/// to. Called before anything is written.
///
/// # Errors
/// [`CheckError::JudgedFolder`] (exit 2); [`JudgeError`] when judge_questions.csv cannot be
/// read.
pub(super) fn refuse_judged(dir: &Path) -> Result<(), Error> {
    if judge::load_finished(dir)?.rows.is_empty() {
        Ok(())
    } else {
        Err(CheckError::JudgedFolder(dir.display().to_string()).into())
    }
}

/// What [`judge`] did: the gate, and, when anything was judged, what the manifest records of it.
pub(super) struct JudgedGate {
    /// The answer-quality gate.
    pub gate: JudgeGate,
    /// SHA-256 of each prompt template used, by file name (`None`: nothing was judged).
    pub prompt_sha256: Option<BTreeMap<String, String>>,
    /// The server the calls went to, credentials redacted.
    pub server: String,
}

/// The judge's jobs of `candidate` on `questions` (ids) of the swept golden set, in its order.
///
/// # Errors
/// The sweep's errors when the candidate cannot be retrieved with.
fn jobs_on(
    swept: &Swept,
    candidate: &ConfigCut,
    questions: &[String],
) -> Result<Vec<judge::Job>, Error> {
    let wanted: HashSet<&str> = questions.iter().map(String::as_str).collect();
    let subset = GoldenSet {
        questions: swept
            .golden
            .questions
            .iter()
            .filter(|q| wanted.contains(q.id.as_str()))
            .cloned()
            .collect(),
        ..swept.golden.clone()
    };
    Ok(judge::plan_jobs(
        &swept.corpus,
        &subset,
        std::slice::from_ref(candidate),
        &swept.tokens,
        &swept.context,
    )?)
}

/// What a check judges, against what.
pub(super) struct Judging<'a> {
    /// The chunker under test.
    pub candidate: &'a ConfigCut,
    /// The questions shared unchanged with the baseline, golden-set order.
    pub shared: &'a [String],
    /// The baseline's judge stage.
    pub baseline: &'a BaselineJudge,
    /// The fingerprints of the inputs the answers are made from (judge_inputs.json).
    pub inputs: &'a Fingerprints,
}

/// Judges `judging`'s candidate on the questions it shares with the baseline that the baseline
/// judged for its pick, with `plan`'s judge settings and client, resuming from the rows already
/// in `dir`, and gates at one-sided level `alpha`.
///
/// # Errors
/// [`JudgeError`] for prompts, a budget the estimate passes (or unpriced under a budget), run
/// files, a client that cannot be built, a server that refuses the key or the model; the
/// sweep's errors when the candidate cannot be retrieved with.
pub(super) async fn judge(
    plan: &Plan,
    swept: &Swept,
    judging: Judging<'_>,
    gate_settings: &GateSettings,
    dir: &mut RunDir,
    events: Events<'_>,
) -> Result<JudgedGate, Error> {
    let baseline = judging.baseline;
    let settings = &plan.judge;
    let server = redact_url(&plan.llm.resolved_base_url());
    let prompts = PromptSet::load_or_defaults(settings.prompts_dir.as_deref(), &settings.criteria)
        .map_err(JudgeError::from)?;
    let now = Fingerprint::new(settings, &prompts);
    let questions = baseline.judged_among(judging.shared);
    let standing = baseline.standing_on(
        &questions,
        &JudgeNow {
            fingerprint: &now,
            server: &server,
            json_mode: plan.llm.json_mode,
        },
    );
    // the gate on the answers under test (`judged`: whether they were asked for)
    let gate = |candidate: &[JudgeQuestionRow], judged: bool| {
        let asked = Asked {
            alpha: gate_settings.alpha,
            fail_on_inconclusive: gate_settings.fail_on_inconclusive,
            judged,
        };
        let rows = Compared {
            baseline: &baseline.rows,
            candidate,
        };
        let models = baseline.models(settings);
        judged::gate(&standing, &questions, rows, models, asked)
    };
    if standing.iter().all(|(_, why)| why.is_some()) {
        events(RunEvent::Note(
            "the judge cannot gate on any criterion (see check.md): nothing is sent".into(),
        ));
        return Ok(JudgedGate {
            gate: gate(&[], false),
            prompt_sha256: None,
            server,
        });
    }
    let jobs = jobs_on(swept, judging.candidate, &questions)?;
    let done = judge::load_finished(dir.path())?;
    dir.write_json(files::JUDGE_INPUTS, judging.inputs)?;
    let todo: Vec<judge::Job> = judge::pending(&jobs, &done)
        .into_iter()
        .map(|i| jobs[i].clone())
        .collect();
    let estimate = judge::estimate(&todo, &prompts, settings, &plan.llm);
    let session = Session {
        llm: &plan.llm,
        settings,
        estimate: &estimate,
        budget: Budget::WithRecordedSpend,
        fingerprint: Some(&now),
        generates: true,
        what: format!(
            "judging `{}` on {} question(s) the baseline judged, {} already done",
            judging.candidate.id(),
            jobs.len(),
            jobs.len() - todo.len(),
        ),
    };
    let client = judge_session::open(session, dir, events).await?;
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
    Ok(JudgedGate {
        gate: gate(&run.rows, true),
        prompt_sha256,
        server,
    })
}
