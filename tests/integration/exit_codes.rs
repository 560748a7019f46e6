//! One exit code per kind of failure, the same in every command (the README's "Exit codes"
//! table): each row runs the real binary with the `fixture` provisioner on temp files and states
//! the exit code and the first line of stderr exactly. Every example of the table is a row but
//! those that need a run disturbed while it runs, tested where that is built: a save that fails
//! mid-run and a signal while saves fail (`save_failures`), an edit BMO's update rules refuse and
//! a host removed during a run (`edits_during_run`), a file changed under a command that writes
//! it once (the unit tests of `src/persist/files`), Ctrl-C and SIGTERM (`result_contract`),
//! `delete -f`'s deletion mark on a full disk (`save_failures`, on a real tmpfs). Not run: the
//! internal error (70), which no input can cause.

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

/// `good()` with `from` replaced by `to` (once).
fn edited(from: &str, to: &str) -> String {
    let text = good();
    assert!(text.contains(from), "{from:?} is not in the hosts");
    text.replacen(from, to, 1)
}

/// What a row's setup leaves held for the row's command (a lock), dropped after it.
type Held = Option<std::fs::File>;

struct Row {
    what: &'static str,
    /// The text of `hosts.yaml`.
    file: String,
    /// Run before the row's command (e.g. `apply` to fill a store).
    before: &'static [&'static str],
    /// Done to the lab before the row's command (after `before`).
    setup: fn(&Lab) -> Held,
    /// Workspace plugins staged as `plugins/<name>-provisioner.so`: (package, name).
    plugins: &'static [(&'static str, &'static str)],
    env: &'static [(&'static str, &'static str)],
    args: &'static [&'static str],
    code: i32,
    /// The first line of stderr; `{dir}` stands for the lab's directory, `{pid}` for this
    /// process's.
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
        setup: |_| None,
        plugins: &[],
        env: &[],
        args,
        code,
        first_line,
    }
}

const NO_FILE_HOST: &str = "error: no BareMetalHost named nope in the given files";
const NO_STORE_HOST: &str = "error: no BareMetalHost named nope in the store";
const APPLY: &[&str] = &["apply", "--store", "s", "-f", "hosts.yaml"];
const WATCH_STORE: &[&str] = &["watch", "--store", "s", "--provisioner", "fixture"];
const PROVISION: &[&str] = &["provision", "--provisioner", "fixture", "hosts.yaml"];
const NO_STORE: &str =
    "error: no store at nostore (`bmhctl apply -f FILE --store nostore` makes one)";

/// Takes the exclusive lock of `path` (creating it and its directory) as another bmhctl would,
/// writing its pid as a store's lease holder does.
fn hold(path: std::path::PathBuf) -> Held {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let f = std::fs::File::create(&path).unwrap();
    f.lock().unwrap();
    std::fs::write(&path, format!("{}\n", std::process::id())).unwrap();
    Some(f)
}

fn symlink(target: &str, link: std::path::PathBuf) {
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, link).unwrap();
}

fn rows() -> Vec<Row> {
    vec![
        // 0: done.
        row(
            "success",
            good(),
            &["-q", "provision", "--provisioner", "fixture", "hosts.yaml"],
            0,
            "",
        ),
        row(
            "wait's state was reached",
            good(),
            &[
                "-q",
                "wait",
                "-f",
                "hosts.yaml",
                "--provisioner",
                "fixture",
                "--for",
                "available",
                "worker-0",
            ],
            0,
            "",
        ),
        row(
            "validate found every host valid",
            good(),
            &["validate", "hosts.yaml"],
            0,
            "",
        ),
        // 1: ran, but the goal was not met.
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
        Row {
            before: APPLY,
            setup: |lab| {
                std::fs::write(lab.path("s/baremetalhosts/default/worker-0.yaml"), "{[").unwrap();
                None
            },
            ..row(
                "get met a store object it cannot read",
                good(),
                &["get", "--store", "s"],
                1,
                "bmhctl: s/baremetalhosts/default/worker-0.yaml:1:2: BareMetalHost default/worker-0: not a readable store object: unclosed bracket '['",
            )
        },
        Row {
            plugins: &[("demo-provisioner", "demo")],
            ..row(
                "plugin check failed",
                good(),
                &["plugin", "check", "plugins/demo-provisioner.so", "bar"],
                1,
                "error: plugin check FAILED: plugin plugins/demo-provisioner.so: plugin name is \"demo\", expected \"bar\"",
            )
        },
        Row {
            plugins: &[("ironic-provisioner", "ironic")],
            env: &[
                ("IRONIC_ENDPOINT", "http://127.0.0.1:1"),
                ("BMHCTL_IRONIC_WAIT", ""),
                ("IRONIC_NAME", ""),
            ],
            ..row(
                "Ironic unreachable for all of --ironic-wait",
                good(),
                &["-q", "provision", "--ironic-wait", "1s", "hosts.yaml"],
                1,
                "bmhctl: cannot reach Ironic at http://127.0.0.1:1/v1/: GET /v1/: error sending request for url (http://127.0.0.1:1/v1/): client error (Connect): tcp connect error: Connection refused (os error 111) (retrying for up to 1s; --ironic-wait)",
            )
        },
        // 2: bad input or usage.
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
            PROVISION,
            2,
            "error: hosts.yaml:5:1: while parsing a flow sequence, expected ',' or ']'",
        ),
        row(
            "a key given twice",
            edited("online: true", "online: true\n  online: false"),
            PROVISION,
            2,
            "error: hosts.yaml:15:3: duplicate key \"online\": a key may appear only once in a mapping",
        ),
        row(
            "a YAML tag outside the core schema",
            edited("online: true", "online: !custom true"),
            PROVISION,
            2,
            "error: hosts.yaml:14:11: BareMetalHost default/worker-0: spec.online: YAML tag !custom refused: bmhctl reads only the core schema's tags (!!str, !!int, !!float, !!bool, !!null, !!map, !!seq); remove the tag",
        ),
        row(
            "a carriage return without a line feed",
            edited("online: true\n", "online: true\r"),
            PROVISION,
            2,
            "error: hosts.yaml:14:15: a carriage return without a line feed: bmhctl writes the hosts' status into this file and cannot edit it (end lines with LF or CRLF)",
        ),
        row(
            "an unknown field",
            edited("online: true", "online: true\n  onlin: true"),
            PROVISION,
            2,
            "error: hosts.yaml:15:10: BareMetalHost default/worker-0: spec.onlin: unknown field (did you mean online?)",
        ),
        row(
            "an unknown kind",
            edited("kind: BareMetalHost", "kind: BareMetalHots"),
            PROVISION,
            2,
            "error: hosts.yaml:10:7: BareMetalHots default/worker-0: kind: unknown kind \"BareMetalHots\" (did you mean BareMetalHost?); bmhctl reads BareMetalHost, Secret, HostFirmwareSettings, HostFirmwareComponents, HostUpdatePolicy, HardwareData, FirmwareSchema, DataImage, BMCEventSubscription (--skip-unknown-kinds skips it)",
        ),
        row(
            "an unknown apiVersion",
            edited("metal3.io/v1alpha1", "metal3.io/v1"),
            PROVISION,
            2,
            "error: hosts.yaml:9:13: BareMetalHost default/worker-0: apiVersion: apiVersion \"metal3.io/v1\" is not one bmhctl reads for kind BareMetalHost (expected metal3.io/v1alpha1)",
        ),
        row(
            "a name Kubernetes refuses",
            edited("name: worker-0", "name: Worker_0"),
            PROVISION,
            2,
            "error: hosts.yaml:12:9: BareMetalHost default/Worker_0: metadata.name: invalid name \"Worker_0\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')",
        ),
        row(
            "a label Kubernetes refuses",
            edited(
                "name: worker-0\n",
                "name: worker-0\n  labels:\n    rack: -bad-\n",
            ),
            PROVISION,
            2,
            "error: hosts.yaml:14:11: BareMetalHost default/worker-0: metadata.labels[\"rack\"]: invalid value: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
        row(
            "an annotation Kubernetes refuses",
            edited(
                "name: worker-0\n",
                "name: worker-0\n  annotations:\n    bad key: x\n",
            ),
            PROVISION,
            2,
            "error: hosts.yaml:14:5: BareMetalHost default/worker-0: metadata.annotations[\"bad key\"]: invalid key: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ),
        Row {
            setup: |lab| {
                std::fs::write(lab.path("more.yaml"), host("worker-0", "")).unwrap();
                None
            },
            ..row(
                "a host defined in two files",
                good(),
                &[
                    "provision",
                    "--provisioner",
                    "fixture",
                    "hosts.yaml",
                    "more.yaml",
                ],
                2,
                "error: more.yaml:4:9: BareMetalHost default/worker-0: defined more than once (first at hosts.yaml:12:9)",
            )
        },
        row(
            "a field of the wrong type",
            edited("online: true", "online: \"yes\""),
            PROVISION,
            2,
            "error: hosts.yaml:14:11: BareMetalHost default/worker-0: spec.online: invalid \
             type: string \"yes\", expected a boolean",
        ),
        row(
            "the same, in validate",
            edited("online: true", "online: \"yes\""),
            &["validate", "hosts.yaml"],
            2,
            "error: hosts.yaml:14:11: BareMetalHost default/worker-0: spec.online: invalid \
             type: string \"yes\", expected a boolean",
        ),
        row(
            "a missing Secret",
            host("worker-0", ""),
            PROVISION,
            2,
            "error: hosts.yaml:9:22: BareMetalHost default/worker-0: spec.bmc.credentialsName: Secret default/bmc-secret not found in the given files",
        ),
        row(
            "a host BMO's admission rules refuse",
            edited("ipmi://192.168.122.1:6233", "libvirt://192.168.122.1/"),
            PROVISION,
            2,
            "error: hosts.yaml:14:3: BareMetalHost default/worker-0: spec.bootMACAddress: BMC driver libvirt requires a BootMACAddress value",
        ),
        row(
            "an object name the store can't hold",
            edited("name: worker-0", "name: .."),
            APPLY,
            2,
            "error: hosts.yaml:12:9: BareMetalHost default/..: metadata.name: invalid name \"..\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')",
        ),
        row(
            "a path that does not exist",
            good(),
            &["get", "-f", "missing/"],
            2,
            "error: missing/: no such file or directory",
        ),
        row(
            "a path that can't be read",
            good(),
            &["provision", "--provisioner", "fixture", "hosts.yaml/x.yaml"],
            2,
            "error: hosts.yaml/x.yaml: cannot be read: Not a directory (os error 20)",
        ),
        Row {
            setup: |lab| {
                symlink("loop.yaml", lab.path("loop.yaml"));
                None
            },
            ..row(
                "a symlink loop",
                good(),
                &["get", "-f", "loop.yaml"],
                2,
                "error: loop.yaml: a symlink loop (too many levels of symbolic links)",
            )
        },
        Row {
            setup: |lab| {
                std::fs::write(lab.path(".bmhctl"), "").unwrap();
                None
            },
            ..row(
                "a .bmhctl that is not a directory",
                good(),
                PROVISION,
                2,
                "error: {dir}/.bmhctl: not a directory: bmhctl keeps its locks and state in .bmhctl/ beside the host file; move it out of the way",
            )
        },
        Row {
            setup: |lab| {
                symlink("elsewhere", lab.path(".bmhctl/hosts.yaml.lock"));
                None
            },
            ..row(
                "a lock file that is a symlink",
                good(),
                PROVISION,
                2,
                "error: {dir}/.bmhctl/hosts.yaml.lock: is a symlink: bmhctl never follows one to its lock or lease files; remove it",
            )
        },
        Row {
            before: APPLY,
            setup: |lab| {
                symlink("elsewhere", lab.path("s/.lease"));
                None
            },
            ..row(
                "a lease file that is a symlink",
                good(),
                WATCH_STORE,
                2,
                "error: s/.lease: is a symlink: bmhctl never follows one to its lock or lease files; remove it",
            )
        },
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
            "bad selector",
            good(),
            &["get", "-f", "hosts.yaml", "-l", "a in b"],
            2,
            "error: invalid selector \"a in b\": values \"b\": a set is given in parentheses: (v1,v2)",
        ),
        row(
            "a bad flag",
            good(),
            &["get", "--sort-bye", "x"],
            2,
            "error: unexpected argument '--sort-bye' found",
        ),
        Row {
            env: &[("BMHCTL_TIME_SCALE", "fast")],
            ..row(
                "a bad environment value",
                good(),
                PROVISION,
                2,
                "error: invalid value \"fast\" for environment variable BMHCTL_TIME_SCALE",
            )
        },
        row(
            "no store where --store points, a verb",
            good(),
            &["pause", "--store", "nostore", "worker-0"],
            2,
            NO_STORE,
        ),
        row(
            "no store where --store points, get",
            good(),
            &["get", "--store", "nostore"],
            2,
            NO_STORE,
        ),
        row(
            "no store where --store points, describe",
            good(),
            &["describe", "--store", "nostore"],
            2,
            NO_STORE,
        ),
        row(
            "no store where --store points, export",
            good(),
            &["export", "--store", "nostore"],
            2,
            NO_STORE,
        ),
        row(
            "no store where --store points, plan",
            good(),
            &["plan", "--store", "nostore", "--provisioner", "fixture"],
            2,
            NO_STORE,
        ),
        row(
            "no store where --store points, wait",
            good(),
            &[
                "wait",
                "--store",
                "nostore",
                "--provisioner",
                "fixture",
                "--for",
                "available",
            ],
            2,
            NO_STORE,
        ),
        row(
            "no store where --store points, timeline",
            good(),
            &["timeline", "--store", "nostore", "--output-file", "t.html"],
            2,
            NO_STORE,
        ),
        Row {
            before: APPLY,
            setup: |lab| {
                use std::os::unix::fs::PermissionsExt;
                let p = std::fs::Permissions::from_mode(0o777);
                std::fs::set_permissions(lab.path("s"), p).unwrap();
                None
            },
            ..row(
                "a store others may write to",
                good(),
                &["get", "--store", "s"],
                2,
                "error: the store s may be written by its group and others (mode 777); it holds Secrets and decides what bmhctl drives: fix it with `chmod 700 s`",
            )
        },
        // 3: conflict.
        Row {
            setup: |lab| hold(lab.path(".bmhctl/hosts.yaml.lock")),
            ..row(
                "another bmhctl holds the files' locks",
                good(),
                PROVISION,
                3,
                "error: hosts.yaml is in use by another bmhctl process (lock {dir}/.bmhctl/hosts.yaml.lock, held by pid {pid})",
            )
        },
        Row {
            before: APPLY,
            setup: |lab| hold(lab.path("s/.lease")),
            ..row(
                "another bmhctl holds the store's lease",
                good(),
                WATCH_STORE,
                3,
                "error: the store s is already being driven by bmhctl process {pid} (lease s/.lease); only one `bmhctl watch` may run on a store",
            )
        },
        // 4: reading or writing failed, or the provisioner can't be loaded.
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
        Row {
            plugins: &[("test-plugin-abi-mismatch", "abi-mismatch")],
            ..row(
                "an ABI mismatch",
                good(),
                &["provision", "--provisioner", "abi-mismatch", "hosts.yaml"],
                4,
                "error: cannot load provisioner plugin \"abi-mismatch\": plugin {dir}/plugins/abi-mismatch-provisioner.so has plugin ABI 999, bmhctl needs 1",
            )
        },
        Row {
            plugins: &[("demo-provisioner", "foo")],
            ..row(
                "a name mismatch",
                good(),
                &["provision", "--provisioner", "foo", "hosts.yaml"],
                4,
                "error: cannot load provisioner plugin \"foo\": plugin {dir}/plugins/foo-provisioner.so: plugin name is \"demo\", expected \"foo\"",
            )
        },
        Row {
            plugins: &[("ironic-provisioner", "ironic")],
            env: &[("IRONIC_ENDPOINT", ""), ("IRONIC_NAME", "")],
            ..row(
                "a plugin whose initialisation fails",
                good(),
                &["provision", "hosts.yaml"],
                4,
                "error: cannot load provisioner plugin \"ironic\": cannot initialize provisioner plugin {dir}/plugins/ironic-provisioner.so: IRONIC_ENDPOINT is not set (no Ironic is configured: use --provisioner fixture to run without one, --context NAME for a context's Ironic (contexts: none yet; see bmhctl config get-contexts), or set IRONIC_ENDPOINT)",
            )
        },
    ]
}

#[test]
fn each_kind_of_failure_has_its_exit_code_in_every_command() {
    let mut wrong = Vec::new();
    for r in rows() {
        let lab = Lab::new().file("hosts.yaml", &r.file);
        let dir = lab.path("");
        let dir = dir.to_str().unwrap().trim_end_matches('/').to_string();
        let plugins = lab.path("plugins");
        std::fs::create_dir_all(&plugins).unwrap();
        for (package, name) in r.plugins {
            let to = plugins.join(format!("{name}-provisioner.so"));
            std::fs::copy(crate::lab::cdylib(package), to).unwrap();
        }
        let mut env = vec![("PROVISIONER_PLUGIN_DIR", plugins.to_str().unwrap())];
        env.extend_from_slice(r.env);
        if !r.before.is_empty() {
            lab.run_env(r.before, &env).expect_code(0);
        }
        let held = (r.setup)(&lab);
        let run = lab.run_env(r.args, &env);
        drop(held);
        let first = run.stderr.lines().next().unwrap_or("");
        let want = r
            .first_line
            .replace("{dir}", &dir)
            .replace("{pid}", &std::process::id().to_string());
        if (run.code, first) != (r.code, want.as_str()) {
            wrong.push(format!(
                "{}: bmhctl {}\n  want {} {want}\n  got  {} {first}",
                r.what,
                r.args.join(" "),
                r.code,
                run.code
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
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
