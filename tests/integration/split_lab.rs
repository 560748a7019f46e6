//! bmhctl against Ironic scaled out: one `ironic-api` and two `ironic-conductor` processes on
//! one PostgreSQL (`scripts/ironic/start-ironic-split.sh`), fake-hardware hosts.
//!
//! Each test starts the split lab of its own, fresh, on ports of its own (API [`PORT`],
//! PostgreSQL [`PG_PORT`]; the conductors' JSON-RPC is on 127.0.0.2 and 127.0.0.3, port 8089
//! unless a test names another, so only one split lab runs on a machine) and stops it,
//! PostgreSQL included, when it ends, passed or not. `BMHCTL_SPLIT_LAB_PORT` and `BMHCTL_SPLIT_LAB_PG_PORT` move them. Without
//! PostgreSQL or Ironic installable the tests FAIL: they never skip.
//!
//! The tests take [`serial`]: they share those ports.

use crate::lab::Lab;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// The API port of the tests' split lab (its image server takes `PORT + 1`).
const PORT: u16 = 6455;
const PG_PORT: u16 = 15455;
const NS: &str = "split-lab";
const API_VERSION: &str = "1.89";
/// A qcow2 image for fake-hardware hosts (the fake deploy never downloads it).
const FAKE_IMAGE: &str = "image:\n  url: http://127.0.0.1:6456/images/lab-os.qcow2\n  checksum: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n  checksumType: sha256\n  format: qcow2";

fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn port_from_env(var: &str, default: u16) -> u16 {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => v
            .parse()
            .unwrap_or_else(|e| panic!("{var}={v:?} is not a port: {e}")),
        _ => default,
    }
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

/// `(status, body)` of an Ironic API call with curl (the lab scripts need curl too).
fn http(method: &str, url: &str, body: Option<&Value>) -> (u16, String) {
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "--max-time", "30", "-X", method])
        .args([
            "-H",
            &format!("X-OpenStack-Ironic-API-Version: {API_VERSION}"),
        ])
        .args(["-H", "Accept: application/json", "-w", "\n%{http_code}"]);
    if let Some(b) = body {
        cmd.args(["-H", "Content-Type: application/json", "--data-binary"])
            .arg(b.to_string());
    }
    let out = cmd.arg(url).output().expect("run curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

/// The split lab of a test: started fresh, stopped (with its PostgreSQL) on drop.
struct SplitLab {
    port: u16,
    pg_port: u16,
    /// `http://127.0.0.1:PORT`
    root: String,
    /// What `bmhctl.env` says: `IRONIC_ENDPOINT`, `DEPLOY_ISO_URL`, `METAL3_AUTH_ROOT_DIR`.
    env: BTreeMap<String, String>,
}

impl SplitLab {
    /// Two conductors; `extra_conf` is appended to every process's configuration.
    fn start(extra_conf: Option<&Path>) -> SplitLab {
        Self::start_on(extra_conf, 8089)
    }

    /// [`SplitLab::start`] with the conductors' JSON-RPC on `rpc_port`.
    fn start_on(extra_conf: Option<&Path>, rpc_port: u16) -> SplitLab {
        let port = port_from_env("BMHCTL_SPLIT_LAB_PORT", PORT);
        let pg_port = port_from_env("BMHCTL_SPLIT_LAB_PG_PORT", PG_PORT);
        // Stopped on drop from here on, whatever the start does.
        let mut lab = SplitLab {
            port,
            pg_port,
            root: format!("http://127.0.0.1:{port}"),
            env: BTreeMap::new(),
        };
        let mut cmd = Command::new(repo().join("scripts/ironic/start-ironic-split.sh"));
        cmd.args([&port.to_string(), "--conductors", "2"])
            .current_dir(repo())
            .env("IRONIC_FRESH", "1")
            .env("IRONIC_PG_PORT", pg_port.to_string())
            .env("IRONIC_RPC_PORT", rpc_port.to_string())
            .env_remove("IRONIC_DB")
            .env_remove("IRONIC_EXTRA_CONF");
        if let Some(conf) = extra_conf {
            cmd.env("IRONIC_EXTRA_CONF", conf);
        }
        let out = cmd
            .output()
            .expect("run scripts/ironic/start-ironic-split.sh");
        assert!(
            out.status.success(),
            "start-ironic-split.sh {port} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(lab.state().join("bmhctl.env")).expect("bmhctl.env");
        lab.env = text
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        lab
    }

    fn state(&self) -> PathBuf {
        lab_state_dir().join(format!("ironic-{}", self.port))
    }

    fn get(&self, path: &str) -> Value {
        let (code, body) = http("GET", &format!("{}{path}", self.root), None);
        assert_eq!(code, 200, "GET {path}: {body}");
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {path}: {e}: {body}"))
    }

    fn node(&self, host: &str) -> Value {
        self.get(&format!("/v1/nodes/{NS}~{host}"))
    }

    /// The nodes of `hosts` in a line each (for failure messages).
    fn nodes_text(&self, hosts: &[String]) -> String {
        hosts
            .iter()
            .map(|h| {
                let n = self.node(h);
                format!(
                    "{h}: {} (target {}), conductor {}, reservation {}, last_error {}\n",
                    n["provision_state"],
                    n["target_provision_state"],
                    n["conductor"],
                    n["reservation"],
                    n["last_error"]
                )
            })
            .collect()
    }

    /// The conductors Ironic lists: host name → alive.
    fn conductors(&self) -> BTreeMap<String, bool> {
        self.get("/v1/conductors?fields=hostname,alive")["conductors"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                (
                    c["hostname"].as_str().unwrap_or("").to_string(),
                    c["alive"].as_bool().unwrap_or(false),
                )
            })
            .collect()
    }

    /// The log of `name` (`api`, `conductor-1`, ...).
    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.state().join(format!("split/{name}.log"))).unwrap_or_default()
    }

    /// Starts the fake vendor call `second_method` on `host`'s node (ten minutes with the tests'
    /// `vendor_delay`), its conductor holding the node's lock meanwhile: (node UUID, holder).
    fn hold_with_vendor_call(&self, host: &str) -> (String, String) {
        let uuid = self.node(host)["uuid"].as_str().unwrap().to_string();
        let url = format!(
            "{}/v1/nodes/{uuid}/vendor_passthru?method=second_method",
            self.root
        );
        let (code, body) = http("POST", &url, Some(&json!({"bar": "kazoo"})));
        assert_eq!(code, 202, "vendor passthru: {body}");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(r) = self.node(host)["reservation"].as_str() {
                return (uuid, r.to_string());
            }
            assert!(Instant::now() < deadline, "the node was never reserved");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Starts conductor `name` again, as it was configured; stop-ironic.sh stops it with the
    /// rest (its pid file is updated).
    fn restart_conductor(&self, name: &str) -> Child {
        let log = std::fs::OpenOptions::new()
            .append(true)
            .open(self.state().join(format!("split/{name}.stdout.log")))
            .unwrap();
        // The ipmitool the lab unpacked, on PATH as the start script put it (with the ipmi
        // hardware type enabled, a conductor without it does not start).
        let ipmitool = lab_state_dir().join("ipmitool/bin");
        let path = std::env::var("PATH").unwrap_or_default();
        let path = if ipmitool.is_dir() {
            format!("{}:{path}", ipmitool.display())
        } else {
            path
        };
        let child = Command::new("setsid")
            .env("PATH", path)
            .arg(lab_state_dir().join(".venv-ironic/bin/ironic-conductor"))
            .arg("--config-file")
            .arg(self.state().join(format!("split/{name}.conf")))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start the conductor again");
        let pidfile = self.state().join(format!("split/{name}.pid"));
        std::fs::write(&pidfile, child.id().to_string()).unwrap();
        child
    }

    /// SIGKILLs conductor `name`: a master and its worker, in a process group of their own,
    /// both at once, as on a crash (the master alone would let the worker shut down
    /// gracefully).
    fn kill_conductor(&self, name: &str) {
        let pidfile = self.state().join(format!("split/{name}.pid"));
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let status = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pid}")])
            .status()
            .unwrap();
        assert!(status.success(), "kill -KILL -- -{pid}");
    }

    /// The conductor process (`conductor-K`) that runs as `host` (127.0.0.(K+1)).
    fn conductor_name(host: &str) -> String {
        let last: u8 = host
            .rsplit('.')
            .next()
            .and_then(|o| o.parse().ok())
            .unwrap_or_else(|| panic!("not a conductor of the lab: {host}"));
        format!("conductor-{}", last - 1)
    }
}

impl Drop for SplitLab {
    fn drop(&mut self) {
        let _ = Command::new(repo().join("scripts/ironic/stop-ironic.sh"))
            .arg(self.port.to_string())
            .current_dir(repo())
            .output();
        let _ = Command::new(repo().join("scripts/ironic/stop-postgres.sh"))
            .arg(self.pg_port.to_string())
            .current_dir(repo())
            .output();
    }
}

/// The Ironic plugin, built with the cargo that runs the tests, in a directory of its own.
fn plugin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let lib = crate::lab::cdylib("ironic-provisioner");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("split-lab-plugins");
        std::fs::create_dir_all(&dir).unwrap();
        let tmp = dir.join(format!(".ironic-provisioner.so.{}", std::process::id()));
        std::fs::copy(&lib, &tmp).expect("stage the ironic plugin");
        std::fs::rename(&tmp, dir.join("ironic-provisioner.so")).unwrap();
        dir
    })
}

/// `hosts` fake-hardware BareMetalHosts, each with `spec` lines (indented under `spec:`).
fn hosts_file(hosts: &[String], spec: &str) -> String {
    let lab_password = crate::canary::lab_password();
    let mut s = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc\n  namespace: {NS}\nstringData:\n  username: admin\n  password: {lab_password}\n"
    );
    for h in hosts {
        s.push_str(&format!(
            "---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {h}\n  namespace: {NS}\nspec:\n  online: true\n  bmc:\n    address: fake-hardware://{h}\n    credentialsName: bmc\n"
        ));
        for line in spec.lines() {
            s.push_str(&format!("  {line}\n"));
        }
    }
    s
}

/// `bmhctl provision --provisioner ironic --progress plain -o json ...` against `lab`, at BMO's
/// delays times `scale`, started and left running.
fn spawn_bmhctl(dir: &Lab, lab: &SplitLab, scale: &str, args: &[&str]) -> Child {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"));
    cmd.current_dir(dir.path(""))
        .args([
            "provision",
            "--provisioner",
            "ironic",
            "--progress",
            "plain",
        ])
        .args(["-o", "json"])
        .args(args)
        .env("BMHCTL_TIME_SCALE", scale)
        .env("BMHCTL_SEED", "1")
        .env("PROVISIONER_PLUGIN_DIR", plugin_dir())
        .env("PROVISIONING_LIMIT", "20")
        .env_remove("BMHCTL_PROVISIONER")
        .envs(&lab.env)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn().expect("start bmhctl")
}

/// What a running bmhctl printed: stderr lines with when they came, and stdout at the end.
struct Output {
    lines: Arc<Mutex<Vec<(Instant, String)>>>,
    reader: Option<std::thread::JoinHandle<()>>,
    stdout: Option<std::thread::JoinHandle<String>>,
}

impl Output {
    fn follow(child: &mut Child) -> Output {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let err = child.stderr.take().unwrap();
        let out = child.stdout.take().unwrap();
        let seen = lines.clone();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                seen.lock().unwrap().push((Instant::now(), line));
            }
        });
        let stdout = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut BufReader::new(out), &mut s);
            s
        });
        Output {
            lines,
            reader: Some(reader),
            stdout: Some(stdout),
        }
    }

    /// When a line containing `text` first came.
    fn first(&self, text: &str) -> Option<(Instant, String)> {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .find(|(_, l)| l.contains(text))
            .cloned()
    }

    fn stderr(&self) -> String {
        let lines = self.lines.lock().unwrap();
        lines.iter().map(|(_, l)| format!("{l}\n")).collect()
    }

    /// Waits for the run to end (killing it after `limit`): exit code, stdout, stderr.
    fn finish(mut self, child: &mut Child, limit: Duration) -> (i32, String, String) {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait for bmhctl") {
                break s;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("bmhctl still running after {limit:?}:\n{}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        self.reader.take().unwrap().join().unwrap();
        let stdout = self.stdout.take().unwrap().join().unwrap();
        (status.code().unwrap_or(-1), stdout, self.stderr())
    }
}

/// Every host of the result `doc` reached its goal.
#[track_caller]
fn assert_all_reached(code: i32, stdout: &str, stderr: &str, hosts: &[String]) {
    assert_eq!(
        code, 0,
        "exit code\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    let doc: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let reached: BTreeSet<&str> = doc["hosts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|h| h["reached"] == true)
        .filter_map(|h| h["name"].as_str())
        .collect();
    let want: BTreeSet<&str> = hosts.iter().map(String::as_str).collect();
    assert_eq!(reached, want, "{stdout}");
}

// ------------------------------------------------------------------------------------ tests

/// Twelve hosts through a two-conductor Ironic to `provisioned`; Ironic's hash ring spreads
/// their nodes over both conductors, and each conductor's log shows it moved nodes of its own
/// through their states. (Twelve: the ring puts all of them on one conductor with a chance of
/// 2^-11.)
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn hosts_reach_their_goals_through_two_conductors_and_both_serve_nodes() {
    let _serial = serial();
    let lab = SplitLab::start(None);
    let conductors = lab.conductors();
    assert_eq!(
        conductors,
        BTreeMap::from([("127.0.0.2".into(), true), ("127.0.0.3".into(), true)]),
        "two conductors alive"
    );
    let hosts: Vec<String> = (0..12).map(|i| format!("spread-{i}")).collect();
    let dir = Lab::new().file("hosts.yaml", &hosts_file(&hosts, FAKE_IMAGE));
    let started = Instant::now();
    let mut child = spawn_bmhctl(&dir, &lab, "0.2", &["--timeout", "20m", "hosts.yaml"]);
    let (code, stdout, stderr) =
        Output::follow(&mut child).finish(&mut child, Duration::from_secs(600));
    eprintln!("12 hosts provisioned in {:?}", started.elapsed());
    assert_all_reached(code, &stdout, &stderr, &hosts);

    let mut served: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for h in &hosts {
        let node = lab.node(h);
        assert_eq!(node["provision_state"], "active", "{h}: {node:#}");
        let conductor = node["conductor"].as_str().unwrap_or("").to_string();
        served
            .entry(conductor)
            .or_default()
            .push(node["uuid"].as_str().unwrap().to_string());
    }
    assert_eq!(
        served.keys().cloned().collect::<BTreeSet<_>>(),
        BTreeSet::from(["127.0.0.2".to_string(), "127.0.0.3".to_string()]),
        "nodes per conductor: {served:?}"
    );
    // Served, not only mapped: each conductor logged work on its own nodes, and on none of
    // the other's.
    for (conductor, nodes) in &served {
        let log = lab.log(&SplitLab::conductor_name(conductor));
        assert!(
            nodes.iter().any(|n| log.contains(n.as_str())),
            "{conductor} logged none of its nodes {nodes:?}"
        );
        let others = served
            .iter()
            .filter(|(c, _)| *c != conductor)
            .flat_map(|(_, n)| n);
        for n in others {
            assert!(
                !log.lines()
                    .any(|l| l.contains(n.as_str()) && l.contains("provision state")),
                "{conductor} moved {n}, which is another conductor's"
            );
        }
    }
}

/// A conductor is SIGKILLed while it holds a node's lock (a slow vendor call of the fake
/// driver keeps it held). A run started then: the hosts whose nodes the live conductor serves
/// (all but the locked one, once the ring has moved the dead one's nodes over) reach their
/// goals; the locked host says so within a minute of the kill, and then Ironic refuses it at
/// most one request per 30 s. Once the conductor is started again (it frees its own locks),
/// the locked host reaches its goal too.
///
/// The lab's configuration shortens how soon a dead conductor counts as offline (15 s) and
/// the ring's refresh (5 s), and keeps the live conductor from taking over the lock on its
/// own for ten minutes (`check_provision_state_interval`): the lock holds for as long as the
/// test watches.
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn a_sigkilled_conductor_leaves_its_lock_the_host_says_why_and_asks_seldom() {
    let _serial = serial();
    let dir = Lab::new().file(
        "split-lab.conf",
        "[fake]\nvendor_delay = 600\n\n[conductor]\nheartbeat_timeout = 15\n\
         check_provision_state_interval = 600\n\n[DEFAULT]\nhash_ring_reset_interval = 5\n",
    );
    let lab = SplitLab::start(Some(&dir.path("split-lab.conf")));
    let hosts: Vec<String> = (0..4).map(|i| format!("kill-{i}")).collect();

    // The hosts to `available` first: their nodes exist, on either conductor. Without
    // automated cleaning: its fake step is a vendor call, which the delay makes ten minutes.
    let dir = dir.file(
        "hosts.yaml",
        &hosts_file(&hosts, "automatedCleaningMode: disabled"),
    );
    let mut child = spawn_bmhctl(&dir, &lab, "0.2", &["--timeout", "20m", "hosts.yaml"]);
    let (code, stdout, stderr) =
        Output::follow(&mut child).finish(&mut child, Duration::from_secs(300));
    assert_all_reached(code, &stdout, &stderr, &hosts);

    // A vendor call that takes ten minutes on the first host's node: its conductor holds the
    // node's lock meanwhile.
    let locked = &hosts[0];
    let (uuid, holder) = lab.hold_with_vendor_call(locked);
    let name = SplitLab::conductor_name(&holder);
    lab.kill_conductor(&name);
    let killed = Instant::now();

    // Every host to `provisioned`, right away.
    let api_log_at_kill = lab.log("api").len();
    std::fs::write(
        dir.path("hosts.yaml"),
        dir.read("hosts.yaml").replace(
            "  online: true\n",
            &format!("  online: true\n  {}\n", FAKE_IMAGE.replace('\n', "\n  ")),
        ),
    )
    .unwrap();
    let mut child = spawn_bmhctl(&dir, &lab, "0.5", &["--timeout", "30m", "hosts.yaml"]);
    let out = Output::follow(&mut child);
    let reason = format!(
        "{NS}/{locked}: waiting for the provisioner: node {NS}~{locked} locked by conductor {holder}, which is offline"
    );
    let seen_at = loop {
        if let Some((at, _)) = out.first(&reason) {
            break at;
        }
        if killed.elapsed() > Duration::from_secs(60) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!(
                "no {reason:?} within a minute of the kill:\n{}",
                out.stderr()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    eprintln!("the reason came {:?} after the kill", seen_at - killed);

    // Then, while the lock holds: refused requests for the node, from Ironic's API log.
    let api_log_at_reason = lab.log("api").len();
    // `describe` says it too, from the host's bookkeeping on disk.
    let described = dir.run(&["describe", "-f", "hosts.yaml", &format!("{NS}/{locked}")]);
    let described = described.expect_code(0).stdout;
    let waiting = described
        .lines()
        .find(|l| l.starts_with("Waiting:"))
        .unwrap_or_else(|| panic!("no Waiting: line in\n{described}"));
    assert!(
        waiting.contains(&format!("locked by conductor {holder}, which is offline")),
        "{waiting}"
    );
    std::thread::sleep(Duration::from_secs(45));
    let refused = |from: usize, to: usize| {
        lab.log("api")[from..to]
            .lines()
            .filter(|l| l.contains(&uuid) && l.contains(" - 409 ("))
            .count()
    };
    let api_log_now = lab.log("api").len();
    let before = refused(api_log_at_kill, api_log_at_reason);
    let after = refused(api_log_at_reason, api_log_now);
    eprintln!("409s for {locked}: {before} until the reason, {after} in the 45 s after");
    assert!(
        after <= 2,
        "{after} refused requests in 45 s:\n{}",
        out.stderr()
    );
    // The others got through meanwhile.
    for h in &hosts[1..] {
        let line = format!("{NS}/{h}: provisioning -> provisioned");
        assert!(
            out.first(&line).is_some(),
            "{line:?} not seen:\n{}\n{}",
            out.stderr(),
            lab.nodes_text(&hosts)
        );
    }
    assert!(
        out.first(&format!("{NS}/{locked}: provisioning -> provisioned"))
            .is_none()
    );

    // The remedy: the conductor starts again under its host name and frees its locks.
    let mut restarted = lab.restart_conductor(&name);
    let (code, stdout, stderr) = out.finish(&mut child, Duration::from_secs(300));
    assert_all_reached(code, &stdout, &stderr, &hosts);
    assert!(
        stderr.contains(&format!("{NS}/{locked}: the provisioner answers again")),
        "{stderr}"
    );
    // stop-ironic.sh (on drop) stops it with the rest: reap it then.
    drop(lab);
    let _ = restarted.wait();
}

/// Conductors on a JSON-RPC port other than 8089 (Ironic then registers them as `HOST:PORT`
/// but takes locks as `HOST`). The conductor holding a node locked by a long vendor call
/// (its host's deploy request refused) and nodes locked while `deploying` (a ten-minute fake
/// deploy) is SIGKILLed: each of those hosts names the lock within 60 s of Ironic listing the
/// conductor dead, `deploying` ones included. Then the conductor is restarted: Ironic keeps the
/// old locks, the hosts keep saying why, and the refused host's requests stay under one 409 a
/// minute.
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn locks_a_dead_conductor_left_are_named_in_every_state_and_after_its_restart() {
    let _serial = serial();
    let dir = Lab::new().file(
        "split-lab.conf",
        "[fake]\nvendor_delay = 600\ndeploy_delay = 600\n\n[conductor]\nheartbeat_timeout = 15\n\
         check_provision_state_interval = 600\n\n[DEFAULT]\nhash_ring_reset_interval = 5\n",
    );
    let lab = SplitLab::start_on(Some(&dir.path("split-lab.conf")), 17612);
    let hosts: Vec<String> = (0..8).map(|i| format!("rpc-{i}")).collect();
    let dir = dir.file(
        "hosts.yaml",
        &hosts_file(&hosts, "automatedCleaningMode: disabled"),
    );
    let mut child = spawn_bmhctl(&dir, &lab, "0.2", &["--timeout", "20m", "hosts.yaml"]);
    let (code, stdout, stderr) =
        Output::follow(&mut child).finish(&mut child, Duration::from_secs(300));
    assert_all_reached(code, &stdout, &stderr, &hosts);

    // The first host's node held by a ten-minute vendor call.
    let refused = &hosts[0];
    let (uuid, holder) = lab.hold_with_vendor_call(refused);
    let reserved = |h: &String| lab.node(h)["reservation"].as_str().map(str::to_string);

    // Every host to `provisioned`: the others' deploys start and hang, locked.
    std::fs::write(
        dir.path("hosts.yaml"),
        dir.read("hosts.yaml").replace(
            "  online: true\n",
            &format!("  online: true\n  {}\n", FAKE_IMAGE.replace('\n', "\n  ")),
        ),
    )
    .unwrap();
    let mut child = spawn_bmhctl(&dir, &lab, "1", &["--timeout", "30m", "hosts.yaml"]);
    let out = Output::follow(&mut child);
    let deadline = Instant::now() + Duration::from_secs(120);
    let deploying: Vec<String> = loop {
        let nodes: Vec<Value> = hosts[1..].iter().map(|h| lab.node(h)).collect();
        let all_deploying = (nodes.iter())
            .all(|n| n["provision_state"] == "deploying" && n["reservation"].is_string());
        if all_deploying {
            break (hosts[1..].iter().zip(&nodes))
                .filter(|(_, n)| n["reservation"] == holder.as_str())
                .map(|(h, _)| h.clone())
                .collect();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "the deploys did not start:\n{}\n{}",
                lab.nodes_text(&hosts),
                out.stderr()
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(
        !deploying.is_empty(),
        "no deploying node on {holder}'s conductor:\n{}",
        lab.nodes_text(&hosts)
    );
    let name = SplitLab::conductor_name(&holder);
    lab.kill_conductor(&name);
    let killed = Instant::now();
    let dead_at = loop {
        let listed = lab.conductors();
        if listed
            .iter()
            .any(|(c, alive)| c.starts_with(&holder) && !alive)
        {
            break Instant::now();
        }
        assert!(killed.elapsed() < Duration::from_secs(120), "{listed:?}");
        std::thread::sleep(Duration::from_millis(500));
    };
    eprintln!("{holder} listed dead {:?} after the kill", dead_at - killed);

    let named = |h: &String| {
        format!(
            "{NS}/{h}: waiting for the provisioner: node {NS}~{h} locked by conductor {holder}, which is offline"
        )
    };
    let locked: Vec<&String> = std::iter::once(refused).chain(&deploying).collect();
    for h in &locked {
        let reason = named(h);
        let seen_at = loop {
            if let Some((at, _)) = out.first(&reason) {
                break at;
            }
            if dead_at.elapsed() > Duration::from_secs(60) || child.try_wait().unwrap().is_some() {
                let _ = child.kill();
                panic!(
                    "no {reason:?} within a minute of {holder} listed dead:\n{}\n{}",
                    out.stderr(),
                    lab.nodes_text(&hosts)
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        eprintln!(
            "{h}: named {:?} after {holder} was listed dead",
            seen_at.saturating_duration_since(dead_at)
        );
    }

    // The conductor again, registered as HOST:PORT; Ironic keeps the locks it took as HOST.
    let mut restarted = lab.restart_conductor(&name);
    let deadline = Instant::now() + Duration::from_secs(120);
    while !lab
        .conductors()
        .iter()
        .any(|(c, alive)| c.starts_with(&holder) && *alive)
    {
        assert!(Instant::now() < deadline, "{name} never came back");
        std::thread::sleep(Duration::from_millis(500));
    }
    let back = lab.log("api").len();
    std::thread::sleep(Duration::from_secs(75));
    for h in &locked {
        assert_eq!(
            reserved(h).as_deref(),
            Some(holder.as_str()),
            "{h}: Ironic kept the lock"
        );
        let described = dir.run(&["describe", "-f", "hosts.yaml", &format!("{NS}/{h}")]);
        let described = described.expect_code(0).stdout;
        let waiting = described
            .lines()
            .find(|l| l.starts_with("Waiting:"))
            .unwrap_or_else(|| panic!("{h}: no Waiting: line after the restart in\n{described}"));
        assert!(
            waiting.contains(&format!("locked by conductor {holder}")),
            "{h}: {waiting}"
        );
    }
    assert!(
        out.first(&format!("{NS}/{refused}: the provisioner answers again"))
            .is_none(),
        "{}",
        out.stderr()
    );
    let refusals = lab.log("api")[back..]
        .lines()
        .filter(|l| l.contains(&uuid) && l.contains(" - 409 ("))
        .count();
    eprintln!("409s for {refused} in the 75 s after the restart: {refusals}");
    assert!(refusals <= 1, "{refusals} refused requests in 75 s");

    let _ = child.kill();
    let _ = child.wait();
    drop(lab);
    let _ = restarted.wait();
}
