//! Whether a run folder holds another run: `sweep`, `run` and `merge` refuse to write over the
//! run of another corpus, golden set or grid ([`refuse_other_run`]); `run --merged` reads only a
//! merged sweep of its own ([`recorded_difference`]).

use std::path::Path;

use crate::error::Error;
use crate::files;
use crate::pipeline::record::RunRecord;
use crate::report::error::ReportError;
use crate::report::manifest::ManifestInputs;
use crate::sweep::grid::SweepSpec;

/// What differs between the run recorded in `record` (read from `dir`) and a run of `inputs`
/// (the corpus's and golden set's SHA-256) over the grid and settings `sweep`: `None` when
/// nothing does, else `another corpus`, `another golden set` or `another grid` (the first that
/// differs, in that order). The inputs are compared by content (SHA-256), not by path.
pub(super) fn recorded_difference(
    dir: &Path,
    record: &RunRecord,
    inputs: &ManifestInputs,
    sweep: &SweepSpec,
) -> Option<&'static str> {
    let manifest: serde_json::Value = std::fs::read_to_string(dir.join(files::MANIFEST))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let recorded = |field: &str| manifest["inputs"][field].as_str();
    if recorded("corpus_sha256") != Some(inputs.corpus_sha256.as_str()) {
        Some("another corpus")
    } else if recorded("golden_sha256") != Some(inputs.golden_sha256.as_str()) {
        Some("another golden set")
    } else if record.plan.sweep != *sweep {
        Some("another grid")
    } else {
        None
    }
}

/// Refuses to write a run into `dir` when it holds the run of another corpus, golden set or
/// grid (its manifest.json records them): every file of that run would be replaced. A folder
/// without a manifest, or with one this version cannot read, holds no run to compare and is
/// accepted, as is a rerun of the same inputs and grid (what [`crate::report::run_dir::RunDir::check_out`]
/// lets through). `inputs` is computed only when there is a run to compare with.
///
/// # Errors
/// [`ReportError::OtherRun`] naming what differs; the error of `inputs`.
pub(super) fn refuse_other_run(
    dir: &Path,
    sweep: &SweepSpec,
    inputs: impl FnOnce() -> Result<ManifestInputs, Error>,
) -> Result<(), Error> {
    if !dir.join(files::MANIFEST).is_file() {
        return Ok(());
    }
    let Ok(record) = RunRecord::open(dir) else {
        return Ok(());
    };
    match recorded_difference(dir, &record, &inputs()?, sweep) {
        None => Ok(()),
        Some(what) => Err(ReportError::OtherRun {
            dir: dir.to_path_buf(),
            what,
        }
        .into()),
    }
}
