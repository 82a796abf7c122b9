//! The unit chunk sizes and costs are counted in: a BPE or whitespace-separated words.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The unit chunk sizes and costs are counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TokenizerKind {
    /// OpenAI's `cl100k_base` BPE (GPT-4, GPT-3.5, text-embedding-3).
    #[default]
    Cl100kBase,
    /// OpenAI's `o200k_base` BPE (GPT-4o and later).
    O200kBase,
    /// Whitespace-separated words, as `str.split()` counts them.
    Words,
}

impl TokenizerKind {
    /// The name used on the command line, in configs and in CSVs.
    pub fn name(self) -> &'static str {
        match self {
            TokenizerKind::Cl100kBase => "cl100k_base",
            TokenizerKind::O200kBase => "o200k_base",
            TokenizerKind::Words => "words",
        }
    }
}

impl fmt::Display for TokenizerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TokenizerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cl100k_base" => Ok(TokenizerKind::Cl100kBase),
            "o200k_base" => Ok(TokenizerKind::O200kBase),
            "words" => Ok(TokenizerKind::Words),
            other => Err(format!(
                "unknown tokenizer {other:?}: use cl100k_base, o200k_base or words"
            )),
        }
    }
}
