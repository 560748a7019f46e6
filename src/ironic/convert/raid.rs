//! RAID (spec 6.3).

use bmh_api::{RaidConfig, RootDeviceHints};
use serde_json::Value;

/// The RAID interface to use for a target (BMO's `CheckRAIDInterface`), or the error text.
pub fn raid_interface(
    driver_default: &str,
    target: Option<&RaidConfig>,
    actual: Option<&RaidConfig>,
) -> Result<String, String> {
    let _ = (driver_default, target, actual);
    todo!()
}

/// The `logical_disks` of the target RAID config; empty when there is none. Errors are `fail` texts.
pub fn logical_disks(
    target: Option<&RaidConfig>,
    root_device_hints: Option<&RootDeviceHints>,
) -> Result<Vec<Value>, String> {
    let _ = (target, root_device_hints);
    todo!()
}

/// The RAID clean steps (BMO's `BuildRAIDCleanSteps`).
pub fn raid_clean_steps(
    raid_interface: &str,
    target: Option<&RaidConfig>,
    actual: Option<&RaidConfig>,
) -> Vec<Value> {
    let _ = (raid_interface, target, actual);
    todo!()
}
