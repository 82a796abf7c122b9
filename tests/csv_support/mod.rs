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

#[allow(dead_code)] // used by the tests of judged runs only
/// `rows` without the columns that measure time (`*_ms`, `*_ms_p50`, `*_ms_p95`, …), each row's
/// cells sorted by column: what two runs of the same inputs must share.
pub fn untimed(rows: &Rows) -> Vec<Vec<(String, String)>> {
    rows.iter()
        .map(|r| {
            let mut v: Vec<(String, String)> = r
                .iter()
                .filter(|(k, _)| !k.ends_with("_ms") && !k.contains("_ms_"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            v.sort();
            v
        })
        .collect()
}
