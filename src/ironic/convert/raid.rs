//! RAID (spec 6.3).

use super::devicehints::root_device_hints;
use bmh_api::{HardwareRaidVolume, RaidConfig, RootDeviceHints, SoftwareRaidVolume};
use serde_json::{Value, json};
use std::collections::HashMap;

/// The RAID interface of drivers without RAID support.
pub const NO_RAID_INTERFACE: &str = "no-raid";
/// The RAID interface doing software RAID (in the deploy ramdisk).
pub const SOFTWARE_RAID_INTERFACE: &str = "agent";

fn has_volumes<T>(volumes: &Option<Vec<T>>) -> bool {
    volumes.as_ref().is_some_and(|v| !v.is_empty())
}

/// The RAID interface to use for a target (BMO's `CheckRAIDInterface`), or the error text.
pub fn raid_interface(
    driver_default: &str,
    target: Option<&RaidConfig>,
    actual: Option<&RaidConfig>,
) -> Result<String, String> {
    let Some(target) = target else {
        return Ok(driver_default.to_string());
    };
    if has_volumes(&target.hardware_raid_volumes) {
        if driver_default == NO_RAID_INTERFACE {
            return Err(format!(
                "RAID settings are defined, but the node's driver {driver_default} does not support RAID"
            ));
        }
        if driver_default == SOFTWARE_RAID_INTERFACE {
            return Err(format!(
                "hardware RAID settings are defined, but the node's driver {driver_default} only supports software RAID"
            ));
        }
    }
    // Creating or removing software volumes needs the agent's RAID interface.
    if has_volumes(&target.software_raid_volumes)
        || actual.is_some_and(|a| has_volumes(&a.software_raid_volumes))
    {
        return Ok(SOFTWARE_RAID_INTERFACE.to_string());
    }
    Ok(driver_default.to_string())
}

/// `size_gb`: the size when set (0 included), else Ironic's "use all the space".
fn size_gb(size: Option<i64>) -> Value {
    size.map_or_else(|| Value::String("MAX".into()), Value::from)
}

fn hardware_logical_disks(volumes: &[HardwareRaidVolume]) -> Result<Vec<Value>, String> {
    let mut first_index_of_name: HashMap<&str, usize> = HashMap::new();
    let mut disks = Vec::with_capacity(volumes.len());
    for (index, volume) in volumes.iter().enumerate() {
        if !volume.name.is_empty() {
            if let Some(first) = first_index_of_name.get(volume.name.as_str()) {
                return Err(format!(
                    "the names({}) of volume[{index}] and volume[{first}] are repeated",
                    volume.name
                ));
            }
            first_index_of_name.insert(&volume.name, index);
        }
        if !volume.physical_disks.is_empty() {
            if volume.controller.is_empty() {
                return Err("'controller' must be specified if 'physicalDisks' are used".into());
            }
            if let Some(n) = volume.number_of_physical_disks
                && n != volume.physical_disks.len() as i64
            {
                return Err(format!(
                    "the numberOfPhysicalDisks[{n}] is not same as number of items in physicalDisks[{}]",
                    volume.physical_disks.len()
                ));
            }
        }

        let mut disk = json!({
            "size_gb": size_gb(volume.size_gibibytes),
            "raid_level": volume.level,
        });
        if !volume.name.is_empty() {
            disk["volume_name"] = json!(volume.name);
        }
        if let Some(rotational) = volume.rotational {
            disk["disk_type"] = json!(if rotational { "hdd" } else { "ssd" });
        }
        // Ironic's client leaves a zero count out, as it means "the level's minimum" anyway.
        if let Some(n) = volume.number_of_physical_disks.filter(|n| *n != 0) {
            disk["number_of_physical_disks"] = json!(n);
        }
        if !volume.controller.is_empty() {
            disk["controller"] = json!(volume.controller);
        }
        if !volume.physical_disks.is_empty() {
            disk["physical_disks"] = json!(volume.physical_disks);
        }
        disks.push(disk);
    }
    Ok(disks)
}

fn software_logical_disks(volumes: &[SoftwareRaidVolume]) -> Result<Vec<Value>, String> {
    if volumes.first().is_some_and(|v| v.level != "1") {
        return Err("the level in first volume of software raid must be RAID1".into());
    }
    let disks = volumes
        .iter()
        .map(|volume| {
            let mut disk = json!({
                "size_gb": size_gb(volume.size_gibibytes),
                "raid_level": volume.level,
                "controller": "software",
                "is_root_volume": volume.root_volume,
            });
            if !volume.physical_disks.is_empty() {
                let hints = volume.physical_disks.iter();
                disk["physical_disks"] = hints.map(|h| root_device_hints(Some(h))).collect();
            }
            disk
        })
        .collect();
    Ok(disks)
}

/// The `logical_disks` of the target RAID config (hardware volumes win); errors are `fail`
/// texts. Without root device hints or a software root volume, the first is the root volume.
pub fn logical_disks(
    target: Option<&RaidConfig>,
    root_device_hints: Option<&RootDeviceHints>,
) -> Result<Vec<Value>, String> {
    let Some(target) = target else {
        return Ok(Vec::new());
    };
    let mut disks = match (&target.hardware_raid_volumes, &target.software_raid_volumes) {
        (Some(hw), _) if !hw.is_empty() => hardware_logical_disks(hw)?,
        (_, Some(sw)) if !sw.is_empty() => software_logical_disks(sw)?,
        _ => Vec::new(),
    };
    // BMO counts software root volumes even when the hardware list is the one being built.
    let software_root_volumes = target
        .software_raid_volumes
        .iter()
        .flatten()
        .filter(|v| v.root_volume)
        .count();
    if root_device_hints.is_none()
        && software_root_volumes == 0
        && let Some(Value::Object(first)) = disks.first_mut()
    {
        first.insert("is_root_volume".into(), Value::Bool(true));
    }
    Ok(disks)
}

fn clean_step(interface: &str, step: &str) -> Value {
    json!({"interface": interface, "step": step})
}

/// The RAID clean steps (BMO's `BuildRAIDCleanSteps`); none for a refused target.
pub fn raid_clean_steps(
    raid_interface: &str,
    target: Option<&RaidConfig>,
    actual: Option<&RaidConfig>,
) -> Vec<Value> {
    let Some(target) = target else {
        return Vec::new();
    };
    if self::raid_interface(raid_interface, Some(target), actual).is_err() {
        return Vec::new();
    }

    // A software list (even an empty one) decides alone; hardware lists are ignored on both sides.
    if let Some(target_sw) = &target.software_raid_volumes {
        let actual_sw = actual.map(|a| &a.software_raid_volumes);
        if actual_sw == Some(&target.software_raid_volumes) {
            return Vec::new();
        }
        let actual_has_none = actual_sw.is_none_or(|sw| sw.as_ref().is_none_or(Vec::is_empty));
        if target_sw.is_empty() && actual_has_none {
            return Vec::new();
        }
        let mut steps = vec![
            clean_step("raid", "delete_configuration"),
            clean_step("deploy", "erase_devices_metadata"),
        ];
        if !target_sw.is_empty() {
            steps.push(clean_step("raid", "create_configuration"));
        }
        return steps;
    }

    // No hardware list means "keep whatever hardware RAID exists".
    let Some(target_hw) = &target.hardware_raid_volumes else {
        return Vec::new();
    };
    if raid_interface == NO_RAID_INTERFACE {
        return Vec::new();
    }
    if actual.is_some_and(|a| a.hardware_raid_volumes == target.hardware_raid_volumes) {
        return Vec::new();
    }
    // Delete first so that only the wanted volumes exist afterwards; an empty list only wipes.
    let mut steps = vec![clean_step("raid", "delete_configuration")];
    if !target_hw.is_empty() {
        steps.push(clean_step("raid", "create_configuration"));
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raid(v: Value) -> RaidConfig {
        serde_json::from_value(v).expect("valid RaidConfig")
    }

    fn hints(v: Value) -> RootDeviceHints {
        serde_json::from_value(v).expect("valid RootDeviceHints")
    }

    fn hw_root() -> RaidConfig {
        raid(json!({"hardwareRAIDVolumes": [{"name": "root", "level": "1"}]}))
    }

    fn sw_one() -> RaidConfig {
        raid(json!({"softwareRAIDVolumes": [{"level": "1"}]}))
    }

    // ---- raid_interface ----

    const NO_RAID_ERROR: &str =
        "RAID settings are defined, but the node's driver no-raid does not support RAID";
    const AGENT_ERROR: &str = "hardware RAID settings are defined, but the node's driver agent only supports software RAID";

    /// BMO's `TestCheckRAIDConfigure` cases plus the spec's rows.
    #[test]
    fn raid_interface_table() {
        let empty = RaidConfig::default();
        let hw = hw_root();
        let sw = sw_one();
        let sw_empty = raid(json!({"softwareRAIDVolumes": []}));
        let hw_empty = raid(json!({"hardwareRAIDVolumes": []}));
        let both = raid(json!({
            "hardwareRAIDVolumes": [{"level": "1"}],
            "softwareRAIDVolumes": [{"level": "1"}],
        }));
        type Case<'a> = (
            &'a str,
            Option<&'a RaidConfig>,
            Option<&'a RaidConfig>,
            Result<&'a str, &'a str>,
        );
        let cases: Vec<Case> = vec![
            ("no-raid", None, None, Ok("no-raid")),
            ("no-raid", Some(&empty), None, Ok("no-raid")),
            ("no-raid", Some(&hw), None, Err(NO_RAID_ERROR)),
            ("no-raid", Some(&sw), None, Ok("agent")),
            ("no-raid", Some(&hw_empty), None, Ok("no-raid")),
            ("agent", None, None, Ok("agent")),
            ("agent", Some(&empty), None, Ok("agent")),
            ("agent", Some(&hw), None, Err(AGENT_ERROR)),
            ("agent", Some(&sw), None, Ok("agent")),
            ("hardware", None, None, Ok("hardware")),
            ("hardware", Some(&empty), None, Ok("hardware")),
            ("hardware", Some(&hw), None, Ok("hardware")),
            ("hardware", Some(&sw), None, Ok("agent")),
            ("hardware", Some(&sw_empty), Some(&sw), Ok("agent")),
            ("redfish", Some(&sw_empty), Some(&empty), Ok("redfish")),
            ("redfish", Some(&hw), Some(&sw), Ok("agent")),
            // No target: the recorded software volumes do not matter.
            ("redfish", None, Some(&sw), Ok("redfish")),
            // The hardware check comes before the software one.
            ("no-raid", Some(&both), None, Err(NO_RAID_ERROR)),
            ("redfish", Some(&both), None, Ok("agent")),
        ];
        for (driver, target, actual, expected) in cases {
            let got = raid_interface(driver, target, actual);
            let expected = expected.map(str::to_string).map_err(str::to_string);
            assert_eq!(got, expected, "{driver} {target:?} {actual:?}");
        }
    }

    // ---- logical_disks ----

    #[test]
    fn no_target_or_no_volumes_give_no_disks() {
        let root = hints(json!({"deviceName": "/dev/sda"}));
        for target in [
            None,
            Some(RaidConfig::default()),
            Some(raid(
                json!({"hardwareRAIDVolumes": [], "softwareRAIDVolumes": []}),
            )),
            Some(raid(json!({"hardwareRAIDVolumes": []}))),
            Some(raid(json!({"softwareRAIDVolumes": []}))),
        ] {
            assert_eq!(logical_disks(target.as_ref(), None), Ok(vec![]));
            assert_eq!(logical_disks(target.as_ref(), Some(&root)), Ok(vec![]));
        }
    }

    #[test]
    fn hardware_volumes_win_over_software_volumes() {
        let target = raid(json!({
            "hardwareRAIDVolumes": [
                {"name": "root", "level": "1", "rotational": false},
                {"name": "v1", "level": "1", "rotational": true},
            ],
            "softwareRAIDVolumes": [{"level": "1"}, {"level": "1"}],
        }));
        let root = hints(json!({"deviceName": "/dev/sda"}));
        assert_eq!(
            logical_disks(Some(&target), Some(&root)),
            Ok(vec![
                json!({"size_gb": "MAX", "raid_level": "1", "volume_name": "root", "disk_type": "ssd"}),
                json!({"size_gb": "MAX", "raid_level": "1", "volume_name": "v1", "disk_type": "hdd"}),
            ])
        );
    }

    #[test]
    fn empty_hardware_list_falls_back_to_software_list() {
        let target = raid(json!({
            "hardwareRAIDVolumes": [],
            "softwareRAIDVolumes": [{"level": "1", "rootVolume": true}],
        }));
        assert_eq!(
            logical_disks(Some(&target), None),
            Ok(vec![json!({
                "size_gb": "MAX", "raid_level": "1", "controller": "software", "is_root_volume": true,
            })])
        );
    }

    #[test]
    fn hardware_volume_with_every_field() {
        let target = raid(json!({"hardwareRAIDVolumes": [{
            "sizeGibibytes": 100,
            "level": "5+0",
            "name": "data",
            "rotational": true,
            "numberOfPhysicalDisks": 2,
            "controller": "RAID.Integrated.1-1",
            "physicalDisks": ["Disk-1", "Disk-2"],
        }]}));
        let root = hints(json!({"hctl": "0:2:0:0"}));
        assert_eq!(
            logical_disks(Some(&target), Some(&root)),
            Ok(vec![json!({
                "size_gb": 100,
                "raid_level": "5+0",
                "volume_name": "data",
                "disk_type": "hdd",
                "number_of_physical_disks": 2,
                "controller": "RAID.Integrated.1-1",
                "physical_disks": ["Disk-1", "Disk-2"],
            })])
        );
    }

    #[test]
    fn hardware_size_zero_is_sent_as_zero_and_count_without_disks_is_kept() {
        let target = raid(json!({"hardwareRAIDVolumes": [
            {"sizeGibibytes": 0, "level": "0", "numberOfPhysicalDisks": 3},
        ]}));
        let root = hints(json!({"deviceName": "/dev/sda"}));
        assert_eq!(
            logical_disks(Some(&target), Some(&root)),
            Ok(vec![
                json!({"size_gb": 0, "raid_level": "0", "number_of_physical_disks": 3})
            ])
        );
    }

    #[test]
    fn hardware_controller_without_disks_is_sent() {
        let target = raid(json!({"hardwareRAIDVolumes": [
            {"level": "1", "controller": "ctl"},
        ]}));
        let root = hints(json!({"deviceName": "/dev/sda"}));
        assert_eq!(
            logical_disks(Some(&target), Some(&root)),
            Ok(vec![
                json!({"size_gb": "MAX", "raid_level": "1", "controller": "ctl"})
            ])
        );
    }

    #[test]
    fn hardware_unnamed_volumes_may_repeat() {
        let target = raid(json!({"hardwareRAIDVolumes": [{"level": "1"}, {"level": "1"}]}));
        let root = hints(json!({"deviceName": "/dev/sda"}));
        assert_eq!(
            logical_disks(Some(&target), Some(&root)),
            Ok(vec![
                json!({"size_gb": "MAX", "raid_level": "1"}),
                json!({"size_gb": "MAX", "raid_level": "1"}),
            ])
        );
    }

    #[test]
    fn hardware_volume_errors() {
        let cases = [
            (
                json!([{"name": "v1", "level": "1"}, {"name": "v1", "level": "1"}]),
                "the names(v1) of volume[1] and volume[0] are repeated",
            ),
            (
                json!([
                    {"name": "a", "level": "1"},
                    {"name": "b", "level": "1"},
                    {"name": "", "level": "1"},
                    {"name": "a", "level": "1"},
                ]),
                "the names(a) of volume[3] and volume[0] are repeated",
            ),
            (
                json!([{"name": "volume1", "level": "1", "rotational": false,
                        "physicalDisks": ["Disk-1", "Disk-2"]}]),
                "'controller' must be specified if 'physicalDisks' are used",
            ),
            (
                json!([{"name": "volume1", "level": "1", "rotational": true,
                        "physicalDisks": ["Disk-1", "Disk-2"], "numberOfPhysicalDisks": 3,
                        "controller": "Controller-1"}]),
                "the numberOfPhysicalDisks[3] is not same as number of items in physicalDisks[2]",
            ),
        ];
        for (volumes, expected) in cases {
            let target = raid(json!({ "hardwareRAIDVolumes": volumes }));
            assert_eq!(
                logical_disks(Some(&target), None),
                Err(expected.to_string()),
                "{volumes}"
            );
        }
    }

    #[test]
    fn software_volumes_with_disk_hints() {
        let target = raid(json!({"softwareRAIDVolumes": [
            {"level": "1", "physicalDisks": [{"minSizeGigabytes": 100}, {"minSizeGigabytes": 200}]},
            {"level": "1"},
        ]}));
        let root = hints(json!({"deviceName": "/dev/sda"}));
        assert_eq!(
            logical_disks(Some(&target), Some(&root)),
            Ok(vec![
                json!({
                    "size_gb": "MAX", "raid_level": "1", "controller": "software",
                    "is_root_volume": false,
                    "physical_disks": [{"size": ">= 100"}, {"size": ">= 200"}],
                }),
                json!({
                    "size_gb": "MAX", "raid_level": "1", "controller": "software",
                    "is_root_volume": false,
                }),
            ])
        );
    }

    #[test]
    fn software_volume_disk_hints_use_every_hint_operator() {
        let target = raid(json!({"softwareRAIDVolumes": [{
            "level": "1",
            "sizeGibibytes": 50,
            "physicalDisks": [
                {"deviceName": "/dev/disk/by-path/pci-0000:00:1f.2-ata-1"},
                {"model": "SSD", "rotational": false},
                {},
            ],
        }]}));
        assert_eq!(
            logical_disks(Some(&target), Some(&RootDeviceHints::default())),
            Ok(vec![json!({
                "size_gb": 50, "raid_level": "1", "controller": "software",
                "is_root_volume": false,
                "physical_disks": [
                    {"by_path": "s== /dev/disk/by-path/pci-0000:00:1f.2-ata-1"},
                    {"model": "<in> SSD", "rotational": "false"},
                    {},
                ],
            })])
        );
    }

    #[test]
    fn software_root_volume_is_kept_without_hints() {
        let target = raid(json!({"softwareRAIDVolumes": [
            {"level": "1", "rootVolume": true},
            {"level": "1"},
        ]}));
        assert_eq!(
            logical_disks(Some(&target), None),
            Ok(vec![
                json!({"size_gb": "MAX", "raid_level": "1", "controller": "software", "is_root_volume": true}),
                json!({"size_gb": "MAX", "raid_level": "1", "controller": "software", "is_root_volume": false}),
            ])
        );
    }

    #[test]
    fn software_later_root_volume_prevents_the_auto_rule() {
        let target = raid(json!({"softwareRAIDVolumes": [
            {"level": "1"},
            {"level": "0", "rootVolume": true},
        ]}));
        let disks = logical_disks(Some(&target), None).expect("valid");
        assert_eq!(disks[0]["is_root_volume"], json!(false));
        assert_eq!(disks[1]["is_root_volume"], json!(true));
    }

    #[test]
    fn software_first_volume_must_be_raid1() {
        for level in ["0", "1+0", ""] {
            let target = raid(json!({"softwareRAIDVolumes": [{"level": level}, {"level": "1"}]}));
            assert_eq!(
                logical_disks(Some(&target), None),
                Err("the level in first volume of software raid must be RAID1".to_string()),
                "level {level:?}"
            );
        }
        // Later volumes may use any level.
        let target = raid(json!({"softwareRAIDVolumes": [{"level": "1"}, {"level": "0"}]}));
        assert!(logical_disks(Some(&target), None).is_ok());
    }

    #[test]
    fn auto_root_volume_only_without_hints_and_software_root() {
        // No hints, no software root volume: the first disk becomes the root.
        let hw = raid(
            json!({"hardwareRAIDVolumes": [{"name": "a", "level": "1"}, {"name": "b", "level": "0"}]}),
        );
        let disks = logical_disks(Some(&hw), None).expect("valid");
        assert_eq!(disks[0]["is_root_volume"], json!(true));
        assert!(disks[1].get("is_root_volume").is_none());

        let sw = raid(json!({"softwareRAIDVolumes": [{"level": "1"}, {"level": "1"}]}));
        let disks = logical_disks(Some(&sw), None).expect("valid");
        assert_eq!(disks[0]["is_root_volume"], json!(true));
        assert_eq!(disks[1]["is_root_volume"], json!(false));

        // Hints given, even empty ones: nothing is forced.
        let disks = logical_disks(Some(&hw), Some(&RootDeviceHints::default())).expect("valid");
        assert!(disks[0].get("is_root_volume").is_none());

        // A software root volume in an ignored software list still counts (BMO does so).
        let both = raid(json!({
            "hardwareRAIDVolumes": [{"level": "1"}],
            "softwareRAIDVolumes": [{"level": "1", "rootVolume": true}],
        }));
        let disks = logical_disks(Some(&both), None).expect("valid");
        assert_eq!(disks, vec![json!({"size_gb": "MAX", "raid_level": "1"})]);
    }

    // ---- raid_clean_steps ----

    fn names(steps: &[Value]) -> Vec<String> {
        steps
            .iter()
            .map(|s| {
                format!(
                    "{}.{}",
                    s["interface"].as_str().unwrap_or("?"),
                    s["step"].as_str().unwrap_or("?")
                )
            })
            .collect()
    }

    const DELETE: &str = "raid.delete_configuration";
    const ERASE: &str = "deploy.erase_devices_metadata";
    const CREATE: &str = "raid.create_configuration";

    /// BMO's `TestBuildRAIDCleanSteps` cases plus the spec table's other branches.
    #[test]
    fn clean_steps_table() {
        let empty = RaidConfig::default();
        let hw = hw_root();
        let hw_other = raid(json!({"hardwareRAIDVolumes": [{"name": "root", "level": "0"}]}));
        let hw_empty = raid(json!({"hardwareRAIDVolumes": []}));
        let sw = sw_one();
        let sw_two = raid(json!({"softwareRAIDVolumes": [{"level": "1"}, {"level": "0"}]}));
        let sw_empty = raid(json!({"softwareRAIDVolumes": []}));
        let hw_and_sw = raid(json!({
            "hardwareRAIDVolumes": [{"name": "root", "level": "1"}],
            "softwareRAIDVolumes": [{"level": "1"}],
        }));
        let hw_and_sw_empty = raid(json!({
            "hardwareRAIDVolumes": [{"name": "root", "level": "1"}],
            "softwareRAIDVolumes": [],
        }));
        type Case<'a> = (
            &'a str,
            &'a str,
            Option<&'a RaidConfig>,
            Option<&'a RaidConfig>,
            Vec<&'a str>,
        );
        let cases: Vec<Case> = vec![
            ("keep hardware RAID on nil", "redfish", None, None, vec![]),
            (
                "keep hardware RAID on empty config",
                "redfish",
                Some(&empty),
                None,
                vec![],
            ),
            (
                "configure hardware RAID",
                "redfish",
                Some(&hw),
                None,
                vec![DELETE, CREATE],
            ),
            (
                "have same hardware RAID",
                "redfish",
                Some(&hw),
                Some(&hw),
                vec![],
            ),
            (
                "change hardware RAID",
                "redfish",
                Some(&hw_other),
                Some(&hw),
                vec![DELETE, CREATE],
            ),
            (
                "clear hardware RAID",
                "redfish",
                Some(&hw_empty),
                Some(&hw),
                vec![DELETE],
            ),
            (
                "clear with nothing recorded",
                "redfish",
                Some(&hw_empty),
                None,
                vec![DELETE],
            ),
            (
                "clear with absent recorded list",
                "redfish",
                Some(&hw_empty),
                Some(&empty),
                vec![DELETE],
            ),
            (
                "clear already cleared",
                "redfish",
                Some(&hw_empty),
                Some(&hw_empty),
                vec![],
            ),
            (
                "no-raid keeps everything",
                "no-raid",
                Some(&hw_empty),
                Some(&hw),
                vec![],
            ),
            (
                "no-raid refuses hardware volumes",
                "no-raid",
                Some(&hw),
                None,
                vec![],
            ),
            (
                "agent refuses hardware volumes",
                "agent",
                Some(&hw),
                None,
                vec![],
            ),
            (
                "configure software RAID",
                "agent",
                Some(&sw),
                None,
                vec![DELETE, ERASE, CREATE],
            ),
            (
                "configure software RAID on no-raid",
                "no-raid",
                Some(&sw),
                None,
                vec![DELETE, ERASE, CREATE],
            ),
            (
                "have same software RAID",
                "agent",
                Some(&sw),
                Some(&sw),
                vec![],
            ),
            (
                "change software RAID",
                "agent",
                Some(&sw_two),
                Some(&sw),
                vec![DELETE, ERASE, CREATE],
            ),
            (
                "keep missing software RAID",
                "agent",
                Some(&sw_empty),
                None,
                vec![],
            ),
            (
                "keep empty software RAID",
                "agent",
                Some(&sw_empty),
                Some(&empty),
                vec![],
            ),
            (
                "keep emptied software RAID",
                "agent",
                Some(&sw_empty),
                Some(&sw_empty),
                vec![],
            ),
            (
                "clear software RAID",
                "agent",
                Some(&sw_empty),
                Some(&sw),
                vec![DELETE, ERASE],
            ),
            // A software list ignores hardware lists on both sides.
            (
                "software ignores hardware target",
                "redfish",
                Some(&hw_and_sw),
                Some(&sw),
                vec![],
            ),
            (
                "software ignores hardware actual",
                "redfish",
                Some(&sw),
                Some(&hw_and_sw),
                vec![],
            ),
            (
                "empty software list ignores hardware",
                "redfish",
                Some(&hw_and_sw_empty),
                Some(&hw),
                vec![],
            ),
            // A hardware-only target ignores recorded software volumes.
            (
                "hardware ignores software actual",
                "redfish",
                Some(&hw),
                Some(&hw_and_sw),
                vec![],
            ),
        ];
        for (name, driver, target, actual, expected) in cases {
            let steps = raid_clean_steps(driver, target, actual);
            assert_eq!(names(&steps), expected, "{name}");
        }
    }

    #[test]
    fn clean_steps_are_bare_objects() {
        let steps = raid_clean_steps("agent", Some(&sw_one()), None);
        assert_eq!(
            steps,
            vec![
                json!({"interface": "raid", "step": "delete_configuration"}),
                json!({"interface": "deploy", "step": "erase_devices_metadata"}),
                json!({"interface": "raid", "step": "create_configuration"}),
            ]
        );
    }
}
