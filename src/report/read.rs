//! Reading a run folder back: sweep.csv, sweep_questions.csv and the run's record
//! ([`RunRecord`], from manifest.json), so the decision can be regenerated without recomputing
//! the sweep (`chunksweep report results/<run-id>`).
//!
//! **The record.** manifest.json holds the run's resolved [`Plan`] under `config`, with
//! `schema_version` ([`MANIFEST_SCHEMA`]); it is read back into the same types. A setting the
//! manifest lacks is never read silently:
//! - a manifest of the current schema records every setting, so one missing is an error naming
//!   it ([`ReadError::MissingSettings`], exit 2): the file was edited or damaged;
//! - a manifest without a schema version (written before chunksweep recorded one; the committed
//!   examples under results/examples) or of an older schema is read with the documented
//!   default of each setting it lacks, and each is named in a warning
//!   ([`RunRecord::warnings`]); only `corpus` and `golden`, which have no default, are errors;
//! - a newer schema is an error ([`ReadError::NewerSchema`]).
//!
//! Adding a setting therefore means raising [`MANIFEST_SCHEMA`], so that the run folders written
//! before read it as its default, with a warning.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::Value;
use thiserror::Error;

use super::manifest::MANIFEST_SCHEMA;
use crate::config::{ConfigFile, RunOptions};
use crate::files;
use crate::plan::Plan;
use crate::prepare::contexts::ContextSettings;
use crate::retrieval::embeddings::EmbedSettings;
use crate::sweep::grid::expand;
use crate::sweep::rows::{QuestionRow, SweepRow};

/// Errors while reading a run folder.
#[derive(Debug, Error)]
pub enum ReadError {
    /// A required file is missing.
    #[error("{path} not found: is this a chunksweep run folder?")]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// A CSV file could not be read or a row did not parse.
    #[error("cannot read {path}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// The underlying error (it names the line).
        #[source]
        source: ::csv::Error,
    },
    /// manifest.json could not be read or parsed.
    #[error("cannot read {path}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: serde_json::Error,
    },
    /// A file could not be opened.
    #[error("cannot read {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// manifest.json lacks settings that it must record.
    #[error(
        "{path} lacks {}: {why}; restore {} or rerun the command that wrote the folder",
        fields.join(", "),
        if fields.len() == 1 { "it" } else { "them" }
    )]
    MissingSettings {
        /// The manifest.
        path: PathBuf,
        /// Each missing setting, as its path in the manifest (`config.selection.alpha`).
        fields: Vec<String>,
        /// Why they are required.
        why: String,
    },
    /// manifest.json was written by a newer chunksweep.
    #[error(
        "{path} has schema_version {found}, newer than this chunksweep reads ({MANIFEST_SCHEMA}): use a newer chunksweep"
    )]
    NewerSchema {
        /// The manifest.
        path: PathBuf,
        /// Its schema version.
        found: u64,
    },
    /// The settings recorded in manifest.json are not a plan this chunksweep can run.
    #[error("{path}: the recorded settings are unusable: {message}")]
    Invalid {
        /// The manifest.
        path: PathBuf,
        /// What is wrong with them.
        message: String,
    },
}

impl ReadError {
    /// Usage (2): the folder named is not a readable run folder.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        match self {
            ReadError::Missing { .. }
            | ReadError::Csv { .. }
            | ReadError::Json { .. }
            | ReadError::Io { .. }
            | ReadError::MissingSettings { .. }
            | ReadError::NewerSchema { .. }
            | ReadError::Invalid { .. } => crate::exit::ExitClass::Usage,
        }
    }
}

/// What a run folder holds for the decision.
#[derive(Debug, Clone)]
pub struct RunData {
    /// Rows of sweep.csv.
    pub sweep: Vec<SweepRow>,
    /// Rows of sweep_questions.csv.
    pub questions: Vec<QuestionRow>,
    /// The run's record (manifest.json).
    pub record: RunRecord,
}

/// A run's record, read back from its manifest.json: the plan it ran with and its command line.
#[derive(Debug, Clone)]
pub struct RunRecord {
    /// The manifest's `schema_version` (`None`: written before manifests had one).
    pub schema_version: Option<u64>,
    /// The command line, one string per argument (`None` when the manifest has none).
    pub command: Option<Vec<String>>,
    /// The plan, as resolved when the run started: `run_dir` is the folder opened, `configs`
    /// the grid expanded again from `sweep`; `run`'s own options (`candidates`, …) are not
    /// recorded and are empty. Server URLs are as recorded, credentials redacted.
    pub plan: Plan,
    /// One line per setting the manifest lacks that was read as its default, naming it and the
    /// value used (only for a manifest older than [`MANIFEST_SCHEMA`]).
    pub warnings: Vec<String>,
}

impl RunRecord {
    /// Reads `dir/manifest.json`.
    ///
    /// # Errors
    /// [`ReadError::Missing`] without one; [`ReadError::Io`] or [`ReadError::Json`] naming it;
    /// [`ReadError::NewerSchema`]; [`ReadError::MissingSettings`] naming every setting missing
    /// from a current manifest, or `corpus`/`golden` from any; [`ReadError::Invalid`] for a
    /// recorded grid that does not expand.
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
        let schema_version = manifest.get("schema_version").and_then(Value::as_u64);
        if let Some(found) = schema_version.filter(|&v| v > u64::from(MANIFEST_SCHEMA)) {
            return Err(ReadError::NewerSchema { path, found });
        }
        let mut config = manifest.get("config").cloned().unwrap_or(Value::Null);
        let filled = fill_defaults(&mut config, dir, &path)?;
        if schema_version == Some(u64::from(MANIFEST_SCHEMA)) && !filled.is_empty() {
            return Err(ReadError::MissingSettings {
                path,
                fields: filled.into_iter().map(|(field, _)| field).collect(),
                why: format!("a manifest of schema_version {MANIFEST_SCHEMA} records every setting"),
            });
        }
        let warnings = filled
            .iter()
            .map(|(field, value)| {
                format!(
                    "{} ({}) lacks {field}: read as its default {value}",
                    path.display(),
                    match schema_version {
                        Some(v) => format!("schema_version {v}, older than {MANIFEST_SCHEMA}"),
                        None => "no schema_version: written by an older chunksweep".into(),
                    }
                )
            })
            .collect();
        let mut plan: Plan = serde_json::from_value(config).map_err(json)?;
        plan.configs = expand(&plan.sweep).map_err(|e| ReadError::Invalid {
            path: path.clone(),
            message: e.to_string(),
        })?;
        plan.run_dir = dir.to_path_buf();
        let command = manifest
            .get("command")
            .and_then(|c| serde_json::from_value(c.clone()).ok());
        Ok(RunRecord {
            schema_version,
            command,
            plan,
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
            let fields = [("config.corpus", c.is_none()), ("config.golden", g.is_none())]
                .into_iter()
                .filter_map(|(f, missing)| missing.then(|| f.to_string()))
                .collect();
            return Err(ReadError::MissingSettings {
                path: path.to_path_buf(),
                fields,
                why: "a run's corpus and golden set have no default".into(),
            });
        }
    };
    let flags = ConfigFile {
        corpus: Some(corpus),
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
        ("embed", to_value(serde_json::to_value(EmbedSettings::default()))?),
        ("context", to_value(serde_json::to_value(ContextSettings::default()))?),
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

/// Reads every row of the CSV file at `path`.
///
/// # Errors
/// [`ReadError::Missing`] when the file does not exist, [`ReadError::Csv`] naming the file (and
/// the csv crate's line) otherwise.
pub fn read_rows<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, ReadError> {
    if !path.exists() {
        return Err(ReadError::Missing {
            path: path.to_path_buf(),
        });
    }
    let err = |source| ReadError::Csv {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = ::csv::Reader::from_path(path).map_err(err)?;
    reader.deserialize().collect::<Result<_, _>>().map_err(err)
}

/// Reads `dir/sweep.csv`, `dir/sweep_questions.csv` and the run's record,
/// `dir/manifest.json` ([`RunRecord::open`]).
///
/// # Errors
/// [`ReadError`] naming the file that is missing or malformed, or the settings missing from
/// the manifest.
pub fn read_run(dir: &Path) -> Result<RunData, ReadError> {
    let sweep = read_rows(&dir.join(files::SWEEP))?;
    let questions = read_rows(&dir.join(files::SWEEP_QUESTIONS))?;
    let record = RunRecord::open(dir)?;
    Ok(RunData {
        sweep,
        questions,
        record,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(rank: Option<usize>, recall: f64) -> QuestionRow {
        QuestionRow {
            config_id: "fixed-64-o9-none-bm25-k5".into(),
            cut: "k".into(),
            budget_tokens: None,
            question_id: "q, \"quoted\"".into(),
            question_type: String::new(),
            n_spans: 3,
            hit: 1,
            span_recall: recall,
            coverage: 0.1 + 0.2,
            margin: -1.0,
            unreachable: u8::from(rank.is_none()),
            first_correct_rank: rank,
            reciprocal_rank: 1.0 / 3.0,
            char_iou: 0.0,
            char_precision: 0.0,
            char_recall: 0.0,
            tie_at_k: 0,
            chunks_retrieved: 2,
            tokens_retrieved: 130,
            span_tokens: "12|40|7".into(),
            retrieved_chunk_ids: "a|b".into(),
            retrieved_scores: "1.0000|0.5000".into(),
            retrieved_ranges: "0-10|10-20".into(),
        }
    }

    #[test]
    fn question_rows_survive_a_round_trip_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sweep_questions.csv");
        // An empty rank (unreachable), awkward text and floats that are not short decimals.
        let rows = vec![question(None, 2.0 / 3.0), question(Some(4), 1.0 / 7.0)];
        crate::table::write_rows(&path, &rows).unwrap();
        let back: Vec<QuestionRow> = read_rows(&path).unwrap();
        assert_eq!(back, rows);
    }

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
            corpus: Some("docs".into()),
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
        let manifest = serde_json::json!({
            "schema_version": MANIFEST_SCHEMA,
            "command": ["chunksweep", "sweep"],
            "config": plan,
        });
        std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).unwrap();
        let record = RunRecord::open(dir.path()).unwrap();
        assert_eq!(record.plan, plan);
        assert!(record.warnings.is_empty());
        assert_eq!(record.command.unwrap(), ["chunksweep", "sweep"]);
        // a field of the optional embed section is checked like any other
        let mut manifest = manifest;
        manifest["config"]["embed"]
            .as_object_mut()
            .unwrap()
            .remove("batch_size");
        std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).unwrap();
        let err = RunRecord::open(dir.path()).unwrap_err();
        assert!(matches!(&err, ReadError::MissingSettings { fields, .. } if fields == &["config.embed.batch_size"]), "{err}");
        assert_eq!(err.exit_class(), crate::exit::ExitClass::Usage);
    }

    #[test]
    fn a_missing_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_run(dir.path()).unwrap_err();
        assert!(matches!(err, ReadError::Missing { .. }));
        assert!(
            err.to_string()
                .ends_with("sweep.csv not found: is this a chunksweep run folder?")
        );
    }
}
