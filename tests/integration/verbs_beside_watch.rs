//! The verbs beside a running `bmhctl watch`: on files (whose locks the watch holds) they write
//! what BMO reads into the file, as an editor would, and the watch acts on it; on the store they
//! write the stored object. Nothing the user, the verb or the watch wrote is lost.

use crate::lab::{Lab, Reaped, secret};
use std::process::{Command, Stdio};

/// The fixture, small delays, a fixed seed.
const ENV: [(&str, &str); 3] = [
    ("BMHCTL_PROVISIONER", "fixture"),
    ("BMHCTL_TIME_SCALE", "0.01"),
    ("BMHCTL_SEED", "1"),
];

/// A host with an image; `mac` its last byte; a comment of the user's inside its spec.
fn worker(name: &str, mac: u8) -> String {
    format!(
        "# {name}: a worker\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {name}\n  labels:\n    rack: r1\nspec:\n  online: true\n  bootMACAddress: 00:11:22:33:44:{mac:02x}\n  bmc:\n    address: ipmi://192.168.122.1:6233\n    credentialsName: bmc-secret\n  image:\n    # the OS ({name})\n    url: http://images.example/os.qcow2\n    checksum: abc123\n  # kept ({name})\n  rootDeviceHints:\n    deviceName: /dev/sda\n"
    )
}

fn hosts() -> String {
    let mut s = secret("bmc-secret");
    for (i, h) in ["w0", "w1", "w2"].iter().enumerate() {
        s.push_str("---\n");
        s.push_str(&worker(h, i as u8));
    }
    s
}

/// A `watch` running in the lab, its stderr kept in a file; killed when dropped if still running.
struct Watch(Reaped, tempfile::NamedTempFile);

impl Watch {
    fn start(lab: &Lab, args: &[&str]) -> Watch {
        let stderr = tempfile::NamedTempFile::new().unwrap();
        let child = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
            .current_dir(lab.path(""))
            .envs(ENV)
            .arg("watch")
            .args(args)
            .stdout(Stdio::null())
            .stderr(stderr.reopen().unwrap())
            .spawn()
            .expect("start bmhctl watch");
        // Until it holds the locks (or the lease): a command run before would take them first.
        let started = std::time::Instant::now();
        while !std::fs::read_to_string(stderr.path()).is_ok_and(|e| e.contains("watching ")) {
            assert!(
                started.elapsed().as_secs() < 60,
                "bmhctl watch did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Watch(Reaped(child), stderr)
    }

    /// SIGTERM; the exit code and stderr.
    fn stop(mut self) -> (i32, String) {
        // SAFETY: a plain kill(2) of our own child.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let status = self.0.wait().unwrap();
        let err = std::fs::read_to_string(self.1.path()).unwrap();
        (status.code().unwrap_or(-1), err)
    }
}

fn run(lab: &Lab, args: &[&str]) -> crate::lab::Run {
    lab.run_env(args, &ENV)
}

fn get(lab: &Lab, host: &str) -> serde_json::Value {
    run(lab, &["get", "-f", "hosts.yaml", host, "-o", "json"])
        .expect_code(0)
        .json()
}

/// A user's edit, saved as editors save: a new file renamed over the old one.
fn user_edit(lab: &Lab, n: usize) {
    let text = lab.read("hosts.yaml") + &format!("# user edit {n}\n");
    let tmp = lab.path(".hosts.yaml.swp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, lab.path("hosts.yaml")).unwrap();
}

#[test]
fn every_verb_beside_a_running_watch_on_files_takes_effect_and_no_edit_is_lost() {
    let lab = Lab::new().file("hosts.yaml", &hosts());
    let watch = Watch::start(&lab, &["-f", "hosts.yaml"]);
    for state in ["provisioned", "powered-on"] {
        let all = [
            "wait",
            "-f",
            "hosts.yaml",
            "--for",
            state,
            "--timeout",
            "60s",
        ];
        run(&lab, &all).expect_code(0);
    }

    // `wait` beside the watch only looks: a provisioner it cannot load changes nothing.
    let waiter = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
        .current_dir(lab.path(""))
        .envs([
            ("BMHCTL_PROVISIONER", "ironic"),
            ("PROVISIONER_PLUGIN_DIR", "/nonexistent"),
        ])
        .args([
            "wait",
            "-f",
            "hosts.yaml",
            "w0",
            "--for",
            "powered-off",
            "--timeout",
            "60s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start bmhctl wait");

    let mut edits = 0;
    let mut verb = |args: &[&str], said: &[&str]| {
        edits += 1;
        user_edit(&lab, edits);
        let mut all = args.to_vec();
        all.extend(["-f", "hosts.yaml", "--timeout", "60s"]);
        let r = run(&lab, &all).expect_code(0);
        assert_eq!(r.stdout.lines().collect::<Vec<_>>(), said, "{}", r.stderr);
        assert!(
            r.stderr.contains("the request is written into the file"),
            "{}",
            r.stderr
        );
    };
    let off = [
        "baremetalhost.metal3.io/w0 power off requested",
        "baremetalhost.metal3.io/w0 powered off",
    ];
    verb(&["power", "off", "w0", "--wait"], &off);
    assert_eq!(get(&lab, "w0")["status"]["poweredOn"], false);
    let waited = waiter.wait_with_output().expect("run bmhctl wait");
    assert_eq!(
        (
            waited.status.code(),
            String::from_utf8_lossy(&waited.stdout).as_ref()
        ),
        (Some(0), "baremetalhost.metal3.io/w0 condition met\n"),
        "{}",
        String::from_utf8_lossy(&waited.stderr)
    );
    let on = [
        "baremetalhost.metal3.io/w0 power on requested",
        "baremetalhost.metal3.io/w0 powered on",
    ];
    verb(&["power", "on", "w0", "--wait"], &on);
    verb(
        &["reboot", "w0", "--wait"],
        &[
            "baremetalhost.metal3.io/w0 reboot requested",
            "baremetalhost.metal3.io/w0 rebooted",
        ],
    );
    verb(
        &["detach", "w1", "--wait"],
        &[
            "baremetalhost.metal3.io/w1 detach requested",
            "baremetalhost.metal3.io/w1 detached",
        ],
    );
    assert_eq!(get(&lab, "w1")["status"]["operationalStatus"], "detached");
    verb(
        &["attach", "w1", "--wait"],
        &[
            "baremetalhost.metal3.io/w1 attach requested",
            "baremetalhost.metal3.io/w1 attached",
        ],
    );
    verb(
        &["retry", "w2", "--wait"],
        &[
            "baremetalhost.metal3.io/w2 retry requested",
            "baremetalhost.metal3.io/w2 retried",
        ],
    );
    verb(
        &["deprovision", "w2"],
        &[
            "baremetalhost.metal3.io/w2 deprovisioning requested",
            "baremetalhost.metal3.io/w2 deprovisioned",
        ],
    );
    let w2 = get(&lab, "w2");
    assert_eq!(w2["status"]["provisioning"]["state"], "available", "{w2:#}");
    assert!(w2["spec"].get("image").is_none(), "{w2:#}");
    verb(
        &["delete", "w1"],
        &[
            "baremetalhost.metal3.io/w1 deletion requested",
            "baremetalhost.metal3.io/w1 deleted",
        ],
    );

    let (code, stderr) = watch.stop();
    assert_eq!(code, 0, "{stderr}");
    let text = lab.read("hosts.yaml");
    // Every edit of the user's is there, and what they wrote around the removed image.
    for n in 1..=edits {
        assert!(
            text.contains(&format!("# user edit {n}\n")),
            "edit {n}:\n{text}"
        );
    }
    assert!(text.contains("# kept (w2)\n  rootDeviceHints:"), "{text}");
    assert!(!text.contains("# the OS (w2)"), "{text}");
    assert!(text.contains("# the OS (w0)"), "{text}");
    // The watch's saves too: w0 provisioned and powered on, w1 deleted (its document kept, with
    // the deletion asked for and no status), no request left behind.
    let w0 = get(&lab, "w0");
    assert_eq!(
        w0["status"]["provisioning"]["state"], "provisioned",
        "{w0:#}"
    );
    assert_eq!(w0["status"]["poweredOn"], true, "{w0:#}");
    let w1 = get(&lab, "w1");
    assert!(w1["metadata"]["deletionTimestamp"].is_string(), "{w1:#}");
    assert!(
        w1.get("status")
            .is_none_or(|s| s["provisioning"]["state"].is_null()),
        "{w1:#}"
    );
    for a in [
        "reboot.metal3.io",
        "baremetalhost.metal3.io/detached",
        "bmhctl.metal3.io/retry",
    ] {
        assert!(!text.contains(a), "{a} left in the file:\n{text}");
    }
    // No temporary or kept file beside it.
    let mut names: Vec<String> = std::fs::read_dir(lab.path(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [".bmhctl", "hosts.yaml"]);
}

#[test]
fn deprovision_and_delete_on_the_store_beside_a_running_watch() {
    let lab = Lab::new().file("hosts.yaml", &hosts());
    run(&lab, &["apply", "--store", "store", "-f", "hosts.yaml"]).expect_code(0);
    let watch = Watch::start(&lab, &["--store", "store"]);
    let wait = [
        "wait",
        "--store",
        "store",
        "w0",
        "w1",
        "--for",
        "provisioned",
        "--timeout",
        "60s",
    ];
    run(&lab, &wait).expect_code(0);
    let r = run(
        &lab,
        &["deprovision", "--store", "store", "w0", "--timeout", "60s"],
    )
    .expect_code(0);
    assert_eq!(
        r.stdout,
        "baremetalhost.metal3.io/w0 deprovisioning requested\nbaremetalhost.metal3.io/w0 deprovisioned\n"
    );
    let w0 = run(&lab, &["get", "--store", "store", "w0", "-o", "json"])
        .expect_code(0)
        .json();
    assert_eq!(w0["status"]["provisioning"]["state"], "available", "{w0:#}");
    assert!(w0["spec"].get("image").is_none(), "{w0:#}");
    assert_eq!(w0["spec"]["rootDeviceHints"]["deviceName"], "/dev/sda");
    let r = run(
        &lab,
        &["delete", "--store", "store", "w1", "--timeout", "60s"],
    )
    .expect_code(0);
    assert_eq!(
        r.stdout,
        "baremetalhost.metal3.io/w1 deletion requested\nbaremetalhost.metal3.io/w1 deleted\n"
    );
    run(&lab, &["get", "--store", "store", "w1"]).expect_code(2);
    // Named none: the store's hosts are not all deprovisioned by accident.
    let r = run(&lab, &["deprovision", "--store", "store"]).expect_code(2);
    assert!(
        r.stderr.contains("name the hosts to deprovision"),
        "{}",
        r.stderr
    );
    assert_eq!(watch.stop().0, 0);
}

#[test]
fn a_run_beside_a_watch_of_the_files_names_the_watch_by_its_pid() {
    let lab = Lab::new().file("hosts.yaml", &hosts());
    let watch = Watch::start(&lab, &["-f", "hosts.yaml"]);
    let run = run(&lab, &["provision", "hosts.yaml"]).expect_code(3);
    // The watch holds the host file itself, which is locked first.
    assert_eq!(
        run.stderr.lines().next().unwrap_or(""),
        format!(
            "error: hosts.yaml is in use by another bmhctl process (pid {})",
            watch.0.id()
        )
    );
    let (code, _) = watch.stop();
    assert_eq!(code, 0);
}
