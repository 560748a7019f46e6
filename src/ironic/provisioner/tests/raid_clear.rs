//! Removing every hardware RAID volume (`hardwareRAIDVolumes: []`) through manual cleaning.

use super::*;
use bmh_api::{HardwareRaidVolume, RaidConfig};

/// BMO's `Prepare` with an empty hardware target and recorded volumes: `BuildRAIDCleanSteps`
/// gives `raid.delete_configuration` alone (no `create_configuration`).
#[test]
fn an_empty_hardware_target_deletes_the_raid_configuration() {
    let fake = FakeIronic::start();
    let shared = fake.shared();
    let mut host = host_data(UUID, true);
    host.bmc_address = "redfish://192.0.2.1/redfish/v1/Systems/1".into();
    fake.node_in(
        "manageable",
        json!({"driver": "redfish", "raid_interface": "redfish"}),
    );
    let hardware = |volumes: Vec<HardwareRaidVolume>| RaidConfig {
        hardware_raid_volumes: Some(volumes),
        software_raid_volumes: None,
    };
    let data = PrepareData {
        target_raid_config: Some(hardware(Vec::new())),
        actual_raid_config: Some(hardware(vec![HardwareRaidVolume {
            level: "1".into(),
            ..Default::default()
        }])),
        ..Default::default()
    };
    let m = fake.mark();
    let (mut p, _) = prov_for(&shared, host);
    let r = p
        .prepare(
            &data,
            StepOptions {
                unprepared: true,
                restart_on_failure: false,
            },
        )
        .unwrap();
    assert!(r.started, "{r:?}");
    let puts = fake.bodies_since(m, "PUT", &format!("/v1/nodes/{UUID}/states/provision"));
    assert_eq!(puts.len(), 1, "{:?}", fake.since(m));
    assert_eq!(puts[0]["target"], "clean");
    assert_eq!(
        puts[0]["clean_steps"],
        json!([{"interface": "raid", "step": "delete_configuration"}])
    );
}
