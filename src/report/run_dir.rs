//! The run folder writer: every output file of a command is created through it and recorded, so
//! manifest.json lists exactly the files that the command wrote (with those an earlier command
//! wrote into the same folder, when the manifest is updated rather than replaced).

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::ReportError;
use super::lock::RunLock;
use super::manifest::Manifest;
use crate::corpus::Corpus;
use crate::files;
use crate::sweep::rows::ConfigOutcome;

/// A run folder and the files written into it. Holds the folder's lock ([`RunLock`]) while it
/// lives, so no other process writes the folder meanwhile.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
    written: BTreeSet<String>,
    _lock: RunLock,
}

#[derive(Serialize)]
struct ChunkRecord<'a> {
    id: String,
    doc: &'a str,
    start: usize,
    end: usize,
    heading_path: &'a [String],
    /// Tokens of `text`: what indexing reads and a cut sends for the chunk.
    tokens: usize,
    /// Of those, the prefix's: the configuration's prefix and the text the chunk carries (a
    /// split table's header rows), separator included.
    prefix_tokens: usize,
    /// The chunk as sent: its prefix, then its own text (`start..end` of the document).
    text: Cow<'a, str>,
}

impl RunDir {
    /// Creates the folder (and its parents) if needed and locks it, at once; nothing is recorded
    /// yet.
    ///
    /// # Errors
    /// [`ReportError::NotAFolder`] when `path` is a file; [`ReportError::Io`] naming the folder;
    /// [`ReportError::Busy`] when another process holds it (before anything is written).
    pub fn create(path: &Path) -> Result<Self, ReportError> {
        if path.is_file() {
            return Err(ReportError::NotAFolder(path.to_path_buf()));
        }
        std::fs::create_dir_all(path).map_err(|source| ReportError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let lock = RunLock::acquire(path)?;
        Ok(RunDir {
            path: path.to_path_buf(),
            written: BTreeSet::new(),
            _lock: lock,
        })
    }

    /// Checks that `path` may take a new run's files, reading only: it does not exist yet, or
    /// is an empty folder, or a folder of the command's own (every entry at its top is a name
    /// of `outputs`, such as [`files::RUN_OUTPUTS`], as a rerun into the same folder finds: a
    /// run's outputs, its journal, its chunks folder, its lock).
    ///
    /// # Errors
    /// [`ReportError::NotAFolder`] for a file, [`ReportError::NotARunFolder`] naming the first
    /// five foreign entries, [`ReportError::Io`] when the folder cannot be listed.
    pub fn check_out(path: &Path, outputs: files::Outputs) -> Result<(), ReportError> {
        if path.is_file() {
            return Err(ReportError::NotAFolder(path.to_path_buf()));
        }
        let entries = match std::fs::read_dir(path) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) => {
                return Err(ReportError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let mut foreign = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|source| ReportError::Io {
                path: path.to_path_buf(),
                source,
            })?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if !outputs.names.contains(&name.as_str()) {
                foreign.push(name);
            }
        }
        if foreign.is_empty() {
            return Ok(());
        }
        foreign.sort();
        foreign.truncate(5);
        Err(ReportError::NotARunFolder {
            dir: path.to_path_buf(),
            owner: outputs.owner,
            foreign,
        })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records `name` (relative to the folder) as written by this command: for files another
    /// stage writes itself, such as the judge's journal.
    pub fn record(&mut self, name: &str) {
        self.written.insert(name.to_string());
    }

    /// The files recorded so far, sorted.
    pub fn written(&self) -> impl Iterator<Item = &str> {
        self.written.iter().map(String::as_str)
    }

    /// Writes `rows` as CSV with a header into `name`, records it and returns its path.
    ///
    /// # Errors
    /// [`ReportError::Csv`] naming the file.
    pub fn write_csv<T: Serialize>(
        &mut self,
        name: &str,
        rows: &[T],
    ) -> Result<PathBuf, ReportError> {
        let path = self.path.join(name);
        crate::table::write_rows(&path, rows).map_err(|source| ReportError::Csv {
            path: path.clone(),
            source,
        })?;
        self.record(name);
        Ok(path)
    }

    /// Writes `text` into `name`, records it and returns its path.
    ///
    /// # Errors
    /// [`ReportError::Io`] naming the file.
    pub fn write_text(&mut self, name: &str, text: &str) -> Result<PathBuf, ReportError> {
        let path = self.path.join(name);
        std::fs::write(&path, text).map_err(|source| ReportError::Io {
            path: path.clone(),
            source,
        })?;
        self.record(name);
        Ok(path)
    }

    /// Writes `value` as pretty JSON (with a final newline) into `name` and records it.
    ///
    /// # Errors
    /// [`ReportError::Json`] or [`ReportError::Io`] naming the file.
    pub fn write_json<T: Serialize>(
        &mut self,
        name: &str,
        value: &T,
    ) -> Result<PathBuf, ReportError> {
        let text = serde_json::to_string_pretty(value).map_err(|source| ReportError::Json {
            path: self.path.join(name),
            source,
        })?;
        self.write_text(name, &(text + "\n"))
    }

    /// Writes sweep.csv and sweep_questions.csv for `outcomes`.
    ///
    /// # Errors
    /// [`ReportError`] naming the file that failed.
    pub fn write_sweep(&mut self, outcomes: &[ConfigOutcome]) -> Result<(), ReportError> {
        let rows: Vec<_> = outcomes.iter().flat_map(ConfigOutcome::rows).collect();
        self.write_csv(files::SWEEP, &rows)?;
        let questions: Vec<_> = outcomes
            .iter()
            .flat_map(ConfigOutcome::question_rows)
            .collect();
        self.write_csv(files::SWEEP_QUESTIONS, &questions)?;
        Ok(())
    }

    /// Writes `chunks/<config_id>.jsonl` for every row of sweep.csv (a configuration's cuts
    /// share its chunks): one JSON object per chunk with `id`, `doc`, `start` and `end` (code
    /// points, end exclusive), `heading_path` and `tokens`.
    ///
    /// # Errors
    /// [`ReportError`] naming the file that failed.
    pub fn write_chunks(
        &mut self,
        corpus: &Corpus,
        outcomes: &[ConfigOutcome],
    ) -> Result<(), ReportError> {
        let folder = self.path.join(files::CHUNKS_DIR);
        std::fs::create_dir_all(&folder).map_err(|source| ReportError::Io {
            path: folder.clone(),
            source,
        })?;
        let rows = outcomes
            .iter()
            .flat_map(|o| o.rows().map(move |row| (o, row)));
        for (outcome, row) in rows {
            let path = folder.join(format!("{}.jsonl", row.config_id));
            let io = |source| ReportError::Io {
                path: path.clone(),
                source,
            };
            let file = std::fs::File::create(&path).map_err(io)?;
            let mut out = std::io::BufWriter::new(file);
            for chunk in &outcome.chunks {
                let record = ChunkRecord {
                    id: chunk.id(corpus),
                    doc: &corpus.docs[chunk.doc].id,
                    start: chunk.start,
                    end: chunk.end,
                    heading_path: &chunk.heading_path,
                    tokens: chunk.total_tokens(),
                    prefix_tokens: chunk.prefix_tokens,
                    text: chunk.indexed_text(corpus),
                };
                serde_json::to_writer(&mut out, &record).map_err(|source| ReportError::Json {
                    path: path.clone(),
                    source,
                })?;
                out.write_all(b"\n").map_err(io)?;
            }
            out.flush().map_err(io)?;
        }
        self.record(&format!("{}/", files::CHUNKS_DIR));
        Ok(())
    }

    /// Writes manifest.json with `outputs` set to every file recorded (manifest.json included).
    ///
    /// # Errors
    /// [`ReportError`] naming the file.
    pub fn write_manifest<C: Serialize>(
        &mut self,
        mut manifest: Manifest<C>,
    ) -> Result<(), ReportError> {
        self.record(files::MANIFEST);
        manifest.outputs = self.written.iter().cloned().collect();
        self.write_json(files::MANIFEST, &manifest)?;
        Ok(())
    }

    /// Adds the files recorded by this command to the `outputs` of the folder's existing
    /// manifest.json (for `chunksweep report`, which rewrites some files of an earlier run); does
    /// nothing when there is no manifest.
    ///
    /// # Errors
    /// [`ReportError`] when the manifest cannot be read back or written.
    pub fn update_manifest_outputs(&mut self) -> Result<(), ReportError> {
        let path = self.path.join(files::MANIFEST);
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(());
        };
        let json = |source| ReportError::Json {
            path: path.clone(),
            source,
        };
        let mut value: serde_json::Value = serde_json::from_str(&text).map_err(json)?;
        let mut outputs: BTreeSet<String> = value
            .get("outputs")
            .and_then(|o| o.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        outputs.extend(self.written.iter().cloned());
        value["outputs"] = serde_json::Value::from(outputs.into_iter().collect::<Vec<_>>());
        let text = serde_json::to_string_pretty(&value).map_err(json)?;
        std::fs::write(&path, text + "\n").map_err(|source| ReportError::Io { path, source })
    }
}
