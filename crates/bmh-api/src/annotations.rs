//! Finalizers and annotations BMO defines (`baremetalhost_types.go:34-73`).

pub const HOST_FINALIZER: &str = "baremetalhost.metal3.io";
pub const HARDWARE_DATA_FINALIZER: &str = "baremetalhost.metal3.io/hardwareData";
pub const SECRET_FINALIZER: &str = "baremetalhost.metal3.io/secret";

pub const PAUSED: &str = "baremetalhost.metal3.io/paused";
pub const DETACHED: &str = "baremetalhost.metal3.io/detached";
pub const STATUS: &str = "baremetalhost.metal3.io/status";
pub const REBOOT_PREFIX: &str = "reboot.metal3.io";
pub const INSPECT: &str = "inspect.metal3.io";
pub const HARDWARE_DETAILS: &str = "inspect.metal3.io/hardwaredetails";
pub const INSPECT_DISABLED_VALUE: &str = "disabled";

/// Whether `key` is a reboot annotation: exactly `reboot.metal3.io` or `reboot.metal3.io/<suffix>`.
pub fn is_reboot_annotation(key: &str) -> bool {
    key == REBOOT_PREFIX
        || key
            .strip_prefix(REBOOT_PREFIX)
            .is_some_and(|rest| rest.starts_with('/'))
}
