//! Boot mode → `properties.capabilities` and `instance_info.capabilities` (spec 6.2).

use bmh_api::BootMode;
use serde_json::Value;

/// Merge the boot-mode fragment into the node's existing `properties.capabilities` value.
pub fn merge_boot_mode_capabilities(existing: Option<&Value>, mode: &BootMode) -> String {
    let _ = (existing, mode);
    todo!()
}

/// `instance_info.capabilities` for a boot mode.
pub fn instance_capabilities(mode: &BootMode) -> Value {
    let _ = mode;
    todo!()
}
