//! Table tests driven by BMO's own validation cases (tests/data/bmh-validation-cases.yaml, a
//! copy of the shared spec's case file plus bmhctl's additions), and the bmhctl-only parts.

use super::*;
use serde_json::{Value, json};

const CASES: &str = include_str!("../../tests/data/bmh-validation-cases.yaml");

fn cases() -> Value {
    serde_saphyr::from_str(CASES).expect("the case file parses")
}

/// A case's object as a host: what it omits has its zero value (`spec.online: false`).
fn host(object: &Value) -> BareMetalHost {
    let mut o = object.clone();
    let spec = o
        .as_object_mut()
        .unwrap()
        .entry("spec")
        .or_insert_with(|| json!({}));
    if spec.is_null() {
        *spec = json!({});
    }
    spec.as_object_mut()
        .unwrap()
        .entry("online")
        .or_insert(json!(false));
    serde_json::from_value(o).unwrap_or_else(|e| panic!("{object}: {e}"))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

/// Checks one case's errors against its `expect`; returns a description of the mismatch.
fn check(name: &str, errors: &[ValidationError], expect: &Value) -> Result<(), String> {
    let messages: Vec<String> = errors.iter().map(|e| e.message.clone()).collect();
    let fail = |why: &str| Err(format!("{name}: {why}; got {messages:#?}"));
    if expect["valid"] == json!(true) {
        return if errors.is_empty() {
            Ok(())
        } else {
            fail("expected valid")
        };
    }
    if errors.is_empty() {
        return fail("expected errors");
    }
    let go_text = expect["go_library_text"] == json!(true);
    let prefix = expect["stable_prefix"].as_str().unwrap_or("");
    let substring = expect["match"] == json!("substring");
    let aggregated = aggregate(errors);
    for want in strings(&expect["errors_include"]) {
        let found = if substring {
            aggregated.contains(&want)
        } else {
            messages.contains(&want)
        };
        // Go library wording bmhctl cannot reproduce: BMO's own prefix must be there.
        let close_enough = go_text && messages.iter().any(|m| m.starts_with(prefix));
        if !found && !close_enough {
            return fail(&format!("missing {want:?}"));
        }
    }
    if let Some(all) = expect.get("all_errors") {
        let mut want = strings(all);
        let mut got = messages.clone();
        if go_text {
            if want.len() != got.len() {
                return fail(&format!("expected {} errors", want.len()));
            }
        } else {
            if expect["ordered"] != json!(true) {
                want.sort();
                got.sort();
            }
            if want != got {
                return fail(&format!("expected exactly {want:#?}"));
            }
        }
    }
    Ok(())
}

fn run_table(section: &str, f: impl Fn(&Value) -> Vec<ValidationError>) -> usize {
    let all = cases();
    let table = all[section]
        .as_array()
        .unwrap_or_else(|| panic!("{section}"));
    let failures: Vec<String> = table
        .iter()
        .filter_map(|c| {
            let name = c["name"].as_str().unwrap();
            check(name, &f(c), &c["expect"]).err()
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    table.len()
}

#[test]
fn bmo_create_cases() {
    let n = run_table("create_cases", |c| validate_create(&host(&c["object"])));
    assert!(n >= 70, "{n} cases");
}

#[test]
fn bmo_webhook_entry_point_cases() {
    run_table("webhook_entry_point_cases", |c| {
        if c["operation"] == json!("update") {
            validate_update(&host(&c["old"]), &host(&c["new"]))
        } else {
            validate_create(&host(&c["object"]))
        }
    });
}

#[test]
fn bmo_update_cases() {
    let n = run_table("update_cases", |c| {
        validate_update(&host(&c["old"]), &host(&c["new"]))
    });
    assert!(n >= 10);
}

#[test]
fn bmhctl_create_cases() {
    run_table("bmhctl_create_cases", |c| {
        validate_create(&host(&c["object"]))
    });
}

/// Every case that names its Go-library text: report which ones bmhctl reproduces exactly, and
/// make sure the exact ones stay exact.
#[test]
fn go_library_texts_reproduced_where_possible() {
    let all = cases();
    let mut exact = Vec::new();
    for section in ["create_cases", "bmhctl_create_cases", "update_cases"] {
        for c in all[section].as_array().unwrap() {
            if c["expect"]["go_library_text"] != json!(true) {
                continue;
            }
            let errors = match c.get("object") {
                Some(o) => validate_create(&host(o)),
                None => validate_update(&host(&c["old"]), &host(&c["new"])),
            };
            let want = strings(&c["expect"]["errors_include"]);
            if want.iter().all(|w| errors.iter().any(|e| &e.message == w)) {
                exact.push(c["name"].as_str().unwrap().to_string());
            }
        }
    }
    for name in [
        "InvalidBootMACAddress",
        "invalidDNSNameinvalidformat",
        "invalidImageURL",
        "emptyImageURL",
        "invalidFieldStatusAnnotation",
        "invalidFormatStatusAnnotation",
        "invalidFieldHardwareDetailsAnnotation",
        "invalidJsonHardwareDetailsAnnotation",
        "invalidJsonRebootAnnotation",
        "statusAnnotationNestedUnknownField",
        "statusAnnotationWrongType",
    ] {
        assert!(
            exact.contains(&name.to_string()),
            "{name} is not exact: {exact:?}"
        );
    }
}

#[test]
fn errors_name_the_field() {
    let h = host(&json!({
        "metadata": {"name": "h", "annotations": {"reboot.metal3.io/x": "{\"mode\":\"x\"}"}},
        "spec": {
            "bmc": {"address": "libvirt://10.0.0.1"},
            "raid": {"hardwareRAIDVolumes": [{"level": "1", "physicalDisks": ["a"]}]},
            "networkInterfaces": [{}],
        }
    }));
    let fields: Vec<String> = validate_create(&h)
        .iter()
        .map(|e| e.field.to_string())
        .collect();
    assert_eq!(
        fields,
        [
            "spec.raid.hardwareRAIDVolumes[0].physicalDisks",
            "spec.raid.hardwareRAIDVolumes",
            "spec.bootMACAddress",
            "metadata.annotations[reboot.metal3.io/x]",
            "spec.networkInterfaces[0]",
        ]
    );
}

#[test]
fn the_address_rules_duplicate_collapses() {
    let h = host(&json!({"metadata": {"name": "h"}, "spec": {"bmc": {"address": "ipmi://-x"}}}));
    assert_eq!(rules::create_rules(&h).len(), 2);
    assert_eq!(validate_create(&h).len(), 1);
}

#[test]
fn aggregate_like_kubernetes() {
    let e = |m: &str| ValidationError {
        field: FieldPath::new().key("spec"),
        message: m.into(),
        origin: Origin::Webhook,
        hint: None,
    };
    assert_eq!(aggregate(&[e("a")]), "a");
    assert_eq!(aggregate(&[e("a"), e("b"), e("a")]), "[a, b]");
}

#[test]
fn fake_hardware_is_valid_but_flagged() {
    let h = host(&json!({
        "metadata": {"name": "f0"},
        "spec": {"online": true, "bmc": {"address": "fake-hardware://f0", "credentialsName": "c"},
                 "inspectionMode": "fast", "bootMode": "UEFISecureBoot"}
    }));
    assert_eq!(validate(&h, None), []);
    let (access, warnings) = bmc_access(&h, &ObjectMap::default());
    let access = access.unwrap();
    assert!(access.extension);
    assert_eq!(access.driver, "fake-hardware");
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].message.contains("bmhctl's own BMC scheme"),
        "{warnings:?}"
    );
    assert!(
        warnings[0]
            .message
            .contains("Unknown BMC type 'fake-hardware' for address fake-hardware://f0")
    );
    assert!(
        warnings[1]
            .message
            .contains("Missing BMC connection detail 'username'")
    );
    // A malformed fake-hardware address is an error.
    let bad = host(
        &json!({"metadata": {"name": "f1"}, "spec": {"bmc": {"address": "fake-hardware://f1:99"}}}),
    );
    assert_eq!(
        validate_create(&bad)[0].message,
        "invalid fake-hardware address fake-hardware://f1:99: a port is not allowed; expected fake-hardware://<id>"
    );
}

#[test]
fn bmc_access_redacts_the_password() {
    let mut objects = ObjectMap::default();
    objects.insert_secret(crate::objects::ResolvedSecret::new(
        ObjectKey::new("default", "creds"),
        [
            ("username".to_string(), b"admin".to_vec()),
            ("password".to_string(), b"s3cret-pw".to_vec()),
        ]
        .into_iter()
        .collect(),
    ));
    let h = host(&json!({
        "metadata": {"name": "r0"},
        "spec": {"online": true, "bmc": {"address": "redfish-virtualmedia+https://10.0.0.1/redfish/v1/Systems/1",
                 "credentialsName": "creds", "disableCertificateVerification": true}}
    }));
    let (access, warnings) = bmc_access(&h, &objects);
    assert_eq!(warnings, Vec::<crate::validate::Warning>::new());
    let text = serde_json::to_string(&access.unwrap()).unwrap();
    assert!(!text.contains("s3cret-pw"), "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["type"], "redfish-virtualmedia+https");
    assert_eq!(v["scheme"], "redfish-virtualmedia");
    assert_eq!(v["driver"], "redfish");
    assert_eq!(v["interfaces"]["boot_interface"], "redfish-virtual-media");
    assert_eq!(v["driverInfo"]["redfish_password"], "<redacted>");
    assert_eq!(v["driverInfo"]["redfish_username"], "admin");
    assert_eq!(v["driverInfo"]["redfish_address"], "https://10.0.0.1");
    assert_eq!(
        v["driverInfo"]["redfish_system_id"],
        "/redfish/v1/Systems/1"
    );
    assert_eq!(v["driverInfo"]["redfish_verify_ca"], false);
}

#[test]
fn schema_errors_come_first_and_keep_the_api_servers_text() {
    let h = host(&json!({
        "metadata": {"name": "h"},
        "spec": {"image": {"url": "http://x/i", "checksum": "c", "checksumType": "SHA1"}}
    }));
    let texts: Vec<String> = validate(&h, None).iter().map(|e| e.to_string()).collect();
    assert_eq!(
        texts,
        [
            "spec.image.checksumType: Unsupported value: \"SHA1\": supported values: \"md5\", \"sha256\", \"sha512\", \"auto\"",
            "spec.image.checksumType: unknown checksumType SHA1, supported are auto, md5, sha256, sha512",
        ]
    );
}

#[test]
fn cross_namespace_uses_the_default_namespace() {
    let h = host(&json!({
        "metadata": {"name": "h"},
        "spec": {"userData": {"name": "u", "namespace": "default"},
                 "metaData": {"name": "m", "namespace": "other"}}
    }));
    let errors = validate_create(&h);
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].message,
        "baremetalhosts.metal3.io \"h\" is forbidden: metaData: cross-namespace Secret references are not allowed"
    );
}

#[test]
fn an_unknown_bmc_type_suggests_the_closest_type_or_the_vendors_types() {
    use super::bmc_type_suggestion as suggest;
    assert_eq!(suggest("ipmii").as_deref(), Some("did you mean ipmi://?"));
    assert_eq!(
        suggest("idrak").as_deref(),
        Some("did you mean idrac-redfish:// or idrac-virtualmedia://?")
    );
    assert_eq!(
        suggest("redfsh-virtualmedia").as_deref(),
        Some("did you mean redfish-virtualmedia://?")
    );
    assert_eq!(suggest("nothing-like-it"), None);
}
