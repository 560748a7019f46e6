//! The README's quick start, run as written: in a copy of the checkout's example, with the
//! release build it starts with standing for the binary under test.

use crate::lab::{Lab, readme_block};
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

#[test]
fn the_quick_start_runs_as_written() {
    let block = readme_block("quick start");
    let lab = Lab::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("hosts.example.yaml"),
        lab.path("hosts.example.yaml"),
    )
    .unwrap();
    // `cargo` records what it was asked; the binary it would build is the one under test.
    let bin = lab.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let cargo = bin.join("cargo");
    std::fs::write(&cargo, "#!/bin/sh\necho \"$@\" >> \"$CARGO_ASKED\"\n").unwrap();
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::create_dir_all(lab.path("target/release")).unwrap();
    std::os::unix::fs::symlink(
        assert_cmd::cargo::cargo_bin("bmhctl"),
        lab.path("target/release/bmhctl"),
    )
    .unwrap();
    let tmp = lab.path("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &block])
        .current_dir(lab.path(""))
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .env("CARGO_ASKED", lab.path("cargo-asked"))
        .env("TMPDIR", &tmp)
        .env("CI", "true")
        .env("BMHCTL_CONFIG", lab.path("no-config.yaml"))
        .env_remove("BMHCTL_PROVISIONER")
        .env_remove("BMHCTL_CONTEXT")
        .env_remove("BMHCTL_STORE")
        .output()
        .expect("run bash");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(
        lab.read("cargo-asked"),
        "build --release --workspace --locked\n"
    );
    // The result table, the `get` table with the columns the README names, the description.
    let get_header = stdout
        .lines()
        .find(|l| l.starts_with("NAME") && l.contains("CONSUMER"))
        .unwrap_or_else(|| panic!("no get table:\n{stdout}"));
    let columns: Vec<&str> = get_header.split_whitespace().collect();
    assert_eq!(
        columns,
        ["NAME", "STATE", "CONSUMER", "ONLINE", "ERROR", "AGE"],
        "{stdout}"
    );
    assert!(
        stdout.contains("Name:") && stdout.contains("worker-0"),
        "{stdout}"
    );
    // The status went into the copy in a directory of its own, not into the example.
    let made: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert_eq!(made.len(), 1, "{made:?}");
    let dir = made[0].as_ref().unwrap().path();
    let written = std::fs::read_to_string(dir.join("hosts.yaml")).unwrap();
    assert!(written.contains("status:"), "{written}");
    let example = std::fs::read_to_string(root.join("hosts.example.yaml")).unwrap();
    assert_eq!(lab.read("hosts.example.yaml"), example);
    assert_ne!(written, example);
}
