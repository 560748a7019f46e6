//! The data image calls as BMO's ironic provisioner makes them: `GetDataImageStatus`,
//! `AttachDataImage` and `DetachDataImage` over Ironic's virtual media API.

use super::*;

const ISO: &str = "http://images.example/config.iso";

#[test]
fn attach_shows_in_the_status_and_detach_removes_it() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in("active", json!({}));
    assert!(!prov(&shared).get_data_image_status().unwrap());

    let m = fake.mark();
    prov(&shared).attach_data_image(ISO).unwrap();
    assert_eq!(
        fake.bodies_since(m, "POST", &format!("/v1/nodes/{UUID}/vmedia")),
        [json!({"device_type": "cdrom", "image_url": ISO})]
    );
    assert!(prov(&shared).get_data_image_status().unwrap());

    let m = fake.mark();
    prov(&shared).detach_data_image().unwrap();
    assert_eq!(
        fake.changes_since(m),
        [format!("DELETE /v1/nodes/{UUID}/vmedia?device_types=cdrom")]
    );
    assert!(!prov(&shared).get_data_image_status().unwrap());
}

#[test]
fn a_reserved_node_is_busy_without_asking_for_its_media() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in("active", json!({"reservation": "conductor-1"}));
    let m = fake.mark();
    assert_eq!(
        prov(&shared).get_data_image_status(),
        Err(ProvisionerError::NodeIsBusy)
    );
    assert!(
        !fake.since(m).iter().any(|r| r.contains("/vmedia")),
        "{:?}",
        fake.since(m)
    );
}

#[test]
fn ironic_below_1_93_cannot_tell_and_says_so_in_bmos_words() {
    let fake = FakeIronic::with_version("1.92");
    let shared = fake.shared();
    fake.node_in("active", json!({}));
    let err = prov(&shared).get_data_image_status().unwrap_err();
    assert_eq!(
        err.to_string(),
        "ironic version=92 doesn't support Virtual Media Get API, needs version>=1.93"
    );
}

/// BMO's `AttachDataImage`/`DetachDataImage` return gophercloud's error as it is, unwrapped.
#[test]
fn a_refused_attach_or_detach_is_an_error_naming_it() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in("active", json!({}));
    let path = format!("nodes/{UUID}/vmedia");
    fake.fail("POST", &path, 400, "No suitable virtual media device found");
    let err = prov(&shared)
        .attach_data_image(ISO)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("POST ") && err.contains("No suitable virtual media device found"),
        "{err}"
    );
    fake.fail("DELETE", &path, 409, "Node is locked");
    let err = prov(&shared).detach_data_image().unwrap_err().to_string();
    assert!(
        err.starts_with("DELETE ") && err.contains("Node is locked"),
        "{err}"
    );
}
