//! A host whose status knows no node, while its node (by name, as BMO's `findExistingHost`
//! looks) sits in a state BMO's path from registering never takes it from: refused at once,
//! before anything is written; every state that path takes, or waits out, is let through.

use super::*;

fn create(shared: &Arc<Shared>, host: HostData) -> Result<Box<dyn Provisioner>, ProvisionerError> {
    let factory = IronicFactory {
        shared: shared.clone(),
    };
    factory.new_provisioner(host, Arc::new(|_| {}))
}

fn new_host() -> HostData {
    host_data("", false)
}

#[test]
fn a_node_left_active_is_refused_naming_it_its_state_and_the_fixes() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in("active", json!({}));
    let m = fake.mark();
    let Err(ProvisionerError::Refused(why)) = create(&shared, new_host()) else {
        panic!("not refused");
    };
    for part in [
        format!("Ironic node {NAME} ({UUID}) is already \"active\""),
        "this host has no status".into(),
        "wait in \"inspecting\" for ever".into(),
        "nothing was changed".into(),
        "Keep the status file".into(),
        format!("`bmhctl import --from-ironic {UUID}`"),
        format!("`baremetal node delete {UUID}`"),
    ] {
        assert!(why.contains(&part), "{part:?} not in {why:?}");
    }
    assert!(fake.changes_since(m).is_empty(), "{:?}", fake.since(m));

    // With inspection disabled the host would wait in `preparing`.
    let host = HostData {
        inspection_disabled: true,
        ..new_host()
    };
    let Err(ProvisionerError::Refused(why)) = create(&shared, host) else {
        panic!("not refused");
    };
    assert!(why.contains("wait in \"preparing\""), "{why}");
}

#[test]
fn every_state_bmo_s_path_takes_is_let_through_and_the_rest_refused() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    let taken = [
        "enroll",
        "verifying",
        "manageable",
        "available",
        "cleaning",
        "clean wait",
        "inspecting",
        "inspect wait",
        "deleting",
    ];
    let refused = [
        "active",
        "deploying",
        "wait call-back",
        "deploy failed",
        "error",
        "rescue",
        "servicing",
        "service failed",
        "adopting",
        "adopt failed",
    ];
    for state in taken {
        fake.node_in(state, json!({}));
        assert!(create(&shared, new_host()).is_ok(), "{state}");
    }
    for state in refused {
        fake.node_in(state, json!({}));
        let r = create(&shared, new_host());
        assert!(
            matches!(r, Err(ProvisionerError::Refused(_))),
            "{state}: {:?}",
            r.err()
        );
        // An externally provisioned host is adopted from any state (BMO's Adopt).
        let host = HostData {
            externally_provisioned: true,
            ..new_host()
        };
        assert!(
            create(&shared, host).is_ok(),
            "externally provisioned, {state}"
        );
    }
    // Inspect takes `inspect failed`, Prepare `clean failed`: each refuses the other's.
    let disabled = HostData {
        inspection_disabled: true,
        ..new_host()
    };
    fake.node_in("inspect failed", json!({}));
    assert!(create(&shared, new_host()).is_ok());
    assert!(create(&shared, disabled.clone()).is_err());
    fake.node_in("clean failed", json!({}));
    assert!(create(&shared, new_host()).is_err());
    assert!(create(&shared, disabled).is_ok());
}

#[test]
fn a_host_whose_status_knows_its_node_is_never_checked() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in("active", json!({}));
    assert!(create(&shared, host_data(UUID, true)).is_ok());
}

#[test]
fn the_registration_of_the_same_pass_takes_the_node_the_check_found() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in("manageable", json!({}));
    let m = fake.mark();
    let mut p = create(&shared, new_host()).unwrap();
    let looked_up = fake.since(m).len();
    assert!(looked_up > 0, "the check looked the node up");
    let reg = p
        .register(&ManagementAccessData::default(), RegisterOptions::default())
        .unwrap();
    assert_eq!(reg.provisioner_id, UUID);
    let by_name = format!("GET /v1/nodes/{NAME}");
    let lookups = fake.since(m).iter().filter(|r| **r == by_name).count();
    assert_eq!(lookups, 1, "{:?}", fake.since(m));
}

/// An Ironic below BMO's minimum API never becomes usable: every host is refused, not told to
/// wait for it (BMO requeues for ever, saying nothing).
#[test]
fn an_ironic_too_old_refuses_every_host() {
    let fake = FakeIronic::with_version("1.88");
    let shared = Arc::new(Shared::new(
        IronicClient::new(fake.config()).unwrap(),
        ProvisionerConfig::default(),
    ));
    match create(&shared, host_data(UUID, true)) {
        Err(ProvisionerError::Refused(why)) => {
            assert!(
                why.contains("API 1.88 at most") && why.contains("Ironic 24.0"),
                "{why}"
            )
        }
        other => panic!("want Refused, got {:?}", other.err()),
    }
}
