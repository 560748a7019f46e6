//! Where hosts live between passes: the user's YAML files (`-f`, [`files`]) or the local store
//! ([`store`]). What each part guarantees, and why, is in `docs/persistence.md`.

pub mod atomic;
pub mod bookkeeping;
pub mod files;
mod load_options;
mod place;
pub mod requests;
pub mod snapshot;
mod staged;
pub mod store;
pub mod to_drive;

pub use load_options::{FieldValidation, InputPolicy, LoadOptions};
pub use place::Place;
pub use staged::{Change, Staged};

use crate::error::Result;
use crate::objects::ObjectMap;
use crate::record::HostRecord;
use bmh_api::ObjectKey;

/// The annotation `bmhctl retry` sets: the controller skips the host's backoff wait.
pub const RETRY_ANNOTATION: &str = "bmhctl.metal3.io/retry";

/// What changed where the hosts live since the last look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceChange {
    /// A host appeared, or its spec, metadata or companion objects changed.
    Host(ObjectKey),
    HostGone(ObjectKey),
    /// A Secret or another object changed: read [`HostSource::objects`] again.
    Objects,
}

/// Persistence grouped into commit groups (a user's file; a store object), as the runner uses it.
pub trait HostSource: Send + Sync {
    /// The number of commit groups (it grows when a controller adds hosts).
    fn groups(&self) -> usize;
    fn group_of(&self, host: usize) -> usize;
    /// Stages a pass's changes in memory; returns the group's ticket that makes them durable.
    fn stage(&self, host: usize, staged: &Staged) -> Result<u64>;
    /// Writes everything staged in the group; returns the highest ticket now on disk.
    fn commit(&self, group: usize) -> Result<u64>;
    /// Keeps a pass's events where `describe` finds them.
    fn record_events(&self, host: usize, events: &[bmhctl_plugin_sdk::Event]) -> Result<()>;
    /// Whether a host's events go in its bookkeeping (files have no event log of their own).
    fn events_in_bookkeeping(&self) -> bool {
        false
    }
    /// Adds a host (one that appeared while a controller runs); returns its index.
    fn add_host(&self, key: ObjectKey) -> usize;
    /// Reads a host as it is now; `None` when it is gone.
    fn load(&self, key: &ObjectKey) -> Result<Option<HostRecord>>;
    /// The Secrets and other objects the hosts' provisioner reads, as they are now.
    fn objects(&self) -> Result<ObjectMap>;
    /// What changed since the last call (the first reports every host it watches).
    fn changes(&self) -> Result<Vec<SourceChange>>;

    /// The BMCEventSubscriptions where the hosts live, as last read; none by default.
    fn event_subscriptions(&self) -> Result<Vec<bmh_api::BmcEventSubscription>> {
        Ok(Vec::new())
    }

    /// Writes a subscription's status at once; `Ok(false)` when the subscription is gone.
    fn write_event_subscription_status(
        &self,
        key: &ObjectKey,
        status: &bmh_api::BmcEventSubscriptionStatus,
    ) -> Result<bool> {
        let _ = (key, status);
        Ok(false)
    }
}
