//! Hosts in the store: a [`HostRecord`] is the host's object plus its companion objects.

use super::object_file::HARDWARE_DATA_KIND;
use super::{BadObject, Listing, Store, Stored, Written};
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::error::{Error, Result};
use crate::objects::TypedKey;
use crate::persist::bookkeeping::value_hash;
use crate::record::{Bookkeeping, HostRecord};
use bmh_api::{
    BareMetalHost, DATA_IMAGE_KIND, DataImage, HOST_FIRMWARE_COMPONENTS_KIND,
    HOST_FIRMWARE_SETTINGS_KIND, HardwareData, HostFirmwareComponents, HostFirmwareSettings,
    ObjectKey,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

fn no_such_host(key: &ObjectKey) -> Error {
    Error::Usage(format!("no BareMetalHost named {key} in the store"))
}

/// The top-level key of a host's file holding bmhctl's bookkeeping.
pub const BOOK_KEY: &str = "bmhctl";

/// The key, under a stored object's [`BOOK_KEY`], of the keys the last `bmhctl apply` set.
pub const LAST_APPLIED_KEY: &str = "lastApplied";

/// The label and annotation keys the last `bmhctl apply` of an object set: kubectl's
/// last-applied-configuration, reduced to what the three-way merge of metadata needs.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LastApplied {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub annotations: Vec<String>,
}

/// The stored object's [`LastApplied`] (empty for an object never applied: nothing is removed).
pub fn last_applied(value: &Value) -> LastApplied {
    value
        .get(BOOK_KEY)
        .and_then(|b| b.get(LAST_APPLIED_KEY))
        .and_then(|l| serde_json::from_value(l.clone()).ok())
        .unwrap_or_default()
}

/// Sets the object's [`LastApplied`] under its [`BOOK_KEY`] (an empty one is not written).
pub fn set_last_applied(value: &mut Value, last: &LastApplied) {
    let Some(obj) = value.as_object_mut() else {
        return;
    };
    let book = obj
        .entry(BOOK_KEY)
        .or_insert_with(|| Value::Object(Default::default()));
    if let Some(b) = book.as_object_mut() {
        if *last == LastApplied::default() {
            b.remove(LAST_APPLIED_KEY);
        } else {
            b.insert(
                LAST_APPLIED_KEY.into(),
                serde_json::to_value(last).unwrap_or_default(),
            );
        }
    }
    if book.as_object().is_some_and(|b| b.is_empty()) {
        obj.remove(BOOK_KEY);
    }
}

/// Bookkeeping fields kept elsewhere: in the metadata, or in the HardwareData object.
const BOOK_FIELDS_ELSEWHERE: [&str; 5] = [
    "uid",
    "generation",
    "finalizers",
    "deletionRequested",
    "hardwareData",
];

/// The store key of the metal3.io object of `kind` named `key`.
fn metal3_key(kind: &str, key: &ObjectKey) -> TypedKey {
    TypedKey::new(bmh_api::API_VERSION, kind, key.clone())
}

pub fn host_key(key: &ObjectKey) -> TypedKey {
    metal3_key(bmh_api::KIND, key)
}

pub fn settings_key(key: &ObjectKey) -> TypedKey {
    metal3_key(HOST_FIRMWARE_SETTINGS_KIND, key)
}

pub fn components_key(key: &ObjectKey) -> TypedKey {
    metal3_key(HOST_FIRMWARE_COMPONENTS_KIND, key)
}

pub fn data_image_key(key: &ObjectKey) -> TypedKey {
    metal3_key(DATA_IMAGE_KIND, key)
}

pub fn hardware_key(key: &ObjectKey) -> TypedKey {
    metal3_key(HARDWARE_DATA_KIND, key)
}

fn typed<T: DeserializeOwned>(what: &str, value: Value) -> Result<T> {
    serde_json::from_value(value)
        .map_err(|e| Error::invalid(format!("{what} in the store cannot be read: {e}")))
}

/// A stored object typed, or its problem located: the file, the line of the field, the field.
fn typed_at<T: DeserializeOwned>(
    path: &Path,
    kind: &str,
    key: &ObjectKey,
    value: &Value,
) -> Result<T> {
    // Typed without tracking the path first: tracking allocates every key.
    if let Ok(t) = T::deserialize(value) {
        return Ok(t);
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        let segs: Vec<String> = e
            .path()
            .iter()
            .map_while(|s| match s {
                serde_path_to_error::Segment::Map { key } => Some(key.clone()),
                serde_path_to_error::Segment::Enum { variant } => Some(variant.clone()),
                _ => None,
            })
            .collect();
        let text = std::fs::read_to_string(path).ok();
        let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
        let at = super::object_file::position_of(path, text.as_deref(), &segs);
        let d = Diagnostic::new(format!("not a readable store object: {}", e.inner()))
            .at(at)
            .object(kind, key);
        Error::invalid(if field == "." { d } else { d.field(field) })
    })
}

/// The Secrets a stored host refers to: (field, Secret), as BMO looks them up.
pub fn secret_refs(value: &Value) -> Vec<(&'static str, ObjectKey)> {
    let ns = super::object_key(value).namespace;
    let spec = &value["spec"];
    let mut out = Vec::new();
    for (field, name) in [
        ("spec.bmc.credentialsName", &spec["bmc"]["credentialsName"]),
        (
            "spec.preprovisioningNetworkDataName",
            &spec["preprovisioningNetworkDataName"],
        ),
    ] {
        if let Some(n) = name.as_str().filter(|n| !n.is_empty()) {
            out.push((field, ObjectKey::new(&ns, n)));
        }
    }
    for (field, r) in [
        ("spec.userData", &spec["userData"]),
        ("spec.networkData", &spec["networkData"]),
        ("spec.metaData", &spec["metaData"]),
    ] {
        if let Some(n) = r["name"].as_str().filter(|n| !n.is_empty()) {
            let rns = r["namespace"]
                .as_str()
                .filter(|n| !n.is_empty())
                .unwrap_or(&ns);
            out.push((field, ObjectKey::new(rns, n)));
        }
    }
    out
}

/// Whether each Secret read so far can be used, so that many hosts sharing one read it once.
#[derive(Default)]
struct SecretsChecked(HashMap<ObjectKey, Option<Diagnostics>>);

/// The host and its bookkeeping from the host's stored object (without HardwareData).
pub fn decode_host(value: &Value) -> Result<(BareMetalHost, Bookkeeping)> {
    let (v, book) = split_book(value);
    let key = super::object_key(value);
    let mut host: BareMetalHost = typed(&format!("BareMetalHost {key}"), v)?;
    if host.metadata.namespace.is_empty() {
        host.metadata.namespace = key.namespace.clone();
    }
    let mut book: Bookkeeping = typed(&format!("BareMetalHost {key}: {BOOK_KEY}"), book)?;
    let m = &host.metadata;
    book.uid = m.uid.clone();
    book.generation = m.generation;
    book.finalizers = m.finalizers.clone();
    book.deletion_requested = m.deletion_timestamp.clone();
    Ok((host, book))
}

/// The stored host without its bookkeeping, and the bookkeeping (empty when none).
fn split_book(value: &Value) -> (Value, Value) {
    let mut v = value.clone();
    let book = v.as_object_mut().and_then(|m| m.remove(BOOK_KEY));
    (v, book.unwrap_or(Value::Object(Default::default())))
}

/// [`decode_host`] of the host stored at `path`, a problem located in that file.
fn decode_host_at(
    path: &Path,
    key: &ObjectKey,
    value: &Value,
) -> Result<(BareMetalHost, Bookkeeping)> {
    decode_host(value).map_err(|plain| {
        // Typed again, tracking the path, only to say where.
        let (v, book) = split_book(value);
        if let Err(e) = typed_at::<BareMetalHost>(path, bmh_api::KIND, key, &v) {
            return e;
        }
        match typed_at::<Bookkeeping>(path, bmh_api::KIND, key, &book) {
            Err(Error::Invalid(mut d)) => {
                for d in &mut d.0 {
                    let field = d.field.take().unwrap_or_default();
                    d.field = Some(format!("{BOOK_KEY}.{field}"));
                }
                Error::Invalid(d)
            }
            _ => plain,
        }
    })
}

/// The host's stored object: the host with its bookkeeping (HardwareData left out).
pub fn encode_host(host: &BareMetalHost, book: &Bookkeeping) -> Result<Value> {
    let mut h = host.clone();
    if h.api_version.is_empty() {
        h.api_version = bmh_api::API_VERSION.into();
    }
    if h.kind.is_empty() {
        h.kind = bmh_api::KIND.into();
    }
    let m = &mut h.metadata;
    m.namespace = m.namespace_or_default().to_string();
    m.uid = book.uid.clone();
    m.generation = book.generation;
    m.finalizers = book.finalizers.clone();
    m.deletion_timestamp = book.deletion_requested.clone();
    let mut v =
        serde_json::to_value(&h).map_err(|e| Error::internal("cannot encode a host as JSON", e))?;
    let mut b = serde_json::to_value(book)
        .map_err(|e| Error::internal("cannot encode bookkeeping as JSON", e))?;
    if let Some(bm) = b.as_object_mut() {
        for f in BOOK_FIELDS_ELSEWHERE {
            bm.remove(f);
        }
        if !bm.is_empty()
            && let Some(obj) = v.as_object_mut()
        {
            obj.insert(BOOK_KEY.into(), b);
        }
    }
    Ok(v)
}

/// The HardwareData object as stored.
pub fn encode_hardware(key: &ObjectKey, hw: &HardwareData) -> Result<Value> {
    let mut hw = hw.clone();
    hw.api_version = bmh_api::API_VERSION.into();
    hw.kind = HARDWARE_DATA_KIND.into();
    hw.metadata.name = key.name.clone();
    hw.metadata.namespace = key.namespace.clone();
    hw.metadata.resource_version.clear();
    serde_json::to_value(&hw).map_err(|e| Error::internal("cannot encode HardwareData as JSON", e))
}

impl Store {
    /// Every readable host of the store, sorted by namespace and name.
    pub fn host_keys(&self) -> Result<Vec<ObjectKey>> {
        Ok(self
            .list(bmh_api::API_VERSION, bmh_api::KIND)?
            .objects
            .iter()
            .map(|s| super::object_key(&s.value))
            .collect())
    }

    /// Every host of the store with its labels, sorted by namespace and name (no companions read).
    pub fn host_labels(&self) -> Result<Listing<(ObjectKey, BTreeMap<String, String>)>> {
        let listing = self.list(bmh_api::API_VERSION, bmh_api::KIND)?;
        let objects = listing
            .objects
            .iter()
            .map(|s| {
                let labels = s.value["metadata"]["labels"]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                            .collect()
                    })
                    .unwrap_or_default();
                (super::object_key(&s.value), labels)
            })
            .collect();
        Ok(Listing {
            objects,
            bad: listing.bad,
        })
    }

    /// A host with its bookkeeping and companion objects; `None` when absent.
    pub fn load_host(&self, key: &ObjectKey) -> Result<Option<HostRecord>> {
        let Some(stored) = self.get(&host_key(key))? else {
            return Ok(None);
        };
        self.record_from(key, &stored, &mut SecretsChecked::default())
            .map(Some)
    }

    /// Every host of the store as records, sorted by namespace and name; those unreadable apart.
    pub fn load_hosts(&self) -> Result<Listing<HostRecord>> {
        let listing = self.list(bmh_api::API_VERSION, bmh_api::KIND)?;
        let mut out = Listing {
            objects: Vec::new(),
            bad: listing.bad,
        };
        let mut secrets = SecretsChecked::default();
        for s in listing.objects {
            let key = super::object_key(&s.value);
            match self.record_from(&key, &s, &mut secrets) {
                Ok(r) => out.objects.push(r),
                Err(error @ Error::Invalid(_)) => out.bad.push(BadObject {
                    path: self.path_of(&host_key(&key)),
                    key,
                    error,
                }),
                Err(e) => return Err(e),
            }
        }
        out.bad.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    /// The problem of each Secret a stored host refers to that exists and cannot be read.
    fn check_secrets(
        &self,
        key: &ObjectKey,
        value: &Value,
        checked: &mut SecretsChecked,
    ) -> Result<()> {
        let mut found = Diagnostics::default();
        for (field, secret) in secret_refs(value) {
            let problem = match checked.0.get(&secret) {
                Some(p) => p.clone(),
                None => {
                    let p = match self.get(&super::secret_key(&secret)) {
                        Ok(_) => None,
                        Err(Error::Invalid(d)) => Some(d),
                        Err(e) => return Err(e),
                    };
                    checked.0.insert(secret.clone(), p.clone());
                    p
                }
            };
            for mut d in problem.into_iter().flat_map(|d| d.0) {
                d.message = format!(
                    "{} (the Secret of BareMetalHost {key}'s {field})",
                    d.message
                );
                found.push(d);
            }
        }
        crate::persist::files::inventory::bad_input(found)
    }

    /// Sets (`Some`) or removes (`None`) one annotation of a stored host, under its lock.
    pub fn set_host_annotation(
        &self,
        key: &ObjectKey,
        name: &str,
        value: Option<&str>,
    ) -> Result<Written> {
        self.update(&host_key(key), |current| {
            let mut v = current.ok_or_else(|| no_such_host(key))?.clone();
            let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) else {
                return Ok(None);
            };
            let annotations = meta
                .entry("annotations")
                .or_insert_with(|| Value::Object(Default::default()));
            let Some(a) = annotations.as_object_mut() else {
                return Ok(None);
            };
            match value {
                Some(value) => {
                    if a.get(name).and_then(Value::as_str) == Some(value) {
                        return Ok(None);
                    }
                    a.insert(name.to_string(), Value::String(value.to_string()));
                }
                None => {
                    if a.remove(name).is_none() {
                        return Ok(None);
                    }
                    if a.is_empty() {
                        meta.remove("annotations");
                    }
                }
            }
            Ok(Some(v))
        })
    }

    /// Removes the stored host's `spec` entries `fields` (`deprovision`), under its lock.
    pub fn remove_host_spec_fields(&self, key: &ObjectKey, fields: &[&str]) -> Result<Written> {
        self.update(&host_key(key), |current| {
            let mut v = current.ok_or_else(|| no_such_host(key))?.clone();
            let Some(spec) = v.get_mut("spec").and_then(Value::as_object_mut) else {
                return Ok(None);
            };
            let removed = fields.iter().filter(|f| spec.remove(**f).is_some()).count();
            Ok((removed > 0).then_some(v))
        })
    }

    /// Marks a stored host for deletion at `now` (`metadata.deletionTimestamp`), under its lock.
    pub fn request_host_deletion(&self, key: &ObjectKey, now: &str) -> Result<Written> {
        self.update(&host_key(key), |current| {
            let mut v = current.ok_or_else(|| no_such_host(key))?.clone();
            let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) else {
                return Ok(None);
            };
            if meta.get("deletionTimestamp").is_some_and(|t| !t.is_null()) {
                return Ok(None);
            }
            meta.insert("deletionTimestamp".into(), Value::String(now.to_string()));
            Ok(Some(v))
        })
    }

    /// The stored object of `kind` (a metal3.io kind) of the host `key`'s namespace and name.
    fn companion<T: DeserializeOwned>(&self, kind: &str, key: &ObjectKey) -> Result<Option<T>> {
        let typed_key = metal3_key(kind, key);
        self.get(&typed_key)?
            .map(|s| typed_at(&self.path_of(&typed_key), kind, key, &s.value))
            .transpose()
    }

    fn record_from(
        &self,
        key: &ObjectKey,
        stored: &Stored,
        secrets: &mut SecretsChecked,
    ) -> Result<HostRecord> {
        let host_path = self.path_of(&host_key(key));
        let (host, mut book) = decode_host_at(&host_path, key, &stored.value)?;
        self.check_secrets(key, &stored.value, secrets)?;
        if let Some(hw) = self.companion(HARDWARE_DATA_KIND, key)? {
            book.hardware_data = Some(Box::new(hw));
        }
        let settings: Option<HostFirmwareSettings> =
            self.companion(HOST_FIRMWARE_SETTINGS_KIND, key)?;
        let components: Option<HostFirmwareComponents> =
            self.companion(HOST_FIRMWARE_COMPONENTS_KIND, key)?;
        let fw = &mut book.firmware;
        (fw.settings_generation, fw.settings_spec_hash) = settings
            .as_ref()
            .map(|s| (s.metadata.generation.max(1), value_hash(&s.spec)))
            .unwrap_or_default();
        (fw.components_generation, fw.components_spec_hash) = components
            .as_ref()
            .map(|c| (c.metadata.generation.max(1), value_hash(&c.spec)))
            .unwrap_or_default();
        if settings.is_none() {
            fw.schema = None;
        }
        if settings.is_none() && components.is_none() {
            fw.refresh_pending = false;
        }
        let data_image: Option<DataImage> = self.companion(DATA_IMAGE_KIND, key)?;
        Ok(HostRecord {
            host: Box::new(host),
            book,
            firmware_settings: settings.map(Box::new),
            firmware_components: components.map(Box::new),
            data_image: data_image.map(Box::new),
        })
    }
}
