//! The provisioner interface of bmhctl (BMO's `pkg/provisioner/provisioner.go`, in Rust).

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
pub use forwarding::{ForwardingFactory, ForwardingProvisioner};
pub use observed::{CallObserver, ObservedProvisioner};
pub use ready::{ReadyHosts, StartingHost};
/// Re-exported so plugins need no direct dependency on it.
pub use serde_json;

use calls::provisioner_trait;
use factory_calls::factory_trait;
use std::sync::Arc;

/// The version of this SDK (compatible: same major, plugin minor not above the host's).
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
    pub trait ProvisionerFactory: Send + Sync
} {
    /// `Err(ProvisionerError::NotReady(..))` makes the caller retry after 30 s without touching the host.
    fn new_provisioner(
        &self,
        host: HostData,
        events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError>;

    /// [`ProvisionerFactory::new_provisioner`] with the saved state handed over shared.
    fn new_provisioner_with_state(
        &self,
        mut host: HostData,
        state: Option<Arc<serde_json::Value>>,
        events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        host.provisioner_state = state.map(Arc::unwrap_or_clone);
        self.new_provisioner(host, events)
    }

    /// Whether every call is answered from memory (in-process only; a pass then holds a core).
    fn calls_never_block(&self) -> bool {
        false
    }
});

/// The first SDK minor whose plugins answer the BMC event subscription calls.
pub const BMC_EVENT_SUBSCRIPTIONS_SINCE_MINOR: u64 = 4;

/// The first SDK minor whose plugins answer [`ProvisionerFactory::probe`].
pub const PROBE_SINCE_MINOR: u64 = 3;

/// The first SDK minor whose plugins answer the data image calls for real.
pub const DATA_IMAGE_SINCE_MINOR: u64 = 4;

/// The error of a data image call that the provisioner does not implement.
pub fn data_images_not_supported() -> ProvisionerError {
    ProvisionerError::Other("data images are not supported by this provisioner".into())
}

/// The first SDK minor whose plugins answer [`ProvisionerFactory::due_hosts`].
pub const DUE_HOSTS_SINCE_MINOR: u64 = 2;

calls::provisioner_calls!(provisioner_trait {
    /// The operations BMO's state machine asks of a provisioner.
    pub trait Provisioner: Send
});

/// The version of the C ABI between bmhctl and its provisioner plugins.
pub const ABI_VERSION: u32 = 1;

/// The first SDK minor whose plugins answer [`ProvisionerFactory::api_calls`].
pub const API_CALLS_SINCE_MINOR: u64 = 4;

/// The first SDK minor whose plugins answer [`ProvisionerFactory::ready_hosts`].
pub const READY_HOSTS_SINCE_MINOR: u64 = 5;

/// The first SDK minor whose plugins answer [`ProvisionerFactory::known_machines`].
pub const KNOWN_MACHINES_SINCE_MINOR: u64 = 6;
