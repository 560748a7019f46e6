//! Adding one annotation to a host in the user's file, as the verbs do (`power off -f`, ...),
//! leaving every other byte as it is.
//!
//! The entry is written as one line, key and value double-quoted (JSON strings are YAML
//! double-quoted scalars): before the first entry of a block `metadata.annotations` at its
//! indentation, inside an empty flow `annotations: {}`, or as a new `annotations:` mapping
//! before the first key of a block `metadata`. The result is parsed again and must be the
//! document with that one annotation more; any other layout is refused with a message asking
//! to add it by hand.

use super::yaml_file::{PathSeg, YamlFile};
use crate::error::Error;
use serde_json::Value;

/// `text` (a whole file) with annotation `key: value` set on document `doc` (which must not
/// have `key` already).
pub fn with_annotation(text: &str, doc: usize, key: &str, value: &str) -> Result<String, Error> {
    let refused = || {
        Error::invalid(format!(
            "cannot add annotation {key} to document {} of this file: its metadata is not \
             laid out as bmhctl can edit (block style); add `{key}: {}` by hand",
            doc + 1,
            Value::String(value.to_string())
        ))
    };
    let yaml = YamlFile::parse(text.to_string()).map_err(|e| Error::invalid(e.to_string()))?;
    let before: Value = serde_saphyr::from_str(yaml.document_text(doc)).map_err(|_| refused())?;
    let entry = format!(
        "{}: {}",
        Value::String(key.to_string()),
        Value::String(value.to_string())
    );
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let meta = before.get("metadata").and_then(Value::as_object);
    let annotations = meta.and_then(|m| m.get("annotations"));
    let edited = match annotations {
        Some(Value::Object(a)) if !a.is_empty() => {
            let first = a.keys().next().expect("not empty");
            let line = key_line(&yaml, doc, &["metadata", "annotations", first], first)
                .ok_or_else(refused)?;
            let indent = indentation(text, line);
            insert_at(text, line, &format!("{}{entry}{nl}", " ".repeat(indent)))
        }
        Some(Value::Object(_)) => {
            let pos = yaml
                .locate(
                    doc,
                    &[PathSeg::Key("metadata"), PathSeg::Key("annotations")],
                )
                .ok_or_else(refused)?;
            let at = line_offset(text, pos.line).ok_or_else(refused)?;
            let line_text = &text[at..];
            let brace = line_text
                .find("{}")
                .filter(|&i| i < line_text.find('\n').unwrap_or(line_text.len()))
                .ok_or_else(refused)?;
            let p = at + brace + 1;
            format!("{}{entry}{}", &text[..p], &text[p..])
        }
        None => {
            let first = meta.and_then(|m| m.keys().next()).ok_or_else(refused)?;
            let line = key_line(&yaml, doc, &["metadata", first], first).ok_or_else(refused)?;
            let indent = " ".repeat(indentation(text, line));
            insert_at(
                text,
                line,
                &format!("{indent}annotations:{nl}{indent}  {entry}{nl}"),
            )
        }
        Some(_) => return Err(refused()),
    };
    // Exactly one annotation more, nothing else changed.
    let check = YamlFile::parse(edited.clone()).ok().and_then(|y| {
        (y.len() == yaml.len())
            .then(|| serde_saphyr::from_str::<Value>(y.document_text(doc)).ok())
            .flatten()
    });
    let mut expected = before.clone();
    expected["metadata"]["annotations"][key] = Value::String(value.to_string());
    if check.as_ref() != Some(&expected) {
        return Err(refused());
    }
    Ok(edited)
}

/// The 1-based line of the key `key` whose value `path` reaches: the nearest line at or above
/// the value's that starts with the key (plain or quoted) and a colon.
fn key_line(yaml: &YamlFile, doc: usize, path: &[&str], key: &str) -> Option<usize> {
    let segs: Vec<PathSeg> = path.iter().map(|k| PathSeg::Key(k)).collect();
    let pos = yaml.locate(doc, &segs)?;
    let text = yaml.source_text();
    let quoted = [key.to_string(), format!("\"{key}\""), format!("'{key}'")];
    let first = yaml.document_start_line(doc);
    (first..=pos.line).rev().find(|&line| {
        let Some(at) = line_offset(text, line) else {
            return false;
        };
        let rest = text[at..].trim_start_matches(' ');
        quoted.iter().any(|q| {
            rest.strip_prefix(q.as_str())
                .is_some_and(|r| r.trim_start_matches(' ').starts_with(':'))
        })
    })
}

/// Byte offset of the start of 1-based line `line`.
fn line_offset(text: &str, line: usize) -> Option<usize> {
    if line == 1 {
        return Some(0);
    }
    text.match_indices('\n')
        .nth(line - 2)
        .map(|(i, _)| i + 1)
        .filter(|&i| i <= text.len())
}

/// The number of spaces the line starts with.
fn indentation(text: &str, line: usize) -> usize {
    line_offset(text, line)
        .map(|at| text[at..].len() - text[at..].trim_start_matches(' ').len())
        .unwrap_or(0)
}

fn insert_at(text: &str, line: usize, insert: &str) -> String {
    let at = line_offset(text, line).unwrap_or(text.len());
    format!("{}{insert}{}", &text[..at], &text[at..])
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "# the BMC\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n";

    fn host(metadata: &str) -> String {
        format!(
            "{SECRET}---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n{metadata}spec:\n  online: true # keep\n"
        )
    }

    #[test]
    fn into_block_annotations_before_the_first_entry() {
        let text = host("  name: h0\n  annotations:\n    # mine\n    a: \"1\"\n    b: x\n");
        let out =
            with_annotation(&text, 1, "reboot.metal3.io/bmhctl", r#"{"mode":"soft"}"#).unwrap();
        assert_eq!(
            out,
            host(
                "  name: h0\n  annotations:\n    # mine\n    \"reboot.metal3.io/bmhctl\": \"{\\\"mode\\\":\\\"soft\\\"}\"\n    a: \"1\"\n    b: x\n"
            )
        );
    }

    #[test]
    fn a_new_annotations_mapping_before_the_first_metadata_key() {
        let text = host("  name: h0\n  labels:\n    rack: r1\n");
        let out = with_annotation(&text, 1, "inspect.metal3.io", "").unwrap();
        assert_eq!(
            out,
            host(
                "  annotations:\n    \"inspect.metal3.io\": \"\"\n  name: h0\n  labels:\n    rack: r1\n"
            )
        );
        // The first key's value a mapping: its key line is found above the value.
        let text = host("  labels:\n    rack: r1\n  name: h0\n");
        let out = with_annotation(&text, 1, "k", "v").unwrap();
        assert_eq!(
            out,
            host("  annotations:\n    \"k\": \"v\"\n  labels:\n    rack: r1\n  name: h0\n")
        );
    }

    #[test]
    fn into_empty_flow_annotations() {
        let text = host("  name: h0\n  annotations: {}\n");
        let out = with_annotation(&text, 1, "k", "v").unwrap();
        assert_eq!(out, host("  name: h0\n  annotations: {\"k\": \"v\"}\n"));
    }

    #[test]
    fn other_layouts_are_refused() {
        for metadata in [
            "  {name: h0}\n",
            "  name: h0\n  annotations: {a: b}\n",
            "  name: h0\n  annotations:\n",
        ] {
            let text = host(metadata).replace("metadata:\n  {", "metadata: {");
            let e = with_annotation(&text, 1, "k", "v").unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("cannot add annotation k to document 2"),
                "{metadata}: {e}"
            );
        }
    }
}
