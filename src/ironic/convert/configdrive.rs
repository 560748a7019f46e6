//! The config drive in Ironic's JSON form (spec 3.7).

use bmhctl_plugin_sdk::{HostConfigData, HostConfigErrors};
use serde_json::{Map, Value};

/// Who the host is, for the default meta data.
#[derive(Debug, Clone, Default)]
pub struct HostIdentity<'a> {
    pub uid: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

/// The meta data every config drive starts from; a meta data secret is merged over it.
pub fn default_meta_data(host: &HostIdentity<'_>) -> Map<String, Value> {
    let mut meta = Map::new();
    let mut put = |key: &str, value: &str| {
        meta.insert(key.to_string(), Value::String(value.to_string()));
    };
    put("uuid", host.uid);
    put("metal3-namespace", host.namespace);
    put("metal3-name", host.name);
    put("local-hostname", host.name);
    put("local_hostname", host.name);
    put("name", host.name);
    meta
}

/// Parses a YAML (or JSON) mapping; `None` for a null document, as BMO's decoder accepts.
pub fn parse_yaml_mapping(text: &str) -> Result<Option<Map<String, Value>>, String> {
    match serde_saphyr::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(Some(map)),
        Ok(Value::Null) => Ok(None),
        Ok(other) => Err(format!(
            "expected a mapping, found {}",
            match other {
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                _ => "a sequence",
            }
        )),
        // One line: the source snippet would only repeat the secret's text.
        Err(e) => Err(e.without_snippet().to_string()),
    }
}

/// `{}` for a live ISO; else `{"meta_data": …, "network_data"?: …, "user_data"?: …}`, or the
/// transient error texts of BMO's `getConfigDrive`, in its order.
pub fn config_drive(
    host: &HostIdentity<'_>,
    data: &HostConfigData,
    errors: &HostConfigErrors,
    live_iso: bool,
) -> Result<Value, String> {
    // Some hardware cannot attach a second virtual medium next to the ISO, so no drive.
    if live_iso {
        return Ok(Value::Object(Map::new()));
    }

    for (what, error) in [
        ("user data", &errors.user_data),
        ("network data", &errors.network_data),
    ] {
        if !error.is_empty() {
            return Err(format!("could not retrieve {what}: {error}"));
        }
    }
    // Network data is decoded before meta data, so its error wins when both are broken.
    let network_data = if data.network_data.is_empty() {
        None
    } else {
        parse_yaml_mapping(&data.network_data)
            .map_err(|e| format!("failed to unmarshal network_data.json from secret: {e}"))?
    };

    if !errors.meta_data.is_empty() {
        return Err(format!("could not retrieve metadata: {}", errors.meta_data));
    }
    let mut meta_data = default_meta_data(host);
    if !data.meta_data.is_empty() {
        let overrides = parse_yaml_mapping(&data.meta_data)
            .map_err(|e| format!("failed to unmarshal metadata from secret: {e}"))?;
        // A null document keeps the defaults (BMO's decoder would drop the whole meta data).
        meta_data.extend(overrides.into_iter().flatten());
    }

    let mut drive = Map::new();
    drive.insert("meta_data".into(), Value::Object(meta_data));
    // An empty mapping is left out too, as Ironic's Go client does.
    if let Some(network_data) = network_data.filter(|m| !m.is_empty()) {
        drive.insert("network_data".into(), Value::Object(network_data));
    }
    if !data.user_data.is_empty() {
        drive.insert("user_data".into(), Value::String(data.user_data.clone()));
    }
    Ok(Value::Object(drive))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const HOST: HostIdentity<'static> = HostIdentity {
        uid: "33ce8659-7400-4c68-9535-d10766f07a58",
        namespace: "myns",
        name: "myhost",
    };

    /// The drive of [`HOST`] when no Secret failed to read.
    fn drive(data: &HostConfigData, live_iso: bool) -> Result<Value, String> {
        config_drive(&HOST, data, &HostConfigErrors::default(), live_iso)
    }

    fn data(user: &str, network: &str, meta: &str) -> HostConfigData {
        HostConfigData {
            user_data: user.into(),
            network_data: network.into(),
            meta_data: meta.into(),
        }
    }

    fn default_meta() -> Value {
        json!({
            "uuid": "33ce8659-7400-4c68-9535-d10766f07a58",
            "metal3-namespace": "myns",
            "metal3-name": "myhost",
            "local-hostname": "myhost",
            "local_hostname": "myhost",
            "name": "myhost",
        })
    }

    fn meta_with(extra: Value) -> Value {
        let mut meta = default_meta();
        if let (Value::Object(m), Value::Object(e)) = (&mut meta, extra) {
            m.extend(e);
        }
        meta
    }

    /// BMO's `TestEmpty` cases for `getConfigDrive`.
    #[test]
    fn bmo_cases() {
        let cases = [
            (
                "default",
                data("", "", ""),
                false,
                json!({"meta_data": default_meta()}),
            ),
            (
                "everything",
                data("testUserData", "test: NetworkData", "test: Meta"),
                false,
                json!({
                    "meta_data": meta_with(json!({"test": "Meta"})),
                    "network_data": {"test": "NetworkData"},
                    "user_data": "testUserData",
                }),
            ),
            (
                "only network data",
                data("", "test: NetworkData", ""),
                false,
                json!({"meta_data": default_meta(), "network_data": {"test": "NetworkData"}}),
            ),
            (
                "only user data",
                data("testUserData", "", ""),
                false,
                json!({"meta_data": default_meta(), "user_data": "testUserData"}),
            ),
            (
                "only meta data",
                data("", "", "test: Meta"),
                false,
                json!({"meta_data": meta_with(json!({"test": "Meta"}))}),
            ),
            ("live ISO", data("", "", ""), true, json!({})),
        ];
        for (name, host_data, live_iso, expected) in cases {
            assert_eq!(drive(&host_data, live_iso), Ok(expected), "{name}");
        }
    }

    #[test]
    fn live_iso_ignores_all_data_even_broken_data() {
        let broken = data("#cloud-config", "[not: a mapping", "- a list");
        assert_eq!(drive(&broken, true), Ok(json!({})));
    }

    #[test]
    fn meta_data_secret_overrides_defaults() {
        let meta = "name: other\nlocal-hostname: other.example.com\npublic_keys:\n  default: ssh-ed25519 AAAA\n";
        let drive = drive(&data("", "", meta), false).expect("valid");
        assert_eq!(
            drive["meta_data"],
            meta_with(json!({
                "name": "other",
                "local-hostname": "other.example.com",
                "public_keys": {"default": "ssh-ed25519 AAAA"},
            }))
        );
    }

    #[test]
    fn user_data_is_passed_verbatim() {
        let user = "#cloud-config\nusers:\n  - name: core\n";
        let drive = drive(&data(user, "", ""), false).expect("valid");
        assert_eq!(drive["user_data"], json!(user));
    }

    #[test]
    fn network_data_as_json_text() {
        // Secrets often hold network_data.json itself; JSON is YAML.
        let network = r#"{"links": [{"id": "eth0", "type": "phy", "ethernet_mac_address": "00:11:22:33:44:55", "mtu": 1500}],
            "networks": [{"id": "n0", "link": "eth0", "type": "ipv4_dhcp"}], "services": []}"#;
        let drive = drive(&data("", network, ""), false).expect("valid");
        assert_eq!(
            drive["network_data"],
            json!({
                "links": [{"id": "eth0", "type": "phy", "ethernet_mac_address": "00:11:22:33:44:55", "mtu": 1500}],
                "networks": [{"id": "n0", "link": "eth0", "type": "ipv4_dhcp"}],
                "services": [],
            })
        );
    }

    #[test]
    fn network_data_as_yaml_keeps_scalar_types() {
        let network =
            "links:\n- id: eth0\n  mtu: 9000\n  enabled: true\n  mac: \"00:11:22:33:44:55\"\n";
        let drive = drive(&data("", network, ""), false).expect("valid");
        assert_eq!(
            drive["network_data"],
            json!({"links": [{"id": "eth0", "mtu": 9000, "enabled": true, "mac": "00:11:22:33:44:55"}]})
        );
    }

    #[test]
    fn null_or_empty_documents_add_nothing() {
        // Comment-only or `{}` network data is left out; such meta data keeps the defaults.
        for text in ["# nothing here\n", "null", "~", "{}"] {
            let drive = drive(&data("", text, text), false).expect("valid");
            assert_eq!(drive, json!({"meta_data": default_meta()}), "{text:?}");
        }
    }

    #[test]
    fn network_data_errors() {
        for text in ["- a\n- b\n", "just a string", "42", "{unclosed: [1, 2"] {
            let err = drive(&data("", text, ""), false).expect_err(text);
            assert!(
                err.starts_with("failed to unmarshal network_data.json from secret: "),
                "{text:?}: {err}"
            );
            assert!(
                err.len() > "failed to unmarshal network_data.json from secret: ".len(),
                "{err}"
            );
        }
    }

    #[test]
    fn parse_errors_are_one_line_with_a_position() {
        let err = drive(&data("", "{unclosed: [1, 2", ""), false).expect_err("bad");
        assert!(!err.contains('\n'), "{err}");
        assert!(err.contains("line 1"), "{err}");
        let err = drive(&data("", "", "a: 1\na: 2\n"), false).expect_err("dup");
        assert!(
            err.starts_with("failed to unmarshal metadata from secret: "),
            "{err}"
        );
        assert!(err.contains("duplicate"), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }

    #[test]
    fn shape_errors_name_what_was_found() {
        let err = drive(&data("", "- a", ""), false).expect_err("list");
        assert_eq!(
            err,
            "failed to unmarshal network_data.json from secret: expected a mapping, found a sequence"
        );
        let err = drive(&data("", "", "hello"), false).expect_err("string");
        assert_eq!(
            err,
            "failed to unmarshal metadata from secret: expected a mapping, found a string"
        );
    }

    #[test]
    fn yaml_scalars_in_meta_data() {
        // Non-string keys become strings; YAML 1.1 booleans are read as Go's YAML library does.
        let drive = drive(&data("", "", "1: one\nflag: yes\ncount: 3\n"), false).expect("ok");
        assert_eq!(drive["meta_data"]["1"], json!("one"));
        assert_eq!(drive["meta_data"]["flag"], json!(true));
        assert_eq!(drive["meta_data"]["count"], json!(3));
    }

    #[test]
    fn meta_data_errors() {
        for text in ["- a\n- b\n", "true", "{unclosed: [1, 2"] {
            let err = drive(&data("", "", text), false).expect_err(text);
            assert!(
                err.starts_with("failed to unmarshal metadata from secret: "),
                "{text:?}: {err}"
            );
        }
    }

    #[test]
    fn network_data_error_comes_first() {
        let err = drive(&data("", "- x", "- y"), false).expect_err("two errors");
        assert!(err.starts_with("failed to unmarshal network_data.json from secret: "));
    }

    #[test]
    fn empty_identity_still_writes_every_default_key() {
        let drive = config_drive(
            &HostIdentity::default(),
            &HostConfigData::default(),
            &HostConfigErrors::default(),
            false,
        )
        .expect("valid");
        assert_eq!(
            drive,
            json!({"meta_data": {
                "uuid": "", "metal3-namespace": "", "metal3-name": "",
                "local-hostname": "", "local_hostname": "", "name": "",
            }})
        );
    }

    /// BMO's `getConfigDrive` reads user data, then network data (decoded), then meta data; the
    /// first Secret it cannot read is the error. A live ISO reads none of them.
    #[test]
    fn unreadable_secrets_fail_in_bmos_order_and_never_for_a_live_iso() {
        let all = HostConfigErrors {
            user_data: "Secret ud does not contain key userData".into(),
            network_data: "secret default/nd does not exist".into(),
            meta_data: "Secret md does not contain key metaData".into(),
        };
        let broken_network = data("", "- a", "");
        let err = config_drive(&HOST, &broken_network, &all, false).expect_err("user data");
        assert_eq!(
            err,
            "could not retrieve user data: Secret ud does not contain key userData"
        );
        let no_user = HostConfigErrors {
            user_data: String::new(),
            ..all.clone()
        };
        let err = config_drive(&HOST, &broken_network, &no_user, false).expect_err("network");
        assert_eq!(
            err,
            "could not retrieve network data: secret default/nd does not exist"
        );
        // A network data document that does not decode wins over unreadable meta data.
        let meta_only = HostConfigErrors {
            meta_data: all.meta_data.clone(),
            ..HostConfigErrors::default()
        };
        let err = config_drive(&HOST, &broken_network, &meta_only, false).expect_err("decode");
        assert!(
            err.starts_with("failed to unmarshal network_data.json"),
            "{err}"
        );
        let err = config_drive(&HOST, &data("", "", ""), &meta_only, false).expect_err("meta");
        assert_eq!(
            err,
            "could not retrieve metadata: Secret md does not contain key metaData"
        );
        assert_eq!(
            config_drive(&HOST, &data("", "", ""), &all, true),
            Ok(json!({}))
        );
    }
}
