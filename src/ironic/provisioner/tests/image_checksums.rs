//! Image checksums as BMO's `GetChecksum` gives them to the instance settings.

use super::super::lifecycle::image_checksum;
use super::*;
use bmh_api::ChecksumType;

/// The `(op, path)` pairs of the first instance-settings PATCH for `image` on an `available`
/// node whose instance info holds `instance_info`.
fn patch_for(image: Image, instance_info: Value) -> Vec<(String, String, Value)> {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in("available", json!({ "instance_info": instance_info }));
    let r = prov(&shared).provision(&provision_data(image), ProvisionOptions::default());
    assert_requeue(&r.unwrap(), 3);
    let bodies = fake.bodies_since(0, "PATCH", &format!("/v1/nodes/{UUID}"));
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    bodies[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| {
            (
                op["op"].as_str().unwrap().to_string(),
                op["path"].as_str().unwrap().to_string(),
                op.get("value").cloned().unwrap_or(Value::Null),
            )
        })
        .collect()
}

fn hash_ops(ops: &[(String, String, Value)]) -> Vec<(String, String, Value)> {
    ops.iter()
        .filter(|(_, path, _)| path.contains("image_checksum") || path.contains("image_os_hash"))
        .cloned()
        .collect()
}

/// BMO's `GetChecksum` returns early for an OCI image (no `checksumType` check), and
/// `setDirectDeployUpdateOptsForNode` then removes all three checksum fields: no empty hash is
/// sent, and the host is not failed with "Validation failed".
#[test]
fn an_oci_image_without_checksum_removes_every_checksum_field() {
    let oci = Image {
        url: "oci://quay.io/example/os:1.0".into(),
        checksum_type: ChecksumType::Sha256,
        ..Default::default()
    };
    let ops = patch_for(
        oci,
        json!({"image_checksum": "old", "image_os_hash_algo": "sha256", "image_os_hash_value": "old"}),
    );
    assert_eq!(
        hash_ops(&ops),
        [
            (
                "remove".into(),
                "/instance_info/image_checksum".into(),
                Value::Null
            ),
            (
                "remove".into(),
                "/instance_info/image_os_hash_algo".into(),
                Value::Null
            ),
            (
                "remove".into(),
                "/instance_info/image_os_hash_value".into(),
                Value::Null
            ),
        ]
    );
}

/// BMO's `GetChecksum` returns early for a live ISO too: an unknown `checksumType` does not fail
/// the host.
#[test]
fn a_live_iso_ignores_its_checksum_type() {
    let live = Image {
        url: "http://images.example/live.iso".into(),
        format: "live-iso".into(),
        checksum_type: ChecksumType::from("sha42"),
        ..Default::default()
    };
    let ops = patch_for(live, json!({}));
    assert!(
        ops.iter()
            .any(|(op, path, _)| op == "add" && path == "/instance_info/boot_iso"),
        "{ops:?}"
    );
}

/// BMO's `GetChecksum`, case by case.
#[test]
fn checksums_as_bmo_gives_them() {
    let img = |url: &str, checksum: &str, t: &str, format: &str| Image {
        url: url.into(),
        checksum: checksum.into(),
        checksum_type: ChecksumType::from(t),
        format: format.into(),
        ..Default::default()
    };
    let none = Ok((String::new(), String::new()));
    assert_eq!(image_checksum(&img("oci://r/i", "", "sha42", "")), none);
    assert_eq!(
        image_checksum(&img("http://x/l.iso", "", "sha42", "live-iso")),
        none
    );
    assert_eq!(
        image_checksum(&img("http://x/i", "abc", "auto", "")),
        Ok(("abc".into(), String::new()))
    );
    assert_eq!(
        image_checksum(&img("http://x/i", "abc", "sha512", "")),
        Ok(("abc".into(), "sha512".into()))
    );
    assert_eq!(
        image_checksum(&img("oci://r/i", "abc", "", "")).unwrap_err(),
        "spec.image.checksum must be empty for OCI images (oci:// images have embedded checksums)"
    );
    assert_eq!(
        image_checksum(&img("http://x/i", "", "sha256", "")).unwrap_err(),
        "checksum is required for normal images"
    );
}

/// BMO's `Provision` looks the node up before `validateProvisionData`: with no node the pass is
/// a transient error (the host registers again), not "Validation failed".
#[test]
fn no_node_is_a_transient_error_before_the_checksum_is_checked() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    let no_checksum = Image {
        url: IMAGE_URL.into(),
        ..Default::default()
    };
    let r = prov(&shared).provision(
        &provision_data(no_checksum.clone()),
        ProvisionOptions::default(),
    );
    assert!(
        matches!(r, Err(ProvisionerError::NeedsRegistration)),
        "{r:?}"
    );
    fake.node_in("available", json!({}));
    let r = prov(&shared)
        .provision(&provision_data(no_checksum), ProvisionOptions::default())
        .unwrap();
    assert_failed(
        &r,
        "Validation failed: checksum is required for normal images",
    );
}
