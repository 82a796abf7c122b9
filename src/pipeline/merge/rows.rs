//! The shards' files joined in grid order: sweep.csv and sweep_questions.csv record by record
//! (each record written back exactly as read), chunkers.csv's rows once per external
//! configuration in chunkers.csv's order, and chunks/.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use csv::ByteRecord;

use super::checks::ShardDir;
use crate::chunking::external::{PlacementCounts, config_label};
use crate::error::Error;
use crate::files;
use crate::plan::Plan;
use crate::report::ReportError;
use crate::report::read::read_rows;
use crate::report::run_dir::RunDir;
use crate::sweep::grid::ConfigCut;
use crate::sweep::merge_error::MergeError;

/// A CSV's header and its records grouped by their first field (the row's `config_id`), each
/// group in file order.
struct Grouped {
    header: ByteRecord,
    rows: BTreeMap<Vec<u8>, Vec<ByteRecord>>,
}

fn read_grouped(path: &Path, expected: &[String]) -> Result<Grouped, MergeError> {
    let bad = |message: String| MergeError::Rows {
        path: path.to_path_buf(),
        message,
    };
    let mut reader = csv::Reader::from_path(path).map_err(|e| bad(e.to_string()))?;
    let header = reader
        .byte_headers()
        .map_err(|e| bad(e.to_string()))?
        .clone();
    let mut rows: BTreeMap<Vec<u8>, Vec<ByteRecord>> = BTreeMap::new();
    for record in reader.byte_records() {
        let record = record.map_err(|e| bad(e.to_string()))?;
        let id = record.get(0).unwrap_or_default().to_vec();
        if !expected.iter().any(|e| e.as_bytes() == id.as_slice()) {
            return Err(bad(format!(
                "row {:?} is not of a configuration of this shard",
                String::from_utf8_lossy(&id)
            )));
        }
        rows.entry(id).or_default().push(record);
    }
    Ok(Grouped { header, rows })
}

/// Writes `name` into `out` from every shard's file of that name, the rows of each
/// configuration at each cut in grid order (`order`: row ids), each row as its shard wrote it.
/// `each_once`: every row id has exactly one row (sweep.csv).
fn join_csv(
    out: &mut RunDir,
    shards: &[ShardDir],
    name: &str,
    ids_of: &dyn Fn(&ShardDir) -> Vec<String>,
    order: &[String],
    each_once: bool,
) -> Result<PathBuf, Error> {
    let mut header: Option<ByteRecord> = None;
    let mut all: BTreeMap<Vec<u8>, Vec<ByteRecord>> = BTreeMap::new();
    for s in shards {
        let path = s.dir.join(name);
        let expected = ids_of(s);
        let grouped = read_grouped(&path, &expected)?;
        match &header {
            Some(h) if h != &grouped.header => {
                return Err(MergeError::Rows {
                    path,
                    message: "its header differs from the first shard's".into(),
                }
                .into());
            }
            _ => header = Some(grouped.header),
        }
        for id in &expected {
            let n = grouped.rows.get(id.as_bytes()).map_or(0, Vec::len);
            if each_once && n != 1 {
                return Err(MergeError::Rows {
                    path,
                    message: format!("{n} rows of {id}, where the sweep writes one"),
                }
                .into());
            }
        }
        all.extend(grouped.rows);
    }
    let target = out.path().join(name);
    let csv_err = |source| ReportError::Csv {
        path: target.clone(),
        source,
    };
    let mut writer = csv::Writer::from_path(&target).map_err(csv_err)?;
    if let Some(h) = &header {
        writer.write_byte_record(h).map_err(csv_err)?;
    }
    for id in order {
        for record in all.get(id.as_bytes()).into_iter().flatten() {
            writer.write_byte_record(record).map_err(csv_err)?;
        }
    }
    writer.flush().map_err(|source| ReportError::Io {
        path: target.clone(),
        source,
    })?;
    out.record(name);
    Ok(target)
}

/// The row ids (`config_id` of sweep.csv) of configurations `ids` of `plan`'s grid, each at
/// every cut, in grid order and cut order.
fn row_ids(plan: &Plan, ids: &[String]) -> Vec<String> {
    let cuts = plan.sweep.cuts();
    plan.configs
        .iter()
        .filter(|c| ids.contains(&c.id()))
        .flat_map(|c| {
            cuts.iter().map(move |&cut| {
                ConfigCut {
                    config: c.clone(),
                    cut,
                }
                .id()
            })
        })
        .collect()
}

/// Writes sweep.csv, sweep_questions.csv, chunkers.csv (when a shard has one) and chunks/
/// (when the shards dumped chunks) into `out` from `shards` (checked by
/// [`super::checks::check_shards`]).
///
/// # Errors
/// [`MergeError::Rows`] naming the shard's file whose rows are not its configurations';
/// [`ReportError`] naming a file that cannot be written.
pub fn write_joined(out: &mut RunDir, plan: &Plan, shards: &[ShardDir]) -> Result<(), Error> {
    let all_ids: Vec<String> = plan.configs.iter().map(|c| c.id()).collect();
    let order = row_ids(plan, &all_ids);
    let ids_of = |s: &ShardDir| row_ids(plan, &s.record.configs);
    join_csv(out, shards, files::SWEEP, &ids_of, &order, true)?;
    join_csv(out, shards, files::SWEEP_QUESTIONS, &ids_of, &order, false)?;
    join_chunkers(out, plan, shards)?;
    copy_chunks(out, shards)?;
    Ok(())
}

/// chunkers.csv: one row per external configuration (strategy, chunk_size, chunk_overlap), by
/// chunker name, then size, then overlap, as a whole sweep writes it.
fn join_chunkers(out: &mut RunDir, plan: &Plan, shards: &[ShardDir]) -> Result<(), Error> {
    let mut rows: BTreeMap<String, PlacementCounts> = BTreeMap::new();
    for s in shards {
        let path = s.dir.join(files::CHUNKERS);
        if path.is_file() {
            for row in read_rows::<PlacementCounts>(&path)? {
                rows.entry(row.config.clone()).or_insert(row);
            }
        }
    }
    if rows.is_empty() {
        return Ok(());
    }
    let mut params: Vec<_> = plan.configs.iter().map(|c| &c.params).collect();
    params.sort_by_key(|p| (p.strategy.name(), p.chunk_size, p.chunk_overlap));
    params.dedup();
    let ordered: Vec<PlacementCounts> = params
        .into_iter()
        .filter_map(|p| rows.remove(&config_label(p)))
        .collect();
    out.write_csv(files::CHUNKERS, &ordered)?;
    Ok(())
}

/// chunks/: every shard's files, copied.
fn copy_chunks(out: &mut RunDir, shards: &[ShardDir]) -> Result<(), Error> {
    let target = out.path().join(files::CHUNKS_DIR);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ReportError::Io { path, source }
    };
    let mut any = false;
    for s in shards {
        let source = s.dir.join(files::CHUNKS_DIR);
        if !source.is_dir() {
            continue;
        }
        std::fs::create_dir_all(&target).map_err(io(&target))?;
        for entry in std::fs::read_dir(&source).map_err(io(&source))? {
            let entry = entry.map_err(io(&source))?;
            std::fs::copy(entry.path(), target.join(entry.file_name()))
                .map_err(io(&entry.path()))?;
            any = true;
        }
    }
    if any {
        out.record(&format!("{}/", files::CHUNKS_DIR));
    }
    Ok(())
}
