//! Conditions, recomputed at the end of every successful pass (`computeConditions`,
//! `baremetalhost_controller.go:2389-2469`).

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

impl Pass<'_, '_> {
    /// Recomputes the conditions; returns whether they changed.
    pub(super) fn compute_conditions(&mut self, prov: &mut dyn Provisioner) -> bool {
        let state = self.state().clone();
        let op = self.status().operational_status.clone();
        let not = (FALSE, "");
        let (mut manageable, available, provisioned, mut ready, mut progressing) = match state {
            S::None | S::Unmanaged => (
                (FALSE, "NotManaged"),
                (FALSE, "NotAvailable"),
                (FALSE, "NotProvisioned"),
                (FALSE, "NotProvisioned"),
                (FALSE, "NotProgressing"),
            ),
            S::Registering => {
                let m = if op == OperationalStatus::Error {
                    "RegistrationFailed"
                } else {
                    "Registering"
                };
                (
                    (FALSE, m),
                    (FALSE, "NotAvailable"),
                    (FALSE, "NotProvisioned"),
                    (FALSE, "NotProvisioned"),
                    (TRUE, "Registering"),
                )
            }
            S::Available | S::Ready => (
                (TRUE, "Manageable"),
                (TRUE, "Available"),
                (FALSE, "NotProvisioned"),
                (FALSE, "NotProvisioned"),
                (FALSE, "NotProgressing"),
            ),
            S::Provisioned | S::ExternallyProvisioned => (
                (TRUE, "Manageable"),
                (FALSE, "NotAvailable"),
                (TRUE, "Provisioned"),
                (TRUE, "Provisioned"),
                (FALSE, "NotProgressing"),
            ),
            ref s => {
                let g = match s {
                    S::Preparing => "Preparing",
                    S::Provisioning => "Provisioning",
                    S::Deprovisioning => "Deprovisioning",
                    S::Inspecting | S::MatchProfile => "Inspecting",
                    S::PoweringOffBeforeDelete => "PoweringOffBeforeDelete",
                    S::Deleting => "Deleting",
                    _ => "NotProgressing",
                };
                let progressing = if g == "NotProgressing" {
                    not
                } else {
                    (TRUE, g)
                };
                (
                    (TRUE, "Manageable"),
                    (FALSE, "NotAvailable"),
                    (FALSE, "NotProvisioned"),
                    (FALSE, "NotProvisioned"),
                    progressing,
                )
            }
        };
        match op {
            OperationalStatus::Error => ready = (FALSE, "Error"),
            OperationalStatus::Servicing => ready = (FALSE, "Servicing"),
            OperationalStatus::Detached => {
                ready = (FALSE, "Detached");
                progressing = (FALSE, "Detached");
            }
            _ => {}
        }
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
        if !self.status().conditions.is_sorted_by(in_order) {
            sort_conditions(&mut self.status_mut().conditions);
            changed = true;
        }
        changed
    }

    /// cluster-api's `conditions.Set`: the transition time moves only when the status flips.
    /// Returns whether the condition changed (an unchanged one leaves the status untouched).
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

fn in_order(a: &Condition, b: &Condition) -> bool {
    (a.type_ != READY, a.type_.as_str()) <= (b.type_ != READY, b.type_.as_str())
}

/// `Ready` first, then alphabetical.
fn sort_conditions(c: &mut [Condition]) {
    c.sort_by(|a, b| {
        (a.type_ != READY, a.type_.as_str()).cmp(&(b.type_ != READY, b.type_.as_str()))
    });
}
