//! Seed 002's evidence by section: `"must_include": "docs/api/timeouts.md#section-2"`.
//!
//! A `must_include` of a bare path means the whole document; `path#anchor` means the section
//! under that heading: from the heading's first character to the next heading of the same or an
//! outer level (subsections included), or to the end of the document. Headings are read as the
//! chunkers read them ([`crate::chunking::headings`]: Markdown ATX and setext headings,
//! reStructuredText titles; plain text has none).
//!
//! Anchors are GitHub's: the heading's text lower-cased, every character that is not a letter,
//! a digit, a space, `-` or `_` removed, spaces replaced by `-`; a repeated anchor gets `-1`,
//! `-2`, … in document order. `section-N` names the N-th heading of the document (1-based), as
//! in seed 002; a heading whose own anchor is `section-N` wins over the ordinal.

use crate::chunking::headings::{DocKind, headings};
use crate::corpus::Document;

/// One section of a document: its anchor and its code-point range (end exclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// GitHub-style anchor of its heading, made unique in the document.
    pub anchor: String,
    /// First code point (the heading's first character).
    pub start: usize,
    /// One past the last code point (the next heading of the same or an outer level, or the
    /// end of the document).
    pub end: usize,
}

/// GitHub's anchor of a heading text, before duplicates are numbered: lower-cased, characters
/// other than letters, digits, spaces, `-` and `_` removed, spaces turned into `-`.
pub fn github_anchor(title: &str) -> String {
    title
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every section of `doc`, in heading order, with unique anchors.
pub fn sections(doc: &Document) -> Vec<Section> {
    let heads = headings(DocKind::of(doc), &doc.text);
    let mut seen = std::collections::HashMap::<String, usize>::new();
    heads
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let end_byte = heads[i + 1..]
                .iter()
                .find(|next| next.level <= h.level)
                .map_or(doc.text.len(), |next| next.byte);
            let base = github_anchor(&h.title);
            let n = seen.entry(base.clone()).or_insert(0);
            let anchor = if *n == 0 {
                base.clone()
            } else {
                format!("{base}-{n}")
            };
            *n += 1;
            Section {
                anchor,
                start: doc.byte_to_char(h.byte),
                end: doc.byte_to_char(end_byte),
            }
        })
        .collect()
}

/// The code-point range `anchor` names in `doc`: a section's anchor, else `section-N` (the N-th
/// heading, 1-based).
///
/// # Errors
/// The message naming the document's anchors when `anchor` names none of its headings.
pub fn find(doc: &Document, anchor: &str) -> Result<(usize, usize), String> {
    let all = sections(doc);
    if let Some(s) = all.iter().find(|s| s.anchor == anchor) {
        return Ok((s.start, s.end));
    }
    let ordinal = anchor
        .strip_prefix("section-")
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| (1..=all.len()).contains(n));
    if let Some(n) = ordinal {
        return Ok((all[n - 1].start, all[n - 1].end));
    }
    let known = if all.is_empty() {
        "it has no heading".to_string()
    } else {
        let names: Vec<&str> = all.iter().map(|s| s.anchor.as_str()).collect();
        format!(
            "its anchors: {}; or section-1 … section-{}",
            names.join(", "),
            all.len()
        )
    };
    Err(format!(
        "no heading with anchor {anchor:?} in {:?} ({known}): fix the anchor after `#`, or give the path alone for the whole document",
        doc.id
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Keys\n\nIntro.\n\n## Rotation\n\nRotate keys monthly.\n\n### Without downtime\n\nUse two keys.\n\n## Rotation\n\nAgain.\n\n## Q&A: why?\n\nBecause.\n";

    #[test]
    fn anchors_are_githubs_and_sections_end_at_the_next_heading_of_their_level() {
        let doc = Document::new("keys.md", DOC);
        let got: Vec<(String, &str)> = sections(&doc)
            .into_iter()
            .map(|s| (s.anchor, doc.slice_chars(s.start, s.end)))
            .collect();
        assert_eq!(
            got,
            vec![
                ("keys".to_string(), DOC),
                (
                    "rotation".to_string(),
                    "## Rotation\n\nRotate keys monthly.\n\n### Without downtime\n\nUse two keys.\n\n"
                ),
                (
                    "without-downtime".to_string(),
                    "### Without downtime\n\nUse two keys.\n\n"
                ),
                ("rotation-1".to_string(), "## Rotation\n\nAgain.\n\n"),
                ("qa-why".to_string(), "## Q&A: why?\n\nBecause.\n"),
            ]
        );
    }

    #[test]
    fn section_n_is_the_nth_heading_and_an_unknown_anchor_names_the_known_ones() {
        let doc = Document::new("keys.md", DOC);
        let (s, e) = find(&doc, "section-3").unwrap();
        assert_eq!(
            doc.slice_chars(s, e),
            "### Without downtime\n\nUse two keys.\n\n"
        );
        let err = find(&doc, "rotate").unwrap_err();
        assert!(
            err.starts_with("no heading with anchor \"rotate\" in \"keys.md\" (its anchors: keys, rotation, without-downtime, rotation-1, qa-why; or section-1 … section-5)"),
            "{err}"
        );
        assert!(find(&doc, "section-6").is_err());
        let plain = Document::new("notes.txt", "No headings here.");
        assert!(
            find(&plain, "section-1")
                .unwrap_err()
                .contains("it has no heading")
        );
    }
}
