//! `Register` (spec 3.1) and the deploy-image choice (3.2).

use super::{IronicProvisioner, Outcome, SHORT_DELAY, requeue, transient};
use crate::convert::capabilities::merge_boot_mode_capabilities;
use crate::convert::configdrive::parse_yaml_mapping;
use crate::types::{Node, NodePatch, Section, state};
use bmh_api::{BootMode, InspectionMode, OperationalStatus, ProvisioningState};
use bmh_bmc::{AccessDetails, Credentials};
use bmhctl_plugin_sdk::{HostData, ImageFormat, ManagementAccessData, OpResult, ProvisionerError};
use bmhctl_plugin_sdk::{RegisterOptions, RegisterResult};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// The outcome of a registration with the node's ID (empty before there is a node).
fn with_id(r: Outcome, provisioner_id: &str) -> Result<RegisterResult, ProvisionerError> {
    r.map(|result| RegisterResult {
        result,
        provisioner_id: provisioner_id.to_string(),
    })
}

/// States where creating ports is safe (no lock, nothing disrupted).
const PORT_STATES: &[&str] = &[
    state::ENROLL,
    state::MANAGEABLE,
    state::AVAILABLE,
    state::ACTIVE,
    state::ADOPT_FAIL,
    state::INSPECT_FAIL,
    state::CLEAN_FAIL,
    state::DEPLOY_FAIL,
    state::SERVICE_FAIL,
    state::ERROR,
];

/// Host states that hold a capacity slot (spec 3.12).
pub(super) fn holds_capacity(state: &ProvisioningState) -> bool {
    matches!(
        state,
        ProvisioningState::Inspecting
            | ProvisioningState::Provisioning
            | ProvisioningState::Deprovisioning
    )
}

impl IronicProvisioner {
    pub(super) fn do_register(
        &mut self,
        data: &ManagementAccessData,
        opts: RegisterOptions,
    ) -> Result<RegisterResult, ProvisionerError> {
        // A host outside the gated states gives its capacity slot back.
        if !holds_capacity(&data.state) && data.operational_status != OperationalStatus::Delayed {
            self.shared.capacity.release(&self.node_name());
        }
        let (bmc, found) = match self.registration_checks(data) {
            Ok(checked) => checked,
            Err(outcome) => return with_id(outcome, ""),
        };

        // B. driver_info
        let driver_info = self.driver_info(&bmc);
        let (node, patch) = match found {
            None => match self.enroll_node(data, &bmc, &driver_info) {
                Ok(n) => (n, NodePatch::new()),
                Err(outcome) => return with_id(outcome, ""),
            },
            Some(node) => {
                let patch =
                    self.reconcile_node(&node, data, &driver_info, opts.credentials_changed);
                (node, patch)
            }
        };
        let prov_id = node.uuid.clone();
        self.node_id = prov_id.clone();
        if self.saved.node != prov_id {
            self.saved = super::SavedState {
                node: prov_id.clone(),
                ports: Vec::new(),
            };
        }

        // E. ports
        if PORT_STATES.contains(&node.provision_state.as_str())
            && let Err(e) = self.create_ports(&node, data)
        {
            return with_id(transient(e), &prov_id);
        }
        // F. preprovisioning network data
        let patch = match self.network_data_patch(patch, &node, data) {
            Ok(p) => p,
            Err(e) => {
                let m = format!("invalid preprovisioningNetworkData: {e}");
                return with_id(transient(m), &prov_id);
            }
        };
        let node = match self.try_update_node(&node, patch) {
            Ok(n) => n,
            Err(outcome) => return with_id(outcome, &prov_id),
        };

        // G. act on the provision state
        let retrying = opts.credentials_changed || opts.restart_on_failure;
        let result = match node.provision_state.as_str() {
            state::ENROLL if !node.last_error_str().is_empty() && !retrying => {
                Ok(OpResult::failed(node.last_error_str()))
            }
            state::ENROLL if node.target_provision_state_str() == "manage" => {
                Ok(requeue(SHORT_DELAY))
            }
            state::ENROLL => self.change_state(&node, "manage"),
            state::VERIFYING => Ok(requeue(SHORT_DELAY)),
            state::CLEAN_WAIT
            | state::CLEANING
            | state::DEPLOY_WAIT
            | state::DEPLOYING
            | state::INSPECTING => Ok(OpResult::done()),
            _ => self.configure_node(data, &node, &bmc),
        };
        with_id(result, &prov_id)
    }

    /// A. The pre-checks, in BMO's order: the BMC's details and the node found, or an outcome.
    fn registration_checks(
        &mut self,
        data: &ManagementAccessData,
    ) -> Result<(AccessDetails, Option<Node>), Outcome> {
        let fail = |m: String| Err(Ok(OpResult::failed(m)));
        let bmc = match self.bmc() {
            Ok(b) => b,
            Err(e) => return fail(format!("failed to parse BMC address information: {e}")),
        };
        let checked = bmc
            .check_fast_inspection(data.inspection_mode == InspectionMode::Fast)
            .and_then(|()| bmc.check_secure_boot(data.boot_mode == BootMode::UefiSecureBoot))
            .and_then(|()| {
                bmc.check_provisioning_network(self.shared.config.provisioning_network_disabled)
            });
        if let Err(e) = checked {
            return fail(e.to_string());
        }
        if data.disable_power_off {
            let version = self
                .seen(self.client().api_version())
                .map_err(|e| Err(ProvisionerError::Other(e.to_string())))?;
            if !version.has_disable_power_off() {
                return fail(
                    "current ironic version does not support DisablePowerOff, refusing to manage node"
                        .into(),
                );
            }
        }
        let found = self.find_existing_host()?;
        if let Err(e) = bmc.check_boot_mac(
            !self.host.boot_mac_address.is_empty(),
            data.disable_inspection,
        ) {
            return fail(e.to_string());
        }
        Ok((bmc, found))
    }

    /// F. `network_data` from the preprovisioning network data (when no image builder takes
    /// it); `Err` when it is not a mapping, as BMO decodes it into a `map[string]any`.
    fn network_data_patch(
        &self,
        patch: NodePatch,
        node: &Node,
        data: &ManagementAccessData,
    ) -> Result<NodePatch, String> {
        if self.shared.config.have_preprov_image_builder
            || data.preprovisioning_network_data.is_empty()
        {
            return Ok(patch);
        }
        let parsed = parse_yaml_mapping(&data.preprovisioning_network_data)?
            .map_or(Value::Null, Value::Object);
        if parsed == node.network_data {
            return Ok(patch);
        }
        Ok(patch.add("/network_data", parsed))
    }

    /// D. The settings of an existing node brought in line with the host's.
    fn reconcile_node(
        &self,
        node: &Node,
        data: &ManagementAccessData,
        driver_info: &Map<String, Value>,
        credentials_changed: bool,
    ) -> NodePatch {
        let mut patch = NodePatch::new().set(node, Section::Top, "name", self.node_name());
        if credentials_changed || !bmc_address_matches(&node.driver_info, driver_info) {
            tracing::info!(node = %node.uuid, "updating driver_info: credentials or BMC address changed");
            patch = patch.set(node, Section::Top, "driver_info", driver_info.clone());
        }
        if data.disable_power_off != node.disable_power_off {
            patch = patch.add("/disable_power_off", data.disable_power_off);
        }
        if !data.cpu_architecture.is_empty() {
            let arch = data.cpu_architecture.clone();
            patch = patch.set(node, Section::Properties, "cpu_arch", arch);
        }
        patch
    }

    /// A host whose status knows no node, while the node BMO's lookup finds for it sits in a
    /// state BMO's path from registering never takes a node from: a node an earlier run left
    /// (its host would wait for ever). Refused before anything is written, to Ironic or status.
    pub(super) fn refuse_leftover(&mut self) -> Result<(), ProvisionerError> {
        if !self.host.provisioner_id.is_empty() || self.host.bmc_address.is_empty() {
            return Ok(());
        }
        let Ok(Some(node)) = self.find_existing_host() else {
            return Ok(());
        };
        let state = node.provision_state.clone();
        let (name, uuid) = (node.name_str().to_string(), node.uuid.clone());
        self.found = Some(node);
        if path_takes(&state, &self.host) {
            return Ok(());
        }
        let next = if self.host.externally_provisioned {
            "externally provisioned"
        } else if self.host.inspection_disabled {
            "preparing"
        } else {
            "inspecting"
        };
        let named = if name.is_empty() {
            uuid.clone()
        } else {
            format!("{name} ({uuid})")
        };
        Err(ProvisionerError::Refused(format!(
            "Ironic node {named} is already \"{state}\", but this host has no status: a node left \
             by an earlier run, which BMO's path from registering cannot take on (the host would \
             wait in \"{next}\" for ever); nothing was changed. Keep the status file of the run \
             that made the node, adopt the node as it is with `bmhctl import --from-ironic {uuid}`, \
             or delete it (`baremetal node undeploy {uuid}` if deployed, then `baremetal node \
             delete {uuid}`)"
        )))
    }

    /// BMO's `findExistingHost` (spec 2.2): by ID, by name, by boot MAC. `Err` is the outcome:
    /// `fail` when a named node already owns the boot MAC, else transient.
    fn find_existing_host(&mut self) -> Result<Option<Node>, Outcome> {
        if let Some(n) = self.found.take() {
            return Ok(Some(n));
        }
        let other = |m: String| Err(transient(format!("failed to find existing host: {m}")));
        match self.get_node() {
            Ok(n) => return Ok(Some(n)),
            Err(ProvisionerError::NeedsRegistration) => {}
            Err(e) => return other(e.to_string()),
        }
        let names = super::lookup_names(self.key());
        // With `due_hosts`, names a fresh listing shows no node for are not asked for.
        let absent = self.shared.watch.absent_names(self.client(), &names);
        for (name, absent) in names.into_iter().zip(absent) {
            if absent {
                continue;
            }
            match self.seen(self.client().get_node(&name)) {
                Ok(n) => {
                    self.keep(n.clone());
                    return Ok(Some(n));
                }
                Err(e) if e.is_not_found() => {}
                Err(e) => return other(format!("failed to find node by name {name}: {e}")),
            }
        }
        let mac = self.host.boot_mac_address.clone();
        if mac.is_empty() {
            return Ok(None);
        }
        // With `due_hosts`, the shared port listing answers; a failure is "not found", as in BMO.
        let answered = self
            .shared
            .ports
            .answering(self.client(), "")
            .map(|l| l.with_address(&mac));
        let looked_up = match answered {
            Some(p) => Ok(p),
            None => self.seen(self.client().list_ports(("address", &mac))),
        };
        if let Ok(p) = &looked_up {
            self.mac_owners = Some((mac.to_ascii_lowercase(), p.clone()));
        }
        let Some(port) = looked_up.unwrap_or_default().into_iter().next() else {
            return Ok(None);
        };
        match self.seen(self.client().get_node(&port.node_uuid)) {
            Ok(n) if !n.name_str().is_empty() => Err(Ok(OpResult::failed(format!(
                "MAC address {mac} conflicts with existing node {}",
                n.name_str()
            )))),
            Ok(n) => {
                self.keep(n.clone());
                Ok(Some(n))
            }
            Err(e) if e.is_not_found() => other(format!(
                "port {mac} exists but linked node {} doesn't: {e}",
                port.node_uuid
            )),
            Err(e) => other(format!(
                "port {mac} exists but failed to find linked node {} by ID: {e}",
                port.node_uuid
            )),
        }
    }

    /// `driver_info` for the address and credentials, plus `external_http_url` for IPv6 BMCs.
    fn driver_info(&self, bmc: &AccessDetails) -> Map<String, Value> {
        let creds = Credentials::new(
            self.host.bmc_credentials.username.clone(),
            self.host.bmc_credentials.password.clone(),
        );
        let mut info = bmc.driver_info(&creds, self.host.disable_certificate_verification);
        let v6 = &self.shared.config.external_url_v6;
        if !v6.is_empty() && host_is_ipv6(bmc.parsed().hostname()) {
            info.insert("external_http_url".into(), Value::from(v6.clone()));
        }
        info
    }

    /// C. `POST /v1/nodes`. `Err` carries the outcome to return at once.
    fn enroll_node(
        &mut self,
        data: &ManagementAccessData,
        bmc: &AccessDetails,
        driver_info: &Map<String, Value>,
    ) -> Result<Node, Outcome> {
        let body = node_create_body(bmc, data, &self.node_name(), driver_info)
            .map_err(|m| Ok(OpResult::failed(m)))?;
        self.shared.watch.creating(&self.node_name());
        match self.seen(self.client().create_node(&Value::Object(body))) {
            Ok(node) => {
                self.publish("Registered", "Registered new host");
                self.created = true;
                self.keep(node.clone());
                Ok(node)
            }
            Err(e) if e.is_conflict() => Err(Ok(requeue(self.conflict_delay()))),
            Err(e) => Err(transient(format!("failed to register host in ironic: {e}"))),
        }
    }

    /// E. Create the missing ports for the boot MAC and the inspected NICs (known ones are kept).
    fn create_ports(&mut self, node: &Node, data: &ManagementAccessData) -> Result<(), String> {
        let boot_mac = self.host.boot_mac_address.to_ascii_lowercase();
        let details = data
            .hardware_data
            .as_ref()
            .and_then(|h| h.spec.hardware.as_ref());
        let nics = details
            .iter()
            .flat_map(|d| &d.nics)
            .filter(|n| !n.mac.is_empty());
        let mut wanted: Vec<(String, bool)> =
            nics.map(|n| (n.mac.to_ascii_lowercase(), n.pxe)).collect();
        // The boot MAC's port is always PXE-enabled (BMO's `ensurePorts` sets it last).
        if !boot_mac.is_empty() {
            wanted.retain(|(m, _)| *m != boot_mac);
            wanted.push((boot_mac, true));
        }
        if wanted.is_empty() {
            return Ok(());
        }
        let known: BTreeSet<&str> = self.saved.ports.iter().map(String::as_str).collect();
        if wanted.iter().all(|(m, _)| known.contains(m.as_str())) {
            return Ok(());
        }
        // With `due_hosts`, a node this pass created is known to have no ports, and the shared
        // port listing answers for the others unless our last port write for the node is newer.
        let listing = (!self.created)
            .then(|| self.shared.ports.answering(self.client(), &node.uuid))
            .flatten();
        let existing = if self.created && self.shared.watch.enabled() {
            Vec::new()
        } else if let Some(l) = &listing {
            l.of_node(&node.uuid)
        } else {
            self.seen(self.client().list_ports(("node_uuid", &node.uuid)))
                .map_err(|e| format!("failed to list ports of node {}: {e}", node.uuid))?
        };
        let mut have: BTreeSet<String> = existing
            .iter()
            .map(|p| p.address.to_ascii_lowercase())
            .collect();
        let mut seen_macs = BTreeSet::new();
        for (mac, pxe) in wanted {
            if have.contains(&mac) || !seen_macs.insert(mac.clone()) {
                continue;
            }
            // With `due_hosts`, the owners of the boot MAC this pass's lookup found are reused.
            let reused = self
                .mac_owners
                .as_ref()
                .filter(|(m, _)| *m == mac && self.shared.watch.enabled())
                .map(|(_, owners)| owners.clone());
            let owners = match reused.or_else(|| listing.as_ref().map(|l| l.with_address(&mac))) {
                Some(owners) => owners,
                None => self
                    .seen(self.client().list_ports(("address", &mac)))
                    .map_err(|e| format!("failed to look up port {mac}: {e}"))?,
            };
            if let Some(other) = owners.iter().find(|p| p.node_uuid != node.uuid) {
                return Err(format!(
                    "port belongs to another node {}, MAC: {mac} can't register for node {}",
                    other.node_uuid, node.uuid
                ));
            }
            if owners.is_empty() {
                self.shared.ports.writing(&node.uuid);
                let created = self.seen(self.client().create_port(&node.uuid, &mac, pxe));
                self.shared.ports.wrote(&node.uuid);
                created.map_err(|e| {
                    format!("failed to create ironic port for node {}: {e}", node.uuid)
                })?;
            }
            have.insert(mac);
        }
        self.saved.ports = have.into_iter().collect();
        Ok(())
    }

    /// H. BMO's `configureNode`.
    fn configure_node(
        &mut self,
        data: &ManagementAccessData,
        node: &Node,
        bmc: &AccessDetails,
    ) -> Outcome {
        let mut patch = NodePatch::new();
        let deploy_image = self.deploy_image(bmc, data);
        if let Some(keys) = &deploy_image {
            for (k, v) in keys {
                patch = patch.update(node, Section::DriverInfo, k, v.clone());
            }
        }
        let automated_clean =
            data.automated_cleaning_mode != bmh_api::AutomatedCleaningMode::Disabled;
        if node.automated_clean != Some(automated_clean) {
            patch = patch.add("/automated_clean", automated_clean);
        }
        patch = boot_properties(patch, node, &data.boot_mode, &data.cpu_architecture);
        if let Err(outcome) = self.try_update_node(node, patch) {
            return outcome;
        }
        if !self.shared.config.have_preprov_image_builder || deploy_image.is_some() {
            return Ok(OpResult::done());
        }
        use ProvisioningState as S;
        let needs_image = match &data.state {
            S::Deprovisioning => {
                data.automated_cleaning_mode != bmh_api::AutomatedCleaningMode::Disabled
            }
            S::Inspecting => data.inspection_mode != InspectionMode::Fast,
            S::Preparing => true,
            S::Provisioned | S::ExternallyProvisioned => {
                data.operational_status == OperationalStatus::Servicing
            }
            // Provisioning (with a live ISO or not) and the rest.
            _ => false,
        };
        if needs_image {
            Err(ProvisionerError::NeedsPreprovisioningImage)
        } else {
            Ok(OpResult::done())
        }
    }

    /// BMO's `setDeployImage` (spec 3.2): the deploy-image keys of `driver_info`, if any.
    fn deploy_image(
        &self,
        bmc: &AccessDetails,
        data: &ManagementAccessData,
    ) -> Option<Vec<(&'static str, Option<Value>)>> {
        let cfg = &self.shared.config;
        let iso_ok = bmc.supports_iso_preprovisioning_image();
        let keys = |kernel: Option<&str>,
                    ramdisk: Option<&str>,
                    iso: Option<&str>,
                    params: Option<String>| {
            Some(vec![
                ("deploy_kernel", kernel.map(Value::from)),
                ("deploy_ramdisk", ramdisk.map(Value::from)),
                ("deploy_iso", iso.map(Value::from)),
                ("kernel_append_params", params.map(Value::from)),
            ])
        };
        if let Some(img) = data
            .preprovisioning_image
            .as_ref()
            .filter(|i| !i.image_url.is_empty())
        {
            let params = (!img.extra_kernel_params.is_empty())
                .then(|| format!("%default% {}", img.extra_kernel_params));
            match img.format.as_str() {
                "iso" if iso_ok => return keys(None, None, Some(&img.image_url), None),
                "initrd" if !img.kernel_url.is_empty() => {
                    return keys(Some(&img.kernel_url), Some(&img.image_url), None, params);
                }
                "initrd" if cfg.deploy_kernel_url.is_empty() => return None,
                "initrd" => {
                    return keys(
                        Some(&cfg.deploy_kernel_url),
                        Some(&img.image_url),
                        None,
                        params,
                    );
                }
                _ => {}
            }
        }
        if cfg.have_preprov_image_builder {
            return None;
        }
        if iso_ok && !cfg.deploy_iso_url.is_empty() {
            return keys(None, None, Some(&cfg.deploy_iso_url), None);
        }
        if !cfg.deploy_kernel_url.is_empty() && !cfg.deploy_ramdisk_url.is_empty() {
            return keys(
                Some(&cfg.deploy_kernel_url),
                Some(&cfg.deploy_ramdisk_url),
                None,
                None,
            );
        }
        None
    }

    pub(super) fn do_preprovisioning_image_formats(
        &mut self,
    ) -> Result<Option<Vec<ImageFormat>>, ProvisionerError> {
        if !self.shared.config.have_preprov_image_builder {
            return Ok(None);
        }
        let bmc = self.bmc().map_err(ProvisionerError::other)?;
        Ok(Some(if bmc.supports_iso_preprovisioning_image() {
            vec![ImageFormat::Iso, ImageFormat::Initrd]
        } else {
            vec![ImageFormat::Initrd]
        }))
    }
}

/// The `POST /v1/nodes` body (spec 3.1 C); `Err` is a `fail` text.
pub fn node_create_body(
    bmc: &AccessDetails,
    data: &ManagementAccessData,
    node_name: &str,
    driver_info: &Map<String, Value>,
) -> Result<Map<String, Value>, String> {
    let fast = data.inspection_mode == InspectionMode::Fast;
    let interfaces = bmc.interfaces(fast).map_err(|e| e.to_string())?;
    let mut body = Map::new();
    body.insert("driver".into(), bmc.driver().into());
    for (field, value) in interfaces.set_fields() {
        body.insert(field.into(), value.into());
    }
    if let Some(d) = deploy_interface(bmc, data) {
        body.insert("deploy_interface".into(), d.into());
    }
    body.insert("name".into(), node_name.into());
    body.insert("driver_info".into(), Value::Object(driver_info.clone()));
    // Decision (spec 8.9): sent only when true, so Ironics below 1.95 accept the body.
    if data.disable_power_off {
        body.insert("disable_power_off".into(), true.into());
    }
    body.insert(
        "properties".into(),
        json!({
            "capabilities": merge_boot_mode_capabilities(None, &data.boot_mode),
            "cpu_arch": data.cpu_architecture,
        }),
    );
    Ok(body)
}

/// `properties.capabilities` merged with the boot mode, and `properties.cpu_arch` when known.
pub(super) fn boot_properties(
    patch: NodePatch,
    node: &Node,
    boot_mode: &BootMode,
    cpu_arch: &str,
) -> NodePatch {
    let capabilities = merge_boot_mode_capabilities(node.properties.get("capabilities"), boot_mode);
    let patch = patch.set(node, Section::Properties, "capabilities", capabilities);
    if cpu_arch.is_empty() {
        patch
    } else {
        patch.set(node, Section::Properties, "cpu_arch", cpu_arch)
    }
}

/// `deploy_interface` on create: the scheme's fixed one, else custom deploy, else live ISO.
pub(super) fn deploy_interface(
    bmc: &AccessDetails,
    data: &ManagementAccessData,
) -> Option<&'static str> {
    if let Some(fixed) = bmc.deploy_interface() {
        return Some(fixed);
    }
    if data.has_custom_deploy {
        Some("custom-agent")
    } else if data.current_image.as_ref().is_some_and(|i| i.is_live_iso()) {
        Some("ramdisk")
    } else {
        None
    }
}

/// BMO's `bmcAddressMatches`: compares only the first (sorted) key ending in `_address`.
/// Whether BMO's path from registering (Register, then Adopt, Prepare or Inspect) takes a
/// node from Ironic `state`, at once or once the node gets out of it by itself (spec 3.1-3.8).
fn path_takes(state: &str, host: &HostData) -> bool {
    use state::*;
    if host.externally_provisioned {
        // Adopt answers every state but `adopt failed` (a failure BMO reports as such).
        return true;
    }
    // Register waits these out; cleaning and inspection end in a state both paths take.
    let common = [
        ENROLL,
        VERIFYING,
        MANAGEABLE,
        AVAILABLE,
        CLEANING,
        CLEAN_WAIT,
        INSPECTING,
        INSPECT_WAIT,
        DELETING,
    ];
    common.contains(&state)
        || state
            == if host.inspection_disabled {
                CLEAN_FAIL
            } else {
                INSPECT_FAIL
            }
}

fn bmc_address_matches(current: &Map<String, Value>, desired: &Map<String, Value>) -> bool {
    let first = |m: &Map<String, Value>| {
        let key = m.keys().filter(|k| k.ends_with("_address")).min()?;
        Some((key.clone(), m.get(key).cloned()))
    };
    first(current) == first(desired)
}

/// An IPv6 literal, or a name whose first DNS answer is IPv6.
fn host_is_ipv6(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<std::net::IpAddr>() {
        return ip.is_ipv6();
    }
    use std::net::ToSocketAddrs;
    (bare, 0)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .is_some_and(|a| a.is_ipv6())
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn address_match_compares_the_first_address_key_only() {
        let a = json!({"redfish_address": "https://a", "redfish_system_id": "/1"});
        let b = json!({"redfish_address": "https://a", "redfish_system_id": "/2"});
        let c = json!({"redfish_address": "https://b"});
        let m = |v: Value| v.as_object().unwrap().clone();
        assert!(bmc_address_matches(&m(a.clone()), &m(b)));
        assert!(!bmc_address_matches(&m(a), &m(c)));
    }

    /// One row per scheme (spec 4.2): the node-create body for that address, as JSON.
    #[test]
    fn node_create_body_for_every_scheme() {
        let none = Value::Null;
        // address, driver, boot, bios, management/power/vendor, raid, firmware, driver_info keys
        type Row<'a> = (
            &'a str,
            &'a str,
            &'a str,
            Value,
            Value,
            &'a str,
            Value,
            &'a [&'a str],
        );
        let rows: &[Row] = &[
            (
                "ipmi://192.0.2.1",
                "ipmi",
                "ipxe",
                none.clone(),
                none.clone(),
                "no-raid",
                none.clone(),
                &[
                    "ipmi_address",
                    "ipmi_password",
                    "ipmi_port",
                    "ipmi_priv_level",
                    "ipmi_username",
                ],
            ),
            (
                "libvirt://192.0.2.1:6230",
                "ipmi",
                "ipxe",
                none.clone(),
                none.clone(),
                "no-raid",
                none.clone(),
                &[
                    "ipmi_address",
                    "ipmi_password",
                    "ipmi_port",
                    "ipmi_priv_level",
                    "ipmi_username",
                ],
            ),
            (
                "redfish://bmc/redfish/v1/Systems/1",
                "redfish",
                "ipxe",
                none.clone(),
                none.clone(),
                "redfish",
                json!("redfish"),
                &[
                    "redfish_address",
                    "redfish_password",
                    "redfish_system_id",
                    "redfish_username",
                ],
            ),
            (
                "ilo5-redfish+http://bmc/redfish/v1/Systems/1",
                "redfish",
                "ipxe",
                none.clone(),
                none.clone(),
                "redfish",
                json!("redfish"),
                &[
                    "redfish_address",
                    "redfish_password",
                    "redfish_system_id",
                    "redfish_username",
                ],
            ),
            (
                "idrac-redfish://bmc/redfish/v1/Systems/1",
                "idrac",
                "ipxe",
                json!("idrac-redfish"),
                json!("idrac-redfish"),
                "idrac-redfish",
                json!("redfish"),
                &[
                    "redfish_address",
                    "redfish_password",
                    "redfish_system_id",
                    "redfish_username",
                ],
            ),
            (
                "redfish-virtualmedia+https://bmc/redfish/v1/Systems/1",
                "redfish",
                "redfish-virtual-media",
                none.clone(),
                none.clone(),
                "redfish",
                json!("redfish"),
                &[
                    "redfish_address",
                    "redfish_password",
                    "redfish_system_id",
                    "redfish_username",
                ],
            ),
            (
                "ilo5-virtualmedia://bmc/redfish/v1/Systems/1",
                "redfish",
                "redfish-virtual-media",
                none.clone(),
                none.clone(),
                "redfish",
                json!("redfish"),
                &[
                    "redfish_address",
                    "redfish_password",
                    "redfish_system_id",
                    "redfish_username",
                ],
            ),
            (
                "idrac-virtualmedia://bmc/redfish/v1/Systems/1",
                "idrac",
                "idrac-redfish-virtual-media",
                json!("idrac-redfish"),
                json!("idrac-redfish"),
                "idrac-redfish",
                json!("redfish"),
                &[
                    "redfish_address",
                    "redfish_password",
                    "redfish_system_id",
                    "redfish_username",
                ],
            ),
            (
                "redfish-uefihttp://bmc",
                "redfish",
                "redfish-https",
                none.clone(),
                none.clone(),
                "redfish",
                json!("redfish"),
                &[
                    "redfish_address",
                    "redfish_password",
                    "redfish_system_id",
                    "redfish_username",
                ],
            ),
            (
                "fake-hardware://f-1",
                "fake-hardware",
                "fake",
                json!("fake"),
                json!("fake"),
                "fake",
                json!("fake"),
                &[],
            ),
        ];
        for (address, driver, boot, bios, mgmt, raid, firmware, keys) in rows {
            let bmc = bmh_bmc::parse(address).unwrap();
            let creds = Credentials::new("admin", "secret");
            let info = bmc.driver_info(&creds, false);
            let data = ManagementAccessData::default();
            let body = Value::Object(node_create_body(&bmc, &data, "ns~h", &info).unwrap());
            let get = |k: &str| body.get(k).cloned().unwrap_or(Value::Null);
            assert_eq!(get("driver"), json!(driver), "{address}");
            assert_eq!(get("boot_interface"), json!(boot), "{address}");
            assert_eq!(get("bios_interface"), *bios, "{address}");
            for k in [
                "management_interface",
                "power_interface",
                "vendor_interface",
            ] {
                assert_eq!(get(k), *mgmt, "{address} {k}");
            }
            assert_eq!(get("raid_interface"), json!(raid), "{address}");
            assert_eq!(get("firmware_interface"), *firmware, "{address}");
            let expected_inspect = if *driver == "fake-hardware" {
                "fake"
            } else {
                "agent"
            };
            assert_eq!(
                get("inspect_interface"),
                json!(expected_inspect),
                "{address}"
            );
            assert_eq!(get("name"), json!("ns~h"));
            let got_keys: Vec<&String> = body["driver_info"].as_object().unwrap().keys().collect();
            let mut sorted = got_keys.clone();
            sorted.sort();
            assert_eq!(sorted, *keys, "{address}");
            assert_eq!(get("disable_power_off"), Value::Null, "omitted unless true");
            assert_eq!(body["properties"]["capabilities"], json!("boot_mode:uefi"));
            let expected_deploy = if *driver == "fake-hardware" {
                json!("fake")
            } else {
                Value::Null
            };
            assert_eq!(get("deploy_interface"), expected_deploy, "{address}");
        }
    }

    #[test]
    fn node_create_body_choices() {
        let bmc = bmh_bmc::parse("redfish-virtualmedia://bmc/redfish/v1/Systems/1").unwrap();
        let info = Map::new();
        let mut data = ManagementAccessData {
            inspection_mode: InspectionMode::Fast,
            boot_mode: BootMode::UefiSecureBoot,
            disable_power_off: true,
            cpu_architecture: "aarch64".into(),
            current_image: Some(bmh_api::Image {
                url: "http://x/live.iso".into(),
                format: "live-iso".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let body = node_create_body(&bmc, &data, "ns~h", &info).unwrap();
        assert_eq!(body["inspect_interface"], json!("redfish"));
        assert_eq!(body["deploy_interface"], json!("ramdisk"));
        assert_eq!(body["disable_power_off"], json!(true));
        assert_eq!(
            body["properties"],
            json!({"capabilities": "boot_mode:uefi,secure_boot:true", "cpu_arch": "aarch64"})
        );
        data.has_custom_deploy = true;
        let body = node_create_body(&bmc, &data, "ns~h", &info).unwrap();
        assert_eq!(body["deploy_interface"], json!("custom-agent"));
        // fast inspection on a driver without out-of-band inspection is a failure
        let ipmi = bmh_bmc::parse("ipmi://192.0.2.1").unwrap();
        let err = node_create_body(&ipmi, &data, "ns~h", &info).unwrap_err();
        assert!(
            err.contains("does not support fast (out-of-band) inspection"),
            "{err}"
        );
        data.boot_mode = BootMode::Legacy;
        data.inspection_mode = InspectionMode::Unset;
        let body = node_create_body(&ipmi, &data, "ns~h", &info).unwrap();
        assert_eq!(body["properties"]["capabilities"], json!("boot_mode:bios"));
    }

    #[test]
    fn ipv6_detection() {
        assert!(host_is_ipv6("[fd00::1]"));
        assert!(host_is_ipv6("fd00::1"));
        assert!(!host_is_ipv6("192.0.2.1"));
    }
}
