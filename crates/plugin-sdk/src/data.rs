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
pub struct OpResult {
    /// Still in progress: call again after `requeue_after`.
    #[serde(default)]
    pub dirty: bool,
    #[serde(default)]
    pub requeue_after: Duration,
    /// Failed; stays failed until restarted.
    #[serde(default)]
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
            error_message: String::new(),
        }
    }

    pub fn failed(message: impl Into<String>) -> Self {
        Self {
            dirty: false,
            requeue_after: Duration::ZERO,
            error_message: message.into(),
        }
    }
}

/// BMC user name and password. `Debug` never shows the password.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BmcCredentials {
    pub username: String,
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
    pub key: ObjectKey,
    pub uid: String,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    pub bmc_address: String,
    pub bmc_credentials: BmcCredentials,
    pub disable_certificate_verification: bool,
    pub boot_mac_address: String,
    /// The provisioner's ID for the host (`status.provisioning.ID`).
    pub provisioner_id: String,
    /// What the provisioner returned from `persistent_state` after the previous pass.
    #[serde(default)]
    pub provisioner_state: Option<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    Iso,
    Initrd,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreprovisioningImage {
    pub image_url: String,
    pub kernel_url: String,
    pub extra_kernel_params: String,
    pub format: String,
}

/// Arguments of `register` (BMO's `ManagementAccessData`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ManagementAccessData {
    pub boot_mode: BootMode,
    pub automated_cleaning_mode: AutomatedCleaningMode,
    pub state: ProvisioningState,
    pub operational_status: OperationalStatus,
    pub current_image: Option<Image>,
    pub preprovisioning_image: Option<PreprovisioningImage>,
    pub preprovisioning_network_data: String,
    pub has_custom_deploy: bool,
    pub disable_power_off: bool,
    pub cpu_architecture: String,
    pub hardware_data: Option<HardwareData>,
    pub disable_inspection: bool,
    pub inspection_mode: InspectionMode,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AdoptData {
    pub state: ProvisioningState,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InspectData {
    pub boot_mode: BootMode,
    pub cpu_architecture: String,
    pub inspection_mode: InspectionMode,
}

/// A firmware setting's desired value: Kubernetes' int-or-string.
pub type DesiredSettings = BTreeMap<String, serde_json::Value>;
pub type ActualSettings = BTreeMap<String, String>;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirmwareUpdate {
    pub component: String,
    pub url: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PrepareData {
    pub target_raid_config: Option<RaidConfig>,
    pub actual_raid_config: Option<RaidConfig>,
    pub root_device_hints: Option<RootDeviceHints>,
    pub target_firmware_settings: DesiredSettings,
    pub actual_firmware_settings: ActualSettings,
    pub target_firmware_components: Vec<FirmwareUpdate>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServicingData {
    pub target_firmware_settings: DesiredSettings,
    pub actual_firmware_settings: ActualSettings,
    pub target_firmware_components: Vec<FirmwareUpdate>,
    pub has_firmware_spec: bool,
}

/// User data, network data and meta data for the config drive, already read from their Secrets.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostConfigData {
    pub user_data: String,
    pub network_data: String,
    pub meta_data: String,
}

/// Why a part of [`HostConfigData`] could not be read from its Secret ("" when it was read, or
/// needs no Secret). BMO reads these Secrets only when its provisioner builds the config drive
/// (`getConfigDrive`), so a provisioner reports an error here only then: a host already deployed
/// or booting a live ISO never notices a broken Secret.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostConfigErrors {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub user_data: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub network_data: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub meta_data: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProvisionData {
    pub image: Image,
    pub host_config: HostConfigData,
    /// A later addition: older bmhctl builds do not send it.
    #[serde(default)]
    pub host_config_errors: HostConfigErrors,
    pub boot_mode: BootMode,
    pub hardware_profile: String,
    pub root_device_hints: Option<RootDeviceHints>,
    pub custom_deploy: Option<CustomDeploy>,
    pub image_pull_secret: String,
}

/// `None` means the power state is unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HardwareState {
    pub powered_on: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingSchema {
    pub attribute_type: String,
    #[serde(default)]
    pub allowable_values: Vec<String>,
    #[serde(default)]
    pub lower_bound: Option<i64>,
    #[serde(default)]
    pub upper_bound: Option<i64>,
    #[serde(default)]
    pub min_length: Option<i64>,
    #[serde(default)]
    pub max_length: Option<i64>,
    #[serde(default)]
    pub read_only: Option<bool>,
    #[serde(default)]
    pub unique: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FirmwareSettings {
    pub settings: ActualSettings,
    pub schema: BTreeMap<String, SettingSchema>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FirmwareComponentStatus {
    pub component: String,
    pub initial_version: String,
    pub current_version: String,
    pub last_version_flashed: String,
    pub updated_at: String,
}

pub const HEALTH_OK: &str = "OK";
pub const HEALTH_WARNING: &str = "Warning";
pub const HEALTH_CRITICAL: &str = "Critical";

/// What a host's pass waits for, as the runner tells a factory that reports changes
/// ([`ProvisionerFactory::due_hosts`](crate::ProvisionerFactory::due_hosts)).
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
    pub host: ObjectKey,
    /// The provisioner's ID of the host (`status.provisioning.ID`), empty before registration.
    #[serde(default)]
    pub provisioner_id: String,
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

/// How many requests a provisioner has sent its backend of one kind, since it started: one row of
/// [`ProvisionerFactory::api_calls`](crate::ProvisionerFactory::api_calls).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiCallCount {
    /// A kind from a fixed set the plugin documents (e.g. `GET /v1/nodes/{node}`); never a
    /// host's or node's name or ID, so that a metric labelled by it stays small.
    pub kind: String,
    pub count: u64,
}
