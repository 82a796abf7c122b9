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
    let declared = match Encoding::for_bom(bytes) {
        Some((enc, _)) => Declared::Known(enc),
        None => declared_charset(bytes),
    };
    let encoding = match declared {
        Declared::Known(enc) => enc,
        Declared::Unknown(_) | Declared::None => encoding_rs::UTF_8,
    };
    let (html, _, had_errors) = encoding.decode(bytes);
    let mut warnings = Vec::new();
    let bad = html.matches('\u{FFFD}').count();
    let replaced =
        || format!("{bad} byte sequence(s) were not valid in it and were replaced by U+FFFD");
    match (&declared, had_errors) {
        (Declared::Unknown(label), _) => warnings.push(format!(
            "declares charset {label:?}, which is not an encoding label chunksweep knows (the WHATWG Encoding Standard's): read as UTF-8{}; declare a known charset (for example utf-8, windows-1252, iso-8859-2, shift_jis) in <meta charset=...>",
            match had_errors {
                true => format!(", and {}", replaced()),
                false => String::new(),
            }
        )),
        (Declared::Known(enc), true) => warnings.push(format!(
            "read in its declared charset {}, and {}: declare the file's real charset in <meta charset=...>",
            enc.name(),
            replaced()
        )),
        (Declared::None, true) => warnings.push(format!(
            "read as UTF-8 (no charset declared), and {}: declare the file's real charset in <meta charset=...>",
            replaced()
        )),
        (_, false) => {}
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

/// The charset a page declares.
#[derive(Debug, PartialEq)]
enum Declared {
    /// A label encoding_rs knows (a WHATWG label), or a byte-order mark.
    Known(&'static Encoding),
    /// A `charset=` whose value is no WHATWG label, as written (lower-cased).
    Unknown(String),
    /// No declaration.
    None,
}

/// The charset declared by the first `charset=` in the first 1,024 bytes (the HTML standard's
/// prescan window), read as ASCII.
fn declared_charset(bytes: &[u8]) -> Declared {
    let head = &bytes[..bytes.len().min(1024)];
    let lower = String::from_utf8_lossy(head).to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(at) = rest.find("charset") {
        rest = &rest[at + "charset".len()..];
        let Some(value) = rest.trim_start().strip_prefix('=') else {
            continue;
        };
        let value = value.trim_start().trim_start_matches(['"', '\'']);
        let end = value
            .find(|c: char| c == '"' || c == '\'' || c == ';' || c == '>' || c.is_whitespace())
            .unwrap_or(value.len());
        let label = &value[..end];
        if label.is_empty() {
            continue;
        }
        return match Encoding::for_label(label.as_bytes()) {
            // a page declaring UTF-16 in ASCII bytes is not UTF-16 (the standard reads it as UTF-8)
            Some(enc) if enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE => {
                Declared::Known(encoding_rs::UTF_8)
            }
            Some(enc) => Declared::Known(enc),
            None => Declared::Unknown(label.to_string()),
        };
    }
    Declared::None
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
                "read as UTF-8 (no charset declared), and 3 byte sequence(s) were not valid in it and were replaced by U+FFFD: declare the file's real charset in <meta charset=...>"
            ]
        );
    }

    #[test]
    fn an_unknown_declared_charset_is_named() {
        let mut html = b"<html><head><meta charset=\"x-klingon\"></head><body><p>Caf".to_vec();
        html.extend([0xE9, b'.']);
        let doc = read(&html).unwrap();
        assert_eq!(doc.text, "Caf\u{FFFD}.\n");
        assert_eq!(
            doc.warnings,
            vec![
                "declares charset \"x-klingon\", which is not an encoding label chunksweep knows (the WHATWG Encoding Standard's): read as UTF-8, and 1 byte sequence(s) were not valid in it and were replaced by U+FFFD; declare a known charset (for example utf-8, windows-1252, iso-8859-2, shift_jis) in <meta charset=...>"
            ]
        );
        // a known label, bytes valid in it: no warning
        assert_eq!(
            declared_charset(b"<meta charset='Shift_JIS'>"),
            Declared::Known(encoding_rs::SHIFT_JIS)
        );
        assert_eq!(
            declared_charset(b"<p>charset is a word</p>"),
            Declared::None
        );
    }
}
