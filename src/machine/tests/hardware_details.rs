//! The hardware-details annotation as BMO's `updateHardwareDetails` reads it.

use super::harness::*;
use bmh_api::{InspectionMode, ProvisioningState as S, annotations};

/// BMO's `getHardwareDetailsFromAnnotation` treats an empty value as no annotation; the
/// annotation is then removed with the "ignored" event, and the host goes on.
#[test]
fn an_empty_hardware_details_annotation_is_ignored_and_removed() {
    let mut t = HostTest::standard("host-0")
        .spec(|s| s.inspection_mode = InspectionMode::Disabled)
        .annotate(annotations::HARDWARE_DETAILS, "");
    let o = t.pass();
    assert!(o.error.is_none(), "{:?}", o.error);
    assert!(!t.has_annotation(annotations::HARDWARE_DETAILS));
    assert_eq!(o.events[0].reason, "RemoveAnnotation");
    t.run_to_steady();
    assert_eq!(*t.state(), S::Provisioned);
}

/// BMO's `updateHardwareDetails` event names both sources it reads.
#[test]
fn setting_hardware_details_publishes_bmos_event_text() {
    let mut t = HostTest::standard("host-0")
        .spec(|s| s.inspection_mode = InspectionMode::Disabled)
        .annotate(annotations::HARDWARE_DETAILS, r#"{"hostname": "node-a"}"#);
    let o = t.pass();
    assert_eq!(o.events[0].reason, "UpdateHardwareDetails");
    assert_eq!(
        o.events[0].message,
        "Set HardwareDetails from hardware data or annotation"
    );
}
