//! `ipmi://` hosts against a real Ironic (its `ipmi` hardware type, which runs `ipmitool`) and the
//! lab's IPMI BMC emulator (`scripts/ironic/start-ipmi.sh`, on pyghmi), from enrolment to
//! `provisioned` and back to `available`, with every power change checked on the emulator.
//!
//! Uses the lab of the environment as `ironic_lab.rs` does (`IRONIC_ENDPOINT`, `DEPLOY_ISO_URL`,
//! `METAL3_AUTH_ROOT_DIR`) and the emulator whose first BMC listens on `IPMI_BMC_BASE_PORT`
//! (default 6623; `.ci/run` and `scripts/test.sh` start it and export it), with the password
//! `IPMI_PASSWORD` (default the lab's canary). Without them, or with an Ironic that has no `ipmi`
//! type (no `ipmitool`), the test FAILS: it never skips.
//!
//! The hosts use the emulator's BMCs 2 and 3 (`hosts.example.yaml` has BMC 0). No machine boots
//! behind an emulated BMC, so nothing may wait for a deploy agent: inspection and automated
//! cleaning are disabled and the image is a live ISO, which Ironic deploys with its `ramdisk`
//! deploy interface over the `ipxe` boot interface (it writes an iPXE script that boots the ISO,
//! sets the boot device to network and powers the machine on).

use crate::lab::{Lab, Run};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

const NS: &str = "ipmi-lab";
const API_VERSION: &str = "1.89";
/// `(name, BMC index from IPMI_BMC_BASE_PORT, online once provisioned, boot MAC)`. BMO provisions
/// only an online host: the second goes offline once provisioned.
const HOSTS: [(&str, u16, bool, &str); 2] = [
    ("ipmi-lab-on", 2, true, "52:54:00:1d:00:03"),
    ("ipmi-lab-off", 3, false, "52:54:00:1d:00:04"),
];

/// One test at a time in this module: its hosts and the emulator's BMCs are the same each time.
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

fn env(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.is_empty())
}

// ----------------------------------------------------------------------------------- Ironic

struct Ironic {
    /// `http://HOST:PORT`
    root: String,
    auth: Option<(String, String)>,
}

fn lab_ironic() -> Ironic {
    let endpoint = env("IRONIC_ENDPOINT").unwrap_or_else(|| {
        panic!(
            "IRONIC_ENDPOINT is not set: the IPMI lab test needs the Ironic lab and the IPMI \
             emulator. Run ./scripts/test.sh, or start scripts/ironic/start-ironic.sh and \
             scripts/ironic/start-ipmi.sh and source the Ironic's bmhctl.env"
        )
    });
    let root = endpoint
        .trim_end_matches('/')
        .trim_end_matches("/v1")
        .to_string();
    let auth = env("METAL3_AUTH_ROOT_DIR").and_then(|dir| {
        let read = |f: &str| std::fs::read_to_string(Path::new(&dir).join("ironic").join(f));
        Some((read("username").ok()?, read("password").ok()?))
    });
    let ironic = Ironic { root, auth };
    let (code, body) = ironic.call("GET", "/v1/drivers/ipmi", None);
    assert_eq!(
        code, 200,
        "Ironic at {} has no ipmi hardware type (start-ironic.sh enables it when ipmitool is on \
         PATH or install.sh could unpack one; see its output): {body}",
        ironic.root
    );
    ironic
}

impl Ironic {
    /// `(status, body)` of a call with curl; status 0 when no HTTP answer came.
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, String) {
        let mut cmd = Command::new("curl");
        cmd.args([
            "-sS",
            "--max-time",
            "30",
            "-X",
            method,
            "-w",
            "\n%{http_code}",
        ])
        .args([
            "-H",
            &format!("X-OpenStack-Ironic-API-Version: {API_VERSION}"),
        ]);
        if let Some((user, password)) = &self.auth {
            cmd.args(["-u", &format!("{user}:{password}")]);
        }
        if let Some(b) = body {
            cmd.args(["-H", "Content-Type: application/json", "--data-binary"])
                .arg(b.to_string());
        }
        let out = cmd
            .arg(format!("{}{path}", self.root))
            .output()
            .expect("run curl (needed by the Ironic lab)");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
        (code.trim().parse().unwrap_or(0), body.to_string())
    }

    fn node(&self, name: &str) -> Option<Value> {
        match self.call("GET", &format!("/v1/nodes/{NS}~{name}"), None) {
            (200, body) => Some(serde_json::from_str(&body).expect("node JSON")),
            (404, _) => None,
            (code, body) => panic!("GET node {name}: {code} {body}"),
        }
    }

    /// Removes this module's node left by an aborted run: by name, and the one owning `mac`.
    fn purge(&self, name: &str, mac: &str) {
        let mut ids = vec![format!("{NS}~{name}")];
        if let (200, body) = self.call(
            "GET",
            &format!("/v1/ports?address={mac}&fields=node_uuid"),
            None,
        ) {
            let v: Value = serde_json::from_str(&body).expect("ports JSON");
            for p in v["ports"].as_array().into_iter().flatten() {
                ids.extend(p["node_uuid"].as_str().map(str::to_string));
            }
        }
        for id in ids {
            let (200, body) = self.call("GET", &format!("/v1/nodes/{id}"), None) else {
                continue;
            };
            let node: Value = serde_json::from_str(&body).expect("node JSON");
            // only this module's nodes: someone else's node on the MAC is a real conflict
            if !node["name"].as_str().is_some_and(|n| n.starts_with(NS)) {
                continue;
            }
            self.call(
                "PUT",
                &format!("/v1/nodes/{id}/maintenance"),
                Some(&json!({})),
            );
            let (code, body) = self.call("DELETE", &format!("/v1/nodes/{id}"), None);
            assert!(
                code == 204 || code == 404,
                "delete leftover node {id}: {code} {body}"
            );
        }
    }
}

// ------------------------------------------------------------------------------ the emulator

/// The lab's IPMI BMC emulator: its state directory and where its log was when the test began.
struct Emulator {
    base_port: u16,
    state: PathBuf,
    log_start: usize,
}

impl Emulator {
    fn of_the_lab() -> Self {
        let base_port = env("IPMI_BMC_BASE_PORT").map_or(6623, |p| {
            p.parse()
                .unwrap_or_else(|_| panic!("IPMI_BMC_BASE_PORT={p}"))
        });
        let state = lab_state_dir().join(format!("ipmi-{base_port}"));
        let pid = std::fs::read_to_string(state.join("ipmi.pid")).unwrap_or_default();
        let ready = std::fs::read_to_string(state.join("ready")).unwrap_or_default();
        assert!(
            !pid.trim().is_empty()
                && pid == ready
                && Path::new(&format!("/proc/{}", pid.trim())).exists(),
            "the IPMI emulator is not running from {} (IPMI_BMC_BASE_PORT={base_port}): start \
             scripts/ironic/start-ipmi.sh {base_port}",
            state.display()
        );
        let log_start = Self::log_of(&state).len();
        Emulator {
            base_port,
            state,
            log_start,
        }
    }

    fn log_of(state: &Path) -> String {
        std::fs::read_to_string(state.join("ipmi.log")).unwrap_or_default()
    }

    fn port(&self, index: u16) -> u16 {
        self.base_port + index
    }

    /// The BMC's machine power, `on` or `off`, from its state file.
    fn power(&self, port: u16) -> String {
        let path = self.state.join(format!("bmc-{port}.json"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (does the emulator have BMC {port}? IPMI_BMCS)",
                path.display()
            )
        });
        let v: Value = serde_json::from_str(&text).expect("BMC state JSON");
        v["power"].as_str().unwrap_or_default().to_string()
    }

    /// The commands the BMC on `port` logged since `mark` (a [`Emulator::mark`]), e.g.
    /// `power on (was off)`.
    fn commands_since(&self, mark: usize, port: u16) -> Vec<String> {
        let tag = format!(" port {port}: ");
        Self::log_of(&self.state)
            .get(mark..)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once(&tag).map(|(_, c)| c.to_string()))
            .collect()
    }

    /// The BMC on `port` logged a network boot device, then a power on, since `mark`.
    fn assert_network_boot_then_power_on(&self, mark: usize, port: u16, name: &str) {
        let seen = self.commands_since(mark, port);
        let boot = seen
            .iter()
            .position(|c| c.starts_with("boot device network"));
        let on = seen.iter().position(|c| c.starts_with("power on"));
        assert!(
            matches!((boot, on), (Some(b), Some(o)) if b < o),
            "{name}: network boot, then power on, on BMC {port}: {seen:?}"
        );
    }

    /// Where the log ends now.
    fn mark(&self) -> usize {
        Self::log_of(&self.state).len()
    }
}

/// A logged command that powers the machine off: `power off`, or `power soft` (ACPI), which BMO
/// asks for first.
fn powers_off(command: &str) -> bool {
    command.starts_with("power off") || command.starts_with("power soft")
}

// ----------------------------------------------------------------------------------- bmhctl

fn plugin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let lib = crate::lab::cdylib("ironic-provisioner");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ipmi-lab-plugins");
        std::fs::create_dir_all(&dir).unwrap();
        let tmp = dir.join(format!(".ironic-provisioner.so.{}", std::process::id()));
        std::fs::copy(&lib, &tmp).expect("stage the ironic plugin");
        std::fs::rename(&tmp, dir.join("ironic-provisioner.so")).unwrap();
        dir
    })
}

/// bmhctl with the Ironic plugin; BMO's delays at a fifth (a 10 s poll is 2 s).
fn bmhctl(lab: &Lab, args: &[&str]) -> Run {
    // no deploy ramdisk: the live ISO needs none (BMO sends none without one configured)
    bmhctl_with_ramdisk(lab, args, None)
}

/// [`bmhctl`] with `DEPLOY_KERNEL_URL` and `DEPLOY_RAMDISK_URL` set to `ramdisk`, when given.
fn bmhctl_with_ramdisk(lab: &Lab, args: &[&str], ramdisk: Option<(&str, &str)>) -> Run {
    bmhctl_within(lab, args, ramdisk, "3m")
}

/// [`bmhctl_with_ramdisk`] giving up on a host after `timeout`.
fn bmhctl_within(lab: &Lab, args: &[&str], ramdisk: Option<(&str, &str)>, timeout: &str) -> Run {
    let mut envs: Vec<(&str, String)> = vec![
        ("PROVISIONER_PLUGIN_DIR", plugin_dir().display().to_string()),
        ("BMHCTL_TIME_SCALE", "0.2".into()),
    ];
    for k in ["IRONIC_ENDPOINT", "METAL3_AUTH_ROOT_DIR"] {
        envs.push((k, env(k).unwrap_or_else(|| "/nonexistent".into())));
    }
    let (kernel, initramfs) = ramdisk.unwrap_or(("", ""));
    envs.push(("DEPLOY_ISO_URL", String::new()));
    envs.push(("DEPLOY_KERNEL_URL", kernel.into()));
    envs.push(("DEPLOY_RAMDISK_URL", initramfs.into()));
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut all = vec![args[0], "--provisioner", "ironic", "--timeout", timeout];
    all.extend_from_slice(&args[1..]);
    lab.run_env(&all, &envs)
}

/// The BMC Secret every host of this module names (`bmc`), with the emulator's password.
fn bmc_secret() -> String {
    let password = env("IPMI_PASSWORD").unwrap_or_else(|| crate::canary::LAB_PASSWORD.into());
    format!(
        "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc\n  namespace: {NS}\nstringData:\n  username: admin\n  password: {password}\n"
    )
}

/// The lab's stand-in agent kernel and ramdisk, beside its ISO (scripts/ironic/lib.sh).
fn stand_in_ramdisk() -> (String, String) {
    let iso = env("DEPLOY_ISO_URL").expect("DEPLOY_ISO_URL (the lab's stand-in ISO, bmhctl.env)");
    let images = iso.rsplit_once('/').expect("an ISO URL").0;
    (
        format!("{images}/agent.kernel"),
        format!("{images}/agent.initramfs"),
    )
}

fn hosts_file(emulator: &Emulator, image_url: Option<&str>) -> String {
    let mut s = bmc_secret();
    for (name, index, _, mac) in HOSTS {
        s.push_str(&format!(
            "---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {name}\n  namespace: {NS}\nspec:\n  online: true\n  bootMACAddress: \"{mac}\"\n  bmc:\n    address: ipmi://127.0.0.1:{}\n    credentialsName: bmc\n  inspectionMode: disabled\n  automatedCleaningMode: disabled\n",
            emulator.port(index)
        ));
        if let Some(url) = image_url {
            s.push_str(&format!("  image:\n    url: {url}\n    format: live-iso\n"));
        }
    }
    s
}

/// The `status` of `host` in a hosts file (`Null` when it has none).
fn status_in(text: &str, host: &str) -> Value {
    text.split("\n---\n")
        .filter_map(|d| serde_saphyr::from_str::<Value>(d).ok())
        .find(|v| v["kind"] == "BareMetalHost" && v["metadata"]["name"] == host)
        .unwrap_or_else(|| panic!("no BareMetalHost {host} in\n{text}"))["status"]
        .clone()
}

/// The state transitions bmhctl printed for `host`, as `"a -> b"`.
fn transitions(run: &Run, host: &str) -> Vec<String> {
    let prefix = format!("{NS}/{host}: ");
    run.stderr
        .lines()
        .map(|l| match l.split_once(' ') {
            Some((time, rest)) if time.ends_with('Z') && time.contains('T') => rest,
            _ => l,
        })
        .filter_map(|l| l.strip_prefix(&prefix))
        .filter(|l| l.contains(" -> ") && !l.starts_with("event "))
        .map(str::to_string)
        .collect()
}

// ------------------------------------------------------------------------------------ tests

/// Two `ipmi://` hosts from nothing to `provisioned`, one of them then powered off (`online:
/// false`), both back to `available` when their image is removed, then deleted. Ironic runs
/// `ipmitool` against the emulator for every power change (deploy, BMO's `online`, tear-down,
/// power off before delete), and the emulator's log and state show each one.
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn ipmi_hosts_are_provisioned_and_deprovisioned_with_power_seen_by_the_emulator() {
    let _serial = serial();
    let t0 = Instant::now();
    let ironic = lab_ironic();
    let emulator = Emulator::of_the_lab();
    let iso = env("DEPLOY_ISO_URL").expect("DEPLOY_ISO_URL (the lab's stand-in ISO, bmhctl.env)");
    for (name, _, _, mac) in HOSTS {
        ironic.purge(name, mac);
    }
    let mut phases = Vec::new();

    // 1. enrol, register (Ironic checks the BMC over IPMI), deploy the live ISO: the emulator
    // sees the boot device set to network, then the machine powered on
    let lab = Lab::new().file("hosts.yaml", &hosts_file(&emulator, Some(&iso)));
    let mark = emulator.mark();
    let run = bmhctl(&lab, &["provision", "hosts.yaml"]).expect_code(0);
    phases.push(("provisioned", t0.elapsed()));
    for (name, index, _, _) in HOSTS {
        let trans = transitions(&run, name);
        assert_eq!(
            trans,
            [
                "(new) -> registering",
                "registering -> preparing",
                "preparing -> available",
                "available -> provisioning",
                "provisioning -> provisioned"
            ],
            "{name}\n--- stderr\n{}",
            run.stderr
        );
        let status = status_in(&lab.read("hosts.yaml"), name);
        assert_eq!(status["provisioning"]["state"], "provisioned", "{status:#}");
        assert_eq!(status["poweredOn"], true, "{status:#}");
        let node = ironic.node(name).expect("the host's node");
        assert_eq!(node["driver"], "ipmi", "{node:#}");
        assert_eq!(node["driver_info"]["ipmi_address"], "127.0.0.1");
        assert_eq!(
            node["driver_info"]["ipmi_port"],
            emulator.port(index).to_string()
        );
        assert_eq!(node["boot_interface"], "ipxe");
        assert_eq!(node["deploy_interface"], "ramdisk");
        assert_eq!(node["provision_state"], "active", "{node:#}");
        assert_eq!(node["power_state"], "power on", "{node:#}");
        assert_eq!(node["instance_info"]["boot_iso"], iso.as_str());
        let port = emulator.port(index);
        emulator.assert_network_boot_then_power_on(mark, port, name);
        assert_eq!(emulator.power(port), "on", "{name}: BMC {port}'s machine");
    }

    // 2. `online: false` for the second: powered off over IPMI, still provisioned
    let (off_name, off_index, ..) = HOSTS[1];
    let text = lab.read("hosts.yaml").replacen(
        &format!("  name: {off_name}\n  namespace: {NS}\nspec:\n  online: true\n"),
        &format!("  name: {off_name}\n  namespace: {NS}\nspec:\n  online: false\n"),
        1,
    );
    std::fs::write(lab.path("hosts.yaml"), text).unwrap();
    let mark = emulator.mark();
    let t = Instant::now();
    let run = bmhctl(&lab, &["provision", "hosts.yaml"]).expect_code(0);
    phases.push(("powered off", t.elapsed()));
    for (name, index, online, _) in HOSTS {
        assert_eq!(transitions(&run, name), Vec::<String>::new(), "{name}");
        let status = status_in(&lab.read("hosts.yaml"), name);
        assert_eq!(status["provisioning"]["state"], "provisioned", "{status:#}");
        assert_eq!(status["poweredOn"], online, "{status:#}");
        let want = if online { "on" } else { "off" };
        let node = ironic.node(name).expect("the host's node");
        assert_eq!(node["power_state"], format!("power {want}"), "{node:#}");
        assert_eq!(emulator.power(emulator.port(index)), want, "{name}");
    }
    let seen = emulator.commands_since(mark, emulator.port(off_index));
    assert!(
        seen.iter().any(|c| powers_off(c)),
        "{off_name}: powered off: {seen:?}"
    );

    // 3. the image removed: deprovisioning -> available. Ironic's tear-down powers the machine
    // off (the offline one is off already), and BMO powers the online host on again once it is
    // available
    let mut cut = String::new();
    let mut skipping = false;
    for line in lab.read("hosts.yaml").split_inclusive('\n') {
        // the spec's image block (the status has its own `image:`, indented deeper)
        if line == "  image:\n" {
            skipping = true;
            continue;
        }
        if skipping && line.starts_with("    ") {
            continue;
        }
        skipping = false;
        cut.push_str(line);
    }
    std::fs::write(lab.path("hosts.yaml"), cut).unwrap();
    let mark = emulator.mark();
    let t = Instant::now();
    let run = bmhctl(&lab, &["provision", "hosts.yaml"]).expect_code(0);
    phases.push(("deprovisioned", t.elapsed()));
    for (name, index, online, _) in HOSTS {
        assert_eq!(
            transitions(&run, name),
            [
                "provisioned -> deprovisioning",
                "deprovisioning -> available"
            ],
            "{name}\n--- stderr\n{}",
            run.stderr
        );
        let status = status_in(&lab.read("hosts.yaml"), name);
        assert_eq!(status["provisioning"]["state"], "available", "{status:#}");
        assert_eq!(status["poweredOn"], online, "{status:#}");
        let node = ironic.node(name).expect("the host's node");
        assert_eq!(node["provision_state"], "available", "{node:#}");
        assert!(
            node["instance_info"].get("boot_iso").is_none(),
            "undeploy clears the instance: {node:#}"
        );
        let port = emulator.port(index);
        let seen = emulator.commands_since(mark, port);
        if online {
            let off = seen.iter().position(|c| powers_off(c));
            let on = seen.iter().rposition(|c| c.starts_with("power on"));
            assert!(
                matches!((off, on), (Some(f), Some(n)) if f < n),
                "{name}: powered off at the tear-down, then on, on BMC {port}: {seen:?}"
            );
        }
        let want = if online { "on" } else { "off" };
        assert_eq!(emulator.power(port), want, "{name}: BMC {port}'s machine");
    }

    // 4. deleted (BMO powers a host off first), so the BMCs and MACs are free for the next run
    let mark = emulator.mark();
    let t = Instant::now();
    bmhctl(&lab, &["delete", "-f", "hosts.yaml"]).expect_code(0);
    phases.push(("deleted", t.elapsed()));
    for (name, index, online, _) in HOSTS {
        assert!(ironic.node(name).is_none(), "{name}'s node still in Ironic");
        let port = emulator.port(index);
        let seen = emulator.commands_since(mark, port);
        assert!(
            !online || seen.iter().any(|c| powers_off(c)),
            "{name}: powered off before delete, on BMC {port}: {seen:?}"
        );
        assert_eq!(emulator.power(port), "off", "{name}: BMC {port}'s machine");
    }
    eprintln!(
        "{phases:.1?}, all in {:.1?}; the emulator's log meanwhile:\n{}",
        t0.elapsed(),
        Emulator::log_of(&emulator.state)
            .get(emulator.log_start..)
            .unwrap_or_default()
    );
}

// --------------------------------------------------------------- inspection by the agent

/// `(name, BMC index, saved agent data in tests/data/agent-inventory/)`: this lab machine as
/// ironic-python-agent read it, and a rack server in the agent's format with what a VM lacks
/// (serials, WWNs, by-path names, NVMe, LLDP from a switch, firmware). The boot MAC of each is the
/// one its data booted from.
const AGENT_HOSTS: [(&str, u16, &str); 2] = [
    ("ipmi-lab-vm", 4, "lab-vm"),
    ("ipmi-lab-rack", 5, "rack-server"),
];

/// A running `agent_inventory.py answer`, killed if the test ends before it does.
struct AgentStandIn(Option<std::process::Child>);

impl Drop for AgentStandIn {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn agent_data(file: &str) -> PathBuf {
    repo().join("tests/data/agent-inventory").join(file)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The MAC of the interface the saved data booted from.
fn boot_mac(data: &Value) -> String {
    data["inventory"]["boot"]["pxe_interface"]
        .as_str()
        .expect("the saved data names its PXE interface")
        .to_string()
}

/// A value with what Go's `omitempty` leaves out removed (false, 0, "", [], {}, null) and every
/// number as a float, so that the YAML status and Go's JSON compare by meaning.
fn meaning(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), meaning(v)))
                .filter(|(_, v)| !is_empty(v))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(meaning).collect()),
        Value::Number(n) => json!(n.as_f64().expect("a finite number")),
        v => v.clone(),
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Bool(true) => false,
    }
}

/// Every leaf of `v` as `(path, value)`, e.g. `("nics[2].mac", "0c:42:...")`.
fn leaves(v: &Value, path: &str, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                leaves(v, &p, out);
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                leaves(v, &format!("{path}[{i}]"), out);
            }
        }
        v => out.push((path.to_string(), v.clone())),
    }
}

/// `status.hardware` against BMO's conversion, field by field (every differing leaf named by its
/// path).
fn assert_hardware_is_bmos(host: &str, hardware: &Value, bmo: &Value) {
    let mine = meaning(hardware);
    let bmo = meaning(bmo);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    leaves(&mine, "", &mut a);
    leaves(&bmo, "", &mut b);
    let differ: Vec<String> = b
        .iter()
        .filter(|leaf| !a.contains(leaf))
        .map(|(p, v)| {
            format!(
                "{p}: BMO {v}, bmhctl {}",
                a.iter()
                    .find(|(q, _)| q == p)
                    .map_or("(none)".into(), |(_, v)| v.to_string())
            )
        })
        .chain(
            a.iter()
                .filter(|(p, _)| !b.iter().any(|(q, _)| q == p))
                .map(|(p, v)| format!("{p}: BMO (none), bmhctl {v}")),
        )
        .collect();
    assert!(
        differ.is_empty(),
        "{host}: status.hardware differs from BMO's conversion in {} fields:\n{}",
        differ.len(),
        differ.join("\n")
    );
    assert_eq!(mine, bmo, "{host}");
    // the fields the comparison covered, so an empty fixture cannot pass
    for field in [
        "cpu.arch",
        "cpu.count",
        "ramMebibytes",
        "nics[0].mac",
        "storage[0].sizeBytes",
    ] {
        assert!(
            b.iter().any(|(p, _)| p == field),
            "{host}: BMO's details have no {field}"
        );
    }
}

/// Two `ipmi://` hosts inspected in band, as BMO inspects by default: Ironic's `agent` inspect
/// interface boots each over IPMI (network boot, power on: seen by the emulator), and instead of
/// a ramdisk, `scripts/ironic/agent_inventory.py` sends the saved agent data to Ironic's real
/// inspection endpoint once the node waits for it. Ironic's hooks process it (PXE interface,
/// ports, LLDP) and bmhctl converts what Ironic stores. `status.hardware` must equal, field by
/// field, BMO's conversion of the same stored data, computed by
/// `scripts/ironic/bmo_hardware_details.py` (BMO's Go code restated) and kept in
/// `tests/data/agent-inventory/*.hardware.json`. `BMHCTL_WRITE_AGENT_FIXTURES=1` rewrites those
/// from this run.
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn ipmi_hosts_inspected_by_the_agent_get_bmos_hardware_details() {
    let _serial = serial();
    let t0 = Instant::now();
    let ironic = lab_ironic();
    let emulator = Emulator::of_the_lab();
    let (kernel, initramfs) = stand_in_ramdisk();
    let mut hosts = bmc_secret();
    let mut agents = Vec::new();
    for (name, index, data) in AGENT_HOSTS {
        let file = agent_data(&format!("{data}.json"));
        let mac = boot_mac(&read_json(&file));
        ironic.purge(name, &mac);
        // inspection left at BMO's default: in band, by the agent
        hosts.push_str(&format!(
            "---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {name}\n  namespace: {NS}\nspec:\n  online: false\n  bootMACAddress: \"{mac}\"\n  bmc:\n    address: ipmi://127.0.0.1:{}\n    credentialsName: bmc\n  automatedCleaningMode: disabled\n",
            emulator.port(index)
        ));
        let agent = Command::new("python3")
            .arg(repo().join("scripts/ironic/agent_inventory.py"))
            .args(["answer", "--ironic", &ironic.root, "--timeout", "150"])
            .arg("--data")
            .arg(&file)
            .args(["--node", &format!("{NS}~{name}")])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run python3 scripts/ironic/agent_inventory.py");
        agents.push((name, AgentStandIn(Some(agent))));
    }

    let lab = Lab::new().file("hosts.yaml", &hosts);
    let mark = emulator.mark();
    let run = bmhctl_with_ramdisk(
        &lab,
        &["provision", "hosts.yaml"],
        Some((&kernel, &initramfs)),
    )
    .expect_code(0);
    let inspected = t0.elapsed();
    for (name, mut agent) in agents {
        let out = agent
            .0
            .take()
            .unwrap()
            .wait_with_output()
            .expect("the agent stand-in");
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && said.contains(&format!("answered {NS}~{name} ")),
            "the agent stand-in for {name}: {}\n{said}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !said.contains("agent_token"),
            "the agent's token printed: {said}"
        );
    }

    let text = lab.read("hosts.yaml");
    for (name, index, data) in AGENT_HOSTS {
        assert_eq!(
            transitions(&run, name),
            [
                "(new) -> registering",
                "registering -> inspecting",
                "inspecting -> preparing",
                "preparing -> available"
            ],
            "{name}\n--- stderr\n{}",
            run.stderr
        );
        let node = ironic.node(name).expect("the host's node");
        assert_eq!(node["inspect_interface"], "agent", "{node:#}");
        assert_eq!(node["driver_info"]["deploy_kernel"], kernel.as_str());
        // Ironic booted the machine to inspect it: network boot, then power on
        let port = emulator.port(index);
        emulator.assert_network_boot_then_power_on(mark, port, name);
        // and powered it off when the data came (the host is offline)
        assert_eq!(emulator.power(port), "off", "{name}: BMC {port}'s machine");

        let (code, body) = ironic.call("GET", &format!("/v1/nodes/{NS}~{name}/inventory"), None);
        assert_eq!(code, 200, "{name}'s inventory: {body}");
        let stored: Value = serde_json::from_str(&body).expect("inventory JSON");
        let bmo_now = Command::new("python3")
            .arg(repo().join("scripts/ironic/bmo_hardware_details.py"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(body.as_bytes())?;
                c.wait_with_output()
            })
            .expect("run scripts/ironic/bmo_hardware_details.py");
        assert!(
            bmo_now.status.success(),
            "BMO's conversion of {name}'s data"
        );
        let bmo_now: Value = serde_json::from_slice(&bmo_now.stdout).expect("its JSON");
        let fixture = agent_data(&format!("{data}.hardware.json"));
        if env("BMHCTL_WRITE_AGENT_FIXTURES").as_deref() == Some("1") {
            let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap() + "\n";
            std::fs::write(agent_data(&format!("{data}.ironic.json")), pretty(&stored)).unwrap();
            std::fs::write(&fixture, pretty(&bmo_now)).unwrap();
        }
        // the kept fixture is BMO's conversion of what this Ironic stored
        assert_eq!(
            meaning(&bmo_now),
            meaning(&read_json(&fixture)),
            "{name}: BMO's conversion of this run's data is not {}",
            fixture.display()
        );
        let status = status_in(&text, name);
        assert_eq!(status["provisioning"]["state"], "available", "{status:#}");
        assert_hardware_is_bmos(name, &status["hardware"], &bmo_now);
    }

    bmhctl(&lab, &["delete", "-f", "hosts.yaml"]).expect_code(0);
    for (name, ..) in AGENT_HOSTS {
        assert!(ironic.node(name).is_none(), "{name}'s node still in Ironic");
    }
    eprintln!("inspected in {inspected:.1?}, all in {:.1?}", t0.elapsed());
}

/// A forced detach of a host whose deployment waits for its agent (`wait call-back`): from API
/// 1.110 (Ironic 2026.1) Ironic can abort a deployment there and BMO asks for `abort`; below, it
/// asks for `deleted` (an undeploy). Either way the node is then removed and the host detached.
/// Which one Ironic did is read from its log, the one place that outlives the node.
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn a_forced_detach_in_wait_call_back_aborts_from_api_1_110_and_undeploys_below() {
    let _serial = serial();
    let ironic = lab_ironic();
    let emulator = Emulator::of_the_lab();
    let (name, index, mac) = ("ipmi-lab-abort", 1, "52:54:00:1d:00:02");
    ironic.purge(name, mac);
    let (_, v1) = ironic.call("GET", "/v1/", None);
    let v1: Value = serde_json::from_str(&v1).expect("the version document");
    let max = v1["version"]["version"].as_str().unwrap().to_string();
    let minor: u32 = max.trim_start_matches("1.").parse().unwrap();
    let iso = env("DEPLOY_ISO_URL").expect("DEPLOY_ISO_URL (the lab's stand-in ISO, bmhctl.env)");
    let (kernel, initramfs) = stand_in_ramdisk();
    // a disk image: Ironic's `direct` deploy boots the agent and waits for it, which never comes
    let hosts = bmc_secret()
        + &format!(
            "---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {name}\n  namespace: {NS}\nspec:\n  online: true\n  bootMACAddress: \"{mac}\"\n  bmc:\n    address: ipmi://127.0.0.1:{}\n    credentialsName: bmc\n  inspectionMode: disabled\n  automatedCleaningMode: disabled\n  image:\n    url: {iso}\n    format: raw\n    checksumType: sha256\n    checksum: \"{}\"\n",
            emulator.port(index),
            "3f786850e387550fdab836ed7e6dc881de23001b3f786850e387550fdab836ed"
        );
    let lab = Lab::new().file("hosts.yaml", &hosts);
    let ramdisk = Some((kernel.as_str(), initramfs.as_str()));
    // (bmhctl's clock runs at BMHCTL_TIME_SCALE 0.2 here: 150 s are 30 s)
    let run = bmhctl_within(&lab, &["provision", "hosts.yaml"], ramdisk, "150s").expect_code(1);
    let node = ironic.node(name).expect("the host's node");
    assert_eq!(
        (
            node["provision_state"].as_str(),
            node["deploy_interface"].as_str()
        ),
        (Some("wait call-back"), Some("direct")),
        "{node:#}\n--- stderr\n{}",
        run.stderr
    );
    let uuid = node["uuid"].as_str().unwrap().to_string();

    lab.run(&[
        "detach",
        "--force",
        &format!("{NS}/{name}"),
        "-f",
        "hosts.yaml",
    ])
    .expect_code(0);
    let run = bmhctl_within(&lab, &["provision", "hosts.yaml"], ramdisk, "5m").expect_code(1);
    assert!(
        ironic.node(name).is_none(),
        "the node of a detached host is removed\n--- stderr\n{}",
        run.stderr
    );
    let status = status_in(&lab.read("hosts.yaml"), name);
    assert_eq!(status["operationalStatus"], "detached", "{status:#}");

    let port = ironic.root.rsplit(':').next().unwrap().to_string();
    let log = std::fs::read_to_string(lab_state_dir().join(format!("ironic-{port}/ironic.log")))
        .expect("the lab Ironic's log");
    let left: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(&format!("Node {uuid} moved to provision state")))
        .filter(|l| l.contains("from state \"wait call-back\""))
        .collect();
    let want = if minor >= 110 {
        "deploy failed"
    } else {
        "deleting"
    };
    assert!(
        left.len() == 1 && left[0].contains(&format!("provision state \"{want}\"")),
        "Ironic {max}: the node should have left `wait call-back` for `{want}`: {left:#?}"
    );
}
