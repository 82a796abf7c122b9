//! PDF text by page (pdf_oxide, feature `pdf`): each page's text in reading order, pages
//! joined by a blank line, the byte offset of every page's start kept. A PDF that opens with
//! the empty password (an owner password only) is read; one that needs a password is refused.
//! Pages that hold no text (a scan, an image) are named in a warning: OCR it first; unless the
//! file is cut short or damaged there, which is an error ([`truncated`]).

use super::extracted::{Extracted, ReadError};

/// What goes between two pages' texts.
pub const PAGE_SEPARATOR: &str = "\n\n";

/// Reads a PDF file's bytes.
///
/// # Errors
/// [`ReadError::Encrypted`] for a PDF that needs a password; [`ReadError::Corrupt`] for bytes
/// pdf_oxide cannot parse (naming the page when one page fails); [`ReadError::Truncated`] for
/// pages without text in a file cut short or damaged ([`truncated`]); [`ReadError::NotBuilt`]
/// without the `pdf` feature.
#[cfg(feature = "pdf")]
pub fn read(bytes: &[u8]) -> Result<Extracted, ReadError> {
    use pdf_oxide::PdfDocument;
    let corrupt = |detail: String| ReadError::Corrupt {
        reader: "pdf",
        detail,
    };
    let doc = PdfDocument::from_bytes(bytes.to_vec()).map_err(|e| corrupt(e.to_string()))?;
    if doc.is_encrypted() && !matches!(doc.authenticate(b""), Ok(true)) {
        return Err(ReadError::Encrypted);
    }
    let count = doc.page_count().map_err(|e| corrupt(e.to_string()))?;
    let texts = (0..count)
        .map(|i| {
            doc.extract_text(i)
                .map_err(|e| corrupt(format!("page {}: {e}", i + 1)))
        })
        .collect::<Result<Vec<String>, ReadError>>()?;
    let textless: Vec<usize> = (0..count).filter(|&i| texts[i].trim().is_empty()).collect();
    let unreadable: Vec<usize> = textless
        .iter()
        .copied()
        .filter(|&i| doc.get_page_content_data(i).is_err())
        .collect();
    truncated(bytes, &textless, &unreadable)?;
    Ok(join_pages(&texts))
}

/// Whether pages without text (0-based `textless`) come from a damaged file rather than a
/// scan: the file has no `%%EOF` marker in its last 1,024 bytes (cut short: the marker ends
/// every complete PDF), or some of those pages' content streams cannot be read
/// (`unreadable`). Pages with text are never refused.
///
/// # Errors
/// [`ReadError::Truncated`] naming what is wrong and the pages.
pub fn truncated(bytes: &[u8], textless: &[usize], unreadable: &[usize]) -> Result<(), ReadError> {
    if textless.is_empty() {
        return Ok(());
    }
    let tail = &bytes[bytes.len().saturating_sub(1024)..];
    let ended = tail.windows(5).any(|w| w == b"%%EOF");
    let list = |pages: &[usize]| {
        pages
            .iter()
            .map(|i| (i + 1).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let why = match (ended, unreadable.is_empty()) {
        (true, true) => return Ok(()),
        (false, _) => "no %%EOF marker at its end".to_string(),
        (true, false) => format!("the content of page(s) {} cannot be read", list(unreadable)),
    };
    Err(ReadError::Truncated {
        why,
        pages: list(textless),
    })
}

/// Without the `pdf` feature: no PDF reader.
///
/// # Errors
/// Always [`ReadError::NotBuilt`].
#[cfg(not(feature = "pdf"))]
pub fn read(_bytes: &[u8]) -> Result<Extracted, ReadError> {
    Err(ReadError::NotBuilt { feature: "pdf" })
}

/// The pages' texts (each trimmed of trailing whitespace) joined by [`PAGE_SEPARATOR`], with
/// each page's start, and a warning naming the pages without text.
pub fn join_pages(texts: &[String]) -> Extracted {
    let mut text = String::new();
    let mut pages = Vec::with_capacity(texts.len());
    let mut empty = Vec::new();
    for (i, page) in texts.iter().enumerate() {
        if i > 0 {
            text.push_str(PAGE_SEPARATOR);
        }
        pages.push(text.len());
        let page = page.trim_end();
        if page.trim().is_empty() {
            empty.push(i + 1);
        }
        text.push_str(page);
    }
    let mut warnings = Vec::new();
    if !empty.is_empty() {
        let list: Vec<String> = empty.iter().map(usize::to_string).collect();
        warnings.push(format!(
            "{} of {} page(s) hold no text (page {}): scanned pages or images; OCR it first (for example with ocrmypdf) and put the OCR'd PDF in the corpus",
            empty.len(),
            texts.len(),
            list.join(", ")
        ));
    }
    Extracted {
        text,
        pages,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_keep_their_starts_and_textless_pages_are_named() {
        let pages = ["One.\n".to_string(), " \n".into(), "Three.".into()];
        let doc = join_pages(&pages);
        assert_eq!(doc.text, "One.\n\n\n\nThree.");
        assert_eq!(doc.pages, vec![0, 6, 8]);
        assert_eq!(
            doc.warnings,
            vec![
                "1 of 3 page(s) hold no text (page 2): scanned pages or images; OCR it first (for example with ocrmypdf) and put the OCR'd PDF in the corpus"
            ]
        );
    }

    #[test]
    fn textless_pages_of_a_file_cut_short_are_not_a_scan() {
        let whole = b"%PDF-1.4\n...\n%%EOF\n";
        assert_eq!(truncated(whole, &[1], &[]), Ok(()));
        assert_eq!(truncated(b"%PDF-1.4\n...", &[], &[]), Ok(()));
        assert_eq!(
            truncated(b"%PDF-1.4\n... 5 0 obj\n<< /Len", &[1, 2], &[]),
            Err(ReadError::Truncated {
                why: "no %%EOF marker at its end".into(),
                pages: "2, 3".into(),
            })
        );
        assert_eq!(
            truncated(whole, &[0, 2], &[2]).unwrap_err().to_string(),
            "the PDF is cut short or damaged (the content of page(s) 3 cannot be read), and page(s) 1, 3 show no text because of it, not because they are scanned: get a complete copy of the file (download or copy it again)"
        );
    }
}
