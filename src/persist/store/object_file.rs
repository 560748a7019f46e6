//! One object file of the store, read and checked: it is the object its path names.

use super::{Stored, resource_dir};
use crate::diagnostic::{Diagnostic, Position};
use crate::error::{Error, Result};
use crate::objects::{SECRET_API_VERSION, SECRET_KIND};
use crate::persist::atomic::unless_missing;
use crate::persist::files::yaml_file::{PathSeg, YamlFile};
use bmh_api::ObjectKey;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The kind of the inspection result object.
pub const HARDWARE_DATA_KIND: &str = "HardwareData";

/// Secrets and the kinds of a host's own objects: not among the objects a plugin is given.
pub(super) const OWN_KINDS: [(&str, &str); 6] = [
    (SECRET_API_VERSION, SECRET_KIND),
    (bmh_api::API_VERSION, bmh_api::KIND),
    (bmh_api::API_VERSION, bmh_api::HOST_FIRMWARE_SETTINGS_KIND),
    (bmh_api::API_VERSION, bmh_api::HOST_FIRMWARE_COMPONENTS_KIND),
    (bmh_api::API_VERSION, bmh_api::DATA_IMAGE_KIND),
    (bmh_api::API_VERSION, HARDWARE_DATA_KIND),
];

/// A store object that cannot be used, and why. The others are used without it.
#[derive(Debug)]
pub struct BadObject {
    /// The file at fault: the object's own, or one it needs (a host's Secret).
    pub path: PathBuf,
    /// The object that cannot be used, as its path names it.
    pub key: ObjectKey,
    pub error: Error,
}

/// What the path of an object file says it holds.
pub(super) struct Identity<'a> {
    /// The resource directory (`baremetalhosts`, `secrets`, `widgets.example.com`).
    pub dir: &'a str,
    pub key: ObjectKey,
}

impl<'a> Identity<'a> {
    /// The identity of `<root>/<dir>/<namespace>/<name>.yaml`.
    pub fn of(path: &'a Path) -> Identity<'a> {
        let ns_dir = path.parent();
        let name = |p: Option<&'a Path>| {
            p.and_then(Path::file_name)
                .map(|n| n.to_string_lossy())
                .unwrap_or_default()
        };
        Identity {
            dir: ns_dir
                .and_then(Path::parent)
                .and_then(Path::file_name)
                .and_then(|n| n.to_str())
                .unwrap_or_default(),
            key: ObjectKey::new(
                name(ns_dir),
                path.file_stem()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default(),
            ),
        }
    }

    /// The apiVersion and kind this directory holds, for the kinds bmhctl knows.
    fn known(&self) -> Option<(&'static str, &'static str)> {
        OWN_KINDS
            .into_iter()
            .chain([
                (bmh_api::API_VERSION, bmh_api::BMC_EVENT_SUBSCRIPTION_KIND),
                (bmh_api::API_VERSION, bmh_api::HOST_UPDATE_POLICY_KIND),
            ])
            .find(|(a, k)| resource_dir(a, k) == self.dir)
    }

    /// The kind named for messages: the directory's, else what the object says it is.
    fn kind_of<'v>(&self, value: &'v Value) -> &'v str {
        match self.known() {
            Some((_, k)) => k,
            None => value["kind"].as_str().unwrap_or("object"),
        }
    }

    fn is_secret(&self) -> bool {
        self.dir == resource_dir(SECRET_API_VERSION, SECRET_KIND)
    }
}

/// Reads the object file at `path`: `None` when it does not exist.
pub(super) fn read(path: &Path) -> Result<Option<Stored>> {
    let Some(bytes) = unless_missing(std::fs::read(path)).map_err(|e| Error::io(path, e))? else {
        return Ok(None);
    };
    let id = Identity::of(path);
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::invalid(
            Diagnostic::new("not a readable store object: not UTF-8 text")
                .in_file(path)
                .object(id.known().map_or("object", |(_, k)| k), &id.key),
        )
    })?;
    parse(path, &id, &text).map(Some)
}

/// Parses and checks one object file's text.
pub(super) fn parse(path: &Path, id: &Identity, text: &str) -> Result<Stored> {
    let unreadable = |line: usize, column: usize, why: &str| {
        let kind = id.known().map_or("object", |(_, k)| k);
        Error::invalid(
            Diagnostic::new(format!("not a readable store object: {why}"))
                .at(Position::new(path, line.max(1), column.max(1)))
                .object(kind, &id.key),
        )
    };
    // The parser takes a NUL ending a comment for the end of the input (see YamlFile::parse).
    if let Some(i) = text.find('\0') {
        let line = text[..i].matches('\n').count() + 1;
        let column = i - text[..i].rfind('\n').map_or(0, |l| l + 1) + 1;
        return Err(unreadable(
            line,
            column,
            "a NUL character, not allowed in YAML",
        ));
    }
    let value: Value = serde_saphyr::from_str(text).map_err(|e| {
        let (line, column) = e
            .location()
            .map_or((1, 1), |l| (l.line() as usize, l.column() as usize));
        let message = e.without_snippet().to_string();
        // The position is given apart; the message alone says what.
        let message = match message.find(" at line ") {
            Some(i) => &message[..i],
            None => &message,
        };
        let message = message.strip_prefix("error: ").unwrap_or(message);
        let message = match message.split_once(": ") {
            Some((at, rest)) if at.starts_with("line ") => rest,
            _ => message,
        };
        unreadable(line, column, message)
    })?;
    if !value.is_object() {
        let what = if value.is_null() {
            "empty"
        } else {
            "not a mapping"
        };
        return Err(unreadable(1, 1, what));
    }
    if ["apiVersion", "kind", "metadata"]
        .iter()
        .all(|k| value.get(k).is_none())
    {
        return Err(unreadable(
            1,
            1,
            "not a Kubernetes object (no apiVersion, kind or metadata)",
        ));
    }
    let found = identity_problems(id, &value);
    if !found.is_empty() {
        let kind = id.kind_of(&value).to_string();
        let diags: Vec<Diagnostic> = found
            .into_iter()
            .map(|(field, message)| {
                let segs: Vec<&str> = field.split('.').collect();
                Diagnostic::new(message)
                    .at(position_of(path, Some(text), &segs))
                    .object(&kind, &id.key)
                    .field(field)
            })
            .collect();
        return Err(Error::Invalid(diags.into()));
    }
    // A Secret stored anywhere else is refused above (its kind is not its directory's).
    if id.is_secret() {
        secret_data(path, text, &id.key, &value)?;
    }
    let version = match &value["metadata"]["resourceVersion"] {
        Value::String(s) => s.parse().unwrap_or(0),
        Value::Number(n) => n.as_u64().unwrap_or(0),
        _ => 0,
    };
    Ok(Stored { value, version })
}

/// Where the object is not what its path names: (field, message) for each.
fn identity_problems(id: &Identity, value: &Value) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let api_version = value["apiVersion"].as_str().unwrap_or_default();
    let kind = value["kind"].as_str().unwrap_or_default();
    match id.known() {
        Some((want_api, want_kind)) => {
            if kind != want_kind {
                out.push((
                    "kind",
                    format!(
                        "{}, but {}/ holds {want_kind} objects only: not used",
                        is_or_missing(kind),
                        id.dir
                    ),
                ));
            } else if api_version != want_api {
                out.push((
                    "apiVersion",
                    format!(
                        "{}, but {}/ holds {want_api} objects only: not used",
                        is_or_missing(api_version),
                        id.dir
                    ),
                ));
            }
        }
        None if kind.is_empty() || api_version.is_empty() => {
            let field = if kind.is_empty() {
                "kind"
            } else {
                "apiVersion"
            };
            out.push((field, "is missing: not used".to_string()));
        }
        None if resource_dir(api_version, kind) != id.dir => out.push((
            "kind",
            format!(
                "{kind} ({api_version}) belongs in {}/, not in {}/: not used",
                resource_dir(api_version, kind),
                id.dir
            ),
        )),
        None => {}
    }
    let key = super::object_key(value);
    if key.name != id.key.name {
        out.push((
            "metadata.name",
            format!(
                "{}, but the file is named for {:?}: not used",
                is_or_missing(&key.name),
                id.key.name
            ),
        ));
    }
    if key.namespace != id.key.namespace {
        out.push((
            "metadata.namespace",
            format!(
                "is {:?}, but the file is in the directory of namespace {:?}: not used",
                key.namespace, id.key.namespace
            ),
        ));
    }
    out
}

/// Where the node at `segs` of `text` (the file at `path`) is; the file when not found.
pub(super) fn position_of(path: &Path, text: Option<&str>, segs: &[&str]) -> Position {
    let segs: Vec<PathSeg> = segs.iter().map(|s| PathSeg::Key(s)).collect();
    text.and_then(|t| YamlFile::parse(t.to_string()).ok())
        .and_then(|y| y.locate(0, &segs))
        .map_or_else(
            || Position::file(path),
            |p| Position::new(path, p.line, p.column),
        )
}

/// `is "x"`, or `missing` for an empty value.
fn is_or_missing(value: &str) -> String {
    if value.is_empty() {
        "missing".to_string()
    } else {
        format!("is {value:?}")
    }
}

pub(crate) enum DataProblem {
    NotAMapping,
    NotAString,
    NotBase64,
}

/// A Secret's `fields`: `data` (base64, ASCII whitespace ignored) with `stringData` (plain)
/// merged over it. Values never appear in messages.
pub(crate) fn decode_data(
    value: &Value,
    fields: &[&str],
    mut problem: impl FnMut(&[&str], DataProblem),
) -> BTreeMap<String, Vec<u8>> {
    use base64::Engine as _;
    let mut out = BTreeMap::new();
    for &field in fields {
        let map = match value.get(field) {
            None | Some(Value::Null) => continue,
            Some(Value::Object(m)) => m,
            Some(_) => {
                problem(&[field], DataProblem::NotAMapping);
                continue;
            }
        };
        for (k, v) in map {
            let text = match v {
                Value::String(s) => s.as_str(),
                Value::Null => "",
                _ => {
                    problem(&[field, k], DataProblem::NotAString);
                    continue;
                }
            };
            if field == "data" {
                let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
                match base64::engine::general_purpose::STANDARD.decode(compact) {
                    Ok(bytes) => {
                        out.insert(k.clone(), bytes);
                    }
                    Err(_) => problem(&[field, k], DataProblem::NotBase64),
                }
            } else {
                out.insert(k.clone(), text.as_bytes().to_vec());
            }
        }
    }
    out
}

/// A stored Secret's `data`, decoded; its first problem.
pub(super) fn secret_data(
    path: &Path,
    text: &str,
    key: &ObjectKey,
    value: &Value,
) -> Result<BTreeMap<String, Vec<u8>>> {
    let mut first = None;
    let data = decode_data(value, &["data"], |segs, problem| {
        let message = match problem {
            DataProblem::NotAMapping => "must be a mapping of keys to strings",
            DataProblem::NotAString => "must be a string (the value is not shown)",
            DataProblem::NotBase64 => "not valid base64 (the value is not shown)",
        };
        first.get_or_insert_with(|| {
            Error::invalid(
                Diagnostic::new(message)
                    .at(position_of(path, Some(text), segs))
                    .object(SECRET_KIND, key)
                    .field(segs.join(".")),
            )
        });
    });
    first.map_or(Ok(data), Err)
}

/// Writes `status` (`None`: removed) into the stored object `key`; `Ok(false)` when not stored.
pub(super) fn write_status<T: serde::Serialize>(
    store: &super::Store,
    key: &crate::objects::TypedKey,
    status: Option<&T>,
) -> Result<bool> {
    let mut found = false;
    store.update(key, |current| {
        found = current.is_some();
        let Some(mut v) = current.cloned() else {
            return Ok(None);
        };
        let status = status.map(serde_json::to_value).transpose();
        let status = status.map_err(|e| Error::internal("cannot encode a status as JSON", e))?;
        if let Some(obj) = v.as_object_mut() {
            match status {
                Some(s) => obj.insert("status".into(), s),
                None => obj.remove("status"),
            };
        }
        Ok(Some(v))
    })?;
    Ok(found)
}
