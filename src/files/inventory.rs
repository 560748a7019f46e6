//! Loading the user's hosts and Secrets from YAML files, and writing hosts' status back.
//!
//! [`load`] takes the paths given on the command line. A file is read as it is; a directory
//! contributes every `*.yaml` / `*.yml` file directly inside it, sorted by name. Hidden
//! entries (names starting with `.`, hence also bmhctl's own `.bmhctl` directory) and
//! subdirectories are skipped: directories are not recursed into, so a directory of host files
//! may hold unrelated subdirectories (a `.git`, backups, another environment). A file reached
//! through several paths (a symlink, a file given both directly and via its directory) is
//! loaded once, under the first path it was reached by.
//!
//! Each document is sorted by `apiVersion`/`kind`:
//! * `metal3.io/v1alpha1` `BareMetalHost`: a host ([`HostEntry`]);
//! * `v1` `Secret`: decoded into a [`ResolvedSecret`] (`data` base64-decoded, `stringData`
//!   merged over it);
//! * `metal3.io/v1alpha1` `HostFirmwareSettings` and `HostFirmwareComponents`: the firmware
//!   objects of the host of the same namespace and name, which must be in the same file (bmhctl
//!   writes their `status:` back like the host's); one without such a host is an error;
//! * `metal3.io/v1alpha1` `HostUpdatePolicy`: kept in [`Inventory::objects`] (the state machine
//!   reads it) and in [`Inventory::other_documents`];
//! * anything else is kept untouched and noted, with its JSON value, in
//!   [`Inventory::other_documents`]. Documents of the extra kinds a provisioner plugin asked for
//!   ([`LoadOptions`], from its host-configure step) in its namespace (all namespaces when it
//!   named none) also go into [`Inventory::objects`], where the plugin can read them; two such
//!   documents with the same kind, namespace and name are an error. Documents of other kinds
//!   are ignored.
//!
//! Every problem is [`Error::BadInput`] naming `file:line:column`, the object and the field;
//! all problems of all files are reported together, one per line. Only files holding at least
//! one BareMetalHost become a [`HostFile`], the unit bmhctl writes back (status blocks,
//! consumed annotations, and the sidecar of [`super::sidecar`]). Files holding only Secrets or
//! other objects are never written.
//!
//! Symlinks: each file's path is resolved once ([`std::fs::canonicalize`]); the sidecar and lock
//! live beside the resolved file and writes go to it, so a symlinked host file stays a symlink
//! and the file it points to is updated (see [`super::atomic`]).

use crate::error::Error;
use crate::files::atomic::write_atomic;
use crate::files::lock::FileLock;
use crate::files::sidecar::Sidecar;
use crate::files::yaml_file::{PathSeg, TextPos, YamlFile, YamlFileError};
use crate::objects::{ObjectMap, ResolvedSecret, TypedKey};
use crate::record::{Bookkeeping, HostRecord};
use base64::Engine as _;
use bmh_api::{
    BareMetalHost, BareMetalHostSpec, DEFAULT_NAMESPACE, HOST_FIRMWARE_COMPONENTS_KIND,
    HOST_FIRMWARE_SETTINGS_KIND, HOST_UPDATE_POLICY_KIND, HostFirmwareComponents,
    HostFirmwareSettings, ObjectKey,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Whether the loaded host files will be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadMode {
    /// Lock each host file (see [`super::lock`]) before reading it and keep the lock until the
    /// [`Inventory`] is dropped.
    Write,
    /// Take no lock; [`HostFile::commit`] refuses to write.
    ReadOnly,
}

/// What the loader accepts besides hosts and Secrets: a provisioner plugin's requirements
/// (see `bmhctl_plugin_sdk::abi::HostRequirements`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Object kinds kept in [`Inventory::objects`] (matched on `apiVersion` and `kind`).
    pub extra_kinds: Vec<bmhctl_plugin_sdk::abi::ObjectKind>,
    /// Only documents of the extra kinds in this namespace are kept; `None`: every namespace.
    pub namespace: Option<String>,
}

impl LoadOptions {
    fn accepts_kind(&self, api_version: &str, kind: &str) -> bool {
        self.extra_kinds
            .iter()
            .any(|k| k.api_version == api_version && k.kind == kind)
    }

    /// Whether a document of this kind in this namespace is kept for the plugin.
    fn accepts_in(&self, api_version: &str, kind: &str, namespace: &str) -> bool {
        self.accepts_kind(api_version, kind)
            && self.namespace.as_deref().is_none_or(|ns| ns == namespace)
    }

    /// Whether `doc` is kept as an object: one of the extra kinds, in the namespace, or a
    /// HostUpdatePolicy (which the state machine reads).
    fn accepts(&self, doc: &OtherDocument) -> bool {
        (doc.api_version == bmh_api::API_VERSION && doc.kind == HOST_UPDATE_POLICY_KIND)
            || self.accepts_in(&doc.api_version, &doc.kind, &doc.namespace)
    }
}

/// Everything the given paths hold.
#[derive(Debug, Default)]
pub struct Inventory {
    /// The files holding at least one BareMetalHost, in load order.
    pub files: Vec<HostFile>,
    /// All hosts, in file and document order.
    pub hosts: Vec<HostEntry>,
    /// All Secrets of all files, and the documents of the extra kinds of [`LoadOptions`].
    pub objects: ObjectMap,
    /// Documents that are neither a BareMetalHost, a Secret, nor a host's HostFirmwareSettings or
    /// HostFirmwareComponents (kept untouched), whether or not they went into
    /// [`Inventory::objects`].
    pub other_documents: Vec<OtherDocument>,
}

/// One BareMetalHost document.
#[derive(Debug, Clone)]
pub struct HostEntry {
    /// Index into [`Inventory::files`].
    pub file: usize,
    /// Document index in that file (as [`YamlFile`] counts them).
    pub doc: usize,
    /// `namespace/name`, the namespace defaulted.
    pub key: ObjectKey,
    pub record: HostRecord,
    /// Document index of the host's HostFirmwareSettings in the same file, if any.
    pub firmware_settings_doc: Option<usize>,
    /// Document index of the host's HostFirmwareComponents in the same file, if any.
    pub firmware_components_doc: Option<usize>,
}

/// A document bmhctl does not handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherDocument {
    /// As the user gave it.
    pub file: PathBuf,
    pub doc: usize,
    pub api_version: String,
    /// Empty when the document is not a mapping.
    pub kind: String,
    /// `metadata.namespace`, defaulted to `default`.
    pub namespace: String,
    pub name: String,
    /// The document as JSON, as written.
    pub value: Value,
}

/// What [`HostFile::commit`] wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CommitStats {
    pub file_written: bool,
    pub sidecar_written: bool,
}

impl std::ops::AddAssign for CommitStats {
    fn add_assign(&mut self, o: CommitStats) {
        self.file_written |= o.file_written;
        self.sidecar_written |= o.sidecar_written;
    }
}

/// A file holding hosts: its text with staged edits, its sidecar and (in write mode) its lock.
pub struct HostFile {
    /// The path as the user gave it (or the directory's path joined with the file name).
    pub path: PathBuf,
    /// The resolved path: what is read, written and locked.
    real_path: PathBuf,
    yaml: YamlFile,
    /// SHA-256 of the bytes last read from or written to `real_path`.
    /// What we last wrote to `real_path`; `None` while it still holds what was parsed.
    disk_text: Option<String>,
    /// The file's metadata when we last read or wrote it: a cheap check that nobody else
    /// wrote it since (the content is compared only when this differs).
    disk_stamp: Option<Stamp>,
    sidecar: Sidecar,
    lock: Option<FileLock>,
    /// Documents whose text differs from the text parsed at load (edits are kept as an overlay
    /// on that text, so rendering never needs a re-parse).
    edited: BTreeSet<usize>,
    /// Something was staged since the last commit.
    pending: bool,
    /// The hosts of this file, by `namespace/name`.
    host_keys: BTreeSet<String>,
}

impl std::fmt::Debug for HostFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostFile")
            .field("path", &self.path)
            .field("real_path", &self.real_path)
            .field("documents", &self.yaml.len())
            .field("locked", &self.lock.is_some())
            .field("edited", &self.edited)
            .field("hosts", &self.host_keys)
            .finish_non_exhaustive()
    }
}

impl Inventory {
    /// The host with this key.
    pub fn host(&self, key: &ObjectKey) -> Option<&HostEntry> {
        self.hosts.iter().find(|h| &h.key == key)
    }

    /// The file holding `host` (an index into [`Inventory::hosts`]).
    pub fn file_of(&mut self, host: usize) -> &mut HostFile {
        let f = self.hosts[host].file;
        &mut self.files[f]
    }

    /// Commit every file; all are attempted, and the first error is returned.
    pub fn commit_all(&mut self) -> Result<CommitStats, Error> {
        let mut stats = CommitStats::default();
        let mut first = None;
        for f in &mut self.files {
            match f.commit() {
                Ok(s) => stats += s,
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        first.map_or(Ok(stats), Err)
    }
}

/// Load hosts and Secrets from `paths` (files or directories, see the module docs).
///
/// Secret references are not checked; call [`check_secret_references`] too (or use
/// [`load_checked`], which reports both kinds of problem together).
pub fn load(paths: &[PathBuf], mode: LoadMode) -> Result<Inventory, Error> {
    load_with(paths, mode, &LoadOptions::default())
}

/// [`load`], also keeping the documents `options` asks for in [`Inventory::objects`].
pub fn load_with(
    paths: &[PathBuf],
    mode: LoadMode,
    options: &LoadOptions,
) -> Result<Inventory, Error> {
    let (inv, errors) = load_collecting(paths, mode, options)?;
    bad_input(errors)?;
    Ok(inv)
}

/// [`load`] and [`check_secret_references`], all problems reported together.
pub fn load_checked(paths: &[PathBuf], mode: LoadMode) -> Result<Inventory, Error> {
    let (inv, mut errors) = load_collecting(paths, mode, &LoadOptions::default())?;
    errors.extend(secret_reference_errors(&inv));
    bad_input(errors)?;
    Ok(inv)
}

/// Every Secret a host refers to must be among the loaded Secrets: `spec.bmc.credentialsName`
/// and `spec.preprovisioningNetworkDataName` (in the host's namespace) and `spec.userData`,
/// `spec.networkData`, `spec.metaData` (namespace defaulting to the host's).
pub fn check_secret_references(inv: &Inventory) -> Result<(), Error> {
    bad_input(secret_reference_errors(inv))
}

fn bad_input(errors: Vec<String>) -> Result<(), Error> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::BadInput(errors.join("\n")))
    }
}

fn secret_reference_errors(inv: &Inventory) -> Vec<String> {
    let mut errors = Vec::new();
    for h in &inv.hosts {
        let spec = &h.record.host.spec;
        let ns = h.key.namespace.as_str();
        let mut refs: Vec<(&[&str], ObjectKey)> = Vec::new();
        if let Some(bmc) = &spec.bmc
            && !bmc.credentials_name.is_empty()
        {
            refs.push((
                &["spec", "bmc", "credentialsName"],
                ObjectKey::new(ns, &bmc.credentials_name),
            ));
        }
        if !spec.preprovisioning_network_data_name.is_empty() {
            refs.push((
                &["spec", "preprovisioningNetworkDataName"],
                ObjectKey::new(ns, &spec.preprovisioning_network_data_name),
            ));
        }
        for (path, r) in [
            (&["spec", "userData", "name"], &spec.user_data),
            (&["spec", "networkData", "name"], &spec.network_data),
            (&["spec", "metaData", "name"], &spec.meta_data),
        ] {
            if let Some(r) = r
                && !r.name.is_empty()
            {
                let rns = if r.namespace.is_empty() {
                    ns
                } else {
                    &r.namespace
                };
                refs.push((path, ObjectKey::new(rns, &r.name)));
            }
        }
        let file = &inv.files[h.file];
        for (path, key) in refs {
            if inv.objects.contains_secret(&key) {
                continue;
            }
            let segs: Vec<PathSeg> = path.iter().map(|k| PathSeg::Key(k)).collect();
            let pos = position(&file.yaml, h.doc, &segs);
            errors.push(format!(
                "{}:{}:{}: BareMetalHost {}: {}: Secret {key} not found in the given files",
                file.path.display(),
                pos.line,
                pos.column,
                h.key,
                path.join("."),
            ));
        }
    }
    errors
}

/// SHA-256 (hex) of the canonical JSON of `spec` (object keys sorted), and the spec as JSON.
pub fn spec_hash(spec: &BareMetalHostSpec) -> (String, Value) {
    let value = serde_json::to_value(spec).unwrap_or(Value::Null);
    let canonical = serde_json::to_string(&sorted(&value)).unwrap_or_default();
    (hex(&Sha256::digest(canonical.as_bytes())), value)
}

fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bookkeeping of a host at load: the sidecar's entry, or a new one (fresh uid,
/// generation 1); the generation is bumped when the spec changed since it was recorded.
pub fn bookkeeping_at_load(
    existing: Option<&Bookkeeping>,
    spec: &BareMetalHostSpec,
) -> Bookkeeping {
    let (hash, snapshot) = spec_hash(spec);
    let mut book = match existing {
        Some(b) => b.clone(),
        None => Bookkeeping {
            uid: uuid::Uuid::new_v4().to_string(),
            generation: 1,
            spec_hash: hash.clone(),
            spec_snapshot: Some(snapshot.clone()),
            ..Default::default()
        },
    };
    if book.uid.is_empty() {
        book.uid = uuid::Uuid::new_v4().to_string();
    }
    if book.generation < 1 {
        book.generation = 1;
    }
    if book.spec_hash != hash {
        if existing.is_some() {
            book.generation += 1;
        }
        book.spec_hash = hash;
        book.spec_snapshot = Some(snapshot);
    }
    book
}

/// SHA-256 (hex) of the canonical JSON of any spec.
pub fn value_hash<T: Serialize>(spec: &T) -> String {
    let value = serde_json::to_value(spec).unwrap_or(Value::Null);
    let canonical = serde_json::to_string(&sorted(&value)).unwrap_or_default();
    hex(&Sha256::digest(canonical.as_bytes()))
}

/// Sets the generations of the host's firmware objects in `book.firmware` (as
/// [`bookkeeping_at_load`] does for the host: 1 for a new object, bumped when its spec changed)
/// and copies them into the objects' `metadata.generation`. An object that is gone loses its
/// bookkeeping (and, for the settings, its schema).
pub fn firmware_at_load(
    book: &mut Bookkeeping,
    settings: Option<&mut HostFirmwareSettings>,
    components: Option<&mut HostFirmwareComponents>,
) {
    fn track(generation: &mut i64, hash: &mut String, spec_hash: Option<String>) {
        match spec_hash {
            None => {
                *generation = 0;
                hash.clear();
            }
            Some(h) => {
                if *generation < 1 || hash.is_empty() {
                    *generation = 1;
                } else if *hash != h {
                    *generation += 1;
                }
                *hash = h;
            }
        }
    }
    let fw = &mut book.firmware;
    track(
        &mut fw.settings_generation,
        &mut fw.settings_spec_hash,
        settings.as_ref().map(|s| value_hash(&s.spec)),
    );
    match settings {
        Some(s) => s.metadata.generation = fw.settings_generation,
        None => fw.schema = None,
    }
    track(
        &mut fw.components_generation,
        &mut fw.components_spec_hash,
        components.as_ref().map(|c| value_hash(&c.spec)),
    );
    if let Some(c) = components {
        c.metadata.generation = fw.components_generation;
    }
    if fw.settings_generation == 0 && fw.components_generation == 0 {
        fw.refresh_pending = false;
    }
}

// ---------------------------------------------------------------------------------------------
// Loading

/// A HostFirmwareSettings or HostFirmwareComponents document, typed.
enum FirmwareObject {
    Settings(Box<HostFirmwareSettings>),
    Components(Box<HostFirmwareComponents>),
}

enum Item {
    /// `host` is `None` when the document could not be typed (an error was recorded).
    Host {
        doc: usize,
        key: ObjectKey,
        host: Option<Box<BareMetalHost>>,
    },
    Secret {
        doc: usize,
        key: ObjectKey,
        secret: Option<ResolvedSecret>,
    },
    /// `object` is `None` when the document could not be typed (an error was recorded).
    Firmware {
        doc: usize,
        key: ObjectKey,
        kind: &'static str,
        value: Value,
        object: Option<FirmwareObject>,
    },
    Other(OtherDocument),
}

struct ParsedFile {
    label: PathBuf,
    real: PathBuf,
    hash: [u8; 32],
    /// `None` when the file has a syntax error.
    yaml: Option<YamlFile>,
    items: Vec<Item>,
    errors: Vec<String>,
    lock: Option<FileLock>,
}

impl ParsedFile {
    fn has_hosts(&self) -> bool {
        self.items.iter().any(|i| matches!(i, Item::Host { .. }))
    }
}

fn load_collecting(
    paths: &[PathBuf],
    mode: LoadMode,
    options: &LoadOptions,
) -> Result<(Inventory, Vec<String>), Error> {
    let mut errors = Vec::new();
    let mut seen = HashSet::new();
    let mut parsed = Vec::new();
    for (label, real) in expand(paths, &mut errors)? {
        if !seen.insert(real.clone()) {
            continue;
        }
        let Some(text) = read_text(&real, &label, &mut errors)? else {
            continue;
        };
        let mut pf = parse_file(&label, &real, text, mode);
        if mode == LoadMode::Write && pf.has_hosts() {
            // Lock, then re-read: whatever another writer did before we got the lock is seen.
            let lock = FileLock::acquire(&real, &label)?;
            let Some(again) = read_text(&real, &label, &mut errors)? else {
                continue;
            };
            if Sha256::digest(again.as_bytes())[..] != pf.hash[..] {
                pf = parse_file(&label, &real, again, mode);
            }
            pf.lock = Some(lock);
        }
        parsed.push(pf);
    }

    let mut inv = Inventory::default();
    // Duplicates, across all files.
    let mut host_at: HashMap<ObjectKey, String> = HashMap::new();
    let mut secret_at: HashMap<ObjectKey, String> = HashMap::new();
    let mut settings_at: HashMap<ObjectKey, String> = HashMap::new();
    let mut components_at: HashMap<ObjectKey, String> = HashMap::new();
    // The file (index into `parsed`) of each host.
    let mut host_file: HashMap<ObjectKey, usize> = HashMap::new();
    // Kept objects of the extra kinds, by kind (whatever the version) and key.
    let mut object_at: HashMap<(String, ObjectKey), String> = HashMap::new();
    // Which of the other documents are kept as objects (the first of duplicates only).
    let mut kept: HashSet<(usize, usize)> = HashSet::new();
    for (file, pf) in parsed.iter_mut().enumerate() {
        errors.append(&mut pf.errors);
        let Some(yaml) = &pf.yaml else { continue };
        for item in &pf.items {
            let (doc, key, what, seen) = match item {
                Item::Host { doc, key, .. } => {
                    host_file.entry(key.clone()).or_insert(file);
                    (*doc, key, "BareMetalHost", &mut host_at)
                }
                Item::Secret { doc, key, .. } => (*doc, key, "Secret", &mut secret_at),
                Item::Firmware { doc, key, kind, .. } => {
                    if *kind == HOST_FIRMWARE_SETTINGS_KIND {
                        (*doc, key, *kind, &mut settings_at)
                    } else {
                        (*doc, key, *kind, &mut components_at)
                    }
                }
                Item::Other(_) => continue,
            };
            let pos = position(yaml, doc, &[PathSeg::Key("metadata"), PathSeg::Key("name")]);
            let here = format!("{}:{}:{}", pf.label.display(), pos.line, pos.column);
            if let Some(first) = seen.get(key) {
                errors.push(format!(
                    "{here}: {what} {key}: defined more than once (first at {first})"
                ));
            } else {
                seen.insert(key.clone(), here);
            }
        }
        for item in &pf.items {
            let Item::Other(o) = item else { continue };
            if !options.accepts(o) {
                continue;
            }
            let key = ObjectKey::new(&o.namespace, &o.name);
            if o.name.is_empty() {
                let pos = position(yaml, o.doc, &[PathSeg::Key("metadata")]);
                errors.push(format!(
                    "{}:{}:{}: {} without metadata.name",
                    pf.label.display(),
                    pos.line,
                    pos.column,
                    o.kind
                ));
                continue;
            }
            let pos = position(
                yaml,
                o.doc,
                &[PathSeg::Key("metadata"), PathSeg::Key("name")],
            );
            let here = format!("{}:{}:{}", pf.label.display(), pos.line, pos.column);
            match object_at.entry((o.kind.clone(), key)) {
                std::collections::hash_map::Entry::Occupied(first) => errors.push(format!(
                    "{here}: {} {}: defined more than once (first at {})",
                    o.kind,
                    first.key().1,
                    first.get()
                )),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(here);
                    kept.insert((file, o.doc));
                }
            }
        }
    }

    // Every firmware object belongs to a host in its own file.
    for (file, pf) in parsed.iter().enumerate() {
        let Some(yaml) = &pf.yaml else { continue };
        for item in &pf.items {
            let Item::Firmware { doc, key, kind, .. } = item else {
                continue;
            };
            let pos = position(
                yaml,
                *doc,
                &[PathSeg::Key("metadata"), PathSeg::Key("name")],
            );
            let here = format!("{}:{}:{}", pf.label.display(), pos.line, pos.column);
            match host_file.get(key) {
                Some(f) if *f == file => {}
                Some(f) => errors.push(format!(
                    "{here}: {kind} {key}: metadata.name: must be in the same file as \
                     BareMetalHost {key} (which is in {})",
                    parsed[*f].label.display()
                )),
                None => errors.push(format!(
                    "{here}: {kind} {key}: metadata.name: no BareMetalHost {key} in the given \
                     files (a {kind} belongs to the BareMetalHost of the same namespace and name)"
                )),
            }
        }
    }

    for (file_index, pf) in parsed.into_iter().enumerate() {
        let Some(yaml) = pf.yaml else { continue };
        let has_hosts = pf.items.iter().any(|i| matches!(i, Item::Host { .. }));
        let mut hosts = Vec::new();
        let mut firmware: HashMap<ObjectKey, Vec<(usize, FirmwareObject)>> = HashMap::new();
        for item in pf.items {
            match item {
                Item::Host { doc, key, host } => hosts.push((doc, key, host)),
                Item::Firmware {
                    doc,
                    key,
                    kind,
                    value,
                    object,
                } => {
                    if options.accepts_in(bmh_api::API_VERSION, kind, &key.namespace) {
                        inv.objects.insert_object(
                            TypedKey::new(bmh_api::API_VERSION, kind, key.clone()),
                            with_namespace(&value, &key.namespace),
                        );
                    }
                    if let Some(o) = object {
                        firmware.entry(key).or_default().push((doc, o));
                    }
                }
                Item::Secret {
                    secret: Some(s), ..
                } => inv.objects.insert_secret(s),
                Item::Secret { .. } => {}
                Item::Other(o) => {
                    if kept.contains(&(file_index, o.doc)) {
                        inv.objects.insert_object(
                            TypedKey::new(
                                &o.api_version,
                                &o.kind,
                                ObjectKey::new(&o.namespace, &o.name),
                            ),
                            with_namespace(&o.value, &o.namespace),
                        );
                    }
                    inv.other_documents.push(o);
                }
            }
        }
        if !has_hosts {
            continue;
        }
        let mut sidecar = match Sidecar::load(&pf.real) {
            Ok(s) => s,
            Err(Error::BadInput(m)) => {
                errors.push(m);
                continue;
            }
            Err(e) => return Err(e),
        };
        let host_keys: BTreeSet<String> = hosts.iter().map(|(_, k, _)| k.to_string()).collect();
        sidecar.keep_only(host_keys.clone());
        let file = inv.files.len();
        for (doc, key, host) in hosts {
            let Some(host) = host else { continue };
            let mut book = bookkeeping_at_load(sidecar.get(&key.to_string()), &host.spec);
            let (mut settings, mut components) = (None, None);
            let (mut settings_doc, mut components_doc) = (None, None);
            for (d, o) in firmware.remove(&key).unwrap_or_default() {
                match o {
                    FirmwareObject::Settings(s) if settings.is_none() => {
                        settings = Some(*s);
                        settings_doc = Some(d);
                    }
                    FirmwareObject::Components(c) if components.is_none() => {
                        components = Some(*c);
                        components_doc = Some(d);
                    }
                    _ => {}
                }
            }
            firmware_at_load(&mut book, settings.as_mut(), components.as_mut());
            inv.hosts.push(HostEntry {
                file,
                doc,
                key,
                record: HostRecord {
                    host: *host,
                    book,
                    firmware_settings: settings,
                    firmware_components: components,
                },
                firmware_settings_doc: settings_doc,
                firmware_components_doc: components_doc,
            });
        }
        let disk_stamp = Stamp::of(&pf.real);
        inv.files.push(HostFile {
            path: pf.label,
            real_path: pf.real,
            yaml,
            disk_text: None,
            disk_stamp,
            sidecar,
            lock: pf.lock,
            edited: BTreeSet::new(),
            pending: false,
            host_keys,
        });
    }
    Ok((inv, errors))
}

/// The files `paths` stand for, as [`load`] reads them: `(as shown, resolved)`. Paths that do
/// not exist are left out ([`load`] reports them).
pub fn input_files(paths: &[PathBuf]) -> Result<Vec<(PathBuf, PathBuf)>, Error> {
    expand(paths, &mut Vec::new())
}

/// The files the paths stand for: `(as shown, resolved)`.
fn expand(paths: &[PathBuf], errors: &mut Vec<String>) -> Result<Vec<(PathBuf, PathBuf)>, Error> {
    let mut out = Vec::new();
    for p in paths {
        let meta = match std::fs::metadata(p) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                errors.push(format!("{}: no such file or directory", p.display()));
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

fn read_text(real: &Path, label: &Path, errors: &mut Vec<String>) -> Result<Option<String>, Error> {
    let bytes = std::fs::read(real).map_err(|e| Error::io(label, e))?;
    match String::from_utf8(bytes) {
        Ok(t) => Ok(Some(t)),
        Err(_) => {
            errors.push(format!("{}: not UTF-8 text", label.display()));
            Ok(None)
        }
    }
}

fn position(yaml: &YamlFile, doc: usize, path: &[PathSeg]) -> TextPos {
    yaml.locate(doc, path).unwrap_or(TextPos {
        line: yaml.document_start_line(doc),
        column: 1,
    })
}

/// The string at `path`; a number or boolean as its text (so that a wrongly typed name still
/// identifies the object; the typed parse then reports the type); otherwise empty.
fn str_at<'a>(v: &'a Value, path: &[&str]) -> Cow<'a, str> {
    let mut cur = v;
    for k in path {
        match cur.get(k) {
            Some(x) => cur = x,
            None => return Cow::Borrowed(""),
        }
    }
    match cur {
        Value::String(s) => Cow::Borrowed(s),
        Value::Number(_) | Value::Bool(_) => Cow::Owned(cur.to_string()),
        _ => Cow::Borrowed(""),
    }
}

fn parse_file(label: &Path, real: &Path, text: String, mode: LoadMode) -> ParsedFile {
    let hash: [u8; 32] = Sha256::digest(text.as_bytes()).into();
    let mut pf = ParsedFile {
        label: label.to_path_buf(),
        real: real.to_path_buf(),
        hash,
        yaml: None,
        items: Vec::new(),
        errors: Vec::new(),
        lock: None,
    };
    let shown = label.display().to_string();
    let yaml = match YamlFile::parse(text) {
        Ok(y) => y,
        Err(YamlFileError::Syntax {
            line,
            column,
            message,
        }) => {
            pf.errors
                .push(format!("{shown}:{line}:{column}: {message}"));
            return pf;
        }
        Err(e) => {
            pf.errors.push(format!("{shown}: {e}"));
            return pf;
        }
    };
    // Lines before each document's text.
    let mut before = 0;
    for doc in 0..yaml.len() {
        let text = yaml.document_text(doc);
        let lines_before = before;
        before += text.bytes().filter(|&b| b == b'\n').count();
        let value: Value = match serde_saphyr::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                let (line, column, msg) = saphyr_error(&e);
                let (line, column) = if line == 0 {
                    (yaml.document_start_line(doc), 1)
                } else {
                    (lines_before + line, column)
                };
                pf.errors.push(format!("{shown}:{line}:{column}: {msg}"));
                continue;
            }
        };
        let at = |path: &[PathSeg]| {
            let p = position(&yaml, doc, path);
            format!("{shown}:{}:{}", p.line, p.column)
        };
        if value.is_null() {
            continue;
        }
        let api_version = str_at(&value, &["apiVersion"]);
        let kind = str_at(&value, &["kind"]);
        let name = str_at(&value, &["metadata", "name"]);
        let namespace = str_at(&value, &["metadata", "namespace"]);
        let namespace = if namespace.is_empty() {
            DEFAULT_NAMESPACE
        } else {
            &namespace
        };
        let key = ObjectKey::new(namespace, name.as_ref());
        match (api_version.as_ref(), kind.as_ref()) {
            (bmh_api::host::API_VERSION, bmh_api::host::KIND) => {
                if name.is_empty() {
                    pf.errors.push(format!(
                        "{}: BareMetalHost without metadata.name",
                        at(&[PathSeg::Key("metadata")])
                    ));
                    continue;
                }
                let host = match serde_path_to_error::deserialize::<_, BareMetalHost>(&value) {
                    Ok(h) => Some(Box::new(h)),
                    Err(e) => {
                        let path = e.path().to_string();
                        let segs = path_segs(e.path());
                        let field = if segs.is_empty() {
                            String::new()
                        } else {
                            format!("{path}: ")
                        };
                        pf.errors.push(format!(
                            "{}: BareMetalHost {key}: {field}{}",
                            at(&segs),
                            e.inner()
                        ));
                        None
                    }
                };
                if host.is_some() && mode == LoadMode::Write && !is_block_mapping(text) {
                    pf.errors.push(format!(
                        "{}: BareMetalHost {key}: not a block-style YAML mapping (JSON or a \
                         flow mapping `{{...}}`); bmhctl can only write the status of hosts \
                         written in block style",
                        at(&[])
                    ));
                }
                pf.items.push(Item::Host { doc, key, host });
            }
            (bmh_api::host::API_VERSION, HOST_FIRMWARE_SETTINGS_KIND)
            | (bmh_api::host::API_VERSION, HOST_FIRMWARE_COMPONENTS_KIND) => {
                let kind = if kind == HOST_FIRMWARE_SETTINGS_KIND {
                    HOST_FIRMWARE_SETTINGS_KIND
                } else {
                    HOST_FIRMWARE_COMPONENTS_KIND
                };
                if name.is_empty() {
                    pf.errors.push(format!(
                        "{}: {kind} without metadata.name",
                        at(&[PathSeg::Key("metadata")])
                    ));
                    continue;
                }
                let object = if kind == HOST_FIRMWARE_SETTINGS_KIND {
                    typed::<HostFirmwareSettings>(&value, kind, &key, &at, &mut pf.errors)
                        .map(|o| FirmwareObject::Settings(Box::new(o)))
                } else {
                    typed::<HostFirmwareComponents>(&value, kind, &key, &at, &mut pf.errors)
                        .map(|o| FirmwareObject::Components(Box::new(o)))
                };
                if object.is_some() && mode == LoadMode::Write && !is_block_mapping(text) {
                    pf.errors.push(format!(
                        "{}: {kind} {key}: not a block-style YAML mapping (JSON or a flow \
                         mapping `{{...}}`); bmhctl can only write the status of objects \
                         written in block style",
                        at(&[])
                    ));
                }
                pf.items.push(Item::Firmware {
                    doc,
                    key,
                    kind,
                    value,
                    object,
                });
            }
            ("v1", "Secret") => {
                if name.is_empty() {
                    pf.errors.push(format!(
                        "{}: Secret without metadata.name",
                        at(&[PathSeg::Key("metadata")])
                    ));
                    continue;
                }
                let mut problems = Vec::new();
                let data = secret_data(&value, |field, msg| {
                    let segs: Vec<PathSeg> = field.iter().map(|k| PathSeg::Key(k)).collect();
                    problems.push(format!(
                        "{}: Secret {key}: {}: {msg}",
                        at(&segs),
                        field.join(".")
                    ));
                });
                let secret = problems
                    .is_empty()
                    .then(|| ResolvedSecret::new(key.clone(), data));
                pf.errors.append(&mut problems);
                pf.items.push(Item::Secret { doc, key, secret });
            }
            _ => pf.items.push(Item::Other(OtherDocument {
                file: label.to_path_buf(),
                doc,
                api_version: api_version.to_string(),
                kind: kind.to_string(),
                namespace: key.namespace.clone(),
                name: name.to_string(),
                value: value.clone(),
            })),
        }
    }
    pf.yaml = Some(yaml);
    pf
}

/// `value` as a `T`; a problem is recorded as `file:line:column: KIND key: field: error`.
fn typed<T: DeserializeOwned>(
    value: &Value,
    kind: &str,
    key: &ObjectKey,
    at: &dyn Fn(&[PathSeg]) -> String,
    errors: &mut Vec<String>,
) -> Option<T> {
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(o) => Some(o),
        Err(e) => {
            let path = e.path().to_string();
            let segs = path_segs(e.path());
            let field = if segs.is_empty() {
                String::new()
            } else {
                format!("{path}: ")
            };
            errors.push(format!("{}: {kind} {key}: {field}{}", at(&segs), e.inner()));
            None
        }
    }
}

/// `value` with `metadata.namespace` filled in when absent (as an API server answers it).
fn with_namespace(value: &Value, namespace: &str) -> Value {
    let mut value = value.clone();
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut)
        && meta
            .get("namespace")
            .is_none_or(|n| n.as_str().is_some_and(str::is_empty) || n.is_null())
    {
        meta.insert("namespace".into(), Value::String(namespace.to_string()));
    }
    value
}

/// `data` (base64, ASCII whitespace ignored, as a YAML folded scalar may add it) with
/// `stringData` merged over it. Values never appear in messages.
fn secret_data(value: &Value, mut problem: impl FnMut(&[&str], &str)) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for field in ["data", "stringData"] {
        let map = match value.get(field) {
            None | Some(Value::Null) => continue,
            Some(Value::Object(m)) => m,
            Some(_) => {
                problem(&[field], "must be a mapping of keys to strings");
                continue;
            }
        };
        for (k, v) in map {
            let text = match v {
                Value::String(s) => s.as_str(),
                Value::Null => "",
                _ => {
                    problem(
                        &[field, k],
                        "must be a string (quote it; the value is not shown)",
                    );
                    continue;
                }
            };
            if field == "data" {
                let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
                match base64::engine::general_purpose::STANDARD.decode(compact) {
                    Ok(bytes) => {
                        out.insert(k.clone(), bytes);
                    }
                    Err(_) => problem(
                        &[field, k],
                        "not valid base64 (data values are base64-encoded; use stringData for \
                         plain text)",
                    ),
                }
            } else {
                out.insert(k.clone(), text.as_bytes().to_vec());
            }
        }
    }
    out
}

fn path_segs(path: &serde_path_to_error::Path) -> Vec<PathSeg<'_>> {
    use serde_path_to_error::Segment;
    path.iter()
        .map_while(|s| match s {
            Segment::Map { key } => Some(PathSeg::Key(key)),
            Segment::Enum { variant } => Some(PathSeg::Key(variant)),
            Segment::Seq { index } => Some(PathSeg::Index(*index)),
            Segment::Unknown => None,
        })
        .collect()
}

/// Line (1-based, in the parsed text; 0 = unknown), column and message of a serde_saphyr error.
fn saphyr_error(e: &serde_saphyr::Error) -> (usize, usize, String) {
    let msg = e.without_snippet().to_string();
    match e.location() {
        Some(loc) if loc.line() > 0 => {
            let suffix = format!(" at line {}, column {}", loc.line(), loc.column());
            let msg = msg.strip_suffix(&suffix).unwrap_or(&msg).to_string();
            (loc.line() as usize, loc.column().max(1) as usize, msg)
        }
        _ => (0, 1, msg),
    }
}

/// Whether bmhctl can splice a status into this document (probing a copy of it).
fn is_block_mapping(doc_text: &str) -> bool {
    YamlFile::parse(doc_text.to_string())
        .is_ok_and(|mut y| y.len() == 1 && y.set_status(0, None).is_ok())
}

// ---------------------------------------------------------------------------------------------
// Writing

/// Size, modification time and inode of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: std::time::SystemTime,
    ino: u64,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(Stamp {
            len: m.len(),
            modified: m.modified().ok()?,
            ino: m.ino(),
        })
    }
}

impl HostFile {
    fn disk_text(&self) -> &str {
        self.disk_text
            .as_deref()
            .unwrap_or_else(|| self.yaml.source_text())
    }
}

impl HostFile {
    /// The path as the user gave it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The resolved path (symlinks followed): what is read, locked and written.
    pub fn real_path(&self) -> &Path {
        &self.real_path
    }

    /// The file's text and staged edits.
    pub fn yaml(&self) -> &YamlFile {
        &self.yaml
    }

    pub fn sidecar(&self) -> &Sidecar {
        &self.sidecar
    }

    /// Whether this file was loaded in [`LoadMode::Write`] (and is locked).
    pub fn is_writable(&self) -> bool {
        self.lock.is_some()
    }

    /// Set (`Some`) or remove (`None`) the document's `status`. A status equal to the one in
    /// the file is not an edit, so the user's formatting of an unchanged status is kept.
    ///
    /// Works for any object's status (a host's, a HostFirmwareSettings', ...); `T` is the
    /// status type the document's `status:` is compared as.
    pub fn stage_status<T>(&mut self, doc: usize, status: Option<&T>) -> Result<(), Error>
    where
        T: Serialize + DeserializeOwned + PartialEq + Clone,
    {
        if !self.edited.contains(&doc)
            && self.status_in_file::<T>(doc).as_ref() == Some(&status.cloned())
        {
            return Ok(());
        }
        let text = match status {
            Some(s) => Some(serde_saphyr::to_string(s).map_err(|e| {
                Error::Other(anyhow::anyhow!("cannot serialize the status as YAML: {e}"))
            })?),
            None => None,
        };
        self.yaml
            .set_status(doc, text.as_deref())
            .map_err(|e| self.edit_error(doc, e))?;
        self.edited.insert(doc);
        self.pending = true;
        Ok(())
    }

    /// The status of `doc` as the file has it: `Some(None)` = no status, `None` = unreadable.
    fn status_in_file<T: DeserializeOwned>(&self, doc: usize) -> Option<Option<T>> {
        let v: Value = serde_saphyr::from_str(self.yaml.document_text(doc)).ok()?;
        match v.get("status") {
            None | Some(Value::Null) => Some(None),
            Some(s) => serde_json::from_value(s.clone()).ok().map(Some),
        }
    }

    /// Remove these keys from the document's `metadata.annotations`; returns whether any was
    /// there.
    pub fn stage_removed_annotations(&mut self, doc: usize, keys: &[&str]) -> Result<bool, Error> {
        let removed = self
            .yaml
            .remove_annotations(doc, keys)
            .map_err(|e| self.edit_error(doc, e))?;
        if removed {
            self.edited.insert(doc);
            self.pending = true;
        }
        Ok(removed)
    }

    /// Set (`Some`) or remove (`None`) a host's sidecar entry. Setting the entry of a host
    /// that is not in this file is an (internal) error. An entry equal to the saved one is not
    /// a change.
    pub fn stage_bookkeeping(
        &mut self,
        key: &ObjectKey,
        book: Option<&Bookkeeping>,
    ) -> Result<(), Error> {
        let k = key.to_string();
        if book.is_some() && !self.host_keys.contains(&k) {
            return Err(Error::Other(anyhow::anyhow!(
                "{}: internal error: host {k} is not in this file",
                self.path.display()
            )));
        }
        self.sidecar.set(&k, book);
        Ok(())
    }

    fn edit_error(&self, doc: usize, e: YamlFileError) -> Error {
        let p = position(&self.yaml, doc, &[]);
        Error::BadInput(format!(
            "{}:{}:{}: {e}",
            self.path.display(),
            p.line,
            p.column
        ))
    }

    /// Whether [`commit`](Self::commit) would write anything.
    pub fn has_changes(&self) -> bool {
        self.sidecar.is_dirty() || (self.pending && self.yaml.render() != self.disk_text())
    }

    /// Write what was staged: the sidecar first, then the file (only if its bytes changed),
    /// both atomically. Nothing is written when nothing changed. Refuses with
    /// [`Error::Conflict`] when the file on disk no longer has the content bmhctl last read or
    /// wrote (someone edited it meanwhile).
    pub fn commit(&mut self) -> Result<CommitStats, Error> {
        let sidecar_dirty = self.sidecar.is_dirty();
        let rendered = if !self.pending {
            None
        } else {
            Some(self.yaml.render()).filter(|r| r != self.disk_text())
        };
        if !sidecar_dirty && rendered.is_none() {
            self.pending = false;
            return Ok(CommitStats::default());
        }
        if self.lock.is_none() {
            return Err(Error::Other(anyhow::anyhow!(
                "{}: loaded read-only; not writing",
                self.path.display()
            )));
        }
        let shown = self.path.display();
        let unchanged = |f: &Self| -> std::io::Result<bool> {
            if f.disk_stamp.is_some() && Stamp::of(&f.real_path) == f.disk_stamp {
                return Ok(true);
            }
            Ok(std::fs::read(&f.real_path)? == f.disk_text().as_bytes())
        };
        match unchanged(self) {
            Ok(true) => {}
            Ok(false) => {
                return Err(Error::Conflict(format!(
                    "{shown} changed on disk since bmhctl read it; not overwriting"
                )));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::Conflict(format!(
                    "{shown} was removed since bmhctl read it; not writing it again"
                )));
            }
            Err(e) => return Err(Error::io(&self.path, e)),
        }
        let mut stats = CommitStats::default();
        if sidecar_dirty {
            stats.sidecar_written = self.sidecar.save()?;
        }
        if let Some(r) = rendered {
            write_atomic(&self.real_path, r.as_bytes()).map_err(|e| Error::io(&self.path, e))?;
            self.disk_stamp = Stamp::of(&self.real_path);
            self.disk_text = Some(r);
            stats.file_written = true;
        }
        self.pending = false;
        Ok(stats)
    }

    /// The hosts of this file, as `namespace/name`.
    pub fn host_keys(&self) -> &BTreeSet<String> {
        &self.host_keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bmh_api::BareMetalHostStatus;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    const HOSTS: &str = "# two hosts and a ConfigMap
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: host-0
spec:
  online: true
  bmc:
    address: ipmi://10.0.0.1
    credentialsName: host-0-bmc
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: host-1
  namespace: lab
spec:
  online: false
  bmc:
    address: redfish://10.0.0.2
    credentialsName: host-1-bmc
  userData:
    name: ud
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
data:
  a: b
";

    const SECRETS: &str = "apiVersion: v1
kind: Secret
metadata:
  name: host-0-bmc
data:
  username: YWRt
    aW4=
  password: c2VjcmV0
stringData:
  password: override
---
apiVersion: v1
kind: Secret
metadata:
  name: host-1-bmc
  namespace: lab
stringData:
  username: root
  password: calvin
---
apiVersion: v1
kind: Secret
metadata: {name: ud, namespace: lab}
stringData: {userData: \"#cloud-config\\n\"}
";

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn status(op: &str) -> BareMetalHostStatus {
        serde_json::from_value(serde_json::json!({
            "operationalStatus": op,
            "lastUpdated": "2024-01-01T00:00:00Z",
            "provisioning": {"state": "available", "ID": "abc"},
            "poweredOn": true,
        }))
        .unwrap()
    }

    fn bad_input(paths: &[PathBuf]) -> String {
        match load_checked(paths, LoadMode::Write) {
            Err(Error::BadInput(m)) => m,
            Err(e) => panic!("{e:?}"),
            Ok(_) => panic!("loaded"),
        }
    }

    /// Modification time and inode: both change when a file is (re)written atomically.
    fn stamp(p: &Path) -> (std::time::SystemTime, u64) {
        let m = std::fs::metadata(p).unwrap();
        (m.modified().unwrap(), m.ino())
    }

    fn sidecar_of(p: &Path) -> PathBuf {
        Sidecar::path_for(&std::fs::canonicalize(p).unwrap())
    }

    #[test]
    fn loads_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "hosts.yaml", HOSTS);
        write(d, "secrets.yml", SECRETS);
        write(d, ".hidden.yaml", "{{{ not yaml");
        write(d, "notes.txt", "{{{ not yaml");
        std::fs::create_dir_all(d.join(".bmhctl")).unwrap();
        std::fs::create_dir_all(d.join("sub")).unwrap();
        write(&d.join("sub"), "x.yaml", "{{{ not yaml");
        let inv = load_checked(&[d.to_path_buf()], LoadMode::ReadOnly).unwrap();

        assert_eq!(inv.files.len(), 1, "only files with hosts");
        assert_eq!(inv.files[0].path(), d.join("hosts.yaml"));
        assert!(!inv.files[0].is_writable());
        let keys: Vec<String> = inv.hosts.iter().map(|h| h.key.to_string()).collect();
        assert_eq!(keys, ["default/host-0", "lab/host-1"]);
        assert_eq!((inv.hosts[1].file, inv.hosts[1].doc), (0, 1));
        let h0 = &inv.hosts[0].record;
        assert!(h0.host.spec.online);
        assert_eq!(h0.host.metadata.name, "host-0");
        assert_eq!(h0.book.generation, 1);
        assert_eq!(h0.book.uid.len(), 36);
        assert_ne!(h0.book.uid, inv.hosts[1].record.book.uid);
        assert_eq!(h0.book.spec_hash, spec_hash(&h0.host.spec).0);
        assert_eq!(
            h0.book.spec_snapshot.as_ref().unwrap()["bmc"]["credentialsName"],
            "host-0-bmc"
        );

        let s = inv
            .objects
            .get_secret(&ObjectKey::new("default", "host-0-bmc"))
            .unwrap();
        assert_eq!(s.get_str("username").unwrap(), "admin");
        assert_eq!(
            s.get_str("password").unwrap(),
            "override",
            "stringData wins"
        );
        let s = inv
            .objects
            .get_secret(&ObjectKey::new("lab", "host-1-bmc"))
            .unwrap();
        assert_eq!(s.get_str("password").unwrap(), "calvin");
        let s = inv
            .objects
            .get_secret(&ObjectKey::new("lab", "ud"))
            .unwrap();
        assert_eq!(s.get_str("userData").unwrap(), "#cloud-config\n");
        assert_eq!(inv.objects.secret_count(), 3);

        assert_eq!(
            inv.other_documents,
            [OtherDocument {
                file: d.join("hosts.yaml"),
                doc: 2,
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: "default".into(),
                name: "cm".into(),
                value: serde_json::json!({
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "cm"},
                    "data": {"a": "b"},
                }),
            }]
        );
        // No extra kinds asked for: nothing but Secrets offered.
        assert_eq!(inv.objects.object_keys().count(), 0);
        // Read-only: no lock, no sidecar, nothing created.
        assert!(!d.join(".bmhctl/hosts.yaml.lock").exists());
        assert!(!sidecar_of(&d.join("hosts.yaml")).exists());
        // The same file reached twice is loaded once.
        let inv = load(&[d.join("hosts.yaml"), d.to_path_buf()], LoadMode::Write).unwrap();
        assert_eq!(inv.files.len(), 1);
        assert_eq!(inv.hosts.len(), 2);
    }

    #[test]
    fn wrong_field_type_names_file_position_host_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let text = "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: host-1\nspec:\n  online: \"yes\"\n---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: host-2\n  namespace: lab\nspec:\n  online: true\n  rootDeviceHints:\n    minSizeGigabytes: big\n---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: host-3\n";
        let p = write(dir.path(), "hosts.yaml", text);
        let f = p.display();
        assert_eq!(
            bad_input(std::slice::from_ref(&p)),
            format!(
                "{f}:6:11: BareMetalHost default/host-1: spec.online: invalid type: string \"yes\", expected a boolean\n\
                 {f}:16:23: BareMetalHost lab/host-2: spec.rootDeviceHints.minSizeGigabytes: invalid type: string \"big\", expected i64\n\
                 {f}:18:1: BareMetalHost default/host-3: missing field `spec`"
            )
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
        assert!(!sidecar_of(&p).exists());
    }

    #[test]
    fn syntax_errors_and_missing_names() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "a.yaml", "a: 1\nb: [1, 2\nc: 3\n");
        let b = write(
            dir.path(),
            "b.yaml",
            "apiVersion: v1\nkind: Secret\nstringData: {a: b}\n---\n# c\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  namespace: x\nspec:\n  online: true\n",
        );
        let msg = bad_input(&[a.clone(), b.clone()]);
        let lines: Vec<&str> = msg.lines().collect();
        assert_eq!(lines.len(), 3, "{msg}");
        assert!(lines[0].starts_with(&format!("{}:", a.display())), "{msg}");
        let pos = lines[0][a.display().to_string().len() + 1..]
            .split(':')
            .take(2)
            .map(|n| n.parse::<usize>().unwrap())
            .collect::<Vec<_>>();
        assert!(pos[0] >= 2 && pos[1] >= 1, "{msg}");
        assert_eq!(
            lines[1],
            format!("{}:1:1: Secret without metadata.name", b.display())
        );
        assert_eq!(
            lines[2],
            format!("{}:9:3: BareMetalHost without metadata.name", b.display())
        );
    }

    #[test]
    fn wrongly_typed_name_is_a_type_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "h.yaml",
            "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: 123\nspec:\n  online: true\n",
        );
        assert_eq!(
            bad_input(std::slice::from_ref(&p)),
            format!(
                "{}:4:9: BareMetalHost default/123: metadata.name: invalid type: integer `123`, expected a string",
                p.display()
            )
        );
    }

    #[test]
    fn duplicates_name_both_places() {
        let dir = tempfile::tempdir().unwrap();
        let host = |name: &str| {
            format!(
                "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {name}\nspec:\n  online: true\n"
            )
        };
        let a = write(dir.path(), "a.yaml", &host("h"));
        let b = write(
            dir.path(),
            "b.yaml",
            &format!(
                "{}---\n{}---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: default\n",
                host("other"),
                host("h")
            ),
        );
        assert_eq!(
            bad_input(&[a.clone(), b.clone()]),
            format!(
                "{b}:11:9: BareMetalHost default/h: defined more than once (first at {a}:4:9)\n\
                 {b}:23:9: Secret default/s: defined more than once (first at {b}:18:9)",
                a = a.display(),
                b = b.display()
            )
        );
    }

    #[test]
    fn missing_secrets_and_bad_secret_values() {
        let dir = tempfile::tempdir().unwrap();
        let hosts = write(
            dir.path(),
            "hosts.yaml",
            "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: host-0\nspec:\n  online: true\n  bmc:\n    address: ipmi://1.2.3.4\n    credentialsName: host-0-bmc\n  networkData:\n    name: nd\n    namespace: other\n  metaData:\n    name: md\n",
        );
        let secrets = write(
            dir.path(),
            "secrets.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: md\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: broken\ndata:\n  password: not*base64\nstringData:\n  port: 623\n",
        );
        let (h, s) = (hosts.display(), secrets.display());
        let msg = bad_input(&[hosts.clone(), secrets.clone()]);
        assert_eq!(
            msg,
            format!(
                "{s}:11:13: Secret default/broken: data.password: not valid base64 (data values are base64-encoded; use stringData for plain text)\n\
                 {s}:13:9: Secret default/broken: stringData.port: must be a string (quote it; the value is not shown)\n\
                 {h}:9:22: BareMetalHost default/host-0: spec.bmc.credentialsName: Secret default/host-0-bmc not found in the given files\n\
                 {h}:11:11: BareMetalHost default/host-0: spec.networkData.name: Secret other/nd not found in the given files"
            )
        );
        assert!(!msg.contains("not*base64") && !msg.contains("623"));
        // `load` alone does not check references; `check_secret_references` does.
        std::fs::write(
            &secrets,
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: md\n",
        )
        .unwrap();
        let inv = load(&[hosts.clone(), secrets.clone()], LoadMode::ReadOnly).unwrap();
        let Err(Error::BadInput(m)) = check_secret_references(&inv) else {
            panic!()
        };
        assert_eq!(m.lines().count(), 2, "{m}");
        assert!(!sidecar_of(&hosts).exists());
    }

    #[test]
    fn flow_style_host_is_refused_for_writing() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "h.json",
            "{\"apiVersion\": \"metal3.io/v1alpha1\", \"kind\": \"BareMetalHost\", \"metadata\": {\"name\": \"j\"}, \"spec\": {\"online\": true}}\n",
        );
        let msg = bad_input(std::slice::from_ref(&p));
        assert!(
            msg.starts_with(&format!(
                "{}:1:1: BareMetalHost default/j: not a block-style",
                p.display()
            )),
            "{msg}"
        );
        // Reading it is fine.
        assert_eq!(load(&[p], LoadMode::ReadOnly).unwrap().hosts.len(), 1);
    }

    #[test]
    fn commit_writes_status_and_sidecar_then_nothing_when_stable() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "hosts.yaml", HOSTS);
        let s = write(dir.path(), "secrets.yaml", SECRETS);
        let paths = [p.clone(), s.clone()];
        let secrets_stamp = stamp(&s);

        let mut inv = load_checked(&paths, LoadMode::Write).unwrap();
        assert!(inv.files[0].is_writable());
        // Nothing staged: nothing written.
        assert_eq!(inv.commit_all().unwrap(), CommitStats::default());
        assert!(!sidecar_of(&p).exists());

        let books: Vec<_> = inv
            .hosts
            .iter()
            .map(|h| (h.key.clone(), h.record.book.clone()))
            .collect();
        let f = &mut inv.files[0];
        f.stage_status(0, Some(&status("OK"))).unwrap();
        for (k, b) in &books {
            f.stage_bookkeeping(k, Some(b)).unwrap();
        }
        assert!(f.has_changes());
        assert_eq!(
            f.commit().unwrap(),
            CommitStats {
                file_written: true,
                sidecar_written: true
            }
        );
        drop(inv);
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            text.starts_with(&HOSTS[..HOSTS.find("---").unwrap()]),
            "{text}"
        );
        assert!(
            text.contains("    credentialsName: host-0-bmc\nstatus:\n  operationalStatus: OK\n"),
            "{text}"
        );
        assert!(
            text.ends_with(&HOSTS[HOSTS.find("---").unwrap()..]),
            "{text}"
        );
        assert_eq!(stamp(&s), secrets_stamp, "Secrets files are never written");

        // A second run that computes the same results writes nothing.
        let (file_stamp, side_stamp) = (stamp(&p), stamp(&sidecar_of(&p)));
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut inv = load_checked(&paths, LoadMode::Write).unwrap();
        for (h, (k, b)) in inv.hosts.iter().zip(&books) {
            assert_eq!(&h.record.book, b, "{k}");
        }
        assert_eq!(inv.hosts[0].record.host.status, Some(status("OK")));
        let entries: Vec<_> = inv
            .hosts
            .iter()
            .map(|h| (h.doc, h.key.clone(), h.record.clone()))
            .collect();
        let f = &mut inv.files[0];
        for (doc, key, rec) in &entries {
            f.stage_status(*doc, rec.host.status.as_ref()).unwrap();
            f.stage_bookkeeping(key, Some(&rec.book)).unwrap();
        }
        assert!(!f.stage_removed_annotations(0, &["nope"]).unwrap());
        assert!(!f.has_changes());
        assert_eq!(f.commit().unwrap(), CommitStats::default());
        drop(inv);
        assert_eq!(stamp(&p), file_stamp);
        assert_eq!(stamp(&sidecar_of(&p)), side_stamp);

        // Removing the status again restores the original bytes.
        let mut inv = load(&paths, LoadMode::Write).unwrap();
        inv.files[0]
            .stage_status::<BareMetalHostStatus>(0, None)
            .unwrap();
        let stats = inv.commit_all().unwrap();
        assert!(stats.file_written && !stats.sidecar_written);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), HOSTS);
    }

    #[test]
    fn annotations_removed_and_consecutive_commits() {
        let dir = tempfile::tempdir().unwrap();
        let text = "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: h\n  annotations:\n    reboot.metal3.io: \"\"\n    keep: x\nspec:\n  online: true\n";
        let p = write(dir.path(), "hosts.yaml", text);
        let mut inv = load(std::slice::from_ref(&p), LoadMode::Write).unwrap();
        let f = &mut inv.files[0];
        assert!(
            f.stage_removed_annotations(0, &["reboot.metal3.io"])
                .unwrap()
        );
        assert!(f.commit().unwrap().file_written);
        // The file was re-read after the commit: further edits apply to the new text.
        f.stage_status(0, Some(&status("discovered"))).unwrap();
        assert!(f.commit().unwrap().file_written);
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: h\n  annotations:\n    keep: x\nspec:\n  online: true\nstatus:\n  operationalStatus: discovered\n  lastUpdated: \"2024-01-01T00:00:00Z\"\n  provisioning:\n    state: available\n    ID: abc\n    image:\n      url: \"\"\n  errorMessage: \"\"\n  poweredOn: true\n  errorCount: 0\n  provisioningFailCount: 0\n"
        );
        drop(inv);
        let inv = load(&[p], LoadMode::ReadOnly).unwrap();
        assert_eq!(inv.hosts[0].record.host.status, Some(status("discovered")));
    }

    #[test]
    fn symlinked_file_stays_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let real_dir = dir.path().join("checkout");
        std::fs::create_dir(&real_dir).unwrap();
        let target = write(&real_dir, "real-hosts.yaml", HOSTS);
        write(dir.path(), "secrets.yaml", SECRETS);
        let link = dir.path().join("hosts.yaml");
        std::os::unix::fs::symlink("checkout/real-hosts.yaml", &link).unwrap();

        let mut inv = load_checked(&[dir.path().to_path_buf()], LoadMode::Write).unwrap();
        let f = &mut inv.files[0];
        assert_eq!(f.path(), link);
        assert_eq!(f.real_path(), std::fs::canonicalize(&target).unwrap());
        f.stage_status(1, Some(&status("OK"))).unwrap();
        let key = ObjectKey::new("lab", "host-1");
        let book = inv.host(&key).unwrap().record.book.clone();
        inv.files[0].stage_bookkeeping(&key, Some(&book)).unwrap();
        inv.commit_all().unwrap();

        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_link(&link).unwrap(),
            Path::new("checkout/real-hosts.yaml")
        );
        assert!(
            std::fs::read_to_string(&target)
                .unwrap()
                .contains("status:\n  operationalStatus: OK\n")
        );
        // Sidecar and lock live beside the target.
        assert!(real_dir.join(".bmhctl/real-hosts.yaml.state.json").exists());
        assert!(real_dir.join(".bmhctl/real-hosts.yaml.lock").exists());
        assert!(!dir.path().join(".bmhctl").exists());
    }

    #[test]
    fn mode_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "hosts.yaml", HOSTS);
        write(dir.path(), "secrets.yaml", SECRETS);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut inv = load(&[dir.path().to_path_buf()], LoadMode::Write).unwrap();
        inv.files[0].stage_status(0, Some(&status("OK"))).unwrap();
        assert!(inv.commit_all().unwrap().file_written);
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn external_change_is_a_conflict() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "hosts.yaml", HOSTS);
        let mut inv = load(std::slice::from_ref(&p), LoadMode::Write).unwrap();
        let edited = HOSTS.replace("online: true", "online: false");
        std::fs::write(&p, &edited).unwrap();
        let key = inv.hosts[0].key.clone();
        let book = inv.hosts[0].record.book.clone();
        let f = &mut inv.files[0];
        f.stage_status(0, Some(&status("OK"))).unwrap();
        f.stage_bookkeeping(&key, Some(&book)).unwrap();
        let err = f.commit().unwrap_err();
        let Error::Conflict(msg) = err else {
            panic!("{err:?}")
        };
        assert_eq!(
            msg,
            format!(
                "{} changed on disk since bmhctl read it; not overwriting",
                p.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), edited);
        assert!(!sidecar_of(&p).exists());
    }

    #[test]
    fn second_writer_conflicts_readers_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "hosts.yaml", HOSTS);
        let s = write(dir.path(), "secrets.yaml", SECRETS);
        let first = load(&[p.clone(), s.clone()], LoadMode::Write).unwrap();
        let err = load(&[dir.path().to_path_buf()], LoadMode::Write).unwrap_err();
        let Error::Conflict(msg) = err else {
            panic!("{err:?}")
        };
        let lock = std::fs::canonicalize(dir.path())
            .unwrap()
            .join(".bmhctl/hosts.yaml.lock");
        assert_eq!(
            msg,
            format!(
                "{} is in use by another bmhctl process (lock {})",
                dir.path().join("hosts.yaml").display(),
                lock.display()
            )
        );
        // Readers take no lock; a Secrets-only file is never locked.
        load(std::slice::from_ref(&p), LoadMode::ReadOnly).unwrap();
        load(std::slice::from_ref(&s), LoadMode::Write).unwrap();
        drop(first);
        load(&[p], LoadMode::Write).unwrap();
    }

    #[test]
    fn generation_bumps_when_the_spec_changes() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "hosts.yaml", HOSTS);
        let paths = [p.clone()];
        let save_books = |inv: &mut Inventory| {
            let books: Vec<_> = inv
                .hosts
                .iter()
                .map(|h| (h.key.clone(), h.record.book.clone()))
                .collect();
            for (k, b) in &books {
                inv.files[0].stage_bookkeeping(k, Some(b)).unwrap();
            }
            inv.commit_all().unwrap();
        };
        let mut inv = load(&paths, LoadMode::Write).unwrap();
        let first = inv.hosts[0].record.book.clone();
        save_books(&mut inv);
        drop(inv);

        // Unchanged spec (a comment and key order don't count): same generation and uid.
        std::fs::write(&p, HOSTS.replace("  online: true\n  bmc:\n    address: ipmi://10.0.0.1\n    credentialsName: host-0-bmc\n", "  bmc:\n    credentialsName: host-0-bmc # c\n    address: ipmi://10.0.0.1\n  online: true\n")).unwrap();
        let mut inv = load(&paths, LoadMode::Write).unwrap();
        assert_eq!(inv.hosts[0].record.book, first);
        save_books(&mut inv);
        drop(inv);

        std::fs::write(&p, HOSTS.replace("online: true", "online: false")).unwrap();
        let mut inv = load(&paths, LoadMode::Write).unwrap();
        let b = &inv.hosts[0].record.book;
        assert_eq!(b.uid, first.uid);
        assert_eq!(b.generation, 2);
        assert_ne!(b.spec_hash, first.spec_hash);
        assert_eq!(b.spec_snapshot.as_ref().unwrap()["online"], false);
        assert_eq!(
            inv.hosts[1].record.book.generation, 1,
            "other host unchanged"
        );
        save_books(&mut inv);
        drop(inv);
        // Not saved: loading again without a change keeps generation 2, and a new bump is 3.
        std::fs::write(
            &p,
            HOSTS
                .replace("online: true", "online: false")
                .replace("10.0.0.1", "10.0.0.9"),
        )
        .unwrap();
        let inv = load(&paths, LoadMode::Write).unwrap();
        assert_eq!(inv.hosts[0].record.book.generation, 3);
    }

    #[test]
    fn stale_sidecar_entries_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "hosts.yaml", HOSTS);
        let mut inv = load(std::slice::from_ref(&p), LoadMode::Write).unwrap();
        let books: Vec<_> = inv
            .hosts
            .iter()
            .map(|h| (h.key.clone(), h.record.book.clone()))
            .collect();
        for (k, b) in &books {
            inv.files[0].stage_bookkeeping(k, Some(b)).unwrap();
        }
        inv.commit_all().unwrap();
        drop(inv);
        // host-1 leaves the file.
        std::fs::write(&p, &HOSTS[..HOSTS.find("---").unwrap()]).unwrap();
        let mut inv = load(std::slice::from_ref(&p), LoadMode::Write).unwrap();
        assert_eq!(inv.hosts.len(), 1);
        let stats = inv.commit_all().unwrap();
        assert!(stats.sidecar_written && !stats.file_written);
        let sc = Sidecar::load(&std::fs::canonicalize(&p).unwrap()).unwrap();
        assert!(sc.get("default/host-0").is_some());
        assert!(sc.get("lab/host-1").is_none());
    }

    #[test]
    fn corrupt_sidecar_is_reported_with_other_problems() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "hosts.yaml", HOSTS);
        let sc = sidecar_of(&p);
        std::fs::create_dir_all(sc.parent().unwrap()).unwrap();
        std::fs::write(&sc, "garbage").unwrap();
        let msg = bad_input(&[p]);
        assert!(
            msg.starts_with(&format!("{}: cannot read", sc.display())),
            "{msg}"
        );
        assert_eq!(std::fs::read_to_string(&sc).unwrap(), "garbage");
    }

    const WIDGETS: &str = "apiVersion: example.bmhctl.metal3.io/v1alpha1
kind: Widget
metadata:
  name: w
spec:
  colour: blue
---
apiVersion: example.bmhctl.metal3.io/v1alpha1
kind: Widget
metadata:
  name: w
  namespace: elsewhere
spec:
  colour: red
---
apiVersion: example.bmhctl.metal3.io/v1alpha1
kind: Gadget
metadata:
  name: g
---
apiVersion: example.bmhctl.metal3.io/v1alpha1
kind: Gadget
metadata:
  name: g
";

    fn widget_options(namespace: Option<&str>) -> LoadOptions {
        LoadOptions {
            extra_kinds: vec![bmhctl_plugin_sdk::abi::ObjectKind {
                api_version: "example.bmhctl.metal3.io/v1alpha1".into(),
                kind: "Widget".into(),
            }],
            namespace: namespace.map(str::to_string),
        }
    }

    #[test]
    fn extra_kinds_are_kept_as_objects_in_their_namespace() {
        use crate::objects::ObjectSource;
        let dir = tempfile::tempdir().unwrap();
        let h = write(dir.path(), "hosts.yaml", HOSTS);
        let w = write(dir.path(), "widgets.yaml", WIDGETS);
        let paths = [h, w];
        let api = "example.bmhctl.metal3.io/v1alpha1";

        // Every namespace.
        let inv = load_with(&paths, LoadMode::ReadOnly, &widget_options(None)).unwrap();
        let keys: Vec<String> = inv.objects.object_keys().map(|k| k.to_string()).collect();
        assert_eq!(
            keys,
            [
                format!("{api} Widget default/w"),
                format!("{api} Widget elsewhere/w"),
            ]
        );
        let blue = inv
            .objects
            .object(api, "Widget", &ObjectKey::new("default", "w"))
            .unwrap();
        assert_eq!(blue["spec"]["colour"], "blue");
        // The namespace is filled in, as an API server would.
        assert_eq!(blue["metadata"]["namespace"], "default");
        // Gadgets (duplicated, but not asked for) and the ConfigMap stay ignored.
        assert_eq!(inv.other_documents.len(), 5);
        assert_eq!(
            inv.objects
                .object(api, "Gadget", &ObjectKey::new("default", "g")),
            None
        );
        // Secrets are still Secrets.
        assert!(
            inv.objects
                .object("v1", "Secret", &ObjectKey::new("default", "host-0-bmc"))
                .is_none(),
            "no Secrets file given"
        );

        // One namespace only.
        let inv = load_with(
            &paths,
            LoadMode::ReadOnly,
            &widget_options(Some("elsewhere")),
        )
        .unwrap();
        let keys: Vec<String> = inv.objects.object_keys().map(|k| k.to_string()).collect();
        assert_eq!(keys, [format!("{api} Widget elsewhere/w")]);
    }

    #[test]
    fn duplicate_extra_kind_objects_name_both_places() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "a.yaml", WIDGETS);
        let b = write(
            dir.path(),
            "b.yaml",
            "apiVersion: example.bmhctl.metal3.io/v1alpha1\nkind: Widget\nmetadata:\n  name: w\n---\napiVersion: example.bmhctl.metal3.io/v1alpha1\nkind: Widget\nmetadata:\n  namespace: x\n",
        );
        let paths = [a.clone(), b.clone()];
        let Err(Error::BadInput(msg)) =
            load_with(&paths, LoadMode::ReadOnly, &widget_options(None))
        else {
            panic!("loaded")
        };
        assert_eq!(
            msg,
            format!(
                "{b}:4:9: Widget default/w: defined more than once (first at {a}:4:9)\n\
                 {b}:9:3: Widget without metadata.name",
                a = a.display(),
                b = b.display()
            )
        );
        // Out of the namespace, or without the extra kind: no problem.
        load_with(&paths, LoadMode::ReadOnly, &widget_options(Some("other"))).unwrap();
        load(&paths, LoadMode::ReadOnly).unwrap();
    }

    const FIRMWARE: &str = "apiVersion: metal3.io/v1alpha1
kind: HostFirmwareSettings
metadata:
  name: host-0
spec:
  settings:
    ProcVirtualization: Disabled # off for the benchmark
    NetworkBootRetryCount: 7
---
# updates
apiVersion: metal3.io/v1alpha1
kind: HostFirmwareComponents
metadata:
  name: host-1
  namespace: lab
spec:
  updates:
  - component: bmc
    url: http://fw.example/bmc.bin
";

    #[test]
    fn firmware_objects_load_with_their_host_and_their_status_is_written_back() {
        use bmh_api::{HostFirmwareComponentsStatus, HostFirmwareSettingsStatus, IntOrString};
        let dir = tempfile::tempdir().unwrap();
        let text = format!("{HOSTS}---\n{FIRMWARE}");
        let p = write(dir.path(), "hosts.yaml", &text);
        let paths = [p.clone()];
        let mut inv = load(&paths, LoadMode::Write).unwrap();
        let h0 = &inv.hosts[0];
        assert_eq!(
            (h0.firmware_settings_doc, h0.firmware_components_doc),
            (Some(3), None)
        );
        let hfs = h0.record.firmware_settings.clone().unwrap();
        assert_eq!(
            hfs.spec.settings["NetworkBootRetryCount"],
            IntOrString::Int(7)
        );
        assert_eq!(hfs.metadata.generation, 1);
        assert_eq!(h0.record.book.firmware.settings_generation, 1);
        assert_eq!(h0.record.book.firmware.components_generation, 0);
        let h1 = &inv.hosts[1];
        assert_eq!(
            (h1.firmware_settings_doc, h1.firmware_components_doc),
            (None, Some(4))
        );
        let hfc = h1.record.firmware_components.clone().unwrap();
        assert_eq!(hfc.spec.updates[0].component, "bmc");
        assert_eq!(hfc.metadata.generation, 1);
        // Not "other" documents, and not offered to plugins that did not ask for them.
        assert_eq!(inv.other_documents.len(), 1);
        assert_eq!(inv.objects.object_keys().count(), 0);

        let hfs_status: HostFirmwareSettingsStatus = serde_json::from_value(serde_json::json!({
            "schema": {"name": "schema-01234567", "namespace": "default"},
            "settings": {"ProcVirtualization": "Enabled", "NetworkBootRetryCount": "7"},
            "lastUpdated": "2024-01-01T00:00:00Z",
            "conditions": [{"type": "ChangeDetected", "status": "True", "observedGeneration": 1,
                            "lastTransitionTime": "2024-01-01T00:00:00Z", "reason": "Success",
                            "message": ""}],
        }))
        .unwrap();
        let hfc_status: HostFirmwareComponentsStatus = serde_json::from_value(serde_json::json!({
            "components": [{"component": "bmc", "initialVersion": "1"}],
        }))
        .unwrap();
        let books: Vec<_> = inv
            .hosts
            .iter()
            .map(|h| (h.key.clone(), h.record.book.clone()))
            .collect();
        let f = &mut inv.files[0];
        f.stage_status(3, Some(&hfs_status)).unwrap();
        f.stage_status(4, Some(&hfc_status)).unwrap();
        for (k, b) in &books {
            f.stage_bookkeeping(k, Some(b)).unwrap();
        }
        assert!(f.commit().unwrap().file_written);
        drop(inv);
        let after = std::fs::read_to_string(&p).unwrap();
        // Every byte but the two status blocks is kept.
        assert!(
            after.contains("    NetworkBootRetryCount: 7\nstatus:\n  schema:\n    namespace: default\n    name: schema-01234567\n  settings:\n"),
            "{after}"
        );
        assert!(after.contains("    ProcVirtualization: Disabled # off for the benchmark\n"));
        assert!(
            after.ends_with("    url: http://fw.example/bmc.bin\nstatus:\n  components:\n  - component: bmc\n    initialVersion: \"1\"\n"),
            "{after}"
        );
        let stripped: String = {
            let mut out = String::new();
            let mut skipping = false;
            for line in after.split_inclusive('\n') {
                if line.starts_with("status:") {
                    skipping = true;
                    continue;
                }
                if skipping && line.starts_with(' ') {
                    continue;
                }
                skipping = false;
                out.push_str(line);
            }
            out
        };
        assert_eq!(stripped, text);

        // Loaded again: the statuses are read; staging them again writes nothing.
        let mut inv = load(&paths, LoadMode::Write).unwrap();
        let rec = &inv.hosts[0].record;
        assert_eq!(
            rec.firmware_settings.as_ref().unwrap().status,
            Some(hfs_status.clone())
        );
        assert_eq!(rec.book.firmware.settings_generation, 1);
        let f = &mut inv.files[0];
        f.stage_status(3, Some(&hfs_status)).unwrap();
        f.stage_status(4, Some(&hfc_status)).unwrap();
        assert!(!f.has_changes());
        assert_eq!(f.commit().unwrap(), CommitStats::default());
        drop(inv);

        // A spec change bumps the generation of that object only.
        std::fs::write(
            &p,
            after.replace("NetworkBootRetryCount: 7", "NetworkBootRetryCount: 8"),
        )
        .unwrap();
        let inv = load(&paths, LoadMode::ReadOnly).unwrap();
        let rec = &inv.hosts[0].record;
        assert_eq!(rec.book.firmware.settings_generation, 2);
        assert_eq!(
            rec.firmware_settings.as_ref().unwrap().metadata.generation,
            2
        );
        assert_eq!(inv.hosts[1].record.book.firmware.components_generation, 1);
    }

    #[test]
    fn firmware_objects_are_offered_to_plugins_that_ask_for_them() {
        use crate::objects::ObjectSource;
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "hosts.yaml", &format!("{HOSTS}---\n{FIRMWARE}"));
        let options = LoadOptions {
            extra_kinds: vec![bmhctl_plugin_sdk::abi::ObjectKind {
                api_version: "metal3.io/v1alpha1".into(),
                kind: "HostFirmwareSettings".into(),
            }],
            namespace: None,
        };
        let inv = load_with(&[p], LoadMode::ReadOnly, &options).unwrap();
        let v = inv
            .objects
            .object(
                "metal3.io/v1alpha1",
                "HostFirmwareSettings",
                &ObjectKey::new("default", "host-0"),
            )
            .unwrap();
        assert_eq!(v["spec"]["settings"]["NetworkBootRetryCount"], 7);
        assert_eq!(v["metadata"]["namespace"], "default");
    }

    #[test]
    fn firmware_objects_without_their_host_are_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "a.yaml", HOSTS);
        let s = write(dir.path(), "s.yaml", SECRETS);
        let b = write(
            dir.path(),
            "b.yaml",
            "apiVersion: metal3.io/v1alpha1\nkind: HostFirmwareSettings\nmetadata:\n  name: host-0\nspec:\n  settings: {}\n---\napiVersion: metal3.io/v1alpha1\nkind: HostFirmwareComponents\nmetadata:\n  name: ghost\nspec:\n  updates: []\n---\napiVersion: metal3.io/v1alpha1\nkind: HostFirmwareSettings\nmetadata:\n  name: host-0\nspec:\n  settings:\n    A: true\n---\napiVersion: metal3.io/v1alpha1\nkind: HostFirmwareComponents\nmetadata:\n  namespace: lab\n",
        );
        let msg = bad_input(&[a.clone(), b.clone(), s]);
        assert_eq!(
            msg,
            format!(
                "{b}:21:8: HostFirmwareSettings default/host-0: spec.settings.A: invalid type: boolean `true`, expected an integer or a string\n\
                 {b}:26:3: HostFirmwareComponents without metadata.name\n\
                 {b}:18:9: HostFirmwareSettings default/host-0: defined more than once (first at {b}:4:9)\n\
                 {b}:4:9: HostFirmwareSettings default/host-0: metadata.name: must be in the same file as BareMetalHost default/host-0 (which is in {a})\n\
                 {b}:11:9: HostFirmwareComponents default/ghost: metadata.name: no BareMetalHost default/ghost in the given files (a HostFirmwareComponents belongs to the BareMetalHost of the same namespace and name)\n\
                 {b}:18:9: HostFirmwareSettings default/host-0: metadata.name: must be in the same file as BareMetalHost default/host-0 (which is in {a})",
                a = a.display(),
                b = b.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&a).unwrap(), HOSTS);
        assert!(!sidecar_of(&a).exists());
    }

    #[test]
    fn missing_path_is_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("nope.yaml");
        assert_eq!(
            bad_input(std::slice::from_ref(&p)),
            format!("{}: no such file or directory", p.display())
        );
    }
}
