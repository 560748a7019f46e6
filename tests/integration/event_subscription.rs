//! BMCEventSubscription end to end through the binary and the fixture provisioner: made by
//! `provision` (status.subscriptionID written into the file), in error (status.error), removed
//! by `watch` when its document goes, in the store, round-tripped through export/apply, and
//! refused at file:line when BMO's admission would refuse it. The header Secret's value is in
//! no output. (Against Ironic: src/ironic/provisioner/tests/event_subscription.rs; the lab's
//! sushy-tools serves no EventService, see docs/ironic.md.)

use crate::lab::{Lab, Reaped, host, secret, without_status};
use std::io::BufRead;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The header value, and as base64 (how a Secret's `data` holds it).
const HEADER_VALUE: &str = "Bearer s3cret-header-value";
const HEADER_VALUE_B64: &str = "QmVhcmVyIHMzY3JldC1oZWFkZXItdmFsdWU=";

fn headers_secret() -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: event-headers\ndata:\n  Authorization: {HEADER_VALUE_B64}\n"
    )
}

fn subscription(name: &str, host: &str, extra_metadata: &str) -> String {
    format!(
        "apiVersion: metal3.io/v1alpha1\nkind: BMCEventSubscription\nmetadata:\n  name: {name}\n{extra_metadata}spec:\n  hostName: {host}\n  destination: https://events.example.com/hook\n  context: rack-7\n  httpHeadersRef:\n    name: event-headers\n    namespace: default\n"
    )
}

fn hosts_file(sub: &str) -> String {
    format!(
        "{}---\n{}---\n{}---\n{sub}",
        secret("bmc-secret"),
        headers_secret(),
        host("worker-0", "")
    )
}

fn assert_no_header_value(what: &str, text: &str) {
    assert!(
        !text.contains(HEADER_VALUE) && !text.contains(HEADER_VALUE_B64),
        "{what} shows the header value:\n{text}"
    );
}

fn subscription_status(text: &str) -> &str {
    let at = text
        .find("kind: BMCEventSubscription")
        .expect("the subscription's document");
    let doc = &text[at..];
    doc.find("\nstatus:\n").map_or("", |s| &doc[s + 1..])
}

#[test]
fn provision_makes_the_subscription_and_writes_its_id() {
    let text = hosts_file(&subscription("worker-0-events", "worker-0", ""));
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(0);
    assert!(
        run.stderr.contains(
            "bmhctl: BMCEventSubscription default/worker-0-events: subscription \
             fixture-default-worker-0-events created"
        ),
        "{}",
        run.stderr
    );
    assert_no_header_value("provision", &(run.stdout.clone() + &run.stderr));
    let after = lab.read("hosts.yaml");
    assert_eq!(
        subscription_status(&after),
        "status:\n  subscriptionID: fixture-default-worker-0-events\n"
    );
    assert_eq!(
        without_status(&after),
        text,
        "only status blocks may change"
    );

    // Made once: a second run leaves the file as it is.
    let again = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(0);
    assert!(
        !again.stderr.contains("BMCEventSubscription"),
        "{}",
        again.stderr
    );
    assert_eq!(lab.read("hosts.yaml"), after);

    let get = lab.run(&["get", "bes", "-f", "hosts.yaml"]).expect_code(0);
    insta::assert_snapshot!("get_bmceventsubscriptions", get.stdout);
    let describe = lab
        .run(&["describe", "bmceventsubscriptions", "-f", "hosts.yaml"])
        .expect_code(0);
    insta::assert_snapshot!("describe_bmceventsubscription", describe.stdout);
    let host = lab
        .run(&["describe", "worker-0", "-f", "hosts.yaml"])
        .expect_code(0);
    assert!(
        host.stdout.ends_with(
            "BMC Event Subscriptions:\n  worker-0-events  https://events.example.com/hook  \
             fixture-default-worker-0-events\n"
        ),
        "{}",
        host.stdout
    );
    for (what, out) in [
        ("get", get),
        ("describe", describe),
        ("describe host", host),
    ] {
        assert_no_header_value(what, &(out.stdout + &out.stderr));
    }
}

#[test]
fn a_subscription_outside_the_hosts_files_is_refused_where_status_is_written() {
    let text = format!("{}---\n{}", secret("bmc-secret"), host("worker-0", ""));
    let subs = format!(
        "{}---\n{}",
        headers_secret(),
        subscription("worker-0-events", "worker-0", "")
    );
    let lab = Lab::new()
        .file("hosts.yaml", &text)
        .file("subs.yaml", &subs);
    let run = lab
        .run(&[
            "provision",
            "--provisioner",
            "fixture",
            "hosts.yaml",
            "subs.yaml",
        ])
        .expect_code(2);
    assert_eq!(
        run.stderr,
        "error: subs.yaml:11:9: BMCEventSubscription default/worker-0-events: in a file holding \
         no BareMetalHost: bmhctl writes a subscription's status only into a file of hosts; move \
         it into one\n"
    );
    assert_eq!(lab.read("hosts.yaml"), text, "nothing written");
    // Reading it is fine.
    lab.run(&["get", "bes", "-f", "hosts.yaml", "-f", "subs.yaml"])
        .expect_code(0);
}

#[test]
fn a_refused_subscription_gets_bmo_s_error_and_the_cause_is_told() {
    let sub = subscription(
        "worker-0-events",
        "worker-0",
        "  annotations:\n    fixture.bmhctl.metal3.io/subscription-error: the BMC refused it\n",
    );
    let lab = Lab::new().file("hosts.yaml", &hosts_file(&sub));
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(0);
    assert!(
        run.stderr.contains(
            "bmhctl: BMCEventSubscription default/worker-0-events: error: the BMC refused it"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(
        subscription_status(&lab.read("hosts.yaml")),
        "status:\n  error: failed to create a subscription\n"
    );
    let get = lab
        .run(&["get", "bmcevent", "-o", "wide", "-f", "hosts.yaml"])
        .expect_code(0);
    assert!(
        get.stdout.contains("failed to create a subscription"),
        "{}",
        get.stdout
    );
}

/// BMO's `createSubscription` writes "failed to retrieve HTTP headers secret", then its
/// `handleError` overwrites that with "failed to create a subscription": the text it leaves.
#[test]
fn a_missing_header_secret_leaves_bmo_s_final_error() {
    let text = format!(
        "{}---\n{}---\n{}",
        secret("bmc-secret"),
        host("worker-0", ""),
        subscription("worker-0-events", "worker-0", "")
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(0);
    assert_eq!(
        subscription_status(&lab.read("hosts.yaml")),
        "status:\n  error: failed to create a subscription\n",
        "{}",
        run.stderr
    );
}

#[test]
fn a_subscription_the_webhook_refuses_is_bad_input_at_its_line() {
    let refused = "apiVersion: metal3.io/v1alpha1\nkind: BMCEventSubscription\nmetadata:\n  name: bad\nspec:\n  hostName: \"\"\n  destination: https://events.example.com\n";
    let typo = "apiVersion: metal3.io/v1alpha1\nkind: BMCEventSubscription\nmetadata:\n  name: typo\nspec:\n  hostName: worker-0\n  destinaton: https://events.example.com/\n";
    let twice = "apiVersion: metal3.io/v1alpha1\nkind: BMCEventSubscription\nmetadata:\n  name: typo\nspec:\n  hostName: worker-0\n  destination: https://events.example.com/\n";
    let text = hosts_file(&format!("{refused}---\n{typo}---\n{twice}"));
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(2);
    // Lines counted from the first subscription's `apiVersion:` line.
    let first = 1 + text
        .lines()
        .position(|l| l == "kind: BMCEventSubscription")
        .unwrap();
    let line = |n: usize| first + n - 2;
    let expected = format!(
        "error: hosts.yaml:{}:13: BMCEventSubscription default/bad: spec.hostName: hostName cannot be empty\n\
         hosts.yaml:{}:16: BMCEventSubscription default/bad: spec.destination: hostname-only destination must have a trailing slash\n\
         hosts.yaml:{}:15: BMCEventSubscription default/typo: spec.destinaton: unknown field (did you mean destination?)\n\
         hosts.yaml:{}:9: BMCEventSubscription default/typo: defined more than once (first at hosts.yaml:{}:9)\n",
        line(6),
        line(7),
        line(15),
        line(20),
        line(12),
    );
    assert_eq!(run.stderr, expected);
    assert_eq!(lab.read("hosts.yaml"), text, "nothing written");
    assert!(!lab.path(".bmhctl").exists());
}

/// A `watch` whose stderr is read line by line on a thread, so that a missing line fails the
/// test in time; killed (SIGKILL) when dropped if still running.
struct Watching {
    child: Reaped,
    lines: std::sync::mpsc::Receiver<String>,
    reader: Option<std::thread::JoinHandle<()>>,
    seen: String,
}

impl Watching {
    fn start(lab: &Lab, args: &[&str]) -> Watching {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
            .current_dir(lab.path(""))
            .env("BMHCTL_PROVISIONER", "fixture")
            .env("BMHCTL_TIME_SCALE", "0.01")
            .env("BMHCTL_SEED", "1")
            .args(["watch", "--poll-interval", "100ms"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start bmhctl watch");
        let (tx, lines) = std::sync::mpsc::channel::<String>();
        let stderr = child.stderr.take().unwrap();
        let reader = std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines() {
                if tx.send(line.unwrap_or_default() + "\n").is_err() {
                    break;
                }
            }
        });
        Watching {
            child: Reaped(child),
            lines,
            reader: Some(reader),
            seen: String::new(),
        }
    }

    fn wait_for(&mut self, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.seen.contains(what) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push_str(&line),
                Err(_) => panic!("no {what:?} in:\n{}", self.seen),
            }
        }
    }

    /// SIGTERM; answers the exit code and everything it wrote on stderr.
    fn stop(mut self) -> (Option<i32>, String) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = self.child.wait().unwrap();
        if let Some(r) = self.reader.take() {
            r.join().unwrap();
        }
        let rest: String = self.lines.try_iter().collect();
        (status.code(), std::mem::take(&mut self.seen) + &rest)
    }
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn watch_removes_the_subscription_when_its_document_goes() {
    let text = hosts_file(&subscription("worker-0-events", "worker-0", ""));
    let lab = Lab::new().file("hosts.yaml", &text);
    let mut watch = Watching::start(&lab, &["-f", "hosts.yaml"]);
    watch.wait_for("subscription fixture-default-worker-0-events created");
    wait_until("the status in the file", || {
        lab.read("hosts.yaml").contains("subscriptionID:")
    });
    // The user removes the document: its subscription is removed from the BMC.
    let now = lab.read("hosts.yaml");
    let cut = now.rfind("---\napiVersion: metal3.io/v1alpha1\nkind: BMCEventSubscription");
    // Saved as editors save (a new file renamed over the old): an in-place rewrite can be read
    // empty half-way, and then the host is gone too and the subscription is only forgotten.
    std::fs::write(lab.path(".hosts.yaml.swp"), &now[..cut.unwrap()]).unwrap();
    std::fs::rename(lab.path(".hosts.yaml.swp"), lab.path("hosts.yaml")).unwrap();
    watch.wait_for("BMCEventSubscription default/worker-0-events: subscription deleted");
    let (code, stderr) = watch.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert_no_header_value("watch", &stderr);
}

#[test]
fn watch_on_the_store_makes_and_removes_subscriptions() {
    let text = hosts_file(&subscription("worker-0-events", "worker-0", ""));
    let lab = Lab::new().file("hosts.yaml", &text);
    lab.run(&["apply", "-f", "hosts.yaml", "--store", "store"])
        .expect_code(0);
    let mut watch = Watching::start(&lab, &["--store", "store"]);
    watch.wait_for("subscription fixture-default-worker-0-events created");
    let object = lab.path("store/bmceventsubscriptions/default/worker-0-events.yaml");
    wait_until("the status in the store", || {
        std::fs::read_to_string(&object)
            .unwrap()
            .contains("subscriptionID: fixture-default-worker-0-events")
    });
    std::fs::remove_file(&object).unwrap();
    watch.wait_for("BMCEventSubscription default/worker-0-events: subscription deleted");
    let (code, stderr) = watch.stop();
    assert_eq!(code, Some(0), "{stderr}");
    assert_no_header_value("watch --store", &stderr);
}

#[test]
fn the_store_keeps_subscriptions_and_export_apply_round_trips_them() {
    let text = hosts_file(&subscription("worker-0-events", "worker-0", ""));
    let lab = Lab::new().file("hosts.yaml", &text);
    // Files → export → apply into a store.
    lab.run(&["export", "-f", "hosts.yaml", "--output-file", "export.yaml"])
        .expect_code(0);
    let exported = lab.read("export.yaml");
    assert!(
        exported.contains("kind: BMCEventSubscription"),
        "{exported}"
    );
    assert!(exported.contains("name: event-headers"), "{exported}");
    let apply = lab
        .run(&["apply", "-f", "export.yaml", "--store", "store"])
        .expect_code(0);
    assert!(
        apply
            .stdout
            .contains("bmceventsubscription.metal3.io/worker-0-events created"),
        "{}",
        apply.stdout
    );
    let run = lab
        .run(&["reconcile", "--provisioner", "fixture", "--store", "store"])
        .expect_code(0);
    assert!(
        run.stderr
            .contains("subscription fixture-default-worker-0-events created"),
        "{}",
        run.stderr
    );
    let stored = lab.read("store/bmceventsubscriptions/default/worker-0-events.yaml");
    assert!(
        stored.ends_with("status:\n  subscriptionID: fixture-default-worker-0-events\n"),
        "{stored}"
    );
    let get = lab.run(&["get", "bes", "--store", "store"]).expect_code(0);
    assert!(
        get.stdout
            .contains("worker-0-events  worker-0  fixture-default-worker-0-events"),
        "{}",
        get.stdout
    );
    // Store → export → apply into a second store: the same subscription, spec and all.
    lab.run(&["export", "--store", "store", "--output-file", "again.yaml"])
        .expect_code(0);
    let again = lab.read("again.yaml");
    let sub_of = |t: &str| {
        let at = t.find("kind: BMCEventSubscription").unwrap();
        let end = t[at..].find("\n---").map_or(t.len(), |e| at + e);
        t[at..end].to_string()
    };
    assert_eq!(sub_of(&again), sub_of(&exported));
    lab.run(&["apply", "-f", "again.yaml", "--store", "second"])
        .expect_code(0);
    let a = lab
        .run(&[
            "get",
            "bes",
            "worker-0-events",
            "-o",
            "json",
            "--store",
            "store",
        ])
        .expect_code(0)
        .json();
    let b = lab
        .run(&[
            "get",
            "bes",
            "worker-0-events",
            "-o",
            "json",
            "--store",
            "second",
        ])
        .expect_code(0)
        .json();
    assert_eq!(a["spec"], b["spec"]);
    for (what, out) in [("get", get), ("reconcile", run)] {
        assert_no_header_value(what, &(out.stdout + &out.stderr));
    }
}
