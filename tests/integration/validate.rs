//! `bmhctl validate`, and `provision` refusing hosts BMO's admission would refuse.

use crate::lab::{Lab, host, secret};

const PASSWORD: &str = "hunter2-Sekret";

fn creds() -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc-secret\nstringData:\n  username: admin\n  password: {PASSWORD}\n"
    )
}

/// Two valid hosts (one fake-hardware) and one that breaks three rules.
fn mixed_file() -> String {
    let fake = host("fake-0", "").replace("ipmi://192.168.122.1:6233", "fake-hardware://fake-0");
    let bad = host(
        "bad-0",
        "bootMode: UEFISecureBoot\nrootDeviceHints:\n  deviceName: sda\nimage:\n  url: http://images.example/os.qcow2\n",
    )
    .replace("ipmi://192.168.122.1:6233", "libvirt://192.168.122.1");
    format!(
        "{}---\n{}---\n{fake}---\n{bad}",
        creds(),
        host("good-0", "bootMACAddress: \"00:11:22:33:44:55\"")
    )
}

fn assert_nothing_written(lab: &Lab, name: &str, text: &str) {
    assert_eq!(lab.read(name), text, "{name} must be left as it was");
    assert!(
        !lab.path(".bmhctl/hosts.yaml.state.json").exists(),
        "no bookkeeping may be written"
    );
}

#[test]
fn the_example_file_is_valid_and_its_fake_hosts_are_flagged() {
    let text = include_str!("../../hosts.example.yaml");
    let lab = Lab::new().file("hosts.yaml", text);
    let run = lab.run(&["validate", "hosts.yaml"]).expect_code(0);
    let header = run.stdout.lines().next().unwrap();
    for column in ["NAME", "VALID", "ERRORS"] {
        assert!(header.contains(column), "{}", run.stdout);
    }
    for name in [
        "worker-0", "spare-0", "legacy-0", "ipmi-0", "fake-0", "fake-1", "fake-2",
    ] {
        let row = run
            .stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row for {name}:\n{}", run.stdout));
        assert!(row.contains("yes"), "{row}");
    }
    assert!(
        run.stderr
            .contains("warning: BareMetalHost default/fake-0: fake-hardware:// is bmhctl's own"),
        "{}",
        run.stderr
    );
    assert_nothing_written(&lab, "hosts.yaml", text);
    assert!(!lab.path(".bmhctl").exists(), "validate takes no lock");
}

#[test]
fn an_invalid_host_exits_2_and_the_table_shows_bmos_messages() {
    let text = mixed_file();
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab.run(&["validate", "hosts.yaml"]).expect_code(2);
    let out = &run.stdout;
    let row = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row for {name}:\n{out}"))
            .to_string()
    };
    assert!(row("good-0").contains("yes"), "{out}");
    assert!(row("fake-0").contains("yes"), "{out}");
    assert!(row("bad-0").contains("no"), "{out}");
    for message in [
        "spec.bootMACAddress: BMC driver libvirt requires a BootMACAddress value",
        "spec.bootMode: BMC driver libvirt does not support secure boot",
        "spec.rootDeviceHints.deviceName: device name of root device hint must be a /dev/ path, not \"sda\"",
        "spec.image.checksum: checksum is required for normal images",
    ] {
        assert!(out.contains(message), "missing {message:?}:\n{out}");
    }
    assert!(
        run.stderr.contains("error: 1 of 3 hosts are invalid"),
        "{}",
        run.stderr
    );
    assert!(!out.contains(PASSWORD) && !run.stderr.contains(PASSWORD));
    assert_nothing_written(&lab, "hosts.yaml", &text);
}

#[test]
fn json_gives_errors_warnings_and_the_bmc_access_without_the_password() {
    let text = mixed_file();
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&["validate", "-o", "json", "hosts.yaml"])
        .expect_code(2);
    assert!(!run.stdout.contains(PASSWORD), "{}", run.stdout);
    assert!(!run.stderr.contains(PASSWORD), "{}", run.stderr);
    let json = run.json();
    assert_eq!(json["valid"], false);
    let hosts = json["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 3);

    let good = &hosts[0];
    assert_eq!(good["name"], "good-0");
    assert_eq!(good["namespace"], "default");
    assert_eq!(good["valid"], true);
    assert_eq!(good["errors"], serde_json::json!([]));
    assert_eq!(good["warnings"], serde_json::json!([]));
    assert_eq!(good["updateChecked"], false);
    let bmc = &good["bmc"];
    assert_eq!(bmc["type"], "ipmi");
    assert_eq!(bmc["driver"], "ipmi");
    assert_eq!(bmc["interfaces"]["boot_interface"], "ipxe");
    assert_eq!(bmc["interfaces"]["raid_interface"], "no-raid");
    assert_eq!(bmc["driverInfo"]["ipmi_address"], "192.168.122.1");
    assert_eq!(bmc["driverInfo"]["ipmi_port"], "6233");
    assert_eq!(bmc["driverInfo"]["ipmi_username"], "admin");
    assert_eq!(bmc["driverInfo"]["ipmi_password"], "<redacted>");

    let fake = &hosts[1];
    assert_eq!(fake["valid"], true);
    assert_eq!(fake["bmc"]["extension"], true);
    assert_eq!(fake["bmc"]["driver"], "fake-hardware");
    let warning = fake["warnings"][0].as_str().unwrap();
    assert!(
        warning.contains("Unknown BMC type 'fake-hardware' for address fake-hardware://fake-0"),
        "{warning}"
    );

    let bad = &hosts[2];
    assert_eq!(bad["name"], "bad-0");
    assert_eq!(bad["valid"], false);
    let errors = bad["errors"].as_array().unwrap();
    let first = &errors[0];
    assert_eq!(first["field"], "spec.bootMACAddress");
    assert_eq!(
        first["message"],
        "BMC driver libvirt requires a BootMACAddress value"
    );
    assert_eq!(first["origin"], "webhook");
    // The field is missing from the file: the position is its parent's, `spec:`.
    let position = first["position"].as_str().unwrap();
    assert!(position.starts_with("hosts.yaml:"), "{position}");
    let fields: Vec<&str> = errors
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "spec.bootMACAddress",
            "spec.bootMode",
            "spec.rootDeviceHints.deviceName",
            "spec.image.checksum"
        ]
    );
}

#[test]
fn schema_errors_are_reported_with_the_api_servers_words() {
    let text = format!(
        "{}---\n{}",
        secret("bmc-secret"),
        host("h0", "bootMode: uefi\nautomatedCleaningMode: always")
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&["validate", "-o", "json", "hosts.yaml"])
        .expect_code(2);
    let errors = run.json()["hosts"][0]["errors"].clone();
    assert_eq!(errors[0]["field"], "spec.automatedCleaningMode");
    assert_eq!(
        errors[0]["message"],
        "Unsupported value: \"always\": supported values: \"metadata\", \"disabled\""
    );
    assert_eq!(errors[0]["origin"], "schema");
    assert_eq!(errors[1]["field"], "spec.bootMode");
}

#[test]
fn bad_input_and_usage_exit_2() {
    let lab = Lab::new().file("hosts.yaml", &host("h0", ""));
    // A Secret the host names is missing: the loader's bad input, as for every command.
    let run = lab.run(&["validate", "hosts.yaml"]).expect_code(2);
    assert!(
        run.stderr.contains("spec.bmc.credentialsName"),
        "{}",
        run.stderr
    );
    lab.run(&["validate"]).expect_code(2);
    lab.run(&["validate", "-o", "yaml", "hosts.yaml"])
        .expect_code(2);
    lab.run(&["validate", "missing.yaml"]).expect_code(2);
}

#[test]
fn provision_refuses_an_invalid_host_naming_file_host_and_field() {
    let text = format!(
        "{}---\n{}---\n{}",
        creds(),
        host("good-0", ""),
        host("bad-0", "bootMode: UEFISecureBoot").replace("ipmi://", "libvirt://")
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(2);
    // The MAC is missing from bad-0: the position is its parent's, the mapping under `spec:`.
    let bad_spec_line = text
        .lines()
        .enumerate()
        .filter(|(_, l)| *l == "spec:")
        .nth(1)
        .map(|(i, _)| i + 1)
        .unwrap();
    let boot_mode_line = text
        .lines()
        .position(|l| l == "  bootMode: UEFISecureBoot")
        .unwrap()
        + 1;
    assert!(
        run.stderr.contains(&format!(
            "hosts.yaml:{}:3: BareMetalHost default/bad-0: spec.bootMACAddress: BMC driver libvirt requires a BootMACAddress value",
            bad_spec_line + 1
        )),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "hosts.yaml:{boot_mode_line}:13: BareMetalHost default/bad-0: spec.bootMode: BMC driver libvirt does not support secure boot"
        )),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("good-0"), "{}", run.stderr);
    assert_nothing_written(&lab, "hosts.yaml", &text);

    // Only the selected hosts are validated.
    lab.run(&[
        "provision",
        "--provisioner",
        "fixture",
        "--host",
        "good-0",
        "hosts.yaml",
    ])
    .expect_code(0);
}

#[test]
fn after_a_run_the_update_rules_compare_with_the_last_spec() {
    let text = format!(
        "{}---\n{}",
        creds(),
        host("h0", "bootMACAddress: \"aa:bb:cc:dd:ee:01\"")
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&["validate", "-o", "json", "hosts.yaml"])
        .expect_code(0);
    assert_eq!(run.json()["hosts"][0]["updateChecked"], false);
    lab.run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(0);
    let run = lab
        .run(&["validate", "-o", "json", "hosts.yaml"])
        .expect_code(0);
    assert_eq!(run.json()["hosts"][0]["updateChecked"], true);
    let provisioned = lab.read("hosts.yaml");
    let sidecar = lab.read(".bmhctl/hosts.yaml.state.json");

    // Re-casing the MAC is allowed.
    let lab = lab.file(
        "hosts.yaml",
        &provisioned.replace("aa:bb:cc:dd:ee:01", "AA:BB:CC:DD:EE:01"),
    );
    lab.run(&["validate", "hosts.yaml"]).expect_code(0);

    // Changing it is not (BMO: immutable once set), for validate and for provision.
    let changed = provisioned.replace("aa:bb:cc:dd:ee:01", "aa:bb:cc:dd:ee:02");
    let lab = lab.file("hosts.yaml", &changed);
    let run = lab.run(&["validate", "hosts.yaml"]).expect_code(2);
    assert!(
        run.stdout
            .contains("spec.bootMACAddress: bootMACAddress can not be changed once it is set"),
        "{}",
        run.stdout
    );
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(2);
    assert!(
        run.stderr.contains(
            "BareMetalHost default/h0: spec.bootMACAddress: bootMACAddress can not be changed once it is set"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(lab.read("hosts.yaml"), changed);
    assert_eq!(lab.read(".bmhctl/hosts.yaml.state.json"), sidecar);

    // Moving a provisioned host to another BMC is refused too.
    let moved = provisioned.replace("ipmi://192.168.122.1:6233", "ipmi://192.168.122.2:6233");
    let lab = lab.file("hosts.yaml", &moved);
    let run = lab.run(&["validate", "hosts.yaml"]).expect_code(2);
    assert!(
        run.stdout.contains(
            "spec.bmc.address: BMC address can not be changed if the BMH is not in the \
             Registering state, or if the BMH is not detached"
        ),
        "{}",
        run.stdout
    );
}

/// The warning of the example's fake-hardware host `name`, as printed.
fn fake_warning(name: &str) -> String {
    format!(
        "warning: BareMetalHost default/{name}: fake-hardware:// is bmhctl's own BMC scheme \
         (Ironic's fake-hardware driver), not BMO's: a metal3 cluster refuses it (Unknown BMC \
         type 'fake-hardware' for address fake-hardware://{name}) [fake-hardware]\n"
    )
}

#[test]
fn strict_fails_on_each_warning_once_unless_its_class_is_allowed() {
    let text = include_str!("../../hosts.example.yaml");
    let lab = Lab::new().file("hosts.example.yaml", text);
    let warnings: String = ["fake-0", "fake-1", "fake-2"]
        .iter()
        .map(|n| fake_warning(n))
        .collect();
    let run = lab
        .run(&["validate", "--strict", "hosts.example.yaml"])
        .expect_code(2);
    assert_eq!(
        run.stderr,
        format!(
            "{warnings}error: 3 warnings (--strict fails on warnings; --allow-warning \
             fake-hardware accepts them)\n"
        )
    );
    let run = lab
        .run(&[
            "validate",
            "--strict",
            "--allow-warning",
            "fake-hardware",
            "hosts.example.yaml",
        ])
        .expect_code(0);
    assert_eq!(run.stderr, warnings, "each warning is printed once");
    // Another class is still refused: an unknown field under --validate=warn.
    let lab = Lab::new().file(
        "hosts.yaml",
        &text.replacen("online: true", "online: true\n  onlin: true", 1),
    );
    let run = lab
        .run(&[
            "--validate=warn",
            "validate",
            "--strict",
            "--allow-warning",
            "fake-hardware",
            "hosts.yaml",
        ])
        .expect_code(2);
    let last = run.stderr.lines().last().unwrap_or("");
    assert_eq!(
        last,
        "error: 1 warning (--strict fails on warnings; --allow-warning unknown-field accepts it)"
    );
    assert!(
        run.stderr
            .contains("spec.onlin: unknown field (did you mean online?) [unknown-field]\n"),
        "{}",
        run.stderr
    );
    lab.run(&[
        "--validate=warn",
        "validate",
        "--strict",
        "--allow-warning",
        "fake-hardware",
        "--allow-warning",
        "unknown-field",
        "hosts.yaml",
    ])
    .expect_code(0);
    // An unknown class lists the classes.
    let run = lab
        .run(&[
            "validate",
            "--strict",
            "--allow-warning",
            "fake",
            "hosts.yaml",
        ])
        .expect_code(2);
    assert_eq!(
        run.stderr.lines().take(2).collect::<Vec<_>>(),
        [
            "error: invalid value 'fake' for '--allow-warning <CLASS>'",
            "  [possible values: unknown-field, fake-hardware, bmc-address, bmc-credentials]"
        ]
    );
}

#[test]
fn bmc_address_typos_get_the_fix_in_validate_and_provision() {
    let with = |address: &str| {
        format!("{}---\n{}", creds(), host("h0", "")).replace("ipmi://192.168.122.1:6233", address)
    };
    // An unknown scheme: BMO's refusal, and the types of the closest vendor.
    let lab = Lab::new().file("hosts.yaml", &with("idrak://10.0.0.1"));
    let refusal = "error: hosts.yaml:16:14: BareMetalHost default/h0: spec.bmc.address: Unknown \
                   BMC type 'idrak' for address idrak://10.0.0.1 (did you mean idrac-redfish:// \
                   or idrac-virtualmedia://?)\n";
    let run = lab
        .run_env(
            &["provision", "hosts.yaml"],
            &[("BMHCTL_PROVISIONER", "fixture")],
        )
        .expect_code(2);
    assert_eq!(run.stderr, refusal);
    let run = lab.run(&["validate", "hosts.yaml"]).expect_code(2);
    assert!(
        run.stdout.contains(
            "Unknown BMC type 'idrak' for address idrak://10.0.0.1 (did you mean \
             idrac-redfish:// or idrac-virtualmedia://?)"
        ),
        "{}",
        run.stdout
    );
    // A type without `://`: BMO takes it for an IPMI host named after the type.
    let lab = Lab::new().file("hosts.yaml", &with("ipmi//10.0.0.1"));
    let warning = "warning: BareMetalHost default/h0: spec.bmc.address: \"ipmi//10.0.0.1\" has \
                   no \"://\" after its type: BMO reads it as an IPMI address of host \"ipmi\"; \
                   write ipmi://10.0.0.1 [bmc-address]\n";
    let run = lab.run(&["validate", "hosts.yaml"]).expect_code(0);
    assert_eq!(run.stderr, warning);
    lab.run(&["validate", "--strict", "hosts.yaml"])
        .expect_code(2);
    lab.run(&[
        "validate",
        "--strict",
        "--allow-warning",
        "bmc-address",
        "hosts.yaml",
    ])
    .expect_code(0);
    let run = lab.run_env(
        &["provision", "--progress", "none", "hosts.yaml"],
        &[("BMHCTL_PROVISIONER", "fixture")],
    );
    assert_eq!(
        run.stderr.lines().next().unwrap_or(""),
        warning.trim_end(),
        "{}",
        run.stderr
    );
    // The placeholder `import` writes for a password it cannot show is refused before any BMC.
    let text = with("ipmi://10.0.0.1").replace(PASSWORD, "REPLACE-ME");
    let lab = Lab::new().file("hosts.yaml", &text);
    let placeholder = "error: hosts.yaml:17:22: BareMetalHost default/h0: \
                       spec.bmc.credentialsName: Secret default/bmc-secret still holds the \
                       password placeholder REPLACE-ME that `bmhctl import` wrote: put the BMC \
                       password in\n";
    let run = lab.run(&["validate", "hosts.yaml"]).expect_code(2);
    assert_eq!(run.stderr, placeholder);
    let run = lab
        .run_env(
            &["provision", "hosts.yaml"],
            &[("BMHCTL_PROVISIONER", "fixture")],
        )
        .expect_code(2);
    assert_eq!(run.stderr, placeholder);
    assert_eq!(lab.read("hosts.yaml"), text, "nothing is written");
}
