//! The external retriever step: every configuration whose retriever is the user's own engine
//! ([`crate::retrieval::external`]) indexed and queried through the engine's command, once per
//! sweep, after the embeddings (when the run has an embeddings model it is sent the chunks' and
//! questions' vectors; without one, their texts only) and before the rerank step (which may
//! rerank its lists).
//!
//! Each declared retriever is started once (as an external chunker is, through
//! [`Session`]) and greeted; for each of its configurations that the retriever cache does not
//! hold, it is sent the chunks (`index`), then every question (`query`) with `top_n` the depth
//! the sweep reads ([`Depth`]: the deepest cut plus one, for its tie flag). Every reply is
//! checked whole. A configuration's answers are cached as soon as its last question is
//! answered; when anything fails, the step fails (nothing is scored) and the configurations
//! answered before stay cached, so the same command again sends only the rest.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::chunking::external::cache::ChunkerCache;
use crate::chunking::external::protocol::shorten;
use crate::chunking::external::run::hashed_files;
use crate::chunking::external::session::{Session, StderrSink};
use crate::corpus::Corpus;
use crate::events::{Events, RunEvent, Step};
use crate::golden::GoldenSet;
use crate::metrics::Cut;
use crate::metrics::Depth;
use crate::retrieval::Hit;
use crate::retrieval::embeddings::EmbedRole;
use crate::retrieval::external::error::{RetrieverError, RetrieverProblem};
use crate::retrieval::external::protocol::{
    self, ChunkIn, Hello, Reply, Request, ScoreScale, check_hits,
};
use crate::retrieval::external::spec::{RetrieverIdentity, RetrieverSpec};
use crate::retrieval::listed::{RetrievedLists, TopLists};
use crate::sweep::grid::{ConfigSpec, RetrieverKind};
use crate::sweep::index::{ConfigIndex, RetrievalContext};
use crate::tokenize::CorpusTokens;

/// The retriever cache's file name, beside the LLM response cache.
pub const RETRIEVER_CACHE: &str = "retrievers.sqlite";

/// What the step reads.
pub struct RetrieverInputs<'a> {
    /// The corpus.
    pub corpus: &'a Corpus,
    /// Its token streams.
    pub tokens: &'a CorpusTokens,
    /// The golden set (every question is asked).
    pub golden: &'a GoldenSet,
    /// The grid (its configurations with an external retriever are run; a reranked one's
    /// first stage).
    pub configs: &'a [ConfigSpec],
    /// Where ranked lists are cut (the depth asked).
    pub cuts: &'a [Cut],
    /// The retrievers declared for this command.
    pub retrievers: &'a [RetrieverSpec],
    /// Whether the run has an embeddings model: the chunks' and questions' vectors are sent
    /// (read from the context), otherwise the lines carry no `vector` field.
    pub vectors: bool,
    /// The retriever cache's file (`None`: no cache).
    pub cache: Option<&'a Path>,
    /// Where the retrievers' stderr lines go, with the retriever's name.
    pub stderr: &'a (dyn Fn(&str, &str) + Sync),
}

/// What one retriever did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RetrieverSummary {
    /// The name it was declared under.
    pub retriever: String,
    /// Its own name and versions, from its hello.
    pub reported: String,
    /// Configurations it serves.
    pub configs: usize,
    /// Of them, answered by the retriever cache.
    pub cached: usize,
    /// Questions it was sent (over the configurations not cached).
    pub queries_sent: usize,
    /// Wall time, ms.
    pub wall_ms: f64,
}

/// A configuration's answers: question text → hits (chunk, score), best first.
type Answered = Vec<(String, Vec<(usize, f64)>)>;

/// A configuration's answers as cached.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Answers(Answered);

/// One configuration to send: its lines and what checks the replies.
struct Job {
    config: String,
    n_chunks: usize,
    top_n: usize,
    key: String,
    /// The index request, then one query per question (taken by the writer when sent).
    lines: Vec<String>,
    /// The questions' ids and texts, in the order of the queries.
    questions: Vec<(String, String)>,
}

/// Runs every declared retriever over its configurations of `inputs.configs` (see the module
/// documentation), reading chunks and vectors from `context`.
///
/// # Errors
/// [`RetrieverError`] naming the retriever and, where one was being indexed or queried, the
/// configuration and question: the first that cannot start, hangs, crashes, reports an error
/// (its database down), breaks the protocol or the contract of its hits, or a configuration
/// no declared retriever serves.
pub fn retrieve_externally(
    inputs: &RetrieverInputs<'_>,
    context: &Arc<RetrievalContext>,
    events: Events<'_>,
) -> Result<(RetrievedLists, Vec<RetrieverSummary>), RetrieverError> {
    let mut wanted: Vec<ConfigSpec> = Vec::new();
    for c in inputs.configs.iter().filter(|c| c.retriever.is_external()) {
        let first = ConfigSpec {
            rerank: false,
            ..c.clone()
        };
        if !wanted.contains(&first) {
            wanted.push(first);
        }
    }
    let mut lists = TopLists::new();
    let mut scales = HashMap::new();
    let mut identities = HashMap::new();
    let mut summaries = Vec::new();
    if wanted.is_empty() {
        return Ok((RetrievedLists::default(), summaries));
    }
    if let Some(c) = wanted.iter().find(|c| {
        !inputs
            .retrievers
            .iter()
            .any(|r| r.name == c.retriever.name())
    }) {
        return Err(RetrieverError {
            retriever: c.retriever.name().to_string(),
            config: Some(c.id()),
            question: None,
            problem: Box::new(RetrieverProblem::Inputs(
                "no retriever of this name is declared for this command: declare it in the config file's [[retrievers]] (a run folder never supplies a command)".into(),
            )),
        });
    }
    let cache = match inputs.cache {
        Some(path) => Some(
            ChunkerCache::open(path)
                .map_err(|p| RetrieverError::new(&inputs.retrievers[0].name, cache_problem(p)))?,
        ),
        None => None,
    };
    events(RunEvent::Started {
        step: Step::Retrieve,
        total: wanted.len() as u64,
    });
    for spec in inputs.retrievers {
        let mine: Vec<&ConfigSpec> = wanted
            .iter()
            .filter(
                |c| matches!(c.retriever, RetrieverKind::External(n) if n.as_str() == spec.name),
            )
            .collect();
        if mine.is_empty() {
            continue;
        }
        let (summary, scale, identity) = run_one(
            inputs,
            spec,
            &mine,
            cache.as_ref(),
            context,
            &mut lists,
            events,
        )?;
        scales.insert(spec.name.clone(), scale.margin());
        identities.insert(spec.name.clone(), identity);
        summaries.push(summary);
    }
    let line: Vec<String> = summaries.iter().map(summary_line).collect();
    events(RunEvent::Finished {
        step: Step::Retrieve,
        summary: line.join("; "),
    });
    Ok((
        RetrievedLists {
            lists: Arc::new(lists),
            scales,
            identities,
        },
        summaries,
    ))
}

/// `chroma (chroma-hnsw (chromadb 1.5.9)): 6 configuration(s), 2 from the cache, 160 queries
/// sent in 4.1 s`.
pub fn summary_line(s: &RetrieverSummary) -> String {
    format!(
        "{} ({}): {} configuration(s), {} from the cache, {} queries sent in {:.1} s",
        s.retriever,
        s.reported,
        s.configs,
        s.cached,
        s.queries_sent,
        s.wall_ms / 1e3
    )
}

fn cache_problem(p: crate::chunking::external::Problem) -> RetrieverProblem {
    RetrieverProblem::Cache(p.to_string())
}

/// Starts `spec` and takes its hello: the session, how its scores compare, and its identity.
fn greet<'a>(
    spec: &RetrieverSpec,
    sink: StderrSink<'a>,
) -> Result<(Session<'a>, ScoreScale, RetrieverIdentity), RetrieverError> {
    let process = |p| RetrieverError::process(&spec.name, p);
    let mut session = Session::spawn(&spec.launch(), sink).map_err(process)?;
    let hello = Hello {
        protocol: protocol::PROTOCOL,
        version: protocol::VERSION,
        chunksweep: env!("CARGO_PKG_VERSION"),
        retriever: &spec.name,
    };
    let hello = serde_json::to_string(&hello).expect("a hello serialises");
    let reply = session
        .greet(&hello, protocol::parse_hello)
        .map_err(process)?;
    let identity = RetrieverIdentity {
        command: spec.command.clone(),
        files: hashed_files(&spec.launch()),
        reported: reply.retriever.clone(),
        versions: reply.versions.clone(),
        protocol: protocol::VERSION,
    };
    Ok((session, reply.scores, identity))
}

/// The identity of `spec`, from its hello (it is sent nothing else): what `check` records of
/// a pick's external retriever. Its stderr lines go to `stderr` with its name.
///
/// # Errors
/// [`RetrieverError`] when it cannot start, answer its hello or exit 0.
pub fn identify(
    spec: &RetrieverSpec,
    stderr: &(dyn Fn(&str, &str) + Sync),
) -> Result<RetrieverIdentity, RetrieverError> {
    let sink = |line: &str| stderr(&spec.name, line);
    let (mut session, _, identity) = greet(spec, &sink)?;
    session.exchange(std::iter::empty(), |_| Ok(()), RetrieverError::process)?;
    Ok(identity)
}

/// Starts `spec`, takes its hello, answers each of `configs` from the cache or by asking, and
/// puts the lists in `lists`.
fn run_one(
    inputs: &RetrieverInputs<'_>,
    spec: &RetrieverSpec,
    configs: &[&ConfigSpec],
    cache: Option<&ChunkerCache>,
    context: &Arc<RetrievalContext>,
    lists: &mut TopLists,
    events: Events<'_>,
) -> Result<(RetrieverSummary, ScoreScale, RetrieverIdentity), RetrieverError> {
    let started = Instant::now();
    let sink = |line: &str| (inputs.stderr)(&spec.name, line);
    let (mut session, scale, identity) = greet(spec, &sink)?;
    let mut summary = RetrieverSummary {
        retriever: spec.name.clone(),
        reported: identity.label(),
        configs: configs.len(),
        ..RetrieverSummary::default()
    };
    let identity_sha = identity.sha256();
    // One configuration at a time: the writer builds a configuration's lines, the reader looks
    // its key up in the cache and answers `true` (send them) or `false` (cached), and the lines
    // are dropped once written, so memory holds about one configuration's requests.
    let (meta_tx, meta_rx) = std::sync::mpsc::channel::<Result<Job, RetrieverError>>();
    let (send_tx, send_rx) = std::sync::mpsc::channel::<bool>();
    let mut next = 0;
    let lines = std::iter::from_fn(move || {
        let config = configs.get(next)?;
        next += 1;
        let mut built = job(inputs, spec, config, context, &identity_sha);
        let lines = match &mut built {
            Ok(j) => std::mem::take(&mut j.lines),
            Err(_) => Vec::new(),
        };
        let failed = built.is_err();
        meta_tx.send(built).ok()?;
        if failed || !send_rx.recv().ok()? {
            return Some(Vec::new());
        }
        Some(lines)
    })
    .flatten();
    session.exchange(
        lines,
        |s| {
            // dropped when reading ends, early on an error too: a writer awaiting a decision
            // then stops
            let send_tx = send_tx;
            for job in meta_rx.iter() {
                let job = job?;
                let held = match cache {
                    Some(c) => c
                        .get::<Answers>(&job.key)
                        .map_err(|p| RetrieverError::new(&spec.name, cache_problem(p)))?,
                    None => None,
                };
                let cached = held.is_some();
                let _ = send_tx.send(!cached);
                let answers = match held {
                    Some(Answers(answers)) => {
                        summary.cached += 1;
                        answers
                    }
                    None => {
                        summary.queries_sent += job.questions.len();
                        let answers = read_job(s, spec, &job)?;
                        if let Some(c) = cache {
                            c.put(&job.key, &spec.name, &job.config, &Answers(answers.clone()))
                                .map_err(|p| RetrieverError::new(&spec.name, cache_problem(p)))?;
                        }
                        answers
                    }
                };
                events(RunEvent::Advanced {
                    step: Step::Retrieve,
                    label: job.config.clone(),
                    cost_usd: None,
                    cached,
                });
                lists.insert(job.config, to_lists(answers));
            }
            Ok(())
        },
        RetrieverError::process,
    )?;
    summary.wall_ms = started.elapsed().as_secs_f64() * 1e3;
    Ok((summary, scale, identity))
}

fn to_lists(answers: Answered) -> HashMap<String, Vec<Hit>> {
    answers
        .into_iter()
        .map(|(q, hits)| {
            let hits = hits
                .into_iter()
                .map(|(chunk, score)| Hit { chunk, score })
                .collect();
            (q, hits)
        })
        .collect()
}

/// A configuration's requests and cache key: its chunks (as the sweep builds them) with their
/// vectors, every question with its vector (both only when `inputs.vectors`), `top_n` the depth
/// its cuts read. The key hashes the lines, so answers given with vectors and without are
/// cached apart.
fn job(
    inputs: &RetrieverInputs<'_>,
    spec: &RetrieverSpec,
    config: &ConfigSpec,
    context: &Arc<RetrievalContext>,
    identity_sha: &str,
) -> Result<Job, RetrieverError> {
    let id = config.id();
    let fail = |why: String| RetrieverError {
        retriever: spec.name.clone(),
        config: Some(id.clone()),
        question: None,
        problem: Box::new(RetrieverProblem::Inputs(why)),
    };
    let built = ConfigIndex::build(inputs.corpus, inputs.tokens, config, context)
        .map_err(|e| fail(e.to_string()))?;
    let top_n = Depth::new(inputs.cuts, &built.chunk_tokens()).ask;
    let texts: Vec<String> = built
        .chunks
        .iter()
        .map(|c| c.indexed_text(inputs.corpus).into_owned())
        .collect();
    let mut chunks = Vec::with_capacity(texts.len());
    for (i, (c, text)) in built.chunks.iter().zip(&texts).enumerate() {
        let vector = match inputs.vectors {
            true => Some(
                &context
                    .embeddings
                    .chunk(c, inputs.corpus)
                    .map_err(|e| fail(e.to_string()))?
                    .vector[..],
            ),
            false => None,
        };
        chunks.push(ChunkIn {
            id: i,
            text,
            vector,
        });
    }
    let index = Request::Index {
        config: &id,
        chunks,
    };
    let mut lines = vec![serde_json::to_string(&index).expect("a request serialises")];
    let mut questions = Vec::new();
    for q in &inputs.golden.questions {
        let vector = match inputs.vectors {
            true => Some(
                &context
                    .embeddings
                    .get(EmbedRole::Query, &q.text)
                    .map_err(|e| fail(e.to_string()))?
                    .vector[..],
            ),
            false => None,
        };
        let query = Request::Query {
            config: &id,
            id: &q.id,
            text: &q.text,
            vector,
            top_n,
        };
        lines.push(serde_json::to_string(&query).expect("a request serialises"));
        questions.push((q.id.clone(), q.text.clone()));
    }
    let mut h = Sha256::new();
    for part in std::iter::once(identity_sha).chain(lines.iter().map(String::as_str)) {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    Ok(Job {
        config: id,
        n_chunks: built.chunks.len(),
        top_n,
        key: hex::encode(h.finalize()),
        lines,
        questions,
    })
}

/// Reads one configuration's replies: its `indexed`, then one `hits` per question, each
/// checked.
fn read_job(
    s: &mut Session<'_>,
    spec: &RetrieverSpec,
    job: &Job,
) -> Result<Answered, RetrieverError> {
    let at = |question: Option<&str>, problem| RetrieverError {
        retriever: spec.name.clone(),
        config: Some(job.config.clone()),
        question: question.map(str::to_string),
        problem: Box::new(problem),
    };
    let read = |s: &mut Session<'_>, question: Option<&str>, expected: &str| {
        let line = s
            .line(expected)
            .map_err(|p| at(question, RetrieverProblem::Process(p)))?;
        let bad = |why: String| {
            at(
                question,
                RetrieverProblem::BadReply {
                    line: shorten(&line),
                    why,
                },
            )
        };
        match protocol::parse_reply(&line) {
            Ok(Reply::Error { message }) => Err(at(question, RetrieverProblem::Reported(message))),
            Ok(reply) => Ok((reply, line.clone())),
            Err(problem) => Err(bad(format!("{problem}; expected {expected}"))),
        }
    };
    let bad = |question: Option<&str>, line: &str, why: String| {
        at(
            question,
            RetrieverProblem::BadReply {
                line: shorten(line),
                why,
            },
        )
    };
    let expected = format!("the indexed reply for {}", job.config);
    match read(s, None, &expected)? {
        (Reply::Indexed { config, chunks }, _)
            if config == job.config && chunks == job.n_chunks => {}
        (_, line) => {
            return Err(bad(
                None,
                &line,
                format!(
                    "expected {{\"op\": \"indexed\", \"config\": {:?}, \"chunks\": {}}}",
                    job.config, job.n_chunks
                ),
            ));
        }
    }
    let mut answers = Vec::with_capacity(job.questions.len());
    for (qid, text) in &job.questions {
        let q = Some(qid.as_str());
        let expected = format!("the hits for question {qid:?}");
        let (reply, line) = read(s, q, &expected)?;
        let hits = match reply {
            Reply::Hits { id, hits } if id == *qid => hits,
            _ => {
                return Err(bad(
                    q,
                    &line,
                    format!("expected {expected} (one reply per request, in order)"),
                ));
            }
        };
        let hits = check_hits(&hits, job.n_chunks, job.top_n).map_err(|why| bad(q, &line, why))?;
        answers.push((
            text.clone(),
            hits.into_iter().map(|h| (h.chunk, h.score)).collect(),
        ));
    }
    Ok(answers)
}
