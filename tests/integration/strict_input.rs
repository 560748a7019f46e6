//! Input that would touch hardware is exact: unknown fields, unknown kinds and apiVersions,
//! names a cluster refuses and duplicate keys are refused (exit 2, nothing written), located,
//! with a did-you-mean; `--validate=warn|ignore` and `--skip-unknown-kinds` relax it on request.

use crate::lab::{Lab, host, secret};

const FIXTURE: [(&str, &str); 1] = [("BMHCTL_PROVISIONER", "fixture")];

/// A host with two spec typos, `externalyProvisioned: true` among them.
fn typos() -> String {
    format!(
        "{}---\n{}",
        secret("bmc-secret"),
        host(
            "worker-0",
            "bootMacAddress: \"00:11:22:33:44:55\"\nexternalyProvisioned: true"
        )
    )
}

fn entries(lab: &Lab) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(lab.path("."))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_field_typo_is_refused_by_default_and_nothing_is_written() {
    let text = typos();
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run_env(&["provision", "-f", "hosts.yaml"], &FIXTURE)
        .expect_code(2);
    insta::assert_snapshot!(run.stderr, @r"
    error: hosts.yaml:18:19: BareMetalHost default/worker-0: spec.bootMacAddress: unknown field (did you mean bootMACAddress?)
    hosts.yaml:19:25: BareMetalHost default/worker-0: spec.externalyProvisioned: unknown field (did you mean externallyProvisioned?)
    ");
    assert_eq!(run.stdout, "");
    // No status, no `.bmhctl/` (sidecar or lock): the directory is as it was.
    assert_eq!(lab.read("hosts.yaml"), text);
    assert_eq!(entries(&lab), ["hosts.yaml"]);
    // The store is held to the same rules: nothing created.
    lab.run(&["apply", "--store", "s", "-f", "hosts.yaml"])
        .expect_code(2);
    assert!(!lab.path("s").exists());
}

#[test]
fn validate_warn_makes_a_typo_a_warning_and_ignore_makes_it_silent() {
    let lab = Lab::new().file("hosts.yaml", &typos());
    let run = lab
        .run(&["--validate=warn", "validate", "hosts.yaml"])
        .expect_code(0);
    insta::assert_snapshot!(run.stderr, @r"
    warning: hosts.yaml:18:19: BareMetalHost default/worker-0: spec.bootMacAddress: unknown field (did you mean bootMACAddress?) [unknown-field]
    warning: hosts.yaml:19:25: BareMetalHost default/worker-0: spec.externalyProvisioned: unknown field (did you mean externallyProvisioned?) [unknown-field]
    ");
    // `validate --strict` fails on warnings.
    let run = lab
        .run(&["--validate=warn", "validate", "--strict", "hosts.yaml"])
        .expect_code(2);
    assert!(
        run.stderr
            .contains("error: 2 warnings (--strict fails on warnings; --allow-warning unknown-field accepts them)"),
        "{}",
        run.stderr
    );
    let run = lab
        .run(&["--validate=ignore", "validate", "hosts.yaml"])
        .expect_code(0);
    assert_eq!(run.stderr, "");
}

#[test]
fn a_mistyped_kind_and_a_wrong_api_version_are_refused_and_named() {
    let text = format!(
        "{}---\n{}---\n{}",
        secret("bmc-secret"),
        host("worker-0", "").replace("kind: BareMetalHost", "kind: BaremetalHost"),
        host("worker-1", "").replace("metal3.io/v1alpha1", "metal3.io/v1beta1"),
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab.run(&["validate", "hosts.yaml"]).expect_code(2);
    insta::assert_snapshot!(run.stderr, @r#"
    error: hosts.yaml:10:7: BaremetalHost default/worker-0: kind: unknown kind "BaremetalHost" (did you mean BareMetalHost?); bmhctl reads BareMetalHost, Secret, HostFirmwareSettings, HostFirmwareComponents, HostUpdatePolicy, HardwareData, FirmwareSchema, DataImage, BMCEventSubscription (--skip-unknown-kinds skips it)
    hosts.yaml:19:13: BareMetalHost default/worker-1: apiVersion: apiVersion "metal3.io/v1beta1" is not one bmhctl reads for kind BareMetalHost (expected metal3.io/v1alpha1)
    "#);
    // Asked for, they are skipped too, one note per kind (here: nothing else is left).
    let run = lab
        .run(&["--skip-unknown-kinds", "validate", "hosts.yaml"])
        .expect_code(2);
    for note in [
        "note: skipped 1 document of kind BareMetalHost (metal3.io/v1beta1): not a kind bmhctl reads\n",
        "note: skipped 1 document of kind BaremetalHost (metal3.io/v1alpha1): not a kind bmhctl reads\n",
    ] {
        assert!(run.stderr.contains(note), "{}", run.stderr);
    }
    assert!(
        run.stderr
            .contains("error: no BareMetalHost in hosts.yaml\n"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_kinds_being_added_are_accepted() {
    let text = format!(
        "{}---\n{}---\napiVersion: metal3.io/v1alpha1\nkind: DataImage\nmetadata:\n  name: worker-0\nspec:\n  url: http://x/y.iso\n---\napiVersion: metal3.io/v1alpha1\nkind: BMCEventSubscription\nmetadata:\n  name: sub\nspec:\n  hostName: worker-0\n  destination: https://events.example/\n",
        secret("bmc-secret"),
        host("worker-0", "")
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    lab.run(&["validate", "hosts.yaml"]).expect_code(0);
}

#[test]
fn names_a_cluster_refuses_are_refused() {
    let text = format!(
        "{}---\n{}",
        secret("Bmc_Secret"),
        host("UPPER_case", "")
            .replace("Bmc", "bmc")
            .replace("name: UPPER_case", "name: UPPER_case\n  namespace: a.b")
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab.run(&["validate", "hosts.yaml"]).expect_code(2);
    insta::assert_snapshot!(run.stderr, @r#"
    error: hosts.yaml:4:9: Secret default/Bmc_Secret: metadata.name: invalid name "Bmc_Secret": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')
    hosts.yaml:12:9: BareMetalHost a.b/UPPER_case: metadata.name: invalid name "UPPER_case": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')
    hosts.yaml:13:14: BareMetalHost a.b/UPPER_case: metadata.namespace: invalid namespace "a.b": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name')
    "#);
}

#[test]
fn a_duplicate_key_is_said_in_bmhctls_words() {
    let text = format!(
        "{}---\n{}",
        secret("bmc-secret"),
        host("worker-0", "online: false")
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab.run(&["validate", "hosts.yaml"]).expect_code(2);
    insta::assert_snapshot!(run.stderr, @r#"error: hosts.yaml:18:3: duplicate key "online": a key may appear only once in a mapping"#);
    assert!(!run.stderr.contains("DuplicateKeyPolicy"));
}

#[test]
fn unknown_secret_fields_are_refused_without_showing_values() {
    let text = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc-secret\nstrinData:\n  username: admin\n  password: hunter2-secret\n---\n{}",
        host("worker-0", "")
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab.run(&["validate", "hosts.yaml"]).expect_code(2);
    insta::assert_snapshot!(run.stderr, @r"
    error: hosts.yaml:6:3: Secret default/bmc-secret: strinData: unknown field (did you mean stringData?)
    ");
    assert!(!run.stderr.contains("hunter2"));
}

#[test]
fn unknown_status_fields_load_with_a_warning() {
    // A status written by a newer BMO: kept, said, never refused.
    let text = format!(
        "{}---\n{}status:\n  provisioning:\n    state: available\n    newerField: 1\n",
        secret("bmc-secret"),
        host("worker-0", "")
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab.run(&["validate", "hosts.yaml"]).expect_code(0);
    insta::assert_snapshot!(run.stderr, @"warning: hosts.yaml:21:17: BareMetalHost default/worker-0: status.provisioning.newerField: unknown field; kept as written (a status may come from a newer BMO than bmhctl knows) [unknown-field]");
    lab.run(&["validate", "--strict", "hosts.yaml"])
        .expect_code(2);
}

#[test]
fn the_repositorys_examples_load_cleanly_under_strict() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let lab = Lab::new();
    let run = lab.run(&[
        "validate",
        "-f",
        repo.join("hosts.example.yaml").to_str().unwrap(),
    ]);
    run.expect_code(0);
}

#[test]
fn state_provisioner_and_bmc_scheme_typos_get_a_did_you_mean() {
    let lab = Lab::new().file(
        "hosts.yaml",
        &typos()
            .replace("bootMacAddress", "bootMACAddress")
            .replace("externalyProvisioned", "externallyProvisioned"),
    );
    let run = lab
        .run(&["wait", "-f", "hosts.yaml", "--for", "provisiond"])
        .expect_code(2);
    assert!(
        run.stderr.starts_with(
            "error: unknown state \"provisiond\" for --for (did you mean provisioned?); one of: "
        ),
        "{}",
        run.stderr
    );
    let run = lab
        .run_env(
            &["provision", "--provisioner", "fixtur", "-f", "hosts.yaml"],
            &[(
                "PROVISIONER_PLUGIN_DIR",
                lab.path("plugins").to_str().unwrap(),
            )],
        )
        .expect_code(4);
    let last = run.stderr.lines().last().unwrap_or_default().to_string();
    assert_eq!(
        last,
        format!(
            "provisioners found: fixture (plugins in {}); did you mean --provisioner fixture?",
            lab.path("plugins").display()
        )
    );
    let typo = lab.read("hosts.yaml").replace("ipmi://", "ipmii://");
    let lab = lab.file("scheme.yaml", &typo);
    let run = lab.run(&["validate", "scheme.yaml"]).expect_code(2);
    assert!(
        run.stdout.contains(
            "spec.bmc.address: Unknown BMC type 'ipmii' for address ipmii://192.168.122.1:6233 (did you mean ipmi://?)"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn bmc_addresses_bmo_accepts_but_that_cannot_work_are_warnings() {
    let text = typos()
        .replace("bootMacAddress", "bootMACAddress")
        .replace("externalyProvisioned", "externallyProvisioned")
        .replace(
            "ipmi://192.168.122.1:6233",
            "redfish://:99999/redfish/v1/Systems/1",
        );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab.run(&["validate", "hosts.yaml"]).expect_code(0);
    insta::assert_snapshot!(run.stderr, @r"
    warning: BareMetalHost default/worker-0: spec.bmc.address: no host: the BMC cannot be reached [bmc-address]
    warning: BareMetalHost default/worker-0: spec.bmc.address: port 99999 is out of range (1-65535): the BMC cannot be reached [bmc-address]
    ");
    lab.run(&["validate", "--strict", "hosts.yaml"])
        .expect_code(2);
}
