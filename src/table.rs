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
