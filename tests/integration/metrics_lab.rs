//! `bmhctl_ironic_api_calls_total` against a real Ironic: `watch --metrics-addr` drives two
//! fake-hardware hosts with the Ironic plugin, and the counts scraped by kind are checked
//! against the requests Ironic's API logged in the same window.
//!
//! Uses the lab of the environment as `ironic_lab.rs` does (`IRONIC_ENDPOINT`, and Ironic's
//! log at `$BMHCTL_LAB_DIR/ironic-PORT/ironic.log`, as `scripts/ironic/start-ironic.sh` writes
//! it); without them the test FAILS, it never skips. It needs that Ironic to itself while it
//! runs: any other client's requests would be in the log too.

use crate::lab::{Lab, Reaped};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const NS: &str = "metrics-lab";
const HOSTS: [&str; 2] = ["api-calls-0", "api-calls-1"];

/// `(status, body)` of an HTTP call with curl; status 0 without an answer.
fn curl(method: &str, url: &str, body: Option<&str>) -> (u16, String) {
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "-X", method, "-w", "\n%{http_code}", url]);
    cmd.args(["-H", "X-OpenStack-Ironic-API-Version: 1.89"]);
    if let Some(b) = body {
        cmd.args(["-H", "Content-Type: application/json", "-d", b]);
    }
    let out = cmd.output().expect("run curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

fn endpoint() -> String {
    std::env::var("IRONIC_ENDPOINT").unwrap_or_else(|_| {
        panic!(
            "IRONIC_ENDPOINT is not set: this test needs the Ironic lab (scripts/ironic/start-ironic.sh, \
             then `set -a; . $BMHCTL_LAB_DIR/ironic-PORT/bmhctl.env; set +a`)"
        )
    })
}

/// Ironic's log, where its API writes one line per request.
fn ironic_log(endpoint: &str) -> PathBuf {
    let port = endpoint
        .trim_end_matches('/')
        .trim_end_matches("/v1")
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_string();
    let dir = match std::env::var_os("BMHCTL_LAB_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join(".state/ironic"),
    };
    let log = dir.join(format!("ironic-{port}")).join("ironic.log");
    assert!(
        log.is_file(),
        "no Ironic log at {} (IRONIC_ENDPOINT={endpoint}; set BMHCTL_LAB_DIR to the lab's state \
         directory)",
        log.display()
    );
    log
}

/// The requests Ironic's API logged after byte `from` of `log`, as (method, path).
fn logged_requests(log: &Path, from: u64) -> Vec<(String, String)> {
    let mut text = Vec::new();
    let mut f = std::fs::File::open(log).unwrap();
    std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(from)).unwrap();
    f.read_to_end(&mut text).unwrap();
    let mut out = Vec::new();
    for line in String::from_utf8_lossy(&text).lines() {
        // `... INFO ironic.api [req-...] 127.0.0.1 - GET /v1/nodes/x - 200 (3.1ms)`
        let Some((_, rest)) = line.split_once(" INFO ironic.api [") else {
            continue;
        };
        let Some((_, request)) = rest.split_once("] ") else {
            continue;
        };
        let words: Vec<&str> = request.split_whitespace().collect();
        if let [_, "-", method, path, "-", ..] = words.as_slice() {
            let path = path.split('?').next().unwrap_or_default();
            out.push((method.to_string(), path.to_string()));
        }
    }
    out
}

/// Requests by kind as bmhctl names them (a node's name or UUID replaced by `{node}`); with
/// `nodes`, only the requests about one of those nodes.
fn by_kind(requests: &[(String, String)], nodes: Option<&[String]>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (method, path) in requests {
        let rest = path
            .strip_prefix("/v1/")
            .unwrap_or(path.trim_start_matches("/v1"));
        let mut segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
        if segments.len() > 1 && segments[0] == "nodes" {
            if nodes.is_some_and(|ours| !ours.iter().any(|n| n == segments[1])) {
                continue;
            }
            segments[1] = "{node}";
        } else if nodes.is_some() {
            continue;
        }
        *out.entry(format!("{method} /v1/{}", segments.join("/")))
            .or_default() += 1;
    }
    out
}

/// The node's UUID, by name.
fn node_uuid(root: &str, name: &str) -> String {
    let (code, body) = curl("GET", &format!("{root}/v1/nodes/{NS}~{name}"), None);
    assert_eq!(code, 200, "GET node {name}: {body}");
    let node: serde_json::Value = serde_json::from_str(&body).unwrap();
    node["uuid"].as_str().expect("a node UUID").to_string()
}

/// Removes the nodes a previous, aborted run left.
fn purge(root: &str) {
    for name in HOSTS {
        let url = format!("{root}/v1/nodes/{NS}~{name}");
        if curl("GET", &url, None).0 == 200 {
            curl("PUT", &format!("{url}/maintenance"), Some("{}"));
            let (code, body) = curl("DELETE", &url, None);
            assert!(
                code == 204 || code == 404,
                "delete leftover node {name}: {code} {body}"
            );
        }
    }
}

/// The Ironic plugin, built with the cargo that runs the tests, in a directory of its own.
fn plugin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let lib = crate::lab::cdylib("ironic-provisioner");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("metrics-lab-plugins");
        std::fs::create_dir_all(&dir).unwrap();
        let tmp = dir.join(format!(".ironic-provisioner.so.{}", std::process::id()));
        std::fs::copy(&lib, &tmp).expect("stage the ironic plugin");
        std::fs::rename(&tmp, dir.join("ironic-provisioner.so")).unwrap();
        dir
    })
}

fn scrape(addr: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).expect("connect to the metrics server");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    body.to_string()
}

/// `bmhctl_ironic_api_calls_total` as scraped, by kind.
fn api_calls(body: &str) -> BTreeMap<String, u64> {
    body.lines()
        .filter_map(|l| l.strip_prefix("bmhctl_ironic_api_calls_total{kind=\""))
        .map(|l| {
            let (kind, value) = l.rsplit_once("\"} ").expect("a sample");
            (kind.to_string(), value.parse().expect("a count"))
        })
        .collect()
}

fn available(body: &str) -> u64 {
    body.lines()
        .filter_map(|l| {
            l.strip_prefix("bmhctl_hosts{provisioning_state=\"available\",")?
                .rsplit_once(' ')?
                .1
                .parse::<u64>()
                .ok()
        })
        .sum()
}

#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn api_calls_by_kind_match_ironics_own_log() {
    let endpoint = endpoint();
    let root = endpoint
        .trim_end_matches('/')
        .trim_end_matches("/v1")
        .to_string();
    let log = ironic_log(&endpoint);
    purge(&root);
    let mut file = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc\n  namespace: metrics-lab\nstringData:\n  username: admin\n  password: {}\n",
        crate::canary::lab_password()
    );
    for name in HOSTS {
        file.push_str(&format!(
            "---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {name}\n  namespace: {NS}\nspec:\n  online: false\n  bmc:\n    address: fake-hardware://{name}\n    credentialsName: bmc\n"
        ));
    }
    let lab = Lab::new().file("hosts.yaml", &file);
    // A bmhctl started later than the last log line: everything after is this test's.
    std::thread::sleep(Duration::from_millis(500));
    let from = std::fs::metadata(&log).unwrap().len();

    let child = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
        .current_dir(lab.path(""))
        .env("BMHCTL_CONFIG", lab.path("no-bmhctl-config.yaml"))
        .env_remove("BMHCTL_CONTEXT")
        .env_remove("BMHCTL_PROVISIONER")
        .env("BMHCTL_SEED", "1")
        .env("BMHCTL_TIME_SCALE", "0.3")
        .env("PROVISIONER_PLUGIN_DIR", plugin_dir())
        .env("PROVISIONING_LIMIT", "20")
        .env("DEPLOY_ISO_URL", "")
        .env("METAL3_AUTH_ROOT_DIR", "/nonexistent")
        .env("IRONIC_ENDPOINT", &endpoint)
        .args([
            "watch",
            "-f",
            "hosts.yaml",
            "--provisioner",
            "ironic",
            "--metrics-addr",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start bmhctl");
    let mut watch = Reaped(child);
    let mut stderr = BufReader::new(watch.0.stderr.take().unwrap());
    let mut addr = None;
    let mut seen = String::new();
    for _ in 0..50 {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            break;
        }
        seen.push_str(&line);
        if let Some(a) = line
            .trim()
            .strip_prefix("metrics at http://")
            .and_then(|r| r.strip_suffix("/metrics"))
        {
            addr = Some(a.to_string());
            break;
        }
    }
    let addr = addr.unwrap_or_else(|| panic!("no metrics address in\n{seen}"));
    // Keep the pipe drained.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));

    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let body = scrape(&addr);
        if available(&body) == HOSTS.len() as u64 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the hosts did not become available in 5 min; last scrape:\n{body}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }

    // Scraped, then Ironic's log read after the requests in flight were answered and logged,
    // then scraped again: every request is counted before it is sent and logged once answered,
    // so a request of the first scrape is in the log by then (unless it still runs: a little
    // slack), and the log holds none missing from the second. Other clients of a shared lab
    // Ironic log requests too: requests about a node are told apart by the node, and compared
    // both ways; the others (listings, registrations, version) only as a lower bound.
    let before = api_calls(&scrape(&addr));
    std::thread::sleep(Duration::from_millis(1500));
    let requests = logged_requests(&log, from);
    let after = api_calls(&scrape(&addr));
    let mut ours: Vec<String> = HOSTS.iter().map(|h| format!("{NS}~{h}")).collect();
    ours.extend(HOSTS.iter().map(|h| node_uuid(&root, h)));
    let logged = by_kind(&requests, None);
    let logged_ours = by_kind(&requests, Some(&ours));
    let window = format!(
        "scraped before {before:#?}\nlogged {logged:#?}\nlogged about our nodes {logged_ours:#?}\nscraped after {after:#?}"
    );
    eprintln!("{window}");
    let slack = |kind: &String| if kind.starts_with("GET ") { 2 } else { 0 };
    for (kind, n) in &before {
        let seen = logged.get(kind).copied().unwrap_or(0);
        assert!(
            *n <= seen + slack(kind),
            "{kind}: scraped {n}, logged {seen}\n{window}"
        );
    }
    for (kind, n) in &after {
        if kind.contains("{node}") {
            let seen = logged_ours.get(kind).copied().unwrap_or(0);
            assert!(seen <= *n, "{kind}: scraped {n}, logged {seen}\n{window}");
            let earlier = before.get(kind).copied().unwrap_or(0);
            assert!(earlier <= seen + slack(kind), "{kind}\n{window}");
        }
    }
    for kind in logged_ours.keys() {
        assert!(
            after.contains_key(kind),
            "{kind} logged, never counted\n{window}"
        );
    }
    // Registration, inspection and cleaning are done: the hosts were registered once each.
    assert_eq!(after.get("POST /v1/nodes"), Some(&2), "{window}");
    assert!(
        after
            .keys()
            .any(|k| k.starts_with("PUT /v1/nodes/{node}/states/provision")),
        "{window}"
    );
    // The kinds name no node.
    for kind in after.keys() {
        assert!(
            ours.iter().all(|id| !kind.contains(id.as_str())) && !kind.contains(NS),
            "{kind}"
        );
    }
    // Reads are there by kind too: the version discovery (the probe's included), the listings.
    assert!(after.get("GET /v1/").is_some_and(|n| *n >= 2), "{window}");
    assert!(
        after.get("GET /v1/nodes").is_some_and(|n| *n >= 1),
        "{window}"
    );
    drop(watch);
    purge(&root);
}
