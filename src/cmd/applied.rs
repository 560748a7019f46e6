//! What `bmhctl apply -f` would write to the local store, for `apply` and `diff`.

use crate::error::{Error, Result};
use crate::metal3_export::to_value;
use crate::objects::{SECRET_API_VERSION, SECRET_KIND, TypedKey, secret_object};
use crate::persist::files::inventory::{self, Inventory, LoadMode};
use crate::persist::files::yaml_file::YamlFile;
use crate::persist::store::Store;
use crate::persist::store::apply_merge::merge_host_metadata;
use crate::persist::store::hosts::{decode_host, host_key, last_applied};
use bmh_api::ObjectKey;
use serde_json::Value;
use std::path::PathBuf;

/// The files' hosts, and every other object with its value and file, all checked.
pub(super) struct Applied {
    pub inv: Inventory,
    pub objects: Vec<(TypedKey, Value, PathBuf)>,
}

pub(super) fn collect(
    paths: &[PathBuf],
    existing: Option<&Store>,
    input: crate::persist::InputPolicy,
) -> Result<Applied> {
    let inv = inventory::load_with(
        paths,
        LoadMode::ReadOnly,
        &crate::persist::LoadOptions {
            keep_every_kind: true,
            ..crate::persist::LoadOptions::with_input(input)
        },
    )?;
    let mut objects: Vec<(TypedKey, Value, PathBuf)> = secrets(paths, &inv)?;
    for d in &inv.other_documents {
        if d.kind.is_empty() || d.name.is_empty() || d.api_version.is_empty() {
            continue;
        }
        let key = TypedKey::new(
            &d.api_version,
            &d.kind,
            ObjectKey::new(&d.namespace, &d.name),
        );
        objects.push((key, d.value.clone(), d.file.clone()));
    }
    for h in &inv.hosts {
        let file = &inv.files[h.file].path;
        if let Some(s) = &h.record.firmware_settings {
            let key = crate::persist::store::hosts::settings_key(&h.key);
            objects.push((key, to_value(s)?, file.clone()));
        }
        if let Some(c) = &h.record.firmware_components {
            let key = crate::persist::store::hosts::components_key(&h.key);
            objects.push((key, to_value(c)?, file.clone()));
        }
        if let Some(d) = &h.record.data_image {
            let key = crate::persist::store::hosts::data_image_key(&h.key);
            objects.push((key, to_value(d)?, file.clone()));
        }
    }
    // All or nothing: every name is checked before the store is created or written.
    check_names(
        objects
            .iter()
            .map(|(k, _, f)| (k.clone(), f.as_path()))
            .chain(
                inv.hosts
                    .iter()
                    .map(|h| (host_key(&h.key), inv.files[h.file].path.as_path())),
            ),
    )?;
    check_hosts(&inv, existing)?;
    Ok(Applied { inv, objects })
}

/// Refuses an object whose name or namespace cannot be a file name in the store.
fn check_names<'a>(keys: impl Iterator<Item = (TypedKey, &'a std::path::Path)>) -> Result<()> {
    use crate::diagnostic::Diagnostic;
    use crate::persist::store::storable_name;
    let mut found = Vec::new();
    for (key, file) in keys {
        for (field, value) in [
            ("metadata.name", &key.key.name),
            ("metadata.namespace", &key.key.namespace),
        ] {
            if !storable_name(value) {
                found.push(
                    Diagnostic::new(format!(
                        "{value:?} cannot be stored: not a valid object name (one path \
                         component, not starting with a dot)"
                    ))
                    .in_file(file)
                    .object(&key.kind, &key.key)
                    .field(field),
                );
            }
        }
    }
    Error::invalid_if_any(found)
}

/// BMO's admission on every host of the files, the stored host (if any) as the old object.
fn check_hosts(inv: &Inventory, store: Option<&Store>) -> Result<()> {
    let mut found = Vec::new();
    for (i, h) in inv.hosts.iter().enumerate() {
        let stored = match store {
            Some(s) => s.get_replaceable(&host_key(&h.key))?,
            None => None,
        };
        // A stored host that cannot be decoded is replaced: the file's is checked as new.
        let old = stored
            .as_ref()
            .and_then(|s| decode_host(&s.value).ok())
            .map(|(host, _)| host);
        let mut new = h.record.host.clone();
        if let (Some(s), Some(o)) = (&stored, &old) {
            merge_host_metadata(&mut new, o, &last_applied(&s.value));
        }
        new.status = old.as_ref().and_then(|o| o.status.clone());
        let errors = crate::validate::validate(&new, old.as_ref());
        found.extend(crate::persist::files::admission::diagnostics(
            inv, i, &errors,
        ));
    }
    Error::invalid_if_any(found)
}

fn secrets(paths: &[PathBuf], inv: &Inventory) -> Result<Vec<(TypedKey, Value, PathBuf)>> {
    let mut out: Vec<(TypedKey, Value, PathBuf)> = Vec::new();
    for (label, real) in inventory::input_files(paths)? {
        let text = crate::persist::files::paths::read_to_string(&real)
            .map_err(|e| Error::io(&label, e))?;
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
            out.retain(|(k, _, _)| *k != tk);
            out.push((tk, obj, label.clone()));
        }
    }
    Ok(out)
}
