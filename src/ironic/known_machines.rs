//! The nodes of this Ironic as machines to import (`bmhctl import --from-ironic`): every node
//! in detail, and every port's MAC, in two listings.

use crate::api::MAX_PAGE;
use crate::client::{IronicClient, IronicError};
use bmhctl_plugin_sdk::KnownMachine;
use serde_json::{Map, Value};

/// Every node, with the MACs of its ports (the one it boots from marked).
pub fn known_machines(client: &IronicClient) -> Result<Vec<KnownMachine>, IronicError> {
    let limit = MAX_PAGE.to_string();
    let nodes =
        client.list_all::<Value>("nodes", &[("detail", "true"), ("limit", &limit)], "nodes")?;
    let ports = client.list_all::<Value>(
        "ports",
        &[
            ("fields", "address,node_uuid,pxe_enabled"),
            ("limit", &limit),
        ],
        "ports",
    )?;
    Ok(nodes.iter().map(|node| machine(node, &ports)).collect())
}

fn machine(node: &Value, ports: &[Value]) -> KnownMachine {
    let s = |k: &str| {
        node.get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let obj = |k: &str| match node.get(k) {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    let uuid = s("uuid");
    let mine: Vec<&Value> = ports
        .iter()
        .filter(|p| p.get("node_uuid").and_then(Value::as_str) == Some(uuid.as_str()))
        .collect();
    let mac = |p: &&Value| {
        p.get("address")
            .and_then(Value::as_str)
            .map(str::to_ascii_lowercase)
    };
    let mut properties = obj("properties");
    if let Some(rc) = node.get("resource_class").cloned() {
        properties.insert("resource_class".into(), rc);
    }
    KnownMachine {
        name: s("name"),
        driver: s("driver"),
        boot_interface: s("boot_interface"),
        deploy_interface: s("deploy_interface"),
        driver_info: obj("driver_info"),
        boot_mac: mine
            .iter()
            .find(|p| p.get("pxe_enabled") == Some(&Value::Bool(true)))
            .and_then(mac),
        macs: mine.iter().filter_map(mac).collect(),
        provision_state: s("provision_state"),
        power_on: Some(s("power_state") == "power on"),
        instance_info: obj("instance_info"),
        properties,
        automated_clean: node.get("automated_clean").and_then(Value::as_bool),
        uuid,
    }
}
