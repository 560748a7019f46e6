//! The spec-hash bookkeeping both layouts keep for BMO: a host's generation goes up when its
//! spec changes (what the API server does with `metadata.generation`), and so do its firmware
//! objects'.

use crate::record::Bookkeeping;
use bmh_api::{BareMetalHostSpec, HostFirmwareComponents, HostFirmwareSettings};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// SHA-256 (hex) of the canonical JSON of `spec` (object keys sorted), and the spec as JSON.
pub fn spec_hash(spec: &BareMetalHostSpec) -> (String, Arc<Value>) {
    let value = serde_json::to_value(spec).unwrap_or(Value::Null);
    let canonical = serde_json::to_string(&sorted(&value)).unwrap_or_default();
    (hex(&Sha256::digest(canonical.as_bytes())), Arc::new(value))
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
            creation_timestamp: Some(
                chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            ),
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
