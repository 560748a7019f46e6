//! The offline kit: packed here by `scripts/offline-kit.sh` (this machine has the network), then
//! unpacked into a fresh directory and installed, its example run, inside a network namespace
//! that has only loopback.

use std::path::Path;
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[track_caller]
fn run(cmd: &mut Command) -> (String, String) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    (stdout, stderr)
}

#[test]
#[ignore = "needs root (a network namespace), the network to pack the kit, apt-get, dpkg-deb and \
            cargo-deb; scripts/test.sh runs it"]
fn the_offline_kit_installs_and_runs_the_example_with_no_network() {
    let dir = tempfile::tempdir().unwrap();
    let deb = crate::package::deb();
    let (packed, _) = run(Command::new(repo().join("scripts/offline-kit.sh"))
        .arg(dir.path().join("out"))
        .env("BMHCTL_DEB", &deb)
        .current_dir(repo()));
    let tarball = packed
        .lines()
        .last()
        .expect("the kit's path")
        .trim()
        .to_string();
    let site = dir.path().join("site");
    std::fs::create_dir(&site).unwrap();
    run(Command::new("tar").args(["xzf", &tarball, "-C"]).arg(&site));
    let kit = site.join("bmhctl-offline-kit");
    let prefix = dir.path().join("prefix");

    // Only loopback, checked before anything runs: nothing beyond this machine answers.
    let script = format!(
        "set -euo pipefail
ip link set lo up
links=$(ip -o link show | wc -l)
[[ $links == 1 ]] || {{ echo \"more than loopback: $(ip -o link show)\" >&2; exit 1; }}
if python3 -c 'import socket; socket.create_connection((\"pypi.org\", 443), timeout=5)' 2>/dev/null; then
  echo 'the network answers' >&2; exit 1
fi
cd {kit}
./install.sh --prefix {prefix}
",
        kit = kit.display(),
        prefix = prefix.display()
    );
    let path = std::env::var("PATH").unwrap_or_default();
    let (stdout, stderr) = run(Command::new("unshare")
        .args(["--net", "bash", "-c", &script])
        .env_clear()
        .env("PATH", format!("/usr/sbin:/sbin:{path}"))
        .env("HOME", dir.path())
        .env("LANG", "C.UTF-8"));
    let all = format!("{stdout}\n--- stderr\n{stderr}");
    assert!(stdout.contains("installed: bmhctl "), "{all}");
    assert!(
        stdout.contains("Provisioning example-run/hosts.yaml"),
        "{all}"
    );
    // The lab came from the kit: its venvs and ipmitool are in the kit's directory.
    assert!(
        kit.join(".state/ironic/.venv-ironic/bin/ironic").exists(),
        "{all}"
    );
    assert!(
        kit.join(".state/ironic/ipmitool/bin/ipmitool").exists(),
        "{all}"
    );

    // Every host of the example reached its goal, as its file says.
    let bmhctl = prefix.join("usr/bin/bmhctl");
    let (got, _) = run(Command::new(&bmhctl)
        .args(["get", "-o", "json", "-f", "example-run/hosts.yaml"])
        .current_dir(&kit));
    let got: serde_json::Value = serde_json::from_str(&got).unwrap();
    let hosts = got["items"].as_array().expect("items");
    let names: Vec<&str> = hosts
        .iter()
        .map(|h| h["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "worker-0", "spare-0", "legacy-0", "ipmi-0", "fake-0", "fake-1", "fake-2"
        ],
        "{all}"
    );
    for h in hosts {
        let (name, status) = (&h["metadata"]["name"], &h["status"]);
        assert_eq!(
            status["operationalStatus"], "OK",
            "{name}: {status:#}\n{all}"
        );
        assert_eq!(status["errorMessage"].as_str().unwrap_or(""), "", "{name}");
        let state = status["provisioning"]["state"].as_str().unwrap_or("");
        let image = h["spec"].get("image").is_some() || h["spec"].get("customDeploy").is_some();
        let online = h["spec"]["online"] == true;
        let goal = if image && online {
            "provisioned"
        } else {
            "available"
        };
        let goal = if h["spec"]["externallyProvisioned"] == true {
            "externally provisioned"
        } else {
            goal
        };
        assert_eq!(state, goal, "{name}: {status:#}\n{all}");
    }
}
