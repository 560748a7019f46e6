//! The values hosts share rather than copy: the inspected hardware details and the
//! provisioner's state.

use super::harness::*;
use crate::intern::Recent;
use crate::machine::STATES_KEPT;
use bmh_api::ProvisioningState as S;
use serde_json::json;
use std::sync::Arc;

/// The status and the HardwareData hold one copy of the inspected details, in the shape a
/// copy had.
#[test]
fn the_status_and_the_hardware_data_share_the_inspected_details() {
    let mut t = HostTest::standard("host-0");
    t.run_until_state(S::Preparing);
    let status = t.st().hardware.clone().expect("inspected");
    let data = t.rec.book.hardware_data.as_ref().expect("HardwareData");
    let kept = data.spec.hardware.as_ref().expect("its details");
    assert!(Arc::ptr_eq(&status, kept));
    assert_eq!(
        *status,
        crate::provisioners::fixture::canned_hardware_details()
    );
    let text = serde_json::to_value(t.st()).unwrap();
    assert_eq!(
        text["hardware"],
        serde_json::to_value(crate::provisioners::fixture::canned_hardware_details()).unwrap()
    );
}

/// The fixture's state is kept shared: equal states are one copy, up to the last
/// `STATES_KEPT` distinct ones.
#[test]
fn equal_provisioner_states_are_one_copy_of_the_recent_ones() {
    let recent = Recent::<_, STATES_KEPT>::new();
    let a = recent.share(json!({"poweredOn": true, "n": 0}));
    let b = recent.share(json!({"poweredOn": true, "n": 0}));
    assert!(Arc::ptr_eq(&a, &b));
    for n in 1..STATES_KEPT {
        recent.share(json!({"poweredOn": true, "n": n}));
    }
    // Still among the last STATES_KEPT: shared.
    let c = recent.share(json!({"poweredOn": true, "n": 0}));
    assert!(Arc::ptr_eq(&a, &c));
    for n in STATES_KEPT..2 * STATES_KEPT {
        recent.share(json!({"poweredOn": true, "n": n}));
    }
    let d = recent.share(json!({"poweredOn": true, "n": 0}));
    assert!(
        !Arc::ptr_eq(&a, &d),
        "a state no longer recent is a new copy"
    );
    assert_eq!(*d, json!({"poweredOn": true, "n": 0}));
}

/// A host's bookkeeping keeps the state the fixture handed back, equal whether shared or not.
#[test]
fn the_bookkeeping_keeps_the_fixtures_state() {
    let mut t = HostTest::standard("host-0");
    t.run_to_steady();
    assert_eq!(*t.state(), S::Provisioned);
    let kept = t.rec.book.provisioner_state.as_deref().expect("a state");
    assert_eq!(kept["poweredOn"], json!(true));
    assert!(t.fixture().is_powered_on());
}

/// A state handed in shared, when it is a recent one, is that copy whatever its equal
/// neighbours: no comparison of the values is needed to find it.
#[test]
fn a_recent_state_handed_in_shared_is_kept_as_it_is() {
    let recent = Recent::<_, STATES_KEPT>::new();
    let a = Arc::new(json!({"poweredOn": true}));
    assert!(Arc::ptr_eq(&recent.share(a.clone()), &a));
    let b = recent.share(json!({"poweredOn": false}));
    assert!(Arc::ptr_eq(&recent.share(a.clone()), &a));
    let equal = Arc::new(json!({"poweredOn": false}));
    assert!(Arc::ptr_eq(&recent.share(equal), &b));
}

/// Every pass after the first hands the fixture the state it kept, and the fixture hands the
/// same value back while nothing changed: the steady host's bookkeeping keeps that very value.
#[test]
fn a_steady_host_keeps_its_state_value() {
    let mut t = HostTest::standard("host-0");
    t.run_to_steady();
    let before = t.rec.book.provisioner_state.clone().expect("a state");
    let out = t.pass();
    assert!(out.steady() && !out.bookkeeping_changed);
    let after = t.rec.book.provisioner_state.clone().expect("a state");
    assert!(Arc::ptr_eq(&before, &after));
}
