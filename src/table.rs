//! CSV tables: rows of a serializable type written with a header row. Every CSV of a run folder
//! is written through [`write_rows`].

use std::path::Path;

use serde::Serialize;

/// Writes `rows` to `path` (created or replaced) as CSV with a header row.
///
/// # Errors
/// The csv crate's error (I/O or serialization); the caller names the file.
pub fn write_rows<T: Serialize>(path: &Path, rows: &[T]) -> Result<(), csv::Error> {
    let mut writer = csv::Writer::from_path(path)?;
    for row in rows {
        writer.serialize(row)?;
    }
    writer.flush()?;
    Ok(())
}

/// One cell of a table whose columns are known only at run time (one per judge criterion, say):
/// written exactly as the same value in a serialized struct field would be.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell<'a> {
    /// Text.
    Text(&'a str),
    /// A count.
    Count(u64),
    /// A number.
    Number(f64),
    /// A number or an empty cell.
    Maybe(Option<f64>),
    /// `true` or `false`.
    Flag(bool),
}

/// Writes `header` and then every row of cells (each as long as `header`) to `writer`.
///
/// # Errors
/// The csv crate's error (I/O or serialization); the caller names the file.
pub fn write_cells<'a, W: std::io::Write>(
    writer: W,
    header: &[String],
    rows: impl IntoIterator<Item = Vec<Cell<'a>>>,
) -> Result<(), csv::Error> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(writer);
    w.write_record(header)?;
    for row in rows {
        w.serialize(row)?;
    }
    w.flush()?;
    Ok(())
}
