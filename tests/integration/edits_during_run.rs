//! Edits of the hosts file during `provision` are never lost and are acted upon, as BMO
//! reconciles an updated object: the run reads the file again, keeps the statuses it holds in
//! the new text and goes on with the new spec (checked with BMO's update rules).

use crate::lab::{Lab, host};
use crate::save_failures::{hosts, spawn, wait_for_a_save, wait_output};

const NEW_IMAGE: &str = "http://images.example/new.qcow2";

/// The YAML document of `hosts.yaml`'s host `name`.
fn document<'a>(text: &'a str, name: &str) -> &'a str {
    text.split("\n---\n")
        .find(|d| d.contains(&format!("\n  name: {name}\n")))
        .unwrap_or_else(|| panic!("no host {name} in:\n{text}"))
}

/// `provision -o json` of `hosts.yaml`, with delays scaled to 0.3 (about 9 s).
fn start(lab: &Lab) -> std::process::Child {
    spawn(
        lab,
        &[
            "provision",
            "--provisioner",
            "fixture",
            "-q",
            "-o",
            "json",
            "hosts.yaml",
        ],
    )
}

/// Each host of the result document with its outcome and reason.
fn outcomes(stdout: &str) -> Vec<(String, String, String)> {
    let doc: serde_json::Value = serde_json::from_str(stdout).expect("the result document");
    doc["hosts"]
        .as_array()
        .expect("hosts")
        .iter()
        .map(|h| {
            let text = |k: &str| h[k].as_str().unwrap_or_default().to_string();
            (text("name"), text("outcome"), text("reason"))
        })
        .collect()
}

#[test]
fn a_host_appended_during_provision_is_kept_and_provisioned() {
    let lab = Lab::new().file("hosts.yaml", &hosts(3));
    let child = start(&lab);
    wait_for_a_save(&lab.path("hosts.yaml"));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(lab.path("hosts.yaml"))
        .unwrap();
    let added = format!(
        "---\n# added by the user during the run\n{}",
        host(
            "worker-new",
            &format!("image:\n  url: {NEW_IMAGE}\n  checksum: abc123")
        )
    );
    std::io::Write::write_all(&mut f, added.as_bytes()).unwrap();
    drop(f);
    let (code, stdout, stderr) = wait_output(child);
    assert_eq!(code, 0, "{stderr}");
    let after = lab.read("hosts.yaml");
    assert!(
        crate::lab::without_status(&after).ends_with(&added),
        "the appended text is not kept whole:\n{after}"
    );
    // The added host was driven to its goal, and its status saved beside the user's text.
    let new = document(&after, "worker-new");
    assert!(new.contains("\nstatus:\n"), "{new}");
    assert!(new.contains("    state: provisioned\n"), "{new}");
    assert!(new.contains(&format!("      url: {NEW_IMAGE}\n")), "{new}");
    for i in 0..3 {
        let d = document(&after, &format!("worker-{i}"));
        assert!(d.contains("    state: provisioned\n"), "{d}");
    }
    let names: Vec<(String, String, String)> = outcomes(&stdout);
    assert_eq!(names.len(), 4, "{stdout}");
    assert!(
        names
            .iter()
            .any(|(n, o, _)| n == "worker-new" && o == "reached"),
        "{stdout}"
    );
}

#[test]
fn an_editor_style_rename_during_provision_is_kept_and_acted_upon() {
    let lab = Lab::new().file("hosts.yaml", &hosts(3));
    let child = start(&lab);
    wait_for_a_save(&lab.path("hosts.yaml"));
    // As editors save: the whole text (with the statuses it had when read) to a new file,
    // renamed over the old one. worker-2 gets a label and another image before it provisions.
    let text = lab.read("hosts.yaml");
    let head = "metadata:\n  name: worker-2\n";
    let at = text.find(head).expect("worker-2");
    let (before, rest) = text.split_at(at);
    let edited = format!(
        "{before}{}",
        rest.replacen(
            head,
            "metadata:\n  name: worker-2\n  labels:\n    edited: \"yes\"\n",
            1
        )
        .replacen("http://images.example/os.qcow2", NEW_IMAGE, 1)
    );
    std::fs::write(lab.path(".hosts.yaml.swp"), &edited).unwrap();
    std::fs::rename(lab.path(".hosts.yaml.swp"), lab.path("hosts.yaml")).unwrap();
    let (code, _, stderr) = wait_output(child);
    assert_eq!(code, 0, "{stderr}");
    let after = lab.read("hosts.yaml");
    assert_eq!(
        crate::lab::without_status(&after),
        crate::lab::without_status(&edited),
        "only statuses may differ from the edited text"
    );
    let w2 = document(&after, "worker-2");
    assert!(w2.contains("  labels:\n    edited: \"yes\"\n"), "{w2}");
    assert!(w2.contains("    state: provisioned\n"), "{w2}");
    // Provisioned with the image of the edit.
    assert!(w2.contains(&format!("      url: {NEW_IMAGE}\n")), "{w2}");
    let w0 = document(&after, "worker-0");
    assert!(w0.contains("    state: provisioned\n"), "{w0}");
}

/// BMO's update rules (validateChanges): a set boot MAC never changes. The edited host stops
/// with the rule's error, the others go on, and the edit stays in the file as written.
#[test]
fn an_edit_the_update_rules_refuse_stops_that_host_and_is_kept() {
    let mac = "bootMACAddress: \"00:11:22:33:44:01\"\n  image:";
    let lab = Lab::new().file(
        "hosts.yaml",
        &hosts(3).replace("\n  image:", &format!("\n  {mac}")),
    );
    let child = start(&lab);
    wait_for_a_save(&lab.path("hosts.yaml"));
    let text = lab.read("hosts.yaml");
    let at = text.find("  name: worker-1\n").expect("worker-1");
    let edited = format!(
        "{}{}",
        &text[..at],
        text[at..].replacen("00:11:22:33:44:01", "00:11:22:33:44:99", 1)
    );
    std::fs::write(lab.path(".hosts.yaml.swp"), &edited).unwrap();
    std::fs::rename(lab.path(".hosts.yaml.swp"), lab.path("hosts.yaml")).unwrap();
    let (code, stdout, stderr) = wait_output(child);
    assert_eq!(code, 1, "{stderr}");
    let results = outcomes(&stdout);
    let (_, outcome, reason) = results
        .iter()
        .find(|(n, _, _)| n == "worker-1")
        .expect("worker-1 in the result");
    assert_eq!(outcome, "failed", "{stdout}");
    assert!(
        reason.starts_with("its edit is refused by BMO's admission rules: ")
            && reason.contains("bootMACAddress can not be changed once it is set"),
        "{reason}"
    );
    for other in ["worker-0", "worker-2"] {
        assert!(
            results.iter().any(|(n, o, _)| n == other && o == "reached"),
            "{stdout}"
        );
    }
    let after = lab.read("hosts.yaml");
    assert_eq!(
        crate::lab::without_status(&after),
        crate::lab::without_status(&edited)
    );
    assert!(document(&after, "worker-1").contains("00:11:22:33:44:99"));
}

/// A host removed from the file during the run stops being driven (as `watch` stops driving
/// it) and is reported stopped; the others finish, and nothing brings it back into the file.
#[test]
fn a_host_removed_during_provision_stops_and_stays_removed() {
    let lab = Lab::new().file("hosts.yaml", &hosts(3));
    let child = start(&lab);
    wait_for_a_save(&lab.path("hosts.yaml"));
    let text = lab.read("hosts.yaml");
    let kept: Vec<&str> = text
        .split("\n---\n")
        .filter(|d| !d.contains("\n  name: worker-1\n"))
        .collect();
    let edited = kept.join("\n---\n");
    std::fs::write(lab.path(".hosts.yaml.swp"), &edited).unwrap();
    std::fs::rename(lab.path(".hosts.yaml.swp"), lab.path("hosts.yaml")).unwrap();
    let (code, stdout, stderr) = wait_output(child);
    assert_eq!(code, 1, "{stderr}");
    let results = outcomes(&stdout);
    let (_, outcome, reason) = results
        .iter()
        .find(|(n, _, _)| n == "worker-1")
        .expect("worker-1 in the result");
    assert_eq!(outcome, "failed", "{stdout}");
    assert!(reason.contains("removed from its file"), "{reason}");
    let after = lab.read("hosts.yaml");
    assert!(!after.contains("worker-1"), "{after}");
    assert!(document(&after, "worker-2").contains("    state: provisioned\n"));
}

/// A host that has already reached its goal goes on with an edit that changes its spec, as BMO
/// reconciles an updated host: turned off, it is powered off and stays provisioned.
#[test]
fn a_host_edited_after_it_decided_is_driven_again() {
    // worker-1's first provisioner is not ready: it starts one retry delay later, so the run
    // goes on after worker-0 is provisioned.
    let slow = "metadata:\n  name: worker-1\n  annotations:\n    \
                fixture.bmhctl.metal3.io/become-ready-counter: \"2\"\n";
    let lab = Lab::new().file(
        "hosts.yaml",
        &hosts(2).replace("metadata:\n  name: worker-1\n", slow),
    );
    let child = start(&lab);
    let start = std::time::Instant::now();
    let text = loop {
        let text = lab.read("hosts.yaml");
        if document(&text, "worker-0").contains("    state: provisioned\n") {
            break text;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "worker-0 not provisioned after 30 s:\n{text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(
        !document(&text, "worker-1").contains("    state: provisioned\n"),
        "the run must still be going on:\n{text}"
    );
    let at = text.find("  name: worker-0\n").expect("worker-0");
    let edited = format!(
        "{}{}",
        &text[..at],
        text[at..].replacen("online: true", "online: false", 1)
    );
    std::fs::write(lab.path(".hosts.yaml.swp"), &edited).unwrap();
    std::fs::rename(lab.path(".hosts.yaml.swp"), lab.path("hosts.yaml")).unwrap();
    let (code, stdout, stderr) = wait_output(child);
    assert_eq!(code, 0, "{stderr}");
    let after = lab.read("hosts.yaml");
    assert_eq!(
        crate::lab::without_status(&after),
        crate::lab::without_status(&edited)
    );
    let w0 = document(&after, "worker-0");
    assert!(w0.contains("    state: provisioned\n"), "{w0}");
    assert!(w0.contains("\n  poweredOn: false\n"), "{w0}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let w0 = doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "worker-0")
        .unwrap();
    assert_eq!(w0["poweredOn"], false, "{stdout}");
}

/// An edit that leaves the file unreadable (YAML that does not parse) is never overwritten: the
/// run cannot save into it, and ends with 1 naming the file and the problem.
#[test]
fn an_edit_that_breaks_the_file_ends_the_run_with_1_and_is_kept() {
    let lab = Lab::new().file("hosts.yaml", &hosts(2));
    let child = start(&lab);
    wait_for_a_save(&lab.path("hosts.yaml"));
    let broken = format!("{}---\nkind: [half-way\n", lab.read("hosts.yaml"));
    std::fs::write(lab.path(".hosts.yaml.swp"), &broken).unwrap();
    std::fs::rename(lab.path(".hosts.yaml.swp"), lab.path("hosts.yaml")).unwrap();
    let (code, _, stderr) = wait_output(child);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(
            "error: cannot save: hosts.yaml changed on disk since bmhctl read it; not \
             overwriting it (the edit is kept): it cannot be read again: hosts.yaml:"
        ),
        "{stderr}"
    );
    assert_eq!(lab.read("hosts.yaml"), broken);
}

/// An edit landing in the instant between bmhctl's last check of the file and the swap that
/// replaces it is kept and acted upon: every rename is held back 0.2 s by `strace` (the window
/// widened), and the edit is made once a temporary file of the host file's has lived 80 ms
/// (written, flushed and checked: its swap waiting). Each kind of edit, twice; a trial whose
/// edit did not land while the swap waited is made again, so none passes vacuously.
#[test]
#[ignore = "needs strace to widen the window; scripts/test.sh runs it"]
fn an_edit_in_the_instant_of_the_swap_is_kept_and_acted_upon() {
    use std::time::{Duration, Instant};
    for trial in 0..6 {
        let kind = ["append", "in place", "rename"][trial % 3];
        let mut landed = false;
        for _attempt in 0..4 {
            let lab = Lab::new().file("hosts.yaml", &hosts(3));
            let marker = format!("online: false  # {kind} edit in the window");
            let child = std::process::Command::new("strace")
                .args(["-f", "-qq", "-o", "/dev/null"])
                .args(["-e", "trace=rename,renameat,renameat2"])
                .args(["-e", "inject=rename,renameat,renameat2:delay_enter=200000"])
                .arg(assert_cmd::cargo::cargo_bin("bmhctl"))
                .args(["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
                .current_dir(lab.path(""))
                .env("BMHCTL_TIME_SCALE", "0.1")
                .env("BMHCTL_SEED", "1")
                .env_remove("BMHCTL_PROVISIONER")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("strace (apt-get install strace)");
            // The first temporary file of hosts.yaml that lives 80 ms.
            let temp = || {
                std::fs::read_dir(lab.path(""))
                    .unwrap()
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .find(|n| n.starts_with(".hosts.yaml.") && n.ends_with(".tmp"))
            };
            let start = Instant::now();
            let mut seen: Option<(String, Instant)> = None;
            let waiting = loop {
                assert!(start.elapsed() < Duration::from_secs(30), "no save in 30 s");
                match (temp(), &seen) {
                    (Some(t), Some((s, since))) if &t == s => {
                        if since.elapsed() >= Duration::from_millis(80) {
                            break t;
                        }
                    }
                    (t, _) => seen = t.map(|t| (t, Instant::now())),
                }
                std::thread::sleep(Duration::from_millis(5));
            };
            let text = lab.read("hosts.yaml");
            let at = text.find("  name: worker-1\n").expect("worker-1");
            let edited = format!(
                "{}{}",
                &text[..at],
                text[at..].replacen("online: true", &marker, 1)
            );
            match kind {
                "append" => {
                    let mut f = std::fs::OpenOptions::new()
                        .append(true)
                        .open(lab.path("hosts.yaml"))
                        .unwrap();
                    std::io::Write::write_all(&mut f, format!("# {marker}\n").as_bytes()).unwrap();
                }
                "in place" => {
                    let mut f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(lab.path("hosts.yaml"))
                        .unwrap();
                    std::io::Write::write_all(&mut f, edited.as_bytes()).unwrap();
                }
                _ => {
                    std::fs::write(lab.path(".hosts.yaml.swp"), &edited).unwrap();
                    std::fs::rename(lab.path(".hosts.yaml.swp"), lab.path("hosts.yaml")).unwrap();
                }
            }
            let in_window = lab.path(&waiting).exists();
            let (code, _, stderr) = wait_output(child);
            assert_eq!(code, 0, "trial {trial} ({kind}): {stderr}");
            let after = lab.read("hosts.yaml");
            assert!(
                after.contains(&marker),
                "trial {trial}: the {kind} edit is lost:\n{after}"
            );
            if kind != "append" {
                let w1 = document(&after, "worker-1");
                assert!(w1.contains("  poweredOn: false\n"), "trial {trial}: {w1}");
            }
            let left: Vec<String> = std::fs::read_dir(lab.path(""))
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != "hosts.yaml" && n != ".bmhctl")
                .collect();
            assert!(
                left.is_empty(),
                "trial {trial}: left beside the file: {left:?}"
            );
            if in_window {
                landed = true;
                break;
            }
        }
        assert!(
            landed,
            "trial {trial} ({kind}): no edit landed while the swap waited"
        );
    }
}
