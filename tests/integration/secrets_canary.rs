//! No BMC password in any output, log, bookkeeping, event, status or error: every command, in
//! file and store form, with logs at trace level, on Secrets written with `data` and with
//! `stringData`, and on Secrets that are broken in every way that is reported. The checks are
//! those of every run ([`crate::canary::assert_clean_run`], called by the lab).

use crate::canary::{PASSWORD_B64, STRING_PASSWORD};
use crate::lab::{Lab, Run, host, secret};

const TRACE: [(&str, &str); 2] = [("BMHCTL_LOG", "trace"), ("RUST_LOG", "trace")];
const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

/// A Secret written with `stringData`.
fn string_secret(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\nstringData:\n  username: admin\n  password: {STRING_PASSWORD}\n"
    )
}

fn hosts_file() -> String {
    format!(
        "{}---\n{}---\n{}---\n{}",
        secret("bmc-secret"),
        string_secret("bmc-string"),
        host("worker-0", IMAGE),
        host("worker-1", IMAGE)
            .replace("credentialsName: bmc-secret", "credentialsName: bmc-string"),
    )
}

fn run(lab: &Lab, args: &[&str]) -> Run {
    lab.run_env(args, &TRACE)
}

#[test]
fn no_command_shows_a_password_at_trace_level() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let fixture = ["--provisioner", "fixture"];
    let with = |args: &[&'static str]| -> Vec<&'static str> { [args, &fixture[..]].concat() };
    for (args, code) in [
        (vec!["validate", "-f", "hosts.yaml"], 0),
        (vec!["validate", "-f", "hosts.yaml", "-o", "json"], 0),
        (with(&["plan", "-f", "hosts.yaml"]), 0),
        (with(&["provision", "-v", "-v", "hosts.yaml"]), 0),
        (with(&["provision", "-o", "json", "hosts.yaml"]), 0),
        (vec!["get", "-f", "hosts.yaml", "-o", "yaml"], 0),
        (vec!["get", "-f", "hosts.yaml", "-o", "json"], 0),
        (vec!["get", "-f", "hosts.yaml", "-o", "wide"], 0),
        (vec!["describe", "-f", "hosts.yaml", "worker-1"], 0),
        (vec!["export", "-f", "hosts.yaml"], 0),
        (with(&["power", "off", "-f", "hosts.yaml", "worker-0"]), 0),
        (with(&["reboot", "-f", "hosts.yaml", "worker-1"]), 0),
        (with(&["deprovision", "-f", "hosts.yaml", "worker-0"]), 0),
        (vec!["apply", "-f", "hosts.yaml", "--store", "st"], 0),
        (vec!["diff", "-f", "hosts.yaml", "--store", "st"], 0),
        (
            with(&["wait", "--store", "st", "--for", "goal", "--timeout", "60s"]),
            0,
        ),
        (vec!["get", "--store", "st", "-A", "-o", "yaml"], 0),
        (vec!["describe", "--store", "st", "worker-0"], 0),
        (vec!["export", "--store", "st"], 0),
        (with(&["delete", "-f", "hosts.yaml", "worker-1"]), 0),
    ] {
        let r = run(&lab, &args);
        assert_eq!(
            r.code,
            code,
            "bmhctl {}\n{}{}",
            args.join(" "),
            r.stdout,
            r.stderr
        );
    }
}

/// Secrets that are broken after their password line, in a file and in the store: the error
/// names the file, line and field, never the lines around it.
#[test]
fn a_broken_secret_is_reported_without_its_password() {
    let broken = [
        // A syntax error right after the password.
        format!(
            "{}  username: YWRtaW4=: oops\n",
            secret("bmc-secret").replace("  username: YWRtaW4=\n", "")
        ),
        // Not base64 beside a good password.
        secret("bmc-secret").replace("username: YWRtaW4=", "username: not*base64"),
        // An unknown field after the password.
        format!("{}extra: {PASSWORD_B64}\n", secret("bmc-secret")),
    ];
    for (i, bad) in broken.iter().enumerate() {
        let lab = Lab::new().file(
            "hosts.yaml",
            &format!("{bad}---\n{}", host("worker-0", IMAGE)),
        );
        for args in [
            vec!["validate", "-f", "hosts.yaml"],
            vec!["provision", "--provisioner", "fixture", "hosts.yaml"],
            vec!["get", "-f", "hosts.yaml"],
            vec!["apply", "-f", "hosts.yaml", "--store", "st"],
        ] {
            let r = run(&lab, &args);
            assert_ne!(
                r.code,
                0,
                "case {i}: bmhctl {}\n{}",
                args.join(" "),
                r.stderr
            );
        }
        // The same Secret broken inside a store.
        let lab = Lab::new().file(
            "hosts.yaml",
            &format!("{}---\n{}", secret("bmc-secret"), host("worker-0", IMAGE)),
        );
        run(&lab, &["apply", "-f", "hosts.yaml", "--store", "st"]).expect_code(0);
        std::fs::write(lab.path("st/secrets/default/bmc-secret.yaml"), bad).unwrap();
        for args in [
            vec!["get", "--store", "st"],
            vec!["describe", "--store", "st", "worker-0"],
            vec!["export", "--store", "st"],
            vec!["diff", "-f", "hosts.yaml", "--store", "st"],
            vec!["apply", "-f", "hosts.yaml", "--store", "st"],
            vec![
                "wait",
                "--store",
                "st",
                "--provisioner",
                "fixture",
                "--for",
                "goal",
                "--timeout",
                "5s",
            ],
        ] {
            run(&lab, &args);
        }
    }
}
