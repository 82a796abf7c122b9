//! Where each chunk an external chunker returned lies in its document (docs/chunkers.md, "How
//! chunks are placed"): given offsets are checked; missing ones are found by exact search from
//! the previous chunk's start, then with whitespace forgiven, then after text the chunker added
//! before the document's text (an added prefix). Time is linear in the document's length for
//! chunks that come in order, as chunkers return them.

use memchr::memmem;

use super::protocol::ChunkOut;
use crate::corpus::Document;

/// How a chunk was placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// By the offsets the chunker gave, checked against the text.
    Given,
    /// By exact search.
    Exact,
    /// By search with every run of whitespace matching any run.
    Whitespace,
    /// After text the chunker added before the document's text (the chunk's added prefix).
    AddedPrefix,
}

/// A chunk placed in its document: its byte range and the text the chunker added before it
/// (empty for none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// First byte in the document.
    pub byte_start: usize,
    /// One past the last byte.
    pub byte_end: usize,
    /// Text the chunker put before the document's text; never part of the range.
    pub added: String,
    /// How it was found.
    pub how: Placement,
}

/// Why a chunk cannot be used (the position is the chunk's, 0-based, in the response).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlaceError {
    /// Its text is empty or only whitespace.
    Empty,
    /// Its given offsets go past the document's end (or end before they start).
    Beyond {
        /// Given start, code points.
        start: usize,
        /// Given end, code points.
        end: usize,
        /// The document's length, code points.
        len: usize,
    },
    /// Its text is not the document's text at its given offsets.
    Mismatch {
        /// Given start, code points.
        start: usize,
        /// Given end, code points.
        end: usize,
    },
    /// It starts before (or where) the previous chunk starts.
    OutOfOrder {
        /// Its start, code points.
        start: usize,
        /// The previous chunk's start, code points.
        previous: usize,
    },
}

impl std::fmt::Display for PlaceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlaceError::Empty => write!(f, "is empty or only whitespace"),
            PlaceError::Beyond { start, end, len } => write!(
                f,
                "has offsets {start}..{end} beyond the document's {len} characters"
            ),
            PlaceError::Mismatch { start, end } => write!(
                f,
                "does not match the document's text at its offsets {start}..{end} (code points, end exclusive)"
            ),
            PlaceError::OutOfOrder { start, previous } => write!(
                f,
                "starts at character {start}, not after the previous chunk's start {previous}: chunks must come in document order"
            ),
        }
    }
}

/// At most this many line breaks are tried, within this many bytes of a chunk's start, when
/// looking for an added prefix (a title or a heading path is short).
const PREFIX_LINES: usize = 16;
const PREFIX_BYTES: usize = 1024;

/// The placement of one response's chunks in `doc`: `Ok(Some(_))` for a placed chunk,
/// `Ok(None)` for one found nowhere (unlocated), in the response's order.
///
/// # Errors
/// The first chunk that cannot be used, with its position: empty, offsets beyond the document or
/// not matching its text, or out of document order.
pub fn place(
    doc: &Document,
    chunks: &[ChunkOut],
) -> Result<Vec<Option<Placed>>, (usize, PlaceError)> {
    let text = doc.text.as_str();
    let mut squeezed: Option<Squeezed> = None;
    let mut out = Vec::with_capacity(chunks.len());
    // the previous placed chunk's start (bytes); a search starts one character after it
    let mut previous: Option<usize> = None;
    // where the previous placed chunk ends: a chunker without overlap starts the next one there
    let mut end = 0;
    for (i, chunk) in chunks.iter().enumerate() {
        if chunk.text.trim().is_empty() {
            return Err((i, PlaceError::Empty));
        }
        let from = previous.map_or(0, |p| next_char(text, p));
        let placed = match chunk.offsets() {
            Some((start, end)) => Some(given(doc, &chunk.text, start, end).map_err(|e| (i, e))?),
            None => search(text, &chunk.text, Cursor { from, end }, &mut squeezed),
        };
        // found nowhere after the previous chunk's start but found before it: out of order
        let whole = Window {
            from: 0,
            limit: text.len(),
        };
        if placed.is_none()
            && let Some(prev) = previous
            && let Some((s, _)) = find_exact(text, &chunk.text, whole)
        {
            let e = PlaceError::OutOfOrder {
                start: doc.byte_to_char(s),
                previous: doc.byte_to_char(prev),
            };
            return Err((i, e));
        }
        if let Some(p) = &placed {
            if let Some(prev) = previous
                && p.byte_start <= prev
            {
                let e = PlaceError::OutOfOrder {
                    start: doc.byte_to_char(p.byte_start),
                    previous: doc.byte_to_char(prev),
                };
                return Err((i, e));
            }
            previous = Some(p.byte_start);
            end = p.byte_end;
        }
        out.push(placed);
    }
    Ok(out)
}

/// The byte after the character starting at `at` (the text's length at its end).
fn next_char(text: &str, at: usize) -> usize {
    text[at..]
        .chars()
        .next()
        .map_or(text.len(), |c| at + c.len_utf8())
}

/// A chunk placed by its given code-point offsets, checked.
fn given(doc: &Document, chunk: &str, start: usize, end: usize) -> Result<Placed, PlaceError> {
    let len = doc.char_len();
    if start > end || end > len {
        return Err(PlaceError::Beyond { start, end, len });
    }
    let (bs, be) = (doc.char_to_byte(start), doc.char_to_byte(end));
    if &doc.text[bs..be] != chunk {
        return Err(PlaceError::Mismatch { start, end });
    }
    Ok(Placed {
        byte_start: bs,
        byte_end: be,
        added: String::new(),
        how: Placement::Given,
    })
}

/// Where a search starts: one character after the previous chunk's start (`from`), and where the
/// previous chunk ends (`end`), both bytes.
#[derive(Clone, Copy)]
struct Cursor {
    from: usize,
    end: usize,
}

/// A chunk without offsets, searched for from byte `from`: exactly (first where the previous
/// chunk ends, after any whitespace, when that is at or after `from`: a chunker without overlap
/// starts there), with whitespace forgiven, then after each of its first line breaks (the text
/// before one is an added prefix). The three are tried near the previous chunk first (within
/// a few chunk lengths of where it ends), then through the rest of the document, so that chunks
/// in order cost time in proportion to their own length, not the document's.
fn search(
    text: &str,
    chunk: &str,
    Cursor { from, end }: Cursor,
    squeezed: &mut Option<Squeezed>,
) -> Option<Placed> {
    let next = end + (text[end..].len() - text[end..].trim_start().len());
    if next >= from && text[next..].starts_with(chunk) {
        return Some(Placed {
            byte_start: next,
            byte_end: next + chunk.len(),
            added: String::new(),
            how: Placement::Exact,
        });
    }
    let near = from.max(end).saturating_add(2 * chunk.len() + 4096);
    let sq = squeezed.get_or_insert_with(|| Squeezed::new(text));
    [near.min(text.len()), text.len()]
        .into_iter()
        .find_map(|limit| search_within(text, chunk, Window { from, limit }, sq))
}

/// Where a match may lie: at or after byte `from`, ending at or before byte `limit`.
#[derive(Clone, Copy)]
struct Window {
    from: usize,
    limit: usize,
}

/// [`search`]'s three ways, each within `window`.
fn search_within(text: &str, chunk: &str, window: Window, sq: &Squeezed) -> Option<Placed> {
    let placed = |(s, e): (usize, usize), added: &str, how| Placed {
        byte_start: s,
        byte_end: e,
        added: added.to_string(),
        how,
    };
    if let Some(r) = find_exact(text, chunk, window) {
        return Some(placed(r, "", Placement::Exact));
    }
    if let Some(r) = sq.find(chunk, window) {
        return Some(placed(r, "", Placement::Whitespace));
    }
    let breaks = chunk
        .match_indices('\n')
        .map(|(i, _)| i)
        .take_while(|&i| i < PREFIX_BYTES)
        .take(PREFIX_LINES);
    for i in breaks {
        let (added, rest) = (chunk[..i].trim(), chunk[i + 1..].trim());
        if added.is_empty() || rest.is_empty() {
            continue;
        }
        if let Some(r) = find_exact(text, rest, window).or_else(|| sq.find(rest, window)) {
            return Some(placed(r, added, Placement::AddedPrefix));
        }
    }
    None
}

/// The first exact occurrence of `needle` within `window` (byte offsets of `text`).
fn find_exact(text: &str, needle: &str, window: Window) -> Option<(usize, usize)> {
    let hay = text.as_bytes().get(window.from..window.limit)?;
    memmem::find(hay, needle.as_bytes()).map(|i| (window.from + i, window.from + i + needle.len()))
}

/// A text with each run of whitespace squeezed to one space, and where each of its bytes came
/// from in the original.
struct Squeezed {
    text: String,
    /// Original byte of each squeezed byte.
    origin: Vec<usize>,
}

impl Squeezed {
    fn new(original: &str) -> Squeezed {
        let mut text = String::with_capacity(original.len());
        let mut origin = Vec::with_capacity(original.len());
        let mut in_space = false;
        for (b, c) in original.char_indices() {
            if c.is_whitespace() {
                if !in_space {
                    text.push(' ');
                    origin.push(b);
                }
                in_space = true;
                continue;
            }
            in_space = false;
            text.push(c);
            origin.extend(b..b + c.len_utf8());
        }
        Squeezed { text, origin }
    }

    /// The original byte range of the first occurrence of `needle` (trimmed, whitespace
    /// squeezed) within `window` of the original.
    fn find(&self, needle: &str, window: Window) -> Option<(usize, usize)> {
        let needle = Squeezed::new(needle.trim()).text;
        if needle.is_empty() {
            return None;
        }
        let squeezed = Window {
            from: self.origin.partition_point(|&o| o < window.from),
            limit: self.origin.partition_point(|&o| o < window.limit),
        };
        let (s, e) = find_exact(&self.text, &needle, squeezed)?;
        // the needle is trimmed: its last byte is the last byte of a character that is not
        // whitespace, kept one for one
        let end = self.origin[e - 1] + 1;
        Some((self.origin[s], end))
    }
}

#[cfg(test)]
mod tests;
