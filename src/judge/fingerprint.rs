//! The fingerprint of the settings a run folder's journal was made with (judge_settings.json):
//! what must not change between runs that share judge_questions.csv.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::asking::templates;
use super::error::JudgeError;
use super::journal;
use super::prompts::PromptSet;
use super::settings::{JudgeMode, JudgeSettings};

/// What must not change between runs that share judge_questions.csv: models, caps, temperature,
/// seed and prompt hashes. Written to `judge_settings.json` in the run folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Generator model.
    pub generator_model: String,
    /// Judge model.
    pub judge_model: String,
    /// Generator cap, tokens.
    pub max_tokens: u32,
    /// Verdict cap, tokens.
    pub judge_max_tokens: u32,
    /// Temperature.
    pub temperature: f32,
    /// Seed.
    pub seed: Option<i64>,
    /// Prompt file → SHA-256: `generate.md`, each criterion's, `combined.md` in combined mode
    /// only.
    pub prompts: std::collections::BTreeMap<String, String>,
    /// The judge mode (absent from files written before it existed: per criterion).
    #[serde(default)]
    pub mode: JudgeMode,
}

impl Fingerprint {
    /// The fingerprint of a setup.
    pub fn new(s: &JudgeSettings, prompts: &PromptSet) -> Self {
        Fingerprint {
            generator_model: s.generator_model.clone(),
            judge_model: s.judge_model.clone(),
            max_tokens: s.max_tokens,
            judge_max_tokens: s.judge_max_tokens,
            temperature: s.temperature,
            seed: s.seed,
            prompts: prompts.hashes_of(templates(s.mode, &s.criteria).iter().map(String::as_str)),
            mode: s.mode,
        }
    }

    /// Reads `dir/judge_settings.json`; `None` when the folder has none.
    ///
    /// # Errors
    /// [`JudgeError::Io`] when it exists but cannot be read or parsed.
    pub fn load(dir: &Path) -> Result<Option<Self>, JudgeError> {
        let path = dir.join(crate::files::JUDGE_SETTINGS);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
                JudgeError::io(
                    &path,
                    std::io::Error::new(std::io::ErrorKind::InvalidData, e),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(JudgeError::io(&path, e)),
        }
    }

    /// What differs between `self` (before) and `other` (now), each as `name before → now`
    /// (`judge_model gpt-4o-mini → gpt-4o`; the prompts as the template files that differ);
    /// empty when nothing does.
    pub fn differences(&self, other: &Fingerprint) -> Vec<String> {
        let mut what = Vec::new();
        let mut differ = |name: &str, a: String, b: String| {
            if a != b {
                what.push(format!("{name} {a} → {b}"));
            }
        };
        differ(
            "generator_model",
            self.generator_model.clone(),
            other.generator_model.clone(),
        );
        differ(
            "judge_model",
            self.judge_model.clone(),
            other.judge_model.clone(),
        );
        differ(
            "max_tokens",
            self.max_tokens.to_string(),
            other.max_tokens.to_string(),
        );
        differ(
            "judge_max_tokens",
            self.judge_max_tokens.to_string(),
            other.judge_max_tokens.to_string(),
        );
        differ(
            "temperature",
            self.temperature.to_string(),
            other.temperature.to_string(),
        );
        differ(
            "seed",
            format!("{:?}", self.seed),
            format!("{:?}", other.seed),
        );
        differ(
            "judge mode",
            self.mode.name().into(),
            other.mode.name().into(),
        );
        let files: Vec<&str> = self
            .prompts
            .iter()
            .filter(|(f, h)| other.prompts.get(*f) != Some(h))
            .map(|(f, _)| f.as_str())
            .chain(
                other
                    .prompts
                    .keys()
                    .filter(|f| !self.prompts.contains_key(*f))
                    .map(String::as_str),
            )
            .collect();
        if !files.is_empty() {
            what.push(format!("prompts {} changed", files.join(", ")));
        }
        what
    }

    /// Checks `dir/judge_settings.json` against `self` when the folder already has judge rows,
    /// then writes `self` there.
    ///
    /// # Errors
    /// [`JudgeError::SettingsChanged`] naming the differing fields; [`JudgeError::Io`].
    pub fn check_and_store(&self, dir: &Path) -> Result<(), JudgeError> {
        let path = dir.join(crate::files::JUDGE_SETTINGS);
        let has_rows = journal::questions_path(dir)
            .metadata()
            .map(|m| m.len() > 0)
            .unwrap_or(false);
        if has_rows
            && let Ok(text) = std::fs::read_to_string(&path)
            && let Ok(old) = serde_json::from_str::<Fingerprint>(&text)
            && old != *self
        {
            return Err(JudgeError::SettingsChanged {
                dir: dir.to_path_buf(),
                what: old.differences(self).join(", "),
            });
        }
        let text = serde_json::to_string_pretty(self).expect("fingerprint serialises");
        std::fs::write(&path, text + "\n").map_err(|e| JudgeError::io(&path, e))
    }
}
