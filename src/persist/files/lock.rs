//! The per-file exclusive lock a writing bmhctl holds on each host file it works on.

use crate::diagnostic::Diagnostic;
use crate::error::Error;
use crate::persist::files::sidecar::STATE_DIR;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// A held lock; released when dropped.
#[derive(Debug)]
pub struct FileLock {
    // Kept open: closing the file releases the lock.
    file: File,
    path: PathBuf,
    /// The host file, open and locked (or the new content a save is about to put there).
    host: File,
    host_path: PathBuf,
    /// How the host file is named in messages.
    shown: PathBuf,
    /// This lock created the lock file: removed on release.
    created_file: bool,
    /// This lock created the `.bmhctl` directory: removed on release when empty.
    created_dir: bool,
}

/// Attempts at taking a lock whose file a releaser removes at the same moment.
const ATTEMPTS: usize = 16;

impl FileLock {
    /// Path of the lock file of `file` (the resolved path of the host file).
    pub fn path_for(file: &Path) -> PathBuf {
        super::sidecar::state_file(file, "lock")
    }

    /// Takes the exclusive lock of `file` without waiting, creating `.bmhctl/` and the lock file.
    pub fn acquire(file: &Path, shown: &Path) -> Result<FileLock, Error> {
        let path = Self::path_for(file);
        let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
        for _ in 0..ATTEMPTS {
            // The host file first: a refusal then writes nothing (no `.bmhctl/`).
            let host = match lock_host_file(file, shown)? {
                Some(host) => host,
                // Replaced (by a writer's save, an editor) between the open and the lock.
                None => continue,
            };
            let created_dir = private_dir(&dir)?;
            let (f, created_file) = match open_lock_file(&path) {
                Ok(opened) => opened,
                // Removed by a releaser between the two steps: start over.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(refused(&path, e)),
            };
            match f.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    let pid = holder(&f).map(|p| format!(", held by pid {p}"));
                    return Err(Error::Conflict(format!(
                        "{} is in use by another bmhctl process (lock {}{})",
                        shown.display(),
                        path.display(),
                        pid.unwrap_or_default()
                    )));
                }
                Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
            }
            if !still_named(&f, &path) {
                continue;
            }
            // Holding the lock, no writer of this file runs: tidy what a killed one left.
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            let file_dir = file.parent().unwrap_or(Path::new(""));
            crate::persist::atomic::remove_stale_temps(file_dir, Some(&name));
            let sidecar = format!("{name}.state.json");
            crate::persist::atomic::remove_stale_temps(&dir, Some(&sidecar));
            return Ok(FileLock {
                file: f,
                path,
                host,
                host_path: file.to_path_buf(),
                shown: shown.to_path_buf(),
                created_file,
                created_dir,
            });
        }
        Err(Error::Conflict(format!(
            "{}: its lock {} kept being removed while it was taken; retry",
            shown.display(),
            path.display()
        )))
    }

    /// The pid of the process holding `file`'s lock, if one does; looked at without locking.
    pub fn holder_of(file: &Path) -> Option<u32> {
        use std::os::unix::fs::OpenOptionsExt;
        let f = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(Self::path_for(file))
            .ok()?;
        holder(&f)
    }

    /// Holds `file`, the new content a save is putting at the host file's path, already locked.
    pub fn hold(&mut self, file: File) {
        self.host = file;
    }

    /// Locks the file an editor's rename put at the host file's path (another's lock: a conflict).
    pub fn follow(&mut self) -> Result<(), Error> {
        if still_named(&self.host, &self.host_path) {
            return Ok(());
        }
        for _ in 0..ATTEMPTS {
            if let Some(host) = lock_host_file(&self.host_path, &self.shown)? {
                self.host = host;
                return Ok(());
            }
        }
        Err(Error::Conflict(format!(
            "{}: it kept being replaced while its lock was taken again; retry",
            self.shown.display()
        )))
    }

    /// Whether the lock file is still where it was taken (a bmhctl of an older release would not
    /// see the lock otherwise).
    pub fn check(&self) -> Result<(), Error> {
        use std::os::unix::fs::MetadataExt;
        let held = self.file.metadata().map_err(|e| Error::io(&self.path, e))?;
        match std::fs::symlink_metadata(&self.path) {
            Ok(m) if m.dev() == held.dev() && m.ino() == held.ino() => return Ok(()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // Its directory replaced by a file, say: what the next write would meet too.
            Err(e) => return Err(Error::io(&self.shown, e)),
        }
        Err(Error::io(
            &self.shown,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "its lock {} was removed during the run; stopping so that no other bmhctl \
                     drives these hosts at the same time (run again to resume)",
                    self.path.display()
                ),
            ),
        ))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Unlinked while held: safe, as every taker checks the path still names what it locked.
        if self.created_file {
            let _ = std::fs::remove_file(&self.path);
        }
        if self.created_dir
            && let Some(dir) = self.path.parent()
        {
            // Fails, as it should, when a sidecar or another lock lives there.
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Creates `dir` (mode 0700) unless it exists; whether it was created.
fn private_dir(dir: &Path) -> Result<bool, Error> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => return Ok(false),
        Ok(_) => {
            return Err(Error::invalid(
                Diagnostic::new(format!(
                    "not a directory: bmhctl keeps its locks and state in {STATE_DIR}/ beside \
                     the host file; move it out of the way"
                ))
                .in_file(dir),
            ));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(dir, e)),
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(true),
        // Created by another bmhctl meanwhile.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(Error::io(dir, e)),
    }
}

/// Opens the lock file without following a symlink, creating it (0600); whether it was created.
pub(crate) fn open_lock_file(path: &Path) -> std::io::Result<(File, bool)> {
    use std::os::unix::fs::OpenOptionsExt;
    let open = |create: bool| {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(create)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
    };
    match open(true) {
        Ok(f) => Ok((f, true)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok((open(false)?, false)),
        Err(e) => Err(e),
    }
}

/// Opens and locks the host file `file`: `None` when the path names another file once locked.
fn lock_host_file(file: &Path, shown: &Path) -> Result<Option<File>, Error> {
    use std::os::unix::fs::OpenOptionsExt;
    let host = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(file)
        .map_err(|e| Error::io(shown, e))?;
    match host.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let pid = holder(&host).map_or_else(String::new, |p| format!(" (pid {p})"));
            return Err(Error::Conflict(format!(
                "{} is in use by another bmhctl process{pid}",
                shown.display()
            )));
        }
        // A filesystem that cannot lock the file: the lock file alone keeps other bmhctl out.
        Err(TryLockError::Error(e))
            if matches!(
                e.raw_os_error(),
                Some(libc::EBADF | libc::ENOLCK | libc::EOPNOTSUPP)
            ) => {}
        Err(TryLockError::Error(e)) => return Err(Error::io(shown, e)),
    }
    Ok(still_named(&host, file).then_some(host))
}

/// The pid of the process holding a `flock` on the open file `f`, from `/proc/locks` (lines
/// `1: FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF`, the device in hex).
fn holder(f: &File) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let m = f.metadata().ok()?;
    let (major, minor) = (libc::major(m.dev()), libc::minor(m.dev()));
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // A waiter's line has `->` after the number.
        let [_, "FLOCK", _, "WRITE", pid, id, ..] = fields.as_slice() else {
            return None;
        };
        let mut id = id.split(':');
        let maj = u32::from_str_radix(id.next()?, 16).ok()?;
        let min = u32::from_str_radix(id.next()?, 16).ok()?;
        let ino: u64 = id.next()?.parse().ok()?;
        (maj == major && min == minor && ino == m.ino()).then(|| pid.parse().ok())?
    })
}

/// Whether `path` still names the open file `f` (not removed or replaced since it was opened).
fn still_named(f: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (f.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// An error opening the lock file: a symlink there (`ELOOP`) is bad input naming the path.
pub(crate) fn refused(path: &Path, e: std::io::Error) -> Error {
    if e.raw_os_error() == Some(libc::ELOOP) {
        return Error::invalid(
            Diagnostic::new(
                "is a symlink: bmhctl never follows one to its lock or lease files; remove it"
                    .to_string(),
            )
            .in_file(path),
        );
    }
    Error::io(path, e)
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
                "hosts.yaml is in use by another bmhctl process (pid {})",
                std::process::id()
            )
        );
        // Another file in the same directory is independent.
        let other = dir.path().join("other.yaml");
        std::fs::write(&other, "b: 1\n").unwrap();
        let _other = FileLock::acquire(&other, &other).unwrap();
        drop(first);
        let again = FileLock::acquire(&file, &file).unwrap();
        assert!(again.path().exists());
    }

    #[test]
    fn a_lock_this_run_created_is_removed_with_its_directory_on_release() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        let lock = FileLock::acquire(&file, &file).unwrap();
        let path = lock.path().to_path_buf();
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&path), mode(path.parent().unwrap())), (0o600, 0o700));
        drop(lock);
        assert!(!dir.path().join(".bmhctl").exists(), "nothing left behind");
        // A lock file that was there before stays.
        std::fs::create_dir(dir.path().join(".bmhctl")).unwrap();
        std::fs::write(&path, "").unwrap();
        drop(FileLock::acquire(&file, &file).unwrap());
        assert!(path.exists());
    }

    #[test]
    fn a_symlinked_lock_file_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        std::fs::create_dir(dir.path().join(".bmhctl")).unwrap();
        let target = dir.path().join("precious");
        std::fs::write(&target, "keep me").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join(".bmhctl/hosts.yaml.lock")).unwrap();
        let err = FileLock::acquire(&file, &file).unwrap_err();
        assert_eq!(err.exit_code(), 2, "{err}");
        assert!(err.to_string().contains("hosts.yaml.lock"), "{err}");
        assert!(err.to_string().contains("symlink"), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    }

    #[test]
    fn a_state_directory_that_is_a_file_is_bad_input_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        std::fs::write(dir.path().join(".bmhctl"), "not a dir").unwrap();
        let err = FileLock::acquire(&file, &file).unwrap_err();
        assert_eq!(err.exit_code(), 2, "{err}");
        assert!(
            err.to_string().contains(".bmhctl: not a directory"),
            "{err}"
        );
    }

    #[test]
    fn a_lock_file_removed_under_a_waiting_taker_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        let first = FileLock::acquire(&file, &file).unwrap();
        // Another taker opened the file before the releaser removed it.
        let (stale, _) = open_lock_file(first.path()).unwrap();
        let path = first.path().to_path_buf();
        drop(first);
        stale.try_lock().unwrap();
        assert!(!still_named(&stale, &path));
        // A fresh taker gets a lock the path names.
        let again = FileLock::acquire(&file, &file).unwrap();
        assert!(again.path().exists());
    }

    /// With `.bmhctl/` removed under a holder, a second taker is still refused, naming the
    /// holder's pid (the lock on the host file itself), and refused before writing anything;
    /// the holder finds its lock file gone.
    #[test]
    fn removing_the_state_directory_does_not_release_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        let first = FileLock::acquire(&file, Path::new("hosts.yaml")).unwrap();
        first.check().unwrap();
        std::fs::remove_dir_all(dir.path().join(".bmhctl")).unwrap();
        let err = FileLock::acquire(&file, Path::new("hosts.yaml")).unwrap_err();
        assert_eq!(err.exit_code(), 3, "{err}");
        assert_eq!(
            err.to_string(),
            format!(
                "hosts.yaml is in use by another bmhctl process (pid {})",
                std::process::id()
            )
        );
        assert!(
            !dir.path().join(".bmhctl").exists(),
            "a refusal writes nothing"
        );
        let err = first.check().unwrap_err();
        assert!(
            err.chain().contains("its lock") && err.chain().contains("was removed during the run"),
            "{}",
            err.chain()
        );
    }

    /// A save's new content, locked before it takes the name, keeps the file locked; a file an
    /// editor renamed into place is locked when the holder follows it, or refused when another
    /// process locked it first.
    #[test]
    fn the_lock_follows_the_file_through_saves_and_renames() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        let mut first = FileLock::acquire(&file, Path::new("hosts.yaml")).unwrap();
        let side = dir.path().join("new");
        std::fs::write(&side, "a: 2\n").unwrap();
        let new = File::open(&side).unwrap();
        new.lock().unwrap();
        std::fs::rename(&side, &file).unwrap();
        first.hold(new);
        assert!(FileLock::acquire(&file, Path::new("hosts.yaml")).is_err());
        // An editor's rename: nothing holds the new file until the holder follows it.
        std::fs::write(&side, "a: 3\n").unwrap();
        std::fs::rename(&side, &file).unwrap();
        first.follow().unwrap();
        assert!(FileLock::acquire(&file, Path::new("hosts.yaml")).is_err());
        std::fs::write(&side, "a: 4\n").unwrap();
        std::fs::rename(&side, &file).unwrap();
        let thief = File::open(&file).unwrap();
        thief.lock().unwrap();
        let err = first.follow().unwrap_err();
        assert_eq!(err.exit_code(), 3, "{err}");
    }
}
