//! Where hosts live between passes: the user's YAML files (`-f`, [`files`]) or the local store
//! ([`store`]). Below the runner: nothing here knows how passes are scheduled.
//!
//! Both layouts implement [`HostSource`], all the runner sees of persistence: read a host,
//! stage what a pass changed, commit a group of staged changes, learn of hosts as they appear,
//! and tell what changed since the last look ([`HostSource::changes`]). The helpers both use
//! (atomic writes and the removal of temporary files killed writers left, the spec-hash
//! bookkeeping, the loader's options) live here too.

pub mod atomic;
pub mod bookkeeping;
pub mod files;
mod load_options;
mod staged;
pub mod store;

pub use load_options::{FieldValidation, InputPolicy, LoadOptions, input_policy, set_input_policy};
pub use staged::Staged;

use crate::error::Result;
use crate::objects::ObjectMap;
use crate::record::HostRecord;
use bmh_api::ObjectKey;

/// The annotation `bmhctl retry` sets: the controller skips the host's backoff wait and removes
/// it (the value is when it was asked).
pub const RETRY_ANNOTATION: &str = "bmhctl.metal3.io/retry";

/// What changed where the hosts live since the last look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceChange {
    /// A host appeared, or its spec, metadata or companion objects changed.
    Host(ObjectKey),
    /// A host is gone.
    HostGone(ObjectKey),
    /// A Secret or another kind of object changed, appeared or went: read
    /// [`HostSource::objects`] again.
    Objects,
}

/// Persistence grouped into commit groups (a user's file; a store object), as the runner uses
/// it. Hosts are numbered in the order they were given or added.
pub trait HostSource: Send + Sync {
    /// The number of commit groups (it grows when a controller adds hosts).
    fn groups(&self) -> usize;
    fn group_of(&self, host: usize) -> usize;
    /// Stages a pass's changes in memory; returns the group's ticket that makes them durable.
    fn stage(&self, host: usize, staged: &Staged) -> Result<u64>;
    /// Writes everything staged in the group; returns the highest ticket now on disk.
    fn commit(&self, group: usize) -> Result<u64>;
    /// Keeps a pass's events where `describe` finds them. Best effort, as Kubernetes events
    /// are: an error is logged and the run goes on.
    fn record_events(&self, host: usize, events: &[bmhctl_plugin_sdk::Event]) -> Result<()>;
    /// Whether a host's events go in its bookkeeping ([`crate::record::Bookkeeping::events`])
    /// rather than through [`HostSource::record_events`]: files have no event log of their own.
    fn events_in_bookkeeping(&self) -> bool {
        false
    }
    /// Adds a host (one that appeared while a controller runs); returns its index.
    fn add_host(&self, key: ObjectKey) -> usize;
    /// Reads a host as it is now; `None` when it is gone.
    fn load(&self, key: &ObjectKey) -> Result<Option<HostRecord>>;
    /// The Secrets and other objects the hosts' provisioner reads, as they are now.
    fn objects(&self) -> Result<ObjectMap>;
    /// What changed since the last call (the first reports every host it watches). Its own
    /// writes are not changes.
    fn changes(&self) -> Result<Vec<SourceChange>>;

    /// The BMCEventSubscriptions where the hosts live, as last read (files are read again by
    /// [`HostSource::changes`]); none by default.
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

/// Tunes glibc's malloc, once per process, before hosts are loaded. Setting a trim threshold
/// also stops glibc from raising its mmap threshold each time a large block is freed; left
/// to rise, the file's rendered text and other large buffers of every commit came from the
/// heaps, between hosts' records, and the resident size grew to about 1.7 times the heap
/// (10,000 fixture hosts: 695 MiB peak; 386 MiB this way, at the same CPU). Four arenas
/// instead of one per thread (a pass worker's allocations otherwise spread over up to eight
/// times the cores' arenas): two saved 38 MiB at 10,000 fixture hosts when every pass woke a
/// worker, but once workers run back to back they wait on each other's arena lock (most of
/// the futex calls left); four take as little CPU as eight, and a `watch` of them 12 MiB
/// less. The mmap threshold is then fixed at glibc's 128 KiB, so every block above it (a
/// commit's list of the file's pieces, a batch's queues) was mapped, zeroed by the kernel and
/// unmapped again at each use; at 4 MiB they come from the heaps and are reused (10,000
/// fixture hosts: 42k page faults to 32k, sys time down a sixth, the same peak), while a big
/// file's text still gets its own mapping. An allocator crate would do as well; this keeps
/// the dependencies as they are. `MALLOC_TRIM_THRESHOLD_`, `MALLOC_MMAP_THRESHOLD_` and
/// `MALLOC_ARENA_MAX` in the environment still decide.
pub fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        const M_TRIM_THRESHOLD: i32 = -1;
        const M_MMAP_THRESHOLD: i32 = -3;
        const M_ARENA_MAX: i32 = -8;
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            if std::env::var_os("MALLOC_TRIM_THRESHOLD_").is_none() {
                // SAFETY: mallopt only sets a parameter of the allocator.
                unsafe {
                    mallopt(M_TRIM_THRESHOLD, 256 << 20);
                }
            }
            if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
                // SAFETY: as above.
                unsafe {
                    mallopt(M_MMAP_THRESHOLD, 4 << 20);
                }
            }
            if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
                // SAFETY: as above.
                unsafe {
                    mallopt(M_ARENA_MAX, 4);
                }
            }
        });
    }
}
