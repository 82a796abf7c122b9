//! A document's structure, read once per run and shared by every configuration: its kind (by
//! file type), its headings, and for Markdown its tables (read on first use, by the `markdown`
//! strategy only). Reading headings means a pulldown-cmark parse of the whole document, which
//! would otherwise be repeated for every configuration.

use std::sync::OnceLock;

use rayon::prelude::*;

use super::headings::{DocKind, Heading, headings};
use super::tables::{TableHead, table_heads};
use crate::corpus::{Corpus, Document};

/// The structure of one document.
#[derive(Debug)]
pub struct DocStructure {
    /// How the document's structure is read.
    pub kind: DocKind,
    /// Its headings, in order ([`headings`]).
    pub headings: Vec<Heading>,
    tables: OnceLock<Vec<TableHead>>,
}

impl DocStructure {
    /// Reads the kind and headings of `doc`.
    pub fn of(doc: &Document) -> Self {
        let kind = DocKind::of(doc);
        DocStructure {
            kind,
            headings: headings(kind, &doc.text),
            tables: OnceLock::new(),
        }
    }

    /// The tables of `text` (the document's text) with at least one body row ([`table_heads`];
    /// none unless the document is Markdown), read on the first call.
    pub fn tables(&self, text: &str) -> &[TableHead] {
        self.tables.get_or_init(|| match self.kind {
            DocKind::Markdown => table_heads(text),
            DocKind::Rest | DocKind::Plain => Vec::new(),
        })
    }
}

/// Every document's [`DocStructure`], in corpus order, read in parallel.
#[derive(Debug)]
pub struct CorpusStructure {
    docs: Vec<DocStructure>,
}

impl CorpusStructure {
    /// Reads the structure of every document of `corpus`.
    pub fn new(corpus: &Corpus) -> Self {
        CorpusStructure {
            docs: corpus.docs.par_iter().map(DocStructure::of).collect(),
        }
    }

    /// The structure of document `i`.
    pub fn doc(&self, i: usize) -> &DocStructure {
        &self.docs[i]
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether there is no document.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }
}
