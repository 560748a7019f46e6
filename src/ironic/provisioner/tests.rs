//! BMO's Ironic provisioner against a scriptable in-process fake Ironic, for the faults a real
//! Ironic can't be made to produce on demand: 409 storms, 5xx answers, requests that time out or
//! whose connection drops, nodes stuck in a wait state, failed states with `last_error`, faults
//! and maintenance. Also what a pass costs in requests.
//!
//! The fake keeps one node document (and its ports); every request is recorded. It applies
//! PATCHes, maintenance changes, node and port creation, and answers `validate`; provision-state
//! and power changes are only recorded (each test sets the states it needs). Faults are injected
//! per method and path.

use super::*;
use crate::client::IronicConfig;
use crate::tests::{DROP_CONNECTION, FakeServer, Seen, version_doc};
use bmh_api::{AutomatedCleaningMode, Image, InspectionMode, ProvisioningState, RebootMode};
use bmhctl_plugin_sdk::{
    AdoptOptions, BmcCredentials, DeprovisionOptions, DetachOptions, InspectOptions, InspectResult,
    PowerOffOptions, PowerOnOptions, ProvisionOptions, RegisterOptions, RegisterResult,
    StartingHost, StepOptions, StepResult, WaitOn, WaitingHost,
};
use serde_json::{Value, json};
use std::sync::Mutex;
use std::time::Instant;

mod capacity_delayed_reads;
mod capacity_release;
mod config_drive;
mod custom_deploy;
mod data_image;
mod event_subscription;
mod image_checksums;
mod leftover;
mod network_data;
mod node_deltas;
mod port_listing;
mod ports;
mod raid_clear;
mod servicing;
mod stale_lock;

const UUID: &str = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123";
const NAME: &str = "default~worker-0";
const MAC: &str = "52:54:00:12:34:56";
const BMC: &str = "ipmi://192.0.2.1:623";
const IMAGE_URL: &str = "http://images.example/os.qcow2";
const CHECKSUM: &str = "abc123";
const LAST_ERROR: &str = "Agent returned error for deploy step {'step': 'write_image'}: Image download failed: 404 Not Found";

// ------------------------------------------------------------------------------ the fake

/// An injected answer for requests of `method` (`*`: any) to `path` (below `/v1/`; a trailing
/// `*` matches a prefix), optionally only when the body contains `body_contains`.
#[derive(Debug, Clone)]
struct Fault {
    method: &'static str,
    path: String,
    body_contains: Option<String>,
    status: u16,
    message: String,
    /// Wait this long before answering (longer than the client's timeout: no answer).
    delay: Duration,
}

impl Fault {
    fn matches(&self, r: &Seen, path: &str) -> bool {
        let path = path.trim_start_matches("/v1/");
        let path_ok = match self.path.strip_suffix('*') {
            Some(prefix) => path.starts_with(prefix),
            None => path == self.path,
        };
        (self.method == "*" || self.method == r.method)
            && path_ok
            && self
                .body_contains
                .as_ref()
                .is_none_or(|b| r.body.contains(b.as_str()))
    }
}

struct State {
    max_version: &'static str,
    nodes: Vec<Value>,
    ports: Vec<Value>,
    faults: Vec<Fault>,
    validate: Value,
    /// Ironic's `[api]max_limit`: the largest page of a listing with `limit`.
    page_limit: usize,
    /// What `GET /v1/conductors` lists.
    conductors: Vec<Value>,
    /// The BMC event subscriptions the Redfish vendor passthru made.
    subscriptions: Vec<Value>,
}

struct FakeIronic {
    srv: FakeServer,
    state: Arc<Mutex<State>>,
}

fn error_body(message: &str) -> String {
    json!({"error_message": json!({"faultstring": message, "faultcode": "Server", "debuginfo": null}).to_string()})
        .to_string()
}

fn unescape_query(v: &str) -> String {
    v.replace("%3A", ":")
        .replace("%3a", ":")
        .replace("%2C", ",")
        .replace("%7E", "~")
}

fn query_value(query: &str, key: &str) -> Option<String> {
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| unescape_query(v))
    })
}

/// Apply a JSON-patch list (paths of one or two levels, as BMO sends them).
fn apply_patch(node: &mut Value, ops: &Value) {
    for op in ops.as_array().into_iter().flatten() {
        let path = op["path"].as_str().unwrap_or("");
        let parts: Vec<String> = path
            .trim_start_matches('/')
            .split('/')
            .map(|p| p.replace("~1", "/").replace("~0", "~"))
            .collect();
        let (last, parents) = parts.split_last().expect("a patch path");
        let mut target = &mut *node;
        for p in parents {
            if !target[p.as_str()].is_object() {
                target[p.as_str()] = json!({});
            }
            target = &mut target[p.as_str()];
        }
        let obj = target.as_object_mut().expect("an object");
        match op["op"].as_str() {
            Some("add" | "replace") => {
                obj.insert(last.clone(), op["value"].clone());
            }
            Some("remove") => {
                obj.remove(last);
            }
            other => panic!("unexpected patch op {other:?}"),
        }
    }
}

/// Merge `fields` (an object) over `target`, key by key.
fn merge(target: &mut Value, fields: Value) {
    for (k, v) in fields.as_object().expect("an object of fields") {
        target[k.as_str()] = v.clone();
    }
}

fn handle(st: &mut State, r: &Seen) -> (u16, String) {
    let (path, query) = r.target.split_once('?').unwrap_or((r.target.as_str(), ""));
    let not_found = |what: &str| (404, error_body(&format!("{what} could not be found.")));
    let body: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
    let rest = path.strip_prefix("/v1/").unwrap_or(path);
    let segs: Vec<&str> = rest.split('/').collect();
    match (r.method.as_str(), segs.as_slice()) {
        ("GET", [""]) => (200, version_doc(st.max_version)),
        ("GET", ["drivers"]) => (
            200,
            json!({"drivers": [{"name": "ipmi", "hosts": ["c1"], "type": "dynamic"}]}).to_string(),
        ),
        ("GET", ["conductors"]) => (200, json!({ "conductors": st.conductors }).to_string()),
        ("GET", ["nodes"]) => match query_value(query, "limit") {
            // Without `limit`, one page; with it, pages after `marker` and a `next` link.
            None => (200, json!({ "nodes": st.nodes }).to_string()),
            Some(limit) => {
                let limit: usize = limit.parse().unwrap_or(1000).min(st.page_limit);
                let start = query_value(query, "marker")
                    .and_then(|m| st.nodes.iter().position(|n| n["uuid"] == m.as_str()))
                    .map_or(0, |i| i + 1);
                let page: Vec<&Value> = st.nodes.iter().skip(start).take(limit).collect();
                let mut answer = json!({ "nodes": page });
                if start + limit < st.nodes.len() {
                    let marker = page.last().map(|n| n["uuid"].clone()).unwrap_or_default();
                    let fields = query_value(query, "fields").unwrap_or_default();
                    answer["next"] = json!(format!(
                        "http://ironic.invalid/v1/nodes?fields={fields}&limit={limit}&marker={}",
                        marker.as_str().unwrap_or("")
                    ));
                }
                (200, answer.to_string())
            }
        },
        // Newest save first, never-saved nodes first (as PostgreSQL sorts them), one page.
        ("GET", ["nodes", "detail"]) => {
            assert_eq!(
                query_value(query, "sort_key").as_deref(),
                Some("updated_at")
            );
            assert_eq!(query_value(query, "sort_dir").as_deref(), Some("desc"));
            let limit: usize = query_value(query, "limit").map_or(1000, |l| l.parse().unwrap());
            let mut nodes: Vec<&Value> = st.nodes.iter().collect();
            nodes.sort_by_key(|n| std::cmp::Reverse(n["updated_at"].as_str().map(String::from)));
            let nulls_first = |n: &&Value| !n["updated_at"].is_null();
            nodes.sort_by_key(nulls_first);
            nodes.truncate(limit.min(st.page_limit));
            (200, json!({ "nodes": nodes }).to_string())
        }
        ("POST", ["nodes"]) => {
            let mut node = json!({
                "uuid": if st.nodes.iter().any(|n| n["uuid"] == UUID) {
                    format!("00000000-0000-4000-8000-{:012}", st.nodes.len())
                } else {
                    UUID.to_string()
                },
                "provision_state": "enroll",
                "target_provision_state": null,
                "power_state": null,
                "maintenance": false,
                "last_error": null,
                "instance_info": {},
                "properties": {},
                "driver_info": {},
            });
            merge(&mut node, body);
            st.nodes.push(node.clone());
            (201, node.to_string())
        }
        ("POST", ["ports"]) => {
            let port = json!({
                "uuid": format!("p{}", st.ports.len()),
                "node_uuid": body["node_uuid"],
                "address": body["address"],
                "pxe_enabled": body["pxe_enabled"],
                "created_at": format!("2026-12-01T03:{:02}:00+00:00", st.ports.len()),
            });
            st.ports.push(port.clone());
            (201, port.to_string())
        }
        ("GET", ["ports"]) => {
            let address = query_value(query, "address");
            let node = query_value(query, "node_uuid");
            let mut ports: Vec<&Value> = st
                .ports
                .iter()
                .filter(|p| address.as_ref().is_none_or(|a| p["address"] == a.as_str()))
                .filter(|p| node.as_ref().is_none_or(|n| p["node_uuid"] == n.as_str()))
                .collect();
            // The port listing's pages: newest first, one page.
            if query_value(query, "sort_key").as_deref() == Some("created_at") {
                assert_eq!(query_value(query, "sort_dir").as_deref(), Some("desc"));
                ports
                    .sort_by_key(|p| std::cmp::Reverse(p["created_at"].as_str().map(String::from)));
                let limit: usize = query_value(query, "limit").map_or(1000, |l| l.parse().unwrap());
                ports.truncate(limit);
            }
            (200, json!({ "ports": ports }).to_string())
        }
        (method, ["nodes", ident, more @ ..]) => {
            let Some(i) = st
                .nodes
                .iter()
                .position(|n| n["uuid"] == *ident || n["name"] == *ident)
            else {
                return not_found(&format!("Node {ident}"));
            };
            let node = &mut st.nodes[i];
            match (method, more) {
                ("GET", []) => (200, node.to_string()),
                ("PATCH", []) => {
                    apply_patch(node, &body);
                    (200, node.to_string())
                }
                ("DELETE", []) => {
                    st.nodes.remove(i);
                    (204, String::new())
                }
                ("PUT", ["states", "provision" | "power"]) => (202, String::new()),
                ("PUT", ["states", "raid"]) => (204, String::new()),
                ("PUT", ["maintenance"]) => {
                    node["maintenance"] = json!(true);
                    node["maintenance_reason"] = body["reason"].clone();
                    (202, String::new())
                }
                ("DELETE", ["maintenance"]) => {
                    node["maintenance"] = json!(false);
                    node["maintenance_reason"] = Value::Null;
                    (202, String::new())
                }
                ("GET", ["validate"]) => (200, st.validate.to_string()),
                ("GET", ["inventory"]) => not_found("Inventory"),
                ("GET", ["bios"]) => (200, json!({"bios": []}).to_string()),
                ("GET", ["firmware"]) => (200, json!({"firmware": []}).to_string()),
                ("POST" | "DELETE", ["vendor_passthru"]) => event_subscription::passthru(
                    &mut st.subscriptions,
                    method,
                    query_value(query, "method").as_deref(),
                    &body,
                ),
                // The virtual CD, kept in the node under `_vmedia` (its image URL, or null).
                ("GET", ["vmedia"]) => {
                    let cd = node.get("_vmedia").cloned().unwrap_or(Value::Null);
                    let media = json!([
                        {"media_types": ["CD", "DVD"], "inserted": !cd.is_null(),
                         "image": cd.as_str().unwrap_or("")},
                        {"media_types": ["Floppy", "USBStick"], "inserted": false, "image": ""},
                    ]);
                    (200, media.to_string())
                }
                ("POST", ["vmedia"]) => {
                    node["_vmedia"] = body["image_url"].clone();
                    (204, String::new())
                }
                ("DELETE", ["vmedia"]) => {
                    node["_vmedia"] = Value::Null;
                    (204, String::new())
                }
                _ => (405, error_body("unexpected request")),
            }
        }
        _ => (404, error_body("unexpected request")),
    }
}

impl FakeIronic {
    /// A fake Ironic with API 1.95 and no nodes.
    fn start() -> FakeIronic {
        Self::with_version("1.95")
    }

    fn with_version(max_version: &'static str) -> FakeIronic {
        let state = Arc::new(Mutex::new(State {
            max_version,
            nodes: Vec::new(),
            ports: Vec::new(),
            faults: Vec::new(),
            validate: json!({"boot": {"result": true}, "deploy": {"result": true}, "power": {"result": true}}),
            page_limit: 1000,
            conductors: Vec::new(),
            subscriptions: Vec::new(),
        }));
        let st = state.clone();
        let srv = FakeServer::start(move |r| {
            let path = r.target.split('?').next().unwrap_or("").to_string();
            let fault = {
                let st = st.lock().unwrap();
                st.faults.iter().find(|f| f.matches(r, &path)).cloned()
            };
            if let Some(f) = fault {
                // sleep without holding the state: other requests go on
                std::thread::sleep(f.delay);
                return (f.status, error_body(&f.message));
            }
            handle(&mut st.lock().unwrap(), r)
        });
        FakeIronic { srv, state }
    }

    /// Set (or create) the node `UUID` with the fields of a node registered for the test host,
    /// merged with `fields`.
    fn node_in(&self, provision_state: &str, fields: Value) {
        let mut node = json!({
            "uuid": UUID,
            "name": NAME,
            "driver": "ipmi",
            "provision_state": provision_state,
            "target_provision_state": null,
            "power_state": "power on",
            "target_power_state": null,
            "last_error": null,
            "maintenance": false,
            "fault": null,
            "automated_clean": true,
            "disable_power_off": false,
            "boot_interface": "ipxe",
            "inspect_interface": "agent",
            "driver_info": {"ipmi_address": "192.0.2.1", "ipmi_port": "623", "ipmi_username": "admin", "ipmi_password": "******"},
            "properties": {"capabilities": "boot_mode:uefi"},
            "instance_info": {},
            "inspection_finished_at": "2026-11-29T10:00:00+00:00",
        });
        merge(&mut node, fields);
        let mut st = self.state.lock().unwrap();
        st.nodes.retain(|n| n["uuid"] != UUID);
        st.nodes.push(node);
        if !st.ports.iter().any(|p| p["address"] == MAC) {
            st.ports
                .push(json!({"uuid": "p-boot", "node_uuid": UUID, "address": MAC}));
        }
    }

    /// Change fields of the node `UUID`.
    fn set(&self, fields: Value) {
        let mut st = self.state.lock().unwrap();
        let node = st
            .nodes
            .iter_mut()
            .find(|n| n["uuid"] == UUID)
            .expect("the node exists");
        merge(node, fields);
    }

    fn node(&self) -> Value {
        let st = self.state.lock().unwrap();
        st.nodes
            .iter()
            .find(|n| n["uuid"] == UUID)
            .cloned()
            .expect("the node exists")
    }

    /// No nodes, no ports.
    fn forget_everything(&self) {
        let mut st = self.state.lock().unwrap();
        st.nodes.clear();
        st.ports.clear();
    }

    fn add_listed_node(&self, node: Value) {
        self.state.lock().unwrap().nodes.push(node);
    }

    fn fail(&self, method: &'static str, path: &str, status: u16, message: &str) {
        self.push_fault(Fault {
            method,
            path: path.to_string(),
            body_contains: None,
            status,
            message: message.to_string(),
            delay: Duration::ZERO,
        });
    }

    fn push_fault(&self, f: Fault) {
        self.state.lock().unwrap().faults.push(f);
    }

    fn clear_faults(&self) {
        self.state.lock().unwrap().faults.clear();
    }

    /// Everything received so far.
    fn seen(&self) -> Vec<Seen> {
        self.srv.seen()
    }

    /// A bookmark for [`FakeIronic::since`].
    fn mark(&self) -> usize {
        self.srv.seen().len()
    }

    /// `METHOD target` of each request since `mark`.
    fn since(&self, mark: usize) -> Vec<String> {
        self.srv.seen()[mark..]
            .iter()
            .map(|s| format!("{} {}", s.method, s.target))
            .collect()
    }

    /// Requests since `mark` that change something (anything but GET).
    fn changes_since(&self, mark: usize) -> Vec<String> {
        self.since(mark)
            .into_iter()
            .filter(|r| !r.starts_with("GET "))
            .collect()
    }

    /// Bodies of the provision-state changes since `mark`.
    fn provision_targets_since(&self, mark: usize) -> Vec<String> {
        self.bodies_since(mark, "PUT", &format!("/v1/nodes/{UUID}/states/provision"))
            .iter()
            .map(|b| b["target"].as_str().unwrap_or("").to_string())
            .collect()
    }

    fn bodies_since(&self, mark: usize, method: &str, target: &str) -> Vec<Value> {
        self.srv.seen()[mark..]
            .iter()
            .filter(|s| s.method == method && s.target == target)
            .map(|s| serde_json::from_str(&s.body).unwrap_or(Value::Null))
            .collect()
    }

    fn config(&self) -> IronicConfig {
        IronicConfig::new(&self.srv.base).unwrap()
    }

    /// What one process shares, with the default settings, already past the readiness probe.
    fn shared(&self) -> Arc<Shared> {
        self.shared_with(self.config(), ProvisionerConfig::default())
    }

    fn shared_with(&self, config: IronicConfig, prov: ProvisionerConfig) -> Arc<Shared> {
        let shared = Arc::new(Shared::new(IronicClient::new(config).unwrap(), prov));
        shared.ensure_ready().expect("the fake is ready");
        shared
    }
}

// -------------------------------------------------------------------------- test helpers

type Events = Arc<Mutex<Vec<Event>>>;

fn host_data(id: &str, known_ports: bool) -> HostData {
    HostData {
        key: ObjectKey::new("default", "worker-0"),
        uid: "6f3c2a5e-1d7b-4e0a-9c1f-2b8d4e6a7c90".into(),
        bmc_address: BMC.into(),
        bmc_credentials: BmcCredentials {
            username: "admin".into(),
            password: "password".into(),
        },
        boot_mac_address: MAC.into(),
        provisioner_id: id.into(),
        provisioner_state: known_ports.then(|| json!({"node": UUID, "ports": [MAC]})),
        ..Default::default()
    }
}

/// A provisioner of the registered test host (its ports known from the last pass).
fn prov(shared: &Arc<Shared>) -> IronicProvisioner {
    prov_for(shared, host_data(UUID, true)).0
}

fn prov_for(shared: &Arc<Shared>, host: HostData) -> (IronicProvisioner, Events) {
    let events: Events = Arc::default();
    let sink = events.clone();
    let p = IronicProvisioner::new(
        shared.clone(),
        host,
        Arc::new(move |e: Event| sink.lock().unwrap().push(e)),
    );
    (p, events)
}

fn image() -> Image {
    Image {
        url: IMAGE_URL.into(),
        checksum: CHECKSUM.into(),
        ..Default::default()
    }
}

fn provision_data(image: Image) -> ProvisionData {
    ProvisionData {
        image,
        ..Default::default()
    }
}

/// `continue(d)`/`retry(d)`: dirty, no error, `d` plus at most 25 % jitter.
#[track_caller]
fn assert_requeue(r: &OpResult, secs: u64) {
    let d = Duration::from_secs(secs);
    assert!(r.dirty, "not in progress: {r:?}");
    assert!(r.error_message.is_empty(), "failed: {r:?}");
    assert!(
        r.requeue_after >= d && r.requeue_after <= d + d / 4,
        "requeue after {:?}, want {d:?} + up to 25 %: {r:?}",
        r.requeue_after
    );
}

#[track_caller]
fn assert_failed(r: &OpResult, message: &str) {
    assert_eq!(r.error_message, message, "{r:?}");
    assert!(!r.dirty, "{r:?}");
}

#[track_caller]
fn assert_done(r: &OpResult) {
    assert_eq!(r, &OpResult::done());
}

#[track_caller]
fn assert_transient<T: std::fmt::Debug>(r: Result<T, ProvisionerError>, message: &str) {
    match r {
        Err(ProvisionerError::Other(m)) => assert_eq!(m, message),
        other => panic!("want a transient error {message:?}, got {other:?}"),
    }
}

#[track_caller]
fn transient_message<T: std::fmt::Debug>(r: Result<T, ProvisionerError>) -> String {
    match r {
        Err(ProvisionerError::Other(m)) => m,
        other => panic!("want a transient error, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------- 409 storms

/// Every change Ironic is asked for answers 409 (node locked by a conductor).
fn conflict_storm(fake: &FakeIronic) {
    let locked = format!(
        "Node {UUID} is locked by host c1, please retry after the current operation is completed."
    );
    for (method, path) in [
        ("POST", "nodes"),
        ("PATCH", "nodes/*"),
        ("PUT", "nodes/*"),
        ("DELETE", "nodes/*"),
    ] {
        fake.fail(method, path, 409, &locked);
    }
    fake.fail("GET", &format!("nodes/{UUID}/validate"), 409, &locked);
}

#[test]
fn a_conflict_storm_only_ever_retries_in_3s() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    conflict_storm(&fake);
    let reg = ManagementAccessData::default();

    // A new host: creating its node answers 409.
    let m = fake.mark();
    let (mut p, events) = prov_for(&shared, host_data("", false));
    let RegisterResult {
        result: r,
        provisioner_id: id,
    } = p.register(&reg, RegisterOptions::default()).unwrap();
    assert_requeue(&r, 3);
    assert_eq!(id, "");
    assert_eq!(fake.changes_since(m), ["POST /v1/nodes"]);
    assert!(events.lock().unwrap().is_empty(), "no Registered event");

    // Registration of an enrolled node: `manage` is refused.
    fake.node_in("enroll", json!({}));
    let m = fake.mark();
    let RegisterResult {
        result: r,
        provisioner_id: id,
    } = prov(&shared)
        .register(&reg, RegisterOptions::default())
        .unwrap();
    assert_requeue(&r, 3);
    assert_eq!(id, UUID);
    assert_eq!(fake.provision_targets_since(m), ["manage"]);
    assert_eq!(fake.changes_since(m).len(), 1);

    // Inspection: the node update is refused, then (once applied) the `inspect` request.
    fake.node_in("manageable", json!({"inspect_interface": null}));
    let m = fake.mark();
    let InspectResult {
        result: r,
        started,
        details,
    } = prov(&shared)
        .inspect_hardware(
            &InspectData::default(),
            InspectOptions {
                restart_on_failure: false,
                refresh: true,
                force_reboot: false,
            },
        )
        .unwrap();
    assert_requeue(&r, 3);
    assert!(!started && details.is_none());
    assert_eq!(fake.changes_since(m), [format!("PATCH /v1/nodes/{UUID}")]);
    fake.set(json!({"inspect_interface": "agent"}));
    let m = fake.mark();
    let InspectResult {
        result: r, started, ..
    } = prov(&shared)
        .inspect_hardware(
            &InspectData::default(),
            InspectOptions {
                restart_on_failure: false,
                refresh: true,
                force_reboot: false,
            },
        )
        .unwrap();
    assert_requeue(&r, 3);
    assert!(!started, "a refused inspection did not start");
    assert_eq!(fake.provision_targets_since(m), ["inspect"]);
    assert_eq!(fake.changes_since(m).len(), 1);

    // Provisioning an available node: instance settings, then validation, then `active`.
    fake.node_in("available", json!({}));
    let m = fake.mark();
    assert_requeue(
        &prov(&shared)
            .provision(&provision_data(image()), ProvisionOptions::default())
            .unwrap(),
        3,
    );
    let patch = fake.bodies_since(m, "PATCH", &format!("/v1/nodes/{UUID}"));
    assert_eq!(patch.len(), 1);
    assert_eq!(fake.changes_since(m).len(), 1);
    // what the PATCH wanted is now on the node (as if it had gone through)
    let mut node = fake.node();
    apply_patch(&mut node, &patch[0]);
    fake.node_in("available", node);
    let m = fake.mark();
    assert_requeue(
        &prov(&shared)
            .provision(&provision_data(image()), ProvisionOptions::default())
            .unwrap(),
        3,
    );
    assert_eq!(
        fake.since(m),
        [
            format!("GET /v1/nodes/{UUID}"),
            format!("GET /v1/nodes/{UUID}/validate")
        ],
        "the instance settings are unchanged: only validation, which is refused"
    );
    fake.state
        .lock()
        .unwrap()
        .faults
        .retain(|f| !f.path.ends_with("/validate"));
    let m = fake.mark();
    let (mut p, events) = prov_for(&shared, host_data(UUID, true));
    assert_requeue(
        &p.provision(&provision_data(image()), ProvisionOptions::default())
            .unwrap(),
        3,
    );
    assert_eq!(fake.provision_targets_since(m), ["active"]);
    assert_eq!(fake.changes_since(m).len(), 1);
    assert_eq!(events.lock().unwrap()[0].reason, "ProvisioningStarted");

    // Adoption, deprovisioning, power, deletion: one refused request each.
    fake.node_in("manageable", json!({}));
    let m = fake.mark();
    let adopt = AdoptData {
        state: ProvisioningState::Provisioned,
    };
    assert_requeue(
        &prov(&shared)
            .adopt(&adopt, AdoptOptions::default())
            .unwrap(),
        3,
    );
    assert_eq!(fake.provision_targets_since(m), ["adopt"]);

    fake.node_in("active", json!({}));
    let m = fake.mark();
    assert_requeue(
        &prov(&shared)
            .deprovision(DeprovisionOptions {
                restart_on_failure: false,
                automated_cleaning_mode: AutomatedCleaningMode::Metadata,
            })
            .unwrap(),
        3,
    );
    assert_eq!(fake.provision_targets_since(m), ["deleted"]);
    assert_eq!(fake.changes_since(m).len(), 1);

    fake.node_in("active", json!({"power_state": "power off"}));
    let m = fake.mark();
    assert_requeue(
        &prov(&shared).power_on(PowerOnOptions::default()).unwrap(),
        3,
    );
    fake.node_in("active", json!({"power_state": "power on"}));
    assert_requeue(
        &prov(&shared)
            .power_off(PowerOffOptions {
                mode: RebootMode::Hard,
                force: false,
                automated_cleaning_mode: AutomatedCleaningMode::Metadata,
            })
            .unwrap(),
        3,
    );
    assert_eq!(
        fake.changes_since(m),
        [
            format!("PUT /v1/nodes/{UUID}/states/power"),
            format!("PUT /v1/nodes/{UUID}/states/power")
        ]
    );

    let m = fake.mark();
    assert_requeue(&prov(&shared).delete().unwrap(), 3);
    assert_eq!(
        fake.changes_since(m),
        [format!("PUT /v1/nodes/{UUID}/maintenance")]
    );
    fake.set(json!({"maintenance": true}));
    let m = fake.mark();
    assert_requeue(&prov(&shared).delete().unwrap(), 3);
    assert_eq!(fake.changes_since(m), [format!("DELETE /v1/nodes/{UUID}")]);

    // Maintenance can't be cleared either: no state change is attempted behind it.
    fake.node_in("manageable", json!({"maintenance": true}));
    let m = fake.mark();
    assert_requeue(
        &prov(&shared)
            .provision(&provision_data(image()), ProvisionOptions::default())
            .unwrap(),
        3,
    );
    assert_eq!(
        fake.changes_since(m),
        [format!("DELETE /v1/nodes/{UUID}/maintenance")]
    );

    // Pass after pass: exactly one `provide` per pass, never an error, the node unchanged.
    fake.node_in("manageable", json!({}));
    let m = fake.mark();
    for _ in 0..5 {
        assert_requeue(
            &prov(&shared)
                .provision(&provision_data(image()), ProvisionOptions::default())
                .unwrap(),
            3,
        );
    }
    assert_eq!(fake.provision_targets_since(m), ["provide"; 5]);
    assert_eq!(fake.node()["provision_state"], "manageable");
    assert!(
        shared.ready.load(Ordering::Acquire),
        "409 is no transport error"
    );
}

// ------------------------------------------------------------------------------ 5xx answers

#[test]
fn server_errors_are_transient_errors_with_bmos_messages() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in("enroll", json!({}));
    let reg = ManagementAccessData::default();

    // GET of the node.
    fake.fail(
        "GET",
        &format!("nodes/{UUID}"),
        503,
        "The server is currently unavailable.",
    );
    let get_error = format!(
        "failed to find node by ID {UUID}: GET /v1/nodes/{UUID}: 503 Service Unavailable: The server is currently unavailable."
    );
    let m = fake.mark();
    assert_transient(prov(&shared).update_hardware_state(), &get_error);
    assert_eq!(
        fake.since(m),
        [format!("GET /v1/nodes/{UUID}")],
        "an HTTP error is not retried by the client"
    );
    assert_transient(
        prov(&shared).register(&reg, RegisterOptions::default()),
        &format!("failed to find existing host: {get_error}"),
    );
    assert_transient(
        prov(&shared).provision(&provision_data(image()), ProvisionOptions::default()),
        &get_error,
    );
    assert_transient(
        prov(&shared).deprovision(DeprovisionOptions {
            restart_on_failure: false,
            automated_cleaning_mode: AutomatedCleaningMode::Metadata,
        }),
        &get_error,
    );
    assert_transient(
        prov(&shared).power_on(PowerOnOptions::default()),
        &get_error,
    );
    assert!(!prov(&shared).has_power_failure());
    fake.clear_faults();

    // PUT of the provision state.
    fake.fail(
        "PUT",
        &format!("nodes/{UUID}/states/provision"),
        500,
        "boom",
    );
    assert_transient(
        prov(&shared).register(&reg, RegisterOptions::default()),
        &format!(
            "failed to change provisioning state to \"manage\": PUT /v1/nodes/{UUID}/states/provision: 500 Internal Server Error: boom"
        ),
    );
    fake.node_in("manageable", json!({}));
    assert_transient(
        prov(&shared).provision(&provision_data(image()), ProvisionOptions::default()),
        &format!(
            "failed to change provisioning state to \"provide\": PUT /v1/nodes/{UUID}/states/provision: 500 Internal Server Error: boom"
        ),
    );
    fake.clear_faults();

    // The other calls, each with its own wrapping.
    type Call = Box<dyn Fn(&Arc<Shared>) -> String>;
    let cases: Vec<(&str, &'static str, String, Call, String)> = vec![
        (
            "manageable",
            "PATCH",
            format!("nodes/{UUID}"),
            Box::new(|s| transient_message(prov(s).register(&ManagementAccessData::default(), RegisterOptions { credentials_changed: true, restart_on_failure: false }))),
            format!("failed to update host settings in ironic: PATCH /v1/nodes/{UUID}: 500 Internal Server Error: boom"),
        ),
        (
            "available",
            "GET",
            format!("nodes/{UUID}/validate"),
            Box::new(|s| {
                let mut p = prov(s);
                transient_message(p.provision(&provision_data(Image { url: "http://images.example/other.qcow2".into(), ..image() }), ProvisionOptions::default()))
            }),
            format!("failed to validate host during registration: GET /v1/nodes/{UUID}/validate: 500 Internal Server Error: boom"),
        ),
        (
            "manageable",
            "GET",
            format!("nodes/{UUID}/inventory"),
            Box::new(|s| transient_message(prov(s).inspect_hardware(&InspectData::default(), InspectOptions::default()))),
            format!("failed to retrieve hardware introspection data: GET /v1/nodes/{UUID}/inventory: 500 Internal Server Error: boom"),
        ),
        (
            "manageable",
            "PUT",
            format!("nodes/{UUID}/states/power"),
            Box::new(|s| transient_message(prov(s).power_off(PowerOffOptions { mode: RebootMode::Hard, force: false, automated_cleaning_mode: AutomatedCleaningMode::Metadata }))),
            format!("failed to power off node: PUT /v1/nodes/{UUID}/states/power: 500 Internal Server Error: boom"),
        ),
        (
            "manageable",
            "DELETE",
            format!("nodes/{UUID}"),
            Box::new(|s| transient_message(prov(s).delete())),
            format!("failed to remove host: DELETE /v1/nodes/{UUID}: 500 Internal Server Error: boom"),
        ),
        (
            "manageable",
            "GET",
            "nodes".to_string(),
            Box::new(|s| transient_message(prov(s).has_capacity())),
            "failed to list nodes: GET /v1/nodes?fields=uuid%2Cname%2Cprovision_state%2Cboot_interface: 500 Internal Server Error: boom".to_string(),
        ),
    ];
    for (state, method, path, call, want) in cases {
        // in maintenance for the delete case only
        fake.node_in(
            state,
            json!({"maintenance": method == "DELETE", "power_state": "power on"}),
        );
        fake.clear_faults();
        fake.fail(method, &path, 500, "boom");
        assert_eq!(call(&shared), want, "{method} {path}");
    }
    fake.clear_faults();

    // Clearing maintenance.
    fake.node_in("manageable", json!({"maintenance": true}));
    fake.fail("DELETE", &format!("nodes/{UUID}/maintenance"), 500, "boom");
    assert_transient(
        prov(&shared).provision(&provision_data(image()), ProvisionOptions::default()),
        &format!(
            "failed to set host maintenance flag to false (DELETE /v1/nodes/{UUID}/maintenance: 500 Internal Server Error: boom)"
        ),
    );
    fake.clear_faults();

    // Creating the node.
    fake.fail("POST", "nodes", 502, "<html>Bad Gateway</html>");
    let (mut p, _) = prov_for(&shared, host_data("", false));
    fake.forget_everything();
    assert_transient(
        p.register(&reg, RegisterOptions::default()),
        "failed to register host in ironic: POST /v1/nodes: 502 Bad Gateway: <html>Bad Gateway</html>",
    );
    assert!(
        shared.ready.load(Ordering::Acquire),
        "an HTTP answer keeps the readiness"
    );
}

// ---------------------------------------------------------------- timeouts, dropped connections

#[test]
fn a_request_timeout_is_a_transient_error_and_is_not_retried() {
    let fake = FakeIronic::start();
    let mut config = fake.config();
    config.timeout = Duration::from_millis(300);
    let shared = fake.shared_with(config, ProvisionerConfig::default());
    fake.node_in("enroll", json!({}));
    fake.push_fault(Fault {
        method: "GET",
        path: format!("nodes/{UUID}"),
        body_contains: None,
        status: 200,
        message: String::new(),
        delay: Duration::from_secs(3),
    });
    let m = fake.mark();
    let message = transient_message(prov(&shared).update_hardware_state());
    assert!(
        message.starts_with(&format!(
            "failed to find node by ID {UUID}: GET /v1/nodes/{UUID}: "
        )),
        "{message}"
    );
    assert!(message.contains("timed out"), "{message}");
    assert_eq!(
        fake.since(m),
        [format!("GET /v1/nodes/{UUID}")],
        "a timed-out request may still be running: never retried"
    );
    // A transport failure makes the next pass probe Ironic again.
    assert!(!shared.ready.load(Ordering::Acquire));
    fake.clear_faults();
    let factory = IronicFactory {
        shared: shared.clone(),
    };
    let m = fake.mark();
    let mut p = factory
        .new_provisioner(host_data(UUID, true), Arc::new(|_| {}))
        .unwrap();
    assert_eq!(fake.since(m), ["GET /v1/", "GET /v1/drivers"]);
    p.update_hardware_state().unwrap();

    // A PUT that gets no answer is not sent again either.
    fake.push_fault(Fault {
        method: "PUT",
        path: format!("nodes/{UUID}/states/provision"),
        body_contains: None,
        status: 202,
        message: String::new(),
        delay: Duration::from_secs(3),
    });
    let m = fake.mark();
    let message = transient_message(
        prov(&shared).register(&ManagementAccessData::default(), RegisterOptions::default()),
    );
    assert!(
        message.starts_with(&format!(
            "failed to change provisioning state to \"manage\": PUT /v1/nodes/{UUID}/states/provision: "
        )),
        "{message}"
    );
    assert_eq!(fake.provision_targets_since(m), ["manage"]);
}

#[test]
fn dropped_connections_are_retried_for_idempotent_requests_only() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in("enroll", json!({}));
    fake.fail("GET", &format!("nodes/{UUID}"), DROP_CONNECTION, "");
    let m = fake.mark();
    let message = transient_message(prov(&shared).update_hardware_state());
    assert!(
        message.starts_with(&format!(
            "failed to find node by ID {UUID}: GET /v1/nodes/{UUID}: "
        )),
        "{message}"
    );
    assert_eq!(fake.since(m), vec![format!("GET /v1/nodes/{UUID}"); 3]);
    fake.clear_faults();

    fake.forget_everything();
    fake.fail("POST", "nodes", DROP_CONNECTION, "");
    let (mut p, _) = prov_for(&shared, host_data("", false));
    let m = fake.mark();
    let message =
        transient_message(p.register(&ManagementAccessData::default(), RegisterOptions::default()));
    assert!(
        message.starts_with("failed to register host in ironic: POST /v1/nodes: "),
        "{message}"
    );
    // (the readiness probe runs again first: the GET above failed in transport)
    let posts = fake
        .since(m)
        .into_iter()
        .filter(|r| r.starts_with("POST"))
        .count();
    assert_eq!(posts, 1, "a POST is never sent twice: {:?}", fake.since(m));
    fake.clear_faults();

    // a provision-state PUT that may have reached Ironic is not resent either
    fake.node_in("enroll", json!({}));
    fake.fail(
        "PUT",
        &format!("nodes/{UUID}/states/provision"),
        DROP_CONNECTION,
        "",
    );
    let m = fake.mark();
    let _ = prov(&shared).register(&ManagementAccessData::default(), RegisterOptions::default());
    let puts = fake
        .since(m)
        .into_iter()
        .filter(|r| r.starts_with("PUT"))
        .count();
    assert_eq!(puts, 1, "a PUT is never sent twice: {:?}", fake.since(m));
}

// ----------------------------------------------------------------------- stuck wait states

#[test]
fn a_node_stuck_in_wait_call_back_is_polled_every_10s_and_aborted_only_when_forced() {
    for (version, forced_target) in [("1.95", "deleted"), ("1.110", "abort")] {
        let fake = FakeIronic::with_version(version);
        let shared = fake.shared();
        fake.node_in(
            "wait call-back",
            json!({"target_provision_state": "active"}),
        );
        let m = fake.mark();
        assert_done(
            &prov(&shared)
                .register(&ManagementAccessData::default(), RegisterOptions::default())
                .unwrap()
                .result,
        );
        assert_requeue(
            &prov(&shared)
                .provision(&provision_data(image()), ProvisionOptions::default())
                .unwrap(),
            10,
        );
        assert_requeue(&prov(&shared).delete().unwrap(), 10);
        assert_requeue(&prov(&shared).detach(DetachOptions::default()).unwrap(), 10);
        // powered on already: nothing to do
        assert_done(&prov(&shared).power_on(PowerOnOptions::default()).unwrap());
        assert!(fake.changes_since(m).is_empty(), "{:?}", fake.since(m));

        // Forced: a new ramdisk needs the deployment restarted; a forced detach aborts it.
        let m = fake.mark();
        assert_requeue(
            &prov(&shared)
                .provision(
                    &provision_data(image()),
                    ProvisionOptions { force_reboot: true },
                )
                .unwrap(),
            3,
        );
        assert_eq!(fake.provision_targets_since(m), ["deleted"]);
        let m = fake.mark();
        assert_requeue(
            &prov(&shared).detach(DetachOptions { force: true }).unwrap(),
            3,
        );
        assert_eq!(
            fake.provision_targets_since(m),
            [forced_target],
            "{version}"
        );
    }
}

#[test]
fn a_node_stuck_in_clean_wait_is_polled_every_10s_and_aborted_only_when_forced() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in(
        "clean wait",
        json!({"target_provision_state": "available", "power_state": "power on"}),
    );
    let m = fake.mark();
    let StepResult { result: r, started } = prov(&shared)
        .prepare(
            &PrepareData::default(),
            StepOptions {
                unprepared: true,
                restart_on_failure: false,
            },
        )
        .unwrap();
    assert_requeue(&r, 10);
    assert!(!started);
    assert_requeue(
        &prov(&shared)
            .deprovision(DeprovisionOptions {
                restart_on_failure: false,
                automated_cleaning_mode: AutomatedCleaningMode::Metadata,
            })
            .unwrap(),
        10,
    );
    assert_requeue(
        &prov(&shared)
            .provision(&provision_data(image()), ProvisionOptions::default())
            .unwrap(),
        10,
    );
    assert_requeue(&prov(&shared).delete().unwrap(), 10);
    // automated cleaning is not aborted for a power change: wait for it
    assert_requeue(
        &prov(&shared)
            .power_off(PowerOffOptions {
                mode: RebootMode::Hard,
                force: false,
                automated_cleaning_mode: AutomatedCleaningMode::Metadata,
            })
            .unwrap(),
        10,
    );
    assert!(fake.changes_since(m).is_empty(), "{:?}", fake.since(m));

    // Forced detach, cleaning disabled, manual cleaning: abort.
    let m = fake.mark();
    assert_requeue(
        &prov(&shared).detach(DetachOptions { force: true }).unwrap(),
        3,
    );
    assert_requeue(
        &prov(&shared)
            .power_off(PowerOffOptions {
                mode: RebootMode::Hard,
                force: false,
                automated_cleaning_mode: AutomatedCleaningMode::Disabled,
            })
            .unwrap(),
        3,
    );
    fake.set(json!({"target_provision_state": "clean"}));
    assert_requeue(
        &prov(&shared)
            .power_off(PowerOffOptions {
                mode: RebootMode::Hard,
                force: false,
                automated_cleaning_mode: AutomatedCleaningMode::Metadata,
            })
            .unwrap(),
        3,
    );
    assert_eq!(fake.provision_targets_since(m), ["abort"; 3]);
    assert!(
        fake.bodies_since(m, "PUT", &format!("/v1/nodes/{UUID}/states/power"))
            .is_empty()
    );
}

#[test]
fn a_node_stuck_in_inspect_wait_is_polled_every_10s_and_aborted_only_when_forced() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in(
        "inspect wait",
        json!({"target_provision_state": "manageable"}),
    );
    let m = fake.mark();
    let InspectResult {
        result: r,
        started,
        details,
    } = prov(&shared)
        .inspect_hardware(&InspectData::default(), InspectOptions::default())
        .unwrap();
    assert_requeue(&r, 10);
    assert!(!started && details.is_none());
    // (fast inspection polls every 3 s)
    let fast = InspectData {
        inspection_mode: InspectionMode::Fast,
        ..Default::default()
    };
    assert_requeue(
        &prov(&shared)
            .inspect_hardware(&fast, InspectOptions::default())
            .unwrap()
            .result,
        3,
    );
    assert_requeue(&prov(&shared).delete().unwrap(), 10);
    assert_requeue(&prov(&shared).detach(DetachOptions::default()).unwrap(), 10);
    assert_done(
        &prov(&shared)
            .register(&ManagementAccessData::default(), RegisterOptions::default())
            .unwrap()
            .result,
    );
    assert!(fake.changes_since(m).is_empty(), "{:?}", fake.since(m));

    // A reboot into a new image, a forced detach, a power change: abort.
    let m = fake.mark();
    let InspectResult {
        result: r, started, ..
    } = prov(&shared)
        .inspect_hardware(
            &InspectData::default(),
            InspectOptions {
                restart_on_failure: false,
                refresh: false,
                force_reboot: true,
            },
        )
        .unwrap();
    assert_requeue(&r, 3);
    assert!(started);
    assert_requeue(
        &prov(&shared).detach(DetachOptions { force: true }).unwrap(),
        3,
    );
    assert_requeue(
        &prov(&shared)
            .power_off(PowerOffOptions {
                mode: RebootMode::Soft,
                force: false,
                automated_cleaning_mode: AutomatedCleaningMode::Metadata,
            })
            .unwrap(),
        3,
    );
    assert_eq!(fake.provision_targets_since(m), ["abort"; 3]);
}

// --------------------------------------------------------------- failed states, last_error

#[test]
fn deploy_failed_with_last_error_fails_with_the_image_and_the_error() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in(
        "deploy failed",
        json!({
            "last_error": LAST_ERROR,
            "instance_info": {"image_source": IMAGE_URL, "image_checksum": CHECKSUM},
        }),
    );
    let m = fake.mark();
    assert_failed(
        &prov(&shared)
            .provision(&provision_data(image()), ProvisionOptions::default())
            .unwrap(),
        &format!(
            "Image provisioning failed (url: {IMAGE_URL}, checksum: {CHECKSUM}): {LAST_ERROR}"
        ),
    );
    assert_eq!(fake.since(m), [format!("GET /v1/nodes/{UUID}")]);

    // A live ISO has no checksum to name.
    let iso = Image {
        url: "http://images.example/live.iso".into(),
        format: "live-iso".into(),
        ..Default::default()
    };
    fake.set(json!({"instance_info": {"boot_iso": "http://images.example/live.iso"}}));
    assert_failed(
        &prov(&shared)
            .provision(&provision_data(iso), ProvisionOptions::default())
            .unwrap(),
        &format!("Image provisioning failed (url: http://images.example/live.iso): {LAST_ERROR}"),
    );

    // Without last_error: try again at once.
    fake.set(json!({"last_error": null, "instance_info": {"image_source": IMAGE_URL, "image_checksum": CHECKSUM}}));
    let r = prov(&shared)
        .provision(&provision_data(image()), ProvisionOptions::default())
        .unwrap();
    assert!(r.dirty && r.requeue_after.is_zero() && r.error_message.is_empty());

    // Another image: set up and deploy again.
    fake.set(json!({"last_error": LAST_ERROR}));
    let other = Image {
        url: "http://images.example/other.qcow2".into(),
        ..image()
    };
    let m = fake.mark();
    assert_requeue(
        &prov(&shared)
            .provision(&provision_data(other), ProvisionOptions::default())
            .unwrap(),
        3,
    );
    assert_eq!(fake.provision_targets_since(m), ["active"]);
    assert_eq!(
        fake.node()["instance_info"]["image_source"],
        "http://images.example/other.qcow2"
    );

    // The deprovisioning that follows the failure.
    fake.node_in(
        "deploy failed",
        json!({"last_error": LAST_ERROR, "automated_clean": null}),
    );
    let m = fake.mark();
    let r = prov(&shared)
        .deprovision(DeprovisionOptions {
            restart_on_failure: true,
            automated_cleaning_mode: AutomatedCleaningMode::Metadata,
        })
        .unwrap();
    assert!(r.dirty && r.requeue_after.is_zero(), "{r:?}");
    assert_requeue(
        &prov(&shared)
            .deprovision(DeprovisionOptions {
                restart_on_failure: true,
                automated_cleaning_mode: AutomatedCleaningMode::Metadata,
            })
            .unwrap(),
        3,
    );
    assert_eq!(
        fake.changes_since(m),
        [
            format!("PATCH /v1/nodes/{UUID}"),
            format!("PUT /v1/nodes/{UUID}/states/provision")
        ]
    );
    assert_eq!(fake.provision_targets_since(m), ["deleted"]);
}

#[test]
fn failed_states_surface_last_error_and_restart_only_when_asked() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    let err = "Timeout reached while waiting for callback for node";

    // inspect failed
    fake.node_in("inspect failed", json!({"last_error": err}));
    let m = fake.mark();
    let InspectResult {
        result: r, started, ..
    } = prov(&shared)
        .inspect_hardware(&InspectData::default(), InspectOptions::default())
        .unwrap();
    assert_failed(&r, err);
    assert!(!started);
    fake.set(json!({"last_error": null}));
    let InspectResult { result: r, .. } = prov(&shared)
        .inspect_hardware(&InspectData::default(), InspectOptions::default())
        .unwrap();
    assert_failed(&r, "Inspection failed");
    assert!(fake.changes_since(m).is_empty());
    let InspectResult {
        result: r, started, ..
    } = prov(&shared)
        .inspect_hardware(
            &InspectData::default(),
            InspectOptions {
                restart_on_failure: true,
                refresh: false,
                force_reboot: false,
            },
        )
        .unwrap();
    assert_requeue(&r, 3);
    assert!(started);
    fake.set(json!({"last_error": "Inspection was aborted by request."}));
    let InspectResult {
        result: r, started, ..
    } = prov(&shared)
        .inspect_hardware(&InspectData::default(), InspectOptions::default())
        .unwrap();
    assert_requeue(&r, 3);
    assert!(started, "an aborted inspection starts over");
    assert_eq!(fake.provision_targets_since(m), ["inspect", "inspect"]);

    // clean failed
    fake.node_in(
        "clean failed",
        json!({"last_error": err, "maintenance": true}),
    );
    let m = fake.mark();
    let StepResult { result: r, .. } = prov(&shared)
        .prepare(
            &PrepareData::default(),
            StepOptions {
                unprepared: true,
                restart_on_failure: false,
            },
        )
        .unwrap();
    assert_failed(&r, err);
    assert_failed(
        &prov(&shared)
            .deprovision(DeprovisionOptions {
                restart_on_failure: false,
                automated_cleaning_mode: AutomatedCleaningMode::Metadata,
            })
            .unwrap(),
        &format!("Cleaning failed: {err}"),
    );
    assert!(fake.changes_since(m).is_empty());
    let StepResult { result: r, .. } = prov(&shared)
        .prepare(
            &PrepareData::default(),
            StepOptions {
                unprepared: true,
                restart_on_failure: true,
            },
        )
        .unwrap();
    assert!(r.dirty && r.requeue_after.is_zero(), "{r:?}");
    assert_eq!(
        fake.changes_since(m),
        [format!("DELETE /v1/nodes/{UUID}/maintenance")]
    );
    let StepResult { result: r, .. } = prov(&shared)
        .prepare(
            &PrepareData::default(),
            StepOptions {
                unprepared: true,
                restart_on_failure: true,
            },
        )
        .unwrap();
    assert_requeue(&r, 3);
    assert_eq!(fake.provision_targets_since(m), ["manage"]);

    // adopt failed
    fake.node_in("adopt failed", json!({"last_error": err}));
    let adopt = AdoptData {
        state: ProvisioningState::ExternallyProvisioned,
    };
    let m = fake.mark();
    assert_failed(
        &prov(&shared)
            .adopt(&adopt, AdoptOptions::default())
            .unwrap(),
        &format!("Host adoption failed: {err}"),
    );
    assert!(fake.changes_since(m).is_empty());
    assert_requeue(
        &prov(&shared)
            .adopt(
                &adopt,
                AdoptOptions {
                    restart_on_failure: true,
                },
            )
            .unwrap(),
        3,
    );
    assert_eq!(fake.provision_targets_since(m), ["adopt"]);

    // enroll with last_error: verification failed (bad credentials, unreachable BMC)
    let bad_creds = "Failed to get power state for node. Error: IPMI call failed: power status.";
    fake.node_in("enroll", json!({"last_error": bad_creds}));
    let reg = ManagementAccessData::default();
    let m = fake.mark();
    let RegisterResult {
        result: r,
        provisioner_id: id,
    } = prov(&shared)
        .register(&reg, RegisterOptions::default())
        .unwrap();
    assert_failed(&r, bad_creds);
    assert_eq!(id, UUID);
    assert!(fake.changes_since(m).is_empty());
    let RegisterResult { result: r, .. } = prov(&shared)
        .register(
            &reg,
            RegisterOptions {
                credentials_changed: false,
                restart_on_failure: true,
            },
        )
        .unwrap();
    assert_requeue(&r, 3);
    let RegisterResult { result: r, .. } = prov(&shared)
        .register(
            &reg,
            RegisterOptions {
                credentials_changed: true,
                restart_on_failure: false,
            },
        )
        .unwrap();
    assert_requeue(&r, 3);
    assert_eq!(fake.provision_targets_since(m), ["manage", "manage"]);
    assert_eq!(
        fake.bodies_since(m, "PATCH", &format!("/v1/nodes/{UUID}"))
            .len(),
        1,
        "changed credentials update driver_info"
    );

    // error (a failed undeploy)
    fake.node_in("error", json!({"last_error": err}));
    assert_failed(
        &prov(&shared)
            .deprovision(DeprovisionOptions {
                restart_on_failure: false,
                automated_cleaning_mode: AutomatedCleaningMode::Metadata,
            })
            .unwrap(),
        err,
    );
    fake.set(json!({"last_error": null}));
    assert_failed(
        &prov(&shared)
            .deprovision(DeprovisionOptions {
                restart_on_failure: false,
                automated_cleaning_mode: AutomatedCleaningMode::Metadata,
            })
            .unwrap(),
        "Deprovisioning failed",
    );

    // service failed
    fake.node_in("service failed", json!({"last_error": err}));
    let service = ServicingData {
        has_firmware_spec: true,
        ..Default::default()
    };
    assert_failed(
        &prov(&shared)
            .service(
                &service,
                StepOptions {
                    unprepared: true,
                    restart_on_failure: false,
                },
            )
            .unwrap()
            .result,
        err,
    );

    // power actions that failed
    fake.node_in(
        "active",
        json!({"power_state": "power off", "last_error": err}),
    );
    let m = fake.mark();
    assert_failed(
        &prov(&shared).power_on(PowerOnOptions::default()).unwrap(),
        &format!("PowerOn operation failed: {err}"),
    );
    assert!(fake.changes_since(m).is_empty());
    let r = prov(&shared)
        .power_on(PowerOnOptions { force: true })
        .unwrap();
    assert!(r.dirty && r.requeue_after.is_zero(), "{r:?}");
    fake.set(json!({"power_state": "power on"}));
    assert_failed(
        &prov(&shared)
            .power_off(PowerOffOptions {
                mode: RebootMode::Hard,
                force: false,
                automated_cleaning_mode: AutomatedCleaningMode::Metadata,
            })
            .unwrap(),
        err,
    );
    assert_eq!(
        fake.bodies_since(m, "PUT", &format!("/v1/nodes/{UUID}/states/power")),
        [json!({"target": "power on"})]
    );
}

// ------------------------------------------------------------------- faults and maintenance

#[test]
fn a_fault_blocks_state_changes_and_power_failure_is_reported() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in(
        "manageable",
        json!({"fault": "power failure", "maintenance": true, "maintenance_reason": "power failure"}),
    );
    let m = fake.mark();
    assert_requeue(
        &prov(&shared)
            .provision(&provision_data(image()), ProvisionOptions::default())
            .unwrap(),
        10,
    );
    let InspectResult {
        result: r, started, ..
    } = prov(&shared)
        .inspect_hardware(
            &InspectData::default(),
            InspectOptions {
                restart_on_failure: false,
                refresh: true,
                force_reboot: false,
            },
        )
        .unwrap();
    assert_requeue(&r, 10);
    assert!(!started);
    assert!(
        fake.since(m)
            .iter()
            .all(|r| !r.contains("/states/") && !r.contains("maintenance")),
        "neither a state change nor maintenance: {:?}",
        fake.since(m)
    );
    assert!(prov(&shared).has_power_failure());

    // An active node in maintenance because of a fault keeps it.
    fake.node_in(
        "active",
        json!({"fault": "clean failure", "maintenance": true}),
    );
    let adopt = AdoptData {
        state: ProvisioningState::Provisioned,
    };
    let m = fake.mark();
    assert_done(
        &prov(&shared)
            .adopt(&adopt, AdoptOptions::default())
            .unwrap(),
    );
    assert!(!prov(&shared).has_power_failure());
    assert!(fake.changes_since(m).is_empty());
}

#[test]
fn maintenance_is_cleared_before_a_state_change() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in(
        "manageable",
        json!({"maintenance": true, "maintenance_reason": "by hand"}),
    );
    let m = fake.mark();
    let r = prov(&shared)
        .provision(&provision_data(image()), ProvisionOptions::default())
        .unwrap();
    assert!(r.dirty && r.requeue_after.is_zero(), "{r:?}");
    assert_eq!(
        fake.changes_since(m),
        [format!("DELETE /v1/nodes/{UUID}/maintenance")]
    );
    assert_eq!(fake.node()["maintenance"], false);
    let m = fake.mark();
    assert_requeue(
        &prov(&shared)
            .provision(&provision_data(image()), ProvisionOptions::default())
            .unwrap(),
        3,
    );
    assert_eq!(fake.provision_targets_since(m), ["provide"]);

    // An active node put in maintenance by a human: adoption clears it.
    fake.node_in("active", json!({"maintenance": true}));
    let adopt = AdoptData {
        state: ProvisioningState::Provisioned,
    };
    let m = fake.mark();
    let r = prov(&shared)
        .adopt(&adopt, AdoptOptions::default())
        .unwrap();
    assert!(r.dirty && r.requeue_after.is_zero(), "{r:?}");
    assert_eq!(
        fake.changes_since(m),
        [format!("DELETE /v1/nodes/{UUID}/maintenance")]
    );
    // ...but not while the host is being deleted.
    fake.node_in("active", json!({"maintenance": true}));
    let deleting = AdoptData {
        state: ProvisioningState::Deleting,
    };
    assert_done(
        &prov(&shared)
            .adopt(&deleting, AdoptOptions::default())
            .unwrap(),
    );
}

// --------------------------------------------------------------------------------- power

#[test]
fn soft_power_off_refused_with_400_falls_back_to_hard() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in("active", json!({"power_state": "power on"}));
    fake.push_fault(Fault {
        method: "PUT",
        path: format!("nodes/{UUID}/states/power"),
        body_contains: Some("soft power off".into()),
        status: 400,
        message: "The requested action \"soft power off\" is not supported by the power interface."
            .into(),
        delay: Duration::ZERO,
    });
    let m = fake.mark();
    let (mut p, events) = prov_for(&shared, host_data(UUID, true));
    let r = p
        .power_off(PowerOffOptions {
            mode: RebootMode::Soft,
            force: false,
            automated_cleaning_mode: AutomatedCleaningMode::Metadata,
        })
        .unwrap();
    assert!(r.dirty && r.requeue_after.is_zero(), "{r:?}");
    assert_eq!(
        fake.bodies_since(m, "PUT", &format!("/v1/nodes/{UUID}/states/power")),
        [
            json!({"target": "soft power off", "timeout": 180}),
            json!({"target": "power off"})
        ]
    );
    assert_eq!(
        *events.lock().unwrap(),
        [Event {
            reason: "PowerOff".into(),
            message: "Host powered off".into()
        }]
    );

    // Any other error of the soft power-off is the answer.
    fake.clear_faults();
    fake.push_fault(Fault {
        method: "PUT",
        path: format!("nodes/{UUID}/states/power"),
        body_contains: Some("soft power off".into()),
        status: 500,
        message: "IPMI error".into(),
        delay: Duration::ZERO,
    });
    let m = fake.mark();
    assert_transient(
        prov(&shared).power_off(PowerOffOptions {
            mode: RebootMode::Soft,
            force: false,
            automated_cleaning_mode: AutomatedCleaningMode::Metadata,
        }),
        &format!(
            "failed to soft power off node: PUT /v1/nodes/{UUID}/states/power: 500 Internal Server Error: IPMI error"
        ),
    );
    assert_eq!(
        fake.bodies_since(m, "PUT", &format!("/v1/nodes/{UUID}/states/power"))
            .len(),
        1
    );

    // A pending provisioning transition blocks power changes.
    fake.clear_faults();
    fake.set(json!({"target_provision_state": "active"}));
    let m = fake.mark();
    assert_requeue(
        &prov(&shared)
            .power_off(PowerOffOptions {
                mode: RebootMode::Hard,
                force: false,
                automated_cleaning_mode: AutomatedCleaningMode::Metadata,
            })
            .unwrap(),
        3,
    );
    assert!(fake.changes_since(m).is_empty());
}

// --------------------------------------------------------------------------- request costs

#[test]
fn a_steady_pass_costs_one_get_of_the_node() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    let reg = ManagementAccessData::default();

    // Register a new host from scratch.
    let (mut p, events) = prov_for(&shared, host_data("", false));
    let RegisterResult {
        result: r,
        provisioner_id: id,
    } = p.register(&reg, RegisterOptions::default()).unwrap();
    assert_requeue(&r, 3);
    assert_eq!(id, UUID);
    assert_eq!(events.lock().unwrap()[0].reason, "Registered");
    let saved = p
        .persistent_state()
        .expect("the node's ports are remembered");
    assert_eq!(saved, json!({"node": UUID, "ports": [MAC]}));
    assert_eq!(fake.provision_targets_since(0), ["manage"]);

    // Verified: the first pass after it configures the node.
    fake.set(json!({"provision_state": "manageable"}));
    let host = HostData {
        provisioner_id: UUID.into(),
        provisioner_state: Some(saved.clone()),
        ..host_data("", false)
    };
    let (mut p, _) = prov_for(&shared, host.clone());
    assert_done(&p.register(&reg, RegisterOptions::default()).unwrap().result);

    for state in ["available", "active"] {
        fake.set(json!({"provision_state": state, "power_state": "power on"}));
        let m = fake.mark();
        let (mut p, events) = prov_for(&shared, host.clone());
        assert_done(&p.register(&reg, RegisterOptions::default()).unwrap().result);
        if state == "available" {
            let StepResult { result: r, started } = p
                .prepare(&PrepareData::default(), StepOptions::default())
                .unwrap();
            assert_done(&r);
            assert!(!started);
        } else {
            let adopt = AdoptData {
                state: ProvisioningState::Provisioned,
            };
            assert_done(&p.adopt(&adopt, AdoptOptions::default()).unwrap());
        }
        assert_eq!(p.update_hardware_state().unwrap().powered_on, Some(true));
        assert_done(&p.power_on(PowerOnOptions::default()).unwrap());
        assert!(!p.has_power_failure());
        assert_eq!(
            fake.since(m),
            [format!("GET /v1/nodes/{UUID}")],
            "a steady {state} pass"
        );
        assert!(events.lock().unwrap().is_empty());
        assert_eq!(p.persistent_state(), Some(saved.clone()));
    }

    // Without the remembered ports, registration lists them once, and remembers them again.
    let m = fake.mark();
    let (mut p, _) = prov_for(&shared, host_data(UUID, false));
    assert_done(&p.register(&reg, RegisterOptions::default()).unwrap().result);
    assert_eq!(
        fake.since(m),
        [
            format!("GET /v1/nodes/{UUID}"),
            format!("GET /v1/ports?node_uuid={UUID}&fields=node_uuid%2Cuuid%2Caddress"),
        ]
    );
    assert_eq!(p.persistent_state(), Some(saved));
}

#[test]
fn capacity_decisions_for_many_hosts_list_nodes_at_most_once_per_second() {
    let fake = FakeIronic::start();
    let config = ProvisionerConfig {
        provisioning_limit: 5,
        ..Default::default()
    };
    let shared = fake.shared_with(fake.config(), config);
    for (i, state) in ["deploying", "clean wait", "active"].iter().enumerate() {
        fake.add_listed_node(json!({
            "uuid": format!("00000000-0000-4000-8000-00000000000{i}"),
            "name": format!("other~busy-{i}"),
            "provision_state": state,
            "boot_interface": "ipxe",
        }));
    }
    let listings = |since: usize| {
        fake.seen()[since..]
            .iter()
            .filter(|s| s.method == "GET" && s.target.starts_with("/v1/nodes?"))
            .count()
    };
    let ask = |i: usize| {
        let host = HostData {
            key: ObjectKey::new("default", format!("worker-{i}")),
            provisioner_id: String::new(),
            provisioner_state: None,
            ..host_data("", false)
        };
        prov_for(&shared, host).0.has_capacity().unwrap()
    };

    let m = fake.mark();
    let started = Instant::now();
    let granted = std::thread::scope(|s| {
        let handles: Vec<_> = (0..40).map(|i| s.spawn(move || ask(i))).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|g| *g)
            .count()
    });
    let elapsed = started.elapsed();
    // two busy nodes of other hosts: 3 of 5 slots left
    assert_eq!(granted, 3);
    let n = listings(m);
    assert!(n >= 1);
    assert!(
        n as u64 <= 1 + elapsed.as_secs(),
        "{n} listings in {elapsed:?} for 40 decisions"
    );
    // Holders are answered from the table; after the listing's second is up it is fetched again.
    let m = fake.mark();
    std::thread::sleep(Duration::from_millis(1100));
    let started = Instant::now();
    let again = (0..40).filter(|i| ask(*i)).count();
    let elapsed = started.elapsed();
    assert_eq!(again, 3, "the same three hosts hold the slots");
    let n = listings(m);
    assert!(
        n >= 1 && n as u64 <= 1 + elapsed.as_secs(),
        "{n} listings in {elapsed:?}"
    );
}

#[test]
fn a_never_inspected_node_starts_inspection_without_asking_for_inventory() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in("manageable", json!({"inspection_finished_at": null}));
    let m = fake.mark();
    let InspectResult {
        result: r,
        started,
        details,
    } = prov(&shared)
        .inspect_hardware(&InspectData::default(), InspectOptions::default())
        .unwrap();
    assert!(r.dirty && started && details.is_none(), "{r:?}");
    let seen = fake.since(m);
    assert!(
        !seen.iter().any(|r| r.contains("inventory")),
        "no inventory GET: {seen:?}"
    );
    assert_eq!(fake.provision_targets_since(m), ["inspect"]);
}

#[test]
fn health_and_power_failure_after_a_state_change_need_no_new_get() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in("manageable", json!({"health": "Critical"}));
    let mut p = prov(&shared);
    p.update_hardware_state().unwrap();
    let m = fake.mark();
    // a state change (`provide`) drops the cached node...
    let _ = p.provision(&provision_data(image()), ProvisionOptions::default());
    assert_eq!(fake.provision_targets_since(m), ["provide"]);
    let after_change = fake.since(m).len();
    // ...yet fault and health are answered from the node already seen
    assert!(!p.has_power_failure());
    assert_eq!(p.get_health(), "Critical");
    assert_eq!(fake.since(m).len(), after_change, "{:?}", fake.since(m));
}

// ------------------------------------------------------------------ due_hosts (DueHosts feature)

/// The node watch's listing, as sent (the fake's API has `disable_power_off`).
fn watch_listing() -> String {
    format!(
        "GET /v1/nodes?fields={}%2Cdisable_power_off&limit=1000",
        crate::WATCH_FIELDS.join("%2C")
    )
}

/// What one process shares when the host asks `due_hosts` (the feature `DueHosts`).
fn watched(fake: &FakeIronic, limit: usize) -> Arc<Shared> {
    let prov = ProvisionerConfig {
        answer_due_hosts: true,
        provisioning_limit: limit,
        ..Default::default()
    };
    fake.shared_with(fake.config(), prov)
}

fn waiting(key: &ObjectKey, id: &str, on: WaitOn) -> WaitingHost {
    WaitingHost {
        host: key.clone(),
        provisioner_id: id.into(),
        on,
    }
}

fn stamp(second: u32) -> String {
    format!("2026-12-01T02:00:{second:02}+00:00")
}

/// A registered node of host `default/<name>` (as `node_in` makes the test host's).
fn node_of(uuid: &str, name: &str, provision_state: &str) -> Value {
    json!({
        "uuid": uuid,
        "name": format!("default~{name}"),
        "driver": "ipmi",
        "provision_state": provision_state,
        "target_provision_state": null,
        "power_state": "power on",
        "target_power_state": null,
        "last_error": null,
        "maintenance": false,
        "fault": null,
        "reservation": null,
        "boot_interface": "ipxe",
        "provision_updated_at": stamp(0),
    })
}

fn set_node(fake: &FakeIronic, uuid: &str, fields: Value) {
    let mut st = fake.state.lock().unwrap();
    let node = st
        .nodes
        .iter_mut()
        .find(|n| n["uuid"] == uuid)
        .expect("the node exists");
    merge(node, fields);
}

/// One waiting pass of the test host, provisioning: registration check, then `provision`.
fn provisioning_pass(shared: &Arc<Shared>) -> OpResult {
    let mut p = prov(shared);
    let reg = p
        .register(&ManagementAccessData::default(), RegisterOptions::default())
        .unwrap();
    assert_done(&reg.result);
    p.provision(&provision_data(image()), ProvisionOptions::default())
        .unwrap()
}

#[test]
fn with_due_hosts_a_waiting_pass_makes_no_call_and_a_listed_change_one_get() {
    let fake = FakeIronic::start();
    let shared = watched(&fake, 20);
    fake.node_in(
        "wait call-back",
        json!({"target_provision_state": "active", "provision_updated_at": stamp(1)}),
    );
    let key = ObjectKey::new("default", "worker-0");
    let asked = [waiting(&key, UUID, WaitOn::Progress)];

    // The pass that sees the deploy running reads the node once and waits.
    let m = fake.mark();
    assert_requeue(&provisioning_pass(&shared), 10);
    assert_eq!(fake.since(m), [format!("GET /v1/nodes/{UUID}")]);

    // Asked which hosts are due: one listing, nothing new.
    let m = fake.mark();
    let d = shared.due_hosts(&asked).unwrap().expect("answered");
    assert!(d.due.is_empty(), "{d:?}");
    assert_eq!(d.ask_again_after, Duration::from_secs(1));
    assert_eq!(fake.since(m), [watch_listing()]);
    // Asked again within the second: the same listing, no call.
    assert!(shared.due_hosts(&asked).unwrap().unwrap().due.is_empty());
    assert_eq!(fake.since(m).len(), 1);

    // BMO's timer fires (the read is older than a second): the pass costs no call, because the
    // listing made after the read shows the node unchanged.
    shared.watch.age_records(Duration::from_millis(1500));
    let m = fake.mark();
    assert_requeue(&provisioning_pass(&shared), 10);
    assert!(fake.since(m).is_empty(), "{:?}", fake.since(m));

    // The conductor still holds the node after the deploy: not due yet.
    fake.set(
        json!({"provision_state": "active", "target_provision_state": null,
        "reservation": "conductor-1", "provision_updated_at": stamp(5)}),
    );
    shared.watch.age_listing(Duration::from_secs(1));
    let m = fake.mark();
    assert!(shared.due_hosts(&asked).unwrap().unwrap().due.is_empty());
    assert_eq!(fake.since(m), [watch_listing()]);
    // Released: due, and its pass makes exactly one GET.
    fake.set(json!({"reservation": null, "provision_updated_at": stamp(6)}));
    shared.watch.age_listing(Duration::from_secs(1));
    assert_eq!(shared.due_hosts(&asked).unwrap().unwrap().due, [0]);
    let m = fake.mark();
    assert_done(&provisioning_pass(&shared));
    assert_eq!(fake.since(m), [format!("GET /v1/nodes/{UUID}")]);
}

#[test]
fn with_due_hosts_an_immediate_requeue_reuses_the_node_and_a_write_forces_a_read() {
    let fake = FakeIronic::start();
    let shared = watched(&fake, 20);
    fake.node_in("manageable", json!({"provision_updated_at": stamp(1)}));
    // A pass reads the node and asks for `provide`.
    let m = fake.mark();
    assert_requeue(&provisioning_pass(&shared), 3);
    assert_eq!(
        fake.since(m),
        [
            format!("GET /v1/nodes/{UUID}"),
            format!("PUT /v1/nodes/{UUID}/states/provision")
        ]
    );
    // The next pass, however soon, does not reuse that read: a write was sent after it. `provide`
    // changes only listed fields of what a pass reads, so a listing made after the pass (shared
    // by every host) stands in for the GET.
    fake.set(
        json!({"provision_state": "cleaning", "target_provision_state": "available",
        "provision_updated_at": stamp(2)}),
    );
    let m = fake.mark();
    assert_requeue(&provisioning_pass(&shared), 10);
    assert_eq!(fake.since(m), [watch_listing()]);
    // A pass right after a read (under a second) reuses it without a listing.
    let m = fake.mark();
    assert_requeue(&provisioning_pass(&shared), 10);
    assert!(fake.since(m).is_empty(), "{:?}", fake.since(m));
    // Once the read and the listing are old, a new listing vouches for the node.
    shared.watch.age_records(Duration::from_millis(1500));
    shared.watch.age_listing(Duration::from_millis(1500));
    let m = fake.mark();
    assert_requeue(&provisioning_pass(&shared), 10);
    assert_eq!(fake.since(m), [watch_listing()]);
    // After `active`, Ironic's deployment rewrites instance_info and instance_uuid, which the
    // listing carries: the next pass reads them from it, no GET.
    fake.set(json!({"provision_state": "available", "target_provision_state": null, "provision_updated_at": stamp(3)}));
    shared.watch.age_records(Duration::from_millis(2500));
    shared.watch.age_listing(Duration::from_millis(2500));
    let m = fake.mark();
    assert_requeue(&provisioning_pass(&shared), 3);
    assert_eq!(fake.provision_targets_since(m), ["active"]);
    let deployed =
        json!({"image_source": IMAGE_URL, "image_checksum": CHECKSUM, "deployed_by": "ironic"});
    fake.set(
        json!({"provision_state": "active", "provision_updated_at": stamp(4),
        "instance_uuid": "i-1", "instance_info": deployed}),
    );
    shared.watch.age_listing(Duration::from_secs(1));
    let m = fake.mark();
    assert_done(&provisioning_pass(&shared));
    assert!(without_listings(&fake, m).is_empty(), "{:?}", fake.since(m));
    let n = prov(&shared).get_node().unwrap();
    assert_eq!(n.instance_uuid.as_deref(), Some("i-1"));
    assert_eq!(Value::Object(n.instance_info), deployed);
    // A request whose effect the listing does not show (`deleted`: tear-down) means a GET next.
    let mut p = prov(&shared);
    let node = p.get_node().unwrap();
    assert_requeue(&p.change_state(&node, "deleted").unwrap(), 3);
    drop(p);
    fake.set(json!({"provision_state": "available", "provision_updated_at": stamp(5)}));
    shared.watch.age_listing(Duration::from_secs(1));
    shared.watch.age_records(Duration::from_millis(2500));
    let m = fake.mark();
    prov(&shared).get_node().unwrap();
    assert_eq!(
        without_listings(&fake, m),
        [format!("GET /v1/nodes/{UUID}")]
    );
}

#[test]
fn with_due_hosts_a_pass_that_hit_409_is_due_once_the_reservation_clears() {
    let fake = FakeIronic::start();
    let shared = watched(&fake, 20);
    fake.node_in("manageable", json!({"provision_updated_at": stamp(1)}));
    fake.fail("PUT", "nodes/*", 409, "Node is locked by host c1");
    let asked = [waiting(
        &ObjectKey::new("default", "worker-0"),
        UUID,
        WaitOn::Progress,
    )];
    assert_requeue(&provisioning_pass(&shared), 3);
    fake.clear_faults();
    fake.set(json!({"reservation": "c1"}));
    assert!(shared.due_hosts(&asked).unwrap().unwrap().due.is_empty());
    // Nothing else moved: the reservation alone going away makes the host due.
    fake.set(json!({"reservation": null}));
    shared.watch.age_listing(Duration::from_secs(1));
    assert_eq!(shared.due_hosts(&asked).unwrap().unwrap().due, [0]);
}

#[test]
fn one_listing_serves_many_waiting_hosts() {
    let fake = FakeIronic::start();
    let shared = watched(&fake, 100);
    fake.state.lock().unwrap().page_limit = 7; // several pages, followed through `next`
    let uuid = |i: usize| format!("00000000-0000-4000-8000-{i:012}");
    let hosts: Vec<ObjectKey> = (0..20)
        .map(|i| ObjectKey::new("default", format!("worker-{i}")))
        .collect();
    for (i, key) in hosts.iter().enumerate() {
        fake.add_listed_node(node_of(&uuid(i), &key.name, "clean wait"));
    }
    // Every host's pass reads its node once and waits.
    for (i, key) in hosts.iter().enumerate() {
        let host = HostData {
            key: key.clone(),
            ..host_data(&uuid(i), true)
        };
        let (mut p, _) = prov_for(&shared, host);
        assert_eq!(p.update_hardware_state().unwrap().powered_on, Some(true));
    }
    // Host 3 has no UUID in its status yet: it is matched by its node's name.
    let asked: Vec<WaitingHost> = hosts
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let id = if i == 3 { String::new() } else { uuid(i) };
            waiting(k, &id, WaitOn::Progress)
        })
        .collect();
    let listings = |since: usize| {
        fake.since(since)
            .iter()
            .filter(|r| r.starts_with("GET /v1/nodes?"))
            .count()
    };
    let m = fake.mark();
    // Eight askers at once: one listing (three pages) between them.
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| assert!(shared.due_hosts(&asked).unwrap().unwrap().due.is_empty()));
        }
    });
    assert_eq!(listings(m), 3, "{:?}", fake.since(m));
    assert_eq!(fake.since(m)[0], watch_listing());
    assert!(
        fake.since(m)
            .iter()
            .all(|r| r.starts_with("GET /v1/nodes?"))
    );

    // Five nodes finish cleaning, one more only moves to another transitional state.
    for i in [1, 3, 8, 13, 19] {
        set_node(
            &fake,
            &uuid(i),
            json!({"provision_state": "available", "provision_updated_at": stamp(9)}),
        );
    }
    set_node(
        &fake,
        &uuid(5),
        json!({"provision_state": "cleaning", "provision_updated_at": stamp(9)}),
    );
    shared.watch.age_listing(Duration::from_secs(1));
    let m = fake.mark();
    let d = shared.due_hosts(&asked).unwrap().unwrap();
    assert_eq!(d.due, [1, 3, 8, 13, 19]);
    assert_eq!(listings(m), 3);
    // Hosts the plugin never saw a pass of are not due, whatever their node does.
    let strangers = [waiting(
        &ObjectKey::new("default", "stranger"),
        "00000000-0000-4000-8000-999999999999",
        WaitOn::Progress,
    )];
    assert!(
        shared
            .due_hosts(&strangers)
            .unwrap()
            .unwrap()
            .due
            .is_empty()
    );
}

#[test]
fn due_hosts_never_lists_for_nobody_and_is_not_answered_without_the_feature() {
    let fake = FakeIronic::start();
    let shared = watched(&fake, 20);
    let plain = fake.shared();
    let m = fake.mark();
    let d = shared.due_hosts(&[]).unwrap().expect("answered");
    assert!(d.due.is_empty());
    assert!(fake.since(m).is_empty());

    let key = ObjectKey::new("default", "worker-0");
    assert_eq!(
        plain
            .due_hosts(&[waiting(&key, UUID, WaitOn::Progress)])
            .unwrap(),
        None
    );
    assert!(fake.since(m).is_empty());
}

#[test]
fn without_due_hosts_every_pass_makes_todays_requests() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in(
        "wait call-back",
        json!({"target_provision_state": "active"}),
    );
    for _ in 0..3 {
        let m = fake.mark();
        assert_requeue(&provisioning_pass(&shared), 10);
        assert_eq!(fake.since(m), [format!("GET /v1/nodes/{UUID}")]);
    }
    assert_eq!(shared.watch.records(), 0, "no baselines kept");
    // Capacity keeps its own listing, with BMO's fields.
    let m = fake.mark();
    assert!(prov(&shared).has_capacity().unwrap());
    assert_eq!(
        fake.since(m),
        ["GET /v1/nodes?fields=uuid%2Cname%2Cprovision_state%2Cboot_interface"]
    );
}

#[test]
fn a_freed_slot_wakes_the_oldest_delayed_host_only() {
    let fake = FakeIronic::start();
    let shared = watched(&fake, 1);
    let uuid = |c: char| format!("00000000-0000-4000-8000-00000000000{}", c as u32 - 96);
    let key = |c: char| ObjectKey::new("default", format!("worker-{c}"));
    for c in ['a', 'b', 'c'] {
        fake.add_listed_node(node_of(&uuid(c), &key(c).name, "manageable"));
    }
    let has_capacity = |c: char| {
        let host = HostData {
            key: key(c),
            ..host_data(&uuid(c), true)
        };
        prov_for(&shared, host).0.has_capacity().unwrap()
    };
    let delayed = [
        waiting(&key('b'), &uuid('b'), WaitOn::Capacity),
        waiting(&key('c'), &uuid('c'), WaitOn::Capacity),
    ];
    // A takes the only slot; B and C are delayed.
    let m = fake.mark();
    assert!(has_capacity('a'));
    assert!(!has_capacity('b'));
    assert!(!has_capacity('c'));
    assert_eq!(fake.since(m), [watch_listing()], "the watch's listing");
    assert!(shared.due_hosts(&delayed).unwrap().unwrap().due.is_empty());
    // A's node turns busy: Ironic counts it now; still no slot.
    set_node(
        &fake,
        &uuid('a'),
        json!({"provision_state": "inspecting", "provision_updated_at": stamp(3)}),
    );
    shared.watch.age_listing(Duration::from_secs(1));
    assert!(shared.due_hosts(&delayed).unwrap().unwrap().due.is_empty());
    assert_eq!(shared.capacity.free_slots(), 0);

    // A is inspected and leaves the gated states (its registration check gives the slot back).
    set_node(
        &fake,
        &uuid('a'),
        json!({"provision_state": "manageable", "provision_updated_at": stamp(6)}),
    );
    let host_a = HostData {
        key: key('a'),
        ..host_data(&uuid('a'), true)
    };
    let data = ManagementAccessData {
        state: ProvisioningState::Available,
        ..Default::default()
    };
    let _ = prov_for(&shared, host_a)
        .0
        .register(&data, RegisterOptions::default());
    shared.watch.age_listing(Duration::from_secs(1));
    let m = fake.mark();
    let d = shared.due_hosts(&delayed).unwrap().unwrap();
    assert_eq!(d.due, [0], "B only: one slot freed");
    assert_eq!(fake.since(m), [watch_listing()]);
    assert_eq!(shared.capacity.promised(), 1);
    // Asked again before B's pass: still B only, no second promise.
    assert_eq!(shared.due_hosts(&delayed).unwrap().unwrap().due, [0]);
    assert_eq!(shared.capacity.promised(), 1);
    // C cannot take B's promised slot; B's pass turns the promise into the grant.
    assert!(!has_capacity('c'));
    assert!(has_capacity('b'));
    assert_eq!(
        (shared.capacity.granted(), shared.capacity.promised()),
        (1, 0)
    );
    assert!(!has_capacity('a'), "the limit is never exceeded");
    assert!(
        shared
            .due_hosts(&delayed[1..])
            .unwrap()
            .unwrap()
            .due
            .is_empty()
    );
}

// ------------------------------------------------ reads a pass skips with due_hosts (issue: calls)

/// Requests since `mark` without the node watch's listings.
fn without_listings(fake: &FakeIronic, mark: usize) -> Vec<String> {
    fake.since(mark)
        .into_iter()
        .filter(|r| !r.starts_with("GET /v1/nodes?"))
        .collect()
}

fn registration_pass(shared: &Arc<Shared>, host: HostData) -> RegisterResult {
    let (mut p, _) = prov_for(shared, host);
    p.register(&ManagementAccessData::default(), RegisterOptions::default())
        .unwrap()
}

#[test]
fn with_due_hosts_a_new_host_is_registered_without_name_lookups_or_port_listing() {
    let by_mac = format!("GET /v1/ports?address={MAC}&fields=node_uuid%2Cuuid%2Caddress")
        .replace(':', "%3A");
    let writes = [
        "POST /v1/nodes".to_string(),
        "POST /v1/ports".to_string(),
        format!("PUT /v1/nodes/{UUID}/states/provision"),
    ];
    // Without the feature: BMO's lookups by both names and by MAC, then the node's ports and
    // the MAC's owners again.
    let fake = FakeIronic::start();
    let plain = fake.shared();
    let m = fake.mark();
    let r = registration_pass(&plain, host_data("", false));
    assert_requeue(&r.result, 3);
    let bmo = fake.since(m);
    let reads: Vec<&String> = bmo.iter().filter(|r| r.starts_with("GET ")).collect();
    assert_eq!(reads.len(), 5, "{bmo:?}");
    assert_eq!(
        reads[..2],
        [&format!("GET /v1/nodes/{NAME}"), "GET /v1/nodes/worker-0"]
    );
    assert_eq!(fake.changes_since(m), writes);

    // With it: one shared node listing answers both name lookups, the shared port listing the
    // MAC's owners, and the node just created has no ports. The writes are the same.
    let port_listing = "GET /v1/ports?fields=node_uuid%2Cuuid%2Caddress&limit=1000".to_string();
    let fake = FakeIronic::start();
    let shared = watched(&fake, 20);
    let m = fake.mark();
    let r = registration_pass(&shared, host_data("", false));
    assert_requeue(&r.result, 3);
    assert_eq!(r.provisioner_id, UUID);
    assert_eq!(fake.since(m)[0], watch_listing());
    assert_eq!(without_listings(&fake, m)[0], port_listing);
    assert!(!fake.since(m).contains(&by_mac));
    assert_eq!(fake.changes_since(m), writes);
    assert_eq!(fake.since(m).len(), 5, "{:?}", fake.since(m));
    assert_eq!(fake.bodies_since(m, "POST", "/v1/ports").len(), 1);
}

#[test]
fn with_due_hosts_a_named_node_without_our_id_is_found_never_created_twice() {
    let fake = FakeIronic::start();
    let shared = watched(&fake, 20);
    // An earlier run created the node and was killed before saving its ID.
    fake.node_in("manageable", json!({}));
    let m = fake.mark();
    let r = registration_pass(&shared, host_data("", false));
    assert_done(&r.result);
    assert_eq!(r.provisioner_id, UUID);
    assert!(
        !fake.since(m).iter().any(|r| r == "POST /v1/nodes"),
        "{:?}",
        fake.since(m)
    );
    assert!(fake.since(m).contains(&format!("GET /v1/nodes/{NAME}")));

    // This process created a node after the (still fresh) listing, and the ID got lost: the
    // listing does not show the node, yet its name is asked for and the node is found.
    let fake = FakeIronic::start();
    let shared = watched(&fake, 20);
    let other = ObjectKey::new("default", "worker-9");
    assert!(
        shared
            .watch
            .absent_names(&shared.client, &lookup_names(&other))[0]
    );
    let r = registration_pass(
        &shared,
        HostData {
            boot_mac_address: String::new(),
            ..host_data("", false)
        },
    );
    assert_eq!(r.provisioner_id, UUID);
    let m = fake.mark();
    let r = registration_pass(
        &shared,
        HostData {
            boot_mac_address: String::new(),
            ..host_data("", false)
        },
    );
    assert_eq!(r.provisioner_id, UUID);
    let sent = fake.since(m);
    assert!(!sent.iter().any(|r| r == "POST /v1/nodes"), "{sent:?}");
    assert!(
        !sent.iter().any(|r| r.starts_with("GET /v1/nodes?")),
        "the listing was fresh: {sent:?}"
    );
    assert_eq!(fake.state.lock().unwrap().nodes.len(), 1);
}

/// One provisioning host's life from `manageable` on, on `fake` with `shared`: provide, deploy,
/// power on, with the node moved by hand between passes (and, with the feature, a listing
/// showing each move). The requests of each pass.
fn provide_deploy_power_on(fake: &FakeIronic, shared: &Arc<Shared>) -> Vec<Vec<String>> {
    let asked = [waiting(
        &ObjectKey::new("default", "worker-0"),
        UUID,
        WaitOn::Progress,
    )];
    let moved = |fields: Value| {
        fake.set(fields);
        if shared.watch.enabled() {
            shared.watch.age_listing(Duration::from_secs(1));
            assert_eq!(shared.due_hosts(&asked).unwrap().unwrap().due, [0]);
        }
    };
    let mut passes = Vec::new();
    fake.node_in(
        "manageable",
        json!({"power_state": "power off", "provision_updated_at": stamp(1)}),
    );
    let m = fake.mark();
    assert_requeue(&provisioning_pass(shared), 3); // provide
    passes.push(without_listings(fake, m));
    moved(json!({"provision_state": "available", "provision_updated_at": stamp(2)}));
    let m = fake.mark();
    assert_requeue(&provisioning_pass(shared), 3); // instance_info, validate, active
    passes.push(without_listings(fake, m));
    moved(json!({"provision_state": "active", "provision_updated_at": stamp(3)}));
    let m = fake.mark();
    assert_done(&provisioning_pass(shared));
    let mut p = prov(shared);
    let on = p.power_on(PowerOnOptions::default()).unwrap();
    assert!(on.dirty && on.requeue_after.is_zero(), "{on:?}");
    drop(p);
    passes.push(without_listings(fake, m));
    moved(json!({"power_state": "power on"}));
    let m = fake.mark();
    let mut p = prov(shared);
    assert_done(&p.power_on(PowerOnOptions::default()).unwrap());
    drop(p);
    passes.push(without_listings(fake, m));
    passes
}

#[test]
fn with_due_hosts_a_change_after_provide_active_or_power_is_read_from_the_listing() {
    let get = format!("GET /v1/nodes/{UUID}");
    let plain_fake = FakeIronic::start();
    let plain = provide_deploy_power_on(&plain_fake, &plain_fake.shared());
    let fake = FakeIronic::start();
    let shared = watched(&fake, 20);
    let watched = provide_deploy_power_on(&fake, &shared);
    // Every pass of BMO's timing starts with a GET of the node...
    assert!(plain.iter().all(|p| p[0] == get), "{plain:?}");
    // ...with the feature, the passes after `provide`, `active` and the power change read the
    // node from their last read and the listing (which carries the instance_info and
    // instance_uuid deployment rewrites).
    let firsts: Vec<bool> = watched.iter().map(|p| p.first() == Some(&get)).collect();
    assert_eq!(firsts, [true, false, false, false], "{watched:?}");
    // The rest of each pass, and what is sent, are BMO's.
    for (b, w) in plain.iter().zip(&watched) {
        let rest: Vec<&String> = b.iter().filter(|r| **r != get).collect();
        let w: Vec<&String> = w.iter().filter(|r| **r != get).collect();
        assert_eq!(rest, w);
    }
    for (method, target) in [
        ("PATCH", format!("/v1/nodes/{UUID}")),
        ("PUT", format!("/v1/nodes/{UUID}/states/provision")),
        ("PUT", format!("/v1/nodes/{UUID}/states/power")),
    ] {
        assert_eq!(
            plain_fake.bodies_since(0, method, &target),
            fake.bodies_since(0, method, &target),
            "{method} {target}"
        );
    }
}

#[test]
fn with_due_hosts_a_read_taken_mid_operation_is_never_followed_through_the_listing() {
    let fake = FakeIronic::start();
    let shared = watched(&fake, 20);
    // The pass reads the node while Ironic inspects it (which rewrites properties) and sends a
    // maintenance change, whose own effect is listed.
    fake.node_in(
        "inspecting",
        json!({"target_provision_state": "manageable", "provision_updated_at": stamp(1)}),
    );
    let mut p = prov(&shared);
    p.get_node().unwrap();
    let node = p.node.clone().unwrap();
    assert_requeue(&p.set_maintenance(&node, true, "test").unwrap(), 0);
    drop(p);
    // Inspection ends: the next pass reads the node, properties and all.
    fake.set(
        json!({"provision_state": "manageable", "target_provision_state": null,
        "properties": {"capabilities": "boot_mode:uefi", "cpu_arch": "x86_64", "memory_mb": 4096},
        "provision_updated_at": stamp(2)}),
    );
    shared.watch.age_records(Duration::from_millis(2500));
    let m = fake.mark();
    let mut p = prov(&shared);
    let n = p.get_node().unwrap();
    assert_eq!(n.properties["memory_mb"], json!(4096));
    assert_eq!(
        without_listings(&fake, m),
        [format!("GET /v1/nodes/{UUID}")]
    );
}

#[test]
fn with_due_hosts_the_passes_after_inspect_read_the_listing_properties_and_all() {
    let fake = FakeIronic::start();
    let shared = watched(&fake, 20);
    fake.node_in("manageable", json!({"provision_updated_at": stamp(1)}));
    let mut p = prov(&shared);
    let node = p.get_node().unwrap();
    assert_requeue(&p.change_state(&node, "inspect").unwrap(), 3);
    drop(p);
    // BMO's timer pass, 3 s on, while Ironic inspects: a listing made after the request answers.
    fake.set(
        json!({"provision_state": "inspect wait", "target_provision_state": "manageable",
        "provision_updated_at": stamp(2)}),
    );
    shared.watch.age_records(Duration::from_secs(3));
    let m = fake.mark();
    assert_eq!(
        prov(&shared).get_node().unwrap().provision_state,
        "inspect wait"
    );
    assert_eq!(fake.since(m), [watch_listing()]);
    // Inspection ends and rewrites properties: the listing carries them.
    let properties =
        json!({"capabilities": "boot_mode:uefi", "cpu_arch": "x86_64", "memory_mb": 4096});
    fake.set(
        json!({"provision_state": "manageable", "target_provision_state": null,
        "properties": properties, "inspection_finished_at": stamp(3),
        "provision_updated_at": stamp(3)}),
    );
    shared.watch.age_records(Duration::from_secs(3));
    shared.watch.age_listing(Duration::from_secs(3));
    let m = fake.mark();
    let n = prov(&shared).get_node().unwrap();
    assert_eq!(Value::Object(n.properties), properties);
    assert_eq!(n.provision_state, "manageable");
    assert_eq!(fake.since(m), [watch_listing()]);
}

#[test]
fn with_due_hosts_the_pass_right_after_a_power_request_reads_the_node_without_waiting() {
    let fake = FakeIronic::start();
    let shared = watched(&fake, 20);
    fake.node_in(
        "active",
        json!({"power_state": "power off", "provision_updated_at": stamp(1)}),
    );
    // The shared listing was just made (for every waiting host), before this pass.
    shared
        .watch
        .listing(&shared.client, node_watch::LISTING_TTL)
        .unwrap();
    let mut p = prov(&shared);
    let on = p.power_on(PowerOnOptions::default()).unwrap();
    assert!(on.dirty && on.requeue_after.is_zero(), "{on:?}");
    drop(p);
    // BMO requeues at once; Ironic is powering the node on. No listing shows that yet and the
    // current one is too young to be made again: the pass reads the node at once.
    fake.set(json!({"target_power_state": "power on"}));
    let m = fake.mark();
    let t = Instant::now();
    let n = prov(&shared).get_node().unwrap();
    assert_eq!(fake.since(m), [format!("GET /v1/nodes/{UUID}")]);
    assert_eq!(n.target_power_state.as_deref(), Some("power on"));
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
}

// ------------------------------------------------- ready_hosts (ReadyHosts feature, issue 10)

/// What one process shares when the host asks `due_hosts` and, before passes, `ready_hosts`.
fn watched_ready(fake: &FakeIronic) -> Arc<Shared> {
    let prov = ProvisionerConfig {
        answer_due_hosts: true,
        answer_ready_hosts: true,
        ..Default::default()
    };
    fake.shared_with(fake.config(), prov)
}

fn starting(id: &str) -> StartingHost {
    StartingHost {
        host: ObjectKey::new("default", "worker-0"),
        provisioner_id: id.into(),
    }
}

#[test]
fn with_ready_hosts_the_pass_after_a_power_request_waits_for_the_next_listing_and_costs_no_get() {
    let fake = FakeIronic::start();
    let shared = watched_ready(&fake);
    fake.node_in(
        "active",
        json!({"power_state": "power off", "provision_updated_at": stamp(1)}),
    );
    // The shared listing was just made (for every waiting host), before this pass.
    shared
        .watch
        .listing(&shared.client, node_watch::LISTING_TTL)
        .unwrap();
    let mut p = prov(&shared);
    let on = p.power_on(PowerOnOptions::default()).unwrap();
    assert!(on.dirty && on.requeue_after.is_zero(), "{on:?}");
    drop(p);
    fake.set(json!({"target_power_state": "power on"}));
    // BMO requeues at once. Asked before the pass starts: no listing shows the power request
    // yet and the current one is too young to be made again, so the pass can be served once
    // that listing is a second old; nothing is sent to answer.
    let m = fake.mark();
    let answer = shared
        .ready_hosts(&[starting(UUID), starting("")])
        .unwrap()
        .expect("answered");
    let [wait, unregistered] = answer.wait[..] else {
        panic!("one wait per host: {answer:?}")
    };
    assert!(
        wait > Duration::from_millis(900)
            && wait <= node_watch::LISTING_TTL + node_watch::READY_MARGIN,
        "{wait:?}"
    );
    assert_eq!(unregistered, Duration::ZERO);
    assert!(fake.since(m).is_empty(), "{:?}", fake.since(m));
    // The runner holds the pass back that long (here: the listing is made to look that old).
    shared.watch.age_listing(wait);
    assert_eq!(
        shared.ready_hosts(&[starting(UUID)]).unwrap().unwrap().wait,
        [Duration::ZERO]
    );
    // The pass: one shared listing, which shows the power request, and no GET of the node.
    let m = fake.mark();
    let n = prov(&shared).get_node().unwrap();
    assert_eq!(fake.since(m), [watch_listing()]);
    assert_eq!(n.target_power_state.as_deref(), Some("power on"));
}

#[test]
fn with_ready_hosts_only_a_stale_node_a_listing_would_serve_is_held() {
    let fake = FakeIronic::start();
    let shared = watched_ready(&fake);
    fake.node_in("manageable", json!({"provision_updated_at": stamp(1)}));
    shared
        .watch
        .listing(&shared.client, node_watch::LISTING_TTL)
        .unwrap();
    // A fresh read without a write: served from the cache now.
    let mut p = prov(&shared);
    let node = p.get_node().unwrap();
    drop(p);
    let now = |s: &Arc<Shared>| s.ready_hosts(&[starting(UUID)]).unwrap().unwrap().wait;
    assert_eq!(now(&shared), [Duration::ZERO]);
    // A write no listing shows (here: `deleted`): its pass reads the node anyway, so it starts
    // at once.
    let mut p = prov(&shared);
    p.get_node().unwrap();
    assert_requeue(&p.change_state(&node, "deleted").unwrap(), 3);
    drop(p);
    assert_eq!(now(&shared), [Duration::ZERO]);
    // A listed write (`provide`): held until the next listing.
    let mut p = prov(&shared);
    p.get_node().unwrap();
    assert_requeue(&p.change_state(&node, "provide").unwrap(), 3);
    drop(p);
    assert!(now(&shared)[0] > Duration::ZERO, "{:?}", now(&shared));
    // A listing made since the write serves it: now.
    shared.watch.age_listing(node_watch::LISTING_TTL);
    shared
        .watch
        .listing(&shared.client, node_watch::LISTING_TTL)
        .unwrap();
    assert_eq!(now(&shared), [Duration::ZERO]);
}

#[test]
fn ready_hosts_is_not_answered_without_its_feature() {
    let fake = FakeIronic::start();
    fake.node_in("manageable", json!({}));
    // Without `ReadyHosts`, or without the node watch it answers from: "not supported".
    assert_eq!(
        watched(&fake, 20).ready_hosts(&[starting(UUID)]).unwrap(),
        None
    );
    let prov = ProvisionerConfig {
        answer_ready_hosts: true,
        ..Default::default()
    };
    let unwatched = fake.shared_with(fake.config(), prov);
    assert_eq!(unwatched.ready_hosts(&[starting(UUID)]).unwrap(), None);
}
