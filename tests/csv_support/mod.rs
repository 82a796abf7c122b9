//! Reading a run's CSV files in integration tests: one map of column → value per row.

use std::collections::HashMap;
use std::path::Path;

/// The rows of one CSV file.
pub type Rows = Vec<HashMap<String, String>>;

/// Reads `path` (with a header row) into [`Rows`]; panics if it cannot.
pub fn read_csv(path: &Path) -> Rows {
    let mut r = csv::Reader::from_path(path).unwrap();
    let headers = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            headers
                .iter()
                .zip(rec.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}
