//! The status splice (`YamlFile`) on arbitrary text. For any text the parser accepts:
//!
//! * with no edit, `render` gives back the text, and the documents' texts cover it;
//! * in every document whose root is a block mapping, setting a status (serialized as bmhctl
//!   serializes a host's status) gives a file that parses again, with the same documents, the
//!   other documents' bytes untouched, and this document's value equal to the original's with
//!   its `status` replaced; setting it twice changes nothing; removing it gives the original
//!   value without `status`.
//!
//! The status set is chosen by the input's length among a few shapes (empty, block, nested
//! with a list, flow-looking strings).

#![no_main]

use bmhctl::persist::files::yaml_file::YamlFile;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

fn statuses() -> [Value; 4] {
    [
        json!({}),
        json!({"provisioning": {"state": "ready", "ID": "abc"}, "poweredOn": true}),
        json!({"operationalStatus": "OK", "errorCount": 0, "list": ["a", {"b": null}], "s": "x: y # z"}),
        json!({"text": "{not flow}", "multi": "line1\nline2\n", "empty": ""}),
    ]
}

fn parse_doc(text: &str) -> Option<Value> {
    serde_saphyr::from_str::<Value>(text).ok()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(f) = YamlFile::parse(text.to_string()) else {
        return;
    };
    assert!(f.len() >= 1);
    assert_eq!(f.render(), text);
    assert_eq!(f.source_text(), text);
    let joined: String = (0..f.len()).map(|d| f.document_text(d)).collect();
    assert_eq!(joined, text);

    let status = &statuses()[text.len() % 4];
    let status_yaml = serde_saphyr::to_string(status).expect("serialize the status");
    for d in 0..f.len() {
        // Only documents that are mappings for the deserializer too, without a key the
        // comparison below cannot see through (merge keys).
        let Some(Value::Object(orig)) = parse_doc(f.document_text(d)) else {
            continue;
        };
        if orig.contains_key("<<") {
            continue;
        }
        let mut g = YamlFile::parse(text.to_string()).expect("parses twice");
        // Refused: explicit top-level keys (`? key`), a lone CR in the file.
        if g.set_status(d, Some(&status_yaml)).is_err() {
            continue;
        }
        let out = g.render();
        let h = YamlFile::parse(out.clone())
            .unwrap_or_else(|e| panic!("spliced file does not parse: {e}\n{out}"));
        assert_eq!(h.len(), f.len(), "document count changed:\n{out}");
        for k in (0..f.len()).filter(|&k| k != d) {
            assert_eq!(
                h.document_text(k),
                f.document_text(k),
                "document {k} changed"
            );
        }
        let mut expected = orig.clone();
        expected.insert("status".into(), status.clone());
        assert_eq!(
            parse_doc(h.document_text(d)),
            Some(Value::Object(expected)),
            "status not spliced:\n{out}"
        );
        g.set_status(d, Some(&status_yaml)).unwrap();
        assert_eq!(g.render(), out, "not idempotent");

        let mut g = YamlFile::parse(text.to_string()).unwrap();
        g.set_status(d, None).unwrap();
        let out = g.render();
        let h = YamlFile::parse(out.clone())
            .unwrap_or_else(|e| panic!("file without status does not parse: {e}\n{out}"));
        let mut expected = orig.clone();
        expected.shift_remove("status");
        if expected.is_empty() {
            // Nothing left: the document reads back as null, or as no document when nothing
            // but comments is left (after a `...` without `---`, the document is gone and
            // later ones move up an index; a host document always keeps other keys).
            continue;
        }
        assert_eq!(h.len(), f.len(), "document count changed:\n{out}");
        assert_eq!(
            parse_doc(h.document_text(d)),
            Some(Value::Object(expected)),
            "status not removed:\n{out}"
        );
    }
});
