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

pub(super) fn read_text(
    real: &Path,
    label: &Path,
    errors: &mut Vec<Diagnostic>,
) -> Result<Option<String>, Error> {
    let bytes = std::fs::read(real).map_err(|e| Error::io(label, e))?;
    match String::from_utf8(bytes) {
        Ok(t) => Ok(Some(t)),
        Err(_) => {
            errors.push(Diagnostic::new("not UTF-8 text").in_file(label));
            Ok(None)
        }
    }
}
