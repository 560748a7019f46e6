//! Config-drive Secrets on real files: read only when a provisioner builds a config drive, as
//! BMO's `getConfigDrive` does, so the fixture (which builds none) provisions whatever they hold.

use crate::lab::{Lab, host, secret};

const IMAGE: &str = "image:\n  url: http://images.example/os.qcow2\n  checksum: abc123";

#[test]
fn the_fixture_provisions_a_host_whose_user_data_secret_lacks_its_key() {
    let user_data = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: worker-0-user-data\nstringData:\n  other: x\n";
    let text = format!(
        "{}---\n{user_data}---\n{}",
        secret("bmc-secret"),
        host(
            "worker-0",
            &format!("{IMAGE}\nuserData:\n  name: worker-0-user-data")
        ),
    );
    let lab = Lab::new().file("hosts.yaml", &text);
    let run = lab
        .run(&[
            "provision",
            "--provisioner",
            "fixture",
            "-o",
            "json",
            "hosts.yaml",
        ])
        .expect_code(0);
    assert_eq!(run.json()["hosts"][0]["state"], "provisioned");
}
