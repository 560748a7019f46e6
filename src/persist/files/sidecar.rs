//! bmhctl's hidden bookkeeping beside a host file: `dir/.bmhctl/hosts.yaml.state.json` for the
//! resolved `dir/hosts.yaml` (every link to one file shares it), holding each host's
//! [`Bookkeeping`] by `namespace/name`. A missing sidecar is empty; an unreadable one is bad input.

use crate::diagnostic::Diagnostic;
use crate::error::Error;
use crate::persist::atomic::{unless_missing, write_atomic_with};
use crate::record::SpecSnapshot;
use crate::record::{Bookkeeping, RecordedEvent};
use bmh_api::{HardwareData, HardwareDataSpec, HardwareDetails};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
#[derive(Debug, Default)]
pub struct Sidecar {
    path: PathBuf,
    file_name: String,
    /// The entries as read (for loading the hosts; dropped by [`Sidecar::forget_read`]).
    entries: BTreeMap<String, Bookkeeping>,
    /// Each entry's JSON as it should be saved: a save concatenates, a change compares text.
    encoded: BTreeMap<String, Encoded>,
    /// The entries differ from what is on disk.
    dirty: bool,
}

impl Sidecar {
    /// Path of the sidecar of `file` (the resolved path of the host file).
    pub fn path_for(file: &Path) -> PathBuf {
        state_file(file, "state.json")
    }

    /// Read the sidecar of `file`; a missing one is empty.
    pub fn load(file: &Path) -> Result<Sidecar, Error> {
        let mut sc = Sidecar {
            file_name: file_name(file),
            path: Self::path_for(file),
            ..Sidecar::default()
        };
        let read = unless_missing(std::fs::read(&sc.path)).map_err(|e| sc.corrupt(&e.to_string()));
        let Some(bytes) = read? else { return Ok(sc) };
        let parsed: SidecarFile =
            serde_json::from_slice(&bytes).map_err(|e| sc.corrupt(&e.to_string()))?;
        if parsed.version != VERSION {
            return Err(sc.corrupt(&format!(
                "unsupported version {} (this bmhctl understands {VERSION})",
                parsed.version
            )));
        }
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

    /// The entry of `key` (`namespace/name`) as read.
    pub fn get(&self, key: &str) -> Option<&Bookkeeping> {
        self.entries.get(key)
    }

    /// Drops the entries as read, once the hosts are loaded (what is saved is kept).
    pub fn forget_read(&mut self) {
        self.entries = BTreeMap::new();
    }

    /// Sets an entry (`None`: removes it), adding no new one unless `known(key)` (the entry is
    /// given back): asked only at a host's first pass.
    pub fn set_encoded_if_known(
        &mut self,
        key: &str,
        json: Option<Encoded>,
        known: impl FnOnce(&str) -> bool,
    ) -> Result<Option<Encoded>, Encoded> {
        Ok(match json {
            // The key is copied only for a new entry.
            Some(j) => match self.encoded.get_mut(key) {
                Some(saved) if *saved == j => Some(j),
                Some(saved) => {
                    self.dirty = true;
                    Some(std::mem::replace(saved, j))
                }
                None if !known(key) => return Err(j),
                None => {
                    self.encoded.insert(key.to_string(), j);
                    self.dirty = true;
                    None
                }
            },
            None => {
                self.entries.remove(key);
                let gone = self.encoded.remove(key);
                self.dirty |= gone.is_some();
                gone
            }
        })
    }

    /// Keeps only the entries of `keys` (the hosts in the file).
    pub fn keep_only(&mut self, keys: BTreeSet<String>) {
        let before = self.encoded.len();
        self.entries.retain(|k, _| keys.contains(k));
        self.encoded.retain(|k, _| keys.contains(k));
        self.dirty |= self.encoded.len() != before;
    }

    /// Whether [`save`](Self::save) would write anything.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Write the sidecar atomically if it changed; returns whether it was written.
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
                json.write_to(&mut *out)?;
            }
            out.write_all(b"}}\n")
        })
        .map_err(|e| Error::io(&self.path, e))?;
        self.dirty = false;
        Ok(true)
    }
}

/// One entry's JSON, as the sidecar keeps it: `serde_json::to_string(book)`'s bytes, in parts.
#[derive(Debug, Clone, Default)]
pub struct Encoded {
    own: Box<[u8]>,
    /// Each shared part, and the offset in `own` where it goes (in order).
    shared: Box<[(u32, Shared)]>,
}

#[derive(Debug, Clone)]
enum Shared {
    /// A thread's rendering (see [`shared`]).
    Json(Arc<[u8]>),
    /// The spec as last seen: its text already.
    Spec(Arc<SpecSnapshot>),
}

impl Shared {
    fn same(&self, other: &Shared) -> bool {
        match (self, other) {
            (Shared::Json(a), Shared::Json(b)) => Arc::ptr_eq(a, b) || a == b,
            (Shared::Spec(a), Shared::Spec(b)) => Arc::ptr_eq(a, b) || a == b,
            _ => false,
        }
    }

    fn write_to(&self, out: &mut dyn Write) -> std::io::Result<()> {
        match self {
            Shared::Json(j) => out.write_all(j),
            // The snapshot's text, verbatim.
            Shared::Spec(s) => serde_json::to_writer(out, &**s).map_err(std::io::Error::from),
        }
    }
}

impl PartialEq for Encoded {
    /// The same text: equal bookkeeping is cut at the same places (else saved again).
    fn eq(&self, other: &Self) -> bool {
        self.own == other.own
            && self.shared.len() == other.shared.len()
            && self
                .shared
                .iter()
                .zip(other.shared.iter())
                .all(|((a, x), (b, y))| a == b && x.same(y))
    }
}

impl Encoded {
    pub fn write_to(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut at = 0;
        for (to, part) in self.shared.iter() {
            let to = *to as usize;
            out.write_all(&self.own[at..to])?;
            part.write_to(out)?;
            at = to;
        }
        out.write_all(&self.own[at..])
    }
}

/// An entry as it is built: its own bytes, and the shared parts with their offsets.
#[derive(Default)]
struct Parts {
    own: Vec<u8>,
    shared: Vec<(u32, Shared)>,
}

impl Parts {
    fn share(&mut self, part: Shared) {
        let at = u32::try_from(self.own.len()).expect("a sidecar entry under 4 GiB");
        self.shared.push((at, part));
    }
}

/// Renders `book`'s entry ([`Encoded`]).
pub fn encode(book: &Bookkeeping) -> Encoded {
    PARTS.with(|parts| {
        // The thread's buffers, reused: the entry gets allocations of its exact size.
        let mut parts = parts.borrow_mut();
        parts.own.clear();
        parts.shared.clear();
        entry_json(&mut parts, book);
        Encoded {
            own: Box::from(&parts.own[..]),
            shared: parts.shared.drain(..).collect(),
        }
    })
}

/// Writes `book` as serde writes a [`Bookkeeping`], parts taken from the thread's renderings.
fn entry_json(parts: &mut Parts, book: &Bookkeeping) {
    // Every field, so that one added to Bookkeeping does not build until it is written here.
    let Bookkeeping {
        uid,
        generation,
        spec_hash,
        spec_snapshot,
        finalizers,
        creation_timestamp,
        deletion_requested,
        architecture,
        hardware_data,
        provisioner_state,
        firmware,
        data_image,
        waiting,
        pass_error,
        events,
        deleted,
        // Never written: how this load found the host.
        loaded: _,
    } = book;
    let out = &mut parts.own;
    out.extend_from_slice(b"{\"uid\":");
    string_json(out, uid);
    field(out, "generation", generation);
    str_field(out, "specHash", spec_hash);
    if let Some(s) = spec_snapshot {
        key(out, "specSnapshot");
        parts.share(Shared::Spec(s.clone()));
    }
    let out = &mut parts.own;
    if !finalizers.is_empty() {
        field(out, "finalizers", finalizers);
    }
    if let Some(t) = creation_timestamp {
        str_field(out, "creationTimestamp", t);
    }
    if let Some(t) = deletion_requested {
        str_field(out, "deletionRequested", t);
    }
    if !architecture.is_empty() {
        str_field(out, "architecture", architecture);
    }
    if let Some(h) = hardware_data {
        key(out, "hardwareData");
        hardware_data_json(parts, h);
    }
    if let Some(s) = provisioner_state {
        key(&mut parts.own, "provisionerState");
        let json = shared(&STATES, STATES_KEPT, s);
        parts.share(Shared::Json(json));
    }
    let out = &mut parts.own;
    if !firmware.is_empty() {
        field(out, "firmware", firmware);
    }
    if let Some(d) = data_image {
        field(out, "dataImage", d);
    }
    if let Some(w) = waiting {
        str_field(out, "waiting", w);
    }
    if let Some(e) = pass_error {
        str_field(out, "passError", e);
    }
    if !events.is_empty() {
        key(out, "events");
        events_json(parts, events);
    }
    if let Some(t) = deleted {
        str_field(&mut parts.own, "deleted", t);
    }
    parts.own.push(b'}');
}

/// A HardwareData as serde writes it, its details taken from the thread's renderings.
fn hardware_data_json(parts: &mut Parts, h: &HardwareData) {
    let HardwareData {
        api_version,
        kind,
        metadata,
        spec: HardwareDataSpec { hardware },
        extra,
    } = h;
    let out = &mut parts.own;
    if !extra.is_empty() {
        return json(out, h);
    }
    out.extend_from_slice(b"{\"apiVersion\":");
    string_json(out, api_version);
    str_field(out, "kind", kind);
    field(out, "metadata", metadata);
    key(out, "spec");
    out.push(b'{');
    if let Some(d) = hardware {
        out.extend_from_slice(b"\"hardware\":");
        let json = shared(&DETAILS, DETAILS_KEPT, d);
        parts.share(Shared::Json(json));
    }
    parts.own.extend_from_slice(b"}}");
}

/// The events as serde writes them, each event's JSON made once and shared by equal events.
fn events_json(parts: &mut Parts, events: &[RecordedEvent]) {
    parts.own.push(b'[');
    for (n, e) in events.iter().enumerate() {
        if n > 0 {
            parts.own.push(b',');
        }
        let json = e.json.get_or_init(|| event_json(e)).clone();
        // A recorded event never changes: the tests' builds check it at every save.
        debug_assert_eq!(
            &json[..],
            &render_event(e)[..],
            "event changed after its JSON was made"
        );
        parts.share(Shared::Json(json));
    }
    parts.own.push(b']');
}

/// An event's JSON, from the thread's renderings when another host recorded it at the same second.
fn event_json(e: &RecordedEvent) -> Arc<[u8]> {
    EVENTS.with(|recent| {
        let same =
            |k: &(String, String, String)| k.0 == e.time && k.1 == e.reason && k.2 == e.message;
        let key = || (e.time.clone(), e.reason.clone(), e.message.clone());
        let make = || Ok::<_, std::convert::Infallible>(render_event(e).into());
        let Ok(json) = super::recent_or(recent, EVENT_RENDERINGS_KEPT, same, key, make);
        json
    })
}

fn render_event(e: &RecordedEvent) -> Vec<u8> {
    serde_json::to_vec(e).expect("an event serializes")
}

/// A string as serde_json writes it: copied when nothing in it is escaped.
fn string_json(out: &mut Vec<u8>, s: &str) {
    if !escaped(s.as_bytes()) {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        json(out, s);
    }
}

/// Whether serde_json escapes anything in `s` (a control character, `"` or `\\`).
fn escaped(s: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // A byte of `w` is zero: exact for the lowest such byte, and no false alarm when none is.
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGH;
    let mut words = s.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_ne_bytes(w.try_into().expect("eight bytes"));
        // Below 0x20: `w - 0x20..` borrows into a byte's high bit where `w` has none.
        let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
        if control | zero(w ^ (ONES * u64::from(b'"'))) | zero(w ^ (ONES * u64::from(b'\\'))) != 0 {
            return true;
        }
    }
    words
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

fn json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    serde_json::to_writer(out, value).expect("bookkeeping serializes");
}

/// Appends `,"name":` (a field after the first: the names here need no escaping).
fn key(out: &mut Vec<u8>, name: &str) {
    out.extend_from_slice(b",\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

fn field<T: Serialize + ?Sized>(out: &mut Vec<u8>, name: &str, value: &T) {
    key(out, name);
    json(out, value);
}

/// Appends `,"name":` and the string `s`'s JSON ([`string_json`]: most need no escaping).
fn str_field(out: &mut Vec<u8>, name: &str, s: &str) {
    key(out, name);
    string_json(out, s);
}

/// A shared value's JSON, from the thread's renderings: the same pointer is the same value (the
/// thread's copy holds it, so it is neither changed nor freed meanwhile).
fn shared<T: Serialize>(
    cache: &'static std::thread::LocalKey<Recent<Arc<T>>>,
    kept: usize,
    value: &Arc<T>,
) -> Arc<[u8]> {
    cache.with(|recent| {
        let same = |k: &Arc<T>| Arc::ptr_eq(k, value);
        let make = || {
            let json = serde_json::to_vec(&**value).expect("bookkeeping serializes");
            Ok::<_, std::convert::Infallible>(json.into())
        };
        let Ok(json) = super::recent_or(recent, kept, same, || value.clone(), make);
        json
    })
}

/// A thread's recent renderings of one part of the entries: the value and its JSON.
type Recent<K> = super::Recent<K, Arc<[u8]>>;

/// How many of each a thread keeps: the provisioner states of a run's steps, the hardware kinds.
const STATES_KEPT: usize = 16;
const DETAILS_KEPT: usize = 4;
/// Of events: those a few steps' hosts record in the same second.
const EVENT_RENDERINGS_KEPT: usize = 16;

thread_local! {
    static STATES: Recent<Arc<serde_json::Value>> = Recent::default();
    static DETAILS: Recent<Arc<HardwareDetails>> = Recent::default();
    static EVENTS: Recent<(String, String, String)> = Recent::default();
    static PARTS: RefCell<Parts> = RefCell::default();
}

/// `<dir>/.bmhctl/<name>.<ext>` for the host file `<dir>/<name>`.
pub(super) fn state_file(file: &Path, ext: &str) -> PathBuf {
    let dir = file.parent().unwrap_or(Path::new(""));
    dir.join(STATE_DIR)
        .join(format!("{}.{ext}", file_name(file)))
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

    impl Sidecar {
        pub fn path(&self) -> &Path {
            &self.path
        }

        /// Set (`Some`) or remove (`None`) the entry of `key`.
        pub fn set(&mut self, key: &str, book: Option<&Bookkeeping>) {
            self.set_encoded(key, book.map(encode));
        }

        /// [`set`](Self::set) with the entry already serialised by [`encode`] (which a caller can do
        /// before taking a lock the sidecar is under).
        pub fn set_encoded(&mut self, key: &str, json: Option<Encoded>) -> Option<Encoded> {
            match self.set_encoded_if_known(key, json, |_| true) {
                Ok(unneeded) => unneeded,
                Err(_) => unreachable!("every key is known"),
            }
        }
    }

    impl Encoded {
        /// The entry's text, whole.
        pub fn text(&self) -> String {
            let mut out = Vec::new();
            self.write_to(&mut out).expect("writing to memory");
            String::from_utf8(out).expect("JSON is UTF-8")
        }
    }

    fn book(uid: &str, generation: i64) -> Bookkeeping {
        Bookkeeping {
            uid: uid.into(),
            generation,
            spec_hash: "abc".into(),
            spec_snapshot: Some(std::sync::Arc::new(SpecSnapshot::of(
                &serde_json::json!({"online": true}),
            ))),
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

    /// An entry of a key not known is refused, and given back, only when it would be new: a
    /// saved entry is set again without asking.
    #[test]
    fn only_a_new_entry_asks_whether_its_key_is_known() {
        let dir = tempfile::tempdir().unwrap();
        let mut sc = Sidecar::load(&dir.path().join("hosts.yaml")).unwrap();
        let refused = sc.set_encoded_if_known("ns/new", Some(encode(&book("u0", 1))), |_| false);
        assert_eq!(refused.unwrap_err().text(), encode(&book("u0", 1)).text());
        assert!(!sc.is_dirty());
        let mut asked = Vec::new();
        let mut set = |sc: &mut Sidecar, generation| {
            sc.set_encoded_if_known("ns/h", Some(encode(&book("u1", generation))), |k| {
                asked.push(k.to_string());
                true
            })
            .unwrap()
        };
        assert!(set(&mut sc, 1).is_none());
        assert!(set(&mut sc, 2).is_some_and(|old| old == encode(&book("u1", 1))));
        assert_eq!(asked, ["ns/h"]);
        assert!(sc.is_dirty());
    }

    /// A bookkeeping with every field set, so that each is written.
    fn full_book(n: usize) -> Bookkeeping {
        let details: bmh_api::HardwareDetails = serde_json::from_value(serde_json::json!({
            "ramMebibytes": 131072,
            "cpu": {"arch": "x86_64", "model": "CPU \"quoted\" ü", "count": 1},
            "nics": [{"name": "nic-1", "mac": "ab:cd:12:34:56:78", "pxe": true}]
        }))
        .unwrap();
        let mut hardware = HardwareData {
            api_version: "metal3.io/v1alpha1".into(),
            kind: "HardwareData".into(),
            spec: HardwareDataSpec {
                hardware: Some(Arc::new(details)),
            },
            ..Default::default()
        };
        hardware.metadata.name = format!("host-{n}");
        hardware.metadata.namespace = "default".into();
        let data_image: bmh_api::DataImage = serde_json::from_value(serde_json::json!({
            "metadata": {"name": format!("host-{n}")},
            "spec": {"url": "http://images.example/data.iso"}
        }))
        .unwrap();
        Bookkeeping {
            uid: format!("u{n}"),
            generation: 3,
            spec_hash: "abc".into(),
            spec_snapshot: Some(Arc::new(SpecSnapshot::of(
                &serde_json::json!({"online": true, "n": n}),
            ))),
            finalizers: vec!["baremetalhost.metal3.io".into()],
            creation_timestamp: Some("2026-12-01T00:00:00Z".into()),
            deletion_requested: Some("2026-12-01T00:00:09Z".into()),
            architecture: "x86_64".into(),
            hardware_data: Some(Box::new(hardware)),
            provisioner_state: Some(Arc::new(serde_json::json!({"poweredOn": true, "x": null}))),
            firmware: crate::record::FirmwareBook {
                settings_generation: 2,
                refresh_pending: true,
                ..Default::default()
            },
            data_image: Some(Box::new(data_image)),
            waiting: Some("node locked by \"conductor-1\"\n".into()),
            pass_error: Some("unexpected provision state \"active\"".into()),
            events: (0..3)
                .map(|i| RecordedEvent {
                    time: format!("2026-12-01T00:00:0{i}Z"),
                    reason: "PowerOn".into(),
                    message: format!("event {i} \u{1} \\ done"),
                    json: Default::default(),
                })
                .collect(),
            deleted: Some("2026-12-01T00:00:10Z".into()),
            loaded: Default::default(),
        }
    }

    /// The entry is serde's JSON of the bookkeeping, byte for byte, however much of it the
    /// thread had rendered before: fresh, from the thread's renderings, with a part changed.
    #[test]
    fn an_entry_is_the_bookkeepings_json() {
        let serde = |b: &Bookkeeping| serde_json::to_string(b).unwrap();
        let encode = |b: &Bookkeeping| encode(b).text();
        let default = Bookkeeping::default();
        assert_eq!(encode(&default), serde(&default));
        let mut book = full_book(0);
        assert_eq!(encode(&book), serde(&book));
        assert_eq!(encode(&book), serde(&book), "from the thread's renderings");
        // A new spec.
        book.spec_snapshot = Some(Arc::new(SpecSnapshot::of(
            &serde_json::json!({"online": false}),
        )));
        assert_eq!(encode(&book), serde(&book), "a new spec");
        // Another host sharing the details and state, with its own spec and events.
        let mut other = full_book(1);
        other.hardware_data.as_mut().unwrap().spec.hardware =
            book.hardware_data.as_ref().unwrap().spec.hardware.clone();
        other.provisioner_state = book.provisioner_state.clone();
        other.events[1].message = "another".into();
        assert_eq!(encode(&other), serde(&other));
        // A new state, and a part left out.
        book.provisioner_state = Some(Arc::new(serde_json::json!({"poweredOn": false})));
        book.events.clear();
        book.spec_snapshot = None;
        assert_eq!(encode(&book), serde(&book));
        // HardwareData with fields bmhctl does not know, or without details.
        let hw = book.hardware_data.as_mut().unwrap();
        hw.extra
            .insert("status".into(), serde_json::json!({"x": 1}));
        assert_eq!(encode(&book), serde(&book));
        let hw = book.hardware_data.as_mut().unwrap();
        hw.extra.clear();
        hw.spec.hardware = None;
        assert_eq!(encode(&book), serde(&book));
    }

    /// Entries of hosts sharing hardware details and a provisioner state hold their text
    /// once: neither is in an entry's own bytes, and both entries refer to the same copy.
    #[test]
    fn shared_parts_are_held_once() {
        let a = full_book(0);
        let mut b = full_book(1);
        b.hardware_data.as_mut().unwrap().spec.hardware =
            a.hardware_data.as_ref().unwrap().spec.hardware.clone();
        b.provisioner_state = a.provisioner_state.clone();
        let (ea, eb) = (encode(&a), encode(&b));
        let mut parts = 0;
        for e in [&ea, &eb] {
            assert!(!e.own.windows(12).any(|w| w == b"ramMebibytes"));
            assert!(!e.own.windows(9).any(|w| w == b"poweredOn"));
            assert!(e.text().contains("poweredOn") && e.text().contains("ramMebibytes"));
        }
        for ((_, x), (_, y)) in ea.shared.iter().zip(eb.shared.iter()) {
            if let (Shared::Json(x), Shared::Json(y)) = (x, y) {
                assert!(Arc::ptr_eq(x, y));
                parts += 1;
            }
        }
        // The details, the state and the three events both hosts recorded alike.
        assert_eq!(parts, 5);
        assert_ne!(ea, eb);
        assert_eq!(ea, encode(&a));
    }

    /// An event's JSON is made at its first save and kept with it: the copies of the
    /// bookkeeping and the later saves write it as made, and an entry holds none of its text.
    #[test]
    fn an_events_json_is_made_once_and_kept() {
        let mut book = full_book(0);
        let first = encode(&book);
        let made: Vec<Arc<[u8]>> = book
            .events
            .iter()
            .map(|e| e.json.get_or_init(|| panic!("made by the save")).clone())
            .collect();
        assert!(!first.own.windows(4).any(|w| w == b"done"));
        // A copy (as a pass's record is) shares the JSON made; a new event gets its own.
        let mut copy = book.clone();
        copy.remember_events(
            "2026-12-01T00:00:09Z",
            &[bmhctl_plugin_sdk::Event {
                reason: "PowerOff".into(),
                message: "Host \"soft\" powered off".into(),
            }],
        );
        let again = encode(&copy);
        assert_eq!(again.text(), serde_json::to_string(&copy).unwrap());
        for (e, m) in copy.events.iter().zip(&made) {
            assert!(Arc::ptr_eq(e.json.get_or_init(|| panic!("kept")), m));
        }
        // An event recorded alike by another host is the same JSON, made once.
        book.events.truncate(1);
        let other = RecordedEvent {
            json: Default::default(),
            ..book.events[0].clone()
        };
        let json = other.json.get_or_init(|| event_json(&other)).clone();
        assert!(Arc::ptr_eq(&json, &made[0]));
        assert_eq!(encode(&book).text(), serde_json::to_string(&book).unwrap());
    }

    /// An event changed after its first save would be saved with its old JSON: the tests'
    /// builds refuse it.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "event changed after its JSON was made")]
    fn an_event_changed_after_its_save_is_caught() {
        let mut book = full_book(0);
        encode(&book);
        book.events[0].message.push_str(" again");
        encode(&book);
    }

    /// The eight-bytes-at-a-time test finds what serde_json escapes, at any place of a word,
    /// and nothing else (non-ASCII text included).
    #[test]
    fn escaped_is_what_serde_escapes() {
        let naive = |s: &[u8]| s.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
        let base = "Ünïcödé power on~\u{7f} host-0042 ok".as_bytes().to_vec();
        assert!(!escaped(&base));
        for len in 0..base.len() {
            for at in 0..len {
                for b in 0u8..=0x7f {
                    let mut s = base[..len].to_vec();
                    s[at] = b;
                    assert_eq!(escaped(&s), naive(&s), "{s:?}");
                }
            }
        }
    }

    /// A sidecar saved from entries rendered part by part reads back as the bookkeeping.
    #[test]
    fn entries_read_back_as_saved() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hosts.yaml");
        let mut sc = Sidecar::load(&file).unwrap();
        let books: Vec<Bookkeeping> = (0..3).map(full_book).collect();
        for (n, b) in books.iter().enumerate() {
            sc.set(&format!("default/host-{n}"), Some(b));
        }
        assert!(sc.save().unwrap());
        let again = Sidecar::load(&file).unwrap();
        for (n, b) in books.iter().enumerate() {
            assert_eq!(again.get(&format!("default/host-{n}")), Some(b));
        }
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
