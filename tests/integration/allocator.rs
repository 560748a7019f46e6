//! bmhctl restarts itself with glibc's malloc asking for transparent huge pages when the kernel
//! gives them only to those who ask, and leaves a user's `GLIBC_TUNABLES` alone.

use crate::lab::{Lab, host, secret};
use std::io::BufRead;
use std::process::{Command, Stdio};

/// The environment of the running `bmhctl watch` started with `tunables` (`None`: unset), read
/// once it is watching (after any restart).
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
fn huge_pages_are_asked_for_when_the_kernel_wants_to_be_asked_and_the_user_said_nothing() {
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
    let asked = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .is_ok_and(|mode| mode.contains("[madvise]"));
    let expected: Vec<String> = if asked && cfg!(target_env = "gnu") {
        vec!["GLIBC_TUNABLES=glibc.malloc.hugetlb=1".into()]
    } else {
        vec![]
    };
    assert_eq!(environment_of_watch(&lab, None), expected);
    // The user's setting, even empty, is theirs: no restart, nothing added.
    assert_eq!(
        environment_of_watch(&lab, Some("")),
        vec!["GLIBC_TUNABLES=".to_string()]
    );
    assert_eq!(
        environment_of_watch(&lab, Some("glibc.malloc.arena_max=2")),
        vec!["GLIBC_TUNABLES=glibc.malloc.arena_max=2".to_string()]
    );
}
