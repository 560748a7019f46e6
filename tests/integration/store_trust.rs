//! The store is private: created 0700/0600 whatever the umask, refused when others may write to
//! it, and its lease and lock files are never followed through a symlink.

use crate::lab::{Lab, host, secret};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;

fn hosts_file() -> String {
    format!("{}---\n{}", secret("bmc-secret"), host("h0", ""))
}

/// Runs bmhctl in the lab with umask 000, as a careless shell would have it.
fn run_with_umask_000(lab: &Lab, args: &[&str]) -> (i32, String) {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("bmhctl"));
    cmd.current_dir(lab.path(""))
        .env("BMHCTL_TIME_SCALE", "0")
        .env_remove("BMHCTL_PROVISIONER")
        .env_remove("BMHCTL_STORE")
        .args(args);
    // SAFETY: umask is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0);
            Ok(())
        });
    }
    let out = cmd.output().expect("run bmhctl");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every directory and file under `dir` with its permission bits.
fn modes(dir: &Path) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p.clone());
            }
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            out.push((rel, m.permissions().mode() & 0o777));
        }
    }
    out.sort();
    out
}

#[test]
fn created_files_are_0600_and_directories_0700_whatever_the_umask() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let (code, stderr) = run_with_umask_000(&lab, &["apply", "-f", "hosts.yaml", "--store", "s"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stderr) = run_with_umask_000(
        &lab,
        &[
            "reconcile",
            "--store",
            "s",
            "--provisioner",
            "fixture",
            "h0",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let root = lab.path("s");
    assert_eq!(
        std::fs::metadata(&root).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let all = modes(&root);
    for want in [
        ".lease",
        "baremetalhosts/default/h0.yaml",
        "secrets/default/bmc-secret.yaml",
    ] {
        assert!(all.iter().any(|(p, _)| p == want), "no {want} in {all:?}");
    }
    assert!(all.iter().any(|(p, _)| p.starts_with(".locks/")), "{all:?}");
    assert!(all.iter().any(|(p, _)| p.starts_with("events/")), "{all:?}");
    let wrong: Vec<&(String, u32)> = all
        .iter()
        .filter(|(p, mode)| {
            let dir = std::fs::metadata(root.join(p)).unwrap().is_dir();
            *mode != if dir { 0o700 } else { 0o600 }
        })
        .collect();
    assert!(wrong.is_empty(), "not private: {wrong:?}");
}

#[test]
fn a_store_others_may_write_is_refused_naming_it_and_the_fix() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run(&["apply", "-f", "hosts.yaml", "--store", "s"])
        .expect_code(0);
    let root = lab.path("s");
    for (mode, who) in [
        (0o770, "its group"),
        (0o707, "others"),
        (0o777, "its group and others"),
    ] {
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(mode)).unwrap();
        for args in [
            &["get", "--store", "s"][..],
            &["apply", "-f", "hosts.yaml", "--store", "s"][..],
            &["pause", "--store", "s", "h0"][..],
        ] {
            let run = lab.run(args).expect_code(2);
            assert_eq!(
                run.stderr.trim_end(),
                format!(
                    "error: the store s may be written by {who} (mode {mode:03o}); it holds \
                     Secrets and decides what bmhctl drives: fix it with `chmod 700 s`"
                ),
                "bmhctl {}",
                args.join(" ")
            );
        }
    }
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o700)).unwrap();
    lab.run(&["get", "--store", "s"]).expect_code(0);
}

#[test]
fn a_symlinked_lease_is_refused_and_its_target_untouched() {
    let lab = Lab::new()
        .file("hosts.yaml", &hosts_file())
        .file("precious", "keep me\n");
    lab.run(&["apply", "-f", "hosts.yaml", "--store", "s"])
        .expect_code(0);
    let lease = lab.path("s/.lease");
    let _ = std::fs::remove_file(&lease);
    std::os::unix::fs::symlink(lab.path("precious"), &lease).unwrap();
    let run = lab
        .run(&[
            "reconcile",
            "--store",
            "s",
            "--provisioner",
            "fixture",
            "h0",
        ])
        .expect_code(2);
    assert_eq!(
        run.stderr.trim_end(),
        "error: s/.lease: is a symlink: bmhctl never follows one to its lock or lease files; \
         remove it"
    );
    assert_eq!(lab.read("precious"), "keep me\n");
    // An object's lock planted as a symlink is refused the same way.
    std::fs::remove_file(&lease).unwrap();
    let lock = lab.path("s/.locks/baremetalhosts/default/h0.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&lock);
    std::os::unix::fs::symlink(lab.path("precious"), &lock).unwrap();
    let run = lab.run(&["pause", "--store", "s", "h0"]).expect_code(2);
    assert!(
        run.stderr.contains("h0.lock: is a symlink"),
        "{}",
        run.stderr
    );
    assert_eq!(lab.read("precious"), "keep me\n");
}
