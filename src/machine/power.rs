//! Power in the stable states: BMO's `manageHostPower` and reboot annotations.

use super::firmware::FirmwareError;
use super::{Action, Pass, delays};
use bmh_api::{ErrorType, OperationalStatus, ProvisioningState as S, RebootMode, annotations};
use bmhctl_plugin_sdk::{
    PowerOffOptions, PowerOnOptions, Provisioner, ServicingData, StepOptions, StepResult,
};
use std::time::Duration;

/// The JSON value of a reboot annotation.
#[derive(Debug, Default)]
pub(crate) struct RebootArgs {
    pub mode: Option<String>,
    pub force: bool,
}

impl RebootArgs {
    /// BMO's `getRebootAnnotationArguments`: Go's `json.Unmarshal` (keys in any case, a field
    /// of the wrong type skipped but the others kept), and whether it failed.
    pub(crate) fn decode(value: &str) -> (Self, bool) {
        use crate::validate::gojson::{REBOOT_ARGUMENTS, unmarshal_fields};
        let (fields, ok) = unmarshal_fields(value, &REBOOT_ARGUMENTS);
        let args = RebootArgs {
            mode: fields
                .get("mode")
                .and_then(|v| v.as_str())
                .map(str::to_string),
            force: fields
                .get("force")
                .and_then(|v| v.as_bool())
                .unwrap_or(false),
        };
        (args, ok)
    }
}

const SOFT_POWER_OFF_FAILED_PREFIX: &str =
    "Continuing with hard poweroff after soft poweroff fails. More details: ";

impl Pass<'_, '_> {
    /// BMO's `hasRebootAnnotation`: whether a reboot is asked for, and in which mode.
    pub(super) fn reboot_requested(&mut self, expect_force: bool) -> (bool, RebootMode) {
        let mut requested = false;
        let mut mode = RebootMode::Soft;
        let mut invalid = Vec::new();
        for (key, value) in &self.rec.host.metadata.annotations {
            if !annotations::is_reboot_annotation(key) {
                continue;
            }
            let args = if value.is_empty() {
                RebootArgs::default()
            } else {
                let (args, ok) = RebootArgs::decode(value);
                if !ok {
                    invalid.push(value.clone());
                }
                args
            };
            if expect_force && !args.force {
                continue;
            }
            requested = true;
            if args.mode.as_deref() == Some("hard") {
                mode = RebootMode::Hard;
            }
        }
        // BMO's `getRebootAnnotationArguments` quotes the value.
        for value in invalid {
            self.event(
                "InvalidAnnotationValue",
                format!("could not parse reboot annotation ({value}) - invalid json, assuming soft-reboot"),
            );
        }
        (requested, mode)
    }

    pub(super) fn manage_host_power(&mut self, prov: &mut dyn Provisioner) -> Action {
        let hw = match prov.update_hardware_state() {
            Ok(h) => h,
            Err(e) => return Action::error(format!("failed to update the host power status: {e}")),
        };
        if let Some(on) = hw.powered_on.filter(|&on| on != self.status().powered_on) {
            self.status_mut().powered_on = on;
            if self.status().operational_status == OperationalStatus::Error
                && *self.error_type() == ErrorType::PowerManagementError
            {
                self.clear_error();
            }
            return Action::Update(Duration::ZERO);
        }
        let mut desired = self.rec.host.spec.online;
        let provisioned = matches!(self.state(), S::Provisioned | S::ExternallyProvisioned);
        let powered_on = self.status().powered_on;

        if provisioned
            && desired
            && !powered_on
            && let Some(a) = self.handle_data_image_actions(prov)
        {
            return a;
        }
        if !powered_on && self.remove_annotation(annotations::REBOOT_PREFIX) {
            // The "off" half of a one-shot reboot is done.
            return Action::Continue(Duration::ZERO);
        }
        if ((provisioned && !powered_on && desired)
            || self.status().operational_status == OperationalStatus::Servicing
            || *self.error_type() == ErrorType::ServicingError)
            && let Some(a) = self.service_if_needed(prov)
        {
            return a;
        }
        let (reboot, mut mode) = self.reboot_requested(!provisioned);
        if reboot {
            desired = false;
        }
        if powered_on == desired {
            self.steady = true;
            return Action::Continue(delays::POWER_POLL);
        }
        let force = *self.error_type() == ErrorType::PowerManagementError;
        let result = if desired {
            prov.power_on(PowerOnOptions { force })
        } else {
            if self.status().error_count > 0 {
                mode = RebootMode::Hard;
            }
            prov.power_off(PowerOffOptions {
                mode: mode.clone(),
                force,
                automated_cleaning_mode: self.rec.host.spec.automated_cleaning_mode.clone(),
            })
        };
        let res = match result {
            Ok(r) => r,
            Err(e) => return Action::error(format!("failed to change power state: {e}")),
        };
        if self.rec.host.spec.disable_power_off
            && self.remove_annotation(annotations::REBOOT_PREFIX)
        {
            // PowerOff rebooted the host instead: the reboot is done.
            return Action::Continue(Duration::ZERO);
        }
        if !res.error_message.is_empty() {
            let mut message = res.error_message.clone();
            if !desired
                && mode == RebootMode::Soft
                && *self.error_type() != ErrorType::PowerManagementError
            {
                message = format!("{SOFT_POWER_OFF_FAILED_PREFIX}{message}");
            }
            return self.record_action_failure(ErrorType::PowerManagementError, &message);
        }
        if res.dirty {
            let changed = self.clear_error();
            return self.wait_on_provisioner(changed, res.requeue_after);
        }
        // The provisioner had nothing to do: trust spec.online (BMO's quirk 9: not `desired`).
        let online = self.rec.host.spec.online;
        let st = self.status_mut();
        st.powered_on = online;
        st.error_count = 0;
        Action::Update(delays::POWER_POLL)
    }

    /// BMO's `doServiceIfNeeded`: apply the firmware changes the HostUpdatePolicy allows.
    fn service_if_needed(&mut self, prov: &mut dyn Provisioner) -> Option<Action> {
        let (settings_allowed, updates_allowed) = self.live_firmware_changes_allowed();
        let firmware = match self.firmware_changes(settings_allowed, updates_allowed) {
            Ok(f) => f,
            Err(FirmwareError::Settings(e)) => {
                return Some(Action::error(format!(
                    "could not determine updated settings: {e}"
                )));
            }
            Err(FirmwareError::Components(e)) => {
                return Some(Action::error(format!(
                    "could not determine firmware components: {e}"
                )));
            }
        };
        let has_changes = firmware.settings_dirty || firmware.components_dirty;
        let servicing = self.status().operational_status == OperationalStatus::Servicing;
        let servicing_error = *self.error_type() == ErrorType::ServicingError;
        if !has_changes && !servicing && !servicing_error {
            return None;
        }
        if !servicing {
            // Yield once before asking the provisioner.
            self.status_mut().operational_status = OperationalStatus::Servicing;
            return Some(Action::Update(Duration::ZERO));
        }
        let data = ServicingData {
            has_firmware_spec: self.has_firmware_spec(settings_allowed, updates_allowed),
            target_firmware_settings: firmware.target_settings,
            actual_firmware_settings: firmware.actual_settings,
            target_firmware_components: firmware.target_components,
        };
        let opts = StepOptions {
            unprepared: has_changes,
            restart_on_failure: servicing_error,
        };
        let result = prov.service(&data, opts);
        if has_changes && result.is_ok() {
            self.firmware_refresh_needed();
        }
        let StepResult {
            result: res,
            started,
        } = match result {
            Ok(r) => r,
            Err(e) => return Some(Action::error(format!("error servicing host: {e}"))),
        };
        if !res.error_message.is_empty() {
            self.status_mut().provisioning.firmware = None;
            if firmware.components_dirty {
                self.clear_firmware_component_updates();
            }
            return Some(self.record_action_failure(ErrorType::ServicingError, &res.error_message));
        }
        let changed = self.clear_error_with_status(OperationalStatus::Servicing);
        if firmware.components_dirty
            && started
            && let Err(e) = self.save_firmware_components(prov)
        {
            return Some(Action::error(format!(
                "could not save the host firmware components: {e}"
            )));
        }
        if res.dirty {
            return Some(self.wait_on_provisioner(changed, res.requeue_after));
        }
        if changed {
            return Some(Action::Update(res.requeue_after));
        }
        if self.clear_error() {
            return Some(Action::Update(delays::SUB_RESOURCE_NOT_READY_RETRY));
        }
        None
    }
}
