//! Hosts in the store: a [`HostRecord`] is the host's object plus its companion objects.
//!
//! * `baremetalhosts/<ns>/<name>.yaml`: the host. Its bookkeeping is split: what Kubernetes
//!   keeps in metadata is there (`uid`, `generation`, `finalizers`, `deletionTimestamp`), the
//!   rest (`specHash`, `specSnapshot`, `architecture`, `provisionerState`, `firmware`) under the
//!   top-level `bmhctl:` key of the same file, so one atomic write keeps both consistent.
//! * `hardwaredata/<ns>/<name>.yaml`: the HardwareData object (the bookkeeping's
//!   `hardwareData` in file mode).
//! * `hostfirmwaresettings/...`, `hostfirmwarecomponents/...`: the firmware objects, whose
//!   `metadata.generation` is the one the host's firmware bookkeeping plays in file mode.
//! * `dataimages/...`: the host's DataImage, whose status the runner writes.

use super::{Store, Stored, Written};
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
use std::collections::BTreeMap;

fn no_such_host(key: &ObjectKey) -> Error {
    Error::Usage(format!("no BareMetalHost named {key} in the store"))
}

/// The kind of the inspection result object.
pub const HARDWARE_DATA_KIND: &str = "HardwareData";

/// The top-level key of a host's file holding bmhctl's bookkeeping.
pub const BOOK_KEY: &str = "bmhctl";

/// The key, under a stored object's top-level [`BOOK_KEY`], of the label and annotation keys
/// the last `bmhctl apply` set (see [`LastApplied`]).
pub const LAST_APPLIED_KEY: &str = "lastApplied";

/// The label and annotation keys the last `bmhctl apply` of an object set: what kubectl keeps
/// in its `kubectl.kubernetes.io/last-applied-configuration` annotation, reduced to what the
/// three-way merge of `metadata.labels` and `metadata.annotations` needs. A key in here and no
/// longer in the file is removed by the next apply; a key set by anyone else (a verb, BMO) is
/// never removed by an apply.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LastApplied {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub annotations: Vec<String>,
}

/// The stored object's [`LastApplied`] (empty for an object never applied, or applied before
/// bmhctl kept it: nothing is removed then, as kubectl removes nothing without its annotation).
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

/// Carries the [`LastApplied`] of `from` (the stored host) over to `to` (the host a writer
/// computed through [`decode_host`] and [`encode_host`], which know nothing of it).
pub fn carry_last_applied(from: &Value, to: &mut Value) {
    set_last_applied(to, &last_applied(from));
}

/// Bookkeeping fields kept elsewhere: in the metadata, or in the HardwareData object.
const BOOK_FIELDS_ELSEWHERE: [&str; 5] = [
    "uid",
    "generation",
    "finalizers",
    "deletionRequested",
    "hardwareData",
];

pub fn host_key(key: &ObjectKey) -> TypedKey {
    TypedKey::new(bmh_api::API_VERSION, bmh_api::KIND, key.clone())
}

pub fn settings_key(key: &ObjectKey) -> TypedKey {
    TypedKey::new(
        bmh_api::API_VERSION,
        HOST_FIRMWARE_SETTINGS_KIND,
        key.clone(),
    )
}

pub fn components_key(key: &ObjectKey) -> TypedKey {
    TypedKey::new(
        bmh_api::API_VERSION,
        HOST_FIRMWARE_COMPONENTS_KIND,
        key.clone(),
    )
}

pub fn data_image_key(key: &ObjectKey) -> TypedKey {
    TypedKey::new(bmh_api::API_VERSION, DATA_IMAGE_KIND, key.clone())
}

pub fn hardware_key(key: &ObjectKey) -> TypedKey {
    TypedKey::new(bmh_api::API_VERSION, HARDWARE_DATA_KIND, key.clone())
}

fn typed<T: DeserializeOwned>(what: &str, value: Value) -> Result<T> {
    serde_json::from_value(value)
        .map_err(|e| Error::invalid(format!("{what} in the store cannot be read: {e}")))
}

/// The host and its bookkeeping from the host's stored object (without HardwareData).
pub fn decode_host(value: &Value) -> Result<(BareMetalHost, Bookkeeping)> {
    let mut v = value.clone();
    let key = super::object_key(value);
    let book = v
        .as_object_mut()
        .and_then(|m| m.remove(BOOK_KEY))
        .unwrap_or(Value::Object(Default::default()));
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
    /// Every host of the store, sorted by namespace and name.
    pub fn host_keys(&self) -> Result<Vec<ObjectKey>> {
        Ok(self
            .list(bmh_api::API_VERSION, bmh_api::KIND)?
            .iter()
            .map(|s| super::object_key(&s.value))
            .collect())
    }

    /// Every host of the store with its labels, sorted by namespace and name: what selecting
    /// hosts needs, without reading their companion objects.
    pub fn host_labels(&self) -> Result<Vec<(ObjectKey, BTreeMap<String, String>)>> {
        Ok(self
            .list(bmh_api::API_VERSION, bmh_api::KIND)?
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
            .collect())
    }

    /// A host with its bookkeeping and companion objects; `None` when absent.
    pub fn load_host(&self, key: &ObjectKey) -> Result<Option<HostRecord>> {
        let Some(stored) = self.get(&host_key(key))? else {
            return Ok(None);
        };
        self.record_from(key, &stored).map(Some)
    }

    /// Every host of the store as records, sorted by namespace and name.
    pub fn load_hosts(&self) -> Result<Vec<HostRecord>> {
        let mut out = Vec::new();
        for s in self.list(bmh_api::API_VERSION, bmh_api::KIND)? {
            let key = super::object_key(&s.value);
            out.push(self.record_from(&key, &s)?);
        }
        Ok(out)
    }

    /// Sets (`Some`) or removes (`None`) one annotation of a stored host, under its lock (what
    /// the verbs ask of BMO). A usage error when there is no such host.
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

    /// Marks a stored host for deletion at `now` (its `metadata.deletionTimestamp`, as the API
    /// server does), under its lock; unchanged when it is already being deleted.
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

    fn record_from(&self, key: &ObjectKey, stored: &Stored) -> Result<HostRecord> {
        let (host, mut book) = decode_host(&stored.value)?;
        if let Some(hw) = self.get(&hardware_key(key))? {
            book.hardware_data = Some(Box::new(typed(&format!("HardwareData {key}"), hw.value)?));
        }
        let settings: Option<HostFirmwareSettings> = self
            .get(&settings_key(key))?
            .map(|s| typed(&format!("HostFirmwareSettings {key}"), s.value))
            .transpose()?;
        let components: Option<HostFirmwareComponents> = self
            .get(&components_key(key))?
            .map(|s| typed(&format!("HostFirmwareComponents {key}"), s.value))
            .transpose()?;
        let fw = &mut book.firmware;
        match &settings {
            Some(s) => {
                fw.settings_generation = s.metadata.generation.max(1);
                fw.settings_spec_hash = value_hash(&s.spec);
            }
            None => {
                fw.settings_generation = 0;
                fw.settings_spec_hash.clear();
                fw.schema = None;
            }
        }
        match &components {
            Some(c) => {
                fw.components_generation = c.metadata.generation.max(1);
                fw.components_spec_hash = value_hash(&c.spec);
            }
            None => {
                fw.components_generation = 0;
                fw.components_spec_hash.clear();
            }
        }
        if settings.is_none() && components.is_none() {
            fw.refresh_pending = false;
        }
        let data_image: Option<DataImage> = self
            .get(&data_image_key(key))?
            .map(|s| typed(&format!("DataImage {key}"), s.value))
            .transpose()?;
        Ok(HostRecord {
            host: Box::new(host),
            book,
            firmware_settings: settings.map(Box::new),
            firmware_components: components.map(Box::new),
            data_image: data_image.map(Box::new),
        })
    }
}
