//! The Ironic provisioner: a thin typed client of Ironic's REST API and BMO's Ironic
//! provisioner on top of it.
//!
//! Compiled only with the `ironic` cargo feature, by the `ironic-provisioner` plugin crate; the
//! bmhctl binary never calls it directly and reaches it only by loading
//! `ironic-provisioner.so`.

pub mod api;
pub mod client;
pub mod convert;
pub mod plugin;
pub mod provisioner;
pub mod types;

#[cfg(test)]
mod tests;

pub use api::{CAPACITY_FIELDS, PORT_FIELDS, PortQuery};
pub use client::{ApiVersion, Auth, IronicClient, IronicConfig, IronicError, IronicErrorKind};
pub use types::{
    Driver, Node, NodeInventory, NodePatch, PatchOp, Port, ProvisionStateRequest, Section,
};
