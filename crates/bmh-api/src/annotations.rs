//! Finalizers and annotations BMO defines (`baremetalhost_types.go:34-73`).

/// BMO's `BareMetalHostFinalizer`: holds deletion until the host is deprovisioned and removed.
pub const HOST_FINALIZER: &str = "baremetalhost.metal3.io";
/// Finalizer BMO puts on the HardwareData it creates after inspection.
pub const HARDWARE_DATA_FINALIZER: &str = "baremetalhost.metal3.io/hardwareData";

/// `PausedAnnotation`: while present, BMO leaves the host alone entirely.
pub const PAUSED: &str = "baremetalhost.metal3.io/paused";
/// `DetachedAnnotation`: value `{"deleteAction": "delay" | "delete", "force": bool}`, optional.
pub const DETACHED: &str = "baremetalhost.metal3.io/detached";
/// `StatusAnnotation`: a JSON copy of `status`, restored when the host has no `lastUpdated`.
pub const STATUS: &str = "baremetalhost.metal3.io/status";
/// `RebootAnnotationPrefix`: alone, one reboot; with `/<suffix>`, off until removed.
pub const REBOOT_PREFIX: &str = "reboot.metal3.io";
/// `InspectAnnotationPrefix`: `disabled` turns inspection off; other values ask to re-inspect.
pub const INSPECT: &str = "inspect.metal3.io";
/// `HardwareDetailsAnnotation`: JSON hardware details BMO copies into `status.hardware`.
pub const HARDWARE_DETAILS: &str = "inspect.metal3.io/hardwaredetails";
/// `InspectAnnotationValueDisabled`: the [`INSPECT`] value that disables inspection.
pub const INSPECT_DISABLED_VALUE: &str = "disabled";

/// Whether `key` is a reboot annotation: exactly `reboot.metal3.io` or `reboot.metal3.io/<suffix>`.
pub fn is_reboot_annotation(key: &str) -> bool {
    key == REBOOT_PREFIX
        || key
            .strip_prefix(REBOOT_PREFIX)
            .is_some_and(|rest| rest.starts_with('/'))
}
