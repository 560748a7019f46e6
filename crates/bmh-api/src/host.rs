//! `BareMetalHost` (metal3.io/v1alpha1): spec and status, field for field as BMO defines them.

use crate::enums::*;
use crate::hardware::HardwareDetails;
use crate::meta::{Extra, ObjectMeta, is_default};
use crate::word::Word;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `apiVersion` of a BareMetalHost and of every metal3.io object in this crate.
pub const API_VERSION: &str = "metal3.io/v1alpha1";
/// `kind` of a BareMetalHost.
pub const KIND: &str = "BareMetalHost";

/// A BareMetalHost (`bmh`): one physical server that BMO manages through its BMC.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BareMetalHost {
    /// `apiVersion`: `metal3.io/v1alpha1`.
    #[serde(default)]
    pub api_version: String,
    /// `kind`: `BareMetalHost`.
    #[serde(default)]
    pub kind: String,
    /// Name, namespace, control annotations and finalizers.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// `spec`: the desired state, written by the user.
    #[serde(default)]
    pub spec: BareMetalHostSpec,
    /// `status`: what BMO observed and did; absent on a new host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<BareMetalHostStatus>,
    /// Top-level fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec` of a BareMetalHost (`BareMetalHostSpec`): the desired state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BareMetalHostSpec {
    /// `taints`: deprecated and never implemented; kept as raw JSON.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<serde_json::Value>,
    /// `bmc`: how to reach the host's BMC; without address nor credentials, `unmanaged`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bmc: Option<BmcDetails>,
    /// `raid`: RAID to build while `preparing`; `None` leaves it alone. Boxed: rarely set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raid: Option<Box<RaidConfig>>,
    /// `firmware`: deprecated BIOS switches, rejected by the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<FirmwareConfig>,
    /// `hardwareProfile`: deprecated profile name; supplies default root device hints.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hardware_profile: String,
    /// `rootDeviceHints`: how to pick the root disk. Boxed: rarely set, and large.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_device_hints: Option<Box<RootDeviceHints>>,
    /// `bootMode`: `UEFI` (also when empty), `UEFISecureBoot` or `legacy`.
    #[serde(default, skip_serializing_if = "BootMode::is_unset")]
    pub boot_mode: BootMode,
    /// `bootMACAddress`: MAC of the NIC the host boots from for provisioning.
    #[serde(
        default,
        rename = "bootMACAddress",
        skip_serializing_if = "String::is_empty"
    )]
    pub boot_mac_address: String,
    /// `online`, required: whether the host should be powered on.
    pub online: bool,
    /// `consumerRef`: what uses the host. Boxed: only its name is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumer_ref: Option<Box<serde_json::Value>>,
    /// `image`: the image to deploy; setting it (with `online`) starts provisioning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Image>,
    /// `userData`: Secret (key `userData`, else `value`) for the config drive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_data: Option<SecretReference>,
    /// `preprovisioningNetworkDataName`: Secret with network data for the ramdisk.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub preprovisioning_network_data_name: String,
    /// `networkData`: Secret (key `networkData`, else `value`) for the config drive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_data: Option<SecretReference>,
    /// `metaData`: Secret (key `metaData`, else `value`) for the config drive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta_data: Option<SecretReference>,
    /// `description`: free text to help people identify the host.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// `externallyProvisioned`: deployed by something else; BMO only manages its power.
    #[serde(default, skip_serializing_if = "is_default")]
    pub externally_provisioned: bool,
    /// `automatedCleaningMode`: `metadata` (the CRD default) or `disabled`.
    #[serde(default, skip_serializing_if = "AutomatedCleaningMode::is_unset")]
    pub automated_cleaning_mode: AutomatedCleaningMode,
    /// `customDeploy`: a deploy step of a custom ramdisk, run instead of writing an image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_deploy: Option<CustomDeploy>,
    /// `architecture`: CPU architecture, e.g. `x86_64`; filled from HardwareData when empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub architecture: String,
    /// `disablePowerOff`: never power the host off, reboot it instead.
    #[serde(default, skip_serializing_if = "is_default")]
    pub disable_power_off: bool,
    /// `inspectionMode`: `disabled`, `agent` (also when empty) or `fast`.
    #[serde(default, skip_serializing_if = "InspectionMode::is_unset")]
    pub inspection_mode: InspectionMode,
    /// `networkInterfaces`: switch-port configuration per NIC.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network_interfaces: Vec<NetworkInterface>,
    /// Spec fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `spec.bmc` (`BMCDetails`): where the host's BMC is and which Secret logs into it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BmcDetails {
    /// `address`: the BMC's URL; its scheme selects the driver (none: IPMI).
    pub address: String,
    /// `credentialsName`: Secret in the host's namespace with keys `username` and `password`.
    pub credentials_name: String,
    /// `disableCertificateVerification`: skip checking the BMC's TLS certificate.
    #[serde(skip_serializing_if = "is_default")]
    pub disable_certificate_verification: bool,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `RootDeviceHints`: what the root disk must look like; the disk chosen matches every hint set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootDeviceHints {
    /// `deviceName`: a Linux device name or a by-path link to it; exact match.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub device_name: String,
    /// `hctl`: SCSI address such as `0:0:0:0`; exact match.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hctl: String,
    /// `model`: vendor-specific device model; substring match.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// `vendor`: vendor or manufacturer of the device; substring match.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub vendor: String,
    /// `serialNumber`: the device's serial number; exact match.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub serial_number: String,
    /// `minSizeGigabytes`: smallest acceptable size in GB (not negative; 0 sets no minimum).
    #[serde(default, skip_serializing_if = "is_default")]
    pub min_size_gigabytes: i64,
    /// `wwn`: the device's World Wide Name; exact match.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub wwn: String,
    /// `wwnWithExtension`: the WWN with the vendor extension appended; exact match.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub wwn_with_extension: String,
    /// `wwnVendorExtension`: the vendor extension of the WWN; exact match.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub wwn_vendor_extension: String,
    /// `rotational`: `true` for spinning disks, `false` for solid-state ones; unset takes either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
}

/// `RAIDConfig` (`spec.raid`, `status.provisioning.raid`): hardware or software RAID volumes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RaidConfig {
    /// `hardwareRAIDVolumes`: `None` leaves hardware RAID alone; `Some([])` clears it.
    #[serde(
        rename = "hardwareRAIDVolumes",
        skip_serializing_if = "Option::is_none"
    )]
    pub hardware_raid_volumes: Option<Vec<HardwareRaidVolume>>,
    /// `softwareRAIDVolumes`: one or two software RAID devices, the first of level `1`.
    #[serde(
        rename = "softwareRAIDVolumes",
        skip_serializing_if = "Option::is_none"
    )]
    pub software_raid_volumes: Option<Vec<SoftwareRaidVolume>>,
}

/// `HardwareRAIDVolume`: one logical disk the RAID controller is to build.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HardwareRaidVolume {
    /// `sizeGibibytes`: size in GiB; unset or 0 takes the disks' whole capacity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_gibibytes: Option<i64>,
    /// `level`: `0`, `1`, `2`, `5`, `6`, `1+0`, `5+0` or `6+0`; required.
    pub level: String,
    /// `name`: volume name, unique on the host, at most 64 characters; generated when empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// `rotational`: only spinning (`true`) or solid-state (`false`) disks; unset: any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
    /// `numberOfPhysicalDisks`: how many disks; defaults to the level's minimum.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number_of_physical_disks: Option<i64>,
    /// `controller`: name of the RAID controller to use; required with `physicalDisks`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub controller: String,
    /// `physicalDisks`: disks to build the volume from, named in the controller's own format.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub physical_disks: Vec<String>,
}

/// `SoftwareRAIDVolume`: one software RAID device built on the host's disks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct SoftwareRaidVolume {
    /// `rootVolume`: install onto this volume (level `1`, at most one).
    #[serde(skip_serializing_if = "is_default")]
    pub root_volume: bool,
    /// `sizeGibibytes`: size in GiB; unset or 0 takes the disks' whole capacity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_gibibytes: Option<i64>,
    /// `level`: `0`, `1` or `1+0`; required.
    pub level: String,
    /// `physicalDisks`: root-device-style hints selecting the member disks (at least two).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub physical_disks: Vec<RootDeviceHints>,
}

/// `FirmwareConfig`: deprecated BIOS switches, kept so that such files still load.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FirmwareConfig {
    /// `virtualizationEnabled`: hardware virtualisation support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtualization_enabled: Option<bool>,
    /// `simultaneousMultithreadingEnabled`: let one core appear as several logical processors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simultaneous_multithreading_enabled: Option<bool>,
    /// `sriovEnabled`: SR-IOV, letting a PCIe device present virtual instances of itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sriov_enabled: Option<bool>,
}

/// `Image`: an image to deploy, or the one deployed.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Image {
    /// `url`: where the image is; always written, even when empty, as BMO does.
    pub url: String,
    /// `checksum`: required except for `live-iso`; empty for `oci://` images.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub checksum: String,
    /// `checksumType`: `md5`, `sha256`, `sha512`, or `auto` (also when empty).
    #[serde(skip_serializing_if = "ChecksumType::is_unset")]
    pub checksum_type: ChecksumType,
    /// `format`: `raw`, `qcow2`, `vdi`, `vmdk` or `live-iso`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub format: String,
    /// `ociAuthSecretName`: docker-config Secret with registry credentials (`oci://` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oci_auth_secret_name: Option<String>,
}

impl Image {
    /// BMO's `IsLiveISO`: `format` is `live-iso`.
    pub fn is_live_iso(&self) -> bool {
        self.format == "live-iso"
    }

    /// BMO's `IsOCI`: the URL starts with `oci://`, in any case.
    pub fn is_oci(&self) -> bool {
        // `get`, not slicing: byte 6 may fall inside a multi-byte character.
        self.url
            .get(..6)
            .is_some_and(|p| p.eq_ignore_ascii_case("oci://"))
    }
}

/// `CustomDeploy`: a custom deploy procedure.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CustomDeploy {
    /// `method`: name of the deploy step, specific to the custom deploy ramdisk; required.
    pub method: String,
}

/// core/v1 `SecretReference`: a Secret by name and namespace.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretReference {
    /// Name of the Secret.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Namespace of the Secret; empty means the host's own.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
}

/// `NetworkInterface` (`spec.networkInterfaces[]`): switch-port settings of one NIC.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkInterface {
    /// `name`: the NIC's name as inspected, e.g. `eth0`; exclusive with `macAddress`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// `macAddress`: the NIC's MAC as inspected; exclusive with `name`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mac_address: String,
    /// `hostNetworkAttachment`, `switchPort` and other fields, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `status` of a BareMetalHost: what BMO observed and did, saved at the end of a pass.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BareMetalHostStatus {
    /// `operationalStatus`: `OK`, `discovered`, `error`, `delayed`, `detached` or `servicing`.
    pub operational_status: OperationalStatus,
    /// `errorType`: class of the last failure; empty when clear.
    #[serde(skip_serializing_if = "ErrorType::is_none")]
    pub error_type: ErrorType,
    /// `lastUpdated`: RFC 3339 time of the last status save; absent: no status yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<String>,
    /// `hardwareProfile`: the deprecated hardware profile matched at registration.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub hardware_profile: String,
    /// `hardware`: what inspection found; shared, as it never changes once inspected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hardware: Option<Arc<HardwareDetails>>,
    /// `provisioning`: the provisioning state and what has been applied to the host.
    pub provisioning: ProvisionStatus,
    #[serde(skip_serializing_if = "CredentialsStatus::is_empty")]
    /// `goodCredentials`: the BMC Secret, and its version, that registration last succeeded with.
    pub good_credentials: CredentialsStatus,
    #[serde(skip_serializing_if = "CredentialsStatus::is_empty")]
    /// `triedCredentials`: the BMC Secret, and its version, last handed to the provisioner.
    pub tried_credentials: CredentialsStatus,
    /// `errorMessage`: text of the last error; empty when clear.
    pub error_message: String,
    /// `poweredOn`: power state last read from the provisioner.
    pub powered_on: bool,
    #[serde(skip_serializing_if = "OperationHistory::is_empty")]
    /// `operationHistory`: when each operation last started and ended.
    pub operation_history: OperationHistory,
    /// `errorCount`: errors since the last successful operation; drives the retry backoff.
    pub error_count: i64,
    /// `provisioningFailCount`: provisioning failures in a row for the current image.
    pub provisioning_fail_count: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// `lastAttemptedImage`: `spec.image` at the last provisioning attempt.
    pub last_attempted_image: Option<Image>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    /// `conditions`: recomputed at the end of every successful pass.
    pub conditions: Vec<Condition>,
    /// Status fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `status.provisioning` (`ProvisionStatus`): the provisioning state and what was applied.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ProvisionStatus {
    /// `state`: the state machine's state.
    pub state: ProvisioningState,
    /// `ID`: the host's ID in the provisioner (the Ironic node UUID); empty until registered.
    #[serde(rename = "ID")]
    pub id: String,
    /// `image`: the last image provisioned successfully; empty URL when none.
    pub image: Image,
    /// `rootDeviceHints`: the hints in effect, from the spec or else the hardware profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_device_hints: Option<Arc<RootDeviceHints>>,
    /// `bootMode`: the boot mode saved on entering registering, inspecting or provisioning.
    #[serde(skip_serializing_if = "BootMode::is_unset")]
    pub boot_mode: BootMode,
    /// `raid`: the RAID configuration applied while preparing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raid: Option<RaidConfig>,
    /// `firmware`: deprecated; always empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub firmware: Option<FirmwareConfig>,
    /// `customDeploy`: the custom deploy applied to the host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_deploy: Option<CustomDeploy>,
    /// Fields not modelled here, kept as read.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `CredentialsStatus`: a BMC Secret and the version of it BMO saw.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CredentialsStatus {
    /// `credentials`: name and namespace of the Secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<SecretReference>,
    /// `credentialsVersion`: the Secret's `resourceVersion` at the time.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub credentials_version: String,
}

impl CredentialsStatus {
    /// Neither a Secret nor a version: left out when written.
    pub fn is_empty(&self) -> bool {
        self.credentials.is_none() && self.credentials_version.is_empty()
    }

    /// BMO's `CredentialsStatus.Match`: same secret name, namespace and version.
    pub fn matches(&self, namespace: &str, name: &str, version: &str) -> bool {
        self.credentials.as_ref().is_some_and(|r| {
            r.name == name && r.namespace == namespace && self.credentials_version == version
        })
    }
}

/// `OperationMetric`: when one operation started and ended.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationMetric {
    /// `start`: RFC 3339 time the operation started, set on entering its state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// `end`: RFC 3339 time it ended, set on leaving that state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<String>,
}

impl OperationMetric {
    /// Neither time is set: left out when written.
    pub fn is_empty(&self) -> bool {
        self.start.is_none() && self.end.is_none()
    }
}

/// `OperationHistory`: the timing of each operation BMO tracks.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperationHistory {
    /// `register`: registration.
    #[serde(default, skip_serializing_if = "OperationMetric::is_empty")]
    pub register: OperationMetric,
    /// `inspect`: inspection.
    #[serde(default, skip_serializing_if = "OperationMetric::is_empty")]
    pub inspect: OperationMetric,
    /// `provision`: provisioning.
    #[serde(default, skip_serializing_if = "OperationMetric::is_empty")]
    pub provision: OperationMetric,
    /// `deprovision`: deprovisioning.
    #[serde(default, skip_serializing_if = "OperationMetric::is_empty")]
    pub deprovision: OperationMetric,
}

impl OperationHistory {
    /// No operation has a time: left out when written.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// metav1.Condition.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// `type`: what the condition is about, e.g. `Ready`; unique within the list.
    #[serde(rename = "type")]
    pub type_: Word,
    /// `status`: `True`, `False` or `Unknown`.
    pub status: Word,
    /// `observedGeneration`: the object's `metadata.generation` when the condition was set.
    #[serde(default, skip_serializing_if = "is_default")]
    pub observed_generation: i64,
    /// `lastTransitionTime`: RFC 3339 time `status` last changed.
    #[serde(default)]
    pub last_transition_time: Word,
    /// `reason`: a CamelCase word for why, e.g. `NotProvisioned`.
    #[serde(default)]
    pub reason: Word,
    /// `message`: human-readable details; may be empty.
    #[serde(default)]
    pub message: String,
}

/// `Clone` with a field-by-field `clone_from`, so copying into a spare status reuses its buffers.
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
