//! RAID requests as BMO's `saveHostProvisioningSettings` reads them.

use super::harness::*;
use super::mock::Mock;
use bmh_api::{HardwareRaidVolume, ProvisioningState as S, RaidConfig};

fn volume() -> HardwareRaidVolume {
    HardwareRaidVolume {
        level: "1".into(),
        ..Default::default()
    }
}

fn hardware(volumes: Vec<HardwareRaidVolume>) -> RaidConfig {
    RaidConfig {
        hardware_raid_volumes: Some(volumes),
        software_raid_volumes: None,
    }
}

/// BMO's `saveHostProvisioningSettings` treats only a nil RAID (or one with both lists nil) as
/// "nothing requested": `hardwareRAIDVolumes: []` asks to remove every hardware volume, so the
/// host prepares with an empty hardware target and the status records it.
#[test]
fn an_empty_hardware_raid_list_removes_the_recorded_volumes() {
    let mock = Mock::new();
    let mut t = HostTest::standard("host-0")
        .spec(|s| {
            s.image = None;
            s.raid = Some(Box::new(hardware(Vec::new())));
        })
        .mock(&mock)
        .registered_in(S::Available)
        .status(|st| st.provisioning.raid = Some(hardware(vec![volume()])));
    t.run_to_steady();
    assert_eq!(t.state_path(), vec![S::Preparing, S::Available]);
    let prepared = mock.0.lock().unwrap().prepared.clone();
    let first = prepared.first().expect("prepare was called");
    assert_eq!(first.target_raid_config, Some(hardware(Vec::new())));
    assert_eq!(first.actual_raid_config, Some(hardware(vec![volume()])));
    assert_eq!(t.st().provisioning.raid, Some(hardware(Vec::new())));
}

/// Both lists absent is "nothing requested" (BMO's `reflect.DeepEqual(specRAID, &RAIDConfig{})`):
/// recorded hardware volumes are kept, software volumes cleared.
#[test]
fn a_raid_with_both_lists_absent_keeps_the_recorded_hardware_volumes() {
    let mock = Mock::new();
    let mut t = HostTest::standard("host-0")
        .spec(|s| {
            s.image = None;
            s.raid = Some(Box::default());
        })
        .mock(&mock)
        .registered_in(S::Available)
        .status(|st| st.provisioning.raid = Some(hardware(vec![volume()])));
    t.run_to_steady();
    let kept = RaidConfig {
        hardware_raid_volumes: Some(vec![volume()]),
        software_raid_volumes: Some(Vec::new()),
    };
    assert_eq!(t.st().provisioning.raid, Some(kept));
}
