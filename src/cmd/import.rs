//! `bmhctl import`: BareMetalHosts and BMC Secrets for Ironic's nodes or a bifrost inventory.

use super::output;
use crate::error::{Error, Result};
use crate::selector::Selector;
use clap::{ArgGroup, Args};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a Secret holds where the real password is unknown (or kept off standard output).
pub use crate::objects::PASSWORD_PLACEHOLDER as PLACEHOLDER;

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("source").required(true).args(["from_ironic", "from_bifrost"])))]
pub struct ImportArgs {
    /// Read the nodes of the Ironic the environment (or the context) names: IRONIC_ENDPOINT,
    /// its credentials and CA, listed by the ironic provisioner plugin.
    #[arg(long)]
    pub from_ironic: bool,
    /// Read a bifrost inventory (JSON or YAML: node name -> uuid, driver, driver_info, nics).
    #[arg(long, value_name = "FILE")]
    pub from_bifrost: Option<PathBuf>,
    /// Only nodes whose generated labels match (kubectl syntax), e.g.
    /// `ironic.driver=redfish,ironic.state=active`.
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// The namespace of the hosts (a node named `NAMESPACE~NAME`, as BMO names its nodes,
    /// keeps its own).
    #[arg(short = 'n', long = "namespace", value_name = "NAMESPACE", default_value = bmh_api::DEFAULT_NAMESPACE)]
    pub namespace: String,
    /// Write the documents into FILE (created, mode 0600; refused when it exists) instead of
    /// standard output. Only a file gets a real password; standard output gets placeholders.
    #[arg(long = "output-file", value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Only these nodes (name or UUID).
    #[arg(value_name = "NODE")]
    pub nodes: Vec<String>,
}

/// One machine as read from Ironic or bifrost, `node.name` its host's name.
#[derive(Debug, Default)]
struct Machine {
    /// Where it came from, for messages: `node <uuid>` or `FILE: <name>`.
    origin: String,
    namespace: String,
    node: bmhctl_plugin_sdk::KnownMachine,
}

impl std::ops::Deref for Machine {
    type Target = bmhctl_plugin_sdk::KnownMachine;
    fn deref(&self) -> &Self::Target {
        &self.node
    }
}

pub fn import(
    args: ImportArgs,
    input: crate::persist::InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    let selector = args
        .selector
        .as_deref()
        .map(Selector::parse)
        .transpose()
        .map_err(|e| Error::Usage(e.to_string()))?;
    let machines = match &args.from_bifrost {
        Some(file) => read_bifrost(file, &args.namespace)?,
        None => read_ironic(&args.namespace, input, provisioners)?,
    };
    // A node named that does not exist is a mistake; one `-l` leaves out is not.
    for n in &args.nodes {
        if !machines.iter().any(|m| m.name == *n || m.uuid == *n) {
            return Err(Error::Usage(format!("no node {n:?} to import")));
        }
    }
    let to_file = args.output_file.is_some();
    let mut docs = Vec::new();
    let mut notes = Vec::new();
    for m in &machines {
        if !args.nodes.is_empty() && !args.nodes.iter().any(|n| *n == m.name || *n == m.uuid) {
            continue;
        }
        let labels = labels(m, args.from_bifrost.is_some());
        if selector.as_ref().is_some_and(|s| !s.matches(&labels)) {
            continue;
        }
        match documents(m, labels, to_file, &mut notes) {
            Ok(mut d) => docs.append(&mut d),
            Err(why) => notes.push(format!("{}: skipped: {why}", m.origin)),
        }
    }
    for n in &notes {
        crate::eprintln_quiet!("{n}");
    }
    if docs.is_empty() {
        crate::eprintln_quiet!("No nodes to import.");
        return Ok(());
    }
    let mut text = String::new();
    for d in &docs {
        text.push_str("---\n");
        text.push_str(
            &serde_saphyr::to_string(d).map_err(|e| Error::internal("cannot encode YAML", e))?,
        );
    }
    match &args.output_file {
        None => output::write_stdout(&text),
        Some(path) => write_new(path, &text),
    }
}

/// Creates `path` readable by its owner only; an existing file is refused.
fn write_new(path: &Path, text: &str) -> Result<()> {
    use std::io::Write as _;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            Error::Usage(format!(
                "{}: exists: import writes a new file (remove it, or pick another name)",
                path.display()
            ))
        } else {
            Error::io(path, e)
        }
    })?;
    f.write_all(text.as_bytes()).map_err(|e| Error::io(path, e))
}

fn labels(m: &Machine, bifrost: bool) -> BTreeMap<String, String> {
    let state = Some(m.provision_state.replace(' ', "-")).filter(|_| !bifrost);
    let rc = m.properties.get("resource_class").and_then(Value::as_str);
    let mut l = BTreeMap::from([("ironic.driver".to_string(), m.driver.clone())]);
    for (k, v) in [
        ("ironic.state", state),
        ("ironic.resource-class", rc.map(Into::into)),
    ] {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            l.insert(k.to_string(), v);
        }
    }
    l
}

fn documents(
    m: &Machine,
    labels: BTreeMap<String, String>,
    to_file: bool,
    notes: &mut Vec<String>,
) -> std::result::Result<Vec<Value>, String> {
    let (address, user_key, pass_key) = bmc_address(m)?;
    let secret_name = format!("{}-bmc-secret", m.name);
    let secret = bmc_secret(m, &secret_name, user_key, pass_key, to_file, notes);

    let mut bmc = json!({"address": address, "credentialsName": secret_name});
    let verify_ca_off = match m.driver_info.get("redfish_verify_ca") {
        Some(Value::Bool(b)) => !b,
        Some(Value::String(s)) => matches!(s.to_ascii_lowercase().as_str(), "false" | "no" | "0"),
        _ => false,
    };
    if verify_ca_off {
        bmc["disableCertificateVerification"] = true.into();
    }
    let online = m.power_on.unwrap_or(false);
    let mut spec = json!({"online": online, "bmc": bmc});
    if let Some(mac) = m.boot_mac.as_ref().or(m.macs.first()) {
        spec["bootMACAddress"] = mac.clone().into();
    }
    let boot_mode = boot_mode(m);
    if let Some(b) = boot_mode {
        spec["bootMode"] = b.into();
    }
    if m.automated_clean == Some(false) {
        spec["automatedCleaningMode"] = "disabled".into();
    }
    let status = imported_status(m, boot_mode, online, &mut spec)?;
    let mut host = json!({
        "apiVersion": "metal3.io/v1alpha1",
        "kind": "BareMetalHost",
        "metadata": {"name": m.name, "namespace": m.namespace, "labels": labels},
        "spec": spec,
    });
    if let Some(s) = status {
        host["status"] = s;
    }
    Ok(vec![secret, host])
}

/// The Secret of the node's BMC credentials; a placeholder password is said in `notes`.
fn bmc_secret(
    m: &Machine,
    secret_name: &str,
    user_key: Option<&str>,
    pass_key: Option<&str>,
    to_file: bool,
    notes: &mut Vec<String>,
) -> Value {
    let info = |k: Option<&str>| k.and_then(|k| m.driver_info.get(k)?.as_str()).unwrap_or("");
    let password = info(pass_key);
    let password = if pass_key.is_none() {
        // fake-hardware needs no credentials, but BMO wants a Secret all the same.
        "unused".to_string()
    } else if password.is_empty() || password.chars().all(|c| c == '*') {
        notes.push(format!(
            "{}: Ironic does not show the BMC password: Secret {}/{secret_name} holds {PLACEHOLDER}; put the password in before running",
            m.origin, m.namespace
        ));
        PLACEHOLDER.to_string()
    } else if to_file {
        password.to_string()
    } else {
        notes.push(format!(
            "{}: the BMC password is kept off standard output: Secret {}/{secret_name} holds {PLACEHOLDER} (--output-file FILE writes it)",
            m.origin, m.namespace
        ));
        PLACEHOLDER.to_string()
    };
    let username = Some(info(user_key))
        .filter(|u| !u.is_empty())
        .unwrap_or("unused");
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": secret_name, "namespace": m.namespace},
        "type": "Opaque",
        "stringData": {"username": username, "password": password},
    })
}

/// The status BMO would have brought the node to; `None` for a node to enrol.
fn imported_status(
    m: &Machine,
    boot_mode: Option<&str>,
    online: bool,
    spec: &mut Value,
) -> std::result::Result<Option<Value>, String> {
    let mut prov = match m.provision_state.as_str() {
        // bifrost: machines to enrol.
        "" => return Ok(None),
        "active" => {
            let image = image(m)?;
            spec["image"] = image.clone();
            json!({"state": "provisioned", "ID": m.uuid, "image": image})
        }
        "available" => json!({"state": "available", "ID": m.uuid}),
        other => {
            return Err(format!(
                "provision state {other:?}: only active and available nodes are imported"
            ));
        }
    };
    if let Some(b) = boot_mode {
        prov["bootMode"] = b.into();
    }
    // BMO's `matchProfile` names the profile at registration: `unknown`, as none of the BMC
    // addresses made here is a libvirt one.
    Ok(Some(json!({
        "operationalStatus": "OK",
        "hardwareProfile": "unknown",
        "provisioning": prov,
        "poweredOn": online,
    })))
}

/// The BMC address BMO would have registered the node with, and the credential keys.
fn bmc_address(
    m: &Machine,
) -> std::result::Result<(String, Option<&'static str>, Option<&'static str>), String> {
    let info = |k: &str| {
        m.driver_info
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    match m.driver.as_str() {
        "fake-hardware" => Ok((format!("fake-hardware://{}", m.name), None, None)),
        "ipmi" => {
            let host =
                info("ipmi_address").ok_or("driver ipmi without driver_info.ipmi_address")?;
            let host = match host.contains(':') && !host.starts_with('[') {
                true => format!("[{host}]"),
                false => host.to_string(),
            };
            let port = m
                .driver_info
                .get("ipmi_port")
                .map(|p| match p {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .filter(|p| !p.is_empty() && p != "623");
            let address = match port {
                Some(p) => format!("ipmi://{host}:{p}"),
                None => format!("ipmi://{host}"),
            };
            Ok((address, Some("ipmi_username"), Some("ipmi_password")))
        }
        "redfish" | "idrac" => {
            let base = info("redfish_address").ok_or(format!(
                "driver {} without driver_info.redfish_address",
                m.driver
            ))?;
            let (transport, authority) = match base.split_once("://") {
                Some((s, rest)) => (s, rest.trim_end_matches('/')),
                None => ("https", base.trim_end_matches('/')),
            };
            let system = info("redfish_system_id").unwrap_or("");
            let kind = match (m.driver.as_str(), m.boot_interface.as_str()) {
                ("idrac", "idrac-redfish-virtual-media") => "idrac-virtualmedia",
                ("idrac", _) => "idrac-redfish",
                (_, "redfish-virtual-media") => "redfish-virtualmedia",
                (_, "redfish-https") => "redfish-uefihttp",
                _ => "redfish",
            };
            Ok((
                format!("{kind}+{transport}://{authority}{system}"),
                Some("redfish_username"),
                Some("redfish_password"),
            ))
        }
        other => Err(format!(
            "driver {other:?}: no BMC address can be made for it (fake-hardware, ipmi, redfish and idrac are)"
        )),
    }
}

/// `UEFI` or `legacy` from the node's `boot_mode` capability.
fn boot_mode(m: &Machine) -> Option<&'static str> {
    let caps = m.properties.get("capabilities").and_then(Value::as_str)?;
    caps.split(',')
        .filter_map(|c| c.split_once(':'))
        .find(|(k, _)| k.trim() == "boot_mode")
        .and_then(|(_, v)| match v.trim() {
            "uefi" => Some("UEFI"),
            "bios" => Some("legacy"),
            _ => None,
        })
}

/// The deployed image, the reverse of BMO's `instance_info`.
fn image(m: &Machine) -> std::result::Result<Value, String> {
    let get = |k: &str| {
        m.instance_info
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let url = get("image_source").ok_or("active without instance_info.image_source")?;
    let mut image = json!({"url": url});
    if let (Some(algo), Some(sum)) = (get("image_os_hash_algo"), get("image_os_hash_value")) {
        image["checksum"] = sum.into();
        image["checksumType"] = algo.into();
    } else if let Some(sum) = get("image_checksum") {
        image["checksum"] = sum.into();
        if let Some(t) = get("image_checksum_type") {
            image["checksumType"] = t.into();
        }
    }
    if m.deploy_interface == "ramdisk" {
        image["format"] = "live-iso".into();
    } else if let Some(f) = get("image_disk_format") {
        image["format"] = f.into();
    }
    Ok(image)
}

/// `NAMESPACE~NAME` (BMO's node names) split; a node without a name is named by its UUID.
fn host_name(node_name: Option<&str>, uuid: &str, namespace: &str) -> (String, String) {
    match node_name.filter(|n| !n.is_empty()) {
        Some(n) => match n.split_once('~') {
            Some((ns, name)) => (ns.to_string(), name.to_string()),
            None => (namespace.to_string(), n.to_string()),
        },
        None => (namespace.to_string(), uuid.to_string()),
    }
}

/// A bifrost inventory: node names to `{uuid, driver, driver_info, nics, ...}`, JSON or YAML.
fn read_bifrost(path: &Path, namespace: &str) -> Result<Vec<Machine>> {
    use crate::diagnostic::{Diagnostic, Position};
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let bad = |msg: String, at: Option<(usize, usize)>| {
        let pos = match at {
            Some((l, c)) => Position::new(path, l, c),
            None => Position::file(path),
        };
        Error::invalid(Diagnostic::new(msg).at(pos))
    };
    let doc: Value = serde_saphyr::from_str(&text).map_err(|e| {
        let d = Diagnostic::of_yaml(path, &e);
        let message = format!("not a bifrost inventory: {}", d.message);
        Error::invalid(Diagnostic { message, ..d })
    })?;
    let Value::Object(nodes) = doc else {
        return Err(bad(
            "a bifrost inventory is a mapping of node names to nodes".into(),
            None,
        ));
    };
    let line_of = |name: &str| {
        text.lines()
            .position(|l| l.contains(&format!("\"{name}\"")) || l.starts_with(&format!("{name}:")))
            .map(|n| (n + 1, 1))
    };
    let mut out = Vec::new();
    for (key, node) in nodes {
        let bad_node = |what: &str| bad(format!("node {key}: {what}"), line_of(&key));
        let Value::Object(node) = node else {
            return Err(bad_node("not a mapping"));
        };
        let str_of = |k: &str| node.get(k).and_then(Value::as_str).map(str::to_string);
        let mut driver_info = match node.get("driver_info") {
            Some(Value::Object(m)) => m.clone(),
            None => Map::new(),
            Some(_) => return Err(bad_node("driver_info: not a mapping")),
        };
        // Older inventories nest the BMC settings under driver_info.power.
        if let Some(Value::Object(power)) = driver_info.remove("power") {
            for (k, v) in power {
                driver_info.entry(k).or_insert(v);
            }
        }
        let driver = str_of("driver").ok_or_else(|| bad_node("field driver is missing"))?;
        let macs: Vec<String> = node
            .get("nics")
            .and_then(Value::as_array)
            .map(|nics| {
                nics.iter()
                    .filter_map(|n| n.get("mac").and_then(Value::as_str))
                    .map(str::to_ascii_lowercase)
                    .collect()
            })
            .unwrap_or_default();
        let uuid = str_of("uuid").unwrap_or_default();
        let name = str_of("name").unwrap_or_else(|| key.clone());
        let (ns, name) = host_name(Some(&name), &uuid, namespace);
        let obj = |k: &str| match node.get(k) {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        let node = bmhctl_plugin_sdk::KnownMachine {
            name,
            uuid,
            boot_interface: str_of("boot_interface").unwrap_or_default(),
            deploy_interface: str_of("deploy_interface").unwrap_or_default(),
            driver,
            driver_info,
            macs,
            instance_info: obj("instance_info"),
            properties: obj("properties"),
            ..Default::default()
        };
        let origin = format!("{}: {key}", path.display());
        out.push(Machine {
            origin,
            namespace: ns,
            node,
        });
    }
    Ok(out)
}

/// Every node of the Ironic, as the ironic provisioner plugin lists them.
fn read_ironic(
    namespace: &str,
    input: crate::persist::InputPolicy,
    settings: &crate::provisioners::Settings,
) -> Result<Vec<Machine>> {
    let name = "ironic";
    let provisioner =
        crate::provisioners::resolve(name, crate::provisioners::Asked::Nothing, input, settings)?;
    let listing = provisioner.factory.known_machines();
    let failed = |why: String| Error::io("import --from-ironic", std::io::Error::other(why));
    let known = listing
        .map_err(|e| failed(format!("cannot list the nodes of Ironic: {e}")))?
        .ok_or_else(|| {
            failed("the ironic plugin cannot list nodes (it is older than bmhctl)".into())
        })?;
    Ok(known
        .into_iter()
        .map(|mut node| {
            let name = Some(node.name.as_str()).filter(|n| !n.is_empty());
            let (namespace, host) = host_name(name, &node.uuid, namespace);
            let origin = format!("node {} ({})", node.uuid, node.name);
            node.name = host;
            Machine {
                origin,
                namespace,
                node,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(driver: &str, info: Value) -> Machine {
        let node = bmhctl_plugin_sdk::KnownMachine {
            name: "w0".into(),
            driver: driver.into(),
            driver_info: info.as_object().unwrap().clone(),
            ..Default::default()
        };
        let (origin, namespace) = ("node x".into(), "default".into());
        Machine {
            origin,
            namespace,
            node,
        }
    }

    #[test]
    fn driver_info_maps_back_to_bmo_addresses() {
        let m = machine(
            "redfish",
            json!({"redfish_address": "https://10.0.0.1:8000", "redfish_system_id": "/redfish/v1/Systems/1"}),
        );
        assert_eq!(
            bmc_address(&m).unwrap().0,
            "redfish+https://10.0.0.1:8000/redfish/v1/Systems/1"
        );
        let mut m = machine(
            "redfish",
            json!({"redfish_address": "http://h", "redfish_system_id": "/redfish/v1/Systems/a"}),
        );
        m.node.boot_interface = "redfish-virtual-media".into();
        assert_eq!(
            bmc_address(&m).unwrap().0,
            "redfish-virtualmedia+http://h/redfish/v1/Systems/a"
        );
        let m = machine(
            "ipmi",
            json!({"ipmi_address": "fd00::1", "ipmi_port": 6230}),
        );
        assert_eq!(bmc_address(&m).unwrap().0, "ipmi://[fd00::1]:6230");
        let m = machine(
            "ipmi",
            json!({"ipmi_address": "10.0.0.2", "ipmi_port": "623"}),
        );
        assert_eq!(bmc_address(&m).unwrap().0, "ipmi://10.0.0.2");
        assert!(
            bmc_address(&machine("ilo", json!({})))
                .unwrap_err()
                .contains("\"ilo\"")
        );
    }

    #[test]
    fn masked_passwords_become_placeholders_and_are_reported() {
        let mut m = machine(
            "ipmi",
            json!({"ipmi_address": "10.0.0.2", "ipmi_username": "root", "ipmi_password": "******"}),
        );
        m.node.provision_state = "available".into();
        let mut notes = Vec::new();
        let docs = documents(&m, BTreeMap::new(), true, &mut notes).unwrap();
        assert_eq!(docs[0]["stringData"]["password"], PLACEHOLDER);
        assert_eq!(docs[0]["stringData"]["username"], "root");
        assert!(
            notes[0].contains("does not show the BMC password"),
            "{notes:?}"
        );
    }

    #[test]
    fn real_passwords_go_only_into_files() {
        let m = machine(
            "ipmi",
            json!({"ipmi_address": "10.0.0.2", "ipmi_username": "root", "ipmi_password": "s3cret"}),
        );
        let mut notes = Vec::new();
        let docs = documents(&m, BTreeMap::new(), false, &mut notes).unwrap();
        assert_eq!(docs[0]["stringData"]["password"], PLACEHOLDER);
        assert!(!notes.concat().contains("s3cret"));
        let docs = documents(&m, BTreeMap::new(), true, &mut Vec::new()).unwrap();
        assert_eq!(docs[0]["stringData"]["password"], "s3cret");
    }

    #[test]
    fn namespaced_node_names_keep_their_namespace() {
        assert_eq!(
            host_name(Some("metal3~w0"), "u", "default"),
            ("metal3".to_string(), "w0".to_string())
        );
        assert_eq!(
            host_name(None, "1234", "lab"),
            ("lab".to_string(), "1234".to_string())
        );
    }
}
