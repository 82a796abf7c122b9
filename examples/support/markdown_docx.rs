//! A Markdown text as a minimal Office Open XML (DOCX) package, from pulldown-cmark's events:
//! headings in the `Heading N` styles (named `heading N` in the styles part), list items with
//! numbering levels, tables (the first row their header), code blocks as one paragraph per line.
//! Shared by `examples/make_documents.rs` (datasets/handbook-docx) and `benches/readers.rs`.

use std::fmt::Write as _;
use std::io::Write as _;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// XML-escaped text.
pub fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The Markdown as a DOCX package.
pub fn docx(md: &str) -> Vec<u8> {
    let mut body = String::new();
    let mut para = String::new();
    let mut style: Option<String> = None;
    let mut list_depth: usize = 0;
    let mut in_item = false;
    let mut row: Vec<String> = Vec::new();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut in_table = false;
    let flush =
        |body: &mut String, para: &mut String, style: &Option<String>, list: Option<usize>| {
            if para.trim().is_empty() {
                para.clear();
                return;
            }
            let mut ppr = String::new();
            if let Some(s) = style {
                let _ = write!(ppr, r#"<w:pStyle w:val="{s}"/>"#);
            }
            if let Some(level) = list {
                let _ = write!(
                    ppr,
                    r#"<w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="1"/></w:numPr>"#
                );
            }
            let _ = write!(
                body,
                r#"<w:p><w:pPr>{ppr}</w:pPr><w:r><w:t xml:space="preserve">{}</w:t></w:r></w:p>"#,
                esc(para.trim())
            );
            para.clear();
        };
    for event in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                let n = match level {
                    HeadingLevel::H1 => 1,
                    HeadingLevel::H2 => 2,
                    HeadingLevel::H3 => 3,
                    HeadingLevel::H4 => 4,
                    HeadingLevel::H5 => 5,
                    HeadingLevel::H6 => 6,
                };
                style = Some(format!("Heading{n}"));
            }
            Event::End(TagEnd::Heading(_)) => {
                flush(&mut body, &mut para, &style, None);
                style = None;
            }
            Event::Start(Tag::List(_)) => {
                if in_item {
                    flush(&mut body, &mut para, &None, Some(list_depth - 1));
                }
                list_depth += 1;
            }
            Event::End(TagEnd::List(_)) => list_depth -= 1,
            Event::Start(Tag::Item) => in_item = true,
            Event::End(TagEnd::Item) => {
                flush(&mut body, &mut para, &None, Some(list_depth - 1));
                in_item = false;
            }
            Event::End(TagEnd::Paragraph) if !in_item => flush(&mut body, &mut para, &None, None),
            Event::Start(Tag::Table(_)) => {
                in_table = true;
                rows.clear();
            }
            Event::End(TagEnd::TableHead) | Event::End(TagEnd::TableRow) => {
                rows.push(std::mem::take(&mut row));
            }
            Event::End(TagEnd::TableCell) => row.push(std::mem::take(&mut para)),
            Event::End(TagEnd::Table) => {
                in_table = false;
                body.push_str("<w:tbl>");
                for r in &rows {
                    body.push_str("<w:tr>");
                    for c in r {
                        let _ = write!(
                            body,
                            r#"<w:tc><w:p><w:r><w:t xml:space="preserve">{}</w:t></w:r></w:p></w:tc>"#,
                            esc(c.trim())
                        );
                    }
                    body.push_str("</w:tr>");
                }
                body.push_str("</w:tbl>");
            }
            Event::End(TagEnd::CodeBlock) => {
                for line in std::mem::take(&mut para).lines() {
                    para.push_str(line);
                    flush(&mut body, &mut para, &None, None);
                }
            }
            Event::Text(t) | Event::Code(t) => para.push_str(&t),
            Event::SoftBreak => para.push(' '),
            Event::HardBreak => para.push(' '),
            _ => {}
        }
    }
    let _ = in_table;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    let parts: [(&str, String); 5] = [
        ("[Content_Types].xml", r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>"#.into()),
        ("_rels/.rels", r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#.into()),
        ("word/_rels/document.xml.rels", r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>"#.into()),
        ("word/styles.xml", styles()),
        ("word/document.xml", format!(r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>"#)),
    ];
    for (name, text) in parts {
        zip.start_file(name, opts).unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// The styles part: `Heading1` … `Heading6` named `heading N`.
fn styles() -> String {
    let mut s = String::from(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">"#,
    );
    for n in 1..=6 {
        let _ = write!(
            s,
            r#"<w:style w:type="paragraph" w:styleId="Heading{n}"><w:name w:val="heading {n}"/></w:style>"#
        );
    }
    s.push_str("</w:styles>");
    s
}
