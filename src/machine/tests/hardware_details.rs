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

/// BMO's `getHardwareDetailsFromAnnotation` decodes with `DisallowUnknownFields`: an unknown key
/// is an error even when its value is empty, at any depth.
#[test]
fn every_unknown_key_of_the_annotation_is_refused() {
    for (text, field) in [
        (r#"{"hostname": "a", "bogus": null}"#, "bogus"),
        (r#"{"bogus": ""}"#, "bogus"),
        (r#"{"cpu": {"arch": "x86_64", "speed": 0}}"#, "speed"),
        (r#"{"nics": [{"mac": "aa", "extra": []}]}"#, "extra"),
    ] {
        let mut t = HostTest::standard("host-0")
            .spec(|s| s.inspection_mode = InspectionMode::Disabled)
            .annotate(annotations::HARDWARE_DETAILS, text);
        let o = t.pass();
        let err = o.error.unwrap_or_else(|| panic!("{text} was accepted"));
        assert!(
            err.ends_with(&format!("json: unknown field \"{field}\"")),
            "{text}: {err}"
        );
        assert!(t.rec.host.status.is_none());
    }
}

/// Go's decoder (BMO's `getHardwareDetailsFromAnnotation`) matches a key to its field whatever
/// its case and skips `null`: what it stores is what the status gets.
#[test]
fn keys_in_another_case_and_nulls_are_read_as_go_reads_them() {
    let text = r#"{"HostName": "node-a", "RAMMebibytes": 4096, "cpu": null,
        "storage": [{"name": "sda", "sizeBytes": null, "alternateNames": [null, "/dev/x"]}]}"#;
    let mut t = HostTest::standard("host-0")
        .spec(|s| s.inspection_mode = InspectionMode::Disabled)
        .annotate(annotations::HARDWARE_DETAILS, text);
    let o = t.pass();
    assert!(o.error.is_none(), "{:?}", o.error);
    let hw = t.st().hardware.clone().expect("hardware details set");
    assert_eq!(hw.hostname, "node-a");
    assert_eq!(hw.ram_mebibytes, 4096);
    assert!(hw.cpu.is_none());
    assert_eq!(hw.storage[0].name, "sda");
    assert_eq!(hw.storage[0].alternate_names, ["", "/dev/x"]);
}
