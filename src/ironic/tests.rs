//! Unit tests of the Ironic client against an in-process fake HTTP server.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::client::{
    ApiVersion, Auth, IronicClient, IronicConfig, IronicErrorKind, error_body_message,
};
use super::client::{normalize_endpoint, parse_go_duration};
use super::types::{Node, NodePatch, PatchOp, ProvisionStateRequest, Section};

/// A request the fake server received.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) method: String,
    pub(crate) target: String,
    pub(crate) headers: HashMap<String, String>,
    pub(crate) body: String,
}

type Handler = dyn Fn(&Seen) -> (u16, String) + Send + Sync;

/// The status a handler returns to close the connection without answering (the request was
/// read; the client sees the connection drop).
pub(crate) const DROP_CONNECTION: u16 = 0;

/// A fake HTTP/1.1 server on 127.0.0.1:0 answering with `handler`; one request per connection.
/// A handler may sleep (a server that does not answer in time) or return [`DROP_CONNECTION`].
pub(crate) struct FakeServer {
    pub(crate) base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeServer {
    pub(crate) fn start(
        handler: impl Fn(&Seen) -> (u16, String) + Send + Sync + 'static,
    ) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        let handler: Arc<Handler> = Arc::new(handler);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { break };
                let seen = seen2.clone();
                let handler = handler.clone();
                std::thread::spawn(move || serve(conn, &seen, &*handler));
            }
        });
        FakeServer { base, seen }
    }

    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn client(&self) -> IronicClient {
        IronicClient::new(IronicConfig::new(&self.base).unwrap()).unwrap()
    }
}

fn serve(conn: TcpStream, seen: &Mutex<Vec<Seen>>, handler: &Handler) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    let req = Seen {
        method,
        target,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    seen.lock().unwrap().push(req.clone());
    let (status, body) = handler(&req);
    if status == DROP_CONNECTION {
        return;
    }
    let resp = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut conn = conn;
    let _ = conn.write_all(resp.as_bytes());
}

pub(crate) fn version_doc(max: &str) -> String {
    json!({"id": "v1", "version": {"id": "v1", "version": max, "min_version": "1.1", "status": "CURRENT"}})
        .to_string()
}

/// A server whose `/v1/` says `max` and that answers `/v1/drivers`.
fn ironic(max: &'static str) -> FakeServer {
    FakeServer::start(move |r| {
        match (r.method.as_str(), r.target.as_str()) {
        ("GET", "/v1/") => (200, version_doc(max)),
        ("GET", "/v1/drivers") => (200, json!({"drivers": [{"name": "fake-hardware", "hosts": ["h"], "type": "dynamic"}]}).to_string()),
        _ => (404, json!({"error_message": "{\"faultstring\": \"not here\", \"faultcode\": \"Client\", \"debuginfo\": null}"}).to_string()),
    }
    })
}

#[test]
fn version_ladder_picks_highest_supported() {
    for (max, want) in [
        ("1.89", 89),
        ("1.92", 89),
        ("1.93", 93),
        ("1.94", 93),
        ("1.95", 95),
        ("1.108", 95),
        ("1.109", 109),
        ("1.110", 110),
        ("1.115", 110),
    ] {
        let (maj, min) = super::client::parse_microversion(max).unwrap();
        assert_eq!(
            ApiVersion::choose(maj, min).unwrap().minor,
            want,
            "max {max}"
        );
    }
    let v = ApiVersion::choose(1, 96).unwrap();
    assert!(v.has_disable_power_off() && v.has_virtual_media_get_api() && !v.has_health_api());
}

#[test]
fn version_negotiation_against_server_and_headers() {
    let srv = ironic("1.96");
    let c = srv.client();
    let drivers = c.list_drivers().unwrap();
    assert_eq!(drivers[0].name, "fake-hardware");
    assert_eq!(c.api_version().unwrap().minor, 95);
    let seen = srv.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].target, "/v1/");
    assert!(
        !seen[0]
            .headers
            .contains_key("x-openstack-ironic-api-version")
    );
    let h = &seen[1].headers;
    assert_eq!(h["x-openstack-ironic-api-version"], "1.95");
    assert_eq!(h["openstack-api-version"], "baremetal 1.95");
    assert_eq!(h["accept"], "application/json");
    assert!(!h.contains_key("authorization"));
    // never `latest`
    assert!(
        seen.iter()
            .all(|s| s.headers.values().all(|v| !v.contains("latest")))
    );
}

#[test]
fn version_below_minimum_is_refused() {
    let srv = ironic("1.88");
    let c = srv.client();
    let err = c.get_node("x").unwrap_err();
    assert_eq!(err.kind, IronicErrorKind::Version);
    assert_eq!(
        err.message,
        "it supports API 1.88 at most, a release older than Ironic 24.0 (2024.1 Caracal); \
         bmhctl needs API 1.89 or newer, as BMO does: Ironic 24.0 or newer"
    );
    // only the discovery went out, and it is retried (not cached) next time
    assert_eq!(c.request_count(), 1);
    assert!(c.list_drivers().is_err());
    assert_eq!(c.request_count(), 2);
}

#[test]
fn error_bodies_become_readable() {
    let nested = json!({"error_message": "{\"faultstring\": \"Node foo could not be found.\", \"faultcode\": \"Client\", \"debuginfo\": null}"}).to_string();
    assert_eq!(
        error_body_message(nested.as_bytes()).unwrap(),
        "Node foo could not be found."
    );
    let obj = json!({"error_message": {"faultstring": "boom", "faultcode": "Server"}}).to_string();
    assert_eq!(error_body_message(obj.as_bytes()).unwrap(), "boom");
    let plain = json!({"error_message": "just text"}).to_string();
    assert_eq!(error_body_message(plain.as_bytes()).unwrap(), "just text");
    assert_eq!(
        error_body_message(b"<html>bad gateway</html>").unwrap(),
        "<html>bad gateway</html>"
    );
    assert_eq!(error_body_message(b""), None);

    let srv = ironic("1.89");
    let err = srv.client().get_node("foo").unwrap_err();
    assert!(err.is_not_found());
    assert_eq!(err.status, Some(404));
    assert_eq!(err.message, "GET /v1/nodes/foo: 404 Not Found: not here");
}

#[test]
fn conflict_is_its_own_kind() {
    let srv = FakeServer::start(|r| {
        match r.target.as_str() {
        "/v1/" => (200, version_doc("1.110")),
        _ => (409, json!({"error_message": "{\"faultstring\": \"Node abc is locked by host c1, please retry after the current operation is completed.\", \"faultcode\": \"Client\", \"debuginfo\": null}"}).to_string()),
    }
    });
    let c = srv.client();
    let err = c
        .set_provision_state("abc", &ProvisionStateRequest::new("manage"))
        .unwrap_err();
    assert!(err.is_conflict());
    assert_eq!(err.kind, IronicErrorKind::Conflict);
    assert!(
        err.message.contains("is locked by host c1"),
        "{}",
        err.message
    );
    assert!(
        err.message
            .starts_with("PUT /v1/nodes/abc/states/provision: 409 Conflict")
    );
    let body: Value = serde_json::from_str(&srv.seen()[1].body).unwrap();
    assert_eq!(body, json!({"target": "manage"}));
    assert_eq!(srv.seen()[1].headers["content-type"], "application/json");
}

#[test]
fn basic_auth_from_files_is_sent_except_on_discovery() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ironic")).unwrap();
    std::fs::write(dir.path().join("ironic/username"), " admin\n").unwrap();
    std::fs::write(dir.path().join("ironic/password"), "s3cret\n").unwrap();
    let srv = ironic("1.89");
    let base = srv.base.clone();
    let root = dir.path().to_str().unwrap().to_string();
    let env: HashMap<&str, String> = HashMap::from([
        ("IRONIC_ENDPOINT", format!("{base}/v1")),
        ("METAL3_AUTH_ROOT_DIR", root),
        ("IRONIC_CACERT_FILE", "/nonexistent/ca.crt".to_string()),
        ("IRONIC_CLIENT_TIMEOUT", "1m30s".to_string()),
    ]);
    let cfg = IronicConfig::from_lookup(|k| env.get(k).cloned()).unwrap();
    assert_eq!(
        cfg.auth,
        Auth::HttpBasic {
            username: "admin".into(),
            password: "s3cret".into()
        }
    );
    assert_eq!(cfg.ca_file, None);
    assert_eq!(cfg.timeout.as_secs(), 90);
    assert_eq!(cfg.endpoint.as_str(), format!("{base}/v1/"));
    let c = IronicClient::new(cfg).unwrap();
    c.list_drivers().unwrap();
    let seen = srv.seen();
    assert!(!seen[0].headers.contains_key("authorization"));
    // base64("admin:s3cret")
    assert_eq!(seen[1].headers["authorization"], "Basic YWRtaW46czNjcmV0");

    std::fs::write(dir.path().join("ironic/password"), "  \n").unwrap();
    let err = IronicConfig::from_lookup(|k| env.get(k).cloned()).unwrap_err();
    assert_eq!(err.message, "empty HTTP Basic Auth password");
    let none = tempfile::tempdir().unwrap();
    let env2: HashMap<&str, String> = HashMap::from([
        ("IRONIC_ENDPOINT", base.clone()),
        (
            "METAL3_AUTH_ROOT_DIR",
            none.path().to_str().unwrap().to_string(),
        ),
    ]);
    assert_eq!(
        IronicConfig::from_lookup(|k| env2.get(k).cloned())
            .unwrap()
            .auth,
        Auth::None
    );
}

#[test]
fn basic_auth_from_endpoint_userinfo() {
    let srv = ironic("1.89");
    let url = srv.base.replace("http://", "http://bob:p%40ss@");
    let cfg = IronicConfig::new(&url).unwrap();
    assert_eq!(
        cfg.auth,
        Auth::HttpBasic {
            username: "bob".into(),
            password: "p@ss".into()
        }
    );
    assert!(!cfg.endpoint.as_str().contains("bob"));
    IronicClient::new(cfg).unwrap().list_drivers().unwrap();
    assert_eq!(srv.seen()[1].headers["authorization"], "Basic Ym9iOnBAc3M=");
    let err = normalize_endpoint("http://bob@h:6385").unwrap_err();
    assert_eq!(err.message, "no password supplied for HTTP Basic Auth");
}

#[test]
fn endpoint_normalisation() {
    for (raw, want) in [
        ("http://h:6385", "http://h:6385/v1/"),
        ("http://h:6385/", "http://h:6385/v1/"),
        ("http://h:6385/v1", "http://h:6385/v1/"),
        ("http://h:6385/v1/", "http://h:6385/v1/"),
        ("https://h/baremetal", "https://h/baremetal/v1/"),
        ("http://[fd00::1]:6385/v1", "http://[fd00::1]:6385/v1/"),
    ] {
        assert_eq!(normalize_endpoint(raw).unwrap().0.as_str(), want, "{raw}");
    }
    assert!(normalize_endpoint("ftp://h").is_err());
    assert!(normalize_endpoint("not a url").is_err());
}

#[test]
fn go_durations() {
    assert_eq!(parse_go_duration("30s").unwrap().as_secs(), 30);
    assert_eq!(parse_go_duration("1.5s").unwrap().as_millis(), 1500);
    assert_eq!(parse_go_duration("2m").unwrap().as_secs(), 120);
    assert_eq!(parse_go_duration("500ms").unwrap().as_millis(), 500);
    assert!(parse_go_duration("30").is_err());
    assert!(parse_go_duration("3x").is_err());
    let env: HashMap<&str, String> = HashMap::from([
        ("IRONIC_ENDPOINT", "http://h".to_string()),
        ("METAL3_AUTH_ROOT_DIR", "/nonexistent".to_string()),
        ("IRONIC_CLIENT_TIMEOUT", "0s".to_string()),
    ]);
    assert!(IronicConfig::from_lookup(|k| env.get(k).cloned()).is_err());
}

#[test]
fn requests_are_counted_and_pages_followed() {
    let srv = FakeServer::start(|r| {
        match r.target.as_str() {
        "/v1/" => (200, version_doc("1.109")),
        t if t.starts_with("/v1/nodes?") && !t.contains("marker") => (
            200,
            json!({"nodes": [{"uuid": "u1", "name": "ns~a", "provision_state": "available", "boot_interface": null}],
                   "next": "http://elsewhere:6385/v1/nodes?fields=uuid,name,provision_state,boot_interface&limit=1&marker=u1"})
            .to_string(),
        ),
        t if t.starts_with("/v1/nodes?") => (
            200,
            json!({"nodes": [{"uuid": "u2", "name": null, "provision_state": "active"}]}).to_string(),
        ),
        _ => (500, "{}".to_string()),
    }
    });
    let c = srv.client();
    assert_eq!(c.request_count(), 0);
    let nodes = c.list_nodes(super::CAPACITY_FIELDS, None).unwrap();
    assert_eq!(nodes.len(), 2);
    assert_eq!(nodes[0].name_str(), "ns~a");
    assert_eq!(nodes[1].name, None);
    assert_eq!(nodes[1].provision_state, "active");
    // discovery + 2 pages
    assert_eq!(c.request_count(), 3);
    let seen = srv.seen();
    assert_eq!(
        seen[1].target,
        "/v1/nodes?fields=uuid%2Cname%2Cprovision_state%2Cboot_interface"
    );
    assert!(seen[2].target.contains("marker=u1"));
    // cached version: one more request per call
    assert!(c.get_node("u1").is_err());
    assert_eq!(c.request_count(), 4);
}

#[test]
fn idempotent_requests_retry_on_connection_errors_post_does_not() {
    // bind then drop: connection refused
    let addr = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let c = IronicClient::new(IronicConfig::new(&format!("http://{addr}")).unwrap()).unwrap();
    let err = c.api_version().unwrap_err();
    assert_eq!(err.kind, IronicErrorKind::Transport);
    assert_eq!(c.request_count(), 3);
    let err = c
        .create_node(&json!({"driver": "fake-hardware"}))
        .unwrap_err();
    // discovery (GET, 3 attempts) fails first; POST is never sent
    assert_eq!(err.kind, IronicErrorKind::Transport);
    assert_eq!(c.request_count(), 6);
}

#[test]
fn typed_calls_send_the_right_requests() {
    let srv = FakeServer::start(|r| {
        match (r.method.as_str(), r.target.as_str()) {
        (_, "/v1/") => (200, version_doc("1.93")),
        ("POST", "/v1/nodes") => (201, json!({"uuid": "u1", "name": "ns~h", "provision_state": "enroll", "driver_info": {"redfish_password": "******"}, "maintenance": null}).to_string()),
        ("PATCH", "/v1/nodes/u1") => (200, json!({"uuid": "u1", "instance_info": {"image_source": "http://i"}}).to_string()),
        ("PUT", "/v1/nodes/u1/states/power") | ("PUT", "/v1/nodes/u1/maintenance") | ("DELETE", "/v1/nodes/u1/maintenance") | ("PUT", "/v1/nodes/u1/states/provision") => (202, String::new()),
        ("DELETE", "/v1/nodes/u1") => (204, String::new()),
        ("POST", "/v1/ports") => (201, json!({"uuid": "p1", "node_uuid": "u1", "address": "aa:bb:cc:dd:ee:ff", "pxe_enabled": true}).to_string()),
        ("GET", t) if t.starts_with("/v1/ports?") => (200, json!({"ports": [{"uuid": "p1", "node_uuid": "u1", "address": "aa:bb:cc:dd:ee:ff"}]}).to_string()),
        ("GET", "/v1/nodes/u1/inventory") => (200, json!({"inventory": {"cpu": {"count": 2}}, "plugin_data": {}}).to_string()),
        ("GET", "/v1/nodes/ns~h") => (200, json!({"uuid": "u1", "name": "ns~h", "target_provision_state": null, "deploy_step": {}}).to_string()),
        _ => (400, json!({"error_message": "{\"faultstring\": \"unexpected\"}"}).to_string()),
    }
    });
    let c = srv.client();
    let node = c
        .create_node(&json!({"name": "ns~h", "driver": "redfish"}))
        .unwrap();
    assert_eq!(node.uuid, "u1");
    assert!(!node.maintenance);
    let got = c.get_node("ns~h").unwrap();
    assert_eq!(got.target_provision_state_str(), "");

    let mut patch = NodePatch::new()
        .update(
            &node,
            Section::InstanceInfo,
            "image_source",
            Some(json!("http://i")),
        )
        .update(
            &node,
            Section::DriverInfo,
            "redfish_password",
            Some(json!("******")),
        )
        .update(&node, Section::Properties, "root_device", None)
        .update(&node, Section::Top, "automated_clean", Some(Value::Null))
        .remove("/instance_info/foo");
    patch.ops.push(PatchOp::Replace {
        path: "/description".into(),
        value: "d".into(),
    });
    let patched = c.patch_node("u1", &patch).unwrap().unwrap();
    assert_eq!(patched.instance_info["image_source"], "http://i");
    assert_eq!(c.patch_node("u1", &NodePatch::new()).unwrap(), None);

    c.set_power_state("u1", "soft power off", Some(180))
        .unwrap();
    c.set_maintenance("u1", "forcing deletion in baremetal-operator")
        .unwrap();
    c.unset_maintenance("u1").unwrap();
    let mut req = ProvisionStateRequest::new("clean");
    req.clean_steps = vec![json!({"interface": "raid", "step": "delete_configuration"})];
    req.configdrive = Some(json!({"user_data": "x"}));
    c.set_provision_state("u1", &req).unwrap();
    let port = c.create_port("u1", "aa:bb:cc:dd:ee:ff", true).unwrap();
    assert_eq!(port.uuid, "p1");
    let ports = c.list_ports(("address", "aa:bb:cc:dd:ee:ff")).unwrap();
    assert_eq!(ports[0].node_uuid, "u1");
    assert_eq!(c.get_inventory("u1").unwrap().inventory["cpu"]["count"], 2);
    c.delete_node("u1").unwrap();

    let seen = srv.seen();
    let find = |m: &str, t: &str| {
        seen.iter()
            .find(|s| s.method == m && s.target == t)
            .unwrap_or_else(|| panic!("{m} {t} not sent"))
            .clone()
    };
    let body = |s: Seen| serde_json::from_str::<Value>(&s.body).unwrap();
    assert_eq!(
        body(find("PATCH", "/v1/nodes/u1")),
        json!([
            {"op": "add", "path": "/instance_info/image_source", "value": "http://i"},
            {"op": "remove", "path": "/automated_clean"},
            {"op": "remove", "path": "/instance_info/foo"},
            {"op": "replace", "path": "/description", "value": "d"},
        ])
    );
    assert_eq!(
        body(find("PUT", "/v1/nodes/u1/states/power")),
        json!({"target": "soft power off", "timeout": 180})
    );
    assert_eq!(
        body(find("PUT", "/v1/nodes/u1/maintenance")),
        json!({"reason": "forcing deletion in baremetal-operator"})
    );
    assert_eq!(
        body(find("PUT", "/v1/nodes/u1/states/provision")),
        json!({"target": "clean", "configdrive": {"user_data": "x"}, "clean_steps": [{"interface": "raid", "step": "delete_configuration"}]})
    );
    assert_eq!(
        body(find("POST", "/v1/ports")),
        json!({"node_uuid": "u1", "address": "aa:bb:cc:dd:ee:ff", "pxe_enabled": true})
    );
    assert!(seen.iter().any(|s| s.target
        == "/v1/ports?address=aa%3Abb%3Acc%3Add%3Aee%3Aff&fields=node_uuid%2Cuuid%2Caddress"));
    find("DELETE", "/v1/nodes/u1/maintenance");
    find("DELETE", "/v1/nodes/u1");
}

#[test]
fn node_decodes_nulls_and_partial_fields() {
    let n: Node = serde_json::from_value(
        json!({"uuid": null, "maintenance": null, "instance_info": null, "properties": {"a": 1}}),
    )
    .unwrap();
    assert_eq!(n.uuid, "");
    assert!(!n.maintenance);
    assert!(n.instance_info.is_empty());
    assert_eq!(n.properties["a"], 1);
}

#[test]
fn drivers_are_cached() {
    let srv = ironic("1.110");
    let c = srv.client();
    c.check_ready().unwrap();
    c.drivers().unwrap();
    assert_eq!(c.request_count(), 2);
    c.reset_cache();
    c.drivers().unwrap();
    assert_eq!(c.request_count(), 4);
}

/// A client from the process environment (`IRONIC_ENDPOINT` and friends).
fn client_from_env() -> IronicClient {
    IronicClient::new(IronicConfig::from_lookup(|k| std::env::var(k).ok()).unwrap()).unwrap()
}

/// Against a real Ironic: `scripts/test.sh` runs these with `--include-ignored` once the lab is
/// up (by hand: `scripts/ironic/start-ironic.sh`, `. .state/ironic/ironic-6385/bmhctl.env`,
/// `cargo test -p ironic-provisioner --lib -- --include-ignored`). Without
/// IRONIC_ENDPOINT they fail.
#[test]
#[ignore = "needs a running Ironic (IRONIC_ENDPOINT)"]
fn real_ironic_lists_drivers() {
    let c = client_from_env();
    let v = c.api_version().unwrap();
    assert!(v.minor >= 89);
    let drivers = c.list_drivers().unwrap();
    assert!(!drivers.is_empty(), "no drivers");
    eprintln!(
        "ironic {:?} at {} drivers {:?}",
        v,
        c.endpoint(),
        drivers.iter().map(|d| &d.name).collect::<Vec<_>>()
    );
    let _ = c.list_nodes(super::CAPACITY_FIELDS, None).unwrap();
    let err = c.get_node("bmhctl-no-such-node").unwrap_err();
    assert!(err.is_not_found(), "{err}");
}

/// Round trip of the typed calls on a real Ironic (see `real_ironic_lists_drivers`).
#[test]
#[ignore = "needs a running Ironic (IRONIC_ENDPOINT)"]
fn real_ironic_node_round_trip() {
    let c = client_from_env();
    let name = format!("bmhctl-test~client-{}", std::process::id());
    let node = c
        .create_node(&json!({
            "name": name, "driver": "fake-hardware",
            "driver_info": {"fake_password": "x"},
            "properties": {"cpu_arch": "x86_64"},
        }))
        .unwrap();
    assert_eq!(node.provision_state, "enroll");
    assert_eq!(c.get_node(&name).unwrap().uuid, node.uuid);
    let mac = format!(
        "52:54:00:{:02x}:{:02x}:{:02x}",
        std::process::id() % 256,
        (std::process::id() >> 8) % 256,
        7
    );
    let port = c.create_port(&node.uuid, &mac, true).unwrap();
    let ports = c.list_ports(("address", &mac)).unwrap();
    assert_eq!(ports.len(), 1);
    assert_eq!(ports[0].uuid, port.uuid);
    let patch = NodePatch::new()
        .update(
            &node,
            Section::InstanceInfo,
            "image_source",
            Some(json!("http://i/img")),
        )
        .update(
            &node,
            Section::Properties,
            "cpu_arch",
            Some(json!("x86_64")),
        );
    assert_eq!(patch.ops.len(), 1);
    let patched = c.patch_node(&node.uuid, &patch).unwrap().unwrap();
    assert_eq!(patched.instance_info["image_source"], "http://i/img");
    c.set_maintenance(&node.uuid, "bmhctl test").unwrap();
    assert!(c.get_node(&node.uuid).unwrap().maintenance);
    c.unset_maintenance(&node.uuid).unwrap();
    c.set_provision_state(&node.uuid, &ProvisionStateRequest::new("manage"))
        .unwrap();
    let mut state = String::new();
    for _ in 0..100 {
        let n = c.get_node(&node.uuid).unwrap();
        state = n.provision_state;
        if state == "manageable" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(state, "manageable");
    c.set_power_state(&node.uuid, "power on", None).unwrap();
    let err = c.get_inventory(&node.uuid).unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let before = c.request_count();
    c.delete_node(&node.uuid).unwrap();
    assert_eq!(c.request_count(), before + 1);
    assert!(c.get_node(&node.uuid).unwrap_err().is_not_found());
}
