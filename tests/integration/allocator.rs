//! bmhctl sets its allocator from within (no restart of the process under other glibc
//! tunables): its environment is the one it was started with.

use crate::lab::{Lab, host, secret};
use std::io::BufRead;
use std::process::{Command, Stdio};

/// The environment of the running `bmhctl watch` started with `tunables` (`None`: unset), read
/// once it is watching.
fn environment_of_watch(lab: &Lab, tunables: Option<&str>) -> Vec<String> {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"));
    cmd.current_dir(lab.path(""))
        .env("BMHCTL_PROVISIONER", "fixture")
        .args(["watch", "--store", "store"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    match tunables {
        Some(t) => cmd.env("GLIBC_TUNABLES", t),
        None => cmd.env_remove("GLIBC_TUNABLES"),
    };
    let mut child = cmd.spawn().expect("start bmhctl watch");
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.starts_with("watching "), "{line}");
    let environ = std::fs::read(format!("/proc/{}/environ", child.id())).expect("its environment");
    child.kill().unwrap();
    child.wait().unwrap();
    environ
        .split(|&b| b == 0)
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .filter(|v| v.starts_with("GLIBC_TUNABLES="))
        .collect()
}

#[test]
fn the_glibc_tunables_are_the_ones_it_was_started_with() {
    let lab = Lab::new().file(
        "hosts.yaml",
        &format!(
            "{}---\n{}",
            secret("bmc-secret"),
            host("spare-0", "bootMACAddress: 00:11:22:33:55:01")
        ),
    );
    lab.run_env(
        &["apply", "-f", "hosts.yaml", "--store", "store"],
        &[("BMHCTL_PROVISIONER", "fixture")],
    )
    .expect_code(0);
    assert_eq!(environment_of_watch(&lab, None), Vec::<String>::new());
    // The user's setting, even empty, is theirs: nothing added.
    assert_eq!(
        environment_of_watch(&lab, Some("")),
        vec!["GLIBC_TUNABLES=".to_string()]
    );
    assert_eq!(
        environment_of_watch(&lab, Some("glibc.malloc.arena_max=2")),
        vec!["GLIBC_TUNABLES=glibc.malloc.arena_max=2".to_string()]
    );
}
