use crate::lab::{Lab, host, secret, without_status};

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

fn hosts_file() -> String {
    format!(
        "# The lab's hosts. This comment must survive.\n---\n{}---\n# provisioned: has an image\n{}---\n{}---\n{}",
        secret("bmc-secret"),
        host("worker-0", IMAGE),
        host(
            "spare-0",
            "# no image: stays available\nexternallyProvisioned: false"
        ),
        host("legacy-0", "externallyProvisioned: true"),
    )
}

#[test]
fn provision_reaches_every_goal_and_keeps_the_rest_of_the_file() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let run = lab
        .run(&[
            "provision",
            "--provisioner",
            "fixture",
            "-o",
            "json",
            "hosts.yaml",
        ])
        .expect_code(0);
    let json = run.json();
    let states: Vec<(String, String)> = json["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["name"].as_str().unwrap().to_string(),
                h["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            ("worker-0".to_string(), "provisioned".to_string()),
            ("spare-0".into(), "available".into()),
            ("legacy-0".into(), "externally provisioned".into()),
        ]
    );
    let after = lab.read("hosts.yaml");
    assert_eq!(
        without_status(&after),
        hosts_file(),
        "only status blocks may change"
    );
    assert_eq!(after.matches("\nstatus:\n").count(), 3);
    assert!(after.contains("    state: provisioned\n"), "{after}");
}

#[test]
fn a_second_run_on_a_stable_file_changes_nothing() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    let before = lab.read("hosts.yaml");
    let sidecar = lab.path(".bmhctl/hosts.yaml.state.json");
    let sidecar_before = std::fs::read(&sidecar).unwrap();
    let mtime = std::fs::metadata(lab.path("hosts.yaml"))
        .unwrap()
        .modified()
        .unwrap();
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    assert_eq!(lab.read("hosts.yaml"), before);
    assert_eq!(std::fs::read(&sidecar).unwrap(), sidecar_before);
    assert_eq!(
        std::fs::metadata(lab.path("hosts.yaml"))
            .unwrap()
            .modified()
            .unwrap(),
        mtime
    );
}

#[test]
fn a_host_that_fails_registration_exits_1_and_the_table_says_why() {
    let failing = host("broken-0", "").replace(
        "metadata:\n  name: broken-0\n",
        "metadata:\n  name: broken-0\n  annotations:\n    fixture.bmhctl.metal3.io/validate-error: BMC said no\n",
    );
    let lab = Lab::new().file(
        "hosts.yaml",
        &format!("{}---\n{}", secret("bmc-secret"), failing),
    );
    let run = lab
        .run(&[
            "provision",
            "--provisioner",
            "fixture",
            "--timeout",
            "10m",
            "hosts.yaml",
        ])
        .expect_code(1);
    assert!(run.stdout.contains("broken-0"), "{}", run.stdout);
    assert!(run.stdout.contains("BMC said no"), "{}", run.stdout);
    assert!(run.stdout.contains("registration error"), "{}", run.stdout);
}

#[test]
fn deprovision_then_delete_tears_down_what_provision_did() {
    let lab = Lab::new().file(
        "hosts.yaml",
        &format!("{}---\n{}", secret("bmc-secret"), host("worker-0", IMAGE)),
    );
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    let run = lab
        .run(&[
            "deprovision",
            "--provisioner",
            "fixture",
            "-o",
            "json",
            "-f",
            "hosts.yaml",
        ])
        .expect_code(0);
    assert_eq!(run.json()["hosts"][0]["state"], "available");
    assert!(lab.read("hosts.yaml").contains("    state: available\n"));
    let run = lab
        .run(&[
            "delete",
            "--provisioner",
            "fixture",
            "-o",
            "json",
            "-f",
            "hosts.yaml",
        ])
        .expect_code(0);
    assert_eq!(run.json()["hosts"][0]["deleted"], true);
    let after = lab.read("hosts.yaml");
    assert!(!after.contains("status:"), "{after}");
    assert_eq!(
        after,
        format!("{}---\n{}", secret("bmc-secret"), host("worker-0", IMAGE))
    );
}

#[test]
fn get_shows_the_status_written_by_provision() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    let run = lab.run(&["get", "-f", "hosts.yaml"]).expect_code(0);
    assert!(run.stdout.contains("worker-0"), "{}", run.stdout);
    assert!(run.stdout.contains("provisioned"), "{}", run.stdout);
    let run = lab
        .run(&["get", "-f", ".", "-o", "json", "worker-0"])
        .expect_code(0);
    assert_eq!(run.json()["status"]["provisioning"]["state"], "provisioned");
}

#[test]
fn version_names_the_plugin_interface() {
    let run = Lab::new().run(&["version"]).expect_code(0);
    assert!(run.stdout.contains("plugin ABI 1"), "{}", run.stdout);
    assert!(run.stdout.contains("plugin SDK"), "{}", run.stdout);
}

#[test]
fn ctrl_c_saves_what_is_pending_and_exits_130() {
    let lab = Lab::new().file(
        "hosts.yaml",
        &format!("{}---\n{}", secret("bmc-secret"), host("worker-0", IMAGE)),
    );
    let child = lab.spawn(&["provision", "--provisioner", "fixture", "hosts.yaml"]);
    // The fixture's registration waits 5 s: by then the host is saved in `registering`.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = lab.read("hosts.yaml");
    assert!(after.contains("    state: registering\n"), "{after}");
    assert!(after.contains("    ID: temporary-fake-id\n"), "{after}");
    // A second run resumes where the first stopped.
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    assert!(lab.read("hosts.yaml").contains("    state: provisioned\n"));
}

#[test]
fn get_prints_yaml_that_reads_back() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    let run = lab
        .run(&["get", "-f", "hosts.yaml", "-o", "yaml"])
        .expect_code(0);
    // Several hosts: a List, as kubectl prints them.
    let list: serde_json::Value = serde_saphyr::from_str(&run.stdout).unwrap();
    assert_eq!(list["kind"], "List");
    let docs = list["items"].as_array().unwrap();
    assert_eq!(docs.len(), 3, "{}", run.stdout);
    assert_eq!(docs[0]["status"]["provisioning"]["state"], "provisioned");
}

#[test]
fn label_selectors_and_host_names_pick_the_hosts() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let run = lab
        .run(&[
            "provision",
            "--provisioner",
            "fixture",
            "-o",
            "json",
            "--host",
            "spare-0",
            "hosts.yaml",
        ])
        .expect_code(0);
    assert_eq!(run.json()["hosts"].as_array().unwrap().len(), 1);
    let run = lab
        .run(&[
            "provision",
            "--provisioner",
            "fixture",
            "--host",
            "nope",
            "hosts.yaml",
        ])
        .expect_code(2);
    assert!(run.stderr.contains("nope"), "{}", run.stderr);
    let run = lab
        .run(&[
            "provision",
            "--provisioner",
            "fixture",
            "-l",
            "x in (",
            "hosts.yaml",
        ])
        .expect_code(2);
    assert!(run.stderr.contains("selector"), "{}", run.stderr);
}

#[test]
fn an_interrupted_delete_leaves_its_mark_and_the_next_run_finishes_it() {
    let text = format!("{}---\n{}", secret("bmc-secret"), host("worker-0", IMAGE));
    let lab = Lab::new().file("hosts.yaml", &text);
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    // The fixture's deprovisioning waits 10 s: interrupt the delete while it does.
    let child = lab.spawn(&["delete", "--provisioner", "fixture", "-f", "hosts.yaml"]);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(130));
    let sidecar = std::fs::read_to_string(lab.path(".bmhctl/hosts.yaml.state.json")).unwrap();
    assert!(sidecar.contains("deletionRequested"), "{sidecar}");
    // Even `provision` now carries the delete through, as BMO can't cancel a deletion.
    let run = lab.run(&[
        "provision",
        "--provisioner",
        "fixture",
        "-o",
        "json",
        "hosts.yaml",
    ]);
    assert_eq!(run.json()["hosts"][0]["deleted"], true, "{}", run.stdout);
    assert_eq!(lab.read("hosts.yaml"), text);
}

#[test]
fn sigkill_mid_run_leaves_a_whole_file_and_the_next_run_resumes() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let whole = |lab: &Lab| {
        let text = lab.read("hosts.yaml");
        assert!(
            text.starts_with("# The lab's hosts. This comment must survive.\n"),
            "{text}"
        );
        let docs: Vec<serde_json::Value> = text
            .split("\n---\n")
            .map(|d| {
                serde_saphyr::from_str::<serde_json::Value>(d)
                    .unwrap_or_else(|e| panic!("a document does not parse ({e}):\n{text}"))
            })
            .filter(|v| !v.is_null())
            .collect();
        assert_eq!(docs.len(), 4, "{text}");
        text
    };
    for ms in [300, 800, 1500] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
            .current_dir(lab.path(""))
            .env("BMHCTL_TIME_SCALE", "0.05")
            .env("BMHCTL_SEED", "1")
            .env_remove("BMHCTL_PROVISIONER")
            .args(["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start bmhctl provision");
        std::thread::sleep(std::time::Duration::from_millis(ms));
        child.kill().expect("SIGKILL bmhctl provision");
        child.wait().unwrap();
        // Each save replaced the file whole, or did not happen; the file lock is free again
        // (the kernel released the killed process's flock), as the next run shows.
        whole(&lab);
    }
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    let text = whole(&lab);
    assert!(text.contains("    state: provisioned\n"), "{text}");
    // A temporary file a killed save left is a dot-file beside it, never read.
    for e in std::fs::read_dir(lab.path("")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(name.starts_with('.') || !name.ends_with(".tmp"), "{name}");
    }
}
