//! `sweep --shard I/N` (and `run --shard I/N`, which stops after its sweep step): the I-th of N
//! parts of the grid ([`crate::sweep::shard`]) swept into `<out>/shard-I-of-N`, with shard.json
//! ([`ShardRecord`]) written last: which part of which grid, the fingerprints of the inputs and
//! of each file. `chunksweep merge` ([`super::merge`]) joins the parts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::swept;
use crate::chunking::external::Identity;
use crate::error::Error;
use crate::events::Events;
use crate::files;
use crate::fingerprint::built_libraries;
use crate::plan::Plan;
use crate::report::ReportError;
use crate::report::manifest::{ManifestInputs, PhaseTimes};
use crate::retrieval::external::RetrieverIdentity;
use crate::sweep::rows::StageTimes;
use crate::sweep::shard::{self, Shard};

/// shard.json: what a shard folder holds and what made it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ShardRecord {
    /// Always "chunksweep".
    pub tool: String,
    /// chunksweep's version (Cargo package version).
    pub version: String,
    /// The splitting, tokenizing and analyzing libraries built in, with their versions.
    pub libraries: BTreeMap<String, String>,
    /// Which part of the grid.
    pub shard: Shard,
    /// Its configurations' ids ([`crate::sweep::ConfigSpec::id`]), in grid order.
    pub configs: Vec<String>,
    /// When the shard started (RFC 3339, UTC).
    pub started_at: String,
    /// The command line, as given.
    pub command: Vec<String>,
    /// The resolved plan of the whole grid, as a manifest's `config` records it.
    pub config: Value,
    /// The corpus and golden-set fingerprints, as a manifest's `inputs`.
    pub inputs: Value,
    /// For each of its configurations chunked by an external chunker, the chunker's identity.
    #[serde(default)]
    pub external: BTreeMap<String, Identity>,
    /// For each external retriever its configurations ran through, by its declared name: the
    /// retriever's identity (command, hashed files, its hello's name and versions, protocol).
    /// `merge` checks that the shards agree and records it as an unsharded run does.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub retrievers: BTreeMap<String, RetrieverIdentity>,
    /// SHA-256 of each file the shard wrote, by name relative to its folder.
    pub files: BTreeMap<String, String>,
    /// Wall time of the shard, seconds.
    pub wall_time_s: f64,
    /// Wall time of each phase, ms.
    pub phase_time_ms: PhaseTimes,
    /// Wall time of each configuration's stages, ms.
    pub config_time_ms: BTreeMap<String, StageTimes>,
}

/// What `sweep --shard` did.
pub struct ShardOutput {
    /// The shard's folder.
    pub dir: PathBuf,
    /// Which part.
    pub shard: Shard,
    /// Its configurations' ids, in grid order.
    pub configs: Vec<String>,
    /// Questions scored per configuration.
    pub n_questions: usize,
    /// Wall time, seconds.
    pub wall_s: f64,
}

/// The refusal of a grid whose prepare step calls a model: its records (embed_calls.csv,
/// embeddings.json, context_calls.csv, rerank_calls.csv, rerank.json) are not joined by `merge`.
fn refuse_model_calls(plan: &Plan) -> Result<(), shard::ShardError> {
    let needs = if plan.embed.is_some() {
        Some("embeddings (a dense or hybrid retriever, or the semantic strategy)")
    } else if plan.context.is_some() {
        Some("model-written contexts (the llm_context prefix)")
    } else if plan.rerank.is_some() {
        Some("a reranker (--rerank)")
    } else {
        None
    };
    match needs {
        Some(needs) => Err(shard::ShardError::NeedsModelCalls(needs.to_string())),
        None => Ok(()),
    }
}

/// SHA-256 of a file, hex.
pub(super) fn file_sha256(path: &Path) -> Result<String, std::io::Error> {
    let mut h = Sha256::new();
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = std::io::Read::read(&mut file, &mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

/// Every regular file under `dir` (one level of folders, for chunks/), as names relative to
/// `dir` with `/`, sorted, without shard.json and the lock.
pub(super) fn shard_files(dir: &Path) -> Result<Vec<String>, std::io::Error> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if [files::SHARD, files::SHARD_TMP, files::LOCK].contains(&name.as_str()) {
            continue;
        }
        if entry.file_type()?.is_dir() {
            for inner in std::fs::read_dir(entry.path())? {
                let inner = inner?;
                if inner.file_type()?.is_file() {
                    names.push(format!("{name}/{}", inner.file_name().to_string_lossy()));
                }
            }
        } else {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// `chunksweep sweep --shard` on the runtime `rt`: sweeps the configurations of `shard` of `plan`'s grid into
/// `<plan.run_dir>/shard-I-of-N` (sweep.csv, sweep_questions.csv, chunkers.csv with external
/// chunkers, chunks/ with --dump-chunks), then writes shard.json last. No selection or report:
/// `chunksweep merge` makes them from every shard. A shard.json left by an earlier run of the
/// folder is removed before anything is swept, so a shard stopped midway has none.
///
/// # Errors
/// [`shard::ShardError`] for more shards than configurations or a grid that calls a model in
/// its prepare step; otherwise as `sweep`.
pub(super) fn sweep_shard(
    plan: &Plan,
    shard: Shard,
    command: &[String],
    rt: &tokio::runtime::Runtime,
    events: Events<'_>,
) -> Result<ShardOutput, Error> {
    let started = Instant::now();
    let started_at = jiff::Timestamp::now();
    refuse_model_calls(plan)?;
    let configs = shard::select(&plan.configs, shard)?;
    let dir = plan.run_dir.join(shard.folder_name());
    let mut part = plan.clone();
    part.configs = configs;
    part.run_dir = dir.clone();
    let loaded = swept::load(&part, events)?;
    let marker = dir.join(files::SHARD);
    match std::fs::remove_file(&marker) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(ReportError::Io {
                path: marker,
                source: e,
            }
            .into());
        }
        _ => {}
    }
    let (swept, run_dir) = swept::sweep_loaded(&part, loaded, rt, None, events)?;
    let io = |path: PathBuf| move |source| ReportError::Io { path, source };
    let mut hashes = BTreeMap::new();
    for name in shard_files(&dir).map_err(io(dir.clone()))? {
        let path = dir.join(&name);
        hashes.insert(name, file_sha256(&path).map_err(io(path))?);
    }
    let json = |source| ReportError::Json {
        path: marker.clone(),
        source,
    };
    let record = ShardRecord {
        tool: "chunksweep".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        libraries: built_libraries(),
        shard,
        configs: part.configs.iter().map(|c| c.id()).collect(),
        started_at: started_at.to_string(),
        command: command.to_vec(),
        config: serde_json::to_value(plan).map_err(json)?,
        inputs: serde_json::to_value(ManifestInputs::new(
            &swept.corpus,
            &plan.golden,
            swept.golden.questions.len(),
        )?)
        .map_err(json)?,
        external: part
            .configs
            .iter()
            .filter_map(|c| {
                let chunks = swept.context.external.get(&c.params)?;
                Some((c.id(), chunks.identity.clone()))
            })
            .collect(),
        retrievers: swept
            .context
            .retrieved
            .identities
            .iter()
            .map(|(name, identity)| (name.clone(), identity.clone()))
            .collect(),
        files: hashes,
        wall_time_s: started.elapsed().as_secs_f64(),
        phase_time_ms: swept.phases,
        config_time_ms: swept
            .outcomes
            .iter()
            .map(|o| (o.config.id(), o.times))
            .collect(),
    };
    // written whole under another name, then renamed: shard.json is there complete or not at all
    let text = serde_json::to_string_pretty(&record).map_err(json)? + "\n";
    let tmp = dir.join(files::SHARD_TMP);
    std::fs::write(&tmp, text).map_err(io(tmp.clone()))?;
    std::fs::rename(&tmp, &marker).map_err(io(marker.clone()))?;
    drop(run_dir);
    Ok(ShardOutput {
        dir,
        shard,
        configs: record.configs,
        n_questions: swept.golden.questions.len(),
        wall_s: record.wall_time_s,
    })
}
