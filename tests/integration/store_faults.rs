//! A damaged or foreign store object is reported for itself and never blocks the rest of the
//! store: a Secret that does not parse never shows its values, an unreadable Secret is a load
//! error of the hosts that use it (not a missing Secret), one bad host object leaves the other
//! hosts usable, and an object of the wrong kind, or a store owned by another user, is refused.

use crate::lab::{Lab, Reaped, Run};
use base64::Engine as _;
use std::io::{BufRead, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CANARY: &str = "Pw-Store-Canary-7731";

/// The fixture, small delays, a fixed seed.
const ENV: [(&str, &str); 3] = [
    ("BMHCTL_PROVISIONER", "fixture"),
    ("BMHCTL_TIME_SCALE", "0.01"),
    ("BMHCTL_SEED", "1"),
];

fn canary_b64() -> String {
    base64::engine::general_purpose::STANDARD.encode(CANARY)
}

/// A Secret whose password is the canary.
fn secret(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\nstringData:\n  username: admin\n  password: {CANARY}\n"
    )
}

/// An `available` host using the Secret `bmc-<name>`.
fn host(name: &str, mac: u8) -> String {
    format!(
        "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {name}\nspec:\n  online: true\n  bootMACAddress: 00:11:22:33:55:{mac:02x}\n  bmc:\n    address: ipmi://192.168.122.1:62{mac:02}\n    credentialsName: bmc-{name}\n"
    )
}

/// Two hosts, each with its own Secret.
fn hosts_file() -> String {
    [
        secret("bmc-h0"),
        host("h0", 1),
        secret("bmc-h1"),
        host("h1", 2),
    ]
    .join("---\n")
}

/// Every output of the runs of one test, checked for the canary at the end.
#[derive(Default)]
struct Outputs(Vec<String>);

impl Outputs {
    fn keep(&mut self, run: Run) -> Run {
        self.0.push(run.stdout.clone());
        self.0.push(run.stderr.clone());
        run
    }

    /// Only stderr: the run's stdout holds Secret values on purpose (`export`).
    fn keep_stderr(&mut self, run: Run) -> Run {
        self.0.push(run.stderr.clone());
        run
    }

    fn push(&mut self, text: &str) {
        self.0.push(text.to_string());
    }

    #[track_caller]
    fn assert_no_canary(&self) {
        for text in &self.0 {
            assert!(
                !text.contains(CANARY) && !text.contains(&canary_b64()),
                "a Secret value was shown:\n{text}"
            );
            // Nor a part of it a source frame would show.
            assert!(!text.contains("UHctU3Rvcm"), "{text}");
        }
    }
}

fn run(lab: &Lab, args: &[&str]) -> Run {
    let mut a = args.to_vec();
    a.extend(["--store", "st"]);
    lab.run_env(&a, &ENV)
}

/// A store with both hosts applied and driven to their goal.
fn driven_store() -> Lab {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    run(&lab, &["apply", "-f", "hosts.yaml"]).expect_code(0);
    run(&lab, &["wait", "--for", "goal", "--timeout", "60s"]).expect_code(0);
    lab
}

/// A `watch` on the lab's store; killed when dropped if still running.
struct Watch {
    child: Reaped,
    stderr: std::io::BufReader<std::process::ChildStderr>,
}

impl Watch {
    fn start(lab: &Lab) -> Watch {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
            .current_dir(lab.path(""))
            .envs(ENV)
            .env("BMHCTL_CONFIG", lab.path("no-config.yaml"))
            .args(["watch", "--store", "st"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start bmhctl watch");
        let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        assert!(line.starts_with("watching "), "{line}");
        Watch {
            child: Reaped(child),
            stderr,
        }
    }

    /// SIGTERM; the exit code, stdout and stderr.
    fn stop(mut self) -> (i32, String, String) {
        let ok = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill")
            .success();
        assert!(ok);
        let mut stderr = String::new();
        self.stderr.read_to_string(&mut stderr).unwrap();
        let mut stdout = String::new();
        self.child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        let code = self.child.wait().unwrap().code().unwrap_or(-1);
        (code, stdout, stderr)
    }
}

/// The stored host's file.
fn stored(lab: &Lab, name: &str) -> String {
    lab.read(&format!("st/baremetalhosts/default/{name}.yaml"))
}

#[test]
fn a_store_secret_that_does_not_parse_never_shows_its_values() {
    let lab = driven_store();
    let mut out = Outputs::default();
    let path = "st/secrets/default/bmc-h0.yaml";
    let good = lab.read(path);
    assert!(good.contains(&canary_b64()), "{good}");
    // A syntax error on the line after the password: a source frame would quote it.
    let bad = good.replacen("  username: YWRtaW4=\n", "  username: YWRtaW4=: oops\n", 1);
    assert_ne!(bad, good);
    std::fs::write(lab.path(path), &bad).unwrap();

    let export = out.keep(run(&lab, &["export", "h0"]));
    assert_eq!(export.code, 2, "{}", export.stderr);
    insta::assert_snapshot!("secret_syntax_error", export.stderr);
    for args in [
        vec!["get", "-A"],
        vec!["get", "h0", "-o", "yaml"],
        vec!["describe", "h0"],
        vec!["export"],
        vec!["diff", "-f", "hosts.yaml"],
        vec![
            "power",
            "off",
            "h0",
            "--force",
            "--wait",
            "--timeout",
            "20s",
        ],
    ] {
        let r = out.keep(run(&lab, &args));
        assert!(
            r.stderr.contains(path),
            "{args:?} does not name the file:\n{}",
            r.stderr
        );
    }
    let watch = Watch::start(&lab);
    std::thread::sleep(Duration::from_millis(1500));
    let (code, stdout, stderr) = watch.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains(path), "{stderr}");
    out.push(&stdout);
    out.push(&stderr);
    // A good version replaces it.
    out.keep(run(&lab, &["apply", "-f", "hosts.yaml"]))
        .expect_code(0);
    out.keep_stderr(run(&lab, &["export", "h0"])).expect_code(0);
    out.assert_no_canary();
}

#[test]
fn an_unreadable_secret_is_a_load_error_of_its_host_not_a_missing_secret() {
    let lab = driven_store();
    let mut out = Outputs::default();
    let path = "st/secrets/default/bmc-h0.yaml";
    std::fs::write(lab.path(path), ":::\n").unwrap();
    let before = stored(&lab, "h0");

    // A verb waiting on that host fails at once, naming the file.
    let started = Instant::now();
    let r = out.keep(run(
        &lab,
        &[
            "power",
            "off",
            "h0",
            "--force",
            "--wait",
            "--timeout",
            "30s",
        ],
    ));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_ne!(r.code, 0);
    assert!(!r.stderr.contains("timed out"), "{}", r.stderr);
    assert!(r.stderr.contains(path), "{}", r.stderr);
    insta::assert_snapshot!("unreadable_secret_wait", r.stderr);

    // watch says so, and drives the other host.
    let watch = Watch::start(&lab);
    out.keep(run(
        &lab,
        &[
            "power",
            "off",
            "h1",
            "--force",
            "--wait",
            "--timeout",
            "30s",
        ],
    ))
    .expect_code(0);
    std::thread::sleep(Duration::from_millis(500));
    let (code, stdout, stderr) = watch.stop();
    out.push(&stdout);
    out.push(&stderr);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains(path), "{stderr}");
    let h0 = stored(&lab, "h0");
    assert!(!h0.contains("BMCCredentialError"), "{h0}");
    assert!(!h0.contains("does not exist"), "{h0}");
    assert!(before.contains("poweredOn: true"), "{before}");
    assert!(h0.contains("poweredOn: true"), "{h0}");
    assert!(stored(&lab, "h1").contains("poweredOn: false"));

    let d = out.keep(run(&lab, &["describe", "h0"]));
    assert!(!d.stdout.contains("BMCCredentialError"), "{}", d.stdout);
    assert!(d.stderr.contains(path), "{}", d.stderr);
    out.assert_no_canary();
}

/// The ways a hand-edited object can be broken.
fn damaged(good: &str) -> Vec<(&'static str, String)> {
    vec![
        ("garbage", "{{{ not: yaml ]]]\n".to_string()),
        ("empty", String::new()),
        ("cut in half", good[..good.len() / 2].to_string()),
        ("a NUL byte", good.replacen("spec:", "spec:\0", 1)),
        ("a duplicate key", format!("{good}spec:\n  online: false\n")),
    ]
}

#[test]
fn one_unreadable_host_object_leaves_the_other_hosts_usable() {
    let lab = driven_store();
    let mut out = Outputs::default();
    let path = "st/baremetalhosts/default/h0.yaml";
    let good = lab.read(path);
    for (what, bad) in damaged(&good) {
        std::fs::write(lab.path(path), &bad).unwrap();
        let get = out.keep(run(&lab, &["get", "-A"]));
        assert_eq!(get.code, 1, "{what}: {}", get.stderr);
        assert!(get.stdout.contains("h1"), "{what}: {}", get.stdout);
        let row = get
            .stdout
            .lines()
            .find(|l| l.contains("h0"))
            .unwrap_or_else(|| panic!("{what}: no row for h0:\n{}", get.stdout));
        assert!(row.contains("<unreadable>"), "{what}: {row}");
        assert!(get.stderr.contains(path), "{what}: {}", get.stderr);
        let get = out.keep(run(&lab, &["get"]));
        assert_eq!(get.code, 1, "{what}: {}", get.stderr);
        assert!(get.stdout.contains("h1"), "{what}: {}", get.stdout);
        for args in [vec!["describe", "h1"], vec!["get", "h1", "-o", "json"]] {
            out.keep(run(&lab, &args)).expect_code(0);
        }
        out.keep_stderr(run(&lab, &["export", "h1"])).expect_code(0);
        let r = out.keep(run(&lab, &["describe", "h0"]));
        assert_eq!(r.code, 2, "{what}: {}", r.stderr);
        assert!(r.stderr.contains(path), "{what}: {}", r.stderr);
        // Planning the store leaves it out, saying so; naming it is its error.
        let plan = out.keep(run(&lab, &["plan"]));
        assert_eq!(plan.code, 0, "{what}: {}", plan.stderr);
        assert!(plan.stdout.contains("h1"), "{what}: {}", plan.stdout);
        assert!(plan.stderr.contains(path), "{what}: {}", plan.stderr);
        out.keep(run(&lab, &["plan", "h0"])).expect_code(2);
        // A verb on the other host works.
        out.keep(run(&lab, &["power", "off", "h1", "--force"]))
            .expect_code(0);
        out.keep(run(&lab, &["power", "on", "h1"])).expect_code(0);
    }
    // An apply of the good version replaces it.
    out.keep(run(&lab, &["apply", "-f", "hosts.yaml"]))
        .expect_code(0);
    let get = out.keep(run(&lab, &["get", "-A"])).expect_code(0);
    assert!(!get.stdout.contains("<unreadable>"), "{}", get.stdout);
    out.assert_no_canary();
}

#[test]
fn watch_reports_an_unreadable_host_once_and_drives_the_others() {
    let lab = driven_store();
    let path = "st/baremetalhosts/default/h0.yaml";
    std::fs::write(lab.path(path), "{{{ not: yaml ]]]\n").unwrap();
    let watch = Watch::start(&lab);
    run(
        &lab,
        &[
            "power",
            "off",
            "h1",
            "--force",
            "--wait",
            "--timeout",
            "30s",
        ],
    )
    .expect_code(0);
    std::thread::sleep(Duration::from_millis(500));
    // Changed: said again.
    std::fs::write(lab.path(path), "").unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    let (code, _, stderr) = watch.stop();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr.matches(path).count(), 2, "{stderr}");
}

#[test]
fn an_object_of_the_wrong_kind_for_its_directory_is_refused() {
    let lab = driven_store();
    let path = "st/baremetalhosts/default/h0.yaml";
    let banana = lab
        .read(path)
        .replacen("kind: BareMetalHost", "kind: Banana", 1);
    std::fs::write(lab.path(path), &banana).unwrap();
    let get = run(&lab, &["get", "-A"]);
    assert_eq!(get.code, 1, "{}", get.stderr);
    assert!(get.stdout.contains("<unreadable>"), "{}", get.stdout);
    insta::assert_snapshot!("wrong_kind", get.stderr);
    // Never driven: watch leaves its file alone.
    let watch = Watch::start(&lab);
    run(
        &lab,
        &[
            "power",
            "off",
            "h1",
            "--force",
            "--wait",
            "--timeout",
            "30s",
        ],
    )
    .expect_code(0);
    run(&lab, &["power", "off", "h0", "--force"]).expect_code(2);
    std::thread::sleep(Duration::from_millis(500));
    let (code, _, stderr) = watch.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains(path), "{stderr}");
    assert_eq!(lab.read(path), banana);
}

#[test]
fn a_store_owned_by_another_user_is_refused() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!(
            "skipped: giving the store to another user needs root (chown); run the tests as \
             root to cover it"
        );
        return;
    }
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    run(&lab, &["apply", "-f", "hosts.yaml"]).expect_code(0);
    let nobody = 65534;
    std::os::unix::fs::chown(lab.path("st"), Some(nobody), Some(nobody)).unwrap();
    for args in [
        vec!["get"],
        vec!["apply", "-f", "hosts.yaml"],
        vec!["watch"],
    ] {
        let r = run(&lab, &args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        insta::assert_snapshot!("foreign_owner", r.stderr);
    }
}
