//! Options and multi-value answers of the [`Provisioner`](crate::Provisioner) calls.

use crate::OpResult;
use bmh_api::{AutomatedCleaningMode, HardwareDetails, RebootMode};
use serde::{Deserialize, Serialize};

/// Options of [`register`](crate::Provisioner::register).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisterOptions {
    /// The BMC credentials changed since the last successful registration: update the node's.
    pub credentials_changed: bool,
    /// Start over when the previous registration failed.
    pub restart_on_failure: bool,
}

/// The answer of [`register`](crate::Provisioner::register); an array `[result, provisioner_id]` on the wire.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "(OpResult, String)", into = "(OpResult, String)")]
pub struct RegisterResult {
    /// What the operation reports.
    pub result: OpResult,
    /// The provisioner's ID of the host (`status.provisioning.ID`); empty while unknown.
    pub provisioner_id: String,
}

/// Options of [`inspect_hardware`](crate::Provisioner::inspect_hardware).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InspectOptions {
    /// Start over when the previous inspection failed.
    pub restart_on_failure: bool,
    /// Inspect again although the host was inspected (the `inspect` annotation asks for it).
    pub refresh: bool,
    /// Reboot the host even when it is powered on.
    pub force_reboot: bool,
}

/// The answer of `inspect_hardware`: `[result, started, details]` on the wire.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(
    from = "(OpResult, bool, Option<HardwareDetails>)",
    into = "(OpResult, bool, Option<HardwareDetails>)"
)]
pub struct InspectResult {
    /// What the operation reports.
    pub result: OpResult,
    /// A new inspection was just launched.
    pub started: bool,
    /// The inspected hardware, once inspection finished.
    pub details: Option<HardwareDetails>,
}

/// Options of [`adopt`](crate::Provisioner::adopt).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdoptOptions {
    /// Start over when the previous adoption failed.
    pub restart_on_failure: bool,
}

/// Options of [`prepare`](crate::Provisioner::prepare) and [`service`](crate::Provisioner::service).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepOptions {
    /// The desired configuration changed: its steps have not been applied yet.
    pub unprepared: bool,
    /// Start over when the previous run failed.
    pub restart_on_failure: bool,
}

/// The answer of [`prepare`](crate::Provisioner::prepare) and `service`: `[result, started]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "(OpResult, bool)", into = "(OpResult, bool)")]
pub struct StepResult {
    /// What the operation reports.
    pub result: OpResult,
    /// New steps were just launched.
    pub started: bool,
}

/// Options of [`provision`](crate::Provisioner::provision).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProvisionOptions {
    /// Reboot the host even when it is powered on.
    pub force_reboot: bool,
}

/// Options of [`deprovision`](crate::Provisioner::deprovision).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeprovisionOptions {
    /// Start over when the previous deprovisioning failed.
    pub restart_on_failure: bool,
    /// The host's `spec.automatedCleaningMode`: whether to clean the disks.
    pub automated_cleaning_mode: AutomatedCleaningMode,
}

/// Options of [`detach`](crate::Provisioner::detach).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetachOptions {
    /// Detach even when that disrupts the host (e.g. it is being provisioned).
    pub force: bool,
}

/// Options of [`power_on`](crate::Provisioner::power_on).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerOnOptions {
    /// The previous power change failed: try again even when the backend believes it done.
    pub force: bool,
}

/// Options of [`power_off`](crate::Provisioner::power_off).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerOffOptions {
    /// Soft (ACPI) or hard power off.
    pub mode: RebootMode,
    /// The previous power change failed: try again even when the backend believes it done.
    pub force: bool,
    /// The host's `spec.automatedCleaningMode`.
    pub automated_cleaning_mode: AutomatedCleaningMode,
}

/// Options of [`get_firmware_settings`](crate::Provisioner::get_firmware_settings).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirmwareSettingsOptions {
    /// Also return each setting's schema.
    pub include_schema: bool,
}

/// `From` both ways between an answer and the tuple it travels as.
macro_rules! tuple_wire {
    ($($ty:ident($($field:ident: $fty:ty),*);)*) => {$(
        impl From<($($fty),*)> for $ty {
            fn from(($($field),*): ($($fty),*)) -> Self {
                Self { $($field),* }
            }
        }

        impl From<$ty> for ($($fty),*) {
            fn from(r: $ty) -> Self {
                ($(r.$field),*)
            }
        }
    )*};
}

tuple_wire! {
    RegisterResult(result: OpResult, provisioner_id: String);
    InspectResult(result: OpResult, started: bool, details: Option<HardwareDetails>);
    StepResult(result: OpResult, started: bool);
}
