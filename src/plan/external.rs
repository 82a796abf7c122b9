//! The external chunkers of a plan: those the config file's `[[chunkers]]` and the `--chunker`
//! flags declare, and the precomputed files of `--chunks DIR` (or the file's `chunks`), checked
//! against the grid's strategies.

use std::path::PathBuf;

use crate::chunking::external::ChunkerSpec;
use crate::chunking::external::precomputed::{self, ChunksFile};
use crate::config::{ConfigError, ConfigFile};
use crate::retrieval::external::RetrieverSpec;
use crate::sweep::grid::SweepSpec;

/// What a plan runs or reads for its external strategies.
pub(super) struct Declared {
    pub(super) chunkers: Vec<ChunkerSpec>,
    pub(super) dir: Option<PathBuf>,
    pub(super) files: Vec<ChunksFile>,
    pub(super) retrievers: Vec<RetrieverSpec>,
}

/// The chunkers and chunks files `file` and `flags` declare (a `--chunker` runs in the current
/// folder), with `sweep.precomputed` set from the files the grid names.
///
/// # Errors
/// [`ConfigError::Invalid`] for a bad name, command, timeout or share, a name declared twice,
/// an unreadable chunks folder or file name, a strategy that is no built-in and no declared
/// chunker, or a precomputed strategy with no file at the grid's sizes.
pub(super) fn declared(
    file: &ConfigFile,
    flags: &ConfigFile,
    sweep: &mut SweepSpec,
) -> Result<Declared, ConfigError> {
    let here = std::env::current_dir().unwrap_or_default();
    let mut chunkers = file.chunkers.clone();
    for flag in &flags.sweep.chunker {
        chunkers.push(ChunkerSpec::from_flag(flag, here.clone()).map_err(ConfigError::Invalid)?);
    }
    for (i, c) in chunkers.iter().enumerate() {
        c.validate().map_err(ConfigError::Invalid)?;
        if chunkers[..i].iter().any(|d| d.name == c.name) {
            return Err(ConfigError::Invalid(format!(
                "the chunker {} is declared twice",
                c.name
            )));
        }
    }
    let dir = flags.sweep.chunks.clone().or(file.chunks.clone());
    let files = match &dir {
        Some(d) => precomputed::list(d).map_err(ConfigError::Invalid)?,
        None => Vec::new(),
    };
    for f in &files {
        if chunkers.iter().any(|c| c.name == f.params.strategy.name()) {
            return Err(ConfigError::Invalid(format!(
                "{}: {} is also a declared chunker: give the files or the chunker another name",
                f.path.display(),
                f.params.strategy
            )));
        }
    }
    for s in sweep.strategies.iter().filter(|s| s.is_external()) {
        let declared = chunkers.iter().any(|c| c.name == s.name());
        let in_files: Vec<&ChunksFile> = files.iter().filter(|f| f.params.strategy == *s).collect();
        if !declared && in_files.is_empty() {
            return Err(ConfigError::Invalid(format!(
                "unknown strategy \"{s}\": it is no built-in (fixed, words, recursive, markdown, sentence, page, semantic) and no chunker of that name is declared for this run: declare it in the config file's [[chunkers]], with --chunker {s}=COMMAND, or give its precomputed chunks with --chunks DIR (a run folder or a baseline never supplies a command)"
            )));
        }
        if !in_files.is_empty()
            && !in_files
                .iter()
                .any(|f| sweep.sizes.contains(&f.params.chunk_size))
        {
            let sizes: Vec<String> = in_files
                .iter()
                .map(|f| f.params.chunk_size.to_string())
                .collect();
            return Err(ConfigError::Invalid(format!(
                "the precomputed chunks of {s} are at sizes {}, none of them in --sizes: add them to --sizes",
                sizes.join(", ")
            )));
        }
    }
    sweep.precomputed = files
        .iter()
        .filter(|f| sweep.strategies.contains(&f.params.strategy))
        .map(|f| f.params)
        .collect();
    let files = files
        .into_iter()
        .filter(|f| sweep.precomputed.contains(&f.params))
        .collect();
    Ok(Declared {
        chunkers,
        dir,
        files,
        retrievers: declared_retrievers(file, sweep)?,
    })
}

/// The retrievers the file's `[[retrievers]]` declare, each checked, and every external
/// retriever of the grid declared.
///
/// # Errors
/// [`ConfigError::Invalid`] for a bad name, command or timeout, a name declared twice, or a
/// retriever of the grid that is no built-in and not declared.
fn declared_retrievers(
    file: &ConfigFile,
    sweep: &SweepSpec,
) -> Result<Vec<RetrieverSpec>, ConfigError> {
    let retrievers = file.retrievers.clone();
    for (i, r) in retrievers.iter().enumerate() {
        r.validate().map_err(ConfigError::Invalid)?;
        if retrievers[..i].iter().any(|d| d.name == r.name) {
            return Err(ConfigError::Invalid(format!(
                "the retriever {} is declared twice",
                r.name
            )));
        }
    }
    for r in sweep.retrievers.iter().filter(|r| r.is_external()) {
        if !retrievers.iter().any(|d| d.name == r.name()) {
            return Err(ConfigError::Invalid(format!(
                "unknown retriever \"{r}\": it is no built-in (bm25, dense, hybrid) and no retriever of that name is declared for this run: declare it in the config file's [[retrievers]] (a run folder or a baseline never supplies a command)",
                r = r.name()
            )));
        }
    }
    Ok(retrievers)
}
