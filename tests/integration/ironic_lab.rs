//! bmhctl against a real Ironic and a real Redfish BMC emulator (the lab of `scripts/ironic/`).
//!
//! The shared lab (one Ironic, one sushy-tools emulator) is started for the test run by
//! `scripts/test.sh` or `.ci/run`, which export `IRONIC_ENDPOINT`, `DEPLOY_ISO_URL` and
//! `METAL3_AUTH_ROOT_DIR` (and optionally `SUSHY_URL`, default `http://127.0.0.1:8000`).
//! Without them these tests FAIL: they never skip. Tests needing an Ironic configured otherwise
//! (http_basic auth, a database wiped mid-life, slow fake interfaces) start their own instance on
//! a port of their own (6395, 6405, 6445) with `scripts/ironic/start-ironic.sh` and stop it when
//! done.
//!
//! Every test takes [`serial`]: they share the emulator's systems, CPU-heavy Ironic processes
//! and the two cores of a CI machine, and run one at a time. Host names are unique per test, in
//! the namespace `ironic-lab`, and the shared lab is purged of a test's nodes before it starts.

use crate::lab::{Lab, Run};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const NS: &str = "ironic-lab";
const API_VERSION: &str = "1.89";
/// A qcow2 image for fake-hardware hosts (the fake deploy never downloads it).
const FAKE_IMAGE_URL: &str = "http://127.0.0.1:6386/images/lab-os.qcow2";
const FAKE_IMAGE_SHA256: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// One test at a time (see the module documentation).
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The lab scripts' state directory (as `scripts/ironic/lib.sh` computes it).
fn lab_state_dir() -> PathBuf {
    match std::env::var_os("BMHCTL_LAB_DIR") {
        Some(d) if !d.is_empty() => {
            let d = PathBuf::from(d);
            if d.is_absolute() { d } else { repo().join(d) }
        }
        _ => repo().join(".state/ironic"),
    }
}

// ------------------------------------------------------------------------------------- HTTP

/// A blocking HTTP call with curl (the lab scripts need curl too): `(status, body)`, status 0
/// when no HTTP answer came. Redirects are followed (the emulator redirects names to UUIDs).
fn http(
    method: &str,
    url: &str,
    auth: Option<&(String, String)>,
    body: Option<&Value>,
) -> (u16, String) {
    http_at(API_VERSION, method, url, auth, body)
}

/// [`http`] at Ironic API `version`.
fn http_at(
    version: &str,
    method: &str,
    url: &str,
    auth: Option<&(String, String)>,
    body: Option<&Value>,
) -> (u16, String) {
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "-L", "--max-time", "30", "-X", method])
        .args(["-H", &format!("X-OpenStack-Ironic-API-Version: {version}")])
        .args(["-H", "Accept: application/json", "-w", "\n%{http_code}"]);
    if let Some((user, password)) = auth {
        cmd.args(["-u", &format!("{user}:{password}")]);
    }
    if let Some(b) = body {
        cmd.args(["-H", "Content-Type: application/json", "--data-binary"])
            .arg(b.to_string());
    }
    let out = cmd
        .arg(url)
        .output()
        .expect("run curl (needed by the Ironic lab)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

fn parse(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

// ----------------------------------------------------------------------------------- Ironic

/// An Ironic of the lab: its API root, credentials, and the environment bmhctl gets for it.
struct Ironic {
    /// `http://127.0.0.1:PORT`
    root: String,
    auth: Option<(String, String)>,
    /// `IRONIC_ENDPOINT`, `DEPLOY_ISO_URL`, `METAL3_AUTH_ROOT_DIR`.
    env: BTreeMap<String, String>,
}

impl Ironic {
    fn from_env(env: BTreeMap<String, String>) -> Self {
        let endpoint = env["IRONIC_ENDPOINT"].clone();
        let root = endpoint
            .trim_end_matches('/')
            .trim_end_matches("/v1")
            .to_string();
        let auth = env.get("METAL3_AUTH_ROOT_DIR").and_then(|dir| {
            let read = |f: &str| std::fs::read_to_string(Path::new(dir).join("ironic").join(f));
            Some((read("username").ok()?, read("password").ok()?))
        });
        Ironic { root, auth, env }
    }

    fn get(&self, path: &str) -> (u16, Value) {
        let (code, body) = http(
            "GET",
            &format!("{}{path}", self.root),
            self.auth.as_ref(),
            None,
        );
        let v = if code == 200 {
            parse(&body)
        } else {
            json!(body)
        };
        (code, v)
    }

    /// The server's newest API version, as text (`1.90`) and as its minor number.
    fn max_version(&self) -> (String, u32) {
        let (_, v1) = self.get("/v1/");
        let max = v1["version"]["version"].as_str().unwrap().to_string();
        let minor = max.trim_start_matches("1.").parse().unwrap();
        (max, minor)
    }

    /// The node by name or UUID; `None` on 404.
    fn node(&self, id: &str) -> Option<Value> {
        match self.get(&format!("/v1/nodes/{id}")) {
            (200, n) => Some(n),
            (404, _) => None,
            (code, body) => panic!("GET node {id}: {code} {body}"),
        }
    }

    fn node_of(&self, name: &str) -> Value {
        self.node(&format!("{NS}~{name}"))
            .unwrap_or_else(|| panic!("no Ironic node {NS}~{name}"))
    }

    fn nodes(&self) -> Vec<Value> {
        match self.get("/v1/nodes?fields=uuid,name,provision_state,boot_interface") {
            (200, v) => v["nodes"].as_array().cloned().unwrap_or_default(),
            (code, body) => panic!("GET nodes: {code} {body}"),
        }
    }

    /// The MAC addresses of the node's ports.
    fn port_macs(&self, node_uuid: &str) -> Vec<String> {
        match self.get(&format!("/v1/ports?node_uuid={node_uuid}&fields=address")) {
            (200, v) => v["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["address"].as_str().map(str::to_string))
                .collect(),
            (code, body) => panic!("GET ports: {code} {body}"),
        }
    }

    /// Removes a node of this module left behind by an earlier, aborted run: by name, and the
    /// one owning `mac` if it is ours.
    fn purge(&self, name: &str, mac: Option<&str>) {
        let mut ids = vec![format!("{NS}~{name}")];
        if let Some(mac) = mac
            && let (200, v) = self.get(&format!("/v1/ports?address={mac}&fields=node_uuid"))
        {
            for p in v["ports"].as_array().into_iter().flatten() {
                ids.extend(p["node_uuid"].as_str().map(str::to_string));
            }
        }
        for id in ids {
            // only this module's nodes: someone else's node on the MAC is a real conflict
            let ours = |n: Value| n["name"].as_str().is_some_and(|s| s.starts_with(NS));
            if !self.node(&id).is_some_and(ours) {
                continue;
            }
            let url = format!("{}/v1/nodes/{id}", self.root);
            let auth = self.auth.as_ref();
            http("PUT", &format!("{url}/maintenance"), auth, Some(&json!({})));
            let (code, body) = http("DELETE", &url, auth, None);
            assert!(
                code == 204 || code == 404,
                "delete leftover node {id}: {code} {body}"
            );
        }
    }
}

/// The shared lab's Ironic, from the environment. Panics (the test fails) when it is not set
/// up or does not answer.
fn shared_ironic() -> Ironic {
    let Ok(endpoint) = std::env::var("IRONIC_ENDPOINT") else {
        panic!(
            "IRONIC_ENDPOINT is not set: the real-Ironic tests need the lab. Run ./scripts/test.sh \
             (it starts the lab when IRONIC_ENDPOINT is unset) or start scripts/ironic/start-ironic.sh \
             and scripts/ironic/start-sushy.sh, then `set -a; . .state/ironic/ironic-6385/bmhctl.env; set +a`"
        )
    };
    let mut env = BTreeMap::new();
    env.insert("IRONIC_ENDPOINT".to_string(), endpoint);
    for k in ["DEPLOY_ISO_URL", "METAL3_AUTH_ROOT_DIR"] {
        if let Ok(v) = std::env::var(k) {
            env.insert(k.to_string(), v);
        }
    }
    let ironic = Ironic::from_env(env);
    let (code, body) = http("GET", &format!("{}/", ironic.root), None, None);
    assert_eq!(
        code, 200,
        "Ironic at {} does not answer (IRONIC_ENDPOINT={}): {body}",
        ironic.root, ironic.env["IRONIC_ENDPOINT"]
    );
    ironic
}

/// An Ironic of the test's own on `port`, started fresh (empty database); stopped on drop.
struct OwnIronic {
    port: u16,
    envs: Vec<(String, String)>,
    ironic: Ironic,
}

impl OwnIronic {
    fn start(port: u16, envs: &[(&str, &str)]) -> Self {
        let envs: Vec<(String, String)> = envs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let ironic = start_ironic(port, &envs);
        OwnIronic { port, envs, ironic }
    }

    /// Stop it, then start it again with an empty database (the same configuration).
    fn restart_with_fresh_database(&mut self) {
        stop_ironic(self.port);
        self.ironic = start_ironic(self.port, &self.envs);
    }

    fn state_dir(&self) -> PathBuf {
        lab_state_dir().join(format!("ironic-{}", self.port))
    }
}

impl Drop for OwnIronic {
    fn drop(&mut self) {
        stop_ironic(self.port);
    }
}

fn start_ironic(port: u16, envs: &[(String, String)]) -> Ironic {
    let out = Command::new(repo().join("scripts/ironic/start-ironic.sh"))
        .arg(port.to_string())
        .current_dir(repo())
        .env("IRONIC_FRESH", "1")
        .envs(envs.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("run scripts/ironic/start-ironic.sh");
    assert!(
        out.status.success(),
        "start-ironic.sh {port} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let env_file = lab_state_dir().join(format!("ironic-{port}/bmhctl.env"));
    let text = std::fs::read_to_string(&env_file)
        .unwrap_or_else(|e| panic!("read {}: {e}", env_file.display()));
    let env = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Ironic::from_env(env)
}

fn stop_ironic(port: u16) {
    let _ = Command::new(repo().join("scripts/ironic/stop-ironic.sh"))
        .arg(port.to_string())
        .current_dir(repo())
        .output();
}

// ------------------------------------------------------------------------------ the emulator

fn sushy_url() -> String {
    std::env::var("SUSHY_URL")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "http://127.0.0.1:8000".into())
        .trim_end_matches('/')
        .to_string()
}

fn sushy_auth() -> (String, String) {
    ("admin".into(), crate::canary::lab_password())
}

/// The emulated system's `PowerState` (`On`/`Off`), read over Redfish.
fn emulator_power(system: &str) -> String {
    let url = format!("{}/redfish/v1/Systems/{system}", sushy_url());
    let (code, body) = http("GET", &url, Some(&sushy_auth()), None);
    assert_eq!(code, 200, "GET {url} (is the emulator running?): {body}");
    parse(&body)["PowerState"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn emulator_force_off(system: &str) {
    let url = format!(
        "{}/redfish/v1/Systems/{system}/Actions/ComputerSystem.Reset",
        sushy_url()
    );
    let (code, body) = http(
        "POST",
        &url,
        Some(&sushy_auth()),
        Some(&json!({"ResetType": "ForceOff"})),
    );
    assert!((200..300).contains(&code), "POST {url}: {code} {body}");
}

// ----------------------------------------------------------------------------------- bmhctl

/// The Ironic plugin, built with the cargo that runs the tests and staged in a directory of
/// its own (never a manual step).
fn plugin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let lib = crate::lab::cdylib("ironic-provisioner");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ironic-lab-plugins");
        std::fs::create_dir_all(&dir).unwrap();
        let tmp = dir.join(format!(".ironic-provisioner.so.{}", std::process::id()));
        std::fs::copy(&lib, &tmp).expect("stage the ironic plugin");
        std::fs::rename(&tmp, dir.join("ironic-provisioner.so")).unwrap();
        dir
    })
}

/// Runs bmhctl with the Ironic plugin against `ironic`; `scale` is `BMHCTL_TIME_SCALE` (BMO's
/// delays, shortened but not zero: each pass still waits for Ironic).
fn bmhctl(lab: &Lab, ironic: &Ironic, scale: &str, extra: &[(&str, &str)], args: &[&str]) -> Run {
    let mut envs = lab_env(ironic, scale);
    envs.extend_from_slice(extra);
    let mut all = vec![args[0], "--provisioner", "ironic"];
    if !args.contains(&"--timeout") {
        all.extend(["--timeout", "10m"]);
    }
    all.extend_from_slice(&args[1..]);
    lab.run_env(&all, &envs)
}

/// The environment of a bmhctl run against `ironic` with the Ironic plugin.
fn lab_env<'a>(ironic: &'a Ironic, scale: &'a str) -> Vec<(&'a str, &'a str)> {
    let mut envs: Vec<(&str, &str)> = vec![
        ("PROVISIONER_PLUGIN_DIR", plugin_dir().to_str().unwrap()),
        ("BMHCTL_TIME_SCALE", scale),
        ("PROVISIONING_LIMIT", "20"),
        ("DEPLOY_ISO_URL", ""),
        ("METAL3_AUTH_ROOT_DIR", "/nonexistent"),
    ];
    envs.extend(ironic.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    envs
}

/// The state transitions bmhctl printed for `host`, as `"a -> b"`.
fn transitions(run: &Run, host: &str) -> Vec<String> {
    let prefix = format!("{NS}/{host}: ");
    run.stderr
        .lines()
        // Plain progress lines start with a UTC timestamp.
        .map(|l| match l.split_once(' ') {
            Some((time, rest)) if time.ends_with('Z') && time.contains('T') => rest,
            _ => l,
        })
        .filter_map(|l| l.strip_prefix(&prefix))
        .filter(|l| l.contains(" -> ") && !l.starts_with("event "))
        .map(str::to_string)
        .collect()
}

#[track_caller]
fn assert_transitions(run: &Run, host: &str, want: &[&str]) {
    assert_eq!(
        transitions(run, host),
        want,
        "transitions of {host}\n--- stderr\n{}",
        run.stderr
    );
}

// ------------------------------------------------------------------------------------ files

/// A BMC Secret and hosts in the namespace [`NS`].
fn hosts_file(hosts: &[String]) -> String {
    let lab_password = crate::canary::lab_password();
    let mut s = format!(
        "# hosts of the Ironic lab tests\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc\n  namespace: {NS}\nstringData:\n  username: admin\n  password: {lab_password}\n"
    );
    for h in hosts {
        s.push_str("---\n");
        s.push_str(h);
    }
    s
}

/// A BareMetalHost; `spec` lines are indented under `spec:` (after `online` and `bmc`).
fn bmh(name: &str, online: bool, address: &str, spec: &str) -> String {
    let mut s = format!(
        "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {name}\n  namespace: {NS}\nspec:\n  online: {online}\n  bmc:\n    address: {address}\n    credentialsName: bmc\n"
    );
    for line in spec.lines() {
        s.push_str("  ");
        s.push_str(line);
        s.push('\n');
    }
    s
}

fn fake_image() -> String {
    format!(
        "image:\n  url: {FAKE_IMAGE_URL}\n  checksum: {FAKE_IMAGE_SHA256}\n  checksumType: sha256\n  format: qcow2"
    )
}

/// The `status` of `host` in a hosts file (`Null` when it has none).
fn status_in(text: &str, host: &str) -> Value {
    let mut doc = String::new();
    let mut docs = Vec::new();
    for line in text.split_inclusive('\n') {
        if line.trim_end() == "---" {
            docs.push(std::mem::take(&mut doc));
        } else {
            doc.push_str(line);
        }
    }
    docs.push(doc);
    for d in docs {
        let Ok(v) = serde_saphyr::from_str::<Value>(&d) else {
            continue;
        };
        if v["kind"] == "BareMetalHost" && v["metadata"]["name"] == host {
            return v["status"].clone();
        }
    }
    panic!("no BareMetalHost {host} in\n{text}");
}

fn state_of(status: &Value) -> &str {
    status["provisioning"]["state"].as_str().unwrap_or("")
}

// ---------------------------------------------------------------------------------- watcher

/// Polls `sample` every 50 ms in a thread until stopped; keeps each value that differs from
/// the previous one.
struct Watch<T> {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Vec<T>>,
}

fn watch<T: PartialEq + Send + 'static>(
    mut sample: impl FnMut() -> T + Send + 'static,
) -> Watch<T> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::spawn(move || {
        let mut seen: Vec<T> = Vec::new();
        loop {
            let done = flag.load(Ordering::Acquire);
            let v = sample();
            if seen.last() != Some(&v) {
                seen.push(v);
            }
            if done {
                return seen;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    Watch { stop, handle }
}

impl<T> Watch<T> {
    fn finish(self) -> Vec<T> {
        self.stop.store(true, Ordering::Release);
        self.handle.join().expect("watcher thread")
    }
}

/// One host as seen at one moment: its state in the file and its node's provision state.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    file: String,
    ironic: String,
}

fn watch_host(lab: &Lab, ironic: &Ironic, host: &str) -> Watch<Seen> {
    let path = lab.path("hosts.yaml");
    let ironic = Ironic::from_env(ironic.env.clone());
    let host = host.to_string();
    watch(move || {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let status = status_in(&text, &host);
        let node = ironic.node(&format!("{NS}~{host}"));
        Seen {
            file: state_of(&status).to_string(),
            ironic: node
                .map(|n| n["provision_state"].as_str().unwrap_or("").to_string())
                .unwrap_or_else(|| "(none)".into()),
        }
    })
}

/// Checks what the watcher saw: the file's states in order (each one of `order`, none out of
/// order, each of `must` seen), and the node's provision state allowed for each file state.
#[track_caller]
fn check_seen(seen: &[Seen], order: &[&str], must: &[&str], allowed: &[(&str, &[&str])]) {
    let mut pos = 0;
    for s in seen {
        let Some(i) = order.iter().position(|o| *o == s.file) else {
            panic!("state {:?} not expected here; seen {seen:#?}", s.file);
        };
        assert!(i >= pos, "state {:?} out of order; seen {seen:#?}", s.file);
        pos = i;
        if let Some((_, ok)) = allowed.iter().find(|(f, _)| *f == s.file) {
            assert!(
                ok.contains(&s.ironic.as_str()),
                "host {:?} while its node is {:?}; seen {seen:#?}",
                s.file,
                s.ironic
            );
        }
    }
    for m in must {
        assert!(
            seen.iter().any(|s| s.file == *m),
            "never saw {m:?} in the file; seen {seen:#?}"
        );
    }
}

// ------------------------------------------------------------------------------------ tests

/// a. A fake-hardware host through every BMO state, each checked in the file and in Ironic:
/// registering → inspecting → preparing → available (no image: the goal), provisioning →
/// provisioned (image added), deprovisioning → available (`bmhctl deprovision`), deleting
/// (`bmhctl delete`).
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn fake_hardware_host_walks_every_state_in_status_and_in_ironic() {
    let _serial = serial();
    let ironic = shared_ironic();
    let name = "walk-fake-hardware";
    ironic.purge(name, None);
    let spare = bmh(name, false, &format!("fake-hardware://{name}"), "");
    let lab = Lab::new().file("hosts.yaml", &hosts_file(&[spare]));

    // 1. no image, offline: registering -> inspecting -> preparing -> available
    let w = watch_host(&lab, &ironic, name);
    let run = bmhctl(&lab, &ironic, "0.3", &[], &["provision", "hosts.yaml"]).expect_code(0);
    let seen = w.finish();
    assert_transitions(
        &run,
        name,
        &[
            "(new) -> registering",
            "registering -> inspecting",
            "inspecting -> preparing",
            "preparing -> available",
        ],
    );
    check_seen(
        &seen,
        &["", "registering", "inspecting", "preparing", "available"],
        &["registering", "inspecting", "available"],
        &[
            (
                "registering",
                &["(none)", "enroll", "verifying", "manageable"],
            ),
            ("inspecting", &["manageable", "inspecting", "inspect wait"]),
            (
                "preparing",
                &["manageable", "cleaning", "clean wait", "available"],
            ),
            (
                "available",
                &["manageable", "cleaning", "clean wait", "available"],
            ),
        ],
    );
    let status = status_in(&lab.read("hosts.yaml"), name);
    assert_eq!(state_of(&status), "available", "{status:#}");
    let node = ironic.node_of(name);
    assert_eq!(status["provisioning"]["ID"], node["uuid"]);
    assert_eq!(node["driver"], "fake-hardware");
    assert!(
        ["manageable", "available"].contains(&node["provision_state"].as_str().unwrap()),
        "{node:#}"
    );
    // a fake-hardware node has no power state until a power verb runs, and an offline host
    // that never was on needs none
    assert_ne!(node["power_state"], "power on", "offline host: {node:#}");
    assert_eq!(status["poweredOn"], false);
    // inspection data came from Ironic's inventory
    assert_eq!(status["hardware"]["cpu"]["arch"], "x86_64", "{status:#}");
    assert!(
        status["operationHistory"]["inspect"]["end"].is_string(),
        "{status:#}"
    );

    // 2. an image and online: available -> provisioning -> provisioned
    let text = lab.read("hosts.yaml").replacen(
        "  online: false\n",
        &format!("  online: true\n{}", indent(&fake_image())),
        1,
    );
    std::fs::write(lab.path("hosts.yaml"), text).unwrap();
    let w = watch_host(&lab, &ironic, name);
    let run = bmhctl(&lab, &ironic, "0.3", &[], &["provision", "hosts.yaml"]).expect_code(0);
    let seen = w.finish();
    assert_transitions(
        &run,
        name,
        &["available -> provisioning", "provisioning -> provisioned"],
    );
    check_seen(
        &seen,
        &["available", "provisioning", "provisioned"],
        &["provisioning", "provisioned"],
        &[
            (
                "provisioning",
                &[
                    "manageable",
                    "available",
                    "cleaning",
                    "clean wait",
                    "deploying",
                    "wait call-back",
                    "active",
                ],
            ),
            ("provisioned", &["active"]),
        ],
    );
    let status = status_in(&lab.read("hosts.yaml"), name);
    assert_eq!(state_of(&status), "provisioned", "{status:#}");
    assert_eq!(status["provisioning"]["image"]["url"], FAKE_IMAGE_URL);
    assert_eq!(status["poweredOn"], true);
    let node = ironic.node_of(name);
    assert_eq!(node["provision_state"], "active", "{node:#}");
    assert_eq!(node["power_state"], "power on", "{node:#}");
    assert_eq!(node["instance_info"]["image_source"], FAKE_IMAGE_URL);
    assert_eq!(status["provisioning"]["ID"], node["uuid"]);

    // 3. bmhctl deprovision: provisioned -> deprovisioning -> available
    let w = watch_host(&lab, &ironic, name);
    let run = bmhctl(
        &lab,
        &ironic,
        "0.3",
        &[],
        &["deprovision", "-f", "hosts.yaml"],
    )
    .expect_code(0);
    let seen = w.finish();
    assert_transitions(
        &run,
        name,
        &[
            "provisioned -> deprovisioning",
            "deprovisioning -> available",
        ],
    );
    check_seen(
        &seen,
        &["provisioned", "deprovisioning", "available"],
        &["deprovisioning", "available"],
        &[
            (
                "deprovisioning",
                &["active", "deleting", "cleaning", "clean wait", "available"],
            ),
            ("available", &["available"]),
        ],
    );
    let status = status_in(&lab.read("hosts.yaml"), name);
    assert_eq!(state_of(&status), "available", "{status:#}");
    let node = ironic.node_of(name);
    assert_eq!(node["provision_state"], "available", "{node:#}");
    assert!(
        node["instance_info"].get("image_source").is_none(),
        "undeploy clears the instance: {node:#}"
    );

    // 4. bmhctl delete: the node goes from Ironic, the status from the file
    let uuid = node["uuid"].as_str().unwrap().to_string();
    let w = watch_host(&lab, &ironic, name);
    let run = bmhctl(&lab, &ironic, "0.3", &[], &["delete", "-f", "hosts.yaml"]).expect_code(0);
    let seen = w.finish();
    let trans = transitions(&run, name);
    assert_eq!(
        trans.last().map(String::as_str),
        Some("powering off before delete -> deleting"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("{NS}/{name}: deleting (done)")),
        "{}",
        run.stderr
    );
    check_seen(
        &seen,
        &["available", "powering off before delete", "deleting", ""],
        &[""],
        &[("", &["(none)"])],
    );
    assert!(ironic.node(&uuid).is_none(), "node {uuid} still in Ironic");
    assert!(status_in(&lab.read("hosts.yaml"), name).is_null());
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// b. A redfish-virtualmedia host on the emulator: real Redfish power control, checked on the
/// emulated system before and after (online → On, offline → Off), then deleted.
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn redfish_host_power_follows_online_on_the_emulator() {
    let _serial = serial();
    let ironic = shared_ironic();
    let system = "sushy-3";
    let mac = "52:54:00:00:00:04";
    let name = "power-redfish-sushy-3";
    ironic.purge(name, Some(mac));
    let iso = ironic
        .env
        .get("DEPLOY_ISO_URL")
        .cloned()
        .expect("DEPLOY_ISO_URL (from the lab's bmhctl.env)");
    emulator_force_off(system);
    assert_eq!(emulator_power(system), "Off");

    let host = bmh(
        name,
        true,
        &format!(
            "redfish-virtualmedia+{}/redfish/v1/Systems/{system}",
            sushy_url()
        ),
        &format!(
            "bootMACAddress: \"{mac}\"\nbootMode: UEFI\ninspectionMode: fast\nautomatedCleaningMode: disabled\nimage:\n  url: {iso}\n  format: live-iso"
        ),
    );
    let lab = Lab::new().file("hosts.yaml", &hosts_file(&[host]));
    let run = bmhctl(&lab, &ironic, "0.2", &[], &["provision", "hosts.yaml"]).expect_code(0);
    assert_transitions(
        &run,
        name,
        &[
            "(new) -> registering",
            "registering -> inspecting",
            "inspecting -> preparing",
            "preparing -> available",
            "available -> provisioning",
            "provisioning -> provisioned",
        ],
    );
    let status = status_in(&lab.read("hosts.yaml"), name);
    assert_eq!(state_of(&status), "provisioned", "{status:#}");
    assert_eq!(status["poweredOn"], true);
    // out-of-band inspection read the emulated system
    assert_eq!(status["hardware"]["ramMebibytes"], 8192, "{status:#}");
    let node = ironic.node_of(name);
    assert_eq!(node["driver"], "redfish");
    assert_eq!(node["boot_interface"], "redfish-virtual-media");
    assert_eq!(node["provision_state"], "active", "{node:#}");
    assert_eq!(node["power_state"], "power on", "{node:#}");
    assert_eq!(node["instance_info"]["boot_iso"], iso.as_str());
    assert_eq!(
        emulator_power(system),
        "On",
        "the emulated system is powered on"
    );
    let macs = ironic.port_macs(node["uuid"].as_str().unwrap());
    assert!(macs.iter().any(|m| m == mac), "boot MAC port: {macs:?}");

    // online: false -> powered off over Redfish
    let text = lab
        .read("hosts.yaml")
        .replacen("  online: true\n", "  online: false\n", 1);
    std::fs::write(lab.path("hosts.yaml"), text).unwrap();
    let run = bmhctl(&lab, &ironic, "0.2", &[], &["provision", "hosts.yaml"]).expect_code(0);
    assert_transitions(&run, name, &[]);
    let status = status_in(&lab.read("hosts.yaml"), name);
    assert_eq!(state_of(&status), "provisioned", "{status:#}");
    assert_eq!(status["poweredOn"], false, "{status:#}");
    let node = ironic.node_of(name);
    assert_eq!(node["power_state"], "power off", "{node:#}");
    assert_eq!(
        emulator_power(system),
        "Off",
        "the emulated system is powered off"
    );

    // and gone again, so the system and its MAC are free for the next run
    bmhctl(&lab, &ironic, "0.2", &[], &["delete", "-f", "hosts.yaml"]).expect_code(0);
    assert!(ironic.node(&format!("{NS}~{name}")).is_none());
}

/// b2. A plain `redfish` host (boot over the network, which no emulator can serve): registered,
/// inspected out of band and kept `available`, with its power driven over Redfish both ways.
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn plain_redfish_host_is_inspected_and_power_managed_on_the_emulator() {
    let _serial = serial();
    let ironic = shared_ironic();
    let system = "sushy-4";
    let mac = "52:54:00:00:00:05";
    let name = "plain-redfish-sushy-4";
    ironic.purge(name, Some(mac));
    emulator_force_off(system);
    assert_eq!(emulator_power(system), "Off");

    let host = bmh(
        name,
        true,
        &format!("redfish+{}/redfish/v1/Systems/{system}", sushy_url()),
        &format!(
            "bootMACAddress: \"{mac}\"\ninspectionMode: fast\nautomatedCleaningMode: disabled"
        ),
    );
    let lab = Lab::new().file("hosts.yaml", &hosts_file(&[host]));
    let run = bmhctl(&lab, &ironic, "0.2", &[], &["provision", "hosts.yaml"]).expect_code(0);
    assert_transitions(
        &run,
        name,
        &[
            "(new) -> registering",
            "registering -> inspecting",
            "inspecting -> preparing",
            "preparing -> available",
        ],
    );
    let status = status_in(&lab.read("hosts.yaml"), name);
    assert_eq!(state_of(&status), "available", "{status:#}");
    assert_eq!(status["poweredOn"], true, "{status:#}");
    assert_eq!(status["hardware"]["ramMebibytes"], 8192, "{status:#}");
    let node = ironic.node_of(name);
    assert_eq!(node["driver"], "redfish");
    assert_eq!(node["boot_interface"], "ipxe");
    assert_eq!(node["inspect_interface"], "redfish");
    // as in BMO, the node stays `manageable` until it is provisioned (`provide` comes then)
    assert_eq!(node["provision_state"], "manageable", "{node:#}");
    assert_eq!(node["power_state"], "power on", "{node:#}");
    assert_eq!(emulator_power(system), "On");

    let text = lab
        .read("hosts.yaml")
        .replacen("  online: true\n", "  online: false\n", 1);
    std::fs::write(lab.path("hosts.yaml"), text).unwrap();
    bmhctl(&lab, &ironic, "0.2", &[], &["provision", "hosts.yaml"]).expect_code(0);
    let status = status_in(&lab.read("hosts.yaml"), name);
    assert_eq!(status["poweredOn"], false, "{status:#}");
    assert_eq!(ironic.node_of(name)["power_state"], "power off");
    assert_eq!(emulator_power(system), "Off");

    bmhctl(&lab, &ironic, "0.2", &[], &["delete", "-f", "hosts.yaml"]).expect_code(0);
    assert!(ironic.node(&format!("{NS}~{name}")).is_none());
}

/// c. Ironic with http_basic auth (an instance of its own on 6395): a host registers with the
/// credentials of `METAL3_AUTH_ROOT_DIR`; with wrong ones bmhctl says so.
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn http_basic_auth_registers_and_wrong_credentials_are_reported() {
    let _serial = serial();
    shared_ironic();
    let own = OwnIronic::start(6395, &[("IRONIC_AUTH", "http_basic")]);
    let ironic = &own.ironic;
    let auth_dir = ironic.env["METAL3_AUTH_ROOT_DIR"].clone();
    assert!(
        Path::new(&auth_dir).join("ironic/password").is_file(),
        "start-ironic.sh writes the credentials where BMO reads them"
    );
    // the API really wants them
    let (code, _) = http("GET", &format!("{}/v1/nodes", ironic.root), None, None);
    assert_eq!(code, 401, "http_basic Ironic without credentials");

    let name = "basic-auth-fake";
    let lab = Lab::new().file(
        "hosts.yaml",
        &hosts_file(&[bmh(name, false, &format!("fake-hardware://{name}"), "")]),
    );
    let run = bmhctl(&lab, ironic, "0.2", &[], &["provision", "hosts.yaml"]).expect_code(0);
    assert!(
        run.stderr
            .contains(&format!("{NS}/{name}: registering -> inspecting")),
        "{}",
        run.stderr
    );
    let status = status_in(&lab.read("hosts.yaml"), name);
    assert_eq!(state_of(&status), "available", "{status:#}");
    let node = ironic.node_of(name);
    assert_eq!(status["provisioning"]["ID"], node["uuid"]);

    // wrong credentials: nothing is done, and the result says why
    let wrong = lab.path("wrong-auth");
    std::fs::create_dir_all(wrong.join("ironic")).unwrap();
    std::fs::write(wrong.join("ironic/username"), "admin").unwrap();
    std::fs::write(wrong.join("ironic/password"), "not-the-password").unwrap();
    let other = "basic-auth-refused";
    let lab = Lab::new().file(
        "hosts.yaml",
        &hosts_file(&[bmh(other, false, &format!("fake-hardware://{other}"), "")]),
    );
    let before = lab.read("hosts.yaml");
    let run = bmhctl(
        &lab,
        ironic,
        "0.2",
        &[("METAL3_AUTH_ROOT_DIR", wrong.to_str().unwrap())],
        &[
            "provision",
            "--timeout",
            "30s",
            "--ironic-wait",
            "3s",
            "-o",
            "json",
            "hosts.yaml",
        ],
    )
    .expect_code(1);
    // The start-up probe refuses the run before any pass: the reason is on stderr at once.
    assert!(
        run.stderr.contains("refused the credentials") && run.stderr.contains("401"),
        "a clear error:\n{}",
        run.stderr
    );
    assert!(!run.stderr.contains("not-the-password") && !run.stdout.contains("not-the-password"));
    assert_eq!(lab.read("hosts.yaml"), before, "nothing written");
    assert!(ironic.node(&format!("{NS}~{other}")).is_none());
}

/// d. Ironic loses its database mid-life (an instance of its own on 6405, restarted with
/// `IRONIC_FRESH=1`): the next run registers the nodes and ports again and adopts the
/// provisioned hosts (`adopting` → `active`, never a new deploy), which stay `provisioned`
/// with the new node's ID.
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn fresh_ironic_database_readopts_provisioned_hosts_without_redeploying() {
    let _serial = serial();
    shared_ironic();
    let mut own = OwnIronic::start(6405, &[]);
    let names = ["fresh-db-0", "fresh-db-1"];
    let boot_mac = "52:54:00:ab:00:01";
    let hosts = [
        bmh(
            names[0],
            true,
            "fake-hardware://fresh-db-0",
            &format!("bootMACAddress: \"{boot_mac}\"\n{}", fake_image()),
        ),
        bmh(names[1], true, "fake-hardware://fresh-db-1", &fake_image()),
    ];
    let lab = Lab::new().file("hosts.yaml", &hosts_file(&hosts));
    bmhctl(&lab, &own.ironic, "0.2", &[], &["provision", "hosts.yaml"]).expect_code(0);
    let before: Vec<Value> = names
        .iter()
        .map(|n| status_in(&lab.read("hosts.yaml"), n))
        .collect();
    for (n, s) in names.iter().zip(&before) {
        assert_eq!(state_of(s), "provisioned", "{n}: {s:#}");
        assert_eq!(own.ironic.node_of(n)["provision_state"], "active");
    }

    own.restart_with_fresh_database();
    assert!(own.ironic.nodes().is_empty(), "the new database is empty");
    let run = bmhctl(&lab, &own.ironic, "0.2", &[], &["provision", "hosts.yaml"]).expect_code(0);
    let log = std::fs::read_to_string(own.state_dir().join("ironic.log")).unwrap();
    let text = lab.read("hosts.yaml");
    for (n, old) in names.iter().zip(&before) {
        assert_transitions(&run, n, &[]);
        assert!(
            run.stderr
                .contains(&format!("{NS}/{n}: provisioned (done)")),
            "{}",
            run.stderr
        );
        let status = status_in(&text, n);
        assert_eq!(state_of(&status), "provisioned", "{n}: {status:#}");
        assert_eq!(status["poweredOn"], true);
        let node = own.ironic.node_of(n);
        let uuid = node["uuid"].as_str().unwrap();
        assert_eq!(status["provisioning"]["ID"], uuid, "{n}: the new node's ID");
        assert_ne!(
            status["provisioning"]["ID"], old["provisioning"]["ID"],
            "{n}: a new node"
        );
        assert_eq!(node["provision_state"], "active", "{n}: {node:#}");
        // adopted, never deployed again (the log was wiped with the database)
        assert!(
            log.contains(&format!(
                "Node {uuid} moved to provision state \"adopting\" from state \"manageable\""
            )),
            "{n}: no adoption of {uuid} in the log"
        );
        assert!(
            log.contains(&format!(
                "Node {uuid} moved to provision state \"active\" from state \"adopting\""
            )),
            "{n}: {uuid} not active after adopting"
        );
        assert!(
            !log.contains(&format!(
                "Node {uuid} moved to provision state \"deploying\""
            )),
            "{n}: {uuid} was deployed again"
        );
        // the ports are back: the inspected NIC and the boot MAC
        let macs = own.ironic.port_macs(uuid);
        for nic in status["hardware"]["nics"].as_array().unwrap() {
            let mac = nic["mac"].as_str().unwrap();
            assert!(macs.iter().any(|m| m == mac), "{n}: port {mac}: {macs:?}");
        }
        if *n == names[0] {
            assert!(macs.iter().any(|m| m == boot_mac), "{n}: {macs:?}");
        }
    }
}

/// e. `PROVISIONING_LIMIT=2` with six fake-hardware hosts on an Ironic whose fake inspect and
/// deploy take a while (an instance of its own on 6445): never more than two nodes busy, the
/// others wait as `delayed`, all end provisioned.
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn provisioning_limit_caps_busy_nodes_and_delays_the_rest() {
    let _serial = serial();
    shared_ironic();
    let lab = Lab::new().file(
        "slow-fake.conf",
        "[fake]\ninspect_delay = 1\ndeploy_delay = 2\n",
    );
    let conf = lab.path("slow-fake.conf");
    let own = OwnIronic::start(6445, &[("IRONIC_EXTRA_CONF", conf.to_str().unwrap())]);
    let names: Vec<String> = (0..6).map(|i| format!("limit-{i}")).collect();
    let hosts: Vec<String> = names
        .iter()
        .map(|n| bmh(n, true, &format!("fake-hardware://{n}"), &fake_image()))
        .collect();
    let lab = lab.file("hosts.yaml", &hosts_file(&hosts));

    // BMO's count: nodes in a busy state whose boot interface is not virtual media
    const BUSY: &[&str] = &[
        "cleaning",
        "clean wait",
        "inspecting",
        "inspect wait",
        "deploying",
        "wait call-back",
        "deleting",
    ];
    let poll = Ironic::from_env(own.ironic.env.clone());
    let busy = watch(move || {
        let mut busy: Vec<String> = poll
            .nodes()
            .iter()
            .filter(|n| BUSY.contains(&n["provision_state"].as_str().unwrap_or("")))
            .filter(|n| {
                !n["boot_interface"]
                    .as_str()
                    .unwrap_or("")
                    .contains("virtual-media")
            })
            .map(|n| n["name"].as_str().unwrap_or("").to_string())
            .collect();
        busy.sort();
        busy
    });
    let path = lab.path("hosts.yaml");
    let watched = names.clone();
    let delayed = watch(move || {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let mut d: Vec<String> = watched
            .iter()
            .filter(|n| status_in(&text, n)["operationalStatus"] == "delayed")
            .cloned()
            .collect();
        d.sort();
        d
    });
    let started = Instant::now();
    let run = bmhctl(
        &lab,
        &own.ironic,
        "0.05",
        &[("PROVISIONING_LIMIT", "2")],
        // Six hosts through a limit of two take a while on a loaded machine: 60 min of BMO time
        // is 3 min of wall time at this scale. The test is about the limit, not the timeout.
        &["provision", "--timeout", "60m", "hosts.yaml"],
    );
    let took = started.elapsed();
    let busy = busy.finish();
    let delayed = delayed.finish();
    let run = run.expect_code(0);

    eprintln!(
        "took {took:?}; busy nodes over time: {busy:?}; delayed hosts over time: {delayed:?}"
    );
    let most = busy.iter().map(Vec::len).max().unwrap_or(0);
    assert!(most <= 2, "more than 2 nodes busy at once: {busy:?}");
    assert_eq!(most, 2, "the limit was used: {busy:?}");
    let ever_busy: std::collections::BTreeSet<&String> = busy.iter().flatten().collect();
    assert_eq!(
        ever_busy.len(),
        6,
        "every node was busy at some time: {busy:?}"
    );
    let ever_delayed: std::collections::BTreeSet<&String> = delayed.iter().flatten().collect();
    assert!(
        !ever_delayed.is_empty(),
        "some host waited as `delayed` in its status; took {took:?}\n{}",
        run.stderr
    );
    let text = lab.read("hosts.yaml");
    for n in &names {
        let status = status_in(&text, n);
        assert_eq!(state_of(&status), "provisioned", "{n}: {status:#}");
        assert_eq!(status["operationalStatus"], "OK", "{n}: {status:#}");
        assert_eq!(own.ironic.node_of(n)["provision_state"], "active");
    }
}

/// A CI step run again with a fresh copy of its hosts against an Ironic that still holds the
/// first run's nodes (`active`): BMO's path from registering cannot take them, so each such host
/// stops in its first pass that asks Ironic, naming the node, its state and the fixes, with its
/// status and its node untouched; a new host beside them is provisioned; the exit code is 1.
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn a_fresh_copy_of_hosts_whose_nodes_an_earlier_run_left_stops_them_at_once() {
    let _serial = serial();
    let ironic = shared_ironic();
    let names = ["leftover-0", "leftover-1", "leftover-new"];
    for n in names {
        ironic.purge(n, None);
    }
    let host = |n: &str| bmh(n, true, &format!("fake-hardware://{n}"), &fake_image());
    let first = hosts_file(&[host(names[0]), host(names[1])]);
    let lab = Lab::new().file("hosts.yaml", &first);
    bmhctl(&lab, &ironic, "0.2", &[], &["provision", "hosts.yaml"]).expect_code(0);
    let nodes: Vec<Value> = names[..2].iter().map(|n| ironic.node_of(n)).collect();
    for (n, node) in names.iter().zip(&nodes) {
        assert_eq!(node["provision_state"], "active", "{n}: {node:#}");
    }

    // The fresh copy, one new host added.
    let fresh = hosts_file(&[host(names[0]), host(names[1]), host(names[2])]);
    let lab = Lab::new().file("hosts.yaml", &fresh);
    let run = bmhctl(
        &lab,
        &ironic,
        "0.2",
        &[],
        &[
            "provision",
            "hosts.yaml",
            "-o",
            "json",
            "--progress",
            "plain",
        ],
    )
    .expect_code(1);
    let results = run.json();
    let result_of = |n: &str| {
        results["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["name"] == n)
            .unwrap_or_else(|| panic!("{n} in {results:#}"))
            .clone()
    };
    let text = lab.read("hosts.yaml");
    for (n, node) in names.iter().zip(&nodes) {
        let uuid = node["uuid"].as_str().unwrap();
        let r = result_of(n);
        assert_eq!(r["outcome"], "failed", "{n}: {r:#}");
        let reason = r["reason"].as_str().unwrap();
        for part in [
            format!("Ironic node {NS}~{n} ({uuid}) is already \"active\""),
            "this host has no status".into(),
            format!("bmhctl import --from-ironic {uuid}"),
            format!("baremetal node delete {uuid}"),
            "Keep the status file".into(),
        ] {
            assert!(reason.contains(&part), "{n}: {part:?} not in {reason:?}");
        }
        // The finalizer's pass, then the one that asked Ironic.
        assert!(r["passes"].as_u64().unwrap() <= 2, "{n}: {r:#}");
        assert!(
            run.stderr.contains(&format!("{NS}/{n}: ")) && run.stderr.contains(reason),
            "{n}: the reason on the progress stream\n{}",
            run.stderr
        );
        assert_eq!(status_in(&text, n), Value::Null, "{n}: status untouched");
        let after = ironic.node_of(n);
        assert_eq!(
            after["updated_at"], node["updated_at"],
            "{n}: node untouched"
        );
        assert_eq!(after["provision_state"], "active");
    }
    let new = result_of(names[2]);
    assert_eq!(new["outcome"], "reached", "{new:#}");
    assert_eq!(state_of(&status_in(&text, names[2])), "provisioned");
    for n in names {
        ironic.purge(n, None);
    }
}

/// `disablePowerOff` needs API 1.95 (Ironic 28.0): a host asking for it registers on an Ironic
/// that has it, the node keeping `disable_power_off`, and gets BMO's registration error on one
/// that has not (run by `scripts/ironic-matrix.sh` on every release).
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn disable_power_off_registers_from_api_1_95_and_is_refused_below() {
    let _serial = serial();
    let ironic = shared_ironic();
    let name = "no-power-off";
    ironic.purge(name, None);
    let (max, minor) = ironic.max_version();
    let host = bmh(
        name,
        true,
        &format!("fake-hardware://{name}"),
        "disablePowerOff: true\nautomatedCleaningMode: disabled",
    );
    let lab = Lab::new().file("hosts.yaml", &hosts_file(&[host]));
    let run = bmhctl(
        &lab,
        &ironic,
        "0.2",
        &[],
        &["provision", "hosts.yaml", "--timeout", "2m"],
    );
    let status = status_in(&lab.read("hosts.yaml"), name);
    if minor >= 95 {
        run.expect_code(0);
        assert_eq!(state_of(&status), "available", "{status:#}");
        // The field is shown from 1.95 on.
        let out = Command::new("curl")
            .args(["-sS", "-H", "X-OpenStack-Ironic-API-Version: 1.95"])
            .args(
                ironic
                    .auth
                    .iter()
                    .flat_map(|(u, p)| ["-u".to_string(), format!("{u}:{p}")]),
            )
            .arg(format!("{}/v1/nodes/{NS}~{name}", ironic.root))
            .output()
            .unwrap();
        let node = parse(&String::from_utf8_lossy(&out.stdout));
        assert_eq!(node["disable_power_off"], true, "{node:#}");
    } else {
        let run = run.expect_code(1);
        assert_eq!(status["errorType"], "registration error", "{status:#}");
        assert_eq!(
            status["errorMessage"],
            "current ironic version does not support DisablePowerOff, refusing to manage node",
            "API {max}: {status:#}\n{}",
            run.stderr
        );
        assert!(ironic.node(&format!("{NS}~{name}")).is_none(), "no node");
    }
    ironic.purge(name, None);
}

/// The emulated system's BIOS attributes, read over Redfish.
fn emulator_bios(system: &str) -> Value {
    let url = format!("{}/redfish/v1/Systems/{system}/BIOS", sushy_url());
    let (code, body) = http("GET", &url, Some(&sushy_auth()), None);
    assert_eq!(code, 200, "GET {url}: {body}");
    parse(&body)["Attributes"].clone()
}

/// The object of `kind` named `name` in a hosts file.
fn object_in(text: &str, kind: &str, name: &str) -> Value {
    text.split("\n---\n")
        .filter_map(|d| serde_saphyr::from_str::<Value>(d).ok())
        .find(|v| v["kind"] == kind && v["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in\n{text}"))
}

/// The condition `kind` of an object's status, as `(status, reason, message)`.
fn condition(object: &Value, kind: &str) -> (String, String, String) {
    let c = object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} condition: {object:#}"));
    let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
    (s("status"), s("reason"), s("message"))
}

/// BIOS settings through a real Ironic and the emulator's BIOS, with its attribute registry:
/// a HostFirmwareSettings naming a read-only attribute is refused against the FirmwareSchema
/// built from Ironic's registry (`Valid` false, nothing applied, the host still reaches its
/// goal, as in BMO); corrected, the settings are applied while preparing (Ironic's manual
/// cleaning with `bios.apply_configuration`, no ramdisk needed), reach the BIOS, and come back
/// in the HostFirmwareSettings' status (from Ironic 2026.1; an older Ironic boots the agent for
/// its BIOS step, and the host stops in preparing with Ironic's reason). The
/// HostFirmwareComponents' status lists the versions Ironic reads from the BMC. (Firmware
/// updates themselves boot the agent to clean, which no emulated machine runs.)
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn bios_settings_are_checked_against_the_registry_and_applied_while_preparing() {
    let _serial = serial();
    let ironic = shared_ironic();
    let (system, mac, name) = ("sushy-5", "52:54:00:00:00:06", "bios-sushy-5");
    ironic.purge(name, Some(mac));
    // the emulator keeps its BIOS across runs: back to the defaults
    let reset = format!(
        "{}/redfish/v1/Systems/{system}/BIOS/Actions/Bios.ResetBios",
        sushy_url()
    );
    let (code, body) = http("POST", &reset, Some(&sushy_auth()), Some(&json!({})));
    assert!(code / 100 == 2, "reset the emulator's BIOS: {code} {body}");
    assert_eq!(emulator_bios(system)["ProcTurboMode"], "Enabled");
    assert_eq!(emulator_bios(system)["NicBoot1"], "NetworkBoot");

    let host = bmh(
        name,
        false,
        &format!("redfish+{}/redfish/v1/Systems/{system}", sushy_url()),
        &format!(
            "bootMACAddress: \"{mac}\"\ninspectionMode: fast\nautomatedCleaningMode: disabled"
        ),
    );
    let settings = |extra: &str| {
        format!(
            "---\napiVersion: metal3.io/v1alpha1\nkind: HostFirmwareSettings\nmetadata:\n  name: {name}\n  namespace: {NS}\nspec:\n  settings:\n    ProcTurboMode: Disabled\n    {extra}\n---\napiVersion: metal3.io/v1alpha1\nkind: HostFirmwareComponents\nmetadata:\n  name: {name}\n  namespace: {NS}\nspec:\n  updates: []\n"
        )
    };
    // NumCores is read-only in the emulator's registry
    let text = hosts_file(&[host]) + &settings("NumCores: \"8\"");
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = bmhctl(&lab, &ironic, "0.2", &[], &["provision", "hosts.yaml"]).expect_code(0);
    assert_transitions(
        &run,
        name,
        &[
            "(new) -> registering",
            "registering -> inspecting",
            "inspecting -> preparing",
            "preparing -> available",
        ],
    );
    let text = lab.read("hosts.yaml");
    let hfs = object_in(&text, "HostFirmwareSettings", name);
    assert_eq!(
        condition(&hfs, "Valid"),
        (
            "False".into(),
            "ConfigurationError".into(),
            "Invalid BIOS setting".into()
        ),
        "{hfs:#}"
    );
    // the schema, from Ironic's registry, says why (bmhctl keeps it beside the file, as a
    // metal3 cluster keeps a FirmwareSchema object)
    let schema_name = hfs["status"]["schema"]["name"].as_str().expect("a schema");
    let state = parse(&lab.read(".bmhctl/hosts.yaml.state.json"));
    let schema = &state["hosts"][format!("{NS}/{name}")]["firmware"]["schema"];
    assert_eq!(schema["metadata"]["name"], schema_name, "{schema:#}");
    assert_eq!(
        schema["spec"]["schema"]["NumCores"]["read_only"], true,
        "{schema:#}"
    );
    assert_eq!(
        schema["spec"]["schema"]["ProcTurboMode"]["allowable_values"],
        json!(["Enabled", "Disabled"]),
        "{schema:#}"
    );
    assert_eq!(hfs["status"]["settings"]["ProcTurboMode"], "Enabled");
    assert_eq!(
        emulator_bios(system)["ProcTurboMode"],
        "Enabled",
        "nothing applied"
    );
    let hfc = object_in(&text, "HostFirmwareComponents", name);
    let components: Vec<(String, String)> = hfc["status"]["components"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["component"].as_str().unwrap_or_default().into(),
                c["currentVersion"].as_str().unwrap_or_default().into(),
            )
        })
        .collect();
    assert!(
        components.contains(&("bios".into(), "1.0.0".into())),
        "the BIOS version from the BMC: {hfc:#}"
    );

    // corrected: applied while preparing, seen in the BIOS and in the status. Ironic's Redfish
    // BIOS step runs without the agent from Ironic 2026.1 (API 1.111) on; before, cleaning boots
    // the agent for it, which no emulated machine runs: the host stops in preparing with
    // Ironic's reason, as BMO's would without a ramdisk
    let (max, minor) = ironic.max_version();
    let text = text.replacen("    NumCores: \"8\"\n", "    NicBoot1: Disabled\n", 1);
    assert!(text.contains("    NicBoot1: Disabled\n"), "{text}");
    std::fs::write(lab.path("hosts.yaml"), text).unwrap();
    if minor < 111 {
        let run = bmhctl(
            &lab,
            &ironic,
            "0.2",
            &[],
            &["provision", "hosts.yaml", "--timeout", "60s"],
        )
        .expect_code(1);
        assert!(
            run.stdout.contains("deploy_kernel") && run.stdout.contains("preparation error"),
            "Ironic {max}: {}\n{}",
            run.stdout,
            run.stderr
        );
        assert_eq!(
            emulator_bios(system)["ProcTurboMode"],
            "Enabled",
            "nothing applied"
        );
        ironic.purge(name, Some(mac));
        return;
    }
    let run = bmhctl(&lab, &ironic, "0.2", &[], &["provision", "hosts.yaml"]).expect_code(0);
    assert_transitions(
        &run,
        name,
        &["available -> preparing", "preparing -> available"],
    );
    let bios = emulator_bios(system);
    assert_eq!(bios["ProcTurboMode"], "Disabled", "{bios:#}");
    assert_eq!(bios["NicBoot1"], "Disabled", "{bios:#}");
    let text = lab.read("hosts.yaml");
    let hfs = object_in(&text, "HostFirmwareSettings", name);
    assert_eq!(condition(&hfs, "Valid").0, "True", "{hfs:#}");
    assert_eq!(condition(&hfs, "ChangeDetected").0, "False", "{hfs:#}");
    assert_eq!(
        hfs["status"]["settings"]["ProcTurboMode"], "Disabled",
        "{hfs:#}"
    );
    assert_eq!(hfs["status"]["settings"]["NicBoot1"], "Disabled", "{hfs:#}");
    assert!(
        hfs["status"]["settings"].get("SysPassword").is_none(),
        "a password setting is never copied: {hfs:#}"
    );
    let (_, node_bios) = ironic.get(&format!("/v1/nodes/{NS}~{name}/bios/ProcTurboMode"));
    assert_eq!(
        node_bios["ProcTurboMode"]["value"], "Disabled",
        "{node_bios:#}"
    );

    bmhctl(&lab, &ironic, "0.2", &[], &["delete", "-f", "hosts.yaml"]).expect_code(0);
    assert!(ironic.node(&format!("{NS}~{name}")).is_none());
}

/// Ironic's node `health` (API 1.109, Ironic 2026.1) becomes the `Healthy` condition, as BMO's
/// `GetHealth` does; an older Ironic has none and the condition stays `Unknown`. Ironic reads
/// the health from the BMC with the power state, so it appears at the first power sync after
/// registration (60 s in the lab).
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn node_health_becomes_the_healthy_condition_from_api_1_109() {
    let _serial = serial();
    let ironic = shared_ironic();
    let (system, mac, name) = ("sushy-7", "52:54:00:00:00:08", "health-sushy-7");
    ironic.purge(name, Some(mac));
    let (max, minor) = ironic.max_version();
    let host = bmh(
        name,
        false,
        &format!("redfish+{}/redfish/v1/Systems/{system}", sushy_url()),
        &format!(
            "bootMACAddress: \"{mac}\"\ninspectionMode: fast\nautomatedCleaningMode: disabled"
        ),
    );
    let lab = Lab::new().file("hosts.yaml", &hosts_file(&[host]));
    bmhctl(&lab, &ironic, "0.2", &[], &["provision", "hosts.yaml"]).expect_code(0);
    let healthy = |lab: &Lab| {
        let status = status_in(&lab.read("hosts.yaml"), name);
        status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["type"] == "Healthy")
            .map(|c| {
                (
                    c["status"].as_str().unwrap().to_string(),
                    c["reason"].as_str().unwrap().to_string(),
                )
            })
            .unwrap_or_else(|| panic!("no Healthy condition: {status:#}"))
    };
    // at the server's own newest version, so that an Ironic without the field shows it has none
    let node_at_max = || {
        let url = format!("{}/v1/nodes/{NS}~{name}", ironic.root);
        let (code, body) = http_at(&max, "GET", &url, ironic.auth.as_ref(), None);
        assert_eq!(code, 200, "{body}");
        parse(&body)
    };
    if minor < 109 {
        let node = node_at_max();
        assert!(
            node.get("health").is_none(),
            "Ironic {max} has a health field: {node:#}"
        );
        assert_eq!(
            healthy(&lab),
            ("Unknown".into(), "Unknown".into()),
            "Ironic {max}"
        );
    } else {
        let t = Instant::now();
        let health = loop {
            let node = node_at_max();
            if let Some(h) = node["health"].as_str() {
                break h.to_string();
            }
            assert!(
                t.elapsed() < Duration::from_secs(150),
                "Ironic {max} gave the node no health after two power syncs: {node:#}"
            );
            std::thread::sleep(Duration::from_secs(2));
        };
        assert_eq!(health, "OK", "the emulator's system reports OK");
        bmhctl(&lab, &ironic, "0.2", &[], &["provision", "hosts.yaml"]).expect_code(0);
        assert_eq!(
            healthy(&lab),
            ("True".into(), "Healthy".into()),
            "Ironic {max}"
        );
    }
    bmhctl(&lab, &ironic, "0.2", &[], &["delete", "-f", "hosts.yaml"]).expect_code(0);
    assert!(ironic.node(&format!("{NS}~{name}")).is_none());
}

/// A real Ironic older than BMO's minimum API: 23.1.0 (2023.2 Bobcat, API 1.88, installed on
/// first use from `scripts/ironic/requirements-ironic-23.1.0.txt`), an instance of its own on
/// 6425. bmhctl refuses it at its first answer, says which release it is and what is needed,
/// exits 1 without retrying, and writes nothing.
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn an_ironic_older_than_bmos_minimum_is_refused_at_its_first_answer() {
    let _serial = serial();
    struct Stop;
    impl Drop for Stop {
        fn drop(&mut self) {
            stop_ironic(6425);
        }
    }
    let _stop = Stop;
    let ironic = start_ironic(6425, &[("IRONIC_RELEASE".into(), "23.1.0".into())]);
    // (the lab's requests ask for 1.89, which this Ironic answers with 406)
    let url = format!("{}/v1/", ironic.root);
    let (_, v1) = http_at("1.1", "GET", &url, ironic.auth.as_ref(), None);
    assert_eq!(parse(&v1)["version"]["version"], "1.88", "{v1}");
    let text = hosts_file(&[bmh("too-old", false, "fake-hardware://too-old", "")]);
    let lab = Lab::new().file("hosts.yaml", &text);
    // a wait that would show if the refusal were retried
    let run = bmhctl(
        &lab,
        &ironic,
        "1",
        &[],
        &["provision", "hosts.yaml", "--ironic-wait", "1m"],
    )
    .expect_code(1);
    let endpoint = format!("{}/v1/", ironic.root);
    assert_eq!(
        run.stderr
            .lines()
            .filter(|l| l.starts_with("error: ") || l.starts_with("bmhctl: "))
            .collect::<Vec<_>>(),
        [format!(
            "error: the provisioner cannot be used: Ironic at {endpoint}: it supports API 1.88 \
             at most, a release older than Ironic 24.0 (2024.1 Caracal); bmhctl needs API 1.89 \
             or newer, as BMO does: Ironic 24.0 or newer"
        )],
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("retrying"), "{}", run.stderr);
    assert_eq!(lab.read("hosts.yaml"), text, "nothing written");
    assert!(!lab.path(".bmhctl").exists(), "no state beside the file");
    let url = format!("{}/v1/nodes", ironic.root);
    let (_, nodes) = http_at("1.1", "GET", &url, ironic.auth.as_ref(), None);
    assert_eq!(parse(&nodes)["nodes"], json!([]), "no node made: {nodes}");
}

/// The verbs beside a running `watch -f` on a real Ironic: each writes its request into the
/// file, the watch acts on it, and Ironic shows the outcome.
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn verbs_beside_a_running_watch_reach_ironic() {
    let _serial = serial();
    let ironic = shared_ironic();
    let name = "beside-watch";
    ironic.purge(name, None);
    let spec = format!("bootMACAddress: \"52:54:00:00:01:11\"\n{}", fake_image());
    let host = bmh(name, true, &format!("fake-hardware://{name}"), &spec);
    let lab = Lab::new().file("hosts.yaml", &hosts_file(&[host]));
    let mut watch = crate::lab::Reaped(
        std::process::Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
            .current_dir(lab.path(""))
            .envs(lab_env(&ironic, "0.3"))
            .args(["watch", "--provisioner", "ironic", "-f", "hosts.yaml"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start bmhctl watch"),
    );
    // It says so once it holds the file's lock (the reader kept: the watch writes on).
    let mut stderr = std::io::BufReader::new(watch.0.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
    assert!(line.starts_with("watching "), "{line}");
    // `wait` and the verbs beside it never load a plugin: none is where they would look.
    let verb = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["-f", "hosts.yaml", "--timeout", "5m"]);
        let no_plugin = [("PROVISIONER_PLUGIN_DIR", "/nonexistent")];
        lab.run_env(&all, &no_plugin).expect_code(0)
    };
    verb(&["wait", name, "--for", "provisioned"]);
    verb(&["wait", name, "--for", "powered-on"]);
    assert_eq!(ironic.node_of(name)["provision_state"], "active");
    verb(&["power", "off", name, "--wait"]);
    assert_eq!(ironic.node_of(name)["power_state"], "power off");
    verb(&["power", "on", name, "--wait"]);
    assert_eq!(ironic.node_of(name)["power_state"], "power on");
    let r = verb(&["deprovision", name]);
    assert!(r.stdout.ends_with(" deprovisioned\n"), "{}", r.stdout);
    assert_eq!(ironic.node_of(name)["provision_state"], "available");
    let got = lab
        .run(&["get", "-f", "hosts.yaml", name, "-o", "json"])
        .expect_code(0);
    assert!(got.json()["spec"].get("image").is_none(), "{}", got.stdout);
    verb(&["delete", name]);
    assert!(ironic.node(&format!("{NS}~{name}")).is_none());
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(watch.0.id() as i32, libc::SIGTERM) };
    assert_eq!(watch.0.wait().unwrap().code(), Some(0));
}

/// With deltas from the first node (`BMHCTL_IRONIC_DELTA_FROM=0`) the node watch reads a real
/// Ironic's latest saves (`GET /v1/nodes/detail` sorted by `updated_at`) between full listings:
/// `watch` provisions its hosts, then sees a node powered off and one put in maintenance by hand
/// and answers each as BMO's next steady pass would (power on; maintenance off).
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn deltas_of_a_real_ironic_drive_hosts_and_show_changes_made_by_hand() {
    let _serial = serial();
    shared_ironic();
    let own = OwnIronic::start(6465, &[]);
    let ironic = &own.ironic;
    let names: Vec<String> = (0..3).map(|i| format!("delta-{i}")).collect();
    let hosts: Vec<String> = names
        .iter()
        .map(|n| bmh(n, true, &format!("fake-hardware://{n}"), &fake_image()))
        .collect();
    let lab = Lab::new().file("hosts.yaml", &hosts_file(&hosts));
    let mut watch = crate::lab::Reaped(
        std::process::Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
            .current_dir(lab.path(""))
            .envs(lab_env(ironic, "0.1"))
            .env("BMHCTL_IRONIC_DELTA_FROM", "0")
            .args(["watch", "--provisioner", "ironic", "-f", "hosts.yaml"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start bmhctl watch"),
    );
    let wait = ["wait", "--all", "--for", "provisioned", "-f", "hosts.yaml"];
    let no_plugin = [("PROVISIONER_PLUGIN_DIR", "/nonexistent")];
    lab.run_env(&[&wait[..], &["--timeout", "5m"]].concat(), &no_plugin)
        .expect_code(0);

    let auth = ironic.auth.as_ref();
    let node_url = |n: &str| format!("{}/v1/nodes/{NS}~{n}", ironic.root);
    let (code, body) = http(
        "PUT",
        &format!("{}/states/power", node_url(&names[0])),
        auth,
        Some(&json!({"target": "power off"})),
    );
    assert_eq!(code, 202, "{body}");
    let (code, body) = http(
        "PUT",
        &format!("{}/maintenance", node_url(&names[1])),
        auth,
        Some(&json!({"reason": "set by hand"})),
    );
    assert_eq!(code, 202, "{body}");
    // BMO's steady pass comes 60 s after the last, 6 s at this time scale: well inside 60 s.
    let started = Instant::now();
    let (mut powered, mut cleared) = (false, false);
    while !(powered && cleared) && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(500));
        let off = ironic.node_of(&names[0]);
        powered = off["power_state"] == "power on" || off["target_power_state"] == "power on";
        cleared = ironic.node_of(&names[1])["maintenance"] == false;
    }
    assert!(powered, "powered on again: {}", ironic.node_of(&names[0]));
    assert!(cleared, "out of maintenance: {}", ironic.node_of(&names[1]));

    let log = std::fs::read_to_string(own.state_dir().join("ironic.log")).unwrap();
    let deltas = log
        .lines()
        .filter(|l| l.contains("GET /v1/nodes/detail?sort_key=updated_at&sort_dir=desc"))
        .count();
    let full = log
        .lines()
        .filter(|l| l.contains("GET /v1/nodes?fields=uuid"))
        .count();
    assert!(deltas > full, "deltas {deltas}, full listings {full}");
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(watch.0.id() as i32, libc::SIGTERM) };
    assert_eq!(watch.0.wait().unwrap().code(), Some(0));
}
