//! `ironic-provisioner.so`: BMO's Ironic provisioner, bmhctl's default provisioner plugin, with
//! its REST client and conversions. bmhctl reaches it only by loading the `.so`.

pub mod api;
pub mod api_calls;
pub mod client;
pub mod convert;
pub mod known_machines;
mod mutex;
pub mod plugin;
pub mod probe;
pub mod provisioner;
pub mod types;

#[cfg(test)]
mod tests;

pub use api::{CAPACITY_FIELDS, MAX_PAGE, PORT_FIELDS, WATCH_FIELDS};
pub use client::{ApiVersion, Auth, IronicClient, IronicConfig, IronicError, IronicErrorKind};
pub use types::{
    Driver, Node, NodeInventory, NodePatch, PatchOp, Port, ProvisionStateRequest, Section,
};

bmhctl_plugin_sdk::export_plugin!(
    name = "ironic",
    factory = crate::plugin::factory,
    host_configure = crate::plugin::host_configure,
);
