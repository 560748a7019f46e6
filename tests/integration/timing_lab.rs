//! `--timing change` against `--timing bmo` on a real Ironic: the same scenarios run under both,
//! each on hosts of its own, and per host the provisioning states, operational statuses, error
//! types, events and Ironic write requests must be the same. Only when passes run, and how often
//! Ironic is read, may differ (docs/decisions.md, "Change-driven timing").
//!
//! Uses the lab of the environment as `ironic_lab.rs` does (`IRONIC_ENDPOINT`, and
//! `METAL3_AUTH_ROOT_DIR` when its Ironic wants credentials); without it the test FAILS, it
//! never skips. bmhctl reaches that Ironic through a recording proxy of the test's own, which
//! keeps every write (method, path, body) with the node it touches; the test's own requests (the
//! out-of-band edit, the clean-up) go to Ironic directly. The failing hosts' BMC is a server of
//! the test's own that answers 404 to everything, so Ironic's verification of them fails at once.
//!
//! Scenarios, per timing:
//! 1. four fake-hardware hosts from nothing: `deploy` and `power` (image, online) and `detach` to
//!    `provisioned`, `ext` to `externally provisioned`; meanwhile, in a run of their own (a
//!    SIGTERM ends it once each has said its third error), `fail` and `oob`, two Redfish hosts
//!    whose BMC answers 404: registration errors, retried with BMO's backoff. While `oob` waits
//!    out its first backoff, its node's `driver_info` is edited behind bmhctl's back.
//! 2. `deploy` loses its image (deprovisioned), `power` goes `online: false`, `ext` gets
//!    `bmhctl reboot`, `detach` gets `bmhctl detach`.
//! 3. `power` goes `online: true` again, `detach` gets `bmhctl attach`; the failing hosts run
//!    once more, in a new process, until each has said one more error.
//!
//! What is compared, per host and step: the progress lines of `-v --progress plain` (state
//! changes, errors, events, where each host ended) and the `-o json` result of each run (state,
//! operational status, power, error type and message, counts), consecutive repeats collapsed;
//! and the writes Ironic accepted for the host's node, in order, each as sent. UUIDs, host names
//! (each timing's carry a suffix), boot MACs and timestamps are normalised. Writes Ironic refused
//! with 409 (a conductor held the node) are counted, not compared: how many a pass meets depends
//! on when it runs.

use crate::lab::{Lab, Run};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

const NS: &str = "timing-lab";
const API_VERSION: &str = "1.89";
/// A qcow2 image for fake-hardware hosts (the fake deploy never downloads it).
const IMAGE_URL: &str = "http://127.0.0.1:6386/images/timing-lab-os.qcow2";
const IMAGE_SHA256: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
/// The fake-hardware hosts of `hosts.yaml`.
const FAKE_HOSTS: [&str; 4] = ["deploy", "power", "ext", "detach"];
/// The Redfish hosts of `failing.yaml`, whose BMC answers 404.
const FAILING_HOSTS: [&str; 2] = ["fail", "oob"];
/// BMO's delays scaled so that a BMO poll (10 s) is 3 s: long enough for a change report to wake
/// a host well before it, short enough for the whole test to take a minute or two.
const SCALE: &str = "0.3";
/// The failing hosts wait BMO's backoff (1-2 min, then 2-4, then 4-8): scaled further.
const FAILING_SCALE: &str = "0.05";
/// The failing hosts' runs end by SIGTERM once each host has said the errors it is there for
/// (then waiting out a backoff of 4 minutes or more), not by a timeout: how long Ironic takes
/// to fail a verification is not BMO's to scale, and a loaded machine made a timeout between
/// the third and the fourth attempt end some runs after two. This one only ends a run that
/// went wrong.
const FAILING_TIMEOUT: &str = "30m";

/// One test at a time in this module: its hosts' names and nodes are the same each time.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Debug, Clone, Copy)]
enum Timing {
    Change,
    Bmo,
}

impl Timing {
    fn flag(self) -> &'static str {
        match self {
            Timing::Change => "change",
            Timing::Bmo => "bmo",
        }
    }

    /// Appended to each host's name, so that the two runs' nodes never meet.
    fn suffix(self) -> &'static str {
        match self {
            Timing::Change => "chg",
            Timing::Bmo => "bmo",
        }
    }

    /// The fifth byte of the hosts' boot MACs.
    fn mac_byte(self) -> u8 {
        match self {
            Timing::Change => 1,
            Timing::Bmo => 2,
        }
    }

    fn host(self, base: &str) -> String {
        format!("{base}-{}", self.suffix())
    }

    fn mac(self, base: &str) -> String {
        let i = FAKE_HOSTS.iter().position(|h| *h == base).unwrap();
        format!("52:54:00:7a:{:02x}:{:02x}", self.mac_byte(), i + 1)
    }
}

// ----------------------------------------------------------------------------------- Ironic

/// The lab's Ironic, reached directly (not through the proxy).
struct Ironic {
    /// `http://HOST:PORT`
    root: String,
    auth: Option<(String, String)>,
    auth_dir: Option<String>,
}

fn lab_ironic() -> Ironic {
    let endpoint = std::env::var("IRONIC_ENDPOINT").unwrap_or_else(|_| {
        panic!(
            "IRONIC_ENDPOINT is not set: the timing lab test needs the Ironic lab. Run \
             ./scripts/test.sh, or start scripts/ironic/start-ironic.sh PORT and source its \
             bmhctl.env"
        )
    });
    let root = endpoint
        .trim_end_matches('/')
        .trim_end_matches("/v1")
        .to_string();
    assert!(
        root.starts_with("http://"),
        "the recording proxy speaks plain HTTP only: IRONIC_ENDPOINT={endpoint}"
    );
    let auth_dir = std::env::var("METAL3_AUTH_ROOT_DIR").ok();
    let auth = auth_dir.as_ref().and_then(|dir| {
        let read = |f: &str| std::fs::read_to_string(Path::new(dir).join("ironic").join(f));
        Some((read("username").ok()?, read("password").ok()?))
    });
    let ironic = Ironic {
        root,
        auth,
        auth_dir,
    };
    let (code, body) = ironic.call("GET", "/", None);
    assert_eq!(
        code, 200,
        "Ironic at {} does not answer: {body}",
        ironic.root
    );
    ironic
}

impl Ironic {
    /// `(status, body)` of one API call, made with curl (as the lab scripts are); status 0 when
    /// no answer came.
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let mut cmd = Command::new("curl");
        cmd.args(["-sS", "--max-time", "30", "-X", method])
            .args([
                "-H",
                &format!("X-OpenStack-Ironic-API-Version: {API_VERSION}"),
            ])
            .args(["-H", "Accept: application/json", "-w", "\n%{http_code}"]);
        if let Some((u, p)) = &self.auth {
            cmd.args(["-u", &format!("{u}:{p}")]);
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
        let value = serde_json::from_str(body).unwrap_or_else(|_| json!(body));
        (code.trim().parse().unwrap_or(0), value)
    }

    /// Removes every node of this module's namespace (an earlier, aborted run's, or this run's
    /// once it is done). A node a conductor still holds is asked again for a while.
    fn purge(&self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let (code, v) = self.call("GET", "/v1/nodes?fields=uuid,name", None);
            if code != 200 {
                return Err(format!("list nodes: {code} {v}"));
            }
            let ours: Vec<&str> = v["nodes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|n| {
                    n["name"]
                        .as_str()
                        .is_some_and(|s| s.starts_with(&format!("{NS}~")))
                })
                .filter_map(|n| n["uuid"].as_str())
                .collect();
            let mut refused = Vec::new();
            for id in ours {
                let maintenance = json!({});
                let path = format!("/v1/nodes/{id}");
                self.call("PUT", &format!("{path}/maintenance"), Some(&maintenance));
                let (code, body) = self.call("DELETE", &path, None);
                if code != 204 && code != 404 {
                    refused.push(format!("{id}: {code} {body}"));
                }
            }
            if refused.is_empty() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("could not delete this test's nodes: {refused:?}"));
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

/// Purges the namespace's nodes when dropped, so that a failed test leaves the shared lab clean.
struct Purge<'a>(&'a Ironic);

impl Drop for Purge<'_> {
    fn drop(&mut self) {
        // Said, not panicked: the test may be failing already.
        if let Err(e) = self.0.purge() {
            eprintln!("{e}");
        }
    }
}

// -------------------------------------------------------------------------------------- HTTP

/// An HTTP/1.1 message's start line and headers (names in lower case).
struct Head {
    start: String,
    headers: Vec<(String, String)>,
}

impl Head {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn chunked(&self) -> bool {
        self.header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    }

    /// The headers to pass on: those about this one connection and the body's framing are
    /// the sender's to set.
    fn end_to_end(&self) -> impl Iterator<Item = &(String, String)> {
        const HOP: [&str; 5] = [
            "connection",
            "keep-alive",
            "proxy-connection",
            "transfer-encoding",
            "content-length",
        ];
        self.headers
            .iter()
            .filter(|(k, _)| !HOP.contains(&k.as_str()))
    }
}

/// The next message head on `r`; `None` when the peer closed the connection between messages.
fn read_head(r: &mut impl BufRead) -> std::io::Result<Option<Head>> {
    let mut start = String::new();
    if r.read_line(&mut start)? == 0 {
        return Ok(None);
    }
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    Ok(Some(Head {
        start: start.trim_end().to_string(),
        headers,
    }))
}

/// A message's body, framed as its head says; `to_eof`: a response without framing ends with
/// the connection.
fn read_body(r: &mut impl BufRead, head: &Head, to_eof: bool) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    if head.chunked() {
        loop {
            let mut size = String::new();
            r.read_line(&mut size)?;
            let hex = size.trim().split(';').next().unwrap_or_default();
            let n = usize::from_str_radix(hex, 16)
                .map_err(|_| std::io::Error::other(format!("bad chunk size {size:?}")))?;
            if n == 0 {
                // the trailer, up to its empty line
                let mut line = String::new();
                while r.read_line(&mut line)? > 2 {
                    line.clear();
                }
                return Ok(body);
            }
            let at = body.len();
            body.resize(at + n, 0);
            r.read_exact(&mut body[at..])?;
            let mut crlf = [0u8; 2];
            r.read_exact(&mut crlf)?;
        }
    }
    if let Some(n) = head.header("content-length") {
        let n: usize = n
            .parse()
            .map_err(|_| std::io::Error::other(format!("bad content-length {n:?}")))?;
        body.resize(n, 0);
        r.read_exact(&mut body)?;
    } else if to_eof {
        r.read_to_end(&mut body)?;
    }
    Ok(body)
}

/// Writes a message with its body, framed by its length.
fn write_message(w: &mut impl Write, head: &Head, body: &[u8], close: bool) -> std::io::Result<()> {
    let mut out = format!("{}\r\n", head.start);
    for (k, v) in head.end_to_end() {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str(&format!("content-length: {}\r\n", body.len()));
    if close {
        out.push_str("connection: close\r\n");
    }
    out.push_str("\r\n");
    w.write_all(out.as_bytes())?;
    w.write_all(body)?;
    w.flush()
}

// ------------------------------------------------------------------------- recording proxy

/// A write request bmhctl sent to Ironic, and the status Ironic answered it with.
struct Recorded {
    method: String,
    /// Without the query.
    path: String,
    body: Value,
    status: u16,
    /// The name of the node it touches (`NS~host`), when known.
    node: Option<String>,
}

#[derive(Default)]
struct Log {
    writes: Vec<Recorded>,
    /// Requests that only read (GET, HEAD): counted, not compared.
    reads: usize,
    /// Node UUID -> node name, from every answer that shows both.
    nodes: BTreeMap<String, String>,
    /// Port UUID -> node UUID.
    ports: BTreeMap<String, String>,
}

impl Log {
    /// Learns the node and port identities an answer shows.
    fn learn(&mut self, v: &Value) {
        match v {
            Value::Object(m) => {
                if let Some(uuid) = m.get("uuid").and_then(Value::as_str) {
                    if let Some(name) = m.get("name").and_then(Value::as_str) {
                        self.nodes.insert(uuid.to_string(), name.to_string());
                    }
                    if let Some(node) = m.get("node_uuid").and_then(Value::as_str) {
                        self.ports.insert(uuid.to_string(), node.to_string());
                    }
                }
                m.values().for_each(|v| self.learn(v));
            }
            Value::Array(a) => a.iter().for_each(|v| self.learn(v)),
            _ => {}
        }
    }

    /// The node a write touches: from its path (`/v1/nodes/ID/...`, `/v1/ports/ID`), else from
    /// its body (`name` of a new node, `node_uuid` of a new port).
    fn node_of(&self, path: &str, body: &Value) -> Option<String> {
        let by_id = |id: &str| {
            if id.contains('~') {
                Some(id.to_string())
            } else {
                self.nodes.get(id).cloned()
            }
        };
        let mut segments = path.trim_start_matches('/').split('/');
        let (_v1, kind, id) = (segments.next(), segments.next(), segments.next());
        match (kind, id) {
            (Some("nodes"), Some(id)) => by_id(id),
            (Some("nodes"), None) => body["name"].as_str().map(str::to_string),
            (Some("ports"), Some(id)) => self.ports.get(id).and_then(|n| by_id(n)),
            (Some("ports"), None) => body["node_uuid"].as_str().and_then(by_id),
            _ => None,
        }
    }
}

/// An HTTP/1.1 forwarding proxy in front of Ironic that records the writes passing through.
struct Proxy {
    /// `http://127.0.0.1:PORT/v1/`, for bmhctl's `IRONIC_ENDPOINT`.
    endpoint: String,
    log: Arc<Mutex<Log>>,
}

impl Proxy {
    fn start(ironic: &Ironic) -> Self {
        let upstream = ironic
            .root
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string();
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the recording proxy");
        let endpoint = format!("http://{}/v1/", listener.local_addr().unwrap());
        let log = Arc::new(Mutex::new(Log::default()));
        let shared = log.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let (upstream, log) = (upstream.clone(), shared.clone());
                std::thread::spawn(move || {
                    // A connection bmhctl drops ends here; what it sent before is recorded.
                    let _ = relay(client, &upstream, &log);
                });
            }
        });
        Proxy { endpoint, log }
    }

    fn log(&self) -> MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Serves one client connection: each request is sent to Ironic on a connection of its own
/// and its answer passed back.
fn relay(client: TcpStream, upstream: &str, log: &Mutex<Log>) -> std::io::Result<()> {
    let mut from_client = BufReader::new(client.try_clone()?);
    let mut to_client = client;
    while let Some(req) = read_head(&mut from_client)? {
        let body = read_body(&mut from_client, &req, false)?;
        let ironic = TcpStream::connect(upstream)?;
        write_message(&mut &ironic, &req, &body, true)?;
        let mut from_ironic = BufReader::new(&ironic);
        let resp = read_head(&mut from_ironic)?.ok_or(std::io::ErrorKind::UnexpectedEof)?;
        let mut words = req.start.split_whitespace();
        let method = words.next().unwrap_or_default().to_string();
        let target = words.next().unwrap_or_default();
        let status: u16 = resp
            .start
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let bodyless = method == "HEAD" || status == 204 || status == 304;
        let resp_body = if bodyless {
            Vec::new()
        } else {
            read_body(&mut from_ironic, &resp, true)?
        };
        {
            let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
            if let Ok(v) = serde_json::from_slice::<Value>(&resp_body) {
                log.learn(&v);
            }
            if method == "GET" || method == "HEAD" {
                log.reads += 1;
            } else {
                let path = target.split('?').next().unwrap_or_default().to_string();
                let body = serde_json::from_slice(&body)
                    .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into()));
                let node = log.node_of(&path, &body);
                log.writes.push(Recorded {
                    method,
                    path,
                    body,
                    status,
                    node,
                });
            }
        }
        let close = req
            .header("connection")
            .is_some_and(|c| c.eq_ignore_ascii_case("close"));
        write_message(&mut to_client, &resp, &resp_body, close)?;
        if close {
            break;
        }
    }
    Ok(())
}

/// A Redfish BMC that has nothing: 404 to every request, so Ironic's verification of a host
/// pointed at it fails at once. Returns its port.
fn not_found_bmc() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the 404 BMC");
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || -> std::io::Result<()> {
                let mut r = BufReader::new(stream.try_clone()?);
                if let Some(req) = read_head(&mut r)? {
                    read_body(&mut r, &req, false)?;
                    let head = Head {
                        start: "HTTP/1.1 404 Not Found".into(),
                        headers: vec![("content-type".into(), "application/json".into())],
                    };
                    write_message(&mut &stream, &head, b"{}", true)?;
                }
                Ok(())
            });
        }
    });
    port
}

// ----------------------------------------------------------------------------------- bmhctl

/// The Ironic plugin, built with the cargo that runs the tests and staged in a directory of
/// its own (never a manual step).
fn plugin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let lib = crate::lab::cdylib("ironic-provisioner");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("timing-lab-plugins");
        std::fs::create_dir_all(&dir).unwrap();
        let tmp = dir.join(format!(".ironic-provisioner.so.{}", std::process::id()));
        std::fs::copy(&lib, &tmp).expect("stage the ironic plugin");
        std::fs::rename(&tmp, dir.join("ironic-provisioner.so")).unwrap();
        dir
    })
}

/// The environment of bmhctl against the proxy.
fn bmhctl_env(ironic: &Ironic, proxy: &Proxy, scale: &str) -> Vec<(String, String)> {
    let env = [
        ("PROVISIONER_PLUGIN_DIR", plugin_dir().to_str().unwrap()),
        ("BMHCTL_TIME_SCALE", scale),
        ("PROVISIONING_LIMIT", "20"),
        ("DEPLOY_ISO_URL", ""),
        ("IRONIC_ENDPOINT", proxy.endpoint.as_str()),
        (
            "METAL3_AUTH_ROOT_DIR",
            ironic.auth_dir.as_deref().unwrap_or("/nonexistent"),
        ),
    ];
    env.into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `bmhctl provision` of `file` with its progress as plain lines (events included) and its
/// result as JSON.
fn provision_args(timing: Timing, timeout: &str, file: &str) -> Vec<String> {
    [
        "provision",
        "--provisioner",
        "ironic",
        "--timing",
        timing.flag(),
        "--timeout",
        timeout,
        "-v",
        "--progress",
        "plain",
        "-o",
        "json",
        file,
    ]
    .map(str::to_string)
    .to_vec()
}

fn run(lab: &Lab, ironic: &Ironic, proxy: &Proxy, scale: &str, args: &[String]) -> Run {
    let env = bmhctl_env(ironic, proxy, scale);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    lab.run_env(&args, &env)
}

/// A verb (`reboot`, `detach`, `attach`) on one host of `hosts.yaml`: it only writes the
/// annotation.
fn verb(lab: &Lab, verb: &str, host: &str) {
    lab.run(&[verb, "-f", "hosts.yaml", &format!("{NS}/{host}")])
        .expect_code(0);
}

/// A run in the background whose stderr is read line by line as it comes, stopped by SIGTERM
/// when a line makes `on_line` answer true.
struct Background {
    child: std::process::Child,
    stderr: std::thread::JoinHandle<String>,
    stdout: std::thread::JoinHandle<String>,
    args: Vec<String>,
}

impl Background {
    fn start(
        lab: &Lab,
        env: Vec<(String, String)>,
        args: Vec<String>,
        mut on_line: impl FnMut(&str) -> bool + Send + 'static,
    ) -> Self {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
            .current_dir(lab.path(""))
            .env("BMHCTL_SEED", "1")
            .env_remove("BMHCTL_PROVISIONER")
            .env("BMHCTL_CONFIG", lab.path("no-bmhctl-config.yaml"))
            .env_remove("BMHCTL_CONTEXT")
            .envs(env)
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start bmhctl");
        let err = child.stderr.take().unwrap();
        let pid = child.id() as i32;
        let stderr = std::thread::spawn(move || {
            let mut all = String::new();
            let mut stopped = false;
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if !stopped && on_line(&line) {
                    // `finish` reaps the child only after this thread: the pid is still its.
                    unsafe { libc::kill(pid, libc::SIGTERM) };
                    stopped = true;
                }
                all.push_str(&line);
                all.push('\n');
            }
            all
        });
        let mut out = child.stdout.take().unwrap();
        let stdout = std::thread::spawn(move || {
            let mut all = String::new();
            let _ = out.read_to_string(&mut all);
            all
        });
        Background {
            child,
            stderr,
            stdout,
            args,
        }
    }

    fn finish(mut self, lab: &Lab) -> Run {
        // Its pipes first: the child is reaped only once nothing more can signal it.
        let stderr = self.stderr.join().unwrap();
        let stdout = self.stdout.join().unwrap();
        let status = self.child.wait().expect("wait for bmhctl");
        let run = Run {
            code: status.code().unwrap_or(-1),
            stdout,
            stderr,
        };
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        crate::canary::assert_clean_run(&args, &run.stdout, &run.stderr, &lab.path(""));
        run
    }
}

// ------------------------------------------------------------------------------------ files

fn secret() -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc\n  namespace: {NS}\nstringData:\n  username: admin\n  password: {}\n",
        crate::canary::lab_password()
    )
}

fn bmh(name: &str, address: &str, spec: &str) -> String {
    let mut s = format!(
        "---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {name}\n  namespace: {NS}\nspec:\n  online: true\n  bmc:\n    address: {address}\n    credentialsName: bmc\n"
    );
    for line in spec.lines() {
        s.push_str("  ");
        s.push_str(line);
        s.push('\n');
    }
    s
}

fn image() -> String {
    format!(
        "image:\n  url: {IMAGE_URL}\n  checksum: {IMAGE_SHA256}\n  checksumType: sha256\n  format: qcow2\n"
    )
}

fn hosts_file(t: Timing) -> String {
    let mut s = secret();
    for base in FAKE_HOSTS {
        let name = t.host(base);
        let mut spec = format!("bootMACAddress: \"{}\"\n", t.mac(base));
        match base {
            "ext" => spec.push_str("externallyProvisioned: true\n"),
            _ => spec.push_str(&image()),
        }
        s.push_str(&bmh(&name, &format!("fake-hardware://{name}"), &spec));
    }
    s
}

fn failing_file(t: Timing, bmc_port: u16) -> String {
    let mut s = secret();
    for base in FAILING_HOSTS {
        let name = t.host(base);
        let address = format!("redfish+http://127.0.0.1:{bmc_port}/redfish/v1/Systems/{name}");
        s.push_str(&bmh(&name, &address, ""));
    }
    s
}

/// Rewrites the document of `host` in `hosts.yaml` with `edit` (the other documents, and the
/// status bmhctl wrote, stay as they are).
fn edit_host(lab: &Lab, host: &str, edit: impl Fn(&str) -> String) {
    let text = lab.read("hosts.yaml");
    let marker = format!("\n  name: {host}\n");
    let docs: Vec<String> = text
        .split("\n---\n")
        .map(|d| {
            if d.contains(&marker) {
                let edited = edit(d);
                assert_ne!(edited, d, "the edit of {host} changed nothing");
                edited
            } else {
                d.to_string()
            }
        })
        .collect();
    std::fs::write(lab.path("hosts.yaml"), docs.join("\n---\n")).unwrap();
}

// ------------------------------------------------------------------------------ the stories

/// What one host went through, as observed: its states and errors as the progress lines and
/// the runs' results showed them, its events, and the writes Ironic received for its node. Each
/// step starts with a `[step]` line in all three, so that a shift from one step to another shows.
#[derive(Debug, Default)]
struct Story {
    status: Vec<String>,
    events: Vec<String>,
    writes: Vec<String>,
    /// Writes Ironic refused with 409 (a node locked by a conductor): retried by BMO's rules,
    /// how many depends on when passes ran, so they are only counted.
    conflicts: usize,
}

/// The stories of one timing's hosts, by host (the base name).
struct Book {
    timing: Timing,
    stories: BTreeMap<String, Story>,
    /// Where the proxy's writes of the step now running begin.
    mark: usize,
    /// Reads through the proxy: when the book was opened, then (once closed) its timing's.
    reads: usize,
    /// When the step now running began, and how long each took.
    since: Instant,
    took: Vec<Duration>,
}

impl Book {
    fn new(timing: Timing, proxy: &Proxy) -> Self {
        let log = proxy.log();
        Book {
            timing,
            stories: FAKE_HOSTS
                .iter()
                .chain(&FAILING_HOSTS)
                .map(|h| (h.to_string(), Story::default()))
                .collect(),
            mark: log.writes.len(),
            reads: log.reads,
            since: Instant::now(),
            took: Vec::new(),
        }
    }

    /// Takes in one step: the runs it made and the writes the proxy recorded meanwhile.
    fn step(&mut self, step: &str, runs: &[&Run], proxy: &Proxy) {
        self.took.push(self.since.elapsed());
        for story in self.stories.values_mut() {
            let marker = format!("[{step}]");
            story.status.push(marker.clone());
            story.events.push(marker.clone());
            story.writes.push(marker);
        }
        for r in runs {
            // 1 is a host stopped short (the detached one), 130 the failing hosts' run stopped
            // once they said their errors; anything else is not a decision but a broken run.
            assert!(
                [0, 1, 130].contains(&r.code),
                "--timing {}: exit {}\n--- stderr\n{}",
                self.timing.flag(),
                r.code,
                r.stderr
            );
            for line in r.stderr.lines() {
                // Plain progress lines start with a UTC timestamp.
                let line = match line.split_once(' ') {
                    Some((time, rest)) if time.ends_with('Z') && time.contains('T') => rest,
                    _ => line,
                };
                let Some((host, text)) = line
                    .strip_prefix(&format!("{NS}/"))
                    .and_then(|l| l.split_once(": "))
                else {
                    continue;
                };
                let Some(story) = self.story(host) else {
                    continue;
                };
                if let Some(e) = text.strip_prefix("event ") {
                    story.events.push(e.to_string());
                } else if let Some(e) = text.strip_prefix("error: ") {
                    story.status.push(format!("error {e}"));
                } else if text.starts_with("pass failed: ")
                    || text.starts_with("waiting for the provisioner")
                    || text.starts_with("the provisioner answers again")
                {
                    // when passes ran and how Ironic answered them meanwhile: not compared
                } else if text.ends_with(" (done)") || text.contains(" (stopped: ") {
                    story.status.push(format!("end {text}"));
                } else if let Some((_, to)) = text.split_once(" -> ") {
                    story.status.push(format!("state {to}"));
                }
            }
            let result = r.json();
            for h in result["hosts"].as_array().into_iter().flatten() {
                let host = h["name"].as_str().unwrap_or_default();
                let Some(story) = self.story(host) else {
                    continue;
                };
                let fields: Vec<String> = [
                    "goal",
                    "outcome",
                    "reason",
                    "state",
                    "operationalStatus",
                    "poweredOn",
                    "errorType",
                    "errorMessage",
                    "errorCount",
                    "provisioningFailCount",
                    "provisioningID",
                ]
                .iter()
                .map(|k| format!("{k}={}", h[k]))
                .collect();
                story.status.push(format!("result {}", fields.join(" ")));
                story.status.push(format!("exit code {}", r.code));
            }
        }
        let log = proxy.log();
        for w in &log.writes[self.mark..] {
            let Some(host) = w
                .node
                .as_deref()
                .and_then(|n| n.strip_prefix(&format!("{NS}~")))
            else {
                continue;
            };
            let Some(story) = self.story(host) else {
                continue;
            };
            if w.status == 409 {
                story.conflicts += 1;
                continue;
            }
            story.writes.push(format!(
                "{} {} {} -> {}",
                w.method,
                w.path,
                canonical(&w.body),
                w.status
            ));
        }
        self.mark = log.writes.len();
        self.since = Instant::now();
    }

    /// The story of `host` (a full host name) when it is one of this timing's.
    fn story(&mut self, host: &str) -> Option<&mut Story> {
        let base = host.strip_suffix(&format!("-{}", self.timing.suffix()))?;
        self.stories.get_mut(base)
    }
}

/// A JSON value as text, object keys sorted.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let sorted: BTreeMap<&String, String> =
                m.iter().map(|(k, v)| (k, canonical(v))).collect();
            let fields: Vec<String> = sorted
                .iter()
                .map(|(k, v)| format!("{}:{v}", Value::from(k.as_str())))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        v => v.to_string(),
    }
}

// ------------------------------------------------------------------------------ normalising

/// Rewrites what legitimately differs between the two runs: host names (each run's have its
/// suffix), node UUIDs (to `<node NAME>`), boot MACs, other UUIDs, timestamps and the BMC
/// password.
struct Normaliser {
    /// Exact texts and what they become, longest first.
    words: Vec<(String, String)>,
}

impl Normaliser {
    fn new(nodes: &BTreeMap<String, String>) -> Self {
        let mut words = Vec::new();
        for t in [Timing::Change, Timing::Bmo] {
            for base in FAKE_HOSTS.iter().chain(&FAILING_HOSTS) {
                words.push((t.host(base), base.to_string()));
            }
            for base in FAKE_HOSTS {
                words.push((t.mac(base), format!("<mac {base}>")));
            }
        }
        for (uuid, name) in nodes {
            if let Some(host) = name.strip_prefix(&format!("{NS}~")) {
                let base = host.rsplit_once('-').map_or(host, |(b, _)| b);
                words.push((uuid.clone(), format!("<node {base}>")));
            }
        }
        words.push((crate::canary::lab_password(), "<password>".into()));
        words.sort_by_key(|(w, _)| std::cmp::Reverse(w.len()));
        Normaliser { words }
    }

    fn text(&self, s: &str) -> String {
        let mut s = s.to_string();
        for (from, to) in &self.words {
            if s.contains(from.as_str()) {
                s = s.replace(from.as_str(), to);
            }
        }
        timestamps_out(&uuids_out(&s))
    }

    fn story(&self, story: &Story) -> Story {
        let all = |v: &[String], collapse: bool| {
            let mut out: Vec<String> = v.iter().map(|s| self.text(s)).collect();
            if collapse {
                out.dedup();
            }
            out
        };
        Story {
            status: all(&story.status, true),
            events: all(&story.events, true),
            writes: all(&story.writes, false),
            conflicts: story.conflicts,
        }
    }
}

/// Every UUID left (a host's uid, a port's) as `<uuid>`.
fn uuids_out(s: &str) -> String {
    const GROUPS: [usize; 5] = [8, 4, 4, 4, 12];
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let mut j = i;
        let matched = GROUPS.iter().enumerate().all(|(g, n)| {
            let ok = b.len() >= j + n && b[j..j + n].iter().all(u8::is_ascii_hexdigit);
            j += n;
            let dash = g == GROUPS.len() - 1 || b.get(j) == Some(&b'-');
            j += usize::from(g < GROUPS.len() - 1);
            ok && dash
        });
        let bounded = |k: Option<&u8>| k.is_none_or(|c| !c.is_ascii_alphanumeric());
        if matched && (i == 0 || bounded(b.get(i - 1))) && bounded(b.get(j)) {
            out.extend_from_slice(b"<uuid>");
            i = j;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).expect("only ASCII was replaced")
}

/// Every `YYYY-MM-DDTHH:MM:SS` (with fraction and zone, if any) as `<time>`.
fn timestamps_out(s: &str) -> String {
    let b = s.as_bytes();
    let shape = b"dddd-dd-ddTdd:dd:dd";
    let fits = |i: usize| {
        b.len() >= i + shape.len()
            && shape.iter().zip(&b[i..]).all(|(p, c)| match p {
                b'd' => c.is_ascii_digit(),
                b'T' => *c == b'T' || *c == b' ',
                p => p == c,
            })
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !fits(i) {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += shape.len();
        if b.get(i) == Some(&b'.') {
            i += 1;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        if b.get(i) == Some(&b'Z') {
            i += 1;
        } else if matches!(b.get(i), Some(b'+' | b'-'))
            && b.get(i + 1).is_some_and(u8::is_ascii_digit)
        {
            i += 1;
            while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b':') {
                i += 1;
            }
        }
        out.extend_from_slice(b"<time>");
    }
    String::from_utf8(out).expect("only ASCII was replaced")
}

/// Where two sequences first part, shown with a few entries of context.
fn show_difference(what: &str, a: &[String], b: &[String]) -> String {
    let first = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let from = first.saturating_sub(3);
    let show = |v: &[String]| {
        v.iter()
            .enumerate()
            .skip(from)
            .take(first - from + 8)
            .map(|(i, s)| format!("    {}{i:3} {s}", if i == first { ">" } else { " " }))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "{what}: first difference at entry {first} ({} entries under change, {} under bmo)\n  --timing change:\n{}\n  --timing bmo:\n{}",
        a.len(),
        b.len(),
        show(a),
        show(b)
    )
}

// ------------------------------------------------------------------------------------ a run

/// Drives one timing's hosts through every scenario, and tells their stories.
fn drive(ironic: &Arc<Ironic>, proxy: &Proxy, bmc_port: u16, t: Timing) -> Book {
    let lab = Lab::new()
        .file("hosts.yaml", &hosts_file(t))
        .file("failing.yaml", &failing_file(t, bmc_port));
    let provision = || {
        let args = provision_args(t, "30m", "hosts.yaml");
        run(&lab, ironic, proxy, SCALE, &args)
    };
    let mut book = Book::new(t, proxy);

    // 1. The failing hosts in the background; the out-of-band edit of `oob` comes as soon as
    // its first registration error is said (it then waits out BMO's backoff of 1-2 minutes).
    let oob = t.host("oob");
    let edited = Arc::new(Mutex::new(None::<String>));
    let trigger = format!("{NS}/{oob}: event RegistrationError");
    let edit = {
        let (ironic, edited, oob) = (ironic.clone(), edited.clone(), oob.clone());
        let moved = format!("http://127.0.0.1:{bmc_port}/moved");
        move |line: &str| {
            let mut edited = edited.lock().unwrap();
            if edited.is_some() || !line.contains(&trigger) {
                return;
            }
            let patch =
                json!([{"op": "replace", "path": "/driver_info/redfish_address", "value": moved}]);
            let (code, body) = ironic.call("PATCH", &format!("/v1/nodes/{NS}~{oob}"), Some(&patch));
            *edited = Some(format!("{code} {body}"));
        }
    };
    let mut third_error = errors_said(t, 3);
    let failing = Background::start(
        &lab,
        bmhctl_env(ironic, proxy, FAILING_SCALE),
        provision_args(t, FAILING_TIMEOUT, "failing.yaml"),
        move |line| {
            edit(line);
            third_error(line)
        },
    );
    let first = provision();
    let failing = failing.finish(&lab);
    let edit = edited.lock().unwrap().take();
    let edit = edit.unwrap_or_else(|| panic!("{oob}: never waited\n{}", failing.stderr));
    assert!(edit.starts_with("200 "), "the out-of-band edit: {edit}");
    book.step("1: from nothing; failing hosts", &[&first, &failing], proxy);

    // 2. Deprovision (the image removed), power off, reboot, detach.
    edit_host(&lab, &t.host("deploy"), |d| {
        let mut in_image = false;
        let kept: Vec<&str> = d
            .split_inclusive('\n')
            .filter(|l| {
                in_image = *l == "  image:\n" || (in_image && l.starts_with("    "));
                !in_image
            })
            .collect();
        kept.concat()
    });
    edit_host(&lab, &t.host("power"), |d| {
        d.replacen("  online: true\n", "  online: false\n", 1)
    });
    verb(&lab, "reboot", &t.host("ext"));
    verb(&lab, "detach", &t.host("detach"));
    let second = provision();
    book.step(
        "2: deprovision, power off, reboot, detach",
        &[&second],
        proxy,
    );

    // 3. Power on, attach; the failing hosts once more, in a new process: one attempt each.
    edit_host(&lab, &t.host("power"), |d| {
        d.replacen("  online: false\n", "  online: true\n", 1)
    });
    verb(&lab, "attach", &t.host("detach"));
    let again = Background::start(
        &lab,
        bmhctl_env(ironic, proxy, FAILING_SCALE),
        provision_args(t, FAILING_TIMEOUT, "failing.yaml"),
        errors_said(t, 1),
    );
    let third = provision();
    let again = again.finish(&lab);
    book.step(
        "3: power on, attach; failing hosts again",
        &[&third, &again],
        proxy,
    );

    book.reads = proxy.log().reads - book.reads;
    eprintln!(
        "--timing {}: steps took {:.1?}; {} reads through the proxy",
        t.flag(),
        book.took,
        book.reads
    );
    book
}

/// Answers true once every failing host of `t` has said `n` registration errors (in the run
/// whose lines it is given).
fn errors_said(t: Timing, n: usize) -> impl FnMut(&str) -> bool + Send + 'static {
    let said: Vec<String> = FAILING_HOSTS
        .iter()
        .map(|h| format!("{NS}/{}: event RegistrationError", t.host(h)))
        .collect();
    let mut seen = vec![0; said.len()];
    move |line| {
        for (said, seen) in said.iter().zip(&mut seen) {
            *seen += usize::from(line.contains(said.as_str()));
        }
        seen.iter().all(|&s| s >= n)
    }
}

/// What each host's story (states, then events, then writes) must hold, in this order, for its
/// scenario to have happened.
fn did(host: &str) -> &'static [&'static str] {
    match host {
        "deploy" => &[r#""target":"active""#, r#"{"target":"deleted"}"#],
        "power" => &["soft power off", "[3: ", r#"{"target":"power on"}"#],
        "ext" => &["externally provisioned", "PowerOff: ", "PowerOn: "],
        "detach" => &[
            "operationalStatus=\"detached\"",
            "DELETE /v1/nodes/",
            "adopt",
        ],
        "fail" => &["errorType=\"registration error\" ", "errorCount=3"],
        "oob" => &["errorType=\"registration error\" ", "errorCount=3"],
        _ => unreachable!("{host}"),
    }
}

// ------------------------------------------------------------------------------------ tests

#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn change_and_bmo_timing_decide_the_same_on_a_real_ironic() {
    let _serial = serial();
    let ironic = Arc::new(lab_ironic());
    ironic.purge().unwrap();
    let _purge = Purge(&ironic);
    let bmc_port = not_found_bmc();
    let proxy = Proxy::start(&ironic);
    // Built and staged before the clock starts.
    plugin_dir();
    let started = Instant::now();
    let change = drive(&ironic, &proxy, bmc_port, Timing::Change);
    let bmo = drive(&ironic, &proxy, bmc_port, Timing::Bmo);
    eprintln!("both timings: {:.1?}", started.elapsed());

    let norm = Normaliser::new(&proxy.log().nodes);
    let (mut differences, mut missing) = (Vec::new(), Vec::new());
    for (host, a) in &change.stories {
        let a = norm.story(a);
        let b = norm.story(&bmo.stories[host]);
        eprintln!(
            "{host}: {} status entries, {} events, {} writes (409s: {} under change, {} under bmo)",
            a.status.len(),
            a.events.len(),
            a.writes.len(),
            a.conflicts,
            b.conflicts
        );
        // The whole of it, for a failure's report (the harness shows it only then).
        eprintln!("{host} under --timing change: {a:#?}");
        for (what, x, y) in [
            ("states, statuses and errors", &a.status, &b.status),
            ("events", &a.events, &b.events),
            ("Ironic writes", &a.writes, &b.writes),
        ] {
            if x != y {
                differences.push(show_difference(&format!("{host}: {what}"), x, y));
            }
        }
        // Each scenario did what it is there for (under one timing: the other is compared).
        let all = [&a.status, &a.events, &a.writes]
            .map(|v| v.join("\n"))
            .join("\n");
        let mut at = 0;
        for want in did(host) {
            match all[at..].find(want) {
                Some(found) => at += found + want.len(),
                None => {
                    missing.push(format!("{host}: no {want:?} (in this order) under change"));
                    break;
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "scenarios that did not happen: {missing:#?}"
    );
    assert!(
        differences.is_empty(),
        "--timing change and --timing bmo decided differently:\n\n{}",
        differences.join("\n\n")
    );
}

/// Runs a README step with bash in `lab`, bmhctl on the PATH, against Ironic through `proxy`.
fn run_step(lab: &Lab, ironic: &Ironic, proxy: &Proxy, step: &str) -> Run {
    let bin = assert_cmd::cargo::cargo_bin("bmhctl");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(step)
        .current_dir(lab.path(""))
        .env("PATH", path)
        .env("CI", "true")
        .env("KEEP", lab.path("keep"))
        .env_remove("BMHCTL_PROVISIONER")
        .env("BMHCTL_CONFIG", lab.path("no-bmhctl-config.yaml"))
        .env_remove("BMHCTL_CONTEXT")
        .envs(bmhctl_env(ironic, proxy, "0.3"))
        .output()
        .expect("run bash");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The README's CI job step, as written there: it provisions; run again with the status it kept,
/// it makes no write to Ironic; the teardown step removes every node.
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn the_readmes_ci_job_step_provisions_and_its_rerun_writes_nothing_to_ironic() {
    let _serial = serial();
    let ironic = lab_ironic();
    ironic.purge().unwrap();
    let _purge = Purge(&ironic);
    let proxy = Proxy::start(&ironic);
    let names = ["ci-0", "ci-1"];
    let mut hosts = secret();
    for (i, name) in names.iter().enumerate() {
        let spec = format!(
            "bootMACAddress: \"52:54:00:7a:03:{:02x}\"\n{}",
            i + 1,
            image()
        );
        hosts.push_str(&bmh(name, &format!("fake-hardware://{name}"), &spec));
    }
    let lab = Lab::new().file("hosts.yaml", &hosts);
    let step = crate::lab::readme_block("job step");
    let first = run_step(&lab, &ironic, &proxy, &step);
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    assert!(
        first.stdout.ends_with("every host reached its goal\n"),
        "{}",
        first.stdout
    );
    // The table for the log, the JSON for the next step.
    assert!(first.stdout.starts_with("NAME "), "{}", first.stdout);
    let result: Value =
        serde_json::from_str(&lab.read("result.json")).expect("result.json is JSON");
    assert_eq!(result["kind"], "ProvisionResult");
    for h in result["hosts"].as_array().unwrap() {
        assert_eq!(h["outcome"], "reached", "{h:#}");
    }
    assert!(
        !proxy.log().writes.is_empty(),
        "the first run registers and deploys"
    );
    assert_eq!(
        lab.read("hosts.yaml"),
        hosts,
        "the repository's file is not written"
    );

    {
        let mut log = proxy.log();
        log.writes.clear();
        log.reads = 0;
    }
    let again = run_step(&lab, &ironic, &proxy, &step);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    let log = proxy.log();
    let writes: Vec<String> = log
        .writes
        .iter()
        .map(|w| format!("{} {} {}", w.method, w.path, w.body))
        .collect();
    assert_eq!(writes, Vec::<String>::new(), "the re-run wrote to Ironic");
    assert!(log.reads > 0, "the re-run reads each node");
    drop(log);

    let teardown = run_step(
        &lab,
        &ironic,
        &proxy,
        &crate::lab::readme_block("teardown step"),
    );
    assert_eq!(teardown.code, 0, "{}\n{}", teardown.stdout, teardown.stderr);
    for name in names {
        let (code, _) = ironic.call("GET", &format!("/v1/nodes/{NS}~{name}"), None);
        assert_eq!(code, 404, "{name}'s node is gone");
    }
    assert!(!lab.path("keep").exists());
}
