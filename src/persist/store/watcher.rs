//! Noticing changes to the store's files, for `bmhctl watch` (Kubernetes' watch, by polling).

use super::object_file::{self, Identity};
use super::{Store, object_file::HARDWARE_DATA_KIND, object_key, resource_dir, sorted_entries};
use crate::error::Result;
use crate::persist::files::host_file::Stamp;
use crate::persist::{RETRY_ANNOTATION, SourceChange};
use bmh_api::ObjectKey;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

/// Annotations the controller removes itself: their removal is not a change to react to.
const CONSUMED: [&str; 5] = [
    bmh_api::annotations::REBOOT_PREFIX,
    bmh_api::annotations::INSPECT,
    bmh_api::annotations::HARDWARE_DETAILS,
    bmh_api::annotations::STATUS,
    RETRY_ANNOTATION,
];

struct Seen {
    stamp: Stamp,
    /// The object's resourceVersion when read.
    version: u64,
    /// The fingerprint of what users own, and the consumable annotations present.
    print: u64,
    consumable: Vec<(String, String)>,
    /// The file could not be read.
    bad: bool,
    secrets: Vec<ObjectKey>,
}

/// Remembers the store's files between scans.
pub struct StoreWatcher {
    store: Store,
    only: Option<BTreeSet<ObjectKey>>,
    seen: HashMap<PathBuf, Seen>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Host,
    Companion,
    Ignored,
    Other,
}

/// A fingerprint of the user-owned parts of an object, and its consumable annotations.
fn fingerprint(value: &Value) -> (u64, Vec<(String, String)>) {
    let mut v = value.clone();
    let mut consumable = Vec::new();
    if let Some(obj) = v.as_object_mut() {
        obj.remove("status");
        obj.remove(super::hosts::BOOK_KEY);
        if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("resourceVersion");
            m.remove("finalizers");
            if let Some(a) = m.get_mut("annotations").and_then(Value::as_object_mut) {
                a.retain(|k, v| {
                    let consumed = CONSUMED.contains(&k.as_str());
                    if consumed {
                        consumable.push((k.clone(), v.to_string()));
                    }
                    !consumed
                });
            }
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.to_string().hash(&mut h);
    (h.finish(), consumable)
}

impl StoreWatcher {
    /// Watches every host, or only these.
    pub fn new(store: Store, only: Option<BTreeSet<ObjectKey>>) -> Self {
        Self {
            store,
            only,
            seen: HashMap::new(),
        }
    }

    fn wanted(&self, key: &ObjectKey) -> bool {
        self.only.as_ref().is_none_or(|o| o.contains(key))
    }

    /// The changes since the last scan (the first scan reports every host).
    pub fn scan(&mut self) -> Result<Vec<SourceChange>> {
        let dirs = Dirs::new();
        let mut found = Found::default();
        for dir in self.store.resource_dirs()? {
            let name = dir.file_name().unwrap_or_default().to_string_lossy();
            let kind = dirs.kind(&name);
            // A `--wait` drives its hosts with the objects it read when it started.
            if kind == Kind::Ignored || (kind == Kind::Other && self.only.is_some()) {
                continue;
            }
            let is_secret = name == dirs.secrets;
            for ns in sorted_entries(&dir)? {
                for file in sorted_entries(&ns)? {
                    if file.extension().is_some_and(|e| e == "yaml") {
                        self.scan_file(file, kind, is_secret, &mut found);
                    }
                }
            }
        }
        self.secret_users(&mut found);
        self.forget_gone(&dirs, &mut found);
        if found.objects_changed {
            found.changes.push(SourceChange::Objects);
        }
        Ok(found.changes)
    }

    /// Reads `file` again when its stamp changed, and notes what changed.
    fn scan_file(&mut self, file: PathBuf, kind: Kind, is_secret: bool, found: &mut Found) {
        let Some(st) = Stamp::of(&file) else {
            return;
        };
        if matches!(kind, Kind::Host | Kind::Companion) && !self.wanted(&Identity::of(&file).key) {
            return;
        }
        found.present.insert(file.clone());
        if self.seen.get(&file).is_some_and(|s| s.stamp == st) {
            return;
        }
        // Changed (or new): read it.
        let was_bad = self.seen.get(&file).is_some_and(|s| s.bad);
        let stored = match object_file::read(&file) {
            Ok(Some(s)) => s,
            // Removed since it was listed.
            Ok(None) => {
                found.present.remove(&file);
                return;
            }
            Err(error) => {
                let key = Identity::of(&file).key;
                let seen = Seen {
                    stamp: st,
                    version: 0,
                    print: 0,
                    consumable: Vec::new(),
                    bad: true,
                    secrets: Vec::new(),
                };
                self.seen.insert(file, seen);
                match kind {
                    Kind::Host | Kind::Companion => found.host(key),
                    _ => {
                        tracing::warn!("{}", error.chain());
                        found.objects_changed = true;
                        if is_secret {
                            found.flipped.push(key);
                        }
                    }
                }
                return;
            }
        };
        if was_bad && is_secret {
            found.flipped.push(object_key(&stored.value));
        }
        let (print, consumable) = fingerprint(&stored.value);
        let changed = match self.seen.get(&file) {
            None => true,
            Some(old) => {
                old.print != print
                    || consumable.iter().any(|c| !old.consumable.contains(c))
                    // Writes were missed between two scans: a consumable annotation present may
                    // have been consumed and set again.
                    || (!consumable.is_empty() && stored.version > old.version + 1)
            }
        };
        let secrets = if kind == Kind::Host {
            super::hosts::secret_refs(&stored.value)
                .into_iter()
                .map(|(_, k)| k)
                .collect()
        } else {
            Vec::new()
        };
        let seen = Seen {
            stamp: st,
            version: stored.version,
            print,
            consumable,
            bad: false,
            secrets,
        };
        self.seen.insert(file, seen);
        if changed {
            match kind {
                Kind::Host | Kind::Companion => found.host(object_key(&stored.value)),
                _ => found.objects_changed = true,
            }
        }
    }

    /// The hosts that use a Secret that became unreadable, or readable again, changed.
    fn secret_users(&self, found: &mut Found) {
        if found.flipped.is_empty() {
            return;
        }
        let mut users: Vec<ObjectKey> = self
            .seen
            .iter()
            .filter(|(_, s)| !s.bad && s.secrets.iter().any(|k| found.flipped.contains(k)))
            .map(|(p, _)| Identity::of(p).key)
            .collect();
        users.sort();
        users.into_iter().for_each(|key| found.host(key));
    }

    /// Forgets the files no longer present: a host's is gone, a companion's changes its host.
    fn forget_gone(&mut self, dirs: &Dirs, found: &mut Found) {
        let gone: Vec<PathBuf> = self
            .seen
            .keys()
            .filter(|p| !found.present.contains(*p))
            .cloned()
            .collect();
        for path in gone {
            self.seen.remove(&path);
            let Identity { dir, key } = Identity::of(&path);
            if dir == dirs.hosts {
                found
                    .changes
                    .retain(|c| *c != SourceChange::Host(key.clone()));
                found.changes.push(SourceChange::HostGone(key));
            } else if dirs.companions.iter().any(|c| c == dir) {
                found.host(key);
            } else {
                found.objects_changed = true;
            }
        }
    }
}

/// The store's directories of the kinds a scan tells apart.
struct Dirs {
    hosts: String,
    companions: [String; 3],
    ignored: String,
    secrets: String,
}

impl Dirs {
    fn new() -> Dirs {
        Dirs {
            hosts: resource_dir(bmh_api::API_VERSION, bmh_api::KIND),
            companions: [
                resource_dir(bmh_api::API_VERSION, bmh_api::HOST_FIRMWARE_SETTINGS_KIND),
                resource_dir(bmh_api::API_VERSION, bmh_api::HOST_FIRMWARE_COMPONENTS_KIND),
                resource_dir(bmh_api::API_VERSION, bmh_api::DATA_IMAGE_KIND),
            ],
            ignored: resource_dir(bmh_api::API_VERSION, HARDWARE_DATA_KIND),
            secrets: resource_dir(
                crate::objects::SECRET_API_VERSION,
                crate::objects::SECRET_KIND,
            ),
        }
    }

    fn kind(&self, name: &str) -> Kind {
        if name == self.hosts {
            Kind::Host
        } else if self.companions.iter().any(|c| c == name) {
            Kind::Companion
        } else if name == self.ignored {
            Kind::Ignored
        } else {
            Kind::Other
        }
    }
}

#[derive(Default)]
struct Found {
    changes: Vec<SourceChange>,
    objects_changed: bool,
    /// Secrets that became unreadable, or readable again.
    flipped: Vec<ObjectKey>,
    present: BTreeSet<PathBuf>,
}

impl Found {
    /// Host `key` changed (noted once).
    fn host(&mut self, key: ObjectKey) {
        if !self.changes.contains(&SourceChange::Host(key.clone())) {
            self.changes.push(SourceChange::Host(key));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persist::store::Expect;
    use crate::persist::store::hosts::host_key;

    fn host(annotations: Value, status: Value) -> Value {
        serde_json::json!({
            "apiVersion": bmh_api::API_VERSION,
            "kind": bmh_api::KIND,
            "metadata": {"name": "h0", "namespace": "default", "annotations": annotations},
            "spec": {"online": true},
            "status": status,
        })
    }

    #[test]
    fn reports_user_changes_but_not_status_writes_or_consumed_annotations() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("s")).unwrap();
        let key = host_key(&ObjectKey::new("default", "h0"));
        let h0 = ObjectKey::new("default", "h0");
        let mut w = StoreWatcher::new(store.clone(), None);
        assert!(w.scan().unwrap().is_empty());
        let put = |a: Value, s: Value| {
            let v = store.get(&key).unwrap().map(|s| s.version);
            let expect = v.map_or(Expect::Absent, Expect::Version);
            store.write(&key, host(a, s), expect).unwrap();
        };
        put(serde_json::json!({}), serde_json::json!({}));
        assert_eq!(w.scan().unwrap(), vec![SourceChange::Host(h0.clone())]);
        // The controller's status write.
        put(
            serde_json::json!({}),
            serde_json::json!({"poweredOn": true}),
        );
        assert!(w.scan().unwrap().is_empty());
        // A verb's annotation, then its consumption by the controller.
        put(
            serde_json::json!({"reboot.metal3.io": ""}),
            serde_json::json!({"poweredOn": true}),
        );
        assert_eq!(w.scan().unwrap(), vec![SourceChange::Host(h0.clone())]);
        put(
            serde_json::json!({}),
            serde_json::json!({"poweredOn": false}),
        );
        assert!(w.scan().unwrap().is_empty());
        // A held annotation's removal is a change.
        put(
            serde_json::json!({"reboot.metal3.io/x": ""}),
            serde_json::json!({}),
        );
        assert_eq!(w.scan().unwrap(), vec![SourceChange::Host(h0.clone())]);
        put(serde_json::json!({}), serde_json::json!({}));
        assert_eq!(w.scan().unwrap(), vec![SourceChange::Host(h0.clone())]);
        // Consumed and set again with the same value between two scans: the versions tell.
        put(
            serde_json::json!({"inspect.metal3.io": ""}),
            serde_json::json!({}),
        );
        assert_eq!(w.scan().unwrap(), vec![SourceChange::Host(h0.clone())]);
        put(
            serde_json::json!({}),
            serde_json::json!({"poweredOn": true}),
        );
        put(
            serde_json::json!({"inspect.metal3.io": ""}),
            serde_json::json!({"poweredOn": true}),
        );
        assert_eq!(w.scan().unwrap(), vec![SourceChange::Host(h0.clone())]);
        store.delete(&key).unwrap();
        assert_eq!(w.scan().unwrap(), vec![SourceChange::HostGone(h0)]);
    }

    #[test]
    fn an_unreadable_file_is_reported_once_per_change_and_a_secret_wakes_its_hosts() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("s")).unwrap();
        let h0 = ObjectKey::new("default", "h0");
        let mut value = host(serde_json::json!({}), serde_json::json!({}));
        value["spec"]["bmc"] = serde_json::json!({"address": "ipmi://x", "credentialsName": "bmc"});
        store.write(&host_key(&h0), value, Expect::Absent).unwrap();
        let secret = super::super::secret_key(&ObjectKey::new("default", "bmc"));
        let good = serde_json::json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "bmc", "namespace": "default"},
            "data": {"password": "cHc="},
        });
        store.write(&secret, good, Expect::Absent).unwrap();
        let mut w = StoreWatcher::new(store.clone(), None);
        w.scan().unwrap();
        assert!(w.scan().unwrap().is_empty());
        // The Secret breaks: its hosts are read again (and the objects), once.
        let path = store.path_of(&secret);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, ":::\n").unwrap();
        assert_eq!(
            w.scan().unwrap(),
            vec![SourceChange::Host(h0.clone()), SourceChange::Objects]
        );
        assert!(w.scan().unwrap().is_empty());
        // Readable again: the same.
        std::fs::write(&path, text).unwrap();
        assert_eq!(
            w.scan().unwrap(),
            vec![SourceChange::Host(h0.clone()), SourceChange::Objects]
        );
        // The host's own file breaks: a change of the host, not its removal.
        let host_path = store.path_of(&host_key(&h0));
        std::fs::write(&host_path, "{").unwrap();
        assert_eq!(w.scan().unwrap(), vec![SourceChange::Host(h0.clone())]);
        assert!(w.scan().unwrap().is_empty());
    }
}
