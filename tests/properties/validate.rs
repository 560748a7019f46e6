//! The validator (schema, webhook create and update rules, BMC access) on arbitrary hosts: the
//! BareMetalHosts of the validation cases (tests/data/bmh-validation-cases.yaml), with leaves
//! replaced by other values of the same JSON type and keys removed. For every mutant that
//! still deserializes as a BareMetalHost, nothing panics and:
//!
//! * an update that changes nothing adds nothing to the create rules' verdict;
//! * every error has a message, and the aggregate message shows each;
//! * validating is deterministic.

use bmh_api::BareMetalHost;
use bmhctl::objects::ObjectMap;
use bmhctl::validate::{aggregate, bmc_access, validate, validate_create, validate_schema};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;
use std::sync::OnceLock;

/// Every object of the validation cases that has a `spec` (with `spec.online` defaulted).
fn bases() -> &'static [Value] {
    static BASES: OnceLock<Vec<Value>> = OnceLock::new();
    BASES.get_or_init(|| {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/bmh-validation-cases.yaml"
        ))
        .unwrap();
        let all: Value = serde_saphyr::from_str(&text).unwrap();
        let mut out = Vec::new();
        collect(&all, &mut out);
        assert!(out.len() > 50, "only {} hosts in the cases", out.len());
        out
    })
}

fn collect(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Object(spec)) = m.get("spec") {
                // What a case omits has its zero value; `spec.online` is required.
                let mut host = v.clone();
                if !spec.contains_key("online") {
                    host["spec"]["online"] = Value::Bool(false);
                }
                if serde_json::from_value::<BareMetalHost>(host.clone()).is_ok() {
                    out.push(host);
                }
            }
            m.values().for_each(|v| collect(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| collect(v, out)),
        _ => {}
    }
}

/// Paths of every node below the root.
fn paths(v: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let children: Vec<(String, &Value)> = match v {
        Value::Object(m) => m.iter().map(|(k, v)| (k.clone(), v)).collect(),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .collect(),
        _ => return,
    };
    for (k, c) in children {
        prefix.push(k);
        out.push(prefix.clone());
        paths(c, prefix, out);
        prefix.pop();
    }
}

fn node<'a>(v: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, k| match v {
        Value::Object(m) => m.get_mut(k),
        Value::Array(a) => a.get_mut(k.parse::<usize>().ok()?),
        _ => None,
    })
}

#[derive(Debug, Clone)]
enum Edit {
    /// Replace the node with a value of its JSON type.
    Replace(Index, String, i64, bool),
    /// Remove the node from its mapping or sequence.
    Remove(Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    let text = prop_oneof![
        "[a-zA-Z0-9:/.\\[\\]%@?#+_=-]{0,24}",
        prop::sample::select(vec![
            "",
            "redfish://",
            "redfish-virtualmedia+https://[fe80::1%25eth0]:8000/redfish/v1/Systems/1",
            "ipmi://[::1",
            "idrac-virtualmedia://h/redfish/v1/Systems/System.Embedded.1",
            "fake-hardware://x",
            "libvirt://192.168.122.1:6233/?abc=def",
            "00:11:22:33:44:55",
            "00-11-22-33-44-55-66-77",
            "UEFI",
            "UEFISecureBoot",
            "legacy",
            "disabled",
            "metadata",
            "fast",
            "hard",
            "soft",
            "provisioned",
            "externally provisioned",
            "-1",
            "1e400",
            "é日本",
            "\u{0}",
        ])
        .prop_map(str::to_string),
        Just("a".repeat(300)),
    ];
    let number = prop_oneof![
        any::<i64>(),
        Just(0i64),
        Just(-1),
        Just(i64::MAX),
        Just(i64::MIN),
    ];
    prop_oneof![
        4 => (any::<Index>(), text, number, any::<bool>())
            .prop_map(|(i, s, n, b)| Edit::Replace(i, s, n, b)),
        1 => any::<Index>().prop_map(Edit::Remove),
    ]
}

fn apply(host: &mut Value, e: &Edit) {
    let mut all = Vec::new();
    paths(host, &mut Vec::new(), &mut all);
    if all.is_empty() {
        return;
    }
    match e {
        Edit::Replace(i, s, n, b) => {
            let path = &all[i.index(all.len())];
            let v = node(host, path).unwrap();
            *v = match v {
                Value::String(_) => Value::String(s.clone()),
                Value::Number(x) if x.is_f64() => serde_json::json!((*n as f64) / 7.0),
                Value::Number(x) if x.is_u64() => Value::from(n.unsigned_abs()),
                Value::Number(_) => Value::from(*n),
                Value::Bool(_) => Value::Bool(*b),
                // A collection or null: leave the structure.
                _ => return,
            };
        }
        Edit::Remove(i) => {
            let path = &all[i.index(all.len())];
            let (last, parent) = path.split_last().unwrap();
            match node(host, parent).unwrap() {
                Value::Object(m) => {
                    m.shift_remove(last);
                }
                Value::Array(a) => {
                    a.remove(last.parse::<usize>().unwrap());
                }
                _ => unreachable!(),
            }
        }
    }
}

fn host(v: &Value) -> Option<BareMetalHost> {
    serde_json::from_value(v.clone()).ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: crate::cases(1024), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn validator_takes_any_host(
        base in any::<Index>(),
        other in any::<Index>(),
        edits in prop::collection::vec(edit(), 1..6),
    ) {
        let bases = bases();
        let base = &bases[base.index(bases.len())];
        let other = host(&bases[other.index(bases.len())]).unwrap();
        let mut v = base.clone();
        for e in &edits {
            apply(&mut v, e);
        }
        // A mutant the API types refuse is an error of the loader, not the validator's input.
        let Some(h) = host(&v) else {
            return Ok(());
        };

        let create = validate(&h, None);
        prop_assert_eq!(&create, &validate(&h, None), "not deterministic");
        prop_assert_eq!(&validate(&h, Some(&h)), &create, "a no-op update changes the verdict");
        let all = aggregate(&create);
        for e in &create {
            prop_assert!(!e.message.is_empty(), "empty message at {}", e.field);
            prop_assert!(all.contains(&e.message), "{} not in {}", e.message, all);
        }
        let mut split = validate_schema(&h);
        split.extend(validate_create(&h));
        prop_assert_eq!(split, create);

        let _ = validate(&h, Some(&other));
        let _ = validate(&other, Some(&h));
        let _ = bmc_access(&h, &ObjectMap::default());
    }
}

/// The generator reaches the validator: most mutants still deserialize, and both valid and
/// invalid hosts come out.
#[test]
fn mutants_reach_the_validator() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let bases = bases();
    let mut runner = TestRunner::deterministic();
    let (mut typed, mut valid, mut invalid) = (0, 0, 0);
    for _ in 0..300 {
        let (i, edits) = (any::<Index>(), prop::collection::vec(edit(), 1..6))
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let mut v = bases[i.index(bases.len())].clone();
        edits.iter().for_each(|e| apply(&mut v, e));
        if let Some(h) = host(&v) {
            typed += 1;
            if validate(&h, None).is_empty() {
                valid += 1;
            } else {
                invalid += 1;
            }
        }
    }
    assert!(typed > 150, "only {typed} of 300 mutants deserialize");
    assert!(
        valid > 10 && invalid > 10,
        "valid {valid}, invalid {invalid}"
    );
}
