//! A configuration's retrieval index: its chunks (prefixes set) and its [`Retriever`] (BM25 over
//! their analyzed terms and, for dense and hybrid, their unit vectors). The sweep and the judge
//! stage both retrieve through [`ConfigIndex`], so they see the same chunks at a cut.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use super::error::SweepError;
use super::grid::{ConfigSpec, RetrieverKind, SweepSpec};
use super::memory::release_free_memory;
use crate::chunking::enrich::{self, ContextCosts, ContextMap};
use crate::chunking::external::ExternalChunks;
use crate::chunking::semantic::{SemanticSettings, SentenceVectors};
use crate::chunking::structure::CorpusStructure;
use crate::chunking::{self, Chunk};
use crate::corpus::Corpus;
use crate::expand::send::{Expansion, Sender};
use crate::golden::GoldenSet;
use crate::metrics::{Cut, Depth, cut_ranking};
use crate::retrieval::bm25::IndexedChunk;
use crate::retrieval::dense::DenseIndex;
use crate::retrieval::embeddings::{EmbeddingError, Embeddings};
use crate::retrieval::engines::{DenseRetriever, HybridRetriever, QueryVectors};
use crate::retrieval::hybrid::HybridSettings;
use crate::retrieval::listed::{ListedRetriever, RetrievedLists, TopLists};
use crate::retrieval::{AnalyzedCorpus, Bm25Index, MarginScale, Ranked, Ranking, Retriever};
use crate::tokenize::CorpusTokens;

/// What configurations need beyond the corpus and its token streams, made once before the
/// sweep: the corpus analyzed for BM25 and its documents' structure, and from the prepare step (see [`crate::prepare`]) the
/// embeddings of every text that dense, hybrid and semantic configurations read, the
/// model-written contexts of `llm_context` prefixes, and the fusion and semantic settings.
#[derive(Debug, Clone)]
pub struct RetrievalContext {
    /// The corpus analyzed with the grid's BM25 analyzer (shared, never copied).
    pub analysis: Arc<AnalyzedCorpus>,
    /// The documents' kinds, headings and tables, read once (shared, never copied).
    pub structure: Arc<CorpusStructure>,
    /// Vectors of chunks, sentences and questions (empty when nothing needs them).
    pub embeddings: Embeddings,
    /// Model-written contexts of the `llm_context` prefix (empty when not swept).
    pub contexts: ContextMap,
    /// What writing each of those contexts cost.
    pub context_costs: ContextCosts,
    /// Fusion settings of `hybrid`.
    pub hybrid: HybridSettings,
    /// Settings of `semantic` chunking.
    pub semantic: SemanticSettings,
    /// The external chunkers' chunks, placed (empty when the grid has none).
    pub external: Arc<ExternalChunks>,
    /// The reranked lists of reranked configurations (empty when the grid has none).
    pub reranked: Arc<TopLists>,
    /// The reranker model of those lists (empty when the grid has none).
    pub rerank_model: String,
    /// The lists of configurations whose retriever is external (empty when the grid has none).
    pub retrieved: RetrievedLists,
}

impl RetrievalContext {
    /// A context for `corpus` and the questions of `golden` with the spec's hybrid and semantic
    /// settings and nothing prepared: the corpus is analyzed here with the spec's BM25 analyzer
    /// for those questions (BM25 answers them and no other query, [`Bm25Index`]) and its
    /// structure read (documents in parallel). It serves BM25 configurations without
    /// `llm_context` as it is.
    pub fn for_spec(corpus: &Corpus, spec: &SweepSpec, golden: &GoldenSet) -> Self {
        let questions = golden.questions.iter().map(|q| q.text.as_str());
        RetrievalContext {
            analysis: Arc::new(AnalyzedCorpus::new(corpus, spec.bm25.analysis(), questions)),
            structure: Arc::new(CorpusStructure::new(corpus)),
            embeddings: Embeddings::default(),
            contexts: ContextMap::default(),
            context_costs: ContextCosts::default(),
            hybrid: spec.hybrid,
            semantic: spec.semantic,
            external: Arc::default(),
            reranked: Arc::default(),
            rerank_model: String::new(),
            retrieved: RetrievedLists::default(),
        }
    }

    /// The chunking context (the corpus's structure; sentence vectors when there are
    /// embeddings).
    pub fn chunk_context(&self) -> chunking::ChunkContext<'_> {
        chunking::ChunkContext {
            structure: Some(&self.structure),
            sentence_vectors: (!self.embeddings.is_empty())
                .then_some(&self.embeddings as &dyn SentenceVectors),
            semantic: self.semantic,
            external: Some(&self.external),
        }
    }
}

/// A configuration's chunks with its prefix set on each (model-written ones from
/// `context.contexts`, for `llm_context`): what BM25 indexes and, for dense and hybrid, what is
/// embedded. The prepare step calls it to find the texts to embed, [`ConfigIndex::build`] to
/// index them.
///
/// # Errors
/// [`SweepError::Chunk`] for invalid parameters or a semantic configuration without sentence
/// vectors, [`SweepError::Enrich`] for an `llm_context` chunk missing from the contexts.
pub fn prefixed_chunks(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    config: &ConfigSpec,
    context: &RetrievalContext,
) -> Result<Vec<Chunk>, SweepError> {
    let params = config.params;
    let mut chunks = chunking::chunk_corpus(corpus, tokens, &params, &context.chunk_context())
        .map_err(|source| SweepError::Chunk {
            strategy: params.strategy,
            size: params.chunk_size,
            source,
        })?;
    enrich::enrich(
        corpus,
        tokens.counter(),
        config.prefix,
        &mut chunks,
        &context.contexts,
    )?;
    Ok(chunks)
}

/// A configuration's chunks and retriever, built once and queried per question.
pub struct ConfigIndex {
    /// The configuration.
    pub config: ConfigSpec,
    /// Its chunks, in corpus order, with their prefixes set.
    pub chunks: Vec<Chunk>,
    /// The retriever over the chunks (chunk `i` of the retriever is `chunks[i]`).
    pub retriever: Box<dyn Retriever>,
    /// Time spent chunking, in ms.
    pub chunk_ms: f64,
    /// Time spent indexing, in ms.
    pub index_ms: f64,
    /// Embeddings, contexts and retriever settings.
    pub context: Arc<RetrievalContext>,
    /// What is sent for each retrieved chunk (for `parent:P`, the documents' parents).
    pub expansion: Expansion,
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Query vectors come from the prepare step's embeddings.
impl QueryVectors for RetrievalContext {
    fn query_vector(&self, query: &str) -> Result<&[f32], EmbeddingError> {
        self.embeddings.query_vector(query)
    }
}

impl ConfigIndex {
    /// Chunks the corpus with `config` (token streams from [`CorpusTokens::new`]; sentence
    /// vectors for `semantic` from `context`), puts the configuration's prefix on each chunk
    /// (model-written ones from `context.contexts`, for `llm_context`), and builds its retriever:
    /// BM25 over the prefixed texts, and for dense and hybrid each chunk's vector from
    /// `context.embeddings`; a reranked configuration reads its lists from `context.reranked`, one
    /// with an external retriever from `context.retrieved`.
    ///
    /// # Errors
    /// [`SweepError::Chunk`] for invalid parameters or a semantic configuration without sentence
    /// vectors, [`SweepError::Enrich`] for an `llm_context` chunk missing from the contexts,
    /// [`SweepError::Embed`] for a chunk not embedded, [`SweepError::Settings`] if `context`
    /// holds another corpus or was analyzed with another analyzer than `config`'s.
    pub fn build(
        corpus: &Corpus,
        tokens: &CorpusTokens,
        config: &ConfigSpec,
        context: &Arc<RetrievalContext>,
    ) -> Result<Self, SweepError> {
        let analyzed_with = context.analysis.analyzer().settings();
        if analyzed_with != config.bm25.analysis() || context.analysis.n_docs() != corpus.docs.len()
        {
            return Err(SweepError::Settings(format!(
                "{}: the retrieval context holds {} documents analyzed with {analyzed_with:?}, not this corpus's {} with {:?}",
                config.id(),
                context.analysis.n_docs(),
                corpus.docs.len(),
                config.bm25.analysis()
            )));
        }
        let started = Instant::now();
        let chunks = prefixed_chunks(corpus, tokens, config, context)?;
        // the documents' own chunk lists, gathered into `chunks`, are freed
        release_free_memory();
        let chunk_ms = ms_since(started);
        let t = Instant::now();
        let bm25 = Bm25Index::build(
            &context.analysis,
            chunks.iter().map(|c| IndexedChunk {
                doc: c.doc,
                start: c.start,
                end: c.end,
                prefix: &c.prefix,
            }),
            &config.bm25,
        );
        // Each chunk's vector is of its embedded text: prefix + text as indexed above, or the
        // bare text with `embed_prefix = false` (see EmbedSettings::chunk_text).
        let dense = || -> Result<DenseRetriever, SweepError> {
            let mut vectors = Vec::with_capacity(chunks.len());
            for c in &chunks {
                vectors.push(&context.embeddings.chunk(c, corpus)?.vector[..]);
            }
            let queries: Arc<dyn QueryVectors> = context.clone();
            Ok(DenseRetriever::new(DenseIndex::build(vectors)?, queries))
        };
        let retriever: Box<dyn Retriever> = match config.retriever {
            // the first stage was ranked and reranked by the prepare step
            _ if config.rerank => Box::new(ListedRetriever {
                lists: Arc::clone(&context.reranked),
                config_id: config.ranked().id(),
                scale: MarginScale::Raw,
                made_by: "the rerank step",
            }),
            // the user's engine answered every question in the prepare step
            RetrieverKind::External(name) => Box::new(ListedRetriever {
                lists: Arc::clone(&context.retrieved.lists),
                config_id: config.ranked().id(),
                scale: context
                    .retrieved
                    .scales
                    .get(name.as_str())
                    .copied()
                    .unwrap_or(MarginScale::Raw),
                made_by: "the external retriever step",
            }),
            RetrieverKind::Bm25 => Box::new(bm25),
            RetrieverKind::Dense => Box::new(dense()?),
            RetrieverKind::Hybrid => Box::new(HybridRetriever {
                bm25,
                dense: dense()?,
                settings: context.hybrid,
            }),
        };
        let expansion = Expansion::new(config.expand, corpus, tokens, &context.structure);
        Ok(ConfigIndex {
            config: config.clone(),
            chunks,
            retriever,
            chunk_ms,
            index_ms: ms_since(t),
            context: Arc::clone(context),
            expansion,
        })
    }

    /// Each chunk's tokens, prefix included, in chunk order: what a context budget counts.
    pub fn chunk_tokens(&self) -> Vec<usize> {
        self.chunks.iter().map(Chunk::total_tokens).collect()
    }

    /// The retriever's ranked list for `query`, asked `depth` hits deep, its contract checked.
    ///
    /// # Errors
    /// [`SweepError::Retrieval`] for a query the retriever cannot answer (a question not
    /// embedded, a vector of the wrong dimension) or hits that break the contract.
    pub fn rank(&self, query: &str, depth: usize) -> Result<Ranked, SweepError> {
        let ranked = self.retriever.rank(query, depth)?;
        ranked.check(self.chunks.len())?;
        Ok(ranked)
    }

    /// The chunks retrieved for `query` at `cut`, best first, ties in chunk order: the top k,
    /// or those that fit the context budget ([`cut_ranking`]). What is sent, expansions
    /// included, is [`ConfigIndex::send`].
    ///
    /// # Errors
    /// As [`ConfigIndex::rank`].
    pub fn retrieve(&self, query: &str, cut: Cut) -> Result<Ranking, SweepError> {
        let tokens = self.chunk_tokens();
        let depth = Depth::new(&[cut], &tokens);
        let ranked = self.rank(query, depth.ask)?;
        Ok(cut_ranking(&depth.head(&ranked, &tokens), cut, &tokens).ranking)
    }

    /// The cutter of ranked lists into expanded units, for a configuration with an expansion
    /// (`None` without one: the chunks at the cut are sent).
    pub fn sender<'a>(
        &'a self,
        corpus: &'a Corpus,
        tokens: &'a CorpusTokens,
    ) -> Option<Sender<'a>> {
        self.config.expand.is_expanded().then_some(Sender {
            expansion: &self.expansion,
            chunks: &self.chunks,
            corpus,
            tokens,
        })
    }

    /// What is sent for `query` at `cut`, best first, each as its id and the text the generator
    /// reads: the chunks retrieved (ties in chunk order; the top k, or those that fit the
    /// context budget, [`cut_ranking`]), each with its prefix; under an expansion the units
    /// sent ([`crate::expand::send`]).
    ///
    /// # Errors
    /// As [`ConfigIndex::rank`].
    pub fn send<'a>(
        &'a self,
        corpus: &'a Corpus,
        tokens: &'a CorpusTokens,
        query: &str,
        cut: Cut,
    ) -> Result<Vec<(String, Cow<'a, str>)>, SweepError> {
        let chunk_tokens = self.chunk_tokens();
        let depth = Depth::new(&[cut], &chunk_tokens);
        let ranked = self.rank(query, depth.ask)?;
        let head = depth.head(&ranked, &chunk_tokens);
        Ok(match self.sender(corpus, tokens) {
            None => {
                let ranking: Ranking = cut_ranking(&head, cut, &chunk_tokens).ranking;
                ranking
                    .top
                    .iter()
                    .map(|&i| {
                        (
                            self.chunks[i].id(corpus),
                            self.chunks[i].indexed_text(corpus),
                        )
                    })
                    .collect()
            }
            Some(sender) => sender
                .cut(&ranked, &head, cut)
                .units
                .iter()
                .map(|u| {
                    (
                        u.id(corpus, &self.chunks, self.config.expand),
                        u.text(corpus, &self.chunks),
                    )
                })
                .collect(),
        })
    }
}
