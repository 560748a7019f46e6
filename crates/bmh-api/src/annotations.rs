//! Finalizers and annotations BMO defines (`baremetalhost_types.go:34-73`).

/// BMO's `BareMetalHostFinalizer`, put on every host: it holds deletion until the host has been
/// deprovisioned and removed from the provisioner.
pub const HOST_FINALIZER: &str = "baremetalhost.metal3.io";
/// Finalizer BMO puts on the HardwareData it creates after inspection; taken off when the host is
/// deleted or inspected again.
pub const HARDWARE_DATA_FINALIZER: &str = "baremetalhost.metal3.io/hardwareData";
/// Finalizer BMO puts on a host's BMC credentials Secret while the host uses it; taken off when the
/// host is deleted.
pub const SECRET_FINALIZER: &str = "baremetalhost.metal3.io/secret";

/// `PausedAnnotation`: while present (any value), BMO leaves the host alone: no status write, no
/// provisioner call, no requeue.
pub const PAUSED: &str = "baremetalhost.metal3.io/paused";
/// `DetachedAnnotation`: takes the host out of the provisioner's hands while its status is still
/// updated; optional JSON value `{"deleteAction": "delay" | "delete", "force": bool}`.
pub const DETACHED: &str = "baremetalhost.metal3.io/detached";
/// `StatusAnnotation`: a JSON copy of `status`. BMO restores the status from it when the host has
/// no `status.lastUpdated` (e.g. after a move between clusters), and deletes it whenever present.
pub const STATUS: &str = "baremetalhost.metal3.io/status";
/// `RebootAnnotationPrefix`: `reboot.metal3.io` alone asks for one reboot (removed once the host is
/// off); `reboot.metal3.io/<suffix>` keeps the host off until it is removed. Optional JSON value
/// `{"mode": "hard" | "soft", "force": bool}`.
pub const REBOOT_PREFIX: &str = "reboot.metal3.io";
/// `InspectAnnotationPrefix`: value `disabled` turns inspection off (the older form of
/// `spec.inspectionMode: disabled`); any other value on an available host asks for re-inspection.
pub const INSPECT: &str = "inspect.metal3.io";
/// `HardwareDetailsAnnotation`: JSON hardware details BMO copies into `status.hardware` when
/// inspection is disabled or the status has none; deleted once read.
pub const HARDWARE_DETAILS: &str = "inspect.metal3.io/hardwaredetails";
/// `InspectAnnotationValueDisabled`: the [`INSPECT`] value that disables inspection (deprecated in
/// favour of `spec.inspectionMode`).
pub const INSPECT_DISABLED_VALUE: &str = "disabled";

/// Whether `key` is a reboot annotation: exactly `reboot.metal3.io` or `reboot.metal3.io/<suffix>`.
pub fn is_reboot_annotation(key: &str) -> bool {
    key == REBOOT_PREFIX
        || key
            .strip_prefix(REBOOT_PREFIX)
            .is_some_and(|rest| rest.starts_with('/'))
}
