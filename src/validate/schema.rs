//! The constraints of BMO's BareMetalHost CRD schema (spec §5.3), with the API server's field
//! errors. Required fields a typed host cannot tell from empty ones are not checked.

use super::{Errors, FieldPath, Origin, ValidationError, spec};
use bmh_api::{BareMetalHost, NetworkInterface, RaidConfig, RootDeviceHints};
use serde_json::Value;

const MAC_PATTERN: &str = "[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}";
const MAC_PATTERN_ANCHORED: &str = "^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$";

/// The schema's kinds of constraint, with the API server's messages.
impl Errors {
    fn enumeration(&mut self, field: FieldPath, value: &str, allowed: &[&str]) {
        if value.is_empty() || allowed.contains(&value) {
            return;
        }
        let list: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
        self.push(
            field,
            format!(
                "Unsupported value: \"{value}\": supported values: {}",
                list.join(", ")
            ),
        );
    }

    fn pattern(&mut self, field: FieldPath, value: &str, ok: bool, pattern: &str) {
        if !ok {
            let f = field.to_string();
            self.push(
                field,
                format!("Invalid value: \"{value}\": {f} in body should match '{pattern}'"),
            );
        }
    }

    fn minimum(&mut self, field: FieldPath, value: Option<i64>, min: i64) {
        if let Some(v) = value
            && v < min
        {
            let f = field.to_string();
            self.push(
                field,
                format!("Invalid value: {v}: {f} in body should be greater than or equal to {min}"),
            );
        }
    }

    fn max_length(&mut self, field: FieldPath, value: &str, max: usize) {
        if value.len() > max {
            self.push(field, format!("Too long: may not be more than {max} bytes"));
        }
    }
}

/// Whether `s` is a MAC address in the colon form the schema's patterns describe.
fn is_colon_mac(s: &[u8]) -> bool {
    s.len() == 17
        && s.iter().enumerate().all(|(i, c)| match i % 3 {
            2 => *c == b':',
            _ => c.is_ascii_hexdigit(),
        })
}

/// The unanchored pattern: somewhere in `s`.
fn contains_colon_mac(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 17 && (0..=b.len() - 17).any(|i| is_colon_mac(&b[i..i + 17]))
}

fn hints(e: &mut Errors, field: FieldPath, h: &RootDeviceHints) {
    e.minimum(field.key("minSizeGigabytes"), Some(h.min_size_gigabytes), 0);
}

/// Every CRD schema constraint the host breaks.
pub fn schema_errors(host: &BareMetalHost) -> Vec<ValidationError> {
    let mut e = Errors::new(Origin::Schema);
    let s = &host.spec;
    e.enumeration(
        spec(&["automatedCleaningMode"]),
        s.automated_cleaning_mode.as_str(),
        &["metadata", "disabled"],
    );
    if !s.boot_mac_address.is_empty() {
        e.pattern(
            spec(&["bootMACAddress"]),
            &s.boot_mac_address,
            contains_colon_mac(&s.boot_mac_address),
            MAC_PATTERN,
        );
    }
    e.enumeration(
        spec(&["bootMode"]),
        s.boot_mode.as_str(),
        &["UEFI", "UEFISecureBoot", "legacy"],
    );
    if let Some(image) = &s.image {
        e.enumeration(
            spec(&["image", "checksumType"]),
            image.checksum_type.as_str(),
            &["md5", "sha256", "sha512", "auto"],
        );
        e.enumeration(
            spec(&["image", "format"]),
            &image.format,
            &["raw", "qcow2", "vdi", "vmdk", "live-iso"],
        );
    }
    e.enumeration(
        spec(&["inspectionMode"]),
        s.inspection_mode.as_str(),
        &["disabled", "agent", "fast"],
    );
    for (i, iface) in s.network_interfaces.iter().enumerate() {
        network_interface(&mut e, spec(&["networkInterfaces"]).index(i), iface);
    }
    if let Some(raid) = &s.raid {
        raid_volumes(&mut e, raid);
    }
    if let Some(h) = &s.root_device_hints {
        hints(&mut e, spec(&["rootDeviceHints"]), h);
    }
    for (i, taint) in s.taints.iter().enumerate() {
        for key in ["effect", "key"] {
            if taint.get(key).is_none() {
                e.push(spec(&["taints"]).index(i).key(key), "Required value");
            }
        }
    }
    e.list
}

fn network_interface(e: &mut Errors, field: FieldPath, iface: &NetworkInterface) {
    if !iface.name.is_empty() {
        let ok = iface
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        e.pattern(
            field.clone().key("name"),
            &iface.name,
            ok,
            "^[a-zA-Z0-9._-]+$",
        );
    }
    if !iface.mac_address.is_empty() {
        e.pattern(
            field.clone().key("macAddress"),
            &iface.mac_address,
            is_colon_mac(iface.mac_address.as_bytes()),
            MAC_PATTERN_ANCHORED,
        );
    }
    if let Some(port) = iface.extra.get("switchPort").filter(|v| v.is_object()) {
        for key in ["portID", "switchID"] {
            if port.get(key).is_none() {
                e.push(field.clone().key("switchPort").key(key), "Required value");
            }
        }
        if let Some(id) = port.get("switchID").and_then(Value::as_str) {
            e.pattern(
                field.clone().key("switchPort").key("switchID"),
                id,
                is_colon_mac(id.as_bytes()),
                MAC_PATTERN_ANCHORED,
            );
        }
    }
    if let Some(att) = iface.extra.get("hostNetworkAttachment") {
        for (key, max) in [("name", 253), ("namespace", 63)] {
            if let Some(v) = att.get(key).and_then(Value::as_str) {
                e.max_length(field.clone().key("hostNetworkAttachment").key(key), v, max);
            }
        }
    }
}

fn raid_volumes(e: &mut Errors, raid: &RaidConfig) {
    for (i, v) in raid.hardware_raid_volumes.iter().flatten().enumerate() {
        let field = spec(&["raid", "hardwareRAIDVolumes"]).index(i);
        e.enumeration(
            field.clone().key("level"),
            &v.level,
            &["0", "1", "2", "5", "6", "1+0", "5+0", "6+0"],
        );
        e.max_length(field.clone().key("name"), &v.name, 64);
        e.minimum(
            field.clone().key("numberOfPhysicalDisks"),
            v.number_of_physical_disks,
            1,
        );
        e.minimum(field.key("sizeGibibytes"), v.size_gibibytes, 0);
    }
    let Some(sw) = &raid.software_raid_volumes else {
        return;
    };
    if sw.len() > 2 {
        e.push(
            spec(&["raid", "softwareRAIDVolumes"]),
            format!("Too many: {}: must have at most 2 items", sw.len()),
        );
    }
    for (i, v) in sw.iter().enumerate() {
        let field = spec(&["raid", "softwareRAIDVolumes"]).index(i);
        e.enumeration(field.clone().key("level"), &v.level, &["0", "1", "1+0"]);
        if !v.physical_disks.is_empty() && v.physical_disks.len() < 2 {
            let f = field.clone().key("physicalDisks");
            let text = f.to_string();
            e.push(
                f,
                format!(
                    "Invalid value: {}: {text} in body should have at least 2 items",
                    v.physical_disks.len()
                ),
            );
        }
        for (j, h) in v.physical_disks.iter().enumerate() {
            hints(e, field.clone().key("physicalDisks").index(j), h);
        }
        e.minimum(field.key("sizeGibibytes"), v.size_gibibytes, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(spec: &str) -> BareMetalHost {
        let v: Value = serde_saphyr::from_str(&format!(
            "metadata: {{name: h}}\nspec:\n  online: true\n{spec}"
        ))
        .unwrap();
        serde_json::from_value(v).unwrap()
    }

    fn texts(h: &BareMetalHost) -> Vec<String> {
        schema_errors(h)
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect()
    }

    #[test]
    fn valid_hosts_pass() {
        let h = host(
            "  bootMode: UEFISecureBoot\n  automatedCleaningMode: disabled\n  inspectionMode: fast\n  bootMACAddress: \"prefix 00:11:22:33:44:55\"\n  image: {url: x, checksumType: sha256, format: qcow2}\n  rootDeviceHints: {minSizeGigabytes: 0}\n  networkInterfaces: [{name: eth0.1, switchPort: {portID: p, switchID: \"00:11:22:33:44:55\"}}, {macAddress: \"AA:bb:cc:dd:ee:ff\"}]\n  raid: {hardwareRAIDVolumes: [{level: \"1+0\", name: v, numberOfPhysicalDisks: 1, sizeGibibytes: 0}]}\n  taints: [{key: k, effect: NoSchedule}]\n",
        );
        assert_eq!(texts(&h), Vec::<String>::new());
    }

    #[test]
    fn each_constraint_has_the_api_servers_message() {
        let h = host(
            "  bootMode: uefi\n  automatedCleaningMode: always\n  inspectionMode: slow\n  bootMACAddress: \"00-11-22-33-44-55\"\n  image: {url: x, checksumType: SHA1, format: iso}\n  rootDeviceHints: {minSizeGigabytes: -1}\n  networkInterfaces: [{name: \"eth 0\", hostNetworkAttachment: {namespace: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}}, {macAddress: \"00:11:22:33:44:5\", switchPort: {switchID: x}}]\n  raid:\n    hardwareRAIDVolumes: [{level: \"3\", name: \"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\", numberOfPhysicalDisks: 0, sizeGibibytes: -2}]\n    softwareRAIDVolumes: [{level: \"5\", physicalDisks: [{minSizeGigabytes: -3}]}, {level: \"1\"}, {level: \"0\"}]\n  taints: [{key: k}]\n",
        );
        assert_eq!(
            texts(&h),
            [
                "spec.automatedCleaningMode: Unsupported value: \"always\": supported values: \"metadata\", \"disabled\"",
                "spec.bootMACAddress: Invalid value: \"00-11-22-33-44-55\": spec.bootMACAddress in body should match '[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}'",
                "spec.bootMode: Unsupported value: \"uefi\": supported values: \"UEFI\", \"UEFISecureBoot\", \"legacy\"",
                "spec.image.checksumType: Unsupported value: \"SHA1\": supported values: \"md5\", \"sha256\", \"sha512\", \"auto\"",
                "spec.image.format: Unsupported value: \"iso\": supported values: \"raw\", \"qcow2\", \"vdi\", \"vmdk\", \"live-iso\"",
                "spec.inspectionMode: Unsupported value: \"slow\": supported values: \"disabled\", \"agent\", \"fast\"",
                "spec.networkInterfaces[0].name: Invalid value: \"eth 0\": spec.networkInterfaces[0].name in body should match '^[a-zA-Z0-9._-]+$'",
                "spec.networkInterfaces[0].hostNetworkAttachment.namespace: Too long: may not be more than 63 bytes",
                "spec.networkInterfaces[1].macAddress: Invalid value: \"00:11:22:33:44:5\": spec.networkInterfaces[1].macAddress in body should match '^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$'",
                "spec.networkInterfaces[1].switchPort.portID: Required value",
                "spec.networkInterfaces[1].switchPort.switchID: Invalid value: \"x\": spec.networkInterfaces[1].switchPort.switchID in body should match '^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$'",
                "spec.raid.hardwareRAIDVolumes[0].level: Unsupported value: \"3\": supported values: \"0\", \"1\", \"2\", \"5\", \"6\", \"1+0\", \"5+0\", \"6+0\"",
                "spec.raid.hardwareRAIDVolumes[0].name: Too long: may not be more than 64 bytes",
                "spec.raid.hardwareRAIDVolumes[0].numberOfPhysicalDisks: Invalid value: 0: spec.raid.hardwareRAIDVolumes[0].numberOfPhysicalDisks in body should be greater than or equal to 1",
                "spec.raid.hardwareRAIDVolumes[0].sizeGibibytes: Invalid value: -2: spec.raid.hardwareRAIDVolumes[0].sizeGibibytes in body should be greater than or equal to 0",
                "spec.raid.softwareRAIDVolumes: Too many: 3: must have at most 2 items",
                "spec.raid.softwareRAIDVolumes[0].level: Unsupported value: \"5\": supported values: \"0\", \"1\", \"1+0\"",
                "spec.raid.softwareRAIDVolumes[0].physicalDisks: Invalid value: 1: spec.raid.softwareRAIDVolumes[0].physicalDisks in body should have at least 2 items",
                "spec.raid.softwareRAIDVolumes[0].physicalDisks[0].minSizeGigabytes: Invalid value: -3: spec.raid.softwareRAIDVolumes[0].physicalDisks[0].minSizeGigabytes in body should be greater than or equal to 0",
                "spec.rootDeviceHints.minSizeGigabytes: Invalid value: -1: spec.rootDeviceHints.minSizeGigabytes in body should be greater than or equal to 0",
                "spec.taints[0].effect: Required value",
            ]
        );
    }
}
