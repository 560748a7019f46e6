//! The ramdisk's network data registration sets on the node (BMO's `Register`).

use super::*;

/// BMO decodes `preprovisioningNetworkData` into a `map[string]any`: a YAML list is a transient
/// error ("invalid preprovisioningNetworkData"), and nothing is written to the node.
#[test]
fn a_yaml_list_as_preprovisioning_network_data_is_an_error() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in("manageable", json!({}));
    let data = ManagementAccessData {
        preprovisioning_network_data: "- links: []\n".into(),
        ..Default::default()
    };
    let m = fake.mark();
    let (mut p, _) = prov_for(&shared, host_data(UUID, true));
    let err = transient_message(p.register(&data, RegisterOptions::default()));
    assert_eq!(
        err,
        "invalid preprovisioningNetworkData: expected a mapping, found a sequence"
    );
    assert!(
        fake.changes_since(m).is_empty(),
        "{:?}",
        fake.changes_since(m)
    );

    // A mapping is set as the node's network_data.
    let data = ManagementAccessData {
        preprovisioning_network_data: "links: []\n".into(),
        ..Default::default()
    };
    let m = fake.mark();
    let (mut p, _) = prov_for(&shared, host_data(UUID, true));
    p.register(&data, RegisterOptions::default()).unwrap();
    let patch = fake.bodies_since(m, "PATCH", &format!("/v1/nodes/{UUID}"));
    assert!(
        patch
            .iter()
            .flat_map(|p| p.as_array().unwrap())
            .any(|op| op["path"] == "/network_data" && op["value"] == json!({"links": []})),
        "{patch:?}"
    );
}
