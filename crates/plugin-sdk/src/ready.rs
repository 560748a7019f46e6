//! The optional question "when can these hosts' passes be served?"
//! ([`ProvisionerFactory::ready_hosts`](crate::ProvisionerFactory::ready_hosts)), asked in
//! change-driven timing just before passes start.

use bmh_api::ObjectKey;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A host whose next pass is about to start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartingHost {
    /// The host's namespace and name.
    pub host: ObjectKey,
    /// The provisioner's ID of the host (`status.provisioning.ID`), empty before registration.
    #[serde(default)]
    pub provisioner_id: String,
}

/// The answer to [`ProvisionerFactory::ready_hosts`](crate::ProvisionerFactory::ready_hosts).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadyHosts {
    /// For each host asked about, in order: how long from now until the provisioner's shared
    /// view can serve its pass (zero: now). The caller may start a pass later than this, never
    /// earlier because of it; it bounds the wait whatever the answer. Missing entries read zero.
    #[serde(default)]
    pub wait: Vec<Duration>,
}
