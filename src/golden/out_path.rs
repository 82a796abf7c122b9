//! Checks of the file a golden-set command writes, made before anything is read, sent or paid
//! for: `golden draft` never replaces a file, `golden review` never writes over its input or
//! into the corpus.

use std::path::{Path, PathBuf};

use super::GoldenError;

/// Refuses a `golden draft --out` that exists (a golden set there may hold reviewed items), that
/// is a folder, or whose parent folder does not exist.
///
/// # Errors
/// [`GoldenError::Out`] (exit 2) naming the path and what to do.
pub fn check_new_golden_set(out: &Path) -> Result<(), GoldenError> {
    let shown = out.display();
    if out.is_dir() {
        return Err(GoldenError::Out(format!(
            "--out {shown} is a folder: give the golden set's file name (e.g. {})",
            out.join("golden.jsonl").display()
        )));
    }
    if out.exists() {
        return Err(GoldenError::Out(format!(
            "--out {shown} exists: choose another --out or remove it"
        )));
    }
    let parent = parent_dir(out);
    if !parent.is_dir() {
        return Err(GoldenError::Out(format!(
            "--out {shown}: its folder {} does not exist: create it or choose another --out",
            parent.display()
        )));
    }
    Ok(())
}

/// Refuses a `golden review --out` that is the golden set under review (`file`) or lies inside
/// the `corpus` folder (the page would replace a document or be read as one).
///
/// # Errors
/// [`GoldenError::Out`] (exit 2) naming the path and what to do.
pub fn check_review_page(file: &Path, corpus: &Path, out: &Path) -> Result<(), GoldenError> {
    let page = resolved(out);
    if page == resolved(file) {
        return Err(GoldenError::Out(format!(
            "--out {} is the golden set under review: the page would overwrite it; choose another --out (default: review.html beside the golden set)",
            out.display()
        )));
    }
    if page.starts_with(resolved(corpus)) {
        return Err(GoldenError::Out(format!(
            "--out {} is inside the corpus folder {}: the page would overwrite a document or be read as one; choose an --out outside the corpus",
            out.display(),
            corpus.display()
        )));
    }
    Ok(())
}

/// The folder `path` is in (`.` for a bare file name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `path` with links and `..` resolved as far as it exists: the whole path, else its folder
/// joined with its file name, else the path as given.
fn resolved(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    match (parent_dir(path).canonicalize(), path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => path.to_path_buf(),
    }
}
