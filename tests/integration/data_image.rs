//! A DataImage beside its host, driven by the fixture through the real binary: attached before
//! the provisioned host is powered on, its status written back in the file or the store,
//! detached once the document is gone, errors counted with backoff; export and apply carry it.

use crate::lab::{Lab, host, secret, without_status};
use serde_json::Value;

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";
const ISO: &str = "http://images.example/config.iso";

fn data_image(name: &str) -> String {
    format!(
        "# the configuration ISO; this comment must survive\napiVersion: metal3.io/v1alpha1\nkind: DataImage\nmetadata:\n  name: {name}\nspec:\n  url: {ISO}\n"
    )
}

fn hosts_file(host_doc: &str) -> String {
    format!(
        "{}---\n{host_doc}---\n{}",
        secret("bmc-secret"),
        data_image("worker-0")
    )
}

fn docs(text: &str) -> Vec<Value> {
    text.split("\n---\n")
        .map(|d| serde_saphyr::from_str(d).unwrap())
        .collect()
}

fn sidecar(lab: &Lab) -> Value {
    serde_json::from_str(&lab.read(".bmhctl/hosts.yaml.state.json")).unwrap()
}

#[test]
fn attached_before_power_on_status_written_then_detached_when_the_document_goes() {
    let file = hosts_file(&host("worker-0", IMAGE));
    let lab = Lab::new().file("hosts.yaml", &file);
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    let after = lab.read("hosts.yaml");
    assert_eq!(
        without_status(&after),
        file,
        "only status blocks may change"
    );
    let d = docs(&after);
    assert_eq!(d[1]["status"]["provisioning"]["state"], "provisioned");
    assert_eq!(d[1]["status"]["poweredOn"], true);
    let st = &d[2]["status"];
    assert_eq!(st["attachedImage"]["url"], ISO, "{after}");
    assert_eq!(st["error"]["count"], 0);
    assert_eq!(st["error"]["message"], "");
    assert!(st["lastReconciled"].is_string());
    // The fixture holds the image; the bookkeeping holds the DataImage for its finalizer.
    let book = &sidecar(&lab)["hosts"]["default/worker-0"];
    assert_eq!(book["provisionerState"]["dataImageUrl"], ISO);
    assert_eq!(book["dataImage"]["spec"]["url"], ISO);
    let run = lab
        .run(&["describe", "-f", "hosts.yaml", "worker-0"])
        .expect_code(0);
    assert!(
        run.stdout.contains(&format!(
            "Data Image:\n  URL:             {ISO}\n  Attached:        {ISO}\n  Errors:          0\n"
        )),
        "{}",
        run.stdout
    );

    // The document goes: nothing happens while the host runs; a reboot detaches the image.
    let without_image = after
        .split("\n---\n# the configuration ISO")
        .next()
        .unwrap();
    std::fs::write(lab.path("hosts.yaml"), format!("{without_image}\n")).unwrap();
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    let book = &sidecar(&lab)["hosts"]["default/worker-0"];
    assert_eq!(
        book["provisionerState"]["dataImageUrl"], ISO,
        "still attached"
    );
    lab.run(&["reboot", "-f", "hosts.yaml", "worker-0"])
        .expect_code(0);
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    let book = &sidecar(&lab)["hosts"]["default/worker-0"];
    assert_eq!(book["provisionerState"].get("dataImageUrl"), None, "{book}");
    assert_eq!(book.get("dataImage"), None, "released: {book}");
    assert_eq!(
        docs(&lab.read("hosts.yaml"))[1]["status"]["poweredOn"],
        true
    );
}

#[test]
fn failing_virtual_media_counts_errors_with_backoff_and_keeps_the_host_off() {
    let annotated = host("worker-0", IMAGE).replace(
        "  name: worker-0\n",
        "  name: worker-0\n  annotations:\n    fixture.bmhctl.metal3.io/data-image-error: vmedia down\n",
    );
    let lab = Lab::new().file("hosts.yaml", &hosts_file(&annotated));
    // One BMO hour in 3.6 s: the retries back off (30 s, then 1-2, 2-4, 4-8 ... minutes).
    let run = lab
        .run_env(
            &[
                "provision",
                "--provisioner",
                "fixture",
                "-q",
                "--timeout",
                "60m",
                "hosts.yaml",
            ],
            &[("BMHCTL_TIME_SCALE", "0.001")],
        )
        .expect_code(1);
    assert!(
        run.stdout.contains("still \"provisioned\""),
        "{}",
        run.stdout
    );
    let d = docs(&lab.read("hosts.yaml"));
    assert_eq!(d[1]["status"]["poweredOn"], false, "never powered on");
    let st = &d[2]["status"];
    assert_eq!(st["error"]["message"], "vmedia down");
    let count = st["error"]["count"].as_i64().unwrap();
    // Without the backoff an hour would hold about 120 tries of 30 s.
    assert!((3..=9).contains(&count), "error count {count}");
    assert_eq!(st["attachedImage"]["url"], "");
}

#[test]
fn in_the_store_the_status_is_written_and_get_shows_the_kind() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file(&host("worker-0", IMAGE)));
    lab.run(&["apply", "-f", "hosts.yaml", "--store", "s"])
        .expect_code(0);
    let stored = lab.path("s/dataimages/default/worker-0.yaml");
    assert!(stored.exists(), "the DataImage is stored");
    lab.run(&[
        "reconcile",
        "--store",
        "s",
        "--provisioner",
        "fixture",
        "-q",
    ])
    .expect_code(0);
    let text = std::fs::read_to_string(&stored).unwrap();
    let v: Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(v["status"]["attachedImage"]["url"], ISO, "{text}");
    assert_eq!(v["spec"]["url"], ISO);

    let run = lab
        .run(&["get", "dataimages", "--store", "s"])
        .expect_code(0);
    insta::assert_snapshot!("get_dataimages", run.stdout);
    let run = lab
        .run(&["get", "dataimage", "worker-0", "--store", "s", "-o", "json"])
        .expect_code(0);
    let v = run.json();
    assert_eq!(v["kind"], "DataImage");
    assert_eq!(v["status"]["attachedImage"]["url"], ISO);
}

#[test]
fn export_carries_the_data_image_and_apply_restores_it() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file(&host("worker-0", IMAGE)));
    lab.run(&["provision", "--provisioner", "fixture", "-q", "hosts.yaml"])
        .expect_code(0);
    let run = lab
        .run(&["export", "-f", "hosts.yaml", "--output-file", "export.yaml"])
        .expect_code(0);
    let text = lab.read("export.yaml");
    let exported: Vec<Value> = docs(&text)
        .into_iter()
        .filter(|d| d["kind"] == "DataImage")
        .collect();
    assert_eq!(exported.len(), 1, "{text}{}", run.stderr);
    assert_eq!(exported[0]["spec"]["url"], ISO);
    assert_eq!(exported[0]["metadata"]["name"], "worker-0");
    assert!(
        exported[0].get("status").is_none(),
        "no status, as for a cluster"
    );

    lab.run(&["apply", "-f", "export.yaml", "--store", "s"])
        .expect_code(0);
    let run = lab
        .run(&["get", "dataimage", "worker-0", "--store", "s", "-o", "json"])
        .expect_code(0);
    assert_eq!(run.json()["spec"]["url"], ISO);
    // And exported again from the store, the same document.
    let again = lab.run(&["export", "--store", "s"]).expect_code(0);
    let back: Vec<Value> = docs(&again.stdout)
        .into_iter()
        .filter(|d| d["kind"] == "DataImage")
        .collect();
    assert_eq!(back, exported);
}

/// Polls `done` every 50 ms for up to a minute; panics with `what` when it never holds.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(60) {
        if done() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("not within a minute: {what}");
}

fn stored(lab: &Lab, path: &str) -> Option<Value> {
    let text = std::fs::read_to_string(lab.path(path)).ok()?;
    serde_saphyr::from_str(&text).ok()
}

#[test]
fn watch_attaches_writes_the_status_and_detaches_a_removed_data_image_after_a_reboot() {
    let lab = Lab::new().file("hosts.yaml", &hosts_file(&host("worker-0", IMAGE)));
    lab.run(&["apply", "-f", "hosts.yaml", "--store", "store"])
        .expect_code(0);
    let env = [
        ("BMHCTL_PROVISIONER", "fixture"),
        ("BMHCTL_TIME_SCALE", "0.01"),
        ("BMHCTL_SEED", "1"),
    ];
    let mut watch = std::process::Command::new(assert_cmd::cargo::cargo_bin("bmhctl"))
        .current_dir(lab.path(""))
        .envs(env)
        .args(["watch", "--store", "store", "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start bmhctl watch");
    let image_path = "store/dataimages/default/worker-0.yaml";
    let host_path = "store/baremetalhosts/default/worker-0.yaml";
    eventually("the DataImage attached and the host on", || {
        stored(&lab, image_path).is_some_and(|d| d["status"]["attachedImage"]["url"] == ISO)
            && stored(&lab, host_path).is_some_and(|h| h["status"]["poweredOn"] == true)
    });
    let h = stored(&lab, host_path).unwrap();
    assert_eq!(h["bmhctl"]["provisionerState"]["dataImageUrl"], ISO);

    // The object goes from the store; watch sees it, and the reboot detaches the image.
    std::fs::remove_file(lab.path(image_path)).unwrap();
    lab.run_env(&["reboot", "worker-0", "--store", "store"], &env)
        .expect_code(0);
    eventually("the image detached and the DataImage released", || {
        stored(&lab, host_path).is_some_and(|h| {
            h["bmhctl"].get("dataImage").is_none()
                && h["bmhctl"]["provisionerState"]
                    .get("dataImageUrl")
                    .is_none()
                && h["status"]["poweredOn"] == true
        })
    });
    let _ = watch.kill();
    let _ = watch.wait();
}

#[test]
fn a_bad_data_image_is_refused_with_file_line_object_and_field_and_nothing_written() {
    let bad = format!(
        "{}---\n{}---\napiVersion: metal3.io/v1alpha1\nkind: DataImage\nmetadata:\n  name: worker-0\nspec:\n  url: file:///etc/passwd\n---\napiVersion: metal3.io/v1alpha1\nkind: DataImage\nmetadata:\n  name: worker-1\nspec:\n  ulr: http://x/y.iso\n",
        secret("bmc-secret"),
        host("worker-0", IMAGE)
    );
    let lab = Lab::new().file("hosts.yaml", &bad);
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(2);
    insta::assert_snapshot!("bad_data_image", run.stderr);
    assert_eq!(lab.read("hosts.yaml"), bad);
    assert!(!lab.path(".bmhctl").exists(), "nothing written");
}
