//! Conditions, recomputed at the end of every successful pass (BMO's `computeConditions`).

use super::Pass;
use bmh_api::{Condition, OperationalStatus, ProvisioningState as S, Word};
use bmhctl_plugin_sdk::{HEALTH_CRITICAL, HEALTH_OK, HEALTH_WARNING, Provisioner};

pub mod condition_types {
    pub const READY: &str = "Ready";
    pub const MANAGEABLE: &str = "Manageable";
    pub const AVAILABLE_FOR_PROVISIONING: &str = "AvailableForProvisioning";
    pub const PROVISIONED: &str = "Provisioned";
    pub const PROGRESSING: &str = "Progressing";
    pub const HEALTHY: &str = "Healthy";
}
use condition_types::*;

const TRUE: &str = "True";
const FALSE: &str = "False";
const UNKNOWN: &str = "Unknown";

/// `Progressing` for the state: true with the state's name while an operation runs.
fn progressing(state: &S) -> (&'static str, &'static str) {
    match state {
        S::Registering => (TRUE, "Registering"),
        S::Preparing => (TRUE, "Preparing"),
        S::Provisioning => (TRUE, "Provisioning"),
        S::Deprovisioning => (TRUE, "Deprovisioning"),
        S::Inspecting | S::MatchProfile => (TRUE, "Inspecting"),
        S::PoweringOffBeforeDelete => (TRUE, "PoweringOffBeforeDelete"),
        S::Deleting => (TRUE, "Deleting"),
        S::None | S::Unmanaged | S::Available | S::Ready => (FALSE, "NotProgressing"),
        S::Provisioned | S::ExternallyProvisioned => (FALSE, "NotProgressing"),
        // A state BMO does not know.
        _ => (FALSE, ""),
    }
}

impl Pass<'_, '_> {
    /// Recomputes the conditions; returns whether they changed.
    pub(super) fn compute_conditions(&mut self, prov: &mut dyn Provisioner) -> bool {
        let state = self.state().clone();
        let op = self.status().operational_status.clone();
        let mut manageable = match state {
            S::None | S::Unmanaged => (FALSE, "NotManaged"),
            S::Registering if op == OperationalStatus::Error => (FALSE, "RegistrationFailed"),
            S::Registering => (FALSE, "Registering"),
            _ => (TRUE, "Manageable"),
        };
        let available = match state {
            S::Available | S::Ready => (TRUE, "Available"),
            _ => (FALSE, "NotAvailable"),
        };
        let provisioned = match state {
            S::Provisioned | S::ExternallyProvisioned => (TRUE, "Provisioned"),
            _ => (FALSE, "NotProvisioned"),
        };
        let (ready, progressing) = match op {
            OperationalStatus::Error => ((FALSE, "Error"), progressing(&state)),
            OperationalStatus::Servicing => ((FALSE, "Servicing"), progressing(&state)),
            OperationalStatus::Detached => ((FALSE, "Detached"), (FALSE, "Detached")),
            _ => (provisioned, progressing(&state)),
        };
        let skip_power_check =
            matches!(state, S::None | S::Unmanaged | S::Registering | S::Deleting)
                || op == OperationalStatus::Detached;
        if !skip_power_check && prov.has_power_failure() {
            manageable = (FALSE, "PowerFailure");
        }
        let health = prov.get_health();
        let mut changed = self.set_condition(READY, ready);
        changed |= self.set_condition(MANAGEABLE, manageable);
        changed |= self.set_condition(AVAILABLE_FOR_PROVISIONING, available);
        changed |= self.set_condition(PROVISIONED, provisioned);
        changed |= self.set_condition(PROGRESSING, progressing);
        changed |= match health.as_str() {
            HEALTH_OK => self.set_condition(HEALTHY, (TRUE, "Healthy")),
            HEALTH_WARNING => self.set_condition(HEALTHY, (FALSE, "Warning")),
            HEALTH_CRITICAL => self.set_condition(HEALTHY, (FALSE, "CriticalError")),
            "" => {
                !self.status().conditions.iter().any(|c| c.type_ == HEALTHY)
                    && self.set_condition(HEALTHY, (UNKNOWN, "Unknown"))
            }
            _ => self.set_condition(HEALTHY, (UNKNOWN, "Unknown")),
        };
        let conditions = &self.status().conditions;
        if !conditions.is_sorted_by(|a, b| order(a) <= order(b)) {
            let conditions = &mut self.status_mut().conditions;
            conditions.sort_by(|a, b| order(a).cmp(&order(b)));
            changed = true;
        }
        changed
    }

    /// cluster-api's `conditions.Set` (time moves only on a flip); returns whether it changed.
    fn set_condition(
        &mut self,
        type_: &'static str,
        (status, reason): (&'static str, &'static str),
    ) -> bool {
        let generation = self.rec.book.generation;
        let found = self
            .status()
            .conditions
            .iter()
            .position(|c| c.type_ == type_);
        if let Some(i) = found {
            let c = &self.status().conditions[i];
            if c.status == status && c.reason == reason && c.observed_generation == generation {
                return false;
            }
        }
        let now = self.now.word().clone();
        let conditions = &mut self.status_mut().conditions;
        match found {
            Some(i) => {
                let c = &mut conditions[i];
                if c.status != status {
                    c.last_transition_time = now;
                    c.status = Word::from_static(status);
                }
                c.reason = Word::from_static(reason);
                c.observed_generation = generation;
            }
            None => conditions.push(Condition {
                type_: Word::from_static(type_),
                status: Word::from_static(status),
                observed_generation: generation,
                last_transition_time: now,
                reason: Word::from_static(reason),
                message: String::new(),
            }),
        }
        true
    }
}

/// Where a condition sorts: `Ready` first, then alphabetical.
fn order(c: &Condition) -> (bool, &str) {
    (c.type_ != READY, c.type_.as_str())
}
