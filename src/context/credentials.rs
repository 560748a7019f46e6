//! A context's Ironic credentials file (YAML or a Secret), readable by its owner only.

use crate::error::{Error, Result};
use base64::Engine as _;
use serde_json::Value;
use std::path::Path;

/// HTTP basic credentials. The password is kept out of `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub username: String,
    password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

impl Credentials {
    pub fn password(&self) -> &str {
        &self.password
    }
}

/// Reads `path`, refusing a file group or others may read; errors never show a value.
pub fn read_credentials(path: &Path) -> Result<Credentials> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    check_mode(path, &meta)?;
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let refused = |why: String| {
        Error::Usage(format!(
            "{}: credentials file: {why} (want `username:` and `password:`, or a Secret with them)",
            path.display()
        ))
    };
    // The parser's message could quote the text: only its kind is shown.
    let doc: Value =
        serde_saphyr::from_str(&text).map_err(|_| refused("not a YAML mapping".to_string()))?;
    let field = |name: &str| -> std::result::Result<String, String> {
        let is_secret = doc.get("kind").and_then(Value::as_str) == Some("Secret");
        if !is_secret {
            return match doc.get(name) {
                Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
                Some(_) => Err(format!("{name} must be a non-empty string")),
                None => Err(format!("no {name}")),
            };
        }
        if let Some(Value::String(s)) = doc.get("stringData").and_then(|d| d.get(name)) {
            return Ok(s.trim().to_string());
        }
        match doc.get("data").and_then(|d| d.get(name)) {
            Some(Value::String(b64)) => base64::engine::general_purpose::STANDARD
                .decode(b64.trim())
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .map(|s| s.trim().to_string())
                .ok_or_else(|| format!("data.{name} is not base64 of UTF-8 text")),
            _ => Err(format!(
                "the Secret has no data.{name} or stringData.{name}"
            )),
        }
    };
    let username = field("username").map_err(refused)?;
    let password = field("password").map_err(refused)?;
    if username.is_empty() || password.is_empty() {
        return Err(refused("empty username or password".to_string()));
    }
    Ok(Credentials { username, password })
}

#[cfg(unix)]
fn check_mode(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(Error::Usage(format!(
            "credentials file {} is readable by others (mode {mode:04o}): refused; run `chmod 600 {}`",
            path.display(),
            path.display()
        )));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_mode(_path: &Path, _meta: &std::fs::Metadata) -> Result<()> {
    Ok(())
}

#[cfg(test)]
impl Credentials {
    pub fn new(username: impl Into<String>, password: impl Into<String>) -> Self {
        Credentials {
            username: username.into(),
            password: password.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn file(text: &str, mode: u32) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("creds.yaml");
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        (dir, p)
    }

    #[test]
    fn plain_files_and_secrets_are_read() {
        let (_d, p) = file("username: admin\npassword: s3cret\n", 0o600);
        assert_eq!(
            read_credentials(&p).unwrap(),
            Credentials::new("admin", "s3cret")
        );
        let (_d, p) = file(
            "apiVersion: v1\nkind: Secret\nmetadata: {name: ironic}\ndata:\n  username: YWRtaW4=\n  password: czNjcmV0\n",
            0o400,
        );
        assert_eq!(
            read_credentials(&p).unwrap(),
            Credentials::new("admin", "s3cret")
        );
    }

    #[test]
    fn a_file_others_can_read_is_refused_with_the_fix() {
        let (_d, p) = file("username: admin\npassword: s3cret\n", 0o644);
        let e = read_credentials(&p).unwrap_err().to_string();
        assert!(e.contains("mode 0644"), "{e}");
        assert!(e.contains(&format!("chmod 600 {}", p.display())), "{e}");
        assert!(!e.contains("s3cret"), "{e}");
    }

    #[test]
    fn a_missing_field_is_named_and_no_value_shown() {
        let (_d, p) = file("username: admin\npasswd: s3cret\n", 0o600);
        let e = read_credentials(&p).unwrap_err().to_string();
        assert!(e.contains("no password"), "{e}");
        assert!(!e.contains("s3cret"), "{e}");
        assert!(
            !format!("{:?}", Credentials::new("a", "s3cret")).contains("s3cret"),
            "Debug hides the password"
        );
    }
}
