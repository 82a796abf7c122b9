//! Markdown table headers carried into later pieces of a split table. When a table is longer
//! than `chunk_size`, the `markdown` strategy splits it between rows; a later piece alone reads
//! `| Bergen | 9 | 5.5 |` with no column names. Such a piece carries the table's header and
//! delimiter rows in its prefix (see [`super::enrich`]): indexed, shown to the generator and
//! counted in its tokens, never in its range.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

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

/// The header rows to carry for a chunk starting at byte `start`: those of the table whose body
/// holds `start` (the chunk then starts past the header), else `None`.
pub fn header_at(heads: &[TableHead], start: usize) -> Option<&str> {
    let i = heads.partition_point(|h| h.body_start <= start);
    let head = heads.get(i.checked_sub(1)?)?;
    (start < head.end).then_some(head.rows.as_str())
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
