//! HardwareDetails (`hardwaredata_types.go`) and the HardwareData object.

use crate::meta::{Extra, ObjectMeta, is_default};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `HardwareDetails`: what inspection found (`status.hardware`, a HardwareData's `spec`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HardwareDetails {
    /// `systemVendor`: manufacturer, product name and serial number of the system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_vendor: Option<HardwareSystemVendor>,
    /// `firmware`: the system firmware (BIOS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<Firmware>,
    /// `ramMebibytes`: memory in MiB.
    #[serde(default, skip_serializing_if = "is_default")]
    pub ram_mebibytes: i64,
    /// `nics`: network interfaces; a dual-stack NIC is listed twice, once per IP address.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nics: Vec<Nic>,
    /// `storage`: disks and other storage devices.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub storage: Vec<Storage>,
    /// `cpu`: the processors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Cpu>,
    /// `hostname`: the host's name when it was inspected.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hostname: String,
}

/// `HardwareSystemVendor`: identity of the system as a whole.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HardwareSystemVendor {
    /// `manufacturer`: the system's maker.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub manufacturer: String,
    /// `productName`: the system's model.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub product_name: String,
    /// `serialNumber`: the system's serial number.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub serial_number: String,
}

/// `Firmware`: the host's system firmware.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Firmware {
    /// `bios`: the BIOS.
    pub bios: Bios,
}

/// `BIOS`: the BIOS found by inspection.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bios {
    /// `date`: release or build date.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub date: String,
    /// `vendor`: BIOS vendor.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub vendor: String,
    /// `version`: BIOS version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
}

/// `NIC`: one network interface found by inspection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Nic {
    /// `name`: interface name, e.g. `eth0`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// `model`: vendor and product IDs, e.g. `0x8086 0x1572`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// `mac`: MAC address.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mac: String,
    /// `ip`: the interface's IPv4 or IPv6 address, if it has one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ip: String,
    /// `speedGbps`: link speed in Gbit/s.
    #[serde(default, skip_serializing_if = "is_default")]
    pub speed_gbps: i64,
    /// `vlans`: VLANs available on the interface.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vlans: Vec<Vlan>,
    /// `vlanId`: the untagged VLAN's ID (0 to 4094).
    #[serde(default, rename = "vlanId", skip_serializing_if = "is_default")]
    pub vlan_id: i64,
    /// `pxe`: whether the NIC can PXE boot.
    #[serde(default, skip_serializing_if = "is_default")]
    pub pxe: bool,
    /// `lldp`: what the switch at the other end announces over LLDP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lldp: Option<Lldp>,
    /// `pciAddress`: the NIC's PCI address.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub pci_address: String,
}

/// `VLAN`: one 802.1Q VLAN.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Vlan {
    /// `id`: VLAN ID, 0 to 4094.
    pub id: i64,
    /// `name`: VLAN name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
}

/// `LLDP`: Link Layer Discovery Protocol data received on a NIC.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Lldp {
    /// `switchID`: the switch's chassis ID.
    #[serde(rename = "switchID", skip_serializing_if = "String::is_empty")]
    pub switch_id: String,
    /// `portID`: the switch port's ID.
    #[serde(rename = "portID", skip_serializing_if = "String::is_empty")]
    pub port_id: String,
    /// `switchSystemName`: the switch's system name.
    #[serde(rename = "switchSystemName", skip_serializing_if = "String::is_empty")]
    pub switch_system_name: String,
}

/// `Storage`: one disk or other storage device found by inspection.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Storage {
    /// `name`: Linux device name, a stable one when there is one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// `alternateNames`: other device names such as `/dev/sda`; may change across reboots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternate_names: Vec<String>,
    /// `rotational`: spinning storage; `type` is preferred.
    #[serde(default, skip_serializing_if = "is_default")]
    pub rotational: bool,
    /// `type`: `HDD`, `SSD` or `NVME`.
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
    /// `sizeBytes`: size in bytes.
    #[serde(default, skip_serializing_if = "is_default")]
    pub size_bytes: i64,
    /// `vendor`: the device's vendor.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub vendor: String,
    /// `model`: the device's model.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// `serialNumber`: the device's serial number.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub serial_number: String,
    /// `wwn`: the device's World Wide Name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub wwn: String,
    /// `wwnVendorExtension`: the vendor extension of the WWN.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub wwn_vendor_extension: String,
    /// `wwnWithExtension`: the WWN with the vendor extension appended.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub wwn_with_extension: String,
    /// `hctl`: SCSI address (host:channel:target:lun).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hctl: String,
}

/// `CPU`: the host's processors.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cpu {
    /// `arch`: architecture, e.g. `x86_64`; BMO copies it into an empty `spec.architecture`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub arch: String,
    /// `model`: processor model name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// `clockMegahertz`: clock speed in MHz.
    #[serde(default, skip_serializing_if = "is_default")]
    pub clock_megahertz: f64,
    /// `flags`: CPU feature flags, e.g. `vmx`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// `count`: number of CPUs.
    #[serde(default, skip_serializing_if = "is_default")]
    pub count: i64,
}

/// HardwareData: the inspection result as an object of its own (same name as the host).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HardwareData {
    /// `apiVersion`: `metal3.io/v1alpha1`.
    pub api_version: String,
    /// `kind`: `HardwareData`.
    pub kind: String,
    /// Named like its host; BMO holds it with the `baremetalhost.metal3.io/hardwareData` finalizer.
    pub metadata: ObjectMeta,
    /// `spec`: the hardware details.
    pub spec: HardwareDataSpec,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec` of a HardwareData.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HardwareDataSpec {
    /// `hardware`: what inspection found, shared with the host's `status.hardware`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<Arc<HardwareDetails>>,
}
