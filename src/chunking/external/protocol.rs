//! The wire format between chunksweep and an external chunker (docs/chunkers.md): JSON lines,
//! a hello each way, then one request per (configuration, document) and one response per
//! request, in order. Only this file knows the field names.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The protocol's name, in both hellos.
pub const PROTOCOL: &str = "chunksweep-chunker";
/// The protocol version this build speaks.
pub const VERSION: u32 = 1;

/// chunksweep's hello, the first line on the chunker's stdin.
#[derive(Debug, Clone, Serialize)]
pub struct Hello<'a> {
    /// [`PROTOCOL`].
    pub protocol: &'static str,
    /// [`VERSION`].
    pub version: u32,
    /// chunksweep's version.
    pub chunksweep: &'static str,
    /// The strategy name the chunker was declared under.
    pub chunker: &'a str,
}

/// The chunker's hello, its first line on stdout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelloReply {
    /// Must be [`PROTOCOL`].
    pub protocol: String,
    /// Must be [`VERSION`].
    pub version: u32,
    /// The chunker's own name for itself (`langchain-recursive`).
    #[serde(default)]
    pub chunker: String,
    /// Packages (or the chunker's own version) whose change may move a chunk boundary, by name.
    #[serde(default)]
    pub versions: BTreeMap<String, String>,
    /// The unit of a precomputed file's sizes (`tokens` when absent); ignored from a command,
    /// whose unit is declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

/// One request: a document to chunk at one configuration.
#[derive(Debug, Clone, Serialize)]
pub struct Request<'a> {
    /// The document's id (its path in the corpus).
    pub id: &'a str,
    /// The document's text.
    pub text: &'a str,
    /// chunk_size, in `unit`.
    pub chunk_size: usize,
    /// chunk_overlap, in `unit`.
    pub chunk_overlap: usize,
    /// `tokens` or `characters`.
    pub unit: &'static str,
    /// The grid's tokenizer (`cl100k_base`, `o200k_base`, `words`), for `unit = tokens`.
    pub tokenizer: &'static str,
}

/// One chunk as the chunker gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkOut {
    /// The chunk's text.
    pub text: String,
    /// Code-point offset of its first character in the document, when the chunker knows it
    /// (negative: unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<i64>,
    /// One past its last code point, when known (negative: unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<i64>,
}

impl ChunkOut {
    /// The given offsets, when both are there and not negative.
    pub fn offsets(&self) -> Option<(usize, usize)> {
        match (self.start, self.end) {
            (Some(s), Some(e)) if s >= 0 && e >= 0 => Some((s as usize, e as usize)),
            _ => None,
        }
    }
}

/// One response: a document's chunks, in document order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    /// The document's id, as in the request.
    pub id: String,
    /// Its chunks.
    pub chunks: Vec<ChunkOut>,
}

/// What is wrong with a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineProblem {
    /// Not JSON at all.
    NotJson(String),
    /// JSON, but not the expected object.
    NotProtocol(String),
}

impl std::fmt::Display for LineProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // the parser's message can quote a whole chunk: shortened
        match self {
            LineProblem::NotJson(e) => write!(f, "not JSON ({})", shorten(e)),
            LineProblem::NotProtocol(e) => {
                write!(f, "not a line of the protocol ({})", shorten(e))
            }
        }
    }
}

/// Parses a line as `T`, telling a line that is not JSON from one of the wrong shape.
fn parse<T: for<'de> Deserialize<'de>>(line: &str) -> Result<T, LineProblem> {
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| LineProblem::NotJson(e.to_string()))?;
    serde_json::from_value(value).map_err(|e| LineProblem::NotProtocol(e.to_string()))
}

/// Parses the chunker's hello and checks its protocol and version.
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

/// Parses a response line.
///
/// # Errors
/// [`LineProblem`] for a line that is not JSON or not `{"id": …, "chunks": [{"text": …}, …]}`.
pub fn parse_response(line: &str) -> Result<Response, LineProblem> {
    parse(line)
}

/// A line shortened for an error message: at most 120 characters.
pub fn shorten(line: &str) -> String {
    let mut s: String = line.chars().take(120).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hello_of_another_version_is_refused() {
        let ok =
            r#"{"protocol":"chunksweep-chunker","version":1,"chunker":"x","versions":{"a":"1.0"}}"#;
        assert_eq!(parse_hello(ok).unwrap().versions["a"], "1.0");
        let v2 = r#"{"protocol":"chunksweep-chunker","version":2}"#;
        assert!(matches!(parse_hello(v2), Err(LineProblem::NotProtocol(_))));
        assert!(matches!(parse_hello("hello"), Err(LineProblem::NotJson(_))));
    }

    #[test]
    fn negative_or_missing_offsets_are_unknown() {
        let r = parse_response(
            r#"{"id":"a","chunks":[{"text":"x","start":3,"end":4},{"text":"y","start":-1,"end":5},{"text":"z"}]}"#,
        )
        .unwrap();
        let offsets: Vec<_> = r.chunks.iter().map(ChunkOut::offsets).collect();
        assert_eq!(offsets, [Some((3, 4)), None, None]);
        assert!(matches!(
            parse_response(r#"{"id":"a"}"#),
            Err(LineProblem::NotProtocol(_))
        ));
    }

    #[test]
    fn shortened_lines_keep_120_characters() {
        assert_eq!(shorten("abc"), "abc");
        assert_eq!(shorten(&"é".repeat(200)).chars().count(), 121);
    }
}
