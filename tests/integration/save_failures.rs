//! Saves that fail during a run: the run ends cleanly with exit 1 (130 on a signal), naming the
//! file and the cause, and what was saved before stays.
//!
//! The failures must hold when the tests run as root (as CI does), where permission bits do not
//! stop a write: the file's directory is swapped for a plain file mid-run (creating the temporary
//! file under it then fails with `ENOTDIR` for any user), a real tmpfs fills up, and the
//! read-only directory is tried by running bmhctl as an unprivileged user.

use crate::lab::{Lab, host, secret};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

/// A Secret and `n` hosts to provision: with delays scaled to `0.3` a run lasts about 9 s.
pub(crate) fn hosts(n: usize) -> String {
    let mut s = secret("bmc-secret");
    for i in 0..n {
        s.push_str("---\n");
        s.push_str(&host(&format!("worker-{i}"), IMAGE));
    }
    s
}

pub(crate) fn spawn(lab: &Lab, args: &[&str]) -> Child {
    spawn_as(lab, &[], args)
}

/// [`spawn`] under the command `wrapper` (e.g. one that changes the user); none when empty.
fn spawn_as(lab: &Lab, wrapper: &[&str], args: &[&str]) -> Child {
    let bin = assert_cmd::cargo::cargo_bin("bmhctl");
    let mut command = match wrapper.split_first() {
        Some((program, rest)) => {
            let mut c = Command::new(program);
            c.args(rest).arg(&bin);
            c
        }
        None => Command::new(&bin),
    };
    command
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
pub(crate) fn wait(child: Child) -> (i32, String) {
    let (code, _, stderr) = wait_output(child);
    (code, stderr)
}

/// [`wait`], with stdout too.
pub(crate) fn wait_output(mut child: Child) -> (i32, String, String) {
    let start = Instant::now();
    while child.try_wait().expect("wait for bmhctl").is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("bmhctl still running after 30 s: it hangs");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("bmhctl output");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    crate::canary::assert_clean("the stdout of a bmhctl run", &stdout);
    crate::canary::assert_clean("the stderr of a bmhctl run", &stderr);
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

/// Waits until bmhctl has saved a status into `path` (it has read the file and is running),
/// rather than guessing how long the start takes on a loaded machine.
pub(crate) fn wait_for_a_save(path: &std::path::Path) {
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

pub(crate) fn sigterm(child: &Child) {
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
    // A save that fails ends the run unfinished (the README's "Exit codes").
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("error: cannot save: sub/hosts.yaml: Not a directory"),
        "{stderr}"
    );
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

/// A real tmpfs, unmounted when dropped.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: std::path::PathBuf, size: &str) -> Self {
        std::fs::create_dir(&dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "this test mounts a tmpfs, which needs root (as the test suite runs): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs(dir)
    }

    /// Writes a file until the disk is full.
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.0.join("filler")).unwrap();
        let block = vec![0u8; 4096];
        while f.write_all(&block).is_ok() {}
        let _ = f.sync_all();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_ends_provision_with_1_naming_the_file() {
    let lab = Lab::new();
    let disk = Tmpfs::mount(lab.path("disk"), "512k");
    std::fs::write(lab.path("disk/hosts.yaml"), hosts(4)).unwrap();
    let child = spawn(
        &lab,
        &[
            "provision",
            "--provisioner",
            "fixture",
            "-q",
            "disk/hosts.yaml",
        ],
    );
    wait_for_a_save(&lab.path("disk/hosts.yaml"));
    let saved = std::fs::read_to_string(lab.path("disk/hosts.yaml")).unwrap();
    disk.fill();
    let (code, stderr) = wait(child);
    assert_eq!(code, 1, "{stderr}");
    // The file the user gave, whichever of its writes (the state file beside it, or the file)
    // met the full disk.
    assert!(
        stderr.contains("error: cannot save: disk/hosts.yaml: "),
        "{stderr}"
    );
    assert!(stderr.contains("No space left on device"), "{stderr}");
    // The file holds a whole save: the one seen, or one made before the disk was full.
    let after = std::fs::read_to_string(lab.path("disk/hosts.yaml")).unwrap();
    assert!(after.starts_with(&secret("bmc-secret")), "{after}");
    assert!(after.contains("  name: worker-3\n"), "{after}");
    assert_eq!(
        crate::lab::without_status(&after),
        crate::lab::without_status(&saved)
    );
    assert!(after.contains("\nstatus:\n"), "{after}");
}

/// The command that runs a program as `nobody` (uid and gid 65534, no groups): `setpriv`, or
/// `runuser` when there is no `setpriv`.
fn as_nobody() -> Vec<&'static str> {
    let found = |tool: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if found("setpriv") {
        vec![
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
        ]
    } else if found("runuser") {
        vec!["runuser", "-u", "nobody", "--"]
    } else {
        panic!(
            "neither setpriv nor runuser is installed: cannot run bmhctl as an unprivileged user"
        )
    }
}

#[test]
fn a_directory_made_read_only_ends_provision_with_1_naming_the_file() {
    use std::os::unix::fs::{PermissionsExt, chown};
    let lab = Lab::new();
    let mode = |path: &std::path::Path, m: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(m)).unwrap()
    };
    // The lab is root's: nobody may enter it and own `ro/`, where the hosts are.
    mode(&lab.path(""), 0o755);
    std::fs::create_dir(lab.path("ro")).unwrap();
    std::fs::write(lab.path("ro/hosts.yaml"), hosts(4)).unwrap();
    for p in ["ro", "ro/hosts.yaml"] {
        chown(lab.path(p), Some(65534), Some(65534)).unwrap();
    }
    let child = spawn_as(
        &lab,
        &as_nobody(),
        &[
            "provision",
            "--provisioner",
            "fixture",
            "-q",
            "ro/hosts.yaml",
        ],
    );
    wait_for_a_save(&lab.path("ro/hosts.yaml"));
    // Readable, no longer writable: the next save of the file cannot create its temporary file.
    mode(&lab.path("ro"), 0o555);
    let (code, stderr) = wait(child);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("error: cannot save: ro/hosts.yaml: Permission denied"),
        "{stderr}"
    );
    let saved = lab.read("ro/hosts.yaml");
    assert!(saved.contains("\nstatus:\n"), "{saved}");
    assert!(saved.contains("  name: worker-3\n"), "{saved}");
    // Nothing left behind in the directory it could not write.
    let mut names: Vec<String> = std::fs::read_dir(lab.path("ro"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [".bmhctl", "hosts.yaml"]);
}

/// Replaces `path` by a FIFO: a save of it then reads it back before writing and blocks there,
/// as on a stuck disk or network mount.
fn make_fifo(path: &std::path::Path) {
    std::fs::remove_file(path).unwrap();
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
}

/// A signal while saves fail ends `provision` with 130 (not the save's 1), within seconds, with
/// the result document. Two files: the saves of `sub/hosts.yaml` fail (its directory swapped for
/// a file) while the save of `other.yaml` hangs (a FIFO), so the run is still there, its saves
/// failing, when the signal comes.
#[test]
fn sigterm_while_saves_fail_ends_provision_with_130_in_seconds() {
    let lab = Lab::new().file("other.yaml", &host("other-0", IMAGE));
    std::fs::create_dir(lab.path("sub")).unwrap();
    std::fs::write(lab.path("sub/hosts.yaml"), hosts(2)).unwrap();
    let child = spawn(
        &lab,
        &[
            "provision",
            "--provisioner",
            "fixture",
            "-q",
            "-o",
            "json",
            "sub/hosts.yaml",
            "other.yaml",
        ],
    );
    wait_for_a_save(&lab.path("other.yaml"));
    wait_for_a_save(&lab.path("sub/hosts.yaml"));
    make_fifo(&lab.path("other.yaml"));
    swap_dir_for_a_file(&lab);
    // Long enough for a save of each file to be tried (a commit at least every 100 ms).
    std::thread::sleep(Duration::from_millis(1500));
    let start = Instant::now();
    sigterm(&child);
    let (code, stdout, stderr) = wait_output(child);
    let took = start.elapsed();
    assert_eq!(code, 130, "{stderr}");
    // A hang check, not a timing one: the run gives what hangs 3 s.
    assert!(took < Duration::from_secs(10), "took {took:?}: {stderr}");
    assert!(
        stderr.contains("cannot save: sub/hosts.yaml: Not a directory"),
        "{stderr}"
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("the result document");
    assert_eq!(doc["interrupted"], true, "{stdout}");
}

/// A controller's save that hangs (its file replaced by a FIFO) does not keep SIGTERM from
/// ending `watch` within seconds.
#[test]
fn sigterm_while_a_save_hangs_ends_watch_in_seconds() {
    let lab = Lab::new().file("hosts.yaml", &hosts(2));
    let child = spawn(
        &lab,
        &["watch", "--provisioner", "fixture", "-f", "hosts.yaml"],
    );
    wait_for_a_save(&lab.path("hosts.yaml"));
    make_fifo(&lab.path("hosts.yaml"));
    std::thread::sleep(Duration::from_millis(1500));
    let start = Instant::now();
    sigterm(&child);
    let (code, stderr) = wait(child);
    let took = start.elapsed();
    assert_eq!(code, 0, "{stderr}");
    assert!(took < Duration::from_secs(10), "took {took:?}: {stderr}");
    assert!(
        stderr.contains("stopping without waiting longer"),
        "{stderr}"
    );
}

#[test]
fn bad_input_in_a_read_only_directory_is_refused_for_what_it_is() {
    use std::os::unix::fs::{PermissionsExt, chown};
    let lab = Lab::new();
    let mode = |path: &std::path::Path, m: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(m)).unwrap()
    };
    mode(&lab.path(""), 0o755);
    std::fs::create_dir(lab.path("ro")).unwrap();
    let typo = hosts(1).replacen("  online:", "  externalyProvisioned: true\n  online:", 1);
    std::fs::write(lab.path("ro/hosts.yaml"), &typo).unwrap();
    for p in ["ro", "ro/hosts.yaml"] {
        chown(lab.path(p), Some(65534), Some(65534)).unwrap();
    }
    mode(&lab.path("ro"), 0o555);
    let child = spawn_as(
        &lab,
        &as_nobody(),
        &["provision", "--provisioner", "fixture", "ro/hosts.yaml"],
    );
    let (code, stderr) = wait(child);
    // The field, not the lock a read-only directory cannot hold.
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("ro/hosts.yaml:"), "{stderr}");
    assert!(stderr.contains("externalyProvisioned"), "{stderr}");
    assert!(!stderr.contains("Permission denied"), "{stderr}");
    assert_eq!(lab.read("ro/hosts.yaml"), typo);
}

/// Outside a run, a write that fails is exit 4 (the README's exit-code table): `delete -f`'s
/// deletion mark on a full disk, the file named and left as it was.
#[test]
fn a_deletion_mark_on_a_full_disk_is_exit_4_naming_the_file() {
    let lab = Lab::new();
    let disk = Tmpfs::mount(lab.path("disk"), "256k");
    std::fs::write(lab.path("disk/hosts.yaml"), hosts(1)).unwrap();
    let provisioned = lab.run(&[
        "provision",
        "--provisioner",
        "fixture",
        "-q",
        "disk/hosts.yaml",
    ]);
    assert_eq!(provisioned.code, 0, "{}", provisioned.stderr);
    let before = std::fs::read_to_string(lab.path("disk/hosts.yaml")).unwrap();
    disk.fill();
    let run = lab.run(&[
        "delete",
        "--provisioner",
        "fixture",
        "--no-wait",
        "-f",
        "disk/hosts.yaml",
    ]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(run.stderr.contains("disk/hosts.yaml"), "{}", run.stderr);
    assert!(
        run.stderr.contains("No space left on device"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(lab.path("disk/hosts.yaml")).unwrap(),
        before
    );
}
