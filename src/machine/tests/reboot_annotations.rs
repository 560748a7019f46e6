//! Reboot annotations that do not parse (BMO's `getRebootAnnotationArguments`).

use super::harness::*;
use super::mock::Mock;
use bmh_api::{ProvisioningState as S, annotations};

const BAD: &str = "{not json";

fn invalid_value_events(o: &crate::machine::PassOutcome) -> Vec<String> {
    o.events
        .iter()
        .filter(|e| e.reason == "InvalidAnnotationValue")
        .map(|e| e.message.clone())
        .collect()
}

/// The event quotes the value, in BMO's words.
#[test]
fn an_unparsable_reboot_annotation_is_reported_with_its_value() {
    let mock = Mock::new();
    mock.with(|m| m.powered_on = Some(true));
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .provisioned()
        .annotate(annotations::REBOOT_PREFIX, BAD);
    let o = t.pass();
    assert_eq!(
        invalid_value_events(&o),
        ["could not parse reboot annotation ({not json) - invalid json, assuming soft-reboot"]
    );
}

/// BMO's provisioning pass asks `hasRebootAnnotation(info, true)` whether a reboot is forced,
/// which reports an unparsable value too.
#[test]
fn the_force_check_while_provisioning_reports_it_too() {
    let mock = Mock::new();
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .registered_in(S::Provisioning)
        .annotate("reboot.metal3.io/by-me", BAD);
    let o = t.pass();
    assert_eq!(invalid_value_events(&o).len(), 1, "{:?}", o.events);
}
