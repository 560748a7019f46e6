//! bmhctl under systemd, without systemd: `bmhctl watch` as a `Type=notify` service (the
//! sd_notify(3) datagrams it sends to the socket `NOTIFY_SOCKET` names, received on a socket the
//! test binds), and its output when it goes to the journal (`JOURNAL_STREAM` naming it).

use crate::lab::{Lab, host, secret};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixDatagram;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The watchdog's time the test gives: a `WATCHDOG=1` is due at least every half of it.
const WATCHDOG: Duration = Duration::from_millis(1000);

fn hosts_file() -> String {
    format!(
        "{}---\n{}",
        secret("bmc-secret"),
        host("worker-0", "bootMACAddress: 00:11:22:33:44:01")
    )
}

/// The next datagram before `deadline`, with when it came.
fn next(socket: &UnixDatagram, deadline: Instant) -> Option<(Instant, String)> {
    let mut buf = [0u8; 4096];
    while Instant::now() < deadline {
        match socket.recv(&mut buf) {
            Ok(n) => {
                return Some((
                    Instant::now(),
                    String::from_utf8_lossy(&buf[..n]).into_owned(),
                ));
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => panic!("receiving from the notify socket: {e}"),
        }
    }
    None
}

fn says(message: &str, assignment: &str) -> bool {
    message.lines().any(|l| l == assignment)
}

#[test]
fn watch_tells_its_service_manager_ready_then_pings_the_watchdog_and_says_stopping() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    lab.run_env(
        &["apply", "-f", "hosts.yaml", "--store", "store"],
        &[("BMHCTL_PROVISIONER", "fixture")],
    )
    .expect_code(0);
    let socket_path = lab.path("notify.sock");
    let socket = UnixDatagram::bind(&socket_path).expect("bind the notify socket");
    socket
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut watch = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
        .current_dir(lab.path(""))
        .env("BMHCTL_PROVISIONER", "fixture")
        .env("BMHCTL_TIME_SCALE", "0.01")
        .env("BMHCTL_CONFIG", lab.path("no-bmhctl-config.yaml"))
        .env_remove("BMHCTL_CONTEXT")
        .env("NOTIFY_SOCKET", &socket_path)
        .env("WATCHDOG_USEC", WATCHDOG.as_micros().to_string())
        .env_remove("WATCHDOG_PID")
        .args(["watch", "--store", "store"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start bmhctl watch");
    struct Reap<'a>(&'a mut std::process::Child);
    impl Drop for Reap<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let watch = Reap(&mut watch);

    // READY=1 once the store's host is known (its status counts it).
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut before = Vec::new();
    let (ready_at, ready) = loop {
        let (at, m) = next(&socket, deadline)
            .unwrap_or_else(|| panic!("no READY=1 within 30 s; received {before:?}"));
        if says(&m, "READY=1") {
            break (at, m);
        }
        before.push(m);
    };
    assert!(
        says(&ready, "STATUS=watching 1 host in the store store"),
        "{ready}"
    );
    assert!(before.iter().all(|m| !m.contains("READY")), "{before:?}");

    // WATCHDOG=1 again and again, each within the watchdog's time of the one before.
    let mut last = ready_at;
    let mut longest = Duration::ZERO;
    let mut pings = 0;
    let mut statuses = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while pings < 5 {
        let (at, m) =
            next(&socket, deadline).unwrap_or_else(|| panic!("{pings} WATCHDOG=1 in 10 s"));
        if says(&m, "WATCHDOG=1") {
            longest = longest.max(at - last);
            last = at;
            pings += 1;
        }
        statuses.extend(
            m.lines()
                .filter(|l| l.starts_with("STATUS="))
                .map(String::from),
        );
        assert!(!says(&m, "READY=1"), "READY=1 twice: {m}");
    }
    assert!(longest < WATCHDOG, "{longest:?} between two pings");
    assert!(
        statuses
            .iter()
            .any(|s| s.starts_with("STATUS=watching 1 host, ")),
        "{statuses:?}"
    );

    // SIGTERM: STOPPING=1 at once, then the process ends.
    let ok = Command::new("kill")
        .args(["-TERM", &watch.0.id().to_string()])
        .status()
        .expect("kill")
        .success();
    assert!(ok);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, m) = next(&socket, deadline).expect("STOPPING=1 within 10 s of SIGTERM");
        if says(&m, "STOPPING=1") {
            break;
        }
    }
    let started = Instant::now();
    let status = loop {
        if let Some(status) = watch.0.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "still running");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
}

/// Runs bmhctl with standard error into a file that `JOURNAL_STREAM` names (`journal`), or
/// another one; returns the exit code and what it wrote there.
fn stderr_as_journal(lab: &Lab, args: &[&str], journal: bool) -> (i32, String) {
    let path = lab.path("stderr.log");
    let file = std::fs::File::create(&path).unwrap();
    let meta = file.metadata().unwrap();
    let inode = if journal { meta.ino() } else { meta.ino() + 1 };
    let status = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
        .current_dir(lab.path(""))
        .env("BMHCTL_TIME_SCALE", "0")
        .env("BMHCTL_CONFIG", lab.path("no-bmhctl-config.yaml"))
        .env_remove("BMHCTL_CONTEXT")
        .env("BMHCTL_LOG", "debug")
        .env("JOURNAL_STREAM", format!("{}:{inode}", meta.dev()))
        .args(args)
        .stdout(Stdio::null())
        .stderr(file)
        .status()
        .expect("run bmhctl");
    (
        status.code().unwrap_or(-1),
        std::fs::read_to_string(&path).unwrap(),
    )
}

#[test]
fn on_the_journal_every_line_carries_its_priority_and_no_time() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let run = ["provision", "-v", "--provisioner", "fixture", "hosts.yaml"];
    let (code, text) = stderr_as_journal(&lab, &run, true);
    assert_eq!(code, 0, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    for l in &lines {
        let (p, rest) = l
            .strip_prefix('<')
            .and_then(|l| l.split_once('>'))
            .unwrap_or_else(|| panic!("no priority: {l:?}\n{text}"));
        assert!(matches!(p, "3" | "4" | "6" | "7"), "{l}");
        // journald adds the time; no line starts with one (2026-...) nor colours itself.
        assert!(!rest.starts_with("20"), "{l}");
        assert!(!rest.contains('\u{1b}'), "{l}");
    }
    // The logs at their level (debug is 7), bmhctl's progress lines as information.
    assert!(lines.iter().any(|l| l.starts_with("<7>DEBUG ")), "{text}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("<6>default/worker-0: ") && l.ends_with("-> registering")),
        "{text}"
    );
    let (code, text) = stderr_as_journal(&lab, &["provision", "missing.yaml"], true);
    assert_eq!(code, 2);
    assert_eq!(text, "<3>error: missing.yaml: no such file or directory\n");
}

#[test]
fn a_stream_other_than_the_journal_keeps_its_plain_lines() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let run = ["provision", "-v", "--provisioner", "fixture", "hosts.yaml"];
    let (code, text) = stderr_as_journal(&lab, &run, false);
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("<6>") && !text.contains("<7>"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("20") && l.ends_with("default/worker-0: (new) -> registering")),
        "{text}"
    );
    let (_, text) = stderr_as_journal(&lab, &["provision", "missing.yaml"], false);
    assert_eq!(text, "error: missing.yaml: no such file or directory\n");
}
