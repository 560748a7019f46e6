//! Crash-safe replacement of a file's content.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
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

/// A new temporary file beside `path` (removed on drop unless disarmed) and what a write needs.
struct Beside<'p> {
    dir: &'p Path,
    name: String,
    old: Option<std::fs::Metadata>,
    file: File,
    tmp: PathBuf,
    guard: TempGuard,
}

impl<'p> Beside<'p> {
    fn of(path: &'p Path) -> io::Result<Self> {
        let (dir, name) = dir_and_name(path)?;
        let old = unless_missing(std::fs::metadata(path))?;
        let (file, tmp) = create_temp(dir, &name)?;
        Ok(Beside {
            dir,
            name,
            old,
            file,
            guard: TempGuard {
                path: Some(tmp.clone()),
            },
            tmp,
        })
    }
}

/// `None` for a file or directory that does not exist.
pub fn unless_missing<T>(r: io::Result<T>) -> io::Result<Option<T>> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        r => r.map(Some),
    }
}

/// Replaces the content of `path` with `bytes` atomically, with permission bits `mode`.
pub fn write_atomic_mode(path: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
    write_atomic_with(path, mode, |f| f.write_all(bytes))
}

/// [`write_atomic_mode`] with the content written by `write` (buffered).
pub fn write_atomic_with(
    path: &Path,
    mode: Option<u32>,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let Beside {
        dir,
        old,
        file,
        tmp,
        mut guard,
        ..
    } = Beside::of(path)?;
    let mut out = io::BufWriter::with_capacity(64 << 10, &file);
    write(&mut out)?;
    out.flush()?;
    drop(out);
    set_metadata(&file, old.as_ref(), mode)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&tmp, path)?;
    guard.path = None;
    sync_dir(dir)
}

/// What [`replace_if_unchanged`] did.
#[derive(Debug)]
pub enum Replaced {
    /// The new content is at the path, and the file it replaced was checked after the swap.
    Checked { file: File },
    /// The new content is at the path by a plain rename: the replaced file was checked only before.
    Unchecked { file: File },
    /// Nothing was written: the file no longer held what the caller read (then swapped back).
    Changed,
    /// Nothing was written, and a second edit made in the swap's instant is kept beside the file.
    ChangedTwice { kept: PathBuf },
}

/// Replaces the content of `path` with what `write` writes, if it still holds what was read.
pub fn replace_if_unchanged(
    path: &Path,
    lock: bool,
    write: impl FnOnce(&File) -> io::Result<()>,
    is_as_read: impl Fn(&Path) -> io::Result<bool>,
    is_as_written: impl Fn(&Path) -> io::Result<bool>,
) -> io::Result<Replaced> {
    let Beside {
        dir,
        name,
        old,
        file,
        tmp,
        mut guard,
    } = Beside::of(path)?;
    write(&file)?;
    set_metadata(&file, old.as_ref(), None)?;
    file.sync_all()?;
    if lock {
        // Nobody else knows the temporary name yet: this never waits.
        file.lock()?;
    }
    if !as_read(&is_as_read, path)? {
        return Ok(Replaced::Changed);
    }
    match exchange(&tmp, path) {
        Ok(()) => {}
        Err(e) if exchange_unsupported(&e) => {
            std::fs::rename(&tmp, path)?;
            guard.path = None;
            sync_dir(dir)?;
            return Ok(Replaced::Unchecked { file });
        }
        Err(e) => return Err(e),
    }
    // `tmp` now names the file that was at `path`.
    if as_read(&is_as_read, &tmp)? {
        // The guard removes it: the old content, as read.
        drop(guard);
        sync_dir(dir)?;
        return Ok(Replaced::Checked { file });
    }
    // From here the temporary name holds the user's edit: it is never removed.
    guard.path = None;
    let kept = dir.join(format!(
        "{name}.edit-{}-{:08x}",
        std::process::id(),
        fastrand::u32(..)
    ));
    if let Err(e) = exchange(&tmp, path) {
        std::fs::rename(&tmp, &kept)?;
        return Err(io::Error::new(
            e.kind(),
            format!(
                "{e}: a file edited while bmhctl replaced it could not be put back; the edit is \
                 kept as {}",
                kept.display()
            ),
        ));
    }
    if is_as_written(&tmp)? {
        std::fs::remove_file(&tmp)?;
        return Ok(Replaced::Changed);
    }
    std::fs::rename(&tmp, &kept)?;
    sync_dir(dir)?;
    Ok(Replaced::ChangedTwice { kept })
}

/// `is_as_read` of `path`, a file that is gone counting as changed.
fn as_read(is_as_read: &impl Fn(&Path) -> io::Result<bool>, path: &Path) -> io::Result<bool> {
    match is_as_read(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        r => r,
    }
}

/// Exchanges the files named `a` and `b` atomically (both must exist).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let a = std::ffi::CString::new(a.as_os_str().as_bytes())?;
    let b = std::ffi::CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: two NUL-terminated paths that outlive the call.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    (r == 0).then_some(()).ok_or_else(io::Error::last_os_error)
}

#[cfg(not(target_os = "linux"))]
fn exchange(_a: &Path, _b: &Path) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Whether `exchange` failed because the system or filesystem cannot exchange names.
fn exchange_unsupported(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Unsupported
        || matches!(
            e.raw_os_error(),
            Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP)
        )
}

fn dir_and_name(path: &Path) -> io::Result<(&Path, String)> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?
        .to_string_lossy()
        .into_owned();
    Ok((dir, name))
}

/// Writes a content given in many pieces to a file, a buffer at a time.
pub struct Gather<'f> {
    out: io::BufWriter<&'f File>,
    /// The first error met: the pieces after it are dropped.
    error: Option<io::Error>,
}

impl<'f> Gather<'f> {
    pub fn new(file: &'f File) -> Self {
        Gather {
            out: io::BufWriter::with_capacity(64 << 10, file),
            error: None,
        }
    }

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

/// The target of a dead writer's temporary file of [`write_atomic`] (`.<target>.<pid>.<r>.tmp`).
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

/// Removes the temporary files a killed writer left in `dir` for `target` (`None`: any).
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
        opts.write(true).create_new(true).mode(0o600);
        match opts.open(&tmp) {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("cannot create a temporary file")))
}

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

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
        write_atomic_mode(path, bytes, None)
    }

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

    /// `replace_if_unchanged` with `new` as the content and `read` as what the caller read.
    fn replace(p: &Path, new: &str, read: &str, edit: impl Fn(usize, &Path)) -> Replaced {
        let calls = std::cell::Cell::new(0);
        replace_if_unchanged(
            p,
            true,
            |mut f| f.write_all(new.as_bytes()),
            |at| {
                let same = std::fs::read(at)? == read.as_bytes();
                calls.set(calls.get() + 1);
                // The edit lands right after the check: in the window the check leaves.
                edit(calls.get(), p);
                Ok(same)
            },
            |at| Ok(std::fs::read(at)? == new.as_bytes()),
        )
        .unwrap()
    }

    #[test]
    fn a_refused_replacement_leaves_the_target_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("hosts.yaml");
        std::fs::write(&p, "edited\n").unwrap();
        let r = replace(&p, "new\n", "old\n", |_, _| {});
        assert!(matches!(r, Replaced::Changed), "{r:?}");
        assert_eq!(std::fs::read(&p).unwrap(), b"edited\n");
        assert_eq!(names(dir.path()), ["hosts.yaml"]);
    }

    #[test]
    fn a_checked_replacement_leaves_the_new_content_locked_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("hosts.yaml");
        std::fs::write(&p, "old\n").unwrap();
        let r = replace(&p, "new\n", "old\n", |_, _| {});
        let Replaced::Checked { file } = r else {
            panic!("{r:?}")
        };
        assert_eq!(std::fs::read(&p).unwrap(), b"new\n");
        assert_eq!(names(dir.path()), ["hosts.yaml"]);
        // The handle is the file at the path, and holds its lock.
        let other = File::open(&p).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(file);
        other.try_lock().unwrap();
    }

    /// Every kind of edit landing between the check and the swap is kept: the swap is undone
    /// and the write refused, the edit's bytes at the path, no temporary file left.
    #[test]
    fn an_edit_between_the_check_and_the_swap_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("hosts.yaml");
        for trial in 0..100 {
            std::fs::write(&p, "a: 1\n").unwrap();
            let kind = trial % 3;
            let edited = match kind {
                0 => "a: 1\n# appended\n",
                1 => "a: 2\n",
                _ => "a: 1\nb: renamed over\n",
            };
            let r = replace(&p, "a: 1\nstatus: {}\n", "a: 1\n", |call, at| {
                if call != 1 {
                    return;
                }
                match kind {
                    0 => {
                        let mut f = OpenOptions::new().append(true).open(at).unwrap();
                        f.write_all(b"# appended\n").unwrap();
                    }
                    1 => {
                        let mut f = OpenOptions::new().write(true).open(at).unwrap();
                        f.write_all(b"a: 2\n").unwrap();
                    }
                    _ => {
                        let side = at.with_file_name("hosts.yaml~");
                        std::fs::write(&side, edited).unwrap();
                        std::fs::rename(&side, at).unwrap();
                    }
                }
            });
            assert!(matches!(r, Replaced::Changed), "trial {trial}: {r:?}");
            assert_eq!(
                std::fs::read_to_string(&p).unwrap(),
                edited,
                "trial {trial}"
            );
            assert_eq!(names(dir.path()), ["hosts.yaml"], "trial {trial}");
        }
    }

    /// An edit in the window that is met by a second edit of the new content while it was at the
    /// path: neither is lost, the second kept beside the file.
    #[test]
    fn a_second_edit_of_the_new_content_in_the_window_is_kept_beside() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("hosts.yaml");
        std::fs::write(&p, "a: 1\n").unwrap();
        let r = replace(&p, "a: 1\nstatus: {}\n", "a: 1\n", |call, at| match call {
            1 => std::fs::write(at, "a: first edit\n").unwrap(),
            // After the swap: `at` holds the new content.
            2 => {
                let mut f = OpenOptions::new().append(true).open(at).unwrap();
                f.write_all(b"# second edit\n").unwrap();
            }
            _ => {}
        });
        let Replaced::ChangedTwice { kept } = r else {
            panic!("{r:?}")
        };
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a: first edit\n");
        assert_eq!(
            std::fs::read_to_string(&kept).unwrap(),
            "a: 1\nstatus: {}\n# second edit\n"
        );
        assert_eq!(names(dir.path()).len(), 2);
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
        let r = replace_if_unchanged(
            &path,
            false,
            |file| {
                let mut out = Gather::new(file);
                pieces.iter().for_each(|p| out.push(p.as_bytes()));
                out.finish()
            },
            |_| Ok(true),
            |_| Ok(true),
        )
        .unwrap();
        let written = matches!(r, Replaced::Checked { .. });
        assert!(written);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), pieces.concat());
        let read_only = std::fs::File::open(&path).unwrap();
        let mut out = Gather::new(&read_only);
        out.push(b"x");
        assert!(out.finish().is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), pieces.concat());
    }
}
