//! A read-only Ironic client for `import`: the CLI never links the ironic plugin (it loads
//! the `.so`), so listing nodes has its own few lines here. It reads the same settings as the
//! plugin: `IRONIC_ENDPOINT` (with `user:password@` as HTTP basic auth), the auth files under
//! `METAL3_AUTH_ROOT_DIR`, `IRONIC_CACERT_FILE`, the client certificate and `IRONIC_INSECURE`.

use crate::error::{Error, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The API version asked for: the lowest BMO accepts, which has every field import reads.
const API_VERSION: &str = "1.89";
const DEFAULT_AUTH_ROOT: &str = "/opt/metal3/auth";
const DEFAULT_CACERT_FILE: &str = "/opt/metal3/certs/ca/tls.crt";
const DEFAULT_CLIENT_CERT_FILE: &str = "/opt/metal3/certs/client/tls.crt";
const DEFAULT_CLIENT_KEY_FILE: &str = "/opt/metal3/certs/client/tls.key";

pub struct IronicReader {
    http: reqwest::blocking::Client,
    /// `scheme://host:port/.../v1/`, without credentials: what messages show.
    root: String,
    basic: Option<(String, String)>,
}

/// A setting: the context's, else the process environment's; blank is unset.
fn setting(context: &BTreeMap<String, String>, k: &str) -> Option<String> {
    context
        .get(k)
        .cloned()
        .or_else(|| std::env::var(k).ok())
        .filter(|v| !v.trim().is_empty())
}

fn usage(msg: impl Into<String>) -> Error {
    Error::Usage(msg.into())
}

impl IronicReader {
    /// From the settings of `context` (the variables of the context the command runs in) and
    /// the environment.
    pub fn from_env(context: &BTreeMap<String, String>) -> Result<IronicReader> {
        let env = |k: &str| setting(context, k);
        let raw = env("IRONIC_ENDPOINT").ok_or_else(|| {
            usage("IRONIC_ENDPOINT is not set: import --from-ironic reads the Ironic it names (or the context's)")
        })?;
        let (scheme, rest) = raw
            .trim()
            .split_once("://")
            .filter(|(s, _)| matches!(*s, "http" | "https"))
            .ok_or_else(|| usage("IRONIC_ENDPOINT must start with http:// or https://"))?;
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, host) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        if host.is_empty() {
            return Err(usage("IRONIC_ENDPOINT has no host"));
        }
        let path = path.trim_end_matches('/');
        let path = path
            .strip_suffix("v1")
            .unwrap_or(path)
            .trim_end_matches('/');
        let root = if path.is_empty() {
            format!("{scheme}://{host}/v1/")
        } else {
            format!("{scheme}://{host}/{path}/v1/")
        };
        let basic = match userinfo {
            Some(u) => {
                let (user, pass) = u.split_once(':').unwrap_or((u, ""));
                Some((percent_decode(user), percent_decode(pass)))
            }
            None => auth_root(Path::new(
                &env("METAL3_AUTH_ROOT_DIR").unwrap_or_else(|| DEFAULT_AUTH_ROOT.into()),
            ))?,
        };
        let existing = |var: &str, default: &str| {
            let p = PathBuf::from(env(var).unwrap_or_else(|| default.to_string()));
            p.exists().then_some(p)
        };
        let timeout = Duration::from_secs(30);
        let mut builder = reqwest::blocking::Client::builder().timeout(timeout);
        if let Some(ca) = existing("IRONIC_CACERT_FILE", DEFAULT_CACERT_FILE) {
            let pem = std::fs::read(&ca).map_err(|e| Error::io(&ca, e))?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| usage(format!("{}: not a PEM CA bundle: {e}", ca.display())))?;
            builder = builder.tls_built_in_root_certs(false);
            for c in certs {
                builder = builder.add_root_certificate(c);
            }
        }
        if let (Some(cert), Some(key)) = (
            existing("IRONIC_CLIENT_CERT_FILE", DEFAULT_CLIENT_CERT_FILE),
            existing("IRONIC_CLIENT_PRIVATE_KEY_FILE", DEFAULT_CLIENT_KEY_FILE),
        ) {
            let mut pem = std::fs::read(&cert).map_err(|e| Error::io(&cert, e))?;
            pem.extend(std::fs::read(&key).map_err(|e| Error::io(&key, e))?);
            let id = reqwest::Identity::from_pem(&pem).map_err(|e| {
                usage(format!(
                    "{}: not a client certificate and key: {e}",
                    cert.display()
                ))
            })?;
            builder = builder.identity(id);
        }
        if env("IRONIC_INSECURE").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            builder = builder.danger_accept_invalid_certs(true);
        }
        let http = builder
            .build()
            .map_err(|e| Error::internal("cannot build the HTTP client", e))?;
        Ok(IronicReader { http, root, basic })
    }

    /// Every item of a listing (`nodes?...` → its `key` array), following `next`.
    pub fn list(&self, first: &str, key: &str) -> Result<Vec<Value>> {
        let mut url = format!("{}{first}", self.root);
        let mut items = Vec::new();
        loop {
            let body = self.get(&url)?;
            if let Some(Value::Array(a)) = body.get(key) {
                items.extend(a.iter().cloned());
            }
            match body.get("next").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => url = next.to_string(),
                _ => return Ok(items),
            }
        }
    }

    fn get(&self, url: &str) -> Result<Value> {
        let mut req = self
            .http
            .get(url)
            .header("X-OpenStack-Ironic-API-Version", API_VERSION)
            .header("Accept", "application/json");
        if let Some((u, p)) = &self.basic {
            req = req.basic_auth(u, Some(p));
        }
        // Messages show the path, never the credentials (they are not in `url`).
        let shown = url.split('?').next().unwrap_or(url);
        let resp = req.send().map_err(|e| {
            Error::io(
                format!("GET {shown}"),
                std::io::Error::other(without_url(&e)),
            )
        })?;
        let status = resp.status();
        let text = resp.text().unwrap_or_default();
        if !status.is_success() {
            let msg = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| {
                    v.pointer("/error_message")
                        .and_then(Value::as_str)
                        .and_then(|m| serde_json::from_str::<Value>(m).ok())
                        .and_then(|m| {
                            m.get("faultstring")
                                .and_then(Value::as_str)
                                .map(String::from)
                        })
                })
                .unwrap_or_else(|| text.chars().take(200).collect());
            return Err(usage(format!(
                "GET {shown}: Ironic answered {status}: {msg}"
            )));
        }
        serde_json::from_str(&text)
            .map_err(|e| usage(format!("GET {shown}: not JSON from Ironic: {e}")))
    }
}

/// reqwest's error text without the URL it repeats (the caller names it).
fn without_url(e: &reqwest::Error) -> String {
    let mut s = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else {
        "request failed"
    }
    .to_string();
    let mut src = std::error::Error::source(e);
    while let Some(c) = src {
        s.push_str(&format!(": {c}"));
        src = c.source();
    }
    s
}

/// BMO's auth files: `<root>/ironic/username` and `password`, when both exist.
fn auth_root(root: &Path) -> Result<Option<(String, String)>> {
    let dir = root.join("ironic");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).map(|s| s.trim().to_string());
    match (read("username"), read("password")) {
        (Ok(u), Ok(p)) if !u.is_empty() && !p.is_empty() => Ok(Some((u, p))),
        _ => Ok(None),
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Some(v) = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
