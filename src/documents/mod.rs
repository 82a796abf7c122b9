//! Documents as they come: each file of a corpus read by a reader chosen from its extension
//! ([`kind`]), to the text chunksweep knows ([`extracted`]): PDF ([`pdf`], text by page), HTML
//! ([`html`], to Markdown), DOCX ([`docx`], to Markdown), and the text formats as they are.
//! Extracted texts are cached by the file's SHA-256 and the reader's version ([`cache`]);
//! [`read`] reads one file through the cache.
//!
//! | file                                   | reader     | the text                                     |
//! |----------------------------------------|------------|----------------------------------------------|
//! | `.md`, `.markdown`, `.md.txt`          | `markdown` | as is (UTF-8)                                |
//! | `.rst`, `.rst.txt`                     | `rst`      | as is (UTF-8); reST section titles           |
//! | `.txt`                                 | `text`     | as is (UTF-8)                                |
//! | `.html`, `.htm`, `.xhtml`              | `html`     | Markdown (htmd); scripts, styles, navigation dropped; the declared charset honoured |
//! | `.docx`                                | `docx`     | Markdown: heading styles as `#` headings, lists, tables |
//! | `.pdf` (feature `pdf`)                 | `pdf`      | text in reading order (pdf_oxide), pages kept |

pub mod cache;
pub mod docx;
pub mod extracted;
pub mod html;
pub mod kind;
pub mod pdf;
pub mod read;
pub mod written;
