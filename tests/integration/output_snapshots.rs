//! What the commands not covered by the result contract print, as snapshots: the `inspect` and
//! `retry` verbs, `apply`'s lines, `export`'s YAML, `get -o yaml`, `wait`, `plugin list` and
//! `plugin check`, `version` and `describe -f`. Times, uids and temp paths are replaced by
//! placeholders so each snapshot is the same every run.
//!
//! The plain-progress heartbeat ("n/N hosts decided, k waiting on the provisioner") has no
//! snapshot here: its 30 s interval is fixed in the binary, and a unit test in
//! src/runner/progress.rs covers it with a short interval.

use crate::lab::{Lab, host, secret};

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

/// The fixture, delays not slept, a fixed seed: the same passes every run.
const FIXTURE: [(&str, &str); 2] = [("BMHCTL_PROVISIONER", "fixture"), ("BMHCTL_SEED", "1")];

use crate::canary::PASSWORD_B64;

fn hosts_file() -> String {
    let mut s = secret("bmc-secret");
    for h in [
        host(
            "worker-0",
            &format!("bootMACAddress: 00:11:22:33:44:01\n{IMAGE}"),
        )
        .replace(
            "metadata:\n  name: worker-0\n",
            "metadata:\n  name: worker-0\n  labels:\n    rack: r1\n",
        ),
        host("spare-0", "bootMACAddress: 00:11:22:33:55:01"),
    ] {
        s.push_str("---\n");
        s.push_str(&h);
    }
    s
}

fn run(lab: &Lab, args: &[&str]) -> crate::lab::Run {
    lab.run_env(args, &FIXTURE)
}

/// Hosts in files, driven once by the fixture to their goals.
fn provisioned() -> Lab {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    run(&lab, &["provision", "-q", "hosts.yaml"]).expect_code(0);
    lab
}

/// Hosts in a store, driven once by the fixture to their goals.
fn store() -> Lab {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    run(&lab, &["apply", "--store", "store", "-f", "hosts.yaml"]).expect_code(0);
    run(&lab, &["reconcile", "--store", "store", "-q"]).expect_code(0);
    lab
}

/// `text` with what changes from run to run replaced wherever it appears (in a table, in YAML,
/// inside a JSON string): RFC 3339 times by `[time]`, uids by `[uid]`.
fn normalised(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if let Some(n) = time_at(&chars[i..]) {
            out.push_str("[time]");
            i += n;
        } else if let Some(n) = uid_at(&chars[i..]) {
            out.push_str("[uid]");
            i += n;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// The length of the RFC 3339 time `s` starts with (`2026-01-02T03:04:05.678Z`, `...+00:00`).
fn time_at(s: &[char]) -> Option<usize> {
    let digit = |i: usize| s.get(i).is_some_and(|c| c.is_ascii_digit());
    let at = |i: usize, c: char| s.get(i) == Some(&c);
    let shape = [4, 2, 2, 2, 2, 2];
    let seps = ['-', '-', 'T', ':', ':'];
    let mut i = 0;
    for (k, n) in shape.iter().enumerate() {
        if !(i..i + n).all(digit) {
            return None;
        }
        i += n;
        if k < seps.len() {
            if !at(i, seps[k]) {
                return None;
            }
            i += 1;
        }
    }
    if at(i, '.') {
        i += 1;
        while digit(i) {
            i += 1;
        }
    }
    if at(i, 'Z') {
        return Some(i + 1);
    }
    if (at(i, '+') || at(i, '-')) && digit(i + 1) && digit(i + 2) && at(i + 3, ':') {
        return Some(i + 6);
    }
    None
}

/// The length of the uid (8-4-4-4-12 hex digits) `s` starts with.
fn uid_at(s: &[char]) -> Option<usize> {
    let mut i = 0;
    for (k, n) in [8, 4, 4, 4, 12].iter().enumerate() {
        if !(i..i + n).all(|j| s.get(j).is_some_and(|c| c.is_ascii_hexdigit())) {
            return None;
        }
        i += n;
        if k < 4 {
            if s.get(i) != Some(&'-') {
                return None;
            }
            i += 1;
        }
    }
    // Part of a longer hex run is not a uid.
    (!s.get(i).is_some_and(|c| c.is_ascii_hexdigit())).then_some(i)
}

/// Each command and what it printed, as a reader of the snapshot sees a terminal.
fn transcript(lab: &Lab, runs: &[(&[&str], i32)]) -> String {
    let mut said = String::new();
    for (args, code) in runs {
        let r = run(lab, args).expect_code(*code);
        said.push_str(&format!("$ bmhctl {}\n{}", args.join(" "), r.stdout));
    }
    said
}

#[test]
fn normalising_replaces_times_and_uids_only() {
    assert_eq!(
        normalised("at 2026-12-01T15:07:45Z, \"t\":\"2026-12-01T15:07:45.123+00:00\" ok"),
        "at [time], \"t\":\"[time]\" ok"
    );
    assert_eq!(
        normalised("uid: 0f8fad5b-d9cb-469f-a165-70867728950e\n"),
        "uid: [uid]\n"
    );
    assert_eq!(
        normalised("2026-12-01 00:11:22:33:44:01"),
        "2026-12-01 00:11:22:33:44:01"
    );
}

#[test]
fn inspect_and_retry_say_what_they_did() {
    let lab = provisioned();
    let said = transcript(
        &lab,
        &[
            (&["inspect", "-f", "hosts.yaml", "spare-0"], 0),
            // Once only: a second retry within the same second would be "(unchanged)", in the
            // next one not (the annotation holds the time).
            (&["retry", "-f", "hosts.yaml", "worker-0"], 0),
        ],
    );
    assert!(lab.read("hosts.yaml").contains("inspect.metal3.io"));
    insta::assert_snapshot!("inspect_retry", said);
}

#[test]
fn apply_says_created_configured_unchanged() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let apply: &[&str] = &["apply", "--store", "store", "-f", "hosts.yaml"];
    let mut said = transcript(&lab, &[(apply, 0), (apply, 0)]);
    let changed = hosts_file().replace("rack: r1", "rack: r2");
    std::fs::write(lab.path("hosts.yaml"), changed).unwrap();
    said.push_str(&transcript(&lab, &[(apply, 0)]));
    insta::assert_snapshot!("apply", said);
}

#[test]
fn export_yaml() {
    let lab = provisioned();
    let r = run(&lab, &["export", "-f", "hosts.yaml"]).expect_code(0);
    // An export carries the Secrets (that is its use); the snapshot shows where, not the value.
    assert!(r.stdout.contains(PASSWORD_B64), "{}", r.stdout);
    let text = normalised(&r.stdout).replace(PASSWORD_B64, "[password]");
    assert!(text.contains("baremetalhost.metal3.io/status"), "{text}");
    insta::assert_snapshot!("export_yaml", text);
}

#[test]
fn get_yaml_of_one_host_and_a_list() {
    let lab = store();
    let one = run(&lab, &["get", "--store", "store", "worker-0", "-o", "yaml"]).expect_code(0);
    assert!(
        one.stdout
            .starts_with("apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\n"),
        "{}",
        one.stdout
    );
    insta::assert_snapshot!("get_yaml_one", normalised(&one.stdout));
    let list = run(&lab, &["get", "--store", "store", "-o", "yaml"]).expect_code(0);
    assert!(list.stdout.contains("kind: List"), "{}", list.stdout);
    insta::assert_snapshot!("get_yaml_list", normalised(&list.stdout));
}

#[test]
fn wait_says_condition_met() {
    let lab = provisioned();
    let said = transcript(
        &lab,
        &[
            (
                &[
                    "wait",
                    "-f",
                    "hosts.yaml",
                    "worker-0",
                    "--for",
                    "provisioned",
                    "--timeout",
                    "30s",
                ],
                0,
            ),
            (
                &[
                    "wait",
                    "-f",
                    "hosts.yaml",
                    "--for",
                    "available",
                    "-l",
                    "!rack",
                    "--timeout",
                    "30s",
                ],
                0,
            ),
        ],
    );
    insta::assert_snapshot!("wait", said);
}

#[test]
fn plugin_list_of_an_empty_directory_has_the_built_in_fixture() {
    let lab = Lab::new();
    std::fs::create_dir(lab.path("plugins")).unwrap();
    let dir = lab.path("plugins");
    let dir = dir.to_str().unwrap();
    let r = lab
        .run_env(&["plugin", "list"], &[("PROVISIONER_PLUGIN_DIR", dir)])
        .expect_code(0);
    assert!(r.stdout.contains(dir), "{}", r.stdout);
    insta::assert_snapshot!("plugin_list", r.stdout.replace(dir, "[plugin dir]"));
}

#[test]
fn plugin_check_of_a_bad_name_says_why() {
    let lab = Lab::new().file("x-provisioner.so", "not a plugin");
    let r = lab
        .run(&["plugin", "check", "x-provisioner.so", "Bad_Name"])
        .expect_code(2);
    assert_eq!(r.stdout, "");
    insta::assert_snapshot!("plugin_check_bad_name", r.stderr);
}

#[test]
fn version() {
    let r = Lab::new().run(&["version"]).expect_code(0);
    // The crate's version changes with each release; the shape of the lines is what is fixed.
    let text = r.stdout.replacen(
        &format!("bmhctl {}\n", env!("CARGO_PKG_VERSION")),
        "bmhctl [version]\n",
        1,
    );
    assert_ne!(text, r.stdout, "{}", r.stdout);
    // The commit and the build date change with each build: their shapes are checked.
    let lines: Vec<&str> = text.lines().collect();
    let commit = lines[1].strip_prefix("git commit ").expect("a commit line");
    assert!(is_commit(commit), "{commit}");
    let built = lines[2].strip_prefix("built ").expect("a build date line");
    assert!(is_utc_time(built), "{built}");
    let text = text.replace(commit, "[commit]").replace(built, "[date]");
    insta::assert_snapshot!("version", text);
}

/// A full git commit id, or `unknown` for a source built outside a git checkout.
fn is_commit(s: &str) -> bool {
    s == "unknown" || s.len() == 40 && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// `YYYY-MM-DDTHH:MM:SSZ`.
fn is_utc_time(s: &str) -> bool {
    s.len() == 20 && s.ends_with('Z') && chrono::DateTime::parse_from_rfc3339(s).is_ok()
}

#[test]
fn version_json_and_yaml() {
    let r = Lab::new().run(&["version", "-o", "json"]).expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    let commit = v["gitCommit"].as_str().unwrap();
    let built = v["buildDate"].as_str().unwrap();
    assert!(is_commit(commit), "{commit}");
    assert!(is_utc_time(built), "{built}");
    let text = r
        .stdout
        .replace(env!("CARGO_PKG_VERSION"), "[version]")
        .replace(commit, "[commit]")
        .replace(built, "[date]");
    insta::assert_snapshot!("version_json", text);
    let r = Lab::new().run(&["version", "-o", "yaml"]).expect_code(0);
    let y: serde_json::Value = serde_saphyr::from_str(&r.stdout).expect("YAML");
    assert_eq!(y, v);
}

#[test]
fn describe_of_files() {
    let lab = provisioned();
    let r = run(&lab, &["describe", "-f", "hosts.yaml", "worker-0"]).expect_code(0);
    assert!(r.stdout.starts_with("Name:"), "{}", r.stdout);
    insta::assert_snapshot!("describe_files", normalised(&r.stdout));
}
