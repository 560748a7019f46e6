//! When the provisioner reads the config-drive Secrets: only when it builds the drive.

use super::*;
use bmhctl_plugin_sdk::HostConfigErrors;

fn unreadable_user_data(image: Image) -> ProvisionData {
    ProvisionData {
        host_config_errors: HostConfigErrors {
            user_data: "Secret ud does not contain key userData".into(),
            ..Default::default()
        },
        ..provision_data(image)
    }
}

/// One pass on an `available` node: instance settings, validation, then the deploy.
fn deploy_pass(fake: &FakeIronic, shared: &Arc<Shared>, data: &ProvisionData) -> Outcome {
    fake.node_in("available", json!({}));
    prov(shared).provision(data, ProvisionOptions::default())
}

/// BMO's `Provision` calls `getConfigDrive` only when it deploys (node `available`): user data
/// with neither `userData` nor `value` is a transient error there ("could not retrieve user
/// data"), and the node is never asked to go `active`.
#[test]
fn an_unreadable_user_data_secret_stops_the_deploy() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    let data = unreadable_user_data(image());
    let m = fake.mark();
    assert_transient(
        deploy_pass(&fake, &shared, &data),
        "could not retrieve user data: Secret ud does not contain key userData",
    );
    assert!(fake.provision_targets_since(m).is_empty());
}

/// BMO's `Provision` for an `active` node (or one still deploying) builds no config drive: a
/// Secret removed mid-deploy does not stop a host Ironic already finished.
#[test]
fn an_unreadable_secret_does_not_matter_once_the_node_is_deployed() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    let data = unreadable_user_data(image());
    fake.node_in("wait call-back", json!({}));
    assert_requeue(
        &prov(&shared)
            .provision(&data, ProvisionOptions::default())
            .unwrap(),
        10,
    );
    fake.node_in("active", json!({}));
    assert_done(
        &prov(&shared)
            .provision(&data, ProvisionOptions::default())
            .unwrap(),
    );
}

/// BMO's `getConfigDrive` builds no drive for a live ISO, so it reads no Secret.
#[test]
fn a_live_iso_deploys_whatever_its_secrets_hold() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    let live = Image {
        url: "http://images.example/live.iso".into(),
        checksum: CHECKSUM.into(),
        format: "live-iso".into(),
        ..Default::default()
    };
    let m = fake.mark();
    let r = deploy_pass(&fake, &shared, &unreadable_user_data(live));
    assert_requeue(&r.unwrap(), 3);
    assert_eq!(fake.provision_targets_since(m), ["active"]);
}
