//! The per-file exclusive lock a writing bmhctl holds on each host file it works on.
//!
//! The lock of `dir/hosts.yaml` is the file `dir/.bmhctl/hosts.yaml.lock`, locked with
//! [`std::fs::File::try_lock`] (an advisory `flock(2)` on Unix). It is taken before the host
//! file is read and held until the [`FileLock`] is dropped, so two writers never interleave
//! their read-modify-write cycles. The lock file itself is left in place when the lock is
//! released: deleting it would let a third process lock a new file of the same name while a
//! second one still holds (and trusts) the old one.
//!
//! Read-only commands take no lock. The lock is advisory: editors and other tools ignore it,
//! which is why [`HostFile::commit`](super::host_file::HostFile::commit) also checks that the
//! file's content has not changed since it was read.

use crate::error::Error;
use crate::persist::files::sidecar::STATE_DIR;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// A held lock; released when dropped.
#[derive(Debug)]
pub struct FileLock {
    // Kept open: closing the file releases the lock.
    _file: File,
    path: PathBuf,
}

impl FileLock {
    /// Path of the lock file of `file` (which should be the resolved path of the host file).
    pub fn path_for(file: &Path) -> PathBuf {
        let dir = file.parent().unwrap_or(Path::new(""));
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        dir.join(STATE_DIR).join(format!("{name}.lock"))
    }

    /// Take the exclusive lock of `file` without waiting, creating the `.bmhctl` directory
    /// and the lock file if needed. `shown` is how the file is named in messages (the path
    /// the user gave). A lock held by anyone else (another process, or another open handle
    /// in this one) gives [`Error::Conflict`].
    pub fn acquire(file: &Path, shown: &Path) -> Result<FileLock, Error> {
        let path = Self::path_for(file);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match f.try_lock() {
            Ok(()) => {
                // Holding the lock, no writer of this file runs: tidy what a killed one left
                // (the file's and its sidecar's temporary files).
                let name = file.file_name().unwrap_or_default().to_string_lossy();
                let dir = file.parent().unwrap_or(Path::new(""));
                crate::persist::atomic::remove_stale_temps(dir, Some(&name));
                if let Some(state_dir) = path.parent() {
                    let sidecar = format!("{name}.state.json");
                    crate::persist::atomic::remove_stale_temps(state_dir, Some(&sidecar));
                }
                Ok(FileLock { _file: f, path })
            }
            Err(TryLockError::WouldBlock) => Err(Error::Conflict(format!(
                "{} is in use by another bmhctl process (lock {})",
                shown.display(),
                path.display()
            ))),
            Err(TryLockError::Error(e)) => Err(Error::io(&path, e)),
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn taking_the_lock_removes_temp_files_of_dead_writers_of_this_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        std::fs::create_dir_all(dir.path().join(".bmhctl")).unwrap();
        // pid 999999999 is above Linux's pid_max: never a running process
        let dead = dir
            .path()
            .join(".hosts.yaml.999999999.00000000000000ab.tmp");
        let dead_sidecar = dir
            .path()
            .join(".bmhctl/.hosts.yaml.state.json.999999999.00000000000000cd.tmp");
        let live = dir.path().join(format!(
            ".hosts.yaml.{}.00000000000000ef.tmp",
            std::process::id()
        ));
        let other_file = dir
            .path()
            .join(".other.yaml.999999999.0000000000000001.tmp");
        for p in [&dead, &dead_sidecar, &live, &other_file] {
            std::fs::write(p, "partial").unwrap();
        }
        let _lock = FileLock::acquire(&file, Path::new("hosts.yaml")).unwrap();
        assert!(!dead.exists() && !dead_sidecar.exists());
        assert!(live.exists(), "a running writer's file is left alone");
        assert!(
            other_file.exists(),
            "another file's temp files are its own lock's business"
        );
    }

    #[test]
    fn second_lock_conflicts_until_released() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        let first = FileLock::acquire(&file, Path::new("hosts.yaml")).unwrap();
        assert_eq!(first.path(), dir.path().join(".bmhctl/hosts.yaml.lock"));
        let err = FileLock::acquire(&file, Path::new("hosts.yaml")).unwrap_err();
        let Error::Conflict(msg) = err else {
            panic!("{err:?}")
        };
        assert_eq!(
            msg,
            format!(
                "hosts.yaml is in use by another bmhctl process (lock {})",
                first.path().display()
            )
        );
        // Another file in the same directory is independent.
        let other = dir.path().join("other.yaml");
        let _other = FileLock::acquire(&other, &other).unwrap();
        drop(first);
        let again = FileLock::acquire(&file, &file).unwrap();
        assert!(again.path().exists());
    }
}
