//! manifest.json: what a run was (schema version, tool version, resolved configuration, input
//! hashes, timings), so a reviewer can reproduce it and `report` can read the run back
//! ([`crate::pipeline::record::RunRecord`]). Secrets are never part of it: the configuration holds only the
//! names of environment variables, never their values.

use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::error::ReportError;
use crate::corpus::Corpus;
use crate::fingerprint::Fingerprints;

/// Fingerprint of the inputs.
#[derive(Debug, Clone, Serialize)]
pub struct ManifestInputs {
    /// Corpus folder.
    pub corpus_dir: PathBuf,
    /// Documents read.
    pub n_documents: usize,
    /// Total corpus size in bytes.
    pub corpus_bytes: usize,
    /// SHA-256 over every document's id and text, in document order.
    pub corpus_sha256: String,
    /// Golden-set file.
    pub golden_path: PathBuf,
    /// SHA-256 of the golden-set file's bytes.
    pub golden_sha256: String,
    /// Questions in the golden set.
    pub n_questions: usize,
}

impl ManifestInputs {
    /// Fingerprints a loaded corpus and a golden-set file.
    ///
    /// # Errors
    /// [`ReportError::Io`] if the golden file cannot be read.
    pub fn new(
        corpus: &Corpus,
        golden_path: &Path,
        n_questions: usize,
    ) -> Result<Self, ReportError> {
        let mut h = Sha256::new();
        for doc in &corpus.docs {
            h.update(doc.id.as_bytes());
            h.update([0u8]);
            h.update((doc.text.len() as u64).to_le_bytes());
            h.update(doc.text.as_bytes());
        }
        let golden = std::fs::read(golden_path).map_err(|source| ReportError::Io {
            path: golden_path.to_path_buf(),
            source,
        })?;
        Ok(ManifestInputs {
            corpus_dir: corpus.root.clone(),
            n_documents: corpus.docs.len(),
            corpus_bytes: corpus.total_bytes(),
            corpus_sha256: hex::encode(h.finalize()),
            golden_path: golden_path.to_path_buf(),
            golden_sha256: hex::encode(Sha256::digest(&golden)),
            n_questions,
        })
    }
}

/// The layout of manifest.json this chunksweep writes, recorded as its `schema_version`. Raise it
/// when a setting is added to the plan (or one is renamed), or a record such as `fingerprints`,
/// so that older run folders read the new setting as its default (or without the record) with a
/// warning instead of an error ([`crate::pipeline::record::RunRecord::open`]).
///
/// 1: the resolved plan under `config`, and `command`; 2: `[judge] min_judged_answers`;
/// 3: `[selection] delta` (the non-inferiority margin of the `equivalence` rule);
/// 4: `fingerprints`, and the Batch API settings (`[llm] batch`, each model's `batch_discount`);
/// 5: `[sweep] rerank` and each model's `usd_per_request` (reranking); 6: `[sweep] expand`
/// (small-to-big retrieval).
pub const MANIFEST_SCHEMA: u32 = 6;

/// The manifest of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Manifest<C: Serialize> {
    /// [`MANIFEST_SCHEMA`] when written.
    pub schema_version: u32,
    /// Always "chunksweep".
    pub tool: &'static str,
    /// The tool's version (Cargo package version).
    pub version: &'static str,
    /// When the run started (RFC 3339, UTC).
    pub started_at: String,
    /// The command line, as given.
    pub command: Vec<String>,
    /// The resolved configuration.
    pub config: C,
    /// Input fingerprints.
    pub inputs: ManifestInputs,
    /// The pick's chunker, each document and each question, fingerprinted for `chunksweep
    /// check` (since schema 4).
    pub fingerprints: Fingerprints,
    /// BM25 settings: analyzer, stemming, k1 and b.
    pub bm25: Bm25Settings,
    /// Wall time of the whole run, in seconds.
    pub wall_time_s: f64,
    /// Wall time of each phase of the run, in milliseconds.
    pub phase_time_ms: PhaseTimes,
    /// Wall time per configuration (chunk, index, retrieve, score), in milliseconds.
    pub config_time_ms: std::collections::BTreeMap<String, crate::sweep::rows::StageTimes>,
    /// Files written, relative to the run folder (set by [`super::run_dir::RunDir::write_manifest`]).
    pub outputs: Vec<String>,
}

/// Wall time of the phases of a sweep, in milliseconds. The configurations run in parallel, so
/// `configs_ms` is the wall time of all of them, not the sum of `config_time_ms`.
#[derive(Debug, Clone, Copy, Default, Serialize, serde::Deserialize)]
pub struct PhaseTimes {
    /// Reading the corpus and resolving the golden set.
    pub load_ms: f64,
    /// Tokenizing the corpus once (shared by every configuration).
    pub tokenize_ms: f64,
    /// Analyzing the corpus for BM25 once (shared by every configuration).
    pub analyze_ms: f64,
    /// Chunking, indexing, retrieving and scoring every configuration.
    pub configs_ms: f64,
    /// Writing the CSVs (and chunk dumps).
    pub write_ms: f64,
}

pub use crate::retrieval::Bm25Settings;
