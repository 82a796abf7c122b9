//! Chunking strategies. Each strategy turns one document's text into byte ranges; this module
//! turns those into [`Chunk`]s that know their document, code-point range, heading path and
//! token count.
//!
//! | strategy    | boundaries come from                                             | file            |
//! |-------------|------------------------------------------------------------------|-----------------|
//! | `fixed`     | windows of `chunk_size` tokens, stride `chunk_size - chunk_overlap` | [`windows`]  |
//! | `words`     | the same windows over whitespace words (seed 000's harness)      | [`windows`]     |
//! | `recursive` | text-splitter: paragraphs, then sentences, then words            | [`recursive`]   |
//! | `markdown`  | a chunk per heading section (Markdown or reST by file type), split inside by text-splitter's Markdown levels (plain paragraphs for `.rst`/`.txt`) | [`markdown`] |
//! | `sentence`  | whole sentences (UAX #29) packed up to `chunk_size`              | [`sentence`]    |
//! | `page`      | a chunk per page (PDF); a page over `chunk_size` split by the `recursive` rule | [`page`] |
//! | `semantic`  | sentence-embedding distance above a percentile, capped at `chunk_size` | [`semantic`] |
//! | an external chunker | the user's chunker, run by the prepare step and placed in the document | [`external`] |
//!
//! The values they share (strategy, parameters, errors, the chunk) are in [`chunk`]. Every
//! chunk is held to its size by its own token count ([`bound`], [`windows`]); the
//! document's file type decides its headings ([`headings`], [`rst`]); split Markdown tables
//! carry their header rows ([`tables`]).

pub mod bound;
pub mod chunk;
pub mod enrich;
pub mod external;
pub mod headings;
pub mod markdown;
pub mod page;
pub mod recursive;
pub mod rst;
pub mod semantic;
pub mod sentence;
pub mod structure;
pub mod tables;
pub mod windows;

pub use chunk::{Chunk, ChunkError, ChunkParams, Ranges, Sized, Strategy, size_unit};

use rayon::prelude::*;

use crate::corpus::{Corpus, Document};
use crate::tokenize::{
    CorpusTokens, DocSizer, SliceCounter, TokenCounter, TokenStream, TokenizerKind,
};
use structure::{CorpusStructure, DocStructure};

/// Chunks one document.
///
/// Every chunk's `tokens` is the count of its own text encoded alone with `counter`, and no
/// chunk exceeds `chunk_size` (whitespace words for `words`, `counter`'s unit otherwise) unless
/// it is a single unit that cannot be split (a character or grapheme of more tokens than the
/// size; see [`oversize`]). Chunks come in order, none repeats
/// or lies inside the previous one, and none is whitespace only. The `fixed` and `words` windows
/// keep their exact unit boundaries ([`windows`]); the other strategies' chunks are trimmed of
/// surrounding whitespace and split again where their own text is over the size ([`bound`]).
///
/// `stream` is the document's token stream in the unit of `counter`; the strategies built on
/// text-splitter size their candidates through it (see [`DocSizer`]). The document's file type
/// decides its structure ([`headings::DocKind`]): headings and heading paths for Markdown and
/// reStructuredText, none for plain text; it is read from `ctx.structure` when there is one
/// (document `doc_index` there), else here. For the `markdown` strategy, a chunk that starts
/// inside the body of a Markdown table carries the table's header rows, and is sized with them
/// ([`tables::carry`]).
///
/// # Errors
/// [`ChunkError::NoPages`] for `page` on a document without pages;
/// [`ChunkError::MissingSentenceEmbedding`] for `semantic` without `ctx.sentence_vectors` or
/// without a vector for a sentence.
pub fn chunk_document(
    doc: &Document,
    doc_index: usize,
    stream: &TokenStream,
    params: &ChunkParams,
    counter: TokenCounter,
    ctx: &ChunkContext<'_>,
) -> Result<Vec<Chunk>, ChunkError> {
    let text = doc.text.as_str();
    let own;
    let structure = match ctx.structure {
        Some(s) => s.doc(doc_index),
        None => {
            own = DocStructure::of(doc);
            &own
        }
    };
    let sizer = DocSizer::new(text, stream, counter, params.chunk_size);
    let exact = SliceCounter::new(text, stream, counter);
    let (size, overlap) = (params.chunk_size, params.chunk_overlap);
    let placed = placed_of(ctx, params, doc_index)?;
    let sized: Sized = match params.strategy {
        Strategy::Fixed => {
            windows::split(text, &windows::stream_units(stream), size, overlap, exact)
        }
        Strategy::Words => {
            // windows over the whitespace words (the document's stream when it counts words),
            // each counted in the grid's unit
            let words_counter = TokenCounter::new(TokenizerKind::Words);
            let own;
            let words = if counter.kind() == TokenizerKind::Words {
                stream
            } else {
                own = TokenStream::new(text, words_counter);
                &own
            };
            let units = windows::stream_units(words);
            let in_words = SliceCounter::new(text, words, words_counter);
            windows::split(text, &units, size, overlap, in_words)
                .into_iter()
                .map(|(s, e, _)| (s, e, exact.count(s, e)))
                .collect()
        }
        Strategy::Recursive => {
            bound::fit(text, recursive::split(text, params, sizer), params, exact)
        }
        Strategy::Markdown => bound::fit(
            text,
            markdown::split(text, structure, params, sizer),
            params,
            exact,
        ),
        Strategy::Sentence => bound::fit(text, sentence::split(text, params, sizer), params, exact),
        Strategy::Page if doc.pages.is_empty() => {
            return Err(ChunkError::NoPages {
                doc: doc.id.clone(),
            });
        }
        Strategy::Page => bound::fit(
            text,
            page::split(text, &doc.pages, params, sizer),
            params,
            exact,
        ),
        Strategy::Semantic => {
            let none = || ChunkError::MissingSentenceEmbedding {
                preview: text.chars().take(60).collect(),
            };
            let vectors = ctx.sentence_vectors.ok_or_else(none)?;
            let ranges = semantic::split(text, params, sizer, vectors, &ctx.semantic)?;
            bound::fit(text, ranges, params, exact)
        }
        Strategy::External(_) => placed
            .into_iter()
            .flatten()
            .map(|p| {
                (
                    p.byte_start,
                    p.byte_end,
                    exact.count(p.byte_start, p.byte_end),
                )
            })
            .collect(),
    };
    // what each chunk carries: the text an external chunker added, or for `markdown` the
    // header rows of the table it starts in (its pieces sized with them)
    let (sized, carried): (Sized, Vec<String>) = match placed {
        Some(placed) => (sized, placed.iter().map(|p| p.added.clone()).collect()),
        None if params.strategy == Strategy::Markdown => {
            let heads = structure.tables(text);
            tables::carry(text, sized, heads, params, exact, counter)
        }
        None => {
            let none = vec![String::new(); sized.len()];
            (sized, none)
        }
    };
    Ok(into_chunks(
        doc, doc_index, structure, sized, carried, counter,
    ))
}

/// An external configuration's chunks of document `doc_index`, placed by the prepare step;
/// `None` for a built-in strategy.
///
/// # Errors
/// [`ChunkError::MissingExternal`] when the prepare step made no chunks for `params`.
fn placed_of<'a>(
    ctx: &ChunkContext<'a>,
    params: &ChunkParams,
    doc_index: usize,
) -> Result<Option<&'a [external::Placed]>, ChunkError> {
    if !params.strategy.is_external() {
        return Ok(None);
    }
    let missing = || ChunkError::MissingExternal {
        config: external::config_label(params),
    };
    let config = ctx
        .external
        .and_then(|e| e.get(params))
        .ok_or_else(missing)?;
    Ok(Some(&config.docs[doc_index]))
}

/// One document's chunks from their byte ranges, own token counts and carried texts (each
/// counted with `counter`, separator included), with their heading paths.
fn into_chunks(
    doc: &Document,
    doc_index: usize,
    structure: &DocStructure,
    sized: Sized,
    carried: Vec<String>,
    counter: TokenCounter,
) -> Vec<Chunk> {
    let mut paths = headings::PathTracker::new(&structure.headings);
    sized
        .into_iter()
        .zip(carried)
        .enumerate()
        .map(|(ordinal, ((s, e, tokens), carried))| {
            let carried_tokens = enrich::prefix_tokens(&carried, counter);
            Chunk {
                doc: doc_index,
                ordinal,
                start: doc.byte_to_char(s),
                end: doc.byte_to_char(e),
                byte_start: s,
                byte_end: e,
                heading_path: paths.path_at(s),
                tokens,
                prefix: carried.clone(),
                prefix_tokens: carried_tokens,
                carried,
                carried_tokens,
            }
        })
        .collect()
}

/// What strategies beyond text and tokens need: sentence embeddings for `semantic`, and the
/// documents' structure when it was read once for many configurations.
#[derive(Clone, Copy, Default)]
pub struct ChunkContext<'a> {
    /// The corpus's structure ([`CorpusStructure::new`] of the corpus being chunked); without
    /// it each document's structure is read as it is chunked.
    pub structure: Option<&'a CorpusStructure>,
    /// Unit sentence vectors (required by `semantic`).
    pub sentence_vectors: Option<&'a dyn semantic::SentenceVectors>,
    /// Settings of `semantic`.
    pub semantic: semantic::SemanticSettings,
    /// The external chunkers' chunks (required by an external strategy).
    pub external: Option<&'a external::ExternalChunks>,
}

/// The unit `params`' chunk_size counts under `tokenizer` (as sweep.csv's `size_unit`): the
/// built-ins' ([`size_unit`]), or for an external chunker its declared unit (`characters`, or
/// the grid's `tokens`/`words`) as `external` records it.
pub fn unit_of(
    params: &ChunkParams,
    tokenizer: TokenizerKind,
    external: Option<&external::ExternalChunks>,
) -> &'static str {
    let declared = external
        .and_then(|e| e.get(params))
        .map(|c| c.identity.unit);
    match (params.strategy, declared) {
        (Strategy::External(_), Some(external::SizeUnit::Characters)) => "characters",
        (Strategy::External(_), _) => size_unit("", tokenizer.name()),
        (s, _) => size_unit(s.name(), tokenizer.name()),
    }
}

/// `(max_chunk_tokens, n_oversize)` of one configuration's chunks: the most tokens of one
/// chunk's own text ([`Chunk::tokens`], counted in `unit`), and how many chunks are over
/// `params.chunk_size` in its unit ([`unit_of`] with `external`: whitespace words, characters,
/// or tokens)
/// with what they carry ([`Chunk::carried_tokens`]): a single unit that cannot be split (alone,
/// or under the header rows a piece of a split Markdown table carries, [`tables::carry`]), or an
/// external chunker's chunk over its size.
/// `(0, 0)` for no chunk.
pub fn oversize(
    corpus: &Corpus,
    chunks: &[Chunk],
    params: &ChunkParams,
    unit: TokenizerKind,
    external: Option<&external::ExternalChunks>,
) -> (usize, usize) {
    let size_unit = unit_of(params, unit, external);
    let max = chunks.iter().map(|c| c.tokens).max().unwrap_or(0);
    let size_of = |c: &Chunk| match size_unit {
        "characters" => c.char_len() + c.carried.chars().count(),
        "words" if unit != TokenizerKind::Words => c.text(corpus).split_whitespace().count(),
        _ => c.tokens + c.carried_tokens,
    };
    let over = chunks
        .iter()
        .filter(|c| size_of(c) > params.chunk_size)
        .count();
    (max, over)
}

/// Chunks every document of the corpus (documents in parallel, chunks in document order), with
/// the token streams of `tokens` (computed once per sweep and shared by every configuration);
/// `ctx` holds the sentence vectors that `semantic` needs.
///
/// # Errors
/// [`ChunkError`] for invalid parameters (checked before any work) or a missing sentence
/// embedding.
pub fn chunk_corpus(
    corpus: &Corpus,
    tokens: &CorpusTokens,
    params: &ChunkParams,
    ctx: &ChunkContext<'_>,
) -> Result<Vec<Chunk>, ChunkError> {
    params.validate()?;
    if let Some(s) = ctx.structure {
        assert_eq!(
            s.len(),
            corpus.docs.len(),
            "the structure of another corpus"
        );
    }
    // A batch of documents at a time, in parallel, gathered in document order (so the error
    // returned is the first in document order): every document's own chunk list held at once
    // next to the gathered copy was the sweep's peak. Growing the gathered list moves its pages
    // (a large block is reallocated by remapping), it does not copy them.
    const BATCH: usize = 64;
    let mut out = Vec::new();
    for (b, batch) in corpus.docs.chunks(BATCH).enumerate() {
        let per_doc: Vec<Result<Vec<Chunk>, ChunkError>> = batch
            .par_iter()
            .enumerate()
            .map(|(j, doc)| {
                let i = b * BATCH + j;
                chunk_document(doc, i, tokens.doc(i), params, tokens.counter(), ctx)
            })
            .collect();
        for chunks in per_doc {
            out.extend(chunks?);
        }
    }
    // kept for the whole configuration: no spare capacity
    out.shrink_to_fit();
    Ok(out)
}

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
