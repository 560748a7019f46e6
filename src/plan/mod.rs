//! Plans: BMO's state machine run on a copy of each host against a simulated backend.

mod recording;
pub mod seed;

pub use seed::Live;

use crate::clock::{Clock, ManualClock};
use crate::machine::{Machine, MachineConfig, Requeue};
use crate::objects::ObjectSource;
use crate::record::HostRecord;
use crate::runner::Goal;
use bmh_api::{AutomatedCleaningMode, ObjectKey, OperationalStatus, ProvisioningState as S};
use recording::{RecordingFactory, Steps};
use std::time::Duration;

/// Passes a simulation runs at most: every path BMO has takes a few dozen.
const MAX_PASSES: usize = 500;

/// One thing the provisioner would be asked to do, in plain words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The kind of step (`register`, `inspect`, `provision`, `powerOn`, ...).
    pub kind: &'static str,
    /// What it does (`deploy image http://...`).
    pub text: String,
    /// It erases or overwrites disks (cleaning, a deploy, RAID), or removes the host from the
    /// provisioner.
    pub destructive: bool,
}

impl Step {
    fn plain(kind: &'static str, text: impl Into<String>) -> Self {
        Self {
            kind,
            text: text.into(),
            destructive: false,
        }
    }

    fn destructive(kind: &'static str, text: impl Into<String>) -> Self {
        Self {
            destructive: true,
            ..Self::plain(kind, text)
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct HostPlan {
    pub key: ObjectKey,
    pub from: S,
    pub goal: Goal,
    /// Every state it would pass through, the first being `from`.
    pub path: Vec<S>,
    /// The delete path would end with the host gone.
    pub deleted: bool,
    pub steps: Vec<Step>,
    /// It would reach its goal; else `stops` says why not.
    pub reaches: bool,
    pub stops: String,
    /// What the provisioner said of the host's node.
    pub live: Live,
}

impl HostPlan {
    pub fn destructive(&self) -> bool {
        self.steps.iter().any(|s| s.destructive)
    }
}

pub struct Planner<'a> {
    pub objects: &'a dyn ObjectSource,
    pub machine: &'a MachineConfig,
    /// The fixture is the chosen provisioner: a host's fixture state is its backend's.
    pub fixture: bool,
}

impl Planner<'_> {
    /// The plan of `record` (its copy is driven; `record` is left as it is) to `goal`.
    pub fn plan(&self, record: &HostRecord, goal: Goal, live: Live) -> HostPlan {
        let mut rec = record.clone();
        if live == Live::NoNode
            && let Some(st) = rec.host.status.as_mut()
        {
            // BMO registers a host whose node is gone again, from scratch.
            st.provisioning.id.clear();
        }
        rec.book.provisioner_state =
            seed::backend_state(&rec, &live, self.fixture).map(std::sync::Arc::new);
        let steps = Steps::default();
        let factory = RecordingFactory {
            inner: crate::provisioners::fixture::Fixture::new(),
            steps: steps.clone(),
        };
        let clock = ManualClock::new(crate::clock::SystemClock.now());
        let machine = Machine {
            factory: &factory,
            objects: self.objects,
            clock: &clock,
            config: self.machine,
        };
        let mut rng = fastrand::Rng::with_seed(1);
        let from = rec.status().provisioning.state.clone();
        let mut plan = HostPlan {
            key: rec.host.metadata.key(),
            from: from.clone(),
            goal: goal.clone(),
            path: vec![from],
            deleted: false,
            steps: Vec::new(),
            reaches: false,
            stops: String::new(),
            live,
        };
        let stops = (0..MAX_PASSES).find_map(|_| {
            let out = machine.reconcile(&mut rec, &mut rng);
            let status = rec.status();
            let state = status.provisioning.state.clone();
            if plan.path.last() != Some(&state) {
                plan.path.push(state.clone());
            }
            let op = &status.operational_status;
            if out.deleted() {
                plan.deleted = true;
                plan.reaches = goal == Goal::Deleted;
                Some(String::new())
            } else if out.paused() {
                Some("paused (annotation baremetalhost.metal3.io/paused)".into())
            } else if out.steady() && goal.reached_by(&state) && *op != OperationalStatus::Error {
                plan.reaches = true;
                Some(String::new())
            } else if *op == OperationalStatus::Detached {
                Some("detached".into())
            } else if let Some(e) = &out.error {
                Some(e.clone())
            } else if *op == OperationalStatus::Error {
                Some(status.error_message.clone())
            } else {
                match out.requeue {
                    Requeue::Never => Some(format!(
                        "stops in state {:?}, waiting for a change",
                        state.as_str()
                    )),
                    Requeue::After(d) => {
                        clock.advance(d);
                        None
                    }
                    Requeue::ErrorBackoff => {
                        clock.advance(Duration::from_secs(10));
                        None
                    }
                }
            }
        });
        plan.stops = stops.unwrap_or_else(|| {
            let state = rec.status().provisioning.state.as_str();
            format!("still {state:?} after {MAX_PASSES} passes")
        });
        plan.steps = std::mem::take(&mut *crate::provisioners::lock(&steps));
        // Whatever rehearses it, the plan is of BMO with Ironic, which cleans (metadata
        // cleaning erases the disks) unless the host disables it.
        if record.host.spec.automated_cleaning_mode != AutomatedCleaningMode::Disabled {
            add_cleaning_before_deploy(&mut plan);
        }
        plan
    }
}

/// Ironic cleans a node's disks at its `provide`, unless just deprovisioned or deploying.
fn add_cleaning_before_deploy(plan: &mut HostPlan) {
    if plan.from == S::Provisioning {
        return;
    }
    let Some(i) = plan.steps.iter().position(|s| s.kind == "provision") else {
        return;
    };
    if plan.steps[..i].iter().any(|s| s.kind == "deprovision") {
        return;
    }
    plan.steps.insert(
        i,
        Step::destructive("clean", "clean disks (automated cleaning, if not done yet)"),
    );
}

#[cfg(test)]
mod tests;
