//! Requests written into host files while another bmhctl (a `watch -f`) holds their locks.
//!
//! Written as an editor saves: the whole file replaced, only if it still holds what was read,
//! checked again after the swap (the same exchange the holder's saves use). So neither the
//! holder's saves nor the request is lost, and the holder reads the request as any edit made
//! during its run, at its next look at the file.

use super::lock::FileLock;
use super::yaml_file::YamlFile;
use crate::error::{Error, Result};
use crate::persist::atomic::{Replaced, replace_if_unchanged};
use bmh_api::ObjectKey;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Times a request is made again on a file that changed under it before giving up.
const ATTEMPTS: usize = 50;

/// The pid of a process holding the lock of one of the files `paths` stand for, if any.
pub fn held_by(paths: &[PathBuf]) -> Result<Option<u32>> {
    let files = super::paths::input_files(paths)?;
    Ok(files.iter().find_map(|(_, real)| FileLock::holder_of(real)))
}

/// A host's document, found again by kind and name in each text read.
pub struct HostDoc<'a> {
    /// The file as resolved, and as shown in messages.
    pub real: &'a Path,
    pub shown: &'a Path,
    pub key: &'a ObjectKey,
    /// `metadata.namespace` as the document wrote it when first read.
    pub namespace: Option<String>,
}

/// What an edit makes of a file's text, given the host's document index and value: `None` when
/// the document is already as asked.
pub type Edit<'e> = dyn Fn(&str, usize, &Value) -> Result<Option<String>> + 'e;

/// Applies `edit` to the host's document in its file; whether the file changed.
pub fn edit_host(at: &HostDoc, edit: &Edit) -> Result<bool> {
    for _ in 0..ATTEMPTS {
        let text = super::paths::read_to_string(at.real).map_err(|e| Error::io(at.shown, e))?;
        let (doc, value) = find(&text, at).ok_or_else(|| {
            Error::Conflict(format!(
                "{}: baremetalhost {} is no longer in the file",
                at.shown.display(),
                at.key
            ))
        })?;
        let Some(new) = edit(&text, doc, &value).map_err(|e| in_file(e, at.shown))? else {
            return Ok(false);
        };
        let replaced = replace_if_unchanged(
            at.real,
            false,
            |mut f| std::io::Write::write_all(&mut f, new.as_bytes()),
            |p| holds(p, &text),
            |p| holds(p, &new),
        )
        .map_err(|e| Error::io(at.shown, e))?;
        match replaced {
            Replaced::Checked { .. } | Replaced::Unchecked { .. } => return Ok(true),
            // The holder saved (or the user edited) meanwhile: made again on the new text.
            Replaced::Changed => continue,
            Replaced::ChangedTwice { kept } => {
                return Err(Error::Conflict(format!(
                    "{}: edited twice while bmhctl wrote it; nothing written, and that edit is \
                     kept as {}",
                    at.shown.display(),
                    kept.display()
                )));
            }
        }
    }
    Err(Error::Conflict(format!(
        "{}: it changed at each of {ATTEMPTS} attempts to write it; try again",
        at.shown.display()
    )))
}

fn holds(path: &Path, text: &str) -> std::io::Result<bool> {
    Ok(std::fs::read(path)? == text.as_bytes())
}

/// The index and value of the host's document in `text`.
fn find(text: &str, at: &HostDoc) -> Option<(usize, Value)> {
    let yaml = YamlFile::parse(text.to_string()).ok()?;
    (0..yaml.len()).find_map(|doc| {
        let v: Value = serde_saphyr::from_str(yaml.document_text(doc)).ok()?;
        let meta = &v["metadata"];
        let is_it = v["kind"] == "BareMetalHost"
            && meta["name"] == at.key.name.as_str()
            && meta["namespace"].as_str().map(str::to_string) == at.namespace;
        is_it.then_some((doc, v))
    })
}

/// An edit's refusal, said of the file.
fn in_file(e: Error, shown: &Path) -> Error {
    match e {
        Error::Invalid(mut ds) => {
            for d in ds.0.iter_mut().filter(|d| d.position.is_none()) {
                d.position = Some(crate::diagnostic::Position::file(shown));
            }
            Error::Invalid(ds)
        }
        e => e,
    }
}

/// Sets (`Some`) or removes (`None`) annotation `key`.
pub fn annotation(
    key: &str,
    value: Option<&str>,
) -> impl Fn(&str, usize, &Value) -> Result<Option<String>> {
    move |text, doc, v| {
        let current = v["metadata"]["annotations"].get(key);
        if current.map(Value::as_str) == value.map(Some) || (value.is_none() && current.is_none()) {
            return Ok(None);
        }
        let mut text = text.to_string();
        if current.is_some() {
            let mut yaml = YamlFile::parse(text).map_err(|e| Error::invalid(e.to_string()))?;
            yaml.remove_annotations(doc, &[key])
                .map_err(|e| Error::invalid(e.to_string()))?;
            text = yaml.render();
        }
        match value {
            Some(value) => {
                super::annotation_edit::with_annotation(&text, doc, key, value).map(Some)
            }
            None => Ok(Some(text)),
        }
    }
}

/// Sets `metadata.deletionTimestamp` to `now` unless the host has one.
pub fn deletion(now: &str) -> impl Fn(&str, usize, &Value) -> Result<Option<String>> {
    move |text, doc, v| {
        if !v["metadata"]["deletionTimestamp"].is_null() {
            return Ok(None);
        }
        super::request_edit::with_metadata_field(text, doc, "deletionTimestamp", now).map(Some)
    }
}

/// Removes `spec.image` and `spec.customDeploy`: BMO deprovisions a host that has neither.
pub fn deprovision() -> impl Fn(&str, usize, &Value) -> Result<Option<String>> {
    |text, doc, _| super::request_edit::without_spec_fields(text, doc, &["image", "customDeploy"])
}
