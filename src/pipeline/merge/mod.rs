//! `chunksweep merge SHARD_DIR... --out DIR`: the shards of one `sweep --shard I/N` command
//! joined into one run folder, as the whole sweep would have written it.
//!
//! Nothing is written before every check passes ([`checks`]): each shard complete (its
//! shard.json, written last) and unchanged (each file's SHA-256), all written by this
//! chunksweep, of the same corpus, golden set, grid and settings, each shard of the split there
//! exactly once, the corpus and golden set at their recorded paths still the ones swept, and
//! every shard that ran an external retriever recording the same identity of it (the manifest's
//! fingerprint records it, as the whole sweep's does). Then sweep.csv and sweep_questions.csv are joined in grid order ([`rows`]), and the selection
//! and the reports are made from them as `chunksweep report` makes them, with the manifest of
//! the whole grid: the folder equals the whole sweep's byte for byte except where the run's
//! folder, command line, start time and times are written (docs/shards.md).

pub mod checks;
pub mod rows;

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::decide::{self, Decision};
use super::judge_step;
use super::out_run;
use super::record::{self, SweepRecord};
use crate::corpus;
use crate::error::Error;
use crate::files;
use crate::golden;
use crate::report::manifest::{ManifestInputs, PhaseTimes};
use crate::report::outcome::Inputs;
use crate::report::read;
use crate::report::run_dir::RunDir;
use crate::report::texts::Texts;
use crate::sweep::merge_error::MergeError;
use crate::sweep::rows::SweepRow;
use checks::ShardDir;

/// What `merge` did.
pub struct MergeOutput {
    /// The merged run folder.
    pub run_dir: PathBuf,
    /// Shards merged.
    pub shards: usize,
    /// sweep.csv's rows.
    pub rows: Vec<SweepRow>,
    /// Questions scored per configuration.
    pub n_questions: usize,
    /// The selection and the decision files.
    pub decision: Decision,
    /// Wall time of the merge, seconds.
    pub wall_s: f64,
}

/// The longest time of each phase among the shards (they ran side by side).
fn slowest(shards: &[ShardDir]) -> PhaseTimes {
    shards
        .iter()
        .map(|s| s.record.phase_time_ms)
        .fold(PhaseTimes::default(), |a, b| PhaseTimes {
            load_ms: a.load_ms.max(b.load_ms),
            tokenize_ms: a.tokenize_ms.max(b.tokenize_ms),
            analyze_ms: a.analyze_ms.max(b.analyze_ms),
            configs_ms: a.configs_ms.max(b.configs_ms),
            write_ms: a.write_ms.max(b.write_ms),
        })
}

/// Refuses when the fingerprint `field` of an input loaded now is not the shards'.
fn same_input(
    what: &'static str,
    path: &Path,
    field: &'static str,
    found: &str,
    recorded: &serde_json::Value,
) -> Result<(), MergeError> {
    if recorded.as_str() == Some(found) {
        return Ok(());
    }
    Err(MergeError::InputsChanged {
        what,
        path: path.to_path_buf(),
        field,
        found: found.to_string(),
        recorded: recorded.as_str().unwrap_or("?").to_string(),
    })
}

/// `chunksweep merge`: checks the shard folders `dirs` and joins them into `out` (see the
/// module). `command` is the merge's command line, recorded in the manifest and the report.
///
/// # Errors
/// [`MergeError`] for shards that cannot be merged (before anything is written);
/// [`Error::Corpus`] or [`Error::Golden`] when the recorded inputs cannot be read;
/// [`crate::report::ReportError`] for `out` (not a run folder, busy, unwritable).
pub fn merge(dirs: &[PathBuf], out: &Path, command: &[String]) -> Result<MergeOutput, Error> {
    let started = Instant::now();
    let started_at = jiff::Timestamp::now();
    let shards = dirs
        .iter()
        .map(|d| checks::read_shard(d))
        .collect::<Result<Vec<_>, _>>()?;
    let plan = checks::check_shards(&shards, out)?;
    let retrievers = checks::retrievers_agree(&shards)?;
    let out_abs = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
    if dirs
        .iter()
        .any(|d| std::path::absolute(d).is_ok_and(|d| d == out_abs))
    {
        return Err(MergeError::OutIsShard(out.to_path_buf()).into());
    }
    RunDir::check_out(out, files::RUN_OUTPUTS)?;
    let corpus = corpus::load_corpus(&plan.corpus, &plan.reading())?;
    let golden = golden::load(&plan.golden, plan.golden_format, &corpus)?;
    let inputs = ManifestInputs::new(&corpus, &plan.golden, golden.questions.len())?;
    let recorded = &shards[0].record.inputs;
    same_input(
        "corpus",
        &plan.corpus,
        "corpus_sha256",
        &inputs.corpus_sha256,
        &recorded["corpus_sha256"],
    )?;
    same_input(
        "golden set",
        &plan.golden,
        "golden_sha256",
        &inputs.golden_sha256,
        &recorded["golden_sha256"],
    )?;
    out_run::refuse_other_run(out, &plan.sweep, || Ok(inputs.clone()))?;
    let mut dir = RunDir::create(out)?;
    rows::write_joined(&mut dir, &plan, &shards)?;
    let run = read::read_run(out)?;
    let (cuts, prefixes) = decide::select(&run.sweep, &run.questions, &plan.selection)?;
    let pick_id = cuts.primary().winner().config_id.clone();
    let judged =
        judge_step::summary_from_folder(out, &run.sweep, &plan.judge, false, Some(&pick_id))?;
    let label = out.display().to_string();
    let decision = decide::write(
        &mut dir,
        cuts,
        prefixes,
        &plan.selection,
        Inputs {
            label: &label,
            command: Some(command),
            rows: &run.sweep,
            questions: &run.questions,
            texts: Ok(Texts {
                corpus: &corpus,
                golden: &golden,
            }),
            chunkers: &run.chunkers,
            judge: judged.as_ref(),
        },
    )?;
    let pick = plan
        .configs
        .iter()
        .flat_map(|c| {
            plan.sweep
                .cuts()
                .into_iter()
                .map(move |cut| crate::sweep::grid::ConfigCut {
                    config: c.clone(),
                    cut,
                })
        })
        .find(|c| c.id() == pick_id)
        .ok_or_else(|| crate::sweep::SweepError::UnknownConfig(pick_id.clone()))?;
    let external = shards
        .iter()
        .find_map(|s| s.record.external.get(&pick.config.id()));
    let wall_s = started.elapsed().as_secs_f64();
    record::write_manifest(
        &mut dir,
        &plan,
        command,
        record::Timing { started_at, wall_s },
        SweepRecord {
            corpus: &corpus,
            golden: &golden,
            embed: None,
            contexts: None,
            external,
            external_retriever: retrievers.get(pick.config.retriever.name()),
            phases: slowest(&shards),
            config_times: shards
                .iter()
                .flat_map(|s| s.record.config_time_ms.clone())
                .collect(),
        },
        &pick,
        None,
    )?;
    Ok(MergeOutput {
        run_dir: out.to_path_buf(),
        shards: shards.len(),
        n_questions: golden.questions.len(),
        rows: run.sweep,
        decision,
        wall_s,
    })
}
