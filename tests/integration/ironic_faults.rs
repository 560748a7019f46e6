//! The real bmhctl and the real `ironic-provisioner.so` against an in-process fake Ironic, for
//! faults a real Ironic can't be made to produce on demand: a deploy that fails with
//! `last_error`, a failed inspection, 5xx and 409 storms, a node stuck in a wait state.
//!
//! The fake is a minimal Ironic of its own: nodes created by `POST /v1/nodes`, provision-state
//! changes that happen at once, power, maintenance, ports, `validate`; API 1.95. Its knobs make
//! a deployment or an inspection fail, leave a node in `inspect wait` for ever, or answer chosen
//! requests with an error status. It counts what it received, so a test can bound the requests
//! of a run.
//!
//! bmhctl runs at `BMHCTL_TIME_SCALE=0`: BMO's delays are not slept but summed, and `--timeout`
//! bounds that sum (docs/decisions.md, "Time"), so a run that would take minutes of BMO time
//! takes well under a second, and the request counts follow BMO's delays exactly as they would
//! in real time.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const IMAGE_URL: &str = "http://images.example/os.qcow2";
const CHECKSUM: &str = "abc123";
const DEPLOY_ERROR: &str = "Deploy step deploy.write_image failed: Image http://images.example/os.qcow2 could not be downloaded: 404 Not Found";

// ------------------------------------------------------------------------ the plugin

/// `ironic-provisioner.so`, built once per test run with the cargo that runs the tests.
fn ironic_plugin() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| crate::lab::cdylib("ironic-provisioner"))
}

// ---------------------------------------------------------------------------- the fake

/// What the fake got.
#[derive(Debug, Clone)]
struct Request {
    method: String,
    /// Path and query.
    target: String,
    body: String,
}

/// Fault injection.
#[derive(Debug, Clone, Default)]
struct Knobs {
    /// A deployment (`active`) ends in `deploy failed` with this `last_error`.
    deploy_error: Option<String>,
    /// An inspection ends in `inspect failed` with this `last_error`.
    inspect_error: Option<String>,
    /// An inspection never ends: the node stays in `inspect wait`.
    inspection_hangs: bool,
    /// `(method, path prefix below /v1/, status)`: answered with `status` and `fault_message`.
    faults: Vec<(&'static str, &'static str, u16)>,
    fault_message: String,
    /// `(method, path prefix below /v1/)`: never answered (the connection is held 5 s).
    hangs: Vec<(&'static str, &'static str)>,
}

#[derive(Default)]
struct Ironic {
    knobs: Knobs,
    nodes: BTreeMap<String, Value>,
    ports: Vec<Value>,
    requests: Vec<Request>,
}

struct FakeIronic {
    endpoint: String,
    state: Arc<Mutex<Ironic>>,
}

impl FakeIronic {
    fn start(knobs: Knobs) -> FakeIronic {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake Ironic");
        let endpoint = format!("http://{}/v1/", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(Ironic {
            knobs,
            ..Default::default()
        }));
        let st = state.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { break };
                let st = st.clone();
                std::thread::spawn(move || serve(conn, &st));
            }
        });
        FakeIronic { endpoint, state }
    }

    fn requests(&self) -> Vec<Request> {
        self.state.lock().unwrap().requests.clone()
    }

    fn count(&self, method: &str, target_prefix: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.method == method && r.target.starts_with(target_prefix))
            .count()
    }

    /// The targets of every provision-state change, in order.
    fn provision_targets(&self) -> Vec<String> {
        self.requests()
            .iter()
            .filter(|r| r.method == "PUT" && r.target.ends_with("/states/provision"))
            .map(|r| {
                serde_json::from_str::<Value>(&r.body).unwrap()["target"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }

    fn node(&self) -> Value {
        let st = self.state.lock().unwrap();
        assert_eq!(st.nodes.len(), 1, "one node: {:?}", st.nodes);
        st.nodes.values().next().unwrap().clone()
    }
}

/// One request per connection (`Connection: close`), as plain HTTP/1.1.
fn serve(conn: TcpStream, st: &Mutex<Ironic>) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut len = 0;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':')
            && k.trim().eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let req = Request {
        method,
        target,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let answer = {
        let mut st = st.lock().unwrap();
        st.requests.push(req.clone());
        let rest = req.target.strip_prefix("/v1/").unwrap_or("");
        let hangs = st
            .knobs
            .hangs
            .iter()
            .any(|(m, prefix)| *m == req.method && rest.starts_with(prefix));
        (!hangs).then(|| st.answer(&req))
    };
    let Some((status, body)) = answer else {
        std::thread::sleep(Duration::from_secs(5));
        return;
    };
    let resp = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut conn = conn;
    let _ = conn.write_all(resp.as_bytes());
}

fn error_body(message: &str) -> String {
    json!({"error_message": json!({"faultstring": message, "faultcode": "Client", "debuginfo": null}).to_string()})
        .to_string()
}

fn query_value(query: &str, key: &str) -> Option<String> {
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| v.replace("%3A", ":").replace("%3a", ":"))
    })
}

fn apply_patch(node: &mut Value, ops: &Value) {
    for op in ops.as_array().into_iter().flatten() {
        let path = op["path"].as_str().unwrap_or("");
        let parts: Vec<String> = path
            .trim_start_matches('/')
            .split('/')
            .map(|p| p.replace("~1", "/").replace("~0", "~"))
            .collect();
        let (last, parents) = parts.split_last().unwrap();
        let mut target = &mut *node;
        for p in parents {
            if !target[p.as_str()].is_object() {
                target[p.as_str()] = json!({});
            }
            target = &mut target[p.as_str()];
        }
        let obj = target.as_object_mut().unwrap();
        if op["op"] == "remove" {
            obj.remove(last);
        } else {
            obj.insert(last.clone(), op["value"].clone());
        }
    }
}

impl Ironic {
    fn answer(&mut self, r: &Request) -> (u16, String) {
        let (path, query) = r.target.split_once('?').unwrap_or((r.target.as_str(), ""));
        let rest = path.strip_prefix("/v1/").unwrap_or(path);
        if let Some((_, _, status)) = self
            .knobs
            .faults
            .iter()
            .find(|(m, prefix, _)| *m == r.method && rest.starts_with(prefix))
        {
            return (*status, error_body(&self.knobs.fault_message));
        }
        let body: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
        let segs: Vec<&str> = rest.split('/').collect();
        match (r.method.as_str(), segs.as_slice()) {
            ("GET", [""]) => (
                200,
                json!({"id": "v1", "version": {"id": "v1", "version": "1.95", "min_version": "1.1", "status": "CURRENT"}})
                    .to_string(),
            ),
            ("GET", ["drivers"]) => (
                200,
                json!({"drivers": [{"name": "fake-hardware", "hosts": ["fake"], "type": "dynamic"}]})
                    .to_string(),
            ),
            ("GET", ["nodes"]) => {
                let nodes: Vec<&Value> = self.nodes.values().collect();
                (200, json!({ "nodes": nodes }).to_string())
            }
            ("POST", ["nodes"]) => {
                let uuid = format!("5eed0000-0000-4000-8000-{:012}", self.nodes.len() + 1);
                let mut node = json!({
                    "uuid": uuid,
                    "provision_state": "enroll",
                    "target_provision_state": null,
                    "power_state": "power off",
                    "target_power_state": null,
                    "last_error": null,
                    "maintenance": false,
                    "fault": null,
                    "instance_uuid": null,
                    "instance_info": {},
                    "driver_info": {},
                    "properties": {},
                    "automated_clean": null,
                });
                for (k, v) in body.as_object().unwrap() {
                    node[k.as_str()] = v.clone();
                }
                self.nodes.insert(uuid, node.clone());
                (201, node.to_string())
            }
            ("GET", ["ports"]) => {
                let address = query_value(query, "address");
                let node = query_value(query, "node_uuid");
                let ports: Vec<&Value> = self
                    .ports
                    .iter()
                    .filter(|p| address.as_ref().is_none_or(|a| p["address"] == a.as_str()))
                    .filter(|p| node.as_ref().is_none_or(|n| p["node_uuid"] == n.as_str()))
                    .collect();
                (200, json!({ "ports": ports }).to_string())
            }
            ("POST", ["ports"]) => {
                let port = json!({
                    "uuid": format!("p{}", self.ports.len()),
                    "node_uuid": body["node_uuid"],
                    "address": body["address"],
                });
                self.ports.push(port.clone());
                (201, port.to_string())
            }
            (method, ["nodes", ident, more @ ..]) => {
                let Some(uuid) = self
                    .nodes
                    .values()
                    .find(|n| n["uuid"] == *ident || n["name"] == *ident)
                    .map(|n| n["uuid"].as_str().unwrap().to_string())
                else {
                    return (404, error_body(&format!("Node {ident} could not be found.")));
                };
                if (method, more) == ("DELETE", &[][..]) {
                    self.nodes.remove(&uuid);
                    return (204, String::new());
                }
                let knobs = self.knobs.clone();
                let node = self.nodes.get_mut(&uuid).unwrap();
                match (method, more) {
                    ("GET", []) => (200, node.to_string()),
                    ("PATCH", []) => {
                        apply_patch(node, &body);
                        (200, node.to_string())
                    }
                    ("PUT", ["states", "provision"]) => {
                        let target = body["target"].as_str().unwrap_or("");
                        match transition(node, target, &knobs) {
                            Ok(()) => (202, String::new()),
                            Err(m) => (400, error_body(&m)),
                        }
                    }
                    ("PUT", ["states", "power"]) => {
                        let on = matches!(body["target"].as_str(), Some("power on" | "rebooting"));
                        node["power_state"] = json!(if on { "power on" } else { "power off" });
                        (202, String::new())
                    }
                    ("PUT", ["maintenance"]) => {
                        node["maintenance"] = json!(true);
                        (202, String::new())
                    }
                    ("DELETE", ["maintenance"]) => {
                        node["maintenance"] = json!(false);
                        (202, String::new())
                    }
                    ("GET", ["validate"]) => (
                        200,
                        json!({"boot": {"result": true}, "deploy": {"result": true}, "power": {"result": true}})
                            .to_string(),
                    ),
                    ("GET", ["inventory"]) => (404, error_body("No inventory")),
                    ("GET", ["bios"]) => (200, json!({"bios": []}).to_string()),
                    ("GET", ["firmware"]) => (200, json!({"firmware": []}).to_string()),
                    _ => (405, error_body("not supported by the fake")),
                }
            }
            _ => (404, error_body("not supported by the fake")),
        }
    }
}

/// A provision-state verb, carried out at once (Ironic's states, no conductor in between).
fn transition(node: &mut Value, target: &str, knobs: &Knobs) -> Result<(), String> {
    let from = node["provision_state"].as_str().unwrap_or("").to_string();
    let mut set = |state: &str, last_error: Option<&str>| {
        node["provision_state"] = json!(state);
        node["target_provision_state"] = Value::Null;
        node["last_error"] = json!(last_error);
    };
    match (target, from.as_str()) {
        (
            "manage",
            "enroll" | "available" | "manageable" | "inspect failed" | "clean failed"
            | "adopt failed",
        ) => set("manageable", None),
        ("inspect", "manageable" | "inspect failed") => {
            if knobs.inspection_hangs {
                set("inspect wait", None);
                node["target_provision_state"] = json!("manageable");
            } else if let Some(e) = &knobs.inspect_error {
                set("inspect failed", Some(e));
            } else {
                set("manageable", None);
                node["inspection_finished_at"] = json!("2026-01-01T00:00:00+00:00");
            }
        }
        ("provide", "manageable") => set("available", None),
        ("active", "available" | "deploy failed") => match &knobs.deploy_error {
            Some(e) => set("deploy failed", Some(e)),
            None => {
                set("active", None);
                node["power_state"] = json!("power on");
            }
        },
        ("deleted", "active" | "deploy failed" | "wait call-back" | "error") => {
            set("available", None);
            node["power_state"] = json!("power off");
            node["instance_info"] = json!({});
            node["instance_uuid"] = Value::Null;
        }
        ("adopt", "manageable" | "adopt failed") => set("active", None),
        ("abort", "inspect wait") => {
            set("inspect failed", Some("Inspection was aborted by request."))
        }
        ("abort", "clean wait") => set("clean failed", Some("Clean operation aborted")),
        ("abort", "wait call-back") => set("deploy failed", Some("Deploy operation aborted")),
        _ => {
            return Err(format!(
                "The requested action \"{target}\" can not be performed on node in provision state \"{from}\"."
            ));
        }
    }
    Ok(())
}

// ----------------------------------------------------------------------------- running

const HOSTS: &str = "apiVersion: v1
kind: Secret
metadata:
  name: bmc-secret
data:
  username: YWRtaW4=
  password: cGFzc3dvcmQ=
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: worker-0
spec:
  online: true
  bootMACAddress: 52:54:00:00:00:01
  bmc:
    address: fake-hardware://worker-0
    credentialsName: bmc-secret
  image:
    url: http://images.example/os.qcow2
    checksum: abc123
";

/// A directory with `hosts.yaml`, the staged plugin and an empty credentials root.
struct Dir {
    dir: tempfile::TempDir,
}

impl Dir {
    fn new() -> Dir {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("hosts.yaml"), HOSTS).unwrap();
        std::fs::create_dir(dir.path().join("plugins")).unwrap();
        std::fs::create_dir(dir.path().join("auth")).unwrap();
        std::fs::copy(
            ironic_plugin(),
            dir.path().join("plugins/ironic-provisioner.so"),
        )
        .expect("stage ironic-provisioner.so");
        Dir { dir }
    }

    fn hosts_yaml(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("hosts.yaml")).unwrap()
    }
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The only host's entry of `-o json`.
    fn host(&self) -> Value {
        let v: Value = serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", self.stdout, self.stderr));
        v["hosts"][0].clone()
    }
}

/// Runs `bmhctl provision` against `ironic` with the real plugin, at time scale 0. A run that
/// does not end within two minutes of wall time has hung: it is killed and the test fails.
fn provision(dir: &Dir, ironic: &FakeIronic, args: &[&str]) -> Run {
    provision_env(dir, ironic, args, &[])
}

/// [`provision`] with more environment variables.
fn provision_env(dir: &Dir, ironic: &FakeIronic, args: &[&str], envs: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"));
    cmd.current_dir(dir.dir.path())
        .args(["provision", "--provisioner=ironic"])
        .args(args)
        .arg("hosts.yaml")
        .env("BMHCTL_TIME_SCALE", "0")
        .env("BMHCTL_SEED", "1")
        .env("PROVISIONER_PLUGIN_DIR", dir.dir.path().join("plugins"))
        .env("IRONIC_ENDPOINT", &ironic.endpoint)
        .env("METAL3_AUTH_ROOT_DIR", dir.dir.path().join("auth"))
        .env("IRONIC_CACERT_FILE", "/nonexistent/ca.crt")
        .env("IRONIC_CLIENT_CERT_FILE", "/nonexistent/tls.crt")
        .env("IRONIC_CLIENT_PRIVATE_KEY_FILE", "/nonexistent/tls.key")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in [
        "BMHCTL_PROVISIONER",
        "BMHCTL_LOG",
        "IRONIC_NAME",
        "IRONIC_NAMESPACE",
        "IRONIC_INSECURE",
        "IRONIC_CLIENT_TIMEOUT",
        "IRONIC_EXTERNAL_URL_V6",
        "DEPLOY_KERNEL_URL",
        "DEPLOY_RAMDISK_URL",
        "DEPLOY_ISO_URL",
        "PROVISIONING_LIMIT",
        "PROVISIONING_NETWORK_DISABLED",
        "LIVE_ISO_FORCE_PERSISTENT_BOOT_DEVICE",
        "DIRECT_DEPLOY_FORCE_PERSISTENT_BOOT_DEVICE",
        "BMO_CONCURRENCY",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(envs.iter().copied());
    let mut child = cmd.spawn().expect("start bmhctl");
    // drain the pipes while waiting, so a chatty run can't block on a full pipe
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for bmhctl") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "bmhctl {args:?} hung (killed after 120 s); stderr:\n{}",
                err_reader.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}

#[track_caller]
fn expect_code(run: &Run, code: i32) {
    assert_eq!(
        run.code, code,
        "exit code\n--- stdout\n{}\n--- stderr\n{}",
        run.stdout, run.stderr
    );
}

/// The host's `status` as written to the file.
fn file_status(dir: &Dir) -> Value {
    let docs: Vec<Value> =
        serde_saphyr::from_multiple(&dir.hosts_yaml()).expect("the file is YAML");
    let host = docs
        .into_iter()
        .find(|d| d["kind"] == "BareMetalHost")
        .expect("the host");
    assert!(host["status"].is_object(), "no status written: {host:#}");
    host["status"].clone()
}

// ------------------------------------------------------------------------------- tests

#[test]
fn a_healthy_fake_ironic_provisions_the_host() {
    let ironic = FakeIronic::start(Knobs::default());
    let dir = Dir::new();
    // The whole way takes about 15 s of BMO time against an Ironic that acts at once.
    let run = provision(&dir, &ironic, &["-o", "json", "--timeout", "1m"]);
    expect_code(&run, 0);
    let h = run.host();
    assert_eq!(h["state"], "provisioned", "{h:#}");
    assert_eq!(h["reached"], true, "{h:#}");
    assert_eq!(h["errorType"], "", "{h:#}");
    let node = ironic.node();
    assert_eq!(h["provisioningID"], node["uuid"], "{h:#}");
    assert_eq!(node["name"], "default~worker-0");
    assert_eq!(node["provision_state"], "active");
    assert_eq!(node["instance_info"]["image_source"], IMAGE_URL);
    assert_eq!(node["instance_info"]["image_checksum"], CHECKSUM);
    assert_eq!(
        ironic.provision_targets(),
        ["manage", "inspect", "provide", "active"]
    );
    assert_eq!(ironic.count("POST", "/v1/nodes"), 1);
    assert_eq!(ironic.count("POST", "/v1/ports"), 1);
    let yaml = dir.hosts_yaml();
    assert!(yaml.contains("    state: provisioned\n"), "{yaml}");
}

#[test]
fn a_failed_deploy_shows_last_error_in_the_file_and_the_result_at_once() {
    let knobs = Knobs {
        deploy_error: Some(DEPLOY_ERROR.into()),
        ..Default::default()
    };
    let message = format!(
        "Image provisioning failed (url: {IMAGE_URL}, checksum: {CHECKSUM}): {DEPLOY_ERROR}"
    );

    // -o json. The way to the deployment takes about 15 s of BMO time; BMO backs off 1-2
    // minutes after the first failure, so a 1-minute timeout stops the run right there: what
    // is shown comes from the first failure.
    let ironic = FakeIronic::start(knobs.clone());
    let dir = Dir::new();
    let run = provision(&dir, &ironic, &["-o", "json", "--timeout", "1m"]);
    expect_code(&run, 1);
    let h = run.host();
    assert_eq!(h["state"], "provisioning", "{h:#}");
    assert_eq!(h["reached"], false, "{h:#}");
    assert_eq!(h["operationalStatus"], "error", "{h:#}");
    assert_eq!(h["errorType"], "provisioning error", "{h:#}");
    assert_eq!(h["errorMessage"], message.as_str(), "{h:#}");
    assert_eq!(h["errorCount"], 1, "{h:#}");
    assert_eq!(h["reason"], message.as_str(), "{h:#}");
    assert_eq!(
        ironic
            .provision_targets()
            .iter()
            .filter(|t| *t == "active")
            .count(),
        1,
        "one deployment: {:?}",
        ironic.provision_targets()
    );
    let status = file_status(&dir);
    assert_eq!(status["errorType"], "provisioning error", "{status:#}");
    assert_eq!(status["errorMessage"], message.as_str(), "{status:#}");
    assert_eq!(status["errorCount"], 1, "{status:#}");
    assert_eq!(status["operationalStatus"], "error", "{status:#}");
    assert_eq!(
        status["provisioning"]["state"], "provisioning",
        "{status:#}"
    );

    // The table says the same.
    let ironic = FakeIronic::start(knobs);
    let dir = Dir::new();
    let run = provision(&dir, &ironic, &["--timeout", "1m"]);
    expect_code(&run, 1);
    let row = run
        .stdout
        .lines()
        .find(|l| l.contains("worker-0"))
        .unwrap_or_else(|| panic!("no row for worker-0:\n{}", run.stdout));
    assert!(row.contains("provisioning"), "{row}");
    assert!(row.contains("failed (goal provisioned)"), "{}", run.stdout);
    assert!(
        row.contains(&format!("provisioning error: {message}")),
        "{}",
        run.stdout
    );
}

/// BMO's `Provision` answers a `deploy failed` node without `last_error` (Ironic has not written
/// it yet) with "again at once", and its controller records no error for it (`actionContinue`
/// of 0 s, which clears the error). controller-runtime's rate limiter then spaces the passes 5
/// ms, 10 ms, 20 ms, ... up to 1000 s: the host must not send Ironic requests back to back.
#[test]
fn a_deploy_failed_node_without_last_error_is_retried_through_the_rate_limiter() {
    for timing in ["change", "bmo"] {
        let ironic = FakeIronic::start(Knobs {
            deploy_error: Some(String::new()),
            ..Default::default()
        });
        let dir = Dir::new();
        // About 15 s of BMO time to the deployment, then ten minutes in `deploy failed`.
        let run = provision(
            &dir,
            &ironic,
            &["-o", "json", "--timeout", "615s", "--timing", timing],
        );
        expect_code(&run, 1);
        let h = run.host();
        assert_eq!(h["state"], "provisioning", "{timing}: {h:#}");
        assert_eq!(h["errorType"], "", "{timing}: {h:#}");
        assert_eq!(
            h["reason"], "still \"provisioning\" when the timeout ran out",
            "{timing}: {h:#}"
        );
        assert_eq!(ironic.node()["provision_state"], "deploy failed");
        let requests = ironic.requests();
        let deployed = requests
            .iter()
            .position(|r| r.target.ends_with("/states/provision") && r.body.contains("active"))
            .expect("a deployment");
        // 5 ms × (2^17 − 1) ≈ 655 s: seventeen passes fill the ten minutes. Back to back
        // they would be thousands.
        let passes = h["passes"].as_u64().expect("passes");
        assert!((20..=40).contains(&passes), "{timing}: {passes} passes");
        // BMO's timing reads the node on each of them; the change timing reads it once and
        // then follows the node listing.
        let after = requests.len() - deployed - 1;
        let want = if timing == "bmo" { 10..=20 } else { 1..=20 };
        assert!(
            want.contains(&after),
            "{timing}: {after} requests in 10 minutes of deploy failed: {:?}",
            requests[deployed + 1..]
                .iter()
                .map(|r| format!("{} {}", r.method, r.target))
                .collect::<Vec<_>>()
        );
        // Nothing is sent again: the node is only read.
        assert!(
            requests[deployed + 1..].iter().all(|r| r.method == "GET"),
            "{timing}"
        );
        let status = file_status(&dir);
        assert_eq!(
            status["provisioning"]["state"], "provisioning",
            "{status:#}"
        );
        assert_eq!(status["errorMessage"], "", "{status:#}");
    }
}

#[test]
fn a_failed_inspection_shows_last_error() {
    let error = "Inspection failed: the BMC did not answer in time";
    let ironic = FakeIronic::start(Knobs {
        inspect_error: Some(error.into()),
        ..Default::default()
    });
    let dir = Dir::new();
    let run = provision(&dir, &ironic, &["-o", "json", "--timeout", "1m"]);
    expect_code(&run, 1);
    let h = run.host();
    assert_eq!(h["state"], "inspecting", "{h:#}");
    assert_eq!(h["errorType"], "inspection error", "{h:#}");
    assert_eq!(h["errorMessage"], error, "{h:#}");
    let status = file_status(&dir);
    assert_eq!(status["errorType"], "inspection error", "{status:#}");
    assert_eq!(status["errorMessage"], error, "{status:#}");
    assert_eq!(status["operationalStatus"], "error", "{status:#}");
}

#[test]
fn a_5xx_storm_ends_in_the_error_at_the_timeout() {
    let msg = "Database is locked";
    let ironic = FakeIronic::start(Knobs {
        faults: vec![("PUT", "nodes/", 503)],
        fault_message: msg.into(),
        ..Default::default()
    });
    let dir = Dir::new();
    let run = provision(&dir, &ironic, &["-o", "json", "--timeout", "2m"]);
    expect_code(&run, 1);
    let h = run.host();
    let uuid = ironic.node()["uuid"].as_str().unwrap().to_string();
    let want = format!(
        "failed to change provisioning state to \"manage\": PUT /v1/nodes/{uuid}/states/provision: 503 Service Unavailable: {msg}"
    );
    assert_eq!(h["reached"], false, "{h:#}");
    assert_eq!(h["state"], "registering", "{h:#}");
    assert!(
        h["reason"].as_str().unwrap().contains(&want),
        "want {want:?} in {h:#}"
    );
    // A transient error is BMO's actionError: retried with the work queue's backoff (5 ms·2^k
    // after the k-th rate-limited requeue, docs/decisions.md), not counted as a host error. The
    // two zero-delay requeues before the first PUT (BMO's `Requeue: true`) count too, as in
    // controller-runtime: n attempts span 5 ms·(2^(n+2) - 4) of BMO time, 81.9 s after 12 and
    // 163.8 s after 13, so the 2-minute timeout ends the run after exactly 13 attempts.
    assert_eq!(ironic.count("PUT", "/v1/nodes/"), 13);
    assert_eq!(h["errorType"], "", "{h:#}");
    assert_eq!(h["errorCount"], 0, "{h:#}");
    // the table says it too
    let ironic = FakeIronic::start(Knobs {
        faults: vec![("PUT", "nodes/", 503)],
        fault_message: msg.into(),
        ..Default::default()
    });
    let dir = Dir::new();
    let run = provision(&dir, &ironic, &["--timeout", "2m"]);
    expect_code(&run, 1);
    assert!(
        run.stdout
            .contains("503 Service Unavailable: Database is locked"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_host_whose_passes_fail_says_why_without_v_in_the_result_and_in_describe() {
    let msg = "Database is locked";
    let ironic = FakeIronic::start(Knobs {
        faults: vec![("PUT", "nodes/", 503)],
        fault_message: msg.into(),
        ..Default::default()
    });
    let dir = Dir::new();
    let run = provision(&dir, &ironic, &["-o", "json", "--timeout", "2m"]);
    expect_code(&run, 1);
    // The first error is said once on the progress stream, though every pass failed with it.
    let said: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("pass failed:"))
        .collect();
    assert_eq!(said.len(), 1, "{}", run.stderr);
    assert!(said[0].contains(msg), "{}", run.stderr);
    let h = run.host();
    let pass_error = h["passError"].as_str().unwrap();
    assert!(pass_error.ends_with(msg), "{h:#}");
    // Still BMO's status: no host error.
    assert_eq!(h["errorType"], "", "{h:#}");
    let describe = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
        .current_dir(dir.dir.path())
        .args(["describe", "-f", "hosts.yaml", "worker-0"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&describe.stdout);
    assert!(
        text.contains(&format!("Last Pass Error:    {pass_error}\n")),
        "{text}"
    );
}

#[test]
fn a_409_storm_is_retried_every_3s_and_is_no_error() {
    let ironic = FakeIronic::start(Knobs {
        faults: vec![("PUT", "nodes/", 409), ("PATCH", "nodes/", 409)],
        fault_message: "Node is locked by host conductor-1, please retry after the current operation is completed.".into(),
        ..Default::default()
    });
    let dir = Dir::new();
    // BMO's timing: a pass per BMO requeue.
    let run = provision(
        &dir,
        &ironic,
        &["-o", "json", "--timeout", "1m", "--timing", "bmo"],
    );
    expect_code(&run, 1);
    let h = run.host();
    assert_eq!(h["state"], "registering", "{h:#}");
    assert_eq!(h["errorType"], "", "{h:#}");
    assert_eq!(h["errorMessage"], "", "{h:#}");
    assert_eq!(h["errorCount"], 0, "{h:#}");
    assert_eq!(
        h["reason"], "still \"registering\" when the timeout ran out",
        "{h:#}"
    );
    // One `manage` per pass, a pass every 3-3.75 s (`retry(3s)` and its jitter): the minute
    // holds at least 60/3.75 = 16 and at most 60/3 + 1 = 21 of them (the last pass, which
    // crosses the timeout, still asks).
    let manages = ironic.provision_targets();
    assert!(
        (16..=21).contains(&manages.len()),
        "{} requests in 1 minute",
        manages.len()
    );
    assert!(manages.iter().all(|t| t == "manage"), "{manages:?}");
    let status = file_status(&dir);
    assert_eq!(status["provisioning"]["state"], "registering", "{status:#}");
    assert!(
        status["errorMessage"].as_str().unwrap_or("").is_empty(),
        "{status:#}"
    );
}

#[test]
fn a_node_stuck_in_inspect_wait_is_polled_every_10s_not_busy_looped() {
    let ironic = FakeIronic::start(Knobs {
        inspection_hangs: true,
        ..Default::default()
    });
    let dir = Dir::new();
    // BMO's pass-by-pass timing: one GET per pass, a pass per BMO requeue.
    let run = provision(
        &dir,
        &ironic,
        &["-o", "json", "--timeout", "10m", "--timing", "bmo"],
    );
    expect_code(&run, 1);
    let h = run.host();
    assert_eq!(h["state"], "inspecting", "{h:#}");
    assert_eq!(h["errorType"], "", "{h:#}");
    assert_eq!(
        h["reason"], "still \"inspecting\" when the timeout ran out",
        "{h:#}"
    );
    assert_eq!(ironic.node()["provision_state"], "inspect wait");
    assert_eq!(
        ironic.provision_targets(),
        ["manage", "inspect"],
        "never aborted"
    );
    // Every pass reads the node once; in `inspect wait` a pass comes every 10-12.5 s
    // (`continue(10s)` and its jitter), so 10 minutes hold at most 60 of them, and at least
    // 48; the few passes before add a few more. A busy loop would make thousands.
    let uuid = ironic.node()["uuid"].as_str().unwrap().to_string();
    let gets = ironic.count("GET", &format!("/v1/nodes/{uuid}"));
    let passes = h["passes"].as_u64().unwrap() as usize;
    assert!(gets <= 60 + 10, "{gets} GETs of the node in 10 minutes");
    assert!(passes <= 60 + 10, "{passes} passes in 10 minutes");
    assert!(gets >= 48, "{gets} GETs: the host was polled");
    // and little else (the first pass of a host with no status looks its node up too: a
    // node an earlier run left is refused at once)
    let total = ironic.requests().len();
    assert!(
        total <= gets + 24,
        "{total} requests, {gets} of them GETs of the node"
    );
}

#[test]
fn requests_that_time_out_end_in_the_error_at_the_timeout() {
    let ironic = FakeIronic::start(Knobs {
        hangs: vec![("PUT", "nodes/")],
        ..Default::default()
    });
    let dir = Dir::new();
    let run = provision_env(
        &dir,
        &ironic,
        &["-o", "json", "--timeout", "2m"],
        &[("IRONIC_CLIENT_TIMEOUT", "200ms")],
    );
    expect_code(&run, 1);
    let h = run.host();
    let uuid = ironic.node()["uuid"].as_str().unwrap().to_string();
    let want = format!(
        "failed to change provisioning state to \"manage\": PUT /v1/nodes/{uuid}/states/provision: "
    );
    let reason = h["reason"].as_str().unwrap();
    assert!(reason.contains(&want), "want {want:?} in {h:#}");
    assert!(reason.contains("timed out"), "{h:#}");
    assert_eq!(h["state"], "registering", "{h:#}");
    assert_eq!(h["errorType"], "", "{h:#}");
    // A request that timed out may be running: it is never sent again by the client, so each
    // attempt is one pass, retried with the work queue's backoff as for the 5xx storm.
    assert_eq!(ironic.count("PUT", "/v1/nodes/"), 13);
    // Each transport failure makes the next pass probe Ironic again (and bmhctl's start-up
    // probe asks once before the first pass).
    assert_eq!(ironic.count("GET", "/v1/drivers"), 14);
}

/// Change-driven timing (the default) against BMO's: at BMO's real delays, the plugin's
/// change reports (one shared node listing per second) wake each waiting pass when the node has
/// moved, and passes that the listing shows nothing new for read no node; the host ends the
/// same, sooner and with fewer node GETs.
#[test]
fn change_timing_needs_fewer_node_gets_than_bmo_timing() {
    let mut seen = Vec::new();
    for timing in ["change", "bmo"] {
        let ironic = FakeIronic::start(Knobs::default());
        let dir = Dir::new();
        let started = std::time::Instant::now();
        let run = provision_env(
            &dir,
            &ironic,
            &["-o", "json", "--timeout", "5m", "--timing", timing],
            &[("BMHCTL_TIME_SCALE", "1")],
        );
        let took = started.elapsed();
        expect_code(&run, 0);
        let h = run.host();
        assert_eq!(h["state"], "provisioned", "{timing}: {h:#}");
        assert_eq!(
            ironic.provision_targets(),
            ["manage", "inspect", "provide", "active"],
            "{timing}"
        );
        let uuid = ironic.node()["uuid"].as_str().unwrap().to_string();
        let gets = ironic.count("GET", &format!("/v1/nodes/{uuid}"));
        let listings = ironic.count("GET", "/v1/nodes?");
        eprintln!(
            "{timing}: {took:?}, {gets} node GETs, {listings} listings, {} requests",
            ironic.requests().len()
        );
        seen.push((took, gets, listings));
    }
    let (change, bmo) = (seen[0], seen[1]);
    assert!(
        change.1 < bmo.1,
        "node GETs: change {change:?}, bmo {bmo:?}"
    );
    assert!(change.0 < bmo.0, "wall: change {change:?}, bmo {bmo:?}");
    // BMO's timing lists only for the provisioning limit (`has_capacity`), as before.
    assert!(
        bmo.2 <= change.2,
        "listings: change {change:?}, bmo {bmo:?}"
    );
}
