//! bmhctl's hidden bookkeeping beside a host file.
//!
//! The sidecar of `dir/hosts.yaml` is `dir/.bmhctl/hosts.yaml.state.json`:
//!
//! ```json
//! {"version": 1, "file": "hosts.yaml", "hosts": {"default/host-0": { ...Bookkeeping... }}}
//! ```
//!
//! It holds what Kubernetes would keep in the object's metadata for BMO (uid, generation,
//! finalizers, ...; see [`Bookkeeping`]) and the host's last events (at most
//! [`crate::record::EVENTS_KEPT`], which `describe -f` shows), keyed by `namespace/name`. `dir/hosts.yaml` is the
//! resolved path of the user's file (symlinks followed), so every link to one file shares one
//! sidecar. A missing sidecar is an empty one; one that can't be read or parsed is bad input
//! whose message says it may be deleted to start over.

use crate::diagnostic::Diagnostic;
use crate::error::Error;
use crate::persist::atomic::write_atomic_with;
use crate::record::Bookkeeping;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The hidden directory beside a host file holding its sidecar and lock.
pub const STATE_DIR: &str = ".bmhctl";

/// The sidecar format version written and understood.
pub const VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
struct SidecarFile {
    version: u32,
    #[serde(default)]
    file: String,
    #[serde(default)]
    hosts: BTreeMap<String, Bookkeeping>,
}

/// The sidecar of one host file: the entries as read, and as they should be on disk.
#[derive(Debug)]
pub struct Sidecar {
    path: PathBuf,
    file_name: String,
    exists: bool,
    /// The entries as read (for loading the hosts; dropped by [`Sidecar::forget_read`]).
    entries: BTreeMap<String, Bookkeeping>,
    /// Each entry's JSON as it should be saved: a save is a concatenation, and a change is
    /// found by comparing text (no second typed copy of every host's bookkeeping is kept).
    encoded: BTreeMap<String, String>,
    /// The entries differ from what is on disk. Tracked on every change rather than found by
    /// comparing, which would cost a deep comparison of every entry at each commit.
    dirty: bool,
}

impl Sidecar {
    /// Path of the sidecar of `file` (which should be the resolved path of the host file).
    pub fn path_for(file: &Path) -> PathBuf {
        let dir = file.parent().unwrap_or(Path::new(""));
        dir.join(STATE_DIR)
            .join(format!("{}.state.json", file_name(file)))
    }

    /// Read the sidecar of `file`; a missing one is empty.
    pub fn load(file: &Path) -> Result<Sidecar, Error> {
        let path = Self::path_for(file);
        let mut sc = Sidecar {
            file_name: file_name(file),
            path,
            exists: false,
            entries: BTreeMap::new(),
            encoded: BTreeMap::new(),
            dirty: false,
        };
        let bytes = match std::fs::read(&sc.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(sc),
            Err(e) => return Err(sc.corrupt(&e.to_string())),
        };
        let parsed: SidecarFile =
            serde_json::from_slice(&bytes).map_err(|e| sc.corrupt(&e.to_string()))?;
        if parsed.version != VERSION {
            return Err(sc.corrupt(&format!(
                "unsupported version {} (this bmhctl understands {VERSION})",
                parsed.version
            )));
        }
        sc.exists = true;
        sc.encoded = parsed
            .hosts
            .iter()
            .map(|(k, b)| (k.clone(), encode(b)))
            .collect();
        sc.entries = parsed.hosts;
        Ok(sc)
    }

    fn corrupt(&self, why: &str) -> Error {
        Error::invalid(
            Diagnostic::new(format!(
                "cannot read bmhctl's bookkeeping for {}: {why}; the file may be deleted to \
                 start over (its hosts then get new uids and generations)",
                self.file_name
            ))
            .in_file(&self.path),
        )
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entry of `key` (`namespace/name`) as read.
    pub fn get(&self, key: &str) -> Option<&Bookkeeping> {
        self.entries.get(key)
    }

    /// Drops the entries as read, once the hosts are loaded (what is saved is kept).
    pub fn forget_read(&mut self) {
        self.entries = BTreeMap::new();
    }

    /// Set (`Some`) or remove (`None`) the entry of `key`.
    pub fn set(&mut self, key: &str, book: Option<&Bookkeeping>) {
        self.set_encoded(key, book.map(encode));
    }

    /// [`set`](Self::set) with the entry already serialised by [`encode`] (which a caller
    /// can do before taking a lock the sidecar is under). An entry equal to the saved one is
    /// not a change.
    pub fn set_encoded(&mut self, key: &str, json: Option<String>) {
        match json {
            Some(j) => {
                if self.encoded.get(key) != Some(&j) {
                    self.encoded.insert(key.to_string(), j);
                    self.dirty = true;
                }
            }
            None => {
                self.entries.remove(key);
                if self.encoded.remove(key).is_some() {
                    self.dirty = true;
                }
            }
        }
    }

    /// Keep only entries whose key is in `keys` (the hosts in the file); the others are
    /// dropped on the next save.
    pub fn keep_only(&mut self, keys: BTreeSet<String>) {
        let before = self.encoded.len();
        self.entries.retain(|k, _| keys.contains(k));
        self.encoded.retain(|k, _| keys.contains(k));
        if self.encoded.len() != before {
            self.dirty = true;
        }
    }

    /// Whether [`save`](Self::save) would write anything.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Write the sidecar atomically if it changed; returns whether it was written. Creates
    /// the `.bmhctl` directory if needed.
    pub fn save(&mut self) -> Result<bool, Error> {
        if !self.is_dirty() {
            return Ok(false);
        }
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let header = serde_json::json!({"version": VERSION, "file": self.file_name});
        let header = header.to_string();
        // Written as it is produced: the whole sidecar is tens of MB for a file of many hosts.
        write_atomic_with(&self.path, None, |out| {
            // `{"file":..,"version":1` + `,"hosts":{...}}`
            out.write_all(&header.as_bytes()[..header.len() - 1])?;
            out.write_all(b",\"hosts\":{")?;
            for (n, (key, json)) in self.encoded.iter().enumerate() {
                out.write_all(if n > 0 { b",\n" } else { b"\n" })?;
                serde_json::to_writer(&mut *out, key)?;
                out.write_all(b":")?;
                out.write_all(json.as_bytes())?;
            }
            out.write_all(b"}}\n")
        })
        .map_err(|e| Error::io(&self.path, e))?;
        self.exists = true;
        self.dirty = false;
        Ok(true)
    }
}

/// One entry's JSON, as the sidecar keeps it.
pub fn encode(book: &Bookkeeping) -> String {
    let mut json = serde_json::to_string(book).expect("bookkeeping serializes");
    // Kept until the host's next save: the room left by the buffer's doubling (up to half of
    // it) is given back.
    json.shrink_to_fit();
    json
}

fn file_name(file: &Path) -> String {
    file.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book(uid: &str, generation: i64) -> Bookkeeping {
        Bookkeeping {
            uid: uid.into(),
            generation,
            spec_hash: "abc".into(),
            spec_snapshot: Some(std::sync::Arc::new(
                crate::persist::bookkeeping::SpecSnapshot::of(&serde_json::json!({"online": true})),
            )),
            finalizers: vec!["baremetalhost.metal3.io".into()],
            ..Default::default()
        }
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts.yaml");
        let mut sc = Sidecar::load(&file).unwrap();
        assert_eq!(sc.path(), dir.path().join(".bmhctl/hosts.yaml.state.json"));
        assert!(!sc.is_dirty());
        assert!(!sc.save().unwrap());
        assert!(!dir.path().join(".bmhctl").exists());

        sc.set("default/host-0", Some(&book("u0", 1)));
        sc.set("ns/host-1", Some(&book("u1", 3)));
        assert!(sc.is_dirty());
        assert!(sc.save().unwrap());
        assert!(!sc.is_dirty());

        let text = std::fs::read_to_string(sc.path()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["version"], 1);
        assert_eq!(v["file"], "hosts.yaml");
        assert_eq!(v["hosts"]["ns/host-1"]["generation"], 3);
        assert_eq!(v["hosts"]["default/host-0"]["uid"], "u0");

        let mut again = Sidecar::load(&file).unwrap();
        assert_eq!(again.get("default/host-0"), Some(&book("u0", 1)));
        assert_eq!(again.get("ns/host-1"), Some(&book("u1", 3)));
        assert!(!again.is_dirty());
        // Setting the same value is not a change.
        again.set("ns/host-1", Some(&book("u1", 3)));
        assert!(!again.is_dirty());
        // Entries of hosts no longer in the file are dropped on save.
        again.keep_only(["ns/host-1".to_string()].into());
        assert!(again.is_dirty());
        assert!(again.save().unwrap());
        let last = Sidecar::load(&file).unwrap();
        assert_eq!(last.get("default/host-0"), None);
        assert_eq!(last.get("ns/host-1"), Some(&book("u1", 3)));
        // Removing an entry.
        let mut sc = Sidecar::load(&file).unwrap();
        sc.set("ns/host-1", None);
        assert!(sc.save().unwrap());
        assert!(Sidecar::load(&file).unwrap().get("ns/host-1").is_none());
    }

    #[test]
    fn corrupt_sidecar_is_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts.yaml");
        let path = Sidecar::path_for(&file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        for content in ["{not json", "{\"version\": 7, \"hosts\": {}}"] {
            std::fs::write(&path, content).unwrap();
            let err = Sidecar::load(&file).unwrap_err();
            let Error::Invalid(ds) = err else {
                panic!("{err:?}")
            };
            let msg = ds.to_string();
            assert!(
                msg.starts_with(&format!("{}: cannot read", path.display())),
                "{msg}"
            );
            assert!(msg.contains("may be deleted to start over"), "{msg}");
        }
    }
}
