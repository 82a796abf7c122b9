//! The shards' records read and checked before anything is merged: each folder complete and
//! unchanged, all of one chunksweep, one corpus, one golden set and one grid, every shard there
//! once.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::files;
use crate::fingerprint::built_libraries;
use crate::pipeline::shard::{ShardRecord, file_sha256, shard_files};
use crate::plan::Plan;
use crate::retrieval::external::RetrieverIdentity;
use crate::sweep::grid::expand;
use crate::sweep::merge_error::MergeError;
use crate::sweep::shard::{Shard, select};

/// A shard folder and its record.
#[derive(Debug, Clone)]
pub struct ShardDir {
    /// The folder.
    pub dir: PathBuf,
    /// Its shard.json.
    pub record: ShardRecord,
}

/// Reads `dir/shard.json` and checks that every file it records is there unchanged and that
/// no other file is.
///
/// # Errors
/// [`MergeError::RunFolder`], [`MergeError::Incomplete`], [`MergeError::BadRecord`],
/// [`MergeError::FileChanged`].
pub fn read_shard(dir: &Path) -> Result<ShardDir, MergeError> {
    let path = dir.join(files::SHARD);
    if !path.is_file() {
        if dir.join(files::MANIFEST).is_file() {
            return Err(MergeError::RunFolder {
                dir: dir.to_path_buf(),
            });
        }
        return Err(MergeError::Incomplete {
            dir: dir.to_path_buf(),
        });
    }
    let bad = |message: String| MergeError::BadRecord {
        path: path.clone(),
        message,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
    let record: ShardRecord = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    for (name, sha) in &record.files {
        let file = dir.join(name);
        match file_sha256(&file) {
            Ok(found) if &found == sha => {}
            Ok(_) => {
                return Err(MergeError::FileChanged {
                    path: file,
                    what: "not",
                });
            }
            Err(_) => {
                return Err(MergeError::FileChanged {
                    path: file,
                    what: "missing, not",
                });
            }
        }
    }
    let present = shard_files(dir).map_err(|e| bad(e.to_string()))?;
    if let Some(extra) = present.iter().find(|n| !record.files.contains_key(*n)) {
        return Err(MergeError::FileChanged {
            path: dir.join(extra),
            what: "not",
        });
    }
    Ok(ShardDir {
        dir: dir.to_path_buf(),
        record,
    })
}

/// The leaves where two JSON values differ, as paths below `at` (`config.sweep.sizes`), at most
/// `limit` of them.
fn differences(a: &Value, b: &Value, at: &str, out: &mut Vec<String>, limit: usize) {
    if out.len() >= limit || a == b {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let (va, vb) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                differences(va, vb, &format!("{at}.{k}"), out, limit);
            }
        }
        _ => out.push(at.to_string()),
    }
}

/// The settings two shards must share: the recorded plan without where each wrote (`out`) and
/// where each read its inputs (`corpus`, `golden`: their contents are compared by fingerprint).
fn settings(config: &Value) -> Value {
    let mut v = config.clone();
    if let Value::Object(map) = &mut v {
        for key in ["out", "corpus", "golden"] {
            map.remove(key);
        }
    }
    v
}

fn short(sha: &Value) -> String {
    sha.as_str()
        .unwrap_or("?")
        .chars()
        .take(12)
        .collect::<String>()
        + "…"
}

/// What differs between two shards' records: the corpus, the golden set, the number of shards,
/// the settings (each leaf named).
fn what_differs(a: &ShardRecord, b: &ShardRecord) -> Option<String> {
    for (field, what) in [
        ("corpus_sha256", "the corpus"),
        ("golden_sha256", "the golden set"),
    ] {
        let (x, y) = (&a.inputs[field], &b.inputs[field]);
        if x != y {
            return Some(format!("{what} ({field} {} and {})", short(x), short(y)));
        }
    }
    if a.shard.count != b.shard.count {
        return Some(format!(
            "the number of shards ({} and {})",
            a.shard.count, b.shard.count
        ));
    }
    let mut found = Vec::new();
    differences(
        &settings(&a.config),
        &settings(&b.config),
        "config",
        &mut found,
        3,
    );
    (!found.is_empty()).then(|| format!("the grid or settings ({})", found.join(", ")))
}

/// Checks that every shard was written by this chunksweep, of the same inputs and settings as
/// the first, and that each shard of the split is there exactly once with the configurations
/// its index holds; returns the plan of the whole grid, writing into `out`.
///
/// # Errors
/// [`MergeError::NoShard`], [`MergeError::Version`], [`MergeError::Differs`],
/// [`MergeError::Repeated`], [`MergeError::Missing`], [`MergeError::Split`],
/// [`MergeError::BadRecord`] for a recorded plan that does not read back.
pub fn check_shards(shards: &[ShardDir], out: &Path) -> Result<Plan, MergeError> {
    let first = shards.first().ok_or(MergeError::NoShard)?;
    let ours = env!("CARGO_PKG_VERSION");
    let libraries = built_libraries();
    for s in shards {
        if s.record.version != ours || s.record.libraries != libraries {
            return Err(MergeError::Version {
                dir: s.dir.clone(),
                found: s.record.version.clone(),
                libraries: if s.record.libraries == libraries {
                    "the same libraries"
                } else {
                    "other library versions"
                },
                ours: ours.to_string(),
            });
        }
        if let Some(what) = what_differs(&first.record, &s.record) {
            return Err(MergeError::Differs {
                first: first.dir.clone(),
                other: s.dir.clone(),
                what,
            });
        }
    }
    let count = first.record.shard.count;
    let mut by_index: Vec<Option<&ShardDir>> = vec![None; count];
    for s in shards {
        let Shard { index, .. } = s.record.shard;
        match by_index.get(index).copied().flatten() {
            Some(earlier) => {
                return Err(MergeError::Repeated {
                    shard: s.record.shard.to_string(),
                    first: earlier.dir.clone(),
                    second: s.dir.clone(),
                });
            }
            None if index < count => by_index[index] = Some(s),
            None => {
                return Err(MergeError::Split {
                    dir: s.dir.clone(),
                    shard: s.record.shard.to_string(),
                });
            }
        }
    }
    let missing: Vec<String> = (0..count)
        .filter(|&i| by_index[i].is_none())
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        let given = (0..count)
            .filter(|&i| by_index[i].is_some())
            .map(|i| i.to_string())
            .collect();
        return Err(MergeError::Missing {
            missing,
            given,
            count,
        });
    }
    let plan = plan_of(first, out)?;
    for s in shards {
        let expected: Vec<String> = select(&plan.configs, s.record.shard)
            .map_err(|_| MergeError::Split {
                dir: s.dir.clone(),
                shard: s.record.shard.to_string(),
            })?
            .iter()
            .map(|c| c.id())
            .collect();
        if expected != s.record.configs {
            return Err(MergeError::Split {
                dir: s.dir.clone(),
                shard: s.record.shard.to_string(),
            });
        }
    }
    Ok(plan)
}

/// The external retrievers the shards' configurations ran through, by declared name, each as
/// the shards recorded it ([`ShardRecord::retrievers`]), once every shard that ran it agrees.
///
/// # Errors
/// [`MergeError::Differs`] naming the retriever and the fields that differ
/// (`the external retriever overlap (versions.python)`).
pub fn retrievers_agree(
    shards: &[ShardDir],
) -> Result<std::collections::BTreeMap<String, RetrieverIdentity>, MergeError> {
    let mut agreed: std::collections::BTreeMap<String, (&ShardDir, &RetrieverIdentity)> =
        Default::default();
    for s in shards {
        for (name, identity) in &s.record.retrievers {
            let Some((first, known)) = agreed.get(name) else {
                agreed.insert(name.clone(), (s, identity));
                continue;
            };
            if *known != identity {
                let as_json = |i: &RetrieverIdentity| serde_json::to_value(i).unwrap_or_default();
                let mut found = Vec::new();
                differences(&as_json(known), &as_json(identity), "", &mut found, 3);
                let fields: Vec<&str> = found.iter().map(|f| f.trim_start_matches('.')).collect();
                return Err(MergeError::Differs {
                    first: first.dir.clone(),
                    other: s.dir.clone(),
                    what: format!("the external retriever {name} ({})", fields.join(", ")),
                });
            }
        }
    }
    Ok(agreed
        .into_iter()
        .map(|(name, (_, identity))| (name, identity.clone()))
        .collect())
}

/// The plan a shard recorded, for the whole grid, writing into `out`.
fn plan_of(shard: &ShardDir, out: &Path) -> Result<Plan, MergeError> {
    let bad = |message: String| MergeError::BadRecord {
        path: shard.dir.join(files::SHARD),
        message,
    };
    let config = &shard.record.config;
    let mut plan: Plan =
        serde_json::from_value(config.clone()).map_err(|e| bad(format!("config: {e}")))?;
    if let Some(chunkers) = config.get("chunkers") {
        plan.chunkers = serde_json::from_value(chunkers.clone())
            .map_err(|e| bad(format!("config.chunkers: {e}")))?;
    }
    if let Some(dir) = config.get("chunks_dir") {
        plan.chunks_dir = serde_json::from_value(dir.clone())
            .map_err(|e| bad(format!("config.chunks_dir: {e}")))?;
    }
    plan.configs = expand(&plan.sweep).map_err(|e| bad(e.to_string()))?;
    plan.out = Some(out.to_path_buf());
    plan.run_dir = out.to_path_buf();
    Ok(plan)
}
