//! One exit code per kind of failure, the same in every command (the README's "Exit codes"
//! table): each row runs the real binary with the `fixture` provisioner on temp files and states
//! the exit code and the first line of stderr exactly.

use crate::lab::{Lab, host, secret};

/// A Secret and one valid host, `worker-0`.
fn good() -> String {
    format!("{}---\n{}", secret("bmc-secret"), host("worker-0", ""))
}

/// `good()` with `worker-0` failing registration in the fixture provisioner.
fn failing() -> String {
    good().replace(
        "metadata:\n  name: worker-0\n",
        "metadata:\n  name: worker-0\n  annotations:\n    fixture.bmhctl.metal3.io/validate-error: BMC said no\n",
    )
}

struct Row {
    what: &'static str,
    /// The text of `hosts.yaml`.
    file: String,
    /// Run before the row's command (e.g. `apply` to fill a store).
    before: &'static [&'static str],
    args: &'static [&'static str],
    code: i32,
    /// The first line of stderr; `{dir}` stands for the lab's directory.
    first_line: &'static str,
}

fn row(
    what: &'static str,
    file: String,
    args: &'static [&'static str],
    code: i32,
    first_line: &'static str,
) -> Row {
    Row {
        what,
        file,
        before: &[],
        args,
        code,
        first_line,
    }
}

const NO_FILE_HOST: &str = "error: no BareMetalHost named nope in the given files";
const NO_STORE_HOST: &str = "error: no BareMetalHost named nope in the store";
const APPLY: &[&str] = &["apply", "--store", "s", "-f", "hosts.yaml"];

fn rows() -> Vec<Row> {
    vec![
        row(
            "success",
            good(),
            &["-q", "provision", "--provisioner", "fixture", "hosts.yaml"],
            0,
            "",
        ),
        row(
            "a host fails its goal",
            failing(),
            &["-q", "provision", "--provisioner", "fixture", "hosts.yaml"],
            1,
            "error: 1 of 1 hosts did not reach their goal",
        ),
        row(
            "wait times out",
            failing(),
            &[
                "-q",
                "wait",
                "-f",
                "hosts.yaml",
                "--provisioner",
                "fixture",
                "--for",
                "provisioned",
                "--timeout",
                "1s",
                "worker-0",
            ],
            1,
            "error: timed out after 1s waiting for provisioned: default/worker-0",
        ),
        row(
            "wait for a state a host resting at its goal never reaches",
            good(),
            &[
                "-q",
                "wait",
                "-f",
                "hosts.yaml",
                "--provisioner",
                "fixture",
                "--for",
                "provisioned",
                "worker-0",
            ],
            1,
            "error: baremetalhost.metal3.io/worker-0 cannot meet --for=provisioned: it rests at \
             \"available\", its goal, since its spec has no image",
        ),
        row(
            "bad YAML",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: [x\n".to_string(),
            &["provision", "--provisioner", "fixture", "hosts.yaml"],
            2,
            "error: hosts.yaml:5:1: while parsing a flow sequence, expected ',' or ']'",
        ),
        row(
            "a field of the wrong type",
            good().replace("online: true", "online: \"yes\""),
            &["provision", "--provisioner", "fixture", "hosts.yaml"],
            2,
            "error: hosts.yaml:14:11: BareMetalHost default/worker-0: spec.online: invalid \
             type: string \"yes\", expected a boolean",
        ),
        row(
            "the same, in validate",
            good().replace("online: true", "online: \"yes\""),
            &["validate", "hosts.yaml"],
            2,
            "error: hosts.yaml:14:11: BareMetalHost default/worker-0: spec.online: invalid \
             type: string \"yes\", expected a boolean",
        ),
        row(
            "unknown host in provision",
            good(),
            &[
                "provision",
                "--provisioner",
                "fixture",
                "-f",
                "hosts.yaml",
                "--host",
                "nope",
            ],
            2,
            NO_FILE_HOST,
        ),
        row(
            "unknown host in get",
            good(),
            &["get", "-f", "hosts.yaml", "nope"],
            2,
            NO_FILE_HOST,
        ),
        row(
            "unknown host in describe",
            good(),
            &["describe", "-f", "hosts.yaml", "nope"],
            2,
            NO_FILE_HOST,
        ),
        row(
            "unknown host in wait",
            good(),
            &[
                "wait",
                "-f",
                "hosts.yaml",
                "--provisioner",
                "fixture",
                "--for",
                "available",
                "nope",
            ],
            2,
            NO_FILE_HOST,
        ),
        row(
            "unknown host in export",
            good(),
            &["export", "-f", "hosts.yaml", "nope"],
            2,
            NO_FILE_HOST,
        ),
        row(
            "unknown host in a verb",
            good(),
            &["pause", "-f", "hosts.yaml", "nope"],
            2,
            NO_FILE_HOST,
        ),
        Row {
            before: APPLY,
            ..row(
                "unknown host in describe, store",
                good(),
                &["describe", "--store", "s", "nope"],
                2,
                NO_STORE_HOST,
            )
        },
        Row {
            before: APPLY,
            ..row(
                "unknown host in get, store",
                good(),
                &["get", "--store", "s", "nope"],
                2,
                NO_STORE_HOST,
            )
        },
        Row {
            before: APPLY,
            ..row(
                "unknown host in a verb, store",
                good(),
                &["power", "off", "--store", "s", "nope"],
                2,
                NO_STORE_HOST,
            )
        },
        row(
            "no store where --store points",
            good(),
            &["pause", "--store", "nostore", "worker-0"],
            2,
            "error: no store at nostore",
        ),
        row(
            "bad selector",
            good(),
            &["get", "-f", "hosts.yaml", "-l", "a in b"],
            2,
            "error: invalid selector \"a in b\": values \"b\": a set is given in parentheses: (v1,v2)",
        ),
        row(
            "a path that does not exist",
            good(),
            &["get", "-f", "missing/"],
            2,
            "error: missing/: no such file or directory",
        ),
        row(
            "unreadable: a path under a regular file",
            good(),
            &["provision", "--provisioner", "fixture", "hosts.yaml/x.yaml"],
            2,
            "error: hosts.yaml/x.yaml: cannot be read: Not a directory (os error 20)",
        ),
        row(
            "missing plugin",
            good(),
            &["provision", "--provisioner", "demo", "hosts.yaml"],
            4,
            "error: cannot load provisioner plugin \"demo\": failed to open plugin \
             {dir}/plugins/demo-provisioner.so: {dir}/plugins/demo-provisioner.so: cannot open \
             shared object file: No such file or directory (set PROVISIONER_PLUGIN_DIR, or use \
             --provisioner fixture)",
        ),
    ]
}

#[test]
fn each_kind_of_failure_has_its_exit_code_in_every_command() {
    for r in rows() {
        let lab = Lab::new().file("hosts.yaml", &r.file);
        let dir = lab.path("");
        let dir = dir.to_str().unwrap().trim_end_matches('/').to_string();
        let plugins = lab.path("plugins");
        let env = [("PROVISIONER_PLUGIN_DIR", plugins.to_str().unwrap())];
        if !r.before.is_empty() {
            lab.run_env(r.before, &env).expect_code(0);
        }
        let run = lab.run_env(r.args, &env);
        let first = run.stderr.lines().next().unwrap_or("");
        assert_eq!(
            (run.code, first),
            (r.code, r.first_line.replace("{dir}", &dir).as_str()),
            "{}: bmhctl {}\n--- stderr\n{}",
            r.what,
            r.args.join(" "),
            run.stderr
        );
    }
}

#[test]
fn a_file_locked_by_another_bmhctl_is_a_conflict() {
    let lab = Lab::new().file("hosts.yaml", &good());
    let real = std::fs::canonicalize(lab.path("hosts.yaml")).unwrap();
    let lock_path = real.parent().unwrap().join(".bmhctl/hosts.yaml.lock");
    std::fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
    // Held by this process, as another bmhctl would hold it.
    let lock = std::fs::File::create(&lock_path).unwrap();
    lock.lock().unwrap();
    let expected = format!(
        "error: hosts.yaml is in use by another bmhctl process (lock {}, held by pid {})",
        lock_path.display(),
        std::process::id()
    );
    let args = ["provision", "--provisioner", "fixture", "hosts.yaml"];
    let run = lab.run(&args);
    assert_eq!(
        (run.code, run.stderr.lines().next().unwrap_or("")),
        (3, expected.as_str()),
        "{}",
        run.stderr
    );
    // A verb writes its request into the file, for the holder (a `watch -f`) to act on.
    let run = lab
        .run(&["pause", "-f", "hosts.yaml", "worker-0"])
        .expect_code(0);
    let note = format!(
        "note: bmhctl (pid {}) drives hosts.yaml: the request is written into the file for it \
         to act on\n",
        std::process::id()
    );
    assert_eq!(run.stderr, note);
    assert!(
        lab.read("hosts.yaml")
            .contains("baremetalhost.metal3.io/paused")
    );
    drop(lock);
}

#[test]
fn every_problem_of_the_input_is_one_located_line() {
    // A wrong type and a duplicate name: both reported at once, each where it is.
    let text = format!(
        "{}---\n{}---\n{}---\n{}",
        secret("bmc-secret"),
        host("worker-0", "").replace("online: true", "online: \"yes\""),
        host("worker-1", ""),
        host("worker-1", ""),
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(2);
    insta::assert_snapshot!(run.stderr);
    assert_eq!(lab.read("hosts.yaml"), text, "nothing is written");
}
