//! What one pass asks a host source to persist.

use crate::record::Bookkeeping;
use bmh_api::{BareMetalHostStatus, HostFirmwareComponentsStatus, HostFirmwareSettingsStatus};

/// What one pass asks to persist. `Some(None)` removes (the status block, the bookkeeping).
#[derive(Debug, Default)]
pub struct Staged<'a> {
    pub status: Option<Option<&'a BareMetalHostStatus>>,
    pub bookkeeping: Option<Option<&'a Bookkeeping>>,
    pub removed_annotations: &'a [String],
    /// The status of the host's HostFirmwareSettings (ignored when it has none).
    pub firmware_settings_status: Option<Option<&'a HostFirmwareSettingsStatus>>,
    /// The status of the host's HostFirmwareComponents (ignored when it has none).
    pub firmware_components_status: Option<Option<&'a HostFirmwareComponentsStatus>>,
}

impl Staged<'_> {
    /// Whether there is anything to persist.
    pub fn is_empty(&self) -> bool {
        self.status.is_none()
            && self.bookkeeping.is_none()
            && self.firmware_settings_status.is_none()
            && self.firmware_components_status.is_none()
            && self.removed_annotations.is_empty()
    }
}
