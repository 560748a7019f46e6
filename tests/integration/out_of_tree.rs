//! The out-of-tree plugin example (`examples/out-of-tree-plugin`, plugin `hello`): built as a
//! third party builds it (its own workspace, its own Cargo.lock, `--locked`), staged as
//! `hello-provisioner.so`, and loaded by the real bmhctl through the real loader.

use crate::lab::{Lab, Run, host, secret};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

/// `libhello_provisioner.so`, built once per test run with the cargo that runs the tests, into
/// its own target directory under the workspace's (`target/out-of-tree`).
fn built() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let manifest = root.join("examples/out-of-tree-plugin/Cargo.toml");
        let target_dir = root.join("target/out-of-tree");
        let out = Command::new(env!("CARGO"))
            .current_dir(root)
            .arg("build")
            .arg("--locked")
            .arg("--message-format=json-render-diagnostics")
            .arg("--manifest-path")
            .arg(&manifest)
            .arg("--target-dir")
            .arg(&target_dir)
            .output()
            .expect("run cargo build for the out-of-tree plugin");
        assert!(
            out.status.success(),
            "building the out-of-tree plugin failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lib = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|msg| {
                msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "hello_provisioner"
            })
            .flat_map(|msg| {
                msg["filenames"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|f| f.as_str().map(PathBuf::from))
                    .collect::<Vec<_>>()
            })
            .find(|f| f.extension().is_some_and(|e| e == "so"))
            .expect("cargo reported no libhello_provisioner.so");
        assert!(
            lib.starts_with(&target_dir),
            "{} is outside {}",
            lib.display(),
            target_dir.display()
        );
        lib
    })
}

/// Stages the example as `<dir>/hello-provisioner.so`; returns the plugin directory.
fn stage(lab: &Lab) -> PathBuf {
    let dir = lab.path("plugins");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(built(), dir.join("hello-provisioner.so")).expect("stage the hello plugin");
    dir
}

fn hosts(specs: &[(&str, &str)]) -> String {
    let mut text = secret("bmc-secret");
    for (name, spec) in specs {
        text.push_str("---\n");
        text.push_str(&host(name, spec));
    }
    text
}

fn run(lab: &Lab, dir: &Path, args: &[&str]) -> Run {
    lab.run_env(args, &[("PROVISIONER_PLUGIN_DIR", dir.to_str().unwrap())])
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

#[test]
fn the_out_of_tree_plugin_provisions_hosts() {
    let lab = Lab::new().file(
        "hosts.yaml",
        &hosts(&[("worker-0", IMAGE), ("worker-1", IMAGE)]),
    );
    let dir = stage(&lab);
    let run = run(
        &lab,
        &dir,
        &[
            "provision",
            "--provisioner",
            "hello",
            "-o",
            "json",
            "hosts.yaml",
        ],
    )
    .expect_code(0);
    let r = results(&run);
    for name in ["worker-0", "worker-1"] {
        let h = &r[name];
        assert_eq!(h["state"], "provisioned", "{name}: {h:#}");
        assert_eq!(h["reached"], true, "{name}: {h:#}");
        assert_eq!(
            h["provisioningID"],
            format!("hello-{name}"),
            "{name}: {h:#}"
        );
    }

    // The status written back to the user's file carries the plugin's ID, the provisioned image
    // and the hardware the plugin reported.
    let after = lab.read("hosts.yaml");
    for needle in [
        "    ID: hello-worker-0\n",
        "    ID: hello-worker-1\n",
        "    state: provisioned\n",
        "url: http://images.example/os.qcow2",
        "Hello Systems",
    ] {
        assert!(after.contains(needle), "no {needle:?} in:\n{after}");
    }
    assert!(!after.contains("state: registering"), "{after}");
}

#[test]
fn the_out_of_tree_plugin_is_listed_with_its_versions() {
    let lab = Lab::new();
    let dir = stage(&lab);
    let run = run(&lab, &dir, &["plugin", "list"]).expect_code(0);
    let line = run
        .stdout
        .lines()
        .find(|l| l.contains("hello-provisioner.so"))
        .unwrap_or_else(|| panic!("hello not listed:\n{}", run.stdout));
    assert!(line.contains("hello"), "{line}");
    assert!(line.contains(bmhctl_plugin_sdk::SDK_VERSION), "{line}");
}
