//! Saves that fail or race with the user's edits during a run: the run ends cleanly, naming the
//! file, and nothing the user wrote is lost.
//!
//! The failures must hold when the tests run as root (as CI does), where permission bits do not
//! stop a write. So the file's directory is swapped for a plain file mid-run: creating the
//! temporary file (or reading the host file) under it then fails with `ENOTDIR` for any user.

use crate::lab::{Lab, host, secret};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

/// A Secret and `n` hosts to provision: with delays scaled to `0.3` a run lasts about 9 s.
fn hosts(n: usize) -> String {
    let mut s = secret("bmc-secret");
    for i in 0..n {
        s.push_str("---\n");
        s.push_str(&host(&format!("worker-{i}"), IMAGE));
    }
    s
}

fn spawn(lab: &Lab, args: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
        .current_dir(lab.path(""))
        .env("BMHCTL_TIME_SCALE", "0.3")
        .env("BMHCTL_SEED", "1")
        .env_remove("BMHCTL_PROVISIONER")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start bmhctl")
}

/// Waits for the child; a hang detector (not a timing assertion): 30 s is far more than any of
/// these runs needs, even on a loaded machine.
fn wait(mut child: Child) -> (i32, String) {
    let start = Instant::now();
    while child.try_wait().expect("wait for bmhctl").is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("bmhctl still running after 30 s: it hangs");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("bmhctl output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Waits until bmhctl has saved a status into `path` (it has read the file and is running),
/// rather than guessing how long the start takes on a loaded machine.
fn wait_for_a_save(path: &std::path::Path) {
    let start = Instant::now();
    while !std::fs::read_to_string(path).is_ok_and(|t| t.contains("\nstatus:\n")) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no save after 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Replaces the directory `sub` by a plain file of that name (the directory is kept as
/// `sub.old`): every later write under `sub/` fails, for root too.
fn swap_dir_for_a_file(lab: &Lab) {
    std::fs::rename(lab.path("sub"), lab.path("sub.old")).unwrap();
    std::fs::write(lab.path("sub"), "not a directory\n").unwrap();
}

fn sigterm(child: &Child) {
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

#[test]
fn a_save_that_cannot_be_written_ends_provision_naming_the_file() {
    let lab = Lab::new();
    std::fs::create_dir(lab.path("sub")).unwrap();
    std::fs::write(lab.path("sub/hosts.yaml"), hosts(4)).unwrap();
    let child = spawn(
        &lab,
        &[
            "provision",
            "--provisioner",
            "fixture",
            "-q",
            "sub/hosts.yaml",
        ],
    );
    // Registration alone takes 1.5 s at this scale: the run goes on after its first save.
    wait_for_a_save(&lab.path("sub/hosts.yaml"));
    swap_dir_for_a_file(&lab);
    let (code, stderr) = wait(child);
    // An I/O failure keeps its kind's code (the README's "Exit codes").
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("sub/hosts.yaml"), "{stderr}");
    assert!(stderr.contains("Not a directory"), "{stderr}");
    // What was saved before the failure is still there, whole.
    let saved = std::fs::read_to_string(lab.path("sub.old/hosts.yaml")).unwrap();
    assert!(saved.starts_with(&secret("bmc-secret")), "{saved}");
    assert!(saved.contains("  name: worker-3\n"), "{saved}");
}

/// `provision` ends at its first failed save (above); a controller logs it and goes on, so this
/// is where a signal meets saves that keep failing. `watch` stops with 0 on a signal, as it
/// always does: what matters is that it stops, instead of retrying the save for ever.
#[test]
fn sigterm_while_saves_fail_ends_watch() {
    let lab = Lab::new();
    std::fs::create_dir(lab.path("sub")).unwrap();
    std::fs::write(lab.path("sub/hosts.yaml"), hosts(2)).unwrap();
    let child = spawn(
        &lab,
        &["watch", "--provisioner", "fixture", "-f", "sub/hosts.yaml"],
    );
    wait_for_a_save(&lab.path("sub/hosts.yaml"));
    swap_dir_for_a_file(&lab);
    // Saves now fail, and keep failing, while the controller goes on.
    std::thread::sleep(Duration::from_millis(1500));
    sigterm(&child);
    let (code, stderr) = wait(child);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("cannot save: sub/hosts.yaml: Not a directory"),
        "{stderr}"
    );
}

#[test]
fn an_edit_during_provision_is_kept_and_the_next_run_picks_it_up() {
    let lab = Lab::new().file("hosts.yaml", &hosts(4));
    let child = spawn(
        &lab,
        &["provision", "--provisioner", "fixture", "-q", "hosts.yaml"],
    );
    wait_for_a_save(&lab.path("hosts.yaml"));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(lab.path("hosts.yaml"))
        .unwrap();
    std::io::Write::write_all(&mut f, b"# added by the user during the run\n").unwrap();
    drop(f);
    let (code, stderr) = wait(child);
    // The run stops at its next save rather than overwrite the edit.
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("hosts.yaml changed on disk"), "{stderr}");
    assert!(stderr.contains("re-run"), "{stderr}");
    assert!(
        lab.read("hosts.yaml")
            .ends_with("# added by the user during the run\n")
    );
    // The next run starts from the edited file and keeps the edit.
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    let after = lab.read("hosts.yaml");
    assert!(
        after.contains("# added by the user during the run\n"),
        "{after}"
    );
    assert!(after.contains("    state: provisioned\n"), "{after}");
}
