//! The data a provisioner is given and returns (BMO `provisioner.go:27-137, 255-271`).

use bmh_api::{
    AutomatedCleaningMode, BootMode, CustomDeploy, HardwareData, Image, InspectionMode, ObjectKey,
    OperationalStatus, ProvisioningState, RaidConfig, RootDeviceHints,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// What an operation reports (BMO's `provisioner.Result`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpResult {
    /// Still in progress: call again after `requeue_after`.
    pub dirty: bool,
    /// How long the host waits before calling again; read only when `dirty`.
    pub requeue_after: Duration,
    /// Failed; stays failed until restarted.
    pub error_message: String,
}

impl OpResult {
    /// Finished, nothing more to do.
    pub fn done() -> Self {
        Self::default()
    }

    /// Still working; come back after `after`.
    pub fn in_progress(after: Duration) -> Self {
        Self {
            dirty: true,
            requeue_after: after,
            ..Self::default()
        }
    }

    /// Failed with `message`; stays failed until restarted.
    pub fn failed(message: impl Into<String>) -> Self {
        Self {
            error_message: message.into(),
            ..Self::default()
        }
    }
}

/// BMC user name and password. `Debug` never shows the password.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BmcCredentials {
    /// The BMC user name, read by the host from the BMC credentials Secret.
    pub username: String,
    /// The BMC password, read by the host from the BMC credentials Secret.
    pub password: String,
}

impl std::fmt::Debug for BmcCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BmcCredentials")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// What a provisioner knows of its host when created (BMO's `HostData`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostData {
    /// The host's namespace and name.
    pub key: ObjectKey,
    /// The host's UID, set by the host.
    pub uid: String,
    /// The host's `metadata.labels`.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// The host's `metadata.annotations`.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    /// The BMC address (`spec.bmc.address`), empty when the host has none.
    pub bmc_address: String,
    /// The BMC user name and password, set by the host from `spec.bmc.credentialsName`.
    pub bmc_credentials: BmcCredentials,
    /// `spec.bmc.disableCertificateVerification`.
    pub disable_certificate_verification: bool,
    /// `spec.bootMACAddress`.
    pub boot_mac_address: String,
    /// The provisioner's ID for the host (`status.provisioning.ID`).
    pub provisioner_id: String,
    /// What the provisioner returned from `persistent_state` after the previous pass.
    pub provisioner_state: Option<serde_json::Value>,
    /// `spec.externallyProvisioned`: registration leads to `externally provisioned`.
    #[serde(default)]
    pub externally_provisioned: bool,
    /// Inspection is disabled (`inspectionMode` or the legacy annotation): registration leads
    /// to `preparing`, not `inspecting`.
    #[serde(default)]
    pub inspection_disabled: bool,
}

/// A format a preprovisioning image can be built in, as named by a `PreprovisioningImage`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    /// An ISO image.
    Iso,
    /// A kernel and initramfs.
    Initrd,
}

/// A built preprovisioning image (from a `PreprovisioningImage`'s status) for the provisioner to boot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreprovisioningImage {
    /// The URL of the image (the ISO, or the initramfs).
    pub image_url: String,
    /// The URL of the kernel, for the `initrd` format.
    pub kernel_url: String,
    /// Extra kernel command line parameters to boot the image with.
    pub extra_kernel_params: String,
    /// The image's format (`iso` or `initrd`).
    pub format: String,
}

/// Arguments of `register` (BMO's `ManagementAccessData`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ManagementAccessData {
    /// The boot mode the host last provisioned with (`status.provisioning.bootMode`).
    pub boot_mode: BootMode,
    /// `spec.automatedCleaningMode`.
    pub automated_cleaning_mode: AutomatedCleaningMode,
    /// The host's current provisioning state.
    pub state: ProvisioningState,
    /// The host's operational status.
    pub operational_status: OperationalStatus,
    /// The image the host runs or is being given, if any; set by the host.
    pub current_image: Option<Image>,
    /// The preprovisioning image to boot, when the host has one ready.
    pub preprovisioning_image: Option<PreprovisioningImage>,
    /// The network data to put in the preprovisioning image, read from its Secret.
    pub preprovisioning_network_data: String,
    /// Whether the host has, or is being given, a custom deploy method.
    pub has_custom_deploy: bool,
    /// `spec.disablePowerOff`.
    pub disable_power_off: bool,
    /// The host's CPU architecture (from its spec, hardware data or inspection).
    pub cpu_architecture: String,
    /// The host's `HardwareData`, lent for the call when there is one.
    pub hardware_data: Option<HardwareData>,
    /// Whether inspection is disabled for the host.
    pub disable_inspection: bool,
    /// `spec.inspectionMode`.
    pub inspection_mode: InspectionMode,
}

/// Arguments of [`adopt`](crate::Provisioner::adopt).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AdoptData {
    /// The host's current provisioning state.
    pub state: ProvisioningState,
}

/// Arguments of [`inspect_hardware`](crate::Provisioner::inspect_hardware).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InspectData {
    /// The host's boot mode (`status.provisioning.bootMode`).
    pub boot_mode: BootMode,
    /// The host's CPU architecture.
    pub cpu_architecture: String,
    /// `spec.inspectionMode`.
    pub inspection_mode: InspectionMode,
}

/// A firmware setting's desired value: Kubernetes' int-or-string.
pub type DesiredSettings = BTreeMap<String, serde_json::Value>;
/// Firmware settings as reported by the BMC: name to value.
pub type ActualSettings = BTreeMap<String, String>;

/// A firmware update to apply: one component and its image.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirmwareUpdate {
    /// The component to update (e.g. `bios`, `bmc`).
    pub component: String,
    /// The URL of the firmware image.
    pub url: String,
}

/// Arguments of `prepare`: the RAID and firmware changes the host asks for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PrepareData {
    /// The RAID configuration the host should have, if any.
    pub target_raid_config: Option<RaidConfig>,
    /// The RAID configuration the host last applied; `None` after a failed preparation, so it is applied again.
    pub actual_raid_config: Option<RaidConfig>,
    /// The root device hints to pass on, if any.
    pub root_device_hints: Option<RootDeviceHints>,
    /// The firmware settings the host should have.
    pub target_firmware_settings: DesiredSettings,
    /// The firmware settings the host has now.
    pub actual_firmware_settings: ActualSettings,
    /// The firmware updates to apply.
    pub target_firmware_components: Vec<FirmwareUpdate>,
}

/// Arguments of `service`: the firmware changes for a provisioned host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServicingData {
    /// The firmware settings the host should have.
    pub target_firmware_settings: DesiredSettings,
    /// The firmware settings the host has now.
    pub actual_firmware_settings: ActualSettings,
    /// The firmware updates to apply.
    pub target_firmware_components: Vec<FirmwareUpdate>,
    /// Whether the host has a firmware spec (settings or components) that servicing may apply.
    pub has_firmware_spec: bool,
}

/// User data, network data and meta data for the config drive, already read from their Secrets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostConfigData {
    /// The user data, empty when there is none.
    pub user_data: String,
    /// The network data, empty when there is none.
    pub network_data: String,
    /// The meta data, empty when there is none.
    pub meta_data: String,
}

/// Why a part of [`HostConfigData`] could not be read from its Secret ("" when it was).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostConfigErrors {
    /// Why the user data could not be read.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub user_data: String,
    /// Why the network data could not be read.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub network_data: String,
    /// Why the meta data could not be read.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub meta_data: String,
}

/// Arguments of `provision`, set by the host from the host's spec and status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProvisionData {
    /// The image to write.
    pub image: Image,
    /// The config drive's contents.
    pub host_config: HostConfigData,
    /// Why parts of `host_config` could not be read (not sent by older bmhctl builds).
    #[serde(default)]
    pub host_config_errors: HostConfigErrors,
    /// The host's boot mode (`status.provisioning.bootMode`).
    pub boot_mode: BootMode,
    /// The name of the host's hardware profile.
    pub hardware_profile: String,
    /// The root device hints (`status.provisioning.rootDeviceHints`), if any.
    pub root_device_hints: Option<RootDeviceHints>,
    /// `spec.customDeploy`, if any.
    pub custom_deploy: Option<CustomDeploy>,
    /// Registry credentials for an OCI image (from `ociAuthSecretName`); empty when none.
    pub image_pull_secret: String,
}

/// `None` means the power state is unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HardwareState {
    /// Whether the host is powered on, as the provisioner last saw it.
    pub powered_on: Option<bool>,
}

/// The schema of one firmware setting (Redfish/Ironic BIOS setting attributes).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingSchema {
    /// The setting's type (e.g. `Enumeration`, `Integer`, `String`).
    pub attribute_type: String,
    /// The values an enumeration setting accepts.
    #[serde(default)]
    pub allowable_values: Vec<String>,
    /// The smallest value an integer setting accepts.
    #[serde(default)]
    pub lower_bound: Option<i64>,
    /// The largest value an integer setting accepts.
    pub upper_bound: Option<i64>,
    /// The shortest value a string setting accepts.
    pub min_length: Option<i64>,
    /// The longest value a string setting accepts.
    pub max_length: Option<i64>,
    /// Whether the setting cannot be changed.
    pub read_only: Option<bool>,
    /// Whether the setting's value must be unique.
    pub unique: Option<bool>,
}

/// A host's firmware settings and their schema, as the provisioner reads them from the BMC.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirmwareSettings {
    /// The settings' current values.
    pub settings: ActualSettings,
    /// The schema of each setting, by name.
    pub schema: BTreeMap<String, SettingSchema>,
}

/// The state of one firmware component, as the provisioner reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FirmwareComponentStatus {
    /// The component's name (e.g. `bios`, `bmc`).
    pub component: String,
    /// The version it had before any update.
    pub initial_version: String,
    /// The version it runs now.
    pub current_version: String,
    /// The version last flashed onto it.
    pub last_version_flashed: String,
    /// When it was last updated.
    pub updated_at: String,
}

/// A [`get_health`](crate::Provisioner::get_health) answer: the host is healthy.
pub const HEALTH_OK: &str = "OK";
/// A [`get_health`](crate::Provisioner::get_health) answer: the host needs attention.
pub const HEALTH_WARNING: &str = "Warning";
/// A [`get_health`](crate::Provisioner::get_health) answer: the host is in a critical state.
pub const HEALTH_CRITICAL: &str = "Critical";

/// What a host's pass waits for, as told to [`crate::ProvisionerFactory::due_hosts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitOn {
    /// The provisioner's work on the host (a node changing state, powering, cleaning...).
    Progress,
    /// A free (de)provisioning slot: the host is `delayed`.
    Capacity,
}

/// A host whose next pass waits on its provisioner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitingHost {
    /// The host's namespace and name.
    pub host: ObjectKey,
    /// The provisioner's ID of the host (`status.provisioning.ID`), empty before registration.
    #[serde(default)]
    pub provisioner_id: String,
    /// What the pass waits for.
    pub on: WaitOn,
}

/// The answer to [`ProvisionerFactory::due_hosts`](crate::ProvisionerFactory::due_hosts).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DueHosts {
    /// Indices into the hosts asked about whose pass is due now.
    pub due: Vec<usize>,
    /// Ask again no sooner than this (a provisioner's own rate limit; the caller may ask later).
    #[serde(default)]
    pub ask_again_after: Duration,
}

/// What a successful [`ProvisionerFactory::probe`](crate::ProvisionerFactory::probe) reached.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeReport {
    /// The backend, as the user names it (e.g. `Ironic at https://host:6385/v1/`).
    pub reached: String,
}

/// Requests of one kind sent to the backend: a row of `ProvisionerFactory::api_calls`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiCallCount {
    /// A kind from a fixed set (e.g. `GET /v1/nodes/{node}`), never a host's name or ID.
    pub kind: String,
    /// The number of requests of this kind.
    pub count: u64,
}

/// A machine the backend already manages, for `bmhctl import` (an Ironic node and its MACs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KnownMachine {
    /// The backend's name of it (`NAMESPACE~NAME` keeps its namespace).
    pub name: String,
    /// The backend's ID of it.
    pub uuid: String,
    /// Its driver (`redfish`, `ipmi`, ...).
    pub driver: String,
    /// Its boot interface (`redfish-virtual-media`, `ipxe`, ...).
    pub boot_interface: String,
    /// Its deploy interface (`direct`, `custom-agent`, ...).
    pub deploy_interface: String,
    /// The driver's settings, BMC credentials among them (the backend may mask passwords).
    pub driver_info: serde_json::Map<String, serde_json::Value>,
    /// Every MAC of its ports, lower case.
    pub macs: Vec<String>,
    /// The MAC of the port it boots from, if one is marked.
    pub boot_mac: Option<String>,
    /// The backend's provision state (`active`, `available`, ...).
    pub provision_state: String,
    /// Whether it is powered on, when known.
    pub power_on: Option<bool>,
    /// What was deployed on it (image, checksum, ...).
    pub instance_info: serde_json::Map<String, serde_json::Value>,
    /// Its properties (capabilities such as the boot mode, resource class).
    pub properties: serde_json::Map<String, serde_json::Value>,
    /// Whether automated cleaning is on, when set.
    pub automated_clean: Option<bool>,
}
