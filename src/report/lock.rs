//! An advisory lock on a run folder, so that two processes never write one folder at once.
//!
//! The lock is the operating system's exclusive advisory lock (`flock` on Unix, `LockFileEx` on
//! Windows, through the standard library's `File::try_lock`, which replaces crates such as fs4)
//! on `.chunksweep.lock` in the folder. It is released when the process ends, however it ends (a
//! SIGKILL included), so a stale lock never blocks a rerun. When the lock is dropped (the command
//! ends), the file is removed while still locked. A process that opened the file just before
//! the removal and locks it just after would hold a lock on a file no longer in the folder, so a
//! lock counts only when the file locked is still the one at the path (same device and inode on
//! Unix); otherwise the folder is reported busy, as it was a moment before.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use super::error::ReportError;

/// An exclusive lock on a run folder, held until dropped (or the process ends).
#[derive(Debug)]
pub struct RunLock {
    file: Option<File>,
    path: PathBuf,
}

impl Drop for RunLock {
    /// Removes the lock file while holding the lock, then releases it.
    fn drop(&mut self) {
        std::fs::remove_file(&self.path).ok();
        self.file.take();
    }
}

/// Whether `file` (open) is the file now at `path`.
#[cfg(unix)]
fn still_at(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether `file` (open) is the file now at `path` (elsewhere: whether a file is at `path`).
#[cfg(not(unix))]
fn still_at(_file: &File, path: &Path) -> bool {
    path.exists()
}

impl RunLock {
    /// Locks `dir` (which must exist) at once, without waiting.
    ///
    /// # Errors
    /// [`ReportError::Busy`] if another process holds it; [`ReportError::Io`] if the lock file
    /// cannot be opened or locked.
    pub fn acquire(dir: &Path) -> Result<Self, ReportError> {
        let path = dir.join(crate::files::LOCK);
        let io = |source| ReportError::Io {
            path: path.clone(),
            source,
        };
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) if still_at(&file, &path) => Ok(RunLock {
                file: Some(file),
                path,
            }),
            Ok(()) => Err(ReportError::Busy {
                dir: dir.to_path_buf(),
            }),
            Err(std::fs::TryLockError::WouldBlock) => Err(ReportError::Busy {
                dir: dir.to_path_buf(),
            }),
            Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_folder_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = RunLock::acquire(dir.path()).unwrap();
        // a second open file description: what another process would have
        let err = RunLock::acquire(dir.path()).unwrap_err();
        assert!(matches!(err, ReportError::Busy { .. }), "{err}");
        assert!(
            err.to_string()
                .contains("is in use by another chunksweep process"),
            "{err}"
        );
        assert_eq!(err.exit_class(), crate::exit::ExitClass::Usage);
        drop(first);
        assert!(
            !dir.path().join(crate::files::LOCK).exists(),
            "the lock file goes with the lock"
        );
        RunLock::acquire(dir.path()).unwrap();
    }
}
