//! `chunksweep check`: open the baseline run, sweep the chunker under test on today's corpus
//! and golden set at the baseline's cut, compare the two question by question
//! ([`crate::check`]), and write check.md and check.json beside the sweep's files (and the JUnit
//! XML file when asked).
//!
//! The chunker under test is the baseline's pick, with whatever the config file and then the
//! flags change in it (`--strategies fixed --sizes 32`); they must leave one configuration, and
//! the cut must stay the baseline's. Everything else (tokenizer, overlap rule, BM25 settings,
//! embedding and context settings, the LLM client) is the baseline's as recorded, unless the
//! config file or the flags say otherwise; the corpus and the golden set too, unless
//! `--corpus`/`--golden` (or the config file) name today's.
//!
//! With `--judge`, the baseline's judged questions are judged again for the chunker under test
//! (`pipeline/check_judge.rs`) with the baseline's recorded `[judge]` settings (the config file's
//! `[judge]`, then `--max-cost`, over them) and its `[llm]` client (the config file's, when it
//! has one), and gated per criterion ([`crate::check::judged`]).

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

mod judge;

use super::{record, runtime, swept};
use crate::check::junit::junit;
use crate::check::render::markdown;
use crate::check::verdict::GateSettings;
use crate::check::{self, Check, CheckError, Run, Runs};
use crate::config::{
    ConfigError, ConfigFile, ContextSection, EmbedSection, RerankSection, RunOptions, SweepSection,
    merge,
};
use crate::error::Error;
use crate::events::Events;
use crate::files;
use crate::fingerprint::{Chunker, Fingerprints, built_libraries};
use crate::judge::JudgeSettings;
use crate::metrics::Cut;
use crate::plan::{Plan, validate_judge};
use crate::report::ReportError;
use crate::report::read::{ReadError, read_rows};
use crate::report::run_dir::RunDir;
use crate::retrieval::rerank::NO_RERANK;
use crate::sweep::grid::ConfigCut;
use crate::sweep::rows::{QuestionRow, SweepRow};
use judge::BaselineJudge;
use record::{JudgeRecord, RunRecord};

/// What `check` is asked.
#[derive(Debug, Clone)]
pub struct CheckRequest {
    /// The baseline run folder.
    pub baseline: PathBuf,
    /// A config file: its inputs, `out`, `[sweep]`, `[embed]`, `[context]` and `[llm]`
    /// sections are laid over the baseline's recorded settings.
    pub config: Option<PathBuf>,
    /// The flags: `corpus`, `golden`, `golden_format`, `out`, the `[sweep]` section's and
    /// `[judge] max_cost_usd`.
    pub flags: ConfigFile,
    /// `--judge`: gate on answer quality too.
    pub judge: bool,
    /// The gate's settings.
    pub settings: GateSettings,
    /// Where to write the JUnit XML file, if anywhere.
    pub junit: Option<PathBuf>,
}

/// What `check` did.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The comparison and its verdict (check.json).
    pub check: Check,
    /// check.md's text.
    pub markdown: String,
    /// The run folder of the chunker under test.
    pub run_dir: PathBuf,
    /// The baseline's record's warnings (settings read as defaults, fingerprints missing).
    pub warnings: Vec<String>,
}

/// The baseline: its record, its pick at its cut, and its sweep_questions.csv rows for it.
struct Baseline {
    record: RunRecord,
    pick: ConfigCut,
    rows: Vec<QuestionRow>,
}

impl Baseline {
    /// Opens the run folder `dir`: its manifest.json ([`RunRecord::open`]), its
    /// sweep_questions.csv, and its pick: the one its fingerprints record, or for a manifest
    /// without fingerprints the selection's pick made again from sweep.csv with the recorded
    /// selection settings.
    fn open(dir: &Path) -> Result<Baseline, Error> {
        let record = RunRecord::open(dir)?;
        let path = dir.join(files::SWEEP_QUESTIONS);
        let questions: Vec<QuestionRow> = read_rows(&path)?;
        let pick_id = match &record.fingerprints {
            Some(f) => f.chunker.chunker.config_id.clone(),
            None => {
                let sweep: Vec<SweepRow> = read_rows(&dir.join(files::SWEEP))?;
                let (cuts, _) =
                    crate::pipeline::decide::select(&sweep, &questions, &record.plan.selection)?;
                cuts.primary().winner().config_id.clone()
            }
        };
        let pick: ConfigCut = pick_id.parse().map_err(|message| ReadError::Invalid {
            path: dir.join(files::MANIFEST),
            message,
        })?;
        let rows: Vec<QuestionRow> = questions
            .into_iter()
            .filter(|r| r.config_id == pick_id)
            .collect();
        if rows.is_empty() {
            return Err(CheckError::NoBaselineRows {
                path: path.display().to_string(),
                config_id: pick_id,
            }
            .into());
        }
        Ok(Baseline { record, pick, rows })
    }
}

/// `chunksweep check` (see the module documentation). `command` is the command line, recorded
/// in the manifest of the run folder it writes (`--out`, else `results/<run-id>`).
///
/// # Errors
/// [`Error::Read`] (exit 2) for a baseline that cannot be read: no manifest.json, a manifest
/// without its settings, no sweep_questions.csv; [`CheckError`] (exit 2) for flags that give
/// other than one configuration or another cut, no shared question, or `--judge` with a
/// baseline that judged nothing for its pick; the sweep's errors for today's inputs; with
/// `--judge`, the judge stage's errors ([`crate::judge::JudgeError`]); [`ReportError`] for a
/// file that cannot be written.
pub fn check(
    request: &CheckRequest,
    command: &[String],
    events: Events<'_>,
) -> Result<Checked, Error> {
    let started = Instant::now();
    let started_at = jiff::Timestamp::now();
    request.settings.validate().map_err(CheckError::Invalid)?;
    let baseline = Baseline::open(&request.baseline)?;
    let baseline_judge = match request.judge {
        true => Some(BaselineJudge::open(
            &request.baseline,
            &baseline.pick.id(),
            &baseline.record.plan,
        )?),
        false => None,
    };
    let plan = candidate_plan(&baseline, request)?;
    if let (Ok(out), Ok(base)) = (plan.run_dir.canonicalize(), request.baseline.canonicalize())
        && out == base
    {
        return Err(CheckError::OutIsBaseline(plan.run_dir.display().to_string()).into());
    }
    let rt = runtime()?;
    let cut = baseline.pick.cut;
    let candidate = ConfigCut {
        config: plan.configs[0].clone(),
        cut,
    };
    let loaded = swept::load(&plan, events)?;
    let external = match candidate.config.params.strategy.is_external() {
        true => Some(swept::identify_external(
            &plan, &loaded, &candidate, events,
        )?),
        false => None,
    };
    let retriever = match candidate.config.retriever.is_external() {
        true => Some(swept::identify_retriever(&plan, &candidate, events)?),
        false => None,
    };
    let chunker = Chunker::new(
        &candidate,
        &plan.sweep,
        plan.embed.as_ref(),
        &built_libraries(),
        external.as_ref(),
    )
    .with_retriever(retriever.as_ref());
    let now = Fingerprints::new(chunker, &loaded.corpus, &loaded.golden);
    // before anything is written: a folder of answers to other inputs (or, without --judge, of
    // any judged answers) is refused untouched
    if request.judge {
        judge::check_inputs(&plan.run_dir, &now)?;
    } else {
        judge::refuse_judged(&plan.run_dir)?;
    }
    let (swept, mut dir) = swept::sweep_loaded(&plan, loaded, &rt, None, events)?;
    let mut check = retrieval_check(request, &baseline, &swept, &candidate, &now)?;
    // the retrieval verdict is written first: a judge stage that stops with an error (a refused
    // key, the budget) leaves it, and says so in check.md
    write_check(&mut dir, &check, request.junit.as_deref())?;
    let candidates = [candidate.id()];
    let manifest = |dir: &mut RunDir, judged: Option<JudgeRecord<'_>>| {
        let wall_s = started.elapsed().as_secs_f64();
        record::write_manifest(
            dir,
            &plan,
            command,
            record::Timing { started_at, wall_s },
            swept.record(&candidate),
            &candidate,
            judged,
        )
    };
    let judged = match &baseline_judge {
        Some(b) => {
            let shared = check.changes.shared.clone();
            let judged = rt.block_on(judge::judge(
                &plan,
                &swept,
                judge::Judging {
                    candidate: &candidate,
                    shared: &shared,
                    baseline: b,
                    inputs: &now,
                },
                &request.settings,
                &mut dir,
                events,
            ));
            let judged = match judged {
                Ok(j) => j,
                Err(e) => {
                    check.judge_error = Some(e.to_string());
                    write_check(&mut dir, &check, request.junit.as_deref())?;
                    manifest(&mut dir, None)?;
                    return Err(e);
                }
            };
            check.judge = Some(judged.gate.clone());
            write_check(&mut dir, &check, request.junit.as_deref())?;
            Some(judged)
        }
        None => None,
    };
    manifest(
        &mut dir,
        judged.as_ref().and_then(|j| {
            Some(JudgeRecord {
                candidates: &candidates,
                prompt_sha256: j.prompt_sha256.as_ref()?,
                server: &j.server,
            })
        }),
    )?;
    let markdown = markdown(&check);
    Ok(Checked {
        check,
        markdown,
        run_dir: plan.run_dir.clone(),
        warnings: baseline.record.warnings,
    })
}

/// The retrieval verdict of `candidate` (swept in `swept`, its fingerprints `now`) against the
/// baseline's pick at the baseline's cut.
///
/// # Errors
/// [`CheckError`] for settings out of range or no question shared unchanged.
fn retrieval_check(
    request: &CheckRequest,
    baseline: &Baseline,
    swept: &swept::Swept,
    candidate: &ConfigCut,
    now: &Fingerprints,
) -> Result<Check, Error> {
    let cut = baseline.pick.cut;
    let rows = &swept.outcomes[0]
        .cuts
        .iter()
        .find(|c| c.cut == cut)
        .expect("the plan holds the baseline's cut")
        .questions;
    Ok(check::check(
        &request.baseline.display().to_string(),
        &cut.tag(),
        Runs {
            baseline: Run {
                config_id: &baseline.pick.id(),
                expand: baseline.pick.config.expand,
                rows: &baseline.rows,
                fingerprints: baseline.record.fingerprints.as_ref(),
            },
            candidate: Run {
                config_id: &candidate.id(),
                expand: candidate.config.expand,
                rows,
                fingerprints: Some(now),
            },
        },
        now,
        request.settings,
    )?)
}

/// Writes check.md, check.json and, when asked, the JUnit file at `junit_path`.
fn write_check(dir: &mut RunDir, check: &Check, junit_path: Option<&Path>) -> Result<(), Error> {
    dir.write_text(files::CHECK_MD, &markdown(check))?;
    dir.write_json(files::CHECK_JSON, check)?;
    if let Some(path) = junit_path {
        std::fs::write(path, junit(check)).map_err(|source| ReportError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    }
    Ok(())
}

/// The plan of the run under test: the baseline's recorded plan without its own run choices
/// (its spending cap and batch mode, [`Plan::without_run_choices`]) with its grid narrowed to
/// its pick at its cut, the config file's inputs and sections over it, then the flags'.
fn candidate_plan(baseline: &Baseline, request: &CheckRequest) -> Result<Plan, Error> {
    let file = match &request.config {
        Some(path) => ConfigFile::load(path)?,
        None => ConfigFile::default(),
    };
    let flags = &request.flags;
    let recorded = &baseline.record.plan.clone().without_run_choices();
    let pick = &baseline.pick.config;
    let mut narrowed = recorded.sweep.clone();
    narrowed.strategies = vec![pick.params.strategy];
    narrowed.sizes = vec![pick.params.chunk_size];
    narrowed.prefixes = vec![pick.prefix];
    narrowed.retrievers = vec![pick.retriever];
    narrowed.bm25 = pick.bm25;
    // the pick's rerank value alone: its model when it is reranked
    narrowed
        .rerank
        .retain(|m| (m.trim() != NO_RERANK) == pick.rerank);
    narrowed.expand = vec![pick.expand];
    match baseline.pick.cut {
        Cut::K(k) => {
            narrowed.top_k = k;
            narrowed.budgets = Vec::new();
        }
        Cut::Budget(b) => narrowed.budgets = vec![b],
    }
    let mut sweep: SweepSection = layered("sweep", &narrowed, &file.sweep, &flags.sweep)?;
    // the chunkers this command declares (never the baseline's: a record supplies no command)
    sweep.chunker = flags.sweep.chunker.clone();
    sweep.chunks = flags.sweep.chunks.clone();
    let embed: EmbedSection = layered("embed", &recorded.embed, &file.embed, &flags.embed)?;
    let context: ContextSection =
        layered("context", &recorded.context, &file.context, &flags.context)?;
    // the recorded [rerank] settings, less the model (the swept values name it)
    let mut rerank_recorded = serde_json::to_value(&recorded.rerank)
        .map_err(|e| ConfigError::Invalid(format!("[rerank]: {e}")))?;
    if let Some(o) = rerank_recorded.as_object_mut() {
        o.remove("model");
    }
    let rerank: RerankSection = layered("rerank", &rerank_recorded, &file.rerank, &flags.rerank)?;
    let golden = flags.golden.clone().or(file.golden.clone());
    let layer = ConfigFile {
        golden_format: flags
            .golden_format
            .or(file.golden_format)
            .or(golden.is_none().then_some(recorded.golden_format)),
        golden: golden.or(Some(recorded.golden.clone())),
        corpus: crate::config::CorpusSection {
            path: flags
                .corpus
                .path
                .clone()
                .or(file.corpus.path.clone())
                .or(Some(recorded.corpus.clone())),
            readers: match file.corpus.readers.is_empty() {
                true => recorded.reading.readers.clone(),
                false => file.corpus.readers.clone(),
            },
            skip_unreadable: flags
                .corpus
                .skip_unreadable
                .or(file.corpus.skip_unreadable)
                .or(Some(recorded.reading.skip_unreadable)),
        },
        out: flags.out.clone().or(file.out.clone()),
        sweep,
        embed,
        context,
        rerank,
        ..ConfigFile::default()
    };
    let under = ConfigFile {
        llm: file.llm.clone().or(Some(recorded.llm.clone())),
        chunkers: file.chunkers.clone(),
        chunks: file.chunks.clone(),
        retrievers: file.retrievers.clone(),
        ..ConfigFile::default()
    };
    let judge: JudgeSettings = layered("judge", &recorded.judge, &file.judge, &flags.judge)?;
    let under = ConfigFile {
        judge: file.judge.clone(),
        ..under
    };
    let layer = ConfigFile {
        judge: flags.judge.clone(),
        ..layer
    };
    // resolved over the defaults first, so that the file's and the flags' values are checked
    // (a NaN budget among them) before the baseline's settings are laid under them
    let mut plan = Plan::resolve(under, layer, RunOptions::default(), jiff::Timestamp::now())?;
    validate_judge(&judge)?;
    plan.judge = judge;
    if plan.configs.len() != 1 {
        let ids = plan.configs.iter().map(|c| c.id()).collect();
        return Err(CheckError::NotOneConfiguration(ids).into());
    }
    let cuts = plan.sweep.cuts();
    if !cuts.contains(&baseline.pick.cut) {
        let given: Vec<String> = cuts.iter().map(|c| cut_text(*c)).collect();
        return Err(CheckError::CutChanged {
            baseline: cut_text(baseline.pick.cut),
            given: given.join(", "),
        }
        .into());
    }
    Ok(plan)
}

/// The section `name`: `recorded` (the baseline's settings), then `file`'s keys over it, then
/// `flags`' ([`merge`]).
fn layered<R: Serialize, S: Serialize, T: DeserializeOwned>(
    name: &str,
    recorded: &R,
    file: &S,
    flags: &S,
) -> Result<T, ConfigError> {
    let under: Value = merge(name, recorded, file)?;
    merge(name, &under, flags)
}

/// A cut in words: `k = 3`, `budget 1000`.
fn cut_text(cut: Cut) -> String {
    match cut {
        Cut::K(k) => format!("k = {k}"),
        Cut::Budget(b) => format!("budget {b}"),
    }
}
