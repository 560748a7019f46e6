//! `bmhctl watch`, the annotation verbs and `bmhctl wait`, on a store in the lab directory,
//! with the fixture provisioner.

use crate::lab::{Lab, host, secret};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

fn worker(name: &str, mac: u8) -> String {
    host(
        name,
        &format!("bootMACAddress: 00:11:22:33:44:{mac:02x}\n{IMAGE}"),
    )
}

fn spare(name: &str, mac: u8) -> String {
    host(name, &format!("bootMACAddress: 00:11:22:33:55:{mac:02x}"))
}

fn file_of(hosts: &[String]) -> String {
    let mut s = secret("bmc-secret");
    for h in hosts {
        s.push_str("---\n");
        s.push_str(h);
    }
    s
}

/// The environment of every run here: the fixture, small delays (a steady host polls its power
/// every 0.6 s), a fixed seed.
const ENV: [(&str, &str); 3] = [
    ("BMHCTL_PROVISIONER", "fixture"),
    ("BMHCTL_TIME_SCALE", "0.01"),
    ("BMHCTL_SEED", "1"),
];

fn run(lab: &Lab, args: &[&str]) -> crate::lab::Run {
    let mut a = args.to_vec();
    a.extend(["--store", "store"]);
    lab.run_env(&a, &ENV)
}

/// A `watch` running on the lab's store; killed (SIGKILL) when dropped if still running.
struct Watch {
    child: Child,
    stderr: std::io::BufReader<std::process::ChildStderr>,
}

impl Watch {
    fn start(lab: &Lab) -> Watch {
        Watch::start_env(lab, &[])
    }

    /// [`Watch::start`] with extra environment variables (over [`ENV`]).
    fn start_env(lab: &Lab, envs: &[(&str, &str)]) -> Watch {
        use std::io::BufRead;
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
            .current_dir(lab.path(""))
            .envs(ENV)
            .envs(envs.iter().copied())
            .args(["watch", "--store", "store"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start bmhctl watch");
        // It says so once it holds the lease.
        let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        assert!(line.starts_with("watching "), "{line}");
        Watch { child, stderr }
    }

    /// Sends SIGTERM and returns the exit code and the output.
    fn stop(mut self) -> (i32, String, String) {
        use std::io::Read;
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

impl Watch {
    /// Kills it with SIGKILL: no chance to save or tidy anything.
    fn kill(mut self) {
        self.child.kill().expect("SIGKILL bmhctl watch");
        self.child.wait().expect("reap bmhctl watch");
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn get_json(lab: &Lab) -> serde_json::Value {
    run(lab, &["get", "-o", "json"]).expect_code(0).json()
}

/// The stored hosts, by name.
fn host_json(lab: &Lab, name: &str) -> serde_json::Value {
    let all = get_json(lab);
    let items = all["items"].as_array().cloned().unwrap_or_default();
    items
        .into_iter()
        .find(|h| h["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no host {name} in {all}"))
}

#[test]
fn watch_drives_applied_hosts_to_their_goal_and_picks_up_new_ones() {
    let lab = Lab::new().file(
        "hosts.yaml",
        &file_of(&[worker("worker-0", 1), spare("spare-0", 1)]),
    );
    run(&lab, &["apply", "-f", "hosts.yaml"]).expect_code(0);
    let watch = Watch::start(&lab);
    run(&lab, &["wait", "--for", "goal", "--timeout", "60s"]).expect_code(0);
    let w = host_json(&lab, "worker-0");
    assert_eq!(w["status"]["provisioning"]["state"], "provisioned");
    assert_eq!(
        host_json(&lab, "spare-0")["status"]["provisioning"]["state"],
        "available"
    );

    // A host applied while watch runs is picked up.
    let lab = lab.file("more.yaml", &file_of(&[worker("worker-1", 2)]));
    run(&lab, &["apply", "-f", "more.yaml"]).expect_code(0);
    run(
        &lab,
        &[
            "wait",
            "--for",
            "provisioned",
            "worker-1",
            "--timeout",
            "60s",
        ],
    )
    .expect_code(0);

    // A spec change is acted on: the image goes, the host is deprovisioned.
    let lab = lab.file(
        "more.yaml",
        &file_of(&[spare("worker-1", 2)]).replace("55:02", "44:02"),
    );
    run(&lab, &["apply", "-f", "more.yaml"]).expect_code(0);
    run(
        &lab,
        &["wait", "--for", "available", "worker-1", "--timeout", "60s"],
    )
    .expect_code(0);

    let (code, stdout, stderr) = watch.stop();
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("default/worker-0 provisioned OK power on"),
        "{stdout}"
    );
    assert!(stderr.contains("stopped"), "{stderr}");

    // describe shows the events watch recorded.
    let d = run(&lab, &["describe", "worker-0"]).expect_code(0).stdout;
    let events = d.split("Events:").nth(1).unwrap();
    assert!(!events.contains("<none>"), "{d}");
    assert!(
        events.contains("ProvisioningComplete") || events.contains("Provision"),
        "{d}"
    );
}

#[test]
fn a_second_watch_on_one_store_is_refused() {
    let lab = Lab::new().file("hosts.yaml", &file_of(&[spare("spare-0", 1)]));
    run(&lab, &["apply", "-f", "hosts.yaml"]).expect_code(0);
    let watch = Watch::start(&lab);
    let second = run(&lab, &["watch"]).expect_code(3);
    assert!(
        second
            .stderr
            .contains("already being driven by bmhctl process")
            && second.stderr.contains("only one `bmhctl watch`"),
        "{}",
        second.stderr
    );
    let (code, _, _) = watch.stop();
    assert_eq!(code, 0);
    // Once the first is gone, a new one may start.
    let again = Watch::start(&lab);
    run(&lab, &["wait", "--for", "available", "--timeout", "60s"]).expect_code(0);
    assert_eq!(again.stop().0, 0);
}

#[test]
fn concurrent_applies_while_watch_runs_lose_no_update() {
    let names: Vec<String> = (0..6).map(|i| format!("w-{i}")).collect();
    let base: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| worker(n, i as u8))
        .collect();
    let lab = Lab::new().file("hosts.yaml", &file_of(&base));
    run(&lab, &["apply", "-f", "hosts.yaml"]).expect_code(0);
    let watch = Watch::start(&lab);
    // Labels change on every apply while the hosts are being provisioned and polled.
    for round in 0..8 {
        let labelled = file_of(&base).replace(
            "metadata:\n  name: w-",
            &format!("metadata:\n  labels:\n    round: \"{round}\"\n  name: w-"),
        );
        let lab_file = format!("round-{round}.yaml");
        std::fs::write(lab.path(&lab_file), labelled).unwrap();
        run(&lab, &["apply", "-f", &lab_file]).expect_code(0);
        std::thread::sleep(Duration::from_millis(50));
    }
    run(&lab, &["wait", "--for", "provisioned", "--timeout", "60s"]).expect_code(0);
    let (code, _, stderr) = watch.stop();
    assert_eq!(code, 0, "{stderr}");
    for n in &names {
        let h = host_json(&lab, n);
        assert_eq!(h["metadata"]["labels"]["round"], "7", "{h}");
        assert_eq!(h["status"]["provisioning"]["state"], "provisioned", "{h}");
    }
}

#[test]
fn sigterm_mid_run_then_restart_resumes_every_host() {
    let names: Vec<String> = (0..12).map(|i| format!("w-{i}")).collect();
    let hosts: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| worker(n, i as u8))
        .collect();
    let lab = Lab::new().file("hosts.yaml", &file_of(&hosts));
    run(&lab, &["apply", "-f", "hosts.yaml"]).expect_code(0);
    let watch = Watch::start(&lab);
    std::thread::sleep(Duration::from_millis(300));
    let (code, _, stderr) = watch.stop();
    assert_eq!(code, 0, "{stderr}");
    // Every stored host is still a readable object; some made progress.
    let all = get_json(&lab);
    assert_eq!(all["items"].as_array().unwrap().len(), names.len());
    let watch = Watch::start(&lab);
    run(&lab, &["wait", "--for", "goal", "--timeout", "90s"]).expect_code(0);
    assert_eq!(watch.stop().0, 0);
    for n in &names {
        assert_eq!(
            host_json(&lab, n)["status"]["provisioning"]["state"],
            "provisioned"
        );
    }
}

/// Checks that every file of the store reads back (objects as YAML, event logs as JSON lines);
/// returns the temporary files of atomic writes found (`.<name>.<pid>.<random>.tmp`).
fn check_store_files(dir: &std::path::Path) -> Vec<String> {
    let mut temps = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                if name != ".locks" {
                    stack.push(p);
                }
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            if name.ends_with(".tmp") {
                temps.push(p.display().to_string());
            } else if name.ends_with(".yaml") {
                let v: serde_json::Value = serde_saphyr::from_str(&text)
                    .unwrap_or_else(|e| panic!("{} does not parse ({e}):\n{text}", p.display()));
                assert!(v["kind"].is_string(), "{}: {text}", p.display());
                assert!(v["metadata"]["name"].is_string(), "{}: {text}", p.display());
            } else if name.ends_with(".jsonl") {
                for l in text.lines() {
                    serde_json::from_str::<serde_json::Value>(l)
                        .unwrap_or_else(|e| panic!("{}: {e}: {l}", p.display()));
                }
            }
        }
    }
    temps
}

#[test]
fn sigkill_at_any_instant_then_restart_loses_nothing() {
    let names: Vec<String> = (0..12).map(|i| format!("w-{i}")).collect();
    let mut hosts: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| worker(n, i as u8))
        .collect();
    hosts.push(spare("s-0", 1));
    let lab = Lab::new().file("hosts.yaml", &file_of(&hosts));
    run(&lab, &["apply", "-f", "hosts.yaml"]).expect_code(0);
    for ms in [300, 800, 1500, 50, 2500] {
        // Starting again says so: the lease a SIGKILL'd holder had is free (the kernel
        // released its flock).
        let watch = Watch::start(&lab);
        std::thread::sleep(Duration::from_millis(ms));
        watch.kill();
        // Every object is whole: each write replaced a file, or did not happen.
        check_store_files(&lab.path("store"));
        let all = get_json(&lab);
        assert_eq!(all["items"].as_array().unwrap().len(), names.len() + 1);
    }
    let watch = Watch::start(&lab);
    run(&lab, &["wait", "--for", "goal", "--timeout", "90s"]).expect_code(0);
    let (code, _, stderr) = watch.stop();
    assert_eq!(code, 0, "{stderr}");
    for n in &names {
        let h = host_json(&lab, n);
        assert_eq!(h["status"]["provisioning"]["state"], "provisioned", "{h}");
        assert_eq!(h["status"]["operationalStatus"], "OK", "{h}");
    }
    assert_eq!(
        host_json(&lab, "s-0")["status"]["provisioning"]["state"],
        "available"
    );
    // What a killed writer's temporary file there was is gone (taking the lease tidies it).
    let temps = check_store_files(&lab.path("store"));
    assert!(temps.is_empty(), "{temps:?}");
}

/// Provisions `worker-0` (and an available `spare-0`) with the in-process driver.
fn provisioned_lab() -> Lab {
    let lab = Lab::new().file(
        "hosts.yaml",
        &file_of(&[worker("worker-0", 1), spare("spare-0", 1)]),
    );
    run(&lab, &["apply", "-f", "hosts.yaml"]).expect_code(0);
    run(&lab, &["wait", "--for", "goal", "--timeout", "60s"]).expect_code(0);
    lab
}

fn annotations(lab: &Lab, name: &str) -> serde_json::Value {
    host_json(lab, name)["metadata"]["annotations"].clone()
}

#[test]
fn power_off_and_on_hold_and_release_bmo_reboot_annotation() {
    let lab = provisioned_lab();
    let off = run(
        &lab,
        &["power", "off", "worker-0", "--wait", "--timeout", "30s"],
    )
    .expect_code(0);
    assert!(
        off.stdout
            .contains("baremetalhost.metal3.io/worker-0 power off requested")
    );
    assert!(
        off.stdout
            .contains("baremetalhost.metal3.io/worker-0 powered off")
    );
    let h = host_json(&lab, "worker-0");
    assert_eq!(h["status"]["poweredOn"], false);
    assert_eq!(
        h["metadata"]["annotations"]["reboot.metal3.io/bmhctl"],
        r#"{"mode":"soft"}"#
    );
    // Held: the host stays off, pass after pass (BMO never removes a suffixed annotation).
    run(&lab, &["retry", "worker-0", "--wait", "--timeout", "30s"]).expect_code(0);
    assert_eq!(host_json(&lab, "worker-0")["status"]["poweredOn"], false);
    run(
        &lab,
        &["power", "on", "worker-0", "--wait", "--timeout", "30s"],
    )
    .expect_code(0);
    let h = host_json(&lab, "worker-0");
    assert_eq!(h["status"]["poweredOn"], true);
    assert!(
        h["metadata"]["annotations"]
            .get("reboot.metal3.io/bmhctl")
            .is_none()
    );
    // On an available host BMO wants "force": bmhctl says so.
    let warn = run(&lab, &["power", "off", "spare-0"]).expect_code(0);
    assert!(warn.stderr.contains("--force"), "{}", warn.stderr);
    run(
        &lab,
        &[
            "power",
            "off",
            "--hard",
            "--force",
            "spare-0",
            "--wait",
            "--timeout",
            "30s",
        ],
    )
    .expect_code(0);
    assert_eq!(
        annotations(&lab, "spare-0")["reboot.metal3.io/bmhctl"],
        r#"{"mode":"hard","force":true}"#
    );
}

#[test]
fn reboot_is_one_shot_and_the_annotation_is_consumed() {
    let lab = provisioned_lab();
    let r = run(&lab, &["reboot", "worker-0", "--wait", "--timeout", "30s"]).expect_code(0);
    assert!(
        r.stdout
            .contains("baremetalhost.metal3.io/worker-0 rebooted"),
        "{}",
        r.stdout
    );
    let h = host_json(&lab, "worker-0");
    assert!(
        h["metadata"]
            .get("annotations")
            .is_none_or(|a| a.get("reboot.metal3.io").is_none()),
        "{h}"
    );
    assert_eq!(h["status"]["poweredOn"], true);
    // The power went off and on again: BMO's events say so.
    let d = run(&lab, &["describe", "worker-0"]).expect_code(0).stdout;
    assert!(d.contains("PowerOff") || d.contains("power"), "{d}");
}

#[test]
fn detach_attach_pause_resume() {
    let lab = provisioned_lab();
    run(&lab, &["detach", "worker-0", "--wait", "--timeout", "30s"]).expect_code(0);
    assert_eq!(
        host_json(&lab, "worker-0")["status"]["operationalStatus"],
        "detached"
    );
    run(&lab, &["attach", "worker-0", "--wait", "--timeout", "30s"]).expect_code(0);
    let h = host_json(&lab, "worker-0");
    assert_eq!(h["status"]["operationalStatus"], "OK");
    assert_eq!(h["status"]["provisioning"]["state"], "provisioned");

    run(&lab, &["detach", "--force", "spare-0"]).expect_code(0);
    assert_eq!(
        annotations(&lab, "spare-0")["baremetalhost.metal3.io/detached"],
        r#"{"force":true}"#
    );

    // Paused: an annotation that would act is left alone until resumed.
    run(&lab, &["pause", "worker-0"]).expect_code(0);
    run(&lab, &["power", "off", "worker-0"]).expect_code(0);
    run(
        &lab,
        &[
            "wait",
            "--for",
            "powered-off",
            "worker-0",
            "--timeout",
            "2s",
        ],
    )
    .expect_code(1);
    assert_eq!(host_json(&lab, "worker-0")["status"]["poweredOn"], true);
    run(&lab, &["resume", "worker-0"]).expect_code(0);
    run(
        &lab,
        &[
            "wait",
            "--for",
            "powered-off",
            "worker-0",
            "--timeout",
            "30s",
        ],
    )
    .expect_code(0);
}

/// BMO's demo provisioner as `<lab>/plugins/demo-provisioner.so` (built with the cargo running
/// the tests); returns the plugin directory.
fn stage_demo(lab: &Lab) -> String {
    let out = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--message-format=json", "-p", "demo-provisioner"])
        .output()
        .expect("cargo build");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lib = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "demo_provisioner")
        .flat_map(|m| m["filenames"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f.as_str().map(str::to_string))
        .find(|f| f.ends_with(".so"))
        .expect("the demo plugin's library");
    let dir = lab.path("plugins");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(lib, dir.join("demo-provisioner.so")).unwrap();
    dir.display().to_string()
}

#[test]
fn inspect_sends_an_available_host_through_inspection_again() {
    let lab = Lab::new().file(
        "hosts.yaml",
        &file_of(&[spare("demo-available", 1), worker("demo-provisioned", 2)]),
    );
    let dir = stage_demo(&lab);
    let demo = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend(["--store", "store"]);
        lab.run_env(
            &a,
            &[
                ("BMHCTL_PROVISIONER", "demo"),
                ("BMHCTL_TIME_SCALE", "0.01"),
                ("PROVISIONER_PLUGIN_DIR", &dir),
            ],
        )
    };
    demo(&["apply", "-f", "hosts.yaml"]).expect_code(0);
    demo(&["wait", "--for", "goal", "--timeout", "60s"]).expect_code(0);
    let before = run(&lab, &["describe", "demo-available"])
        .expect_code(0)
        .stdout;
    // Identical events are counted once: `... (x3 over 1s)  InspectionComplete`.
    let inspections = |d: &str| -> usize {
        d.lines()
            .filter(|l| l.contains("InspectionComplete"))
            .map(|l| {
                l.split_once("(x")
                    .and_then(|(_, rest)| rest.split(' ').next()?.parse().ok())
                    .unwrap_or(1)
            })
            .sum()
    };
    demo(&["inspect", "demo-available", "--wait", "--timeout", "30s"]).expect_code(0);
    // "inspected" holds from `preparing` on; the host is then driven back to its goal.
    demo(&["wait", "--for", "goal", "--timeout", "60s"]).expect_code(0);
    let h = host_json(&lab, "demo-available");
    assert!(
        h["metadata"]
            .get("annotations")
            .is_none_or(|a| a.get("inspect.metal3.io").is_none()),
        "{h}"
    );
    assert_eq!(h["status"]["provisioning"]["state"], "available");
    let after = run(&lab, &["describe", "demo-available"])
        .expect_code(0)
        .stdout;
    // Inspected again (the demo reports completion on each call: twice per inspection).
    assert!(inspections(&after) > inspections(&before), "{after}");
    // A provisioned host is not inspected: bmhctl warns, BMO keeps the request.
    let w = demo(&["inspect", "demo-provisioned"]).expect_code(0);
    assert!(w.stderr.contains("only an available host"), "{}", w.stderr);
}

#[test]
fn retry_skips_the_backoff_wait_and_keeps_the_counts() {
    // The fixture's registration fails (its validate-error knob), and BMO's error backoff at
    // time scale 1 waits 1–2 minutes after the first failure, 2–4 after the second, ...
    let failing = worker("worker-0", 1).replacen(
        "metadata:\n  name: worker-0\n",
        "metadata:\n  name: worker-0\n  annotations:\n    fixture.bmhctl.metal3.io/validate-error: BMC says no\n",
        1,
    );
    let lab = Lab::new().file("hosts.yaml", &file_of(&[failing]));
    run(&lab, &["apply", "-f", "hosts.yaml"]).expect_code(0);
    let watch = Watch::start_env(&lab, &[("BMHCTL_TIME_SCALE", "1")]);
    let errors = |h: &serde_json::Value| h["status"]["errorCount"].as_i64().unwrap_or(0);
    run(&lab, &["wait", "--for", "error", "--timeout", "10s"]).expect_code(0);
    let first = errors(&host_json(&lab, "worker-0"));
    assert!(first >= 1, "{}", host_json(&lab, "worker-0"));
    // Without a retry the backoff wait holds: no new attempt, the count stays.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(errors(&host_json(&lab, "worker-0")), first);

    let started = Instant::now();
    for i in 1..=3 {
        // Several within one second: the annotation's value (the time asked, in seconds) is
        // the same each time, and each is acted on.
        run(&lab, &["retry", "worker-0", "--wait", "--timeout", "10s"]).expect_code(0);
        // The attempt happened now (the annotation is consumed by the pass that made it, in
        // the same write as its status), failed again and was counted: not reset.
        let h = host_json(&lab, "worker-0");
        assert_eq!(errors(&h), first + i, "retry {i}: {h}");
        assert_eq!(h["status"]["errorType"], "registration error", "{h}");
        assert!(
            h["status"]["errorMessage"]
                .as_str()
                .is_some_and(|m| m.contains("BMC says no")),
            "{h}"
        );
        assert!(
            h["metadata"]
                .get("annotations")
                .is_none_or(|a| a.get("bmhctl.metal3.io/retry").is_none()),
            "{h}"
        );
    }
    // Three attempts in far less than the one backoff wait (a minute) they skipped.
    assert!(started.elapsed() < Duration::from_secs(30));
    // The backoff (now 8–16 minutes) holds again.
    std::thread::sleep(Duration::from_millis(1000));
    assert_eq!(errors(&host_json(&lab, "worker-0")), first + 3);
    let (code, _, stderr) = watch.stop();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn verbs_with_watch_running_are_acted_on_promptly() {
    let lab = provisioned_lab();
    let watch = Watch::start(&lab);
    let started = Instant::now();
    run(
        &lab,
        &["power", "off", "worker-0", "--wait", "--timeout", "30s"],
    )
    .expect_code(0);
    assert!(started.elapsed() < Duration::from_secs(10));
    run(
        &lab,
        &["power", "on", "worker-0", "--wait", "--timeout", "30s"],
    )
    .expect_code(0);
    let (code, stdout, _) = watch.stop();
    assert_eq!(code, 0);
    assert!(
        stdout.contains("default/worker-0 provisioned OK power off"),
        "{stdout}"
    );
}

#[test]
fn wait_reports_unknown_states_and_timeouts() {
    let lab = Lab::new().file("hosts.yaml", &file_of(&[spare("spare-0", 1)]));
    run(&lab, &["apply", "-f", "hosts.yaml"]).expect_code(0);
    let bad = run(&lab, &["wait", "--for", "bogus"]).expect_code(2);
    assert!(
        bad.stderr.contains("externally provisioned"),
        "{}",
        bad.stderr
    );
    // A jsonpath condition is never known unreachable: only the timeout ends this wait.
    let t = run(
        &lab,
        &[
            "wait",
            "--for=jsonpath={.status.provisioning.state}=never",
            "--timeout",
            "1s",
        ],
    )
    .expect_code(1);
    assert!(t.stderr.contains("timed out"), "{}", t.stderr);
    let missing = run(&lab, &["pause", "nope"]).expect_code(2);
    assert!(
        missing.stderr.contains("no BareMetalHost named nope"),
        "{}",
        missing.stderr
    );
}

#[test]
fn watch_refuses_a_host_made_invalid_by_a_hand_edit_until_it_is_fixed() {
    let lab = Lab::new().file("hosts.yaml", &file_of(&[spare("spare-0", 1)]));
    run(&lab, &["apply", "-f", "hosts.yaml"]).expect_code(0);
    let watch = Watch::start(&lab);
    run(&lab, &["wait", "--for", "goal", "--timeout", "60s"]).expect_code(0);
    let path = lab.path("store/baremetalhosts/default/spare-0.yaml");
    let good = std::fs::read_to_string(&path).unwrap();
    // invalid, and asking for a power change that a reconciled host would get
    let bad = good.replacen("00:11:22:33:55:01", "not-a-mac", 1).replacen(
        "  online: true\n",
        "  online: false\n",
        1,
    );
    assert!(bad.contains("online: false") && bad.contains("poweredOn: true"));
    // hand edit the store, as `apply` would never let through
    std::fs::write(&path, &bad).unwrap();
    // (a pass already in flight may still save its status)
    std::thread::sleep(Duration::from_secs(1));
    let refused = std::fs::read_to_string(&path).unwrap();
    assert!(refused.contains("bootMACAddress: not-a-mac"), "{refused}");
    // watch does not reconcile it: it stays powered on although `online: false`
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), refused);
    assert!(refused.contains("poweredOn: true"), "{refused}");
    // fixed (the MAC only): reconciled again, and powered off as asked
    std::fs::write(&path, refused.replacen("not-a-mac", "00:11:22:33:55:01", 1)).unwrap();
    run(&lab, &["wait", "--for", "powered-off", "--timeout", "60s"]).expect_code(0);
    let (code, _, stderr) = watch.stop();
    assert_eq!(code, 0);
    assert!(
        stderr.contains("refused by BMO's admission rules")
            && stderr.contains("spec.bootMACAddress")
            && stderr.contains("invalid MAC address"),
        "{stderr}"
    );
}

/// A hand edit that changes a provisioned host's `bootMACAddress` and asks for a power change
/// a reconciled host would get, then the MAC put back: BMO's update rules (validateChanges in
/// its baremetalhost_validation.go) compare every edit with the last accepted spec, so the
/// edit is refused and nothing of it reaches the provisioner until it is reverted.
fn check_mac_change_refused_then_reverted(
    path: &std::path::Path,
    wait_powered_off: impl FnOnce(),
) -> String {
    let good = std::fs::read_to_string(path).unwrap();
    assert!(
        good.contains("provisioned") && good.contains("poweredOn: true"),
        "{good}"
    );
    let bad = good
        .replacen("00:11:22:33:44:01", "00:11:22:33:44:99", 1)
        .replacen("  online: true\n", "  online: false\n", 1);
    assert!(bad.contains("bootMACAddress: 00:11:22:33:44:99"), "{bad}");
    std::fs::write(path, &bad).unwrap();
    // (a pass already in flight may still save its status)
    std::thread::sleep(Duration::from_secs(1));
    let refused = std::fs::read_to_string(path).unwrap();
    assert!(
        refused.contains("bootMACAddress: 00:11:22:33:44:99"),
        "{refused}"
    );
    // Not reconciled: still powered on although `online: false`, and nothing written.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(std::fs::read_to_string(path).unwrap(), refused);
    assert!(refused.contains("poweredOn: true"), "{refused}");
    // The MAC put back: driven again, and powered off as asked.
    std::fs::write(
        path,
        refused.replacen("00:11:22:33:44:99", "00:11:22:33:44:01", 1),
    )
    .unwrap();
    wait_powered_off();
    let after = std::fs::read_to_string(path).unwrap();
    // The refused MAC never reached the provisioner, so no status carries it.
    assert!(!after.contains("44:99"), "{after}");
    assert!(
        after.contains("provisioned") && after.contains("poweredOn: false"),
        "{after}"
    );
    after
}

/// What a refused MAC edit leaves in watch's output: BMO's message, naming the field.
fn assert_mac_change_reported(stderr: &str) {
    assert!(
        stderr.contains("refused by BMO's admission rules")
            && stderr.contains("spec.bootMACAddress")
            && stderr.contains("bootMACAddress can not be changed once it is set"),
        "{stderr}"
    );
}

#[test]
fn watch_refuses_a_hand_edit_of_the_store_that_bmos_update_rules_refuse() {
    let lab = Lab::new().file("hosts.yaml", &file_of(&[worker("worker-0", 1)]));
    run(&lab, &["apply", "-f", "hosts.yaml"]).expect_code(0);
    let watch = Watch::start(&lab);
    run(&lab, &["wait", "--for", "goal", "--timeout", "60s"]).expect_code(0);
    let path = lab.path("store/baremetalhosts/default/worker-0.yaml");
    check_mac_change_refused_then_reverted(&path, || {
        run(&lab, &["wait", "--for", "powered-off", "--timeout", "60s"]).expect_code(0);
    });
    let (code, _, stderr) = watch.stop();
    assert_eq!(code, 0, "{stderr}");
    assert_mac_change_reported(&stderr);
}

#[test]
fn watch_on_a_file_refuses_a_hand_edit_that_bmos_update_rules_refuse() {
    use std::io::BufRead;
    let lab = Lab::new().file("hosts.yaml", &file_of(&[worker("worker-0", 1)]));
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
        .current_dir(lab.path(""))
        .envs(ENV)
        .args(["watch", "-f", "hosts.yaml"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start bmhctl watch -f");
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.starts_with("watching hosts.yaml"), "{line}");
    let watch = Watch { child, stderr };
    let wait_for = |what: &str| {
        lab.run_env(
            &[
                "wait",
                "-f",
                "hosts.yaml",
                "--for",
                what,
                "worker-0",
                "--timeout",
                "60s",
            ],
            &ENV,
        )
        .expect_code(0);
    };
    wait_for("provisioned");
    wait_for("powered-on");
    check_mac_change_refused_then_reverted(&lab.path("hosts.yaml"), || wait_for("powered-off"));
    let (code, _, stderr) = watch.stop();
    assert_eq!(code, 0, "{stderr}");
    assert_mac_change_reported(&stderr);
}
