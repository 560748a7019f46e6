//! Where the runner persists what passes change: the seam between scheduling and storage.

use crate::error::Result;
use crate::machine::PassOutcome;
use crate::record::{Bookkeeping, HostRecord};
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

impl<'a> Staged<'a> {
    /// `None` when the pass changed nothing that is persisted.
    pub fn from_outcome(out: &'a PassOutcome, rec: &'a HostRecord) -> Option<Self> {
        if out.deleted {
            return Some(Staged {
                status: Some(None),
                bookkeeping: Some(None),
                removed_annotations: &out.removed_annotations,
                // The firmware objects go with their host (BMO's owner references).
                firmware_settings_status: Some(None),
                firmware_components_status: Some(None),
            });
        }
        let firmware = out.firmware_changed;
        let staged = Staged {
            status: out.save_status.then_some(rec.host.status.as_ref()),
            bookkeeping: (out.bookkeeping_changed || firmware).then_some(Some(&rec.book)),
            removed_annotations: &out.removed_annotations,
            firmware_settings_status: rec
                .firmware_settings
                .as_ref()
                .filter(|_| firmware)
                .map(|s| s.status.as_ref()),
            firmware_components_status: rec
                .firmware_components
                .as_ref()
                .filter(|_| firmware)
                .map(|c| c.status.as_ref()),
        };
        (staged.status.is_some()
            || staged.bookkeeping.is_some()
            || staged.firmware_settings_status.is_some()
            || staged.firmware_components_status.is_some()
            || !staged.removed_annotations.is_empty())
        .then_some(staged)
    }
}

/// Persistence grouped into commit groups (a user's file; later a store object).
pub trait Backend: Send + Sync {
    fn groups(&self) -> usize;
    fn group_of(&self, host: usize) -> usize;
    /// Stages a pass's changes in memory; returns the group's ticket that makes them durable.
    fn stage(&self, host: usize, staged: &Staged) -> Result<u64>;
    /// Writes everything staged in the group; returns the highest ticket now on disk.
    fn commit(&self, group: usize) -> Result<u64>;
    /// Keeps a pass's events where `describe` finds them (the local store). Best effort, as
    /// Kubernetes events are: an error is logged and the run goes on. Files keep none.
    fn record_events(&self, _host: usize, _events: &[bmhctl_plugin_sdk::Event]) -> Result<()> {
        Ok(())
    }
}
