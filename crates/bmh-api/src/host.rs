//! `BareMetalHost` (metal3.io/v1alpha1): spec and status, field for field as BMO defines them.

use crate::enums::*;
use crate::hardware::HardwareDetails;
use crate::meta::{Extra, ObjectMeta};
use crate::word::Word;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub const API_VERSION: &str = "metal3.io/v1alpha1";
pub const KIND: &str = "BareMetalHost";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BareMetalHost {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: BareMetalHostSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<BareMetalHostStatus>,
    #[serde(flatten)]
    pub extra: Extra,
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BareMetalHostSpec {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bmc: Option<BmcDetails>,
    /// Boxed, as the hints below: rarely set, and 48 bytes inline in every host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raid: Option<Box<RaidConfig>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<FirmwareConfig>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hardware_profile: String,
    /// Boxed: rarely set, and over 200 bytes inline in every host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_device_hints: Option<Box<RootDeviceHints>>,
    #[serde(default, skip_serializing_if = "BootMode::is_unset")]
    pub boot_mode: BootMode,
    #[serde(
        default,
        rename = "bootMACAddress",
        skip_serializing_if = "String::is_empty"
    )]
    pub boot_mac_address: String,
    /// Required by the CRD: the desired power state.
    pub online: bool,
    /// Boxed: a JSON tree inline is 72 bytes, and bmhctl only reads its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer_ref: Option<Box<serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Image>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<SecretReference>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub preprovisioning_network_data_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_data: Option<SecretReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta_data: Option<SecretReference>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub externally_provisioned: bool,
    #[serde(default, skip_serializing_if = "AutomatedCleaningMode::is_unset")]
    pub automated_cleaning_mode: AutomatedCleaningMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_deploy: Option<CustomDeploy>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub architecture: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_power_off: bool,
    #[serde(default, skip_serializing_if = "InspectionMode::is_unset")]
    pub inspection_mode: InspectionMode,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network_interfaces: Vec<NetworkInterface>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BmcDetails {
    #[serde(default)]
    pub address: String,
    #[serde(default)]
    pub credentials_name: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disable_certificate_verification: bool,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootDeviceHints {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub device_name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hctl: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub vendor: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub serial_number: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_size_gigabytes: i64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub wwn: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub wwn_with_extension: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub wwn_vendor_extension: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RaidConfig {
    /// `None` leaves hardware RAID alone; `Some([])` clears it.
    #[serde(
        default,
        rename = "hardwareRAIDVolumes",
        skip_serializing_if = "Option::is_none"
    )]
    pub hardware_raid_volumes: Option<Vec<HardwareRaidVolume>>,
    #[serde(
        default,
        rename = "softwareRAIDVolumes",
        skip_serializing_if = "Option::is_none"
    )]
    pub software_raid_volumes: Option<Vec<SoftwareRaidVolume>>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HardwareRaidVolume {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_gibibytes: Option<i64>,
    #[serde(default)]
    pub level: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_of_physical_disks: Option<i64>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub controller: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub physical_disks: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SoftwareRaidVolume {
    #[serde(default, skip_serializing_if = "is_false")]
    pub root_volume: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_gibibytes: Option<i64>,
    #[serde(default)]
    pub level: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub physical_disks: Vec<RootDeviceHints>,
}

/// Deprecated; the webhook rejects it. Kept so that such files still load and validate reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FirmwareConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtualization_enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simultaneous_multithreading_enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sriov_enabled: Option<bool>,
}

#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    /// Always written, even when empty, as BMO does (`status.provisioning.image.url: ""`).
    #[serde(default)]
    pub url: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub checksum: String,
    #[serde(default, skip_serializing_if = "ChecksumType::is_unset")]
    pub checksum_type: ChecksumType,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub format: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oci_auth_secret_name: Option<String>,
}

impl Image {
    pub fn is_live_iso(&self) -> bool {
        self.format == "live-iso"
    }

    pub fn is_oci(&self) -> bool {
        // `get`, not slicing: byte 6 may fall inside a multi-byte character.
        self.url
            .get(..6)
            .is_some_and(|p| p.eq_ignore_ascii_case("oci://"))
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomDeploy {
    #[serde(default)]
    pub method: String,
}

#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretReference {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkInterface {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mac_address: String,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BareMetalHostStatus {
    #[serde(default)]
    pub operational_status: OperationalStatus,
    #[serde(default, skip_serializing_if = "ErrorType::is_none")]
    pub error_type: ErrorType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hardware_profile: String,
    /// Shared: the details do not change once inspected, are the biggest field, and a status
    /// is copied on most passes that change it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<Arc<HardwareDetails>>,
    #[serde(default)]
    pub provisioning: ProvisionStatus,
    #[serde(default, skip_serializing_if = "CredentialsStatus::is_empty")]
    pub good_credentials: CredentialsStatus,
    #[serde(default, skip_serializing_if = "CredentialsStatus::is_empty")]
    pub tried_credentials: CredentialsStatus,
    #[serde(default)]
    pub error_message: String,
    #[serde(default)]
    pub powered_on: bool,
    #[serde(default, skip_serializing_if = "OperationHistory::is_empty")]
    pub operation_history: OperationHistory,
    #[serde(default)]
    pub error_count: i64,
    #[serde(default)]
    pub provisioning_fail_count: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_attempted_image: Option<Image>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProvisionStatus {
    #[serde(default)]
    pub state: ProvisioningState,
    #[serde(default, rename = "ID")]
    pub id: String,
    #[serde(default)]
    pub image: Image,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_device_hints: Option<Arc<RootDeviceHints>>,
    #[serde(default, skip_serializing_if = "BootMode::is_unset")]
    pub boot_mode: BootMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raid: Option<RaidConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<FirmwareConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_deploy: Option<CustomDeploy>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CredentialsStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<SecretReference>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub credentials_version: String,
}

impl CredentialsStatus {
    pub fn is_empty(&self) -> bool {
        self.credentials.is_none() && self.credentials_version.is_empty()
    }

    /// BMO's `CredentialsStatus.Match`: same secret name, namespace and version.
    pub fn matches(&self, namespace: &str, name: &str, version: &str) -> bool {
        match &self.credentials {
            Some(r) => {
                r.name == name && r.namespace == namespace && self.credentials_version == version
            }
            None => false,
        }
    }
}

#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationMetric {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<String>,
}

impl OperationMetric {
    pub fn is_empty(&self) -> bool {
        self.start.is_none() && self.end.is_none()
    }
}

#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationHistory {
    #[serde(default, skip_serializing_if = "OperationMetric::is_empty")]
    pub register: OperationMetric,
    #[serde(default, skip_serializing_if = "OperationMetric::is_empty")]
    pub inspect: OperationMetric,
    #[serde(default, skip_serializing_if = "OperationMetric::is_empty")]
    pub provision: OperationMetric,
    #[serde(default, skip_serializing_if = "OperationMetric::is_empty")]
    pub deprovision: OperationMetric,
}

impl OperationHistory {
    pub fn is_empty(&self) -> bool {
        self.register.is_empty()
            && self.inspect.is_empty()
            && self.provision.is_empty()
            && self.deprovision.is_empty()
    }
}

/// metav1.Condition.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: Word,
    pub status: Word,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    #[serde(default)]
    pub last_transition_time: Word,
    #[serde(default)]
    pub reason: Word,
    #[serde(default)]
    pub message: String,
}

/// `Clone` field by field, with a `clone_from` that clones each field into the one it replaces:
/// a pass copies its host's status before first changing it, into a status it keeps for that
/// (see bmhctl's machine), so the copy reuses the text buffers of the previous host's status
/// rather than allocating its own. (A derived `clone_from` clones the whole value afresh.)
macro_rules! clone_field_by_field {
    ($ty:ident { $($field:ident),* $(,)? }) => {
        impl Clone for $ty {
            fn clone(&self) -> Self {
                Self { $($field: self.$field.clone()),* }
            }

            fn clone_from(&mut self, source: &Self) {
                $(self.$field.clone_from(&source.$field);)*
            }
        }
    };
}

clone_field_by_field!(Image {
    url,
    checksum,
    checksum_type,
    format,
    oci_auth_secret_name,
});
clone_field_by_field!(SecretReference { name, namespace });
clone_field_by_field!(BareMetalHostStatus {
    operational_status,
    error_type,
    last_updated,
    hardware_profile,
    hardware,
    provisioning,
    good_credentials,
    tried_credentials,
    error_message,
    powered_on,
    operation_history,
    error_count,
    provisioning_fail_count,
    last_attempted_image,
    conditions,
    extra,
});
clone_field_by_field!(ProvisionStatus {
    state,
    id,
    image,
    root_device_hints,
    boot_mode,
    raid,
    firmware,
    custom_deploy,
    extra,
});
clone_field_by_field!(CredentialsStatus {
    credentials,
    credentials_version,
});
clone_field_by_field!(OperationMetric { start, end });
clone_field_by_field!(OperationHistory {
    register,
    inspect,
    provision,
    deprovision,
});
clone_field_by_field!(Condition {
    type_,
    status,
    observed_generation,
    last_transition_time,
    reason,
    message,
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_url_with_multibyte_characters_is_not_oci() {
        let image = |url: &str| Image {
            url: url.into(),
            ..Default::default()
        };
        assert!(!image("é日本").is_oci());
        assert!(!image("oci:/").is_oci());
        assert!(image("OCI://registry/x").is_oci());
    }

    /// A status copied into another gives an equal status, and reuses the text of the one it
    /// replaces when that text is as long.
    #[test]
    fn clone_from_copies_every_field_into_the_buffers_it_replaces() {
        let status = |name: &str, when: &str| BareMetalHostStatus {
            error_message: format!("error of {name}"),
            last_updated: Some(when.to_string()),
            provisioning: ProvisionStatus {
                id: format!("id-{name}"),
                image: Image {
                    url: format!("http://images/{name}.qcow2"),
                    ..Default::default()
                },
                ..Default::default()
            },
            good_credentials: CredentialsStatus {
                credentials: Some(SecretReference {
                    name: format!("{name}-bmc-secret"),
                    namespace: "default".into(),
                }),
                credentials_version: "1".into(),
            },
            operation_history: OperationHistory {
                register: OperationMetric {
                    start: Some(when.to_string()),
                    end: Some(when.to_string()),
                },
                ..Default::default()
            },
            conditions: vec![Condition {
                type_: Word::from("Ready"),
                status: Word::from("True"),
                last_transition_time: Word::from(when),
                message: format!("{name} is ready"),
                ..Default::default()
            }],
            powered_on: true,
            error_count: 3,
            ..Default::default()
        };
        let source = status("host-1", "2026-01-01T00:00:01Z");
        let mut copy = status("host-2", "2026-01-01T00:00:02Z");
        let url = copy.provisioning.image.url.as_ptr();
        let message = copy.conditions[0].message.as_ptr();
        copy.clone_from(&source);
        assert_eq!(copy, source);
        assert_eq!(copy.clone(), source);
        assert_eq!(copy.provisioning.image.url.as_ptr(), url);
        assert_eq!(copy.conditions[0].message.as_ptr(), message);
        let mut empty = BareMetalHostStatus::default();
        empty.clone_from(&source);
        assert_eq!(empty, source);
        copy.clone_from(&BareMetalHostStatus::default());
        assert_eq!(copy, BareMetalHostStatus::default());
    }

    /// Every host is held for the whole run: 2,712 bytes inline before the unknown fields and
    /// the consumer reference took one pointer each.
    #[test]
    fn a_host_is_small_inline() {
        let sizes = [
            ("BareMetalHost", std::mem::size_of::<BareMetalHost>(), 2264),
            (
                "BareMetalHostSpec",
                std::mem::size_of::<BareMetalHostSpec>(),
                872,
            ),
            (
                "BareMetalHostStatus",
                std::mem::size_of::<BareMetalHostStatus>(),
                1128,
            ),
            ("ObjectMeta", std::mem::size_of::<ObjectMeta>(), 208),
        ];
        for (name, size, bound) in sizes {
            eprintln!("{name}: {size} bytes");
            assert!(size <= bound, "{name} is {size} bytes, more than {bound}");
        }
    }
}
