//! BIOS and firmware clean/service steps (spec 6.4, 6.5).

use bmhctl_plugin_sdk::{ActualSettings, DesiredSettings, FirmwareUpdate};
use serde_json::{Value, json};

/// The string form of a desired (int-or-string) value, as compared with the actual value.
pub fn desired_setting_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// What Ironic is sent for a desired value: a JSON integer, or else its string form.
fn desired_setting_wire_value(value: &Value) -> Value {
    match value {
        Value::Number(n) if n.is_i64() || n.is_u64() => value.clone(),
        other => Value::String(desired_setting_text(other)),
    }
}

/// `bios.apply_configuration` for every desired setting differing from the actual one, sorted
/// by name; `None` when nothing differs or the actual settings are unknown (empty).
pub fn bios_step(target: &DesiredSettings, actual: &ActualSettings) -> Option<Value> {
    if actual.is_empty() {
        return None;
    }
    // A BTreeMap iterates sorted by name and holds each name once.
    let settings: Vec<Value> = target
        .iter()
        .filter(|(name, desired)| {
            actual.get(*name).map(String::as_str).unwrap_or("") != desired_setting_text(desired)
        })
        .map(|(name, desired)| json!({"name": name, "value": desired_setting_wire_value(desired)}))
        .collect();
    if settings.is_empty() {
        return None;
    }
    Some(json!({
        "interface": "bios",
        "step": "apply_configuration",
        "args": {"settings": settings},
    }))
}

/// `firmware.update` for the pending component updates; `None` when there are none.
pub fn firmware_step(updates: &[FirmwareUpdate]) -> Option<Value> {
    if updates.is_empty() {
        return None;
    }
    let settings: Vec<Value> = updates
        .iter()
        .map(|u| json!({"component": u.component, "url": u.url}))
        .collect();
    Some(json!({
        "interface": "firmware",
        "step": "update",
        "args": {"settings": settings},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desired(pairs: &[(&str, Value)]) -> DesiredSettings {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    fn actual(pairs: &[(&str, &str)]) -> ActualSettings {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn bmc_like_actual() -> ActualSettings {
        actual(&[
            ("L2Cache", "10x256 KB"),
            ("NumCores", "10"),
            ("NetworkBootRetryCount", "20"),
            ("ProcVirtualization", "Enabled"),
            ("ProcHyperthreading", "Disabled"),
        ])
    }

    #[test]
    fn bios_no_actual_settings_means_no_step() {
        let target = desired(&[("ProcVirtualization", json!("Disabled"))]);
        assert_eq!(bios_step(&target, &ActualSettings::new()), None);
        assert_eq!(
            bios_step(&DesiredSettings::new(), &ActualSettings::new()),
            None
        );
    }

    #[test]
    fn bios_no_desired_settings_means_no_step() {
        assert_eq!(bios_step(&DesiredSettings::new(), &bmc_like_actual()), None);
    }

    #[test]
    fn bios_equal_settings_mean_no_step() {
        // The integer 10 and the string "10" both match the actual "10".
        let target = desired(&[
            ("NumCores", json!(10)),
            ("L2Cache", json!("10x256 KB")),
            ("ProcVirtualization", json!("Enabled")),
        ]);
        assert_eq!(bios_step(&target, &bmc_like_actual()), None);
    }

    /// BMO's "current settings different than desired" case; the list comes out sorted.
    #[test]
    fn bios_differing_settings_are_sent_sorted_with_ints_as_numbers() {
        let target = desired(&[
            ("NetworkBootRetryCount", json!(10)),
            ("ProcVirtualization", json!("Disabled")),
            ("ProcHyperthreading", json!("Enabled")),
        ]);
        let step = bios_step(&target, &bmc_like_actual()).expect("a step");
        assert_eq!(
            step,
            json!({
                "interface": "bios",
                "step": "apply_configuration",
                "args": {"settings": [
                    {"name": "NetworkBootRetryCount", "value": 10},
                    {"name": "ProcHyperthreading", "value": "Enabled"},
                    {"name": "ProcVirtualization", "value": "Disabled"},
                ]},
            })
        );
    }

    #[test]
    fn bios_only_differing_settings_are_sent() {
        let target = desired(&[
            ("NumCores", json!(10)),
            ("ProcVirtualization", json!("Disabled")),
        ]);
        let step = bios_step(&target, &bmc_like_actual()).expect("a step");
        assert_eq!(
            step["args"]["settings"],
            json!([{"name": "ProcVirtualization", "value": "Disabled"}])
        );
    }

    #[test]
    fn bios_setting_missing_from_actual_counts_as_different() {
        let target = desired(&[("BootMode", json!("Uefi"))]);
        let step = bios_step(&target, &bmc_like_actual()).expect("a step");
        assert_eq!(
            step["args"]["settings"],
            json!([{"name": "BootMode", "value": "Uefi"}])
        );
    }

    #[test]
    fn bios_numeric_string_stays_a_string() {
        // Only an int-typed desired value is sent as a number.
        let target = desired(&[("NetworkBootRetryCount", json!("5"))]);
        let step = bios_step(&target, &bmc_like_actual()).expect("a step");
        assert_eq!(
            step["args"]["settings"],
            json!([{"name": "NetworkBootRetryCount", "value": "5"}])
        );
    }

    #[test]
    fn bios_comparison_is_exact() {
        // Case and whitespace matter, as in BMO's string comparison.
        let target = desired(&[
            ("ProcVirtualization", json!("enabled")),
            ("L2Cache", json!("10x256 KB ")),
        ]);
        let step = bios_step(&target, &bmc_like_actual()).expect("a step");
        assert_eq!(
            step["args"]["settings"],
            json!([
                {"name": "L2Cache", "value": "10x256 KB "},
                {"name": "ProcVirtualization", "value": "enabled"},
            ])
        );
    }

    #[test]
    fn desired_text_forms() {
        assert_eq!(desired_setting_text(&json!("Enabled")), "Enabled");
        assert_eq!(desired_setting_text(&json!(10)), "10");
        assert_eq!(desired_setting_text(&json!(-3)), "-3");
        assert_eq!(desired_setting_text(&json!(true)), "true");
        assert_eq!(desired_setting_text(&Value::Null), "");
        assert_eq!(desired_setting_wire_value(&json!(7)), json!(7));
        assert_eq!(desired_setting_wire_value(&json!(1.5)), json!("1.5"));
        assert_eq!(desired_setting_wire_value(&json!(false)), json!("false"));
    }

    #[test]
    fn firmware_no_updates_means_no_step() {
        assert_eq!(firmware_step(&[]), None);
    }

    #[test]
    fn firmware_updates_keep_their_order() {
        let updates = [
            FirmwareUpdate {
                component: "bmc".into(),
                url: "https://example.com/bmc.bin".into(),
            },
            FirmwareUpdate {
                component: "bios".into(),
                url: "https://example.com/bios.bin".into(),
            },
            FirmwareUpdate {
                component: "nic:AD0700".into(),
                url: "http://example.com/nic.bin".into(),
            },
        ];
        assert_eq!(
            firmware_step(&updates),
            Some(json!({
                "interface": "firmware",
                "step": "update",
                "args": {"settings": [
                    {"component": "bmc", "url": "https://example.com/bmc.bin"},
                    {"component": "bios", "url": "https://example.com/bios.bin"},
                    {"component": "nic:AD0700", "url": "http://example.com/nic.bin"},
                ]},
            }))
        );
    }

    #[test]
    fn steps_have_no_priority_key() {
        // Clean and service steps carry only interface, step and args.
        let bios =
            bios_step(&desired(&[("A", json!("x"))]), &actual(&[("A", "y")])).expect("a step");
        let fw = firmware_step(&[FirmwareUpdate {
            component: "bmc".into(),
            url: "u".into(),
        }])
        .expect("a step");
        for step in [bios, fw] {
            let keys: Vec<&String> = step.as_object().expect("object").keys().collect();
            assert_eq!(keys, ["interface", "step", "args"]);
        }
    }
}
