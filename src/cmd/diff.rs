//! `bmhctl diff -f`: what `apply` would change, as `kubectl diff` shows it (Secrets masked).

use super::StoreArgs;
use crate::error::{Error, Result};
use crate::objects::{SECRET_KIND, TypedKey};
use crate::persist::store::apply_merge::{merge_host, merge_object, stored_hardware};
use crate::persist::store::hosts::host_key;
use crate::persist::store::{Store, Stored};
use clap::Args;
use serde_json::Value;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// YAML files, or directories of them, as `bmhctl apply` takes them.
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

pub fn diff(args: &DiffArgs, input: crate::persist::InputPolicy) -> Result<bool> {
    let root = crate::persist::store::resolve_root(args.store.store.as_deref())?;
    show(&args.paths, &root, input)
}

pub fn show(paths: &[PathBuf], root: &Path, input: crate::persist::InputPolicy) -> Result<bool> {
    let existing = Store::open_existing(root)?;
    let store = existing.as_ref();
    let applied = super::applied::collect(paths, store, input)?;
    let mut text = String::new();
    for (key, value, _) in &applied.objects {
        let stored = store.map(|s| stored_or_said(s, key)).transpose()?.flatten();
        let merged = merge_object(value, stored.as_ref());
        text.push_str(&object_diff(key, stored.map(|s| s.value), merged)?);
    }
    for h in &applied.inv.hosts {
        let key = host_key(&h.key);
        let (stored, hardware) = match store {
            Some(s) => (stored_or_said(s, &key)?, stored_hardware(s, &h.key)?),
            None => (None, None),
        };
        let merged = merge_host(&h.record.host, stored.as_ref(), hardware.as_ref())?;
        text.push_str(&object_diff(&key, stored.map(|s| s.value), merged)?);
    }
    super::output::write_stdout(&text)?;
    Ok(!text.is_empty())
}

/// The stored object; an unreadable one is said and compared as absent.
fn stored_or_said(store: &Store, key: &TypedKey) -> Result<Option<Stored>> {
    match store.get(key) {
        Err(e @ Error::Invalid(_)) => {
            crate::eprintln_quiet!("bmhctl: {}; an apply replaces it", e.chain());
            Ok(None)
        }
        other => other,
    }
}

/// kubectl's name of an object's file: `GROUP.VERSION.KIND.NAMESPACE.NAME`.
fn file_name(key: &TypedKey) -> String {
    format!(
        "{}.{}.{}.{}",
        key.api_version.replace('/', "."),
        key.kind,
        key.key.namespace,
        key.key.name
    )
}

fn object_diff(key: &TypedKey, stored: Option<Value>, merged: Value) -> Result<String> {
    let mut before = stored.map(comparable);
    let mut after = comparable(merged);
    if before.as_ref() == Some(&after) {
        return Ok(String::new());
    }
    if before.is_none()
        && let Some(m) = after.get_mut("metadata").and_then(Value::as_object_mut)
    {
        // Made up for the comparison: the apply will make another.
        m.remove("uid");
    }
    if key.kind == SECRET_KIND && key.api_version == "v1" {
        mask_secret(&mut before, &mut after);
    }
    let old = match &before {
        Some(v) => yaml(key, v)?,
        None => String::new(),
    };
    let new = yaml(key, &after)?;
    let name = file_name(key);
    let (a, b) = (format!("LIVE/{name}"), format!("MERGED/{name}"));
    let body = similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string();
    Ok(format!("diff -u -N {a} {b}\n{body}"))
}

fn yaml(key: &TypedKey, v: &Value) -> Result<String> {
    serde_saphyr::to_string(v)
        .map_err(|e| Error::internal(format!("{key}: cannot encode as YAML"), e))
}

/// The object without the store's version counter and a host's bookkeeping.
fn comparable(mut v: Value) -> Value {
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("resourceVersion");
    }
    if let Some(o) = v.as_object_mut() {
        o.remove(crate::persist::store::hosts::BOOK_KEY);
    }
    v
}

/// Secret values masked as kubectl diff masks them, marked where they differ.
fn mask_secret(before: &mut Option<Value>, after: &mut Value) {
    // `None`: any other field of a Secret is masked whole: it may be a credential.
    for field in [Some("data"), Some("stringData"), None] {
        let (old, new) = (before.clone(), after.clone());
        if let Some(b) = before.as_mut() {
            mask(b, Some(&new), field, "before");
        }
        mask(after, old.as_ref(), field, "after");
    }
}

/// The values of `field` of `v` (`None`: its fields but the plain ones), marked where `other`'s differ.
fn mask(v: &mut Value, other: Option<&Value>, field: Option<&str>, mark: &str) {
    const PLAIN: [&str; 7] = [
        "apiVersion",
        "kind",
        "metadata",
        "type",
        "immutable",
        "data",
        "stringData",
    ];
    let (v, other) = match field {
        Some(f) => (v.get_mut(f), other.and_then(|o| o.get(f))),
        None => (Some(v), other),
    };
    let Some(m) = v.and_then(Value::as_object_mut) else {
        return;
    };
    for (k, val) in m.iter_mut() {
        if field.is_none() && PLAIN.contains(&k.as_str()) {
            continue;
        }
        let same = other.and_then(|o| o.get(k)) == Some(&*val);
        *val = Value::String(if same {
            "***".into()
        } else {
            format!("*** ({mark})")
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_values_are_masked_and_changes_marked() {
        let mut before = Some(json!({"data": {"username": "YQ==", "password": "cA=="}}));
        let mut after = json!({"data": {"username": "YQ==", "password": "cQ==", "new": "eA=="}});
        mask_secret(&mut before, &mut after);
        assert_eq!(
            before.unwrap(),
            json!({"data": {"username": "***", "password": "*** (before)"}})
        );
        assert_eq!(
            after,
            json!({"data": {"username": "***", "password": "*** (after)", "new": "*** (after)"}})
        );
    }

    #[test]
    fn a_secrets_other_fields_are_masked_whole() {
        let mut before = Some(json!({"kind": "Secret", "extra": "cA==", "type": "Opaque"}));
        let mut after = json!({"kind": "Secret", "extra": {"x": "cQ=="}, "more": 1});
        mask_secret(&mut before, &mut after);
        assert_eq!(
            before.unwrap(),
            json!({"kind": "Secret", "extra": "*** (before)", "type": "Opaque"})
        );
        assert_eq!(
            after,
            json!({"kind": "Secret", "extra": "*** (after)", "more": "*** (after)"})
        );
    }

    #[test]
    fn an_unchanged_object_has_no_diff_whatever_its_version() {
        let key = TypedKey::new("v1", "ConfigMap", bmh_api::ObjectKey::new("default", "c"));
        let stored = json!({"metadata": {"name": "c", "resourceVersion": "3"}, "data": {"a": "1"}});
        let merged = json!({"metadata": {"name": "c"}, "data": {"a": "1"}});
        assert_eq!(object_diff(&key, Some(stored), merged).unwrap(), "");
    }
}
