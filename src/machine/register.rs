//! Registration and detach: BMO's `ensureRegistered`/`registerHost` and `checkDetachedHost`.

use super::{Action, DetachedArgs, Pass, delays, deploy_method};
use bmh_api::{
    AutomatedCleaningMode, CredentialsStatus, ErrorType, InspectionMode, OperationalStatus,
    ProvisioningState as S, SecretReference, annotations,
};
use bmhctl_plugin_sdk::{
    DetachOptions, ManagementAccessData, Provisioner, ProvisionerError, RegisterOptions,
    RegisterResult,
};
use std::time::Duration;

impl Pass<'_, '_> {
    pub(super) fn check_detached_host(&mut self, prov: &mut dyn Provisioner) -> Option<Action> {
        if let Some(value) = self.annotation(annotations::DETACHED).map(str::to_string) {
            match self.state() {
                S::Provisioned | S::ExternallyProvisioned | S::Ready | S::Available => {
                    return Some(self.detach_host(prov, false));
                }
                S::Deleting => {}
                _ => {
                    // An unparsable value counts as none (BMO logs and ignores it).
                    let args = DetachedArgs::decode(&value).unwrap_or_default();
                    if args.force {
                        return Some(self.detach_host(prov, true));
                    }
                    // Not stable yet: the normal flow goes on until it is.
                }
            }
        }
        if *self.error_type() == ErrorType::DetachError {
            self.clear_error();
            self.status_mut().error_count = 0;
            return Some(Action::Update(Duration::ZERO));
        }
        if self.status().operational_status == OperationalStatus::Detached {
            let op = if self.error_type().is_none() {
                OperationalStatus::Ok
            } else {
                OperationalStatus::Error
            };
            self.status_mut().operational_status = op;
            return Some(Action::Update(Duration::ZERO));
        }
        None
    }

    fn detach_host(&mut self, prov: &mut dyn Provisioner, force: bool) -> Action {
        let res = match prov.detach(DetachOptions { force }) {
            Ok(r) => r,
            Err(e) => return Action::error(format!("failed to detach: {e}")),
        };
        if !res.error_message.is_empty() {
            return self.record_action_failure(ErrorType::DetachError, &res.error_message);
        }
        let had_detach_error = *self.error_type() == ErrorType::DetachError;
        if res.dirty {
            let cleared = had_detach_error && self.clear_error();
            return self.wait_on_provisioner(cleared, res.requeue_after);
        }
        if had_detach_error {
            self.clear_error();
            self.status_mut().error_count = 0;
        }
        let changed = self.status().operational_status != OperationalStatus::Detached;
        self.status_mut().operational_status = OperationalStatus::Detached;
        // A detached host is polled slowly; Detach is called again each time.
        Action::continue_or_update(changed || had_detach_error, delays::DETACHED_POLL)
    }

    pub(super) fn ensure_registered(&mut self, prov: &mut dyn Provisioner) -> Option<Action> {
        if !self.have_creds {
            return None;
        }
        let state = self.next_state.clone();
        match state {
            S::None | S::Unmanaged | S::MatchProfile | S::Deleting => return None,
            S::Registering => {}
            _ => {
                if *self.error_type() == ErrorType::RegistrationError
                    || !self.good_credentials_match()
                {
                    // Retrying registration: restart its operation metric.
                    self.set_operation_running(&S::Registering, true);
                }
            }
        }
        let mut r = self.register_host(prov);
        let completed = matches!(r, Some(Action::Complete));
        if (r.is_none() || completed)
            && state != S::Registering
            && self.set_operation_running(&S::Registering, false)
        {
            r = Some(Action::Update(Duration::ZERO));
        }
        if completed {
            // Saved, back at once; the state's handler runs on the next pass.
            r = Some(Action::Update(Duration::ZERO));
        }
        r
    }

    fn good_credentials_match(&self) -> bool {
        self.creds_secret.is_some() && self.credentials_match(&self.status().good_credentials)
    }

    /// Whether `c` names the Secret in use at its version, compared in place.
    fn credentials_match(&self, c: &CredentialsStatus) -> bool {
        match &self.creds_secret {
            Some(s) => c.matches(&s.key.namespace, &s.key.name, &s.version),
            None => c.matches("", "", ""),
        }
    }

    fn credentials_status(&self) -> CredentialsStatus {
        let (key, version) = self
            .creds_secret
            .as_ref()
            .map(|s| (s.key.clone(), s.version.clone()))
            .unwrap_or_default();
        CredentialsStatus {
            credentials: Some(SecretReference {
                name: key.name,
                namespace: key.namespace,
            }),
            credentials_version: version,
        }
    }

    fn register_host(&mut self, prov: &mut dyn Provisioner) -> Option<Action> {
        let mut dirty = false;
        let creds_changed = !self.credentials_match(&self.status().tried_credentials);
        if creds_changed {
            self.status_mut().tried_credentials = self.credentials_status();
            dirty = true;
        }

        let formats = match prov.preprovisioning_image_formats() {
            Ok(f) => f,
            Err(e) => return Some(Action::error(e.to_string())),
        };
        let formats = formats.filter(|_| !self.needs_no_preprovisioning_image());
        // bmhctl builds no preprovisioning images: no acceptable format fails as in BMO.
        if formats.as_ref().is_some_and(Vec::is_empty) {
            return Some(self.record_action_failure(
                ErrorType::RegistrationError,
                "no acceptable formats for preprovisioning image",
            ));
        }

        let network_data = match self.preprovisioning_network_data() {
            Ok(d) => d,
            Err(e) => {
                return Some(self.record_action_failure(
                    ErrorType::RegistrationError,
                    &format!("failed to read preprovisioningNetworkData: {e}"),
                ));
            }
        };
        // The HardwareData is lent for the call.
        let mut data = self.management_access_data(network_data);
        data.hardware_data = self.rec.book.hardware_data.take().map(|hd| *hd);
        let opts = RegisterOptions {
            credentials_changed: creds_changed,
            restart_on_failure: *self.error_type() == ErrorType::RegistrationError,
        };
        let registered = prov.register(&data, opts);
        self.rec.book.hardware_data = data.hardware_data.take().map(Box::new);
        let RegisterResult {
            result: res,
            provisioner_id: prov_id,
        } = match registered {
            Ok(r) => r,
            Err(ProvisionerError::NeedsPreprovisioningImage) if formats.is_some() => {
                return Some(Action::continue_or_update(
                    dirty,
                    delays::PREPROV_IMAGE_RETRY,
                ));
            }
            Err(e) => return Some(Action::error(format!("failed to validate BMC access: {e}"))),
        };
        if !res.error_message.is_empty() {
            return Some(
                self.record_action_failure(ErrorType::RegistrationError, &res.error_message),
            );
        }
        if !prov_id.is_empty() && self.status().provisioning.id != prov_id {
            self.status_mut().provisioning.id = prov_id;
            if *self.state() == S::Preparing {
                self.clear_provisioning_settings();
            }
            dirty = true;
        }
        if res.dirty {
            dirty |= self.clear_error();
            return Some(self.wait_on_provisioner(dirty, res.requeue_after));
        }
        self.registered(dirty)
    }

    /// States (and operations) in which the provisioner needs no preprovisioning image.
    fn needs_no_preprovisioning_image(&self) -> bool {
        let spec = &self.rec.host.spec;
        match self.state() {
            S::Registering | S::Deleting | S::PoweringOffBeforeDelete => true,
            S::Provisioned | S::ExternallyProvisioned => {
                self.status().operational_status != OperationalStatus::Servicing
            }
            S::Deprovisioning => spec.automated_cleaning_mode == AutomatedCleaningMode::Disabled,
            S::Inspecting => spec.inspection_mode == InspectionMode::Fast,
            _ => false,
        }
    }

    /// After registration: the profile, then the BMC's credentials recorded as good.
    fn registered(&mut self, mut dirty: bool) -> Option<Action> {
        match self.match_profile() {
            Err(e) => return Some(self.record_action_failure(ErrorType::RegistrationError, &e)),
            Ok(true) => return Some(Action::Update(Duration::ZERO)),
            Ok(false) => {}
        }

        // BMO reads firmware components here only to create an HFC; bmhctl creates none.

        let mut validated = false;
        if !self.good_credentials_match() {
            self.status_mut().good_credentials = self.credentials_status();
            self.event("BMCAccessValidated", "Verified access to BMC");
            dirty = true;
            validated = true;
        }
        if *self.error_type() == ErrorType::RegistrationError || validated {
            // BMO overwrites `dirty` here (quirk 4); the change is still saved later.
            dirty = self.clear_error();
        }
        dirty.then_some(Action::Complete)
    }

    fn management_access_data(&self, preprovisioning_network_data: String) -> ManagementAccessData {
        let host = &self.rec.host;
        let status = self.status();
        let state = status.provisioning.state.clone();
        let in_deploy_state = matches!(state, S::Provisioning | S::ExternallyProvisioned);
        let current_image = if !status.provisioning.image.url.is_empty() {
            Some(status.provisioning.image.clone())
        } else if in_deploy_state {
            // An image with an empty URL is no image (BMO's `getCurrentImage`).
            host.spec.image.clone().filter(|i| !i.url.is_empty())
        } else {
            None
        };
        let has_custom_deploy = deploy_method(&status.provisioning.custom_deploy).is_some()
            || (in_deploy_state && deploy_method(&host.spec.custom_deploy).is_some());
        ManagementAccessData {
            boot_mode: status.provisioning.boot_mode.clone(),
            automated_cleaning_mode: host.spec.automated_cleaning_mode.clone(),
            state,
            operational_status: status.operational_status.clone(),
            current_image,
            preprovisioning_image: None,
            preprovisioning_network_data,
            has_custom_deploy,
            disable_power_off: host.spec.disable_power_off,
            cpu_architecture: self.cpu_architecture(),
            // Lent by the caller for the call (see `register_host`).
            hardware_data: None,
            disable_inspection: host.inspection_disabled(),
            inspection_mode: host.spec.inspection_mode.clone(),
        }
    }

    /// spec.architecture (or the one learnt from HardwareData), else inspection's, else our own.
    pub(crate) fn cpu_architecture(&self) -> String {
        let arch = self.rec.architecture();
        if !arch.is_empty() {
            return arch.to_string();
        }
        if let Some(cpu) = self.status().hardware.as_ref().and_then(|h| h.cpu.as_ref())
            && !cpu.arch.is_empty()
        {
            return cpu.arch.clone();
        }
        self.m.config.default_architecture.clone()
    }

    /// BMO's `PreprovisioningNetworkData`; a missing Secret is an error unless deleting.
    fn preprovisioning_network_data(&self) -> Result<String, String> {
        let name = &self.rec.host.spec.preprovisioning_network_data_name;
        if name.is_empty() {
            return Ok(String::new());
        }
        let reference = SecretReference {
            name: name.clone(),
            namespace: String::new(),
        };
        match self.config_secret_value(&reference, "networkData") {
            Ok(v) => Ok(v.unwrap_or_default()),
            Err(_) if self.in_deletion_flow() => Ok(String::new()),
            Err(e) => Err(e),
        }
    }

    /// BMO's `hostInDeletionFlow`.
    fn in_deletion_flow(&self) -> bool {
        self.rec.being_deleted() || matches!(self.state(), S::Deleting | S::PoweringOffBeforeDelete)
    }
}
