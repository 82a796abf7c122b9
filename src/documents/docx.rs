//! Word documents (Office Open XML, `.docx`) to Markdown, read from the zip's
//! `word/document.xml` with quick-xml: a paragraph in a heading style (`Title`, `Heading 1` …
//! `Heading 6`, by the style's name in `word/styles.xml`, so a localised style id still counts)
//! becomes a `#` heading of that level (`Title` is level 1); a paragraph with numbering
//! (`w:numPr`) a `- ` list item, indented two spaces per level; a table a Markdown table whose
//! first row is its header; tabs a space, line breaks a new line. Other text is paragraphs.

use std::collections::HashMap;
use std::io::{Cursor, Read};

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use super::extracted::{Extracted, ReadError};

/// Reads a DOCX file's bytes.
///
/// # Errors
/// [`ReadError::Corrupt`] when the bytes are not a zip, the zip has no `word/document.xml` (not
/// a Word document) or its XML cannot be parsed.
pub fn read(bytes: &[u8]) -> Result<Extracted, ReadError> {
    let corrupt = |detail: String| ReadError::Corrupt {
        reader: "docx",
        detail,
    };
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes))
        .map_err(|e| corrupt(format!("not a zip archive ({e})")))?;
    let mut part = |name: &str| -> Result<Option<String>, ReadError> {
        let mut file = match zip.by_name(name) {
            Ok(f) => f,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(corrupt(format!("{name}: {e}"))),
        };
        let mut xml = String::new();
        file.read_to_string(&mut xml)
            .map_err(|e| corrupt(format!("{name}: {e}")))?;
        Ok(Some(xml))
    };
    let document = part("word/document.xml")?
        .ok_or_else(|| corrupt("a zip without word/document.xml, so not a Word document".into()))?;
    let styles = match part("word/styles.xml")? {
        Some(xml) => heading_styles(&xml).map_err(corrupt)?,
        None => HashMap::new(),
    };
    let text = markdown(&document, &styles).map_err(corrupt)?;
    Ok(Extracted {
        text,
        pages: Vec::new(),
        warnings: Vec::new(),
    })
}

/// The heading level of each style id whose name is `Title` (1) or `heading N` (N, at most 6).
fn heading_styles(xml: &str) -> Result<HashMap<String, usize>, String> {
    let mut reader = Reader::from_str(xml);
    let mut out = HashMap::new();
    let mut id = None;
    loop {
        match reader
            .read_event()
            .map_err(|e| format!("word/styles.xml: {e}"))?
        {
            Event::Start(e) if e.local_name().as_ref() == "style" => id = attr(&e, "w:styleId"),
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == "name" => {
                let name = attr(&e, "w:val").unwrap_or_default().to_ascii_lowercase();
                let level = match name.as_str() {
                    "title" => Some(1),
                    _ => name
                        .strip_prefix("heading ")
                        .and_then(|n| n.parse::<usize>().ok()),
                };
                if let (Some(id), Some(level)) = (&id, level) {
                    out.insert(id.clone(), level.clamp(1, 6));
                }
            }
            Event::Eof => return Ok(out),
            _ => {}
        }
    }
}

/// An attribute's unescaped value.
fn attr(e: &BytesStart<'_>, name: &str) -> Option<String> {
    let a = e.try_get_attribute(name).ok()??;
    a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
        .ok()
        .map(|v| v.into_owned())
}

/// The paragraph being read: its text and what its properties say.
#[derive(Default)]
struct Paragraph {
    text: String,
    heading: Option<usize>,
    list_level: Option<usize>,
}

impl Paragraph {
    fn markdown(&self) -> String {
        let text = self.text.trim();
        match (self.heading, self.list_level) {
            _ if text.is_empty() => String::new(),
            (Some(level), _) => format!("{} {text}", "#".repeat(level)),
            (None, Some(level)) => format!("{}- {text}", "  ".repeat(level)),
            (None, None) => text.to_string(),
        }
    }
}

/// What has been read of `word/document.xml` so far.
#[derive(Default)]
struct Body {
    /// Finished blocks, each with whether it is a list item.
    blocks: Vec<(String, bool)>,
    para: Paragraph,
    /// The rows of cells of the outermost table being read (a nested table is read into its cell).
    rows: Vec<Vec<String>>,
    table_depth: usize,
    in_text: bool,
}

impl Body {
    /// An element opens (`empty`: it closes at once).
    fn open(&mut self, e: &BytesStart<'_>, empty: bool, styles: &HashMap<String, usize>) {
        match e.local_name().as_ref() {
            "p" => self.para = Paragraph::default(),
            "pStyle" => {
                self.para.heading = attr(e, "w:val").and_then(|v| styles.get(&v).copied());
            }
            "ilvl" => self.para.list_level = attr(e, "w:val").and_then(|v| v.parse().ok()),
            "numPr" => self.para.list_level = self.para.list_level.or(Some(0)),
            "t" => self.in_text = !empty,
            "tab" => self.para.text.push(' '),
            "br" | "cr" => self.para.text.push('\n'),
            "tbl" => {
                self.table_depth += 1;
                if self.table_depth == 1 {
                    self.rows.clear();
                }
            }
            "tr" if self.table_depth == 1 => self.rows.push(Vec::new()),
            "tc" if self.table_depth == 1 => {
                if let Some(row) = self.rows.last_mut() {
                    row.push(String::new());
                }
            }
            _ => {}
        }
    }

    /// An element closes.
    fn close(&mut self, local_name: &str) {
        match local_name {
            "t" => self.in_text = false,
            "p" => {
                let md = self.para.markdown();
                if self.table_depth > 0 {
                    if let Some(cell) = self.rows.last_mut().and_then(|r| r.last_mut()) {
                        if !cell.is_empty() && !md.is_empty() {
                            cell.push_str("<br>");
                        }
                        cell.push_str(&md.replace('\n', "<br>").replace('|', "\\|"));
                    }
                } else if !md.is_empty() {
                    let list = self.para.list_level.is_some() && self.para.heading.is_none();
                    self.blocks.push((md, list));
                }
            }
            "tbl" => {
                self.table_depth -= 1;
                if self.table_depth == 0 && !self.rows.is_empty() {
                    self.blocks.push((table(&self.rows), false));
                }
            }
            _ => {}
        }
    }

    /// The blocks joined: a blank line between blocks, a line break between list items.
    fn into_markdown(self) -> String {
        let mut out = String::new();
        let mut previous_list = false;
        for (block, list) in self.blocks {
            if !out.is_empty() {
                out.push_str(if list && previous_list { "\n" } else { "\n\n" });
            }
            out.push_str(&block);
            previous_list = list;
        }
        out.push('\n');
        out
    }
}

/// `word/document.xml` as Markdown.
fn markdown(xml: &str, styles: &HashMap<String, usize>) -> Result<String, String> {
    let mut reader = Reader::from_str(xml);
    let mut body = Body::default();
    loop {
        let event = reader.read_event().map_err(|e| {
            format!(
                "word/document.xml at byte {}: {e}",
                reader.buffer_position()
            )
        })?;
        match event {
            Event::Start(e) => body.open(&e, false, styles),
            Event::Empty(e) => body.open(&e, true, styles),
            Event::Text(t) if body.in_text => body.para.text.push_str(&t.xml10_content()),
            Event::GeneralRef(r) if body.in_text => {
                let ch = match &*r {
                    "lt" => Some('<'),
                    "gt" => Some('>'),
                    "amp" => Some('&'),
                    "quot" => Some('"'),
                    "apos" => Some('\''),
                    _ => r.resolve_char_ref().ok().flatten(),
                };
                body.para.text.extend(ch);
            }
            Event::End(e) => body.close(e.local_name().as_ref()),
            Event::Eof => return Ok(body.into_markdown()),
            _ => {}
        }
    }
}

/// Rows of cells as a Markdown table, the first row its header, every row as wide as the
/// widest.
fn table(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let line = |row: &[String]| {
        let cells: Vec<&str> = (0..width)
            .map(|i| row.get(i).map_or("", |c| c.trim()))
            .collect();
        format!("| {} |", cells.join(" | "))
    };
    let mut out = vec![line(&rows[0]), format!("|{}", " --- |".repeat(width))];
    out.extend(rows[1..].iter().map(|r| line(r)));
    out.join("\n")
}

#[cfg(test)]
pub(crate) mod tests {
    use std::io::Write;

    use super::*;

    /// A DOCX holding `body` (the inside of `<w:body>`) and a styles part naming `Heading1`,
    /// `Heading2` and `Titel` (a localised id of the `Title` style).
    pub(crate) fn docx(body: &str) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default();
        zip.start_file("[Content_Types].xml", opts).unwrap();
        zip.write_all(b"<Types/>").unwrap();
        zip.start_file("word/styles.xml", opts).unwrap();
        zip.write_all(br#"<w:styles xmlns:w="w"><w:style w:styleId="Heading1"><w:name w:val="heading 1"/></w:style><w:style w:styleId="Heading2"><w:name w:val="heading 2"/></w:style><w:style w:styleId="Titel"><w:name w:val="Title"/></w:style></w:styles>"#).unwrap();
        zip.start_file("word/document.xml", opts).unwrap();
        write!(
            zip,
            r#"<w:document xmlns:w="w"><w:body>{body}</w:body></w:document>"#
        )
        .unwrap();
        zip.finish().unwrap().into_inner()
    }

    /// A paragraph of `text` in style `style` (none: `""`), at list level `list`.
    pub(crate) fn p(style: &str, list: Option<u8>, text: &str) -> String {
        let style = match style {
            "" => String::new(),
            s => format!(r#"<w:pStyle w:val="{s}"/>"#),
        };
        let list = list.map_or(String::new(), |l| {
            format!(r#"<w:numPr><w:ilvl w:val="{l}"/><w:numId w:val="1"/></w:numPr>"#)
        });
        format!(
            r#"<w:p><w:pPr>{style}{list}</w:pPr><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>"#
        )
    }

    #[test]
    fn heading_styles_lists_and_tables_become_markdown() {
        let cell = |t: &str| format!("<w:tc>{}</w:tc>", p("", None, t));
        let body = [
            p("Titel", None, "Handbook"),
            p("Heading2", None, "Refunds &amp; returns"),
            p("", None, "Refunds take 14 days."),
            p("", Some(0), "Ask"),
            p("", Some(1), "Wait"),
            format!(
                "<w:tbl><w:tr>{}{}</w:tr><w:tr>{}{}</w:tr></w:tbl>",
                cell("Plan"),
                cell("Days"),
                cell("Basic"),
                cell("1|4")
            ),
            p("Heading1", None, "End"),
        ]
        .concat();
        let doc = read(&docx(&body)).unwrap();
        assert_eq!(
            doc.text,
            "# Handbook\n\n## Refunds & returns\n\nRefunds take 14 days.\n\n- Ask\n  - Wait\n\n| Plan | Days |\n| --- | --- |\n| Basic | 1\\|4 |\n\n# End\n"
        );
    }

    #[test]
    fn a_zip_that_is_not_a_docx_and_bytes_that_are_not_a_zip_are_named() {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        zip.start_file("notes.txt", zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(b"hi").unwrap();
        let bytes = zip.finish().unwrap().into_inner();
        assert_eq!(
            read(&bytes).unwrap_err().to_string(),
            "cannot read it as docx: a zip without word/document.xml, so not a Word document; check that the file opens, or map its extension to another reader in [corpus] readers"
        );
        let err = read(b"PK not really").unwrap_err().to_string();
        assert!(
            err.starts_with("cannot read it as docx: not a zip archive"),
            "{err}"
        );
    }
}
