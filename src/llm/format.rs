//! The structured-output mode of a chat request (`json_schema`, `json_object`, `text`): a plain
//! value shared by the request types, the call records, the cache and the client.

use serde::{Deserialize, Serialize};

/// The structured-output mode of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum ResponseFormatKind {
    /// `response_format: {"type": "json_schema", "json_schema": {...}}` (OpenAI, vLLM, llama.cpp).
    JsonSchema,
    /// `response_format: {"type": "json_object", "schema": {...}}` plus the schema in the prompt.
    JsonObject,
    /// No `response_format`; the schema is given in the prompt and the reply parsed leniently.
    Text,
}

impl ResponseFormatKind {
    /// The next, less demanding mode, if any.
    pub fn next(self) -> Option<Self> {
        match self {
            Self::JsonSchema => Some(Self::JsonObject),
            Self::JsonObject => Some(Self::Text),
            Self::Text => None,
        }
    }

    /// The name used in records and the cache (`json_schema`, `json_object`, `text`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::JsonSchema => "json_schema",
            Self::JsonObject => "json_object",
            Self::Text => "text",
        }
    }

    /// Parses [`as_str`](Self::as_str) output.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "json_schema" => Some(Self::JsonSchema),
            "json_object" => Some(Self::JsonObject),
            "text" => Some(Self::Text),
            _ => None,
        }
    }
}
