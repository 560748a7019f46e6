//! The firmware companions of a BareMetalHost, each named like its host.

use crate::host::Condition;
use crate::meta::{Extra, ObjectMeta};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `kind` of a HostFirmwareSettings.
pub const HOST_FIRMWARE_SETTINGS_KIND: &str = "HostFirmwareSettings";
/// `kind` of a HostFirmwareComponents.
pub const HOST_FIRMWARE_COMPONENTS_KIND: &str = "HostFirmwareComponents";
/// `kind` of a FirmwareSchema.
pub const FIRMWARE_SCHEMA_KIND: &str = "FirmwareSchema";
/// `kind` of a HostUpdatePolicy.
pub const HOST_UPDATE_POLICY_KIND: &str = "HostUpdatePolicy";

/// Condition types of both firmware objects.
pub mod firmware_conditions {
    /// The spec asks for something the status does not show yet.
    pub const CHANGE_DETECTED: &str = "ChangeDetected";
    /// The spec can be applied.
    pub const VALID: &str = "Valid";
}

/// Kubernetes' int-or-string (`intstr.IntOrString`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum IntOrString {
    /// An integer.
    Int(i32),
    /// A string.
    String(String),
}

impl IntOrString {
    /// The value as text (an integer in decimal).
    pub fn as_string(&self) -> String {
        match self {
            IntOrString::Int(i) => i.to_string(),
            IntOrString::String(s) => s.clone(),
        }
    }

    /// The value as an integer: a string that is no integer counts as 0.
    pub fn as_int(&self) -> i64 {
        match self {
            IntOrString::Int(i) => i64::from(*i),
            IntOrString::String(s) => s.parse().unwrap_or(0),
        }
    }

    /// The value as JSON: a number or a string.
    pub fn as_json(&self) -> serde_json::Value {
        match self {
            IntOrString::Int(i) => serde_json::Value::from(*i),
            IntOrString::String(s) => serde_json::Value::String(s.clone()),
        }
    }
}

impl std::fmt::Display for IntOrString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.as_string())
    }
}

impl<'de> Deserialize<'de> for IntOrString {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = IntOrString;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an integer or a string")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<IntOrString, E> {
                i32::try_from(v)
                    .map(IntOrString::Int)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<IntOrString, E> {
                i32::try_from(v)
                    .map(IntOrString::Int)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<IntOrString, E> {
                Ok(IntOrString::String(v.to_string()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<IntOrString, E> {
                Ok(IntOrString::String(v))
            }
        }
        d.deserialize_any(V)
    }
}

/// A HostFirmwareSettings (`hfs`): the BIOS settings wanted for, and read from, its host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HostFirmwareSettings {
    /// `apiVersion`: `metal3.io/v1alpha1`.
    pub api_version: String,
    /// `kind`: `HostFirmwareSettings`.
    pub kind: String,
    /// Named like its host.
    pub metadata: ObjectMeta,
    /// `spec`: the settings to apply.
    pub spec: HostFirmwareSettingsSpec,
    /// `status`: the current settings, their schema and conditions, written by BMO.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<HostFirmwareSettingsStatus>,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec` of a HostFirmwareSettings: applied while preparing, or servicing when allowed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HostFirmwareSettingsSpec {
    /// The desired settings, by name.
    pub settings: BTreeMap<String, IntOrString>,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Where the schema of the settings is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SchemaReference {
    /// `namespace` of the FirmwareSchema.
    pub namespace: String,
    /// `name` of the FirmwareSchema.
    pub name: String,
}

/// `status` of a HostFirmwareSettings, refreshed by BMO from the provisioner.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HostFirmwareSettingsStatus {
    /// `schema`: the FirmwareSchema describing each setting.
    #[serde(rename = "schema", skip_serializing_if = "Option::is_none")]
    pub firmware_schema: Option<SchemaReference>,
    /// The current settings as the provisioner reads them (never `Password` ones).
    pub settings: BTreeMap<String, String>,
    /// `lastUpdated`: RFC 3339 time the status was last updated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<String>,
    /// `conditions`: `ChangeDetected` and `Valid`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// What one setting may hold. Field names are snake_case, as in the CRD.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingSchema {
    /// `Enumeration`, `String`, `Integer`, `Boolean` or `Password`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub attribute_type: String,
    /// `allowable_values`: the values an `Enumeration` setting accepts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowable_values: Vec<String>,
    /// `lower_bound`: smallest value of an `Integer` setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower_bound: Option<i64>,
    /// `upper_bound`: largest value of an `Integer` setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper_bound: Option<i64>,
    /// `min_length`: shortest length of a `String` setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<i64>,
    /// `max_length`: longest length of a `String` setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<i64>,
    /// `read_only`: the setting cannot be changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// `unique`: the value is particular to this host, e.g. a serial number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique: Option<bool>,
}

impl SettingSchema {
    /// Whether `value` may be set for `name`; the error reads `Setting <name> is invalid, <why>`.
    pub fn validate(&self, name: &str, value: &IntOrString) -> Result<(), String> {
        let invalid = |why: String| Err(format!("Setting {name} is invalid, {why}"));
        if self.read_only == Some(true) {
            return invalid("it is ReadOnly".into());
        }
        if name.contains("Password") {
            return invalid("Password fields can't be set".into());
        }
        let text = value.as_string();
        match self.attribute_type.as_str() {
            "Enumeration" => {
                if self.allowable_values.contains(&text) {
                    Ok(())
                } else {
                    invalid(format!("unknown enumeration value - {text}"))
                }
            }
            "Integer" => {
                if let IntOrString::String(s) = value
                    && s.parse::<i64>().is_err()
                {
                    return invalid(format!("String {s} entered while integer expected"));
                }
                let n = value.as_int();
                if let Some(lo) = self.lower_bound.filter(|&lo| n < lo) {
                    return invalid(format!("integer {n} is below minimum value {lo}"));
                }
                if let Some(hi) = self.upper_bound.filter(|&hi| n > hi) {
                    return invalid(format!("integer {n} is above maximum value {hi}"));
                }
                Ok(())
            }
            "String" => {
                let len = text.len() as i64;
                if let Some(min) = self.min_length.filter(|&min| len < min) {
                    return invalid(format!(
                        "string {text} length is below minimum length {min}"
                    ));
                }
                if let Some(max) = self.max_length.filter(|&max| len > max) {
                    return invalid(format!(
                        "string {text} length is above maximum length {max}"
                    ));
                }
                Ok(())
            }
            "Boolean" => {
                if text == "true" || text == "false" {
                    Ok(())
                } else {
                    invalid(format!("{text} is not a boolean"))
                }
            }
            "Password" => invalid("passwords are immutable".into()),
            // The BIOS registry may not have told the type: anything goes.
            "" => Ok(()),
            other => invalid(format!("unexpected attribute type {other}")),
        }
    }
}

/// A FirmwareSchema: the BIOS settings of a hardware model and what each may hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FirmwareSchema {
    /// `apiVersion`: `metal3.io/v1alpha1`.
    pub api_version: String,
    /// `kind`: `FirmwareSchema`.
    pub kind: String,
    /// Name and namespace, as a HostFirmwareSettings' `status.schema` refers to them.
    pub metadata: ObjectMeta,
    /// `spec`: hardware vendor and model, and the schema of each setting.
    pub spec: FirmwareSchemaSpec,
}

/// `spec` of a FirmwareSchema.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FirmwareSchemaSpec {
    /// `hardwareVendor`: the hardware vendor the schema is for.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub hardware_vendor: String,
    /// `hardwareModel`: the hardware model the schema is for.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub hardware_model: String,
    /// `schema`: each setting's [`SettingSchema`], by setting name.
    pub schema: BTreeMap<String, SettingSchema>,
}

impl FirmwareSchema {
    /// Whether `value` may be set for `name`: the setting must be in the schema, and valid.
    pub fn validate_setting(&self, name: &str, value: &IntOrString) -> Result<(), String> {
        match self.spec.schema.get(name) {
            None => Err(format!(
                "Setting {name} is invalid, it is not in the associated schema"
            )),
            Some(s) => s.validate(name, value),
        }
    }
}

/// Components that may be updated: `bmc`, `bios`, and names starting with this prefix.
pub const NIC_COMPONENT_PREFIX: &str = "nic:";

/// `FirmwareUpdate`: one firmware image to flash onto a component.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FirmwareUpdate {
    /// `component`: `bmc`, `bios`, or a name starting with `nic:`.
    pub component: String,
    /// `url`: where to fetch the firmware image.
    pub url: String,
}

/// `FirmwareComponentStatus`: the versions of one firmware component.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FirmwareComponentStatus {
    /// `component`: `bmc`, `bios`, or a name starting with `nic:`.
    pub component: String,
    /// `initialVersion`: the version found when BMO first read the component.
    pub initial_version: String,
    /// `currentVersion`: the version installed now.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub current_version: String,
    /// `lastVersionFlashed`: the version the last update wrote.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub last_version_flashed: String,
    /// `updatedAt`: RFC 3339 time of the last update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

/// A HostFirmwareComponents: firmware updates for, and versions of, its host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HostFirmwareComponents {
    /// `apiVersion`: `metal3.io/v1alpha1`.
    pub api_version: String,
    /// `kind`: `HostFirmwareComponents`.
    pub kind: String,
    /// Named like its host.
    pub metadata: ObjectMeta,
    /// `spec`: the firmware updates to apply.
    pub spec: HostFirmwareComponentsSpec,
    /// `status`: the components' versions and conditions, written by BMO.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<HostFirmwareComponentsStatus>,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec` of a HostFirmwareComponents: applied while preparing, or servicing when allowed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HostFirmwareComponentsSpec {
    /// `updates`: the firmware to flash, one entry per component.
    pub updates: Vec<FirmwareUpdate>,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `status` of a HostFirmwareComponents, written by BMO.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostFirmwareComponentsStatus {
    /// The updates last handed to the provisioner.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub updates: Vec<FirmwareUpdate>,
    /// `components`: every firmware component the provisioner reports, with its versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<FirmwareComponentStatus>,
    /// `lastUpdated`: RFC 3339 time the status was last updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<String>,
    /// `conditions`: `ChangeDetected` and `Valid`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

impl HostFirmwareComponents {
    /// Every update must name `bmc`, `bios` or a `nic:` component.
    pub fn validate(&self) -> Result<(), String> {
        for u in &self.spec.updates {
            let c = u.component.as_str();
            if c != "bmc" && c != "bios" && !c.starts_with(NIC_COMPONENT_PREFIX) {
                return Err(format!(
                    "component {c} is invalid, only 'bmc', 'bios', or names starting with \
                     '{NIC_COMPONENT_PREFIX}' are allowed as update names"
                ));
            }
        }
        Ok(())
    }
}

/// The policy value that allows changing a provisioned host when it next reboots.
pub const UPDATE_POLICY_ON_REBOOT: &str = "onReboot";

/// A HostUpdatePolicy: whether BMO may change the firmware of its provisioned host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HostUpdatePolicy {
    /// `apiVersion`: `metal3.io/v1alpha1`.
    pub api_version: String,
    /// `kind`: `HostUpdatePolicy`.
    pub kind: String,
    /// Named like its host.
    pub metadata: ObjectMeta,
    /// `spec`: the policies.
    pub spec: HostUpdatePolicySpec,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec` of a HostUpdatePolicy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostUpdatePolicySpec {
    /// `firmwareSettings`: `onPreparing` (the default) or `onReboot` (also by servicing).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub firmware_settings: String,
    /// `firmwareUpdates`: as `firmwareSettings`, for HostFirmwareComponents updates.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub firmware_updates: String,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn int_or_string_round_trips() {
        let s: HostFirmwareSettingsSpec =
            serde_json::from_value(json!({"settings": {"A": 3, "B": "x", "C": "4"}})).unwrap();
        assert_eq!(s.settings["A"], IntOrString::Int(3));
        assert_eq!(s.settings["B"], IntOrString::String("x".into()));
        assert_eq!(s.settings["C"].as_int(), 4);
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            json!({"settings": {"A": 3, "B": "x", "C": "4"}})
        );
        let e =
            serde_json::from_value::<HostFirmwareSettingsSpec>(json!({"settings": {"A": true}}))
                .unwrap_err();
        assert!(
            e.to_string().contains("expected an integer or a string"),
            "{e}"
        );
        assert!(serde_json::from_value::<IntOrString>(json!(1u64 << 40)).is_err());
    }

    #[test]
    fn unknown_fields_are_kept() {
        let v = json!({
            "apiVersion": "metal3.io/v1alpha1",
            "kind": "HostFirmwareComponents",
            "metadata": {"name": "h"},
            "spec": {"updates": [{"component": "bmc", "url": "http://x/bmc.bin"}], "future": 1},
            "status": {"components": [{"component": "bmc", "initialVersion": "1"}], "other": "y"},
            "top": true,
        });
        let hfc: HostFirmwareComponents = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&hfc).unwrap(), v);
    }

    #[test]
    fn settings_validation_messages() {
        let e = |t: &str| SettingSchema {
            attribute_type: t.into(),
            ..Default::default()
        };
        let s = |v: &str| IntOrString::String(v.into());
        let enumeration = SettingSchema {
            allowable_values: vec!["Enabled".into(), "Disabled".into()],
            ..e("Enumeration")
        };
        assert_eq!(enumeration.validate("X", &s("Enabled")), Ok(()));
        assert_eq!(
            enumeration.validate("X", &s("On")).unwrap_err(),
            "Setting X is invalid, unknown enumeration value - On"
        );
        let int = SettingSchema {
            lower_bound: Some(1),
            upper_bound: Some(10),
            ..e("Integer")
        };
        assert_eq!(int.validate("N", &IntOrString::Int(5)), Ok(()));
        assert_eq!(int.validate("N", &s("7")), Ok(()));
        assert_eq!(
            int.validate("N", &s("seven")).unwrap_err(),
            "Setting N is invalid, String seven entered while integer expected"
        );
        assert_eq!(
            int.validate("N", &IntOrString::Int(0)).unwrap_err(),
            "Setting N is invalid, integer 0 is below minimum value 1"
        );
        assert_eq!(
            int.validate("N", &IntOrString::Int(11)).unwrap_err(),
            "Setting N is invalid, integer 11 is above maximum value 10"
        );
        let string = SettingSchema {
            min_length: Some(2),
            max_length: Some(3),
            ..e("String")
        };
        assert_eq!(
            string.validate("S", &s("a")).unwrap_err(),
            "Setting S is invalid, string a length is below minimum length 2"
        );
        assert_eq!(
            string.validate("S", &s("abcd")).unwrap_err(),
            "Setting S is invalid, string abcd length is above maximum length 3"
        );
        assert_eq!(
            e("Boolean").validate("B", &s("yes")).unwrap_err(),
            "Setting B is invalid, yes is not a boolean"
        );
        assert_eq!(e("Boolean").validate("B", &s("true")), Ok(()));
        assert_eq!(
            e("Password").validate("P", &s("x")).unwrap_err(),
            "Setting P is invalid, passwords are immutable"
        );
        assert_eq!(
            e("").validate("AdminPassword", &s("x")).unwrap_err(),
            "Setting AdminPassword is invalid, Password fields can't be set"
        );
        let ro = SettingSchema {
            read_only: Some(true),
            ..e("String")
        };
        assert_eq!(
            ro.validate("R", &s("x")).unwrap_err(),
            "Setting R is invalid, it is ReadOnly"
        );
        assert_eq!(
            e("Float").validate("F", &s("1.0")).unwrap_err(),
            "Setting F is invalid, unexpected attribute type Float"
        );
        let schema = FirmwareSchema::default();
        assert_eq!(
            schema.validate_setting("Z", &s("1")).unwrap_err(),
            "Setting Z is invalid, it is not in the associated schema"
        );
    }

    #[test]
    fn component_names() {
        let mut hfc = HostFirmwareComponents::default();
        for c in ["bmc", "bios", "nic:eth0"] {
            hfc.spec.updates = vec![FirmwareUpdate {
                component: c.into(),
                url: "http://x".into(),
            }];
            assert_eq!(hfc.validate(), Ok(()));
        }
        hfc.spec.updates[0].component = "raid".into();
        assert_eq!(
            hfc.validate().unwrap_err(),
            "component raid is invalid, only 'bmc', 'bios', or names starting with 'nic:' are allowed as update names"
        );
    }
}
