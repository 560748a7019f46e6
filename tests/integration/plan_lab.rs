//! `bmhctl plan` against a real Ironic (the lab of `scripts/ironic/`, from `IRONIC_ENDPOINT` as
//! in `ironic_lab.rs`; without it this test FAILS, it never skips): the plan asks the Ironic
//! plugin about each registered host's node, read-only, and Ironic is left exactly as it was:
//! the same nodes, field for field, and no request but GETs about them in Ironic's log.

use crate::lab::{Lab, Run};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

const NS: &str = "plan-lab";
const IMAGE_URL: &str = "http://127.0.0.1:6386/images/plan-lab-os.qcow2";
const NEW_IMAGE_URL: &str = "http://127.0.0.1:6386/images/plan-lab-os-v2.qcow2";
const IMAGE_SHA256: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// `(status, body)` of an HTTP call to Ironic (noauth, as the lab runs it by default).
fn http(method: &str, url: &str, body: Option<&Value>) -> (u16, String) {
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "--max-time", "30", "-X", method])
        .args(["-H", "X-OpenStack-Ironic-API-Version: 1.89"])
        .args(["-H", "Accept: application/json", "-w", "\n%{http_code}"]);
    if let Some(b) = body {
        cmd.args(["-H", "Content-Type: application/json", "--data-binary"])
            .arg(b.to_string());
    }
    let out = cmd.arg(url).output().expect("run curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

struct Ironic {
    root: String,
    endpoint: String,
    /// Ironic's own log, where its API logs each request it answers.
    log: PathBuf,
}

impl Ironic {
    fn from_env() -> Self {
        let Ok(endpoint) = std::env::var("IRONIC_ENDPOINT") else {
            panic!(
                "IRONIC_ENDPOINT is not set: the plan lab test needs an Ironic of the lab \
                 (scripts/ironic/start-ironic.sh PORT, then `set -a; . $BMHCTL_LAB_DIR/ironic-PORT/bmhctl.env; set +a`)"
            )
        };
        let root = endpoint
            .trim_end_matches('/')
            .trim_end_matches("/v1")
            .to_string();
        let port = root.rsplit(':').next().unwrap().to_string();
        let lab_dir = match std::env::var_os("BMHCTL_LAB_DIR") {
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
        let log = lab_dir.join(format!("ironic-{port}/ironic.log"));
        assert!(log.is_file(), "no Ironic log at {}", log.display());
        Ironic {
            root,
            endpoint,
            log,
        }
    }

    /// Every node of this test, in full, by name.
    fn our_nodes(&self) -> Vec<Value> {
        self.nodes_named(NS)
    }

    /// Every node whose name starts with `prefix`, in full, by name.
    fn nodes_named(&self, prefix: &str) -> Vec<Value> {
        let (code, body) = http("GET", &format!("{}/v1/nodes?detail=true", self.root), None);
        assert_eq!(code, 200, "GET nodes: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        let mut nodes: Vec<Value> = v["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["name"].as_str().is_some_and(|s| s.starts_with(prefix)))
            .cloned()
            .collect();
        nodes.sort_by_key(|n| n["name"].as_str().unwrap_or_default().to_string());
        nodes
    }

    fn delete_node(&self, id: &str) {
        let url = format!("{}/v1/nodes/{id}", self.root);
        http("PUT", &format!("{url}/maintenance"), Some(&json!({})));
        let (code, body) = http("DELETE", &url, None);
        assert!(
            code == 204 || code == 404,
            "delete node {id}: {code} {body}"
        );
    }

    /// Removes this test's nodes (left by an aborted run, or at its end).
    fn purge(&self) {
        for n in self.our_nodes() {
            self.delete_node(n["uuid"].as_str().unwrap());
        }
    }

    fn log_lines(&self) -> usize {
        std::fs::read_to_string(&self.log).unwrap().lines().count()
    }

    /// The requests Ironic answered since line `mark` of its log, that were not GETs and name
    /// one of `ids`.
    fn writes_since(&self, mark: usize, ids: &[String]) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap()
            .lines()
            .skip(mark)
            .filter(|l| l.contains("ironic.api") && !l.contains(" - GET /"))
            .filter(|l| ids.iter().any(|id| l.contains(id.as_str())))
            .map(str::to_string)
            .collect()
    }
}

/// The Ironic plugin, built by the cargo that runs the tests, in a directory of its own.
fn plugin_dir() -> PathBuf {
    let lib = crate::lab::cdylib("ironic-provisioner");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plan-lab-plugins");
    std::fs::create_dir_all(&dir).unwrap();
    let tmp = dir.join(format!(".ironic-provisioner.so.{}", std::process::id()));
    std::fs::copy(&lib, &tmp).expect("stage the ironic plugin");
    std::fs::rename(&tmp, dir.join("ironic-provisioner.so")).unwrap();
    dir
}

fn bmhctl(lab: &Lab, ironic: &Ironic, plugins: &Path, args: &[&str]) -> Run {
    lab.run_env(
        args,
        &[
            ("PROVISIONER_PLUGIN_DIR", plugins.to_str().unwrap()),
            ("BMHCTL_PROVISIONER", "ironic"),
            ("BMHCTL_TIME_SCALE", "0.3"),
            ("IRONIC_ENDPOINT", &ironic.endpoint),
            ("DEPLOY_ISO_URL", ""),
            ("METAL3_AUTH_ROOT_DIR", "/nonexistent"),
        ],
    )
}

fn host(name: &str, spec: &str) -> String {
    let mut s = format!(
        "---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {name}\n  namespace: {NS}\nspec:\n  online: true\n  bmc:\n    address: fake-hardware://{name}\n    credentialsName: bmc\n"
    );
    for line in spec.lines() {
        s.push_str("  ");
        s.push_str(line);
        s.push('\n');
    }
    s
}

fn hosts_file() -> String {
    let image = format!(
        "image:\n  url: {IMAGE_URL}\n  checksum: {IMAGE_SHA256}\n  checksumType: sha256\n  format: qcow2"
    );
    let lab_password = crate::canary::lab_password();
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc\n  namespace: {NS}\nstringData:\n  username: admin\n  password: {lab_password}\n{}{}{}",
        host("plan-lab-deployed", &image),
        host("plan-lab-gone", ""),
        host("plan-lab-new", ""),
    )
}

fn host_plan<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {doc}"))
}

#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn plan_asks_ironic_read_only_and_leaves_its_nodes_as_they_were() {
    let ironic = Ironic::from_env();
    ironic.purge();
    let plugins = plugin_dir();
    let lab = Lab::new().file("hosts.yaml", &hosts_file());
    // Two hosts registered for real: one deployed, one available; the third never run.
    bmhctl(
        &lab,
        &ironic,
        &plugins,
        &[
            "provision",
            "-q",
            "--host",
            "plan-lab-deployed",
            "--host",
            "plan-lab-gone",
            "hosts.yaml",
        ],
    )
    .expect_code(0);
    // The spec's image changes (not the status's, below it); one node disappears from Ironic.
    let text = lab.read("hosts.yaml").replacen(IMAGE_URL, NEW_IMAGE_URL, 1);
    std::fs::write(lab.path("hosts.yaml"), text).unwrap();
    let gone = ironic
        .our_nodes()
        .into_iter()
        .find(|n| n["name"] == format!("{NS}~plan-lab-gone"))
        .expect("the node of plan-lab-gone");
    ironic.delete_node(gone["uuid"].as_str().unwrap());

    let nodes = ironic.our_nodes();
    let ids: Vec<String> = nodes
        .iter()
        .flat_map(|n| {
            [
                n["uuid"].as_str().unwrap().into(),
                n["name"].as_str().unwrap().into(),
            ]
        })
        .chain([gone["uuid"].as_str().unwrap().to_string()])
        .collect();
    let files = crate::refused_input::listing(&lab.path(""));
    let mark = ironic.log_lines();

    let run = bmhctl(
        &lab,
        &ironic,
        &plugins,
        &["plan", "-f", "hosts.yaml", "-o", "json"],
    )
    .expect_code(0);
    let dry = bmhctl(
        &lab,
        &ironic,
        &plugins,
        &["provision", "--dry-run", "-o", "json", "hosts.yaml"],
    )
    .expect_code(0);
    assert_eq!(dry.stdout, run.stdout, "{}", dry.stderr);

    assert_eq!(crate::refused_input::listing(&lab.path("")), files);
    assert_eq!(ironic.our_nodes(), nodes, "Ironic's nodes changed");
    assert_eq!(ironic.writes_since(mark, &ids), Vec::<String>::new());
    // The plan did ask Ironic about the nodes.
    let asked = std::fs::read_to_string(&ironic.log)
        .unwrap()
        .lines()
        .skip(mark)
        .filter(|l| l.contains(" - GET /v1/nodes/"))
        .count();
    assert!(asked >= 2, "no GET of the nodes in Ironic's log");

    let doc = run.json();
    assert_eq!(doc["provisioner"], "ironic");
    let deployed = host_plan(&doc, "plan-lab-deployed");
    assert_eq!(
        deployed["live"],
        json!({"node": "found", "poweredOn": true})
    );
    assert_eq!(
        deployed["path"],
        json!([
            "provisioned",
            "deprovisioning",
            "available",
            "provisioning",
            "provisioned"
        ])
    );
    assert_eq!(deployed["destructive"], true);
    assert_eq!(deployed["actions"][0]["kind"], "deprovision");
    assert_eq!(
        deployed["actions"].as_array().unwrap().last().unwrap()["text"],
        format!("deploy image {NEW_IMAGE_URL}")
    );
    let gone = host_plan(&doc, "plan-lab-gone");
    assert_eq!(gone["live"], json!({"node": "missing"}));
    assert_eq!(gone["actions"][0]["text"], "register BMC", "{gone}");
    let new = host_plan(&doc, "plan-lab-new");
    assert_eq!(new["live"], json!({"node": "notAsked"}));
    assert_eq!(new["from"], "");
    assert_eq!(new["reaches"], true);

    // A copy of the example hosts, none of them registered: planned without a write either.
    let example =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/hosts.example.yaml"))
            .unwrap();
    let copy = Lab::new().file("hosts.yaml", &example);
    let files = crate::refused_input::listing(&copy.path(""));
    // The example's hosts are in `default`: BMO names their nodes `default~NAME`.
    let defaults = ironic.nodes_named("default~");
    let mark = ironic.log_lines();
    let doc = bmhctl(
        &copy,
        &ironic,
        &plugins,
        &["plan", "-f", "hosts.yaml", "-o", "json"],
    )
    .expect_code(0)
    .json();
    assert_eq!(doc["hosts"].as_array().unwrap().len(), 7);
    assert_eq!(crate::refused_input::listing(&copy.path("")), files);
    assert_eq!(ironic.nodes_named("default~"), defaults, "a node was made");
    assert_eq!(ironic.our_nodes(), nodes, "Ironic's nodes changed");
    assert_eq!(ironic.writes_since(mark, &ids), Vec::<String>::new());

    ironic.purge();
}
