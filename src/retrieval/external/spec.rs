//! An external retriever as declared (`[[retrievers]]`), and what identifies its code.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::chunking::external::ExternalName;
use crate::chunking::external::types::Launch;

fn default_timeout_s() -> f64 {
    60.0
}

/// The built-in retrievers' names, which no external retriever may take.
const BUILT_IN: [&str; 3] = ["bm25", "dense", "hybrid"];

/// An external retriever as the user declares it: a `[[retrievers]]` table of the config file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetrieverSpec {
    /// The retriever name it is swept under (`--retrievers dense,chroma`).
    pub name: String,
    /// The program and its arguments (no shell).
    pub command: Vec<String>,
    /// Longest wait for one line of its output, seconds (default 60): indexing a
    /// configuration's chunks is one line.
    #[serde(default = "default_timeout_s")]
    pub timeout_s: f64,
    /// More files or folders whose content is the retriever's code, relative to its folder:
    /// hashed into its identity and cache key beside the files its command names.
    #[serde(default)]
    pub files: Vec<PathBuf>,
    /// The folder it runs in: the config file's.
    #[serde(skip)]
    pub dir: PathBuf,
}

impl RetrieverSpec {
    /// Its command as a process to run.
    pub fn launch(&self) -> Launch<'_> {
        Launch {
            name: &self.name,
            command: &self.command,
            dir: &self.dir,
            timeout_s: self.timeout_s,
            files: &self.files,
        }
    }

    /// Checks the name (lowercase letters, digits and `_`, starting with a letter: it is one
    /// part of a configuration id; no built-in retriever's), the command and the timeout.
    ///
    /// # Errors
    /// A sentence naming the retriever and what to change.
    pub fn validate(&self) -> Result<ExternalName, String> {
        let name = checked_name(&self.name)?;
        if self.command.is_empty() || self.command[0].is_empty() {
            return Err(format!("retriever {}: its command is empty", self.name));
        }
        if !(self.timeout_s.is_finite() && self.timeout_s > 0.0) {
            return Err(format!(
                "retriever {}: timeout_s {} must be a number of seconds above 0",
                self.name, self.timeout_s
            ));
        }
        if let Some(missing) = self.files.iter().find(|f| !self.dir.join(f).exists()) {
            return Err(format!(
                "retriever {}: files names {}, which is not in {}",
                self.name,
                missing.display(),
                self.dir.display()
            ));
        }
        Ok(name)
    }
}

/// `name` checked as an external retriever's name and kept.
///
/// # Errors
/// A sentence saying what is wrong with it.
pub fn checked_name(name: &str) -> Result<ExternalName, String> {
    let ok = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        return Err(format!(
            "retriever {name:?}: a retriever name is lowercase letters, digits and '_', starting with a letter (it is one part of a configuration id)"
        ));
    }
    if BUILT_IN.contains(&name) {
        return Err(format!(
            "retriever {name:?} has a built-in retriever's name: give it another"
        ));
    }
    ExternalName::new(name)
}

/// What identifies an external retriever's code: part of its cache key and of the run's
/// chunker fingerprint ([`crate::fingerprint::Chunker::retriever`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetrieverIdentity {
    /// The command as declared.
    pub command: Vec<String>,
    /// SHA-256 of each file the command names and of each entry of `files`, by the path as
    /// written.
    pub files: BTreeMap<String, String>,
    /// The retriever's own name, from its hello (`chroma-hnsw`).
    pub reported: String,
    /// The versions its hello reports, by package (an index setting may be given as one).
    pub versions: BTreeMap<String, String>,
    /// The protocol version.
    pub protocol: u32,
}

impl RetrieverIdentity {
    /// SHA-256 of the identity's JSON, hex.
    pub fn sha256(&self) -> String {
        let json = serde_json::to_vec(self).expect("an identity serialises");
        hex::encode(Sha256::digest(json))
    }

    /// `chroma-hnsw (chromadb 1.5.9)`.
    pub fn label(&self) -> String {
        let versions: Vec<String> = self
            .versions
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        match versions.is_empty() {
            true => self.reported.clone(),
            false => format!("{} ({})", self.reported, versions.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_would_break_an_id_or_shadow_a_built_in_are_refused() {
        for good in ["chroma", "pg_vector", "es2"] {
            assert_eq!(checked_name(good).unwrap().as_str(), good);
        }
        for bad in ["", "Chroma", "2es", "my-engine", "a+b", "dense", "bm25"] {
            assert!(checked_name(bad).is_err(), "{bad:?} accepted");
        }
        let spec = RetrieverSpec {
            name: "mine".into(),
            command: vec![],
            timeout_s: 1.0,
            files: vec![],
            dir: ".".into(),
        };
        assert!(spec.validate().unwrap_err().contains("command is empty"));
    }
}
