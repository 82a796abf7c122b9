//! The readers and how a file's name chooses one: by its last extension, or by its inner one
//! for Sphinx's `.rst.txt` and `.md.txt`, or by the `[corpus] readers` mapping the user gives.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A reader: how a file becomes a document's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum ReaderKind {
    /// UTF-8 plain text, read as is: paragraphs, no headings.
    Text,
    /// UTF-8 Markdown, read as is.
    Markdown,
    /// UTF-8 reStructuredText, read as is.
    Rst,
    /// HTML converted to Markdown.
    Html,
    /// Word (Office Open XML) converted to Markdown.
    Docx,
    /// PDF text, page by page.
    Pdf,
}

/// How a document's text is structured: what the `markdown` strategy reads headings from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextFormat {
    /// Markdown: ATX and setext headings, tables, code fences.
    Markdown,
    /// reStructuredText: section titles.
    Rest,
    /// Plain paragraphs, no headings.
    Plain,
}

/// The revision of chunksweep's own reading code, part of every reader's version: a change to
/// how the library's output is turned into text raises it.
const REVISION: &str = "r1";

impl ReaderKind {
    /// Every reader, in the order of the docs' table.
    pub const ALL: [ReaderKind; 6] = [
        ReaderKind::Markdown,
        ReaderKind::Rst,
        ReaderKind::Text,
        ReaderKind::Html,
        ReaderKind::Docx,
        ReaderKind::Pdf,
    ];

    /// The reader's name, as in `[corpus] readers`, extract.json and fingerprints.
    pub fn name(self) -> &'static str {
        match self {
            ReaderKind::Text => "text",
            ReaderKind::Markdown => "markdown",
            ReaderKind::Rst => "rst",
            ReaderKind::Html => "html",
            ReaderKind::Docx => "docx",
            ReaderKind::Pdf => "pdf",
        }
    }

    /// The reader's version: the version of the library doing the work, as Cargo.lock
    /// resolves it (`build.rs`), then `+` chunksweep's [`REVISION`] of its own reading code,
    /// for example `0.3.78+r1` for `pdf`. The text readers have no library: `r1`.
    pub fn version(self) -> String {
        let library = match self {
            ReaderKind::Text | ReaderKind::Markdown | ReaderKind::Rst => return REVISION.into(),
            ReaderKind::Html => "htmd",
            ReaderKind::Docx => "quick-xml",
            ReaderKind::Pdf => "pdf_oxide",
        };
        let version = env!("CHUNKSWEEP_LIBRARIES")
            .split(';')
            .find_map(|pair| pair.strip_prefix(library)?.strip_prefix('='))
            .unwrap_or("unknown");
        format!("{version}+{REVISION}")
    }

    /// The format of the text this reader produces.
    pub fn format(self) -> TextFormat {
        match self {
            ReaderKind::Markdown | ReaderKind::Html | ReaderKind::Docx => TextFormat::Markdown,
            ReaderKind::Rst => TextFormat::Rest,
            ReaderKind::Text | ReaderKind::Pdf => TextFormat::Plain,
        }
    }

    /// Whether the reader converts the file (its text is not the file's bytes): such documents
    /// carry their reader in the corpus fingerprint.
    pub fn converts(self) -> bool {
        matches!(self, ReaderKind::Html | ReaderKind::Docx | ReaderKind::Pdf)
    }

    /// The reader of an extension (lower case, without the dot) by default.
    fn of_extension(ext: &str) -> Option<ReaderKind> {
        Some(match ext {
            "md" | "markdown" => ReaderKind::Markdown,
            "rst" => ReaderKind::Rst,
            "txt" => ReaderKind::Text,
            "html" | "htm" | "xhtml" => ReaderKind::Html,
            "docx" => ReaderKind::Docx,
            "pdf" => ReaderKind::Pdf,
            _ => return None,
        })
    }
}

impl fmt::Display for ReaderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ReaderKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ReaderKind::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                format!("unknown reader {s:?}: use text, markdown, rst, html, docx or pdf")
            })
    }
}

impl From<ReaderKind> for String {
    fn from(r: ReaderKind) -> String {
        r.name().to_string()
    }
}

impl TryFrom<String> for ReaderKind {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

/// The reader of a file named `name` (its last path component): the `mapping`'s reader for its
/// extension (lower case, without the dot; a double one such as `rst.txt` is looked up first),
/// else the default for its inner extension when the last is `txt` (`x.rst.txt` is reST,
/// `x.md.txt` Markdown), else the default for its extension. `None`: no reader.
pub fn reader_for(name: &str, mapping: &BTreeMap<String, ReaderKind>) -> Option<ReaderKind> {
    let lower = name.to_ascii_lowercase();
    let mut parts = lower.rsplit('.');
    let last = parts.next().filter(|_| lower.contains('.'))?;
    let inner = parts.next().filter(|_| lower.matches('.').count() >= 2);
    if let Some(inner) = inner
        && let Some(&r) = mapping.get(&format!("{inner}.{last}"))
    {
        return Some(r);
    }
    if let Some(&r) = mapping.get(last) {
        return Some(r);
    }
    if last == "txt"
        && let Some(r) = inner.and_then(ReaderKind::of_extension)
        && !r.converts()
    {
        return Some(r);
    }
    ReaderKind::of_extension(last)
}

/// The format of a document's text judged by its id alone (a document built in memory), as
/// [`reader_for`] with no mapping; plain text when no reader knows the name.
pub fn format_of_name(name: &str) -> TextFormat {
    reader_for(name, &BTreeMap::new()).map_or(TextFormat::Plain, ReaderKind::format)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn double_extensions_are_read_by_their_inner_type_and_the_mapping_wins() {
        let none = BTreeMap::new();
        let r = |n| reader_for(n, &none);
        assert_eq!(r("api/index.rst.txt"), Some(ReaderKind::Rst));
        assert_eq!(r("notes.MD.txt"), Some(ReaderKind::Markdown));
        assert_eq!(r("notes.txt"), Some(ReaderKind::Text));
        assert_eq!(r("v1.2.txt"), Some(ReaderKind::Text));
        assert_eq!(r("a.pdf.txt"), Some(ReaderKind::Text));
        assert_eq!(r("Report.PDF"), Some(ReaderKind::Pdf));
        assert_eq!(r("page.htm"), Some(ReaderKind::Html));
        assert_eq!(r("data.csv"), None);
        assert_eq!(r("Makefile"), None);
        let mapping = BTreeMap::from([
            ("asciidoc".to_string(), ReaderKind::Text),
            ("rst.txt".to_string(), ReaderKind::Text),
            ("aspx".to_string(), ReaderKind::Html),
        ]);
        assert_eq!(reader_for("a.asciidoc", &mapping), Some(ReaderKind::Text));
        assert_eq!(reader_for("a.rst.txt", &mapping), Some(ReaderKind::Text));
        assert_eq!(reader_for("a.aspx", &mapping), Some(ReaderKind::Html));
        assert_eq!(format_of_name("x.rst.txt"), TextFormat::Rest);
        assert_eq!(format_of_name("x.html"), TextFormat::Markdown);
    }

    #[test]
    fn versions_name_the_library_and_the_revision() {
        assert_eq!(ReaderKind::Markdown.version(), "r1");
        assert!(ReaderKind::Html.version().starts_with("0.5."));
        assert!(ReaderKind::Html.version().ends_with("+r1"));
        assert_eq!("docx".parse::<ReaderKind>(), Ok(ReaderKind::Docx));
        assert!(
            "doc"
                .parse::<ReaderKind>()
                .unwrap_err()
                .contains("unknown reader")
        );
    }
}
