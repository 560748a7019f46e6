//! Crash-safe replacement of a file's content.
//!
//! [`write_atomic`] writes a temporary file in the same directory, flushes it to disk and
//! renames it over the target, so readers (and a crash) see either the old or the new
//! content, never a mix. What this means for the replaced file:
//!
//! * its permission bits are kept (a new file gets `0644`); its owner and group are kept when
//!   the process may set them (i.e. when running as the owner or as root), best effort;
//! * it gets a new inode: hard links to the old file keep the old content;
//! * a symlink at `path` itself would be replaced by a regular file. bmhctl therefore resolves
//!   the user's path once when loading ([`std::fs::canonicalize`]) and writes the link's
//!   target, so a symlinked host file stays a symlink and the file it points to gets the
//!   change. This is deliberate: the user's link is part of their setup (e.g. a checkout
//!   elsewhere), and the target is the file they mean.
//!
//! The temporary file is never left behind: it is removed on every error path.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Mode of a file that did not exist before.
const NEW_FILE_MODE: u32 = 0o644;

/// Removes the temporary file unless disarmed.
struct TempGuard {
    path: Option<PathBuf>,
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Replace the content of `path` with `bytes` atomically (see the module docs).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_mode(path, bytes, None)
}

/// [`write_atomic`], the result getting permission bits `mode` whatever the replaced file had
/// (the local store writes Secrets `0600`). The content is never readable with other bits: the
/// temporary file is created `0600`.
pub fn write_atomic_mode(path: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
    write_atomic_with(path, mode, |f| f.write_all(bytes))
}

/// [`write_atomic_mode`] with the content written by `write` (buffered), so that a large
/// content need not be built in memory first.
pub fn write_atomic_with(
    path: &Path,
    mode: Option<u32>,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    write_atomic_if(path, mode, write, || Ok(true)).map(|_| ())
}

/// [`write_atomic_with`], asking `may_replace` once the temporary file is on disk, right before
/// the rename: when it says no, the temporary file is removed, `path` is left alone and the
/// result is `Ok(false)`. The check runs after the slow part (writing, fsync), so the window in
/// which a concurrent edit of `path` can be overwritten is as short as a rename.
pub fn write_atomic_if(
    path: &Path,
    mode: Option<u32>,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    may_replace: impl FnOnce() -> io::Result<bool>,
) -> io::Result<bool> {
    write_atomic_file_if(
        path,
        mode,
        |file| {
            let mut out = io::BufWriter::with_capacity(64 << 10, file);
            write(&mut out)?;
            out.flush()
        },
        may_replace,
    )
}

/// [`write_atomic_if`] with the content written by `write` straight to the temporary file,
/// unbuffered: for a content already in memory, in pieces ([`Gather`]).
pub fn write_atomic_file_if(
    path: &Path,
    mode: Option<u32>,
    write: impl FnOnce(&File) -> io::Result<()>,
    may_replace: impl FnOnce() -> io::Result<bool>,
) -> io::Result<bool> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?
        .to_string_lossy()
        .into_owned();
    let old = match std::fs::metadata(path) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };

    let (file, tmp) = create_temp(dir, &name)?;
    let mut guard = TempGuard {
        path: Some(tmp.clone()),
    };
    write(&file)?;
    set_metadata(&file, old.as_ref(), mode)?;
    file.sync_all()?;
    drop(file);
    if !may_replace()? {
        return Ok(false);
    }
    std::fs::rename(&tmp, path)?;
    guard.path = None;
    sync_dir(dir)?;
    Ok(true)
}

/// Writes a content given in many pieces to a file, a buffer at a time. The pieces of a
/// host file or a sidecar are small (a field, a line): copied into the buffer, they cost less
/// than handed to the kernel one by one (`writev` of them measured slower).
pub struct Gather<'f> {
    out: io::BufWriter<&'f File>,
    /// The first error met: the pieces after it are dropped, and [`finish`](Self::finish)
    /// returns it.
    error: Option<io::Error>,
}

impl<'f> Gather<'f> {
    pub fn new(file: &'f File) -> Self {
        Gather {
            out: io::BufWriter::with_capacity(64 << 10, file),
            error: None,
        }
    }

    /// Writes `piece` after the pieces before it.
    pub fn push(&mut self, piece: &[u8]) {
        if self.error.is_none()
            && let Err(e) = self.out.write_all(piece)
        {
            self.error = Some(e);
        }
    }

    /// Writes what is left, or returns the first error met.
    pub fn finish(mut self) -> io::Result<()> {
        if let Some(e) = self.error {
            return Err(e);
        }
        self.out.flush()
    }
}

/// The target name of a temporary file of [`write_atomic`] (`.<target>.<pid>.<random>.tmp`)
/// whose writer is no longer running, or `None` (not such a file, or the writer may still run).
/// Only where `/proc` tells which processes run.
pub fn stale_temp_target(name: &str) -> Option<&str> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let mut parts = rest.rsplitn(3, '.');
    let (_random, pid, target) = (parts.next()?, parts.next()?, parts.next()?);
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let proc = Path::new("/proc");
    let dead = proc.join("self").exists()
        && pid != std::process::id().to_string()
        && !proc.join(pid).exists();
    dead.then_some(target)
}

/// Removes the temporary files a killed writer left in `dir` for `target` (every target when
/// `None`). Readers never see them; this only tidies. Best effort.
pub fn remove_stale_temps(dir: &Path, target: Option<&str>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(t) = stale_temp_target(&name)
            && target.is_none_or(|want| want == t)
            && e.file_type().is_ok_and(|ft| ft.is_file())
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Create a new, uniquely named temporary file next to the target (`O_CREAT|O_EXCL`).
fn create_temp(dir: &Path, name: &str) -> io::Result<(File, PathBuf)> {
    let pid = std::process::id();
    let mut last = None;
    for _ in 0..16 {
        let tmp = dir.join(format!(".{name}.{pid}.{:016x}.tmp", fastrand::u64(..)));
        let mut opts = OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        match opts.open(&tmp) {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("cannot create a temporary file")))
}

#[cfg(unix)]
fn set_metadata(
    file: &File,
    old: Option<&std::fs::Metadata>,
    forced: Option<u32>,
) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let mode = forced.unwrap_or_else(|| old.map_or(NEW_FILE_MODE, |m| m.mode() & 0o7777));
    if let Some(m) = old {
        let ours = file.metadata()?;
        if ours.uid() != m.uid() || ours.gid() != m.gid() {
            // Best effort: only root (or the owner, for the group) may do this.
            let _ = std::os::unix::fs::fchown(file, Some(m.uid()), Some(m.gid()));
        }
    }
    // After chown, which may clear set-id bits.
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_metadata(
    file: &File,
    old: Option<&std::fs::Metadata>,
    _forced: Option<u32>,
) -> io::Result<()> {
    if let Some(m) = old {
        file.set_permissions(m.permissions())?;
    }
    Ok(())
}

/// Make the rename durable.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_refused_replacement_leaves_the_target_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("hosts.yaml");
        std::fs::write(&p, "old\n").unwrap();
        // The check runs with the new content already on disk, beside the target.
        let replaced = write_atomic_if(
            &p,
            None,
            |f| f.write_all(b"new\n"),
            || {
                assert_eq!(names(dir.path()).len(), 2);
                std::fs::write(&p, "edited\n")?;
                Ok(false)
            },
        )
        .unwrap();
        assert!(!replaced);
        assert_eq!(std::fs::read(&p).unwrap(), b"edited\n");
        assert_eq!(names(dir.path()), ["hosts.yaml"]);
    }

    #[test]
    fn new_file_gets_0644() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new.yaml");
        write_atomic(&p, b"a: 1\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"a: 1\n");
        assert_eq!(mode(&p), 0o644);
        assert_eq!(names(dir.path()), ["new.yaml"]);
    }

    #[test]
    fn keeps_mode_of_replaced_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("hosts.yaml");
        std::fs::write(&p, "old\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&p, b"new\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new\n");
        assert_eq!(mode(&p), 0o600);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&p, b"newer\n").unwrap();
        assert_eq!(mode(&p), 0o640);
        assert_eq!(names(dir.path()), ["hosts.yaml"]);
    }

    #[test]
    fn no_temp_file_left_on_error() {
        let dir = tempfile::tempdir().unwrap();
        // Renaming a file over a non-empty directory fails after the temp file was written.
        let target = dir.path().join("busy");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("x"), "x").unwrap();
        assert!(write_atomic(&target, b"data").is_err());
        assert_eq!(names(dir.path()), ["busy"]);
        // Missing directory: nothing created anywhere.
        assert!(write_atomic(&dir.path().join("nope/f.yaml"), b"data").is_err());
        assert_eq!(names(dir.path()), ["busy"]);
    }

    /// Pieces gathered over several buffers (empty ones among them) make the file's content,
    /// in order; a file that cannot be written gives the error at the end, nothing replaced.
    #[test]
    fn gathered_pieces_are_the_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hosts.yaml");
        std::fs::write(&path, "old\n").unwrap();
        let pieces: Vec<String> = (0..30_007)
            .map(|i| {
                if i % 5 == 0 {
                    String::new()
                } else {
                    format!("{i},")
                }
            })
            .collect();
        let written = write_atomic_file_if(
            &path,
            None,
            |file| {
                let mut out = Gather::new(file);
                pieces.iter().for_each(|p| out.push(p.as_bytes()));
                out.finish()
            },
            || Ok(true),
        )
        .unwrap();
        assert!(written);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), pieces.concat());
        let read_only = std::fs::File::open(&path).unwrap();
        let mut out = Gather::new(&read_only);
        out.push(b"x");
        assert!(out.finish().is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), pieces.concat());
    }
}
