//! The files the paths given on the command line stand for: a file is itself; a directory
//! contributes every `*.yaml` / `*.yml` file directly inside it, sorted by name (hidden entries
//! and subdirectories skipped). Each comes as `(as shown, resolved)`: symlinks are resolved
//! once, and the resolved path is what is read, locked and written.

use crate::diagnostic::Diagnostic;
use crate::error::Error;
use std::path::{Path, PathBuf};

/// The files `paths` stand for, as [`super::inventory::load`] reads them: `(as shown, resolved)`. Paths that do
/// not exist are left out (the loader reports them).
pub fn input_files(paths: &[PathBuf]) -> Result<Vec<(PathBuf, PathBuf)>, Error> {
    expand(paths, &mut Vec::new())
}

/// The files the paths stand for: `(as shown, resolved)`.
pub(super) fn expand(
    paths: &[PathBuf],
    errors: &mut Vec<Diagnostic>,
) -> Result<Vec<(PathBuf, PathBuf)>, Error> {
    let mut out = Vec::new();
    for p in paths {
        let meta = match std::fs::metadata(p) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                errors.push(Diagnostic::new("no such file or directory").in_file(p));
                continue;
            }
            Err(e) => return Err(Error::io(p, e)),
        };
        if !meta.is_dir() {
            let real = std::fs::canonicalize(p).map_err(|e| Error::io(p, e))?;
            out.push((p.clone(), real));
            continue;
        }
        let mut names = Vec::new();
        for entry in std::fs::read_dir(p).map_err(|e| Error::io(p, e))? {
            let entry = entry.map_err(|e| Error::io(p, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if name.starts_with('.') || !(name.ends_with(".yaml") || name.ends_with(".yml")) {
                continue;
            }
            let path = entry.path();
            // Follows symlinks: a link to a file counts as a file; dangling links are skipped.
            if std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
                names.push(name.to_string());
            }
        }
        names.sort();
        for name in names {
            let label = p.join(&name);
            let real = std::fs::canonicalize(&label).map_err(|e| Error::io(&label, e))?;
            out.push((label, real));
        }
    }
    Ok(out)
}

/// The largest input file read, unless `BMHCTL_MAX_FILE_SIZE` (bytes) says otherwise: far above
/// any real inventory (10,000 provisioned hosts make about 31 MB), low enough that a wrong path
/// such as a device cannot eat the memory.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 512 * 1024 * 1024;

fn max_file_size() -> u64 {
    std::env::var("BMHCTL_MAX_FILE_SIZE")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .filter(|&n: &u64| n > 0)
        .unwrap_or(DEFAULT_MAX_FILE_SIZE)
}

/// The text of an input file; a file that is not a regular file, is over the size limit or is
/// not UTF-8 is reported in `errors` (bad input, nothing read) and gives `None`.
pub(super) fn read_text(
    real: &Path,
    label: &Path,
    errors: &mut Vec<Diagnostic>,
) -> Result<Option<String>, Error> {
    use std::io::Read;
    // Checked before opening: opening a FIFO blocks until something writes to it.
    let meta = std::fs::metadata(real).map_err(|e| Error::io(label, e))?;
    if !meta.is_file() {
        errors.push(
            Diagnostic::new("not a regular file (devices, FIFOs and sockets are not read)")
                .in_file(label),
        );
        return Ok(None);
    }
    let limit = max_file_size();
    let too_big = |errors: &mut Vec<Diagnostic>| {
        errors.push(
            Diagnostic::new(format!(
                "larger than {limit} bytes, the most bmhctl reads from one file (set \
                 BMHCTL_MAX_FILE_SIZE to read more)"
            ))
            .in_file(label),
        );
    };
    if meta.len() > limit {
        too_big(errors);
        return Ok(None);
    }
    let file = std::fs::File::open(real).map_err(|e| Error::io(label, e))?;
    // `take`: the file may grow between the check and the read.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(label, e))?;
    if bytes.len() as u64 > limit {
        too_big(errors);
        return Ok(None);
    }
    match String::from_utf8(bytes) {
        Ok(t) => Ok(Some(t)),
        Err(_) => {
            errors.push(Diagnostic::new("not UTF-8 text").in_file(label));
            Ok(None)
        }
    }
}
