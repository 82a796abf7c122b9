//! Small-to-big retrieval, swept as a factor: what is sent for each retrieved chunk, applied
//! after ranking and before the cut (seeds 000 and 001: "index small chunks and return their
//! larger parent, or expand to neighbouring chunks after retrieval").
//!
//! | value          | what is sent for a retrieved chunk                                     |
//! |----------------|------------------------------------------------------------------------|
//! | `none`         | the chunk (its prefix, then its text), as without this factor          |
//! | `neighbours:N` | the chunk with up to N chunks before and after it in its document; windows that overlap or touch are merged into one unit, sent once with the prefix of its first chunk |
//! | `parent:P`     | the chunk's parent ([`parents`]): the Markdown/reST section it lies in, cut into pieces of at most P tokens by the recursive rule when longer, or for text without headings pieces of at most P tokens by the same rule; several hits in one parent send it once, ranked by its best hit; a parent is sent without a prefix |
//!
//! The units sent ([`send`]) are what span recall, coverage and character IoU read, and what
//! tokens per query counts; a budget cut takes hits in rank order while the units they add fit
//! the budget (never over it). MRR and the margin stay on the ranking of the chunks.
//! Configuration ids carry a value other than `none` in their retriever part
//! (`…-bm25+parent1024-b2000`, see [`Expand::id_tag`]).

pub mod left_out;
pub mod parents;
pub mod send;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What is sent for each retrieved chunk (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Expand {
    /// The chunk alone.
    #[default]
    None,
    /// The chunk with up to this many chunks before and after it in its document (at least 1).
    Neighbours(usize),
    /// The chunk's parent section, in pieces of at most this many tokens (at least 1).
    Parent(usize),
}

impl Expand {
    /// Whether it sends more than the chunk.
    pub fn is_expanded(self) -> bool {
        self != Expand::None
    }

    /// The cap P of `parent:P` (`None` for the others).
    pub fn parent_cap(self) -> Option<usize> {
        match self {
            Expand::Parent(p) => Some(p),
            Expand::None | Expand::Neighbours(_) => None,
        }
    }

    /// Whether it can send more than a chunk of `chunk_size` tokens: not `parent:P` with P at
    /// or below it (such a parent is no larger than the chunk; [`left_out`]).
    pub fn sends_more_than(self, chunk_size: usize) -> bool {
        self.parent_cap().is_none_or(|p| p > chunk_size)
    }

    /// What a configuration id appends to its retriever after a `+`: `neighbours1`,
    /// `parent1024`; `None` for `none` (ids without expansion are unchanged).
    pub fn id_tag(self) -> Option<String> {
        match self {
            Expand::None => None,
            Expand::Neighbours(n) => Some(format!("neighbours{n}")),
            Expand::Parent(p) => Some(format!("parent{p}")),
        }
    }

    /// The value of an id tag written by [`Expand::id_tag`]; `None` for anything else.
    pub fn from_id_tag(tag: &str) -> Option<Expand> {
        let number = |s: &str| s.parse::<usize>().ok().filter(|&n| n > 0);
        if let Some(n) = tag.strip_prefix("neighbours") {
            return number(n).map(Expand::Neighbours);
        }
        tag.strip_prefix("parent")
            .and_then(number)
            .map(Expand::Parent)
    }
}

impl fmt::Display for Expand {
    /// `none`, `neighbours:N`, `parent:P`: as the flag takes it and sweep.csv writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expand::None => f.write_str("none"),
            Expand::Neighbours(n) => write!(f, "neighbours:{n}"),
            Expand::Parent(p) => write!(f, "parent:{p}"),
        }
    }
}

impl FromStr for Expand {
    type Err = String;
    /// `none`, `neighbours:N` (N ≥ 1) or `parent:P` (P ≥ 1 tokens).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let bad = || {
            format!(
                "unknown expansion {s:?}: use none, neighbours:N (N chunks each side, N ≥ 1) or parent:P (parents of at most P tokens, P ≥ 1), e.g. none,neighbours:1,parent:1024"
            )
        };
        if s == "none" {
            return Ok(Expand::None);
        }
        let (kind, n) = s.split_once(':').ok_or_else(bad)?;
        let n: usize = n.trim().parse().ok().filter(|&n| n > 0).ok_or_else(bad)?;
        match kind.trim() {
            "neighbours" => Ok(Expand::Neighbours(n)),
            "parent" => Ok(Expand::Parent(n)),
            "neighbors" => Err(format!("{} (did you mean neighbours:{n}?)", bad())),
            _ => Err(bad()),
        }
    }
}

impl From<Expand> for String {
    fn from(e: Expand) -> String {
        e.to_string()
    }
}

impl TryFrom<String> for Expand {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

#[cfg(test)]
mod tests;
