//! HTML to Markdown (htmd): headings, lists, tables and code blocks become Markdown that the
//! `markdown` strategy reads; `<script>`, `<style>`, `<nav>`, `<header>`, `<footer>`,
//! `<noscript>`, `<template>`, `<svg>` and `<head>` are dropped. The bytes are decoded by the
//! byte-order mark, else the charset declared in the first 1,024 bytes (`<meta charset>` or
//! `<meta http-equiv="Content-Type" content="...; charset=...">`), else as UTF-8 (encoding_rs,
//! the WHATWG encodings; a legacy label such as `iso-8859-1` is read as its WHATWG encoding,
//! windows-1252).

use encoding_rs::Encoding;
use htmd::HtmlToMarkdown;
use htmd::options::{BulletListMarker, CodeBlockStyle, HeadingStyle, Options};

use super::extracted::{Extracted, ReadError};

/// The tags whose content is not the document's text.
const DROPPED: &[&str] = &[
    "script", "style", "nav", "header", "footer", "noscript", "template", "svg", "head",
];

/// Reads an HTML file's bytes.
///
/// # Errors
/// [`ReadError::Corrupt`] when the converter fails. Bytes invalid in the declared charset are
/// replaced (U+FFFD) and counted in a warning, never an error.
pub fn read(bytes: &[u8]) -> Result<Extracted, ReadError> {
    let (encoding, declared) = match Encoding::for_bom(bytes) {
        Some((enc, _)) => (enc, true),
        None => match declared_charset(bytes) {
            Some(enc) => (enc, true),
            None => (encoding_rs::UTF_8, false),
        },
    };
    let (html, _, had_errors) = encoding.decode(bytes);
    let mut warnings = Vec::new();
    if had_errors {
        let bad = html.matches('\u{FFFD}').count();
        let how = match declared {
            true => format!("its declared charset {}", encoding.name()),
            false => "UTF-8 (no charset declared)".to_string(),
        };
        warnings.push(format!(
            "{bad} byte sequence(s) are not valid in {how} and were replaced by U+FFFD: declare the file's real charset in <meta charset=...>"
        ));
    }
    let converter = HtmlToMarkdown::builder()
        .skip_tags(DROPPED.to_vec())
        .options(Options {
            heading_style: HeadingStyle::Atx,
            code_block_style: CodeBlockStyle::Fenced,
            bullet_list_marker: BulletListMarker::Dash,
            ul_bullet_spacing: 1,
            ..Default::default()
        })
        .build();
    let markdown = converter.convert(&html).map_err(|e| ReadError::Corrupt {
        reader: "html",
        detail: e.to_string(),
    })?;
    let mut text = markdown.trim().to_string();
    text.push('\n');
    Ok(Extracted {
        text,
        pages: Vec::new(),
        warnings,
    })
}

/// The encoding declared by a `charset=` in the first 1,024 bytes (the HTML standard's prescan
/// window), read as ASCII.
fn declared_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(1024)];
    let lower = String::from_utf8_lossy(head).to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(at) = rest.find("charset") {
        rest = &rest[at + "charset".len()..];
        let value = rest.trim_start().strip_prefix('=')?.trim_start();
        let value = value.trim_start_matches(['"', '\'']);
        let end = value
            .find(|c: char| c == '"' || c == '\'' || c == ';' || c == '>' || c.is_whitespace())
            .unwrap_or(value.len());
        if let Some(enc) = Encoding::for_label(&value.as_bytes()[..end]) {
            // a page declaring UTF-16 in ASCII bytes is not UTF-16 (the standard reads it as UTF-8)
            return Some(
                match enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE {
                    true => encoding_rs::UTF_8,
                    false => enc,
                },
            );
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_lists_tables_and_code_reach_markdown_and_scripts_styles_nav_do_not() {
        let html = r#"<!doctype html><html><head><title>T</title><style>p{color:red}</style></head>
<body><nav><a href="/">Home</a> | <a href="/x">Other</a></nav>
<h1>Refunds</h1><p>Refunds take <b>14 days</b>.</p>
<script>alert("x")</script>
<h2>Steps</h2><ul><li>Ask</li><li>Wait</li></ul>
<table><thead><tr><th>Plan</th><th>Days</th></tr></thead><tbody><tr><td>Basic</td><td>14</td></tr></tbody></table>
<pre><code>refund --all</code></pre>
<footer>© us</footer></body></html>"#;
        let doc = read(html.as_bytes()).unwrap();
        let t = &doc.text;
        assert!(
            t.starts_with("# Refunds\n\nRefunds take **14 days**."),
            "{t}"
        );
        assert!(t.contains("## Steps"), "{t}");
        assert!(t.contains("## Steps\n\n- Ask\n- Wait\n"), "{t}");
        assert!(
            t.contains("| Plan  | Days |\n| ----- | ---- |\n| Basic | 14   |"),
            "{t}"
        );
        assert!(t.contains("```\nrefund --all\n```"), "{t}");
        for gone in ["alert", "color:red", "Home", "© us", "<title>"] {
            assert!(!t.contains(gone), "{gone} in {t}");
        }
        assert!(doc.warnings.is_empty());
        assert!(doc.pages.is_empty());
    }

    #[test]
    fn a_declared_legacy_charset_is_honoured() {
        let mut html = b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\"></head><body><p>Caf".to_vec();
        html.extend([0xE9, b' ', 0xBD, b' ', 0x80]);
        html.extend(b"</p></body></html>");
        let doc = read(&html).unwrap();
        assert_eq!(doc.text, "Caf\u{e9} \u{bd} \u{20ac}\n");
        assert!(doc.warnings.is_empty());
        // the same bytes without a declaration: UTF-8, the bad bytes replaced and counted
        let mut bare = b"<p>Caf".to_vec();
        bare.extend([0xE9, b' ', 0xBD, b' ', 0x80]);
        let bare = read(&bare).unwrap();
        assert_eq!(
            bare.warnings,
            vec![
                "3 byte sequence(s) are not valid in UTF-8 (no charset declared) and were replaced by U+FFFD: declare the file's real charset in <meta charset=...>"
            ]
        );
    }
}
