//! The `inspect.metal3.io/hardwaredetails` annotation on real files.

use crate::lab::{Lab, host, secret};

/// BMO's `getHardwareDetailsFromAnnotation` treats an empty value as no annotation: the host
/// goes on, and the annotation is removed from the file (BMO's `updateHardwareDetails`).
#[test]
fn an_empty_annotation_is_removed_and_the_host_goes_on() {
    let with_annotation = host("spare-0", "").replacen(
        "metadata:\n  name: spare-0\n",
        "metadata:\n  name: spare-0\n  annotations:\n    inspect.metal3.io/hardwaredetails: \"\"\n",
        1,
    );
    let lab = Lab::new().file(
        "hosts.yaml",
        &format!("{}---\n{with_annotation}", secret("bmc-secret")),
    );
    let run = lab
        .run(&[
            "provision",
            "--provisioner",
            "fixture",
            "-o",
            "json",
            "hosts.yaml",
        ])
        .expect_code(0);
    assert_eq!(run.json()["hosts"][0]["state"], "available");
    let after = lab.read("hosts.yaml");
    assert!(!after.contains("hardwaredetails"), "{after}");
}
