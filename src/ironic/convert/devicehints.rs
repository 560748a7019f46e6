//! Root device hints → Ironic's hint map (spec 6.1).

use bmh_api::RootDeviceHints;
use serde_json::{Map, Value};

/// Device names under this prefix are matched on Ironic's `by_path` key instead of `name`.
const BY_PATH_PREFIX: &str = "/dev/disk/by-path/";

/// Ironic's `root_device` map; empty when there are no hints.
pub fn root_device_hints(hints: Option<&RootDeviceHints>) -> Map<String, Value> {
    let mut map = Map::new();
    let Some(h) = hints else {
        return map;
    };
    let mut put = |key: &str, value: String| {
        map.insert(key.to_string(), Value::String(value));
    };
    let device_key = if h.device_name.starts_with(BY_PATH_PREFIX) {
        "by_path"
    } else {
        "name"
    };
    // Zero is "no minimum"; a negative size is passed through.
    let size = match h.min_size_gigabytes {
        0 => String::new(),
        n => n.to_string(),
    };
    for (key, operator, value) in [
        (device_key, "s==", &h.device_name),
        ("hctl", "s==", &h.hctl),
        ("model", "<in>", &h.model),
        ("vendor", "<in>", &h.vendor),
        ("serial", "s==", &h.serial_number),
        ("size", ">=", &size),
        ("wwn", "s==", &h.wwn),
        ("wwn_with_extension", "s==", &h.wwn_with_extension),
        ("wwn_vendor_extension", "s==", &h.wwn_vendor_extension),
    ] {
        if !value.is_empty() {
            put(key, format!("{operator} {value}"));
        }
    }
    if let Some(rotational) = h.rotational {
        put("rotational", rotational.to_string());
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hints_of(v: Value) -> RootDeviceHints {
        serde_json::from_value(v).expect("valid RootDeviceHints")
    }

    fn map_of(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn no_hints_give_an_empty_map() {
        assert!(root_device_hints(None).is_empty());
        assert!(root_device_hints(Some(&RootDeviceHints::default())).is_empty());
    }

    /// One row per field of the spec's table (BMO's `TestMakeHintMap` cases included).
    #[test]
    fn every_field_maps_to_its_key_and_operator() {
        let cases = [
            (
                json!({"deviceName": "userd_devicename"}),
                json!({"name": "s== userd_devicename"}),
            ),
            (
                json!({"deviceName": "/dev/sda"}),
                json!({"name": "s== /dev/sda"}),
            ),
            (
                json!({"deviceName": "/dev/disk/by-path/pci-0000:00:1f.2-ata-1"}),
                json!({"by_path": "s== /dev/disk/by-path/pci-0000:00:1f.2-ata-1"}),
            ),
            // Only the exact prefix counts: a different /dev/disk/ folder stays a name.
            (
                json!({"deviceName": "/dev/disk/by-id/wwn-0x5000"}),
                json!({"name": "s== /dev/disk/by-id/wwn-0x5000"}),
            ),
            (json!({"hctl": "1:2:3:4"}), json!({"hctl": "s== 1:2:3:4"})),
            (
                json!({"model": "userd_model"}),
                json!({"model": "<in> userd_model"}),
            ),
            (
                json!({"vendor": "userd_vendor"}),
                json!({"vendor": "<in> userd_vendor"}),
            ),
            (
                json!({"serialNumber": "userd_serial"}),
                json!({"serial": "s== userd_serial"}),
            ),
            (json!({"minSizeGigabytes": 40}), json!({"size": ">= 40"})),
            (json!({"wwn": "userd_wwn"}), json!({"wwn": "s== userd_wwn"})),
            (
                json!({"wwnWithExtension": "userd_with_extension"}),
                json!({"wwn_with_extension": "s== userd_with_extension"}),
            ),
            (
                json!({"wwnVendorExtension": "userd_vendor_extension"}),
                json!({"wwn_vendor_extension": "s== userd_vendor_extension"}),
            ),
            (json!({"rotational": true}), json!({"rotational": "true"})),
            (json!({"rotational": false}), json!({"rotational": "false"})),
        ];
        for (hints, expected) in cases {
            let got = root_device_hints(Some(&hints_of(hints.clone())));
            assert_eq!(got, map_of(expected), "hints {hints}");
        }
    }

    #[test]
    fn every_field_at_once() {
        let hints = hints_of(json!({
            "deviceName": "userd_devicename",
            "hctl": "1:2:3:4",
            "model": "userd_model",
            "vendor": "userd_vendor",
            "serialNumber": "userd_serial",
            "minSizeGigabytes": 40,
            "wwn": "userd_wwn",
            "wwnWithExtension": "userd_with_extension",
            "wwnVendorExtension": "userd_vendor_extension",
            "rotational": true,
        }));
        let expected = json!({
            "name": "s== userd_devicename",
            "hctl": "s== 1:2:3:4",
            "model": "<in> userd_model",
            "vendor": "<in> userd_vendor",
            "serial": "s== userd_serial",
            "size": ">= 40",
            "wwn": "s== userd_wwn",
            "wwn_with_extension": "s== userd_with_extension",
            "wwn_vendor_extension": "s== userd_vendor_extension",
            "rotational": "true",
        });
        assert_eq!(root_device_hints(Some(&hints)), map_of(expected));
    }

    #[test]
    fn zero_min_size_and_unset_rotational_are_omitted() {
        let hints = RootDeviceHints {
            min_size_gigabytes: 0,
            rotational: None,
            hctl: "0:0:0:0".into(),
            ..Default::default()
        };
        assert_eq!(
            root_device_hints(Some(&hints)),
            map_of(json!({"hctl": "s== 0:0:0:0"}))
        );
    }

    #[test]
    fn negative_min_size_is_passed_through() {
        // Only 0 means "unset"; the webhook is what rejects nonsense sizes.
        let hints = RootDeviceHints {
            min_size_gigabytes: -1,
            ..Default::default()
        };
        assert_eq!(
            root_device_hints(Some(&hints)),
            map_of(json!({"size": ">= -1"}))
        );
    }
}
