//! What the simulated backend of a plan starts from: the status and, read-only, the live node.

use crate::provisioners::fixture::FixtureState;
use crate::record::HostRecord;
use bmhctl_plugin_sdk::{
    BmcCredentials, EventSink, HostData, ProvisionerError, ProvisionerFactory,
};
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Live {
    /// Not asked: the fixture, a host without a node yet, or an unreachable provisioner.
    NotAsked,
    /// The node is there; its power state when the provisioner knows it.
    Node { powered_on: Option<bool> },
    /// The host has a provisioner ID but the provisioner has no such node: it registers again.
    NoNode,
    /// The question failed (the plan goes on from the status alone).
    Failed(String),
}

/// Asks `factory` about the node of `rec` with read-only calls only.
pub fn ask(factory: &dyn ProvisionerFactory, rec: &HostRecord) -> Live {
    let status = rec.status();
    if status.provisioning.id.is_empty() {
        return Live::NotAsked;
    }
    let host = &rec.host;
    let data = HostData {
        key: host.metadata.key(),
        uid: rec.book.uid.clone(),
        labels: host.metadata.labels.clone(),
        annotations: host.metadata.annotations.clone(),
        bmc_address: host.spec.bmc.clone().unwrap_or_default().address,
        // The power state needs no BMC credentials: none are handed over.
        bmc_credentials: BmcCredentials::default(),
        disable_certificate_verification: host
            .spec
            .bmc
            .as_ref()
            .is_some_and(|b| b.disable_certificate_verification),
        boot_mac_address: host.spec.boot_mac_address.clone(),
        provisioner_id: status.provisioning.id.clone(),
        provisioner_state: rec.book.provisioner_state.as_deref().cloned(),
        externally_provisioned: host.spec.externally_provisioned,
        inspection_disabled: host.inspection_disabled(),
    };
    // Events of a read are of no interest to a plan.
    let sink: EventSink = Arc::new(|_| {});
    let answer = factory
        .new_provisioner(data, sink)
        .and_then(|mut p| p.update_hardware_state());
    match answer {
        Ok(state) => Live::Node {
            powered_on: state.powered_on,
        },
        Err(ProvisionerError::NeedsRegistration) => Live::NoNode,
        Err(e) => Live::Failed(e.to_string()),
    }
}

/// The simulated backend's state: the fixture's own, else one made from the status and `live`.
pub fn backend_state(
    rec: &HostRecord,
    live: &Live,
    fixture_is_the_provisioner: bool,
) -> Option<serde_json::Value> {
    if fixture_is_the_provisioner
        && let Some(v) = &rec.book.provisioner_state
        && <FixtureState as serde::Deserialize>::deserialize(&**v).is_ok()
    {
        return Some((**v).clone());
    }
    let status = rec.status();
    // Fields not named keep their defaults as the fixture gains fields.
    let mut s = FixtureState {
        powered_on: Some(match live {
            Live::Node {
                powered_on: Some(on),
            } => *on,
            _ => status.powered_on,
        }),
        // What the node holds, as the status says: a deprovision then has an image to remove.
        image: status.provisioning.image.clone(),
        custom_deploy: status.provisioning.custom_deploy.clone(),
        inspection_started: status.hardware.is_some(),
        adopted: true,
        ..FixtureState::default()
    };
    if let Some(settings) = rec
        .firmware_settings
        .as_ref()
        .and_then(|f| f.status.as_ref())
        .filter(|st| !st.settings.is_empty())
    {
        Arc::make_mut(&mut s.host_firmware_settings).settings = settings.settings.clone();
    }
    if let Some(components) = rec
        .firmware_components
        .as_ref()
        .and_then(|f| f.status.as_ref())
        .filter(|st| !st.components.is_empty())
    {
        Arc::make_mut(&mut s.host_firmware_components).components = components
            .components
            .iter()
            .map(|c| bmhctl_plugin_sdk::FirmwareComponentStatus {
                component: c.component.clone(),
                initial_version: c.initial_version.clone(),
                current_version: c.current_version.clone(),
                last_version_flashed: c.last_version_flashed.clone(),
                updated_at: c.updated_at.clone().unwrap_or_default(),
            })
            .collect();
    }
    serde_json::to_value(&s).ok()
}
