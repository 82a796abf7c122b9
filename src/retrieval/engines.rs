//! The built-in retrievers as [`Retriever`]s: BM25, dense cosine, and their reciprocal rank
//! fusion. Each scores every chunk ([`Ranked::Every`]), so every metric is exact over the whole
//! index.

use std::sync::Arc;

use super::bm25::Bm25Index;
use super::dense::DenseIndex;
use super::embeddings::{EmbedRole, EmbeddingError, Embeddings};
use super::hybrid::HybridSettings;
use super::retriever::{MarginScale, Ranked, RetrievalError, Retriever};

/// BM25 ([`super::bm25`]); its margin is divided by the query's top score.
impl Retriever for Bm25Index {
    fn rank(&self, query: &str, _depth: usize) -> Result<Ranked, RetrievalError> {
        Ok(Ranked::Every(self.scores(query)?))
    }

    fn margin_scale(&self) -> MarginScale {
        MarginScale::TopScore
    }
}

/// Where a dense retriever finds a query's vector (the prepare step embeds every question).
pub trait QueryVectors: Send + Sync {
    /// The vector of `query`, as embedded.
    ///
    /// # Errors
    /// [`EmbeddingError::Missing`] for a query that was not embedded.
    fn query_vector(&self, query: &str) -> Result<&[f32], EmbeddingError>;
}

impl QueryVectors for Embeddings {
    fn query_vector(&self, query: &str) -> Result<&[f32], EmbeddingError> {
        Ok(&self.get(EmbedRole::Query, query)?.vector)
    }
}

/// Exact cosine retrieval ([`super::dense`]): a [`DenseIndex`] of the chunks and the queries'
/// vectors. The margin uses cosines as they are ([`MarginScale::Raw`]).
pub struct DenseRetriever {
    index: DenseIndex,
    queries: Arc<dyn QueryVectors>,
}

impl DenseRetriever {
    /// A retriever over `index` (one vector per chunk, chunk order) reading query vectors from
    /// `queries`.
    pub fn new(index: DenseIndex, queries: Arc<dyn QueryVectors>) -> Self {
        DenseRetriever { index, queries }
    }

    /// Cosine of `query`'s vector with every chunk, in chunk order.
    ///
    /// # Errors
    /// [`RetrievalError::Embed`] for a query not embedded, [`RetrievalError::Dense`] for a
    /// vector of the wrong dimension.
    pub fn scores(&self, query: &str) -> Result<Vec<f64>, RetrievalError> {
        Ok(self.index.scores(self.queries.query_vector(query)?)?)
    }
}

impl Retriever for DenseRetriever {
    fn rank(&self, query: &str, _depth: usize) -> Result<Ranked, RetrievalError> {
        Ok(Ranked::Every(self.scores(query)?))
    }

    fn margin_scale(&self) -> MarginScale {
        MarginScale::Raw
    }
}

/// Reciprocal rank fusion of BM25 and dense over the same chunks ([`super::hybrid`]): the
/// fused scores of every chunk (ties are ties of the fused scores); the margin is divided by the
/// largest fused score ([`HybridSettings::max_score`]).
pub struct HybridRetriever {
    /// BM25 over the chunks.
    pub bm25: Bm25Index,
    /// Dense cosine over the same chunks.
    pub dense: DenseRetriever,
    /// The fusion's constant and weights.
    pub settings: HybridSettings,
}

impl Retriever for HybridRetriever {
    fn rank(&self, query: &str, _depth: usize) -> Result<Ranked, RetrievalError> {
        let bm25 = self.bm25.scores(query)?;
        let dense = self.dense.scores(query)?;
        Ok(Ranked::Every(self.settings.fuse(&bm25, &dense)))
    }

    fn margin_scale(&self) -> MarginScale {
        MarginScale::Divide(self.settings.max_score())
    }
}
