//! HardwareDetails (`hardwaredata_types.go`) and the HardwareData object.

use crate::meta::{Extra, ObjectMeta};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

fn is_false(b: &bool) -> bool {
    !*b
}
fn is_zero_i(v: &i64) -> bool {
    *v == 0
}
fn is_zero_f(v: &f64) -> bool {
    *v == 0.0
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HardwareDetails {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_vendor: Option<HardwareSystemVendor>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<Firmware>,
    #[serde(default, skip_serializing_if = "is_zero_i")]
    pub ram_mebibytes: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nics: Vec<Nic>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub storage: Vec<Storage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Cpu>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hostname: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HardwareSystemVendor {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub manufacturer: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub product_name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub serial_number: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Firmware {
    #[serde(default)]
    pub bios: Bios,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bios {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub date: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub vendor: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Nic {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mac: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ip: String,
    #[serde(default, skip_serializing_if = "is_zero_i")]
    pub speed_gbps: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vlans: Vec<Vlan>,
    #[serde(default, rename = "vlanId", skip_serializing_if = "is_zero_i")]
    pub vlan_id: i64,
    #[serde(default, skip_serializing_if = "is_false")]
    pub pxe: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lldp: Option<Lldp>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub pci_address: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Vlan {
    #[serde(default)]
    pub id: i64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]

pub struct Lldp {
    #[serde(default, rename = "switchID", skip_serializing_if = "String::is_empty")]
    pub switch_id: String,
    #[serde(default, rename = "portID", skip_serializing_if = "String::is_empty")]
    pub port_id: String,
    #[serde(
        default,
        rename = "switchSystemName",
        skip_serializing_if = "String::is_empty"
    )]
    pub switch_system_name: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Storage {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternate_names: Vec<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub rotational: bool,
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "is_zero_i")]
    pub size_bytes: i64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub vendor: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub serial_number: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub wwn: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub wwn_vendor_extension: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub wwn_with_extension: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hctl: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cpu {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub arch: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    #[serde(default, skip_serializing_if = "is_zero_f")]
    pub clock_megahertz: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    #[serde(default, skip_serializing_if = "is_zero_i")]
    pub count: i64,
}

/// HardwareData: the inspection result as an object of its own (same name as the host).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HardwareData {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: HardwareDataSpec,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HardwareDataSpec {
    /// Shared with the host's `status.hardware`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<Arc<HardwareDetails>>,
}
