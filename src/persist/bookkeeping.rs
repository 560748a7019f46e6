//! The spec-hash bookkeeping both layouts keep for BMO: a generation goes up when its spec changes.

use crate::record::{Bookkeeping, SpecSnapshot};
use bmh_api::{BareMetalHostSpec, HostFirmwareComponents, HostFirmwareSettings};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// SHA-256 (hex) of the canonical JSON of `spec` (object keys sorted), and the spec's snapshot.
pub fn spec_hash(spec: &BareMetalHostSpec) -> (String, Arc<SpecSnapshot>) {
    let value = serde_json::to_value(spec).unwrap_or(Value::Null);
    (canonical_hash(&value), Arc::new(SpecSnapshot::of(&value)))
}

/// SHA-256 (hex) of `value` written with its object keys sorted.
fn canonical_hash(value: &Value) -> String {
    let canonical = serde_json::to_string(&Sorted(value)).unwrap_or_default();
    format!("{:x}", Sha256::digest(canonical.as_bytes()))
}

/// Writes a JSON value with its object keys sorted, without copying it.
struct Sorted<'a>(&'a Value);

impl Serialize for Sorted<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(m) => {
                let mut entries: Vec<(&String, &Value)> = m.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, &Sorted(v))?;
                }
                map.end()
            }
            Value::Array(a) => s.collect_seq(a.iter().map(Sorted)),
            other => other.serialize(s),
        }
    }
}

/// A host's bookkeeping at load, new or the sidecar's, its generation bumped on a spec change.
pub fn bookkeeping_at_load(
    existing: Option<&Bookkeeping>,
    spec: &BareMetalHostSpec,
) -> Bookkeeping {
    let (hash, snapshot) = spec_hash(spec);
    // A deleted host's entry is no bookkeeping: the host starts over, as one never run.
    let deleted_at = existing.and_then(|b| b.deleted.clone());
    let existing = existing.filter(|b| b.deleted.is_none());
    let mut book = match existing {
        Some(b) => b.clone(),
        None => Bookkeeping {
            loaded: crate::record::Loaded {
                unrecorded: true,
                deleted_at,
            },
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
    book.generation = book.generation.max(1);
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
    canonical_hash(&serde_json::to_value(spec).unwrap_or(Value::Null))
}

/// [`bookkeeping_at_load`]'s generations for the host's firmware objects, copied into them.
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> BareMetalHostSpec {
        serde_json::from_value(json!({
            "online": true,
            "bootMACAddress": "52:54:00:00:00:01",
            "bmc": {"address": "ipmi://192.168.0.1:623", "credentialsName": "bmc", "zz": [2, 1]},
            "image": {"url": "http://images.example/os.qcow2", "checksum": "0123456789abcdef"},
            "unknownField": {"b": 1, "a": {"d": null, "c": 1.5}}
        }))
        .unwrap()
    }

    /// The hash as the sidecars already written have it: of a sorted copy of the JSON tree.
    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn hash_of_a_sorted_copy(v: &Value) -> String {
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
        hex(&Sha256::digest(serde_json::to_string(&sorted(v)).unwrap()))
    }

    #[test]
    fn the_hash_and_the_snapshot_are_what_a_json_tree_of_the_spec_gave() {
        let spec = spec();
        let value = serde_json::to_value(&spec).unwrap();
        let (hash, snapshot) = spec_hash(&spec);
        assert_eq!(hash, hash_of_a_sorted_copy(&value));
        assert_eq!(value_hash(&spec), hash);
        assert_eq!(snapshot.value(), value);
        assert_eq!(snapshot.spec(), Some(spec));
        // The sidecar (JSON text) and the store (a JSON tree) hold the same as before.
        let book = Bookkeeping {
            spec_snapshot: Some(snapshot.clone()),
            ..Default::default()
        };
        let old = json!({"uid": "", "generation": 0, "specHash": "", "specSnapshot": value});
        let text = serde_json::to_string(&book).unwrap();
        assert!(
            text.contains(&format!(
                "\"specSnapshot\":{}",
                serde_json::to_string(&value).unwrap()
            )),
            "{text}"
        );
        assert_eq!(
            serde_json::to_value(&book).unwrap()["specSnapshot"],
            old["specSnapshot"]
        );
        let back: Bookkeeping = serde_json::from_str(&text).unwrap();
        assert_eq!(back, book);
    }

    #[test]
    fn a_snapshot_read_with_other_spacing_is_kept_compact() {
        let book: Bookkeeping = serde_json::from_str(
            r#"{"specSnapshot": { "online" : false,  "bmc": {"address": "x"} }}"#,
        )
        .unwrap();
        let snapshot = book.spec_snapshot.unwrap();
        assert_eq!(
            format!("{snapshot:?}"),
            r#"{"online":false,"bmc":{"address":"x"}}"#
        );
        assert!(!snapshot.spec().unwrap().online);
        let not_a_spec: Bookkeeping = serde_json::from_str(r#"{"specSnapshot": [1]}"#).unwrap();
        assert_eq!(not_a_spec.spec_snapshot.unwrap().spec(), None);
    }
}
