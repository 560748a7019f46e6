//! The provisioner interface of bmhctl (BMO's `pkg/provisioner/provisioner.go`, restated for Rust).
//!
//! A provisioner does the real work for one host during one pass: the state machine creates one
//! per pass through a [`ProvisionerFactory`] and calls its methods. Calls are synchronous; the
//! caller runs them off its async threads. Every type here is serde-serialisable because plugins
//! receive and return them as JSON across the C ABI.

pub mod abi;
pub mod abi_plugin;
mod args;
mod data;
mod error;

pub use abi_plugin::{Logger, ObjectReader, PluginContext};
pub use args::*;
pub use data::*;
pub use error::ProvisionerError;
/// Re-exported so plugins need no direct dependency on it.
pub use serde_json;

use bmh_api::{AutomatedCleaningMode, HardwareDetails, RebootMode};
use std::sync::Arc;

/// The version of this SDK; a plugin is compatible when the major versions match and the
/// plugin's minor is not above the host's.
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// An event a provisioner publishes about its host (BMO's `EventPublisher(reason, message)`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Event {
    pub reason: String,
    pub message: String,
}

/// Where a provisioner sends its events.
pub type EventSink = Arc<dyn Fn(Event) + Send + Sync>;

/// Creates one provisioner per host per pass.
pub trait ProvisionerFactory: Send + Sync {
    /// `Err(ProvisionerError::NotReady(..))` makes the caller retry after 30 s without touching the host.
    fn new_provisioner(
        &self,
        host: HostData,
        events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError>;
}

/// The operations BMO's state machine asks of a provisioner. `OpResult.dirty` means "still working,
/// call again after `requeue_after`"; `OpResult.error_message` means "failed until restarted";
/// `Err` is a transient or unexpected error.
pub trait Provisioner: Send {
    /// Create or update the node, prove BMC access, bring it to a manageable base state; returns the
    /// provisioner's ID of the host.
    fn register(
        &mut self,
        data: &ManagementAccessData,
        credentials_changed: bool,
        restart_on_failure: bool,
    ) -> Result<(OpResult, String), ProvisionerError>;

    /// `None` when no preprovisioning image needs building.
    fn preprovisioning_image_formats(
        &mut self,
    ) -> Result<Option<Vec<ImageFormat>>, ProvisionerError> {
        Ok(None)
    }

    /// Returns (result, started, details): `started` when a new inspection was just launched,
    /// details when it finished.
    fn inspect_hardware(
        &mut self,
        data: &InspectData,
        restart_on_failure: bool,
        refresh: bool,
        force_reboot: bool,
    ) -> Result<(OpResult, bool, Option<HardwareDetails>), ProvisionerError>;

    /// A cheap read of the power state.
    fn update_hardware_state(&mut self) -> Result<HardwareState, ProvisionerError>;

    fn adopt(
        &mut self,
        data: &AdoptData,
        restart_on_failure: bool,
    ) -> Result<OpResult, ProvisionerError>;

    /// Returns (result, started).
    fn prepare(
        &mut self,
        data: &PrepareData,
        unprepared: bool,
        restart_on_failure: bool,
    ) -> Result<(OpResult, bool), ProvisionerError>;

    /// Returns (result, started).
    fn service(
        &mut self,
        data: &ServicingData,
        unprepared: bool,
        restart_on_failure: bool,
    ) -> Result<(OpResult, bool), ProvisionerError>;

    fn provision(
        &mut self,
        data: &ProvisionData,
        force_reboot: bool,
    ) -> Result<OpResult, ProvisionerError>;

    fn deprovision(
        &mut self,
        restart_on_failure: bool,
        automated_cleaning_mode: AutomatedCleaningMode,
    ) -> Result<OpResult, ProvisionerError>;

    fn delete(&mut self) -> Result<OpResult, ProvisionerError>;

    /// Like delete, but non-disruptive unless `force`.
    fn detach(&mut self, force: bool) -> Result<OpResult, ProvisionerError>;

    fn power_on(&mut self, force: bool) -> Result<OpResult, ProvisionerError>;

    fn power_off(
        &mut self,
        mode: RebootMode,
        force: bool,
        automated_cleaning_mode: AutomatedCleaningMode,
    ) -> Result<OpResult, ProvisionerError>;

    /// Whether a (de)provisioning slot is free for this host.
    fn has_capacity(&mut self) -> Result<bool, ProvisionerError>;

    fn get_firmware_settings(
        &mut self,
        include_schema: bool,
    ) -> Result<FirmwareSettings, ProvisionerError> {
        let _ = include_schema;
        Ok(FirmwareSettings::default())
    }

    fn get_firmware_components(
        &mut self,
    ) -> Result<Vec<FirmwareComponentStatus>, ProvisionerError> {
        Ok(Vec::new())
    }

    /// Subscribes to the BMC's events; nothing to do by default.
    fn add_bmc_event_subscription(
        &mut self,
        subscription: &serde_json::Value,
        http_headers: &[std::collections::BTreeMap<String, String>],
    ) -> Result<OpResult, ProvisionerError> {
        let _ = (subscription, http_headers);
        Ok(OpResult::done())
    }

    fn remove_bmc_event_subscription(
        &mut self,
        subscription: &serde_json::Value,
    ) -> Result<OpResult, ProvisionerError> {
        let _ = subscription;
        Ok(OpResult::done())
    }

    /// Whether a data image is attached; never by default.
    fn get_data_image_status(&mut self) -> Result<bool, ProvisionerError> {
        Ok(false)
    }

    fn attach_data_image(&mut self, url: &str) -> Result<(), ProvisionerError> {
        let _ = url;
        Ok(())
    }

    fn detach_data_image(&mut self) -> Result<(), ProvisionerError> {
        Ok(())
    }

    /// Whether the BMC reports a power failure; no by default.
    fn has_power_failure(&mut self) -> bool {
        false
    }

    /// `OK`, `Warning`, `Critical`, or empty when unknown (the default).
    fn get_health(&mut self) -> String {
        String::new()
    }

    /// State the caller must persist for this host and hand back in [`HostData::provisioner_state`]
    /// on the next pass. Stateless provisioners (and those whose state lives in their backend) return `None`.
    fn persistent_state(&self) -> Option<serde_json::Value> {
        None
    }
}

/// The version of the C ABI between bmhctl and its provisioner plugins.
pub const ABI_VERSION: u32 = 1;
