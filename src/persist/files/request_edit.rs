//! The edits other than annotations a request makes to a host's document in the user's file:
//! `metadata.deletionTimestamp` set (`delete`), spec fields removed (`deprovision`). Each is
//! checked by parsing the result again, and refused (asking for the edit by hand) otherwise.

use super::annotation_edit::{
    first_in_flow, flow_brace, indentation, insert, key_line, line_offset,
};
use super::yaml_file::YamlFile;
use crate::error::Error;
use serde_json::Value;

/// `text` with `metadata.<key>: "<value>"` added to document `doc` (which has no `key`).
pub fn with_metadata_field(
    text: &str,
    doc: usize,
    key: &str,
    value: &str,
) -> Result<String, Error> {
    let entry = format!("{key}: {}", Value::String(value.to_string()));
    let refused = || {
        Error::invalid(format!(
            "cannot add {key} to the metadata of document {} of this file: it is not laid out \
             as bmhctl can edit; add `{entry}` to its metadata by hand",
            doc + 1
        ))
    };
    let (yaml, before) = parsed(text, doc).ok_or_else(refused)?;
    let meta = before
        .get("metadata")
        .and_then(Value::as_object)
        .ok_or_else(refused)?;
    let text = yaml.source_text();
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let edited = match flow_brace(&yaml, doc, &["metadata"]) {
        Some(at) => first_in_flow(text, at, &entry, !meta.is_empty()),
        None => {
            let first = meta.keys().next().ok_or_else(refused)?;
            let line = key_line(&yaml, doc, &["metadata", first], first).ok_or_else(refused)?;
            let indent = " ".repeat(indentation(text, line));
            let at = line_offset(text, line).ok_or_else(refused)?;
            insert(text, at, &format!("{indent}{entry}{nl}"))
        }
    };
    let mut expected = before;
    expected["metadata"][key] = Value::String(value.to_string());
    checked(edited, &yaml, doc, &expected).ok_or_else(refused)
}

/// `text` without the entries `keys` of document `doc`'s `spec` (block style); `None` when it
/// has none of them.
pub fn without_spec_fields(text: &str, doc: usize, keys: &[&str]) -> Result<Option<String>, Error> {
    let fields = keys
        .iter()
        .map(|k| format!("spec.{k}"))
        .collect::<Vec<_>>()
        .join(" and ");
    let refused = || {
        Error::invalid(format!(
            "cannot remove {fields} from document {} of this file: it is not laid out as \
             bmhctl can edit; remove them by hand",
            doc + 1
        ))
    };
    let (yaml, before) = parsed(text, doc).ok_or_else(refused)?;
    let spec = before.get("spec").and_then(Value::as_object);
    let present: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| spec.is_some_and(|s| s.contains_key(*k)))
        .collect();
    if present.is_empty() {
        return Ok(None);
    }
    let src = yaml.source_text();
    let mut cuts = Vec::new();
    for k in &present {
        let line = key_line(&yaml, doc, &["spec", k], k).ok_or_else(refused)?;
        cuts.push(entry_lines(src, line).ok_or_else(refused)?);
    }
    cuts.sort();
    let mut edited = String::with_capacity(src.len());
    let mut at = 0;
    for (from, to) in cuts {
        edited.push_str(&src[at..from.max(at)]);
        at = to.max(at);
    }
    edited.push_str(&src[at..]);
    let mut expected = before;
    if let Some(spec) = expected.get_mut("spec").and_then(Value::as_object_mut) {
        present.iter().for_each(|k| _ = spec.remove(*k));
    }
    checked(edited, &yaml, doc, &expected)
        .map(Some)
        .ok_or_else(refused)
}

/// Byte range of the block entry whose key is on 1-based `line`: that line and the deeper ones
/// after it (blank lines inside it too, not those after its last line).
fn entry_lines(text: &str, line: usize) -> Option<(usize, usize)> {
    let start = line_offset(text, line)?;
    let col = indentation(text, line);
    let mut end = text[start..]
        .find('\n')
        .map_or(text.len(), |i| start + i + 1);
    let mut at = end;
    while at < text.len() {
        let next = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
        let body = text[at..next].trim_end_matches(['\n', '\r']);
        let content = body.trim_start_matches(' ');
        if !content.is_empty() {
            let deeper = body.len() - content.len() > col;
            // A sequence may sit at its key's column (`key:\n- a`).
            if !deeper && !content.starts_with("- ") && content != "-" {
                break;
            }
            end = next;
        }
        at = next;
    }
    Some((start, end))
}

fn parsed(text: &str, doc: usize) -> Option<(YamlFile, Value)> {
    let yaml = YamlFile::parse(text.to_string()).ok()?;
    let value = serde_saphyr::from_str(yaml.document_text(doc)).ok()?;
    Some((yaml, value))
}

/// `edited` when it parses into as many documents as `yaml`, document `doc` being `expected`.
fn checked(edited: String, yaml: &YamlFile, doc: usize, expected: &Value) -> Option<String> {
    let y = YamlFile::parse(edited.clone()).ok()?;
    let same = y.len() == yaml.len()
        && serde_saphyr::from_str::<Value>(y.document_text(doc))
            .ok()
            .as_ref()
            == Some(expected);
    same.then_some(edited)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(metadata: &str, spec: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\n{metadata}{spec}"
        )
    }

    #[test]
    fn a_deletion_timestamp_goes_first_in_block_or_flow_metadata() {
        let spec = "spec:\n  online: true # keep\n";
        let text = host(
            "metadata:\n  # the host\n  name: h0\n  labels: {a: b}\n",
            spec,
        );
        let out = with_metadata_field(&text, 1, "deletionTimestamp", "2026-12-07T00:00:00Z");
        let want = "metadata:\n  # the host\n  deletionTimestamp: \"2026-12-07T00:00:00Z\"\n  name: h0\n  labels: {a: b}\n";
        assert_eq!(out.unwrap(), host(want, spec));
        let text = host("metadata: {name: h0}\n", spec);
        let out = with_metadata_field(&text, 1, "deletionTimestamp", "t").unwrap();
        assert_eq!(
            out,
            host("metadata: {deletionTimestamp: \"t\", name: h0}\n", spec)
        );
    }

    #[test]
    fn metadata_bmhctl_cannot_place_an_entry_in_is_refused() {
        // An explicit key (`? name`): no `name:` line to insert before.
        let text = host("metadata:\n  ? name\n  : h0\n", "spec: {online: true}\n");
        let err = with_metadata_field(&text, 1, "deletionTimestamp", "t").unwrap_err();
        assert!(
            err.to_string().contains("add `deletionTimestamp: \"t\"`"),
            "{err}"
        );
    }

    #[test]
    fn spec_fields_go_with_their_nested_lines_and_comments_stay() {
        let meta = "metadata:\n  name: h0\n";
        let text = host(
            meta,
            "spec:\n  online: true\n  image:\n    # the OS\n    url: http://x/i.qcow2\n\n    checksum: http://x/i.sum\n  # after\n  userData:\n    name: ud\n  customDeploy:\n    method: m\n",
        );
        let out = without_spec_fields(&text, 1, &["image", "customDeploy"]).unwrap();
        let want = "spec:\n  online: true\n  # after\n  userData:\n    name: ud\n";
        assert_eq!(out.unwrap(), host(meta, want));
        let out = without_spec_fields(&host(meta, want), 1, &["image", "customDeploy"]).unwrap();
        assert_eq!(out, None);
    }

    #[test]
    fn a_flow_spec_is_refused() {
        let text = host(
            "metadata:\n  name: h0\n",
            "spec: {online: true, image: {url: u}}\n",
        );
        let err = without_spec_fields(&text, 1, &["image"]).unwrap_err();
        assert!(err.to_string().contains("remove them by hand"), "{err}");
    }
}
