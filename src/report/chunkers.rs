//! The external chunkers' section of report.md and report.html (from chunkers.csv): which
//! chunker and versions made each external configuration, what its sizes count, and how its
//! chunks were placed in their documents (docs/chunkers.md).

use super::doc::{Align, Block, DocSection, Prose, Table};
use crate::chunking::external::PlacementCounts;

/// The section, or `None` for a run without external chunkers.
pub fn section(rows: &[PlacementCounts]) -> Option<DocSection> {
    if rows.is_empty() {
        return None;
    }
    let searched: usize = rows
        .iter()
        .map(|r| r.placed_exact + r.placed_whitespace + r.placed_added_prefix)
        .sum();
    let chunks: usize = rows.iter().map(|r| r.chunks).sum();
    let unlocated: usize = rows.iter().map(|r| r.unlocated).sum();
    let intro = Prose::text(format!(
        "Chunks of chunkers chunksweep does not ship are scored on their ranges in the documents. Of their {chunks} chunks, {searched} came without usable offsets and were found by chunksweep's own search; {unlocated} were found nowhere and dropped. Text a chunker added before a document's text is the chunk's prefix: indexed and counted in its tokens, never evidence. A configuration whose chunks equal a built-in's is merged with it (its alias in the table of configurations)."
    ));
    let n = |v: usize| Prose::text(v.to_string());
    let table = Table {
        head: [
            "configuration",
            "chunker",
            "size unit",
            "chunks",
            "by given offsets",
            "exact search",
            "whitespace forgiven",
            "added prefix",
            "unlocated",
            "documents from cache",
        ]
        .map(String::from)
        .to_vec(),
        align: [[Align::Default; 3].as_slice(), &[Align::Right; 7]].concat(),
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    Prose::new().c(&r.config),
                    Prose::text(&r.reported),
                    Prose::text(&r.size_unit),
                    n(r.chunks),
                    n(r.placed_given),
                    n(r.placed_exact),
                    n(r.placed_whitespace),
                    n(r.placed_added_prefix),
                    n(r.unlocated),
                    Prose::text(format!("{} of {}", r.documents_cached, r.documents)),
                ]
            })
            .collect(),
    };
    Some(DocSection::new(
        "External chunkers",
        vec![Block::Para(intro), Block::Table(table)],
    ))
}
