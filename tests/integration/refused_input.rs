//! Refused input writes nothing: whatever is wrong (an option, a file, a host), bmhctl exits 2
//! and the directory is left byte for byte as it was: no `.bmhctl/`, no lock, no store.

use crate::lab::{Lab, host, secret};
use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// Everything under `dir`, symlinks not followed: path → (kind, mode, content or link target).
pub(crate) fn listing(dir: &Path) -> BTreeMap<String, (String, u32, String)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            let m = std::fs::symlink_metadata(&path).unwrap();
            let t = m.file_type();
            let (kind, content) = if t.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                ("symlink", target.to_string_lossy().into_owned())
            } else if t.is_dir() {
                stack.push(path.clone());
                ("dir", String::new())
            } else if t.is_fifo() {
                ("fifo", String::new())
            } else {
                let bytes = std::fs::read(&path).unwrap();
                ("file", String::from_utf8_lossy(&bytes).into_owned())
            };
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            out.insert(rel, (kind.to_string(), m.mode() & 0o7777, content));
        }
    }
    out
}

fn good() -> String {
    format!("{}---\n{}", secret("bmc-secret"), host("h0", ""))
}

/// One refused input: how the lab is made and what is run.
struct Case {
    what: &'static str,
    setup: fn(&Lab),
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
}

fn cases() -> Vec<Case> {
    fn good_file(lab: &Lab) {
        std::fs::write(lab.path("hosts.yaml"), good()).unwrap();
    }
    vec![
        Case {
            what: "an unknown host",
            setup: good_file,
            args: &["provision", "--host", "nosuch", "hosts.yaml"],
            env: &[],
        },
        Case {
            what: "a bad environment value",
            setup: good_file,
            args: &["provision", "hosts.yaml"],
            env: &[("BMHCTL_TIMING", "fast")],
        },
        Case {
            what: "a bad selector",
            setup: good_file,
            args: &["deprovision", "-f", "hosts.yaml", "-l", "a in"],
            env: &[],
        },
        Case {
            what: "a verb on an unknown host",
            setup: good_file,
            args: &["pause", "-f", "hosts.yaml", "nosuch"],
            env: &[],
        },
        Case {
            what: "delete of an unknown host",
            setup: good_file,
            args: &["delete", "-f", "hosts.yaml", "nosuch"],
            env: &[],
        },
        Case {
            what: "malformed YAML",
            setup: |lab| {
                let text = format!("{}  image: [unclosed\n", good());
                std::fs::write(lab.path("hosts.yaml"), text).unwrap();
            },
            args: &["provision", "hosts.yaml"],
            env: &[],
        },
        Case {
            what: "a missing Secret",
            setup: |lab| std::fs::write(lab.path("hosts.yaml"), host("h0", "")).unwrap(),
            args: &["provision", "hosts.yaml"],
            env: &[],
        },
        Case {
            what: "a host BMO's admission refuses",
            setup: |lab| {
                let text = good().replace("ipmi://192.168.122.1:6233", "bogus://x");
                std::fs::write(lab.path("hosts.yaml"), text).unwrap();
            },
            args: &["provision", "hosts.yaml"],
            env: &[],
        },
        Case {
            what: "a symlink loop",
            setup: |lab| std::os::unix::fs::symlink("hosts.yaml", lab.path("hosts.yaml")).unwrap(),
            args: &["provision", "hosts.yaml"],
            env: &[],
        },
        Case {
            what: ".bmhctl is a file",
            setup: |lab| {
                good_file(lab);
                std::fs::write(lab.path(".bmhctl"), "mine").unwrap();
            },
            args: &["provision", "hosts.yaml"],
            env: &[],
        },
        Case {
            what: "apply of a host named ..",
            setup: |lab| {
                let text = good().replace("name: h0", "name: \"..\"");
                std::fs::write(lab.path("hosts.yaml"), text).unwrap();
            },
            args: &["apply", "-f", "hosts.yaml", "--store", "store"],
            env: &[],
        },
        Case {
            what: "apply of a Secret named ..",
            setup: |lab| {
                let text = format!("{}---\n{}", secret(".."), good());
                std::fs::write(lab.path("hosts.yaml"), text).unwrap();
            },
            args: &["apply", "-f", "hosts.yaml", "--store", "store"],
            env: &[],
        },
    ]
}

#[test]
fn refused_input_exits_2_and_leaves_the_directory_byte_identical() {
    for c in cases() {
        let lab = Lab::new();
        (c.setup)(&lab);
        let before = listing(&lab.path(""));
        let mut env = vec![("BMHCTL_PROVISIONER", "fixture")];
        env.extend_from_slice(c.env);
        let run = lab.run_env(c.args, &env);
        assert_eq!(
            run.code,
            2,
            "{}: bmhctl {}\n--- stderr\n{}",
            c.what,
            c.args.join(" "),
            run.stderr
        );
        assert!(
            run.stderr.starts_with("error: "),
            "{}: {}",
            c.what,
            run.stderr
        );
        assert_eq!(
            listing(&lab.path("")),
            before,
            "{}: the directory changed\n--- stderr\n{}",
            c.what,
            run.stderr
        );
    }
}

#[test]
fn refusals_name_the_file_and_the_object() {
    let lab = Lab::new().file("hosts.yaml", &good().replace("name: h0", "name: \"..\""));
    let run = lab
        .run(&["apply", "-f", "hosts.yaml", "--store", "store"])
        .expect_code(2);
    // Refused as the API server refuses it, before the store is reached.
    assert_eq!(
        run.stderr.trim_end(),
        "error: hosts.yaml:12:9: BareMetalHost default/..: metadata.name: invalid name \"..\": a \
         lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or \
         '.', and must start and end with an alphanumeric character (e.g. 'example.com')"
    );
    let lab = Lab::new();
    std::os::unix::fs::symlink("hosts.yaml", lab.path("hosts.yaml")).unwrap();
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(2);
    assert_eq!(
        run.stderr.trim_end(),
        "error: hosts.yaml: a symlink loop (too many levels of symbolic links)"
    );
    let lab = Lab::new().file("hosts.yaml", &good()).file(".bmhctl", "");
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(2);
    let state_dir = std::fs::canonicalize(lab.path("")).unwrap().join(".bmhctl");
    assert_eq!(
        run.stderr.trim_end(),
        format!(
            "error: {}: not a directory: bmhctl keeps its locks and state in .bmhctl/ beside \
             the host file; move it out of the way",
            state_dir.display()
        )
    );
}

#[test]
fn a_directory_argument_names_each_entry_it_skipped_and_why() {
    let lab = Lab::new();
    let dir = lab.path("hosts");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("a.yaml"), good()).unwrap();
    let fifo = std::ffi::CString::new(dir.join("fifo.yaml").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::os::unix::fs::symlink("loop.yaml", dir.join("loop.yaml")).unwrap();
    std::os::unix::fs::symlink("gone", dir.join("dangling.yaml")).unwrap();
    // Not host files by name, or hidden: skipped without a word, as documented.
    std::fs::write(dir.join("notes.txt"), "x").unwrap();
    std::fs::create_dir(dir.join(".git")).unwrap();
    let run = lab
        .run(&["get", "-f", "hosts", "-o", "json"])
        .expect_code(0);
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert_eq!(
        warnings,
        [
            "warning: skipped hosts/dangling.yaml: no such file or directory",
            "warning: skipped hosts/fifo.yaml: not a regular file (a FIFO, socket or device)",
            "warning: skipped hosts/loop.yaml: a symlink loop (too many levels of symbolic links)",
        ],
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("h0"), "{}", run.stdout);
}
