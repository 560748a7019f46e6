//! `bmhctl import --from-bifrost`: a bifrost inventory (tests/data/bifrost/) becomes hosts and
//! BMC Secrets that bmhctl then drives; the passwords go only into a file of mode 0600.

use crate::lab::Lab;
use std::os::unix::fs::PermissionsExt as _;

fn inventory(name: &str) -> String {
    format!("{}/tests/data/bifrost/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_bifrost_inventory_becomes_hosts_and_secrets_without_passwords_on_stdout() {
    let lab = Lab::new();
    let run = lab
        .run(&["import", "--from-bifrost", &inventory("baremetal.json")])
        .expect_code(0);
    insta::assert_snapshot!("bifrost_documents", run.stdout);
    for secret in ["ipmi-s3cret", "redfish-s3cret"] {
        assert!(!run.stdout.contains(secret) && !run.stderr.contains(secret));
    }
    let inv = inventory("baremetal.json");
    assert_eq!(
        run.stderr,
        format!(
            "{inv}: edge-0: the BMC password is kept off standard output: Secret default/edge-0-bmc-secret holds REPLACE-ME (--output-file FILE writes it)\n\
             {inv}: edge-1: the BMC password is kept off standard output: Secret default/edge-1-bmc-secret holds REPLACE-ME (--output-file FILE writes it)\n"
        )
    );
}

#[test]
fn a_secret_still_holding_the_placeholder_is_refused_before_it_reaches_a_bmc() {
    let lab = Lab::new();
    let run = lab
        .run(&["import", "--from-bifrost", &inventory("baremetal.json")])
        .expect_code(0);
    std::fs::write(lab.path("hosts.yaml"), &run.stdout).unwrap();
    let before = lab.read("hosts.yaml");
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(2);
    for host in ["edge-0", "edge-1"] {
        let want = format!(
            "BareMetalHost default/{host}: spec.bmc.credentialsName: Secret default/{host}-bmc-secret \
             still holds the password placeholder REPLACE-ME that `bmhctl import` wrote: put the BMC \
             password in"
        );
        assert!(
            run.stderr.contains(&want),
            "{want}\nnot in:\n{}",
            run.stderr
        );
    }
    assert_eq!(lab.read("hosts.yaml"), before, "nothing written");
    // Reading is no use of the password: `get` shows the hosts.
    lab.run(&["get", "-f", "hosts.yaml"]).expect_code(0);
}

/// In the store, the placeholder is refused where it would be used: the host stops in the pass
/// that would register it, naming the Secret, with nothing sent; `apply` and `get` take it as
/// they read.
#[test]
fn a_stored_secret_still_holding_the_placeholder_stops_its_host_before_any_bmc() {
    let lab = Lab::new();
    let run = lab
        .run(&["import", "--from-bifrost", &inventory("baremetal.json")])
        .expect_code(0);
    std::fs::write(lab.path("hosts.yaml"), &run.stdout).unwrap();
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
        .expect_code(1);
    let json = run.json();
    for name in ["edge-0", "edge-1"] {
        let host = (json["hosts"].as_array().unwrap().iter())
            .find(|h| h["name"] == name)
            .unwrap();
        assert_eq!(host["outcome"], "failed", "{host:#}");
        assert_eq!(
            host["reason"],
            format!(
                "Secret default/{name}-bmc-secret still holds the password placeholder REPLACE-ME \
                 that `bmhctl import` wrote: put the BMC password in"
            ),
            "{host:#}"
        );
        // The finalizer's pass, BMO's move to `registering`, then the pass that would register.
        assert_eq!(host["passes"], 3, "{host:#}");
        assert_eq!(host["state"], "registering", "{host:#}");
        assert_eq!(host["provisioningID"], "", "{host:#}");
        assert_eq!(host["errorType"], "", "{host:#}");
    }
    lab.run(&["get", "--store", "store"]).expect_code(0);
}

#[test]
fn an_output_file_gets_the_passwords_and_the_hosts_are_driven_from_it() {
    let lab = Lab::new();
    let out = lab.path("hosts.yaml");
    let run = lab
        .run(&[
            "import",
            "--from-bifrost",
            &inventory("old-style.yaml"),
            "-n",
            "edge",
            "--output-file",
            out.to_str().unwrap(),
        ])
        .expect_code(0);
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr, "");
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "only its owner reads the passwords");
    let text = lab.read("hosts.yaml");
    assert!(text.contains("password: old-s3cret"), "{text}");
    assert!(text.contains("address: ipmi://10.1.0.1\n"), "{text}");
    assert!(text.contains("namespace: edge\n"), "{text}");
    // The documents are hosts bmhctl takes: driven to available without Ironic.
    lab.run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(0);
    let got = lab
        .run(&["get", "-f", "hosts.yaml", "--no-headers"])
        .expect_code(0);
    assert!(got.stdout.contains("edge/old-0"), "{}", got.stdout);
    assert!(got.stdout.contains("available"), "{}", got.stdout);
    // An existing file is never overwritten.
    let again = lab
        .run(&[
            "import",
            "--from-bifrost",
            &inventory("old-style.yaml"),
            "--output-file",
            "hosts.yaml",
        ])
        .expect_code(2);
    assert_eq!(
        again.stderr,
        "error: hosts.yaml: exists: import writes a new file (remove it, or pick another name)\n"
    );
}

#[test]
fn nodes_and_labels_select_what_is_imported() {
    let lab = Lab::new();
    let inv = inventory("baremetal.json");
    let one = lab
        .run(&["import", "--from-bifrost", &inv, "lab-vm"])
        .expect_code(0);
    assert!(one.stdout.contains("name: lab-vm\n"), "{}", one.stdout);
    assert_eq!(one.stdout.matches("kind: BareMetalHost").count(), 1);
    let redfish = lab
        .run(&[
            "import",
            "--from-bifrost",
            &inv,
            "-l",
            "ironic.driver=redfish",
        ])
        .expect_code(0);
    assert!(
        redfish.stdout.contains("name: edge-1\n"),
        "{}",
        redfish.stdout
    );
    assert_eq!(redfish.stdout.matches("kind: BareMetalHost").count(), 1);
    let none = lab
        .run(&["import", "--from-bifrost", &inv, "edge-9"])
        .expect_code(2);
    assert_eq!(none.stderr, "error: no node \"edge-9\" to import\n");
}

#[test]
fn a_broken_inventory_is_refused_with_its_line_and_no_secret() {
    let lab = Lab::new().file(
        "inv.yaml",
        "n0:\n  driver: ipmi\n  driver_info:\n    ipmi_password: leak-me\n  nics: [\n",
    );
    let run = lab
        .run(&["import", "--from-bifrost", "inv.yaml"])
        .expect_code(2);
    assert!(run.stderr.starts_with("error: inv.yaml:"), "{}", run.stderr);
    assert!(!run.stderr.contains("leak-me"), "{}", run.stderr);
    assert_eq!(run.stdout, "");
    let lab = Lab::new().file("inv.yaml", "n0:\n  nics: []\n");
    let run = lab
        .run(&["import", "--from-bifrost", "inv.yaml"])
        .expect_code(2);
    assert_eq!(
        run.stderr,
        "error: inv.yaml:1:1: node n0: field driver is missing\n"
    );
    // A source is required.
    let run = lab.run(&["import"]).expect_code(2);
    assert!(run.stderr.contains("--from-ironic"), "{}", run.stderr);
}
