//! HostFirmwareSettings and HostFirmwareComponents: their status and conditions (BMO's HFS and
//! HFC controllers, run by bmhctl within the host's passes), preparing and servicing with them.

use super::harness::*;
use super::mock::Mock;
use crate::machine::Requeue;
use bmh_api::{Condition, FirmwareUpdate, OperationalStatus, ProvisioningState as S};
use bmhctl_plugin_sdk::{FirmwareSettings, ProvisionerError, SettingSchema};
use serde_json::json;
use std::time::Duration;

const BMC_FW: &str = "http://fw.example/bmc-2.1.0.bin";

fn cond<'a>(conditions: &'a [Condition], type_: &str) -> (&'a str, &'a str, &'a str, i64) {
    let c = conditions
        .iter()
        .find(|c| c.type_ == type_)
        .unwrap_or_else(|| panic!("no {type_} condition in {conditions:?}"));
    (
        c.status.as_str(),
        c.reason.as_str(),
        c.message.as_str(),
        c.observed_generation,
    )
}

/// The reads of the firmware settings (the components are also read by every registration
/// check, as in BMO, so they are not counted).
fn settings_reads(mock: &Mock) -> usize {
    mock.calls()
        .iter()
        .filter(|c| c.starts_with("get_firmware_settings"))
        .count()
}

/// A mock whose BIOS has `A` (enumeration a|x), `B` (integer 0..9) and a password.
fn bios_mock() -> Mock {
    let mock = Mock::new();
    mock.with(|st| {
        st.firmware_settings = FirmwareSettings {
            settings: [
                ("A".to_string(), "a".to_string()),
                ("B".to_string(), "5".to_string()),
                ("BiosPassword".to_string(), "secret".to_string()),
            ]
            .into(),
            schema: [
                (
                    "A".to_string(),
                    SettingSchema {
                        attribute_type: "Enumeration".into(),
                        allowable_values: vec!["a".into(), "x".into()],
                        ..Default::default()
                    },
                ),
                (
                    "B".to_string(),
                    SettingSchema {
                        attribute_type: "Integer".into(),
                        lower_bound: Some(0),
                        upper_bound: Some(9),
                        ..Default::default()
                    },
                ),
            ]
            .into(),
        };
    });
    mock
}

#[test]
fn firmware_status_is_read_once_registered_and_changes_are_applied_while_preparing() {
    let mut t = HostTest::standard("host-0")
        .firmware_settings(json!({"ProcVirtualization": "Disabled", "NetworkBootRetryCount": 7}))
        .firmware_components(json!([{"component": "bmc", "url": BMC_FW}]));
    t.run_to_steady();
    assert_eq!(*t.state(), S::Provisioned);
    // One trip through preparing, which applied the changes.
    assert_eq!(
        t.state_path(),
        [
            S::None,
            S::Registering,
            S::Inspecting,
            S::Preparing,
            S::Available,
            S::Provisioning,
            S::Provisioned
        ]
    );
    let fixture = t.fixture();
    let current = &fixture.host_firmware_settings.settings;
    assert_eq!(current["ProcVirtualization"], "Disabled");
    assert_eq!(current["NetworkBootRetryCount"], "7");

    let hfs = t.hfs();
    assert_eq!(hfs.settings["ProcVirtualization"], "Disabled");
    assert_eq!(hfs.settings["NetworkBootRetryCount"], "7");
    assert!(
        !hfs.settings.contains_key("AdminPassword"),
        "password settings are never in the status"
    );
    let schema = t.rec.book.firmware.schema.clone().expect("schema kept");
    let reference = hfs.firmware_schema.clone().unwrap();
    assert_eq!(reference.name, schema.metadata.name);
    assert_eq!(reference.namespace, NAMESPACE);
    assert!(reference.name.starts_with("schema-"), "{}", reference.name);
    assert!(!schema.spec.schema.contains_key("AdminPassword"));
    assert_eq!(schema.spec.schema["BootMode"].attribute_type, "Enumeration");
    // Read when registration finished, before inspection: no vendor known yet.
    assert_eq!(schema.spec.hardware_vendor, "");
    assert_eq!(cond(&hfs.conditions, "Valid"), ("True", "Success", "", 1));
    assert_eq!(
        cond(&hfs.conditions, "ChangeDetected"),
        ("False", "Success", "", 1)
    );
    assert!(hfs.last_updated.is_some());

    let hfc = t.hfc();
    assert_eq!(
        hfc.updates,
        [FirmwareUpdate {
            component: "bmc".into(),
            url: BMC_FW.into()
        }]
    );
    let bmc = hfc
        .components
        .iter()
        .find(|c| c.component == "bmc")
        .unwrap();
    assert_eq!(bmc.initial_version, "2.0.0");
    assert_eq!(bmc.current_version, "bmc-2.1.0");
    assert_eq!(cond(&hfc.conditions, "Valid"), ("True", "OK", "", 1));
    assert_eq!(
        cond(&hfc.conditions, "ChangeDetected"),
        ("False", "OK", "", 1)
    );
    assert!(!t.rec.book.firmware.refresh_pending);
    assert!(t.log.iter().any(|p| p.outcome.firmware_changed));

    // Steady: no more firmware status changes.
    for _ in 0..3 {
        let o = t.pass();
        assert!(o.steady() && !o.firmware_changed && !o.save_status);
    }
}

#[test]
fn the_provisioner_is_asked_only_when_the_status_is_stale_or_a_change_was_applied() {
    let mock = bios_mock();
    let mut t = HostTest::standard("host-0")
        .firmware_settings(json!({"A": "a"}))
        .firmware_components(json!([]))
        .mock(&mock);
    t.run_to_steady();
    assert_eq!(*t.state(), S::Provisioned);
    // Read once, when registration finished; nothing was to change.
    assert_eq!(settings_reads(&mock), 1);
    assert!(
        mock.calls()
            .contains(&"get_firmware_settings(include_schema=true)".to_string())
    );
    assert!(
        mock.calls()
            .iter()
            .any(|c| c == "prepare(unprepared=false, restart=false)")
    );
    let hfs = t.hfs();
    assert_eq!(
        hfs.settings,
        [
            ("A".to_string(), "a".to_string()),
            ("B".to_string(), "5".to_string())
        ]
        .into()
    );
    assert_eq!(
        cond(&hfs.conditions, "ChangeDetected"),
        ("False", "Success", "", 1)
    );
    let hfc = t.hfc();
    assert!(hfc.updates.is_empty() && hfc.components.is_empty());
    assert_eq!(
        cond(&hfc.conditions, "ChangeDetected"),
        ("False", "OK", "", 1)
    );
    mock.take_calls();
    t.passes(3);
    assert_eq!(settings_reads(&mock), 0);
    // BMO's HFS controller comes back every 5 minutes (`reconcilerRequeueDelay`): within the
    // next four steady passes, a minute apart, the settings are read once again.
    t.passes(4);
    assert_eq!(settings_reads(&mock), 1);

    // A host without firmware objects is never asked for its settings.
    let mock = Mock::new();
    let mut t = HostTest::standard("host-1").mock(&mock);
    t.run_to_steady();
    assert_eq!(settings_reads(&mock), 0);
}

#[test]
fn prepare_gets_the_settings_and_only_the_updates_not_yet_applied() {
    let mock = bios_mock();
    let mut t = HostTest::standard("host-0")
        .firmware_settings(json!({"A": "x", "B": 5}))
        .firmware_components(json!([
            {"component": "bmc", "url": "http://fw/bmc.bin"},
            {"component": "bios", "url": "http://fw/bios.bin"},
        ]))
        .registered_in(S::Available)
        .mock(&mock);
    {
        let hfc = t.rec.firmware_components.as_mut().unwrap();
        hfc.status.get_or_insert_with(Default::default).updates = vec![FirmwareUpdate {
            component: "bmc".into(),
            url: "http://fw/bmc.bin".into(),
        }];
    }
    // Available: the firmware status is computed, and its changes lead to preparing.
    let o = t.pass();
    assert!(o.firmware_changed && o.save_status);
    assert_eq!(*t.state(), S::Preparing);
    assert_eq!(
        cond(&t.hfs().conditions, "ChangeDetected"),
        ("True", "Success", "", 1)
    );
    assert_eq!(
        cond(&t.hfs().conditions, "Valid"),
        ("True", "Success", "", 1)
    );
    assert_eq!(
        cond(&t.hfc().conditions, "ChangeDetected"),
        ("True", "OK", "", 1)
    );
    // Preparing hands both over.
    t.pass();
    let calls = mock.calls();
    assert!(
        calls.contains(&"prepare(unprepared=true, restart=false)".to_string()),
        "{calls:?}"
    );
    let data = mock.0.lock().unwrap().prepared.last().unwrap().clone();
    assert_eq!(
        data.target_firmware_settings,
        [("A".to_string(), json!("x")), ("B".to_string(), json!(5))].into()
    );
    assert_eq!(
        data.actual_firmware_settings,
        [
            ("A".to_string(), "a".to_string()),
            ("B".to_string(), "5".to_string())
        ]
        .into()
    );
    assert_eq!(
        data.target_firmware_components,
        [bmhctl_plugin_sdk::FirmwareUpdate {
            component: "bios".into(),
            url: "http://fw/bios.bin".into()
        }]
    );
    // Started: the spec's updates are recorded, and the firmware is read again next pass.
    assert_eq!(t.hfc().updates.len(), 2);
    assert!(t.rec.book.firmware.refresh_pending);
    assert_eq!(*t.state(), S::Available);
    mock.take_calls();
    t.pass();
    assert_eq!(settings_reads(&mock), 1);
    assert!(!t.rec.book.firmware.refresh_pending);
    assert_eq!(
        cond(&t.hfc().conditions, "ChangeDetected"),
        ("False", "OK", "", 1)
    );
}

#[test]
fn invalid_settings_and_components_are_reported_and_never_applied() {
    let mut t = HostTest::standard("host-0")
        .firmware_settings(json!({
            "ProcVirtualization": "Maybe",
            "SerialNumber": "X",
            "Nope": "1",
            "AdminPassword": "x",
        }))
        .firmware_components(json!([{"component": "raid", "url": "http://fw/raid.bin"}]));
    t.run_to_steady();
    assert_eq!(*t.state(), S::Provisioned);
    let hfs = t.hfs();
    assert_eq!(
        cond(&hfs.conditions, "Valid"),
        ("False", "ConfigurationError", "Invalid BIOS setting", 1)
    );
    assert_eq!(
        cond(&hfs.conditions, "ChangeDetected"),
        ("True", "Success", "", 1)
    );
    let hfc = t.hfc();
    let message = "Invalid Firmware Components: component raid is invalid, only 'bmc', 'bios', or names starting with 'nic:' are allowed as update names";
    assert_eq!(
        cond(&hfc.conditions, "Valid"),
        ("False", "InvalidComponent", message, 1)
    );
    let failures: Vec<String> = t
        .all_events()
        .into_iter()
        .filter(|e| e.reason == "ValidationFailed")
        .map(|e| e.message)
        .collect();
    assert_eq!(
        failures,
        [
            "Invalid BIOS setting: cannot set Password field",
            "Invalid BIOS setting: setting Nope is not in the Status field",
            "Invalid BIOS setting: Setting ProcVirtualization is invalid, unknown enumeration value - Maybe",
            "Invalid BIOS setting: Setting SerialNumber is invalid, it is ReadOnly",
            message,
        ]
    );
    // Nothing was applied.
    assert_eq!(
        *t.fixture().host_firmware_settings,
        crate::provisioners::fixture::canned_firmware_settings()
    );
    assert!(hfc.updates.is_empty());
}

#[test]
fn a_spec_change_on_an_available_host_goes_through_preparing_once() {
    let mut t = HostTest::new("host-0")
        .bmc(BMC, SECRET)
        .secret(SECRET, "admin", "password")
        .firmware_settings(json!({}));
    t.run_to_steady();
    assert_eq!(*t.state(), S::Available);
    let before = t.log.len();
    assert_eq!(
        cond(&t.hfs().conditions, "ChangeDetected"),
        ("False", "Success", "", 1)
    );

    t.edit_firmware_settings(|hfs| {
        hfs.spec.settings.insert(
            "SriovGlobalEnable".into(),
            bmh_api::IntOrString::String("Enabled".into()),
        );
    });
    t.run_to_steady();
    let path: Vec<S> = t.log[before..]
        .iter()
        .map(|p| p.end_state.clone())
        .collect();
    assert_eq!(
        path.iter().filter(|s| **s == S::Preparing).count(),
        1,
        "{path:?}"
    );
    assert_eq!(*t.state(), S::Available);
    assert_eq!(
        t.fixture().host_firmware_settings.settings["SriovGlobalEnable"],
        "Enabled"
    );
    let hfs = t.hfs();
    assert_eq!(hfs.settings["SriovGlobalEnable"], "Enabled");
    assert_eq!(
        cond(&hfs.conditions, "ChangeDetected"),
        ("False", "Success", "", 2)
    );
    assert_eq!(cond(&hfs.conditions, "Valid"), ("True", "Success", "", 2));
}

#[test]
fn a_stale_status_the_provisioner_cannot_refresh_blocks_as_in_bmo() {
    let mock = bios_mock();
    let mut t = HostTest::new("host-0")
        .bmc(BMC, SECRET)
        .secret(SECRET, "admin", "password")
        .firmware_settings(json!({"A": "a"}))
        .registered_in(S::Available)
        .mock(&mock);
    t.pass();
    assert_eq!(
        cond(&t.hfs().conditions, "ChangeDetected"),
        ("False", "Success", "", 1)
    );
    mock.with(|st| st.firmware_error = Some(ProvisionerError::Other("BIOS unreachable".into())));
    t.edit_firmware_settings(|hfs| {
        hfs.spec
            .settings
            .insert("A".into(), bmh_api::IntOrString::String("x".into()));
    });
    // Available: an error naming the generations.
    let o = t.pass();
    assert_eq!(
        o.error.as_deref(),
        Some(
            "action \"available\" failed: hostFirmwareSettings not ready yet: generation 2 != observed generation 1"
        )
    );
    // Once the provisioner answers again, the change is applied.
    mock.with(|st| st.firmware_error = None);
    t.pass();
    assert_eq!(*t.state(), S::Preparing);
    assert_eq!(
        cond(&t.hfs().conditions, "ChangeDetected"),
        ("True", "Success", "", 2)
    );

    // Preparing with a stale status waits a minute.
    mock.with(|st| st.firmware_error = Some(ProvisionerError::Other("gone".into())));
    t.edit_firmware_settings(|hfs| {
        hfs.spec
            .settings
            .insert("B".into(), bmh_api::IntOrString::Int(3));
    });
    let o = t.pass();
    assert_eq!(o.requeue, Requeue::After(Duration::from_secs(60)));
    assert!(!o.save_status && o.error.is_none());
    assert_eq!(*t.state(), S::Preparing);
}

#[test]
fn a_provisioned_host_is_serviced_before_power_on_when_its_policy_allows() {
    let mut t = HostTest::standard("host-0")
        .firmware_settings(json!({}))
        .firmware_components(json!([]))
        .update_policy("onReboot", "onReboot");
    t.run_to_steady();
    assert_eq!(*t.state(), S::Provisioned);
    assert!(t.st().powered_on);

    // The user asks for changes and a power cycle: off, then on again.
    t.edit_firmware_settings(|hfs| {
        hfs.spec.settings.insert(
            "LogicalProc".into(),
            bmh_api::IntOrString::String("Disabled".into()),
        );
    });
    t.edit_firmware_components(|hfc| {
        hfc.spec.updates = vec![FirmwareUpdate {
            component: "bmc".into(),
            url: BMC_FW.into(),
        }];
    });
    t.edit_spec(|s| s.online = false);
    t.run_to_steady();
    assert!(!t.st().powered_on);
    assert_eq!(t.st().operational_status, OperationalStatus::Ok);
    // Powered off, nothing applied yet.
    assert_eq!(
        t.fixture().host_firmware_settings.settings["LogicalProc"],
        "Enabled"
    );
    let before = t.log.len();
    t.edit_spec(|s| s.online = true);
    t.run_to_steady();
    assert!(t.st().powered_on);
    assert_eq!(t.st().operational_status, OperationalStatus::Ok);
    assert_eq!(
        t.fixture().host_firmware_settings.settings["LogicalProc"],
        "Disabled"
    );
    let hfs = t.hfs();
    assert_eq!(hfs.settings["LogicalProc"], "Disabled");
    assert_eq!(
        cond(&hfs.conditions, "ChangeDetected"),
        ("False", "Success", "", 2)
    );
    let hfc = t.hfc();
    assert_eq!(hfc.updates.len(), 1);
    assert_eq!(
        hfc.components
            .iter()
            .find(|c| c.component == "bmc")
            .unwrap()
            .current_version,
        "bmc-2.1.0"
    );
    assert_eq!(
        cond(&hfc.conditions, "ChangeDetected"),
        ("False", "OK", "", 2)
    );
    // Servicing never leaves the provisioned state.
    assert!(
        t.log[before..]
            .iter()
            .all(|p| p.end_state == S::Provisioned)
    );
}

#[test]
fn servicing_goes_through_the_servicing_status_and_tells_the_provisioner_what_to_apply() {
    let mock = bios_mock();
    let mut t = HostTest::standard("host-0")
        .firmware_settings(json!({"A": "x"}))
        .firmware_components(json!([{"component": "bmc", "url": BMC_FW}]))
        .update_policy("onReboot", "onPreparing")
        .provisioned()
        .mock(&mock);
    t.rec.host.status.as_mut().unwrap().powered_on = false;
    mock.with(|st| st.powered_on = Some(false));
    // Adopt, then the power check finds a change to apply: servicing, saved, no call yet.
    let o = t.pass();
    assert!(o.save_status && o.firmware_changed);
    assert_eq!(t.st().operational_status, OperationalStatus::Servicing);
    assert!(!mock.called("service"));
    let (status, reason) = {
        let c = t
            .st()
            .conditions
            .iter()
            .find(|c| c.type_ == "Ready")
            .unwrap();
        (c.status.clone(), c.reason.clone())
    };
    assert_eq!((status.as_str(), reason.as_str()), ("False", "Servicing"));
    // Then the provisioner gets the settings (updates are not allowed by the policy).
    t.pass();
    let data = mock.0.lock().unwrap().serviced.last().unwrap().clone();
    assert!(data.has_firmware_spec);
    assert_eq!(
        data.target_firmware_settings,
        [("A".to_string(), json!("x"))].into()
    );
    assert!(data.target_firmware_components.is_empty());
    assert!(t.hfc().updates.is_empty(), "updates are not live here");
    assert!(t.rec.book.firmware.refresh_pending);
}

#[test]
fn without_a_policy_a_provisioned_host_is_not_serviced() {
    let mock = bios_mock();
    let mut t = HostTest::standard("host-0")
        .firmware_settings(json!({"A": "x"}))
        .provisioned()
        .mock(&mock);
    t.rec.host.status.as_mut().unwrap().powered_on = false;
    mock.with(|st| st.powered_on = Some(false));
    t.run_to_steady();
    assert!(!mock.called("service"));
    assert!(t.st().powered_on);
    assert_eq!(
        cond(&t.hfs().conditions, "ChangeDetected"),
        ("True", "Success", "", 1)
    );
}
