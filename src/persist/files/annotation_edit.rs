//! Adding one annotation to a host in the user's file, leaving every other byte as it is.

use super::yaml_file::{PathSeg, YamlFile};
use crate::error::Error;
use serde_json::Value;

/// `text` (a whole file) with annotation `key: value` set on document `doc` (without `key`).
pub fn with_annotation(text: &str, doc: usize, key: &str, value: &str) -> Result<String, Error> {
    let refused = || {
        Error::invalid(format!(
            "cannot add annotation {key} to document {} of this file: its metadata is not \
             laid out as bmhctl can edit; add `{key}: {}` by hand",
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
    let edited = insert_entry(&yaml, doc, &before, &entry).ok_or_else(refused)?;
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

/// The file's text with `entry` inserted as document `doc`'s layout takes it, if handled.
fn insert_entry(yaml: &YamlFile, doc: usize, before: &Value, entry: &str) -> Option<String> {
    let text = yaml.source_text();
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let meta = before.get("metadata")?.as_object()?;
    let flow = |path: &[&str]| flow_brace(yaml, doc, path);
    match meta.get("annotations") {
        Some(Value::Object(a)) => match flow(&["metadata", "annotations"]) {
            Some(at) => Some(first_in_flow(text, at, entry, !a.is_empty())),
            None => {
                let first = a.keys().next()?;
                let line = key_line(yaml, doc, &["metadata", "annotations", first], first)?;
                let indent = " ".repeat(indentation(text, line));
                Some(insert(
                    text,
                    line_offset(text, line)?,
                    &format!("{indent}{entry}{nl}"),
                ))
            }
        },
        // `annotations:` with nothing after it: the entry as a flow mapping on that line.
        Some(Value::Null) => {
            let line = key_line(yaml, doc, &["metadata", "annotations"], "annotations")?;
            let at = line_offset(text, line)?;
            let colon = at + text[at..].find(':')? + 1;
            let rest = text[colon..].split(['\n', '\r']).next().unwrap_or("");
            let rest = rest.trim_start_matches([' ', '\t']);
            (rest.is_empty() || rest.starts_with('#'))
                .then(|| insert(text, colon, &format!(" {{{entry}}}")))
        }
        None => match flow(&["metadata"]) {
            Some(at) => {
                let entry = format!("annotations: {{{entry}}}");
                Some(first_in_flow(text, at, &entry, !meta.is_empty()))
            }
            None => {
                let first = meta.keys().next()?;
                let line = key_line(yaml, doc, &["metadata", first], first)?;
                let indent = " ".repeat(indentation(text, line));
                let new = format!("{indent}annotations:{nl}{indent}  {entry}{nl}");
                Some(insert(text, line_offset(text, line)?, &new))
            }
        },
        Some(_) => None,
    }
}

/// The byte offset just after the `{` opening the value at `path`, when a flow mapping.
pub(super) fn flow_brace(yaml: &YamlFile, doc: usize, path: &[&str]) -> Option<usize> {
    let segs: Vec<PathSeg> = path.iter().map(|k| PathSeg::Key(k)).collect();
    let pos = yaml.locate(doc, &segs)?;
    let text = yaml.source_text();
    let line = line_offset(text, pos.line)?;
    let (i, c) = text[line..].char_indices().nth(pos.column - 1)?;
    (c == '{').then_some(line + i + 1)
}

/// The 1-based line of the key whose value `path` reaches: the nearest line at or above the
/// value's starting with the key (plain or quoted) and a colon.
pub(super) fn key_line(yaml: &YamlFile, doc: usize, path: &[&str], key: &str) -> Option<usize> {
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
pub(super) fn line_offset(text: &str, line: usize) -> Option<usize> {
    let starts = text.match_indices('\n').map(|(i, _)| i + 1);
    std::iter::once(0).chain(starts).nth(line - 1)
}

pub(super) fn indentation(text: &str, line: usize) -> usize {
    line_offset(text, line)
        .map(|at| text[at..].len() - text[at..].trim_start_matches(' ').len())
        .unwrap_or(0)
}

/// `entry` made the first entry of the flow mapping whose `{` ends at `at`, spaced as it is.
pub(super) fn first_in_flow(text: &str, at: usize, entry: &str, more: bool) -> String {
    let comma = if more { "," } else { "" };
    if text[at..].starts_with(' ') {
        insert(text, at, &format!(" {entry}{comma}"))
    } else {
        let at_line_end = text[at..].starts_with(['\n', '\r']);
        let space = if more && !at_line_end { " " } else { "" };
        insert(text, at, &format!("{entry}{comma}{space}"))
    }
}

pub(super) fn insert(text: &str, at: usize, insert: &str) -> String {
    format!("{}{insert}{}", &text[..at], &text[at..])
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "# the BMC\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n";

    fn host(metadata: &str) -> String {
        host_with(&format!("metadata:\n{metadata}"))
    }

    /// A host whose `metadata` entry is written as given, whole.
    fn host_with(metadata: &str) -> String {
        format!(
            "{SECRET}---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\n{metadata}spec:\n  online: true # keep\n"
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
    fn into_flow_metadata_and_flow_annotations() {
        // (metadata as written, as expected after adding k: v)
        let cases = [
            (
                "metadata: {name: h0, namespace: ns}\n",
                "metadata: {annotations: {\"k\": \"v\"}, name: h0, namespace: ns}\n",
            ),
            (
                "metadata: {\n    name: h0,\n    labels: {rack: r1}\n  }\n",
                "metadata: {annotations: {\"k\": \"v\"},\n    name: h0,\n    labels: {rack: r1}\n  }\n",
            ),
            (
                "metadata: {name: h0, annotations: {a: b}}\n",
                "metadata: {name: h0, annotations: {\"k\": \"v\", a: b}}\n",
            ),
            (
                "metadata:\n  name: h0\n  annotations: { a: b }  # mine\n",
                "metadata:\n  name: h0\n  annotations: { \"k\": \"v\", a: b }  # mine\n",
            ),
            (
                "metadata:\n  name: h0\n  annotations:  # none yet\n",
                "metadata:\n  name: h0\n  annotations: {\"k\": \"v\"}  # none yet\n",
            ),
            (
                "metadata: {}\n",
                "metadata: {annotations: {\"k\": \"v\"}}\n",
            ),
        ];
        for (metadata, expected) in cases {
            let text = host_with(metadata);
            let out =
                with_annotation(&text, 1, "k", "v").unwrap_or_else(|e| panic!("{metadata}: {e}"));
            assert_eq!(out, host_with(expected), "{metadata}");
        }
    }

    #[test]
    fn only_the_edited_document_changes_in_a_mixed_file() {
        let flow = "---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata: {name: h1}\nspec: {online: true}\n";
        let text = format!("{}{flow}", host("  name: h0\n"));
        let out = with_annotation(&text, 2, "k", "v").unwrap();
        let edited = flow.replace("{name: h1}", "{annotations: {\"k\": \"v\"}, name: h1}");
        assert_eq!(out, format!("{}{edited}", host("  name: h0\n")));
        let out = with_annotation(&text, 1, "k", "v").unwrap();
        assert_eq!(
            out,
            format!(
                "{}{flow}",
                host("  annotations:\n    \"k\": \"v\"\n  name: h0\n")
            )
        );
        // CRLF line breaks are kept in a block edit.
        let crlf = host("  name: h0\n").replace('\n', "\r\n");
        let out = with_annotation(&crlf, 1, "k", "v").unwrap();
        assert_eq!(
            out,
            host("  annotations:\n    \"k\": \"v\"\n  name: h0\n").replace('\n', "\r\n")
        );
    }

    #[test]
    fn other_layouts_are_refused() {
        for metadata in [
            "metadata: {name: h0, annotations: ~}\n",
            "metadata:\n  name: h0\n  annotations: [a]\n",
            "metadata:\n  name: h0\n  annotations: &a\n    x: y\n  labels: *a\n",
            "metadata: x\n",
        ] {
            let text = host_with(metadata);
            let e = with_annotation(&text, 1, "k", "v").unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("cannot add annotation k to document 2"),
                "{metadata}: {e}"
            );
        }
    }
}
