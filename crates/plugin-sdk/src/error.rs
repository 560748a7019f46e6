use serde::{Deserialize, Serialize};

/// Errors a provisioner returns (BMO's sentinel errors plus "anything else").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum ProvisionerError {
    /// The backend can't be used yet; the caller retries after 30 s without touching the host.
    #[error("provisioner is not ready{}", detail(.0))]
    NotReady(String),
    /// The backend does not know the host (no ID, or gone).
    #[error("host not registered")]
    NeedsRegistration,
    /// The host needs a preprovisioning image and none is available yet.
    #[error("no suitable Preprovisioning image available")]
    NeedsPreprovisioningImage,
    /// The node is locked by another operation: retried later without counting an error.
    #[error("node is busy")]
    NodeIsBusy,
    /// The backend refuses in a way no retry changes: from `new_provisioner`, it holds the host
    /// in a way its status does not know and BMO's path cannot take on (a node an earlier run
    /// left), and the host's run stops, its status as it was; from `probe`, it cannot be used
    /// at all (an Ironic too old), and the run ends before any pass.
    #[error("{0}")]
    Refused(String),
    /// Any other (transient or unexpected) error.
    #[error("{0}")]
    Other(String),
}

fn detail(s: &str) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!(": {s}")
    }
}

impl ProvisionerError {
    /// [`ProvisionerError::Other`] with `msg` as its message.
    pub fn other(msg: impl std::fmt::Display) -> Self {
        Self::Other(msg.to_string())
    }
}
