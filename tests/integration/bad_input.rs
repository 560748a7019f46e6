use crate::lab::{Lab, host, secret};

fn assert_untouched(lab: &Lab, name: &str, text: &str) {
    assert_eq!(lab.read(name), text, "{name} must be left as it was");
    assert!(
        !lab.path(".bmhctl/hosts.yaml.state.json").exists(),
        "no sidecar may be written"
    );
}

#[test]
fn malformed_yaml_names_file_line_and_column() {
    let text = format!(
        "{}---\n{}  image: [unclosed\n",
        secret("bmc-secret"),
        host("h0", "")
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(2);
    assert!(run.stderr.contains("hosts.yaml:"), "{}", run.stderr);
    assert_untouched(&lab, "hosts.yaml", &text);
}

#[test]
fn a_missing_secret_is_bad_input_naming_host_and_field() {
    let text = host("h0", "");
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(2);
    assert!(run.stderr.contains("hosts.yaml:"), "{}", run.stderr);
    assert!(run.stderr.contains("h0"), "{}", run.stderr);
    assert!(
        run.stderr.contains("spec.bmc.credentialsName"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("bmc-secret"), "{}", run.stderr);
    assert_untouched(&lab, "hosts.yaml", &text);
}

#[test]
fn a_field_of_the_wrong_type_names_file_host_and_field() {
    let text = format!(
        "{}---\n{}",
        secret("bmc-secret"),
        host("h0", "").replace("online: true", "online: \"yes\"")
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(2);
    assert!(run.stderr.contains("hosts.yaml:"), "{}", run.stderr);
    assert!(run.stderr.contains("h0"), "{}", run.stderr);
    assert!(run.stderr.contains("spec.online"), "{}", run.stderr);
    assert_untouched(&lab, "hosts.yaml", &text);
}

#[test]
fn a_bad_provisioner_name_is_refused_before_anything_is_read() {
    let lab = Lab::new();
    for name in ["Foo", "../x", "a/b"] {
        let run = lab
            .run(&["provision", "--provisioner", name, "missing.yaml"])
            .expect_code(2);
        assert!(
            run.stderr.contains("^[a-z0-9][a-z0-9-]*$"),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn passwords_never_appear_in_output_or_status() {
    let secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc-secret\nstringData:\n  username: admin\n  password: hunter2-Sekret\n";
    let text = format!("{secret}---\n{}", host("h0", ""));
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&[
            "provision",
            "--provisioner",
            "fixture",
            "-vv",
            "-o",
            "json",
            "hosts.yaml",
        ])
        .expect_code(0);
    let written = lab.read("hosts.yaml");
    let status = &written[text.len()..];
    let sidecar = std::fs::read_to_string(lab.path(".bmhctl/hosts.yaml.state.json")).unwrap();
    for out in [&run.stdout, &run.stderr, &status.to_string(), &sidecar] {
        assert!(!out.contains("hunter2"), "{out}");
    }
}

#[test]
fn a_device_is_refused_unread_without_a_lock() {
    let lab = Lab::new();
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "/dev/zero"])
        .expect_code(2);
    assert_eq!(
        run.stderr.lines().next().unwrap_or(""),
        "error: /dev/zero: not a regular file (devices, FIFOs and sockets are not read)"
    );
    assert!(!std::path::Path::new("/dev/.bmhctl").exists());
}

#[test]
fn a_file_over_the_size_limit_is_refused_and_left_alone() {
    let text = format!("{}---\n{}", secret("bmc-secret"), host("h0", ""));
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run_env(
            &["provision", "--provisioner", "fixture", "hosts.yaml"],
            &[("BMHCTL_MAX_FILE_SIZE", "100")],
        )
        .expect_code(2);
    assert_eq!(
        run.stderr.lines().next().unwrap_or(""),
        "error: hosts.yaml: larger than 100 bytes, the most bmhctl reads from one file (set \
         BMHCTL_MAX_FILE_SIZE to read more)"
    );
    assert_untouched(&lab, "hosts.yaml", &text);
    // The default limit reads it.
    lab.run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(0);
}

#[test]
fn a_lone_carriage_return_ending_a_block_scalar_header_is_refused_not_a_panic() {
    // The parser ends `description`'s header at the CR; this used to panic (exit 101).
    let text = format!(
        "{}---\n{}  description: |\r  automatedCleaningMode: metadata\n",
        secret("bmc-secret"),
        host("h0", "")
    );
    let lab = Lab::new()
        .file("hosts.yaml", &text)
        .file("x.yaml", "a: |\rb: |");
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(2);
    assert!(
        run.stderr.starts_with("error: hosts.yaml:"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert_untouched(&lab, "hosts.yaml", &text);
    let run = lab.run(&["validate", "x.yaml"]).expect_code(2);
    assert!(run.stderr.starts_with("error: x.yaml:"), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert_eq!(lab.read("x.yaml"), "a: |\rb: |");
}

#[test]
fn a_nul_character_is_refused_naming_file_line_and_column() {
    // After a block scalar header's comment the parser took the NUL for the end of the input
    // (and panicked on it); anywhere else it is an unprintable character.
    let text = format!(
        "{}---\n{}  description: | #\0\n",
        secret("bmc-secret"),
        host("h0", "")
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(2);
    assert_eq!(
        run.stderr.lines().next().unwrap_or(""),
        "error: hosts.yaml:18:19: a NUL character, not allowed in YAML"
    );
    assert_untouched(&lab, "hosts.yaml", &text);
    lab.run(&["validate", "hosts.yaml"]).expect_code(2);
}
