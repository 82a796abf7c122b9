//! An advisory lock on a run folder, so that two processes never write one folder at once.
//!
//! The lock is the operating system's exclusive advisory lock (`flock` on Unix, `LockFileEx` on
//! Windows, through the standard library's `File::try_lock`, which replaces crates such as fs4)
//! on `.chunksweep.lock` in the folder. It is released when the process ends, however it ends (a
//! SIGKILL included), so a stale lock never blocks a rerun. The file itself stays: removing it
//! would let a third process lock a new file while the second still holds the old one.

use std::fs::{File, OpenOptions};
use std::path::Path;

use super::error::ReportError;

/// An exclusive lock on a run folder, held until dropped (or the process ends).
#[derive(Debug)]
pub struct RunLock {
    _file: File,
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
            Ok(()) => Ok(RunLock { _file: file }),
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
        RunLock::acquire(dir.path()).unwrap();
    }
}
