//! The default prompt templates, compiled into the binary from `prompts/*.md`, so `chunksweep run`
//! works from any folder; a folder of the user's own overrides them (`--prompts DIR`), and
//! [`export`] writes the defaults out for editing (`chunksweep prompts export DIR`).

use std::path::{Path, PathBuf};

use thiserror::Error;

/// The default templates other than the judge criteria's: (file name, text). The judge stage
/// uses `generate.md` (and `combined.md` with `--judge-mode combined`), the `llm_context` prefix
/// `context.md`, `chunksweep golden draft` `draft.md` (and `draft_check.md` with
/// `--check-answers`); each criterion carries its own template
/// (`crate::judge::criteria::Criterion::default_prompt`).
pub const DEFAULTS: [(&str, &str); 5] = [
    ("generate.md", include_str!("../prompts/generate.md")),
    ("context.md", include_str!("../prompts/context.md")),
    ("combined.md", include_str!("../prompts/combined.md")),
    ("draft.md", include_str!("../prompts/draft.md")),
    ("draft_check.md", include_str!("../prompts/draft_check.md")),
];

/// Every default template, (file name, text), in file order: `generate.md`, the criteria's
/// templates `criteria` (file name, text) in their order, `context.md`, `combined.md`,
/// `draft.md`, `draft_check.md`.
pub fn defaults(criteria: &[(String, String)]) -> Vec<(String, String)> {
    let own = |i: usize| (DEFAULTS[i].0.to_string(), DEFAULTS[i].1.to_string());
    let mut out = vec![own(0)];
    out.extend(criteria.iter().cloned());
    out.extend((1..DEFAULTS.len()).map(own));
    out
}

/// How a built-in template's path is shown (in errors and the manifest): `<built-in>/NAME`.
pub fn builtin_path(name: &str) -> PathBuf {
    Path::new("<built-in>").join(name)
}

/// The default text of the template `name` (`generate.md`, `context.md` or `combined.md`), if
/// there is one.
pub fn default_text(name: &str) -> Option<&'static str> {
    DEFAULTS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Errors writing the defaults out.
#[derive(Debug, Error)]
pub enum ExportError {
    /// A file of that name is already there; nothing is overwritten.
    #[error("{0} already exists; export into an empty folder or remove it first")]
    Exists(PathBuf),
    /// The folder or a file could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl ExportError {
    /// Usage (2) when a file is in the way, failure (1) when writing fails.
    pub fn exit_class(&self) -> crate::exit::ExitClass {
        match self {
            ExportError::Exists(_) => crate::exit::ExitClass::Usage,
            ExportError::Io { .. } => crate::exit::ExitClass::Failure,
        }
    }
}

/// Writes every default template ([`defaults`] with the criteria's templates `criteria`) into
/// `dir` (created if needed) and returns the paths written. Refuses, before writing anything,
/// when one of the files exists.
///
/// # Errors
/// [`ExportError::Exists`] naming the first file already there, [`ExportError::Io`].
pub fn export(dir: &Path, criteria: &[(String, String)]) -> Result<Vec<PathBuf>, ExportError> {
    let defaults = defaults(criteria);
    let paths: Vec<PathBuf> = defaults.iter().map(|(n, _)| dir.join(n)).collect();
    if let Some(p) = paths.iter().find(|p| p.exists()) {
        return Err(ExportError::Exists(p.clone()));
    }
    std::fs::create_dir_all(dir).map_err(|source| ExportError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for (path, (_, text)) in paths.iter().zip(&defaults) {
        std::fs::write(path, text).map_err(|source| ExportError::Io {
            path: path.clone(),
            source,
        })?;
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn criteria() -> Vec<(String, String)> {
        crate::judge::criteria::builtin()
            .into_iter()
            .map(|c| (c.file_name(), c.default_prompt))
            .collect()
    }

    #[test]
    fn export_writes_the_repository_files_byte_for_byte_and_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("p");
        let written = export(&out, &criteria()).unwrap();
        assert_eq!(written.len(), 8);
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
        for (name, _) in defaults(&criteria()) {
            assert_eq!(
                std::fs::read(out.join(&name)).unwrap(),
                std::fs::read(repo.join(&name)).unwrap(),
                "{name}"
            );
        }
        std::fs::write(out.join("generate.md"), "mine").unwrap();
        let err = export(&out, &criteria()).unwrap_err();
        assert!(matches!(err, ExportError::Exists(ref p) if p.ends_with("generate.md")));
        assert_eq!(
            std::fs::read_to_string(out.join("generate.md")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn every_prompt_file_of_the_repository_is_a_default() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
        let mut files: Vec<String> = std::fs::read_dir(repo)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let mut names: Vec<String> = defaults(&criteria()).into_iter().map(|(n, _)| n).collect();
        names.sort();
        assert_eq!(files, names);
        assert_eq!(
            default_text("context.md"),
            Some(include_str!("../prompts/context.md"))
        );
        assert_eq!(default_text("nope.md"), None);
    }
}
