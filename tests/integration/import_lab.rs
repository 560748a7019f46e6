//! `bmhctl import --from-ironic` against the real Ironic of the lab (`IRONIC_ENDPOINT` and
//! friends, exported by `scripts/test.sh` or by sourcing a lab's `bmhctl.env`): nodes enrolled
//! and deployed with plain API calls, imported, then `bmhctl provision` on the imported file
//! adopts them: they stay provisioned and Ironic deploys nothing again.

use crate::lab::{Lab, Run};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const API_VERSION: &str = "1.89";
const IMAGE_URL: &str = "http://127.0.0.1:6386/images/import-os.qcow2";
const IMAGE_SHA256: &str = "89abcdef0123456789abcdef0123456789abcdef0123456789abcdef01234567";

/// The lab's Ironic: its API root (`http://HOST:PORT`), basic auth when it has it, and the
/// environment bmhctl gets.
struct Ironic {
    root: String,
    auth: Option<(String, String)>,
    env: Vec<(String, String)>,
}

fn lab_ironic() -> Ironic {
    let endpoint = std::env::var("IRONIC_ENDPOINT").unwrap_or_else(|_| {
        panic!(
            "IRONIC_ENDPOINT is not set: the import test needs the Ironic lab. Run ./scripts/test.sh, \
             or start scripts/ironic/start-ironic.sh PORT and source its bmhctl.env"
        )
    });
    let root = endpoint
        .trim_end_matches('/')
        .trim_end_matches("/v1")
        .to_string();
    let mut env = vec![("IRONIC_ENDPOINT".to_string(), endpoint)];
    let auth = std::env::var("METAL3_AUTH_ROOT_DIR").ok().and_then(|dir| {
        env.push(("METAL3_AUTH_ROOT_DIR".to_string(), dir.clone()));
        let read = |f: &str| std::fs::read_to_string(Path::new(&dir).join("ironic").join(f));
        Some((read("username").ok()?, read("password").ok()?))
    });
    Ironic { root, auth, env }
}

impl Ironic {
    /// `(status, body)` of one API call, made with curl (as the lab scripts are).
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let mut cmd = Command::new("curl");
        cmd.args(["-sS", "--max-time", "30", "-X", method])
            .args([
                "-H",
                &format!("X-OpenStack-Ironic-API-Version: {API_VERSION}"),
            ])
            .args(["-H", "Accept: application/json", "-w", "\n%{http_code}"]);
        if let Some((u, p)) = &self.auth {
            cmd.args(["-u", &format!("{u}:{p}")]);
        }
        if let Some(b) = body {
            cmd.args(["-H", "Content-Type: application/json", "--data-binary"])
                .arg(b.to_string());
        }
        let out = cmd
            .arg(format!("{}{path}", self.root))
            .output()
            .expect("run curl");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
        let v = serde_json::from_str(body).unwrap_or(Value::String(body.to_string()));
        (code.trim().parse().unwrap_or(0), v)
    }

    #[track_caller]
    fn ok(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let (code, v) = self.call(method, path, body);
        assert!((200..300).contains(&code), "{method} {path}: {code} {v}");
        v
    }

    fn node(&self, id: &str) -> Value {
        self.ok("GET", &format!("/v1/nodes/{id}"), None)
    }

    /// Waits until the node's provision state is `want` (and no target is pending).
    #[track_caller]
    fn wait_state(&self, id: &str, want: &str) {
        let start = Instant::now();
        loop {
            let n = self.node(id);
            if n["provision_state"] == want && n["target_provision_state"].is_null() {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "node {id} never reached {want}: {n:#}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn provision(&self, id: &str, target: &str, then: &str) {
        self.ok(
            "PUT",
            &format!("/v1/nodes/{id}/states/provision"),
            Some(&json!({ "target": target })),
        );
        self.wait_state(id, then);
    }

    /// A fake-hardware node enrolled, its port created and moved to `available`, then (when
    /// `deploy`) deployed with an image and powered on: all as a user of Ironic would.
    fn enrol(&self, name: &str, mac: &str, deploy: bool) -> String {
        let node = self.ok(
            "POST",
            "/v1/nodes",
            Some(&json!({
                "name": name,
                "driver": "fake-hardware",
                "properties": {"capabilities": "boot_mode:uefi"},
            })),
        );
        let uuid = node["uuid"].as_str().unwrap().to_string();
        self.ok(
            "POST",
            "/v1/ports",
            Some(&json!({"node_uuid": uuid, "address": mac, "pxe_enabled": true})),
        );
        self.provision(&uuid, "manage", "manageable");
        self.provision(&uuid, "provide", "available");
        if deploy {
            self.ok(
                "PATCH",
                &format!("/v1/nodes/{uuid}"),
                Some(&json!([
                    {"op": "add", "path": "/instance_info/image_source", "value": IMAGE_URL},
                    {"op": "add", "path": "/instance_info/image_os_hash_algo", "value": "sha256"},
                    {"op": "add", "path": "/instance_info/image_os_hash_value", "value": IMAGE_SHA256},
                    {"op": "add", "path": "/instance_info/image_disk_format", "value": "qcow2"},
                ])),
            );
            self.provision(&uuid, "active", "active");
            self.ok(
                "PUT",
                &format!("/v1/nodes/{uuid}/states/power"),
                Some(&json!({"target": "power on"})),
            );
            let start = Instant::now();
            while self.node(&uuid)["power_state"] != "power on" {
                assert!(
                    start.elapsed() < Duration::from_secs(60),
                    "{uuid} never powered on"
                );
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        uuid
    }

    /// Removes the node whatever its state (maintenance lets an active node go).
    fn remove(&self, uuid: &str) {
        let _ = self.call(
            "PUT",
            &format!("/v1/nodes/{uuid}/maintenance"),
            Some(&json!({"reason": "import test cleanup"})),
        );
        let _ = self.call("DELETE", &format!("/v1/nodes/{uuid}"), None);
    }

    /// Ironic's log, as the lab scripts keep it (`$BMHCTL_LAB_DIR/ironic-PORT/ironic.log`).
    fn log(&self) -> String {
        let port = self.root.rsplit(':').next().unwrap();
        let dir = match std::env::var_os("BMHCTL_LAB_DIR") {
            Some(d) if !d.is_empty() => {
                let d = PathBuf::from(d);
                if d.is_absolute() {
                    d
                } else {
                    Path::new(env!("CARGO_MANIFEST_DIR")).join(d)
                }
            }
            _ => Path::new(env!("CARGO_MANIFEST_DIR")).join(".state/ironic"),
        };
        let path = dir.join(format!("ironic-{port}")).join("ironic.log");
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("the lab's Ironic log {}: {e}", path.display()))
    }
}

/// Removes the nodes when the test ends, passed or not.
struct Cleanup<'a>(&'a Ironic, Vec<String>);

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        for u in &self.1 {
            self.0.remove(u);
        }
    }
}

fn bmhctl(lab: &Lab, ironic: &Ironic, args: &[&str]) -> Run {
    let plugins = lab.path("plugins");
    if !plugins.exists() {
        std::fs::create_dir_all(&plugins).unwrap();
        std::fs::copy(
            crate::lab::cdylib("ironic-provisioner"),
            plugins.join("ironic-provisioner.so"),
        )
        .unwrap();
    }
    let mut envs: Vec<(&str, &str)> = vec![
        ("PROVISIONER_PLUGIN_DIR", plugins.to_str().unwrap()),
        ("BMHCTL_TIME_SCALE", "0.2"),
        ("METAL3_AUTH_ROOT_DIR", "/nonexistent"),
        ("DEPLOY_ISO_URL", ""),
    ];
    envs.extend(ironic.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    lab.run_env(args, &envs)
}

fn documents(text: &str) -> Vec<Value> {
    text.split("\n---\n")
        .map(|d| d.trim_start_matches("---\n"))
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_saphyr::from_str::<Value>(d).unwrap())
        .collect()
}

fn host<'a>(docs: &'a [Value], name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == "BareMetalHost" && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no host {name} in {docs:#?}"))
}

#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn imported_active_nodes_are_adopted_without_a_new_deploy() {
    let ironic = lab_ironic();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let tag = format!("{}-{}", std::process::id(), nanos % 100_000);
    let names = [
        format!("import-{tag}-0"),
        format!("import-{tag}-1"),
        format!("import-{tag}-spare"),
    ];
    let macs = [
        "52:54:00:1e:00:01",
        "52:54:00:1e:00:02",
        "52:54:00:1e:00:03",
    ];
    let mut cleanup = Cleanup(&ironic, Vec::new());
    for (i, n) in names.iter().enumerate() {
        let uuid = ironic.enrol(n, macs[i], i < 2);
        cleanup.1.push(uuid);
    }
    let uuids = cleanup.1.clone();
    let before: Vec<Value> = uuids.iter().map(|u| ironic.node(u)).collect();

    let lab = Lab::new();
    let mut args = vec!["import", "--from-ironic"];
    args.extend(names.iter().map(String::as_str));
    let run = bmhctl(&lab, &ironic, &args).expect_code(0);
    assert_eq!(run.stderr, "", "fake-hardware has no password to mask");
    let docs = documents(&run.stdout);
    assert_eq!(
        docs.len(),
        6,
        "a Secret and a host per node: {}",
        run.stdout
    );
    for (i, n) in names.iter().enumerate() {
        let h = host(&docs, n);
        assert_eq!(h["spec"]["bmc"]["address"], format!("fake-hardware://{n}"));
        assert_eq!(
            h["spec"]["bmc"]["credentialsName"],
            format!("{n}-bmc-secret")
        );
        assert_eq!(h["spec"]["bootMACAddress"], macs[i]);
        assert_eq!(h["spec"]["bootMode"], "UEFI");
        assert_eq!(h["status"]["provisioning"]["ID"], uuids[i].as_str());
        if i < 2 {
            assert_eq!(h["status"]["provisioning"]["state"], "provisioned");
            let image = json!({"url": IMAGE_URL, "checksum": IMAGE_SHA256, "checksumType": "sha256", "format": "qcow2"});
            assert_eq!(h["spec"]["image"], image);
            assert_eq!(h["status"]["provisioning"]["image"], image);
            assert_eq!(h["spec"]["online"], true);
            assert_eq!(h["status"]["poweredOn"], true);
        } else {
            assert_eq!(h["status"]["provisioning"]["state"], "available");
            assert!(h["spec"]["image"].is_null());
        }
    }
    // The same through a context naming the lab's Ironic (its credentials in a 0600 file),
    // with nothing of Ironic in the environment.
    let mut config = format!(
        "current-context: lab\ncontexts:\n- name: lab\n  ironicEndpoint: {}\n",
        ironic.root
    );
    if let Some((u, p)) = &ironic.auth {
        let creds = lab.path("ironic-credentials.yaml");
        std::fs::write(&creds, format!("username: {u}\npassword: {p}\n")).unwrap();
        std::fs::set_permissions(&creds, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        config.push_str("  credentialsFile: ironic-credentials.yaml\n");
    }
    std::fs::write(lab.path("config.yaml"), config).unwrap();
    let mut ctx_args = args.clone();
    ctx_args.push("--output-file=via-context.yaml");
    let via_context = lab
        .run_env(
            &ctx_args,
            &[
                ("BMHCTL_CONFIG", lab.path("config.yaml").to_str().unwrap()),
                ("IRONIC_ENDPOINT", ""),
                ("METAL3_AUTH_ROOT_DIR", ""),
                // The plugin lists the nodes, as it drives them.
                (
                    "PROVISIONER_PLUGIN_DIR",
                    lab.path("plugins").to_str().unwrap(),
                ),
            ],
        )
        .expect_code(0);
    assert_eq!(via_context.stderr, "");
    assert_eq!(lab.read("via-context.yaml"), run.stdout);

    // -l selects on the generated labels.
    let mut selected = args.clone();
    selected.extend(["-l", "ironic.state=active"]);
    let only = bmhctl(&lab, &ironic, &selected).expect_code(0);
    assert_eq!(documents(&only.stdout).len(), 4, "{}", only.stdout);

    std::fs::write(lab.path("hosts.yaml"), &run.stdout).unwrap();
    let log_before = ironic.log();
    let provisioned = bmhctl(
        &lab,
        &ironic,
        &[
            "provision",
            "--provisioner",
            "ironic",
            "--timeout",
            "5m",
            "hosts.yaml",
        ],
    )
    .expect_code(0);
    let log = ironic.log();
    let new_log = log.get(log_before.len()..).unwrap_or(&log);
    let text = lab.read("hosts.yaml");
    let docs = documents(&text);
    for (i, n) in names.iter().enumerate() {
        let want = if i < 2 { "provisioned" } else { "available" };
        assert!(
            provisioned
                .stderr
                .contains(&format!("default/{n}: {want} (done)")),
            "{}",
            provisioned.stderr
        );
        let status = &host(&docs, n)["status"];
        assert_eq!(status["provisioning"]["state"], want, "{n}: {status:#}");
        assert_eq!(status["provisioning"]["ID"], uuids[i].as_str());
        assert!(
            !provisioned.stderr.contains(&format!("{n}: provisioning")),
            "{n} went through provisioning: {}",
            provisioned.stderr
        );
        let node = ironic.node(&uuids[i]);
        assert_eq!(node["provision_state"], before[i]["provision_state"], "{n}");
        assert_eq!(
            node["provision_updated_at"], before[i]["provision_updated_at"],
            "{n}: no provision call since the import"
        );
        assert!(
            !new_log.contains(&format!("Node {} moved to provision state", uuids[i])),
            "{n}: Ironic moved the node:\n{new_log}"
        );
    }
}
