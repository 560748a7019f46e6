//! The status splice (`YamlFile::set_status`) on generated files.
//!
//! A file is built from pieces (documents of block mappings, keys at column 0 or 2, nested
//! mappings, sequences, flow collections, block scalars, comments at every indent, blank lines,
//! `---`/`...` separators, LF or CRLF, a last line with or without its newline, an existing
//! `status` entry or none), and the generator records where, by `set_status`'s contract, the
//! status entry of each document lies: from its key's line to after the line of its value's last
//! content and the comment lines deeper than the top-level keys that follow it; or, without one,
//! where it is inserted: after the document's last content and such comments, before trailing
//! top-level comments, blank lines, `...` and the next `---`. Then:
//!
//! * removing the status gives exactly the file without that range;
//! * replacing or inserting one keeps every byte before and after that range;
//! * the result parses, and the document reads back as before with the new `status`;
//! * splicing the same status again, in the same file or in the re-parsed result, changes
//!   nothing.

use bmhctl::persist::files::yaml_file::{YamlFile, YamlFileError};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Value};

/// A line between two top-level entries (or after the last one).
#[derive(Debug, Clone)]
enum Gap {
    Blank,
    /// A comment indented at most as deep as the top-level keys: not part of the entry before.
    Shallow(usize),
    /// A comment indented deeper than the top-level keys (by 1 to 4): part of the entry before.
    Deeper(usize),
}

#[derive(Debug, Clone)]
struct Entry {
    key: String,
    /// The value's text with `{i}` for the top-level key indent and `{c}` for the child indent;
    /// lines separated by `\n`, starting right after `key:`.
    value: String,
    gap: Vec<Gap>,
}

#[derive(Debug, Clone)]
struct Doc {
    /// Block mapping root; `false`: a sequence document (`set_status` must refuse it).
    mapping: bool,
    indent: usize,
    child: usize,
    lead: Vec<String>,
    entries: Vec<Entry>,
    /// Index into `entries` of the `status` entry, if any.
    status: Option<usize>,
    explicit_end: bool,
}

#[derive(Debug, Clone)]
struct File {
    docs: Vec<Doc>,
    leading_marker: bool,
    crlf: bool,
    strip_final_newline: bool,
}

/// A generated file and, per document, the byte range of its status entry (empty at the
/// insertion point when it has none).
struct Built {
    text: String,
    ranges: Vec<(usize, usize)>,
}

fn comment_text() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "# c",
        "#",
        "# status: {x: 1}",
        "# ---",
        "#: not a key",
        "# ünïcødé ✓",
        "## - item",
    ])
    .prop_map(str::to_string)
}

fn gap() -> impl Strategy<Value = Gap> {
    prop_oneof![
        3 => Just(Gap::Blank),
        2 => (0usize..3).prop_map(Gap::Shallow),
        2 => (1usize..5).prop_map(Gap::Deeper),
    ]
}

/// Scalars that are plain, quoted, or commented on their line.
fn scalar() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        " value",
        " 42",
        " true",
        " ~",
        "",
        " \"quoted # not a comment\"",
        " 'single: quoted'",
        " plain # comment",
        " \"ü日本\"",
        " http://example.com:8080/a?b=c#frag",
    ])
    .prop_map(str::to_string)
}

/// A value's text (see [`Entry::value`]). Nested parts use `{c}` (the child indent) and
/// `{c2}` (two deeper).
fn value() -> impl Strategy<Value = String> {
    let flow = prop::sample::select(vec![
        " {}",
        " []",
        " {x: 1, y: [a, b]}",
        " [1, \"two\", {three: 3}]  # flow",
        " {a: 1,\n{c}b: [x,\n{c2}y]}",
    ])
    .prop_map(str::to_string);
    let nested_line = prop_oneof![
        prop::sample::select(vec![
            "{c}x: 1",
            "{c}y: \"two\"",
            "{c}z:\n{c2}deep: true",
            "{c}list:\n{c}- a\n{c}- b",
            "{c}list2:\n{c2}- {k: v}\n{c2}- [1, 2]",
            "{c}lit: |\n{c2}line one\n\n{c2}  indented # not a comment",
            "{c}fold: >-\n{c2}folded\n{c2}text",
            "{c}empty:",
            "{c}anchor: &a {q: 1}",
            "{c}alias: *a",
        ])
        .prop_map(str::to_string),
        // Comments inside the value, at any indent.
        (0usize..6, comment_text()).prop_map(|(n, c)| format!("{}{c}", " ".repeat(n))),
        Just(String::new()),
    ];
    let block_map = prop::collection::vec(nested_line, 1..5).prop_map(|lines| {
        // A value's first line must be content (a comment or blank line is fine after `key:`
        // but keep one key first so that the mapping is not empty). Keys are made unique.
        let mut out = String::from("\n{c}first: 0");
        for (n, l) in lines.iter().enumerate() {
            let l = l
                .replace("{c}x:", &format!("{{c}}x{n}:"))
                .replace("{c}y:", &format!("{{c}}y{n}:"))
                .replace("{c}z:", &format!("{{c}}z{n}:"))
                .replace("{c}list:", &format!("{{c}}list{n}:"))
                .replace("{c}list2:", &format!("{{c}}list2_{n}:"))
                .replace("{c}lit:", &format!("{{c}}lit{n}:"))
                .replace("{c}fold:", &format!("{{c}}fold{n}:"))
                .replace("{c}empty:", &format!("{{c}}empty{n}:"))
                .replace("{c}anchor:", &format!("{{c}}anchor{n}:"))
                .replace("{c}alias:", &format!("{{c}}alias{n}:"));
            // An alias needs its anchor first.
            if l.contains("*a") && !out.contains("&a") {
                continue;
            }
            out.push('\n');
            out.push_str(&l);
        }
        // The value ends with content: blank lines and comments after it are the gap's.
        out.push_str("\n{c}end: 1");
        out
    });
    let block_seq = prop::sample::select(vec![
        "\n{i}- a\n{i}- b: 1\n{i}  c: 2",
        "\n{c}- 1\n{c}-\n{c2}nested: x",
        "\n{c}- |\n{c2}text\n{c}- last",
    ])
    .prop_map(str::to_string);
    let block_scalar = prop::sample::select(vec![
        " |\n{c}one\n{c}two",
        " >\n{c}folded\n\n{c}para",
        " |-\n{c}  kept indent",
        " |+\n{c}kept",
    ])
    .prop_map(str::to_string);
    prop_oneof![
        3 => scalar(),
        2 => flow,
        4 => block_map,
        1 => block_seq,
        1 => block_scalar,
    ]
}

fn status_key() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["status", "\"status\"", "'status'"]).prop_map(str::to_string)
}

const KEYS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "spec",
    "a",
    "b_c",
    "x-y",
    "\"quoted key\"",
    "'k: v'",
    "statusNot",
];

fn doc() -> impl Strategy<Value = Doc> {
    let entries =
        prop::collection::vec((value(), prop::collection::vec(gap(), 0..3)), 1..KEYS.len());
    (
        prop_oneof![3 => Just(0usize), 1 => Just(2usize)],
        prop_oneof![3 => Just(2usize), 1 => Just(4usize)],
        prop::collection::vec(prop_oneof![Just(String::new()), comment_text()], 0..3),
        entries,
        prop::option::of((any::<Index>(), status_key())),
        any::<bool>(),
        prop::bool::weighted(0.1),
    )
        .prop_map(
            |(indent, step, lead, entries, status, explicit_end, sequence)| {
                let mut entries: Vec<Entry> = entries
                    .into_iter()
                    .enumerate()
                    .map(|(n, (value, gap))| Entry {
                        key: KEYS[n].to_string(),
                        value,
                        gap,
                    })
                    .collect();
                let status = status.map(|(at, key)| {
                    let at = at.index(entries.len() + 1);
                    entries.insert(
                        at,
                        Entry {
                            key,
                            value: String::new(),
                            gap: Vec::new(),
                        },
                    );
                    at
                });
                Doc {
                    mapping: !sequence,
                    indent,
                    child: indent + step,
                    lead,
                    entries,
                    status,
                    explicit_end,
                }
            },
        )
        .prop_flat_map(|doc| {
            // The existing status's value and the gap after it.
            (
                Just(doc),
                prop_oneof![value(), Just(" {}".to_string()), Just(String::new())],
                prop::collection::vec(gap(), 0..4),
            )
        })
        .prop_map(|(mut doc, value, gap)| {
            if let Some(at) = doc.status {
                doc.entries[at].value = value;
                doc.entries[at].gap = gap;
            }
            doc
        })
}

fn file() -> impl Strategy<Value = File> {
    (
        prop::collection::vec(doc(), 1..4),
        any::<bool>(),
        prop::bool::weighted(0.25),
        prop::bool::weighted(0.25),
    )
        .prop_map(|(docs, leading_marker, crlf, strip)| File {
            docs,
            leading_marker,
            crlf,
            strip_final_newline: strip,
        })
}

fn build(f: &File) -> Built {
    let nl = if f.crlf { "\r\n" } else { "\n" };
    let mut text = String::new();
    let mut ranges = Vec::new();
    for (n, d) in f.docs.iter().enumerate() {
        if n > 0 || f.leading_marker {
            text.push_str("---");
            text.push_str(nl);
        }
        for l in &d.lead {
            text.push_str(l);
            text.push_str(nl);
        }
        if !d.mapping {
            text.push_str(&format!("- 1{nl}- two{nl}"));
            ranges.push((text.len(), text.len()));
        } else {
            let i = " ".repeat(d.indent);
            let c = " ".repeat(d.child);
            let c2 = " ".repeat(d.child + 2);
            let mut body_end = 0;
            let mut status_start = None;
            // Whether the previous entry's value is a keep-chomping scalar (`|+`) running on
            // to this entry: the blank lines after it are its content.
            let mut after_keep = false;
            for (k, e) in d.entries.iter().enumerate() {
                if d.status == Some(k) {
                    status_start = Some(text.len());
                }
                text.push_str(&i);
                text.push_str(&e.key);
                text.push(':');
                let value = e
                    .value
                    .replace("{c2}", &c2)
                    .replace("{c}", &c)
                    .replace("{i}", &i)
                    .replace('\n', nl);
                text.push_str(&value);
                text.push_str(nl);
                body_end = text.len();
                let mut in_keep = e.value.starts_with(" |+");
                // The blank lines right after the last content of the entry, and whether a
                // comment came after them.
                let (mut blank_after, mut counting) = (0, true);
                for g in &e.gap {
                    match g {
                        Gap::Blank if counting => blank_after += nl.len(),
                        Gap::Blank => {}
                        Gap::Shallow(_) => in_keep = false,
                        // As deep as the scalar's lines, a comment is one of them.
                        Gap::Deeper(n) => in_keep &= d.indent + n >= d.child,
                    }
                    match g {
                        Gap::Blank => {}
                        Gap::Shallow(n) => {
                            text.push_str(&" ".repeat((*n).min(d.indent)));
                            text.push_str("# shallow");
                        }
                        Gap::Deeper(n) => {
                            text.push_str(&" ".repeat(d.indent + n));
                            text.push_str("# deeper");
                        }
                    }
                    text.push_str(nl);
                    if matches!(g, Gap::Deeper(_)) || in_keep {
                        body_end = text.len();
                        (blank_after, counting) = (0, true);
                    } else if !matches!(g, Gap::Blank) {
                        counting = false;
                    }
                }
                if d.status == Some(k) {
                    // Removed right after a `|+` scalar, the status takes the blank lines
                    // after it, which would become the scalar's content.
                    let extra = if after_keep { blank_after } else { 0 };
                    ranges.push((status_start.unwrap(), body_end + extra));
                }
                after_keep = in_keep;
            }
            if d.status.is_none() {
                ranges.push((body_end, body_end));
            }
        }
        if d.explicit_end {
            text.push_str("...");
            text.push_str(nl);
        }
    }
    if f.strip_final_newline && text.ends_with(nl) {
        text.truncate(text.len() - nl.len());
        let len = text.len();
        for r in &mut ranges {
            *r = (r.0.min(len), r.1.min(len));
        }
    }
    Built { text, ranges }
}

/// A generated status: what bmhctl writes is the serialization of a mapping.
fn status_value() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        "[a-zA-Z0-9 ]{0,8}",
        "[a-z0-9 :#'\"{}\\[\\],&*!|>%@`?-]{0,10}",
        // Multi-line strings, with leading spaces and a trailing newline at times.
        "( ?[a-z]{0,5}\n){1,3}[a-z]{0,3}",
        Just("ünïcødé ✓ 日本".to_string()),
        Just("null".to_string()),
        Just("123".to_string()),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        text.prop_map(Value::String),
    ];
    let tree = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z][a-zA-Z0-9]{0,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    prop::collection::btree_map("[a-zA-Z][a-zA-Z0-9]{0,8}", tree, 0..5)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// `s` without its leading lines of only spaces and tabs.
fn without_leading_blank_lines(mut s: &str) -> &str {
    loop {
        let line = s.split_inclusive('\n').next().unwrap_or("");
        if line.is_empty() || !line.trim().is_empty() {
            return s;
        }
        s = &s[line.len()..];
    }
}

fn doc_value(text: &str) -> Value {
    serde_saphyr::from_str::<Value>(text)
        .unwrap_or_else(|e| panic!("document does not parse: {e}\n{text}"))
}

fn with_status(mut v: Value, status: Option<&Value>) -> Value {
    let m: &mut Map<String, Value> = v.as_object_mut().expect("a mapping document");
    match status {
        Some(s) => {
            m.insert("status".into(), s.clone());
        }
        None => {
            m.shift_remove("status");
        }
    }
    v
}

/// The checks on one generated file, document `doc`, status `status`.
fn check(built: &Built, f: &File, doc: usize, status: &Value) -> Result<(), TestCaseError> {
    let text = &built.text;
    let (s, e) = built.ranges[doc];
    let file = YamlFile::parse(text.clone())
        .map_err(|err| TestCaseError::fail(format!("generated file rejected: {err}")))?;
    prop_assert_eq!(file.len(), f.docs.len(), "document count");
    prop_assert_eq!(file.render(), text.as_str());

    let status_yaml = serde_saphyr::to_string(status).unwrap();
    let mut edited = YamlFile::parse(text.clone()).unwrap();
    if !f.docs[doc].mapping {
        let r = edited.set_status(doc, Some(&status_yaml));
        let refused = matches!(r, Err(YamlFileError::NotBlockMapping { .. }));
        prop_assert!(refused, "set_status on a sequence document: {:?}", r);
        prop_assert!(edited.set_status(doc, None).is_err());
        prop_assert_eq!(edited.render(), text.as_str());
        return Ok(());
    }
    if text[s..e].contains("&a") {
        // A status that defines an anchor is not rewritten: an alias elsewhere would lose it.
        let r = edited.set_status(doc, Some(&status_yaml));
        let refused = matches!(r, Err(YamlFileError::AnchorInStatus { .. }));
        prop_assert!(refused, "set_status on a status with an anchor: {:?}", r);
        prop_assert!(edited.set_status(doc, None).is_err());
        prop_assert_eq!(edited.render(), text.as_str());
        return Ok(());
    }
    let original = doc_value(file.document_text(doc));

    // Removing: exactly the range goes.
    edited.set_status(doc, None).unwrap();
    let removed = edited.render();
    prop_assert_eq!(&removed, &format!("{}{}", &text[..s], &text[e..]));
    let reparsed = YamlFile::parse(removed.clone())
        .map_err(|err| TestCaseError::fail(format!("{err}\n{removed}")))?;
    let got = doc_value(reparsed.document_text(doc));
    let want = with_status(original.clone(), None);
    // A mapping left without keys reads back as an empty document.
    if !(want.as_object().is_some_and(Map::is_empty) && got.is_null()) {
        prop_assert_eq!(got, want);
    }

    // Replacing or inserting: every byte outside the range stays.
    edited.set_status(doc, Some(&status_yaml)).unwrap();
    let out = edited.render();
    prop_assert!(
        out.starts_with(&text[..s]),
        "bytes before the status changed"
    );
    // A status ending in a keep-chomping scalar (`|+`) takes the blank lines after it, which
    // would otherwise become its content.
    let after = if status_yaml.contains("|+") || status_yaml.contains(">+") {
        without_leading_blank_lines(&text[e..])
    } else {
        &text[e..]
    };
    prop_assert!(out.ends_with(after), "bytes after the status changed");
    prop_assert!(out.len() >= s + after.len());
    let reparsed =
        YamlFile::parse(out.clone()).map_err(|err| TestCaseError::fail(format!("{err}\n{out}")))?;
    prop_assert_eq!(reparsed.len(), file.len());
    prop_assert_eq!(
        doc_value(reparsed.document_text(doc)),
        with_status(original, Some(status)),
        "read back:\n{}",
        out
    );

    // Idempotent: the same status again, here and in the written file.
    edited.set_status(doc, Some(&status_yaml)).unwrap();
    prop_assert_eq!(edited.render(), out.as_str());
    let mut again = reparsed;
    again.set_status(doc, Some(&status_yaml)).unwrap();
    prop_assert_eq!(
        again.render(),
        out.as_str(),
        "splicing the written file again"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::cases(512), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn splice_preserves_bytes_and_round_trips(
        f in file(),
        doc in any::<Index>(),
        status in status_value(),
    ) {
        let built = build(&f);
        let doc = doc.index(f.docs.len());
        check(&built, &f, doc, &status)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::cases(256), failure_persistence: None, ..ProptestConfig::default() })]

    /// Any text: the parser either refuses it or indexes it so that, with no edit, the file
    /// renders as it was and its documents' texts cover it; splicing never panics.
    #[test]
    fn any_text_renders_unchanged(
        pieces in prop::collection::vec(
            prop_oneof![
                "[ a-z:#\\-\\[\\]{},'\"|>&*!?.\t]{0,12}",
                Just("\n".to_string()),
                Just("\r\n".to_string()),
                Just("---\n".to_string()),
                Just("...\n".to_string()),
                Just("status:".to_string()),
                Just("  ".to_string()),
            ],
            0..24,
        ),
        status in status_value(),
    ) {
        let text: String = pieces.concat();
        if let Ok(f) = YamlFile::parse(text.clone()) {
            prop_assert_eq!(f.render(), text.as_str());
            let joined: String = (0..f.len()).map(|d| f.document_text(d)).collect();
            prop_assert_eq!(joined, text.clone());
            let yaml = serde_saphyr::to_string(&status).unwrap();
            for d in 0..f.len() {
                let mut g = YamlFile::parse(text.clone()).unwrap();
                if g.set_status(d, Some(&yaml)).is_ok() {
                    let _ = g.render();
                    g.set_status(d, None).unwrap();
                    let _ = g.render();
                }
            }
        }
    }
}
