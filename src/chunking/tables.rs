//! Markdown table headers carried into later pieces of a split table. When a table is longer
//! than `chunk_size`, the `markdown` strategy splits it between rows; a later piece alone reads
//! `| Bergen | 9 | 5.5 |` with no column names. Such a piece carries the table's header and
//! delimiter rows in its prefix (see [`super::enrich`]): indexed, shown to the generator and
//! counted in its tokens, never in its range. The rows follow the carried header after one line
//! break ([`super::chunk::separator_after`]), so the two read as one table.
//!
//! A piece is sized with what it carries ([`carry`]): its own tokens plus the header's (line
//! break included) stay within `chunk_size`, by splitting the piece again at the room the
//! header leaves. When the header and the piece's widest row together exceed the size (the
//! header alone may), the piece carries nothing and keeps the full size, as a piece of any
//! other text: the size stays a bound, at the cost of the column names.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use text_splitter::ChunkSizer;

use super::bound;
use super::chunk::{ChunkParams, Sized};
use super::enrich::prefix_tokens;
use crate::tokenize::TokenCounter;

/// One Markdown table: where its body rows lie and its header and delimiter rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableHead {
    /// First byte of the first body row.
    pub body_start: usize,
    /// One past the table's last byte.
    pub end: usize,
    /// The header row and the delimiter row, as written (without the final line break).
    pub rows: String,
}

/// Every table of the Markdown `text` that has at least one body row, in order.
pub fn table_heads(text: &str) -> Vec<TableHead> {
    let mut out = Vec::new();
    let mut open: Option<(usize, usize)> = None; // (table start, table end)
    let mut in_head = false;
    for (event, range) in Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::Table(_)) => open = Some((range.start, range.end)),
            Event::Start(Tag::TableHead) => in_head = true,
            Event::End(TagEnd::TableHead) => in_head = false,
            Event::Start(Tag::TableRow) if !in_head => {
                if let Some((start, end)) = open.take() {
                    out.push(TableHead {
                        body_start: range.start,
                        end,
                        rows: text[start..range.start].trim_end().to_string(),
                    });
                }
            }
            Event::End(TagEnd::Table) => open = None,
            _ => {}
        }
    }
    out
}

/// The table whose body holds byte `start` (a chunk starting there starts past the header),
/// else `None`.
fn table_at(heads: &[TableHead], start: usize) -> Option<&TableHead> {
    let i = heads.partition_point(|h| h.body_start <= start);
    let head = heads.get(i.checked_sub(1)?)?;
    (start < head.end).then_some(head)
}

/// The header rows to carry for a chunk starting at byte `start`: those of the table whose body
/// holds `start`, else `None`.
pub fn header_at(heads: &[TableHead], start: usize) -> Option<&str> {
    table_at(heads, start).map(|h| h.rows.as_str())
}

/// The `markdown` strategy's pieces `sized` of `text` (byte ranges with their own token counts,
/// as [`bound::fit`] gives them), each with the header rows it carries (empty for none), sized
/// with them. `heads` are the text's tables ([`table_heads`]); `counter` sizes slices of `text`
/// as [`bound::fit`] does and `tokens` counts the carried rows with their separator
/// ([`prefix_tokens`]).
///
/// A piece starting inside a table's body carries the header when its own tokens plus the
/// header's fit `params.chunk_size`. When they do not and the header plus the piece's widest
/// row (its lines inside the table) fit, the piece is split again ([`bound::resplit`]) at the
/// room the header leaves (overlap capped below it), and every new piece starting in the body
/// carries the header. Otherwise the piece stays as it is and carries nothing. So every piece
/// is within the size with what it carries, but for a single grapheme over it.
pub fn carry<S: ChunkSizer + Copy>(
    text: &str,
    sized: Sized,
    heads: &[TableHead],
    params: &ChunkParams,
    counter: S,
    tokens: TokenCounter,
) -> (Sized, Vec<String>) {
    let size = params.chunk_size;
    let mut out: Sized = Vec::with_capacity(sized.len());
    // starts of pieces left without the header they would carry
    let mut bare: Vec<usize> = Vec::new();
    for (s, e, n) in sized {
        let Some(head) = table_at(heads, s) else {
            bound::push(&mut out, (s, e, n));
            continue;
        };
        let cost = prefix_tokens(&head.rows, tokens);
        if n + cost <= size {
            bound::push(&mut out, (s, e, n));
            continue;
        }
        let widest = text[s..e.min(head.end)]
            .lines()
            .map(|line| counter.size(line.trim()))
            .max()
            .unwrap_or(0);
        if cost + widest > size {
            bare.push(s);
            bound::push(&mut out, (s, e, n));
            continue;
        }
        let room = size - cost;
        let overlap = params.chunk_overlap.min(room.saturating_sub(1));
        for piece in bound::resplit(text, s, e, room, overlap, counter) {
            bound::push(&mut out, piece);
        }
    }
    let carried = out
        .iter()
        .map(|&(s, _, _)| match table_at(heads, s) {
            Some(head) if !bare.contains(&s) => head.rows.clone(),
            _ => String::new(),
        })
        .collect();
    (out, carried)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "Rainfall by city.\n\n| City | Days | mm |\n|------|------|----|\n| Aalborg | 12 | 4.1 |\n| Bergen | 9 | 5.5 |\n| Cork | 15 | 3.0 |\n\nAfter.\n";

    #[test]
    fn header_and_delimiter_rows_of_each_table() {
        let heads = table_heads(TABLE);
        assert_eq!(
            heads,
            vec![TableHead {
                body_start: TABLE.find("| Aalborg").unwrap(),
                end: TABLE.find("\nAfter").unwrap(),
                rows: "| City | Days | mm |\n|------|------|----|".to_string(),
            }]
        );
        let bergen = TABLE.find("| Bergen").unwrap();
        assert_eq!(
            header_at(&heads, bergen),
            Some("| City | Days | mm |\n|------|------|----|")
        );
        // the header itself, text before the table and text after it carry nothing
        assert_eq!(header_at(&heads, TABLE.find("| City").unwrap()), None);
        assert_eq!(header_at(&heads, 0), None);
        assert_eq!(header_at(&heads, TABLE.find("After").unwrap()), None);
    }
}
