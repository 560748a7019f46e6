//! What an OCI image's pull Secret gives the provisioner (BMO's `getImageAuthSecret`).

use super::harness::*;
use super::mock::Mock;
use bmh_api::{ErrorType, ProvisioningState as S};

fn oci_host(mock: &Mock) -> HostTest {
    HostTest::standard("host-0")
        .spec(|s| {
            s.image = Some(bmh_api::Image {
                url: "oci://quay.io/org/os:1".into(),
                oci_auth_secret_name: Some("pull".into()),
                ..Default::default()
            })
        })
        .mock(mock)
        .registered_in(S::Provisioning)
}

/// BMO's `getImageAuthSecret` sends Ironic the registry's `user:password`, not the config text.
#[test]
fn the_provisioner_gets_the_registrys_user_and_password() {
    let mock = Mock::new();
    let mut t = oci_host(&mock).data_secret(
        "pull",
        &[(
            ".dockerconfigjson",
            r#"{"auths": {"quay.io": {"username": "robot", "password": "s3cret"}}}"#,
        )],
    );
    t.pass();
    let sent = mock.0.lock().unwrap().provisioned[0]
        .image_pull_secret
        .clone();
    assert_eq!(sent, "robot:s3cret");
}

/// A registry the Secret has no entry for fails provisioning (BMO's `ImageAuthValidator`), with
/// an `ImageAuthParseError` event; a missing Secret names its namespace.
#[test]
fn a_registry_missing_from_the_secret_fails_provisioning() {
    let mock = Mock::new();
    let mut t = oci_host(&mock).data_secret(
        "pull",
        &[(
            ".dockerconfigjson",
            r#"{"auths": {"ghcr.io": {"username": "robot", "password": "s3cret"}}}"#,
        )],
    );
    let o = t.pass();
    assert_eq!(t.st().error_type, ErrorType::ProvisioningError);
    assert_eq!(
        t.st().error_message,
        "failed to extract credentials from secret \"pull\": registry quay.io not found in auth config"
    );
    assert_eq!(o.events[0].reason, "ImageAuthParseError");
    assert!(mock.0.lock().unwrap().provisioned.is_empty());

    let mock = Mock::new();
    let mut t = oci_host(&mock);
    t.pass();
    assert_eq!(
        t.st().error_message,
        "auth secret \"pull\" not found in namespace \"default\""
    );
}
