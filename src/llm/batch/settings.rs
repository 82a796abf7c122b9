//! The `[llm.batch]` settings: whether calls go through the Batch API, how often a batch is
//! polled and the completion window asked for.

use serde::{Deserialize, Serialize};

/// The Batch API settings. In TOML either `[llm] batch = true` (the defaults, enabled) or a
/// `[llm.batch]` table; TOML cannot give `batch` both forms, so the table has `enabled`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BatchConfig {
    /// Whether judge calls go out as batches (`run --batch`). Default `false`.
    pub enabled: bool,
    /// Seconds between two polls of a batch in progress. Default 30.
    pub poll_s: f64,
    /// The completion window sent with each batch: a whole number of hours followed by `h`.
    /// Default `24h` (the only window OpenAI offers).
    pub completion_window: String,
    /// `run --cancel-batches`: cancel the run folder's batches that have not ended before the
    /// judge stage asks anything (what they answered is kept; the rest is left unfinished).
    /// Never read from a file, never recorded.
    #[serde(skip)]
    pub cancel: bool,
}

impl Default for BatchConfig {
    fn default() -> Self {
        BatchConfig {
            enabled: false,
            poll_s: 30.0,
            completion_window: "24h".to_string(),
            cancel: false,
        }
    }
}

/// `[llm.batch]` as written: every field optional.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    enabled: Option<bool>,
    poll_s: Option<f64>,
    completion_window: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Written {
    Flag(bool),
    Table(Table),
}

impl<'de> Deserialize<'de> for BatchConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let def = BatchConfig::default();
        Ok(match Written::deserialize(d).map_err(|_| {
            serde::de::Error::custom(
                "batch must be true, false or a table with enabled, poll_s and completion_window",
            )
        })? {
            Written::Flag(enabled) => BatchConfig { enabled, ..def },
            Written::Table(t) => BatchConfig {
                // a table says how to batch: it enables batching unless it says otherwise
                enabled: t.enabled.unwrap_or(true),
                poll_s: t.poll_s.unwrap_or(def.poll_s),
                completion_window: t.completion_window.unwrap_or(def.completion_window),
                cancel: false,
            },
        })
    }
}

impl BatchConfig {
    /// In batch mode, what an estimate adds: that it is at the batch price and that results
    /// may take up to the completion window. `None` without batch mode.
    pub fn estimate_note(&self) -> Option<String> {
        self.enabled.then(|| {
            format!(
                "through the Batch API: the cost is at the batch price ([llm.models] batch_discount, default half the list price), and results may take up to the {} completion window",
                self.completion_window
            )
        })
    }

    /// Checks the settings.
    ///
    /// # Errors
    /// A message naming the setting: `poll_s` not a positive number of seconds, a completion
    /// window that is not a whole number of hours followed by `h` (`24h`).
    pub fn validate(&self) -> Result<(), String> {
        if !(self.poll_s.is_finite() && self.poll_s > 0.0) {
            return Err(format!(
                "[llm.batch] poll_s must be a positive number of seconds, not {}",
                self.poll_s
            ));
        }
        let hours = self
            .completion_window
            .strip_suffix('h')
            .and_then(|h| h.parse::<u32>().ok());
        if !matches!(hours, Some(h) if h > 0) {
            return Err(format!(
                "[llm.batch] completion_window must be a whole number of hours such as \"24h\", not {:?}",
                self.completion_window
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Llm {
        #[serde(default)]
        batch: BatchConfig,
    }

    fn read(toml_text: &str) -> Result<BatchConfig, String> {
        toml::from_str::<Llm>(toml_text)
            .map(|l| l.batch)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_flag_or_a_table_and_defaults() {
        assert_eq!(read("").unwrap(), BatchConfig::default());
        let on = read("batch = true").unwrap();
        assert!(on.enabled);
        assert_eq!((on.poll_s, on.completion_window.as_str()), (30.0, "24h"));
        let t = read("[batch]\npoll_s = 2.5\ncompletion_window = \"48h\"").unwrap();
        assert_eq!(
            (t.enabled, t.poll_s, t.completion_window.as_str()),
            (true, 2.5, "48h")
        );
        assert!(!read("[batch]\nenabled = false").unwrap().enabled);
        assert!(
            read("[batch]\npoll = 3")
                .unwrap_err()
                .contains("batch must be")
        );
    }

    #[test]
    fn bad_values_are_named() {
        let bad = |f: fn(&mut BatchConfig)| {
            let mut c = BatchConfig::default();
            f(&mut c);
            c.validate().unwrap_err()
        };
        assert!(bad(|c| c.poll_s = 0.0).contains("poll_s"));
        assert!(bad(|c| c.poll_s = f64::NAN).contains("poll_s"));
        assert!(bad(|c| c.completion_window = "1d".into()).contains("completion_window"));
        assert!(bad(|c| c.completion_window = "0h".into()).contains("\"0h\""));
        assert!(BatchConfig::default().validate().is_ok());
    }
}
