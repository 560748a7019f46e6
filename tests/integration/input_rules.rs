//! Input the API server or a YAML reader would refuse is refused here too, before anything is
//! written: labels and annotations, YAML tags, a lone carriage return, a host in two files,
//! inputs without hosts, negative numbers; and `provision` warns as `validate` does.

use crate::lab::{Lab, host, secret};
use crate::refused_input::listing;

fn good() -> String {
    format!("{}---\n{}", secret("bmc-secret"), host("h0", ""))
}

/// `good()` with these lines added under the host's `metadata:`.
fn with_metadata(lines: &str) -> String {
    let mut meta = String::new();
    for l in lines.lines() {
        meta.push_str("  ");
        meta.push_str(l);
        meta.push('\n');
    }
    good().replacen(
        "metadata:\n  name: h0\n",
        &format!("metadata:\n  name: h0\n{meta}"),
        1,
    )
}

/// Runs `args` (provision with the fixture, unless said otherwise) and checks that it exits 2
/// and leaves the directory as it was; its stderr.
#[track_caller]
fn refused(lab: &Lab, args: &[&str]) -> String {
    let before = listing(&lab.path(""));
    let run = lab
        .run_env(args, &[("BMHCTL_PROVISIONER", "fixture")])
        .expect_code(2);
    assert_eq!(
        listing(&lab.path("")),
        before,
        "bmhctl {}: the directory changed\n--- stderr\n{}",
        args.join(" "),
        run.stderr
    );
    run.stderr
}

#[test]
fn labels_and_annotations_kubernetes_refuses_are_refused_where_they_are() {
    let text = with_metadata(&format!(
        "labels:\n  \"bad key/with/too/many!\": \"v v\"\n  long: {}\n  ok.example.com/fine: yes-1\n\
         annotations:\n  \"-x\": anything goes here\n",
        "v".repeat(100_000)
    ));
    let lab = Lab::new().file("hosts.yaml", &text);
    for args in [
        &["validate", "hosts.yaml"][..],
        &["provision", "hosts.yaml"],
        &["apply", "-f", "hosts.yaml", "--store", "store"],
    ] {
        let stderr = refused(&lab, args);
        insta::assert_snapshot!("bad_labels", stderr);
    }
}

#[test]
fn labels_of_every_kind_read_are_checked() {
    // A Secret (a bad value, and one YAML reads as a number), a HostFirmwareSettings and a
    // HardwareData.
    let text = format!(
        "{}---\n{}---\n\
         apiVersion: metal3.io/v1alpha1\nkind: HostFirmwareSettings\nmetadata:\n  name: h0\n  \
         labels:\n    a/b/c: x\nspec:\n  settings: {{}}\n---\n\
         apiVersion: metal3.io/v1alpha1\nkind: HardwareData\nmetadata:\n  name: h0\n  \
         annotations:\n    \"/x\": z\n",
        secret("bmc-secret").replace(
            "metadata:\n",
            "metadata:\n  labels:\n    k: \"-v\"\n    n: 5\n"
        ),
        host("h0", "")
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let stderr = refused(&lab, &["validate", "hosts.yaml"]);
    insta::assert_snapshot!("bad_labels_other_kinds", stderr);
    refused(&lab, &["provision", "hosts.yaml"]);
}

#[test]
fn annotations_may_hold_256_kib_in_all() {
    let at_limit = 256 * 1024 - "a".len();
    let lab = Lab::new().file(
        "hosts.yaml",
        &with_metadata(&format!("annotations:\n  a: {}\n", "x".repeat(at_limit))),
    );
    lab.run(&["validate", "hosts.yaml"]).expect_code(0);
    let lab = Lab::new().file(
        "hosts.yaml",
        &with_metadata(&format!("annotations:\n  ab: {}\n", "x".repeat(at_limit))),
    );
    let stderr = refused(&lab, &["validate", "hosts.yaml"]);
    assert_eq!(
        stderr.trim_end(),
        "error: hosts.yaml:14:5: BareMetalHost default/h0: metadata.annotations: too long: the \
         keys and values hold 262145 bytes, more than the 262144 bytes (256 KiB) an object's \
         annotations may hold"
    );
}

#[test]
fn yaml_tags_other_than_the_core_schemas_are_refused() {
    let text = good().replace(
        "  online: true\n",
        "  online: !foo true\n  consumerRef: !!python/object:os.system {}\n  description: !!str 42\n",
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let stderr = refused(&lab, &["provision", "hosts.yaml"]);
    insta::assert_snapshot!("foreign_tags", stderr);
    assert_eq!(refused(&lab, &["validate", "hosts.yaml"]), stderr);
    // A tag on a Secret, and on a document's root.
    let text = format!(
        "{}---\n{}",
        secret("bmc-secret").replace("username: ", "username: !!binary "),
        host("h0", "").replace("apiVersion", "--- !host\napiVersion")
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let stderr = refused(&lab, &["validate", "hosts.yaml"]);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines,
        [
            "error: hosts.yaml:6:13: Secret default/bmc-secret: data.username: YAML tag !!binary \
             refused: bmhctl reads only the core schema's tags (!!str, !!int, !!float, !!bool, \
             !!null, !!map, !!seq); remove the tag",
            // (the parser decoded the !!binary value: what is left is no base64)
            "hosts.yaml:6:13: Secret default/bmc-secret: data.username: not valid base64 (data \
             values are base64-encoded; use stringData for plain text)",
            "hosts.yaml:9:5: BareMetalHost default/h0: YAML tag !host refused: bmhctl reads only \
             the core schema's tags (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq); \
             remove the tag",
        ],
        "{stderr}"
    );
}

#[test]
fn a_lone_carriage_return_is_refused_before_anything_is_written() {
    let text = format!("{}# a note\r# after a lone CR\n", good());
    let lab = Lab::new().file("hosts.yaml", &text);
    let stderr = refused(&lab, &["provision", "hosts.yaml"]);
    insta::assert_snapshot!("lone_carriage_return", stderr);
    // Read-only commands read it (the parser takes the CR for a line break).
    lab.run(&["validate", "hosts.yaml"]).expect_code(0);
}

#[test]
fn a_host_defined_in_two_files_of_a_directory_leaves_nothing_behind() {
    let lab = Lab::new();
    std::fs::create_dir(lab.path("d")).unwrap();
    let lab = lab
        .file("d/a.yaml", &good())
        .file("d/b.yaml", &host("h0", ""));
    let stderr = refused(&lab, &["provision", "d"]);
    insta::assert_snapshot!("host_in_two_files", stderr);
}

#[test]
fn a_refusal_after_loading_a_directory_of_host_files_leaves_nothing_behind() {
    // Both files are locked when the missing Secret is found, and the admission refusal.
    let lab = Lab::new();
    std::fs::create_dir(lab.path("d")).unwrap();
    let lab = lab
        .file("d/a.yaml", &good())
        .file("d/b.yaml", &host("h1", "").replace("bmc-secret", "nosuch"));
    refused(&lab, &["provision", "d"]);
    let lab = Lab::new();
    std::fs::create_dir(lab.path("d")).unwrap();
    let lab = lab.file("d/a.yaml", &good()).file(
        "d/b.yaml",
        &host("h1", "").replace("ipmi://192.168.122.1:6233", "bogus://x"),
    );
    refused(&lab, &["provision", "d"]);
}

#[test]
fn no_host_found_names_the_files_and_directories_given() {
    let lab = Lab::new()
        .file("empty.yaml", "")
        .file("comments.yaml", "# nothing yet\n---\n")
        .file("secret.yaml", &secret("bmc-secret"));
    std::fs::create_dir(lab.path("empty")).unwrap();
    std::fs::create_dir(lab.path("x.yaml")).unwrap();
    std::fs::create_dir(lab.path("secrets")).unwrap();
    std::fs::write(lab.path("secrets/a.yaml"), secret("a")).unwrap();
    let mut out = String::new();
    for args in [
        &["provision", "empty.yaml"][..],
        &["provision", "comments.yaml"],
        &["provision", "empty"],
        &["provision", "x.yaml"],
        &["provision", "secret.yaml", "secrets"],
        &["validate", "empty.yaml"],
        &["deprovision", "-f", "x.yaml"],
        &["pause", "-f", "empty", "h0"],
    ] {
        let stderr = refused(&lab, args);
        out.push_str(&format!("$ bmhctl {}\n{stderr}", args.join(" ")));
    }
    insta::assert_snapshot!("no_host_found", out);
}

#[test]
fn negative_numbers_and_durations_are_refused_naming_the_flag() {
    let lab = Lab::new().file("hosts.yaml", &good());
    let mut out = String::new();
    for args in [
        &["provision", "--concurrency", "-1", "hosts.yaml"][..],
        &["provision", "--timeout", "-5m", "hosts.yaml"],
        &["provision", "--ironic-wait", "-1s", "hosts.yaml"],
        &[
            "provision",
            "--max-provisioning-retries",
            "-2",
            "hosts.yaml",
        ],
        &["provision", "--timeout", "--concurrency", "2", "hosts.yaml"],
        &["watch", "--poll-interval", "-250ms", "-f", "hosts.yaml"],
        &["plan", "--max-provisioning-retries", "-1", "hosts.yaml"],
    ] {
        let stderr = refused(&lab, args);
        // The first line; clap's "For more information, try '--help'." follows.
        let first = stderr.lines().next().unwrap_or_default();
        out.push_str(&format!("$ bmhctl {}\n{first}\n", args.join(" ")));
    }
    insta::assert_snapshot!("negative_numbers", out);
}

#[test]
fn provision_warns_as_validate_does_once_and_goes_on() {
    let text = good().replace("ipmi://192.168.122.1:6233", "ipmi://10.0.0.1:99999");
    let lab = Lab::new().file("hosts.yaml", &text);
    let validate = lab.run(&["validate", "hosts.yaml"]).expect_code(0);
    let warning = "warning: BareMetalHost default/h0: spec.bmc.address: port 99999 is out of \
                   range (1-65535): the BMC cannot be reached [bmc-address]";
    assert_eq!(validate.stderr.trim_end(), warning);
    let run = lab.run_env(
        &["provision", "hosts.yaml"],
        &[("BMHCTL_PROVISIONER", "fixture")],
    );
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert_eq!(warnings, [warning], "{}", run.stderr);
    // Not a refusal: the run went on (the fixture's BMC is not reached through the address).
    assert_ne!(run.code, 2, "{}", run.stderr);
    // -q says nothing.
    let quiet = lab.run_env(
        &["-q", "provision", "hosts.yaml"],
        &[("BMHCTL_PROVISIONER", "fixture")],
    );
    assert!(!quiet.stderr.contains("warning:"), "{}", quiet.stderr);
}
