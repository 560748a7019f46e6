//! Whether a plugin file may be loaded (it runs with bmhctl's rights): the directory is absolute,
//! it and the plugin are owned by root or the current user and writable by no one else, and the
//! plugin is a regular file or a symlink to one directly in the directory.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Why a plugin file or directory is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Untrusted {
    #[error(
        "PROVISIONER_PLUGIN_DIR must be an absolute path, not {0:?} (it would be resolved from \
         the working directory)"
    )]
    RelativeDir(PathBuf),
    #[error("{} is owned by uid {uid}, neither root nor the current user (uid {me})", path.display())]
    Owner { path: PathBuf, uid: u32, me: u32 },
    #[error(
        "{} is writable by {who} (mode {mode:04o}); make it writable by its owner only: chmod \
         go-w {}",
        path.display(),
        path.display()
    )]
    Writable {
        path: PathBuf,
        who: &'static str,
        mode: u32,
    },
    #[error("{} is a symlink to {}, outside the plugin directory {}", path.display(), target.display(), dir.display())]
    LinkOutside {
        path: PathBuf,
        target: PathBuf,
        dir: PathBuf,
    },
    #[error("{} is not a regular file", path.display())]
    NotAFile { path: PathBuf },
    #[error("{} is not a directory", path.display())]
    NotADir { path: PathBuf },
    #[error("cannot inspect {}: {cause}", path.display())]
    Unreadable { path: PathBuf, cause: String },
}

impl Untrusted {
    pub(super) fn unreadable(path: &Path, e: std::io::Error) -> Self {
        Untrusted::Unreadable {
            path: path.to_path_buf(),
            cause: e.to_string(),
        }
    }
}

/// The user bmhctl runs as (effective uid, the one whose rights a plugin gets).
fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Owner and mode of `meta` are safe: root or `me`, and no group or other write bit.
fn owned_safely(path: &Path, meta: &std::fs::Metadata, me: u32) -> Result<(), Untrusted> {
    let uid = meta.uid();
    if uid != 0 && uid != me {
        return Err(Untrusted::Owner {
            path: path.to_path_buf(),
            uid,
            me,
        });
    }
    let mode = meta.permissions().mode() & 0o7777;
    let who = match (mode & 0o020 != 0, mode & 0o002 != 0) {
        (true, true) => "group and others",
        (true, false) => "its group",
        (false, true) => "others",
        (false, false) => return Ok(()),
    };
    Err(Untrusted::Writable {
        path: path.to_path_buf(),
        who,
        mode,
    })
}

fn inspect(path: &Path, follow: bool) -> Result<Option<std::fs::Metadata>, Untrusted> {
    let meta = if follow {
        std::fs::metadata(path)
    } else {
        std::fs::symlink_metadata(path)
    };
    match meta {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Untrusted::unreadable(path, e)),
    }
}

/// The plugin directory is absolute and safely owned and moded (a missing one passes).
pub fn check_dir(dir: &Path) -> Result<(), Untrusted> {
    if !dir.is_absolute() {
        return Err(Untrusted::RelativeDir(dir.to_path_buf()));
    }
    let Some(meta) = inspect(dir, true)? else {
        return Ok(());
    };
    if !meta.is_dir() {
        return Err(Untrusted::NotADir {
            path: dir.to_path_buf(),
        });
    }
    owned_safely(dir, &meta, current_uid())
}

/// The plugin file `file` in `dir` may be loaded (a missing one passes: the loader says so).
pub fn check_file(dir: &Path, file: &Path) -> Result<(), Untrusted> {
    check_dir(dir)?;
    let me = current_uid();
    let Some(meta) = inspect(file, false)? else {
        return Ok(());
    };
    if meta.file_type().is_symlink() {
        let canonical_dir = dir
            .canonicalize()
            .map_err(|e| Untrusted::unreadable(dir, e))?;
        let target = file
            .canonicalize()
            .map_err(|e| Untrusted::unreadable(file, e))?;
        // Only to a file directly in the directory: subdirectories are not checked.
        if target.parent() != Some(canonical_dir.as_path()) {
            return Err(Untrusted::LinkOutside {
                path: file.to_path_buf(),
                target,
                dir: dir.to_path_buf(),
            });
        }
        let Some(target_meta) = inspect(&target, false)? else {
            return Ok(());
        };
        return regular_and_safe(&target, &target_meta, me);
    }
    regular_and_safe(file, &meta, me)
}

fn regular_and_safe(path: &Path, meta: &std::fs::Metadata, me: u32) -> Result<(), Untrusted> {
    if !meta.file_type().is_file() {
        return Err(Untrusted::NotAFile {
            path: path.to_path_buf(),
        });
    }
    owned_safely(path, meta, me)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A plugin directory (0755) holding `x-provisioner.so` (0755).
    fn plugin_dir() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("plugins");
        std::fs::create_dir(&dir).unwrap();
        chmod(&dir, 0o755);
        let file = dir.join("x-provisioner.so");
        std::fs::write(&file, b"\x7fELF").unwrap();
        chmod(&file, 0o755);
        (tmp, dir, file)
    }

    #[test]
    fn a_private_directory_and_file_are_trusted() {
        let (_tmp, dir, file) = plugin_dir();
        assert_eq!(check_file(&dir, &file), Ok(()));
    }

    #[test]
    fn a_relative_directory_is_refused() {
        let err = check_dir(Path::new("plugins")).unwrap_err();
        assert_eq!(err, Untrusted::RelativeDir("plugins".into()));
        assert!(
            err.to_string().contains("must be an absolute path"),
            "{err}"
        );
    }

    #[test]
    fn a_world_writable_directory_is_refused() {
        let (_tmp, dir, file) = plugin_dir();
        chmod(&dir, 0o777);
        let err = check_file(&dir, &file).unwrap_err();
        assert!(
            matches!(&err, Untrusted::Writable { path, who: "group and others", .. } if *path == dir),
            "{err:?}"
        );
        assert!(err.to_string().contains("chmod go-w"), "{err}");
    }

    #[test]
    fn a_group_or_world_writable_plugin_is_refused() {
        let (_tmp, dir, file) = plugin_dir();
        chmod(&file, 0o666);
        assert!(matches!(
            check_file(&dir, &file),
            Err(Untrusted::Writable {
                who: "group and others",
                ..
            })
        ));
        chmod(&file, 0o775);
        assert!(matches!(
            check_file(&dir, &file),
            Err(Untrusted::Writable {
                who: "its group",
                ..
            })
        ));
    }

    #[test]
    fn a_symlink_inside_the_directory_is_followed_and_checked() {
        let (_tmp, dir, file) = plugin_dir();
        let link = dir.join("y-provisioner.so");
        symlink("x-provisioner.so", &link).unwrap();
        assert_eq!(check_file(&dir, &link), Ok(()));
        chmod(&file, 0o646);
        assert!(matches!(
            check_file(&dir, &link),
            Err(Untrusted::Writable { who: "others", .. })
        ));
    }

    #[test]
    fn a_symlink_leaving_the_directory_is_refused() {
        let (tmp, dir, _file) = plugin_dir();
        let outside = tmp.path().join("evil.so");
        std::fs::write(&outside, b"\x7fELF").unwrap();
        chmod(&outside, 0o755);
        let link = dir.join("y-provisioner.so");
        symlink(&outside, &link).unwrap();
        let err = check_file(&dir, &link).unwrap_err();
        assert!(matches!(err, Untrusted::LinkOutside { .. }), "{err:?}");
        assert!(
            err.to_string().contains("outside the plugin directory"),
            "{err}"
        );
    }

    #[test]
    fn a_directory_named_as_plugin_is_not_a_file() {
        let (_tmp, dir, _file) = plugin_dir();
        let sub = dir.join("z-provisioner.so");
        std::fs::create_dir(&sub).unwrap();
        chmod(&sub, 0o755);
        assert!(matches!(
            check_file(&dir, &sub),
            Err(Untrusted::NotAFile { .. })
        ));
    }

    #[test]
    fn missing_files_and_directories_pass_so_the_loader_says_missing() {
        let (_tmp, dir, _file) = plugin_dir();
        assert_eq!(check_file(&dir, &dir.join("nope-provisioner.so")), Ok(()));
        let gone = dir.join("gone");
        assert_eq!(check_file(&gone, &gone.join("x-provisioner.so")), Ok(()));
    }

    #[test]
    fn a_file_of_another_user_is_refused() {
        // Only root can give a file away; elsewhere this case is covered by the owner rule's
        // own check below.
        let (_tmp, dir, file) = plugin_dir();
        if current_uid() == 0 {
            std::os::unix::fs::chown(&file, Some(4242), None).unwrap();
            let err = check_file(&dir, &file).unwrap_err();
            assert_eq!(
                err,
                Untrusted::Owner {
                    path: file.clone(),
                    uid: 4242,
                    me: 0
                }
            );
        } else {
            let meta = std::fs::metadata(&file).unwrap();
            let err = owned_safely(&file, &meta, current_uid() + 1).unwrap_err();
            assert!(matches!(err, Untrusted::Owner { .. }), "{err:?}");
        }
    }
}
