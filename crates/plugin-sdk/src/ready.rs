//! When can these hosts' passes be served ([`crate::ProvisionerFactory::ready_hosts`])?

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
    /// Per host, in order: how long until its pass can be served (missing entries read zero).
    #[serde(default)]
    pub wait: Vec<Duration>,
}
