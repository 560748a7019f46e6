//! `watch --metrics-addr`: a real scrape over HTTP during a run, checked against `get`.

use crate::lab::Lab;
use crate::streams::{ENV, Streaming, hosts_file};
use std::collections::BTreeMap;
use std::io::{BufRead, Read, Write};
use std::time::Duration;

/// One HTTP/1.1 GET; the status code, the content type and the body.
fn http_get(addr: &str, path: &str) -> (u16, String, String) {
    let mut s = std::net::TcpStream::connect(addr).expect("connect to the metrics server");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP response");
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("a status code");
    let content_type = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type: ")
                .map(str::to_string)
        })
        .unwrap_or_default();
    (code, content_type, body.to_string())
}

/// `bmhctl_hosts` as scraped: (provisioning state, operational status) -> hosts.
fn hosts_gauge(body: &str) -> BTreeMap<(String, String), u64> {
    let mut out = BTreeMap::new();
    for l in body.lines().filter(|l| l.starts_with("bmhctl_hosts{")) {
        let (labels, value) = l.rsplit_once(' ').unwrap();
        let label = |name: &str| {
            let start = labels.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
            labels[start..][..labels[start..].find('"').unwrap()].to_string()
        };
        let n: u64 = value.parse().unwrap();
        if n > 0 {
            out.insert(
                (label("provisioning_state"), label("operational_status")),
                n,
            );
        }
    }
    out
}

/// The same count from `get -o json`.
fn hosts_by_state(lab: &Lab) -> BTreeMap<(String, String), u64> {
    let all = lab
        .run_env(&["get", "-o", "json", "--store", "store"], &ENV)
        .expect_code(0)
        .json();
    let mut out = BTreeMap::new();
    for h in all["items"].as_array().unwrap() {
        let s = &h["status"];
        let key = (
            s["provisioning"]["state"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            s["operationalStatus"].as_str().unwrap_or("").to_string(),
        );
        *out.entry(key).or_default() += 1;
    }
    out
}

/// The value of one sample line (`name{labels} value`), if scraped.
fn sample(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn a_scrape_during_a_run_finds_the_hosts_get_shows() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run_env(&["apply", "-f", "hosts.yaml", "--store", "store"], &ENV)
        .expect_code(0);
    let mut watch = Streaming::start(
        &lab,
        &["watch", "--store", "store", "--metrics-addr", "127.0.0.1:0"],
    );
    let mut first = String::new();
    watch.stderr.read_line(&mut first).unwrap();
    let addr = first
        .trim()
        .strip_prefix("metrics at http://")
        .and_then(|r| r.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("no metrics address in {first:?}"))
        .to_string();

    // A scrape while the hosts are driven answers.
    let (code, content_type, body) = http_get(&addr, "/metrics");
    assert_eq!(code, 200, "{body}");
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    assert!(
        body.contains("# TYPE metal3_reconcile_error counter"),
        "{body}"
    );

    lab.run_env(
        &[
            "wait",
            "--for",
            "goal",
            "--timeout",
            "60s",
            "--store",
            "store",
        ],
        &ENV,
    )
    .expect_code(0);
    let (_, _, body) = http_get(&addr, "/metrics");
    let scraped = hosts_gauge(&body);
    assert_eq!(scraped, hosts_by_state(&lab), "{body}");
    assert_eq!(
        scraped.get(&("provisioned".to_string(), "OK".to_string())),
        Some(&2),
        "{body}"
    );
    for h in ["worker-0", "worker-1", "spare-0"] {
        let n = sample(
            &body,
            &format!("metal3_reconcile_total{{namespace=\"default\",host=\"{h}\"}}"),
        );
        assert!(n.is_some_and(|n| n >= 3.0), "{h}: {n:?}\n{body}");
    }
    assert_eq!(
        sample(&body, "metal3_reconcile_error_total"),
        Some(0.0),
        "{body}"
    );
    assert!(
        sample(
            &body,
            "metal3_provisioning_state_change_total{prev_state=\"provisioning\",new_state=\"provisioned\"}"
        ) == Some(2.0),
        "{body}"
    );
    let writes = sample(&body, "bmhctl_store_write_duration_seconds_count");
    assert!(writes.is_some_and(|n| n >= 3.0), "{body}");
    // Each host registered at least once, timed at the runner's side of the plugin.
    for call in ["register", "new_provisioner", "provision"] {
        let n = sample(
            &body,
            &format!("bmhctl_provisioner_call_duration_seconds_count{{call=\"{call}\"}}"),
        );
        assert!(n.is_some_and(|n| n >= 2.0), "{call}: {n:?}\n{body}");
    }
    let in_flight = sample(&body, "bmhctl_passes_in_flight");
    assert!(
        in_flight.is_some_and(|n| (0.0..=8.0).contains(&n)),
        "{in_flight:?}\n{body}"
    );

    let (code, _, _) = http_get(&addr, "/");
    assert_eq!(code, 404);

    // A second watch asked to serve on the same address fails at once, naming the flag.
    let other = Lab::new().file("hosts.yaml", &hosts_file());
    let busy = other.run_env(
        &["watch", "-f", "hosts.yaml", "--metrics-addr", &addr],
        &ENV,
    );
    let busy = busy.expect_code(2);
    assert!(
        busy.stderr
            .contains(&format!("--metrics-addr {addr}: cannot listen there")),
        "{}",
        busy.stderr
    );
    assert!(!other.path(".bmhctl").exists(), "nothing written");
    assert_eq!(other.read("hosts.yaml"), hosts_file());

    let (code, _, stderr) = watch.stop();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn an_address_that_is_no_address_is_a_usage_error() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let r = lab
        .run_env(
            &[
                "watch",
                "-f",
                "hosts.yaml",
                "--metrics-addr",
                "no-such-host.invalid:x",
            ],
            &ENV,
        )
        .expect_code(2);
    assert!(
        r.stderr.contains("--metrics-addr no-such-host.invalid:x"),
        "{}",
        r.stderr
    );
    assert!(!lab.path(".bmhctl").exists());
}
