//! Named contexts of a config file (as kubeconfig), standing for environment variables.

mod credentials;

pub use credentials::{Credentials, read_credentials};

use crate::diagnostic::{Diagnostic, Position};
use crate::error::{Error, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The variable that names the config file instead of the platform's default (as KUBECONFIG).
pub const CONFIG_VAR: &str = "BMHCTL_CONFIG";
/// The variable that picks a context when `--context` is not given.
pub const CONTEXT_VAR: &str = "BMHCTL_CONTEXT";

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ConfigFile {
    /// kubeconfig's spelling.
    #[serde(rename = "current-context")]
    pub current_context: Option<String>,
    /// The spelling of earlier releases, still read (`current-context` wins).
    #[serde(rename = "currentContext")]
    pub old_current_context: Option<String>,
    pub contexts: Vec<Context>,
}

/// The key of the current context, as written.
const CURRENT_KEY: &str = "current-context";
const OLD_CURRENT_KEY: &str = "currentContext";

/// One context; relative paths are relative to the config file's directory.
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Context {
    pub name: String,
    /// `IRONIC_ENDPOINT`.
    pub ironic_endpoint: Option<String>,
    /// HTTP basic credentials for the endpoint (YAML or a Secret), mode 0600.
    pub credentials_file: Option<PathBuf>,
    /// `IRONIC_CACERT_FILE`.
    pub ca_file: Option<PathBuf>,
    /// `IRONIC_CLIENT_CERT_FILE`.
    pub client_cert_file: Option<PathBuf>,
    /// `IRONIC_CLIENT_PRIVATE_KEY_FILE`.
    pub client_key_file: Option<PathBuf>,
    /// `IRONIC_INSECURE`.
    pub insecure: Option<bool>,
    /// `DEPLOY_KERNEL_URL`.
    #[serde(rename = "deployKernelURL")]
    pub deploy_kernel_url: Option<String>,
    /// `DEPLOY_RAMDISK_URL`.
    #[serde(rename = "deployRamdiskURL")]
    pub deploy_ramdisk_url: Option<String>,
    /// `DEPLOY_ISO_URL`.
    #[serde(rename = "deployISOURL")]
    pub deploy_iso_url: Option<String>,
    /// `BMHCTL_PROVISIONER` (`--provisioner`).
    pub provisioner: Option<String>,
    /// `BMHCTL_STORE` (`--store`).
    pub store: Option<PathBuf>,
}

/// The config file read from `path` (an absent file is an empty config).
#[derive(Debug, Clone)]
pub struct Config {
    pub path: PathBuf,
    pub file: ConfigFile,
    /// The text as read (`None`: no file), so `use-context` can edit one line of it.
    pub text: Option<String>,
    /// The file names the current context as `currentContext`, as earlier releases did.
    pub old_spelling: bool,
}

/// `$BMHCTL_CONFIG`: the config file instead of the platform's default (as KUBECONFIG).
pub fn config_file() -> Option<PathBuf> {
    std::env::var_os(CONFIG_VAR).map(PathBuf::from)
}

/// Where the config file is: `$BMHCTL_CONFIG`, else `config.yaml` in the config directory.
pub fn config_path(from_env: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = from_env.filter(|p| !p.as_os_str().is_empty()) {
        return Ok(p.to_path_buf());
    }
    directories::ProjectDirs::from("io", "metal3", "bmhctl")
        .map(|d| d.config_dir().join("config.yaml"))
        .ok_or_else(|| {
            Error::Usage(format!(
                "no home directory to find the config file in: set {CONFIG_VAR}"
            ))
        })
}

impl Config {
    pub fn load(from_env: Option<&Path>) -> Result<Config> {
        Config::read(&config_path(from_env)?)
    }

    /// The config file at `path`, strictly parsed, problems refused with the file and line.
    pub fn read(path: &Path) -> Result<Config> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(path, e)),
        };
        let mut file: ConfigFile = match text.as_deref() {
            Some(t) if !t.trim().is_empty() => serde_saphyr::from_str(t)
                .map_err(|e| Error::invalid(Diagnostic::of_yaml(path, &e)))?,
            _ => ConfigFile::default(),
        };
        let old_spelling = file.old_current_context.is_some();
        if let Some(old) = file.old_current_context.take() {
            file.current_context.get_or_insert(old);
        }
        let config = Config {
            path: path.to_path_buf(),
            file,
            text,
            old_spelling,
        };
        config.check()?;
        Ok(config)
    }

    /// Refuses `file` as [`Config::read`] would refuse it once written.
    pub fn checked(&self, file: &ConfigFile) -> Result<()> {
        Config {
            path: self.path.clone(),
            file: file.clone(),
            text: None,
            old_spelling: false,
        }
        .check()
    }

    fn check(&self) -> Result<()> {
        let mut problems = Vec::new();
        for (i, c) in self.file.contexts.iter().enumerate() {
            if c.name.trim().is_empty() {
                problems.push(
                    Diagnostic::new("a context needs a name")
                        .at(self.position_of(&format!("contexts[{i}]")))
                        .field(format!("contexts[{i}].name")),
                );
            } else if self.file.contexts[..i].iter().any(|o| o.name == c.name) {
                problems.push(
                    Diagnostic::new(format!("context {:?} is defined twice", c.name))
                        .at(self.position_of(&c.name))
                        .field(format!("contexts[{i}].name")),
                );
            }
            if let Some(e) = &c.ironic_endpoint
                && let Err(why) = check_endpoint(e)
            {
                problems.push(
                    Diagnostic::new(why)
                        .at(self.position_of("ironicEndpoint"))
                        .object("Context", &c.name)
                        .field(format!("contexts[{i}].ironicEndpoint")),
                );
            }
        }
        if let Some(cur) = &self.file.current_context
            && !cur.is_empty()
            && self.context(cur).is_none()
        {
            let key = self.current_key();
            problems.push(
                Diagnostic::new(format!(
                    "{key} {cur:?} names no context of the file{}{}",
                    self.known_hint(),
                    self.did_you_mean(cur)
                ))
                .at(self.position_of(key))
                .field(key),
            );
        }
        Error::invalid_if_any(problems)
    }

    /// The first line mentioning `needle`, else the file.
    fn position_of(&self, needle: &str) -> Position {
        let line = self
            .text
            .as_deref()
            .and_then(|t| t.lines().position(|l| l.contains(needle)));
        match line {
            Some(n) => Position::new(&self.path, n + 1, 1),
            None => Position::file(&self.path),
        }
    }

    pub fn context(&self, name: &str) -> Option<&Context> {
        self.file.contexts.iter().find(|c| c.name == name)
    }

    /// The key naming the current context in the file's text (the old one if only it is there).
    fn current_key(&self) -> &'static str {
        let text = self.text.as_deref().unwrap_or("");
        if !text.lines().any(|l| l.starts_with(CURRENT_KEY))
            && text.lines().any(|l| l.starts_with(OLD_CURRENT_KEY))
        {
            OLD_CURRENT_KEY
        } else {
            CURRENT_KEY
        }
    }

    /// `; did you mean X?` for a context name the file lacks, when one is close.
    pub fn did_you_mean(&self, name: &str) -> String {
        crate::diagnostic::did_you_mean(name, self.file.contexts.iter().map(|c| c.name.as_str()))
            .map(|m| format!("; did you mean {m}?"))
            .unwrap_or_default()
    }

    /// The context `name`, which must exist (exit 2 naming the file, its contexts and the
    /// closest name).
    pub fn existing(&self, name: &str) -> Result<&Context> {
        self.context(name).ok_or_else(|| {
            Error::Usage(format!(
                "no context {name:?} in {}{}{}",
                self.path.display(),
                if self.text.is_none() {
                    " (the file does not exist)".to_string()
                } else {
                    self.known_hint()
                },
                self.did_you_mean(name)
            ))
        })
    }

    fn known_hint(&self) -> String {
        if self.file.contexts.is_empty() {
            format!(" (it defines no context: {})", self.path.display())
        } else {
            let names: Vec<&str> = self.file.contexts.iter().map(|c| c.name.as_str()).collect();
            format!("; contexts: {}", names.join(", "))
        }
    }

    /// The context a command runs in: `wanted`, else the file's current one, else none.
    pub fn select(&self, wanted: Option<&str>) -> Result<Option<&Context>> {
        match wanted.filter(|w| !w.is_empty()) {
            Some(name) => self.existing(name).map(Some),
            None => Ok(self
                .file
                .current_context
                .as_deref()
                .filter(|c| !c.is_empty())
                .and_then(|c| self.context(c))),
        }
    }

    /// A path of the file, relative to its directory, with `~/` as the home directory.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        if let Ok(rest) = p.strip_prefix("~")
            && let Some(home) = directories::BaseDirs::new()
        {
            return home.home_dir().join(rest);
        }
        // An absolute path replaces the directory.
        self.path.parent().unwrap_or(Path::new(".")).join(p)
    }

    /// The `(variable, value)` pairs `ctx` stands for, less those `set` says the user set.
    pub fn environment(
        &self,
        ctx: &Context,
        set: impl Fn(&str) -> bool,
    ) -> Result<Vec<(&'static str, String)>> {
        let creds = |file: &PathBuf| read_credentials(&self.resolve(file));
        let endpoint = match (&ctx.ironic_endpoint, &ctx.credentials_file) {
            // The user's own auth root wins over the context's credentials.
            (Some(e), Some(file)) if !set("METAL3_AUTH_ROOT_DIR") => {
                Some(with_userinfo(e, &creds(file)?))
            }
            // A misplaced credentials file is refused whatever the endpoint.
            (None, Some(file)) => creds(file).map(|_| None)?,
            (e, _) => e.clone(),
        };
        let path = |p: &Option<PathBuf>| Some(self.resolve(p.as_ref()?).to_string_lossy().into());
        let vars = [
            ("IRONIC_ENDPOINT", endpoint),
            ("IRONIC_CACERT_FILE", path(&ctx.ca_file)),
            ("IRONIC_CLIENT_CERT_FILE", path(&ctx.client_cert_file)),
            ("IRONIC_CLIENT_PRIVATE_KEY_FILE", path(&ctx.client_key_file)),
            ("IRONIC_INSECURE", ctx.insecure.map(|b| b.to_string())),
            ("DEPLOY_KERNEL_URL", ctx.deploy_kernel_url.clone()),
            ("DEPLOY_RAMDISK_URL", ctx.deploy_ramdisk_url.clone()),
            ("DEPLOY_ISO_URL", ctx.deploy_iso_url.clone()),
            ("BMHCTL_PROVISIONER", ctx.provisioner.clone()),
            ("BMHCTL_STORE", path(&ctx.store)),
        ];
        let unset = vars.into_iter().filter(|(k, _)| !set(k));
        Ok(unset.filter_map(|(k, v)| Some((k, v?))).collect())
    }

    /// Writes the file with `current-context` set to `name`, everything else kept (the old
    /// `currentContext` line is replaced by it).
    pub fn use_context(&self, name: &str) -> Result<()> {
        self.existing(name)?;
        let text = self.text.clone().unwrap_or_default();
        let line = format!("{CURRENT_KEY}: {}", yaml_scalar(name));
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let is_current = |l: &String| {
            l.starts_with(&format!("{CURRENT_KEY}:"))
                || l.starts_with(&format!("{OLD_CURRENT_KEY}:"))
        };
        match lines.iter().position(is_current) {
            Some(i) => lines[i] = line,
            None => {
                // After a leading `---` or comments, before the first key.
                let at = lines
                    .iter()
                    .position(|l| !(l.starts_with('#') || l.trim().is_empty() || l == "---"))
                    .unwrap_or(lines.len());
                lines.insert(at, line);
            }
        }
        lines.retain(|l| !l.starts_with(&format!("{OLD_CURRENT_KEY}:")));
        write_atomically(&self.path, &(lines.join("\n") + "\n"))
    }

    /// Writes `file` in place of the file's contents: its leading comments are kept, any other
    /// comment is not (said on stderr).
    pub fn save(&self, file: &ConfigFile) -> Result<()> {
        let text = self.text.as_deref().unwrap_or("");
        let header: Vec<&str> = text
            .lines()
            .take_while(|l| l.starts_with('#') || l.trim().is_empty())
            .collect();
        let dropped = text.lines().skip(header.len()).any(|l| {
            let t = l.trim_start();
            t.starts_with('#') || l.contains(" #")
        });
        if dropped {
            crate::eprintln_quiet!(
                "note: {}: comments below the first key are not kept when bmhctl rewrites the file",
                self.path.display()
            );
        }
        let mut out: String = header.iter().map(|l| format!("{l}\n")).collect();
        out.push_str(&file.to_yaml(false));
        write_atomically(&self.path, &out)
    }
}

impl ConfigFile {
    /// The file as YAML, in its fields' order; with `redact`, passwords in URLs as `REDACTED`.
    pub fn to_yaml(&self, redact: bool) -> String {
        let mut out = String::new();
        if let Some(c) = &self.current_context {
            out.push_str(&format!("{CURRENT_KEY}: {}\n", yaml_scalar(c)));
        }
        if self.contexts.is_empty() {
            out.push_str("contexts: []\n");
        } else {
            out.push_str("contexts:\n");
        }
        for c in &self.contexts {
            let url = |u: &Option<String>| {
                u.as_deref()
                    .map(|u| if redact { redacted(u) } else { u.to_string() })
            };
            let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
            let fields = [
                ("ironicEndpoint", url(&c.ironic_endpoint)),
                ("credentialsFile", path(&c.credentials_file)),
                ("caFile", path(&c.ca_file)),
                ("clientCertFile", path(&c.client_cert_file)),
                ("clientKeyFile", path(&c.client_key_file)),
                ("insecure", c.insecure.map(|b| b.to_string())),
                ("deployKernelURL", url(&c.deploy_kernel_url)),
                ("deployRamdiskURL", url(&c.deploy_ramdisk_url)),
                ("deployISOURL", url(&c.deploy_iso_url)),
                ("provisioner", c.provisioner.clone()),
                ("store", path(&c.store)),
            ];
            out.push_str(&format!("- name: {}\n", yaml_scalar(&c.name)));
            for (key, value) in fields {
                if let Some(v) = value {
                    let v = if key == "insecure" {
                        v
                    } else {
                        yaml_scalar(&v)
                    };
                    out.push_str(&format!("  {key}: {v}\n"));
                }
            }
        }
        out
    }
}

/// `url` with the password of its userinfo (if any) as `REDACTED`.
fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => {
            let user = rest[..at].split(':').next().unwrap_or("");
            format!("{scheme}://{user}:REDACTED{}", &rest[at..])
        }
        None => url.to_string(),
    }
}

impl Config {
    /// Says (once a process) that the file still spells `currentContext` as earlier releases
    /// did; by the commands, not by shell completion.
    pub fn note_old_spelling(&self) {
        static ONCE: std::sync::Once = std::sync::Once::new();
        if self.old_spelling {
            ONCE.call_once(|| {
                crate::eprintln_quiet!(
                    "note: {}: `{OLD_CURRENT_KEY}` is read as `{CURRENT_KEY}` (kubeconfig's \
                     spelling): rename it (bmhctl config use-context does)",
                    self.path.display()
                );
            });
        }
    }
}

/// An endpoint the plugin will take: http(s), a host, no credentials of its own.
fn check_endpoint(e: &str) -> std::result::Result<(), String> {
    let rest = e
        .strip_prefix("http://")
        .or_else(|| e.strip_prefix("https://"))
        .ok_or_else(|| format!("ironicEndpoint {e:?} must start with http:// or https://"))?;
    let authority = rest.split('/').next().unwrap_or("");
    if authority.contains('@') {
        return Err(
            "ironicEndpoint must not hold credentials: put them in a credentialsFile (mode 0600)"
                .to_string(),
        );
    }
    if authority.is_empty() || e.chars().any(char::is_whitespace) {
        return Err(format!("ironicEndpoint {e:?} is not a URL with a host"));
    }
    Ok(())
}

/// `endpoint` with `user:password@`, percent-encoded (the plugin takes them as basic auth).
fn with_userinfo(endpoint: &str, creds: &Credentials) -> String {
    let (scheme, rest) = endpoint.split_once("://").unwrap_or(("http", endpoint));
    format!(
        "{scheme}://{}:{}@{rest}",
        percent_encode(&creds.username),
        percent_encode(creds.password())
    )
}

fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A value as a YAML scalar: plain when it reads back as the same string, else double-quoted.
fn yaml_scalar(s: &str) -> String {
    let safe = |c: char| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                '-' | '_' | '.' | '/' | ':' | '~' | '@' | '%' | '+' | '=' | '?' | '&'
            )
    };
    let plain = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '/' || c == '.' || c == '~')
        && s.chars().all(safe)
        && s != "~"
        && !s.ends_with(':')
        && s.parse::<f64>().is_err()
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | ".inf" | ".nan"
        );
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_default()
    }
}

/// Replaces the file atomically; a new file is made private (0600), an existing one keeps its
/// mode.
fn write_atomically(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let new = !path.exists();
    crate::persist::atomic::write_atomic_mode(path, text.as_bytes(), new.then_some(0o600))
        .map_err(|e| Error::io(path, e))
}

/// The variables of the selected context (none without one), less those `set` says are set.
pub fn selected_environment(
    wanted: Option<&str>,
    config_file: Option<&Path>,
    set: impl Fn(&str) -> bool,
) -> Result<BTreeMap<String, String>> {
    let wanted = wanted.filter(|w| !w.is_empty());
    let path = match config_path(config_file) {
        Ok(p) => p,
        // No home directory: no config file, which matters only to one who names a context.
        Err(e) if wanted.is_some() => return Err(e),
        Err(_) => return Ok(BTreeMap::new()),
    };
    // A default config file this user may not open (sudo -u) matters only when naming a context.
    let explicit = config_file.is_some_and(|p| !p.as_os_str().is_empty());
    if wanted.is_none()
        && !explicit
        && std::fs::File::open(&path)
            .is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
    {
        return Ok(BTreeMap::new());
    }
    let config = Config::read(&path)?;
    config.note_old_spelling();
    let Some(ctx) = config.select(wanted)? else {
        return Ok(BTreeMap::new());
    };
    let vars = config.environment(ctx, set)?;
    Ok(vars.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> (tempfile::TempDir, Result<Config>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        std::fs::write(&path, text).unwrap();
        let c = Config::read(&path);
        (dir, c)
    }

    #[test]
    fn unknown_fields_are_refused_with_the_line() {
        let (_d, c) = config("contexts:\n- name: lab\n  ironicEndpont: http://x\n");
        let e = c.unwrap_err().to_string();
        assert!(e.contains("config.yaml:3:"), "{e}");
        assert!(e.contains("ironicEndpont"), "{e}");
    }

    #[test]
    fn a_current_context_must_exist_and_names_must_be_unique() {
        let (_d, c) = config("current-context: prod\ncontexts:\n- name: lab\n- name: lab\n");
        let e = c.unwrap_err().to_string();
        assert!(e.contains("config.yaml:1:1: current-context"), "{e}");
        assert!(e.contains("\"prod\" names no context"), "{e}");
        assert!(e.contains("context \"lab\" is defined twice"), "{e}");
    }

    #[test]
    fn endpoints_with_credentials_are_refused() {
        let (_d, c) = config("contexts:\n- name: lab\n  ironicEndpoint: http://u:p@h:6385\n");
        let e = c.unwrap_err().to_string();
        assert!(e.contains("config.yaml:3:1: Context lab"), "{e}");
        assert!(!e.contains("u:p"), "the credentials are not repeated: {e}");
    }

    #[test]
    fn the_environment_wins_over_the_context_variable_by_variable() {
        let (_d, c) = config(
            "contexts:\n- name: lab\n  ironicEndpoint: http://h:6385\n  deployISOURL: http://i/x.iso\n  store: st\n  provisioner: fixture\n",
        );
        let c = c.unwrap();
        let ctx = c.context("lab").unwrap();
        let vars = c.environment(ctx, |k| k == "DEPLOY_ISO_URL").unwrap();
        let names: Vec<&str> = vars.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            names,
            ["IRONIC_ENDPOINT", "BMHCTL_PROVISIONER", "BMHCTL_STORE"]
        );
        // A relative store is relative to the config file.
        assert_eq!(
            PathBuf::from(&vars[2].1),
            c.path.parent().unwrap().join("st")
        );
    }

    #[test]
    fn use_context_edits_one_line_and_keeps_comments() {
        let (_d, c) = config("# mine\ncontexts:\n- name: a\n- name: b\n");
        let c = c.unwrap();
        c.use_context("b").unwrap();
        let text = std::fs::read_to_string(&c.path).unwrap();
        assert_eq!(
            text,
            "# mine\ncurrent-context: b\ncontexts:\n- name: a\n- name: b\n"
        );
        let c = Config::read(&c.path).unwrap();
        c.use_context("a").unwrap();
        let text = std::fs::read_to_string(&c.path).unwrap();
        assert!(text.contains("current-context: a\n"), "{text}");
        assert!(c.use_context("nope").is_err());
    }

    #[test]
    fn a_written_file_reads_back_the_same_whatever_the_values() {
        let file = ConfigFile {
            current_context: Some("123".into()),
            contexts: ["123", "true", "a: b", "~", "#x", "lab"]
                .iter()
                .map(|n| Context {
                    name: n.to_string(),
                    store: Some(PathBuf::from("/srv/my store #1")),
                    ironic_endpoint: Some("http://h:6385/v1?a=b".into()),
                    insecure: Some(false),
                    ..Context::default()
                })
                .collect(),
            ..ConfigFile::default()
        };
        let (_d, c) = config(&file.to_yaml(false));
        let read = c.unwrap().file;
        assert_eq!(read.current_context, file.current_context);
        assert_eq!(read.contexts, file.contexts);
    }

    #[test]
    fn view_redacts_passwords_in_urls_only() {
        assert_eq!(redacted("http://u:pw@h/x"), "http://u:REDACTED@h/x");
        assert_eq!(redacted("http://h/a@b"), "http://h/a@b");
        assert_eq!(redacted("http://h:6385"), "http://h:6385");
    }

    #[test]
    fn userinfo_is_percent_encoded() {
        let creds = Credentials::new("ad min", "p@ss:w/rd");
        assert_eq!(
            with_userinfo("https://h:6385/v1", &creds),
            "https://ad%20min:p%40ss%3Aw%2Frd@h:6385/v1"
        );
    }
}
