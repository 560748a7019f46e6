//! `PowerOn` / `PowerOff` (spec 3.11) and BMO's `changePower` (2.6).

use super::{
    IronicProvisioner, LONG_DELAY, Outcome, SHORT_DELAY, SOFT_POWER_OFF_TIMEOUT_SECS, requeue,
    transient,
};
use crate::types::{Node, state};
use bmh_api::{AutomatedCleaningMode, RebootMode};
use bmhctl_plugin_sdk::OpResult;
use bmhctl_plugin_sdk::{PowerOffOptions, PowerOnOptions};
use std::time::Duration;

impl IronicProvisioner {
    pub(super) fn do_power_on(&mut self, opts: PowerOnOptions) -> Outcome {
        let node = self.get_node()?;
        if node.power_state.as_deref() == Some(state::POWER_ON) {
            return Ok(OpResult::done());
        }
        if node.target_power_state.as_deref() == Some(state::POWER_ON) {
            return Ok(requeue(SHORT_DELAY));
        }
        if !node.last_error_str().is_empty() && !opts.force {
            return Ok(OpResult::failed(format!(
                "PowerOn operation failed: {}",
                node.last_error_str()
            )));
        }
        self.change_power(&node, state::POWER_ON)
            .expect("only soft power off answers 400")
    }

    pub(super) fn do_power_off(&mut self, opts: PowerOffOptions) -> Outcome {
        let node = self.get_node()?;
        if let Some(r) = self.clear_power_obstacles(&node, opts.automated_cleaning_mode) {
            return r;
        }
        if node.power_state.as_deref() == Some(state::POWER_OFF) {
            return Ok(OpResult::done());
        }
        if matches!(
            node.target_power_state.as_deref(),
            Some(state::POWER_OFF | state::SOFT_POWER_OFF)
        ) {
            return Ok(requeue(SHORT_DELAY));
        }
        let last_error = node.last_error_str();
        if node.target_power_state.as_deref().unwrap_or("").is_empty()
            && !last_error.is_empty()
            && !opts.force
            && !last_error.contains("aborted")
        {
            return Ok(OpResult::failed(last_error));
        }
        let (soft, hard) = if node.disable_power_off {
            (state::SOFT_REBOOT, state::REBOOT)
        } else {
            (state::SOFT_POWER_OFF, state::POWER_OFF)
        };
        if opts.mode == RebootMode::Soft && !opts.force {
            if let Some(r) = self.change_power(&node, soft) {
                return r;
            }
            tracing::info!(node = %node.uuid, "soft power off unsupported, powering off hard");
        }
        self.change_power(&node, hard)
            .expect("only soft power off answers 400")
    }

    /// BMO's `abortInspectionOrCleaning`: Ironic refuses power changes while these run.
    fn clear_power_obstacles(
        &mut self,
        node: &Node,
        cleaning: AutomatedCleaningMode,
    ) -> Option<Outcome> {
        let manual_clean = node.target_provision_state_str() == "clean";
        match node.provision_state.as_str() {
            state::INSPECT_WAIT => Some(self.change_state(node, "abort")),
            state::CLEAN_WAIT if manual_clean || cleaning == AutomatedCleaningMode::Disabled => {
                Some(self.change_state(node, "abort"))
            }
            state::INSPECTING | state::CLEANING | state::CLEAN_WAIT => {
                Some(Ok(requeue(LONG_DELAY)))
            }
            state::INSPECT_FAIL if !node.target_provision_state_str().is_empty() => {
                Some(self.change_state(node, "manage"))
            }
            _ => None,
        }
    }

    /// BMO's `changePower`; `None` for a soft power-off refused with 400 (then a hard one).
    fn change_power(&mut self, node: &Node, target: &str) -> Option<Outcome> {
        if !node.target_provision_state_str().is_empty() {
            return Some(Ok(requeue(SHORT_DELAY)));
        }
        let soft_off = target == state::SOFT_POWER_OFF;
        let timeout = soft_off.then_some(SOFT_POWER_OFF_TIMEOUT_SECS);
        Some(
            match self.seen(self.client().set_power_state(&node.uuid, target, timeout)) {
                Ok(()) => {
                    match target {
                        state::POWER_ON => self.publish("PowerOn", "Host powered on"),
                        state::POWER_OFF => self.publish("PowerOff", "Host powered off"),
                        state::SOFT_POWER_OFF => self.publish("PowerOff", "Host soft powered off"),
                        // Decision (spec 8.14): no event for reboots (BMO's is empty).
                        _ => {}
                    }
                    self.invalidate_as(super::Wrote::Listed);
                    Ok(requeue(Duration::ZERO))
                }
                Err(e) if e.is_conflict() => Ok(requeue(self.conflict_delay())),
                Err(e) if e.is_bad_request() && soft_off => return None,
                Err(e) => transient(format!("failed to {target} node: {e}")),
            },
        )
    }
}
