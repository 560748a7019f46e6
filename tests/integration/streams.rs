//! Live streams: `get -w` (a table row, or one watch event a line with `-o json`) beside the
//! `provision` or `watch` that drives the hosts, `watch -o json` (NDJSON transitions and
//! events), and the events `describe -f` shows from the files' bookkeeping. The fixture
//! provisioner with small delays, so that changes come one after another.

use crate::lab::{Lab, Reaped, host, secret};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, Read};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

/// The environment of every run here: the fixture, BMO's delays divided by 100, a fixed seed.
pub const ENV: [(&str, &str); 3] = [
    ("BMHCTL_PROVISIONER", "fixture"),
    ("BMHCTL_TIME_SCALE", "0.01"),
    ("BMHCTL_SEED", "1"),
];

/// Two workers (with an image: driven to `provisioned`) and a spare (to `available`).
pub fn hosts_file() -> String {
    let mut s = secret("bmc-secret");
    for (name, spec) in [
        (
            "worker-0",
            format!("bootMACAddress: 00:11:22:33:44:01\n{IMAGE}"),
        ),
        (
            "worker-1",
            format!("bootMACAddress: 00:11:22:33:44:02\n{IMAGE}"),
        ),
        ("spare-0", "bootMACAddress: 00:11:22:33:55:01".to_string()),
    ] {
        s.push_str("---\n");
        s.push_str(&host(name, &spec));
    }
    s
}

/// A long-running bmhctl (`get -w`, `watch`) whose stdout lines are collected as they come.
pub struct Streaming {
    child: Reaped,
    lines: Arc<Mutex<Vec<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
    pub stderr: std::io::BufReader<std::process::ChildStderr>,
}

impl Streaming {
    pub fn start(lab: &Lab, args: &[&str]) -> Streaming {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
            .current_dir(lab.path(""))
            .envs(ENV)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start bmhctl");
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let reader = std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                sink.lock().unwrap().push(line);
            }
        });
        let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        Streaming {
            child: Reaped(child),
            lines,
            reader: Some(reader),
            stderr,
        }
    }

    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// Waits until the lines so far satisfy `done`; fails the test after `timeout`.
    #[track_caller]
    pub fn wait_for(&self, what: &str, timeout: Duration, done: impl Fn(&[String]) -> bool) {
        let deadline = Instant::now() + timeout;
        loop {
            let lines = self.lines();
            if done(&lines) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; stdout so far:\n{}",
                lines.join("\n")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends SIGTERM; returns the exit code, every stdout line and the rest of stderr.
    pub fn stop(mut self) -> (i32, Vec<String>, String) {
        let ok = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill")
            .success();
        assert!(ok);
        let code = self.child.wait().unwrap().code().unwrap_or(-1);
        if let Some(r) = self.reader.take() {
            r.join().unwrap();
        }
        let mut stderr = String::new();
        self.stderr.read_to_string(&mut stderr).unwrap();
        (code, self.lines(), stderr)
    }
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not one JSON object ({e}): {line}"))
}

fn name_of(event: &Value) -> String {
    event["object"]["metadata"]["name"]
        .as_str()
        .unwrap_or_else(|| panic!("no object name in {event}"))
        .to_string()
}

/// The host as `get NAME -o json` prints it now.
fn get_one(lab: &Lab, source: &[&str], name: &str) -> Value {
    let mut args = vec!["get", name, "-o", "json"];
    args.extend_from_slice(source);
    lab.run_env(&args, &ENV).expect_code(0).json()
}

/// Checks a `get -w -o json` stream: every line one watch event, the hosts first ADDED, then
/// one MODIFIED line per change (never the same object twice in a row), ending with the hosts
/// as `get NAME -o json` prints them; returns each host's provisioning states in order.
fn check_watch_events(
    lab: &Lab,
    source: &[&str],
    lines: &[String],
) -> BTreeMap<String, Vec<String>> {
    let names = ["spare-0", "worker-0", "worker-1"];
    let events: Vec<Value> = lines.iter().map(|l| parse(l)).collect();
    let mut last: HashMap<String, Value> = HashMap::new();
    let mut states: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        let name = name_of(e);
        let object = e["object"].clone();
        assert_eq!(object["kind"], "BareMetalHost", "{e}");
        match e["type"].as_str() {
            Some("ADDED") => assert!(!last.contains_key(&name), "line {i} re-adds {name}"),
            Some("MODIFIED") => {
                let before = last
                    .get(&name)
                    .unwrap_or_else(|| panic!("{name} never added"));
                assert_ne!(*before, object, "line {i} is no change of {name}");
            }
            other => panic!("line {i}: unexpected type {other:?}: {e}"),
        }
        let state = object["status"]["provisioning"]["state"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let seen = states.entry(name.clone()).or_default();
        if seen.last() != Some(&state) {
            seen.push(state);
        }
        last.insert(name, object);
    }
    for n in names {
        assert_eq!(
            last.get(n),
            Some(&get_one(lab, source, n)),
            "the last line of {n} is the host as `get {n} -o json` prints it"
        );
    }
    states
}

/// Every host of the stream ended where `get` says, having been seen on the way.
fn check_states(states: &BTreeMap<String, Vec<String>>) {
    for w in ["worker-0", "worker-1"] {
        let s = &states[w];
        assert_eq!(
            s.last().map(String::as_str),
            Some("provisioned"),
            "{w}: {s:?}"
        );
        // The fixture takes each host through several states; polling every 50 ms sees them.
        assert!(s.len() >= 3, "{w} went through {s:?}");
    }
    assert_eq!(
        states["spare-0"].last().map(String::as_str),
        Some("available"),
        "{states:?}"
    );
}

/// Starts `get -w -o json` (polling every 50 ms) on `source`, and waits for its first three
/// lines: the three hosts as first listed.
fn get_w_json(lab: &Lab, source: &[&str]) -> Streaming {
    let mut args = vec!["get", "-w", "-o", "json", "--poll-interval", "50ms"];
    args.extend_from_slice(source);
    let get = Streaming::start(lab, &args);
    get.wait_for("the three hosts", Duration::from_secs(30), |l| l.len() >= 3);
    get
}

#[test]
fn get_w_json_prints_one_watch_event_a_line_while_provision_drives_the_files() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let source = ["-f", "hosts.yaml"];
    let get = get_w_json(&lab, &["-f", "hosts.yaml"]);
    lab.run_env(&["provision", "-f", "hosts.yaml"], &ENV)
        .expect_code(0);
    let final_objects: Vec<Value> = ["worker-0", "worker-1", "spare-0"]
        .iter()
        .map(|n| get_one(&lab, &source, n))
        .collect();
    get.wait_for("the final hosts", Duration::from_secs(30), |lines| {
        final_objects.iter().all(|want| {
            lines
                .iter()
                .rev()
                .map(|l| parse(l))
                .find(|e| e["object"]["metadata"]["name"] == want["metadata"]["name"])
                .is_some_and(|e| e["object"] == *want)
        })
    });
    let (code, lines, stderr) = get.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        lines[..3].iter().all(|l| parse(l)["type"] == "ADDED"),
        "{lines:#?}"
    );
    let states = check_watch_events(&lab, &source, &lines);
    check_states(&states);
}

#[test]
fn get_w_and_watch_json_stream_the_changes_of_a_store_watch_drives() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let store = ["--store", "store"];
    lab.run_env(&["apply", "-f", "hosts.yaml", "--store", "store"], &ENV)
        .expect_code(0);
    let get = get_w_json(&lab, &["--store", "store"]);
    let watch = Streaming::start(&lab, &["watch", "-o", "json", "--store", "store"]);
    // `wait` drives the hosts itself when no `watch` holds the store's lease: it must start
    // only once `watch` holds it, which its first line shows (a pass ran).
    watch.wait_for("watch's first line", Duration::from_secs(30), |l| {
        !l.is_empty()
    });
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
    // Once at their goal, steady hosts change no more: what get -w printed last is final.
    std::thread::sleep(Duration::from_millis(500));
    let (code, watched, stderr) = watch.stop();
    assert_eq!(code, 0, "{stderr}");
    let (code, lines, stderr) = get.stop();
    assert_eq!(code, 0, "{stderr}");
    let states = check_watch_events(&lab, &store, &lines);
    check_states(&states);

    // watch -o json: every line one versioned object, a Transition or an Event.
    let mut transitions: HashMap<String, Vec<Value>> = HashMap::new();
    let mut reasons: HashMap<String, Vec<String>> = HashMap::new();
    for l in &watched {
        let v = parse(l);
        assert_eq!(v["apiVersion"], "bmhctl.metal3.io/v1alpha1", "{l}");
        assert_eq!(v["namespace"], "default", "{l}");
        let name = v["name"].as_str().unwrap().to_string();
        match v["kind"].as_str() {
            Some("Transition") => {
                let now = [
                    v["provisioningState"].clone(),
                    v["operationalStatus"].clone(),
                    v["poweredOn"].clone(),
                    v["errorMessage"].clone(),
                ];
                let seen = transitions.entry(name.clone()).or_default();
                if let Some(before) = seen.last() {
                    let before = [
                        before["provisioningState"].clone(),
                        before["operationalStatus"].clone(),
                        before["poweredOn"].clone(),
                        before["errorMessage"].clone(),
                    ];
                    assert_ne!(before, now, "a Transition line with no change: {l}");
                }
                seen.push(v);
            }
            Some("Event") => {
                assert!(v["message"].is_string(), "{l}");
                reasons
                    .entry(name)
                    .or_default()
                    .push(v["reason"].as_str().unwrap().to_string());
            }
            other => panic!("unexpected kind {other:?}: {l}"),
        }
    }
    for w in ["worker-0", "worker-1"] {
        let t = &transitions[w];
        let last = t.last().unwrap();
        assert_eq!(last["provisioningState"], "provisioned", "{t:#?}");
        assert_eq!(last["operationalStatus"], "OK", "{t:#?}");
        assert_eq!(last["poweredOn"], true, "{t:#?}");
        let r = &reasons[w];
        for want in ["Registered", "InspectionComplete", "ProvisioningComplete"] {
            assert!(r.iter().any(|x| x == want), "{w}: {want} not in {r:?}");
        }
    }
    assert_eq!(
        transitions["spare-0"].last().unwrap()["provisioningState"],
        "available"
    );
}

#[test]
fn get_w_prints_the_table_then_a_row_per_change() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let get = Streaming::start(
        &lab,
        &[
            "get",
            "-w",
            "--poll-interval",
            "50ms",
            "-f",
            "hosts.yaml",
            "worker-0",
        ],
    );
    get.wait_for("the table", Duration::from_secs(30), |l| l.len() >= 2);
    lab.run_env(&["provision", "-f", "hosts.yaml"], &ENV)
        .expect_code(0);
    get.wait_for("worker-0 provisioned", Duration::from_secs(30), |l| {
        l.last().is_some_and(|r| r.contains(" provisioned "))
    });
    let (code, lines, stderr) = get.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(lines[0].starts_with("NAME "), "{lines:#?}");
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("NAME ")).count(),
        1,
        "one header: {lines:#?}"
    );
    assert!(
        lines[1..].iter().all(|l| l.starts_with("worker-0 ")),
        "{lines:#?}"
    );
    // The first row is the host before the run, later rows its changes.
    assert!(lines[1].contains(" (new) "), "{lines:#?}");
    assert!(lines.len() >= 4, "{lines:#?}");
    // Later rows keep the columns of the first table, widened only for a longer value: a
    // column never moves left.
    let online: Vec<usize> = lines
        .iter()
        .map(|l| l.find("ONLINE").or_else(|| l.find("true")).unwrap())
        .collect();
    assert_eq!(online[0], online[1], "{lines:#?}");
    assert!(online.windows(2).all(|w| w[0] <= w[1]), "{lines:#?}");
}

/// `get -w -o custom-columns=`: the header once, then a row per change, in the columns of the
/// first rows.
#[test]
fn get_w_custom_columns_prints_a_header_then_aligned_rows() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let columns =
        "custom-columns=NAME:.metadata.name,STATE:.status.provisioning.state,ON:.spec.online";
    let get = Streaming::start(
        &lab,
        &[
            "get",
            "-w",
            "--poll-interval",
            "50ms",
            "-f",
            "hosts.yaml",
            "-o",
            columns,
            "worker-0",
        ],
    );
    get.wait_for("the table", Duration::from_secs(30), |l| l.len() >= 2);
    lab.run_env(&["provision", "-f", "hosts.yaml"], &ENV)
        .expect_code(0);
    get.wait_for("worker-0 provisioned", Duration::from_secs(30), |l| {
        l.last().is_some_and(|r| r.contains(" provisioned "))
    });
    let (code, lines, stderr) = get.stop();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines[0], "NAME      STATE   ON", "{lines:#?}");
    assert_eq!(lines[1], "worker-0  <none>  true", "{lines:#?}");
    assert_eq!(lines.iter().filter(|l| l.starts_with("NAME")).count(), 1);
    let on: Vec<usize> = lines
        .iter()
        .map(|l| l.find("ON").or_else(|| l.find("true")).unwrap())
        .collect();
    assert!(on.windows(2).all(|w| w[0] <= w[1]), "{lines:#?}");
}

#[test]
fn describe_f_shows_the_events_kept_beside_the_files() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run_env(&["provision", "-f", "hosts.yaml"], &ENV)
        .expect_code(0);
    let sidecar: Value =
        serde_json::from_str(&lab.read(".bmhctl/hosts.yaml.state.json")).expect("sidecar JSON");
    let kept = sidecar["hosts"]["default/worker-0"]["events"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(!kept.is_empty() && kept.len() <= 20, "{sidecar:#}");
    let d = lab
        .run_env(&["describe", "-f", "hosts.yaml", "worker-0"], &ENV)
        .expect_code(0)
        .stdout;
    let events = d.split("Events:\n").nth(1).expect("an Events section");
    // The times differ from run to run; the reasons and messages do not.
    let rows: String = events
        .lines()
        .map(|l| match l.get(..2).zip(l.get(2..)) {
            Some(("  ", rest)) if rest.starts_with("20") => {
                format!("  <time>{}\n", &rest[20..])
            }
            _ => format!("{l}\n"),
        })
        .collect();
    insta::assert_snapshot!(rows);
}

#[test]
fn get_w_says_once_that_a_file_does_not_parse_and_goes_on_when_it_does() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let get = get_w_json(&lab, &["-f", "hosts.yaml"]);
    // A hand edit caught half-way, for several polls. Each version is swapped in whole: a
    // truncating write could be read empty, which is a file of no hosts, not a bad one.
    let replace = |text: String| {
        std::fs::write(lab.path("hosts.yaml.new"), text).unwrap();
        std::fs::rename(lab.path("hosts.yaml.new"), lab.path("hosts.yaml")).unwrap();
    };
    replace(format!("{}garbage: [\n", hosts_file()));
    std::thread::sleep(Duration::from_millis(500));
    replace(hosts_file().replacen("online: true", "online: false", 1));
    get.wait_for("the edit", Duration::from_secs(30), |l| l.len() >= 4);
    let (code, lines, stderr) = get.stop();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(lines.len(), 4, "{lines:#?}");
    let edited = parse(&lines[3]);
    assert_eq!(edited["type"], "MODIFIED");
    assert_eq!(edited["object"]["metadata"]["name"], "worker-0");
    assert_eq!(edited["object"]["spec"]["online"], false);
    let said: Vec<&str> = stderr.lines().collect();
    assert_eq!(said.len(), 1, "said once: {stderr}");
    assert!(said[0].starts_with("bmhctl: hosts.yaml:"), "{stderr}");
}
