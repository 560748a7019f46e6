//! Capacity slots given back when a host stops needing one.

use super::*;
use bmhctl_plugin_sdk::DetachOptions;

/// A host force-detached mid-operation never asks for capacity again: once its node is gone
/// (BMO's `HasCapacity` counts no node that is not there) its slot is free for the others.
#[test]
fn a_force_detached_host_gives_its_slot_back() {
    let fake = FakeIronic::start();
    let config = ProvisionerConfig {
        provisioning_limit: 1,
        ..Default::default()
    };
    let shared = fake.shared_with(fake.config(), config);
    fake.node_in("manageable", json!({}));
    let mut p = prov(&shared);
    assert!(p.has_capacity().unwrap());
    let name = NAME.to_string();
    assert!(shared.capacity.holds(&name));

    // Until the node is deleted the slot stays taken.
    let r = prov(&shared).detach(DetachOptions { force: true }).unwrap();
    assert!(r.dirty, "{r:?}");
    assert!(shared.capacity.holds(&name));
    fake.forget_everything();
    assert_done(&prov(&shared).detach(DetachOptions { force: true }).unwrap());
    assert!(!shared.capacity.holds(&name));
}
