//! The ports registration creates (BMO's `ensurePorts` and `createNodePort`).

use super::*;
use bmh_api::{HardwareData, HardwareDataSpec, HardwareDetails, Nic};

/// BMO's `ensurePorts` fills the ports to create from the inspected NICs, then sets the boot
/// MAC's to PXE-enabled: a boot NIC inspected without PXE still gets `pxe_enabled: true`.
#[test]
fn the_boot_mac_port_is_always_pxe_enabled() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    let nic = |mac: &str| Nic {
        name: mac.into(),
        mac: mac.into(),
        pxe: false,
        ..Default::default()
    };
    let data = ManagementAccessData {
        hardware_data: Some(HardwareData {
            spec: HardwareDataSpec {
                hardware: Some(
                    HardwareDetails {
                        nics: vec![nic(MAC), nic("52:54:00:99:99:99")],
                        ..Default::default()
                    }
                    .into(),
                ),
            },
            ..Default::default()
        }),
        ..Default::default()
    };
    let m = fake.mark();
    let (mut p, _) = prov_for(&shared, host_data("", false));
    let r = p.register(&data, RegisterOptions::default()).unwrap();
    assert_requeue(&r.result, 3);
    let mut ports: Vec<(String, bool)> = fake
        .bodies_since(m, "POST", "/v1/ports")
        .iter()
        .map(|b| {
            (
                b["address"].as_str().unwrap().to_string(),
                b["pxe_enabled"].as_bool().unwrap(),
            )
        })
        .collect();
    ports.sort();
    assert_eq!(
        ports,
        [
            (MAC.to_string(), true),
            ("52:54:00:99:99:99".to_string(), false)
        ]
    );
}
