//! `wait` as kubectl's: a `baremetalhost.metal3.io/NAME condition met` line per host as it is
//! met (driving in-process, and beside a `watch`), `--for=condition=`, `--for=jsonpath=`,
//! `--for=delete`, `--all`, and a host resting at another goal ending the wait at once.

use crate::lab::{Lab, secret};
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const FIXTURE: [(&str, &str); 1] = [("BMHCTL_PROVISIONER", "fixture")];

/// A host with a BMC; `image`: with an image (its goal `provisioned`), else `available`;
/// `slow`: the fixture refuses it capacity for its first passes (as under PROVISIONING_LIMIT).
fn host(name: &str, image: bool, slow: bool) -> String {
    let mut s = format!(
        "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {name}\n  labels:\n    rack: r1\n"
    );
    if slow {
        s.push_str("  annotations:\n    fixture.bmhctl.metal3.io/capacity-counter: \"30\"\n");
    }
    s.push_str("spec:\n  online: true\n  bmc:\n    address: ipmi://192.168.122.1:6233\n    credentialsName: bmc-secret\n");
    if image {
        s.push_str("  image:\n    url: http://images.example/os.qcow2\n    checksum: abc123\n");
    }
    s
}

/// `a-slow` and `b-fast` (images; `a-slow` first in every listing but the slower) and
/// `spare-0` (no image).
fn hosts() -> String {
    [
        secret("bmc-secret"),
        host("a-slow", true, true),
        host("b-fast", true, false),
        host("spare-0", false, false),
    ]
    .join("---\n")
}

fn lab() -> Lab {
    Lab::new().file("hosts.yaml", &hosts())
}

fn bmhctl(lab: &Lab, args: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
        .current_dir(lab.path(""))
        .envs(FIXTURE)
        .env("BMHCTL_TIME_SCALE", "0")
        .env("BMHCTL_CONFIG", lab.path("no-config.yaml"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start bmhctl")
}

/// Runs `wait ARGS`, checking that its first line comes while it still runs (the slow host not
/// yet met); its exit code and the whole of its stdout.
fn wait_watching_the_first_line(lab: &Lab, args: &[&str]) -> (i32, String) {
    let mut child = bmhctl(lab, args);
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert_eq!(
        child.try_wait().unwrap(),
        None,
        "the first line came when wait ended: {first}"
    );
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    let code = child.wait().unwrap().code().unwrap_or(-1);
    (code, first + &rest)
}

const MET_IN_ORDER: &str =
    "baremetalhost.metal3.io/b-fast condition met\nbaremetalhost.metal3.io/a-slow condition met\n";

#[test]
fn each_host_is_said_as_it_meets_the_condition_when_wait_drives_them() {
    let lab = lab();
    let (code, out) = wait_watching_the_first_line(
        &lab,
        &[
            "wait",
            "-f",
            "hosts.yaml",
            "--for",
            "provisioned",
            "a-slow",
            "b-fast",
        ],
    );
    assert_eq!((code, out.as_str()), (0, MET_IN_ORDER));
}

/// A `watch` on the store, killed when dropped.
struct Watch(Child);

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn each_host_is_said_as_it_meets_the_condition_beside_a_watch() {
    let lab = lab();
    lab.run(&["apply", "--store", "s", "-f", "hosts.yaml"])
        .expect_code(0);
    let mut watch = Watch(bmhctl(&lab, &["watch", "--store", "s"]));
    // Until the watch holds the lease: a wait started before would drive the hosts itself.
    let mut err = std::io::BufReader::new(watch.0.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains("watching ") {
        said.clear();
        assert!(err.read_line(&mut said).unwrap() > 0, "the watch ended");
    }
    let (code, out) = wait_watching_the_first_line(
        &lab,
        &[
            "wait",
            "--store",
            "s",
            "--for=condition=Provisioned",
            "a-slow",
            "b-fast",
        ],
    );
    assert_eq!((code, out.as_str()), (0, MET_IN_ORDER));
}

#[test]
fn a_host_resting_at_another_goal_ends_the_wait_at_once() {
    let lab = lab();
    lab.run(&["apply", "--store", "s", "-f", "hosts.yaml"])
        .expect_code(0);
    let run = lab
        .run_env(
            &["wait", "--store", "s", "--for", "available", "spare-0"],
            &FIXTURE,
        )
        .expect_code(0);
    assert_eq!(
        run.stdout,
        "baremetalhost.metal3.io/spare-0 condition met\n"
    );
    for (wanted, line) in [
        ("provisioned", "--for=provisioned"),
        ("condition=Ready", "--for=condition=Ready"),
    ] {
        let started = Instant::now();
        let run = lab
            .run_env(
                &["wait", "--store", "s", "--for", wanted, "-l", "rack=r1"],
                &FIXTURE,
            )
            .expect_code(1);
        assert!(started.elapsed() < Duration::from_secs(60));
        assert_eq!(
            (run.stdout.as_str(), run.stderr.as_str()),
            (
                "",
                format!(
                    "error: baremetalhost.metal3.io/spare-0 cannot meet {line}: it rests at \
                     \"available\", its goal, since its spec has no image\n"
                )
                .as_str()
            )
        );
    }
    // Found once the wait has driven it there, on files too.
    let run = lab
        .run_env(
            &[
                "wait",
                "-f",
                "hosts.yaml",
                "--for",
                "provisioned",
                "spare-0",
            ],
            &FIXTURE,
        )
        .expect_code(1);
    assert_eq!(
        run.stderr,
        "error: baremetalhost.metal3.io/spare-0 cannot meet --for=provisioned: it rests at \
         \"available\", its goal, since its spec has no image\n"
    );
}

#[test]
fn kubectl_forms_of_for_and_all() {
    let lab = lab();
    lab.run(&["apply", "--store", "s", "-f", "hosts.yaml"])
        .expect_code(0);
    let wait = |args: &[&str]| {
        let mut all = vec!["wait", "--store", "s"];
        all.extend(args);
        lab.run_env(&all, &FIXTURE)
    };
    let b_fast = "baremetalhost.metal3.io/b-fast condition met\n";
    for args in [
        &["--for=condition=Ready", "b-fast"][..],
        &["--for=condition=ready=TRUE", "b-fast"],
        &[
            "--for=jsonpath={.status.provisioning.state}=provisioned",
            "bmh/b-fast",
        ],
        &[
            "--for",
            "jsonpath={.status.conditions[?(@.type==\"Provisioned\")].status}=True",
            "b-fast",
        ],
    ] {
        let run = wait(args).expect_code(0);
        assert_eq!(
            (run.stdout.as_str(), run.stderr.as_str()),
            (b_fast, ""),
            "{args:?}"
        );
    }
    wait(&["--for", "goal", "--all"]).expect_code(0);
    // All met at the first look: said in the hosts' order.
    let run = wait(&["--for=jsonpath={.status.poweredOn}", "--all"]).expect_code(0);
    assert_eq!(
        run.stdout,
        "baremetalhost.metal3.io/a-slow condition met\nbaremetalhost.metal3.io/b-fast condition \
         met\nbaremetalhost.metal3.io/spare-0 condition met\n"
    );
    lab.run(&["delete", "--store", "s", "--no-wait", "spare-0"])
        .expect_code(0);
    let run = wait(&["--for=delete", "spare-0"]).expect_code(0);
    assert_eq!(
        run.stdout,
        "baremetalhost.metal3.io/spare-0 condition met\n"
    );
    // What kubectl would refuse, or what no host has.
    let run = wait(&["--for=condition=Redy", "b-fast"]).expect_code(2);
    assert_eq!(
        run.stderr,
        "error: unknown condition \"Redy\" for --for=condition= (did you mean Ready?); a host's \
         conditions are Ready, Manageable, AvailableForProvisioning, Provisioned, Progressing, \
         Healthy\n"
    );
    let run = wait(&["--for=jsonpath={.status", "b-fast"]).expect_code(2);
    assert_eq!(run.stderr, "error: --for=jsonpath={.status: no closing }\n");
    let run = wait(&["--for=goal", "--all", "b-fast"]).expect_code(2);
    assert!(
        run.stderr
            .starts_with("error: the argument '--all' cannot be used with '[HOST]...'"),
        "{}",
        run.stderr
    );
}
