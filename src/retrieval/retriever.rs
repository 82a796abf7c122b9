//! The retriever interface: what the sweep and the judge need from a search engine, and what
//! each metric reads of its answer.
//!
//! A [`Retriever`] is built over one configuration's chunks (chunk `i` is the configuration's
//! `i`-th chunk, in corpus order) and ranks a query into (chunk, score) pairs, best first
//! ([`Ranked`]). Scores are on the retriever's own scale, higher is better, and the margin
//! reads them through the retriever's [`MarginScale`].
//!
//! # Contract
//! - **Order.** Hits come best first: a higher score never follows a lower one. Equal scores
//!   are ordered by the retriever; [`Ranked::Every`] orders them by chunk (lower index first),
//!   which makes every run rank the same way.
//! - **Depth.** [`Retriever::rank`] is told how many hits the caller reads at most: the deepest
//!   cut (k, or as many chunks as the largest context budget can take) plus one, to see whether
//!   the cut falls inside tied scores. A retriever may return more (every chunk) or fewer (an
//!   engine that returns only a top-n; the cuts then take what it returned).
//! - **Chunks.** Each hit names a chunk of the configuration (an index below the number of
//!   chunks), at most once.
//!
//! # What each metric reads
//! With `C` the chunks that wholly hold an evidence span of the question (known from the chunks
//! alone, whatever the retriever):
//! - **recall@cut, hit@cut, coverage, char IoU / precision / recall**: the chunks of the cut, the
//!   first `c` hits (`c` = k, or the leading hits that fit the budget). A cut deeper than the
//!   hits returned takes every hit returned.
//! - **first correct rank, MRR@cut**: the 1-based position of the first hit in `C`; MRR reads
//!   the position of the first hit in `C` that the cut takes ([`crate::metrics`]). When no hit
//!   returned is in `C` (a top-n engine whose list stops before the first correct chunk), the
//!   rank is unknown (empty in sweep_questions.csv) and the reciprocal rank is 0, which is exact
//!   at every cut no deeper than the list.
//! - **margin**: the score of the best hit in `C` minus the score of the best hit not in `C`,
//!   on the [`MarginScale`]. [`Ranked::Every`] gives both exactly, over the whole index (with no
//!   chunk outside `C`, the best wrong score is 0). For a top-n list ([`Ranked::Top`]), a chunk
//!   the engine did not return counts as scoring what the list's last hit scored, the most it
//!   can score: when no returned hit is correct, the best correct score is the last hit's score
//!   (the margin is then at most 0, an upper bound of the true one); when no returned hit is
//!   wrong, the best wrong score is the last hit's score (a lower bound of the true margin).
//!   When the list holds every chunk of the index nothing is unseen, and the margin is exact as
//!   for [`Ranked::Every`]. An empty list gives 0. `MarginScale::TopScore` divides by the first
//!   hit's score (0 when it is not above 0). A question with `C` empty is unreachable: margin −1.
//! - **ties at the cut**: the cut at `c` is flagged when the scores of hits `c` and `c + 1` are
//!   within [`TIE_EPSILON`](super::rank::TIE_EPSILON) (the order among them, not the retriever,
//!   decided which made the cut). Ties are seen only inside the list: a cut at the last hit
//!   returned is never flagged, so a top-n engine asked for the depth above sees every tie at
//!   the cut, and one that returns fewer hits misses those at its last hit.
//!
//! The built-in retrievers score every chunk ([`Ranked::Every`]): BM25
//! ([`super::bm25::Bm25Index`]), dense cosine ([`super::engines::DenseRetriever`]) and reciprocal
//! rank fusion of the two ([`super::engines::HybridRetriever`]; its ties are those of the fused
//! scores).

use thiserror::Error;

use super::bm25::Bm25Error;
use super::dense::DenseError;
use super::embeddings::EmbeddingError;
use super::rank::{Ranking, rank_top_k};

/// One retrieved chunk and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Index of the chunk in the configuration's chunks.
    pub chunk: usize,
    /// Its score, on the retriever's scale.
    pub score: f64,
}

/// A query's ranked list.
#[derive(Debug, Clone, PartialEq)]
pub enum Ranked {
    /// A score for every chunk of the index, in chunk order: the ranked list is every chunk,
    /// higher score first, equal scores in chunk order. Kept as scores so that nothing sorts
    /// what no cut reads.
    Every(Vec<f64>),
    /// The hits an engine returned, best first; chunks it did not return rank below the last
    /// (see the module documentation for what each metric makes of them).
    Top(Vec<Hit>),
}

impl Ranked {
    /// Hits in the list: every chunk for [`Ranked::Every`], the hits returned for
    /// [`Ranked::Top`].
    pub fn len(&self) -> usize {
        match self {
            Ranked::Every(scores) => scores.len(),
            Ranked::Top(hits) => hits.len(),
        }
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first `n` hits of the list (all of them when it has fewer), best first.
    pub fn head(&self, n: usize) -> Vec<Hit> {
        match self {
            Ranked::Every(scores) => {
                let r = rank_top_k(scores, n);
                r.top
                    .into_iter()
                    .zip(r.scores)
                    .map(|(chunk, score)| Hit { chunk, score })
                    .collect()
            }
            Ranked::Top(hits) => hits[..n.min(hits.len())].to_vec(),
        }
    }

    /// Checks that every hit names one of `n_chunks` chunks, at most once, best first.
    ///
    /// # Errors
    /// [`RetrievalError::BadHits`] saying what is wrong.
    pub fn check(&self, n_chunks: usize) -> Result<(), RetrievalError> {
        let bad = |why: String| Err(RetrievalError::BadHits(why));
        match self {
            Ranked::Every(scores) if scores.len() != n_chunks => bad(format!(
                "{} scores for an index of {n_chunks} chunks",
                scores.len()
            )),
            Ranked::Every(_) => Ok(()),
            Ranked::Top(hits) => {
                let mut seen = vec![false; n_chunks];
                for (i, h) in hits.iter().enumerate() {
                    if h.chunk >= n_chunks || std::mem::replace(&mut seen[h.chunk], true) {
                        return bad(format!(
                            "hit {} names chunk {} of an index of {n_chunks} chunks, or twice",
                            i + 1,
                            h.chunk
                        ));
                    }
                    if i > 0 && h.score > hits[i - 1].score {
                        return bad(format!("hit {} scores above hit {i}", i + 1));
                    }
                }
                Ok(())
            }
        }
    }
}

/// The first `c` hits of `head` (all when it has fewer) as a [`Ranking`], with the tie flag of
/// the cut: hits `c` and `c + 1` within [`TIE_EPSILON`](super::rank::TIE_EPSILON) (never set
/// when `head` has no hit after the cut).
pub fn cut_head(head: &[Hit], c: usize) -> Ranking {
    let taken = &head[..c.min(head.len())];
    let tie_at_k = c > 0
        && c < head.len()
        && (head[c - 1].score - head[c].score).abs() <= super::rank::TIE_EPSILON;
    Ranking {
        top: taken.iter().map(|h| h.chunk).collect(),
        scores: taken.iter().map(|h| h.score).collect(),
        tie_at_k,
    }
}

/// How a retriever's score difference becomes the margin, so that it is comparable across chunk
/// sizes on that retriever's own scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MarginScale {
    /// Divided by the query's top score (0 when no chunk scores above 0): BM25, whose raw
    /// scores depend on the query and the index statistics.
    TopScore,
    /// As it is: cosine similarity (dense), already on a fixed scale.
    Raw,
    /// Divided by a fixed positive number: the reciprocal-rank-fusion maximum
    /// `(w_bm25 + w_dense) / (k + 1)` for hybrid.
    Divide(f64),
}

/// Errors of a retriever answering a query.
#[derive(Debug, Error)]
pub enum RetrievalError {
    /// The query's embedding is missing or unusable.
    #[error(transparent)]
    Embed(#[from] EmbeddingError),
    /// The dense index failed (a vector of the wrong dimension).
    #[error(transparent)]
    Dense(#[from] DenseError),
    /// BM25 was asked a query it was not indexed for.
    #[error(transparent)]
    Bm25(#[from] Bm25Error),
    /// An engine's answer breaks the [`Retriever`] contract.
    #[error("the retriever's hits break its contract: {0}")]
    BadHits(String),
    /// An engine failed.
    #[error("the retriever failed: {0}")]
    Engine(String),
}

/// A search engine over one configuration's chunks (see the module documentation for the
/// contract and what each metric reads).
pub trait Retriever: Send + Sync {
    /// Ranks the chunks for `query`, best first; `depth` is the most hits the caller will read.
    ///
    /// # Errors
    /// [`RetrievalError`] when the query cannot be answered.
    fn rank(&self, query: &str, depth: usize) -> Result<Ranked, RetrievalError>;

    /// How the margin reads this retriever's scores.
    fn margin_scale(&self) -> MarginScale;
}
