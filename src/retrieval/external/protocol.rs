//! The wire format between chunksweep and an external retriever (docs/retrievers.md): JSON
//! lines, a hello each way, then for each configuration one `index` request (its chunks) and
//! one `query` request per question, each answered by one line, in order. Only this file knows
//! the field names.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::chunking::external::protocol::LineProblem;
use crate::retrieval::retriever::{Hit, MarginScale};

/// The protocol's name, in both hellos.
pub const PROTOCOL: &str = "chunksweep-retriever";
/// The protocol version this build speaks.
pub const VERSION: u32 = 1;

/// chunksweep's hello, the first line on the retriever's stdin.
#[derive(Debug, Clone, Serialize)]
pub struct Hello<'a> {
    /// [`PROTOCOL`].
    pub protocol: &'static str,
    /// [`VERSION`].
    pub version: u32,
    /// chunksweep's version.
    pub chunksweep: &'static str,
    /// The name the retriever was declared under.
    pub retriever: &'a str,
}

/// How the retriever's scores are compared across chunk sizes (its hello's `scores`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreScale {
    /// On a fixed scale (a cosine similarity): the margin reads them as they are (default).
    #[default]
    Raw,
    /// On a scale that depends on the query (BM25): the margin is divided by the top score.
    TopScore,
}

impl ScoreScale {
    /// The margin's reading of these scores.
    pub fn margin(self) -> MarginScale {
        match self {
            ScoreScale::Raw => MarginScale::Raw,
            ScoreScale::TopScore => MarginScale::TopScore,
        }
    }
}

/// The retriever's hello, its first line on stdout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelloReply {
    /// Must be [`PROTOCOL`].
    pub protocol: String,
    /// Must be [`VERSION`].
    pub version: u32,
    /// The retriever's own name for itself (`chroma-hnsw`).
    #[serde(default)]
    pub retriever: String,
    /// Packages (or settings) whose change may change a ranking, by name.
    #[serde(default)]
    pub versions: BTreeMap<String, String>,
    /// How its scores compare (default `raw`).
    #[serde(default)]
    pub scores: ScoreScale,
}

/// One chunk to index.
#[derive(Debug, Clone, Serialize)]
pub struct ChunkIn<'a> {
    /// Its index among the configuration's chunks (what a hit names).
    pub id: usize,
    /// The indexed text: prefix, blank line, text.
    pub text: &'a str,
    /// Its embedding (the prepare step's, of the embedded text); absent from the line when
    /// the run has no embeddings model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector: Option<&'a [f32]>,
}

/// A request.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request<'a> {
    /// Index a configuration's chunks (replacing what was indexed for it before).
    Index {
        /// The configuration's id.
        config: &'a str,
        /// Its chunks, in chunk order.
        chunks: Vec<ChunkIn<'a>>,
    },
    /// Rank the configuration's chunks for a question.
    Query {
        /// The configuration's id.
        config: &'a str,
        /// The question's id.
        id: &'a str,
        /// The question's text.
        text: &'a str,
        /// Its embedding; absent from the line when the run has no embeddings model.
        #[serde(skip_serializing_if = "Option::is_none")]
        vector: Option<&'a [f32]>,
        /// Hits wanted: exactly this many, or every chunk when the index has fewer.
        top_n: usize,
    },
}

/// One hit as the retriever writes it; both fields are checked by [`check_hits`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HitOut {
    /// The chunk's index.
    pub index: serde_json::Value,
    /// Its score, higher is better.
    pub score: serde_json::Value,
}

/// A reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Reply {
    /// The chunks of an `index` request are indexed.
    Indexed {
        /// The configuration's id.
        config: String,
        /// How many chunks it holds.
        chunks: usize,
    },
    /// A question's hits, best first.
    Hits {
        /// The question's id.
        id: String,
        /// The hits.
        hits: Vec<HitOut>,
    },
    /// The retriever cannot go on (its database is down): what it says is shown.
    Error {
        /// Its message.
        message: String,
    },
}

/// Parses a JSON line as `T`, telling a line that is not JSON from one of the wrong shape.
fn parse<T: for<'de> Deserialize<'de>>(line: &str) -> Result<T, LineProblem> {
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| LineProblem::NotJson(e.to_string()))?;
    serde_json::from_value(value).map_err(|e| LineProblem::NotProtocol(e.to_string()))
}

/// Parses the retriever's hello and checks its protocol and version.
///
/// # Errors
/// [`LineProblem`] for a line that is not JSON, not a hello, or of another protocol or version.
pub fn parse_hello(line: &str) -> Result<HelloReply, LineProblem> {
    let hello: HelloReply = parse(line)?;
    if hello.protocol != PROTOCOL || hello.version != VERSION {
        return Err(LineProblem::NotProtocol(format!(
            "a hello of protocol {:?} version {}, where {PROTOCOL:?} version {VERSION} was expected",
            hello.protocol, hello.version
        )));
    }
    Ok(hello)
}

/// Parses a reply line.
///
/// # Errors
/// [`LineProblem`] for a line that is not JSON or not one of [`Reply`]'s shapes.
pub fn parse_reply(line: &str) -> Result<Reply, LineProblem> {
    parse(line)
}

/// A question's hits checked against the contract: each names one of `n_chunks` chunks, at
/// most once, with a finite number for a score, best first (no score above the one before),
/// and there are exactly `min(top_n, n_chunks)` of them.
///
/// # Errors
/// A sentence saying what is wrong, naming the hit (1-based).
pub fn check_hits(hits: &[HitOut], n_chunks: usize, top_n: usize) -> Result<Vec<Hit>, String> {
    let wanted = top_n.min(n_chunks);
    if hits.len() != wanted {
        let fewer = match hits.len() < wanted {
            true => "fewer",
            false => "more",
        };
        return Err(format!(
            "{} hits where {wanted} were asked (top_n {top_n} of an index of {n_chunks} chunks): {fewer} than asked",
            hits.len()
        ));
    }
    let mut seen: Vec<Option<usize>> = vec![None; n_chunks];
    let mut out: Vec<Hit> = Vec::with_capacity(hits.len());
    for (i, h) in hits.iter().enumerate() {
        let n = i + 1;
        let chunk = match h.index.as_u64() {
            Some(c) if (c as usize) < n_chunks => c as usize,
            _ => {
                return Err(format!(
                    "hit {n} names chunk {}, out of range for an index of {n_chunks} chunks (0 to {})",
                    h.index,
                    n_chunks.saturating_sub(1)
                ));
            }
        };
        if let Some(first) = seen[chunk].replace(n) {
            return Err(format!(
                "hit {n} names chunk {chunk} again (hit {first} named it): each chunk at most once"
            ));
        }
        let score = match h.score.as_f64() {
            Some(s) if s.is_finite() => s,
            _ => {
                return Err(format!(
                    "hit {n} (chunk {chunk}) has score {}, not a finite number",
                    h.score
                ));
            }
        };
        if let Some(before) = out.last().filter(|b| score > b.score) {
            return Err(format!(
                "hit {n} scores {score}, above hit {i}'s {}: hits come best first",
                before.score
            ));
        }
        out.push(Hit { chunk, score });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hits(v: serde_json::Value) -> Vec<HitOut> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn good_hits_keep_the_engine_order_among_ties() {
        let h = hits(json!([{"index": 2, "score": 0.9}, {"index": 0, "score": 0.9}]));
        let got = check_hits(&h, 3, 2).unwrap();
        assert_eq!(
            got,
            [
                Hit {
                    chunk: 2,
                    score: 0.9
                },
                Hit {
                    chunk: 0,
                    score: 0.9
                }
            ]
        );
        // an index smaller than top_n is answered whole
        let all = hits(json!([{"index": 1, "score": 1}, {"index": 0, "score": 0}]));
        assert_eq!(check_hits(&all, 2, 6).unwrap().len(), 2);
    }

    #[test]
    fn each_bad_hit_list_is_named() {
        let cases = [
            (
                json!([{"index": 3, "score": 1.0}, {"index": 0, "score": 0.5}]),
                "hit 1 names chunk 3, out of range for an index of 3 chunks (0 to 2)",
            ),
            (
                json!([{"index": -1, "score": 1.0}, {"index": 0, "score": 0.5}]),
                "hit 1 names chunk -1, out of range",
            ),
            (
                json!([{"index": 1, "score": 1.0}, {"index": 1, "score": 0.5}]),
                "hit 2 names chunk 1 again (hit 1 named it)",
            ),
            (
                json!([{"index": 1, "score": 1.0}]),
                "1 hits where 2 were asked (top_n 2 of an index of 3 chunks): fewer than asked",
            ),
            (
                json!([{"index": 1, "score": "high"}, {"index": 0, "score": 0.5}]),
                "hit 1 (chunk 1) has score \"high\", not a finite number",
            ),
            (
                json!([{"index": 1, "score": 0.1}, {"index": 0, "score": 0.5}]),
                "hit 2 scores 0.5, above hit 1's 0.1: hits come best first",
            ),
        ];
        for (v, want) in cases {
            let e = check_hits(&hits(v), 3, 2).unwrap_err();
            assert!(e.starts_with(want), "{e}");
        }
    }

    #[test]
    fn replies_and_hellos_parse() {
        let r = parse_reply(r#"{"op":"indexed","config":"c","chunks":4}"#).unwrap();
        assert_eq!(
            r,
            Reply::Indexed {
                config: "c".into(),
                chunks: 4
            }
        );
        let e = parse_reply(r#"{"op":"error","message":"down"}"#).unwrap();
        assert_eq!(
            e,
            Reply::Error {
                message: "down".into()
            }
        );
        assert!(matches!(parse_reply("{"), Err(LineProblem::NotJson(_))));
        assert!(matches!(
            parse_reply(r#"{"op":"what"}"#),
            Err(LineProblem::NotProtocol(_))
        ));
        let h = parse_hello(r#"{"protocol":"chunksweep-retriever","version":1,"retriever":"x","scores":"top_score"}"#).unwrap();
        assert_eq!(h.scores.margin(), MarginScale::TopScore);
        assert!(parse_hello(r#"{"protocol":"chunksweep-chunker","version":1}"#).is_err());
        let q = Request::Query {
            config: "c",
            id: "q1",
            text: "t",
            vector: Some(&[0.5]),
            top_n: 3,
        };
        assert_eq!(
            serde_json::to_string(&q).unwrap(),
            r#"{"op":"query","config":"c","id":"q1","text":"t","vector":[0.5],"top_n":3}"#
        );
        // without an embeddings model the lines carry no vector field
        let q = Request::Query {
            config: "c",
            id: "q1",
            text: "t",
            vector: None,
            top_n: 3,
        };
        assert_eq!(
            serde_json::to_string(&q).unwrap(),
            r#"{"op":"query","config":"c","id":"q1","text":"t","top_n":3}"#
        );
        let i = Request::Index {
            config: "c",
            chunks: vec![ChunkIn {
                id: 0,
                text: "t",
                vector: None,
            }],
        };
        assert_eq!(
            serde_json::to_string(&i).unwrap(),
            r#"{"op":"index","config":"c","chunks":[{"id":0,"text":"t"}]}"#
        );
    }
}
