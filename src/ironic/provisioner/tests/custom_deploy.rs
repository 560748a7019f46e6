//! Instance settings of a custom deploy (BMO's `setCustomDeployUpdateOptsForNode`).

use super::*;
use bmh_api::CustomDeploy;

/// With no image URL, BMO's `setCustomDeployUpdateOptsForNode` removes every image field, the
/// disk format included.
#[test]
fn a_custom_deploy_without_url_removes_the_disk_format() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    fake.node_in(
        "available",
        json!({"instance_info": {"image_source": "http://old/img", "image_disk_format": "qcow2"}}),
    );
    let data = ProvisionData {
        image: Image {
            format: "qcow2".into(),
            ..Default::default()
        },
        custom_deploy: Some(CustomDeploy {
            method: "install_great_os".into(),
        }),
        ..Default::default()
    };
    let m = fake.mark();
    prov(&shared)
        .provision(&data, ProvisionOptions::default())
        .unwrap();
    let patch = fake.bodies_since(m, "PATCH", &format!("/v1/nodes/{UUID}"));
    let ops = patch[0].as_array().unwrap();
    for field in ["image_source", "image_disk_format"] {
        let path = format!("/instance_info/{field}");
        assert!(
            ops.iter()
                .any(|op| op["op"] == "remove" && op["path"] == path.as_str()),
            "{field} is not removed: {ops:?}"
        );
    }
}
