//! The config-drive Secrets (user data, network data, meta data) as BMO's `hostConfigData` reads
//! them: read for the provisioner, their errors handed over with the data, because BMO's
//! provisioner reads them only when it builds the config drive (`getConfigDrive`).

use super::harness::*;
use super::mock::Mock;
use bmh_api::{ProvisioningState as S, SecretReference};

fn reference(name: &str, namespace: &str) -> Option<SecretReference> {
    Some(SecretReference {
        name: name.into(),
        namespace: namespace.into(),
    })
}

/// BMO's `getSecretDataWithFinalizer`: the named key, else `value`; user data and meta data with
/// neither are a `NoDataInSecretError`, network data with neither is no network data.
#[test]
fn secrets_without_their_key_or_value() {
    let mock = Mock::new();
    let mut t = HostTest::standard("host-0")
        .spec(|s| {
            s.user_data = reference("ud", "");
            s.network_data = reference("nd", "");
            s.meta_data = reference("md", "");
        })
        .data_secret("ud", &[("other", "x")])
        .data_secret("nd", &[("other", "x")])
        .data_secret("md", &[("value", "name: from-value")])
        .mock(&mock)
        .registered_in(S::Provisioning);
    t.pass();
    let data = mock.0.lock().unwrap().provisioned[0].clone();
    assert_eq!(
        data.host_config_errors.user_data,
        "Secret ud does not contain key userData"
    );
    assert_eq!(data.host_config_errors.network_data, "");
    assert_eq!(data.host_config.network_data, "");
    assert_eq!(data.host_config_errors.meta_data, "");
    assert_eq!(data.host_config.meta_data, "name: from-value");
}

/// BMO's `getSecretDataWithFinalizer` refuses a Secret in another namespace (the key named is the
/// data's: `userData`, `networkData`, `metaData`), and a missing Secret is an error too.
#[test]
fn secrets_in_another_namespace_or_missing() {
    let mock = Mock::new();
    let mut t = HostTest::standard("host-0")
        .spec(|s| {
            s.user_data = reference("ud", "other");
            s.network_data = reference("nd", "default");
            s.meta_data = reference("md", "other");
        })
        .mock(&mock)
        .registered_in(S::Provisioning);
    t.pass();
    let errors = mock.0.lock().unwrap().provisioned[0]
        .host_config_errors
        .clone();
    assert_eq!(
        errors.user_data,
        "userData secret must be in same namespace as host default/host-0"
    );
    assert_eq!(errors.network_data, "secret default/nd does not exist");
    assert_eq!(
        errors.meta_data,
        "metaData secret must be in same namespace as host default/host-0"
    );
}

/// BMO's `NetworkData` falls back to `preprovisioningNetworkDataName` (key `networkData`, else
/// `value`) when `networkData` is not set.
#[test]
fn network_data_falls_back_to_the_preprovisioning_secret() {
    let mock = Mock::new();
    let mut t = HostTest::standard("host-0")
        .spec(|s| s.preprovisioning_network_data_name = "pnd".into())
        .data_secret("pnd", &[("value", "links: []")])
        .mock(&mock)
        .registered_in(S::Provisioning);
    t.pass();
    let data = mock.0.lock().unwrap().provisioned[0].clone();
    assert_eq!(data.host_config.network_data, "links: []");
}

/// BMO reads config data lazily (`getConfigDrive`), never in the fixture provisioner: a fixture
/// host whose user data Secret is missing still provisions, and so does one whose Secret is
/// removed mid-deploy.
#[test]
fn the_fixture_provisions_whatever_the_config_secrets_hold() {
    let mut t = HostTest::standard("host-0").spec(|s| s.user_data = reference("gone", ""));
    t.run_to_steady();
    assert_eq!(*t.state(), S::Provisioned);

    let mut t = HostTest::standard("host-1")
        .spec(|s| s.user_data = reference("ud", ""))
        .data_secret("ud", &[("userData", "#cloud-config")]);
    t.run_until_state(S::Provisioning);
    t.pass();
    assert_eq!(*t.state(), S::Provisioning);
    t.secrets = Default::default();
    t.set_secret(SECRET, "admin", "password");
    t.run_to_steady();
    assert_eq!(*t.state(), S::Provisioned);
}

/// BMO's registration (`registerHost` → `PreprovisioningNetworkData`) fails with "failed to read
/// preprovisioningNetworkData: ..." when the Secret is missing; a Secret without the key is no
/// network data. Adding the Secret lets the host register.
#[test]
fn a_missing_preprovisioning_network_data_secret_fails_registration() {
    let mut t =
        HostTest::standard("host-0").spec(|s| s.preprovisioning_network_data_name = "pnd".into());
    t.passes(4);
    assert_eq!(*t.state(), S::Registering);
    assert_eq!(t.st().error_type, bmh_api::ErrorType::RegistrationError);
    assert_eq!(
        t.st().error_message,
        "failed to read preprovisioningNetworkData: secret default/pnd does not exist"
    );
    t.set_data_secret("pnd", &[("other", "x")]);
    t.run_to_steady();
    assert_eq!(*t.state(), S::Provisioned);
}
