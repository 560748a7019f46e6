//! `bmhctl export`: hosts as a metal3 cluster takes them (status in BMO's status annotation),
//! and `apply` of an export restoring that status, as BMO does.

use crate::lab::{Lab, host, secret};
use serde_json::Value;

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";
const STATUS: &str = "baremetalhost.metal3.io/status";
use crate::canary::PASSWORD_B64;

fn hosts_file() -> String {
    format!(
        "{}---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: worker-0-user-data\nstringData:\n  userData: \"#cloud-config\\n\"\n---\n{}---\n{}",
        secret("bmc-secret"),
        host(
            "worker-0",
            &format!(
                "bootMACAddress: 00:11:22:33:44:55\nuserData:\n  name: worker-0-user-data\n{IMAGE}"
            )
        )
        .replace(
            "metadata:\n  name: worker-0\n",
            "metadata:\n  name: worker-0\n  labels:\n    rack: r1\n"
        ),
        host("spare-0", "bootMACAddress: 00:11:22:33:44:56"),
    )
}

/// The documents of a multi-document YAML text.
fn documents(text: &str) -> Vec<Value> {
    text.split("\n---\n")
        .map(|d| serde_saphyr::from_str::<Value>(d).unwrap_or_else(|e| panic!("{e}:\n{d}")))
        .filter(|v| !v.is_null())
        .collect()
}

fn find<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in {docs:#?}"))
}

/// A host of the store as JSON (`get -o json NAME`: the object itself).
fn stored_host(lab: &Lab, store: &str, name: &str) -> Value {
    let run = lab
        .run(&["get", "--store", store, "-o", "json", name])
        .expect_code(0);
    run.json()
}

/// A store with worker-0 provisioned and spare-0 available, driven by the fixture.
fn provisioned_store(lab: &Lab) {
    lab.run(&["apply", "-f", "hosts.yaml", "--store", "s1"])
        .expect_code(0);
    lab.run(&[
        "reconcile",
        "--store",
        "s1",
        "--provisioner",
        "fixture",
        "-q",
    ])
    .expect_code(0);
}

#[test]
fn export_then_apply_into_an_empty_store_restores_status_without_inspecting_or_provisioning() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    provisioned_store(&lab);
    let before_worker = stored_host(&lab, "s1", "worker-0");
    let before_spare = stored_host(&lab, "s1", "spare-0");

    let run = lab.run(&["export", "--store", "s1"]).expect_code(0);
    let text = run.stdout.clone();
    assert!(
        !text.contains("\nbmhctl:"),
        "nothing bmhctl-private:\n{text}"
    );
    assert!(!text.contains("\nstatus:"), "no status block:\n{text}");
    for private in [
        "uid:",
        "resourceVersion:",
        "generation:",
        "provisionerState",
    ] {
        assert!(!text.contains(private), "{private} exported:\n{text}");
    }
    assert!(!text.contains("password:\n") && !text.contains(": password\n"));
    assert_eq!(
        text.matches(PASSWORD_B64).count(),
        1,
        "the password only once, in its Secret's data:\n{text}"
    );
    let docs = documents(&text);
    let kinds: Vec<(String, String)> = docs
        .iter()
        .map(|d| {
            (
                d["kind"].as_str().unwrap().to_string(),
                d["metadata"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let k = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        kinds,
        [
            k("Secret", "bmc-secret"),
            k("HardwareData", "spare-0"),
            k("BareMetalHost", "spare-0"),
            k("Secret", "worker-0-user-data"),
            k("HardwareData", "worker-0"),
            k("BareMetalHost", "worker-0"),
        ],
        "Secrets and HardwareData before their host, each Secret once"
    );
    let worker = find(&docs, "BareMetalHost", "worker-0");
    assert_eq!(worker["metadata"]["labels"]["rack"], "r1");
    assert_eq!(worker["spec"]["architecture"], "x86_64", "BMO's spec write");
    assert!(worker["metadata"].get("finalizers").is_none());
    let annotation: Value =
        serde_json::from_str(worker["metadata"]["annotations"][STATUS].as_str().unwrap()).unwrap();
    assert_eq!(annotation["provisioning"]["state"], "provisioned");
    assert_eq!(annotation, before_worker["status"], "the status, whole");
    let hd = find(&docs, "HardwareData", "worker-0");
    assert_eq!(hd["spec"]["hardware"], before_worker["status"]["hardware"]);
    assert_eq!(
        hd["metadata"]["finalizers"][0],
        "baremetalhost.metal3.io/hardwareData"
    );
    let user_data = find(&docs, "Secret", "worker-0-user-data");
    assert_eq!(user_data["data"]["userData"], "I2Nsb3VkLWNvbmZpZwo=");

    // -o FILE: the same text, mode 0600.
    lab.run(&["export", "--store", "s1", "--output-file", "export.yaml"])
        .expect_code(0);
    assert_eq!(lab.read("export.yaml"), text);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(lab.path("export.yaml"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // Into an empty store: the status is restored at apply, the annotation consumed.
    lab.run(&["apply", "-f", "export.yaml", "--store", "s2"])
        .expect_code(0);
    let restored = stored_host(&lab, "s2", "worker-0");
    assert_eq!(restored["status"], before_worker["status"]);
    assert!(
        restored["metadata"]["annotations"].get(STATUS).is_none(),
        "{restored:#}"
    );
    let run = lab
        .run(&["apply", "-f", "export.yaml", "--store", "s2"])
        .expect_code(0);
    assert!(
        run.stdout.lines().all(|l| l.ends_with(" unchanged")),
        "applying the export again changes nothing:\n{}",
        run.stdout
    );

    // Driven: registered and adopted again, never inspected or provisioned again.
    let run = lab
        .run(&[
            "reconcile",
            "--store",
            "s2",
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
    for (name, before) in [("worker-0", &before_worker), ("spare-0", &before_spare)] {
        let after = stored_host(&lab, "s2", name);
        let st = &after["status"];
        assert_eq!(
            st["operationHistory"], before["status"]["operationHistory"],
            "{name}: no new registration, inspection or provisioning"
        );
        assert_eq!(st["hardware"], before["status"]["hardware"], "{name}");
        assert_eq!(
            st["provisioning"], before["status"]["provisioning"],
            "{name}"
        );
        let file = lab.read(&format!("s2/baremetalhosts/default/{name}.yaml"));
        assert!(file.contains("    inspectionStarted: false\n"), "{file}");
        assert!(file.contains("    image:\n      url: \"\"\n"), "{file}");
        let events = std::fs::read_to_string(lab.path(&format!("s2/events/default/{name}.jsonl")))
            .unwrap_or_default();
        for redone in ["InspectionComplete", "ProvisioningComplete", "Registered"] {
            assert!(!events.contains(redone), "{name}: {redone} in {events}");
        }
    }
    let worker = lab.read("s2/baremetalhosts/default/worker-0.yaml");
    assert!(
        worker.contains("    adopted: true\n"),
        "adopted as BMO does:\n{worker}"
    );

    // An export applied over hosts that have a status: the status stays, the annotation goes.
    let run = lab
        .run(&["apply", "-f", "export.yaml", "--store", "s1"])
        .expect_code(0);
    assert!(
        run.stdout
            .contains("baremetalhost.metal3.io/worker-0 configured"),
        "{}",
        run.stdout
    );
    let again = stored_host(&lab, "s1", "worker-0");
    assert_eq!(again["status"], before_worker["status"]);
    assert!(again["metadata"]["annotations"].get(STATUS).is_none());
}

#[test]
fn a_fake_hardware_host_is_refused_and_nothing_is_written() {
    let fake = host("lab-0", "bootMACAddress: 00:11:22:33:44:57")
        .replace("ipmi://192.168.122.1:6233", "fake-hardware://lab-0");
    let lab = Lab::new().file("hosts.yaml", &format!("{}---\n{fake}", hosts_file()));
    lab.run(&["apply", "-f", "hosts.yaml", "--store", "s1"])
        .expect_code(0);
    let run = lab
        .run(&["export", "--store", "s1", "--output-file", "export.yaml"])
        .expect_code(2);
    assert!(
        run.stderr
            .contains("BareMetalHost default/lab-0: spec.bmc.address fake-hardware://lab-0")
            && run.stderr.contains("Unknown BMC type"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("worker-0"), "{}", run.stderr);
    assert!(!lab.path("export.yaml").exists());
    assert_eq!(run.stdout, "");
    // The others can go.
    let run = lab
        .run(&["export", "--store", "s1", "-l", "rack=r1"])
        .expect_code(0);
    assert!(run.stdout.contains("name: worker-0"), "{}", run.stdout);
    assert!(!run.stdout.contains("spare-0"), "{}", run.stdout);
    lab.run(&["export", "--store", "s1", "spare-0"])
        .expect_code(0);
    lab.run(&["export", "--store", "s1", "nope"]).expect_code(2);
    // From files too.
    lab.run(&["export", "-f", "hosts.yaml"]).expect_code(2);
    let run = lab
        .run(&["export", "-f", "hosts.yaml", "worker-0"])
        .expect_code(0);
    assert!(run.stdout.contains("kind: BareMetalHost"), "{}", run.stdout);
}

/// A host file whose status holds a value BMO's status annotation refuses.
fn host_with_status(name: &str, mac: &str, op: &str, error_type: &str) -> String {
    format!(
        "{}status:\n  operationalStatus: {op}\n  errorType: {error_type}\n  errorMessage: it failed\n  errorCount: 2\n  lastUpdated: \"2026-01-01T00:00:00Z\"\n  poweredOn: false\n  provisioning:\n    state: provisioned\n    ID: node-{name}\n    image:\n      url: http://images.example/os.qcow2\n      checksum: abc123\n",
        host(name, &format!("bootMACAddress: {mac}\n{IMAGE}"))
    )
}

#[test]
fn status_values_the_annotation_refuses_are_mapped_and_documented() {
    let file = format!(
        "{}---\n{}---\n{}---\n{}",
        secret("bmc-secret"),
        host_with_status("svc-err", "00:11:22:33:44:61", "error", "servicing error"),
        host_with_status("det-err", "00:11:22:33:44:62", "error", "detach error"),
        host_with_status("svc", "00:11:22:33:44:63", "servicing", "\"\""),
    );
    let lab = Lab::new().file("hosts.yaml", &file);

    // Such a value in the annotation is what BMO's webhook refuses (and so does apply).
    let raw = serde_json::json!({"operationalStatus": "error", "errorType": "servicing error"});
    let refused = host("raw", "bootMACAddress: 00:11:22:33:44:64").replace(
        "metadata:\n  name: raw\n",
        &format!(
            "metadata:\n  name: raw\n  annotations:\n    {STATUS}: '{}'\n",
            raw
        ),
    );
    let lab = lab.file(
        "raw.yaml",
        &format!("{}---\n{refused}", secret("bmc-secret")),
    );
    let run = lab
        .run(&["apply", "-f", "raw.yaml", "--store", "s0"])
        .expect_code(2);
    assert!(
        run.stderr.contains(
            "invalid errorType 'servicing error' in the baremetalhost.metal3.io/status annotation"
        ),
        "{}",
        run.stderr
    );

    let run = lab.run(&["export", "-f", "hosts.yaml"]).expect_code(0);
    for note in [
        "BareMetalHost default/svc-err: status.errorType \"servicing error\"",
        "BareMetalHost default/det-err: status.errorType \"detach error\"",
        "BareMetalHost default/svc: status.operationalStatus \"servicing\"",
    ] {
        assert!(run.stderr.contains(note), "{note:?} not in\n{}", run.stderr);
    }
    let docs = documents(&run.stdout);
    let status = |name: &str| -> Value {
        let h = find(&docs, "BareMetalHost", name);
        serde_json::from_str(h["metadata"]["annotations"][STATUS].as_str().unwrap()).unwrap()
    };
    let s = status("svc-err");
    assert_eq!(s["operationalStatus"], "OK");
    assert!(s.get("errorType").is_none(), "{s}");
    assert_eq!(s["errorMessage"], "");
    assert_eq!(s["errorCount"], 2, "kept for the backoff");
    let s = status("det-err");
    assert_eq!(s["operationalStatus"], "OK");
    assert!(s.get("errorType").is_none(), "{s}");
    assert_eq!(s["errorCount"], 0, "as BMO clears a detach error");
    let s = status("svc");
    assert_eq!(s["operationalStatus"], "OK");
    assert_eq!(s["provisioning"]["ID"], "node-svc");

    // The export passes admission and restores those statuses.
    std::fs::write(lab.path("export.yaml"), &run.stdout).unwrap();
    lab.run(&["apply", "-f", "export.yaml", "--store", "s1"])
        .expect_code(0);
    for name in ["svc-err", "det-err", "svc"] {
        let h = stored_host(&lab, "s1", name);
        assert_eq!(h["status"]["operationalStatus"], "OK", "{name}");
        assert_eq!(
            h["status"]["provisioning"]["state"], "provisioned",
            "{name}"
        );
        assert_eq!(h["status"]["lastUpdated"], "2026-01-01T00:00:00Z", "{name}");
    }
}
