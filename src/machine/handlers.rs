//! One handler per provisioning state (`host_state_machine.go` and its `action*` functions).

use super::{Action, DELETE_RETRY_COUNT, Pass, delays};
use crate::intern::Recent;
use bmh_api::{ErrorType, Image, ObjectKey, ProvisioningState as S, SecretReference, annotations};
use bmhctl_plugin_sdk::{
    AdoptData, AdoptOptions, DeprovisionOptions, HostConfigData, HostConfigErrors, InspectData,
    InspectOptions, InspectResult, OpResult, PowerOffOptions, PrepareData, ProvisionData,
    ProvisionOptions, Provisioner, ProvisionerError, StepOptions, StepResult,
};
use std::sync::Arc;
use std::time::Duration;

impl Pass<'_, '_> {
    pub(super) fn handle_state(&mut self, prov: &mut dyn Provisioner, state: &S) -> Action {
        match state {
            S::None | S::Unmanaged if self.rec.host.has_bmc_details() => {
                self.complete(S::Registering)
            }
            S::None => {
                self.event("Discovered", "Discovered host with no BMC details");
                self.status_mut().operational_status = bmh_api::OperationalStatus::Discovered;
                self.complete(S::Unmanaged)
            }
            S::Unmanaged => {
                self.steady = true;
                Action::Continue(delays::UNMANAGED_RETRY)
            }
            // Reached only when registration fully succeeded in this pass.
            S::Registering => {
                let next = if self.rec.host.spec.externally_provisioned {
                    S::ExternallyProvisioned
                } else if self.rec.host.inspection_disabled() {
                    S::Preparing
                } else {
                    S::Inspecting
                };
                self.completed(next)
            }
            S::Inspecting => self.handle_inspecting(prov),
            S::ExternallyProvisioned => self.handle_externally_provisioned(prov),
            S::MatchProfile => self.completed(S::Preparing),
            S::Preparing => self.handle_preparing(prov),
            S::Available | S::Ready => self.handle_available(prov),
            S::Provisioning => self.handle_provisioning(prov),
            S::Provisioned if self.provisioning_cancelled() => self.complete(S::Deprovisioning),
            S::Provisioned => self.manage_steady_state(prov),
            S::Deprovisioning => self.handle_deprovisioning(prov),
            S::PoweringOffBeforeDelete => self.handle_powering_off_before_delete(prov),
            S::Deleting => self.handle_deleting(prov),
            S::Other(s) => Action::error(format!("no handler found for state \"{s}\"")),
        }
    }

    fn handle_inspecting(&mut self, prov: &mut dyn Provisioner) -> Action {
        if self.rec.host.inspection_disabled() {
            self.event("InspectionSkipped", "disabled by user");
            return self.completed(S::Preparing);
        }
        let refresh = self
            .annotation(annotations::INSPECT)
            .is_some_and(|v| v != annotations::INSPECT_DISABLED_VALUE);
        let force_reboot = self.reboot_requested(true).0;
        let data = InspectData {
            boot_mode: self.status().provisioning.boot_mode.clone(),
            cpu_architecture: self.cpu_architecture(),
            inspection_mode: self.rec.host.spec.inspection_mode.clone(),
        };
        let restart = *self.error_type() == ErrorType::InspectionError;
        let opts = InspectOptions {
            restart_on_failure: restart,
            refresh,
            force_reboot,
        };
        let InspectResult {
            result: res,
            started,
            details,
        } = match prov.inspect_hardware(&data, opts) {
            Ok(r) => r,
            Err(e) => return Action::error(format!("hardware inspection failed: {e}")),
        };
        if !res.error_message.is_empty() {
            return self.record_action_failure(ErrorType::InspectionError, &res.error_message);
        }
        if started {
            let inspect = refresh && self.remove_annotation(annotations::INSPECT);
            if self.remove_annotation(annotations::REBOOT_PREFIX) || inspect {
                return Action::Continue(Duration::ZERO);
            }
        }
        let Some(details) = details.filter(|_| !res.dirty) else {
            let changed = self.clear_error();
            return self.wait_on_provisioner(changed, res.requeue_after);
        };
        self.clear_error();
        let details = shared_details(details);
        self.status_mut().hardware = Some(details.clone());
        if !self.rec.being_deleted() {
            let host = &self.rec.host;
            self.rec.book.hardware_data = Some(Box::new(bmh_api::HardwareData {
                api_version: bmh_api::API_VERSION.into(),
                kind: "HardwareData".into(),
                metadata: bmh_api::ObjectMeta {
                    name: host.metadata.name.clone(),
                    namespace: host.metadata.namespace_or_default().to_string(),
                    finalizers: vec![annotations::HARDWARE_DATA_FINALIZER.into()],
                    ..Default::default()
                },
                spec: bmh_api::HardwareDataSpec {
                    hardware: Some(details),
                },
                extra: Default::default(),
            }));
            self.bookkeeping_changed = true;
        }
        self.completed(S::Preparing)
    }

    fn handle_preparing(&mut self, prov: &mut dyn Provisioner) -> Action {
        let (mut settings_dirty, desired) = match self.desired_provisioning_settings() {
            Ok(r) => r,
            Err(e) => return Action::error(e),
        };
        let restart = *self.error_type() == ErrorType::PreparationError;
        let mut data = PrepareData {
            target_raid_config: desired.raid.clone(),
            actual_raid_config: self.status().provisioning.raid.clone(),
            root_device_hints: desired.root_device_hints.as_deref().cloned(),
            ..Default::default()
        };
        if restart {
            // Assume RAID is broken after a failure and apply it again.
            data.actual_raid_config = None;
            settings_dirty = true;
        }
        // Firmware objects that are not ready yet: wait for them.
        let Ok(firmware) = self.firmware_changes(true, true) else {
            return Action::Continue(delays::SUB_RESOURCE_NOT_READY_RETRY);
        };
        let firmware_dirty = firmware.settings_dirty || firmware.components_dirty;
        data.target_firmware_settings = firmware.target_settings;
        data.actual_firmware_settings = firmware.actual_settings;
        data.target_firmware_components = firmware.target_components;
        let opts = StepOptions {
            unprepared: settings_dirty || firmware_dirty,
            restart_on_failure: restart,
        };
        let result = prov.prepare(&data, opts);
        if firmware_dirty && result.is_ok() {
            self.firmware_refresh_needed();
        }
        let StepResult {
            result: res,
            started,
        } = match result {
            Ok(r) => r,
            Err(e) => return Action::error(format!("error preparing host: {e}")),
        };
        if !res.error_message.is_empty() {
            if settings_dirty {
                self.clear_provisioning_settings();
            }
            if firmware.components_dirty {
                self.clear_firmware_component_updates();
            }
            return self.record_action_failure(ErrorType::PreparationError, &res.error_message);
        }
        if firmware.components_dirty
            && started
            && let Err(e) = self.save_firmware_components(prov)
        {
            return Action::error(format!("could not save the host firmware components: {e}"));
        }
        let saved = settings_dirty && started;
        if saved {
            self.save_provisioning_settings(desired);
        }
        let dirty = (started && self.clear_error()) || saved;
        if res.dirty {
            return self.wait_on_provisioner(dirty, res.requeue_after);
        }
        self.completed(S::Available)
    }

    fn handle_available(&mut self, prov: &mut dyn Provisioner) -> Action {
        if self.rec.host.spec.externally_provisioned {
            self.clear_provisioning_settings();
            return self.complete(S::ExternallyProvisioned);
        }
        if self
            .annotation(annotations::INSPECT)
            .is_some_and(|v| v != annotations::INSPECT_DISABLED_VALUE)
        {
            return self.complete(S::Inspecting);
        }
        match self.desired_provisioning_settings() {
            Err(e) => return Action::error(e),
            Ok((true, _)) => return self.complete(S::Preparing),
            Ok((false, _)) => {}
        }
        // Firmware settings, then firmware components, waiting to be applied.
        match self.firmware_changes(true, true) {
            Err(super::firmware::FirmwareError::Settings(e))
            | Err(super::firmware::FirmwareError::Components(e)) => return Action::error(e),
            Ok(f) if f.settings_dirty || f.components_dirty => return self.complete(S::Preparing),
            Ok(_) => {}
        }
        let image = self.rec.host.spec.image.as_ref();
        let has_image_url = image.is_some_and(|i| !i.url.is_empty());
        if !has_image_url && self.status().provisioning_fail_count > 0 {
            let st = self.status_mut();
            st.provisioning_fail_count = 0;
            st.last_attempted_image = None;
        }
        self.manage_available(prov)
    }

    /// BMO's `actionManageAvailable`.
    fn manage_available(&mut self, prov: &mut dyn Provisioner) -> Action {
        if !self.rec.host.needs_provisioning() {
            return self.manage_host_power(prov);
        }
        if self.rec.host.spec.image != self.status().last_attempted_image {
            self.status_mut().provisioning_fail_count = 0;
        }
        let limit = self.m.config.max_provisioning_retries;
        let failures = self.status().provisioning_fail_count;
        if limit > 0 && failures >= limit {
            let msg = format!(
                "provisioning failed {failures} times, retry limit ({limit}) reached; change image or reset provisioningFailCount to retry"
            );
            return self.record_action_failure(ErrorType::ProvisioningError, &msg);
        }
        self.clear_error();
        self.complete(S::Provisioning)
    }

    /// BMO's `provisioningCancelled`: only URLs and custom deploy methods count.
    fn provisioning_cancelled(&self) -> bool {
        let spec = &self.rec.host.spec;
        let status = &self.status().provisioning;
        let status_url = status.image.url.as_str();
        let status_method = deploy_method(&status.custom_deploy);
        if let Some(method) = deploy_method(&spec.custom_deploy) {
            let method_changed = status_method.is_some_and(|m| m != method);
            let image_changed =
                !status_url.is_empty() && spec.image.as_ref().is_none_or(|i| i.url != status_url);
            return method_changed || image_changed;
        }
        if status_method.is_some() {
            return true;
        }
        match &spec.image {
            None => true,
            Some(i) if i.url.is_empty() => true,
            Some(_) if status_url.is_empty() => false,
            Some(i) => i.url != status_url,
        }
    }

    fn handle_provisioning(&mut self, prov: &mut dyn Provisioner) -> Action {
        if !self.error_type().is_none() || self.provisioning_cancelled() {
            if !self.error_type().is_none() {
                self.status_mut().provisioning_fail_count += 1;
            }
            return self.complete(S::Deprovisioning);
        }
        // Written only when it differs: a pass that writes the status copies it first.
        if let Some(image) = &self.rec.host.spec.image
            && self.status().last_attempted_image.as_ref() != Some(image)
        {
            let image = image.clone();
            self.status_mut().last_attempted_image = Some(image);
        }
        match self.action_provisioning(prov) {
            Action::Complete => {
                self.status_mut().provisioning_fail_count = 0;
                self.completed(S::Provisioned)
            }
            action => action,
        }
    }

    fn action_provisioning(&mut self, prov: &mut dyn Provisioner) -> Action {
        let force_reboot = self.reboot_requested(true).0;
        let spec = self.rec.host.spec.clone();
        let image = spec.image.clone().unwrap_or_default();
        let mut image_pull_secret = String::new();
        if image.is_oci()
            && let Some(name) = image
                .oci_auth_secret_name
                .as_deref()
                .filter(|n| !n.is_empty())
        {
            match self.image_pull_secret(name, &image.url) {
                Ok(v) => image_pull_secret = v,
                Err(e) => return self.record_action_failure(ErrorType::ProvisioningError, &e),
            }
        }
        let (host_config, host_config_errors) = self.host_config_data();
        let data = ProvisionData {
            image: image.clone(),
            host_config,
            host_config_errors,
            boot_mode: self.status().provisioning.boot_mode.clone(),
            hardware_profile: self.status().hardware_profile.clone(),
            root_device_hints: self
                .status()
                .provisioning
                .root_device_hints
                .as_deref()
                .cloned(),
            custom_deploy: spec.custom_deploy.clone(),
            image_pull_secret,
        };
        let res = match prov.provision(&data, ProvisionOptions { force_reboot }) {
            Ok(r) => r,
            Err(e) => return Action::error(format!("failed to provision: {e}")),
        };
        if !res.error_message.is_empty() {
            return self.record_action_failure(ErrorType::ProvisioningError, &res.error_message);
        }
        if self.remove_annotation(annotations::REBOOT_PREFIX) {
            return Action::Continue(Duration::ZERO);
        }
        if res.dirty {
            let changed = self.clear_error();
            return self.wait_on_provisioner(changed, res.requeue_after);
        }
        let st = self.status_mut();
        if let Some(image) = spec.image.filter(|i| st.provisioning.image != *i) {
            st.provisioning.image = image;
        }
        if let Some(cd) = spec.custom_deploy
            && st.provisioning.custom_deploy.as_ref() != Some(&cd)
        {
            st.provisioning.custom_deploy = Some(cd);
        }
        Action::Complete
    }

    /// BMO's `ImageAuthValidator.Validate`: registry credentials from the Secret `name`.
    fn image_pull_secret(&mut self, name: &str, image_url: &str) -> Result<String, String> {
        let ns = self.rec.host.metadata.namespace_or_default().to_string();
        let secret = self
            .m
            .objects
            .secret(&ObjectKey::new(&ns, name))
            .ok_or_else(|| format!("auth secret \"{name}\" not found in namespace \"{ns}\""))?;
        super::image_pull_secret::registry_credentials(&secret, image_url).map_err(|e| {
            self.event(
                "ImageAuthParseError",
                format!("Failed to extract credentials from secret \"{name}\": {e}"),
            );
            format!("failed to extract credentials from secret \"{name}\": {e}")
        })
    }

    /// BMO's `getSecretDataWithFinalizer`: `key`, else `value`; `Ok(None)` when neither.
    pub(super) fn config_secret_value(
        &self,
        r: &SecretReference,
        key: &str,
    ) -> Result<Option<String>, String> {
        let host_ns = self.rec.host.metadata.namespace_or_default();
        let ns = if r.namespace.is_empty() {
            host_ns
        } else {
            &r.namespace
        };
        if ns != host_ns {
            return Err(format!(
                "{key} secret must be in same namespace as host {host_ns}/{}",
                self.rec.host.metadata.name
            ));
        }
        let object = ObjectKey::new(ns, &r.name);
        let secret = self
            .m
            .objects
            .secret(&object)
            .ok_or_else(|| format!("secret {object} does not exist"))?;
        Ok(secret.get_str(key).or_else(|| secret.get_str("value")))
    }

    /// Config drive data and why any of it could not be read (errors travel with the data).
    fn host_config_data(&self) -> (HostConfigData, HostConfigErrors) {
        let spec = &self.rec.host.spec;
        let mut c = HostConfigData::default();
        let mut errors = HostConfigErrors::default();
        // User data and meta data must hold their key or `value` (BMO's `NoDataInSecretError`).
        let required = |r: &SecretReference, key: &str| {
            self.config_secret_value(r, key)?
                .ok_or_else(|| format!("Secret {} does not contain key {key}", r.name))
        };
        if let Some(r) = &spec.user_data {
            match required(r, "userData") {
                Ok(v) => c.user_data = v,
                Err(e) => errors.user_data = e,
            }
        }
        // Network data falls back to the preprovisioning Secret; a missing key is no data.
        let network = spec.network_data.clone().or_else(|| {
            (!spec.preprovisioning_network_data_name.is_empty()).then(|| SecretReference {
                name: spec.preprovisioning_network_data_name.clone(),
                namespace: String::new(),
            })
        });
        if let Some(r) = &network {
            match self.config_secret_value(r, "networkData") {
                Ok(v) => c.network_data = v.unwrap_or_default(),
                Err(e) => errors.network_data = e,
            }
        }
        if let Some(r) = &spec.meta_data {
            match required(r, "metaData") {
                Ok(v) => c.meta_data = v,
                Err(e) => errors.meta_data = e,
            }
        }
        (c, errors)
    }

    fn handle_externally_provisioned(&mut self, prov: &mut dyn Provisioner) -> Action {
        if self.rec.host.spec.externally_provisioned {
            return self.manage_steady_state(prov);
        }
        let spec = self.rec.host.spec.clone();
        let st = self.status_mut();
        if let Some(image) = spec.image.filter(|i| !i.url.is_empty()) {
            st.provisioning.image = image;
        }
        if let Some(cd) = spec.custom_deploy {
            st.provisioning.custom_deploy = Some(cd);
        }
        self.complete(S::Provisioned)
    }

    /// BMO's `actionManageSteadyState`: adopt, then manage power.
    pub(super) fn manage_steady_state(&mut self, prov: &mut dyn Provisioner) -> Action {
        let res = match self.adopt(prov) {
            Ok(r) => r,
            Err(e) => return Action::error(e.to_string()),
        };
        if let Some(a) = self.failed_or_waiting(&res, ErrorType::ProvisionedRegistrationError) {
            return a;
        }
        self.manage_host_power(prov)
    }

    fn adopt(&mut self, prov: &mut dyn Provisioner) -> Result<OpResult, ProvisionerError> {
        let restart_on_failure = *self.error_type() == ErrorType::ProvisionedRegistrationError;
        let state = self.state().clone();
        prov.adopt(&AdoptData { state }, AdoptOptions { restart_on_failure })
    }

    fn handle_deprovisioning(&mut self, prov: &mut dyn Provisioner) -> Action {
        let action = self.action_deprovisioning(prov);
        let deleting = self.rec.being_deleted();
        match &action {
            Action::Complete if deleting => self.completed(S::PoweringOffBeforeDelete),
            Action::Complete => self.completed(S::Available),
            Action::Failed { error_count } if deleting && *error_count > DELETE_RETRY_COUNT => {
                tracing::warn!(host = %self.rec.host.metadata.name, "giving up on deprovisioning after {error_count} failures");
                self.complete(S::PoweringOffBeforeDelete)
            }
            Action::Error(e) if deleting && e.needs_registration && !self.have_creds => {
                self.complete(S::Deleting)
            }
            _ => action,
        }
    }

    fn action_deprovisioning(&mut self, prov: &mut dyn Provisioner) -> Action {
        let p = &self.status().provisioning;
        if !p.image.url.is_empty() || p.custom_deploy.is_some() {
            let res = match self.adopt(prov) {
                Ok(r) => r,
                Err(e) => return prov_error_action(e, ""),
            };
            if let Some(a) = self.failed_or_waiting(&res, ErrorType::ProvisionedRegistrationError) {
                return a;
            }
        }
        let restart = *self.error_type() == ErrorType::ProvisioningError;
        let opts = DeprovisionOptions {
            restart_on_failure: restart,
            automated_cleaning_mode: self.rec.host.spec.automated_cleaning_mode.clone(),
        };
        let res = match prov.deprovision(opts) {
            Ok(r) => r,
            Err(e) => return prov_error_action(e, "failed to deprovision: "),
        };
        if let Some(a) = self.failed_or_waiting(&res, ErrorType::ProvisioningError) {
            return a;
        }
        if self.remove_annotation(annotations::REBOOT_PREFIX) {
            return Action::Continue(Duration::ZERO);
        }
        let st = self.status_mut();
        st.provisioning.image = Image::default();
        st.provisioning.custom_deploy = None;
        self.clear_provisioning_settings();
        Action::Complete
    }

    fn handle_powering_off_before_delete(&mut self, prov: &mut dyn Provisioner) -> Action {
        let opts = PowerOffOptions {
            mode: bmh_api::RebootMode::Hard,
            force: *self.error_type() == ErrorType::PowerManagementError,
            automated_cleaning_mode: self.rec.host.spec.automated_cleaning_mode.clone(),
        };
        let action = if self.rec.host.spec.disable_power_off {
            Action::Complete
        } else {
            match prov.power_off(opts) {
                Ok(res) => (self.failed_or_waiting(&res, ErrorType::PowerManagementError))
                    .unwrap_or(Action::Complete),
                Err(e) => prov_error_action(e, "failed to power off before deleting node: "),
            }
        };
        match &action {
            Action::Complete => {
                self.status_mut().powered_on = false;
                self.completed(S::Deleting)
            }
            Action::Failed { error_count } if *error_count > DELETE_RETRY_COUNT => {
                self.complete(S::Deleting)
            }
            Action::Error(e) if e.needs_registration && !self.have_creds => {
                self.complete(S::Deleting)
            }
            _ => action,
        }
    }

    fn handle_deleting(&mut self, prov: &mut dyn Provisioner) -> Action {
        if !self.rec.has_host_finalizer() {
            return Action::DeleteComplete;
        }
        let res = match prov.delete() {
            Ok(r) => r,
            Err(e) => return prov_error_action(e, "failed to delete: "),
        };
        if res.dirty {
            return self.wait_on_provisioner(false, res.requeue_after);
        }
        // Releasing the Secrets' finalizers has nothing to do without Kubernetes.
        self.rec
            .book
            .finalizers
            .retain(|f| f != annotations::HOST_FINALIZER);
        self.bookkeeping_changed = true;
        Action::DeleteComplete
    }
}

/// The custom deploy method, when one is set.
pub(crate) fn deploy_method(c: &Option<bmh_api::CustomDeploy>) -> Option<&str> {
    c.as_ref()
        .map(|c| c.method.as_str())
        .filter(|m| !m.is_empty())
}

/// A provisioner error as an `Action::Error`, keeping whether it means "not registered".
fn prov_error_action(e: ProvisionerError, prefix: &str) -> Action {
    Action::Error(super::PassError {
        needs_registration: e == ProvisionerError::NeedsRegistration,
        message: format!("{prefix}{e}"),
    })
}

/// The inspected details as a shared value, reusing the last equal details seen.
fn shared_details(details: bmh_api::HardwareDetails) -> Arc<bmh_api::HardwareDetails> {
    static LAST: Recent<bmh_api::HardwareDetails, 1> = Recent::new();
    LAST.share(details)
}

#[cfg(test)]
mod tests {
    use crate::intern::Recent;
    use crate::provisioners::fixture::canned_hardware_details;
    use std::sync::Arc;

    #[test]
    fn equal_details_are_one_shared_copy_and_other_details_replace_it() {
        let last = Recent::<_, 1>::new();
        let a = last.share(canned_hardware_details());
        let b = last.share(canned_hardware_details());
        assert!(Arc::ptr_eq(&a, &b));
        let mut other = canned_hardware_details();
        other.hostname = "other".into();
        let c = last.share(other.clone());
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(*c, other);
        let d = last.share(canned_hardware_details());
        assert!(!Arc::ptr_eq(&a, &d), "only the last details are kept");
        assert_eq!(*d, canned_hardware_details());
    }
}
