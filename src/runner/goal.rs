//! Where a host is driven to.

use crate::record::HostRecord;
use bmh_api::ProvisioningState as S;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Goal {
    /// Stable in this state.
    State(S),
    /// The delete path finished.
    Deleted,
}

impl Goal {
    /// `bmhctl provision`: `provisioned` with an image and `online`, `externally provisioned`,
    /// `unmanaged` without BMC details, else `available`.
    pub fn for_provision(rec: &HostRecord) -> Goal {
        let host = &rec.host;
        let spec = &host.spec;
        if !host.has_bmc_details() {
            return Goal::State(S::Unmanaged);
        }
        if spec.externally_provisioned {
            return Goal::State(S::ExternallyProvisioned);
        }
        let has_image = spec.image.as_ref().is_some_and(|i| !i.url.is_empty());
        let has_custom_deploy = crate::machine::deploy_method(&spec.custom_deploy).is_some();
        // BMO never deprovisions a host that goes offline: it stays provisioned, powered off.
        let deployed = matches!(
            rec.status().provisioning.state,
            S::Provisioning | S::Provisioned
        );
        if (spec.online || deployed) && (has_image || has_custom_deploy) {
            return Goal::State(S::Provisioned);
        }
        Goal::State(S::Available)
    }

    /// Whether a stable host in `state` has reached the goal (`ready` counts as `available`).
    pub fn reached_by(&self, state: &S) -> bool {
        match self {
            Goal::State(S::Available) => matches!(state, S::Available | S::Ready),
            Goal::State(s) => s == state,
            Goal::Deleted => false,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Goal::State(s) => s.as_str().to_string(),
            Goal::Deleted => "deleted".into(),
        }
    }
}
