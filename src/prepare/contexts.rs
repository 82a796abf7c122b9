//! Model-written contexts for the `llm_context` prefix (contextual retrieval): for each chunk, a
//! model reads the chunk and its document (cut to a window around the chunk when the document is
//! long, [`crate::chunking::enrich::document_window`]) and writes a short context situating the
//! chunk, which is then put before the chunk like any other prefix.
//!
//! Contexts are generated before the sweep scores anything, for every chunk of every
//! `llm_context` configuration, deduplicated by (document, byte range) so a chunk that several
//! configurations share is asked once. Every call goes through [`LlmClient::chat`], so it is paced,
//! retried, recorded (tokens, latency, cost) and cached: a second identical run sends nothing.
//! The prompt is a template with the placeholders `{document}` and `{chunk}`: `context.md`
//! compiled into the binary ([`crate::prompts`]), or a file of the user's own
//! (`[context] prompt`); its SHA-256 is recorded with the run.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use thiserror::Error;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::chunking::enrich::{
    ChunkKey, ContextCost, ContextCosts, ContextMap, Prefix, document_window,
};
use crate::chunking::{self, ChunkContext, ChunkError};
use crate::corpus::Corpus;
use crate::events::{Events, RunEvent, Step};
use crate::exit::ExitClass;
use crate::llm::cost::{cost_usd, estimate_chat_prompt_tokens};
use crate::llm::{CallRecord, ChatMessage, ChatRequest, LlmClient, LlmError};
use crate::sweep::grid::ConfigSpec;
use crate::template::render;
use crate::tokenize::CorpusTokens;

/// Settings of context generation (the `[context]` section of the config file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextSettings {
    /// Model that writes the contexts (default `$CHUNKSWEEP_CHAT_MODEL`, else `gpt-4o-mini`).
    pub model: String,
    /// Most document tokens (sweep tokenizer's unit) shown with a chunk; longer documents are cut
    /// to a window of this many tokens around the chunk (default 2048).
    pub window_tokens: usize,
    /// Cap on a context, in completion tokens (default 100).
    pub max_tokens: u32,
    /// Requests in progress at once (default 4); the client's per-model limits still apply.
    pub concurrency: usize,
    /// The prompt template (`None`, the default: `context.md` compiled into the binary).
    pub prompt: Option<PathBuf>,
    /// Sampling temperature (default 0).
    pub temperature: f32,
    /// Seed sent to servers that accept one (default 7).
    pub seed: Option<i64>,
}

impl Default for ContextSettings {
    fn default() -> Self {
        ContextSettings {
            model: crate::llm::config::default_chat_model(),
            window_tokens: 2048,
            max_tokens: 100,
            concurrency: 4,
            prompt: None,
            temperature: 0.0,
            seed: Some(7),
        }
    }
}

/// Errors of context generation.
#[derive(Debug, Error)]
pub enum ContextError {
    /// The prompt template could not be read.
    #[error("cannot read context prompt {path}: {source}")]
    Prompt {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The prompt template lacks a placeholder.
    #[error("context prompt {path} has no {{{placeholder}}} placeholder, which it needs")]
    Placeholder {
        /// The file.
        path: PathBuf,
        /// The missing name.
        placeholder: &'static str,
    },
    /// A configuration could not be chunked.
    #[error(transparent)]
    Chunk(#[from] ChunkError),
    /// A call failed after its retries (finished calls are cached: rerun to resume).
    #[error("context for {chunk} failed (finished contexts are cached; rerun to resume): {source}")]
    Call {
        /// `<doc id>@<byte start>..<byte end>`.
        chunk: String,
        /// The client's error.
        #[source]
        source: LlmError,
    },
    /// The LLM client could not be built from its settings.
    #[error(transparent)]
    Client(#[from] LlmError),
    /// Zero concurrency or window.
    #[error("context.concurrency and context.window_tokens must be at least 1")]
    Invalid,
}

impl ContextError {
    /// Usage (2) for the prompt file and the settings; the chunking error's own class; the
    /// client's class for a failed call.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            ContextError::Prompt { .. }
            | ContextError::Placeholder { .. }
            | ContextError::Invalid => ExitClass::Usage,
            ContextError::Chunk(e) => e.exit_class(),
            ContextError::Call { source, .. } | ContextError::Client(source) => source.exit_class(),
        }
    }
}

/// A loaded context prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextPrompt {
    /// Where it was read from.
    pub path: PathBuf,
    /// The template text.
    pub text: String,
    /// SHA-256 of the file's bytes, hex.
    pub sha256: String,
}

impl ContextPrompt {
    /// Reads the template and checks it has `{document}` and `{chunk}`.
    ///
    /// # Errors
    /// [`ContextError::Prompt`] or [`ContextError::Placeholder`].
    pub fn load(path: &Path) -> Result<Self, ContextError> {
        let text = std::fs::read_to_string(path).map_err(|source| ContextError::Prompt {
            path: path.to_path_buf(),
            source,
        })?;
        Self::new(path.to_path_buf(), text)
    }

    /// The template at `path` when given ([`load`](Self::load)), else `context.md` compiled into
    /// the binary (its path reads `<built-in>/context.md`).
    ///
    /// # Errors
    /// As [`load`](Self::load).
    pub fn load_or_default(path: Option<&Path>) -> Result<Self, ContextError> {
        match path {
            Some(p) => Self::load(p),
            None => {
                let text = crate::prompts::default_text("context.md").unwrap_or_default();
                Self::new(crate::prompts::builtin_path("context.md"), text.to_string())
            }
        }
    }

    fn new(path: PathBuf, text: String) -> Result<Self, ContextError> {
        for placeholder in ["document", "chunk"] {
            if !text.contains(&format!("{{{placeholder}}}")) {
                return Err(ContextError::Placeholder { path, placeholder });
            }
        }
        Ok(ContextPrompt {
            path,
            sha256: hex::encode(Sha256::digest(text.as_bytes())),
            text,
        })
    }
}

/// What context generation did, for the manifest.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ContextSummary {
    /// Model.
    pub model: String,
    /// Window, in tokens.
    pub window_tokens: usize,
    /// SHA-256 of the prompt template.
    pub prompt_sha256: String,
    /// Distinct chunks (document, byte range) that needed a context.
    pub chunks: usize,
    /// Chunk occurrences over all `llm_context` configurations (before deduplication).
    pub chunk_occurrences: usize,
    /// Calls answered by the server (sent over the network).
    pub calls_sent: usize,
    /// Calls answered from the response cache (nothing sent).
    pub cache_hits: usize,
    /// Prompt tokens over all calls (cache hits included).
    pub prompt_tokens: u64,
    /// Completion tokens over all calls (cache hits included).
    pub completion_tokens: u64,
    /// Money spent in this run, in USD (cache hits cost nothing); `None` without a price.
    pub cost_usd: Option<f64>,
    /// Wall time of the whole generation, in ms.
    pub wall_ms: f64,
    /// Mean context length in characters.
    pub mean_context_chars: f64,
}

/// The contexts and what producing them cost.
#[derive(Debug, Clone, Default)]
pub struct ContextRun {
    /// Context by chunk.
    pub contexts: ContextMap,
    /// What each chunk's context cost (tokens; USD at the model's prices, cached or not).
    pub costs: ContextCosts,
    /// Counts and cost.
    pub summary: ContextSummary,
    /// One record per call, in chunk order (stage `context:<doc id>@<start>..<end>`, bytes).
    pub records: Vec<CallRecord>,
}

/// The chunks that need a context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeededChunks {
    /// Distinct chunks, by document and byte range, sorted.
    pub keys: Vec<ChunkKey>,
    /// Their occurrences over the configurations, before deduplication.
    pub occurrences: usize,
}

/// Distinct chunks (by document and byte range, sorted) of every `llm_context` configuration in
/// `configs` (`chunk_ctx` holds the sentence vectors of `semantic`), with the number of
/// occurrences before deduplication.
///
/// # Errors
/// [`ContextError::Chunk`] for invalid chunking parameters.
pub fn needed_chunks(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    configs: &[ConfigSpec],
    chunk_ctx: &ChunkContext<'_>,
) -> Result<NeededChunks, ContextError> {
    let mut keys = Vec::new();
    for c in configs.iter().filter(|c| c.prefix == Prefix::LlmContext) {
        let chunks = chunking::chunk_corpus(corpus, tokens, &c.params, chunk_ctx)?;
        keys.extend(chunks.iter().map(ChunkKey::of));
    }
    let occurrences = keys.len();
    keys.sort_unstable();
    keys.dedup();
    Ok(NeededChunks { keys, occurrences })
}

/// The request that asks for one chunk's context.
pub fn context_request(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    key: ChunkKey,
    prompt: &ContextPrompt,
    s: &ContextSettings,
) -> ChatRequest {
    let doc = &corpus.docs[key.doc];
    let window = document_window(
        &doc.text,
        tokens.doc(key.doc),
        key.byte_start,
        key.byte_end,
        s.window_tokens,
    );
    let chunk = &doc.text[key.byte_start..key.byte_end];
    let text = render(
        &prompt.text,
        &[("document", window.as_str()), ("chunk", chunk)],
    );
    let mut r = ChatRequest::new(&s.model, vec![ChatMessage::user(text)]);
    r.temperature = Some(s.temperature);
    r.max_tokens = Some(s.max_tokens);
    r.seed = s.seed;
    r
}

/// A context call's stage in its record: `context:<doc id>@<start>..<end>` (bytes).
fn stage(corpus: &Corpus, key: ChunkKey) -> String {
    format!(
        "context:{}@{}..{}",
        corpus.docs[key.doc].id, key.byte_start, key.byte_end
    )
}

/// The context calls a dry run would send: those of `needed` that the response cache does not
/// answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ContextCount {
    /// Distinct chunks that need a context.
    pub chunks: usize,
    /// Of them, answered by the cache.
    pub cached: usize,
    /// Calls that would be sent (one per chunk the cache does not answer).
    pub calls: usize,
    /// Their prompt tokens (cl100k_base estimates).
    pub prompt_tokens: u64,
    /// Their completion tokens at the cap (`max_tokens`): an upper bound.
    pub completion_tokens: u64,
    /// Their cost at the model's prices, USD; `None` without a price.
    pub cost_usd: Option<f64>,
}

/// Counts the calls [`generate_contexts`] would send for `needed`: each chunk's request looked up
/// in `client`'s response cache, nothing sent (a dry run).
///
/// # Errors
/// [`ContextError::Call`] when the cache cannot be read.
pub async fn count_contexts(
    client: &LlmClient,
    corpus: &Corpus,
    tokens: &CorpusTokens,
    needed: &NeededChunks,
    prompt: &ContextPrompt,
    settings: &ContextSettings,
) -> Result<ContextCount, ContextError> {
    let mut count = ContextCount {
        chunks: needed.keys.len(),
        ..ContextCount::default()
    };
    for &key in &needed.keys {
        let req = context_request(corpus, tokens, key, prompt, settings);
        let stage = stage(corpus, key);
        match client.cached_chat(&stage, &req).await {
            Ok(Some(_)) => count.cached += 1,
            Ok(None) => {
                count.calls += 1;
                count.prompt_tokens += estimate_chat_prompt_tokens(&req.messages);
                count.completion_tokens += u64::from(settings.max_tokens);
            }
            Err(source) => {
                return Err(ContextError::Call {
                    chunk: stage.trim_start_matches("context:").to_string(),
                    source,
                });
            }
        }
    }
    count.cost_usd = cost_usd(
        client.config().model(&settings.model),
        count.prompt_tokens,
        count.completion_tokens,
    );
    Ok(count)
}

/// A model's reply made into a one-line prefix: whitespace runs collapsed to one space, trimmed.
pub fn clean_context(reply: &str) -> String {
    reply.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Asks `client` for the context of every chunk of every `llm_context` configuration of
/// `configs`, found by [`needed_chunks`] (once per distinct chunk), at most
/// `settings.concurrency` at a time, and returns them with their call records and summary.
/// Calls answered from the cache send nothing.
///
/// # Errors
/// [`ContextError::Call`] for the first call that fails after the client's retries (those that
/// finished are cached, so a rerun resumes), [`ContextError::Chunk`], [`ContextError::Invalid`].
pub async fn generate_contexts(
    client: &LlmClient,
    corpus: &Corpus,
    tokens: &CorpusTokens,
    needed: &NeededChunks,
    prompt: &ContextPrompt,
    settings: &ContextSettings,
    events: Events<'_>,
) -> Result<ContextRun, ContextError> {
    if settings.concurrency == 0 || settings.window_tokens == 0 {
        return Err(ContextError::Invalid);
    }
    let started = Instant::now();
    let (keys, occurrences) = (&needed.keys, needed.occurrences);
    events(RunEvent::Started {
        step: Step::Contexts,
        total: keys.len() as u64,
    });
    let sem = Arc::new(Semaphore::new(settings.concurrency));
    let mut set = JoinSet::new();
    for (i, &key) in keys.iter().enumerate() {
        let req = context_request(corpus, tokens, key, prompt, settings);
        let stage = stage(corpus, key);
        let client = client.clone();
        let sem = Arc::clone(&sem);
        set.spawn(async move {
            let _permit = sem.acquire_owned().await.expect("semaphore open");
            let out = client.chat(&stage, req).await;
            (i, stage, out)
        });
    }
    let mut replies: Vec<Option<(String, CallRecord)>> = vec![None; keys.len()];
    let mut first_error = None;
    while let Some(joined) = set.join_next().await {
        let (i, stage, out) = joined.expect("context task panicked");
        match out {
            Ok(o) => {
                events(RunEvent::Advanced {
                    step: Step::Contexts,
                    label: stage,
                    cost_usd: o.record.cost_usd,
                    cached: o.record.cache_hit,
                });
                replies[i] = Some((clean_context(&o.content), o.record));
            }
            Err(source) => {
                if first_error.is_none() {
                    first_error = Some(ContextError::Call {
                        chunk: stage.trim_start_matches("context:").to_string(),
                        source,
                    });
                }
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let mut run = ContextRun::default();
    let mut cost = Some(0.0);
    let mut chars = 0usize;
    for (key, reply) in keys.iter().zip(replies) {
        let (text, record) = reply.expect("every task answered");
        run.summary.prompt_tokens += record.prompt_tokens;
        run.summary.completion_tokens += record.completion_tokens;
        if record.cache_hit {
            run.summary.cache_hits += 1;
        } else {
            run.summary.calls_sent += 1;
        }
        cost = match (cost, record.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        chars += text.chars().count();
        run.costs.insert(
            *key,
            ContextCost {
                prompt_tokens: record.prompt_tokens,
                completion_tokens: record.completion_tokens,
                cost_usd: cost_usd(
                    client.config().model(&settings.model),
                    record.prompt_tokens,
                    record.completion_tokens,
                ),
            },
        );
        run.contexts.insert(*key, text);
        run.records.push(record);
    }
    run.summary.model = settings.model.clone();
    run.summary.window_tokens = settings.window_tokens;
    run.summary.prompt_sha256 = prompt.sha256.clone();
    run.summary.chunks = keys.len();
    run.summary.chunk_occurrences = occurrences;
    run.summary.cost_usd = cost;
    run.summary.wall_ms = started.elapsed().as_secs_f64() * 1e3;
    run.summary.mean_context_chars = if keys.is_empty() {
        0.0
    } else {
        chars as f64 / keys.len() as f64
    };
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::Document;
    use crate::tokenize::TokenizerKind;

    #[test]
    fn repository_prompt_loads_and_renders_the_chunk_and_window() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts/context.md");
        let prompt = ContextPrompt::load(&path).unwrap();
        let builtin = ContextPrompt::load_or_default(None).unwrap();
        assert_eq!(builtin.sha256, prompt.sha256);
        assert_eq!(builtin.path, Path::new("<built-in>/context.md"));
        let corpus = Corpus::from_documents(
            "t",
            vec![Document::new(
                "a.md",
                "# Billing\n\nRefunds take {chunk} 14 days.\n",
            )],
        );
        let tokens = CorpusTokens::new(&corpus, TokenizerKind::Cl100kBase);
        let text = &corpus.docs[0].text;
        let start = text.find("Refunds").unwrap();
        let key = ChunkKey {
            doc: 0,
            byte_start: start,
            byte_end: text.len() - 1,
        };
        let s = ContextSettings {
            model: "m".into(),
            ..ContextSettings::default()
        };
        let r = context_request(&corpus, &tokens, key, &prompt, &s);
        let body = &r.messages[0].content;
        // the whole (short) document, and the chunk, each once; a placeholder inside the text is
        // not expanded again
        assert_eq!(body.matches("# Billing").count(), 1);
        assert_eq!(body.matches("Refunds take {chunk} 14 days.").count(), 2);
        assert_eq!(r.max_tokens, Some(100));
        assert_eq!(
            clean_context("  In the\n billing  section. \n"),
            "In the billing section."
        );
    }

    #[test]
    fn a_prompt_without_the_chunk_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.md");
        std::fs::write(&path, "Situate this: {document}").unwrap();
        let err = ContextPrompt::load(&path).unwrap_err().to_string();
        assert!(
            err.ends_with("has no {chunk} placeholder, which it needs"),
            "{err}"
        );
    }
}
