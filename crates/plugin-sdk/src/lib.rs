//! The provisioner interface of bmhctl (BMO's `pkg/provisioner/provisioner.go`, restated for Rust).
//!
//! A provisioner does the real work for one host during one pass: the state machine creates one
//! per pass through a [`ProvisionerFactory`] and calls its methods. Calls are synchronous; the
//! caller runs them off its async threads. Every type here is serde-serialisable because plugins
//! receive and return them as JSON across the C ABI.

#![deny(missing_docs)]

pub mod abi;
pub mod abi_plugin;
mod args;
mod calls;
mod data;
mod error;
mod factory_calls;
mod forwarding;
mod observed;
mod ready;

pub use abi_plugin::{Logger, ObjectReader, PluginContext};
pub use args::*;
pub use data::*;
pub use error::ProvisionerError;
pub use forwarding::ForwardingFactory;
pub use observed::{CallObserver, ObservedProvisioner};
pub use ready::{ReadyHosts, StartingHost};
/// Re-exported so plugins need no direct dependency on it.
pub use serde_json;

use calls::provisioner_trait;
use factory_calls::factory_trait;
use std::sync::Arc;

/// The version of this SDK; a plugin is compatible when the major versions match and the
/// plugin's minor is not above the host's.
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// An event a provisioner publishes about its host (BMO's `EventPublisher(reason, message)`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Event {
    /// The event's reason, a short name for what happened; set by the provisioner.
    pub reason: String,
    /// What happened, for a person to read; set by the provisioner.
    pub message: String,
}

/// Where a provisioner sends its events.
pub type EventSink = Arc<dyn Fn(Event) + Send + Sync>;

factory_calls::factory_calls!(factory_trait {
    /// Creates one provisioner per host per pass.
    ///
    /// The calls sent to a plugin besides making a provisioner are declared once, in
    /// `factory_calls.rs`, with their requests (see [`abi::Request`]).
    pub trait ProvisionerFactory: Send + Sync
} {
    /// `Err(ProvisionerError::NotReady(..))` makes the caller retry after 30 s without touching the host.
    fn new_provisioner(
        &self,
        host: HostData,
        events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError>;

    /// [`ProvisionerFactory::new_provisioner`] with the host's saved state handed over shared
    /// instead of in [`HostData::provisioner_state`] (which the caller leaves `None`), so that a
    /// factory that keeps its states shared (see [`Provisioner::shared_persistent_state`]) need
    /// not have it copied on every pass. The default puts a copy in `host` and calls
    /// `new_provisioner`.
    fn new_provisioner_with_state(
        &self,
        mut host: HostData,
        state: Option<Arc<serde_json::Value>>,
        events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        host.provisioner_state = state.map(Arc::unwrap_or_clone);
        self.new_provisioner(host, events)
    }

    /// Whether this factory and its provisioners answer every call from memory, never waiting
    /// on a backend, a disk or a timer: a pass then keeps a core busy from start to end, and
    /// the caller runs no more passes at once than there are cores (more would only take turns
    /// on them), queueing the rest. Like [`Self::new_provisioner_with_state`], for provisioners
    /// compiled into bmhctl and not a call of the ABI: a plugin loaded from a `.so` is never
    /// asked. The default, `false`, keeps every pass its own thread.
    fn calls_never_block(&self) -> bool {
        false
    }
});

/// The first SDK minor version whose plugins answer `create_bmc_event_subscription` and
/// `delete_bmc_event_subscription`; older plugins are never asked (their answer is taken as
/// "not supported").
pub const BMC_EVENT_SUBSCRIPTIONS_SINCE_MINOR: u64 = 4;

/// The first SDK minor version whose plugins answer [`ProvisionerFactory::probe`]; older plugins
/// are never asked.
pub const PROBE_SINCE_MINOR: u64 = 3;

/// The first SDK minor version whose plugins answer the data image calls
/// ([`Provisioner::get_data_image_status`], `attach_data_image`, `detach_data_image`) for real;
/// older plugins are never asked, and the caller gets [`data_images_not_supported`].
pub const DATA_IMAGE_SINCE_MINOR: u64 = 4;

/// The error of a data image call that the provisioner does not implement.
pub fn data_images_not_supported() -> ProvisionerError {
    ProvisionerError::Other("data images are not supported by this provisioner".into())
}

/// The first SDK minor version whose plugins answer [`ProvisionerFactory::due_hosts`]; older
/// plugins are never asked.
pub const DUE_HOSTS_SINCE_MINOR: u64 = 2;

calls::provisioner_calls!(provisioner_trait {
    /// The operations BMO's state machine asks of a provisioner. `OpResult.dirty` means "still
    /// working, call again after `requeue_after`"; `OpResult.error_message` means "failed until
    /// restarted"; `Err` is a transient or unexpected error.
    ///
    /// The methods are declared once, in `calls.rs`, with their wire shapes (see
    /// [`abi::ProvisionerCall`]); flags travel in options structs and several answers in result
    /// structs (see the `*Options` and `*Result` types).
    pub trait Provisioner: Send
});

/// The version of the C ABI between bmhctl and its provisioner plugins.
pub const ABI_VERSION: u32 = 1;

/// The first SDK minor version whose plugins answer [`ProvisionerFactory::api_calls`]; older
/// plugins are never asked.
pub const API_CALLS_SINCE_MINOR: u64 = 4;

/// The first SDK minor version whose plugins answer [`ProvisionerFactory::ready_hosts`]; older
/// plugins are never asked (their passes start at once).
pub const READY_HOSTS_SINCE_MINOR: u64 = 5;

/// The first SDK minor version whose plugins answer [`ProvisionerFactory::known_machines`];
/// older plugins are never asked (nothing to import from them).
pub const KNOWN_MACHINES_SINCE_MINOR: u64 = 6;
