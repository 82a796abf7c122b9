//! The structure of a document, decided by its file type ([`DocKind`]): its headings with their
//! byte offsets, and the heading path (outermost heading first) in effect at any position.
//!
//! | text format (its reader, [`crate::documents`])          | headings                  |
//! |---------------------------------------------------------|---------------------------|
//! | Markdown: `.md`, `.markdown`, `.md.txt`; HTML and DOCX converted | ATX `#` and setext `===`/`---`, parsed with pulldown-cmark (a `#` line inside a code fence is not a heading) |
//! | reStructuredText: `.rst`, `.rst.txt`                    | section titles (see [`super::rst`]) |
//! | plain: `.txt`, PDF text and others                      | none: plain paragraphs    |

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use crate::corpus::Document;
use crate::documents::kind::TextFormat;

/// How a document's structure is read, from its text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKind {
    /// Markdown (`.md`, `.markdown`).
    Markdown,
    /// reStructuredText (`.rst`).
    Rest,
    /// Plain text (`.txt` and anything else): paragraphs, no headings.
    Plain,
}

impl DocKind {
    /// The kind of `doc`, from its text format ([`Document::format`]: its reader's output, or
    /// for a document built in memory its id's extension).
    pub fn of(doc: &Document) -> Self {
        match doc.format {
            TextFormat::Markdown => DocKind::Markdown,
            TextFormat::Rest => DocKind::Rest,
            TextFormat::Plain => DocKind::Plain,
        }
    }
}

/// Every heading of a document of kind `kind`, in order.
pub fn headings(kind: DocKind, text: &str) -> Vec<Heading> {
    match kind {
        DocKind::Markdown => markdown_headings(text),
        DocKind::Rest => super::rst::titles(text)
            .into_iter()
            .map(|(byte, level, title)| Heading { byte, level, title })
            .collect(),
        DocKind::Plain => Vec::new(),
    }
}

/// One heading (Markdown) or section title (reStructuredText) of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// Byte offset where the heading's block starts.
    pub byte: usize,
    /// Level, 1 outermost (Markdown: 1 to 6; reStructuredText: the order of first appearance of
    /// the adornment style).
    pub level: u8,
    /// The heading's text, without markup.
    pub title: String,
}

/// Every heading of the Markdown `text`, in order.
pub fn markdown_headings(text: &str) -> Vec<Heading> {
    let mut out = Vec::new();
    let mut current: Option<Heading> = None;
    for (event, range) in Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                current = Some(Heading {
                    byte: range.start,
                    level: level as u8,
                    title: String::new(),
                });
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = current.as_mut() {
                    h.title.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(mut h) = current.take() {
                    h.title = h.title.trim().to_string();
                    out.push(h);
                }
            }
            _ => {}
        }
    }
    out
}

/// Walks the headings of one document and answers "which headings are in effect here?" for
/// positions given in increasing order.
pub struct PathTracker<'a> {
    headings: &'a [Heading],
    next: usize,
    stack: Vec<&'a Heading>,
    last: usize,
}

impl<'a> PathTracker<'a> {
    /// A tracker over `headings` (as returned by [`headings`]).
    pub fn new(headings: &'a [Heading]) -> Self {
        PathTracker {
            headings,
            next: 0,
            stack: Vec::new(),
            last: 0,
        }
    }

    /// Titles of the headings in effect at byte `pos` (a heading starting at `pos` is included),
    /// outermost first. Positions should not decrease; if one does, the walk restarts.
    pub fn path_at(&mut self, pos: usize) -> Vec<String> {
        if pos < self.last {
            self.next = 0;
            self.stack.clear();
        }
        self.last = pos;
        while let Some(h) = self.headings.get(self.next) {
            if h.byte > pos {
                break;
            }
            while self.stack.last().is_some_and(|top| top.level >= h.level) {
                self.stack.pop();
            }
            self.stack.push(h);
            self.next += 1;
        }
        self.stack.iter().map(|h| h.title.clone()).collect()
    }
}
