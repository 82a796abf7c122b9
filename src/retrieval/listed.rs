//! Ranked lists made before the sweep, looked up: the retriever of a reranked configuration
//! (lists made by the rerank step, [`crate::prepare::rerank`]) and of a configuration whose
//! retriever is the user's own engine (lists made by the external retriever step,
//! [`crate::prepare::retrievers`]). Either is a top-n engine ([`Ranked::Top`]) under the
//! contract of [`super::retriever`].

use std::collections::HashMap;
use std::sync::Arc;

use super::external::spec::RetrieverIdentity;
use super::retriever::{Hit, MarginScale, Ranked, RetrievalError, Retriever};

/// Ranked lists by configuration id, then question text: hits best first (chunk indices of the
/// configuration's chunks, scores on the maker's scale).
pub type TopLists = HashMap<String, HashMap<String, Vec<Hit>>>;

/// The lists of the external retriever step, and how each retriever's scores are read (by the
/// name it was declared under).
#[derive(Debug, Clone, Default)]
pub struct RetrievedLists {
    /// By configuration id, then question text.
    pub lists: Arc<TopLists>,
    /// The margin's reading of each retriever's scores (from its hello).
    pub scales: HashMap<String, MarginScale>,
    /// Each retriever's identity (its fingerprint in the manifest).
    pub identities: HashMap<String, RetrieverIdentity>,
}

/// A configuration's retriever that reads the lists a prepare step made.
pub struct ListedRetriever {
    /// Every configuration's lists of that step (shared).
    pub lists: Arc<TopLists>,
    /// The configuration's id (the key of its lists).
    pub config_id: String,
    /// How the margin reads the scores.
    pub scale: MarginScale,
    /// What made the lists, for the error of a question without one (`the rerank step`).
    pub made_by: &'static str,
}

impl Retriever for ListedRetriever {
    fn rank(&self, query: &str, _depth: usize) -> Result<Ranked, RetrievalError> {
        self.lists
            .get(&self.config_id)
            .and_then(|by_query| by_query.get(query))
            .map(|hits| Ranked::Top(hits.clone()))
            .ok_or_else(|| {
                RetrievalError::Engine(format!(
                    "no ranked list for {} and the question {query:?}: {} did not make it",
                    self.config_id, self.made_by
                ))
            })
    }

    fn margin_scale(&self) -> MarginScale {
        self.scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_without_a_list_is_an_error() {
        let mut lists = TopLists::new();
        let hit = Hit {
            chunk: 0,
            score: 1.0,
        };
        lists
            .entry("c".into())
            .or_default()
            .insert("q".into(), vec![hit]);
        let r = ListedRetriever {
            lists: Arc::new(lists),
            config_id: "c".into(),
            scale: MarginScale::Raw,
            made_by: "the rerank step",
        };
        assert_eq!(r.rank("q", 5).unwrap(), Ranked::Top(vec![hit]));
        let e = r.rank("other", 5).unwrap_err().to_string();
        assert_eq!(
            e,
            "the retriever failed: no ranked list for c and the question \"other\": the rerank step did not make it"
        );
    }
}
