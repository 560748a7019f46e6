//! One argument convention: `-f/--filename` (files, directories, `-` for standard input) on
//! every command that reads hosts, the positional files kept where they were; `-o` always a
//! format; no panic when the reader of standard output goes away.

use crate::lab::{Lab, Run, host, secret};

const FIXTURE: [(&str, &str); 1] = [("BMHCTL_PROVISIONER", "fixture")];

fn hosts() -> String {
    format!("{}---\n{}", secret("bmc-secret"), host("worker-0", ""))
}

/// bmhctl in the lab directory with `stdin` as its standard input.
fn run_stdin(lab: &Lab, args: &[&str], stdin: &str) -> Run {
    let out = assert_cmd::Command::cargo_bin("bmhctl")
        .expect("bmhctl binary")
        .current_dir(lab.path("."))
        .env("BMHCTL_TIME_SCALE", "0")
        .env("BMHCTL_SEED", "1")
        .env("BMHCTL_PROVISIONER", "fixture")
        .args(args)
        .write_stdin(stdin)
        .output()
        .expect("run bmhctl");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn every_command_that_reads_hosts_takes_dash_f() {
    let lab = Lab::new().file("hosts.yaml", &hosts());
    for args in [
        &["validate", "-f", "hosts.yaml"][..],
        &["validate", "hosts.yaml"],
        &["get", "-f", "hosts.yaml"],
        &["describe", "-f", "hosts.yaml", "worker-0"],
        &["export", "-f", "hosts.yaml"],
        &["provision", "-f", "hosts.yaml"],
        &["provision", "hosts.yaml"],
        &["deprovision", "-f", "hosts.yaml"],
        &["delete", "-f", "hosts.yaml"],
        &["apply", "--store", "s", "-f", "hosts.yaml"],
        &["apply", "--store", "s", "--filename", "hosts.yaml"],
    ] {
        let run = lab.run_env(args, &FIXTURE);
        assert_eq!(run.code, 0, "{args:?}\n{}", run.stderr);
    }
}

#[test]
fn deprovision_of_a_positional_file_points_at_dash_f() {
    let lab = Lab::new().file("hosts.yaml", &hosts());
    let run = lab
        .run_env(&["deprovision", "hosts.yaml"], &FIXTURE)
        .expect_code(2);
    insta::assert_snapshot!(run.stderr, @"error: deprovision: hosts.yaml looks like a file; the hosts of files are given with -f FILE|DIR (did you mean -f hosts.yaml?)");
}

/// Every command taking hosts gives the same hint for a file given where hosts go, before it
/// looks at a store (there is none here).
#[test]
fn a_positional_file_points_at_dash_f_in_every_command_taking_hosts() {
    let lab = Lab::new().file("hosts.yaml", &hosts());
    let commands: &[&[&str]] = &[
        &["get"],
        &["describe"],
        &["export"],
        &["plan"],
        &["timeline", "--output-file", "t.html"],
        &["delete"],
        &["deprovision"],
        &["wait", "--for", "provisioned"],
        &["power", "on"],
        &["power", "off"],
        &["reboot"],
        &["inspect"],
        &["detach"],
        &["attach"],
        &["pause"],
        &["resume"],
        &["retry"],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.extend(["worker-0", "hosts.yaml"]);
        let run = lab.run_env(&args, &FIXTURE).expect_code(2);
        let name = command
            .iter()
            .take_while(|a| !a.starts_with('-'))
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(
            (run.stdout.as_str(), run.stderr),
            (
                "",
                format!(
                    "error: {name}: hosts.yaml looks like a file; the hosts of files are given \
                     with -f FILE|DIR (did you mean -f hosts.yaml?)\n"
                )
            ),
            "{args:?}"
        );
    }
}

#[test]
fn dash_f_dash_reads_standard_input_and_writes_nothing_back() {
    let lab = Lab::new();
    let run = run_stdin(&lab, &["validate", "-f", "-"], &hosts()).expect_code(0);
    assert!(run.stdout.contains("worker-0"), "{}", run.stdout);
    let run = run_stdin(&lab, &["get", "-f", "-", "-o", "json"], &hosts()).expect_code(0);
    assert_eq!(run.json()["items"][0]["metadata"]["name"], "worker-0");
    let run = run_stdin(&lab, &["describe", "-f", "-", "worker-0"], &hosts()).expect_code(0);
    assert!(run.stdout.contains("worker-0"), "{}", run.stdout);
    run_stdin(&lab, &["apply", "--store", "s", "-f", "-"], &hosts()).expect_code(0);
    let run = lab
        .run(&["get", "--store", "s", "-o", "json"])
        .expect_code(0);
    assert_eq!(run.json()["items"][0]["metadata"]["name"], "worker-0");
    // Problems in standard input are located in it.
    let bad = hosts().replace("online: true", "online: true\n  onlin: true");
    let run = run_stdin(&lab, &["validate", "-f", "-"], &bad).expect_code(2);
    insta::assert_snapshot!(run.stderr, @"error: <stdin>:15:10: BareMetalHost default/worker-0: spec.onlin: unknown field (did you mean online?)");
}

#[test]
fn provision_refuses_standard_input() {
    let lab = Lab::new();
    let run = run_stdin(&lab, &["provision", "-f", "-"], &hosts()).expect_code(2);
    insta::assert_snapshot!(run.stderr, @"error: <stdin>: hosts from standard input (-f -) cannot be driven: their status is written back into their file; give the file itself (validate, get, apply and export read -f -)");
    assert!(!lab.path(".bmhctl").exists());
    // So do the other commands that write the hosts' files.
    for args in [
        &["deprovision", "-f", "-"][..],
        &["delete", "-f", "-"],
        &["power", "off", "-f", "-", "worker-0"],
    ] {
        let run = run_stdin(&lab, args, &hosts());
        assert_eq!(run.code, 2, "{args:?}\n{}", run.stderr);
        assert!(
            run.stderr
                .contains("hosts from standard input (-f -) cannot be driven"),
            "{args:?}\n{}",
            run.stderr
        );
    }
    assert!(!lab.path(".bmhctl").exists());
}

#[test]
fn dash_o_is_a_format_in_export_too() {
    let lab = Lab::new().file("hosts.yaml", &hosts());
    let yaml = lab
        .run(&["export", "-f", "hosts.yaml", "-o", "yaml"])
        .expect_code(0)
        .stdout;
    assert!(yaml.contains("kind: BareMetalHost"), "{yaml}");
    lab.run(&["export", "-f", "hosts.yaml", "--output-file", "out.yaml"])
        .expect_code(0);
    assert_eq!(lab.read("out.yaml"), yaml);
    // The old `-o FILE`: refused, with the way to say it, and no file named either way.
    let run = lab
        .run(&["export", "-f", "hosts.yaml", "-o", "export.yaml"])
        .expect_code(2);
    assert!(
        run.stderr.contains(
            "-o is the output format (yaml); to write to a file use --output-file export.yaml"
        ),
        "{}",
        run.stderr
    );
    assert!(!lab.path("export.yaml").exists());
}

#[test]
fn a_closed_pipe_on_stdout_is_a_quiet_exit_0() {
    // Far more than a pipe holds, so that bmhctl is still writing when `head` exits.
    let mut text = secret("bmc-secret");
    for i in 0..2000 {
        text.push_str("---\n");
        text.push_str(&host(&format!("worker-{i}"), ""));
    }
    let lab = Lab::new().file("hosts.yaml", &text);
    let out = std::process::Command::new("bash")
        .current_dir(lab.path("."))
        .arg("-c")
        .arg("set -o pipefail; \"$BMHCTL\" get -f hosts.yaml -o yaml | head -1")
        .env("BMHCTL", assert_cmd::cargo::cargo_bin("bmhctl"))
        .output()
        .expect("run bash");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "apiVersion: v1\n");
    assert_eq!(stderr, "");
}

#[test]
fn a_closed_pipe_on_stderr_is_no_crash() {
    // Thousands of warnings (fake-hardware:// is not BMO's scheme), so that bmhctl is still
    // writing them when `head` exits.
    let mut text = secret("bmc-secret");
    for i in 0..2000 {
        text.push_str("---\n");
        text.push_str(
            &host(&format!("worker-{i}"), "")
                .replace("ipmi://192.168.122.1:6233", "fake-hardware://x"),
        );
    }
    let lab = Lab::new().file("hosts.yaml", &text);
    let out = std::process::Command::new("bash")
        .current_dir(lab.path("."))
        .arg("-c")
        .arg("\"$BMHCTL\" validate -f hosts.yaml 2>&1 >/dev/null | head -c1; echo \"${PIPESTATUS[0]}\"")
        .env("BMHCTL", assert_cmd::cargo::cargo_bin("bmhctl"))
        .output()
        .expect("run bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // `head -c1` printed one byte of the first warning; then bmhctl's exit code.
    assert_eq!(stdout.get(1..).map(str::trim), Some("0"), "{stdout}");
}

/// A selector Kubernetes would refuse is bad input (exit 2) wherever `-l` is taken, with the
/// bad part named, never a selection that matches nothing.
#[test]
fn a_selector_kubernetes_refuses_is_bad_input_everywhere() {
    let lab = Lab::new().file("hosts.yaml", &hosts());
    let said = "error: invalid selector \"rack=-bad-\": value \"-bad-\": a valid label must be an \
                empty string or consist of alphanumeric characters, '-', '_' or '.', and must \
                start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  \
                or '12345', regex used for validation is \
                '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')\n";
    let commands: &[&[&str]] = &[
        &["get"],
        &["describe"],
        &["export"],
        &["plan"],
        &["timeline", "--output-file", "t.html"],
        &["provision"],
        &["deprovision"],
        &["delete"],
        &["wait", "--for", "provisioned"],
        &["pause"],
        &["power", "off"],
        &["retry"],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.extend(["-f", "hosts.yaml", "-l", "rack=-bad-"]);
        let run = lab.run_env(&args, &FIXTURE).expect_code(2);
        assert_eq!(
            (run.stdout.as_str(), run.stderr.as_str()),
            ("", said),
            "{args:?}"
        );
    }
    let run = lab
        .run(&["import", "--from-bifrost", "none.json", "-l", "rack=-bad-"])
        .expect_code(2);
    assert_eq!(run.stderr, said);
    // A bad key and an unknown operator, on the store.
    lab.run(&["apply", "--store", "s", "-f", "hosts.yaml"])
        .expect_code(0);
    for (selector, said) in [
        (
            "rack_",
            "error: invalid selector \"rack_\": key \"rack_\": name part must consist of \
             alphanumeric characters, '-', '_' or '.', and must start and end with an \
             alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used \
             for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')\n",
        ),
        (
            "rack>r1",
            "error: invalid selector \"rack>r1\": key \"rack>r1\": name part must consist of \
             alphanumeric characters, '-', '_' or '.', and must start and end with an \
             alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used \
             for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')\n",
        ),
        (
            "rack is r1",
            "error: invalid selector \"rack is r1\": operator \"is\" is none of =, ==, !=, in, \
             notin, or KEY alone and !KEY for existence\n",
        ),
    ] {
        let run = lab
            .run(&["get", "--store", "s", "-l", selector])
            .expect_code(2);
        assert_eq!(run.stderr, said, "{selector}");
    }
}

/// `pause` and `resume` are done once written: no waiting flags; the verbs with an outcome keep
/// theirs.
#[test]
fn instant_verbs_take_no_waiting_flags() {
    let lab = Lab::new().file("hosts.yaml", &hosts());
    for verb in ["pause", "resume"] {
        for flag in [
            &["--wait"][..],
            &["--timeout", "1s"],
            &["--provisioner", "fixture"],
        ] {
            let mut args = vec![verb, "-f", "hosts.yaml", "worker-0"];
            args.extend(flag);
            let run = lab.run(&args).expect_code(2);
            assert_eq!(
                run.stderr.lines().next(),
                Some(format!("error: unexpected argument '{}' found", flag[0]).as_str()),
                "{args:?}"
            );
            assert_eq!(run.stdout, "");
        }
    }
    let run = lab
        .run(&["pause", "-f", "hosts.yaml", "worker-0"])
        .expect_code(0);
    assert_eq!(run.stdout, "baremetalhost.metal3.io/worker-0 paused\n");
    let run = lab
        .run(&["resume", "-f", "hosts.yaml", "worker-0"])
        .expect_code(0);
    assert_eq!(run.stdout, "baremetalhost.metal3.io/worker-0 resumed\n");
    let run = lab
        .run(&[
            "power",
            "off",
            "--force",
            "-f",
            "hosts.yaml",
            "worker-0",
            "--wait",
            "--timeout",
            "1m",
            "--provisioner",
            "fixture",
        ])
        .expect_code(0);
    assert!(
        run.stdout.ends_with("/worker-0 powered off\n"),
        "{}",
        run.stdout
    );
}
