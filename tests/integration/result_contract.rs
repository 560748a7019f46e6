//! The result contract, through the real binary (docs/output.md): every `-o json` result is a
//! versioned document with a summary and, per host, its goal, outcome, state, error, passes,
//! start, end and duration; an interrupted run prints it too, its hosts in flight marked so;
//! `validate -o json` reports the errors that kept the files from loading in the same document.
//! Each command's JSON and table are snapshots, times and durations replaced by placeholders.

use crate::lab::{Lab, host, secret};
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

/// The fixture, delays not slept, a fixed seed: the same passes every run.
const FIXTURE: [(&str, &str); 2] = [("BMHCTL_PROVISIONER", "fixture"), ("BMHCTL_SEED", "1")];

fn hosts_file() -> String {
    let mut s = secret("bmc-secret");
    for h in [
        host(
            "worker-0",
            &format!("bootMACAddress: 00:11:22:33:44:01\n{IMAGE}"),
        ),
        host("spare-0", "bootMACAddress: 00:11:22:33:55:01"),
        host("legacy-0", "externallyProvisioned: true"),
    ] {
        s.push_str("---\n");
        s.push_str(&h);
    }
    s
}

fn lab() -> Lab {
    Lab::new().file("hosts.yaml", &hosts_file())
}

/// The text of a JSON document with what changes from run to run replaced: times (`start`,
/// `end` and any RFC 3339 string, e.g. in a status) by `[time]`, `durationSeconds` by
/// `[duration]`.
fn normalised(text: &str) -> String {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    if k == "durationSeconds" && !v.is_null() {
                        *v = "[duration]".into();
                    } else {
                        walk(v);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            Value::String(s) if chrono::DateTime::parse_from_rfc3339(s).is_ok() => {
                *v = "[time]".into()
            }
            _ => {}
        }
    }
    let mut v: Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"));
    walk(&mut v);
    serde_json::to_string_pretty(&v).unwrap()
}

fn run(lab: &Lab, args: &[&str]) -> crate::lab::Run {
    lab.run_env(args, &FIXTURE)
}

/// Checks the shape every run result has, beyond what a snapshot shows: times in order, a
/// duration that is their difference, a summary that counts the hosts.
#[track_caller]
fn assert_result_shape(doc: &Value, kind: &str) {
    assert_eq!(doc["apiVersion"], "bmhctl.metal3.io/v1alpha1");
    assert_eq!(doc["kind"], kind);
    let hosts = doc["hosts"].as_array().expect("hosts");
    assert_eq!(doc["summary"]["hosts"], hosts.len());
    let count = |o: &str| hosts.iter().filter(|h| h["outcome"] == o).count();
    for o in ["reached", "failed", "inFlight"] {
        assert_eq!(doc["summary"][o], count(o), "summary of {o} in {doc:#}");
    }
    for h in hosts {
        let start = chrono::DateTime::parse_from_rfc3339(h["start"].as_str().unwrap()).unwrap();
        let duration = h["durationSeconds"].as_f64().expect("durationSeconds");
        assert!(duration >= 0.0, "{h}");
        if let Some(end) = h["end"].as_str() {
            let end = chrono::DateTime::parse_from_rfc3339(end).unwrap();
            assert!(end >= start, "{h}");
            let ms = (end - start).num_milliseconds() as f64 / 1000.0;
            assert!((ms - duration).abs() < 0.002, "{h}");
        } else {
            assert_eq!(
                h["outcome"], "inFlight",
                "only a host in flight has no end: {h}"
            );
        }
    }
}

#[test]
fn provision_json_and_table() {
    let lab = lab();
    let json = run(&lab, &["provision", "hosts.yaml", "-o", "json"]).expect_code(0);
    let doc = json.json();
    assert_result_shape(&doc, "ProvisionResult");
    insta::assert_snapshot!("provision_json", normalised(&json.stdout));
    // Again, as a table: every host is at its goal already.
    let table = run(&lab, &["provision", "hosts.yaml"]).expect_code(0);
    insta::assert_snapshot!("provision_table", table.stdout);
}

#[test]
fn a_failed_host_is_counted_and_says_why() {
    // A host paused by its annotation stops short of its goal: the run's one failure.
    let text = hosts_file().replacen(
        "metadata:\n  name: spare-0\n",
        "metadata:\n  name: spare-0\n  annotations:\n    baremetalhost.metal3.io/paused: \"\"\n",
        1,
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let json = run(&lab, &["provision", "hosts.yaml", "-o", "json"]).expect_code(1);
    let doc = json.json();
    assert_result_shape(&doc, "ProvisionResult");
    assert_eq!(doc["summary"]["failed"], 1, "{doc:#}");
    let spare = &doc["hosts"][1];
    assert_eq!(spare["name"], "spare-0");
    assert_eq!(spare["outcome"], "failed");
    assert!(
        spare["reason"].as_str().unwrap().contains("paused"),
        "{spare}"
    );
}

/// `--timeout` ends a host's run: the document is the same, the host failed with the reason.
#[test]
fn a_timeout_prints_the_same_document() {
    let lab = lab();
    let r = lab.run_env(
        &["provision", "hosts.yaml", "-o", "json", "--timeout", "2s"],
        &[FIXTURE[0], FIXTURE[1], ("BMHCTL_TIME_SCALE", "0.3")],
    );
    let r = r.expect_code(1);
    let doc = r.json();
    assert_result_shape(&doc, "ProvisionResult");
    assert_eq!(doc["interrupted"], false);
    let worker = &doc["hosts"][0];
    assert_eq!(worker["outcome"], "failed", "{doc:#}");
    assert!(
        worker["reason"].as_str().unwrap().contains("timeout"),
        "{worker}"
    );
}

#[test]
fn deprovision_json_and_table() {
    let lab = lab();
    run(&lab, &["provision", "-q", "hosts.yaml"]).expect_code(0);
    let json = run(
        &lab,
        &["deprovision", "-f", "hosts.yaml", "worker-0", "-o", "json"],
    )
    .expect_code(0);
    assert_result_shape(&json.json(), "DeprovisionResult");
    insta::assert_snapshot!("deprovision_json", normalised(&json.stdout));
    let table = run(&lab, &["deprovision", "-f", "hosts.yaml", "worker-0"]).expect_code(0);
    insta::assert_snapshot!("deprovision_table", table.stdout);
}

#[test]
fn delete_json_and_table() {
    let lab = lab();
    run(&lab, &["provision", "-q", "hosts.yaml"]).expect_code(0);
    let json = run(
        &lab,
        &["delete", "-f", "hosts.yaml", "spare-0", "-o", "json"],
    )
    .expect_code(0);
    assert_result_shape(&json.json(), "DeleteResult");
    insta::assert_snapshot!("delete_json", normalised(&json.stdout));
    let table = run(&lab, &["delete", "-f", "hosts.yaml", "legacy-0"]).expect_code(0);
    insta::assert_snapshot!("delete_table", table.stdout);
}

#[test]
fn the_verbs_say_what_they_did() {
    let lab = lab();
    run(&lab, &["provision", "-q", "hosts.yaml"]).expect_code(0);
    let mut said = String::new();
    for args in [
        &["power", "off", "-f", "hosts.yaml", "worker-0", "--wait"][..],
        &["power", "on", "-f", "hosts.yaml", "worker-0"],
        &["pause", "-f", "hosts.yaml", "spare-0"],
        &["resume", "-f", "hosts.yaml", "spare-0"],
        &["detach", "-f", "hosts.yaml", "legacy-0"],
        &["attach", "-f", "hosts.yaml", "legacy-0"],
        &["reboot", "-f", "hosts.yaml", "worker-0"],
    ] {
        let r = run(&lab, args).expect_code(0);
        said.push_str(&format!("$ bmhctl {}\n{}", args.join(" "), r.stdout));
    }
    insta::assert_snapshot!("verbs", said);
}

#[test]
fn get_json_and_table() {
    let lab = lab();
    run(&lab, &["provision", "-q", "hosts.yaml"]).expect_code(0);
    let json = run(&lab, &["get", "-f", "hosts.yaml", "-o", "json"]).expect_code(0);
    insta::assert_snapshot!("get_json", normalised(&json.stdout));
    let table = run(&lab, &["get", "-f", "hosts.yaml"]).expect_code(0);
    // AGE, the last column, changes from run to run.
    let aged: Vec<String> = table
        .stdout
        .lines()
        .enumerate()
        .map(|(i, l)| match l.rsplit_once(' ') {
            Some((rest, _)) if i > 0 => format!("{rest} [age]"),
            _ => l.to_string(),
        })
        .collect();
    insta::assert_snapshot!("get_table", aged.join("\n"));
}

#[test]
fn validate_json_and_table() {
    let text = hosts_file().replacen(
        "bootMACAddress: 00:11:22:33:55:01",
        "bootMACAddress: not-a-mac",
        1,
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let json = run(&lab, &["validate", "hosts.yaml", "-o", "json"]).expect_code(2);
    let doc = json.json();
    assert_eq!(doc["kind"], "ValidationResult");
    assert_eq!(doc["summary"]["invalid"], 1, "{doc:#}");
    insta::assert_snapshot!("validate_json", normalised(&json.stdout));
    let table = run(&lab, &["validate", "hosts.yaml"]).expect_code(2);
    insta::assert_snapshot!("validate_table", table.stdout);
}

/// The commonest errors, a syntax error, a missing Secret and an unknown kind, come in the
/// document too (with exit 2), not only on stderr.
#[test]
fn validate_json_reports_what_kept_the_files_from_loading() {
    let syntax = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: [oops\n";
    let no_secret = host("worker-0", "bootMACAddress: 00:11:22:33:44:01");
    let unknown = "apiVersion: v1\nkind: Secrets\nmetadata:\n  name: settings\n";
    let lab = Lab::new()
        .file("syntax.yaml", syntax)
        .file("no-secret.yaml", &no_secret)
        .file("unknown.yaml", unknown);
    let mut docs = String::new();
    for (file, field) in [
        ("syntax.yaml", None),
        ("no-secret.yaml", Some("spec.bmc.credentialsName")),
        ("unknown.yaml", Some("kind")),
    ] {
        let r = run(&lab, &["validate", "-o", "json", file]).expect_code(2);
        let doc = r.json();
        assert_eq!(doc["kind"], "ValidationResult");
        assert_eq!(doc["valid"], false);
        assert_eq!(doc["hosts"], Value::Array(vec![]));
        let error = &doc["errors"][0];
        assert!(
            error["position"].as_str().unwrap().starts_with(file),
            "{doc:#}"
        );
        assert_eq!(error["field"].as_str(), field, "{doc:#}");
        // stderr says the same for people.
        assert!(r.stderr.contains(error["message"].as_str().unwrap()));
        docs.push_str(&format!("# {file}\n{}\n", r.stdout));
    }
    insta::assert_snapshot!("validate_load_errors_json", docs);
}

fn spawn(lab: &Lab, args: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
        .current_dir(lab.path(""))
        // Slow enough to be interrupted mid-way: a run of these hosts takes about 10 s.
        .env("BMHCTL_TIME_SCALE", "0.3")
        .envs(FIXTURE)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start bmhctl")
}

/// Sends `signal` once bmhctl has saved a first status (it is running), and returns what it
/// printed and its exit code.
fn interrupt(lab: &Lab, args: &[&str], signal: &str) -> (i32, String, String) {
    let child = spawn(lab, args);
    let started = Instant::now();
    while !lab.read("hosts.yaml").contains("\nstatus:\n") {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no save after 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn sigint_prints_the_document_with_the_hosts_in_flight_marked_and_exits_130() {
    let lab = lab();
    let (code, stdout, stderr) =
        interrupt(&lab, &["provision", "hosts.yaml", "-o", "json"], "-INT");
    assert_eq!(code, 130, "{stderr}");
    let doc: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    assert_result_shape(&doc, "ProvisionResult");
    assert_eq!(doc["interrupted"], true);
    // worker-0 has an image to write: it is still being provisioned when interrupted.
    let worker = &doc["hosts"][0];
    assert_eq!(worker["name"], "worker-0");
    assert_eq!(worker["outcome"], "inFlight", "{doc:#}");
    assert_eq!(worker["end"], Value::Null);
    assert!(worker["passes"].as_u64().unwrap() >= 1, "{worker}");
    assert_ne!(worker["state"], "", "the state it got to: {worker}");
    assert!(doc["summary"]["inFlight"].as_u64().unwrap() >= 1);
    assert!(stderr.contains("interrupted"), "{stderr}");
}

#[test]
fn sigterm_prints_the_table_with_the_hosts_in_flight_marked_and_exits_130() {
    let lab = lab();
    let (code, stdout, stderr) = interrupt(&lab, &["provision", "hosts.yaml"], "-TERM");
    assert_eq!(code, 130, "{stderr}");
    let row = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("worker-0 "))
        .unwrap_or_else(|| panic!("no row for worker-0 in\n{stdout}\n{stderr}"));
    assert!(row.contains("in flight (goal provisioned)"), "{row}");
}

/// BMO's spelling of a state is the one bmhctl prints; `wait --for` takes it, and the dashed
/// form as an alias.
#[test]
fn one_spelling_of_every_state_in_output_and_flags() {
    let lab = lab();
    let doc = run(&lab, &["provision", "hosts.yaml", "-o", "json"])
        .expect_code(0)
        .json();
    let legacy = &doc["hosts"][2];
    assert_eq!(legacy["name"], "legacy-0");
    assert_eq!(legacy["goal"], "externally provisioned");
    assert_eq!(legacy["state"], "externally provisioned");
    for state in ["externally provisioned", "externally-provisioned"] {
        run(
            &lab,
            &[
                "wait",
                "-f",
                "hosts.yaml",
                "legacy-0",
                "--for",
                state,
                "--timeout",
                "30s",
            ],
        )
        .expect_code(0);
    }
}

/// `--result-file`: the table stays on stdout for the log, the file gets the JSON document `-o
/// json` prints, for the next step; a file that cannot be written is exit 4, named, and the table
/// is still printed.
#[test]
fn a_result_file_gets_the_document_while_stdout_keeps_the_table() {
    let lab = lab();
    let r = run(
        &lab,
        &["provision", "hosts.yaml", "--result-file", "result.json"],
    )
    .expect_code(0);
    assert!(r.stdout.starts_with("NAME "), "the table: {}", r.stdout);
    let doc: Value = serde_json::from_str(&lab.read("result.json")).expect("a JSON document");
    assert_result_shape(&doc, "ProvisionResult");
    let json = run(
        &lab,
        &[
            "provision",
            "hosts.yaml",
            "-o",
            "json",
            "--result-file",
            "again.json",
        ],
    )
    .expect_code(0);
    assert_eq!(
        normalised(&lab.read("again.json")),
        normalised(&json.stdout)
    );
    let r = run(
        &lab,
        &[
            "provision",
            "hosts.yaml",
            "--result-file",
            "missing/result.json",
        ],
    )
    .expect_code(4);
    assert!(r.stdout.starts_with("NAME "), "the table: {}", r.stdout);
    assert!(
        r.stderr
            .contains("error: missing/result.json: No such file or directory"),
        "{}",
        r.stderr
    );
}
