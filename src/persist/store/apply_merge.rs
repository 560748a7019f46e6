//! `kubectl apply`'s merge of an applied object over the stored one: the file gives the spec,
//! metadata is merged three-way ([`merge_keys`]), the store keeps what the server owns.

use super::hosts::{
    LastApplied, decode_host, encode_host, hardware_key, last_applied, set_last_applied,
};
use super::{Expect, Store, Stored, Written};
use crate::error::{Error, Result};
use crate::objects::TypedKey;
use crate::persist::bookkeeping::bookkeeping_at_load;
use bmh_api::{BareMetalHost, ObjectKey, annotations};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// How many times a write is computed again after another writer changed the object.
const ATTEMPTS: usize = 10;

/// Computes and writes an object, computing it again when the store changed in between.
pub fn write_retrying(
    store: &Store,
    key: &TypedKey,
    mut compute: impl FnMut(Option<&Stored>) -> Result<Value>,
) -> Result<Written> {
    let mut attempt = 0;
    loop {
        let stored = store.get_replaceable(key)?;
        let value = compute(stored.as_ref())?;
        let expect = stored
            .as_ref()
            .map_or(Expect::Absent, |s| Expect::Version(s.version));
        match store.write(key, value, expect) {
            Err(Error::Conflict(_)) if attempt + 1 < ATTEMPTS => attempt += 1,
            other => return other,
        }
    }
}

/// Fields of `metadata` the store owns, never taken from a file.
const SERVER_METADATA: [&str; 6] = [
    "uid",
    "generation",
    "resourceVersion",
    "finalizers",
    "deletionTimestamp",
    "creationTimestamp",
];

/// Any object but a host: the file's content over the stored object's server-owned fields.
pub fn merge_object(applied: &Value, stored: Option<&Stored>) -> Value {
    let old = stored.map(|s| &s.value);
    let mut out = Map::new();
    out.insert("apiVersion".into(), applied["apiVersion"].clone());
    out.insert("kind".into(), applied["kind"].clone());
    let key = super::object_key(applied);
    let mut meta = Map::new();
    if let Some(m) = applied["metadata"].as_object() {
        for (k, v) in m {
            if !SERVER_METADATA.contains(&k.as_str()) {
                meta.insert(k.clone(), v.clone());
            }
        }
    }
    meta.insert("namespace".into(), Value::String(key.namespace.clone()));
    let old_meta = old.map(|o| &o["metadata"]);
    let last = old.map(last_applied).unwrap_or_default();
    let mut applied_keys = LastApplied::default();
    for (field, last_keys, keys) in [
        ("labels", &last.labels, &mut applied_keys.labels),
        (
            "annotations",
            &last.annotations,
            &mut applied_keys.annotations,
        ),
    ] {
        let as_map = |v: Option<&Value>| -> BTreeMap<String, Value> {
            v.and_then(Value::as_object)
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default()
        };
        let file = as_map(applied["metadata"].get(field));
        let stored = as_map(old_meta.and_then(|m| m.get(field)));
        let (merged, applied_now) = merge_keys(&file, &stored, last_keys);
        *keys = applied_now;
        if merged.is_empty() {
            meta.remove(field);
        } else {
            meta.insert(field.into(), Value::Object(merged.into_iter().collect()));
        }
    }
    let uid = old_meta
        .and_then(|m| m["uid"].as_str())
        .map(str::to_string)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    meta.insert("uid".into(), Value::String(uid));
    if applied.get("spec").is_some() {
        let old_generation = old_meta.and_then(|m| m["generation"].as_i64()).unwrap_or(0);
        let generation = match old {
            Some(o) if o.get("spec") == applied.get("spec") => old_generation.max(1),
            Some(_) => old_generation + 1,
            None => 1,
        };
        meta.insert("generation".into(), generation.into());
    }
    for f in ["finalizers", "deletionTimestamp"] {
        if let Some(v) = old_meta.and_then(|m| m.get(f)) {
            meta.insert(f.into(), v.clone());
        }
    }
    out.insert("metadata".into(), Value::Object(meta));
    if let Some(a) = applied.as_object() {
        for (k, v) in a {
            if !["apiVersion", "kind", "metadata", "status"].contains(&k.as_str()) {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    if let Some(status) = old.and_then(|o| o.get("status")) {
        out.insert("status".into(), status.clone());
    }
    let mut out = Value::Object(out);
    set_last_applied(&mut out, &applied_keys);
    out
}

/// `kubectl apply`'s three-way merge of labels or annotations: the stored map, without the keys
/// the last apply set (`last`) that the file no longer has, with the file's keys set over it.
pub fn merge_keys<V: Clone>(
    file: &BTreeMap<String, V>,
    stored: &BTreeMap<String, V>,
    last: &[String],
) -> (BTreeMap<String, V>, Vec<String>) {
    let mut out = stored.clone();
    out.retain(|k, _| file.contains_key(k) || !last.contains(k));
    out.extend(file.iter().map(|(k, v)| (k.clone(), v.clone())));
    (out, file.keys().cloned().collect())
}

/// The applied host's labels and annotations merged over the stored host's; the keys applied.
pub fn merge_host_metadata(
    host: &mut bmh_api::BareMetalHost,
    old: &bmh_api::BareMetalHost,
    last: &LastApplied,
) -> LastApplied {
    let m = &mut host.metadata;
    let (labels, label_keys) = merge_keys(&m.labels, &old.metadata.labels, &last.labels);
    let (mut merged, mut annotation_keys) =
        merge_keys(&m.annotations, &old.metadata.annotations, &last.annotations);
    // The file's status annotation stays for `applied_status` to read; a stored one is consumed.
    if !m.annotations.contains_key(annotations::STATUS) {
        merged.remove(annotations::STATUS);
    }
    annotation_keys.retain(|k| k != annotations::STATUS);
    m.labels = labels;
    m.annotations = merged;
    LastApplied {
        labels: label_keys,
        annotations: annotation_keys,
    }
}

/// A host: the file's spec and metadata over the stored host's status and bookkeeping.
pub fn merge_host(
    applied: &bmh_api::BareMetalHost,
    stored: Option<&Stored>,
    hardware: Option<&bmh_api::HardwareDetails>,
) -> Result<Value> {
    // A stored host that cannot be decoded is replaced, as one that does not parse is.
    let old = stored.and_then(|s| decode_host(&s.value).ok());
    let mut host = applied.clone();
    let applied_keys = match (stored, &old) {
        (Some(s), Some((o, _))) => merge_host_metadata(&mut host, o, &last_applied(&s.value)),
        _ => merge_host_metadata(
            &mut host,
            &BareMetalHost::default(),
            &LastApplied::default(),
        ),
    };
    host.status = applied_status(applied, old.as_ref().map(|(h, _)| h), hardware);
    // Consumed as BMO consumes it, so that applying the same file again changes nothing.
    host.metadata.annotations.remove(annotations::STATUS);
    let m = &mut host.metadata;
    m.namespace = m.namespace_or_default().to_string();
    m.resource_version.clear();
    m.extra.remove("creationTimestamp");
    let book = bookkeeping_at_load(old.as_ref().map(|(_, b)| b), &host.spec);
    let mut value = encode_host(&host, &book)?;
    set_last_applied(&mut value, &applied_keys);
    Ok(value)
}

/// The hardware details of the host's HardwareData in the store (applied just before the hosts).
pub fn stored_hardware(store: &Store, key: &ObjectKey) -> Result<Option<bmh_api::HardwareDetails>> {
    let Some(stored) = store.get_replaceable(&hardware_key(key))? else {
        return Ok(None);
    };
    Ok(
        serde_json::from_value::<bmh_api::HardwareData>(stored.value)
            .ok()
            .and_then(|hd| hd.spec.hardware)
            .map(std::sync::Arc::unwrap_or_clone),
    )
}

/// The status an applied host gets: the stored one, except that a host without one takes it from
/// BMO's status annotation, as BMO's `reconcileHostData` does (the HardwareData's details first).
fn applied_status(
    applied: &bmh_api::BareMetalHost,
    old: Option<&bmh_api::BareMetalHost>,
    hardware: Option<&bmh_api::HardwareDetails>,
) -> Option<bmh_api::BareMetalHostStatus> {
    let kept = old.and_then(|o| o.status.clone());
    if kept.as_ref().is_some_and(|s| s.last_updated.is_some()) {
        return kept;
    }
    let restored = applied
        .metadata
        .annotations
        .get(annotations::STATUS)
        .filter(|t| !t.is_empty())
        .and_then(|t| serde_json::from_str::<bmh_api::BareMetalHostStatus>(t).ok());
    let Some(mut status) = restored else {
        return kept;
    };
    if let Some(hw) = hardware {
        status.hardware = Some(hw.clone().into());
    }
    if status.last_updated.is_none() {
        status.last_updated = Some(crate::clock::format_time(chrono::Utc::now()));
    }
    Some(status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys(m: &BTreeMap<String, &str>) -> Vec<String> {
        m.keys().cloned().collect()
    }

    fn map(pairs: &[(&str, &'static str)]) -> BTreeMap<String, &'static str> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn merge_keys_is_kubectls_three_way_merge() {
        // The file's keys are set; those the last apply set and the file dropped go; the
        // others (a verb's, BMO's) stay.
        let file = map(&[("a", "1"), ("b", "new")]);
        let stored = map(&[("a", "1"), ("b", "old"), ("c", "3"), ("verb", "x")]);
        let last = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let (merged, applied) = merge_keys(&file, &stored, &last);
        assert_eq!(merged, map(&[("a", "1"), ("b", "new"), ("verb", "x")]));
        assert_eq!(applied, keys(&file));
        // Without a record of the last apply nothing is removed (as kubectl without its
        // annotation).
        let (merged, _) = merge_keys(&file, &stored, &[]);
        assert_eq!(
            merged,
            map(&[("a", "1"), ("b", "new"), ("c", "3"), ("verb", "x")])
        );
    }

    fn stored(value: Value, version: u64) -> Stored {
        Stored { value, version }
    }

    #[test]
    fn merge_object_keeps_what_the_store_owns_and_bumps_the_generation_on_a_spec_change() {
        let applied = json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "labels": {"team": "a"}, "uid": "from-file"},
            "spec": {"colour": "red"},
            "status": {"ignored": true},
        });
        let first = merge_object(&applied, None);
        let uid = first["metadata"]["uid"].as_str().unwrap().to_string();
        assert_ne!(uid, "from-file", "the store gives the uid");
        assert_eq!(first["metadata"]["generation"], 1);
        assert_eq!(first["metadata"]["namespace"], "default");
        assert!(first.get("status").is_none(), "a file's status is ignored");
        assert_eq!(last_applied(&first).labels, ["team"]);

        // Stored meanwhile: a status, a verb's annotation, a finalizer.
        let mut now = first.clone();
        now["status"] = json!({"ok": true});
        now["metadata"]["annotations"] = json!({"verb": "x"});
        now["metadata"]["finalizers"] = json!(["f"]);
        let same = merge_object(&applied, Some(&stored(now.clone(), 3)));
        assert_eq!(same["metadata"]["uid"], uid.as_str());
        assert_eq!(same["metadata"]["generation"], 1);
        assert_eq!(same["status"], json!({"ok": true}));
        assert_eq!(same["metadata"]["annotations"], json!({"verb": "x"}));
        assert_eq!(same["metadata"]["finalizers"], json!(["f"]));

        let mut changed = applied.clone();
        changed["spec"]["colour"] = json!("blue");
        changed["metadata"]["labels"] = json!({});
        let next = merge_object(&changed, Some(&stored(now, 3)));
        assert_eq!(next["metadata"]["generation"], 2);
        assert!(
            next["metadata"].get("labels").is_none(),
            "the label the last apply set is removed"
        );
        assert_eq!(last_applied(&next), LastApplied::default());
    }

    fn host(value: Value) -> bmh_api::BareMetalHost {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn merge_host_keeps_verbs_annotations_and_restores_the_status_annotation_once() {
        let file = host(json!({
            "apiVersion": "metal3.io/v1alpha1", "kind": "BareMetalHost",
            "metadata": {"name": "h0", "annotations": {
                "mine": "1",
                "baremetalhost.metal3.io/status": "{\"operationalStatus\":\"OK\",\"poweredOn\":true}",
            }},
            "spec": {"online": true},
        }));
        let created = merge_host(&file, None, None).unwrap();
        let (h, book) = decode_host(&created).unwrap();
        let status = h.status.expect("restored from the annotation");
        assert!(status.powered_on);
        assert!(
            status.last_updated.is_some(),
            "stamped when the annotation has none"
        );
        assert_eq!(
            h.metadata.annotations.keys().collect::<Vec<_>>(),
            ["mine"],
            "the status annotation is consumed"
        );
        assert_eq!(book.generation, 1);
        assert_eq!(last_applied(&created).annotations, ["mine"]);

        // A verb's annotation and a newer status in the store survive a re-apply.
        let mut now = created.clone();
        now["metadata"]["annotations"]["reboot.metal3.io/bmhctl"] = json!("{}");
        now["status"]["poweredOn"] = json!(false);
        let again = merge_host(&file, Some(&stored(now, 2)), None).unwrap();
        let (h, book) = decode_host(&again).unwrap();
        assert!(!h.status.unwrap().powered_on, "the stored status wins");
        assert_eq!(
            h.metadata.annotations.keys().collect::<Vec<_>>(),
            ["mine", "reboot.metal3.io/bmhctl"]
        );
        assert_eq!(book.generation, 1);
    }
}
