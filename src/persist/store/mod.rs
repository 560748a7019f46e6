//! The local store: bmhctl's stand-in for the API server, a directory of YAML files.
//!
//! ```text
//! <store>/
//!   .lease                                  flock'd by the one controller (watch) of the store
//!   .locks/<resource>/<namespace>/<name>.lock   per-object write locks (short)
//!   baremetalhosts/<namespace>/<name>.yaml
//!   secrets/<namespace>/<name>.yaml         mode 0600
//!   hostfirmwaresettings/..., hostfirmwarecomponents/..., hardwaredata/...,
//!   hostupdatepolicies/...                  the other metal3.io kinds
//!   <plural>.<group>/<namespace>/<name>.yaml    any other kind (a plugin's companion objects)
//!   events/<namespace>/<name>.jsonl         a host's last [`EVENTS_KEPT`] events
//! ```
//!
//! Every file is a whole object whose `metadata.resourceVersion` writers check under its lock.
//! The store holds Secrets, so it is private (0700/0600, no symlinks followed).

pub mod apply_merge;
pub mod bmc_event_subscriptions;
pub mod events;
pub mod hosts;
pub mod object_file;
pub mod store_source;
pub mod watcher;

use crate::error::{Error, Result};
use crate::objects::{ObjectMap, ResolvedSecret, SECRET_API_VERSION, SECRET_KIND, TypedKey};
use crate::persist::atomic::{unless_missing, write_atomic_mode};
use bmh_api::ObjectKey;
use serde_json::{Map, Value};
use std::fs::{File, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use events::{EVENTS_KEPT, StoredEvent};
pub use object_file::BadObject;

/// The environment variable naming the store (as `--store` does).
pub const STORE_ENV: &str = "BMHCTL_STORE";

/// How long a writer waits for an object's lock before giving up.
const LOCK_WAIT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
}

/// One object as read: its content and its version.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stored {
    pub value: Value,
    /// `metadata.resourceVersion` (0 for an object written by hand without one).
    pub version: u64,
}

/// Every object of a kind that could be read, and those that could not (each for itself).
#[derive(Debug, Default)]
pub struct Listing<T = Stored> {
    pub objects: Vec<T>,
    pub bad: Vec<BadObject>,
}

/// What a write expects to find.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// No usable object: none, or one that cannot be read (a create, which replaces it).
    Absent,
    /// The object at this version.
    Version(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Created,
    Updated,
    Unchanged,
}

/// The default store: `store/` in the user's data directory.
pub fn default_root() -> Option<PathBuf> {
    directories::ProjectDirs::from("io", "metal3", "bmhctl").map(|d| d.data_dir().join("store"))
}

/// The store to use: `--store`/`BMHCTL_STORE` (clap reads both), else [`default_root`].
pub fn resolve_root(given: Option<&Path>) -> Result<PathBuf> {
    match given {
        Some(p) => Ok(p.to_path_buf()),
        None => default_root().ok_or_else(|| {
            Error::Usage(format!(
                "no home directory to put the store in: give --store DIR or set {STORE_ENV}"
            ))
        }),
    }
}

/// The directory of a kind: its resource name, with the group outside core and `metal3.io`.
pub fn resource_dir(api_version: &str, kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    let plural = if lower == "hardwaredata" {
        lower
    } else if let Some(stem) = lower.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'o', 'u'])
    {
        format!("{stem}ies")
    } else if lower.ends_with('s') || lower.ends_with('x') {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    };
    match api_version.rsplit_once('/') {
        None => plural,
        Some(("metal3.io", _)) => plural,
        Some((group, _)) => format!("{plural}.{group}"),
    }
}

/// Names must be usable as one path component (Kubernetes names always are).
pub fn storable_name(name: &str) -> bool {
    !(name.is_empty()
        || name.starts_with('.')
        || name.contains(['/', '\\', '\0'])
        || name.len() > 253)
}

/// An error unless `key`'s name (of a `kind`) and namespace can be stored.
fn check_key(kind: &str, key: &ObjectKey) -> Result<()> {
    for (what, name) in [(kind, &key.name), ("namespace", &key.namespace)] {
        if !storable_name(name) {
            return Err(Error::invalid(format!(
                "{what} {name:?} cannot be stored: not a valid object name"
            )));
        }
    }
    Ok(())
}

/// Creates `dir` and its missing parents with mode 0700 (the umask can only take bits away).
fn private_dirs(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io(dir, e))
}

/// Opens (creating, 0600) a lock or lease file of the store, never through a symlink.
fn open_private(path: &Path) -> Result<File> {
    crate::persist::files::lock::open_lock_file(path)
        .map(|(f, _)| f)
        .map_err(|e| crate::persist::files::lock::refused(path, e))
}

/// The name of user `uid`, when the user database has one.
fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0u8; 4096];
    let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is to a live buffer of the length given.
    let rc = unsafe {
        libc::getpwuid_r(
            uid,
            &mut pwd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut found,
        )
    };
    if rc != 0 || found.is_null() {
        return None;
    }
    // SAFETY: a successful getpwuid_r sets pw_name to a NUL-terminated string in `buf`.
    let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) };
    Some(name.to_string_lossy().into_owned())
}

/// Refuses a store that is not a directory, not ours (or root's), or that others may write to.
fn check_private(root: &Path) -> Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::metadata(root).map_err(|e| Error::io(root, e))?;
    let shown = root.display();
    if !meta.is_dir() {
        return Err(Error::Usage(format!(
            "the store {shown} is not a directory"
        )));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let owner = meta.uid();
    if owner != 0 && owner != me {
        let who = match user_name(owner) {
            Some(name) => format!("{name} (uid {owner})"),
            None => format!("uid {owner}"),
        };
        return Err(Error::Usage(format!(
            "the store {shown} is owned by {who}, neither root nor the current user (uid {me}); \
             it holds Secrets and decides what bmhctl drives: use a store of your own, or give \
             it to yourself with `chown -R {me} {shown}`"
        )));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o022 != 0 {
        let who = match (mode & 0o020 != 0, mode & 0o002 != 0) {
            (true, true) => "its group and others",
            (true, false) => "its group",
            _ => "others",
        };
        return Err(Error::Usage(format!(
            "the store {shown} may be written by {who} (mode {mode:03o}); it holds Secrets and \
             decides what bmhctl drives: fix it with `chmod 700 {shown}`"
        )));
    }
    Ok(())
}

impl Store {
    /// Opens the store at `root`, creating it (0700) if needed; one others may write is refused.
    pub fn open(root: impl Into<PathBuf>) -> Result<Store> {
        let root = root.into();
        if !root.exists() {
            private_dirs(&root)?;
            // Exactly 0700, even under an unusual umask that takes the owner's bits.
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| Error::io(&root, e))?;
        }
        check_private(&root)?;
        Ok(Store { root })
    }

    /// Opens an existing store: `None` when there is none; one others may write is refused.
    pub fn open_existing(root: impl Into<PathBuf>) -> Result<Option<Store>> {
        let root = root.into();
        if !root.is_dir() {
            return Ok(None);
        }
        check_private(&root)?;
        Ok(Some(Store { root }))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn path_of(&self, key: &TypedKey) -> PathBuf {
        let dir = resource_dir(&key.api_version, &key.kind);
        self.keyed_path(Path::new(&dir), &key.key, "yaml")
    }

    fn lock_path(&self, key: &TypedKey) -> PathBuf {
        let dir = Path::new(".locks").join(resource_dir(&key.api_version, &key.kind));
        self.keyed_path(&dir, &key.key, "lock")
    }

    /// `<root>/<dir>/<namespace>/<name>.<ext>`.
    fn keyed_path(&self, dir: &Path, key: &ObjectKey, ext: &str) -> PathBuf {
        self.root
            .join(dir)
            .join(&key.namespace)
            .join(format!("{}.{ext}", key.name))
    }

    /// Reads an object; `None` when absent.
    pub fn get(&self, key: &TypedKey) -> Result<Option<Stored>> {
        object_file::read(&self.path_of(key))
    }

    /// Reads an object as a writer replacing it does: an unreadable one counts as absent.
    pub fn get_replaceable(&self, key: &TypedKey) -> Result<Option<Stored>> {
        match self.get(key) {
            Err(Error::Invalid(_)) => Ok(None),
            other => other,
        }
    }

    /// Every object of a kind, sorted by namespace and name; those that cannot be read apart.
    pub fn list(&self, api_version: &str, kind: &str) -> Result<Listing> {
        let dir = self.root.join(resource_dir(api_version, kind));
        let mut out = Listing::default();
        for ns in sorted_entries(&dir)? {
            if !ns.is_dir() {
                continue;
            }
            for file in sorted_entries(&ns)? {
                if file.extension().is_some_and(|e| e == "yaml") && file.is_file() {
                    match object_file::read(&file) {
                        Ok(Some(s)) => out.objects.push(s),
                        // Removed since it was listed.
                        Ok(None) => {}
                        Err(error) => out.bad.push(BadObject {
                            key: object_file::Identity::of(&file).key,
                            path: file,
                            error,
                        }),
                    }
                }
            }
        }
        Ok(out)
    }

    /// The directories of the kinds present in the store.
    fn resource_dirs(&self) -> Result<Vec<PathBuf>> {
        Ok(sorted_entries(&self.root)?
            .into_iter()
            .filter(|p| {
                p.is_dir()
                    && p.file_name().is_some_and(|n| {
                        let n = n.to_string_lossy();
                        !n.starts_with('.') && n != "events"
                    })
            })
            .collect())
    }

    /// Writes `value` as the object `key` if its version is still `expect`.
    pub fn write(&self, key: &TypedKey, value: Value, expect: Expect) -> Result<Written> {
        let _lock = self.lock(key)?;
        let current = self.get_replaceable(key)?;
        match (&current, expect) {
            (None, Expect::Absent) => {}
            (Some(c), Expect::Version(v)) if c.version == v => {}
            (None, Expect::Version(_)) => {
                return Err(Error::Conflict(format!(
                    "{} {key}: the object was removed from the store meanwhile",
                    key.kind
                )));
            }
            (Some(c), _) => {
                return Err(Error::Conflict(format!(
                    "{} {key}: the object was changed in the store meanwhile (version {} is \
                     now {}); read it again",
                    key.kind,
                    match expect {
                        Expect::Absent => "none".to_string(),
                        Expect::Version(v) => v.to_string(),
                    },
                    c.version
                )));
            }
        }
        self.put_locked(key, value, current.as_ref())
    }

    /// Reads the object under its lock, lets `change` edit it, and writes the result.
    pub fn update(
        &self,
        key: &TypedKey,
        change: impl FnOnce(Option<&Value>) -> Result<Option<Value>>,
    ) -> Result<Written> {
        let _lock = self.lock(key)?;
        let current = self.get(key)?;
        match change(current.as_ref().map(|c| &c.value))? {
            None => Ok(Written::Unchanged),
            Some(v) => self.put_locked(key, v, current.as_ref()),
        }
    }

    /// Removes an object (absent already is fine).
    pub fn delete(&self, key: &TypedKey) -> Result<bool> {
        let _lock = self.lock(key)?;
        let path = self.path_of(key);
        let removed = unless_missing(std::fs::remove_file(&path));
        Ok(removed.map_err(|e| Error::io(&path, e))?.is_some())
    }

    fn put_locked(
        &self,
        key: &TypedKey,
        mut value: Value,
        current: Option<&Stored>,
    ) -> Result<Written> {
        check_key(&key.kind, &key.key)?;
        let version = current.map_or(0, |c| c.version);
        set_version(&mut value, version);
        if let Some(c) = current
            && without_version(&c.value) == without_version(&value)
        {
            return Ok(Written::Unchanged);
        }
        set_version(&mut value, version + 1);
        let text = serde_saphyr::to_string(&value)
            .map_err(|e| Error::internal(format!("{key}: cannot encode as YAML"), e))?;
        let path = self.path_of(key);
        let dir = path.parent().expect("an object path has a directory");
        private_dirs(dir)?;
        write_atomic_mode(&path, text.as_bytes(), Some(0o600)).map_err(|e| Error::io(&path, e))?;
        Ok(if current.is_some() {
            Written::Updated
        } else {
            Written::Created
        })
    }

    /// The short write lock of one object, waiting at most [`LOCK_WAIT`].
    fn lock(&self, key: &TypedKey) -> Result<File> {
        check_key(&key.kind, &key.key)?;
        let path = self.lock_path(key);
        let dir = path.parent().expect("a lock path has a directory");
        private_dirs(dir)?;
        let f = open_private(&path)?;
        let started = Instant::now();
        loop {
            match f.try_lock() {
                Ok(()) => return Ok(f),
                Err(TryLockError::WouldBlock) if started.elapsed() < LOCK_WAIT => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(Error::Conflict(format!(
                        "{} {}: its lock {} has been held for more than {}s",
                        key.kind,
                        key.key,
                        path.display(),
                        LOCK_WAIT.as_secs()
                    )));
                }
                Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
            }
        }
    }

    /// Removes the temporary files of atomic writes that a killed writer left behind.
    fn remove_stale_temps(&self) {
        let mut stack = vec![self.root.clone()];
        while let Some(dir) = stack.pop() {
            crate::persist::atomic::remove_stale_temps(&dir, None);
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) && e.file_name() != ".locks" {
                    stack.push(e.path());
                }
            }
        }
    }

    /// Takes the store's lease until the guard is dropped: one process drives the store's hosts.
    pub fn acquire_lease(&self) -> Result<Lease> {
        let path = self.root.join(".lease");
        let mut f = open_private(&path)?;
        match f.try_lock() {
            Ok(()) => {
                f.set_len(0).map_err(|e| Error::io(&path, e))?;
                writeln!(f, "{}", std::process::id()).map_err(|e| Error::io(&path, e))?;
                self.remove_stale_temps();
                Ok(Lease { _file: f, path })
            }
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = f.read_to_string(&mut holder);
                let holder = match holder.trim() {
                    "" => "another bmhctl process".to_string(),
                    pid => format!("bmhctl process {pid}"),
                };
                Err(Error::Conflict(format!(
                    "the store {} is already being driven by {holder} (lease {}); only one \
                     `bmhctl watch` may run on a store",
                    self.root.display(),
                    path.display()
                )))
            }
            Err(TryLockError::Error(e)) => Err(Error::io(&path, e)),
        }
    }

    /// Every Secret (decoded) and every object that is not a host or one of its own companions.
    pub fn object_map(&self) -> Result<ObjectMap> {
        self.object_map_after(None)
    }

    /// [`Self::object_map`], where a Secret readable in `before` and not now keeps its value there.
    pub fn object_map_after(&self, before: Option<&ObjectMap>) -> Result<ObjectMap> {
        let mut map = ObjectMap::default();
        let own = object_file::OWN_KINDS.map(|(a, k)| resource_dir(a, k));
        // An object that cannot be read is left out: a host needing it is a load error of its own.
        let secrets = self.list(SECRET_API_VERSION, SECRET_KIND)?;
        for s in secrets.objects {
            let key = object_key(&s.value);
            let data =
                object_file::secret_data(&self.path_of(&secret_key(&key)), "", &key, &s.value)?;
            map.insert_secret(ResolvedSecret::new(key, data));
        }
        for bad in &secrets.bad {
            if let Some(s) = before.and_then(|b| b.get_secret(&bad.key)) {
                map.insert_secret(ResolvedSecret::clone(s));
            }
        }
        for dir in self.resource_dirs()? {
            let name = dir.file_name().unwrap_or_default().to_string_lossy();
            if own.iter().any(|o| *o == name) {
                continue;
            }
            for ns in sorted_entries(&dir)? {
                for file in sorted_entries(&ns)? {
                    if file.extension().is_none_or(|e| e != "yaml") {
                        continue;
                    }
                    let Ok(Some(s)) = object_file::read(&file) else {
                        continue;
                    };
                    let av = s.value["apiVersion"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    let kind = s.value["kind"].as_str().unwrap_or_default().to_string();
                    map.insert_object(TypedKey::new(av, kind, object_key(&s.value)), s.value);
                }
            }
        }
        Ok(map)
    }
}

/// The store's lease; released when dropped (or when the process ends, however it ends).
#[derive(Debug)]
pub struct Lease {
    _file: File,
    path: PathBuf,
}

impl Lease {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

pub fn secret_key(key: &ObjectKey) -> TypedKey {
    TypedKey::new(SECRET_API_VERSION, SECRET_KIND, key.clone())
}

/// `namespace/name` of an object value (namespace defaulted).
pub fn object_key(value: &Value) -> ObjectKey {
    let m = &value["metadata"];
    let ns = m["namespace"]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or(bmh_api::DEFAULT_NAMESPACE);
    ObjectKey::new(ns, m["name"].as_str().unwrap_or_default())
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let rd = unless_missing(std::fs::read_dir(dir)).map_err(|e| Error::io(dir, e))?;
    let mut v: Vec<PathBuf> = rd
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    v.sort();
    Ok(v)
}

fn set_version(value: &mut Value, version: u64) {
    let Some(obj) = value.as_object_mut() else {
        return;
    };
    let meta = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(m) = meta.as_object_mut() {
        m.insert("resourceVersion".into(), Value::String(version.to_string()));
    }
}

fn without_version(value: &Value) -> Value {
    let mut v = value.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("resourceVersion");
    }
    v
}

#[cfg(test)]
mod tests;
