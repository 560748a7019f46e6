//! Files as metal3 users have them: namespace dumps holding kinds bmhctl does not read (BMO's
//! other kinds, core kinds, other API groups), and discovered hosts with no `spec`.

use crate::lab::Lab;

const SECRET: &str = "apiVersion: v1
kind: Secret
metadata:
  name: bmc-secret
type: Opaque
stringData:
  username: admin
  password: Pw-Mixed-Canary-4242
";

const HOST: &str = "apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: worker-0
spec:
  online: true
  bootMACAddress: 00:11:22:33:44:55
  bmc:
    address: ipmi://192.168.1.1
    credentialsName: bmc-secret
";

/// BMO's CRDs allow a host with no `spec` (a discovered host).
const DISCOVERED: &str = "apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: discovered-0
";

/// One document of each kind a metal3 namespace dump holds beside its hosts.
const OTHERS: &[(&str, &str)] = &[
    ("metal3.io/v1alpha1", "PreprovisioningImage"),
    ("metal3.io/v1alpha1", "HostClaim"),
    ("metal3.io/v1alpha1", "HostDeployPolicy"),
    ("metal3.io/v1alpha1", "HostNetworkAttachment"),
    ("metal3.io/v1alpha1", "BareMetalSwitch"),
    ("cluster.x-k8s.io/v1beta1", "Machine"),
    ("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Machine"),
    ("v1", "ConfigMap"),
];

fn dump() -> String {
    let mut docs = vec![SECRET.to_string(), HOST.to_string(), DISCOVERED.to_string()];
    for (api_version, kind) in OTHERS {
        docs.push(format!(
            "apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: worker-0\nspec:\n  anything: [1, 2]\n"
        ));
    }
    // Two of one kind: still one note.
    docs.push("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: second\ndata: {}\n".into());
    docs.join("---\n")
}

fn notes(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("note: skipped"))
        .collect()
}

#[test]
fn a_namespace_dump_is_read_by_every_command_with_one_note_per_skipped_kind() {
    let lab = Lab::new().file("dump.yaml", &dump());
    let expected: Vec<String> = OTHERS
        .iter()
        .map(|(v, k)| {
            let n = if *k == "ConfigMap" {
                "2 documents"
            } else {
                "1 document"
            };
            format!("note: skipped {n} of kind {k} ({v}): not a kind bmhctl reads")
        })
        .collect();
    let mut expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    expected.sort();
    for args in [
        &["validate", "dump.yaml"][..],
        &["get", "-f", "dump.yaml"],
        &["describe", "-f", "dump.yaml", "discovered-0"],
        &["provision", "--provisioner", "fixture", "dump.yaml"],
    ] {
        let run = lab.run(args).expect_code(0);
        let mut seen = notes(&run.stderr);
        seen.sort();
        assert_eq!(seen, expected, "{args:?}\n{}", run.stderr);
    }
    // The run drove both hosts, the discovered one as BMO does (no BMC: unmanaged), and left
    // every skipped document as it was.
    let get = lab
        .run(&["get", "-f", "dump.yaml", "-o", "json"])
        .expect_code(0);
    let states: Vec<(String, String)> = get.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["metadata"]["name"].as_str().unwrap().to_string(),
                h["status"]["provisioning"]["state"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            ("worker-0".to_string(), "available".to_string()),
            ("discovered-0".to_string(), "unmanaged".to_string())
        ]
    );
    let after = lab.read("dump.yaml");
    for doc in dump().split("---\n").skip(3) {
        assert!(after.contains(doc), "{doc} changed:\n{after}");
    }
}

#[test]
fn export_passes_the_skipped_documents_through_as_they_were_written() {
    let lab = Lab::new().file("dump.yaml", &dump());
    let run = lab.run(&["export", "-f", "dump.yaml"]).expect_code(0);
    for (api_version, kind) in OTHERS {
        let doc = format!(
            "apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: worker-0\nspec:\n  anything:\n  - 1\n  - 2\n"
        );
        assert!(run.stdout.contains(&doc), "{doc}\nnot in:\n{}", run.stdout);
    }
    assert!(run.stdout.contains("name: discovered-0"), "{}", run.stdout);
    // A selection exports its hosts only.
    let run = lab
        .run(&["export", "-f", "dump.yaml", "worker-0"])
        .expect_code(0);
    assert!(!run.stdout.contains("kind: Machine"), "{}", run.stdout);
}

/// `apply` keeps them in the store as `kubectl apply` keeps them in a cluster; an export of
/// the store gives them back.
#[test]
fn the_store_keeps_the_skipped_kinds_and_export_gives_them_back() {
    let lab = Lab::new().file("dump.yaml", &dump());
    lab.run(&["apply", "-f", "dump.yaml", "--store", "store"])
        .expect_code(0);
    let run = lab.run(&["export", "--store", "store"]).expect_code(0);
    for (api_version, kind) in OTHERS {
        let head = format!("apiVersion: {api_version}\nkind: {kind}\nmetadata:\n");
        assert!(
            run.stdout.contains(&head),
            "{head}\nnot in:\n{}",
            run.stdout
        );
    }
    assert!(run.stdout.contains("name: discovered-0"), "{}", run.stdout);
    let run = lab
        .run(&["export", "--store", "store", "worker-0"])
        .expect_code(0);
    assert!(!run.stdout.contains("kind: Machine"), "{}", run.stdout);
}

#[test]
fn near_misses_and_unknown_metal3_kinds_are_refused_with_a_hint() {
    let text = [
        HOST,
        SECRET,
        "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHots\nmetadata:\n  name: a\n",
        "apiVersion: metal3.io/v1alpha1\nkind: baremetalhost\nmetadata:\n  name: b\n",
        "apiVersion: metal3.io/v1alpha1\nkind: HostThing\nmetadata:\n  name: c\n",
        "apiVersion: metal3.io/v1beta1\nkind: DataImage\nmetadata:\n  name: d\n",
    ]
    .join("---\n");
    let lab = Lab::new().file("hosts.yaml", &text);
    let before = lab.read("hosts.yaml");
    let run = lab
        .run(&["provision", "--provisioner", "fixture", "hosts.yaml"])
        .expect_code(2);
    insta::assert_snapshot!(run.stderr, @r#"
    error: hosts.yaml:22:7: BareMetalHots default/a: kind: unknown kind "BareMetalHots" (did you mean BareMetalHost?); bmhctl reads BareMetalHost, Secret, HostFirmwareSettings, HostFirmwareComponents, HostUpdatePolicy, HardwareData, FirmwareSchema, DataImage, BMCEventSubscription (--skip-unknown-kinds skips it)
    hosts.yaml:27:7: baremetalhost default/b: kind: unknown kind "baremetalhost" (did you mean BareMetalHost?); bmhctl reads BareMetalHost, Secret, HostFirmwareSettings, HostFirmwareComponents, HostUpdatePolicy, HardwareData, FirmwareSchema, DataImage, BMCEventSubscription (--skip-unknown-kinds skips it)
    hosts.yaml:32:7: HostThing default/c: kind: unknown kind "HostThing" in metal3.io; bmhctl reads BareMetalHost, Secret, HostFirmwareSettings, HostFirmwareComponents, HostUpdatePolicy, HardwareData, FirmwareSchema, DataImage, BMCEventSubscription (--skip-unknown-kinds skips it)
    hosts.yaml:36:13: DataImage default/d: apiVersion: apiVersion "metal3.io/v1beta1" is not one bmhctl reads for kind DataImage (expected metal3.io/v1alpha1)
    "#);
    assert_eq!(lab.read("hosts.yaml"), before, "nothing written");
}
