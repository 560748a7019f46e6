//! Provisioner plugins through the real loader: real `.so` files, built and staged by the tests
//! themselves (never by a manual step).

use crate::lab::{Lab, Run, host, secret};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

/// The built plugin libraries, by package name (`demo-provisioner`, `test-plugin-abi-mismatch`,
/// `test-plugin-panicky`, `test-plugin-reader`). Built once per test run with the cargo that runs the tests.
fn built() -> &'static HashMap<String, PathBuf> {
    static BUILT: OnceLock<HashMap<String, PathBuf>> = OnceLock::new();
    BUILT.get_or_init(|| {
        let out = Command::new(env!("CARGO"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([
                "build",
                "--message-format=json-render-diagnostics",
                "-p",
                "demo-provisioner",
                "-p",
                "test-plugin-abi-mismatch",
                "-p",
                "test-plugin-panicky",
                "-p",
                "test-plugin-reader",
            ])
            .output()
            .expect("run cargo build for the plugins");
        assert!(
            out.status.success(),
            "building the plugins failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut libs = HashMap::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if msg["reason"] != "compiler-artifact" {
                continue;
            }
            let Some(name) = msg["target"]["name"].as_str() else {
                continue;
            };
            for file in msg["filenames"].as_array().into_iter().flatten() {
                if let Some(f) = file.as_str().filter(|f| f.ends_with(".so")) {
                    libs.insert(name.replace('_', "-"), PathBuf::from(f));
                }
            }
        }
        for want in [
            "demo-provisioner",
            "test-plugin-abi-mismatch",
            "test-plugin-panicky",
            "test-plugin-reader",
        ] {
            assert!(libs.contains_key(want), "no .so built for {want}: {libs:?}");
        }
        libs
    })
}

/// Copies the library of `package` into the lab's `plugins/` as `<as_name>-provisioner.so`.
fn stage(lab: &Lab, package: &str, as_name: &str) -> PathBuf {
    let dir = lab.path("plugins");
    std::fs::create_dir_all(&dir).unwrap();
    let to = dir.join(format!("{as_name}-provisioner.so"));
    std::fs::copy(&built()[package], &to).expect("stage plugin");
    to
}

fn plugin_dir(lab: &Lab) -> String {
    let dir = lab.path("plugins");
    std::fs::create_dir_all(&dir).unwrap();
    dir.to_str().unwrap().to_string()
}

fn run_with(lab: &Lab, name: &str, extra: &[&str]) -> Run {
    let dir = plugin_dir(lab);
    let provisioner = format!("--provisioner={name}");
    let mut args = vec!["provision", &provisioner, "-o", "json"];
    args.extend_from_slice(extra);
    args.push("hosts.yaml");
    lab.run_env(&args, &[("PROVISIONER_PLUGIN_DIR", &dir)])
}

fn hosts(specs: &[(&str, &str)]) -> String {
    let mut text = secret("bmc-secret");
    for (name, spec) in specs {
        text.push_str("---\n");
        text.push_str(&host(name, spec));
    }
    text
}

/// name → the host's JSON result.
fn results(run: &Run) -> HashMap<String, serde_json::Value> {
    run.json()["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["name"].as_str().unwrap().to_string(), h.clone()))
        .collect()
}

#[track_caller]
fn assert_stderr(run: &Run, needle: &str) {
    assert!(
        run.stderr.contains(needle),
        "stderr lacks {needle:?}:\n{}",
        run.stderr
    );
}

#[test]
fn demo_plugin_loads_and_reaches_available_and_provisioned() {
    let lab = Lab::new().file(
        "hosts.yaml",
        &hosts(&[("demo-available", ""), ("demo-provisioned", IMAGE)]),
    );
    stage(&lab, "demo-provisioner", "demo");
    let run = run_with(&lab, "demo", &[]).expect_code(0);
    let r = results(&run);
    assert_eq!(r["demo-available"]["state"], "available");
    assert_eq!(r["demo-provisioned"]["state"], "provisioned");
    // The demo's provisioning ID is the host's name.
    assert_eq!(r["demo-provisioned"]["provisioningID"], "demo-provisioned");
    let after = lab.read("hosts.yaml");
    assert!(after.contains("    state: provisioned\n"), "{after}");
}

#[test]
fn every_demo_host_reaches_its_documented_end_state() {
    let names = [
        ("demo-registration-error", ""),
        ("demo-registering", ""),
        ("demo-available", ""),
        ("demo-inspecting", ""),
        ("demo-preparing-error", ""),
        ("demo-preparing", ""),
        ("demo-validation-error", IMAGE),
        ("demo-provisioning", IMAGE),
        ("demo-provisioned", IMAGE),
        ("any-other-host", IMAGE),
    ];
    let lab = Lab::new().file("hosts.yaml", &hosts(&names));
    stage(&lab, "demo-provisioner", "demo");
    // Virtual time (scale 0): stuck hosts run into the timeout at once.
    let run = run_with(&lab, "demo", &["--timeout", "5m"]).expect_code(1);
    let r = results(&run);
    let check = |name: &str, state: &str, reached: bool, error_type: &str| {
        let h = &r[name];
        assert_eq!(h["state"], state, "{name}: {h:#}");
        assert_eq!(h["reached"], reached, "{name}: {h:#}");
        assert_eq!(h["errorType"], error_type, "{name}: {h:#}");
    };
    check(
        "demo-registration-error",
        "registering",
        false,
        "registration error",
    );
    assert_eq!(
        r["demo-registration-error"]["errorMessage"],
        "failed to register new host"
    );
    assert_eq!(r["demo-registration-error"]["operationalStatus"], "error");
    check("demo-registering", "registering", false, "");
    check("demo-available", "available", true, "");
    check("demo-inspecting", "inspecting", false, "");
    check(
        "demo-preparing-error",
        "preparing",
        false,
        "preparation error",
    );
    assert_eq!(
        r["demo-preparing-error"]["errorMessage"],
        "preparing failed"
    );
    check("demo-preparing", "preparing", false, "");
    check("demo-provisioning", "provisioning", false, "");
    check("demo-provisioned", "provisioned", true, "");
    check("any-other-host", "provisioned", true, "");

    // Still cycling when the 5 minutes ran out.
    let v = &r["demo-validation-error"];
    assert_eq!(v["reached"], false, "{v:#}");
    assert_eq!(v["errorType"], "provisioning error", "{v:#}");
    assert_eq!(v["errorMessage"], "validation failed", "{v:#}");
}

#[test]
fn demo_hosts_at_real_time_end_in_their_states_and_no_timeout_is_claimed_early() {
    let names = [
        ("demo-available", ""),
        ("demo-registering", ""),
        ("demo-provisioned", IMAGE),
    ];
    let lab = Lab::new().file("hosts.yaml", &hosts(&names));
    stage(&lab, "demo-provisioner", "demo");
    let dir = plugin_dir(&lab);
    let run = lab
        .run_env(
            &[
                "provision",
                "--provisioner=demo",
                "-o",
                "json",
                "--timeout",
                "8s",
                "hosts.yaml",
            ],
            &[("PROVISIONER_PLUGIN_DIR", &dir), ("BMHCTL_TIME_SCALE", "1")],
        )
        .expect_code(1);
    let r = results(&run);
    // BMO's next look at a host at its goal comes after a minute; the run looks at once and
    // sees that it has nothing left to do.
    assert_eq!(
        r["demo-available"]["reached"], true,
        "{:#}",
        r["demo-available"]
    );
    assert_eq!(
        r["demo-provisioned"]["reached"], true,
        "{:#}",
        r["demo-provisioned"]
    );
    // A host whose next pass falls after the deadline says so, not that the timeout ran out.
    let stuck = &r["demo-registering"];
    assert_eq!(stuck["reached"], false, "{stuck:#}");
    let reason = stuck["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("still \"registering\": its next pass (in ")
            && reason.ends_with(") would come after the timeout"),
        "{reason}"
    );
}

#[test]
fn demo_validation_error_stops_available_in_error_at_the_retry_limit() {
    let lab = Lab::new().file("hosts.yaml", &hosts(&[("demo-validation-error", IMAGE)]));
    stage(&lab, "demo-provisioner", "demo");
    let run = run_with(&lab, "demo", &["--timeout", "24h"]).expect_code(1);
    let v = &results(&run)["demo-validation-error"];
    assert_eq!(v["state"], "available", "{v:#}");
    assert_eq!(v["reached"], false, "{v:#}");
    assert_eq!(v["errorType"], "provisioning error", "{v:#}");
    assert_eq!(v["errorMessage"], "validation failed", "{v:#}");
    assert_eq!(v["provisioningFailCount"], 5, "{v:#}");
}

#[test]
fn invalid_names_are_refused_before_any_path_is_opened() {
    let lab = Lab::new().file("hosts.yaml", &hosts(&[("worker-0", "")]));
    for name in ["Foo", "../x", "a/b", "-x", ""] {
        let run = run_with(&lab, name, &[]).expect_code(2);
        assert_stderr(&run, "invalid provisioner name");
        assert_stderr(&run, "^[a-z0-9][a-z0-9-]*$");
        assert!(
            !run.stderr.contains("failed to open plugin"),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn a_missing_plugin_file_is_reported_with_its_path() {
    let lab = Lab::new().file("hosts.yaml", &hosts(&[("worker-0", "")]));
    let run = run_with(&lab, "demo", &[]).expect_code(4);
    let path = lab.path("plugins/demo-provisioner.so");
    assert_stderr(&run, "cannot load provisioner plugin \"demo\"");
    assert_stderr(&run, &format!("failed to open plugin {}: ", path.display()));
    assert_stderr(&run, "PROVISIONER_PLUGIN_DIR");
    // Nothing was written.
    assert_eq!(lab.read("hosts.yaml"), hosts(&[("worker-0", "")]));
}

#[test]
fn a_file_that_is_not_a_library_fails_to_open() {
    let lab = Lab::new().file("hosts.yaml", &hosts(&[("worker-0", "")]));
    let dir = plugin_dir(&lab);
    let path = Path::new(&dir).join("demo-provisioner.so");
    std::fs::write(&path, "not a shared object\n").unwrap();
    let run = run_with(&lab, "demo", &[]).expect_code(4);
    assert_stderr(&run, &format!("failed to open plugin {}: ", path.display()));
}

/// A shared library of the system that is certainly no bmhctl plugin.
fn system_library() -> PathBuf {
    let candidates = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib/aarch64-linux-gnu/libm.so.6",
        "/usr/lib/aarch64-linux-gnu/libm.so.6",
        "/lib64/libm.so.6",
        "/usr/lib64/libm.so.6",
        "/lib/libm.so.6",
        "/usr/lib/libm.so.6",
    ];
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("a libm.so.6 on this system")
}

#[test]
fn a_library_without_the_declaration_is_not_a_plugin() {
    let lab = Lab::new().file("hosts.yaml", &hosts(&[("worker-0", "")]));
    let dir = plugin_dir(&lab);
    let path = Path::new(&dir).join("demo-provisioner.so");
    std::fs::copy(system_library(), &path).unwrap();
    let run = run_with(&lab, "demo", &[]).expect_code(4);
    assert_stderr(
        &run,
        &format!(
            "plugin {} is not a bmhctl provisioner plugin: ",
            path.display()
        ),
    );
    assert_stderr(&run, "BMHCTL_PROVISIONER_PLUGIN");
}

#[test]
fn an_abi_mismatch_names_both_versions() {
    let lab = Lab::new().file("hosts.yaml", &hosts(&[("worker-0", "")]));
    let path = stage(&lab, "test-plugin-abi-mismatch", "abi-mismatch");
    // The plugin's entry points abort: exit code 4 (not a signal) proves none was called.
    let run = run_with(&lab, "abi-mismatch", &[]).expect_code(4);
    assert_stderr(
        &run,
        &format!(
            "plugin {} has plugin ABI 999, bmhctl needs 1",
            path.display()
        ),
    );
}

#[test]
fn a_name_mismatch_names_path_got_and_expected() {
    let lab = Lab::new().file("hosts.yaml", &hosts(&[("worker-0", "")]));
    let path = stage(&lab, "demo-provisioner", "foo");
    let run = run_with(&lab, "foo", &[]).expect_code(4);
    assert_stderr(
        &run,
        &format!(
            "plugin {}: plugin name is \"demo\", expected \"foo\"",
            path.display()
        ),
    );
}

#[test]
fn a_plugin_that_panics_in_a_call_fails_that_host_only() {
    let lab = Lab::new().file(
        "hosts.yaml",
        &hosts(&[("panic-0", ""), ("ok-0", ""), ("ok-1", IMAGE)]),
    );
    stage(&lab, "test-plugin-panicky", "panicky");
    let run = run_with(&lab, "panicky", &["--timeout", "5m"]).expect_code(1);
    let r = results(&run);
    assert_eq!(r["ok-0"]["state"], "available", "{:#}", r["ok-0"]);
    assert_eq!(r["ok-1"]["state"], "provisioned", "{:#}", r["ok-1"]);
    let p = &r["panic-0"];
    assert_eq!(p["reached"], false, "{p:#}");
    let reason = format!("{} {}", p["reason"], p["errorMessage"]);
    assert!(
        reason.contains("panicked") && reason.contains("deliberate panic"),
        "{p:#}"
    );
}

#[test]
fn plugin_check_reports_a_good_plugin_and_refuses_a_wrong_name() {
    let lab = Lab::new();
    let path = stage(&lab, "demo-provisioner", "demo");
    let path = path.to_str().unwrap();
    let run = lab.run(&["plugin", "check", path, "demo"]).expect_code(0);
    assert!(run.stdout.contains("plugin check PASSED"), "{}", run.stdout);
    assert!(run.stdout.contains("plugin ABI      1"), "{}", run.stdout);
    let run = lab.run(&["plugin", "check", path, "bar"]).expect_code(1);
    assert_stderr(&run, "plugin name is \"demo\", expected \"bar\"");
}

#[test]
fn plugin_list_shows_the_plugins_of_the_directory() {
    let lab = Lab::new();
    stage(&lab, "demo-provisioner", "demo");
    stage(&lab, "demo-provisioner", "foo");
    let dir = plugin_dir(&lab);
    let run = lab
        .run_env(&["plugin", "list"], &[("PROVISIONER_PLUGIN_DIR", &dir)])
        .expect_code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("fixture") && l.contains("built in")),
        "{}",
        run.stdout
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("demo-provisioner.so") && l.contains(" ok")),
        "{}",
        run.stdout
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("foo-provisioner.so") && l.contains("expected \"foo\"")),
        "{}",
        run.stdout
    );
}

/// A Widget (the kind the `reader` test plugin declares in its host configure).
fn widget(name: &str, namespace: &str, colour: &str, secret: &str) -> String {
    format!(
        "apiVersion: example.bmhctl.metal3.io/v1alpha1\nkind: Widget\nmetadata:\n  name: {name}\n  namespace: {namespace}\nspec:\n  colour: {colour}\n  secretName: {secret}\n"
    )
}

#[test]
fn a_plugin_reads_the_objects_of_its_declared_kinds_and_secrets() {
    let mut text = hosts(&[("w-0", ""), ("w-1", ""), ("w-2", "")]);
    for doc in [
        // Read by w-0, with the host's BMC Secret.
        widget("w-0", "default", "blue", "bmc-secret"),
        // Outside the plugin's namespace: not offered, so w-1 finds none.
        widget("w-1", "elsewhere", "red", "bmc-secret"),
        // Names a Secret that does not exist.
        widget("w-2", "default", "green", "no-such-secret"),
        // An unknown kind, duplicated: skipped as asked (and never offered).
        "apiVersion: example.bmhctl.metal3.io/v1alpha1\nkind: Gadget\nmetadata:\n  name: g\n"
            .to_string(),
        "apiVersion: example.bmhctl.metal3.io/v1alpha1\nkind: Gadget\nmetadata:\n  name: g\n"
            .to_string(),
    ] {
        text.push_str("---\n");
        text.push_str(&doc);
    }
    let lab = Lab::new().file("hosts.yaml", &text);
    stage(&lab, "test-plugin-reader", "reader");
    let dir = plugin_dir(&lab);
    let run = lab
        .run_env(
            &[
                "provision",
                "--provisioner=reader",
                "--skip-unknown-kinds",
                "-o",
                "json",
                "--timeout",
                "5m",
                "hosts.yaml",
            ],
            &[
                ("PROVISIONER_PLUGIN_DIR", &dir),
                ("POD_NAMESPACE", "default"),
            ],
        )
        .expect_code(1);
    let r = results(&run);
    let message = |name: &str| {
        let h = &r[name];
        assert_eq!(h["errorType"], "registration error", "{name}: {h:#}");
        h["errorMessage"].as_str().unwrap().to_string()
    };
    assert_eq!(message("w-0"), "widget colour=blue; secret user=admin");
    assert_eq!(message("w-1"), "widget none; secret none");
    assert_eq!(message("w-2"), "widget colour=green; secret none");
}

#[test]
fn duplicate_objects_of_a_declared_kind_are_bad_input() {
    let mut text = hosts(&[("w-0", "")]);
    for _ in 0..2 {
        text.push_str("---\n");
        text.push_str(&widget("w-0", "default", "blue", "bmc-secret"));
    }
    let lab = Lab::new().file("hosts.yaml", &text);
    stage(&lab, "test-plugin-reader", "reader");
    let dir = plugin_dir(&lab);
    let run = lab
        .run_env(
            &["provision", "--provisioner=reader", "hosts.yaml"],
            &[
                ("PROVISIONER_PLUGIN_DIR", &dir),
                ("POD_NAMESPACE", "default"),
            ],
        )
        .expect_code(2);
    assert_stderr(
        &run,
        "hosts.yaml:31:9: Widget default/w-0: defined more than once (first at hosts.yaml:22:9)",
    );
    // Nothing was written.
    assert_eq!(lab.read("hosts.yaml"), text);
}

// --- Trust: a plugin runs with bmhctl's rights, so a file others could have replaced is refused
// before it is opened.

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_plugin_directory_writable_by_others_is_refused_naming_it() {
    let lab = Lab::new().file("hosts.yaml", &hosts(&[("worker-0", "")]));
    stage(&lab, "demo-provisioner", "demo");
    let dir = lab.path("plugins");
    chmod(&dir, 0o777);
    let run = run_with(&lab, "demo", &[]).expect_code(4);
    let first = run.stderr.lines().next().unwrap_or("");
    assert_eq!(
        first,
        format!(
            "error: cannot load provisioner plugin \"demo\": refusing to load plugin {so}: {d} is \
             writable by group and others (mode 0777); make it writable by its owner only: chmod \
             go-w {d}",
            so = dir.join("demo-provisioner.so").display(),
            d = dir.display()
        )
    );
    assert_eq!(lab.read("hosts.yaml"), hosts(&[("worker-0", "")]));
}

#[test]
fn a_plugin_file_writable_by_others_is_refused() {
    let lab = Lab::new().file("hosts.yaml", &hosts(&[("worker-0", "")]));
    let so = stage(&lab, "demo-provisioner", "demo");
    chmod(&so, 0o666);
    let run = run_with(&lab, "demo", &[]).expect_code(4);
    assert_stderr(
        &run,
        &format!(
            "{} is writable by group and others (mode 0666)",
            so.display()
        ),
    );
    chmod(&so, 0o755);
    run_with(&lab, "demo", &[]).expect_code(0);
}

#[test]
fn a_plugin_symlink_leaving_the_directory_is_refused() {
    let lab = Lab::new().file("hosts.yaml", &hosts(&[("worker-0", "")]));
    let elsewhere = lab.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let target = elsewhere.join("demo.so");
    std::fs::copy(&built()["demo-provisioner"], &target).unwrap();
    let dir = plugin_dir(&lab);
    let link = Path::new(&dir).join("demo-provisioner.so");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let run = run_with(&lab, "demo", &[]).expect_code(4);
    assert_stderr(&run, "is a symlink to");
    assert_stderr(&run, "outside the plugin directory");

    // A link within the directory is followed.
    std::fs::remove_file(&link).unwrap();
    std::fs::copy(
        &built()["demo-provisioner"],
        Path::new(&dir).join("demo-v2.so"),
    )
    .unwrap();
    std::os::unix::fs::symlink("demo-v2.so", &link).unwrap();
    run_with(&lab, "demo", &[]).expect_code(0);
}

#[test]
fn a_relative_plugin_directory_is_refused() {
    let lab = Lab::new().file("hosts.yaml", &hosts(&[("worker-0", "")]));
    stage(&lab, "demo-provisioner", "demo");
    let run = lab
        .run_env(
            &["provision", "--provisioner", "demo", "hosts.yaml"],
            &[("PROVISIONER_PLUGIN_DIR", "plugins")],
        )
        .expect_code(2);
    assert_eq!(
        run.stderr.lines().next().unwrap_or(""),
        "error: PROVISIONER_PLUGIN_DIR must be an absolute path, not \"plugins\" (it would be \
         resolved from the working directory)"
    );
    let list = lab
        .run_env(
            &["plugin", "list"],
            &[("PROVISIONER_PLUGIN_DIR", "plugins")],
        )
        .expect_code(2);
    assert_stderr(&list, "must be an absolute path");
}

/// `plugin list -o json`: the directories searched, and an object per plugin with what the
/// table shows (the versions of a plugin not opened are null).
#[test]
fn plugin_list_json_has_an_object_per_plugin() {
    let lab = Lab::new();
    stage(&lab, "demo-provisioner", "demo");
    stage(&lab, "demo-provisioner", "foo");
    let dir = plugin_dir(&lab);
    let run = lab
        .run_env(
            &["plugin", "list", "-o", "json"],
            &[("PROVISIONER_PLUGIN_DIR", &dir)],
        )
        .expect_code(0);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(
        doc["plugins"][1]["sdkVersion"],
        bmhctl_plugin_sdk::SDK_VERSION,
        "{}",
        run.stdout
    );
    let text = run
        .stdout
        .replace(&dir, "[plugin dir]")
        .replace(bmhctl_plugin_sdk::SDK_VERSION, "[sdk]");
    insta::assert_snapshot!("plugin_list_json", text);
}

#[test]
fn plugin_list_reports_refused_files_without_opening_them() {
    let lab = Lab::new();
    stage(&lab, "demo-provisioner", "demo");
    let dir = plugin_dir(&lab);
    // Not a library: opened, it would fail with "failed to open"; refused, it is never opened.
    let junk = Path::new(&dir).join("junk-provisioner.so");
    std::fs::write(&junk, "not a shared object\n").unwrap();
    chmod(&junk, 0o646);
    let run = lab
        .run_env(&["plugin", "list"], &[("PROVISIONER_PLUGIN_DIR", &dir)])
        .expect_code(0);
    let junk_line = run
        .stdout
        .lines()
        .find(|l| l.contains("junk-provisioner.so"))
        .unwrap_or_else(|| panic!("no junk row:\n{}", run.stdout));
    assert!(
        junk_line.contains("refusing to load plugin") && junk_line.contains("writable by others"),
        "{junk_line}"
    );
    assert!(!run.stdout.contains("failed to open"), "{}", run.stdout);
    assert!(
        run.stdout
            .lines()
            .any(|l| l.contains("demo-provisioner.so") && l.contains(" ok")),
        "{}",
        run.stdout
    );
}
