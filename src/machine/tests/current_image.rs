//! The image registration tells the provisioner about (BMO's `getCurrentImage`).

use super::harness::*;
use super::mock::Mock;
use bmh_api::ProvisioningState as S;

/// BMO's `getCurrentImage` passes the spec's image while provisioning only when its URL is set:
/// an image with an empty URL is no image.
#[test]
fn an_empty_image_url_is_no_current_image() {
    let mock = Mock::new();
    let mut t = HostTest::standard("host-0")
        .image("", "")
        .spec(|s| {
            s.custom_deploy = Some(bmh_api::CustomDeploy {
                method: "install_great_os".into(),
            })
        })
        .mock(&mock)
        .registered_in(S::Provisioning);
    t.pass();
    let registered = mock.0.lock().unwrap().registered.clone();
    assert!(!registered.is_empty());
    assert_eq!(registered[0].current_image, None);

    let mock = Mock::new();
    let mut t = HostTest::standard("host-1")
        .mock(&mock)
        .registered_in(S::Provisioning);
    t.pass();
    let registered = mock.0.lock().unwrap().registered.clone();
    assert_eq!(
        registered[0].current_image.as_ref().map(|i| i.url.as_str()),
        Some(IMAGE_URL)
    );
}
