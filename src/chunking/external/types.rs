//! The values of external chunking: a chunker as declared ([`ChunkerSpec`]), what identifies its
//! code ([`Identity`]), and what it made ([`ExternalChunks`], with [`PlacementCounts`]).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::locate::{Placed, Placement};
use super::name::ExternalName;
use super::protocol::Response;
use crate::chunking::chunk::{ChunkParams, Strategy};

/// One configuration's responses, each document's (in corpus order) with whether the chunker
/// cache held it.
pub type Responses = Vec<(Response, bool)>;

/// What an external chunker's chunk_size and chunk_overlap count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeUnit {
    /// Tokens of the grid's tokenizer (words with the `words` tokenizer), as the built-ins.
    #[default]
    Tokens,
    /// Characters (code points), as LangChain's default length function counts.
    Characters,
}

impl SizeUnit {
    /// `tokens` or `characters`, as the protocol and the config file write it.
    pub fn name(self) -> &'static str {
        match self {
            SizeUnit::Tokens => "tokens",
            SizeUnit::Characters => "characters",
        }
    }
}

/// A user's command as a process to run: what a `[[chunkers]]` and a `[[retrievers]]` table
/// declare alike.
#[derive(Debug, Clone, Copy)]
pub struct Launch<'s> {
    /// The name it is declared under (for errors).
    pub name: &'s str,
    /// The program and its arguments (no shell).
    pub command: &'s [String],
    /// The folder it runs in.
    pub dir: &'s Path,
    /// Longest wait for one line of its output, seconds.
    pub timeout_s: f64,
    /// More files or folders that are its code (hashed into its identity), relative to `dir`.
    pub files: &'s [PathBuf],
}

fn default_timeout_s() -> f64 {
    60.0
}

/// An external chunker as the user declares it: a `[[chunkers]]` table of the config file, or
/// `--chunker NAME=COMMAND`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChunkerSpec {
    /// The strategy name it is swept under (`--strategies recursive,lc-recursive`).
    pub name: String,
    /// The program and its arguments (no shell).
    pub command: Vec<String>,
    /// What chunk_size and chunk_overlap count (default tokens).
    #[serde(default)]
    pub unit: SizeUnit,
    /// Longest wait for one line of its output, seconds (default 60).
    #[serde(default = "default_timeout_s")]
    pub timeout_s: f64,
    /// Share of a configuration's chunks that may be found nowhere in their documents and
    /// dropped (default 0: none).
    #[serde(default)]
    pub max_unlocated_share: f64,
    /// More files or folders whose content is the chunker's code (a module its script imports,
    /// the script's folder), relative to its folder: hashed into its fingerprint and cache key
    /// beside the files its command names.
    #[serde(default)]
    pub files: Vec<PathBuf>,
    /// The folder it runs in: the config file's (for `--chunker`, the current folder).
    #[serde(skip)]
    pub dir: PathBuf,
}

impl ChunkerSpec {
    /// Reads `--chunker NAME=COMMAND` (the command split as a POSIX shell would, not run by
    /// one), to run in `dir`.
    ///
    /// # Errors
    /// A sentence naming the flag's problem.
    pub fn from_flag(flag: &str, dir: PathBuf) -> Result<ChunkerSpec, String> {
        let (name, command) = flag.split_once('=').ok_or_else(|| {
            format!("--chunker {flag:?}: expected NAME=COMMAND, e.g. 'mine=python3 my_chunker.py'")
        })?;
        let command = shlex::split(command)
            .filter(|c| !c.is_empty())
            .ok_or_else(|| {
                format!("--chunker {flag:?}: the command is empty or its quotes do not close")
            })?;
        Ok(ChunkerSpec {
            name: name.trim().to_string(),
            command,
            unit: SizeUnit::default(),
            timeout_s: default_timeout_s(),
            max_unlocated_share: 0.0,
            files: Vec::new(),
            dir,
        })
    }

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

    /// Checks the name, the command, the timeout and the share.
    ///
    /// # Errors
    /// A sentence naming the chunker and what to change.
    pub fn validate(&self) -> Result<ExternalName, String> {
        let name = ExternalName::new(&self.name).map_err(|e| format!("chunker {e}"))?;
        if !self
            .name
            .parse::<Strategy>()
            .is_ok_and(Strategy::is_external)
        {
            return Err(format!(
                "chunker {:?} has a built-in strategy's name: give it another",
                self.name
            ));
        }
        if self.command.is_empty() || self.command[0].is_empty() {
            return Err(format!("chunker {}: its command is empty", self.name));
        }
        if !(self.timeout_s.is_finite() && self.timeout_s > 0.0) {
            return Err(format!(
                "chunker {}: timeout_s {} must be a number of seconds above 0",
                self.name, self.timeout_s
            ));
        }
        if let Some(missing) = self.files.iter().find(|f| !self.dir.join(f).exists()) {
            return Err(format!(
                "chunker {}: files names {}, which is not in {}",
                self.name,
                missing.display(),
                self.dir.display()
            ));
        }
        if !(0.0..=1.0).contains(&self.max_unlocated_share) {
            return Err(format!(
                "chunker {}: max_unlocated_share {} must be between 0 and 1",
                self.name, self.max_unlocated_share
            ));
        }
        Ok(name)
    }
}

/// What identifies an external chunker's code: part of the run's chunker fingerprint
/// ([`crate::fingerprint::Chunker::external`]) and of its cache key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The command as declared (empty for precomputed chunks).
    pub command: Vec<String>,
    /// SHA-256 of each file the command names (an argument that is a file in its folder), or of
    /// a precomputed chunks file, by the path as written.
    pub files: BTreeMap<String, String>,
    /// The chunker's own name, from its hello.
    pub reported: String,
    /// The versions its hello reports, by package.
    pub versions: BTreeMap<String, String>,
    /// The protocol version.
    pub protocol: u32,
    /// What its sizes count.
    pub unit: SizeUnit,
}

impl Identity {
    /// SHA-256 of the identity's JSON, hex.
    pub fn sha256(&self) -> String {
        let json = serde_json::to_vec(self).expect("an identity serialises");
        hex::encode(Sha256::digest(json))
    }
}

/// How one configuration's chunks were placed ([`super::locate`]): a row of chunkers.csv.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlacementCounts {
    /// The configuration: `<name>-<chunk_size>-o<chunk_overlap>`.
    pub config: String,
    /// The strategy name.
    pub chunker: String,
    /// The chunker's own name and versions: `langchain-recursive (langchain-text-splitters 0.3.8)`.
    pub reported: String,
    /// What its sizes count.
    pub size_unit: String,
    /// Documents chunked.
    pub documents: usize,
    /// Of them, answered by the cache (the chunker was not sent them).
    pub documents_cached: usize,
    /// Chunks it returned.
    pub chunks: usize,
    /// Placed by their given offsets.
    pub placed_given: usize,
    /// Placed by exact search.
    pub placed_exact: usize,
    /// Placed with whitespace forgiven.
    pub placed_whitespace: usize,
    /// Placed after text the chunker added (the added text is the chunk's prefix).
    pub placed_added_prefix: usize,
    /// Found nowhere and dropped.
    pub unlocated: usize,
}

impl PlacementCounts {
    /// Counts one placement (`None`: unlocated).
    pub fn add(&mut self, placed: Option<&Placed>) {
        self.chunks += 1;
        match placed.map(|p| p.how) {
            Some(Placement::Given) => self.placed_given += 1,
            Some(Placement::Exact) => self.placed_exact += 1,
            Some(Placement::Whitespace) => self.placed_whitespace += 1,
            Some(Placement::AddedPrefix) => self.placed_added_prefix += 1,
            None => self.unlocated += 1,
        }
    }
}

/// One external configuration's chunks, placed.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigChunks {
    /// Each document's chunks, in corpus order, each in document order.
    pub docs: Vec<Vec<Placed>>,
    /// How they were placed.
    pub counts: PlacementCounts,
    /// The chunker that made them.
    pub identity: Identity,
}

/// Every external configuration's chunks, by its chunking parameters: what
/// [`crate::chunking::chunk_document`] reads for an external strategy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExternalChunks {
    /// By configuration.
    pub configs: HashMap<ChunkParams, ConfigChunks>,
}

impl ExternalChunks {
    /// The chunks of `params`, if an external chunker made them.
    pub fn get(&self, params: &ChunkParams) -> Option<&ConfigChunks> {
        self.configs.get(params)
    }

    /// chunkers.csv's rows, by chunker name, then chunk_size, then chunk_overlap.
    pub fn counts(&self) -> Vec<PlacementCounts> {
        let mut configs: Vec<(&ChunkParams, &ConfigChunks)> = self.configs.iter().collect();
        configs.sort_by_key(|(p, _)| (p.strategy.name(), p.chunk_size, p.chunk_overlap));
        configs.into_iter().map(|(_, c)| c.counts.clone()).collect()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.configs.is_empty()
    }
}

/// `<name>-<chunk_size>-o<chunk_overlap>`: an external configuration before its prefix,
/// retriever and cut.
pub fn config_label(params: &ChunkParams) -> String {
    format!(
        "{}-{}-o{}",
        params.strategy, params.chunk_size, params.chunk_overlap
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_declares_a_chunker_and_a_built_in_name_is_refused() {
        let spec =
            ChunkerSpec::from_flag("mine=python3 'my chunker.py' --fast", "/w".into()).unwrap();
        assert_eq!(spec.name, "mine");
        assert_eq!(spec.command, ["python3", "my chunker.py", "--fast"]);
        assert_eq!((spec.unit, spec.timeout_s), (SizeUnit::Tokens, 60.0));
        assert_eq!(spec.validate().unwrap().as_str(), "mine");
        let built_in = ChunkerSpec::from_flag("recursive=python3 x.py", "/w".into()).unwrap();
        assert!(built_in.validate().unwrap_err().contains("built-in"));
        assert!(ChunkerSpec::from_flag("python3 x.py", "/w".into()).is_err());
        assert!(ChunkerSpec::from_flag("x='unclosed", "/w".into()).is_err());
        let slow = ChunkerSpec {
            timeout_s: 0.0,
            ..spec.clone()
        };
        assert!(slow.validate().unwrap_err().contains("timeout_s"));
        let share = ChunkerSpec {
            max_unlocated_share: 1.5,
            ..spec
        };
        assert!(
            share
                .validate()
                .unwrap_err()
                .contains("max_unlocated_share")
        );
    }
}
