//! `bmhctl plan`, the `--dry-run` of `provision`, `deprovision`, `delete` and `apply`, and
//! `bmhctl diff`, through the binary with the fixture on real files and a real store: each
//! prints what would happen, and every byte of the directory is the same afterwards.

use crate::lab::{Lab, Run, host, secret};
use crate::refused_input::listing;

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";
const NEW_IMAGE_URL: &str = "http://images.example/os-v2.qcow2";

use crate::canary::PASSWORD_B64;

fn hosts_file() -> String {
    format!(
        "{}---\n{}---\n{}",
        secret("bmc-secret"),
        host(
            "worker-0",
            &format!("bootMACAddress: 00:11:22:33:44:55\n{IMAGE}")
        ),
        host("spare-0", "bootMACAddress: 00:11:22:33:44:56"),
    )
}

fn run(lab: &Lab, args: &[&str]) -> Run {
    lab.run_env(args, &[("BMHCTL_PROVISIONER", "fixture")])
}

/// Runs `args`, which must write nothing: every file, directory and mode of the lab the same.
#[track_caller]
fn run_writing_nothing(lab: &Lab, args: &[&str]) -> Run {
    let before = listing(&lab.path(""));
    let out = run(lab, args);
    assert_eq!(
        listing(&lab.path("")),
        before,
        "`bmhctl {}` changed the directory\n{}",
        args.join(" "),
        out.stderr
    );
    assert!(!out.stdout.contains(PASSWORD_B64) && !out.stderr.contains(PASSWORD_B64));
    out
}

/// The hosts file, provisioned by the fixture.
fn provisioned_files() -> Lab {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    run(&lab, &["provision", "-q", "hosts.yaml"]).expect_code(0);
    lab
}

/// The hosts file applied to a store, whose hosts the fixture drove to their goals.
fn provisioned_store() -> Lab {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    run(&lab, &["apply", "-f", "hosts.yaml", "--store", "store"]).expect_code(0);
    run(&lab, &["reconcile", "--store", "store", "-q"]).expect_code(0);
    lab
}

fn change_image(lab: &Lab) {
    let text = lab
        .read("hosts.yaml")
        // The spec's only: a status written back below it names the image deployed.
        .replacen("http://images.example/os.qcow2", NEW_IMAGE_URL, 1);
    std::fs::write(lab.path("hosts.yaml"), text).unwrap();
}

/// The plan of host `name` in a `PlanResult` document.
fn host_plan<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {doc}"))
}

fn path_of(doc: &serde_json::Value, name: &str) -> Vec<String> {
    host_plan(doc, name)["path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn plan_of_the_example_hosts_lists_each_path_and_writes_nothing() {
    let example =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/hosts.example.yaml"))
            .unwrap();
    let lab = Lab::new().file("hosts.yaml", &example);
    let table = run_writing_nothing(&lab, &["plan", "-f", "hosts.yaml"]).expect_code(0);
    insta::assert_snapshot!("example_table", table.stdout);
    let json =
        run_writing_nothing(&lab, &["plan", "-f", "hosts.yaml", "-o", "json"]).expect_code(0);
    insta::assert_snapshot!("example_json", json.stdout);
    let doc = json.json();
    assert_eq!(doc["kind"], "PlanResult");
    assert_eq!(
        path_of(&doc, "worker-0"),
        [
            "",
            "registering",
            "inspecting",
            "preparing",
            "available",
            "provisioning",
            "provisioned"
        ]
    );
    assert_eq!(
        path_of(&doc, "legacy-0").last().unwrap(),
        "externally provisioned"
    );
    // Live ISOs write no disk; the fake hosts' images are written after a cleaning.
    let destructive: Vec<&str> = doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["destructive"] == true)
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(destructive, ["fake-0", "fake-1"], "{doc}");
    assert!(
        doc["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["reaches"] == true),
        "{doc}"
    );
}

#[test]
fn plan_of_an_image_change_on_a_provisioned_host_says_it_deprovisions() {
    let lab = provisioned_files();
    // At the goal: nothing to do.
    let doc = run_writing_nothing(&lab, &["plan", "-f", "hosts.yaml", "-o", "json"]).json();
    assert_eq!(path_of(&doc, "worker-0"), ["provisioned"]);
    assert_eq!(
        host_plan(&doc, "worker-0")["actions"],
        serde_json::json!([])
    );
    change_image(&lab);
    let table = run_writing_nothing(&lab, &["plan", "-f", "hosts.yaml", "worker-0"]).expect_code(0);
    insta::assert_snapshot!("image_change_table", table.stdout);
    let doc = run_writing_nothing(&lab, &["plan", "-f", "hosts.yaml", "-o", "json"]).json();
    let worker = host_plan(&doc, "worker-0");
    assert_eq!(
        path_of(&doc, "worker-0"),
        [
            "provisioned",
            "deprovisioning",
            "available",
            "provisioning",
            "provisioned"
        ]
    );
    assert_eq!(worker["destructive"], true);
    assert_eq!(
        worker["actions"][0],
        serde_json::json!({"kind": "deprovision", "text": "deprovision and clean disks", "destructive": true})
    );
    assert_eq!(
        worker["actions"][1]["text"],
        format!("deploy image {NEW_IMAGE_URL}")
    );
    assert_eq!(
        host_plan(&doc, "spare-0")["path"],
        serde_json::json!(["available"])
    );
}

#[test]
fn plan_on_a_store_after_edits_writes_nothing_to_it() {
    let lab = provisioned_store();
    change_image(&lab);
    run(&lab, &["apply", "-f", "hosts.yaml", "--store", "store"]).expect_code(0);
    let doc = run_writing_nothing(&lab, &["plan", "--store", "store", "-o", "json"])
        .expect_code(0)
        .json();
    assert_eq!(
        path_of(&doc, "worker-0"),
        [
            "provisioned",
            "deprovisioning",
            "available",
            "provisioning",
            "provisioned"
        ]
    );
    assert_eq!(host_plan(&doc, "worker-0")["destructive"], true);
    assert_eq!(host_plan(&doc, "spare-0")["destructive"], false);
    // A host marked for deletion in the store plans its delete path, as `watch` would run it.
    run(
        &lab,
        &["delete", "--no-wait", "spare-0", "--store", "store"],
    )
    .expect_code(0);
    let doc = run_writing_nothing(&lab, &["plan", "--store", "store", "-o", "json"]).json();
    let spare = host_plan(&doc, "spare-0");
    assert_eq!(spare["goal"], "deleted");
    assert_eq!(path_of(&doc, "spare-0").last().unwrap(), "deleted");
    assert_eq!(spare["destructive"], true, "{spare}");
}

#[test]
fn dry_runs_print_the_plan_of_their_command_and_write_nothing() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let dry = run_writing_nothing(&lab, &["provision", "--dry-run", "hosts.yaml"]).expect_code(0);
    let plan = run_writing_nothing(&lab, &["plan", "-f", "hosts.yaml"]).expect_code(0);
    assert_eq!(dry.stdout, plan.stdout);
    assert!(dry.stdout.contains("-> provisioned"), "{}", dry.stdout);

    let lab = provisioned_files();
    let doc = run_writing_nothing(
        &lab,
        &[
            "deprovision",
            "--dry-run",
            "-f",
            "hosts.yaml",
            "worker-0",
            "-o",
            "json",
        ],
    )
    .expect_code(0)
    .json();
    assert_eq!(doc["command"], "deprovision");
    assert_eq!(
        path_of(&doc, "worker-0"),
        ["provisioned", "deprovisioning", "available"]
    );
    assert_eq!(host_plan(&doc, "worker-0")["destructive"], true);

    let doc = run_writing_nothing(
        &lab,
        &["delete", "--dry-run", "-f", "hosts.yaml", "-o", "json"],
    )
    .expect_code(0)
    .json();
    assert_eq!(doc["command"], "delete");
    for name in ["worker-0", "spare-0"] {
        let h = host_plan(&doc, name);
        assert_eq!(
            (&h["goal"], &h["reaches"]),
            (&"deleted".into(), &true.into())
        );
        assert_eq!(path_of(&doc, name).last().unwrap(), "deleted");
    }

    let lab = provisioned_store();
    let doc = run_writing_nothing(
        &lab,
        &[
            "delete",
            "--dry-run",
            "worker-0",
            "--store",
            "store",
            "-o",
            "json",
        ],
    )
    .expect_code(0)
    .json();
    assert_eq!(doc["hosts"].as_array().unwrap().len(), 1);
    assert_eq!(path_of(&doc, "worker-0").last().unwrap(), "deleted");
    // As without --dry-run, a store delete names its hosts.
    run_writing_nothing(&lab, &["delete", "--dry-run", "--store", "store"]).expect_code(2);

    change_image(&lab);
    let dry = run_writing_nothing(
        &lab,
        &["apply", "--dry-run", "-f", "hosts.yaml", "--store", "store"],
    )
    .expect_code(0);
    let diff =
        run_writing_nothing(&lab, &["diff", "-f", "hosts.yaml", "--store", "store"]).expect_code(1);
    assert_eq!(dry.stdout, diff.stdout);
}

#[test]
fn a_plan_refuses_what_its_command_refuses_and_writes_nothing() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let out = run_writing_nothing(&lab, &["plan", "-f", "hosts.yaml", "nosuch"]).expect_code(2);
    assert!(out.stderr.contains("nosuch"), "{}", out.stderr);
    let lab = Lab::new().file("hosts.yaml", &host("h0", ""));
    let out = run_writing_nothing(&lab, &["provision", "--dry-run", "hosts.yaml"]).expect_code(2);
    assert!(out.stderr.contains("bmc-secret"), "{}", out.stderr);
}

/// `text` with the store's uids and spec hashes, which change from run to run, replaced.
fn normalised(text: &str) -> String {
    text.lines()
        .map(|l| {
            for key in ["uid: ", "specHash: "] {
                if let Some(i) = l.find(key) {
                    return format!("{}{key}[{}]", &l[..i], key.trim_end_matches(": "));
                }
            }
            l.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn diff_shows_what_apply_would_change_and_exits_as_kubectl_diff() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    // No store yet: everything would be created; none is created by the diff.
    let out =
        run_writing_nothing(&lab, &["diff", "-f", "hosts.yaml", "--store", "store"]).expect_code(1);
    assert!(
        out.stdout
            .contains("+++ MERGED/metal3.io.v1alpha1.BareMetalHost.default.worker-0"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("+  password: \"*** (after)\""),
        "{}",
        out.stdout
    );
    // No uid is shown for an object to create: the apply makes it.
    assert!(!out.stdout.contains("uid:"), "{}", out.stdout);
    run(&lab, &["apply", "-f", "hosts.yaml", "--store", "store"]).expect_code(0);
    let out =
        run_writing_nothing(&lab, &["diff", "-f", "hosts.yaml", "--store", "store"]).expect_code(0);
    assert_eq!(out.stdout, "");
    change_image(&lab);
    let out =
        run_writing_nothing(&lab, &["diff", "-f", "hosts.yaml", "--store", "store"]).expect_code(1);
    insta::assert_snapshot!("diff_image_change", normalised(&out.stdout));
    // A new password is a change, shown masked.
    let text = lab.read("hosts.yaml").replace(PASSWORD_B64, "c2VjcmV0");
    std::fs::write(lab.path("hosts.yaml"), text).unwrap();
    let out =
        run_writing_nothing(&lab, &["diff", "-f", "hosts.yaml", "--store", "store"]).expect_code(1);
    assert!(
        out.stdout.contains("-  password: \"*** (before)\"")
            && out.stdout.contains("+  password: \"*** (after)\""),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("c2VjcmV0"));
    // Bad input: above 1, nothing written.
    let lab = Lab::new().file("hosts.yaml", "kind: [");
    run_writing_nothing(&lab, &["diff", "-f", "hosts.yaml", "--store", "store"]).expect_code(2);
}

#[test]
fn a_plan_takes_no_lock_so_it_runs_while_a_watch_holds_the_files() {
    use std::io::BufRead;
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let mut watch = std::process::Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
        .current_dir(lab.path(""))
        .env("BMHCTL_PROVISIONER", "fixture")
        .env("BMHCTL_TIME_SCALE", "0")
        .args(["watch", "-f", "hosts.yaml"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start bmhctl watch -f");
    // It says so once it holds the files' locks.
    let mut line = String::new();
    std::io::BufReader::new(watch.stderr.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("watching hosts.yaml"), "{line}");
    // A writer is refused; a plan and a dry run are not.
    run(&lab, &["provision", "hosts.yaml"]).expect_code(3);
    let plan = run(&lab, &["plan", "-f", "hosts.yaml"]);
    let dry = run(&lab, &["provision", "--dry-run", "hosts.yaml"]);
    let _ = watch.kill();
    let _ = watch.wait();
    plan.expect_code(0);
    dry.expect_code(0);
}

/// The fixture's plan of a host never deployed, with automated cleaning on (BMO's default).
const FRESH_WORKER_PLAN: &str = "\
NAME      FROM   PATH                                                                                         ACTIONS                                                                                                                                                               DESTRUCTIVE
worker-0  (new)  (new) -> registering -> inspecting -> preparing -> available -> provisioning -> provisioned  register BMC, inspect hardware, clean disks (automated cleaning, if not done yet) (destructive), deploy image http://images.example/os.qcow2 (destructive), power on  yes
";

#[test]
fn a_first_deploy_is_destructive_cleaning_and_writing_the_image() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let out = run_writing_nothing(&lab, &["plan", "-f", "hosts.yaml", "worker-0"]).expect_code(0);
    assert_eq!(out.stdout, FRESH_WORKER_PLAN);
    assert_eq!(out.stderr, "");
    // `provision --dry-run` prints the same.
    let out = run_writing_nothing(
        &lab,
        &[
            "provision",
            "--dry-run",
            "-f",
            "hosts.yaml",
            "--host",
            "worker-0",
        ],
    )
    .expect_code(0);
    assert_eq!(out.stdout, FRESH_WORKER_PLAN);
}

/// The message of the default provisioner with no Ironic configured; `{so}` is its plugin.
fn no_ironic(so: &str, contexts: &str) -> String {
    format!(
        "cannot load provisioner plugin \"ironic\": cannot initialize provisioner plugin {so}: \
         IRONIC_ENDPOINT is not set (no Ironic is configured: use --provisioner fixture to run \
         without one, --context NAME for a context's Ironic (contexts: {contexts}; see bmhctl \
         config get-contexts), or set IRONIC_ENDPOINT)"
    )
}

#[test]
fn with_no_ironic_configured_plan_is_made_from_the_status_and_the_commands_name_the_ways_out() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    let plugins = lab.path("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let so = plugins.join("ironic-provisioner.so");
    std::fs::copy(crate::lab::cdylib("ironic-provisioner"), &so).unwrap();
    let so = so.to_str().unwrap();
    let env = [
        ("PROVISIONER_PLUGIN_DIR", plugins.to_str().unwrap()),
        ("IRONIC_ENDPOINT", ""),
        ("IRONIC_NAME", ""),
    ];
    let before = listing(&lab.path(""));
    let plan = lab
        .run_env(&["plan", "-f", "hosts.yaml", "worker-0"], &env)
        .expect_code(0);
    assert_eq!(plan.stdout, FRESH_WORKER_PLAN);
    assert_eq!(
        plan.stderr,
        format!(
            "warning: {}; planning from the hosts' status and spec alone\n",
            no_ironic(so, "none yet")
        )
    );
    for args in [
        &["provision", "hosts.yaml"][..],
        &["deprovision", "-f", "hosts.yaml"],
        &["delete", "-f", "hosts.yaml"],
    ] {
        let run = lab.run_env(args, &env).expect_code(4);
        assert_eq!(
            run.stderr,
            format!("error: {}\n", no_ironic(so, "none yet")),
            "{args:?}"
        );
    }
    assert_eq!(listing(&lab.path("")), before, "nothing is written");
    // The contexts of the config file are named.
    std::fs::write(
        lab.path("config.yaml"),
        "contexts:\n- name: lab\n  provisioner: fixture\n- name: prod\n",
    )
    .unwrap();
    let config = lab.path("config.yaml");
    let mut env = env.to_vec();
    env.push(("BMHCTL_CONFIG", config.to_str().unwrap()));
    let run = lab
        .run_env(&["provision", "hosts.yaml"], &env)
        .expect_code(4);
    assert_eq!(
        run.stderr,
        format!("error: {}\n", no_ironic(so, "lab, prod"))
    );
}
