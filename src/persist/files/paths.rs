//! The files the paths given stand for: a file, or a directory's `*.yaml` / `*.yml` files.

use crate::diagnostic::Diagnostic;
use crate::error::Error;
use std::path::{Path, PathBuf};

/// The files `paths` stand for, as [`super::inventory::load_with`] reads them: `(as shown, resolved)`.
pub fn input_files(paths: &[PathBuf]) -> Result<Vec<(PathBuf, PathBuf)>, Error> {
    // Quiet: the loader has already said what it skipped.
    expand_with(paths, &mut Vec::new(), false)
}

/// The files the paths stand for: `(as shown, resolved)`.
pub(super) fn expand(
    paths: &[PathBuf],
    errors: &mut Vec<Diagnostic>,
) -> Result<Vec<(PathBuf, PathBuf)>, Error> {
    expand_with(paths, errors, true)
}

fn expand_with(
    paths: &[PathBuf],
    errors: &mut Vec<Diagnostic>,
    warn: bool,
) -> Result<Vec<(PathBuf, PathBuf)>, Error> {
    let skipped = |path: &Path, why: &str| {
        if warn {
            skipped(path, why);
        }
    };
    let mut out = Vec::new();
    for p in paths {
        if is_stdin(p) {
            out.push((PathBuf::from(STDIN_LABEL), p.clone()));
            continue;
        }
        let meta = match std::fs::metadata(p) {
            Ok(m) => m,
            Err(e) => {
                errors.push(Diagnostic::new(unusable(&e)).in_file(p));
                continue;
            }
        };
        if !meta.is_dir() {
            match std::fs::canonicalize(p) {
                Ok(real) => out.push((p.clone(), real)),
                Err(e) => errors.push(Diagnostic::new(unusable(&e)).in_file(p)),
            }
            continue;
        }
        let entries = match std::fs::read_dir(p) {
            Ok(rd) => rd,
            Err(e) => {
                errors.push(Diagnostic::new(unusable(&e)).in_file(p));
                continue;
            }
        };
        let mut names = Vec::new();
        let mut passed_over: Vec<(PathBuf, String)> = Vec::new();
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    errors.push(Diagnostic::new(unusable(&e)).in_file(p));
                    break;
                }
            };
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if name.starts_with('.') || !(name.ends_with(".yaml") || name.ends_with(".yml")) {
                continue;
            }
            let path = entry.path();
            // Follows symlinks: a link to a file counts as a file.
            match std::fs::metadata(&path) {
                Ok(m) if m.is_file() => names.push(name.to_string()),
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    passed_over.push((path, "not a regular file (a FIFO, socket or device)".into()))
                }
                Err(e) => passed_over.push((path, unusable(&e))),
            }
        }
        passed_over.sort();
        for (path, why) in passed_over {
            skipped(&path, &why);
        }
        names.sort();
        for name in names {
            let label = p.join(&name);
            match std::fs::canonicalize(&label) {
                Ok(real) => out.push((label, real)),
                Err(e) => skipped(&label, &unusable(&e)),
            }
        }
    }
    Ok(out)
}

/// "no BareMetalHost in ...", naming the paths given, with what is odd about each (an empty file,
/// a directory holding no YAML file), the first few of many.
pub fn no_hosts_in(paths: &[PathBuf]) -> String {
    const SHOWN: usize = 5;
    let mut names: Vec<String> = paths.iter().take(SHOWN).map(|p| described(p)).collect();
    if paths.len() > SHOWN {
        names.push(format!("... ({} paths in all)", paths.len()));
    }
    format!("no BareMetalHost in {}", names.join(", "))
}

fn described(p: &Path) -> String {
    if is_stdin(p) {
        return STDIN_LABEL.to_string();
    }
    let shown = p.display();
    if p.is_dir() {
        let yaml =
            expand_with(&[p.to_path_buf()], &mut Vec::new(), false).map_or(0, |files| files.len());
        return match yaml {
            0 => format!("{shown} (a directory holding no *.yaml or *.yml file)"),
            1 => format!("{shown} (a directory: its one YAML file holds none)"),
            n => format!("{shown} (a directory: none of its {n} YAML files holds one)"),
        };
    }
    // Only read again on this error's path: to tell an empty file from one of other kinds.
    let blank = std::fs::read_to_string(p).is_ok_and(|t| {
        t.lines().all(|l| {
            let l = l.trim();
            l.is_empty() || l.starts_with('#') || l == "---" || l == "..."
        })
    });
    if blank {
        format!("{shown} (empty, or only comments)")
    } else {
        shown.to_string()
    }
}

/// How `-f -` (standard input) is named in messages.
pub const STDIN_LABEL: &str = "<stdin>";

/// Whether `path` is `-`: standard input, read once, never written back.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Standard input, read to its end the first time (`-f -` may be loaded more than once).
fn stdin_text() -> &'static std::io::Result<String> {
    static TEXT: std::sync::OnceLock<std::io::Result<String>> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        use std::io::Read;
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map(|_| text)
    })
}

/// The text of an input file as given (`-` is standard input), for those that read it again.
pub fn read_to_string(real: &Path) -> std::io::Result<String> {
    if is_stdin(real) {
        return match stdin_text() {
            Ok(t) => Ok(t.clone()),
            Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
        };
    }
    std::fs::read_to_string(real)
}

/// Why a path cannot be read, as the user should read it.
fn unusable(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOENT) => "no such file or directory".into(),
        Some(libc::ELOOP) => "a symlink loop (too many levels of symbolic links)".into(),
        Some(libc::EACCES) => "cannot be read: permission denied".into(),
        _ => format!("cannot be read: {e}"),
    }
}

/// A directory entry not read: said on stderr, so that a host file never goes missing quietly.
fn skipped(path: &Path, why: &str) {
    crate::eprintln_quiet!("warning: skipped {}: {why}", path.display());
}

/// The largest input file read, unless `BMHCTL_MAX_FILE_SIZE` (bytes) says otherwise: far above
/// any real inventory, low enough that a wrong path such as a device cannot eat the memory.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 512 * 1024 * 1024;

/// The text of an input file, or `None` with its problem in `errors`.
pub(super) fn read_text(
    real: &Path,
    label: &Path,
    limit: u64,
    errors: &mut Vec<Diagnostic>,
) -> Option<String> {
    read_checked(real, limit)
        .map_err(|why| errors.push(Diagnostic::new(why).in_file(label)))
        .ok()
}

/// [`read_text`], a problem as its message.
fn read_checked(real: &Path, limit: u64) -> Result<String, String> {
    use std::io::Read;
    if is_stdin(real) {
        return match stdin_text() {
            Ok(t) => Ok(t.clone()),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Err("not UTF-8 text".into()),
            Err(e) => Err(format!("cannot be read: {e}")),
        };
    }
    // Checked before opening: opening a FIFO blocks until something writes to it.
    let meta = std::fs::metadata(real).map_err(|e| unusable(&e))?;
    if !meta.is_file() {
        return Err("not a regular file (devices, FIFOs and sockets are not read)".into());
    }
    let too_big = || {
        format!(
            "larger than {limit} bytes, the most bmhctl reads from one file (set \
             BMHCTL_MAX_FILE_SIZE to read more)"
        )
    };
    if meta.len() > limit {
        return Err(too_big());
    }
    let file = std::fs::File::open(real).map_err(|e| unusable(&e))?;
    // `take`: the file may grow between the check and the read.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unusable(&e))?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".into())
}
