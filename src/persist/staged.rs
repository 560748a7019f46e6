//! What one pass asks a host source to persist.

use crate::record::{Bookkeeping, HostRecord};
use bmh_api::{
    BareMetalHostStatus, DataImageStatus, HostFirmwareComponentsStatus, HostFirmwareSettingsStatus,
};

/// What a pass asks for one thing it may persist: leave it, remove it, or write this.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Change<T> {
    #[default]
    Keep,
    /// Removed (a status block, the bookkeeping of a deleted host).
    Clear,
    Set(T),
}

impl<T> Change<T> {
    /// `Set` for a value, `Clear` for none.
    pub fn to(value: Option<T>) -> Self {
        value.map_or(Change::Clear, Change::Set)
    }

    /// [`Change::to`] when `changed`, else `Keep`.
    pub fn when(changed: bool, value: Option<T>) -> Self {
        if changed {
            Self::to(value)
        } else {
            Change::Keep
        }
    }

    pub fn is_keep(&self) -> bool {
        matches!(self, Change::Keep)
    }

    /// What is to be written, unless kept: `Some(None)` removes.
    pub fn written(self) -> Option<Option<T>> {
        match self {
            Change::Keep => None,
            Change::Clear => Some(None),
            Change::Set(v) => Some(Some(v)),
        }
    }
}

#[derive(Debug, Default)]
pub struct Staged<'a> {
    pub status: Change<&'a BareMetalHostStatus>,
    pub bookkeeping: Change<&'a Bookkeeping>,
    pub removed_annotations: &'a [String],
    /// The status of the host's HostFirmwareSettings (ignored when it has none).
    pub firmware_settings_status: Change<&'a HostFirmwareSettingsStatus>,
    /// The status of the host's HostFirmwareComponents (ignored when it has none).
    pub firmware_components_status: Change<&'a HostFirmwareComponentsStatus>,
    /// The status of the host's DataImage (ignored when it has none).
    pub data_image_status: Change<&'a DataImageStatus>,
}

impl Staged<'_> {
    pub fn is_empty(&self) -> bool {
        self.status.is_keep()
            && self.bookkeeping.is_keep()
            && self.firmware_settings_status.is_keep()
            && self.firmware_components_status.is_keep()
            && self.data_image_status.is_keep()
            && self.removed_annotations.is_empty()
    }

    /// Applies these changes to `rec` (a source's copy of the host), as reading it back would.
    pub fn apply_to(&self, rec: &mut HostRecord) {
        if let Some(status) = self.status.written() {
            rec.host.status = status.cloned();
        }
        if let Some(s) = rec.firmware_settings.as_mut()
            && let Some(status) = self.firmware_settings_status.written()
        {
            s.status = status.cloned();
        }
        if let Some(c) = rec.firmware_components.as_mut()
            && let Some(status) = self.firmware_components_status.written()
        {
            c.status = status.cloned();
        }
        if let Some(d) = rec.data_image.as_mut()
            && let Some(status) = self.data_image_status.written()
        {
            d.status = status.cloned();
        }
        for k in self.removed_annotations {
            rec.host.metadata.annotations.remove(k);
        }
        if let Change::Set(book) = self.bookkeeping {
            rec.book = book.clone();
        }
    }
}
