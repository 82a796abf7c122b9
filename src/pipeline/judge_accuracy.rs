//! `chunksweep judge-check`: human-labelled items through the run's prompts and judge model,
//! and the judge's accuracy on them per criterion (judge_check.csv), each verdict in
//! judge_check_items.csv and each call in calls.csv.
//!
//! Labels come from a labelled set (JSONL) or from a run folder's judge_questions.csv with
//! `human_label_<criterion>` columns ([`crate::judge::labels`]); for the latter the question,
//! the retrieved context and the reference are rebuilt from the corpus, golden set and sweep
//! settings of the config file (the run's), exactly as the run retrieved them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::judge_session::{self, Budget, Session, refuse_check};
use super::runtime;
use crate::budget::CostEstimate;
use crate::corpus;
use crate::error::Error;
use crate::events::{Events, RunEvent};
use crate::exit::ExitClass;
use crate::files;
use crate::golden;
use crate::judge::accuracy::{Accuracy, Proportion, Statistic};
use crate::judge::labels::{self, LabelledItem, RowLabel};
use crate::judge::parroting::{Parroting, template_texts};
use crate::judge::probes::{Probe, ProbeRow, estimate_probes, run_probes};
use crate::judge::prompts::fence_context;
use crate::judge::{self, JudgeError, JudgeSettings, PromptSet, Verdict};
use crate::llm::ClientConfig;
use crate::llm::config::redact_url;
use crate::plan::{JudgeOnly, Plan};
use crate::prepare::{self, PrepareInputs, WouldSend};
use crate::report::run_dir::RunDir;
use crate::sweep::grid::{ConfigCut, ConfigSpec};
use crate::tokenize::CorpusTokens;

/// One row of judge_check.csv: the judge's accuracy on one criterion's labelled items (or on
/// all, criterion `all`), pass being the positive class. Rates with 95% Wilson intervals;
/// balanced accuracy with the MOVER interval built from them; κ with a 95% percentile bootstrap
/// interval over items, left empty when every resample gave the same κ
/// ([`crate::judge::accuracy`]). Other empty cells: not defined (no item of a label).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckAccuracyRow {
    /// `faithfulness`, `relevancy`, `correctness` (a criterion of the run) or `all`.
    pub criterion: String,
    /// The judge model.
    pub judge_model: String,
    /// `per-criterion` or `combined`: how each verdict was asked.
    pub judge_mode: String,
    /// `can tell pass from fail` or `cannot tell` ([`crate::judge::accuracy::Tells`]), or
    /// `not measured` when a rate has no verdict to count because items are unfinished; empty
    /// for `all`.
    pub verdict: String,
    /// Why, in one sentence; empty for `all`.
    pub verdict_reason: String,
    /// Labelled items with a pass or fail verdict from the judge.
    pub n: usize,
    /// Items labelled pass in the labels file, whatever their verdict.
    pub labelled_pass: usize,
    /// Items labelled fail in the labels file, whatever their verdict.
    pub labelled_fail: usize,
    /// Of the `n` items with a verdict, those the judge passed.
    pub said_pass: usize,
    /// Of those, items the judge failed.
    pub said_fail: usize,
    /// Items whose verdict was an error or that were not asked (not in any figure).
    pub errors: usize,
    /// Of those, items unfinished: no reply from the judge (a call that failed at the server or
    /// in transport, or an item not started); a rerun with the same `--out` asks them again.
    pub unfinished: usize,
    /// `pass` or `fail` when the judge gave that verdict to every item; else empty.
    pub same_verdict: String,
    /// (TPR + TNR) / 2.
    pub balanced_accuracy: Option<f64>,
    /// MOVER lower bound.
    pub balanced_accuracy_lo: Option<f64>,
    /// MOVER upper bound.
    pub balanced_accuracy_hi: Option<f64>,
    /// Passes among items labelled pass.
    pub tpr: Option<f64>,
    /// Wilson lower bound.
    pub tpr_lo: Option<f64>,
    /// Wilson upper bound.
    pub tpr_hi: Option<f64>,
    /// Fails among items labelled fail: the failures caught (the TPR of the literature that
    /// takes fail as positive).
    pub tnr: Option<f64>,
    /// Wilson lower bound.
    pub tnr_lo: Option<f64>,
    /// Wilson upper bound.
    pub tnr_hi: Option<f64>,
    /// Cohen's κ of the judge against the labels.
    pub kappa: Option<f64>,
    /// Bootstrap lower bound (empty when every resample gave the same κ).
    pub kappa_lo: Option<f64>,
    /// Bootstrap upper bound (empty when every resample gave the same κ).
    pub kappa_hi: Option<f64>,
    /// Share of verdicts equal to the label.
    pub accuracy: Option<f64>,
    /// Wilson lower bound.
    pub accuracy_lo: Option<f64>,
    /// Wilson upper bound.
    pub accuracy_hi: Option<f64>,
    /// Accuracy of always answering the more frequent label.
    pub majority_baseline: Option<f64>,
    /// Wilson lower bound.
    pub majority_baseline_lo: Option<f64>,
    /// Wilson upper bound.
    pub majority_baseline_hi: Option<f64>,
    /// Pass or fail verdicts whose reason repeats the prompt template's text or contradicts the
    /// verdict ([`crate::judge::parroting`]).
    pub parroted: usize,
    /// `parroted / n`.
    pub parroted_share: Option<f64>,
    /// Of the parroted, reasons that repeat the template's text.
    pub parroted_template: usize,
    /// Of the parroted, reasons that name the other verdict.
    pub parroted_contradicting: usize,
}

type Cells = [Option<f64>; 3];

fn prop_cells(p: Option<Proportion>) -> Cells {
    p.map_or([None; 3], |p| {
        [Some(p.value), Some(p.interval.lo), Some(p.interval.hi)]
    })
}

fn stat_cells(s: Option<Statistic>) -> Cells {
    s.map_or([None; 3], |s| {
        [
            Some(s.value),
            s.interval.map(|i| i.lo),
            s.interval.map(|i| i.hi),
        ]
    })
}

impl CheckAccuracyRow {
    /// The row of `criterion` from its items' rows; with its verdict unless it is `all`.
    fn new(criterion: &str, s: &JudgeSettings, rows: &[&ProbeRow], templates: &[&str]) -> Self {
        let pairs: Vec<(bool, bool)> = rows.iter().filter_map(|r| r.pair()).collect();
        let a = Accuracy::of(&pairs);
        let parroting = Parroting::of(rows.iter().filter_map(|r| r.reply()), templates);
        let unfinished = rows.iter().filter(|r| r.unfinished()).count();
        let labelled = |pass: bool| {
            rows.iter()
                .filter(|r| Verdict::parse(&r.expected).and_then(Verdict::outcome) == Some(pass))
                .count()
        };
        let (verdict, verdict_reason) = if criterion == ALL {
            (String::new(), String::new())
        } else if unfinished > 0 && (a.tnr.is_none() || a.tpr.is_none()) {
            (NOT_MEASURED.into(), unfinished_reason(unfinished))
        } else {
            let t = a.tells(s.min_control_tnr);
            (t.label().into(), t.reason)
        };
        let [ba, ba_lo, ba_hi] = stat_cells(a.balanced_accuracy);
        let [tpr, tpr_lo, tpr_hi] = prop_cells(a.tpr);
        let [tnr, tnr_lo, tnr_hi] = prop_cells(a.tnr);
        let [k, k_lo, k_hi] = stat_cells(a.kappa);
        let [acc, acc_lo, acc_hi] = prop_cells(a.accuracy);
        let [maj, maj_lo, maj_hi] = prop_cells(a.majority_baseline);
        CheckAccuracyRow {
            criterion: criterion.into(),
            judge_model: s.judge_model.clone(),
            judge_mode: s.mode.name().into(),
            verdict,
            verdict_reason,
            n: a.n,
            labelled_pass: labelled(true),
            labelled_fail: labelled(false),
            said_pass: a.said_pass,
            said_fail: a.said_fail,
            errors: rows
                .iter()
                .filter(|r| Verdict::parse(&r.verdict) == Some(Verdict::Error))
                .count(),
            unfinished,
            same_verdict: match a.same_verdict() {
                Some(true) => "pass",
                Some(false) => "fail",
                None => "",
            }
            .into(),
            balanced_accuracy: ba,
            balanced_accuracy_lo: ba_lo,
            balanced_accuracy_hi: ba_hi,
            tpr,
            tpr_lo,
            tpr_hi,
            tnr,
            tnr_lo,
            tnr_hi,
            kappa: k,
            kappa_lo: k_lo,
            kappa_hi: k_hi,
            accuracy: acc,
            accuracy_lo: acc_lo,
            accuracy_hi: acc_hi,
            majority_baseline: maj,
            majority_baseline_lo: maj_lo,
            majority_baseline_hi: maj_hi,
            parroted: parroting.parroted,
            parroted_share: parroting.share(),
            parroted_template: parroting.template,
            parroted_contradicting: parroting.contradicting,
        }
    }

    /// Whether this criterion's verdicts can tell pass from fail.
    pub fn can_tell(&self) -> bool {
        self.verdict == CAN_TELL
    }

    /// Whether this criterion was not measured: a rate lacks verdicts because items are
    /// unfinished.
    pub fn not_measured(&self) -> bool {
        self.verdict == NOT_MEASURED
    }

    /// The parroting figures of the row.
    pub fn parroting(&self) -> Parroting {
        Parroting {
            n: self.n,
            template: self.parroted_template,
            contradicting: self.parroted_contradicting,
            parroted: self.parroted,
        }
    }
}

/// The criterion name of judge_check.csv's row over every item.
pub const ALL: &str = "all";

/// The verdict of a criterion whose verdicts can tell pass from fail.
const CAN_TELL: &str = "can tell pass from fail";

/// The verdict of a criterion with a rate left without verdicts by unfinished items.
pub const NOT_MEASURED: &str = "not measured";

/// Why a criterion was not measured: `3 items unfinished (rerun the same command)`.
fn unfinished_reason(unfinished: usize) -> String {
    let items = if unfinished == 1 { "item" } else { "items" };
    format!("{unfinished} {items} unfinished (rerun the same command)")
}

/// judge_check.csv's rows: every criterion with a labelled item, then `all`; reasons checked
/// for parroting against `templates` ([`crate::judge::parroting::template_texts`]).
pub fn accuracy_rows(
    settings: &JudgeSettings,
    rows: &[ProbeRow],
    templates: &[&str],
) -> Vec<CheckAccuracyRow> {
    let mut out: Vec<CheckAccuracyRow> = settings
        .criteria
        .iter()
        .filter_map(|c| {
            let mine: Vec<&ProbeRow> = rows.iter().filter(|r| r.criterion == c.name).collect();
            (!mine.is_empty()).then(|| CheckAccuracyRow::new(&c.name, settings, &mine, templates))
        })
        .collect();
    let all: Vec<&ProbeRow> = rows.iter().collect();
    out.push(CheckAccuracyRow::new(ALL, settings, &all, templates));
    out
}

/// What `judge-check` did.
#[derive(Debug, Clone)]
pub enum JudgeCheckOutcome {
    /// `--dry-run`: the calls it would make; nothing was sent.
    DryRun {
        /// Labelled items (one call each).
        items: usize,
        /// Calls, tokens and cost; `None` when the retrieved contexts of a labelled
        /// judge_questions.csv cannot be rebuilt from the caches.
        estimate: Option<CostEstimate>,
        /// Then, what rebuilding them would send ([`WouldSend::summary`]).
        unsent: Option<String>,
        /// The judge model.
        judge_model: String,
        /// The server, credentials redacted.
        server: String,
        /// With `--max-cost`: why the real check would be refused before sending anything (its
        /// estimate passes the budget or has no price); `None` without an estimate.
        refused: Option<String>,
    },
    /// The items were judged.
    Checked {
        /// judge_check.csv.
        table: Vec<CheckAccuracyRow>,
        /// judge_check_items.csv.
        items: Vec<ProbeRow>,
        /// The threshold both rates' lower bounds must reach (`[judge] min_control_tnr`).
        min_lower: f64,
        /// The output folder.
        dir: PathBuf,
    },
}

impl JudgeCheckOutcome {
    /// Items whose verdict was an error (timeouts, unreadable replies) or that were not asked
    /// (the budget), over all criteria.
    pub fn errors(&self) -> usize {
        self.all().map_or(0, |r| r.errors)
    }

    /// Items left unasked because `--max-cost` would have been passed.
    pub fn not_started_for_budget(&self) -> usize {
        match self {
            JudgeCheckOutcome::DryRun { .. } => 0,
            JudgeCheckOutcome::Checked { items, .. } => {
                items.iter().filter(|r| r.not_started_for_budget()).count()
            }
        }
    }

    fn all(&self) -> Option<&CheckAccuracyRow> {
        match self {
            JudgeCheckOutcome::DryRun { .. } => None,
            JudgeCheckOutcome::Checked { table, .. } => table.iter().find(|r| r.criterion == ALL),
        }
    }

    /// Items unfinished over all criteria ([`CheckAccuracyRow::unfinished`]).
    pub fn unfinished(&self) -> usize {
        self.all().map_or(0, |r| r.unfinished)
    }

    /// Whether every criterion's verdicts were measured and none can tell pass from fail: the
    /// judge's replies, not missing items, show it cannot confirm a chunk size (false for a dry
    /// run).
    pub fn no_criterion_tells(&self) -> bool {
        match self {
            JudgeCheckOutcome::DryRun { .. } => false,
            JudgeCheckOutcome::Checked { table, .. } => {
                let criteria = || table.iter().filter(|r| r.criterion != ALL);
                criteria().all(|r| !r.can_tell() && !r.not_measured())
            }
        }
    }

    /// Whether some criterion's verdicts can tell pass from fail (false for a dry run).
    pub fn some_criterion_tells(&self) -> bool {
        match self {
            JudgeCheckOutcome::DryRun { .. } => false,
            JudgeCheckOutcome::Checked { table, .. } => {
                table.iter().any(CheckAccuracyRow::can_tell)
            }
        }
    }

    /// Success; incomplete (4) when items are unfinished (a rerun with the same `--out` asks
    /// only those again: the answered calls come from the cache), whatever the verdicts; failure
    /// (1) when no item got a pass or fail verdict; incomplete (4) when some replies were
    /// unreadable; failure (1) when no criterion's verdicts can tell pass from fail. Errors are
    /// never counted as a right or wrong verdict.
    pub fn exit_class(&self) -> Option<ExitClass> {
        let all = self.all()?;
        if all.unfinished > 0 {
            Some(ExitClass::Incomplete)
        } else if all.n == 0 {
            Some(ExitClass::Failure)
        } else if all.errors > 0 {
            Some(ExitClass::Incomplete)
        } else if !self.some_criterion_tells() {
            Some(ExitClass::Failure)
        } else {
            None
        }
    }
}

/// A labelled set item as a verdict to ask: its context fenced as one document `context`.
fn item_of(l: &LabelledItem) -> Probe {
    Probe {
        kind: "label".into(),
        config_id: String::new(),
        item_id: l.id.clone(),
        other_id: String::new(),
        criterion: l.criterion.clone(),
        question: l.question.clone(),
        context: fence_context([("context", l.context.as_str())]),
        answer: l.answer.clone(),
        reference: l.reference.clone(),
        expected: Some(l.label),
        seed_offset: 0,
    }
}

/// The labelled rows of a judge_questions.csv as verdicts to ask, or, in a dry run whose caches
/// cannot rebuild their retrieved contexts, what rebuilding them would send.
enum Rebuilt {
    /// The items.
    Items(Vec<Probe>),
    /// What the prepare step would send (nothing was sent).
    Unsent(WouldSend),
}

/// The labelled rows of a run's judge_questions.csv as verdicts to ask: each row's question,
/// context and reference rebuilt by retrieving again with its configuration (corpus, golden set
/// and sweep settings from `plan`). With `dry_run`, nothing is sent: the embeddings and contexts
/// come from the caches, or what they lack is returned.
fn items_of_run(
    plan: &Plan,
    path: &Path,
    labelled: &[RowLabel],
    rt: &tokio::runtime::Runtime,
    dry_run: bool,
    events: Events<'_>,
) -> Result<Rebuilt, Error> {
    let corpus = corpus::load_corpus(&plan.corpus, &plan.reading())?;
    let golden = golden::load(&plan.golden, plan.golden_format, &corpus)?;
    let tokens = CorpusTokens::new(&corpus, plan.sweep.tokenizer);
    let mut candidates: Vec<ConfigCut> = Vec::new();
    for l in labelled {
        let spec: ConfigCut = l.config_id.parse().map_err(|e| JudgeError::UnknownRow {
            path: path.to_path_buf(),
            line: l.line,
            message: format!("configuration {:?}: {e}", l.config_id),
        })?;
        if !candidates.contains(&spec) {
            candidates.push(spec);
        }
    }
    let mut configs: Vec<ConfigSpec> = Vec::new();
    for c in &candidates {
        if !configs.contains(&c.config) {
            configs.push(c.config.clone());
        }
    }
    let inputs = PrepareInputs {
        corpus: &corpus,
        tokens: &tokens,
        golden: &golden,
        spec: &plan.sweep,
        configs: &configs,
        embed: plan.embed.as_ref(),
        context: plan.context.as_ref(),
        rerank: plan.rerank.as_ref(),
        llm: &plan.llm,
        dry_run,
        chunkers: &plan.chunkers,
        chunk_files: &plan.chunk_files,
        retrievers: &plan.retrievers,
    };
    let prepared = rt.block_on(prepare::prepare(&inputs, events))?;
    if let Some(w) = prepared.would_send.filter(|w| !w.is_nothing()) {
        return Ok(Rebuilt::Unsent(w));
    }
    let jobs = judge::plan_jobs(
        &corpus,
        &golden,
        &candidates,
        &tokens,
        &Arc::new(prepared.context),
    )?;
    let by_key: BTreeMap<(&str, &str), &judge::Job> = jobs
        .iter()
        .map(|j| ((j.config_id.as_str(), j.question_id.as_str()), j))
        .collect();
    let items = labelled
        .iter()
        .map(|l| {
            let job = by_key
                .get(&(l.config_id.as_str(), l.question_id.as_str()))
                .ok_or_else(|| JudgeError::UnknownRow {
                    path: path.to_path_buf(),
                    line: l.line,
                    message: format!(
                        "question {:?} is not in the golden set {}",
                        l.question_id,
                        plan.golden.display()
                    ),
                })?;
            Ok(Probe {
                kind: "label".into(),
                config_id: l.config_id.clone(),
                item_id: l.question_id.clone(),
                other_id: String::new(),
                criterion: l.criterion.clone(),
                question: job.question.clone(),
                context: job.context.clone(),
                answer: l.answer.clone(),
                reference: job.reference.clone().unwrap_or_default(),
                expected: Some(l.label),
                seed_offset: 0,
            })
        })
        .collect::<Result<Vec<Probe>, Error>>()?;
    Ok(Rebuilt::Items(items))
}

/// The plan of the run whose judge_questions.csv `labels_path` is: from `config` when given,
/// else the run's record beside the file (its manifest.json, warnings sent as notes), with the
/// judge flags of `flags` laid over it.
fn plan_of_run(
    config: Option<&Path>,
    flags: crate::config::ConfigFile,
    labels_path: &Path,
    now: jiff::Timestamp,
    events: Events<'_>,
) -> Result<Plan, Error> {
    if config.is_some() {
        return Plan::load(config, flags, crate::config::RunOptions::default(), now);
    }
    let folder = labels_path.parent().unwrap_or(Path::new("."));
    if !folder.join(files::MANIFEST).exists() {
        return Err(JudgeError::from(labels::LabelError::CsvNeedsConfig(
            labels_path.to_path_buf(),
        ))
        .into());
    }
    let record = super::record::RunRecord::open(folder)?;
    for warning in &record.warnings {
        events(RunEvent::Warning(warning.clone()));
    }
    record.plan.with_judge_flags(&flags, now)
}

/// How judge-check sends its calls.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sending {
    /// `--dry-run`: estimate only, send nothing.
    pub dry_run: bool,
    /// `--batch`: the verdicts through the Batch API.
    pub batch: bool,
}

/// Judges the items of the labels file `labels` (a `.csv` is a run's judge_questions.csv, whose
/// run is rebuilt from `config` when given, else from the run folder's record; anything else a
/// JSONL labelled set) with the judge settings of `config` and `flags`, and writes
/// judge_check.csv, judge_check_items.csv and calls.csv (this run's calls only: an earlier
/// judge-check's calls.csv in the folder is replaced) into the output folder (`--out`, else
/// `results/<stamp>`), which must be new, empty, or an earlier judge-check's. Before the first
/// call the estimate is announced ([`RunEvent::Note`]); with `--max-cost` no item is started
/// once it would be passed. With `dry_run`, only estimates, sending nothing: for a
/// judge_questions.csv of dense, hybrid or `llm_context` configurations the retrieved contexts
/// are rebuilt from the caches, and when those lack something the outcome says what rebuilding
/// would send instead of estimating tokens.
/// With `batch` (or `[llm] batch = true`), the verdicts go through the Batch API
/// ([`crate::llm::batch`]), the batches recorded in the folder's batches.json.
///
/// # Errors
/// [`JudgeError::Labels`] for the labels file; [`JudgeError::UnknownRow`];
/// [`crate::report::ReportError::NotAFolder`] and
/// [`crate::report::ReportError::NotARunFolder`] for an `--out` that is a file or holds files
/// judge-check does not write; [`JudgeError::CheckOverBudget`] and [`JudgeError::Unpriced`] for
/// `--max-cost` (nothing sent); configuration, input, client and run-folder errors as for `run`.
pub fn judge_check(
    config: Option<&Path>,
    flags: crate::config::ConfigFile,
    labels_path: &Path,
    sending: Sending,
    events: Events<'_>,
) -> Result<JudgeCheckOutcome, Error> {
    let Sending { dry_run, batch } = sending;
    let rt = runtime()?;
    let now = jiff::Timestamp::now();
    let is_csv = labels_path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let (settings, llm, run_dir, items): (JudgeSettings, ClientConfig, PathBuf, Vec<Probe>) =
        if is_csv {
            let plan = plan_of_run(config, flags, labels_path, now, events)?;
            RunDir::check_out(&plan.run_dir, files::JUDGE_CHECK_OUTPUTS)?;
            let labelled =
                labels::read_csv(labels_path, &plan.judge.criteria).map_err(JudgeError::from)?;
            match items_of_run(&plan, labels_path, &labelled, &rt, dry_run, events)? {
                Rebuilt::Items(items) => (plan.judge, plan.llm, plan.run_dir, items),
                Rebuilt::Unsent(w) => {
                    return Ok(JudgeCheckOutcome::DryRun {
                        items: labelled.len(),
                        estimate: None,
                        unsent: w.summary(),
                        judge_model: plan.judge.judge_model.clone(),
                        server: redact_url(&plan.llm.resolved_base_url()),
                        refused: None,
                    });
                }
            }
        } else {
            let o = JudgeOnly::load(config, flags, now)?;
            RunDir::check_out(&o.run_dir, files::JUDGE_CHECK_OUTPUTS)?;
            let labelled =
                labels::read_jsonl(labels_path, &o.judge.criteria).map_err(JudgeError::from)?;
            (
                o.judge,
                o.llm,
                o.run_dir,
                labelled.iter().map(item_of).collect(),
            )
        };
    let mut llm = llm;
    llm.batch.enabled |= batch;
    let prompts = PromptSet::load_or_defaults(settings.prompts_dir.as_deref(), &settings.criteria)
        .map_err(JudgeError::from)?;
    let estimate = estimate_probes(&items, &prompts, &settings, &llm);
    let server = redact_url(&llm.resolved_base_url());
    if dry_run {
        return Ok(JudgeCheckOutcome::DryRun {
            items: items.len(),
            estimate: Some(estimate),
            unsent: None,
            judge_model: settings.judge_model.clone(),
            server,
            refused: refuse_check(&settings, &estimate)
                .err()
                .map(|e| e.to_string()),
        });
    }
    llm.validate().map_err(JudgeError::from)?;
    refuse_check(&settings, &estimate)?;
    let mut dir = RunDir::create(&run_dir)?;
    // One calls.csv per judge-check: this run's calls only (answered ones come from the cache).
    let calls = dir.path().join(files::CALLS);
    if calls.exists() {
        std::fs::remove_file(&calls).map_err(|e| JudgeError::io(&calls, e))?;
    }
    let session = Session {
        llm: &llm,
        settings: &settings,
        estimate: &estimate,
        budget: Budget::Checked,
        fingerprint: None,
        generates: false,
        what: format!("judging {} labelled item(s)", items.len()),
    };
    let client = rt.block_on(judge_session::open(session, &mut dir, events))?;
    let templates = template_texts(&prompts, &settings.criteria);
    let rows = rt.block_on(run_probes(
        &items,
        Arc::new(prompts),
        Arc::new(settings.clone()),
        &client,
        Some(dir.path()),
        settings.max_cost_usd,
        events,
    ))?;
    dir.record(files::CALLS);
    let templates: Vec<&str> = templates.iter().map(String::as_str).collect();
    let table = accuracy_rows(&settings, &rows, &templates);
    dir.write_csv(files::JUDGE_CHECK_ITEMS, &rows)?;
    dir.write_csv(files::JUDGE_CHECK, &table)?;
    Ok(JudgeCheckOutcome::Checked {
        table,
        items: rows,
        min_lower: settings.min_control_tnr,
        dir: run_dir,
    })
}
