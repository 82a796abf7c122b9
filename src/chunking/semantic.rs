//! Semantic chunking: boundaries where the meaning shifts.
//!
//! The document is cut into sentences (UAX #29, as the `sentence` strategy does; each trimmed
//! of surrounding whitespace). Every sentence is embedded (document side, once per distinct
//! sentence; see [`crate::prepare::embed`]), and the cosine distance `d_i = 1 − cos(v_i,
//! v_{i+1})` of each pair of consecutive sentences is computed. A boundary goes between
//! sentences `i` and `i + 1` when `d_i` **exceeds** the `percentile`-th percentile of the
//! document's distances (default 95th; linear interpolation between closest ranks, as numpy's
//! default), so the threshold is relative to each document, the method of LangChain's
//! `SemanticChunker` (percentile breakpoints).
//!
//! **Hard cap.** A relative threshold alone gives unbounded chunks (seed 001), so each group of
//! sentences between boundaries is packed greedily into chunks of at most `chunk_size` tokens
//! (counted in the document's token stream), and a single sentence longer than that is split
//! with text-splitter. No chunk exceeds `chunk_size` by its own count (see [`super::bound`]). `chunk_overlap` is not applied: semantic
//! boundaries are meant to be clean (`realized_overlap` reports 0).

use serde::{Deserialize, Serialize};
use text_splitter::{ChunkConfig, TextSplitter};
use unicode_segmentation::UnicodeSegmentation;

use std::collections::HashSet;

use super::chunk::{ChunkError, ChunkParams, Ranges};
use crate::corpus::Corpus;
use crate::tokenize::DocSizer;

/// Settings of semantic chunking.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SemanticSettings {
    /// Percentile (0 to 100) of the document's consecutive-sentence distances above which a
    /// boundary is placed (default 95).
    pub percentile: f64,
}

impl Default for SemanticSettings {
    fn default() -> Self {
        SemanticSettings { percentile: 95.0 }
    }
}

/// Unit-length sentence embeddings, looked up by the sentence's text.
pub trait SentenceVectors: Sync {
    /// The unit vector of `sentence`, or `None` if it was not embedded.
    fn sentence_vector(&self, sentence: &str) -> Option<&[f32]>;
}

/// Byte ranges of the non-empty sentences of `text`, trimmed of surrounding whitespace. These
/// are the texts that are embedded.
pub fn sentences(text: &str) -> Vec<(usize, usize)> {
    text.split_sentence_bound_indices()
        .filter_map(|(i, s)| {
            let lead = s.len() - s.trim_start().len();
            let t = s.trim();
            (!t.is_empty()).then(|| (i + lead, i + lead + t.len()))
        })
        .collect()
}

/// Indices `i` such that a boundary goes after sentence `i`: the cosine distance of sentences
/// `i` and `i + 1` exceeds the `p`-th percentile of all consecutive distances.
pub fn breakpoints(vectors: &[&[f32]], p: f64) -> Vec<usize> {
    let d: Vec<f64> = vectors
        .windows(2)
        .map(|w| 1.0 - f64::from(crate::vector::dot(w[0], w[1])))
        .collect();
    let Some(threshold) = crate::stats::quantile(&d, p.clamp(0.0, 100.0) / 100.0) else {
        return Vec::new();
    };
    d.iter()
        .enumerate()
        .filter(|&(_, &x)| x > threshold)
        .map(|(i, _)| i)
        .collect()
}

/// Byte ranges of the semantic chunks of `text`.
///
/// # Errors
/// [`ChunkError::MissingSentenceEmbedding`] when a sentence has no vector.
pub fn split(
    text: &str,
    params: &ChunkParams,
    sizer: DocSizer<'_>,
    vectors: &dyn SentenceVectors,
    settings: &SemanticSettings,
) -> Result<Ranges, ChunkError> {
    let sents = sentences(text);
    let mut vs = Vec::with_capacity(sents.len());
    for &(s, e) in &sents {
        vs.push(vectors.sentence_vector(&text[s..e]).ok_or_else(|| {
            ChunkError::MissingSentenceEmbedding {
                preview: text[s..e].chars().take(60).collect(),
            }
        })?);
    }
    let mut out = Vec::new();
    let mut group_start = 0;
    let mut cuts = breakpoints(&vs, settings.percentile);
    cuts.push(sents.len().saturating_sub(1));
    for cut in cuts {
        if sents.is_empty() {
            break;
        }
        pack(text, &sents[group_start..=cut], params, sizer, &mut out);
        group_start = cut + 1;
    }
    Ok(out)
}

/// Packs consecutive sentences into chunks of at most `chunk_size` tokens.
fn pack(
    text: &str,
    group: &[(usize, usize)],
    params: &ChunkParams,
    sizer: DocSizer<'_>,
    out: &mut Ranges,
) {
    let size = params.chunk_size;
    let mut current: Option<(usize, usize)> = None;
    for &(s, e) in group {
        if let Some((cs, _)) = current
            && sizer.count_range(cs, e) <= size
        {
            current = Some((cs, e));
            continue;
        }
        if let Some(c) = current.take() {
            out.push(c);
        }
        if sizer.count_range(s, e) <= size {
            current = Some((s, e));
        } else {
            let config = ChunkConfig::new(size).with_sizer(sizer);
            out.extend(
                TextSplitter::new(config)
                    .chunk_indices(&text[s..e])
                    .map(|(o, c)| (s + o, s + o + c.len())),
            );
        }
    }
    out.extend(current);
}

/// Every distinct sentence of the corpus as semantic chunking embeds it, in corpus order.
pub fn corpus_sentences(corpus: &Corpus) -> Vec<&str> {
    let mut seen = HashSet::new();
    corpus
        .docs
        .iter()
        .flat_map(|d| {
            sentences(&d.text)
                .into_iter()
                .map(move |(s, e)| &d.text[s..e])
        })
        .filter(|s| seen.insert(*s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    use super::super::chunk::Strategy;
    use crate::tokenize::{TokenCounter, TokenStream, TokenizerKind};

    struct Map(HashMap<String, Vec<f32>>);
    impl SentenceVectors for Map {
        fn sentence_vector(&self, s: &str) -> Option<&[f32]> {
            self.0.get(s).map(Vec::as_slice)
        }
    }

    fn run(text: &str, map: &Map, size: usize, pct: f64) -> Vec<String> {
        let counter = TokenCounter::new(TokenizerKind::Words);
        let stream = TokenStream::new(text, counter);
        let sizer = DocSizer::new(text, &stream, counter, size);
        let params = ChunkParams {
            strategy: Strategy::Semantic,
            chunk_size: size,
            chunk_overlap: 0,
        };
        split(
            text,
            &params,
            sizer,
            map,
            &SemanticSettings { percentile: pct },
        )
        .unwrap()
        .into_iter()
        .map(|(s, e)| text[s..e].to_string())
        .collect()
    }

    #[test]
    fn splits_at_the_known_topic_shift_and_caps_size() {
        // Three sentences about cats (along x), two about taxes (along y): the one large distance
        // is between sentence 3 and 4.
        let text = "Cats purr. Cats nap a lot. Cats chase mice. Taxes are due. Taxes are filed.";
        let s = |t: &str, v: [f32; 2]| (t.to_string(), v.to_vec());
        let r = 0.995f32;
        let q = (1.0 - r * r).sqrt();
        let map = Map(HashMap::from([
            s("Cats purr.", [1.0, 0.0]),
            s("Cats nap a lot.", [r, q]),
            s("Cats chase mice.", [1.0, 0.0]),
            s("Taxes are due.", [0.0, 1.0]),
            s("Taxes are filed.", [q, r]),
        ]));
        // distances: ~0.005, ~0.005, 1, ~0.9 (taxes pair: 1 - q ~ 0.9): 95th percentile is
        // between 0.9 and 1, so only the cats/taxes pair exceeds it.
        let chunks = run(text, &map, 100, 95.0);
        assert_eq!(
            chunks,
            vec![
                "Cats purr. Cats nap a lot. Cats chase mice.",
                "Taxes are due. Taxes are filed."
            ]
        );
        // Hard cap: 5 words per chunk; the 9-word cats group packs into two chunks.
        let chunks = run(text, &map, 5, 95.0);
        assert_eq!(
            chunks,
            vec![
                "Cats purr.",
                "Cats nap a lot.",
                "Cats chase mice.",
                "Taxes are due.",
                "Taxes are filed."
            ]
        );
        let chunks = run(text, &map, 6, 95.0);
        assert_eq!(chunks[0], "Cats purr. Cats nap a lot.");
        // A long sentence alone is split by text-splitter within the cap.
        let long = "one two three four five six seven.";
        let map = Map(HashMap::from([s(long, [1.0, 0.0])]));
        for c in run(long, &map, 3, 95.0) {
            assert!(c.split_whitespace().count() <= 3, "{c}");
        }
    }

    #[test]
    fn a_missing_vector_is_an_error() {
        let text = "A b. C d.";
        let counter = TokenCounter::new(TokenizerKind::Words);
        let stream = TokenStream::new(text, counter);
        let params = ChunkParams {
            strategy: Strategy::Semantic,
            chunk_size: 10,
            chunk_overlap: 0,
        };
        let err = split(
            text,
            &params,
            DocSizer::new(text, &stream, counter, 10),
            &Map(HashMap::new()),
            &SemanticSettings::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("A b."), "{err}");
    }
}
