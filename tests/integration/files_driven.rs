//! The commands that read or drive hosts, on files (`-f`) as on the store: `watch -f`,
//! `describe -f`, the verbs with `-f`, `wait -f` and `delete -f`, with the fixture provisioner.

use crate::lab::{Lab, Reaped, host, secret, without_status};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

fn worker(name: &str) -> String {
    host(name, &format!("bootMACAddress: 00:11:22:33:44:01\n{IMAGE}"))
}

fn spare(name: &str) -> String {
    host(name, "bootMACAddress: 00:11:22:33:55:01")
}

fn file_of(hosts: &[String]) -> String {
    let mut s = secret("bmc-secret");
    for h in hosts {
        s.push_str("---\n");
        s.push_str(h);
    }
    s
}

/// The fixture, small delays (a steady host polls its power every 0.6 s), a fixed seed.
const ENV: [(&str, &str); 3] = [
    ("BMHCTL_PROVISIONER", "fixture"),
    ("BMHCTL_TIME_SCALE", "0.01"),
    ("BMHCTL_SEED", "1"),
];

fn run(lab: &Lab, args: &[&str]) -> crate::lab::Run {
    lab.run_env(args, &ENV)
}

/// A host of the files as `get -f -o json` shows it.
fn host_json(lab: &Lab, path: &str, name: &str) -> serde_json::Value {
    let all = run(lab, &["get", "-f", path, "-o", "json"])
        .expect_code(0)
        .json();
    all["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["metadata"]["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no host {name} in {all}"))
}

/// Polls until `f` holds (panics after 60 s).
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let started = Instant::now();
    while !f() {
        assert!(started.elapsed() < Duration::from_secs(60), "{what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `bmhctl watch -f PATH` in the lab; killed when dropped if still running.
struct Watch(Reaped);

impl Watch {
    fn start(lab: &Lab, path: &str) -> Watch {
        use std::io::BufRead;
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
            .current_dir(lab.path(""))
            .envs(ENV)
            .args(["watch", "-f", path])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start bmhctl watch -f");
        // It says so once it holds the files' locks.
        let mut line = String::new();
        std::io::BufReader::new(child.stderr.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(
            line,
            format!(
                "watching {path} (their locks are in .bmhctl/ beside them); Ctrl-C or SIGTERM to stop\n"
            )
        );
        Watch(Reaped(child))
    }

    /// SIGTERM; the exit code and what it printed on stderr after its first line.
    fn stop(mut self) -> (i32, String) {
        use std::io::Read;
        let ok = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let code = self.0.wait().unwrap().code().unwrap_or(-1);
        let mut stderr = String::new();
        self.0
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        (code, stderr)
    }
}

fn state(lab: &Lab, path: &str, name: &str) -> String {
    host_json(lab, path, name)["status"]["provisioning"]["state"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn watch_on_files_reconciles_them_reacts_to_edits_holds_their_locks_and_stops_on_sigterm() {
    let lab = Lab::new();
    std::fs::create_dir(lab.path("hosts")).unwrap();
    let lab = lab.file(
        "hosts/hosts.yaml",
        &file_of(&[worker("worker-0"), spare("spare-0")]),
    );
    let watch = Watch::start(&lab, "hosts/");
    // `wait -f` while `watch -f` holds the locks: it looks, the watch drives.
    let waited = run(
        &lab,
        &[
            "wait",
            "-f",
            "hosts/",
            "--for",
            "provisioned",
            "worker-0",
            "--timeout",
            "60s",
        ],
    )
    .expect_code(0);
    assert_eq!(
        waited.stdout,
        "baremetalhost.metal3.io/worker-0 condition met\n"
    );
    eventually("spare-0 available", || {
        state(&lab, "hosts/", "spare-0") == "available"
    });
    // It holds the files' locks: another writer is refused.
    let busy = run(&lab, &["provision", "-f", "hosts/"]).expect_code(3);
    assert!(
        busy.stderr.contains("is in use by another bmhctl process"),
        "{}",
        busy.stderr
    );
    // A verb writes its request into the file for the watch to act on.
    let verb = run(&lab, &["pause", "-f", "hosts/", "spare-0"]).expect_code(0);
    assert!(
        verb.stderr.contains("the request is written into the file"),
        "{}",
        verb.stderr
    );
    assert!(
        lab.read("hosts/hosts.yaml")
            .contains("\"baremetalhost.metal3.io/paused\": \"\"")
    );
    run(&lab, &["resume", "-f", "hosts/", "spare-0"]).expect_code(0);
    assert!(
        !lab.read("hosts/hosts.yaml")
            .contains("baremetalhost.metal3.io/paused")
    );
    // An edit of the file (an image for spare-0) is acted on.
    let text = lab.read("hosts/hosts.yaml");
    let edited = text.replace(
        "  bootMACAddress: 00:11:22:33:55:01\n",
        &format!(
            "  bootMACAddress: 00:11:22:33:55:01\n{}",
            IMAGE
                .lines()
                .map(|l| format!("  {l}\n"))
                .collect::<String>()
        ),
    );
    assert_ne!(edited, text);
    std::fs::write(lab.path("hosts/hosts.yaml"), &edited).unwrap();
    eventually("spare-0 provisioned after the edit", || {
        state(&lab, "hosts/", "spare-0") == "provisioned"
    });
    // A new file in the directory is picked up too.
    let lab = lab.file(
        "hosts/more.yaml",
        &host("extra-0", "bootMACAddress: 00:11:22:33:66:01"),
    );
    eventually("extra-0 available", || {
        state(&lab, "hosts/", "extra-0") == "available"
    });
    let (code, stderr) = watch.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.ends_with("stopped: passes in flight finished and their status saved\n"),
        "{stderr}"
    );
    // Only status blocks were written; the user's edit is kept.
    assert_eq!(
        without_status(&lab.read("hosts/hosts.yaml")),
        without_status(&edited)
    );
    // The locks are released.
    run(&lab, &["provision", "-f", "hosts/", "-q"]).expect_code(0);
}

#[test]
fn describe_on_files_shows_the_host_as_the_store_form_does() {
    let hosts = file_of(&[worker("worker-0")]);
    let lab = Lab::new().file("hosts.yaml", &hosts);
    run(&lab, &["provision", "-q", "-f", "hosts.yaml"]).expect_code(0);
    let from_file = run(&lab, &["describe", "-f", "hosts.yaml", "worker-0"]).expect_code(0);
    run(&lab, &["apply", "-f", "hosts.yaml", "--store", "store"]).expect_code(0);
    run(&lab, &["reconcile", "-q", "--store", "store"]).expect_code(0);
    let from_store = run(&lab, &["describe", "--store", "store", "worker-0"]).expect_code(0);
    // The same fields, each line the same but those that tell the two apart: the uid, the
    // store's resource version and times.
    let fields = |text: &str| -> Vec<String> {
        text.lines()
            .take_while(|l| *l != "Events:")
            .filter(|l| !l.starts_with("UID:") && !l.starts_with("Resource Version:"))
            .map(|l| {
                l.split_whitespace()
                    .filter(|w| !w.starts_with("20"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    assert_eq!(fields(&from_file.stdout), fields(&from_store.stdout));
    for line in [
        "Name:               worker-0\n",
        "Generation:         1\n",
        "State:              provisioned\n",
        "Power:              on\n",
        "Conditions:\n  TYPE ",
    ] {
        assert!(
            from_file.stdout.contains(line),
            "{line}\n{}",
            from_file.stdout
        );
    }
    // Both keep the host's events (files in their bookkeeping).
    for out in [&from_file.stdout, &from_store.stdout] {
        let events = out.split("Events:\n").nth(1).unwrap_or_default();
        assert!(events.contains("ProvisioningComplete"), "{out}");
    }
    assert!(
        from_store.stdout.contains("Provisioned"),
        "{}",
        from_store.stdout
    );
    let missing = run(&lab, &["describe", "-f", "hosts.yaml", "nope"]).expect_code(2);
    assert_eq!(
        missing.stderr,
        "error: no BareMetalHost named nope in the given files\n"
    );
}

#[test]
fn power_off_on_files_writes_bmos_annotation_and_waits_for_the_outcome() {
    let hosts = file_of(&[worker("worker-0"), spare("spare-0")]);
    let lab = Lab::new().file("hosts.yaml", &hosts);
    run(&lab, &["provision", "-q", "-f", "hosts.yaml"]).expect_code(0);
    assert_eq!(
        host_json(&lab, "hosts.yaml", "worker-0")["status"]["poweredOn"],
        true
    );

    let off = run(
        &lab,
        &["power", "off", "-f", "hosts.yaml", "worker-0", "--wait"],
    )
    .expect_code(0);
    assert_eq!(
        off.stdout,
        "baremetalhost.metal3.io/worker-0 power off requested\nbaremetalhost.metal3.io/worker-0 powered off\n"
    );
    // BMO's held reboot annotation, in the host's document; nothing else of the user's text
    // changed.
    let annotated = hosts.replacen(
        "metadata:\n  name: worker-0\n",
        "metadata:\n  annotations:\n    \"reboot.metal3.io/bmhctl\": \"{\\\"mode\\\":\\\"soft\\\"}\"\n  name: worker-0\n",
        1,
    );
    assert_eq!(without_status(&lab.read("hosts.yaml")), annotated);
    let w = host_json(&lab, "hosts.yaml", "worker-0");
    assert_eq!(w["status"]["poweredOn"], false);
    assert_eq!(w["status"]["provisioning"]["state"], "provisioned");
    assert_eq!(
        w["metadata"]["annotations"]["reboot.metal3.io/bmhctl"],
        r#"{"mode":"soft"}"#
    );

    // Again: nothing to write.
    let again = run(&lab, &["power", "off", "-f", "hosts.yaml", "worker-0"]).expect_code(0);
    assert_eq!(
        again.stdout,
        "baremetalhost.metal3.io/worker-0 power off requested (unchanged)\n"
    );

    // Power on removes it (and the mapping it leaves empty, as an API server drops an empty
    // map) and the host is powered on again.
    let on = run(
        &lab,
        &["power", "on", "-f", "hosts.yaml", "worker-0", "--wait"],
    )
    .expect_code(0);
    assert_eq!(
        on.stdout,
        "baremetalhost.metal3.io/worker-0 power on requested\nbaremetalhost.metal3.io/worker-0 powered on\n"
    );
    assert_eq!(without_status(&lab.read("hosts.yaml")), hosts);
    assert_eq!(
        host_json(&lab, "hosts.yaml", "worker-0")["status"]["poweredOn"],
        true
    );

    // A one-shot annotation is consumed by the pass that acts on it, as on the store.
    run(&lab, &["reboot", "-f", "hosts.yaml", "worker-0", "--wait"]).expect_code(0);
    let w = host_json(&lab, "hosts.yaml", "worker-0");
    assert!(
        w["metadata"]["annotations"]
            .as_object()
            .is_none_or(|a| a.is_empty()),
        "{w}"
    );
    assert_eq!(w["status"]["poweredOn"], true);

    // Selection as everywhere: by label too, unknown names are exit 2.
    let missing = run(&lab, &["pause", "-f", "hosts.yaml", "nope"]).expect_code(2);
    assert_eq!(
        missing.stderr,
        "error: no BareMetalHost named nope in the given files\n"
    );
}

#[test]
fn verbs_edit_flow_style_metadata_in_place() {
    // Flow metadata, flow annotations, and block metadata in one file: each verb's edit lands
    // in its host's document and every other byte stays.
    let flow = worker("worker-0").replacen(
        "metadata:\n  name: worker-0\n",
        "metadata: {name: worker-0, labels: {rack: r1}}\n",
        1,
    );
    let flow_annotated = spare("spare-0").replacen(
        "metadata:\n  name: spare-0\n",
        "metadata:\n  name: spare-0\n  annotations: {note: mine}\n",
        1,
    );
    let hosts = file_of(&[flow.clone(), flow_annotated.clone(), worker("worker-1")]);
    let lab = Lab::new().file("hosts.yaml", &hosts);
    run(&lab, &["provision", "-q", "-f", "hosts.yaml"]).expect_code(0);

    run(
        &lab,
        &["power", "off", "-f", "hosts.yaml", "worker-0", "--wait"],
    )
    .expect_code(0);
    run(&lab, &["pause", "-f", "hosts.yaml", "spare-0"]).expect_code(0);
    let expected = hosts
        .replacen(
            "metadata: {name: worker-0,",
            "metadata: {annotations: {\"reboot.metal3.io/bmhctl\": \"{\\\"mode\\\":\\\"soft\\\"}\"}, name: worker-0,",
            1,
        )
        .replacen(
            "annotations: {note: mine}",
            "annotations: {\"baremetalhost.metal3.io/paused\": \"\", note: mine}",
            1,
        );
    assert_eq!(without_status(&lab.read("hosts.yaml")), expected);
    let w = host_json(&lab, "hosts.yaml", "worker-0");
    assert_eq!(w["status"]["poweredOn"], false);
    assert_eq!(w["metadata"]["labels"]["rack"], "r1");
    let s = host_json(&lab, "hosts.yaml", "spare-0");
    assert_eq!(s["metadata"]["annotations"]["note"], "mine");

    // Power on takes the annotation out again; the host comes back on.
    run(
        &lab,
        &["power", "on", "-f", "hosts.yaml", "worker-0", "--wait"],
    )
    .expect_code(0);
    let w = host_json(&lab, "hosts.yaml", "worker-0");
    assert_eq!(w["status"]["poweredOn"], true);
    assert!(
        w["metadata"]["annotations"]
            .as_object()
            .is_none_or(|a| a.is_empty()),
        "{w}"
    );
    assert!(lab.read("hosts.yaml").contains("labels: {rack: r1}}"));
}

#[test]
fn wait_on_files_drives_them_until_the_state() {
    let lab = Lab::new().file(
        "hosts.yaml",
        &file_of(&[worker("worker-0"), spare("spare-0")]),
    );
    let run_ = run(
        &lab,
        &[
            "wait",
            "-f",
            "hosts.yaml",
            "--for",
            "goal",
            "--timeout",
            "60s",
        ],
    )
    .expect_code(0);
    // A line per host as it is met: in the order they get there.
    let mut lines: Vec<&str> = run_.stdout.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            "baremetalhost.metal3.io/spare-0 condition met",
            "baremetalhost.metal3.io/worker-0 condition met"
        ]
    );
    assert_eq!(state(&lab, "hosts.yaml", "worker-0"), "provisioned");
    assert_eq!(state(&lab, "hosts.yaml", "spare-0"), "available");
    // Already met: nothing is driven, nothing locked.
    run(
        &lab,
        &[
            "wait",
            "-f",
            "hosts.yaml",
            "--for",
            "provisioned",
            "worker-0",
        ],
    )
    .expect_code(0);
}

#[test]
fn delete_on_files_records_the_mark_without_wait_and_runs_the_delete_path_with_it() {
    let hosts = file_of(&[worker("worker-0"), spare("spare-0")]);
    let lab = Lab::new().file("hosts.yaml", &hosts);
    run(&lab, &["provision", "-q", "-f", "hosts.yaml"]).expect_code(0);
    let marked = run(
        &lab,
        &["delete", "-f", "hosts.yaml", "worker-0", "--no-wait"],
    )
    .expect_code(0);
    assert_eq!(
        marked.stdout,
        "baremetalhost.metal3.io/worker-0 deletion requested\n"
    );
    let sidecar = lab.read(".bmhctl/hosts.yaml.state.json");
    assert!(sidecar.contains("deletionRequested"), "{sidecar}");
    // Nothing else moved yet.
    assert_eq!(state(&lab, "hosts.yaml", "worker-0"), "provisioned");
    let again = run(
        &lab,
        &["delete", "-f", "hosts.yaml", "worker-0", "--no-wait"],
    )
    .expect_code(0);
    assert_eq!(
        again.stdout,
        "baremetalhost.metal3.io/worker-0 deletion requested (already being deleted)\n"
    );
    // The next run that drives it finishes BMO's delete path: its status is gone.
    run(&lab, &["delete", "-q", "-f", "hosts.yaml", "worker-0"]).expect_code(0);
    let w = host_json(&lab, "hosts.yaml", "worker-0");
    assert!(w.get("status").is_none(), "{w}");
    assert_eq!(state(&lab, "hosts.yaml", "spare-0"), "available");
    assert_eq!(
        without_status(&lab.read("hosts.yaml")),
        without_status(&hosts)
    );
}

/// BMO's `inspect.metal3.io` on an available host: one more inspection, the annotation removed
/// when it starts (BMO's `actionInspecting`, `inspectionRefreshRequested`), and the host back in
/// `available`. The fixture used to answer a refresh with its old details, so the annotation
/// stayed and the host went round inspection for ever.
#[test]
fn inspect_on_files_inspects_once_more_and_removes_the_annotation() {
    let lab = Lab::new().file("hosts.yaml", &file_of(&[spare("spare-0")]));
    run(&lab, &["provision", "-f", "hosts.yaml", "--timeout", "60s"]).expect_code(0);
    assert_eq!(state(&lab, "hosts.yaml", "spare-0"), "available");
    run(&lab, &["inspect", "-f", "hosts.yaml", "spare-0"]).expect_code(0);
    assert!(lab.read("hosts.yaml").contains("inspect.metal3.io"));
    let again = run(
        &lab,
        &["provision", "-v", "-f", "hosts.yaml", "--timeout", "60s"],
    )
    .expect_code(0);
    let inspections = again.stderr.matches("-> inspecting").count();
    assert_eq!(inspections, 1, "{}", again.stderr);
    assert!(!lab.read("hosts.yaml").contains("inspect.metal3.io"));
    assert_eq!(state(&lab, "hosts.yaml", "spare-0"), "available");
}
