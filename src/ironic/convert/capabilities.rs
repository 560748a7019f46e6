//! Boot mode → `properties.capabilities` and `instance_info.capabilities` (spec 6.2).

use bmh_api::BootMode;
use serde_json::{Map, Value};

/// The `properties.capabilities` fragment for a boot mode (unset or unknown: UEFI).
pub fn boot_mode_fragment(mode: &BootMode) -> &'static str {
    match mode {
        BootMode::UefiSecureBoot => "boot_mode:uefi,secure_boot:true",
        BootMode::Legacy => "boot_mode:bios",
        BootMode::Uefi | BootMode::Unset | BootMode::Other(_) => "boot_mode:uefi",
    }
}

/// Merge the boot-mode fragment into the node's existing `properties.capabilities` value.
pub fn merge_boot_mode_capabilities(existing: Option<&Value>, mode: &BootMode) -> String {
    let fragment = boot_mode_fragment(mode);
    let existing = match existing {
        Some(Value::String(s)) if !s.is_empty() => s,
        // Missing, non-string or empty: nothing from inspection worth keeping.
        _ => return fragment.to_string(),
    };
    let mut items: Vec<&str> = existing
        .split(',')
        .filter(|item| !item.starts_with("boot_mode:") && !item.starts_with("secure_boot:"))
        .collect();
    items.push(fragment);
    items.join(",")
}

/// `instance_info.capabilities` for a boot mode.
pub fn instance_capabilities(mode: &BootMode) -> Value {
    let mut caps = Map::new();
    if *mode == BootMode::UefiSecureBoot {
        caps.insert("secure_boot".into(), Value::String("true".into()));
    }
    Value::Object(caps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CPU_CAPS: &str = "cpu_vt:true,cpu_aes:true,cpu_hugepages:true,cpu_hugepages_1g:true";

    #[test]
    fn fragment_per_boot_mode() {
        let cases = [
            (BootMode::Uefi, "boot_mode:uefi"),
            (BootMode::UefiSecureBoot, "boot_mode:uefi,secure_boot:true"),
            (BootMode::Legacy, "boot_mode:bios"),
            (BootMode::Unset, "boot_mode:uefi"),
            (BootMode::Other("weird".into()), "boot_mode:uefi"),
        ];
        for (mode, expected) in cases {
            assert_eq!(boot_mode_fragment(&mode), expected, "{mode:?}");
            assert_eq!(merge_boot_mode_capabilities(None, &mode), expected);
        }
    }

    /// BMO's `TestBuildCapabilitiesValue` scenarios, plus the spec's own example.
    #[test]
    fn merge_keeps_other_items_and_replaces_boot_items() {
        let with = |s: &str| s.replace("{cpu}", CPU_CAPS);
        let cases: Vec<(&str, Option<Value>, BootMode, String)> = vec![
            ("unset", None, BootMode::Uefi, "boot_mode:uefi".into()),
            (
                "empty",
                Some(json!("")),
                BootMode::Uefi,
                "boot_mode:uefi".into(),
            ),
            (
                "not-there",
                Some(json!(CPU_CAPS)),
                BootMode::Uefi,
                with("{cpu},boot_mode:uefi"),
            ),
            (
                "add-secure-boot",
                Some(json!(CPU_CAPS)),
                BootMode::UefiSecureBoot,
                with("{cpu},boot_mode:uefi,secure_boot:true"),
            ),
            (
                "uefi-to-uefi",
                Some(json!(with("boot_mode:uefi,{cpu}"))),
                BootMode::Uefi,
                with("{cpu},boot_mode:uefi"),
            ),
            (
                "bios-to-bios",
                Some(json!(with("boot_mode:bios,{cpu}"))),
                BootMode::Legacy,
                with("{cpu},boot_mode:bios"),
            ),
            (
                "bios-to-uefi",
                Some(json!(with("boot_mode:bios,{cpu}"))),
                BootMode::Uefi,
                with("{cpu},boot_mode:uefi"),
            ),
            (
                "uefi-to-bios",
                Some(json!(with("boot_mode:uefi,{cpu}"))),
                BootMode::Legacy,
                with("{cpu},boot_mode:bios"),
            ),
            (
                "uefi-to-secure",
                Some(json!(with("boot_mode:uefi,{cpu}"))),
                BootMode::UefiSecureBoot,
                with("{cpu},boot_mode:uefi,secure_boot:true"),
            ),
            (
                "secure-to-uefi",
                Some(json!(with("boot_mode:uefi,{cpu},secure_boot:true"))),
                BootMode::Uefi,
                with("{cpu},boot_mode:uefi"),
            ),
            (
                "spec example",
                Some(json!("cpu_vt:true,boot_mode:bios")),
                BootMode::UefiSecureBoot,
                "cpu_vt:true,boot_mode:uefi,secure_boot:true".into(),
            ),
            (
                "non-string value is replaced",
                Some(json!({"boot_mode": "bios"})),
                BootMode::Legacy,
                "boot_mode:bios".into(),
            ),
            (
                "null value is replaced",
                Some(Value::Null),
                BootMode::Uefi,
                "boot_mode:uefi".into(),
            ),
        ];
        for (scenario, existing, mode, expected) in cases {
            assert_eq!(
                merge_boot_mode_capabilities(existing.as_ref(), &mode),
                expected,
                "{scenario}"
            );
        }
    }

    #[test]
    fn merge_keeps_items_verbatim() {
        // Only the two prefixes are dropped; items are not trimmed, so " boot_mode:bios" stays,
        // and empty items from doubled commas survive as BMO's split does.
        assert_eq!(
            merge_boot_mode_capabilities(Some(&json!("a:1,, boot_mode:bios")), &BootMode::Uefi),
            "a:1,, boot_mode:bios,boot_mode:uefi"
        );
    }

    #[test]
    fn instance_capabilities_per_boot_mode() {
        assert_eq!(
            instance_capabilities(&BootMode::UefiSecureBoot),
            json!({"secure_boot": "true"})
        );
        for mode in [
            BootMode::Uefi,
            BootMode::Legacy,
            BootMode::Unset,
            BootMode::Other("x".into()),
        ] {
            assert_eq!(instance_capabilities(&mode), json!({}), "{mode:?}");
        }
    }
}
