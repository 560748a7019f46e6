//! Inspect (3.3), prepare (3.5), service (3.6), provision (3.7), adopt (3.8), deprovision
//! (3.9), delete and detach (3.10).

use super::register::boot_properties;
use super::{IronicProvisioner, LONG_DELAY, Outcome, SHORT_DELAY, requeue, transient};
use crate::convert::capabilities::instance_capabilities;
use crate::convert::configdrive::{HostIdentity, config_drive};
use crate::convert::devicehints::root_device_hints;
use crate::convert::inventory::hardware_details;
use crate::convert::raid;
use crate::convert::steps::{bios_step, firmware_step};
use crate::types::{Node, NodePatch, ProvisionStateRequest, Section, state};
use bmh_api::ProvisioningState;
use bmh_api::{AutomatedCleaningMode, ChecksumType, HardwareDetails, Image, InspectionMode};
use bmhctl_plugin_sdk::{
    AdoptData, InspectData, OpResult, PrepareData, ProvisionData, ProvisionerError, ServicingData,
};
use bmhctl_plugin_sdk::{
    AdoptOptions, DeprovisionOptions, DetachOptions, InspectOptions, InspectResult,
    ProvisionOptions, StepOptions, StepResult,
};
use serde_json::{Value, json};
use std::time::Duration;

type WithStarted = Result<StepResult, ProvisionerError>;

fn stepped(r: Outcome, started: bool) -> WithStarted {
    r.map(|result| StepResult { result, started })
}

/// An inspection result without details.
fn inspected(r: Outcome, started: bool) -> Result<InspectResult, ProvisionerError> {
    r.map(|result| InspectResult {
        result,
        started,
        details: None,
    })
}

impl IronicProvisioner {
    // ---------------------------------------------------------------- inspection (3.3)

    pub(super) fn do_inspect(
        &mut self,
        data: &InspectData,
        opts: InspectOptions,
    ) -> Result<InspectResult, ProvisionerError> {
        let node = self.get_node()?;
        let fast = data.inspection_mode == InspectionMode::Fast;
        // bmhctl (or BMO) aborted it: start over
        let aborted = node.provision_state == state::INSPECT_FAIL
            && node.last_error_str().contains("aborted");
        let restart_on_failure = opts.restart_on_failure || aborted;
        let refresh = opts.refresh || aborted;
        match node.provision_state.as_str() {
            state::AVAILABLE => inspected(self.change_state(&node, "manage"), false),
            state::INSPECT_WAIT if opts.force_reboot => {
                let (r, started) =
                    self.change_provision_state(&node, ProvisionStateRequest::new("abort"));
                inspected(r, started)
            }
            state::INSPECTING | state::INSPECT_WAIT => {
                let delay = if fast { SHORT_DELAY } else { LONG_DELAY };
                inspected(Ok(requeue(delay)), false)
            }
            state::INSPECT_FAIL if restart_on_failure => self.start_inspection(&node, data),
            state::INSPECT_FAIL => {
                let msg = match node.last_error_str() {
                    "" => "Inspection failed",
                    e => e,
                };
                inspected(Ok(OpResult::failed(msg)), false)
            }
            state::MANAGEABLE if refresh => self.start_inspection(&node, data),
            state::MANAGEABLE => self.read_inspection(&node, data),
            other => transient(format!("unexpected provision state {other}")),
        }
    }

    /// A manageable node not asked to inspect again: its details, or a first inspection.
    fn read_inspection(
        &mut self,
        node: &Node,
        data: &InspectData,
    ) -> Result<InspectResult, ProvisionerError> {
        let fake = self.bmc().is_ok_and(|b| b.is_extension());
        let inspected = node.inspection_finished_at.is_some();
        if fake && inspected {
            // Ironic's fake inspection stores no inventory: canned details, no GET.
            let details = canned_details(node, &self.host.boot_mac_address);
            return Ok(self.inspection_complete(details));
        }
        if !inspected {
            // Never inspected: there is no inventory to read (BMO asks and gets a 404).
            return self.start_inspection(node, data);
        }
        match self.seen(self.client().get_inventory(&node.uuid)) {
            Ok(inv) => {
                let details = self.details_from_inventory(node, &inv);
                Ok(self.inspection_complete(details))
            }
            Err(e) if e.is_not_found() => self.start_inspection(node, data),
            Err(e) => transient(format!(
                "failed to retrieve hardware introspection data: {e}"
            )),
        }
    }

    fn inspection_complete(&mut self, details: HardwareDetails) -> InspectResult {
        self.publish("InspectionComplete", "Hardware inspection completed");
        InspectResult {
            result: OpResult::done(),
            started: false,
            details: Some(details),
        }
    }

    /// The inventory's details; canned ones for a fake-hardware host whose inventory is empty.
    fn details_from_inventory(
        &self,
        node: &Node,
        inv: &crate::types::NodeInventory,
    ) -> HardwareDetails {
        let empty = inv.inventory.as_object().is_none_or(|o| o.is_empty());
        let fake = self.bmc().is_ok_and(|b| b.is_extension());
        if empty && fake {
            return canned_details(node, &self.host.boot_mac_address);
        }
        hardware_details(&inv.inventory, &inv.plugin_data)
    }

    fn start_inspection(
        &mut self,
        node: &Node,
        data: &InspectData,
    ) -> Result<InspectResult, ProvisionerError> {
        let failed = |m: String| inspected(Ok(OpResult::failed(m)), false);
        let bmc = match self.bmc() {
            Ok(b) => b,
            Err(e) => return failed(format!("failed to parse BMC address information: {e}")),
        };
        let interface = match bmc.inspect_interface(data.inspection_mode == InspectionMode::Fast) {
            Ok(i) => i,
            Err(e) => return failed(e.to_string()),
        };
        let patch = boot_properties(
            NodePatch::new(),
            node,
            &data.boot_mode,
            &data.cpu_architecture,
        )
        .set(node, Section::Top, "inspect_interface", interface);
        let node = match self.try_update_node(node, patch) {
            Ok(n) => n,
            Err(outcome) => return inspected(outcome, false),
        };
        let (r, started) =
            self.change_provision_state(&node, ProvisionStateRequest::new("inspect"));
        if started {
            self.publish("InspectionStarted", "Hardware inspection started");
        }
        inspected(r, started)
    }

    // ------------------------------------------------------------------- preparing (3.5)

    /// The RAID interface the target RAID configuration needs; `Err` is a `fail` text.
    fn target_raid_interface(&self, data: &PrepareData) -> Result<String, String> {
        let bmc = self.bmc().map_err(|e| e.to_string())?;
        raid::raid_interface(
            bmc.raid_interface(),
            data.target_raid_config.as_ref(),
            data.actual_raid_config.as_ref(),
        )
    }

    /// RAID, BIOS and firmware steps, in that order; `Err` is a RAID validation failure.
    fn manual_cleaning_steps(&self, data: &PrepareData) -> Result<Vec<Value>, String> {
        let iface = self.target_raid_interface(data)?;
        let mut steps = raid::raid_clean_steps(
            &iface,
            data.target_raid_config.as_ref(),
            data.actual_raid_config.as_ref(),
        );
        steps.extend(bios_step(
            &data.target_firmware_settings,
            &data.actual_firmware_settings,
        ));
        steps.extend(firmware_step(&data.target_firmware_components));
        Ok(steps)
    }

    pub(super) fn do_prepare(&mut self, data: &PrepareData, opts: StepOptions) -> WithStarted {
        let node = self.get_node()?;
        match node.provision_state.as_str() {
            state::AVAILABLE | state::MANAGEABLE if !opts.unprepared => {
                stepped(Ok(OpResult::done()), false)
            }
            state::AVAILABLE => match self.manual_cleaning_steps(data) {
                Err(m) => stepped(Ok(OpResult::failed(m)), false),
                Ok(steps) if steps.is_empty() => stepped(Ok(OpResult::done()), true),
                // manual cleaning starts from manageable
                Ok(_) => stepped(self.change_state(&node, "manage"), false),
            },
            state::MANAGEABLE => self.start_manual_cleaning(&node, data),
            state::CLEAN_FAIL if !opts.restart_on_failure => {
                stepped(Ok(OpResult::failed(node.last_error_str())), false)
            }
            state::CLEAN_FAIL => stepped(self.leave_clean_fail(&node), false),
            state::CLEANING | state::CLEAN_WAIT => stepped(Ok(requeue(LONG_DELAY)), false),
            other => transient(format!("have unexpected ironic node state {other}")),
        }
    }

    /// From manageable: the target RAID configuration set, then manual cleaning started.
    fn start_manual_cleaning(&mut self, node: &Node, data: &PrepareData) -> WithStarted {
        if let Some(r) = self.set_target_raid(node, data)? {
            return stepped(Ok(r), false);
        }
        let steps = match self.manual_cleaning_steps(data) {
            Ok(s) => s,
            Err(m) => return stepped(Ok(OpResult::failed(m)), false),
        };
        if steps.is_empty() {
            return stepped(Ok(OpResult::done()), true);
        }
        let node = self.get_node()?;
        let req = ProvisionStateRequest {
            clean_steps: steps,
            ..ProvisionStateRequest::new("clean")
        };
        let (r, started) = self.change_provision_state(&node, req);
        stepped(r, started)
    }

    /// Out of `clean failed`: maintenance off first, then back to manageable.
    fn leave_clean_fail(&mut self, node: &Node) -> Outcome {
        if node.maintenance {
            self.set_maintenance(node, false, "")
        } else {
            self.change_state(node, "manage")
        }
    }

    /// BMO's `setTargetRAIDCfg`: `Ok(None)` to go on, `Ok(Some(r))` to return `r`.
    fn set_target_raid(
        &mut self,
        node: &Node,
        data: &PrepareData,
    ) -> Result<Option<OpResult>, ProvisionerError> {
        let target = data.target_raid_config.as_ref();
        let planned = self.target_raid_interface(data).and_then(|iface| {
            let disks = raid::logical_disks(target, data.root_device_hints.as_ref())?;
            Ok((iface, disks))
        });
        let (iface, disks) = match planned {
            Ok(p) => p,
            Err(m) => return Ok(Some(OpResult::failed(m))),
        };
        if disks.is_empty() {
            return Ok(None);
        }
        let patch = NodePatch::new().set(node, Section::Top, "raid_interface", iface);
        let node = match self.try_update_node(node, patch) {
            Ok(n) => n,
            Err(outcome) => return outcome.map(Some),
        };
        match self.seen(self.client().set_raid_config(&node.uuid, &disks)) {
            Ok(()) => {
                self.wrote_unlisted();
                Ok(None)
            }
            Err(e) if e.is_conflict() => Ok(Some(requeue(self.conflict_delay()))),
            Err(e) => transient(format!("failed to set raid config: {e}")),
        }
    }

    // ------------------------------------------------------------------- servicing (3.6)

    pub(super) fn do_service(&mut self, data: &ServicingData, opts: StepOptions) -> WithStarted {
        let node = self.get_node()?;
        match node.provision_state.as_str() {
            state::SERVICE_FAIL | state::SERVICE_WAIT if !data.has_firmware_spec => {
                // BMO's `abortServicing`: `started` says whether the abort was accepted.
                let abort = ProvisionStateRequest::new("abort");
                let (r, started) = self.change_provision_state(&node, abort);
                stepped(r, started)
            }
            state::SERVICE_FAIL if !opts.restart_on_failure => {
                stepped(Ok(OpResult::failed(node.last_error_str())), false)
            }
            state::SERVICE_FAIL if node.maintenance => {
                stepped(self.set_maintenance(&node, false, ""), false)
            }
            state::SERVICE_FAIL => self.start_servicing(&node, data, true),
            state::ACTIVE => self.start_servicing(&node, data, opts.unprepared),
            state::SERVICING | state::SERVICE_WAIT => stepped(Ok(requeue(LONG_DELAY)), false),
            other => transient(format!("have unexpected ironic node state {other}")),
        }
    }

    fn start_servicing(
        &mut self,
        node: &Node,
        data: &ServicingData,
        unprepared: bool,
    ) -> WithStarted {
        if !unprepared {
            return stepped(Ok(OpResult::done()), false);
        }
        let bios = bios_step(
            &data.target_firmware_settings,
            &data.actual_firmware_settings,
        );
        let steps: Vec<Value> = bios
            .into_iter()
            .chain(firmware_step(&data.target_firmware_components))
            .collect();
        if steps.is_empty() {
            return stepped(Ok(OpResult::done()), true);
        }
        let req = ProvisionStateRequest {
            service_steps: steps,
            ..ProvisionStateRequest::new("service")
        };
        let (r, started) = self.change_provision_state(node, req);
        stepped(r, started)
    }

    // ---------------------------------------------------------------- provisioning (3.7)

    pub(super) fn do_provision(&mut self, data: &ProvisionData, opts: ProvisionOptions) -> Outcome {
        // The node first, as BMO's `Provision`: with no node, a transient error (registration
        // follows) rather than "Validation failed".
        let node = self.get_node()?;
        if !data.image.url.is_empty()
            && let Err(e) = image_checksum(&data.image)
        {
            return Ok(OpResult::failed(format!("Validation failed: {e}")));
        }
        let same_image = has_same_image(&node, &data.image);
        match node.provision_state.as_str() {
            state::DEPLOY_FAIL if same_image && node.last_error_str().is_empty() => {
                Ok(requeue(Duration::ZERO))
            }
            state::DEPLOY_FAIL if same_image => {
                // The checksum as `GetChecksum` gives it: none for OCI and live ISOs.
                let checksum = match image_checksum(&data.image) {
                    Ok((c, _)) if !c.is_empty() => format!(", checksum: {c}"),
                    _ => String::new(),
                };
                Ok(OpResult::failed(format!(
                    "Image provisioning failed (url: {}{checksum}): {}",
                    data.image.url,
                    node.last_error_str()
                )))
            }
            state::DEPLOY_FAIL | state::AVAILABLE => self.set_up_and_deploy(&node, data),
            state::MANAGEABLE => self.change_state(&node, "provide"),
            state::CLEAN_FAIL => self.leave_clean_fail(&node),
            state::ACTIVE => {
                self.publish(
                    "ProvisioningComplete",
                    format!("Image provisioning completed for {}", data.image.url),
                );
                Ok(OpResult::done())
            }
            state::DEPLOY_WAIT if opts.force_reboot => self.change_state(&node, "deleted"),
            _ => Ok(requeue(LONG_DELAY)),
        }
    }

    fn set_up_and_deploy(&mut self, node: &Node, data: &ProvisionData) -> Outcome {
        // (1) instance settings
        let patch = self.instance_update(node, data);
        let node = match self.try_update_node(node, patch) {
            Ok(n) => n,
            Err(outcome) => return outcome,
        };
        // (2) validate
        match self.seen(self.client().validate_node(&node.uuid)) {
            Ok(v) => {
                let failed = ["boot", "deploy"].iter().filter_map(|iface| v.get(*iface));
                let failed = failed.filter(|res| res.result == Some(false));
                let reasons: Vec<String> = failed
                    .map(|res| res.reason.clone().unwrap_or_default())
                    .collect();
                if !reasons.is_empty() {
                    return Ok(OpResult::failed(format!(
                        "host validation error: {}",
                        reasons.join("; ")
                    )));
                }
            }
            Err(e) if e.is_conflict() => return Ok(requeue(self.conflict_delay())),
            Err(e) => {
                return transient(format!("failed to validate host during registration: {e}"));
            }
        }
        self.publish(
            "ProvisioningStarted",
            format!("Image provisioning started for {}", data.image.url),
        );
        // (3) deploy
        let live_iso = data.image.is_live_iso();
        let drive = config_drive(
            &HostIdentity {
                uid: &self.host.uid,
                namespace: &self.host.key.namespace,
                name: &self.host.key.name,
            },
            &data.host_config,
            &data.host_config_errors,
            live_iso,
        );
        let drive = drive.map_err(ProvisionerError::Other)?;
        let deploy_steps = match &data.custom_deploy {
            Some(c) if !c.method.is_empty() => vec![json!({
                "interface": "deploy",
                "step": c.method,
                "args": {},
                "priority": 80,
            })],
            _ => Vec::new(),
        };
        let req = ProvisionStateRequest {
            configdrive: Some(drive),
            deploy_steps,
            ..ProvisionStateRequest::new("active")
        };
        self.change_provision_state(&node, req).0
    }

    /// BMO's `getInstanceUpdateOpts` (spec 3.7): `instance_info`, deploy interface, boot device.
    fn instance_update(&self, node: &Node, data: &ProvisionData) -> NodePatch {
        let img = &data.image;
        let custom = data
            .custom_deploy
            .as_ref()
            .is_some_and(|c| !c.method.is_empty());
        let ii = Section::InstanceInfo;
        let hints = root_device_hints(data.root_device_hints.as_ref());
        let p = NodePatch::new()
            .set(node, Section::Top, "instance_uuid", self.host.uid.as_str())
            .set(
                node,
                ii,
                "capabilities",
                instance_capabilities(&data.boot_mode),
            )
            .set(node, ii, "root_device", hints);
        let cfg = &self.shared.config;
        let text = |s: &str| (!s.is_empty()).then(|| Value::from(s));
        let (fields, deploy, persistent) = if custom {
            // BMO's `setCustomDeployUpdateOptsForNode`: with no URL every image field is removed.
            let url = text(&img.url);
            let given = url.is_some();
            let sums = url.as_ref().and_then(|_| image_checksum(img).ok());
            let (checksum, algorithm) = sums.unzip();
            let fields = vec![
                ("boot_iso", None),
                ("image_source", url),
                ("image_disk_format", text(&img.format).filter(|_| given)),
                ("image_checksum", None),
                ("image_os_hash_algo", algorithm.map(Value::from)),
                ("image_os_hash_value", checksum.map(Value::from)),
                ("image_pull_secret", pull_secret(data).filter(|_| given)),
            ];
            (fields, Some("custom-agent"), None)
        } else if img.is_live_iso() {
            let fields = vec![
                ("boot_iso", Some(Value::from(img.url.as_str()))),
                ("image_source", None),
                ("image_checksum", None),
                ("image_os_hash_algo", None),
                ("image_os_hash_value", None),
            ];
            let persistent = &cfg.live_iso_force_persistent_boot_device;
            (fields, Some("ramdisk"), Some(persistent))
        } else if let Ok((checksum, algorithm)) = image_checksum(img) {
            // BMO's `setDirectDeployUpdateOptsForNode` (no checksum, OCI: all three removed).
            let (plain, typed) = match (checksum.is_empty(), algorithm.is_empty()) {
                (true, true) => (None, None),
                (_, true) => (Some(checksum), None),
                _ => (None, Some((algorithm, checksum))),
            };
            let (algorithm, checksum) = typed.unzip();
            let fields = vec![
                ("boot_iso", None),
                ("image_source", Some(Value::from(img.url.as_str()))),
                ("image_disk_format", text(&img.format)),
                ("image_checksum", plain.map(Value::from)),
                ("image_os_hash_algo", algorithm.map(Value::from)),
                ("image_os_hash_value", checksum.map(Value::from)),
                ("image_pull_secret", pull_secret(data)),
            ];
            let persistent = &cfg.direct_deploy_force_persistent_boot_device;
            (fields, None, Some(persistent))
        } else {
            // BMO's `setDirectDeployUpdateOptsForNode` sets nothing for a bad checksum;
            // validation has already failed such a host.
            return p;
        };
        let p = fields
            .into_iter()
            .fold(p, |p, (key, value)| p.update(node, ii, key, value));
        let p = self.deploy_interface_update(p, node, deploy);
        match persistent {
            Some(v) => p.set(
                node,
                Section::DriverInfo,
                "force_persistent_boot_device",
                v.as_str(),
            ),
            None => p,
        }
    }

    /// `deploy_interface` set to what the image wants, or a ramdisk or custom one removed.
    fn deploy_interface_update(&self, p: NodePatch, node: &Node, want: Option<&str>) -> NodePatch {
        if self.bmc().ok().and_then(|b| b.deploy_interface()).is_some() {
            return p; // the scheme fixes it (fake-hardware)
        }
        match want {
            Some(w) => p.set(node, Section::Top, "deploy_interface", w),
            None => match node.deploy_interface.as_deref() {
                Some("ramdisk" | "custom-agent") => p.remove("/deploy_interface"),
                _ => p,
            },
        }
    }

    // -------------------------------------------------------------------- adoption (3.8)

    pub(super) fn do_adopt(&mut self, data: &AdoptData, opts: AdoptOptions) -> Outcome {
        let node = self.get_node()?;
        match node.provision_state.as_str() {
            s @ (state::ENROLL | state::VERIFYING) => {
                transient(format!("invalid state for adopt: {s}"))
            }
            state::MANAGEABLE if data.state == ProvisioningState::Deprovisioning => {
                Ok(OpResult::done())
            }
            state::ADOPT_FAIL if !opts.restart_on_failure => Ok(OpResult::failed(format!(
                "Host adoption failed: {}",
                node.last_error_str()
            ))),
            state::MANAGEABLE | state::ADOPT_FAIL => self.change_state(&node, "adopt"),
            state::ADOPTING => Ok(requeue(SHORT_DELAY)),
            state::ACTIVE
                if node.maintenance
                    && node.fault_str().is_empty()
                    && data.state != ProvisioningState::Deleting =>
            {
                self.set_maintenance(&node, false, "")
            }
            _ => Ok(OpResult::done()),
        }
    }

    // -------------------------------------------------------------- deprovisioning (3.9)

    pub(super) fn do_deprovision(&mut self, opts: DeprovisionOptions) -> Outcome {
        let node = self.get_node()?;
        match node.provision_state.as_str() {
            state::ERROR if !opts.restart_on_failure => {
                Ok(OpResult::failed(match node.last_error_str() {
                    "" => "Deprovisioning failed",
                    e => e,
                }))
            }
            state::ERROR => {
                self.publish("DeprovisioningStarted", "Image deprovisioning restarted");
                self.change_state(&node, "deleted")
            }
            state::CLEAN_FAIL if !opts.restart_on_failure => Ok(OpResult::failed(format!(
                "Cleaning failed: {}",
                node.last_error_str()
            ))),
            state::CLEAN_FAIL => self.leave_clean_fail(&node),
            state::MANAGEABLE => self.change_state(&node, "provide"),
            state::AVAILABLE => {
                self.publish("DeprovisioningComplete", "Image deprovisioning completed");
                Ok(OpResult::done())
            }
            state::DELETING | state::CLEANING | state::CLEAN_WAIT | state::DEPLOYING => {
                Ok(requeue(LONG_DELAY))
            }
            state::ACTIVE | state::DEPLOY_FAIL | state::DEPLOY_WAIT => {
                let want = opts.automated_cleaning_mode != AutomatedCleaningMode::Disabled;
                if node.automated_clean != Some(want) {
                    let patch = NodePatch::new().add("/automated_clean", want);
                    return match self.seen(self.client().patch_node(&node.uuid, &patch)) {
                        Ok(n) => {
                            match n {
                                Some(n) => self.keep(n),
                                None => self.node = None,
                            }
                            Ok(requeue(Duration::ZERO))
                        }
                        Err(e) => transient(format!("failed to update automatedClean: {e}")),
                    };
                }
                self.publish("DeprovisioningStarted", "Image deprovisioning started");
                self.change_state(&node, "deleted")
            }
            other => transient(format!("unhandled ironic state {other}")),
        }
    }

    // ------------------------------------------------------------ delete / detach (3.10)

    /// Deletes the node; once it is gone the host's capacity slot is given back.
    pub(super) fn delete_and_release(&mut self, opts: DetachOptions) -> Outcome {
        let r = self.real_delete(opts);
        if matches!(&r, Ok(res) if !res.dirty && res.error_message.is_empty()) {
            self.shared.capacity.release(&self.node_name());
        }
        r
    }

    pub(super) fn real_delete(&mut self, opts: DetachOptions) -> Outcome {
        let node = match self.get_node() {
            Err(ProvisionerError::NeedsRegistration) => return Ok(OpResult::done()),
            node => node?,
        };
        let version = self.seen(self.client().api_version());
        let abort_from_deploy_wait = version.is_ok_and(|v| v.has_deployment_abort());
        match node.provision_state.as_str() {
            state::VERIFYING => return Ok(requeue(SHORT_DELAY)),
            state::ENROLL => {}
            state::AVAILABLE | state::MANAGEABLE => {
                if node.instance_uuid.as_deref().is_some_and(|u| !u.is_empty()) {
                    let patch = NodePatch::new().remove("/instance_uuid");
                    if let Err(outcome) = self.try_update_node(&node, patch) {
                        return outcome;
                    }
                }
            }
            state::DEPLOYING
            | state::CLEANING
            | state::INSPECTING
            | state::SERVICING
            | state::DELETING => return Ok(requeue(LONG_DELAY)),
            state::DEPLOY_WAIT if opts.force && !abort_from_deploy_wait => {
                return self.change_state(&node, "deleted");
            }
            state::DEPLOY_WAIT | state::INSPECT_WAIT | state::CLEAN_WAIT | state::SERVICE_WAIT => {
                return if opts.force {
                    self.change_state(&node, "abort")
                } else {
                    Ok(requeue(LONG_DELAY))
                };
            }
            _ => {
                if !node.maintenance {
                    let reason = "forcing deletion in baremetal-operator";
                    return self.set_maintenance(&node, true, reason);
                }
            }
        }
        match self.seen(self.client().delete_node(&node.uuid)) {
            Ok(()) => {
                self.invalidate();
                self.saved = Default::default();
                Ok(requeue(Duration::ZERO))
            }
            Err(e) if e.is_not_found() => {
                self.invalidate();
                Ok(requeue(Duration::ZERO))
            }
            Err(e) if e.is_conflict() => Ok(requeue(self.conflict_delay())),
            Err(e) => transient(format!("failed to remove host: {e}")),
        }
    }
}

/// BMO's `GetChecksum` (and its early image check): the checksum and its algorithm ("" lets
/// Ironic detect it); none for OCI images and live ISOs.
pub(super) fn image_checksum(img: &Image) -> Result<(String, String), String> {
    if img.is_oci() {
        if !img.checksum.is_empty() {
            return Err(
                "spec.image.checksum must be empty for OCI images (oci:// images have embedded checksums)"
                    .into(),
            );
        }
        return Ok((String::new(), String::new()));
    }
    if img.is_live_iso() {
        return Ok((String::new(), String::new()));
    }
    if img.checksum.is_empty() {
        return Err("checksum is required for normal images".into());
    }
    let algorithm = match &img.checksum_type {
        ChecksumType::Md5 | ChecksumType::Sha256 | ChecksumType::Sha512 => {
            img.checksum_type.as_str().to_string()
        }
        ChecksumType::Unset | ChecksumType::Auto => String::new(),
        ChecksumType::Other(t) => {
            return Err(format!(
                "unknown checksumType {t}, supported are auto, md5, sha256, sha512"
            ));
        }
    };
    Ok((img.checksum.clone(), algorithm))
}

fn pull_secret(data: &ProvisionData) -> Option<Value> {
    (!data.image_pull_secret.is_empty()).then(|| Value::from(data.image_pull_secret.clone()))
}

/// BMO's `ironicHasSameImage`.
fn has_same_image(node: &Node, img: &Image) -> bool {
    let ii = |k: &str| node.instance_info.get(k).and_then(Value::as_str);
    let absent = |k: &str| !node.instance_info.contains_key(k);
    if img.is_live_iso() {
        return ii("boot_iso") == Some(img.url.as_str());
    }
    if img.is_oci() && img.checksum.is_empty() {
        return ii("image_source") == Some(img.url.as_str());
    }
    match &img.checksum_type {
        ChecksumType::Unset | ChecksumType::Auto => {
            ii("image_source") == Some(img.url.as_str())
                && ii("image_checksum") == Some(img.checksum.as_str())
                && absent("image_os_hash_algo")
                && absent("image_os_hash_value")
        }
        t => {
            ii("image_source") == Some(img.url.as_str())
                && absent("image_checksum")
                && ii("image_os_hash_algo") == Some(t.as_str())
                && ii("image_os_hash_value") == Some(img.checksum.as_str())
        }
    }
}

/// Hardware details for a fake-hardware node, whose fake inspection records nothing.
fn canned_details(node: &Node, boot_mac: &str) -> HardwareDetails {
    // Without a boot MAC, a locally administered MAC derived from the node's UUID: unique per
    // node, so the NIC's port never collides with another host's.
    let mac = if boot_mac.is_empty() {
        let hex: Vec<u8> = node.uuid.bytes().filter(u8::is_ascii_hexdigit).collect();
        let tail = &hex[hex.len().saturating_sub(10)..];
        let pairs = tail
            .chunks(2)
            .map(|p| String::from_utf8_lossy(p).to_ascii_lowercase());
        std::iter::once("02".into())
            .chain(pairs)
            .collect::<Vec<String>>()
            .join(":")
    } else {
        boot_mac.to_ascii_lowercase()
    };
    let arch = node
        .properties
        .get("cpu_arch")
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty())
        .unwrap_or("x86_64")
        .to_string();
    let doc = json!({
        "systemVendor": {"manufacturer": "bmhctl", "productName": "fake-hardware", "serialNumber": node.uuid},
        "firmware": {"bios": {"vendor": "bmhctl", "version": "1.0", "date": "2026-01-01"}},
        "ramMebibytes": 16384,
        "nics": [{"name": "eth0", "model": "fake", "mac": mac, "ip": "192.0.2.10", "speedGbps": 10, "pxe": true}],
        "storage": [{"name": "/dev/sda", "alternateNames": ["/dev/sda"], "type": "SSD", "sizeBytes": 107374182400u64, "vendor": "bmhctl", "model": "fake disk", "serialNumber": "fake-0"}],
        "cpu": {"arch": arch, "model": "fake CPU", "clockMegahertz": 2400.0, "count": 4, "flags": ["fake"]},
        "hostname": node.name_str().replace('~', "-"),
    });
    serde_json::from_value(doc).unwrap_or_default()
}

#[cfg(test)]
mod unit {
    use super::*;

    /// BMO's `validateProvisionData` check of the image's checksum.
    fn check_image_checksum(img: &Image) -> Result<(), String> {
        image_checksum(img).map(|_| ())
    }

    fn image(url: &str, checksum: &str, t: &str, format: &str) -> Image {
        Image {
            url: url.into(),
            checksum: checksum.into(),
            checksum_type: ChecksumType::from(t),
            format: format.into(),
            ..Default::default()
        }
    }

    #[test]
    fn checksum_rules() {
        assert!(check_image_checksum(&image("http://x/i.qcow2", "abc", "", "")).is_ok());
        assert_eq!(
            check_image_checksum(&image("http://x/i.qcow2", "", "", "")).unwrap_err(),
            "checksum is required for normal images"
        );
        assert!(check_image_checksum(&image("http://x/i.iso", "", "", "live-iso")).is_ok());
        assert!(check_image_checksum(&image("oci://x/i", "abc", "", "")).is_err());
        assert!(
            check_image_checksum(&image("http://x/i", "abc", "SHA42", ""))
                .unwrap_err()
                .starts_with("unknown checksumType SHA42")
        );
    }

    #[test]
    fn same_image_rules() {
        let mut node = Node::default();
        node.instance_info
            .insert("image_source".into(), "http://x/i".into());
        node.instance_info
            .insert("image_checksum".into(), "abc".into());
        assert!(has_same_image(&node, &image("http://x/i", "abc", "", "")));
        assert!(!has_same_image(
            &node,
            &image("http://x/i", "abc", "sha256", "")
        ));
        assert!(!has_same_image(&node, &image("http://x/j", "abc", "", "")));
        node.instance_info
            .insert("boot_iso".into(), "http://x/l.iso".into());
        assert!(has_same_image(
            &node,
            &image("http://x/l.iso", "", "", "live-iso")
        ));
    }

    #[test]
    fn canned_details_decode() {
        let n = Node {
            uuid: "u".into(),
            name: Some("ns~h".into()),
            ..Default::default()
        };
        let d = canned_details(&n, "52:54:00:AA:BB:CC");
        assert_eq!(d.nics[0].mac, "52:54:00:aa:bb:cc");
        let n2 = Node {
            uuid: "37c031c0-249c-4443-99c9-2724e16004a5".into(),
            ..Default::default()
        };
        assert_eq!(canned_details(&n2, "").nics[0].mac, "02:24:e1:60:04:a5");
        assert_eq!(d.ram_mebibytes, 16384);
        assert_eq!(d.cpu.unwrap().arch, "x86_64");
    }
}
