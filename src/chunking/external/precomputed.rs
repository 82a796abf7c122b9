//! Precomputed chunks (`--chunks DIR`), for a pipeline that cannot be called: one file per
//! configuration, `<name>-<chunk_size>-o<chunk_overlap>.jsonl`, holding what a chunker would
//! write: its hello, then one response per document of the corpus, in any order.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::error::{ExternalError, Problem};
use super::name::ExternalName;
use super::protocol::{self, Response};
use super::types::{Identity, Responses, SizeUnit, config_label};
use crate::chunking::chunk::{ChunkParams, Strategy};
use crate::corpus::Corpus;

/// One precomputed chunks file and the configuration its name gives.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunksFile {
    /// The file.
    pub path: PathBuf,
    /// Its configuration: the name as an external strategy, chunk_size, chunk_overlap.
    pub params: ChunkParams,
}

/// The `.jsonl` files of `dir`, sorted by name, with the configurations their names give.
///
/// # Errors
/// A sentence naming the folder or the file whose name does not read as
/// `<name>-<chunk_size>-o<chunk_overlap>.jsonl`, or a folder with no such file.
pub fn list(dir: &Path) -> Result<Vec<ChunksFile>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("--chunks {}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(format!(
            "--chunks {}: no <name>-<chunk_size>-o<chunk_overlap>.jsonl file in the folder",
            dir.display()
        ));
    }
    paths
        .into_iter()
        .map(|path| {
            let params = params_of(&path)?;
            Ok(ChunksFile { path, params })
        })
        .collect()
}

/// The configuration a file's name gives.
fn params_of(path: &Path) -> Result<ChunkParams, String> {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let bad = |why: &str| {
        format!(
            "{}: {why}; name a chunks file <name>-<chunk_size>-o<chunk_overlap>.jsonl (e.g. my-pipeline-512-o64.jsonl)",
            path.display()
        )
    };
    let parts: Vec<&str> = stem.split('-').collect();
    let n = parts.len();
    if n < 3 {
        return Err(bad("too few parts"));
    }
    let overlap = parts[n - 1]
        .strip_prefix('o')
        .and_then(|o| o.parse::<usize>().ok())
        .ok_or_else(|| bad("the last part is not o<chunk_overlap>"))?;
    let size = parts[n - 2]
        .parse::<usize>()
        .map_err(|_| bad("the part before it is not a chunk_size"))?;
    let name = ExternalName::new(&parts[..n - 2].join("-")).map_err(|e| bad(&e))?;
    let params = ChunkParams {
        strategy: Strategy::External(name),
        chunk_size: size,
        chunk_overlap: overlap,
    };
    params.validate().map_err(|e| bad(&e.to_string()))?;
    Ok(params)
}

/// Reads `file`: its hello and one response per document of `corpus`.
///
/// # Errors
/// [`ExternalError`] naming the file's configuration: a file that cannot be read, a first line
/// that is no hello, a line that is no response, a document missing, twice, or not in the corpus.
pub fn read(file: &ChunksFile, corpus: &Corpus) -> Result<(Identity, Responses), ExternalError> {
    let fail = |problem| ExternalError {
        chunker: file.params.strategy.name().to_string(),
        config: Some(config_label(&file.params)),
        document: None,
        problem: Box::new(problem),
    };
    let shown = file.path.display();
    let bytes = std::fs::read(&file.path)
        .map_err(|e| fail(Problem::Precomputed(format!("{shown}: {e}"))))?;
    let text = String::from_utf8(bytes.clone())
        .map_err(|e| fail(Problem::Precomputed(format!("{shown}: not UTF-8 ({e})"))))?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let at_line = |n: usize, line: &str, problem, expected: &str| {
        fail(Problem::BadLine {
            line: format!("{shown}:{}: {}", n + 1, protocol::shorten(line)),
            problem,
            expected: expected.to_string(),
        })
    };
    let (n, first) = lines
        .next()
        .ok_or_else(|| fail(Problem::Precomputed(format!("{shown}: the file is empty"))))?;
    let hello = protocol::parse_hello(first).map_err(|p| at_line(n, first, p, "a hello"))?;
    let unit = match hello.unit.as_deref() {
        None | Some("tokens") => SizeUnit::Tokens,
        Some("characters") => SizeUnit::Characters,
        Some(other) => {
            return Err(fail(Problem::Precomputed(format!(
                "{shown}: unit {other:?} in its hello: use tokens or characters"
            ))));
        }
    };
    let mut responses = Vec::new();
    for (n, line) in lines {
        responses
            .push(protocol::parse_response(line).map_err(|p| at_line(n, line, p, "a response"))?);
    }
    let responses = by_document(corpus, responses, |p| match p {
        Problem::Precomputed(why) => fail(Problem::Precomputed(format!("{shown}: {why}"))),
        other => fail(other),
    })?;
    let identity = Identity {
        command: Vec::new(),
        files: BTreeMap::from([(
            file.path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            hex::encode(Sha256::digest(&bytes)),
        )]),
        reported: hello.chunker,
        versions: hello.versions,
        protocol: protocol::VERSION,
        unit,
    };
    Ok((identity, responses))
}

/// A map from a document id to its response, checked: every document of the corpus once.
fn by_document(
    corpus: &Corpus,
    responses: Vec<Response>,
    fail: impl Fn(Problem) -> ExternalError,
) -> Result<Responses, ExternalError> {
    let mut by_id: HashMap<String, Response> = HashMap::new();
    for r in responses {
        if corpus.find(&r.id).is_none() {
            return Err(fail(Problem::Precomputed(format!(
                "the document {:?} is not in the corpus",
                r.id
            ))));
        }
        if by_id.contains_key(&r.id) {
            return Err(fail(Problem::Precomputed(format!(
                "the document {:?} comes twice",
                r.id
            ))));
        }
        by_id.insert(r.id.clone(), r);
    }
    corpus
        .docs
        .iter()
        .map(|d| {
            by_id.remove(&d.id).map(|r| (r, false)).ok_or_else(|| {
                fail(Problem::Precomputed(format!(
                    "the document {:?} is missing",
                    d.id
                )))
            })
        })
        .collect()
}
