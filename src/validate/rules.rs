//! BMO's validating webhook for BareMetalHosts: the create rules (also run on the new object of
//! an update) in BMO's evaluation order, and the update rules (spec `bmo-ironic-and-bmc.md` §5.1,
//! §5.2). Messages are BMO's, word for word.

use super::gojson::{self, HARDWARE_DETAILS, HOST_STATUS, REBOOT_ARGUMENTS};
use super::golib::{is_uuid, parse_mac, quote};
use super::{Errors, FieldPath, Origin, ValidationError, spec};
use bmh_api::annotations::{
    HARDWARE_DETAILS as HARDWARE_DETAILS_ANNOTATION, INSPECT, REBOOT_PREFIX, STATUS,
    is_reboot_annotation,
};
use bmh_api::{BareMetalHost, BootMode, InspectionMode, OperationalStatus, ProvisioningState};
use bmh_bmc::AccessDetails;

/// `operationalStatus` values the status annotation may carry (`OperationalStatusAllowed`).
const OPERATIONAL_STATUS_ALLOWED: &[&str] =
    &["", "OK", "discovered", "error", "delayed", "detached"];
/// `errorType` values the status annotation may carry (`ErrorTypeAllowed`).
const ERROR_TYPE_ALLOWED: &[&str] = &[
    "",
    "provisioned registration error",
    "registration error",
    "inspection error",
    "preparation error",
    "provisioning error",
    "power management error",
];
const IMAGE_URL_SCHEMES: &[&str] = &["http", "https", "ftp", "gopher", "oci"];

/// BMO's `InspectionDisabled()`: by `inspectionMode` or the `inspect.metal3.io` annotation.
pub fn inspection_disabled(host: &BareMetalHost) -> bool {
    host.spec.inspection_mode == InspectionMode::Disabled
        || host
            .metadata
            .annotations
            .get(INSPECT)
            .is_some_and(|v| v == "disabled")
}

/// The create rules (`validateHost`), every failing rule reported, in BMO's order.
pub fn create_rules(host: &BareMetalHost) -> Vec<ValidationError> {
    let mut e = Errors::new(Origin::Webhook);
    let access = bmc_address(host, &mut e);
    legacy_firmware(host, &mut e);
    cross_namespace_secrets(host, &mut e);
    raid(host, &mut e);
    if let Some(a) = &access {
        driver_needs(host, a, &mut e);
    }
    host_name(host, &mut e);
    dns_name(host, &mut e);
    root_device_name(host, &mut e);
    image(host, &mut e);
    annotations(host, &mut e);
    inspection_mode(host, access.as_ref(), &mut e);
    power(host, &mut e);
    network_interfaces(host, &mut e);
    e.list
}

fn address(host: &BareMetalHost) -> &str {
    host.spec.bmc.as_ref().map_or("", |b| b.address.as_str())
}

/// Rule 1: the address must resolve to a known BMC type; the BMC's details when it does.
fn bmc_address(host: &BareMetalHost, e: &mut Errors) -> Option<AccessDetails> {
    let address = address(host);
    if address.is_empty() {
        return None;
    }
    bmh_bmc::parse(address)
        .map_err(|err| {
            // BMO's message, and what was probably meant.
            let hint = match &err {
                bmh_bmc::BmcError::UnknownType { bmc_type, .. } => {
                    super::bmc_type_suggestion(bmc_type)
                }
                _ => None,
            };
            e.push_hinted(spec(&["bmc", "address"]), err.to_string(), hint)
        })
        .ok()
}

/// Rule 2: the legacy firmware field.
fn legacy_firmware(host: &BareMetalHost, e: &mut Errors) {
    if host.spec.firmware.is_some() {
        e.push(
            spec(&["firmware"]),
            "the Firmware field is no longer supported, use HostFirmwareSettings resource instead",
        );
    }
}

/// Rule 3: cross-namespace Secret references (a host without a namespace is in `default`, as
/// the API server would have put it; the order is fixed where BMO's is a map's).
fn cross_namespace_secrets(host: &BareMetalHost, e: &mut Errors) {
    let s = &host.spec;
    for (field, r) in [
        ("userData", &s.user_data),
        ("networkData", &s.network_data),
        ("metaData", &s.meta_data),
    ] {
        if let Some(r) = r
            && !r.namespace.is_empty()
            && r.namespace != host.metadata.namespace_or_default()
        {
            e.push(
                spec(&[field, "namespace"]),
                format!(
                    "baremetalhosts.metal3.io {} is forbidden: {field}: cross-namespace Secret references are not allowed",
                    quote(&host.metadata.name)
                ),
            );
        }
    }
}

/// Rule 5: what the BMC driver needs (only with a resolved address).
fn driver_needs(host: &BareMetalHost, a: &AccessDetails, e: &mut Errors) {
    let s = &host.spec;
    let hw_volumes = s
        .raid
        .as_ref()
        .and_then(|r| r.hardware_raid_volumes.as_ref())
        .is_some_and(|v| !v.is_empty());
    if let Err(err) = a.check_hardware_raid(hw_volumes) {
        e.push(spec(&["raid", "hardwareRAIDVolumes"]), err.to_string());
    }
    if let Err(err) = a.check_boot_mac(!s.boot_mac_address.is_empty(), inspection_disabled(host)) {
        e.push(spec(&["bootMACAddress"]), err.to_string());
    }
    if !s.boot_mac_address.is_empty()
        && let Err(m) = parse_mac(&s.boot_mac_address)
    {
        e.push(spec(&["bootMACAddress"]), m);
    }
    if let Err(err) = a.check_secure_boot(s.boot_mode == BootMode::UefiSecureBoot) {
        e.push(spec(&["bootMode"]), err.to_string());
    }
}

/// Rule 6: the host's name.
fn host_name(host: &BareMetalHost, e: &mut Errors) {
    let name = &host.metadata.name;
    let name_field = FieldPath::new().key("metadata").key("name");
    if name
        .chars()
        .any(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
    {
        e.push(
            name_field,
            "BareMetalHost resource name cannot contain characters other than [A-Za-z0-9._-]",
        );
    } else if is_uuid(name) {
        e.push(name_field, "BareMetalHost resource name cannot be a UUID");
    }
}

/// Rule 7: the address parsed once more (BMO's validateDNSName); duplicates rule 1's text.
fn dns_name(host: &BareMetalHost, e: &mut Errors) {
    let address = address(host);
    if !address.is_empty()
        && let Err(err) = bmh_bmc::parse_address(address)
    {
        e.push(spec(&["bmc", "address"]), err.to_string());
    }
}

/// Rule 8: the root device hint's device name.
fn root_device_name(host: &BareMetalHost, e: &mut Errors) {
    let Some(h) = &host.spec.root_device_hints else {
        return;
    };
    let name = &h.device_name;
    let must = match name.strip_prefix("/dev/") {
        _ if name.is_empty() => return,
        None => "must be a /dev/ path",
        Some(sub)
            if sub
                .strip_prefix("disk/by-path/")
                .unwrap_or(sub)
                .contains('/') =>
        {
            "must be path in /dev/ or /dev/disk/by-path/"
        }
        Some(_) => return,
    };
    let message = format!("device name of root device hint {must}, not \"{name}\"");
    e.push(spec(&["rootDeviceHints", "deviceName"]), message);
}

/// Rule 9: the image's URL and checksum.
fn image(host: &BareMetalHost, e: &mut Errors) {
    let Some(image) = &host.spec.image else {
        return;
    };
    let invalid = match bmh_bmc::parse_request_uri(&image.url) {
        Err(err) => Some(err.to_string()),
        Ok(scheme) if !IMAGE_URL_SCHEMES.contains(&scheme.as_str()) => {
            Some(format!("invalid scheme in URL, \"{scheme}\" not allowed"))
        }
        Ok(_) => None,
    };
    if let Some(why) = invalid {
        let message = format!("image URL {} is invalid: {why}", image.url);
        e.push(spec(&["image", "url"]), message);
    }
    if image.is_oci() {
        if !image.checksum.is_empty() {
            e.push(
                spec(&["image", "checksum"]),
                "spec.image.checksum must be empty for OCI images (oci:// images have embedded checksums)",
            );
        }
    } else if !image.is_live_iso() {
        if image.checksum.is_empty() {
            e.push(
                spec(&["image", "checksum"]),
                "checksum is required for normal images",
            );
        } else if !matches!(
            image.checksum_type.as_str(),
            "" | "auto" | "md5" | "sha256" | "sha512"
        ) {
            e.push(
                spec(&["image", "checksumType"]),
                format!(
                    "unknown checksumType {}, supported are auto, md5, sha256, sha512",
                    image.checksum_type
                ),
            );
        }
    }
}

/// Rule 12: power.
fn power(host: &BareMetalHost, e: &mut Errors) {
    if host.spec.disable_power_off && !host.spec.online {
        e.push(
            spec(&["disablePowerOff"]),
            "node can't simultaneously have online set to false and have power off disabled",
        );
    }
}

/// Rule 13: network interfaces.
fn network_interfaces(host: &BareMetalHost, e: &mut Errors) {
    let mut seen = std::collections::HashSet::new();
    for (i, iface) in host.spec.network_interfaces.iter().enumerate() {
        let problem = match (iface.name.is_empty(), iface.mac_address.is_empty()) {
            (true, true) => "must specify either name or macAddress".to_string(),
            (false, false) => "name and macAddress are mutually exclusive".to_string(),
            (_, mac_empty) => {
                let selector = if mac_empty {
                    &iface.name
                } else {
                    &iface.mac_address
                };
                if seen.insert(selector.to_lowercase()) {
                    continue;
                }
                format!("duplicate interface selector for {}", quote(selector))
            }
        };
        let field = spec(&["networkInterfaces"]).index(i);
        e.push(field, format!("networkInterfaces[{i}]: {problem}"));
    }
}

/// Rule 4: RAID.
fn raid(host: &BareMetalHost, e: &mut Errors) {
    let Some(r) = &host.spec.raid else { return };
    let hw = r.hardware_raid_volumes.as_deref().unwrap_or_default();
    let sw = r.software_raid_volumes.as_deref().unwrap_or_default();
    if !hw.is_empty() && !sw.is_empty() {
        e.push(
            spec(&["raid"]),
            "hardwareRAIDVolumes and softwareRAIDVolumes can not be set at the same time",
        );
    }
    for (i, v) in hw.iter().enumerate() {
        let field = spec(&["raid", "hardwareRAIDVolumes"]).index(i);
        if !v.physical_disks.is_empty() && v.controller.is_empty() {
            e.push(
                field.clone().key("physicalDisks"),
                format!(
                    "'physicalDisks' specified without 'controller' in hardware RAID volume {i}"
                ),
            );
        }
        if let Some(n) = v.number_of_physical_disks
            && !v.physical_disks.is_empty()
            && n != v.physical_disks.len() as i64
        {
            e.push(
                field.key("numberOfPhysicalDisks"),
                format!(
                    "the 'numberOfPhysicalDisks'[{n}] and number of 'physicalDisks'[{}] is not same for volume {i}",
                    v.physical_disks.len()
                ),
            );
        }
    }
    let roots = sw.iter().filter(|v| v.root_volume).count();
    if roots > 1 {
        e.push(
            spec(&["raid", "softwareRAIDVolumes"]),
            "softwareRAIDVolumes[*].rootVolume can only be set once",
        );
    }
    if roots == 1 && host.spec.root_device_hints.is_some() {
        e.push(
            spec(&["rootDeviceHints"]),
            "softwareRAIDVolumes[*].rootVolume and rootDeviceHints can not be set at the same time",
        );
    }
    for (i, v) in sw.iter().enumerate() {
        if v.root_volume && v.level != "1" {
            e.push(
                spec(&["raid", "softwareRAIDVolumes"]).index(i).key("level"),
                format!("softwareRAIDVolumes[{i}] with rootVolume set must use RAID level 1"),
            );
        }
    }
}

fn annotations(host: &BareMetalHost, e: &mut Errors) {
    for (key, value) in &host.metadata.annotations {
        if value.is_empty() {
            continue;
        }
        let field = FieldPath::new().key("metadata").key("annotations").key(key);
        let problem = if key == STATUS {
            status_annotation(value)
        } else if is_reboot_annotation(key) {
            reboot_annotation(value)
        } else if key == INSPECT {
            (!matches!(value.as_str(), "disabled" | "")).then(|| {
                format!(
                    "invalid value for the {INSPECT} annotation, allowed are \"disabled\" or \"\""
                )
            })
        } else if key == HARDWARE_DETAILS_ANNOTATION {
            hardware_details_annotation(value, inspection_disabled(host))
        } else {
            None
        };
        if let Some(m) = problem {
            e.push(field, m);
        }
    }
}

fn status_annotation(value: &str) -> Option<String> {
    let status = match gojson::decode_strict(value, &HOST_STATUS) {
        Ok(v) => v,
        Err(m) => return Some(format!("error decoding status annotation: {m}")),
    };
    let allowed = [
        ("operationalStatus", OPERATIONAL_STATUS_ALLOWED),
        ("errorType", ERROR_TYPE_ALLOWED),
    ];
    allowed.into_iter().find_map(|(field, values)| {
        let v = gojson::field_str(&status, field);
        (!values.contains(&v)).then(|| format!("invalid {field} '{v}' in the {STATUS} annotation"))
    })
}

fn reboot_annotation(value: &str) -> Option<String> {
    let args = match gojson::unmarshal(value, &REBOOT_ARGUMENTS) {
        Ok(v) => v,
        Err(m) => {
            return Some(format!(
                "failed to unmarshal the data from the {REBOOT_PREFIX} annotation: {m}"
            ));
        }
    };
    let mode = gojson::field_str(&args, "mode");
    (!matches!(mode, "hard" | "soft" | "")).then(|| {
        format!(
            "invalid mode in the {REBOOT_PREFIX} annotation, allowed are \"hard\", \"soft\" or \"\""
        )
    })
}

fn hardware_details_annotation(value: &str, inspection_disabled: bool) -> Option<String> {
    if !inspection_disabled {
        return Some(
            "when hardware details are provided, inspection must be disabled (either via inspect.metal3.io annotation or inspectionMode field)".into(),
        );
    }
    gojson::decode_strict(value, &HARDWARE_DETAILS)
        .err()
        .map(|m| format!("error decoding the {HARDWARE_DETAILS_ANNOTATION} annotation: {m}"))
}

fn inspection_mode(host: &BareMetalHost, access: Option<&AccessDetails>, e: &mut Errors) {
    let field = spec(&["inspectionMode"]);
    let mode = &host.spec.inspection_mode;
    let annotation = host
        .metadata
        .annotations
        .get(INSPECT)
        .map_or("", String::as_str);
    if !annotation.is_empty()
        && !mode.is_unset()
        && (annotation == "disabled") != (*mode == InspectionMode::Disabled)
    {
        e.push(
            field,
            "inspect.metal3.io annotation and inspectionMode field have contradicting values",
        );
        return;
    }
    if !mode.is_known() {
        e.push(
            field,
            format!(
                "invalid inspectionMode value: {mode}, allowed values are 'disabled', 'agent', or 'fast'"
            ),
        );
        return;
    }
    if *mode == InspectionMode::Fast
        && let Some(a) = access
        && let Err(err) = a.check_fast_inspection(true)
    {
        e.push(field, err.to_string());
    }
}

/// The update rules (`validateChanges` beyond the create rules) from `old` to `new`.
pub fn update_rules(old: &BareMetalHost, new: &BareMetalHost) -> Vec<ValidationError> {
    let mut e = Errors::new(Origin::Update);
    let status = |h: &BareMetalHost| {
        h.status
            .as_ref()
            .map(|s| (s.operational_status.clone(), s.provisioning.state.clone()))
            .unwrap_or_default()
    };
    let ((old_op, old_state), (new_op, new_state)) = (status(old), status(new));
    let (old_addr, new_addr) = (address(old), address(new));
    if !old_addr.is_empty()
        && new_addr != old_addr
        && old_op != OperationalStatus::Detached
        && new_op != OperationalStatus::Detached
        && old_state != ProvisioningState::Registering
        && new_state != ProvisioningState::Registering
    {
        e.push(
            spec(&["bmc", "address"]),
            "BMC address can not be changed if the BMH is not in the Registering state, or if the BMH is not detached",
        );
    }
    let (old_mac, new_mac) = (&old.spec.boot_mac_address, &new.spec.boot_mac_address);
    if !old_mac.is_empty() && !eq_fold(old_mac, new_mac) {
        e.push(
            spec(&["bootMACAddress"]),
            "bootMACAddress can not be changed once it is set",
        );
    }
    if !old.spec.externally_provisioned
        && new.spec.externally_provisioned
        && old_state != ProvisioningState::Available
        && new_state != ProvisioningState::Available
    {
        e.push(
            spec(&["externallyProvisioned"]),
            format!(
                "externallyProvisioned can only be enabled when in Available state, currently in {old_state}"
            ),
        );
    }
    e.list
}

/// Go's `strings.EqualFold`, as close as MAC addresses need.
fn eq_fold(a: &str, b: &str) -> bool {
    a == b || a.to_lowercase() == b.to_lowercase()
}
