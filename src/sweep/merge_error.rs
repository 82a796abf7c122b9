//! What `chunksweep merge` refuses, each naming the folder and what to do; nothing is merged.

use std::path::PathBuf;

use thiserror::Error;

use crate::exit::ExitClass;

/// Why shard folders cannot be merged.
#[derive(Debug, Error)]
pub enum MergeError {
    /// No folder given.
    #[error(
        "no shard folder given: name the folders `sweep --shard I/N` wrote (<out>/shard-I-of-N)"
    )]
    NoShard,
    /// A run folder (manifest.json, no shard.json) given as a shard.
    #[error(
        "{dir} is a run folder, not a shard: it has no shard.json; give the folders `sweep --shard I/N` wrote (<out>/shard-I-of-N)"
    )]
    RunFolder {
        /// The folder.
        dir: PathBuf,
    },
    /// A folder without shard.json: stopped before it finished, still running, or no shard.
    #[error(
        "{dir} is not a complete shard: it has no shard.json, which a shard writes last (the shard was stopped before it finished, is still running, or this is not a shard folder); run its `sweep --shard` command again"
    )]
    Incomplete {
        /// The folder.
        dir: PathBuf,
    },
    /// shard.json cannot be read.
    #[error("cannot read {path}: {message}; run the shard again")]
    BadRecord {
        /// shard.json.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A file of the shard is missing or differs from the one it wrote.
    #[error(
        "{path} is {what} the file its shard wrote (shard.json records its SHA-256): run the shard again"
    )]
    FileChanged {
        /// The file.
        path: PathBuf,
        /// `missing, not` or `not`.
        what: &'static str,
    },
    /// A shard written by another chunksweep.
    #[error(
        "{dir} was written by chunksweep {found} ({libraries}), and this is chunksweep {ours}: merge with the chunksweep that swept the shards, or sweep them again"
    )]
    Version {
        /// The folder.
        dir: PathBuf,
        /// Its version.
        found: String,
        /// Whether the libraries differ too.
        libraries: &'static str,
        /// This binary's.
        ours: String,
    },
    /// Two shards of different inputs or settings.
    #[error(
        "{other} is not a shard of the same sweep as {first}: {what} differ(s); merge only the shards of one `sweep --shard I/N` command"
    )]
    Differs {
        /// The first shard.
        first: PathBuf,
        /// The shard that differs.
        other: PathBuf,
        /// What differs: `the corpus (corpus_sha256 1a2b… and 3c4d…)`, `config.sweep.sizes`.
        what: String,
    },
    /// The same shard given twice.
    #[error("shard {shard} is given twice: {first} and {second}; give each shard once")]
    Repeated {
        /// `I/N`.
        shard: String,
        /// One folder.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
    /// Shards missing.
    #[error(
        "shard(s) {} of {count} missing: the folders given hold shard(s) {}; run the missing ones (`sweep --shard I/{count}`) and merge all {count}",
        missing.join(", "), given.join(", ")
    )]
    Missing {
        /// Their indexes.
        missing: Vec<String>,
        /// The indexes given.
        given: Vec<String>,
        /// N.
        count: usize,
    },
    /// A shard whose configurations are not those its index holds.
    #[error(
        "{dir} lists other configurations than shard {shard} of its grid holds (it was split by another chunksweep, or shard.json was edited): sweep it again"
    )]
    Split {
        /// The folder.
        dir: PathBuf,
        /// `I/N`.
        shard: String,
    },
    /// A CSV of a shard whose rows are not its configurations'.
    #[error("{path}: {message}; run the shard again")]
    Rows {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the row.
        message: String,
    },
    /// The corpus or golden set at the recorded path is not the one the shards swept.
    #[error(
        "the {what} at {path} is not the one the shards swept ({field} {found}, the shards': {recorded}): merge where the shards' inputs are, unchanged"
    )]
    InputsChanged {
        /// `corpus` or `golden set`.
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// The fingerprint's name.
        field: &'static str,
        /// Its fingerprint now.
        found: String,
        /// The shards'.
        recorded: String,
    },
    /// `run --merged` on a folder whose merged sweep is of other inputs or another grid.
    #[error(
        "--merged: {dir} holds a sweep of {what} than this run's: run with the corpus, golden set and grid the shards swept, or without --merged"
    )]
    OtherSweep {
        /// The folder.
        dir: PathBuf,
        /// `another corpus`, `another golden set`, `another grid`.
        what: &'static str,
    },
    /// `run --merged` on a folder whose sweep.csv lacks a row of the grid.
    #[error(
        "--merged: {path} has {rows} row(s) of {config_id}, where a whole sweep has one: merge the shards into it again"
    )]
    MissingRow {
        /// sweep.csv.
        path: PathBuf,
        /// The row's id.
        config_id: String,
        /// Rows found.
        rows: usize,
    },
    /// --out is one of the shards.
    #[error("--out {0} is one of the shard folders: give another folder")]
    OutIsShard(PathBuf),
}

impl MergeError {
    /// Every refusal is a usage error (exit 2): the inputs must change.
    pub fn exit_class(&self) -> ExitClass {
        ExitClass::Usage
    }
}
