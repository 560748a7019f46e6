//! BIOS and firmware clean/service steps (spec 6.4, 6.5).

use bmhctl_plugin_sdk::{ActualSettings, DesiredSettings, FirmwareUpdate};
use serde_json::Value;

/// `bios.apply_configuration` for every desired setting differing from the actual one; `None`
/// when nothing differs or the actual settings are unknown (empty).
pub fn bios_step(target: &DesiredSettings, actual: &ActualSettings) -> Option<Value> {
    let _ = (target, actual);
    todo!()
}

/// `firmware.update` for the pending component updates; `None` when there are none.
pub fn firmware_step(updates: &[FirmwareUpdate]) -> Option<Value> {
    let _ = updates;
    todo!()
}
