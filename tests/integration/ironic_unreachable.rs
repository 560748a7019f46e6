//! An Ironic that cannot be reached, or that refuses our credentials, is reported within seconds
//! (the start-up probe, retried for `--ironic-wait`), not as hosts that never move until the
//! run's timeout: the real bmhctl and the real `ironic-provisioner.so`.

use crate::lab::{Lab, host, secret};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn ironic_plugin() -> &'static Path {
    static BUILT: OnceLock<std::path::PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| crate::lab::cdylib("ironic-provisioner"))
}

fn hosts() -> String {
    format!("{}---\n{}", secret("bmc-secret"), host("h0", ""))
}

/// A lab with the plugin staged and the hosts file; `provision` against `endpoint`.
fn provision(lab: &Lab, endpoint: &str, extra: &[&str]) -> (crate::lab::Run, Duration) {
    let plugins = lab.path("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let staged = plugins.join("ironic-provisioner.so");
    if !staged.exists() {
        std::fs::copy(ironic_plugin(), &staged).unwrap();
    }
    let mut args = vec![
        "provision",
        "--provisioner",
        "ironic",
        "--ironic-wait",
        "3s",
    ];
    args.extend_from_slice(extra);
    args.push("hosts.yaml");
    let started = Instant::now();
    let run = lab.run_env(
        &args,
        &[
            ("PROVISIONER_PLUGIN_DIR", plugins.to_str().unwrap()),
            ("IRONIC_ENDPOINT", endpoint),
            ("METAL3_AUTH_ROOT_DIR", lab.path("auth").to_str().unwrap()),
            ("IRONIC_CACERT_FILE", "/nonexistent/ca.crt"),
            ("IRONIC_CLIENT_CERT_FILE", "/nonexistent/tls.crt"),
            ("IRONIC_CLIENT_PRIVATE_KEY_FILE", "/nonexistent/tls.key"),
            ("IRONIC_NAME", ""),
            ("BMHCTL_IRONIC_WAIT", ""),
        ],
    );
    (run, started.elapsed())
}

/// A port nothing listens on: bound, then closed.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn an_unreachable_endpoint_is_reported_within_seconds_and_nothing_is_written() {
    let text = hosts();
    let lab = Lab::new().file("hosts.yaml", &text);
    let endpoint = format!("http://127.0.0.1:{}", closed_port());
    let (run, took) = provision(&lab, &endpoint, &[]);
    let run = run.expect_code(1);
    let first = run.stderr.lines().next().unwrap_or("");
    assert!(
        first.starts_with(&format!("bmhctl: cannot reach Ironic at {endpoint}/v1/: ")),
        "{}",
        run.stderr
    );
    assert!(
        first.to_lowercase().contains("connection refused"),
        "{}",
        run.stderr
    );
    assert!(
        first.ends_with("(retrying for up to 3s; --ironic-wait)"),
        "{}",
        run.stderr
    );
    let last = run.stderr.lines().last().unwrap_or("");
    assert!(
        last.starts_with("error: the provisioner could not be reached for 3s: cannot reach Ironic"),
        "{}",
        run.stderr
    );
    // The same error is said once, not at every retry.
    assert_eq!(run.stderr.lines().count(), 2, "{}", run.stderr);
    assert!(took < Duration::from_secs(8), "took {took:?}");
    assert_eq!(lab.read("hosts.yaml"), text);
    assert!(!lab.path(".bmhctl").exists(), "no lock or sidecar left");
}

/// An Ironic whose API answers version discovery (public, as Ironic's is) and 401 to anything
/// else, as one with http_basic auth does for wrong credentials.
fn refusing_ironic() -> String {
    serving_ironic(r#"{"version":{"version":"1.95","min_version":"1.1"}}"#)
}

/// An Ironic that answers version discovery with `v1` (its `GET /v1/` document) and 401 to
/// anything else.
fn serving_ironic(v1: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                    break;
                }
            }
            let target = line.split_whitespace().nth(1).unwrap_or("");
            let (status, body) = if target == "/v1/" || target == "/v1" {
                ("200 OK", v1.to_string())
            } else {
                (
                    "401 Unauthorized",
                    r#"{"error_message":"{\"faultstring\":\"Incorrect username or password\"}"}"#
                        .to_string(),
                )
            };
            let _ = write!(
                conn,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    endpoint
}

/// Ironic 23.1 (2023.2), one release short of BMO's minimum API: refused at the first call,
/// not probed again until `--ironic-wait` runs out, nothing written.
#[test]
fn an_ironic_older_than_bmos_minimum_api_is_refused_at_once() {
    let text = hosts();
    let lab = Lab::new().file("hosts.yaml", &text);
    // The `GET /v1/` document of Ironic 23.1.0, as it answers it (links shortened).
    let endpoint = serving_ironic(
        r#"{"id": "v1", "links": [{"href": "http://127.0.0.1:6385/v1/", "rel": "self"}], "media_types": [{"base": "application/json", "type": "application/vnd.openstack.ironic.v1+json"}], "version": {"id": "v1", "links": [{"href": "http://127.0.0.1:6385/v1/", "rel": "self"}], "status": "CURRENT", "min_version": "1.1", "version": "1.88"}}"#,
    );
    let (run, took) = provision(&lab, &endpoint, &[]);
    let run = run.expect_code(1);
    assert_eq!(
        run.stderr.trim_end(),
        format!(
            "error: the provisioner cannot be used: Ironic at {endpoint}/v1/: it supports API 1.88 \
             at most, a release older than Ironic 24.0 (2024.1 Caracal); bmhctl needs API 1.89 or \
             newer, as BMO does: Ironic 24.0 or newer"
        )
    );
    // `--ironic-wait 3s`: a probe retried would take that long.
    assert!(took < Duration::from_millis(2500), "took {took:?}");
    assert_eq!(lab.read("hosts.yaml"), text);
}

#[test]
fn refused_credentials_are_reported_at_once_without_the_password() {
    let text = hosts();
    let lab = Lab::new().file("hosts.yaml", &text);
    std::fs::create_dir_all(lab.path("auth/ironic")).unwrap();
    std::fs::write(lab.path("auth/ironic/username"), "admin").unwrap();
    std::fs::write(lab.path("auth/ironic/password"), "hunter2-wrong").unwrap();
    let endpoint = refusing_ironic();
    let (run, took) = provision(&lab, &endpoint, &["-v"]);
    let run = run.expect_code(1);
    let first = run
        .stderr
        .lines()
        .find(|l| l.starts_with("bmhctl: "))
        .unwrap_or("");
    assert!(
        first.starts_with(&format!(
            "bmhctl: Ironic at {endpoint}/v1/ refused the credentials"
        )),
        "{}",
        run.stderr
    );
    assert!(
        first.contains("401 Unauthorized: Incorrect username or password"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("hunter2"), "{}", run.stderr);
    assert!(!run.stdout.contains("hunter2"), "{}", run.stdout);
    assert!(took < Duration::from_secs(8), "took {took:?}");
    assert_eq!(lab.read("hosts.yaml"), text);
}

/// An Ironic that answers the start-up probe (version discovery, the driver list) and then goes
/// away: its port is closed.
fn ironic_gone_after_the_probe() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for _ in 0..2 {
            let (mut conn, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                    break;
                }
            }
            let body = if line.contains("/drivers") {
                r#"{"drivers":[{"name":"ipmi","hosts":["c1"]}]}"#
            } else {
                r#"{"version":{"version":"1.95","min_version":"1.1"}}"#
            };
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
        }
        // Dropped: the port is closed from now on.
        drop(listener);
    });
    endpoint
}

#[test]
fn hosts_waiting_on_an_ironic_gone_mid_run_show_its_error_in_progress_and_table() {
    let text = hosts();
    let lab = Lab::new().file("hosts.yaml", &text);
    let endpoint = ironic_gone_after_the_probe();
    let (run, _) = provision(&lab, &endpoint, &["--timeout", "90s"]);
    let run = run.expect_code(1);
    let waiting = run
        .stderr
        .lines()
        // Plain progress lines start with their timestamp.
        .filter_map(|l| l.split_once(' ').map(|(_, rest)| rest))
        .find(|l| l.starts_with("default/h0: waiting for the provisioner: "))
        .unwrap_or_else(|| panic!("no waiting line in\n{}", run.stderr));
    assert!(
        waiting.to_lowercase().contains("connection refused"),
        "{waiting}"
    );
    let row = run
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("h0 "))
        .unwrap_or_else(|| panic!("no row for h0 in\n{}", run.stdout));
    assert!(row.contains("waiting for the provisioner: "), "{row}");
    assert!(row.to_lowercase().contains("connection refused"), "{row}");
}
