//! Progress and logs that CI logs can hold, through the real binary: bars only on a terminal
//! that can redraw, timestamped plain lines on `TERM=dumb`, under `CI=true` and into a pipe,
//! progress on stderr whatever `-o` says, colours only on a terminal and never with NO_COLOR.
//!
//! A terminal is a real pseudo-terminal (openpty) as bmhctl's stderr.

use crate::lab::{Lab, host, secret};
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

fn lab(hosts: usize) -> Lab {
    let mut text = secret("bmc-secret");
    for i in 0..hosts {
        text.push_str("---\n");
        text.push_str(&host(&format!("worker-{i}"), IMAGE));
    }
    Lab::new().file("hosts.yaml", &text)
}

/// What a run printed: its exit code, stdout, and what its stderr terminal (or pipe) got.
struct Printed {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `bmhctl args` in `lab` with the fixture, small delays and `envs`; stderr is a
/// pseudo-terminal when `terminal`, else a pipe. `TERM`, `CI` and `NO_COLOR` are cleared first.
fn run(lab: &Lab, args: &[&str], envs: &[(&str, &str)], terminal: bool) -> Printed {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"));
    cmd.current_dir(lab.path(""))
        .env("BMHCTL_PROVISIONER", "fixture")
        .env("BMHCTL_TIME_SCALE", "0.01")
        .env("BMHCTL_SEED", "1")
        .env_remove("TERM")
        .env_remove("CI")
        .env_remove("NO_COLOR")
        .env_remove("BMHCTL_LOG")
        .envs(envs.iter().copied())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    let reader = if terminal {
        let (master, slave) = pty();
        cmd.stderr(Stdio::from(slave));
        Some(master)
    } else {
        cmd.stderr(Stdio::piped());
        None
    };
    let mut child = cmd.spawn().expect("start bmhctl");
    // The slave end now lives in the child only: the master reads until the child is gone.
    drop(cmd);
    let from_terminal = reader.map(|master| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            // Linux ends a pty's reads with EIO once the other end is closed: what came before
            // is kept.
            let _ = std::fs::File::from(master).read_to_end(&mut bytes);
            bytes
        })
    });
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let mut piped = String::new();
    if let Some(mut e) = child.stderr.take() {
        e.read_to_string(&mut piped).unwrap();
    }
    let code = child.wait().unwrap().code().unwrap_or(-1);
    let stderr = match from_terminal {
        Some(t) => String::from_utf8_lossy(&t.join().unwrap()).into_owned(),
        None => piped,
    };
    Printed {
        code,
        stdout,
        stderr,
    }
}

/// A pseudo-terminal: its master end and the slave end a child gets as a stream.
pub(crate) fn pty() -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two descriptors it opened into the integers given; they are owned
    // here from then on.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// `2026-12-01T14:15:11Z default/worker-0: (new) -> registering`: a timestamped plain line.
fn stamped(line: &str) -> bool {
    let Some((stamp, rest)) = line.split_once(' ') else {
        return false;
    };
    chrono::NaiveDateTime::parse_from_str(stamp, "%Y-%m-%dT%H:%M:%SZ").is_ok() && !rest.is_empty()
}

/// The progress of a run in plain lines: every line timestamped, no escape sequence, each
/// host's state changes there.
#[track_caller]
fn assert_plain_lines(stderr: &str, hosts: usize) {
    let lines: Vec<&str> = stderr.lines().map(|l| l.trim_end_matches('\r')).collect();
    assert!(!stderr.contains('\x1b'), "escape sequences:\n{stderr}");
    assert!(
        lines.iter().all(|l| stamped(l)),
        "a line without a timestamp:\n{stderr}"
    );
    for i in 0..hosts {
        for change in [
            format!("default/worker-{i}: (new) -> registering"),
            format!("default/worker-{i}: provisioned (done)"),
        ] {
            assert!(
                lines.iter().any(|l| l.ends_with(&change)),
                "no {change:?}:\n{stderr}"
            );
        }
    }
}

#[test]
fn a_dumb_terminal_gets_timestamped_plain_lines() {
    let lab = lab(2);
    let p = run(
        &lab,
        &["provision", "hosts.yaml"],
        &[("TERM", "dumb")],
        true,
    );
    assert_eq!(p.code, 0, "{}", p.stderr);
    assert_plain_lines(&p.stderr, 2);
}

#[test]
fn ci_gets_timestamped_plain_lines_even_on_a_terminal() {
    let lab = lab(2);
    let p = run(
        &lab,
        &["provision", "hosts.yaml"],
        &[("TERM", "xterm-256color"), ("CI", "true")],
        true,
    );
    assert_eq!(p.code, 0, "{}", p.stderr);
    assert_plain_lines(&p.stderr, 2);
}

/// The other side of the two tests above: a capable terminal outside CI gets bars (redrawn in
/// place with escape sequences), not lines.
#[test]
fn a_capable_terminal_gets_bars() {
    let lab = lab(2);
    let p = run(
        &lab,
        &["provision", "hosts.yaml"],
        &[("TERM", "xterm-256color")],
        true,
    );
    assert_eq!(p.code, 0, "{}", p.stderr);
    assert!(p.stderr.contains('\x1b'), "no bars:\n{}", p.stderr);
    assert!(
        !p.stderr.lines().any(stamped),
        "plain lines on a capable terminal:\n{}",
        p.stderr
    );
    // `--progress plain` asks for the lines there too.
    let lab = self::lab(1);
    let p = run(
        &lab,
        &["provision", "hosts.yaml", "--progress", "plain"],
        &[("TERM", "xterm-256color")],
        true,
    );
    assert_eq!(p.code, 0, "{}", p.stderr);
    assert_plain_lines(&p.stderr, 1);
}

#[test]
fn a_pipe_gets_plain_lines_and_json_on_stdout_keeps_the_progress_on_stderr() {
    let lab = lab(2);
    let p = run(&lab, &["provision", "hosts.yaml", "-o", "json"], &[], false);
    assert_eq!(p.code, 0, "{}", p.stderr);
    assert_plain_lines(&p.stderr, 2);
    let doc: serde_json::Value = serde_json::from_str(&p.stdout).expect("JSON on stdout");
    assert_eq!(doc["kind"], "ProvisionResult");
}

#[test]
fn progress_none_prints_no_progress() {
    let lab = lab(1);
    let p = run(
        &lab,
        &["provision", "hosts.yaml", "--progress", "none"],
        &[],
        false,
    );
    assert_eq!(p.code, 0, "{}", p.stderr);
    assert_eq!(p.stderr, "");
    assert!(p.stdout.contains("worker-0"), "{}", p.stdout);
}

/// Debug logs: coloured on a terminal only, never with NO_COLOR, JSON lines when asked.
#[test]
fn log_colours_only_on_a_terminal_and_json_logs_on_request() {
    let args = ["provision", "hosts.yaml", "-vv", "--progress", "none"];
    let debug_line = "the provisioner does not report changes";
    let term = [("TERM", "xterm-256color")];
    let p = run(&lab(1), &args, &term, true);
    assert_eq!(p.code, 0, "{}", p.stderr);
    assert!(p.stderr.contains(debug_line), "{}", p.stderr);
    assert!(
        p.stderr.contains("\x1b["),
        "no colour on a terminal:\n{}",
        p.stderr
    );

    let p = run(&lab(1), &args, &[term[0], ("NO_COLOR", "1")], true);
    assert!(p.stderr.contains(debug_line), "{}", p.stderr);
    assert!(
        !p.stderr.contains('\x1b'),
        "colour with NO_COLOR:\n{}",
        p.stderr
    );

    let p = run(&lab(1), &args, &[], false);
    assert!(p.stderr.contains(debug_line), "{}", p.stderr);
    assert!(
        !p.stderr.contains('\x1b'),
        "colour into a pipe:\n{}",
        p.stderr
    );
    // Text logs carry their time as the progress lines do.
    let debug = p.stderr.lines().find(|l| l.contains(debug_line)).unwrap();
    assert!(stamped(debug), "{debug}");
    assert_eq!(debug.split(' ').nth(1), Some("DEBUG"), "{debug}");

    let mut json_args = args.to_vec();
    json_args.extend(["--log-format", "json"]);
    let p = run(&lab(1), &json_args, &[], false);
    assert_eq!(p.code, 0, "{}", p.stderr);
    let lines: Vec<serde_json::Value> = p
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let line = lines
        .iter()
        .find(|l| {
            l["message"]
                .as_str()
                .is_some_and(|m| m.contains(debug_line))
        })
        .unwrap_or_else(|| panic!("no debug line in {}", p.stderr));
    assert_eq!(line["level"], "DEBUG");
    assert!(line["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')));
}

/// `-v --log-format json --progress plain`: every line on stderr is one JSON object, the
/// progress lines and events with their host, and so is the final error of a failed command.
#[test]
fn every_stderr_line_is_json_with_log_format_json() {
    let lab = lab(2);
    let args = [
        "provision",
        "hosts.yaml",
        "-v",
        "--log-format",
        "json",
        "--progress",
        "plain",
    ];
    let p = run(&lab, &args, &[], false);
    assert_eq!(p.code, 0, "{}", p.stderr);
    let lines: Vec<serde_json::Value> = p
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    for l in &lines {
        assert!(
            l["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')),
            "{l}"
        );
        assert!(l["level"].is_string() && l["message"].is_string(), "{l}");
    }
    for i in 0..2 {
        let host = format!("default/worker-{i}");
        let said = |message: &str| {
            lines
                .iter()
                .any(|l| l["host"] == host.as_str() && l["message"] == message)
        };
        assert!(said("(new) -> registering"), "{}", p.stderr);
        assert!(said("provisioned (done)"), "{}", p.stderr);
        assert!(
            lines
                .iter()
                .any(|l| l["host"] == host.as_str() && l["reason"] == "Registered"),
            "no event: {}",
            p.stderr
        );
    }

    let p = run(
        &lab,
        &["get", "-f", "missing.yaml", "--log-format", "json"],
        &[],
        false,
    );
    assert_ne!(p.code, 0);
    let lines: Vec<serde_json::Value> = p
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 1, "{}", p.stderr);
    assert_eq!(lines[0]["level"], "ERROR", "{}", p.stderr);
    let message = lines[0]["message"].as_str().unwrap();
    assert!(
        message.contains("missing.yaml") && !message.starts_with("error:"),
        "{message}"
    );
}

/// Standard error closed by its reader (`2>&1 >/dev/null | head -3`): the debug logs and the
/// progress lines are dropped and the run ends as it would, rather than stalling on a pass
/// whose log line could not be written.
#[test]
fn a_closed_stderr_does_not_stall_a_run() {
    let lab = lab(2);
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
        .current_dir(lab.path(""))
        .env("BMHCTL_PROVISIONER", "fixture")
        .env("BMHCTL_TIME_SCALE", "0")
        .env("BMHCTL_CONFIG", lab.path("no-config.yaml"))
        .args(["provision", "hosts.yaml", "-vv", "--progress", "plain"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the run did not end with its stderr closed");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
}
