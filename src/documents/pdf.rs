//! PDF text by page (pdf_oxide, feature `pdf`): each page's text in reading order, pages
//! joined by a blank line, the byte offset of every page's start kept. A PDF that opens with
//! the empty password (an owner password only) is read; one that needs a password is refused.
//! Pages that hold no text (a scan, an image) are named in a warning: OCR it first.

use super::extracted::{Extracted, ReadError};

/// What goes between two pages' texts.
pub const PAGE_SEPARATOR: &str = "\n\n";

/// Reads a PDF file's bytes.
///
/// # Errors
/// [`ReadError::Encrypted`] for a PDF that needs a password; [`ReadError::Corrupt`] for bytes
/// pdf_oxide cannot parse (naming the page when one page fails); [`ReadError::NotBuilt`]
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
    Ok(join_pages(&texts))
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
}
