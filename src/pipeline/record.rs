//! manifest.json of a `sweep` or `run`: the plan, what the prepare and judge steps did, input
//! fingerprints, timings, and the files written (from the run folder writer).

use std::collections::BTreeMap;

use serde::Serialize;

use super::swept::Swept;
use crate::error::Error;
use crate::plan::Plan;
use crate::prepare::contexts::ContextSummary;
use crate::prepare::embed::EmbedStats;
use crate::report::manifest::{Inputs, MANIFEST_SCHEMA, Manifest};
use crate::report::run_dir::RunDir;

/// What a manifest records as the configuration of a run.
#[derive(Serialize)]
struct RunConfig<'a> {
    #[serde(flatten)]
    plan: &'a Plan,
    #[serde(skip_serializing_if = "Option::is_none")]
    embeddings: Option<&'a EmbedStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    llm_context: Option<&'a ContextSummary>,
    /// What the judge stage judged (absent when it did not run).
    #[serde(skip_serializing_if = "Option::is_none")]
    judged: Option<JudgeRecord<'a>>,
}

/// What a manifest records of the judge stage.
#[derive(Serialize)]
pub(super) struct JudgeRecord<'a> {
    /// The candidates, in order.
    pub candidates: &'a [String],
    /// SHA-256 of each prompt template, by file name.
    pub prompt_sha256: &'a BTreeMap<String, String>,
    /// The server the calls went to, credentials redacted, wherever its URL came from.
    pub server: &'a str,
}

/// Writes manifest.json into `dir`, listing every file `dir` recorded.
pub(super) fn write_manifest(
    dir: &mut RunDir,
    plan: &Plan,
    command: &[String],
    started_at: jiff::Timestamp,
    wall_s: f64,
    swept: &Swept,
    judged: Option<JudgeRecord<'_>>,
) -> Result<(), Error> {
    let manifest = Manifest {
        schema_version: MANIFEST_SCHEMA,
        tool: "chunksweep",
        version: env!("CARGO_PKG_VERSION"),
        started_at: started_at.to_string(),
        command: command.to_vec(),
        config: RunConfig {
            plan,
            embeddings: swept.prepared.embed.as_ref().map(|e| &e.stats),
            llm_context: swept.prepared.contexts.as_ref().map(|c| &c.summary),
            judged,
        },
        inputs: Inputs::new(&swept.corpus, &plan.golden, swept.golden.questions.len())?,
        bm25: plan.sweep.bm25,
        wall_time_s: wall_s,
        phase_time_ms: swept.phases,
        config_time_ms: swept
            .outcomes
            .iter()
            .map(|o| (o.row.config_id.clone(), o.times))
            .collect(),
        outputs: Vec::new(),
    };
    dir.write_manifest(manifest)?;
    Ok(())
}
