//! manifest.json of a `sweep` or `run`: the plan, what the prepare and judge steps did, input
//! fingerprints, timings, and the files written (from the run folder writer); and the run's
//! record read back from it ([`RunRecord`]), through which `report` and `judge-check` open a
//! run.
//!
//! **The record.** manifest.json holds the run's resolved [`Plan`] under `config`, with
//! `schema_version` ([`MANIFEST_SCHEMA`]); it is read back into the same types. A setting the
//! manifest lacks is never read silently:
//! - a manifest of the current schema records every setting and its command, so one missing is
//!   an error naming it ([`ReadError::MissingSettings`], exit 2): the file was edited or damaged;
//! - a manifest without a schema version (written before chunksweep recorded one; the committed
//!   examples under results/examples) or of an older schema is read with the documented
//!   default of each setting it lacks, and each is named in a warning
//!   ([`RunRecord::warnings`]); only `corpus` and `golden`, which have no default, are errors;
//! - a newer schema is an error ([`ReadError::NewerSchema`]).
//!
//! The same holds for `fingerprints` (since schema 4: the pick's chunker, each document, each
//! question; [`crate::fingerprint`]): a current manifest without them is an error, an older one
//! is read without them and one warning says what `chunksweep check` then cannot tell.
//!
//! Adding a setting therefore means raising [`MANIFEST_SCHEMA`], so that the run folders written
//! before read it as its default, with a warning.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::chunking::external::Identity;
use crate::config::{ConfigFile, RunOptions};
use crate::corpus::Corpus;
use crate::error::Error;
use crate::files;
use crate::fingerprint::{Chunker, Fingerprints, built_libraries};
use crate::golden::GoldenSet;
use crate::plan::Plan;
use crate::prepare::contexts::{ContextSettings, ContextSummary};
use crate::prepare::embed::EmbedStats;
use crate::report::manifest::{MANIFEST_SCHEMA, Manifest, ManifestInputs, PhaseTimes};
use crate::report::read::ReadError;
use crate::report::run_dir::RunDir;
use crate::retrieval::embeddings::EmbedSettings;
use crate::retrieval::external::RetrieverIdentity;
use crate::sweep::grid::{ConfigCut, expand};
use crate::sweep::rows::StageTimes;

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

/// When a run started and how long it took.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timing {
    /// When it started.
    pub started_at: jiff::Timestamp,
    /// Its wall time, seconds.
    pub wall_s: f64,
}

/// What a manifest records of a sweep beside the plan: the inputs, what the prepare step did,
/// the external chunker of the pick (when it has one) and the times.
pub(super) struct SweepRecord<'a> {
    /// The corpus.
    pub corpus: &'a Corpus,
    /// The golden set.
    pub golden: &'a GoldenSet,
    /// What the embedding step did.
    pub embed: Option<&'a EmbedStats>,
    /// What the context step did.
    pub contexts: Option<&'a ContextSummary>,
    /// The identity of the external chunker that made the pick's chunks.
    pub external: Option<&'a Identity>,
    /// The identity of the pick's external retriever, when it has one.
    pub external_retriever: Option<&'a RetrieverIdentity>,
    /// Phase times, ms.
    pub phases: PhaseTimes,
    /// Each configuration's stage times, ms, by configuration id.
    pub config_times: BTreeMap<String, StageTimes>,
}

/// Writes manifest.json into `dir`, listing every file `dir` recorded, with the fingerprints
/// of `pick`'s chunker (the run's pick, or the chunker `check` tested), the corpus and the
/// golden set. `timing` is when the run started and how long it took.
pub(super) fn write_manifest(
    dir: &mut RunDir,
    plan: &Plan,
    command: &[String],
    timing: Timing,
    swept: SweepRecord<'_>,
    pick: &ConfigCut,
    judged: Option<JudgeRecord<'_>>,
) -> Result<(), Error> {
    let chunker = Chunker::new(
        pick,
        &plan.sweep,
        plan.embed.as_ref(),
        &built_libraries(),
        swept.external,
    )
    .with_retriever(swept.external_retriever);
    let manifest = Manifest {
        schema_version: MANIFEST_SCHEMA,
        tool: "chunksweep",
        version: env!("CARGO_PKG_VERSION"),
        started_at: timing.started_at.to_string(),
        command: command.to_vec(),
        config: RunConfig {
            plan,
            embeddings: swept.embed,
            llm_context: swept.contexts,
            judged,
        },
        inputs: ManifestInputs::new(swept.corpus, &plan.golden, swept.golden.questions.len())?,
        fingerprints: Fingerprints::new(chunker, swept.corpus, swept.golden),
        bm25: plan.sweep.bm25,
        wall_time_s: timing.wall_s,
        phase_time_ms: swept.phases,
        config_time_ms: swept.config_times,
        outputs: Vec::new(),
    };
    dir.write_manifest(manifest)?;
    Ok(())
}

/// A run's record, read back from its manifest.json: the plan it ran with and its command line.
#[derive(Debug, Clone)]
pub struct RunRecord {
    /// The manifest's `schema_version` (`None`: written before manifests had one).
    pub schema_version: Option<u64>,
    /// The command line, one string per argument (`None` when a manifest older than
    /// [`MANIFEST_SCHEMA`] has none).
    pub command: Option<Vec<String>>,
    /// The plan, as resolved when the run started: `run_dir` is the folder opened, `configs`
    /// the grid expanded again from `sweep`; `run`'s own options (`candidates`, …) are not
    /// recorded and are empty. Server URLs are as recorded, credentials redacted.
    pub plan: Plan,
    /// The fingerprints of the run's pick, corpus and golden set (`None` for a manifest older
    /// than schema 4, which has none; a warning says so).
    pub fingerprints: Option<Fingerprints>,
    /// One line per setting the manifest lacks that was read as its default, naming it and the
    /// value used, and one when it lacks its fingerprints (only for a manifest older than
    /// [`MANIFEST_SCHEMA`]).
    pub warnings: Vec<String>,
}

impl RunRecord {
    /// Reads `dir/manifest.json`.
    ///
    /// # Errors
    /// [`ReadError::Missing`] without one; [`ReadError::Io`] or [`ReadError::Json`] naming it;
    /// [`ReadError::Field`] naming a field of the wrong type (`config.selection.alpha`);
    /// [`ReadError::NewerSchema`]; [`ReadError::BadSchema`] for a `schema_version` that is not a
    /// whole number; [`ReadError::MissingSettings`] naming every setting missing from a current
    /// manifest (its `command` included), or `corpus`/`golden` from any; [`ReadError::Invalid`]
    /// for a recorded grid that does not expand.
    pub fn open(dir: &Path) -> Result<RunRecord, ReadError> {
        let path = dir.join(files::MANIFEST);
        if !path.exists() {
            return Err(ReadError::Missing { path });
        }
        let text = std::fs::read_to_string(&path).map_err(|source| ReadError::Io {
            path: path.clone(),
            source,
        })?;
        let json = |source| ReadError::Json {
            path: path.clone(),
            source,
        };
        let manifest: Value = serde_json::from_str(&text).map_err(json)?;
        let schema_version = match manifest.get("schema_version") {
            None => None,
            Some(found) => Some(found.as_u64().ok_or_else(|| ReadError::BadSchema {
                path: path.clone(),
                found: found.to_string(),
            })?),
        };
        if let Some(found) = schema_version.filter(|&v| v > u64::from(MANIFEST_SCHEMA)) {
            return Err(ReadError::NewerSchema { path, found });
        }
        let mut config = manifest.get("config").cloned().unwrap_or(Value::Null);
        let filled = fill_defaults(&mut config, dir, &path)?;
        let no_command = manifest.get("command").is_none();
        let no_fingerprints = manifest.get("fingerprints").is_none();
        let current = schema_version == Some(u64::from(MANIFEST_SCHEMA));
        if current && (no_command || no_fingerprints || !filled.is_empty()) {
            let command = no_command.then(|| "command".to_string());
            let fingerprints = no_fingerprints.then(|| "fingerprints".to_string());
            return Err(ReadError::MissingSettings {
                path,
                fields: command
                    .into_iter()
                    .chain(fingerprints)
                    .chain(filled.into_iter().map(|(field, _)| field))
                    .collect(),
                why: format!(
                    "a manifest of schema_version {MANIFEST_SCHEMA} records every setting"
                ),
            });
        }
        let older = match schema_version {
            Some(v) => format!("schema_version {v}, older than {MANIFEST_SCHEMA}"),
            None => "no schema_version: written by an older chunksweep".into(),
        };
        let mut warnings: Vec<String> = filled
            .iter()
            .map(|(field, value)| {
                format!(
                    "{} ({older}) lacks {field}: read as its default {value}",
                    path.display()
                )
            })
            .collect();
        if no_fingerprints {
            warnings.push(format!(
                "{} ({older}) lacks fingerprints: `chunksweep check` against this run takes its \
                 pick from its CSVs and compares questions by id alone, and cannot tell which \
                 chunker settings, library versions, documents or questions changed; rerun the \
                 command that wrote the folder to record them",
                path.display()
            ));
        }
        let field = |at: &str, e: serde_path_to_error::Error<serde_json::Error>| {
            let field = match e.path().iter().next() {
                None => at.to_string(),
                Some(_) => format!("{at}.{}", e.path()),
            };
            ReadError::Field {
                path: path.clone(),
                field,
                source: e.into_inner(),
            }
        };
        let mut plan: Plan =
            serde_path_to_error::deserialize(config).map_err(|e| field("config", e))?;
        plan.configs = expand(&plan.sweep).map_err(|e| ReadError::Invalid {
            path: path.clone(),
            message: e.to_string(),
        })?;
        plan.run_dir = dir.to_path_buf();
        let command = match manifest.get("command") {
            None => None,
            Some(c) => {
                Some(serde_path_to_error::deserialize(c.clone()).map_err(|e| field("command", e))?)
            }
        };
        let fingerprints = match manifest.get("fingerprints") {
            None => None,
            Some(f) => Some(
                serde_path_to_error::deserialize(f.clone())
                    .map_err(|e| field("fingerprints", e))?,
            ),
        };
        Ok(RunRecord {
            schema_version,
            command,
            plan,
            fingerprints,
            warnings,
        })
    }
}

/// Adds to `config` (a manifest's `config`) every setting it lacks, from the defaults of a plan
/// of the same corpus and golden set, and returns each one added with its value.
fn fill_defaults(
    config: &mut Value,
    dir: &Path,
    path: &Path,
) -> Result<Vec<(String, Value)>, ReadError> {
    let given = |key: &str| config.get(key).and_then(Value::as_str).map(PathBuf::from);
    let (corpus, golden) = match (given("corpus"), given("golden")) {
        (Some(c), Some(g)) => (c, g),
        (c, g) => {
            let fields = [
                ("config.corpus", c.is_none()),
                ("config.golden", g.is_none()),
            ]
            .into_iter()
            .filter(|&(_, missing)| missing)
            .map(|(field, _)| field.to_string())
            .collect();
            return Err(ReadError::MissingSettings {
                path: path.to_path_buf(),
                fields,
                why: "a run's corpus and golden set have no default".into(),
            });
        }
    };
    // the recorded reading settings ([corpus] readers, skip_unreadable), when not the defaults
    let reading: crate::corpus::Reading = config
        .get("reading")
        .and_then(|r| serde_json::from_value(r.clone()).ok())
        .unwrap_or_default();
    let flags = ConfigFile {
        corpus: crate::config::CorpusSection {
            path: Some(corpus),
            readers: reading.readers,
            skip_unreadable: Some(reading.skip_unreadable),
        },
        golden: Some(golden),
        out: Some(dir.to_path_buf()),
        ..ConfigFile::default()
    };
    let invalid = |message: String| ReadError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let mut defaults = Plan::resolve(
        ConfigFile::default(),
        flags,
        RunOptions::default(),
        jiff::Timestamp::UNIX_EPOCH,
    )
    .map_err(|e| invalid(e.to_string()))?;
    defaults.out = None;
    let to_value = |v: Result<Value, serde_json::Error>| v.map_err(|e| invalid(e.to_string()));
    let mut filled = Vec::new();
    fill(
        config,
        &to_value(serde_json::to_value(&defaults))?,
        "config",
        &mut filled,
    );
    // sections recorded only when the grid needs them
    for (key, section) in [
        (
            "embed",
            to_value(serde_json::to_value(EmbedSettings::default()))?,
        ),
        (
            "context",
            to_value(serde_json::to_value(ContextSettings::default()))?,
        ),
    ] {
        if let Some(recorded) = config.get_mut(key) {
            fill(recorded, &section, &format!("config.{key}"), &mut filled);
        }
    }
    Ok(filled)
}

/// Adds to the object `got` each key of the object `template` it lacks (recursively into the
/// objects both have), pushing the key's path below `at` and the value added.
fn fill(got: &mut Value, template: &Value, at: &str, filled: &mut Vec<(String, Value)>) {
    let (Value::Object(got), Value::Object(template)) = (got, template) else {
        return;
    };
    for (key, default) in template {
        let path = format!("{at}.{key}");
        match got.get_mut(key) {
            Some(value) => fill(value, default, &path, filled),
            None => {
                filled.push((path, default.clone()));
                got.insert(key.clone(), default.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_plan_reads_back_into_the_same_plan() {
        use crate::config::{ConfigFile, ContextSection, JudgeSection, SelectionSection};
        use crate::config::{EmbedSection, SweepSection};
        let dir = tempfile::tempdir().unwrap();
        // settings away from their defaults in every section, embed and context included
        let toml = "[sweep]\nsizes = [32, 96]\nbudgets = [500]\nretrievers = [\"bm25\", \"hybrid\"]\n\
                    prefixes = [\"llm_context\"]\n[sweep.bm25]\nk1 = 0.9\n[sweep.hybrid]\nrrf_k = 10.0\n\
                    [llm]\nbase_url = \"http://127.0.0.1:9/v1\"\n[judge]\ncontrols = false\nseed = 3\n\
                    [selection]\nconfidence = 0.9\n[context]\nmax_tokens = 50\n";
        let file: ConfigFile = toml::from_str(toml).unwrap();
        let flags = ConfigFile {
            corpus: crate::config::CorpusSection::at("docs"),
            golden: Some("g.csv".into()),
            out: Some(dir.path().to_path_buf()),
            sweep: SweepSection {
                top_k: Some(3),
                ..SweepSection::default()
            },
            embed: EmbedSection {
                model: Some("e5".into()),
                ..EmbedSection::default()
            },
            context: ContextSection {
                window_tokens: Some(99),
                ..ContextSection::default()
            },
            judge: JudgeSection {
                candidates: Some(2),
                ..JudgeSection::default()
            },
            selection: SelectionSection {
                rule: Some(crate::select::Rule::Seed),
                alpha: Some(0.1),
                ..SelectionSection::default()
            },
            ..ConfigFile::default()
        };
        let plan = Plan::resolve(
            file,
            flags,
            RunOptions::default(),
            jiff::Timestamp::UNIX_EPOCH,
        )
        .unwrap();
        assert!(plan.embed.is_some() && plan.context.is_some());
        let pick = ConfigCut {
            config: plan.configs[0].clone(),
            cut: crate::metrics::Cut::K(3),
        };
        let corpus = crate::corpus::Corpus::from_documents("docs", Vec::new());
        let golden = crate::golden::GoldenSet {
            path: "g.csv".into(),
            questions: Vec::new(),
            trimmed_spans: 0,
        };
        let libraries = built_libraries();
        let chunker = Chunker::new(&pick, &plan.sweep, plan.embed.as_ref(), &libraries, None);
        let fingerprints = Fingerprints::new(chunker, &corpus, &golden);
        let manifest = serde_json::json!({
            "schema_version": MANIFEST_SCHEMA,
            "command": ["chunksweep", "sweep"],
            "config": plan,
            "fingerprints": fingerprints,
        });
        std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).unwrap();
        let record = RunRecord::open(dir.path()).unwrap();
        assert_eq!(record.plan, plan);
        assert!(record.warnings.is_empty());
        assert_eq!(record.command.unwrap(), ["chunksweep", "sweep"]);
        assert_eq!(record.fingerprints, Some(fingerprints));
        // a field of the optional embed section is checked like any other
        let mut manifest = manifest;
        manifest["config"]["embed"]
            .as_object_mut()
            .unwrap()
            .remove("batch_size");
        std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).unwrap();
        let err = RunRecord::open(dir.path()).unwrap_err();
        assert!(
            matches!(&err, ReadError::MissingSettings { fields, .. } if fields == &["config.embed.batch_size"]),
            "{err}"
        );
        assert_eq!(err.exit_class(), crate::exit::ExitClass::Usage);
    }
}
