//! The values hosts share rather than copy: the inspected hardware details and the
//! provisioner's state.

use super::harness::*;
use crate::machine::{STATES_KEPT, shared_state_in};
use bmh_api::ProvisioningState as S;
use serde_json::json;
use std::sync::{Arc, Mutex};

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
    let recent = Mutex::new(Vec::new());
    let a = shared_state_in(&recent, json!({"poweredOn": true, "n": 0}));
    let b = shared_state_in(&recent, json!({"poweredOn": true, "n": 0}));
    assert!(Arc::ptr_eq(&a, &b));
    for n in 1..STATES_KEPT {
        shared_state_in(&recent, json!({"poweredOn": true, "n": n}));
    }
    // Still among the last STATES_KEPT: shared.
    let c = shared_state_in(&recent, json!({"poweredOn": true, "n": 0}));
    assert!(Arc::ptr_eq(&a, &c));
    for n in STATES_KEPT..2 * STATES_KEPT {
        shared_state_in(&recent, json!({"poweredOn": true, "n": n}));
    }
    let d = shared_state_in(&recent, json!({"poweredOn": true, "n": 0}));
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
