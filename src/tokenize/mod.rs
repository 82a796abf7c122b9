//! Token counting: a real BPE tokenizer (tiktoken's `cl100k_base` or `o200k_base`) or
//! whitespace-separated words (the unit of seed 000's harness).
//!
//! The BPE is GitHub's `bpe-openai` (a backtracking encoder several times faster than
//! tiktoken's), which gives exactly tiktoken's tokens (checked against tiktoken-rs on the test
//! corpora in `tests/bpe_equivalence.rs`). Every chunk size, overlap and cost column is counted in
//! the unit chosen here.

//!
//! One job a file: `kind` names the unit, `bpe` encodes with the BPE tables, `counter` counts any
//! text, `offsets` indexes a document's byte offsets, `stream` holds a document's tokens,
//! `slice` counts a document's slices exactly and `doc_sizer` sizes the splitters' candidate
//! chunks.

mod bpe;
mod counter;
mod doc_sizer;
mod kind;
pub(crate) mod offsets;
mod slice;
mod stream;

pub use counter::{TokenCounter, word_spans};
pub use doc_sizer::DocSizer;
pub use kind::TokenizerKind;
pub use slice::SliceCounter;
pub use stream::{CorpusTokens, TokenStream};

#[cfg(test)]
mod tests;
