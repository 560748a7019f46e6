//! HostFirmwareSettings and HostFirmwareComponents in the hosts' file: applied while preparing,
//! their status written back beside the host's, every other byte kept.

use crate::lab::{Lab, host, secret, without_status};

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

fn firmware(name: &str) -> String {
    format!(
        "# BIOS settings for {name}; this comment must survive\napiVersion: metal3.io/v1alpha1\nkind: HostFirmwareSettings\nmetadata:\n  name: {name}\nspec:\n  settings:\n    ProcVirtualization: Disabled   # no VMs here\n    NetworkBootRetryCount: 7\n---\napiVersion: metal3.io/v1alpha1\nkind: HostFirmwareComponents\nmetadata:\n  name: {name}\nspec:\n  updates:\n    - component: bmc\n      url: http://fw.example/bmc-2.1.0.bin\n"
    )
}

fn hosts_file() -> String {
    format!(
        "{}---\n{}---\n{}",
        secret("bmc-secret"),
        host("worker-0", IMAGE),
        firmware("worker-0"),
    )
}

/// The `status:` block of document `doc` (0-based) of a YAML text, as YAML.
fn status_of(text: &str, doc: usize) -> serde_json::Value {
    let docs: Vec<serde_json::Value> = text
        .split("\n---\n")
        .map(|d| serde_saphyr::from_str(d).unwrap())
        .collect();
    docs[doc]["status"].clone()
}

fn condition(status: &serde_json::Value, type_: &str) -> (String, String, i64) {
    let c = status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == type_)
        .unwrap_or_else(|| panic!("no {type_} in {status}"));
    (
        c["status"].as_str().unwrap().to_string(),
        c["reason"].as_str().unwrap().to_string(),
        c["observedGeneration"].as_i64().unwrap(),
    )
}

#[test]
fn provision_applies_firmware_and_writes_its_status_back() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    let after = lab.read("hosts.yaml");
    assert_eq!(
        without_status(&after),
        hosts_file(),
        "only status blocks may change"
    );
    assert_eq!(after.matches("\nstatus:\n").count(), 3, "{after}");
    assert_eq!(status_of(&after, 1)["provisioning"]["state"], "provisioned");

    let hfs = status_of(&after, 2);
    assert_eq!(hfs["settings"]["ProcVirtualization"], "Disabled");
    assert_eq!(hfs["settings"]["NetworkBootRetryCount"], "7");
    assert!(hfs["settings"].get("AdminPassword").is_none(), "{hfs}");
    let schema = hfs["schema"]["name"].as_str().unwrap().to_string();
    assert!(schema.starts_with("schema-"), "{hfs}");
    assert_eq!(hfs["schema"]["namespace"], "default");
    assert_eq!(
        condition(&hfs, "Valid"),
        ("True".into(), "Success".into(), 1)
    );
    assert_eq!(
        condition(&hfs, "ChangeDetected"),
        ("False".into(), "Success".into(), 1)
    );
    assert!(hfs["lastUpdated"].is_string());

    let hfc = status_of(&after, 3);
    assert_eq!(hfc["updates"][0]["component"], "bmc");
    assert_eq!(hfc["updates"][0]["url"], "http://fw.example/bmc-2.1.0.bin");
    let bmc = hfc["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["component"] == "bmc")
        .unwrap();
    assert_eq!(bmc["initialVersion"], "2.0.0");
    assert_eq!(bmc["currentVersion"], "bmc-2.1.0");
    assert_eq!(condition(&hfc, "Valid"), ("True".into(), "OK".into(), 1));
    assert_eq!(
        condition(&hfc, "ChangeDetected"),
        ("False".into(), "OK".into(), 1)
    );

    // The schema the status names is kept in bmhctl's bookkeeping.
    let sidecar: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(lab.path(".bmhctl/hosts.yaml.state.json")).unwrap(),
    )
    .unwrap();
    let fw = &sidecar["hosts"]["default/worker-0"]["firmware"];
    assert_eq!(fw["schema"]["metadata"]["name"], schema.as_str());
    assert_eq!(fw["schema"]["kind"], "FirmwareSchema");
    assert_eq!(
        fw["schema"]["spec"]["schema"]["BootMode"]["attribute_type"],
        "Enumeration"
    );
    assert!(
        fw["schema"]["spec"]["schema"]
            .get("AdminPassword")
            .is_none()
    );
    assert_eq!(fw["settingsGeneration"], 1);
    assert_eq!(fw["componentsGeneration"], 1);

    // A second run on the stable file writes nothing.
    let sidecar_before = std::fs::read(lab.path(".bmhctl/hosts.yaml.state.json")).unwrap();
    let mtime = std::fs::metadata(lab.path("hosts.yaml"))
        .unwrap()
        .modified()
        .unwrap();
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    assert_eq!(lab.read("hosts.yaml"), after);
    assert_eq!(
        std::fs::read(lab.path(".bmhctl/hosts.yaml.state.json")).unwrap(),
        sidecar_before
    );
    assert_eq!(
        std::fs::metadata(lab.path("hosts.yaml"))
            .unwrap()
            .modified()
            .unwrap(),
        mtime
    );
}

#[test]
fn invalid_firmware_settings_are_reported_in_their_status_and_not_applied() {
    let text = format!(
        "{}---\n{}---\n{}",
        secret("bmc-secret"),
        host("spare-0", ""),
        firmware("spare-0").replace("Disabled   # no VMs here", "Sometimes"),
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "-v", "hosts.yaml"])
        .expect_code(0);
    let after = lab.read("hosts.yaml");
    assert_eq!(without_status(&after), text);
    let hfs = status_of(&after, 2);
    assert_eq!(
        condition(&hfs, "Valid"),
        ("False".into(), "ConfigurationError".into(), 1)
    );
    assert_eq!(
        condition(&hfs, "ChangeDetected"),
        ("True".into(), "Success".into(), 1)
    );
    assert_eq!(hfs["settings"]["ProcVirtualization"], "Enabled");
    // The validation failure is an event of the pass (`-v` logs them).
    assert!(
        run.stderr.contains(
            "Invalid BIOS setting: Setting ProcVirtualization is invalid, unknown enumeration value - Sometimes"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn delete_removes_the_firmware_status_with_the_host_status() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    lab.run(&[
        "delete",
        "--provisioner",
        "fixture",
        "-q",
        "-f",
        "hosts.yaml",
    ])
    .expect_code(0);
    assert_eq!(lab.read("hosts.yaml"), hosts_file());
}

#[test]
fn firmware_objects_without_their_host_are_bad_input() {
    let text = format!(
        "{}---\n{}---\n{}",
        secret("bmc-secret"),
        host("worker-0", ""),
        firmware("worker-9"),
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(2);
    assert!(
        run.stderr.contains(
            "hosts.yaml:23:9: HostFirmwareSettings default/worker-9: metadata.name: no BareMetalHost default/worker-9 in the given files"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "HostFirmwareComponents default/worker-9: metadata.name: no BareMetalHost default/worker-9"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(lab.read("hosts.yaml"), text, "nothing is written");
    assert!(!lab.path(".bmhctl/hosts.yaml.state.json").exists());
}
