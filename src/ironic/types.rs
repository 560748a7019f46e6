//! Minimal serde types for what BMO reads from Ironic (spec 2.7, 2.8). Every field defaults, and
//! `null` reads as the default, so partial (`fields=`) answers and older servers decode.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// An Ironic node, as far as BMO reads it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Node {
    #[serde(deserialize_with = "null_default")]
    pub uuid: String,
    pub name: Option<String>,
    #[serde(deserialize_with = "null_default")]
    pub driver: String,
    #[serde(deserialize_with = "null_default")]
    pub provision_state: String,
    pub target_provision_state: Option<String>,
    pub power_state: Option<String>,
    pub target_power_state: Option<String>,
    pub last_error: Option<String>,
    #[serde(deserialize_with = "null_default")]
    pub maintenance: bool,
    pub maintenance_reason: Option<String>,
    pub fault: Option<String>,
    pub reservation: Option<String>,
    pub instance_uuid: Option<String>,
    #[serde(deserialize_with = "null_default")]
    pub instance_info: Map<String, Value>,
    #[serde(deserialize_with = "null_default")]
    pub driver_info: Map<String, Value>,
    #[serde(deserialize_with = "null_default")]
    pub properties: Map<String, Value>,
    #[serde(deserialize_with = "null_default")]
    pub extra: Map<String, Value>,
    pub automated_clean: Option<bool>,
    /// Network data Ironic injects into the ramdisk (1.66).
    pub network_data: Value,
    #[serde(deserialize_with = "null_default")]
    pub disable_power_off: bool,
    pub health: Option<String>,
    /// Set by Ironic when an inspection finished (even a fake one that stored nothing).
    pub inspection_finished_at: Option<String>,
    /// Moved on every save of the node, a lock taken or freed included (never listed: Ironic
    /// refuses it in `fields`).
    pub updated_at: Option<String>,
    /// Moved on every provision state change (the node watch's catch-all).
    pub provision_updated_at: Option<String>,
    pub boot_interface: Option<String>,
    pub deploy_interface: Option<String>,
    pub inspect_interface: Option<String>,
    pub management_interface: Option<String>,
    pub power_interface: Option<String>,
    pub raid_interface: Option<String>,
    pub bios_interface: Option<String>,
    pub firmware_interface: Option<String>,
    pub vendor_interface: Option<String>,
    pub boot_mode: Option<String>,
    pub deploy_step: Value,
    pub clean_step: Value,
    pub service_step: Value,
}

impl Node {
    /// The name, or `""`.
    pub fn name_str(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }
    /// `target_provision_state`, or `""` (Ironic sends `null` when none is pending).
    pub fn target_provision_state_str(&self) -> &str {
        self.target_provision_state.as_deref().unwrap_or("")
    }
    pub fn last_error_str(&self) -> &str {
        self.last_error.as_deref().unwrap_or("")
    }
    pub fn fault_str(&self) -> &str {
        self.fault.as_deref().unwrap_or("")
    }
}

/// An Ironic port.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Port {
    #[serde(deserialize_with = "null_default")]
    pub uuid: String,
    #[serde(deserialize_with = "null_default")]
    pub node_uuid: String,
    #[serde(deserialize_with = "null_default")]
    pub address: String,
    pub pxe_enabled: Option<bool>,
    /// When Ironic created it (read by the port listing's pages).
    pub created_at: Option<String>,
}

/// A driver from `GET /v1/drivers`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Driver {
    #[serde(deserialize_with = "null_default")]
    pub name: String,
    #[serde(deserialize_with = "null_default")]
    pub hosts: Vec<String>,
    #[serde(rename = "type", deserialize_with = "null_default")]
    pub driver_type: String,
}

/// `GET /v1/nodes/{id}/inventory`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeInventory {
    pub inventory: Value,
    pub plugin_data: Value,
}

/// One result of `GET /v1/nodes/{id}/validate`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InterfaceValidation {
    pub result: Option<bool>,
    pub reason: Option<String>,
}

/// Body of `PUT /v1/nodes/{id}/states/provision` (spec 2.4); empty parts are omitted.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProvisionStateRequest {
    pub target: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub configdrive: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clean_steps: Vec<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deploy_steps: Vec<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub service_steps: Vec<Value>,
}

impl ProvisionStateRequest {
    pub fn new(target: impl Into<String>) -> Self {
        ProvisionStateRequest {
            target: target.into(),
            ..Default::default()
        }
    }
}

/// Provision states BMO looks at.
pub mod state {
    pub const ENROLL: &str = "enroll";
    pub const VERIFYING: &str = "verifying";
    pub const MANAGEABLE: &str = "manageable";
    pub const AVAILABLE: &str = "available";
    pub const ACTIVE: &str = "active";
    pub const DEPLOY_WAIT: &str = "wait call-back";
    pub const DEPLOYING: &str = "deploying";
    pub const DEPLOY_FAIL: &str = "deploy failed";
    pub const DELETING: &str = "deleting";
    pub const CLEANING: &str = "cleaning";
    pub const CLEAN_WAIT: &str = "clean wait";
    pub const CLEAN_FAIL: &str = "clean failed";
    pub const ERROR: &str = "error";
    pub const INSPECTING: &str = "inspecting";
    pub const INSPECT_WAIT: &str = "inspect wait";
    pub const INSPECT_FAIL: &str = "inspect failed";
    pub const ADOPTING: &str = "adopting";
    pub const ADOPT_FAIL: &str = "adopt failed";
    pub const SERVICING: &str = "servicing";
    pub const SERVICE_WAIT: &str = "service wait";
    pub const SERVICE_FAIL: &str = "service failed";
    pub const POWER_ON: &str = "power on";
    pub const POWER_OFF: &str = "power off";
    pub const SOFT_POWER_OFF: &str = "soft power off";
    pub const REBOOT: &str = "rebooting";
    pub const SOFT_REBOOT: &str = "soft rebooting";
}

/// One RFC 6902 operation of a node PATCH.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum PatchOp {
    Add { path: String, value: Value },
    Replace { path: String, value: Value },
    Remove { path: String },
}

/// Where a patched value lives on the node (spec 2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// A top-level field (`/<field>`).
    Top,
    Properties,
    InstanceInfo,
    DriverInfo,
}

impl Section {
    fn pointer(self, key: &str) -> String {
        let key = key.replace('~', "~0").replace('/', "~1");
        match self {
            Section::Top => format!("/{key}"),
            Section::Properties => format!("/properties/{key}"),
            Section::InstanceInfo => format!("/instance_info/{key}"),
            Section::DriverInfo => format!("/driver_info/{key}"),
        }
    }
}

/// A builder of node PATCH bodies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodePatch {
    pub ops: Vec<PatchOp>,
}

impl NodePatch {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
    pub fn add(mut self, path: impl Into<String>, value: impl Into<Value>) -> Self {
        self.ops.push(PatchOp::Add {
            path: path.into(),
            value: value.into(),
        });
        self
    }
    pub fn remove(mut self, path: impl Into<String>) -> Self {
        self.ops.push(PatchOp::Remove { path: path.into() });
        self
    }

    /// BMO's compare-then-patch rule (spec 2.3): a desired value unlike the node's (or absent) →
    /// `add`, a desired `None` present → `remove`, else nothing (top-level fields are present).
    pub fn update(
        mut self,
        node: &Node,
        section: Section,
        key: &str,
        desired: Option<Value>,
    ) -> Self {
        let current: Option<Value> = match section {
            Section::Top => Some(
                serde_json::to_value(node)
                    .ok()
                    .and_then(|v| v.get(key).cloned())
                    .unwrap_or(Value::Null),
            ),
            Section::Properties => node.properties.get(key).cloned(),
            Section::InstanceInfo => node.instance_info.get(key).cloned(),
            Section::DriverInfo => node.driver_info.get(key).cloned(),
        };
        let path = section.pointer(key);
        match (desired, current) {
            (Some(Value::Null) | None, Some(_)) => self.ops.push(PatchOp::Remove { path }),
            (Some(Value::Null) | None, None) => {}
            (Some(d), Some(c)) if d == c => {}
            (Some(d), _) => self.ops.push(PatchOp::Add { path, value: d }),
        }
        self
    }

    /// [`NodePatch::update`] towards a present value.
    pub fn set(self, node: &Node, section: Section, key: &str, value: impl Into<Value>) -> Self {
        self.update(node, section, key, Some(value.into()))
    }

    pub fn to_json(&self) -> Value {
        serde_json::to_value(&self.ops).unwrap_or(Value::Array(vec![]))
    }
}

/// One entry of `GET /v1/conductors`: a conductor process and whether its heartbeat is recent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Conductor {
    pub hostname: String,
    pub alive: bool,
}
