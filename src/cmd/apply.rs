//! `bmhctl apply -f FILE|DIR`: create or update the files' objects in the local store.
//!
//! Every host is first checked with BMO's admission rules (as an update against the stored
//! host when there is one); one invalid host refuses the whole apply, nothing written. Then,
//! Secrets first and hosts last (so that a host is never in the store before its Secret), each
//! object is merged over its stored version: the file gives the spec (a Secret's `data`, any
//! other top-level field); labels and annotations are merged as `kubectl apply` merges them
//! (see [`merge_keys`]: the file's keys are set, the keys the last apply set and the file no
//! longer has are removed, every other key — a verb's, BMO's — is kept); the store keeps the
//! uid, the finalizers, the deletion mark, the status (a `status:` in the file is ignored) and
//! bmhctl's bookkeeping; a changed spec bumps `metadata.generation`. A host without a status
//! takes it from BMO's status annotation (what `bmhctl export` writes), as BMO does; the
//! annotation is consumed. A write that would change nothing writes nothing. Each write checks
//! the version it was computed from, and is computed again when another writer got there
//! first.

use super::StoreArgs;
use crate::error::{Error, Result};
use crate::objects::{SECRET_API_VERSION, SECRET_KIND, TypedKey, secret_object};
use crate::persist::bookkeeping::bookkeeping_at_load;
use crate::persist::files::inventory::{self, Inventory, LoadMode};
use crate::persist::files::yaml_file::YamlFile;
use crate::persist::store::hosts::{
    LastApplied, decode_host, encode_host, host_key, last_applied, set_last_applied,
};
use crate::persist::store::{Expect, Store, Stored, Written};
use bmh_api::{ObjectKey, annotations};
use clap::Args;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// YAML files, or directories of them, holding BareMetalHosts, their Secrets and companion
    /// objects.
    #[arg(
        short = 'f',
        long = "filename",
        required = true,
        value_name = "FILE|DIR"
    )]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// How many times a write is computed again after another writer changed the object.
const ATTEMPTS: usize = 10;

pub fn apply(args: ApplyArgs) -> Result<()> {
    let inv = inventory::load(&args.paths, LoadMode::ReadOnly)?;
    let root = crate::persist::store::resolve_root(args.store.store.as_deref())?;
    let existing = Store::open_existing(&root);
    check_hosts(&inv, existing.as_ref())?;
    let store = Store::open(&root)?;

    let mut objects: Vec<(TypedKey, Value)> = secrets(&args.paths, &inv)?;
    for d in &inv.other_documents {
        if d.kind.is_empty() || d.name.is_empty() || d.api_version.is_empty() {
            continue;
        }
        let key = TypedKey::new(
            &d.api_version,
            &d.kind,
            ObjectKey::new(&d.namespace, &d.name),
        );
        objects.push((key, d.value.clone()));
    }
    for h in &inv.hosts {
        if let Some(s) = &h.record.firmware_settings {
            let key = crate::persist::store::hosts::settings_key(&h.key);
            objects.push((key, to_value(s)?));
        }
        if let Some(c) = &h.record.firmware_components {
            let key = crate::persist::store::hosts::components_key(&h.key);
            objects.push((key, to_value(c)?));
        }
    }
    for (key, applied) in &objects {
        let written = write_retrying(&store, key, |stored| Ok(merge_object(applied, stored)))?;
        report(key, written);
    }
    for h in &inv.hosts {
        let key = host_key(&h.key);
        let hardware = stored_hardware(&store, &h.key)?;
        let written = write_retrying(&store, &key, |stored| {
            merge_host(&h.record.host, stored, hardware.as_ref())
        })?;
        report(&key, written);
    }
    Ok(())
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| Error::Other(e.into()))
}

/// BMO's admission on every host of the files, the stored host (if any) as the old object.
fn check_hosts(inv: &Inventory, store: Option<&Store>) -> Result<()> {
    let mut lines = Vec::new();
    for (i, h) in inv.hosts.iter().enumerate() {
        let stored = match store {
            Some(s) => s.get(&host_key(&h.key))?,
            None => None,
        };
        let old = stored
            .as_ref()
            .map(|s| decode_host(&s.value))
            .transpose()?
            .map(|(host, _)| host);
        let mut new = h.record.host.clone();
        if let (Some(s), Some(o)) = (&stored, &old) {
            merge_host_metadata(&mut new, o, &last_applied(&s.value));
        }
        new.status = old.as_ref().and_then(|o| o.status.clone());
        let errors = crate::validate::validate(&new, old.as_ref());
        lines.extend(crate::validate::error_lines(inv, i, &errors));
    }
    if lines.is_empty() {
        Ok(())
    } else {
        Err(Error::BadInput(lines.join("\n")))
    }
}

/// The Secrets of the files, as stored: their decoded values re-encoded as `data`, with their
/// labels, annotations and type.
fn secrets(paths: &[PathBuf], inv: &Inventory) -> Result<Vec<(TypedKey, Value)>> {
    let mut out: Vec<(TypedKey, Value)> = Vec::new();
    for (label, real) in inventory::input_files(paths)? {
        let text = std::fs::read_to_string(&real).map_err(|e| Error::io(&label, e))?;
        let Ok(yaml) = YamlFile::parse(text) else {
            continue;
        };
        for doc in 0..yaml.len() {
            let Ok(v) = serde_saphyr::from_str::<Value>(yaml.document_text(doc)) else {
                continue;
            };
            if v["apiVersion"] != SECRET_API_VERSION || v["kind"] != SECRET_KIND {
                continue;
            }
            let key = crate::persist::store::object_key(&v);
            let Some(secret) = inv.objects.get_secret(&key) else {
                continue;
            };
            let mut obj = secret_object(secret);
            for field in ["labels", "annotations"] {
                if let Some(m) = v["metadata"].get(field).filter(|m| m.is_object()) {
                    obj["metadata"][field] = m.clone();
                }
            }
            if let Some(t) = v.get("type").filter(|t| t.is_string()) {
                obj["type"] = t.clone();
            }
            let tk = TypedKey::new(SECRET_API_VERSION, SECRET_KIND, key);
            out.retain(|(k, _)| *k != tk);
            out.push((tk, obj));
        }
    }
    Ok(out)
}

/// Computes and writes an object, computing it again when the store changed in between.
fn write_retrying(
    store: &Store,
    key: &TypedKey,
    mut compute: impl FnMut(Option<&Stored>) -> Result<Value>,
) -> Result<Written> {
    let mut attempt = 0;
    loop {
        let stored = store.get(key)?;
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
fn merge_object(applied: &Value, stored: Option<&Stored>) -> Value {
    let old = stored.map(|s| &s.value);
    let mut out = Map::new();
    out.insert("apiVersion".into(), applied["apiVersion"].clone());
    out.insert("kind".into(), applied["kind"].clone());
    let key = crate::persist::store::object_key(applied);
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

/// `kubectl apply`'s three-way merge of one map of `metadata` (labels or annotations): the
/// stored map, without the keys the last apply set (`last`) that the file no longer has, with
/// the file's keys set over it. Returns the map and the keys this apply set (sorted), to be
/// remembered for the next one.
fn merge_keys<V: Clone>(
    file: &BTreeMap<String, V>,
    stored: &BTreeMap<String, V>,
    last: &[String],
) -> (BTreeMap<String, V>, Vec<String>) {
    let mut out = stored.clone();
    out.retain(|k, _| file.contains_key(k) || !last.contains(k));
    for (k, v) in file {
        out.insert(k.clone(), v.clone());
    }
    (out, file.keys().cloned().collect())
}

/// The applied host's labels and annotations merged over the stored host's ([`merge_keys`]);
/// returns the keys the apply set. BMO's status annotation is not one of them: it is consumed.
fn merge_host_metadata(
    host: &mut bmh_api::BareMetalHost,
    old: &bmh_api::BareMetalHost,
    last: &LastApplied,
) -> LastApplied {
    let m = &mut host.metadata;
    let (labels, label_keys) = merge_keys(&m.labels, &old.metadata.labels, &last.labels);
    let (mut merged, mut annotation_keys) =
        merge_keys(&m.annotations, &old.metadata.annotations, &last.annotations);
    // The file's status annotation (if any) stays for `applied_status` to read; a stored one
    // cannot be (it is consumed), so it comes from the file or not at all.
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

/// A host: the file's spec, and its labels and annotations merged ([`merge_host_metadata`]),
/// over the stored host's status and bookkeeping; the generation is bumped when the spec changed.
fn merge_host(
    applied: &bmh_api::BareMetalHost,
    stored: Option<&Stored>,
    hardware: Option<&bmh_api::HardwareDetails>,
) -> Result<Value> {
    let old = stored.map(|s| decode_host(&s.value)).transpose()?;
    let mut host = applied.clone();
    let applied_keys = match (stored, &old) {
        (Some(s), Some((o, _))) => merge_host_metadata(&mut host, o, &last_applied(&s.value)),
        _ => merge_host_metadata(
            &mut host,
            &bmh_api::BareMetalHost::default(),
            &LastApplied::default(),
        ),
    };
    host.status = applied_status(applied, old.as_ref().map(|(h, _)| h), hardware);
    // Consumed here as BMO's controller consumes it (deleted whenever present, used or not),
    // so that applying the same file again changes nothing.
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

/// The hardware details of the host's HardwareData in the store (applied just before the
/// hosts, so an export's HardwareData is there).
fn stored_hardware(store: &Store, key: &ObjectKey) -> Result<Option<bmh_api::HardwareDetails>> {
    let Some(stored) = store.get(&crate::persist::store::hosts::hardware_key(key))? else {
        return Ok(None);
    };
    Ok(
        serde_json::from_value::<bmh_api::HardwareData>(stored.value)
            .ok()
            .and_then(|hd| hd.spec.hardware),
    )
}

/// The status an applied host gets: the stored one (a `status:` in the file is ignored, as the
/// API server ignores it on the main resource), except that a host without a status (no
/// `lastUpdated`, BMO's `hostHasStatus`) takes it from BMO's status annotation
/// (`baremetalhost.metal3.io/status`, what `bmhctl export` writes), as BMO's
/// `reconcileHostData` does: the details of the host's HardwareData take precedence over the
/// annotation's `hardware`, and `lastUpdated` is stamped when the annotation has none. An
/// annotation that does not decode is ignored (admission refused a malformed one already).
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
        status.hardware = Some(hw.clone());
    }
    if status.last_updated.is_none() {
        status.last_updated = Some(crate::clock::format_time(chrono::Utc::now()));
    }
    Some(status)
}

fn report(key: &TypedKey, written: Written) {
    let what = match written {
        Written::Created => "created",
        Written::Updated => "configured",
        Written::Unchanged => "unchanged",
    };
    let kind = key.kind.to_ascii_lowercase();
    let resource = match key.api_version.rsplit_once('/') {
        Some((group, _)) => format!("{kind}.{group}"),
        None => kind,
    };
    let ns = if key.key.namespace == bmh_api::DEFAULT_NAMESPACE {
        String::new()
    } else {
        format!(" (namespace {})", key.key.namespace)
    };
    println!("{resource}/{} {what}{ns}", key.key.name);
}
