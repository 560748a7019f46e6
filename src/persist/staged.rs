//! What one pass asks a host source to persist.

use crate::record::{Bookkeeping, HostRecord};
use bmh_api::{
    BareMetalHostStatus, DataImageStatus, HostFirmwareComponentsStatus, HostFirmwareSettingsStatus,
};

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
    /// The status of the host's DataImage (ignored when it has none).
    pub data_image_status: Option<Option<&'a DataImageStatus>>,
}

impl Staged<'_> {
    /// Whether there is anything to persist.
    pub fn is_empty(&self) -> bool {
        self.status.is_none()
            && self.bookkeeping.is_none()
            && self.firmware_settings_status.is_none()
            && self.firmware_components_status.is_none()
            && self.data_image_status.is_none()
            && self.removed_annotations.is_empty()
    }

    /// Applies these changes to `rec` (a source's copy of the host): what reading the host
    /// back once they are saved would give.
    pub fn apply_to(&self, rec: &mut HostRecord) {
        if let Some(status) = self.status {
            rec.host.status = status.cloned();
        }
        if let (Some(s), Some(status)) = (
            rec.firmware_settings.as_mut(),
            self.firmware_settings_status,
        ) {
            s.status = status.cloned();
        }
        if let (Some(c), Some(status)) = (
            rec.firmware_components.as_mut(),
            self.firmware_components_status,
        ) {
            c.status = status.cloned();
        }
        if let (Some(d), Some(status)) = (rec.data_image.as_mut(), self.data_image_status) {
            d.status = status.cloned();
        }
        for k in self.removed_annotations {
            rec.host.metadata.annotations.remove(k);
        }
        if let Some(Some(book)) = self.bookkeeping {
            rec.book = book.clone();
        }
    }
}
