//! One file's documents, typed: hosts, Secrets, firmware objects and everything else.

use super::kinds::{self, Doc, FirmwareObject, Typed};
use super::lock::FileLock;
use super::strict;
use super::yaml_file::{PathSeg, TextPos, YamlFile, YamlFileError};
use crate::diagnostic::{Diagnostic, Position};
use crate::objects::ResolvedSecret;
use bmh_api::{
    API_VERSION, BMC_EVENT_SUBSCRIPTION_KIND, BareMetalHost, DEFAULT_NAMESPACE, ObjectKey,
};
use serde_json::Value;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Whether the loaded host files will be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadMode {
    /// Lock each host file (see [`super::lock`]) before reading it, until the inventory is dropped.
    Write,
    /// Take no lock; [`HostFile::commit`](super::host_file::HostFile::commit) refuses to write.
    ReadOnly,
}

/// A document bmhctl does not handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherDocument {
    /// As the user gave it.
    pub file: PathBuf,
    pub doc: usize,
    pub api_version: String,
    /// Empty when the document is not a mapping.
    pub kind: String,
    /// `metadata.namespace`, defaulted to `default`.
    pub namespace: String,
    pub name: String,
    /// The document as JSON, as written.
    pub value: Value,
}

impl OtherDocument {
    pub(super) fn is_subscription(&self) -> bool {
        self.api_version == API_VERSION && self.kind == BMC_EVENT_SUBSCRIPTION_KIND
    }
}

pub(super) enum Item {
    /// `host` is `None` when the document could not be typed (an error was recorded).
    Host {
        doc: usize,
        key: ObjectKey,
        host: Option<Box<BareMetalHost>>,
    },
    Secret {
        doc: usize,
        key: ObjectKey,
        secret: Option<ResolvedSecret>,
    },
    /// `object` is `None` when the document could not be typed (an error was recorded).
    Firmware {
        doc: usize,
        key: ObjectKey,
        kind: &'static str,
        value: Value,
        object: Option<FirmwareObject>,
    },
    Other(OtherDocument),
}

#[derive(Default)]
pub(super) struct ParsedFile {
    pub(super) label: PathBuf,
    pub(super) real: PathBuf,
    /// `None` when the file has a syntax error.
    pub(super) yaml: Option<YamlFile>,
    pub(super) items: Vec<Item>,
    pub(super) errors: Vec<Diagnostic>,
    /// Problems that do not stop a run (see [`strict`]).
    pub(super) warnings: Vec<Diagnostic>,
    pub(super) lock: Option<FileLock>,
    /// The file's stamp taken before its text was read: a change after that is seen as one.
    pub(super) stamp: Option<super::host_file::Stamp>,
}

impl ParsedFile {
    pub(super) fn has_hosts(&self) -> bool {
        self.items.iter().any(|i| matches!(i, Item::Host { .. }))
    }

    /// Where the node at `path` of document `doc` is (the file's start after a syntax error).
    pub(super) fn position(&self, doc: usize, path: &[PathSeg]) -> Position {
        let p = self
            .yaml
            .as_ref()
            .map_or(TextPos { line: 1, column: 1 }, |y| y.position(doc, path));
        Position::new(&self.label, p.line, p.column)
    }
}

/// The string at `path` (a number or boolean as its text, to name the object), else empty.
fn str_at<'a>(v: &'a Value, path: &[&str]) -> Cow<'a, str> {
    match path.iter().try_fold(v, |cur, k| cur.get(k)) {
        Some(Value::String(s)) => Cow::Borrowed(s),
        Some(cur @ (Value::Number(_) | Value::Bool(_))) => Cow::Owned(cur.to_string()),
        _ => Cow::Borrowed(""),
    }
}

/// A document's apiVersion, kind and name as written, and its key (the namespace defaulted).
struct Names<'a> {
    api_version: Cow<'a, str>,
    kind: Cow<'a, str>,
    name: Cow<'a, str>,
    key: ObjectKey,
}

fn names(value: &Value) -> Names<'_> {
    let name = str_at(value, &["metadata", "name"]);
    let namespace = str_at(value, &["metadata", "namespace"]);
    let namespace = if namespace.is_empty() {
        DEFAULT_NAMESPACE
    } else {
        &namespace
    };
    Names {
        api_version: str_at(value, &["apiVersion"]),
        kind: str_at(value, &["kind"]),
        key: ObjectKey::new(namespace, name.as_ref()),
        name,
    }
}

pub(super) fn parse_file(
    label: &Path,
    real: &Path,
    text: String,
    mode: LoadMode,
    policy: crate::persist::InputPolicy,
) -> ParsedFile {
    let mut pf = ParsedFile {
        label: label.to_path_buf(),
        real: real.to_path_buf(),
        ..ParsedFile::default()
    };
    let yaml = match YamlFile::parse(text) {
        Ok(y) => y,
        Err(YamlFileError::Syntax {
            line,
            column,
            message,
        }) => {
            pf.errors
                .push(Diagnostic::new(message).at(Position::new(label, line, column)));
            return pf;
        }
        Err(e) => {
            pf.errors
                .push(Diagnostic::new(e.to_string()).in_file(label));
            return pf;
        }
    };
    // Lines before each document's text.
    let mut before = 0;
    for doc in 0..yaml.len() {
        let text = yaml.document_text(doc);
        let lines_before = before;
        before += text.bytes().filter(|&b| b == b'\n').count();
        let value: Value = match serde_saphyr::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                let (line, column, msg) = saphyr_error(&e);
                let (line, column) = if line == 0 {
                    (yaml.document_start_line(doc), 1)
                } else {
                    (lines_before + line, column)
                };
                pf.errors
                    .push(Diagnostic::new(msg).at(Position::new(label, line, column)));
                continue;
            }
        };
        if yaml.has_foreign_tag(doc) {
            pf.errors
                .extend(tag_errors(text, &value, label, lines_before));
        }
        if !value.is_null() {
            read_document(&mut pf, &yaml, doc, value, mode, policy);
        }
    }
    if mode == LoadMode::Write
        && pf.has_hosts()
        && let Some(p) = yaml.lone_carriage_return()
    {
        // Found now, not when the status is written: nothing is written for a refused file.
        pf.errors.push(
            Diagnostic::new(
                "a carriage return without a line feed: bmhctl writes the hosts' status into \
                 this file and cannot edit it (end lines with LF or CRLF)",
            )
            .at(Position::new(label, p.line, p.column)),
        );
    }
    pf.yaml = Some(yaml);
    pf
}

/// Types and checks document `doc` of the file through the row of its kind, and keeps it.
fn read_document(
    pf: &mut ParsedFile,
    yaml: &YamlFile,
    doc: usize,
    value: Value,
    mode: LoadMode,
    policy: crate::persist::InputPolicy,
) {
    let label = &pf.label;
    let at = |path: &[PathSeg]| {
        let p = yaml.position(doc, path);
        Position::new(label, p.line, p.column)
    };
    let Names {
        api_version,
        kind,
        name,
        key,
    } = names(&value);
    let other = |value: Value| {
        Item::Other(OtherDocument {
            file: label.to_path_buf(),
            doc,
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            namespace: key.namespace.clone(),
            name: name.to_string(),
            value,
        })
    };
    let Some((row, decode)) = kinds::find(&api_version, &kind).and_then(|k| Some((k, k.decode?)))
    else {
        pf.items.push(other(value.clone()));
        return;
    };
    if row.named && name.is_empty() {
        pf.errors.push(
            Diagnostic::new(format!("{} without metadata.name", row.kind))
                .at(at(&[PathSeg::Key("metadata")])),
        );
        return;
    }
    let typed = decode(&mut Doc {
        value: &value,
        key: &key,
        at: &at,
        policy,
        errors: &mut pf.errors,
        warnings: &mut pf.warnings,
    });
    if typed.is_ok() && row.status_written && mode == LoadMode::Write && !splices(yaml, doc) {
        let what = if row.kind == bmh_api::host::KIND {
            "hosts"
        } else {
            "objects"
        };
        pf.errors.push(
            Diagnostic::new(format!(
                "not a block-style YAML mapping (JSON or a flow mapping `{{...}}`); \
                 bmhctl can only write the status of {what} written in block style",
            ))
            .at(at(&[]))
            .object(row.kind, &key),
        );
    }
    let item = match typed {
        Typed::Host(host) => Item::Host { doc, key, host },
        Typed::Secret(secret) => Item::Secret { doc, key, secret },
        Typed::Companion(object) => Item::Firmware {
            doc,
            key,
            kind: row.kind,
            value,
            object,
        },
        Typed::Checked(_) => other(value.clone()),
    };
    pf.items.push(item);
}

/// One error per node of document `text` (after `lines_before` lines) with a foreign tag.
fn tag_errors(text: &str, value: &Value, label: &Path, lines_before: usize) -> Vec<Diagnostic> {
    let Names {
        kind, name, key, ..
    } = names(value);
    super::yaml_tags::foreign_tags(text)
        .into_iter()
        .map(|t| {
            let mut d = Diagnostic::new(t.message()).at(Position::new(
                label,
                lines_before + t.line,
                t.column,
            ));
            if !kind.is_empty() && !name.is_empty() {
                d = d.object(&kind, key.clone());
            }
            if !t.field.is_empty() {
                d = d.field(t.field);
            }
            d
        })
        .collect()
}

/// `value` with `metadata.namespace` filled in when absent (as an API server answers it).
pub(super) fn with_namespace(value: &Value, namespace: &str) -> Value {
    let mut value = value.clone();
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut)
        && meta
            .get("namespace")
            .is_none_or(|n| n.as_str().is_some_and(str::is_empty) || n.is_null())
    {
        meta.insert("namespace".into(), Value::String(namespace.to_string()));
    }
    value
}

/// Line (1-based, in the parsed text; 0 = unknown), column and message of a serde_saphyr error.
fn saphyr_error(e: &serde_saphyr::Error) -> (usize, usize, String) {
    let msg = strict::yaml_message(e).unwrap_or_else(|| e.without_snippet().to_string());
    match e.location() {
        Some(loc) if loc.line() > 0 => {
            let suffix = format!(" at line {}, column {}", loc.line(), loc.column());
            let msg = msg.strip_suffix(&suffix).unwrap_or(&msg).to_string();
            (loc.line() as usize, loc.column().max(1) as usize, msg)
        }
        _ => (0, 1, msg),
    }
}

/// Whether bmhctl can splice a status into document `doc` of `yaml` (a lone CR aside).
fn splices(yaml: &YamlFile, doc: usize) -> bool {
    yaml.lone_carriage_return().is_some() || is_block_mapping(yaml, doc)
}

/// Whether bmhctl can splice a status into document `doc` of `yaml`.
fn is_block_mapping(yaml: &YamlFile, doc: usize) -> bool {
    let text = yaml.document_text(doc);
    // The file's index already says whether the root is a block mapping.
    if yaml.has_block_status(doc).is_ok()
        && !text
            .bytes()
            .any(|b| matches!(b, b'?' | b'&' | b'\r' | b'%'))
    {
        return true;
    }
    probe(text)
}

/// Whether a status can be spliced into `doc_text` parsed on its own.
fn probe(doc_text: &str) -> bool {
    YamlFile::parse(doc_text.to_string())
        .is_ok_and(|mut y| y.len() == 1 && y.set_status(0, None).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shortcut answers as the probe of the text alone, for documents that pass and fail
    /// it in each way it can fail, in files that hold other documents too.
    #[test]
    fn the_block_mapping_shortcut_answers_as_the_probe() {
        let files = [
            "a: 1\nstatus:\n  x: 1\n---\nb: 2\n",
            "---\n{a: 1}\n---\n[1, 2]\n---\nplain\n---\n",
            "{\"apiVersion\": \"v1\"}\n---\nkind: X\n",
            "a: 1\n? b\n: 2\n---\nc: 3\n",
            "a: 1\nstatus: &s\n  x: 1\nother: *s\n---\nd: 4\n",
            "a: &v 1\nb: *v\n",
            "a: 1\r\nb: 2\r\n---\r\nc: 3\r\n",
            "a: 1\rb: 2\n",
            "a: 1\n...\n%YAML 1.2\n---\nb: 2\n",
            "url: http://x.example/?a=b\n# 100%\n---\nc: 1\n",
            "# only a comment\n",
            "a: 1\n...\n# after the end\n",
        ];
        let mut checked = 0;
        for text in files {
            let Ok(yaml) = YamlFile::parse(text.to_string()) else {
                continue;
            };
            for doc in 0..yaml.len() {
                assert_eq!(
                    is_block_mapping(&yaml, doc),
                    probe(yaml.document_text(doc)),
                    "document {doc} of {text:?}"
                );
                checked += 1;
            }
        }
        assert!(checked >= 15, "{checked} documents checked");
        // Both answers occur.
        let yaml = YamlFile::parse("a: 1\n---\n{b: 2}\n".to_string()).unwrap();
        assert!(is_block_mapping(&yaml, 0));
        assert!(!is_block_mapping(&yaml, 1));
    }
}
