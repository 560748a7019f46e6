//! The local store: `apply`, `get`, `describe` and the hidden `reconcile` (the runner on store
//! hosts), on a store in the lab directory.

use crate::lab::{Lab, host, secret};
use std::path::Path;

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

fn hosts_file() -> String {
    format!(
        "{}---\n{}---\n{}",
        secret("bmc-secret"),
        host(
            "worker-0",
            &format!("bootMACAddress: 00:11:22:33:44:55\n{IMAGE}")
        ),
        host("spare-0", "bootMACAddress: 00:11:22:33:44:56"),
    )
}

/// Every file of the store with its bytes and mtime (locks and the lease left out).
pub(crate) fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let m = std::fs::metadata(&p).unwrap();
                out.push((
                    p.strip_prefix(dir).unwrap().display().to_string(),
                    std::fs::read(&p).unwrap(),
                    m.modified().unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

fn field(text: &str, key: &str) -> String {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{key}: ")))
        .unwrap_or_else(|| panic!("no {key} in\n{text}"))
        .trim_matches('"')
        .to_string()
}

#[test]
fn apply_creates_objects_and_a_second_apply_writes_nothing() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let run = lab
        .run(&["apply", "-f", "hosts.yaml", "--store", "store"])
        .expect_code(0);
    assert_eq!(
        run.stdout,
        "secret/bmc-secret created\nbaremetalhost.metal3.io/worker-0 created\nbaremetalhost.metal3.io/spare-0 created\n"
    );
    let worker = lab.read("store/baremetalhosts/default/worker-0.yaml");
    assert_eq!(field(&worker, "generation"), "1");
    assert_eq!(field(&worker, "resourceVersion"), "1");
    assert!(!field(&worker, "uid").is_empty());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(lab.path("store/secrets/default/bmc-secret.yaml"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let before = snapshot(&lab.path("store"));
    std::thread::sleep(std::time::Duration::from_millis(20));
    let run = lab
        .run(&["apply", "-f", "hosts.yaml", "--store", "store"])
        .expect_code(0);
    assert_eq!(
        run.stdout,
        "secret/bmc-secret unchanged\nbaremetalhost.metal3.io/worker-0 unchanged\nbaremetalhost.metal3.io/spare-0 unchanged\n"
    );
    assert_eq!(
        snapshot(&lab.path("store")),
        before,
        "a no-op apply writes nothing"
    );
}

#[test]
fn the_store_comes_from_bmhctl_store_too() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let store = lab.path("elsewhere");
    let store = store.to_str().unwrap();
    lab.run_env(&["apply", "-f", "hosts.yaml"], &[("BMHCTL_STORE", store)])
        .expect_code(0);
    assert!(
        lab.path("elsewhere/baremetalhosts/default/spare-0.yaml")
            .is_file()
    );
    let run = lab
        .run_env(&["get", "spare-0"], &[("BMHCTL_STORE", store)])
        .expect_code(0);
    assert!(run.stdout.contains("spare-0"), "{}", run.stdout);
}

#[test]
fn hosts_driven_from_the_store_reach_their_goal_and_a_spec_change_keeps_status() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run(&["apply", "-f", "hosts.yaml", "--store", "store"])
        .expect_code(0);
    let run = lab
        .run(&[
            "reconcile",
            "--store",
            "store",
            "--provisioner",
            "fixture",
            "-o",
            "json",
        ])
        .expect_code(0);
    let json = run.json();
    let states: Vec<(&str, &str)> = json["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["name"].as_str().unwrap(), h["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        [("spare-0", "available"), ("worker-0", "provisioned")]
    );
    let worker = lab.read("store/baremetalhosts/default/worker-0.yaml");
    assert!(worker.contains("    state: provisioned\n"), "{worker}");
    assert!(
        worker.contains("finalizers:\n  - baremetalhost.metal3.io\n"),
        "{worker}"
    );
    assert!(
        lab.path("store/hardwaredata/default/worker-0.yaml")
            .is_file()
    );

    // get: the table as `get -f` prints it, from the store.
    let run = lab.run(&["get", "--store", "store"]).expect_code(0);
    let lines: Vec<Vec<&str>> = run
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        ["NAME", "STATE", "CONSUMER", "ONLINE", "ERROR", "AGE"]
    );
    assert_eq!(lines[1][..3], ["spare-0", "available", "true"]);
    assert_eq!(lines[2][..3], ["worker-0", "provisioned", "true"]);
    let run = lab
        .run(&["get", "--store", "store", "-o", "json", "worker-0"])
        .expect_code(0);
    // One host named: the object itself, as kubectl prints it.
    let host = run.json();
    assert_eq!(host["kind"], "BareMetalHost");
    assert_eq!(host["status"]["provisioning"]["state"], "provisioned");
    assert_eq!(host["metadata"]["generation"], 1);
    // An unknown name is bad usage, with one message, whatever the command.
    for command in [
        &["get"][..],
        &["describe"],
        &["export"],
        &["wait", "--for", "goal"],
        &["pause"],
        &["delete"],
    ] {
        let mut args = command.to_vec();
        args.extend(["--store", "store", "nope"]);
        let run = lab.run(&args).expect_code(2);
        assert_eq!(
            run.stderr, "error: no BareMetalHost named nope in the store\n",
            "{command:?}"
        );
    }

    // describe: state, power, conditions, hardware, recent events.
    let run = lab
        .run(&["describe", "worker-0", "--store", "store"])
        .expect_code(0);
    let out = &run.stdout;
    for want in [
        "Name:               worker-0\n",
        "Namespace:          default\n",
        "Generation:         1\n",
        "State:              provisioned\n",
        "Operational Status: OK\n",
        "Online:             true\n",
        "Power:              on\n",
        "Error Type:         <none>\n",
        "Error Count:        0\n",
        "Image:              http://images.example/os.qcow2\n",
        "Hardware:           1x x86_64 128 GiB 2 disks 2 nics\n",
        "Conditions:\n  TYPE",
        "Provisioned",
        "Events:\n  LAST SEEN",
        "ProvisioningComplete",
    ] {
        assert!(out.contains(want), "{want:?} not in\n{out}");
    }

    // A spec change: the generation goes up, the status stays.
    let edited = hosts_file().replace("os.qcow2", "os-2.qcow2");
    std::fs::write(lab.path("hosts.yaml"), edited).unwrap();
    let run = lab
        .run(&["apply", "-f", "hosts.yaml", "--store", "store"])
        .expect_code(0);
    assert!(
        run.stdout
            .contains("baremetalhost.metal3.io/worker-0 configured\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("baremetalhost.metal3.io/spare-0 unchanged\n"),
        "{}",
        run.stdout
    );
    let worker = lab.read("store/baremetalhosts/default/worker-0.yaml");
    assert_eq!(field(&worker, "generation"), "2");
    assert!(worker.contains("    state: provisioned\n"), "{worker}");
    assert!(worker.contains("os-2.qcow2"), "{worker}");

    // The runner takes the new image: deprovisioned and provisioned again.
    lab.run(&[
        "reconcile",
        "--store",
        "store",
        "--provisioner",
        "fixture",
        "-q",
        "worker-0",
    ])
    .expect_code(0);
    let worker = lab.read("store/baremetalhosts/default/worker-0.yaml");
    assert!(worker.contains("    state: provisioned\n"), "{worker}");
    assert!(
        worker.contains("      url: http://images.example/os-2.qcow2\n"),
        "{worker}"
    );
}

#[test]
fn an_invalid_host_is_refused_with_bmo_messages_and_nothing_is_written() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run(&["apply", "-f", "hosts.yaml", "--store", "store"])
        .expect_code(0);
    let before = snapshot(&lab.path("store"));
    // An update BMO's webhook refuses, next to a new valid host.
    let edited = hosts_file().replace("00:11:22:33:44:55", "00:11:22:33:44:99")
        + "---\n"
        + &host("new-0", "bootMACAddress: 00:11:22:33:44:57");
    std::fs::write(lab.path("hosts.yaml"), edited).unwrap();
    let run = lab
        .run(&["apply", "-f", "hosts.yaml", "--store", "store"])
        .expect_code(2);
    assert!(
        run.stderr.contains(
            "hosts.yaml:18:19: BareMetalHost default/worker-0: spec.bootMACAddress: bootMACAddress can not be changed once it is set"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, "");
    assert_eq!(snapshot(&lab.path("store")), before);

    // A create-time error, into an empty store: no store is even created.
    let lab = Lab::new().file(
        "bad.yaml",
        &format!(
            "{}---\n{}",
            secret("bmc-secret"),
            host("bad-0", "bootMode: uefi")
        ),
    );
    let run = lab
        .run(&["apply", "-f", "bad.yaml", "--store", "store"])
        .expect_code(2);
    assert!(
        run.stderr
            .contains("BareMetalHost default/bad-0: spec.bootMode: Unsupported value: \"uefi\""),
        "{}",
        run.stderr
    );
    assert!(!lab.path("store").exists());
}

#[test]
fn concurrent_applies_lose_no_update() {
    let n = 8;
    let mut lab = Lab::new().file("secret.yaml", &secret("bmc-secret"));
    for i in 0..n {
        lab = lab.file(
            &format!("h{i}.yaml"),
            &host(
                &format!("host-{i}"),
                &format!("bootMACAddress: 00:11:22:33:44:{i:02x}"),
            ),
        );
    }
    lab.run(&["apply", "-f", "secret.yaml", "--store", "store"])
        .expect_code(0);
    let children: Vec<_> = (0..n)
        .map(|i| {
            let file = format!("h{i}.yaml");
            lab.spawn(&[
                "apply",
                "-f",
                &file,
                "-f",
                "secret.yaml",
                "--store",
                "store",
            ])
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let run = lab
        .run(&["get", "--store", "store", "-o", "json"])
        .expect_code(0);
    let mut names: Vec<String> = run.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    let mut want: Vec<String> = (0..n).map(|i| format!("host-{i}")).collect();
    want.sort();
    assert_eq!(names, want);
    let secret = lab.read("store/secrets/default/bmc-secret.yaml");
    assert_eq!(field(&secret, "resourceVersion"), "1", "{secret}");
}

#[test]
fn a_second_controller_on_one_store_is_refused() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run(&["apply", "-f", "hosts.yaml", "--store", "store"])
        .expect_code(0);
    // With BMO's real delays the first run holds the lease for a while.
    let mut first = lab.spawn(&[
        "reconcile",
        "--store",
        "store",
        "--provisioner",
        "fixture",
        "-q",
    ]);
    let lease = lab.path("store/.lease");
    let started = std::time::Instant::now();
    while std::fs::read_to_string(&lease).map_or(true, |s| s.trim().is_empty()) {
        assert!(
            started.elapsed().as_secs() < 30,
            "the first run never took the lease"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let run = lab
        .run(&["reconcile", "--store", "store", "--provisioner", "fixture"])
        .expect_code(3);
    let pid = first.id();
    assert!(
        run.stderr
            .contains(&format!("is already being driven by bmhctl process {pid}")),
        "{}",
        run.stderr
    );
    first.kill().unwrap();
    let _ = first.wait();
}

/// The hosts file with `worker-0`'s labels and annotations, and the Secret's labels, given as
/// indented YAML lines (empty: none).
fn file_with_metadata(labels: &str, annotations: &str, secret_labels: &str) -> String {
    let mut meta = String::from("metadata:\n  name: worker-0\n");
    if !labels.is_empty() {
        meta.push_str(&format!("  labels:\n{labels}"));
    }
    if !annotations.is_empty() {
        meta.push_str(&format!("  annotations:\n{annotations}"));
    }
    let mut sec = String::from("metadata:\n  name: bmc-secret\n");
    if !secret_labels.is_empty() {
        sec.push_str(&format!("  labels:\n{secret_labels}"));
    }
    format!(
        "{}---\n{}",
        secret("bmc-secret").replacen("metadata:\n  name: bmc-secret\n", &sec, 1),
        host(
            "worker-0",
            &format!("bootMACAddress: 00:11:22:33:44:55\n{IMAGE}")
        )
        .replacen("metadata:\n  name: worker-0\n", &meta, 1),
    )
}

fn stored_metadata(lab: &Lab) -> serde_json::Value {
    let all = lab
        .run(&["get", "-o", "json", "--store", "store"])
        .expect_code(0)
        .json();
    all["items"][0]["metadata"].clone()
}

#[test]
fn apply_merges_labels_and_annotations_as_kubectl_apply_does() {
    let v1 = file_with_metadata(
        "    rack: r1\n    role: worker\n",
        "    example.com/owner: team-a\n",
        "    team: a\n",
    );
    let lab = Lab::new().file("hosts.yaml", &v1);
    let apply = |lab: &Lab| {
        lab.run(&["apply", "-f", "hosts.yaml", "--store", "store"])
            .expect_code(0)
    };
    apply(&lab);
    // What the verbs set (BMO's own annotations, bmhctl's requests) is not the file's.
    lab.run(&["pause", "worker-0", "--store", "store"])
        .expect_code(0);
    lab.run(&["power", "off", "worker-0", "--store", "store"])
        .expect_code(0);
    let paused = "baremetalhost.metal3.io/paused";
    let reboot = "reboot.metal3.io/bmhctl";
    let m = stored_metadata(&lab);
    assert!(m["annotations"].get(paused).is_some(), "{m}");
    assert!(m["annotations"].get(reboot).is_some(), "{m}");

    // The same file again: the verbs' annotations stay, nothing is written.
    let before = snapshot(&lab.path("store"));
    let run = apply(&lab);
    assert!(
        run.stdout
            .contains("baremetalhost.metal3.io/worker-0 unchanged"),
        "{}",
        run.stdout
    );
    assert_eq!(snapshot(&lab.path("store")), before);
    let m = stored_metadata(&lab);
    assert!(m["annotations"].get(paused).is_some(), "{m}");
    assert!(m["annotations"].get(reboot).is_some(), "{m}");
    assert_eq!(m["annotations"]["example.com/owner"], "team-a", "{m}");

    // A label changed, one removed, one added; the file's annotation removed: the previous
    // apply's keys gone from the file are removed, the others kept.
    let v2 = file_with_metadata("    rack: r2\n    zone: z1\n", "", "");
    let lab = lab.file("hosts.yaml", &v2);
    let run = apply(&lab);
    assert!(
        run.stdout
            .contains("baremetalhost.metal3.io/worker-0 configured"),
        "{}",
        run.stdout
    );
    let m = stored_metadata(&lab);
    assert_eq!(
        m["labels"],
        serde_json::json!({"rack": "r2", "zone": "z1"}),
        "{m}"
    );
    assert!(m["annotations"].get("example.com/owner").is_none(), "{m}");
    assert!(m["annotations"].get(paused).is_some(), "{m}");
    assert!(m["annotations"].get(reboot).is_some(), "{m}");
    let secret_file = lab.read("store/secrets/default/bmc-secret.yaml");
    assert!(!secret_file.contains("team:"), "{secret_file}");

    // Resumed: an apply does not bring back what it never set.
    lab.run(&["resume", "worker-0", "--store", "store"])
        .expect_code(0);
    apply(&lab);
    let m = stored_metadata(&lab);
    assert!(m["annotations"].get(paused).is_none(), "{m}");

    // Driven (the controller's writes keep what the last apply set), then applied without
    // a label: it is removed.
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
        &[("BMHCTL_PROVISIONER", "fixture")],
    )
    .expect_code(0);
    let lab = lab.file("hosts.yaml", &file_with_metadata("    rack: r2\n", "", ""));
    apply(&lab);
    let m = stored_metadata(&lab);
    assert_eq!(m["labels"], serde_json::json!({"rack": "r2"}), "{m}");

    // The bookkeeping is the store's: in the host's file, not in an export.
    let stored = lab.read("store/baremetalhosts/default/worker-0.yaml");
    assert!(stored.contains("lastApplied:"), "{stored}");
    let export = lab
        .run(&["export", "--store", "store"])
        .expect_code(0)
        .stdout;
    assert!(!export.contains("lastApplied"), "{export}");
    assert!(!export.contains("\nbmhctl:"), "{export}");
}
