//! A DataImage against a real Ironic and the Redfish emulator of the lab (`scripts/ironic/`):
//! a redfish-virtualmedia host on sushy-tools gets the image in its virtual CD when it is powered
//! on, and loses it when the document is removed and the host rebooted.
//!
//! Uses the lab of the environment as `ironic_lab.rs` does (`IRONIC_ENDPOINT`, `SUSHY_URL`,
//! default `http://127.0.0.1:8000`); without `IRONIC_ENDPOINT` the test FAILS, it never skips.
//! The image is served by an HTTP server of the test's own; Ironic downloads it from there and
//! hands the emulator its copy.

use crate::lab::{Lab, Run};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

const NS: &str = "data-image-lab";
const NAME: &str = "data-image-sushy-6";
const SYSTEM: &str = "sushy-6";
const MAC: &str = "52:54:00:00:00:07";

/// `(status, body)` of an HTTP call with curl (redirects followed); status 0 without an answer.
/// `auth`: the Redfish emulator's credentials.
fn http(method: &str, url: &str, auth: bool, body: Option<&Value>) -> (u16, String) {
    let mut cmd = Command::new("curl");
    cmd.args(["-sS", "-L", "-X", method, "-w", "\n%{http_code}", url]);
    let version = format!("X-OpenStack-Ironic-API-Version: 1.{}", api_minor().min(93));
    cmd.args(["-H", &version]);
    if auth {
        cmd.args(["-u", &format!("admin:{}", crate::canary::lab_password())]);
    }
    if let Some(b) = body {
        cmd.args(["-H", "Content-Type: application/json", "-d", &b.to_string()]);
    }
    let out = cmd.output().expect("run curl");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (code.trim().parse().unwrap_or(0), body.to_string())
}

fn json_of(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

fn ironic_root() -> String {
    let endpoint = std::env::var("IRONIC_ENDPOINT").unwrap_or_else(|_| {
        panic!(
            "IRONIC_ENDPOINT is not set: this test needs the Ironic lab (scripts/ironic/start-ironic.sh \
             and start-sushy.sh, then `set -a; . $BMHCTL_LAB_DIR/ironic-PORT/bmhctl.env; set +a`)"
        )
    });
    endpoint
        .trim_end_matches('/')
        .trim_end_matches("/v1")
        .to_string()
}

fn sushy_url() -> String {
    std::env::var("SUSHY_URL")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "http://127.0.0.1:8000".into())
        .trim_end_matches('/')
        .to_string()
}

/// Removes the node a previous, aborted run left.
fn purge_node(root: &str) {
    let url = format!("{root}/v1/nodes/{NS}~{NAME}");
    if http("GET", &url, false, None).0 == 200 {
        http(
            "PUT",
            &format!("{url}/maintenance"),
            false,
            Some(&json!({})),
        );
        let (code, body) = http("DELETE", &url, false, None);
        assert!(
            code == 204 || code == 404,
            "delete leftover node: {code} {body}"
        );
    }
}

fn system() -> Value {
    let url = format!("{}/redfish/v1/Systems/{SYSTEM}", sushy_url());
    let (code, body) = http("GET", &url, true, None);
    assert_eq!(code, 200, "GET {url} (is the emulator running?): {body}");
    json_of(&body)
}

/// The emulator's virtual CD, found as a client would: the system's manager, its VirtualMedia.
fn emulator_cd() -> Value {
    let manager = system()["Links"]["ManagedBy"][0]["@odata.id"]
        .as_str()
        .expect("the system's manager")
        .to_string();
    let (_, body) = http("GET", &format!("{}{manager}", sushy_url()), true, None);
    let media = json_of(&body)["VirtualMedia"]["@odata.id"]
        .as_str()
        .expect("the manager's VirtualMedia")
        .to_string();
    let (code, body) = http("GET", &format!("{}{media}/Cd", sushy_url()), true, None);
    assert_eq!(code, 200, "GET {media}/Cd: {body}");
    json_of(&body)
}

fn emulator_reset(what: &str) {
    let url = format!(
        "{}/redfish/v1/Systems/{SYSTEM}/Actions/ComputerSystem.Reset",
        sushy_url()
    );
    let (code, body) = http("POST", &url, true, Some(&json!({"ResetType": what})));
    assert!((200..300).contains(&code), "POST {url}: {code} {body}");
}

/// Serves `bytes` at `/data.iso` on an ephemeral port; counts the requests for it.
fn serve_image(bytes: Vec<u8>) -> (String, Arc<Mutex<usize>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/data.iso", listener.local_addr().unwrap());
    let hits = Arc::new(Mutex::new(0));
    let counted = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut request = String::new();
            if reader.read_line(&mut request).is_err() {
                continue;
            }
            // Drain the headers.
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let mut out = &stream;
            if request.starts_with("GET /data.iso ") || request.starts_with("HEAD /data.iso ") {
                *counted.lock().unwrap() += 1;
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    bytes.len()
                );
                let _ = out.write_all(head.as_bytes());
                if request.starts_with("GET") {
                    let _ = out.write_all(&bytes);
                }
            } else {
                let _ = out.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        }
    });
    (url, hits)
}

fn plugin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let lib = crate::lab::cdylib("ironic-provisioner");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("data-image-lab-plugins");
        std::fs::create_dir_all(&dir).unwrap();
        let tmp = dir.join(format!(".ironic-provisioner.so.{}", std::process::id()));
        std::fs::copy(&lib, &tmp).expect("stage the ironic plugin");
        std::fs::rename(&tmp, dir.join("ironic-provisioner.so")).unwrap();
        dir
    })
}

fn bmhctl(lab: &Lab, args: &[&str]) -> Run {
    let endpoint = std::env::var("IRONIC_ENDPOINT").unwrap();
    let envs = [
        ("PROVISIONER_PLUGIN_DIR", plugin_dir().to_str().unwrap()),
        ("IRONIC_ENDPOINT", endpoint.as_str()),
        ("BMHCTL_TIME_SCALE", "0.1"),
        ("DEPLOY_ISO_URL", ""),
        ("METAL3_AUTH_ROOT_DIR", "/nonexistent"),
    ];
    let mut all = vec![args[0], "--provisioner", "ironic", "--timeout", "5m"];
    all.extend_from_slice(&args[1..]);
    lab.run_env(&all, &envs)
}

/// The `status` of the document of `kind` in a hosts file.
fn status_of(text: &str, kind: &str) -> Value {
    text.split("\n---\n")
        .map(|d| serde_saphyr::from_str::<Value>(d).unwrap())
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in\n{text}"))["status"]
        .clone()
}

fn hosts_file(image_url: Option<&str>) -> String {
    let lab_password = crate::canary::lab_password();
    let mut s = format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bmc\n  namespace: {NS}\nstringData:\n  username: admin\n  password: {lab_password}\n---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata:\n  name: {NAME}\n  namespace: {NS}\nspec:\n  online: true\n  bmc:\n    address: redfish-virtualmedia+{}/redfish/v1/Systems/{SYSTEM}\n    credentialsName: bmc\n  bootMACAddress: \"{MAC}\"\n  bootMode: UEFI\n  externallyProvisioned: true\n  automatedCleaningMode: disabled\n",
        sushy_url()
    );
    if let Some(url) = image_url {
        s.push_str(&format!(
            "---\n# the host's configuration ISO\napiVersion: metal3.io/v1alpha1\nkind: DataImage\nmetadata:\n  name: {NAME}\n  namespace: {NS}\nspec:\n  url: {url}\n"
        ));
    }
    s
}

/// The newest API minor version the lab's Ironic offers (asked without a version: an older
/// Ironic refuses one above its own).
fn api_minor() -> u32 {
    static MINOR: OnceLock<u32> = OnceLock::new();
    *MINOR.get_or_init(|| {
        let out = Command::new("curl")
            .args(["-sS", "-f", &format!("{}/v1/", ironic_root())])
            .output()
            .expect("run curl");
        let doc = json_of(&String::from_utf8_lossy(&out.stdout));
        let version = doc["version"]["version"].as_str().unwrap_or("").to_string();
        (version.strip_prefix("1.").and_then(|m| m.parse().ok()))
            .unwrap_or_else(|| panic!("no API version in Ironic's /v1/: {doc}"))
    })
}

/// An Ironic without the virtual media listing (1.93, Ironic 26.1): as in BMO, the DataImage
/// counts the error and the host is not powered on, nothing attached.
fn refused_below_1_93(url: &str) {
    let minor = api_minor();
    let lab = Lab::new().file("hosts.yaml", &hosts_file(Some(url)));
    let run = bmhctl(&lab, &["provision", "hosts.yaml"]).expect_code(1);
    let text = lab.read("hosts.yaml");
    let host = status_of(&text, "BareMetalHost");
    assert_eq!(host["provisioning"]["state"], "externally provisioned");
    assert_eq!(host["poweredOn"], false, "{}", run.stderr);
    let di = status_of(&text, "DataImage");
    assert!(di["error"]["count"].as_u64().unwrap() >= 1, "{di:#}");
    assert_eq!(
        di["error"]["message"],
        format!(
            "ironic version={minor} doesn't support Virtual Media Get API, needs version>=1.93"
        ),
        "{di:#}"
    );
    assert_eq!(emulator_cd()["Inserted"], false);
    assert_eq!(system()["PowerState"], "Off");
    bmhctl(&lab, &["delete", "-f", "hosts.yaml"]).expect_code(0);
}

/// The image is in the emulator's virtual CD once the host is powered on, and out of it once
/// the DataImage is gone and the host rebooted; below API 1.93 the DataImage says why it
/// cannot be attached.
#[test]
#[ignore = "needs the Ironic lab (IRONIC_ENDPOINT); scripts/test.sh runs it"]
fn data_image_is_inserted_in_the_emulators_cd_then_ejected() {
    let root = ironic_root();
    purge_node(&root);
    emulator_reset("ForceOff");
    let cd = emulator_cd();
    if cd["Inserted"] == true {
        let eject = cd["Actions"]["#VirtualMedia.EjectMedia"]["target"]
            .as_str()
            .unwrap()
            .to_string();
        http(
            "POST",
            &format!("{}{eject}", sushy_url()),
            true,
            Some(&json!({})),
        );
    }
    assert_eq!(emulator_cd()["Inserted"], false, "the CD starts empty");
    let iso: Vec<u8> = (0..64 * 1024u32).map(|i| (i % 251) as u8).collect();
    let (url, hits) = serve_image(iso.clone());
    if api_minor() < 93 {
        return refused_below_1_93(&url);
    }

    // Powered on with the image attached first.
    let lab = Lab::new().file("hosts.yaml", &hosts_file(Some(&url)));
    let run = bmhctl(&lab, &["provision", "hosts.yaml"]).expect_code(0);
    let text = lab.read("hosts.yaml");
    let host = status_of(&text, "BareMetalHost");
    assert_eq!(
        host["provisioning"]["state"], "externally provisioned",
        "{}",
        run.stderr
    );
    assert_eq!(host["poweredOn"], true);
    let di = status_of(&text, "DataImage");
    assert_eq!(di["attachedImage"]["url"], url.as_str(), "{di:#}");
    assert_eq!(di["error"]["count"], 0, "{di:#}");
    assert!(di["lastReconciled"].is_string());
    let cd = emulator_cd();
    assert_eq!(cd["Inserted"], true, "{cd:#}");
    let inserted = cd["Image"].as_str().unwrap().to_string();
    assert!(
        *hits.lock().unwrap() >= 1,
        "Ironic fetched the image from the test's server"
    );
    // Ironic hands the emulator its own copy of the image: the same bytes.
    let copy = Command::new("curl")
        .args(["-sS", "-f", &inserted])
        .output()
        .unwrap();
    assert!(copy.status.success() && copy.stdout == iso, "{inserted}");
    assert_eq!(system()["PowerState"], "On");
    let (code, body) = http(
        "GET",
        &format!("{root}/v1/nodes/{NS}~{NAME}/vmedia"),
        false,
        None,
    );
    assert_eq!(code, 200, "{body}");
    assert!(
        json_of(&body)
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["inserted"] == true)
    );

    // The document goes; the next power-on (a reboot) detaches the image.
    let without = lab
        .read("hosts.yaml")
        .split("\n---\n# the host's configuration ISO\n")
        .next()
        .unwrap()
        .to_string();
    std::fs::write(lab.path("hosts.yaml"), format!("{without}\n")).unwrap();
    bmhctl(&lab, &["reboot", "-f", "hosts.yaml", NAME]).expect_code(0);
    let run = bmhctl(&lab, &["provision", "hosts.yaml"]).expect_code(0);
    let cd = emulator_cd();
    assert_eq!(cd["Inserted"], false, "{cd:#}\n{}", run.stderr);
    assert_eq!(cd["Image"], "", "{cd:#}");
    assert_eq!(system()["PowerState"], "On");
    let sidecar = std::fs::read_to_string(lab.path(".bmhctl/hosts.yaml.state.json")).unwrap();
    assert!(
        !sidecar.contains("dataImage"),
        "the DataImage is released: {sidecar}"
    );

    bmhctl(&lab, &["delete", "-f", "hosts.yaml"]).expect_code(0);
    assert_eq!(
        http("GET", &format!("{root}/v1/nodes/{NS}~{NAME}"), false, None).0,
        404
    );
}
