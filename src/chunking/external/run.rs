//! The external chunkers of a sweep, run once before any configuration is scored: each
//! declared chunker started once and sent every (configuration, document) its cache does not
//! hold, each precomputed file read, and every chunk placed in its document.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use rayon::prelude::*;
use sha2::{Digest, Sha256};

use super::cache::{self, ChunkerCache};
use super::error::{ExternalError, Problem};
use super::locate;
use super::precomputed::{self, ChunksFile};
use super::protocol::{self, Request, Response};
use super::session::Session;
use super::types::{
    ChunkerSpec, ConfigChunks, ExternalChunks, Identity, Launch, PlacementCounts, Responses,
    config_label,
};
use crate::chunking::chunk::{ChunkParams, Strategy};
use crate::corpus::Corpus;
use crate::tokenize::TokenizerKind;

/// What the external chunkers of a sweep read.
pub struct ExternalInputs<'a> {
    /// The corpus.
    pub corpus: &'a Corpus,
    /// The grid's tokenizer (sent to chunkers that count tokens).
    pub tokenizer: TokenizerKind,
    /// The chunkers declared for this run.
    pub chunkers: &'a [ChunkerSpec],
    /// Precomputed chunks files (`--chunks DIR`).
    pub files: &'a [ChunksFile],
    /// Every configuration's chunking parameters (built-in ones are skipped).
    pub params: &'a [ChunkParams],
    /// The chunker cache's file (`None`: no cache).
    pub cache: Option<&'a Path>,
    /// Where the chunkers' stderr lines go, with the chunker's name.
    pub stderr: &'a (dyn Fn(&str, &str) + Sync),
}

/// Runs every declared chunker that a configuration of `inputs.params` names, and reads every
/// precomputed file, into placed chunks.
///
/// # Errors
/// [`ExternalError`] naming the chunker, and where one was being chunked the configuration and
/// document: the first chunker that cannot start, hangs, fails, breaks the protocol, or returns
/// a chunk that cannot be used (see [`Problem`]). Responses already received stay in the cache.
pub fn run_chunkers(inputs: &ExternalInputs<'_>) -> Result<ExternalChunks, ExternalError> {
    let cache = match inputs.cache {
        Some(path) => {
            let first = inputs.chunkers.first().map_or("", |c| c.name.as_str());
            Some(ChunkerCache::open(path).map_err(|p| ExternalError::new(first, p))?)
        }
        None => None,
    };
    let mut out = ExternalChunks::default();
    for spec in inputs.chunkers {
        let mut wanted: Vec<ChunkParams> = Vec::new();
        for p in inputs.params {
            let ours = matches!(p.strategy, Strategy::External(n) if n.as_str() == spec.name);
            if ours && !wanted.contains(p) {
                wanted.push(*p);
            }
        }
        if wanted.is_empty() {
            continue;
        }
        let (identity, responses) = run_one(inputs, spec, &wanted, cache.as_ref())?;
        for (i, params) in wanted.iter().enumerate() {
            let docs = &responses[i];
            let placed = place_all(inputs.corpus, params, spec.max_unlocated_share, docs)?;
            out.configs
                .insert(*params, with_identity(placed, &identity));
        }
    }
    for file in inputs.files {
        let (identity, docs) = precomputed::read(file, inputs.corpus)?;
        let placed = place_all(inputs.corpus, &file.params, 0.0, &docs)?;
        let placed = with_identity(placed, &identity);
        out.configs.insert(file.params, placed);
    }
    if let Some(p) = inputs.params.iter().find(|p| !out.configs.contains_key(p)) {
        return Err(ExternalError {
            chunker: p.strategy.name().to_string(),
            config: Some(config_label(p)),
            document: None,
            problem: Box::new(Problem::NotDeclared),
        });
    }
    Ok(out)
}

fn with_identity(
    (docs, mut counts): (Vec<Vec<locate::Placed>>, PlacementCounts),
    identity: &Identity,
) -> ConfigChunks {
    counts.reported = reported(identity);
    counts.size_unit = identity.unit.name().to_string();
    ConfigChunks {
        docs,
        counts,
        identity: identity.clone(),
    }
}

/// `langchain-recursive (langchain-text-splitters 0.3.8, tiktoken 0.9.0)`.
fn reported(identity: &Identity) -> String {
    let versions: Vec<String> = identity
        .versions
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    match versions.is_empty() {
        true => identity.reported.clone(),
        false => format!("{} ({})", identity.reported, versions.join(", ")),
    }
}

/// SHA-256 of each argument of `launch.command` that names a file in its folder, and of each
/// entry of `launch.files` (a folder: of its files' paths and contents, in path order, Python's
/// `__pycache__` left out), by the path as written: what identifies a user's command's code.
pub fn hashed_files(launch: &Launch<'_>) -> BTreeMap<String, String> {
    let spec = launch;
    let named = spec.command.iter().filter(|a| spec.dir.join(a).is_file());
    let listed = spec.files.iter().map(|f| f.to_string_lossy().into_owned());
    named
        .cloned()
        .chain(listed)
        .filter_map(|written| {
            let path = spec.dir.join(&written);
            let mut h = Sha256::new();
            let mut files: Vec<_> = walkdir::WalkDir::new(&path)
                .into_iter()
                .filter_map(Result::ok)
                .filter(|e| e.file_type().is_file())
                .filter(|e| {
                    !e.path()
                        .components()
                        .any(|c| c.as_os_str() == "__pycache__")
                })
                .map(|e| e.into_path())
                .collect();
            files.sort();
            for file in &files {
                let bytes = std::fs::read(file).ok()?;
                let name = file.strip_prefix(&path).unwrap_or(file).to_string_lossy();
                h.update((name.len() as u64).to_le_bytes());
                h.update(name.as_bytes());
                h.update(Sha256::digest(&bytes));
            }
            (!files.is_empty()).then(|| (written, hex::encode(h.finalize())))
        })
        .collect()
}

/// The identity of `spec` from its hello.
fn identity_of(spec: &ChunkerSpec, hello: &protocol::HelloReply) -> Identity {
    Identity {
        command: spec.command.clone(),
        files: hashed_files(&spec.launch()),
        reported: hello.chunker.clone(),
        versions: hello.versions.clone(),
        protocol: protocol::VERSION,
        unit: spec.unit,
    }
}

/// The identity of the chunker that makes `params`' chunks, without chunking anything: a
/// declared chunker is started for its hello only; a precomputed file is read.
///
/// # Errors
/// As [`run_chunkers`] for that chunker's start and hello, or the file;
/// [`Problem::NotDeclared`] when neither declares `params`' strategy.
pub fn identify(
    inputs: &ExternalInputs<'_>,
    params: &ChunkParams,
) -> Result<Identity, ExternalError> {
    if let Some(spec) = inputs
        .chunkers
        .iter()
        .find(|c| c.name == params.strategy.name())
    {
        let fail = |problem| ExternalError::new(&spec.name, problem);
        let sink = |line: &str| (inputs.stderr)(&spec.name, line);
        let (mut session, hello) = Session::start(spec, &sink).map_err(fail)?;
        let identity = identity_of(spec, &hello);
        session.exchange(std::iter::empty(), |_| Ok(()), ExternalError::new)?;
        return Ok(identity);
    }
    match inputs.files.iter().find(|f| f.params == *params) {
        Some(file) => Ok(precomputed::read(file, inputs.corpus)?.0),
        None => Err(ExternalError {
            chunker: params.strategy.name().to_string(),
            config: Some(config_label(params)),
            document: None,
            problem: Box::new(Problem::NotDeclared),
        }),
    }
}

/// Starts `spec`, takes its hello, and returns its identity and each wanted configuration's
/// responses (in `wanted`'s order, each in corpus order): from the cache, else asked.
fn run_one(
    inputs: &ExternalInputs<'_>,
    spec: &ChunkerSpec,
    wanted: &[ChunkParams],
    cache: Option<&ChunkerCache>,
) -> Result<(Identity, Vec<Responses>), ExternalError> {
    let sink = |line: &str| (inputs.stderr)(&spec.name, line);
    let fail = |problem| ExternalError::new(&spec.name, problem);
    let (mut session, hello) = Session::start(spec, &sink).map_err(fail)?;
    let identity = identity_of(spec, &hello);
    let corpus = inputs.corpus;
    let tokenizer = inputs.tokenizer.name();
    let mut slots: Vec<Vec<Option<(Response, bool)>>> =
        vec![vec![None; corpus.docs.len()]; wanted.len()];
    // each request not answered by the cache, with its cache key (none without a cache)
    let mut missing: Vec<(usize, usize, Option<String>)> = Vec::new();
    let identity_sha = identity.sha256();
    for (pi, p) in wanted.iter().enumerate() {
        for (di, doc) in corpus.docs.iter().enumerate() {
            let key = cache.map(|_| cache::key(&identity_sha, p, tokenizer, &doc.text));
            let held = match (cache, &key) {
                (Some(c), Some(key)) => c.get::<Response>(key).map_err(fail)?,
                _ => None,
            };
            match held.filter(|r| r.id == doc.id) {
                Some(r) => slots[pi][di] = Some((r, true)),
                None => missing.push((pi, di, key)),
            }
        }
    }
    let lines = missing.iter().map(|&(pi, di, _)| {
        let (p, doc) = (&wanted[pi], &corpus.docs[di]);
        serde_json::to_string(&Request {
            id: &doc.id,
            text: &doc.text,
            chunk_size: p.chunk_size,
            chunk_overlap: p.chunk_overlap,
            unit: spec.unit.name(),
            tokenizer,
        })
        .expect("a request serialises")
    });
    let mut answered: Vec<HashSet<String>> = vec![HashSet::new(); wanted.len()];
    session.exchange(
        lines,
        |s| {
            let mut read = |store: Option<&ChunkerCache>| -> Result<(), ExternalError> {
                for (pi, di, key) in &missing {
                    let doc = &corpus.docs[*di];
                    let at = |problem| ExternalError {
                        chunker: spec.name.clone(),
                        config: Some(config_label(&wanted[*pi])),
                        document: Some(doc.id.clone()),
                        problem: Box::new(problem),
                    };
                    let expected = format!("the response for {:?}", doc.id);
                    let line = s.line(&expected).map_err(at)?;
                    let response = protocol::parse_response(&line).map_err(|problem| {
                        at(Problem::BadLine {
                            line: protocol::shorten(&line),
                            problem,
                            expected,
                        })
                    })?;
                    if response.id != doc.id {
                        return Err(at(Problem::WrongDocument {
                            expected: doc.id.clone(),
                            given: response.id.clone(),
                            twice: answered[*pi].contains(&response.id),
                        }));
                    }
                    answered[*pi].insert(response.id.clone());
                    if let (Some(c), Some(key)) = (store, key) {
                        c.put(key, &spec.name, &response.id, &response)
                            .map_err(at)?;
                    }
                    slots[*pi][*di] = Some((response, false));
                }
                Ok(())
            };
            match cache {
                Some(c) => c.batch(|c| read(Some(c))).map_err(fail)?,
                None => read(None),
            }
        },
        ExternalError::new,
    )?;
    let responses = slots
        .into_iter()
        .map(|docs| {
            docs.into_iter()
                .map(|r| r.expect("every document answered"))
                .collect()
        })
        .collect();
    Ok((identity, responses))
}

/// Places every document's chunks of one configuration, counting how; refuses more unlocated
/// chunks than `max_unlocated_share` of them.
fn place_all(
    corpus: &Corpus,
    params: &ChunkParams,
    max_unlocated_share: f64,
    responses: &[(Response, bool)],
) -> Result<(Vec<Vec<locate::Placed>>, PlacementCounts), ExternalError> {
    let label = config_label(params);
    let mut counts = PlacementCounts {
        config: label.clone(),
        chunker: params.strategy.name().to_string(),
        documents: corpus.docs.len(),
        ..PlacementCounts::default()
    };
    let mut first_unlocated: Option<(String, usize)> = None;
    let mut docs = Vec::with_capacity(corpus.docs.len());
    // documents placed in parallel; the first error in document order is the one reported
    let placements: Vec<_> = corpus
        .docs
        .par_iter()
        .zip(responses)
        .map(|(doc, (response, _))| locate::place(doc, &response.chunks))
        .collect();
    for ((doc, (_, cached)), placed) in corpus.docs.iter().zip(responses).zip(placements) {
        counts.documents_cached += usize::from(*cached);
        let placed = placed.map_err(|(i, problem)| ExternalError {
            chunker: params.strategy.name().to_string(),
            config: Some(label.clone()),
            document: Some(doc.id.clone()),
            problem: Box::new(Problem::Chunk {
                position: i + 1,
                problem,
            }),
        })?;
        let mut kept = Vec::with_capacity(placed.len());
        for (i, p) in placed.into_iter().enumerate() {
            counts.add(p.as_ref());
            match p {
                Some(p) => kept.push(p),
                None => {
                    first_unlocated.get_or_insert_with(|| (doc.id.clone(), i + 1));
                }
            }
        }
        docs.push(kept);
    }
    if let Some(first) = first_unlocated
        && counts.unlocated as f64 > max_unlocated_share * counts.chunks as f64
    {
        return Err(ExternalError {
            chunker: params.strategy.name().to_string(),
            config: Some(label),
            document: None,
            problem: Box::new(Problem::Unlocated {
                unlocated: counts.unlocated,
                chunks: counts.chunks,
                first,
                allowed: max_unlocated_share,
            }),
        });
    }
    Ok((docs, counts))
}
