//! Unit tests of the state machine: one test per behaviour of section 14 of
//! `bmo-state-machine.md` (1–39; 40 is the plugin loader, tested elsewhere), the golden traces of
//! section 10, and golden status snapshots.
//!
//! Unless a test says otherwise the provisioner is the fixture, with its state kept per host in
//! the record (`book.provisioner_state`) as bmhctl does. Behaviours the fixture can't produce use
//! the scriptable [`mock::Mock`].

mod config_data;
mod current_image;
mod data_image;
mod firmware;
mod hardware_details;
pub(crate) mod harness;
mod image_pull_secret;
pub(crate) mod mock;
mod raid;
mod reboot_annotations;
mod shared_values;

use super::{Requeue, backoff, delays};
use bmh_api::{
    BootMode, ErrorType, InspectionMode, OperationalStatus, ProvisioningState as S, annotations,
};
use bmhctl_plugin_sdk::{HardwareState, OpResult, ProvisionerError};
use harness::*;
use mock::Mock;
use serde_json::json;
use std::time::Duration;

const MINUTE: f64 = 60.0;

fn in_backoff_window(o: &super::PassOutcome, n: i32) -> bool {
    let d = after(o).as_secs_f64();
    let lo = 2f64.powi(n.min(9) - 1) * MINUTE;
    let hi = 2f64.powi(n.min(9)) * MINUTE;
    d > lo && d <= hi
}

fn condition<'a>(t: &'a HostTest, type_: &str) -> (&'a str, &'a str) {
    let c = t
        .st()
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
        .unwrap_or_else(|| panic!("no {type_} condition in {:?}", t.st().conditions));
    (c.status.as_str(), c.reason.as_str())
}

// ===== 1-9: finalizer, unmanaged, credentials, registration ===================================

/// Behaviour 1.
#[test]
fn first_pass_only_adds_the_finalizer() {
    let mut t = HostTest::standard("host-0");
    let o = t.pass();
    assert_eq!(o.requeue, NOW);
    assert!(!o.save_status);
    assert!(o.bookkeeping_changed);
    assert!(o.events.is_empty());
    assert_eq!(t.rec.book.finalizers, vec![annotations::HOST_FINALIZER]);
    assert!(t.rec.host.status.is_none(), "status must not be written");
}

/// Behaviour 2.
#[test]
fn host_without_bmc_details_becomes_unmanaged_and_polls_every_ten_minutes() {
    let mut t = HostTest::new("host-0");
    t.passes(2);
    assert_eq!(*t.state(), S::Unmanaged);
    assert!(t.last().saved);
    assert_eq!(t.st().operational_status, OperationalStatus::Discovered);
    assert_eq!(t.st().error_type, ErrorType::None);
    assert_eq!(t.event_reasons(), vec!["Discovered"]);
    for _ in 0..3 {
        let o = t.pass();
        assert_eq!(o.requeue, Requeue::After(Duration::from_secs(600)));
        assert!(o.steady() && !o.save_status);
        assert_eq!(*t.state(), S::Unmanaged);
    }
    // Adding BMC details moves it on.
    t.edit_spec(|s| {
        s.bmc = Some(bmh_api::BmcDetails {
            address: BMC.into(),
            credentials_name: SECRET.into(),
            ..Default::default()
        })
    });
    t.set_secret(SECRET, "admin", "password");
    let o = t.pass();
    assert!(o.save_status);
    assert_eq!(*t.state(), S::Registering);
}

/// Behaviour 3.
#[test]
fn host_with_only_a_bmc_address_fails_registration_without_requeue() {
    let mut t = HostTest::new("host-0").bmc(BMC, "");
    t.passes(2);
    assert_eq!(*t.state(), S::Registering);
    let o = t.pass();
    assert_eq!(o.requeue, Requeue::Never);
    assert!(o.save_status);
    assert_eq!(*t.state(), S::Registering);
    assert_eq!(t.st().operational_status, OperationalStatus::Error);
    assert_eq!(t.st().error_type, ErrorType::RegistrationError);
    assert_eq!(
        t.st().error_message,
        "No BMC CredentialsName defined The BMC secret reference is empty"
    );
    assert_eq!(o.events[0].reason, "BMCCredentialError");
}

/// Behaviour 4.
#[test]
fn missing_secret_requeues_after_ten_seconds_and_counts_errors() {
    let mut t = HostTest::new("host-0").bmc(BMC, "nope").online(true);
    t.passes(2);
    for n in 1..=4 {
        let o = t.pass();
        assert_eq!(o.requeue, secs(10), "exactly 10 s, no backoff");
        assert!(o.save_status);
        assert_eq!(t.st().error_count, n);
        assert_eq!(t.st().operational_status, OperationalStatus::Error);
        assert_eq!(t.st().error_type, ErrorType::RegistrationError);
        assert_eq!(
            t.st().error_message,
            "BMC CredentialsName secret doesn't exist The BMC secret default/nope does not exist"
        );
        assert_eq!(
            o.events
                .iter()
                .map(|e| e.reason.as_str())
                .collect::<Vec<_>>(),
            vec!["BMCCredentialError"]
        );
    }
    assert_eq!(*t.state(), S::Registering);
}

/// Behaviour 5.
#[test]
fn empty_username_is_a_validation_error_until_the_secret_is_fixed() {
    let mut t = HostTest::standard("host-0").secret(SECRET, " \n\t", "password");
    t.passes(2);
    let o = t.pass();
    assert_eq!(o.requeue, Requeue::Never);
    assert_eq!(
        t.st().error_message,
        "Validation error with BMC credentials: Missing BMC connection detail 'username' in credentials"
    );
    assert_eq!(t.st().error_type, ErrorType::RegistrationError);
    // An empty password has its own message.
    t.set_secret(SECRET, "admin", "  ");
    t.pass();
    assert_eq!(
        t.st().error_message,
        "Validation error with BMC credentials: Missing BMC connection details 'password' in credentials"
    );
    // Fixing the secret resumes registration: the fixture hands out its ID.
    t.set_secret(SECRET, "admin", "password");
    let o = t.pass();
    assert_eq!(o.requeue, secs(5));
    assert_eq!(t.st().provisioning.id, "temporary-fake-id");
    assert_eq!(t.st().operational_status, OperationalStatus::Ok);
    assert_eq!(t.st().error_type, ErrorType::None);
    assert_eq!(t.st().error_message, "");
}

/// Behaviour 6.
#[test]
fn credentials_are_trimmed_before_use() {
    let mock = Mock::new();
    let mut t = HostTest::standard("host-0")
        .secret(SECRET, "  admin\n", "\tsecret pw \r\n")
        .mock(&mock);
    t.passes(3);
    assert_eq!(*t.state(), S::Registering);
    let created = mock.created();
    let creds = &created.last().unwrap().bmc_credentials;
    assert_eq!(creds.username, "admin");
    assert_eq!(creds.password, "secret pw");
    assert_eq!(created.last().unwrap().bmc_address, BMC);
}

/// Behaviour 7.
#[test]
fn entering_registering_stores_the_boot_mode() {
    let mut t = HostTest::standard("host-0");
    t.passes(2);
    assert_eq!(*t.state(), S::Registering);
    assert_eq!(t.st().provisioning.boot_mode, BootMode::Uefi);

    let mut t = HostTest::standard("host-1").spec(|s| s.boot_mode = BootMode::Legacy);
    t.passes(2);
    assert_eq!(*t.state(), S::Registering);
    assert_eq!(t.st().provisioning.boot_mode, BootMode::Legacy);
}

/// Behaviour 8.
#[test]
fn fixture_registration_takes_three_passes_and_records_credentials() {
    let mut t = HostTest::standard("host-0");
    t.passes(2);
    assert_eq!(*t.state(), S::Registering);
    let o = t.pass();
    assert_eq!(o.requeue, secs(5));
    assert!(o.save_status);
    assert_eq!(t.st().provisioning.id, "temporary-fake-id");
    assert_eq!(t.st().operational_status, OperationalStatus::Ok);
    assert_eq!(t.st().tried_credentials, t.credentials_status());
    assert!(o.events.iter().any(|e| e.reason == "Registered"));

    let o = t.pass();
    assert_eq!(o.requeue, NOW);
    assert_eq!(t.st().hardware_profile, "unknown");
    assert_eq!(
        t.st()
            .provisioning
            .root_device_hints
            .as_ref()
            .unwrap()
            .device_name,
        "/dev/sda"
    );
    assert!(o.events.iter().any(|e| e.reason == "ProfileSet"));
    assert_eq!(*t.state(), S::Registering);

    let o = t.pass();
    assert!(o.events.iter().any(|e| e.reason == "BMCAccessValidated"));
    assert_eq!(*t.state(), S::Inspecting);
    let creds = t.credentials_status();
    assert!(!creds.credentials_version.is_empty());
    assert_eq!(creds.credentials.as_ref().unwrap().name, SECRET);
    assert_eq!(creds.credentials.as_ref().unwrap().namespace, "default");
    assert_eq!(t.st().good_credentials, creds);
    assert_eq!(t.st().tried_credentials, creds);
}

/// Behaviour 9.
#[test]
fn registering_moves_to_externally_provisioned_preparing_or_inspecting_and_resets_error_count() {
    type Case = (&'static str, fn(HostTest) -> HostTest, S);
    let cases: Vec<Case> = vec![
        (
            "externally provisioned",
            |t| t.spec(|s| s.externally_provisioned = true),
            S::ExternallyProvisioned,
        ),
        (
            "inspectionMode disabled",
            |t| t.spec(|s| s.inspection_mode = InspectionMode::Disabled),
            S::Preparing,
        ),
        (
            "inspect annotation disabled",
            |t| t.annotate(annotations::INSPECT, "disabled"),
            S::Preparing,
        ),
        ("default", |t| t, S::Inspecting),
    ];
    for (name, setup, want) in cases {
        let mut t = setup(
            HostTest::standard("host-0")
                .registered_in(S::Registering)
                .status(|st| st.error_count = 3),
        );
        let o = t.pass();
        assert!(o.save_status, "{name}");
        assert_eq!(*t.state(), want, "{name}");
        assert_eq!(t.st().error_count, 0, "{name}");
    }
}

// ===== 10-13: capacity, inspection, annotations ================================================

/// Behaviour 10.
#[test]
fn no_capacity_delays_the_transition_until_capacity_returns() {
    let mock = Mock::new();
    mock.with(|m| m.script.has_capacity.push_back(Ok(false)));
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .registered_in(S::Registering);
    // Registration is complete: the handler wants `inspecting`, which needs capacity.
    let o = t.pass();
    assert_eq!(*t.state(), S::Registering, "state unchanged");
    assert_eq!(t.st().operational_status, OperationalStatus::Delayed);
    assert!(o.save_status);
    let d = after(&o).as_secs_f64();
    assert!(d > 60.0 && d <= 120.0, "delay {d} not in (60 s, 120 s]");
    // Capacity is back: the next pass only clears `delayed`.
    let o = t.pass();
    assert_eq!(o.requeue, NOW);
    assert!(o.save_status);
    assert_eq!(*t.state(), S::Registering);
    assert_eq!(t.st().operational_status, OperationalStatus::Ok);
    // ... and the one after performs the transition.
    t.pass();
    assert_eq!(*t.state(), S::Inspecting);
}

/// Behaviour 10 (the re-check on every pass in inspecting/provisioning/deprovisioning, table row pre2).
#[test]
fn no_capacity_keeps_a_provisioning_host_delayed() {
    let mock = Mock::new();
    mock.with(|m| {
        m.script.has_capacity.extend([Ok(false), Ok(false)]);
    });
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .registered_in(S::Provisioning);
    for _ in 0..2 {
        let o = t.pass();
        assert_eq!(*t.state(), S::Provisioning);
        assert_eq!(t.st().operational_status, OperationalStatus::Delayed);
        assert!(o.save_status);
        assert!(in_backoff_window(&o, 1));
    }
    assert!(!mock.called("provision"), "{:?}", mock.calls());
    t.pass();
    assert_eq!(t.st().operational_status, OperationalStatus::Ok);
    assert!(!mock.called("provision"));
    t.pass();
    assert!(mock.called("provision"));
}

/// Behaviour 11.
#[test]
fn fixture_inspection_stores_canned_hardware_and_hardware_data() {
    let mut t = HostTest::standard("host-0");
    t.run_until_state(S::Inspecting);
    let o = t.pass();
    assert_eq!(o.requeue, secs(2));
    assert!(!o.save_status);
    assert!(t.st().hardware.is_none());
    let o = t.pass();
    assert!(o.save_status);
    assert_eq!(o.requeue, NOW);
    assert_eq!(*t.state(), S::Preparing);
    let hw = t.st().hardware.as_ref().expect("hardware");
    assert_eq!(hw.nics.len(), 2);
    assert_eq!(hw.storage.len(), 2);
    assert_eq!(hw.cpu.as_ref().unwrap().arch, "x86_64");
    let hd = t.rec.book.hardware_data.as_ref().expect("HardwareData");
    assert_eq!(
        hd.metadata.finalizers,
        vec![annotations::HARDWARE_DATA_FINALIZER]
    );
    assert_eq!(hd.spec.hardware.as_ref(), Some(hw));
    assert!(t.rec.book.architecture.is_empty());
    // The next pass copies the architecture (a meta update: no status save).
    let o = t.pass();
    assert!(!o.save_status);
    assert!(o.bookkeeping_changed);
    assert_eq!(o.requeue, NOW);
    assert_eq!(t.rec.architecture(), "x86_64");
    assert_eq!(*t.state(), S::Preparing);
}

/// Behaviour 12.
#[test]
fn hardware_details_annotation_is_consumed_when_inspection_is_disabled() {
    let details = json!({
        "ramMebibytes": 4096,
        "cpu": {"arch": "aarch64", "model": "Arm", "count": 8},
        "hostname": "node-a"
    });
    let mut t = HostTest::standard("host-0")
        .spec(|s| s.inspection_mode = InspectionMode::Disabled)
        .annotate(annotations::HARDWARE_DETAILS, &details.to_string());
    let o = t.pass();
    assert!(o.save_status);
    assert_eq!(o.requeue, NOW);
    assert_eq!(o.removed_annotations, vec![annotations::HARDWARE_DETAILS]);
    assert!(!t.has_annotation(annotations::HARDWARE_DETAILS));
    assert_eq!(o.events[0].reason, "UpdateHardwareDetails");
    let hw = t.st().hardware.as_ref().unwrap();
    assert_eq!(hw.ram_mebibytes, 4096);
    assert_eq!(hw.cpu.as_ref().unwrap().arch, "aarch64");
    assert_eq!(hw.hostname, "node-a");
}

/// Behaviour 12 (invalid JSON, and strict decoding).
#[test]
fn invalid_hardware_details_annotation_fails_the_pass() {
    for bad in ["{not json", r#"{"ramMebibytes": 1, "bogus": 2}"#] {
        let mut t = HostTest::standard("host-0")
            .spec(|s| s.inspection_mode = InspectionMode::Disabled)
            .annotate(annotations::HARDWARE_DETAILS, bad);
        let o = t.pass();
        assert_eq!(o.requeue, Requeue::ErrorBackoff);
        assert!(!o.save_status);
        let err = o.error.unwrap();
        assert!(
            err.starts_with(
                "could not update hardware details: error parsing HardwareDetails from annotation: "
            ),
            "{err}"
        );
        assert!(t.rec.host.status.is_none());
        assert!(o.events.is_empty());
    }
}

/// Behaviour 13.
#[test]
fn status_annotation_restores_an_empty_status_then_is_deleted() {
    let saved = json!({
        "operationalStatus": "OK",
        "provisioning": {"state": "provisioned", "ID": "node-1", "image": {"url": IMAGE_URL}},
        "poweredOn": true,
        "errorCount": 0,
        "errorMessage": "",
        "provisioningFailCount": 0
    });
    let mut t = HostTest::standard("host-0").annotate(annotations::STATUS, &saved.to_string());
    let o = t.pass();
    assert!(o.save_status);
    assert_eq!(o.requeue, NOW);
    assert_eq!(*t.state(), S::Provisioned);
    assert_eq!(t.st().provisioning.id, "node-1");
    assert!(t.st().powered_on);
    assert_eq!(t.st().last_updated.as_deref(), Some("2026-01-01T00:00:00Z"));
    assert!(
        t.has_annotation(annotations::STATUS),
        "deleted in the next pass"
    );
    let o = t.pass();
    assert!(!o.save_status);
    assert_eq!(o.requeue, NOW);
    assert_eq!(o.removed_annotations, vec![annotations::STATUS]);
    assert!(!t.has_annotation(annotations::STATUS));
    assert_eq!(*t.state(), S::Provisioned);
}

// ===== 14-19: available, provisioning, reprovisioning ==========================================

/// Behaviour 14.
#[test]
fn available_host_offline_with_image_stays_available_and_off() {
    let mut t = HostTest::standard("host-0")
        .online(false)
        .fixture_state(json!({"poweredOn": true}));
    t.run_until_state(S::Available);
    t.run_to_steady();
    assert_eq!(*t.state(), S::Available);
    assert!(!t.st().powered_on);
    assert_eq!(t.fixture().powered_on, Some(false));
    assert!(t.event_reasons().contains(&"PowerOff".to_string()));
    assert!(!t.log.iter().any(|p| p.end_state == S::Provisioning));
    // It stays there.
    for _ in 0..3 {
        let o = t.pass();
        assert!(o.steady());
        assert_eq!(o.requeue, secs(60));
        assert_eq!(*t.state(), S::Available);
    }
}

/// Behaviour 14 (online: true).
#[test]
fn available_host_online_with_image_starts_provisioning_in_one_pass() {
    let mut t = HostTest::standard("host-0");
    t.run_until_state(S::Available);
    let o = t.pass();
    assert_eq!(*t.state(), S::Provisioning);
    assert!(o.save_status);
    assert_eq!(o.requeue, NOW);
}

/// Behaviour 15.
#[test]
fn fixture_provisioning_takes_two_passes_and_resets_counters() {
    let mut t = HostTest::standard("host-0");
    t.run_until_state(S::Provisioning);
    t.rec.host.status.as_mut().unwrap().error_count = 2;
    t.rec.host.status.as_mut().unwrap().provisioning_fail_count = 1;
    let o = t.pass();
    assert_eq!(o.requeue, secs(10));
    assert!(!o.save_status);
    assert_eq!(*t.state(), S::Provisioning);
    let o = t.pass();
    assert!(o.save_status);
    assert_eq!(*t.state(), S::Provisioned);
    assert_eq!(t.st().provisioning.image, image(IMAGE_URL, IMAGE_SUM));
    assert_eq!(t.st().error_count, 0);
    assert_eq!(t.st().provisioning_fail_count, 0);
    assert_eq!(
        t.st().last_attempted_image,
        Some(image(IMAGE_URL, IMAGE_SUM))
    );
}

/// Behaviour 16 (mock: the fixture's Provision never fails).
#[test]
fn provisioning_failure_backs_off_then_deprovisions_and_counts_the_failure() {
    let mock = Mock::new();
    mock.with(|m| {
        m.script
            .provision
            .push_back(Ok(OpResult::failed("image write failed")))
    });
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .registered_in(S::Provisioning);
    let o = t.pass();
    assert_eq!(*t.state(), S::Provisioning);
    assert!(o.save_status);
    assert_eq!(t.st().error_type, ErrorType::ProvisioningError);
    assert_eq!(t.st().operational_status, OperationalStatus::Error);
    assert_eq!(t.st().error_message, "image write failed");
    assert_eq!(t.st().error_count, 1);
    assert!(in_backoff_window(&o, 1), "{:?}", o.requeue);
    assert_eq!(o.events[0].reason, "ProvisioningError");

    let o = t.pass();
    assert!(o.save_status);
    assert_eq!(*t.state(), S::Deprovisioning);
    assert_eq!(t.st().provisioning_fail_count, 1);

    // A second failure waits longer: (2, 4] minutes.
    let mock = Mock::new();
    mock.with(|m| m.script.provision.push_back(Ok(OpResult::failed("again"))));
    let mut t = HostTest::standard("host-1")
        .mock(&mock)
        .registered_in(S::Provisioning)
        .status(|st| st.error_count = 1);
    let o = t.pass();
    assert_eq!(t.st().error_count, 2);
    assert!(in_backoff_window(&o, 2), "{:?}", o.requeue);

    // The deprovisioning that follows restarts with restart_on_failure.
    let mock = Mock::new();
    let mut t = HostTest::standard("host-2")
        .mock(&mock)
        .registered_in(S::Deprovisioning)
        .status(|st| {
            st.error_type = ErrorType::ProvisioningError;
            st.operational_status = OperationalStatus::Error;
        });
    t.pass();
    assert!(
        mock.called("deprovision(restart=true)"),
        "{:?}",
        mock.calls()
    );
}

/// Behaviour 17.
#[test]
fn retry_limit_keeps_an_available_host_from_provisioning() {
    let mut t = HostTest::standard("host-0")
        .registered_in(S::Available)
        .status(|st| {
            st.provisioning_fail_count = 5;
            st.last_attempted_image = Some(image(IMAGE_URL, IMAGE_SUM));
        });
    assert_eq!(t.config.max_provisioning_retries, 5, "BMO's default");
    for n in 1..=3 {
        let o = t.pass();
        assert_eq!(*t.state(), S::Available);
        assert_eq!(t.st().error_type, ErrorType::ProvisioningError);
        assert_eq!(
            t.st().error_message,
            "provisioning failed 5 times, retry limit (5) reached; change image or reset provisioningFailCount to retry"
        );
        assert_eq!(t.st().error_count, n);
        assert!(in_backoff_window(&o, n as i32));
    }
}

/// Behaviour 17 (changing the URL or only the checksum resets the count).
#[test]
fn changing_the_image_resets_the_provisioning_fail_count() {
    for new in [
        image("http://example.test/images/other.qcow2", IMAGE_SUM),
        image(IMAGE_URL, "fedcba9876543210"),
    ] {
        let mut t = HostTest::standard("host-0")
            .registered_in(S::Available)
            .status(|st| {
                st.provisioning_fail_count = 5;
                st.last_attempted_image = Some(image(IMAGE_URL, IMAGE_SUM));
            });
        t.pass();
        assert_eq!(*t.state(), S::Available);
        t.edit_spec(|s| s.image = Some(new.clone()));
        let o = t.pass();
        assert!(o.save_status);
        assert_eq!(*t.state(), S::Provisioning, "{new:?}");
        assert_eq!(t.st().provisioning_fail_count, 0);
        assert_eq!(t.st().error_type, ErrorType::None);
    }
}

/// Behaviour 17 (limit 0).
#[test]
fn zero_retry_limit_disables_the_check() {
    let mut t = HostTest::standard("host-0")
        .max_provisioning_retries(0)
        .registered_in(S::Available)
        .status(|st| {
            st.provisioning_fail_count = 50;
            st.last_attempted_image = Some(image(IMAGE_URL, IMAGE_SUM));
        });
    t.pass();
    assert_eq!(*t.state(), S::Provisioning);
    assert_eq!(t.st().provisioning_fail_count, 50);
}

/// Behaviour 18. The spec (§3.10, §10 and behaviour 18) expects one `preparing` pass after every
/// deprovisioning because the root device hints were cleared. But registration runs first on the
/// next pass, and BMO's `registerHost` → `matchProfile` → `updateRootDeviceHints` (§3.7 step 11,
/// `baremetalhost_controller.go`) writes the profile's hints straight back (an `actionUpdate`),
/// so `handleAvailable` then finds nothing to prepare. The machine follows BMO's code here; the
/// detour only happens when something registration does not restore differs (RAID, below).
#[test]
fn removing_the_image_deprovisions_and_returns_to_available() {
    let mut t = HostTest::standard("host-0");
    t.run_to_steady();
    assert_eq!(*t.state(), S::Provisioned);
    t.log.clear();
    t.edit_spec(|s| s.image = None);
    t.run_until_state(S::Available);
    // The deprovisioning pass emptied the image and cleared the provisioning settings.
    assert!(t.last().saved);
    assert!(t.st().provisioning.image.url.is_empty());
    assert!(t.st().provisioning.root_device_hints.is_none());
    // Registration restores the hints on the next pass (saved), then the host is steady.
    let o = t.pass();
    assert!(o.save_status);
    assert_eq!(
        t.st()
            .provisioning
            .root_device_hints
            .as_ref()
            .unwrap()
            .device_name,
        "/dev/sda"
    );
    t.run_to_steady();
    assert_eq!(t.state_path(), vec![S::Deprovisioning, S::Available]);
    assert!(t.st().powered_on, "online: true keeps it on");
    assert_eq!(t.fixture().powered_on, Some(true));
    assert!(t.fixture().image.url.is_empty());
}

/// Behaviour 18 (the `preparing` detour, when the applied settings really differ: software RAID volumes
/// are cleared by deprovisioning and only `preparing` applies them again).
#[test]
fn removing_the_image_with_software_raid_prepares_once_more() {
    let raid = bmh_api::RaidConfig {
        hardware_raid_volumes: None,
        software_raid_volumes: Some(vec![bmh_api::SoftwareRaidVolume {
            level: "1".into(),
            ..Default::default()
        }]),
    };
    let mut t = HostTest::standard("host-0").spec(|s| s.raid = Some(Box::new(raid.clone())));
    t.run_to_steady();
    assert_eq!(*t.state(), S::Provisioned);
    assert_eq!(t.st().provisioning.raid.as_ref(), Some(&raid));
    t.log.clear();
    t.edit_spec(|s| s.image = None);
    t.run_to_steady();
    assert_eq!(
        t.state_path(),
        vec![S::Deprovisioning, S::Available, S::Preparing, S::Available]
    );
    assert_eq!(t.log.iter().filter(|p| p.state == S::Preparing).count(), 1);
    assert_eq!(t.st().provisioning.raid.as_ref(), Some(&raid));
}

/// Behaviour 18 (changing the URL instead: deprovision, then provision the new image).
#[test]
fn changing_the_image_url_reprovisions_the_new_image() {
    let mut t = HostTest::standard("host-0");
    t.run_to_steady();
    t.log.clear();
    let new = image("http://example.test/images/v2.qcow2", "abc");
    t.edit_spec(|s| s.image = Some(new.clone()));
    t.run_until_state(S::Provisioned);
    assert_eq!(
        t.state_path(),
        vec![
            S::Deprovisioning,
            S::Available,
            S::Provisioning,
            S::Provisioned
        ]
    );
    assert_eq!(t.st().provisioning.image, new);
    assert_eq!(t.fixture().image, new);
    assert_eq!(t.st().last_attempted_image, Some(new));
}

/// Behaviour 19.
#[test]
fn changing_only_the_checksum_keeps_the_host_provisioned() {
    let mut t = HostTest::standard("host-0");
    t.run_to_steady();
    t.edit_spec(|s| s.image.as_mut().unwrap().checksum = "changed".into());
    for _ in 0..5 {
        t.pass();
        assert_eq!(*t.state(), S::Provisioned);
    }
    assert_eq!(t.st().provisioning.image.checksum, IMAGE_SUM);
}

// ===== 20-23: deletion =========================================================================

/// Behaviour 20. (The Secret finalizer `baremetalhost.metal3.io/secret` has no counterpart: bmhctl puts no
/// finalizers on Secrets. The nearest equivalent checked here: the host finalizer and the
/// HardwareData finalizer are released, and the fixture's Delete ran.)
#[test]
fn deleting_a_provisioned_host_deprovisions_powers_off_and_deletes() {
    let mut t = HostTest::standard("host-0");
    t.run_to_steady();
    assert!(t.rec.book.hardware_data.is_some());
    t.log.clear();
    t.mark_deleted();
    t.passes_until(30, |_, o| o.deleted());
    assert_eq!(
        t.state_path(),
        vec![S::Deprovisioning, S::PoweringOffBeforeDelete, S::Deleting]
    );
    assert!(t.rec.book.finalizers.is_empty());
    assert!(
        t.rec
            .book
            .hardware_data
            .as_ref()
            .unwrap()
            .metadata
            .finalizers
            .is_empty()
    );
    let fx = t.fixture();
    assert!(fx.deleted, "the fixture's Delete was called");
    assert_eq!(fx.powered_on, Some(false));
    assert!(fx.image.url.is_empty());
    let last = t.last();
    assert_eq!(last.requeue, Requeue::Never);
    assert!(!last.saved);
}

/// Behaviour 21.
#[test]
fn deleting_an_unregistered_host_goes_straight_to_deleting() {
    // "", unmanaged, registering.
    let setups: Vec<(S, HostTest)> = vec![
        (S::None, HostTest::standard("a")),
        (S::Unmanaged, HostTest::new("b")),
        (S::Registering, HostTest::standard("c")),
    ];
    for (want, mut t) in setups {
        let mock = Mock::new();
        t = t.mock(&mock);
        t.pass(); // finalizer
        if want != S::None {
            t.run_until_state(want.clone());
        }
        assert_eq!(*t.state(), want);
        t.mark_deleted();
        let o = t.pass();
        assert!(o.save_status);
        assert_eq!(*t.state(), S::Deleting, "from {want:?}");
        t.passes_until(5, |_, o| o.deleted());
        let calls = mock.calls();
        assert!(
            !calls.iter().any(|c| c.starts_with("power_off")),
            "{calls:?}"
        );
        assert!(
            !calls.iter().any(|c| c.starts_with("deprovision")),
            "{calls:?}"
        );
        assert!(calls.iter().any(|c| c == "delete"), "{calls:?}");
    }
}

/// Behaviour 22.
#[test]
fn deleting_with_disable_power_off_skips_power_off() {
    let mock = Mock::new();
    mock.with(|m| m.powered_on = Some(true));
    let mut t = HostTest::standard("host-0")
        .spec(|s| s.disable_power_off = true)
        .mock(&mock)
        .registered_in(S::Available)
        .status(|st| st.powered_on = true);
    t.mark_deleted();
    t.passes_until(10, |_, o| o.deleted());
    assert_eq!(
        t.state_path(),
        vec![S::PoweringOffBeforeDelete, S::Deleting]
    );
    assert!(!mock.called("power_off"), "{:?}", mock.calls());
    assert!(mock.called("delete"));
}

/// Behaviour 23 (mock: Deprovision keeps failing).
#[test]
fn failing_deprovision_during_delete_gives_up_after_three_errors() {
    let mock = Mock::new();
    mock.with(|m| m.always_fail_deprovision = Some("cleaning failed".into()));
    let mut t = HostTest::standard("host-0").mock(&mock).provisioned();
    t.mark_deleted();
    let o = t.pass();
    assert_eq!(*t.state(), S::Deprovisioning);
    assert!(o.save_status);
    for n in 1..=3 {
        let o = t.pass();
        assert_eq!(*t.state(), S::Deprovisioning);
        assert_eq!(t.st().error_count, n);
        assert_eq!(t.st().error_type, ErrorType::ProvisioningError);
        assert!(in_backoff_window(&o, n as i32));
    }
    // The 4th failure (errorCount 4 > 3) gives up.
    let o = t.pass();
    assert_eq!(o.requeue, NOW);
    assert!(o.save_status);
    assert_eq!(*t.state(), S::PoweringOffBeforeDelete);
    assert_eq!(t.st().error_count, 4, "errors are kept (quirk 14)");
    t.passes_until(10, |_, o| o.deleted());
    assert_eq!(
        mock.calls()
            .iter()
            .filter(|c| c.starts_with("deprovision"))
            .count(),
        4
    );
    assert!(mock.called("power_off(mode=hard"));
}

// ===== 24-27: detach ===========================================================================

/// Behaviour 24.
#[test]
fn detached_provisioned_host_is_detached_and_polled_slowly() {
    let mock = Mock::new();
    mock.with(|m| {
        m.powered_on = Some(true);
        m.script
            .detach
            .push_back(Ok(OpResult::in_progress(Duration::ZERO)));
    });
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .provisioned()
        .annotate(annotations::DETACHED, "");
    // Detach still in progress: opStatus unchanged.
    let o = t.pass();
    assert_eq!(o.requeue, NOW);
    assert_eq!(t.st().operational_status, OperationalStatus::Ok);
    let o = t.pass();
    assert!(o.save_status);
    assert_eq!(o.requeue, Requeue::After(Duration::from_secs(600)));
    assert_eq!(t.st().operational_status, OperationalStatus::Detached);
    assert_eq!(*t.state(), S::Provisioned);
    let o = t.pass();
    assert!(!o.save_status);
    assert_eq!(o.requeue, Requeue::After(Duration::from_secs(600)));
    assert_eq!(
        mock.take_calls(),
        vec!["detach(force=false)"; 3],
        "no registration, no handler"
    );
    // Removing the annotation restores OK.
    t.remove_annotation(annotations::DETACHED);
    let o = t.pass();
    assert!(o.save_status);
    assert_eq!(o.requeue, NOW);
    assert_eq!(t.st().operational_status, OperationalStatus::Ok);
    assert!(mock.take_calls().is_empty());
    t.pass();
    assert!(mock.called("register"));
}

/// Behaviour 25.
#[test]
fn detached_annotation_on_an_inspecting_host_needs_force() {
    let mock = Mock::new();
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .registered_in(S::Inspecting)
        .annotate(annotations::DETACHED, "");
    t.pass();
    assert!(!mock.called("detach"), "{:?}", mock.calls());
    assert!(mock.called("inspect_hardware"));
    assert_eq!(*t.state(), S::Preparing, "keeps progressing");

    let mock = Mock::new();
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .registered_in(S::Inspecting)
        .annotate(annotations::DETACHED, r#"{"Force":true}"#);
    t.pass();
    // Go's `json.Unmarshal` (`checkDetachedHost`): the key matches in any case.
    assert_eq!(mock.calls(), vec!["detach(force=true)"]);
    assert_eq!(*t.state(), S::Inspecting);
    assert_eq!(t.st().operational_status, OperationalStatus::Detached);
}

/// Behaviour 26 (mock: detach failure).
#[test]
fn detach_failure_is_recorded_then_cleared_by_a_successful_detach() {
    let mock = Mock::new();
    mock.with(|m| {
        m.powered_on = Some(true);
        m.script
            .detach
            .push_back(Ok(OpResult::failed("node locked")));
    });
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .provisioned()
        .annotate(annotations::DETACHED, "");
    let o = t.pass();
    assert!(o.save_status);
    assert_eq!(t.st().error_type, ErrorType::DetachError);
    assert_eq!(t.st().operational_status, OperationalStatus::Error);
    assert_eq!(t.st().error_message, "node locked");
    assert_eq!(t.st().error_count, 1);
    assert!(in_backoff_window(&o, 1));
    assert_eq!(o.events[0].reason, "DetachError");
    let o = t.pass();
    assert!(o.save_status);
    assert_eq!(t.st().error_type, ErrorType::None);
    assert_eq!(t.st().error_count, 0);
    assert_eq!(t.st().operational_status, OperationalStatus::Detached);
}

/// Behaviour 26 (removing the annotation clears a detach error too).
#[test]
fn detach_failure_is_cleared_by_removing_the_annotation() {
    let mock = Mock::new();
    mock.with(|m| {
        m.powered_on = Some(true);
        m.script
            .detach
            .push_back(Ok(OpResult::failed("node locked")));
    });
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .provisioned()
        .annotate(annotations::DETACHED, "");
    t.pass();
    assert_eq!(t.st().error_type, ErrorType::DetachError);
    t.remove_annotation(annotations::DETACHED);
    let o = t.pass();
    assert!(o.save_status);
    assert_eq!(o.requeue, NOW);
    assert_eq!(t.st().error_type, ErrorType::None);
    assert_eq!(t.st().error_message, "");
    assert_eq!(t.st().error_count, 0);
    assert_eq!(t.st().operational_status, OperationalStatus::Ok);
}

/// Behaviour 27.
#[test]
fn deleting_a_detached_host_honours_the_delete_action() {
    for (value, deletes) in [
        (r#"{"deleteAction":"delay"}"#, false),
        (r#"{"deleteAction":"delete"}"#, true),
        ("true", true),
        ("", true),
        // Go's `json.Unmarshal` in `getDetachedAnnotation`: keys in any case; a value Go
        // refuses (a field of the wrong type) is no annotation value at all.
        (r#"{"DeleteAction":"delay"}"#, false),
        (r#"{"deleteAction":"delay","force":"yes"}"#, true),
    ] {
        let mock = Mock::new();
        mock.with(|m| m.powered_on = Some(true));
        let mut t = HostTest::standard("host-0")
            .mock(&mock)
            .provisioned()
            .annotate(annotations::DETACHED, value);
        t.pass();
        assert_eq!(
            t.st().operational_status,
            OperationalStatus::Detached,
            "{value}"
        );
        t.mark_deleted();
        t.pass();
        if deletes {
            assert_eq!(*t.state(), S::Deleting, "{value}");
            t.passes_until(5, |_, o| o.deleted());
            assert!(!mock.called("deprovision"), "{value}: {:?}", mock.calls());
            assert!(!mock.called("power_off"), "{value}");
        } else {
            for _ in 0..3 {
                assert_eq!(*t.state(), S::Provisioned, "{value}");
                assert_eq!(t.st().operational_status, OperationalStatus::Detached);
                t.pass();
            }
        }
    }
}

// ===== 28-32: power ============================================================================

/// Behaviour 28.
#[test]
fn one_shot_reboot_annotation_powers_off_then_on_once() {
    let mut t = HostTest::standard("host-0");
    t.run_to_steady();
    assert!(t.st().powered_on);
    t.log.clear();
    t.set_annotation(annotations::REBOOT_PREFIX, "");
    t.run_to_steady();
    assert!(!t.has_annotation(annotations::REBOOT_PREFIX));
    assert!(t.st().powered_on);
    let reasons = t.event_reasons();
    assert_eq!(
        reasons
            .iter()
            .filter(|r| r.starts_with("Power"))
            .collect::<Vec<_>>(),
        vec!["PowerOff", "PowerOn"]
    );
    assert!(t.log.iter().any(|p| {
        p.outcome
            .removed_annotations
            .contains(&annotations::REBOOT_PREFIX.to_string())
    }));
    // No second reboot.
    t.log.clear();
    t.passes(5);
    assert!(t.event_reasons().is_empty());
    assert!(t.st().powered_on);
}

/// Behaviour 29.
#[test]
fn held_reboot_annotation_keeps_the_host_off_until_removed() {
    let mut t = HostTest::standard("host-0");
    t.run_to_steady();
    t.set_annotation("reboot.metal3.io/maintenance", "");
    t.run_to_steady();
    assert!(!t.st().powered_on);
    assert!(t.has_annotation("reboot.metal3.io/maintenance"));
    for _ in 0..3 {
        assert!(t.pass().steady());
        assert!(!t.st().powered_on);
    }
    t.remove_annotation("reboot.metal3.io/maintenance");
    t.run_to_steady();
    assert!(t.st().powered_on);
    assert_eq!(t.fixture().powered_on, Some(true));
}

/// Behaviour 30 (mock records the mode).
#[test]
fn reboot_annotation_mode_selects_the_power_off_mode() {
    let cases = [
        (
            r#"{"mode":"hard"}"#,
            0,
            "power_off(mode=hard, force=false)",
            false,
        ),
        ("", 0, "power_off(mode=soft, force=false)", false),
        (
            r#"{"mode":"soft"}"#,
            0,
            "power_off(mode=soft, force=false)",
            false,
        ),
        ("{not json", 0, "power_off(mode=soft, force=false)", true),
        ("", 2, "power_off(mode=hard, force=false)", false),
        // Go's `json.Unmarshal` in `getRebootAnnotationArguments`: keys in any case, and a
        // field of the wrong type skipped (an invalid value) with the others kept.
        (
            r#"{"Mode":"hard"}"#,
            0,
            "power_off(mode=hard, force=false)",
            false,
        ),
        (
            r#"{"mode":"hard","force":"yes"}"#,
            0,
            "power_off(mode=hard, force=false)",
            true,
        ),
        (r#"["hard"]"#, 0, "power_off(mode=soft, force=false)", true),
        ("null", 0, "power_off(mode=soft, force=false)", false),
    ];
    for (value, error_count, want, invalid_event) in cases {
        let mock = Mock::new();
        mock.with(|m| m.powered_on = Some(true));
        let mut t = HostTest::standard("host-0")
            .mock(&mock)
            .provisioned()
            .status(|st| st.error_count = error_count)
            .annotate(annotations::REBOOT_PREFIX, value);
        let o = t.pass();
        assert_eq!(
            mock.calls(),
            vec![
                "register(credentials_changed=false, restart=false)",
                "adopt(restart=false)",
                want
            ],
            "{value}"
        );
        assert_eq!(
            o.events
                .iter()
                .any(|e| e.reason == "InvalidAnnotationValue"),
            invalid_event,
            "{value}: {:?}",
            o.events
        );
    }
}

/// Behaviour 31 (mock: soft power-off failure).
#[test]
fn soft_power_off_failure_is_prefixed_and_recorded_as_power_management_error() {
    let mock = Mock::new();
    mock.with(|m| {
        m.powered_on = Some(true);
        m.script
            .power_off
            .push_back(Ok(OpResult::failed("BMC timeout")));
    });
    let mut t = HostTest::standard("host-0")
        .online(false)
        .mock(&mock)
        .registered_in(S::Provisioned)
        .status(|st| {
            st.provisioning.image = image(IMAGE_URL, IMAGE_SUM);
            st.powered_on = true;
        });
    let o = t.pass();
    assert!(mock.called("power_off(mode=soft, force=false)"));
    assert_eq!(t.st().error_type, ErrorType::PowerManagementError);
    assert_eq!(t.st().operational_status, OperationalStatus::Error);
    assert_eq!(
        t.st().error_message,
        "Continuing with hard poweroff after soft poweroff fails. More details: BMC timeout"
    );
    assert_eq!(t.st().error_count, 1);
    assert!(in_backoff_window(&o, 1));
    // The retry is hard and forced, and succeeds.
    mock.take_calls();
    t.pass();
    assert!(
        mock.called("power_off(mode=hard, force=true)"),
        "{:?}",
        mock.calls()
    );
    t.run_to_steady();
    assert!(!t.st().powered_on);
    assert_eq!(t.st().error_type, ErrorType::None);
    assert_eq!(t.st().operational_status, OperationalStatus::Ok);
    // Quirk 24: clearing the error keeps errorCount; the steady poll (poweredOn == desired)
    // returns before manageHostPower's step 14 would reset it.
    assert_eq!(t.st().error_count, 1);
}

/// Behaviour 32 (mock: reported and unknown power states).
#[test]
fn powered_on_follows_the_reported_hardware_state() {
    let mock = Mock::new();
    mock.with(|m| m.powered_on = Some(true));
    let mut t = HostTest::standard("host-0").mock(&mock).provisioned();
    let o = t.pass();
    assert!(o.steady());
    assert!(t.st().powered_on);
    // The hardware reports off: saved, immediate requeue.
    mock.with(|m| {
        m.script.hardware_state.push_back(Ok(HardwareState {
            powered_on: Some(false),
        }))
    });
    let o = t.pass();
    assert!(o.save_status);
    assert_eq!(o.requeue, NOW);
    assert!(!t.st().powered_on);
    // Unknown power state: status unchanged.
    t.rec.host.status.as_mut().unwrap().powered_on = true;
    mock.with(|m| m.powered_on = None);
    let o = t.pass();
    assert!(!o.save_status);
    assert!(o.steady());
    assert!(t.st().powered_on);
}

// ===== 33-38: backoff, errors, readiness, unknown state, externally provisioned, paused =======

/// Behaviour 33. (The formula itself is also tested in `backoff.rs`; here through the machine: a fixture
/// `validateError` fails registration on every pass.)
#[test]
fn error_backoff_grows_with_error_count_and_caps_at_nine() {
    let mut rng = fastrand::Rng::with_seed(1);
    for n in 1..=12i64 {
        for _ in 0..200 {
            let d = backoff::backoff(n, rng.f64()).as_secs_f64();
            let k = n.min(9) as i32;
            assert!(d > 2f64.powi(k - 1) * MINUTE && d <= 2f64.powi(k) * MINUTE);
        }
    }
    let mut t = HostTest::standard("host-0").fixture_state(json!({"validateError": "bad BMC"}));
    t.passes(2);
    for n in 1..=11 {
        let o = t.pass();
        assert_eq!(t.st().error_count, n as i64);
        assert_eq!(t.st().error_type, ErrorType::RegistrationError);
        assert_eq!(t.st().error_message, "bad BMC");
        assert!(in_backoff_window(&o, n), "n={n}: {:?}", o.requeue);
    }
}

/// Behaviour 34 (mock: a provisioner Go error).
#[test]
fn pass_error_writes_no_status_and_publishes_no_events() {
    let mock = Mock::new();
    mock.with(|m| {
        m.script
            .provision
            .push_back(Err(ProvisionerError::other("connection reset")))
    });
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .registered_in(S::Provisioning);
    // The provisioner publishes an event for every call; BMO queues those in the pass too.
    mock.with(|m| m.publish_calls = true);
    let before = t.rec.host.status.clone();
    let o = t.pass();
    assert_eq!(
        o.error.as_deref(),
        Some("action \"provisioning\" failed: failed to provision: connection reset")
    );
    assert_eq!(o.requeue, Requeue::ErrorBackoff);
    assert!(!o.save_status);
    assert!(o.events.is_empty(), "{:?}", o.events);
    // `lastAttemptedImage` was set in memory before Provision: discarded with the rest.
    assert_eq!(t.rec.host.status, before);
    assert!(t.st().last_attempted_image.is_none());
    // The same pass without the error publishes the provisioner's and the controller's events,
    // in the order they were queued.
    mock.with(|m| {
        m.script
            .provision
            .push_back(Ok(OpResult::failed("bad image")))
    });
    let o = t.pass();
    assert!(o.error.is_none());
    let events: Vec<(&str, &str)> = o
        .events
        .iter()
        .map(|e| (e.reason.as_str(), e.message.as_str()))
        .collect();
    assert_eq!(
        events,
        vec![
            (
                "MockCall",
                "register(credentials_changed=false, restart=false)"
            ),
            (
                "MockCall",
                "provision(url=http://example.test/images/host.qcow2, force_reboot=false)"
            ),
            ("ProvisioningError", "bad image"),
        ]
    );
}

/// Behaviour 35.
#[test]
fn become_ready_counter_delays_provisioner_creation() {
    let mut t = HostTest::standard("host-0").fixture_state(json!({"becomeReadyCounter": 5}));
    t.pass(); // finalizer
    for _ in 0..4 {
        let o = t.pass();
        assert_eq!(o.requeue, secs(30));
        assert!(!o.save_status);
        assert_eq!(*t.state(), S::None);
    }
    t.pass();
    assert_eq!(*t.state(), S::Registering);
}

/// Behaviour 36.
#[test]
fn unknown_state_fails_every_pass_after_registration() {
    let mut t = HostTest::standard("host-0").status(|st| {
        st.provisioning.state = S::from("bogus");
        st.provisioning.id = "temporary-fake-id".into();
    });
    t.rec
        .book
        .finalizers
        .push(annotations::HOST_FINALIZER.into());
    // Registration still runs and saves its changes first.
    let saved = t.passes_until(5, |_, o| o.error.is_some());
    assert!(saved.len() > 1);
    assert!(saved[..saved.len() - 1].iter().all(|o| o.save_status));
    assert_eq!(t.st().good_credentials, t.credentials_status());
    for _ in 0..3 {
        let before = t.rec.host.status.clone();
        let o = t.pass();
        assert_eq!(
            o.error.as_deref(),
            Some("action \"bogus\" failed: no handler found for state \"bogus\"")
        );
        assert!(!o.save_status);
        assert_eq!(t.rec.host.status, before);
    }
}

/// Behaviour 37.
#[test]
fn externally_provisioned_host_becomes_provisioned_when_the_flag_is_cleared() {
    let mut t = HostTest::standard("host-0").spec(|s| s.externally_provisioned = true);
    t.run_to_steady();
    assert_eq!(*t.state(), S::ExternallyProvisioned);
    assert!(t.st().provisioning.image.url.is_empty());
    t.edit_spec(|s| s.externally_provisioned = false);
    let o = t.pass();
    assert!(o.save_status);
    assert_eq!(*t.state(), S::Provisioned);
    assert_eq!(t.st().provisioning.image, image(IMAGE_URL, IMAGE_SUM));
    t.run_to_steady();
    assert_eq!(*t.state(), S::Provisioned);
}

/// Behaviour 37 (without an image).
#[test]
fn externally_provisioned_host_without_image_deprovisions_when_the_flag_is_cleared() {
    let mut t = HostTest::standard("host-0").spec(|s| {
        s.externally_provisioned = true;
        s.image = None;
    });
    t.run_to_steady();
    assert_eq!(*t.state(), S::ExternallyProvisioned);
    t.edit_spec(|s| s.externally_provisioned = false);
    t.pass();
    assert_eq!(*t.state(), S::Provisioned);
    t.pass();
    assert_eq!(*t.state(), S::Deprovisioning);
}

/// Behaviour 38.
#[test]
fn paused_host_is_left_alone() {
    let mock = Mock::new();
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .registered_in(S::Available)
        .annotate(annotations::PAUSED, "");
    let before = t.rec.clone();
    for _ in 0..3 {
        let o = t.pass();
        assert!(o.paused());
        assert_eq!(o.requeue, Requeue::Never);
        assert!(!o.save_status && !o.bookkeeping_changed);
        assert!(o.events.is_empty());
    }
    assert_eq!(t.rec, before);
    assert!(mock.created().is_empty(), "no provisioner was even created");
    // Also before the finalizer is added.
    let mut t = HostTest::standard("host-1").annotate(annotations::PAUSED, "true");
    t.pass();
    assert!(t.rec.book.finalizers.is_empty());
}

// ===== 39: conditions ==========================================================================

/// The base table of section 3.13: (Manageable, AvailableForProvisioning, Provisioned, Ready,
/// Progressing) as (status, reason).
fn expected_conditions(state: &S, op: &OperationalStatus) -> [(&'static str, &'static str); 5] {
    const F: &str = "False";
    const T: &str = "True";
    let mut row = match state {
        S::None | S::Unmanaged => [
            (F, "NotManaged"),
            (F, "NotAvailable"),
            (F, "NotProvisioned"),
            (F, "NotProvisioned"),
            (F, "NotProgressing"),
        ],
        S::Registering => [
            (
                F,
                if *op == OperationalStatus::Error {
                    "RegistrationFailed"
                } else {
                    "Registering"
                },
            ),
            (F, "NotAvailable"),
            (F, "NotProvisioned"),
            (F, "NotProvisioned"),
            (T, "Registering"),
        ],
        S::Available | S::Ready => [
            (T, "Manageable"),
            (T, "Available"),
            (F, "NotProvisioned"),
            (F, "NotProvisioned"),
            (F, "NotProgressing"),
        ],
        S::Provisioned | S::ExternallyProvisioned => [
            (T, "Manageable"),
            (F, "NotAvailable"),
            (T, "Provisioned"),
            (T, "Provisioned"),
            (F, "NotProgressing"),
        ],
        other => {
            let g = match other {
                S::Preparing => "Preparing",
                S::Provisioning => "Provisioning",
                S::Deprovisioning => "Deprovisioning",
                S::Inspecting | S::MatchProfile => "Inspecting",
                S::PoweringOffBeforeDelete => "PoweringOffBeforeDelete",
                S::Deleting => "Deleting",
                s => panic!("no row for {s:?}"),
            };
            [
                (T, "Manageable"),
                (F, "NotAvailable"),
                (F, "NotProvisioned"),
                (F, "NotProvisioned"),
                (T, g),
            ]
        }
    };
    match op {
        OperationalStatus::Error => row[3] = (F, "Error"),
        OperationalStatus::Servicing => row[3] = (F, "Servicing"),
        OperationalStatus::Detached => {
            row[3] = (F, "Detached");
            row[4] = (F, "Detached");
        }
        _ => {}
    }
    row
}

fn assert_conditions_match_table(t: &HostTest) {
    let st = t.st();
    let want = expected_conditions(&st.provisioning.state, &st.operational_status);
    let types = [
        "Manageable",
        "AvailableForProvisioning",
        "Provisioned",
        "Ready",
        "Progressing",
    ];
    for (type_, want) in types.iter().zip(want) {
        assert_eq!(
            condition(t, type_),
            want,
            "{type_} in state {:?} / {:?}",
            st.provisioning.state,
            st.operational_status
        );
    }
    let order: Vec<&str> = st.conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(
        order,
        vec![
            "Ready",
            "AvailableForProvisioning",
            "Healthy",
            "Manageable",
            "Progressing",
            "Provisioned"
        ]
    );
    // Healthy is only (re)written when the provisioner reports a health; with an unknown
    // health the first one is kept as it is, observedGeneration included.
    for c in st.conditions.iter().filter(|c| c.type_ != "Healthy") {
        assert_eq!(c.observed_generation, t.rec.book.generation, "{}", c.type_);
    }
}

/// 39: after every saved pass of a full life cycle.
#[test]
fn conditions_follow_the_state_table_through_a_life_cycle() {
    let mut t = HostTest::standard("host-0");
    t.pass();
    let mut seen = Vec::new();
    let mut check = |t: &mut HostTest| {
        while !t.pass().steady() {
            if t.last().saved {
                assert_conditions_match_table(t);
                seen.push(t.state().clone());
            }
        }
    };
    check(&mut t);
    assert_eq!(condition(&t, "Healthy"), ("Unknown", "Unknown"));
    t.edit_spec(|s| s.image = None);
    check(&mut t);
    t.mark_deleted();
    loop {
        let o = t.pass();
        if o.deleted() {
            break;
        }
        if o.save_status {
            assert_conditions_match_table(&t);
            seen.push(t.state().clone());
        }
    }
    for s in [
        S::Registering,
        S::Inspecting,
        S::Preparing,
        S::Available,
        S::Provisioning,
        S::Provisioned,
        S::Deprovisioning,
        S::PoweringOffBeforeDelete,
        S::Deleting,
    ] {
        assert!(seen.contains(&s), "{s:?} never checked: {seen:?}");
    }
    // Unmanaged too.
    let mut t = HostTest::new("host-1");
    t.passes(2);
    assert_conditions_match_table(&t);
}

/// 39: the overrides.
#[test]
fn conditions_report_error_detached_health_and_power_failure() {
    // opStatus error → Ready False/Error.
    let mut t = HostTest::standard("host-0").bmc(BMC, "missing");
    t.passes(3);
    assert_eq!(t.st().operational_status, OperationalStatus::Error);
    // The credentials error path does not recompute conditions (BMO returns before them), so
    // drive an error through a handler instead: the retry limit.
    let mut t = HostTest::standard("host-0")
        .registered_in(S::Available)
        .status(|st| {
            st.provisioning_fail_count = 5;
            st.last_attempted_image = Some(image(IMAGE_URL, IMAGE_SUM));
        });
    t.pass();
    assert_eq!(condition(&t, "Ready"), ("False", "Error"));
    assert_conditions_match_table(&t);

    // Detached → Ready and Progressing False/Detached.
    let mock = Mock::new();
    mock.with(|m| m.powered_on = Some(true));
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .provisioned()
        .annotate(annotations::DETACHED, "");
    t.pass();
    assert_eq!(condition(&t, "Ready"), ("False", "Detached"));
    assert_eq!(condition(&t, "Progressing"), ("False", "Detached"));

    // Fixture health and power failure.
    let mut t = HostTest::standard("host-0")
        .fixture_state(json!({"health": "Critical", "powerFailed": true}));
    t.run_to_steady();
    assert_eq!(condition(&t, "Healthy"), ("False", "CriticalError"));
    assert_eq!(condition(&t, "Manageable"), ("False", "PowerFailure"));
    assert_eq!(condition(&t, "Ready"), ("True", "Provisioned"));
    assert_eq!(condition(&t, "Provisioned"), ("True", "Provisioned"));
    // Health OK / Warning through the fixture annotation knob.
    t.set_annotation("fixture.bmhctl.metal3.io/health", "OK");
    t.pass();
    assert_eq!(condition(&t, "Healthy"), ("True", "Healthy"));
    t.set_annotation("fixture.bmhctl.metal3.io/health", "Warning");
    t.pass();
    assert_eq!(condition(&t, "Healthy"), ("False", "Warning"));
}

// ===== Section 10: golden traces ===============================================================

/// Section 10, passes 1-16: (state at start, saved?, requeue).
#[test]
fn golden_trace_from_none_to_provisioned() {
    let mut t = HostTest::standard("host-0");
    let want: Vec<(S, bool, Requeue)> = vec![
        (S::None, false, NOW),              // 1 finalizer
        (S::None, true, NOW),               // 2 → registering
        (S::Registering, true, secs(5)),    // 3 Register: ID, dirty 5 s
        (S::Registering, true, NOW),        // 4 profile, hints
        (S::Registering, true, NOW),        // 5 credentials validated → inspecting
        (S::Inspecting, false, secs(2)),    // 6 inspection started
        (S::Inspecting, true, NOW),         // 7 details → preparing
        (S::Preparing, false, NOW),         // 8 spec.architecture
        (S::Preparing, true, NOW),          // 9 → available
        (S::Available, true, NOW),          // 10 → provisioning
        (S::Provisioning, false, secs(10)), // 11 Provision 1st
        (S::Provisioning, true, NOW),       // 12 → provisioned
        (S::Provisioned, false, secs(3)),   // 13 Adopt 1st
        (S::Provisioned, false, NOW),       // 14 PowerOn
        (S::Provisioned, true, NOW),        // 15 poweredOn = true
        (S::Provisioned, false, secs(60)),  // 16 steady
        (S::Provisioned, false, secs(60)),  // 17 steady
    ];
    t.passes(want.len());
    let got: Vec<(S, bool, Requeue)> = t
        .log
        .iter()
        .map(|p| (p.state.clone(), p.saved, p.requeue))
        .collect();
    assert_eq!(got, want, "\n{}", t.trace());
    assert!(t.log.iter().all(|p| p.outcome.error.is_none()));
    assert!(t.st().powered_on);
    assert_eq!(t.st().error_count, 0);
    assert_eq!(t.st().operational_status, OperationalStatus::Ok);
}

/// Section 10: deletion from the provisioned steady state.
#[test]
fn golden_trace_of_deleting_a_provisioned_host() {
    let mut t = HostTest::standard("host-0");
    t.run_to_steady();
    t.log.clear();
    t.mark_deleted();
    t.passes_until(20, |_, o| o.deleted());
    let want: Vec<(S, bool, Requeue)> = vec![
        (S::Provisioned, true, NOW),          // → deprovisioning
        (S::Deprovisioning, false, secs(10)), // Deprovision 1st
        (S::Deprovisioning, true, NOW),       // done → powering off
        // Not in §10's list: registration restores the hints deprovisioning cleared (see
        // `removing_the_image_deprovisions_and_returns_to_available`).
        (S::PoweringOffBeforeDelete, true, NOW),
        (S::PoweringOffBeforeDelete, false, NOW), // PowerOff dirty
        (S::PoweringOffBeforeDelete, true, NOW),  // done → deleting
        (S::Deleting, false, NOW),                // Delete dirty
        (S::Deleting, false, Requeue::Never),     // done: finalizer removed
    ];
    let got: Vec<(S, bool, Requeue)> = t
        .log
        .iter()
        .map(|p| (p.state.clone(), p.saved, p.requeue))
        .collect();
    assert_eq!(got, want, "\n{}", t.trace());
    assert!(t.last().outcome.deleted());
}

/// Section 10: image removed while provisioned.
#[test]
fn golden_trace_of_removing_the_image() {
    let mut t = HostTest::standard("host-0");
    t.run_to_steady();
    t.log.clear();
    t.edit_spec(|s| s.image = None);
    t.run_to_steady();
    let want: Vec<(S, bool, Requeue)> = vec![
        (S::Provisioned, true, NOW),          // → deprovisioning
        (S::Deprovisioning, false, secs(10)), // Deprovision 1st
        (S::Deprovisioning, true, NOW),       // done → available
        // §10 has `preparing` next; registration restores the hints first instead (see
        // `removing_the_image_deprovisions_and_returns_to_available`).
        (S::Available, true, NOW),
        (S::Available, false, secs(60)), // host kept on: steady
    ];
    let got: Vec<(S, bool, Requeue)> = t
        .log
        .iter()
        .map(|p| (p.state.clone(), p.saved, p.requeue))
        .collect();
    assert_eq!(got, want, "\n{}", t.trace());
}

/// Section 10: provisioning failures up to `--max-provisioning-retries=5`.
#[test]
fn golden_trace_of_repeated_provisioning_failures_hits_the_retry_limit() {
    let mock = Mock::new();
    mock.with(|m| {
        for _ in 0..10 {
            m.script
                .provision
                .push_back(Ok(OpResult::failed("deploy failed")));
        }
    });
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .registered_in(S::Available);
    let limit_msg = "provisioning failed 5 times, retry limit (5) reached; change image or reset provisioningFailCount to retry";
    // The first cycle in detail.
    t.run_until_state(S::Provisioning);
    let o = t.pass();
    assert_eq!(t.st().error_count, 1);
    assert!(in_backoff_window(&o, 1));
    t.pass();
    assert_eq!(*t.state(), S::Deprovisioning);
    assert_eq!(t.st().provisioning_fail_count, 1);
    t.pass();
    assert!(mock.called("deprovision(restart=true)"));
    assert_eq!(*t.state(), S::Available);
    assert_eq!(t.st().error_count, 0);
    assert_eq!(
        t.st().error_type,
        ErrorType::ProvisioningError,
        "kept: Deprovision reported no progress"
    );
    t.passes_until(100, |t, _| t.st().error_message == limit_msg);
    assert_eq!(*t.state(), S::Available);
    assert_eq!(t.st().provisioning_fail_count, 5);
    assert_eq!(
        mock.calls()
            .iter()
            .filter(|c| c.starts_with("provision("))
            .count(),
        5
    );
    // Every cycle: provisioning → deprovisioning → available (§10 also lists a `preparing`
    // pass; see `removing_the_image_deprovisions_and_returns_to_available`).
    let path = t.state_path();
    let cycle = [S::Provisioning, S::Deprovisioning, S::Available];
    assert_eq!(path.len(), 5 * cycle.len(), "{path:?}");
    for chunk in path.chunks(cycle.len()) {
        assert_eq!(chunk, cycle);
    }
}

// ===== golden status snapshots =================================================================

/// A host walked `""` → provisioned → deprovisioned (image removed) → deleted; the status
/// saved at each milestone, with timestamps from the manual clock.
#[test]
fn golden_status_snapshots_through_a_life_cycle() {
    let mut t = HostTest::standard("host-0");
    t.run_to_steady();
    assert_eq!(*t.state(), S::Provisioned);
    insta::assert_yaml_snapshot!("01_provisioned", t.st());

    t.edit_spec(|s| s.image = None);
    t.run_to_steady();
    assert_eq!(*t.state(), S::Available);
    insta::assert_yaml_snapshot!("02_deprovisioned_available", t.st());

    t.mark_deleted();
    t.passes_until(20, |t, _| *t.state() == S::Deleting);
    insta::assert_yaml_snapshot!("03_deleting", t.st());
    t.passes_until(5, |_, o| o.deleted());
    assert!(t.rec.book.finalizers.is_empty());
}

#[test]
fn delays_match_the_spec() {
    assert_eq!(delays::HOST_ERROR_RETRY, Duration::from_secs(10));
    assert_eq!(delays::UNMANAGED_RETRY, Duration::from_secs(600));
    assert_eq!(delays::PROVISIONER_NOT_READY_RETRY, Duration::from_secs(30));
    assert_eq!(delays::POWER_POLL, Duration::from_secs(60));
    assert_eq!(delays::DETACHED_POLL, Duration::from_secs(600));
}

// ===== Why a pass waits (issue 10: change-driven passes) ======================================

/// A handler requeuing on the provisioner's `requeue_after` marks the wait as `Progress`; its
/// requeue stays BMO's. Steady passes and immediate requeues mark nothing.
#[test]
fn a_pass_waiting_on_the_provisioner_marks_progress_and_a_steady_pass_nothing() {
    let mut t = HostTest::standard("host-0").online(true);
    t.run_until_state(S::Provisioned);
    t.run_to_steady();
    let waiting: Vec<_> = t.log.iter().filter(|p| p.outcome.wait.is_some()).collect();
    assert!(!waiting.is_empty(), "{}", t.trace());
    for p in &waiting {
        assert_eq!(p.outcome.wait, Some(bmhctl_plugin_sdk::WaitOn::Progress));
        assert!(!after(&p.outcome).is_zero(), "{p:?}");
        assert!(p.outcome.error.is_none() && !p.outcome.steady());
    }
    assert!(
        waiting.iter().any(|p| p.state == S::Inspecting),
        "{}",
        t.trace()
    );
    for p in t.log.iter().filter(|p| after(&p.outcome).is_zero()) {
        assert_eq!(p.outcome.wait, None, "{p:?}");
    }
    for _ in 0..2 {
        let o = t.pass();
        assert!(o.steady());
        assert_eq!(o.wait, None);
    }
}

/// The mock's provisioner saying "still working, again in 10 s" marks `Progress`.
#[test]
fn a_provisioning_host_still_working_marks_progress() {
    let mock = Mock::new();
    mock.with(|m| {
        m.script.provision.push_back(Ok(OpResult {
            dirty: true,
            requeue_after: Duration::from_secs(10),
            ..Default::default()
        }))
    });
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .registered_in(S::Provisioning);
    let o = t.passes_until(5, |_, o| o.wait.is_some());
    let o = o.last().unwrap();
    assert_eq!(o.wait, Some(bmhctl_plugin_sdk::WaitOn::Progress));
    assert_eq!(o.requeue, secs(10), "BMO's requeue is kept");
}

/// A host `delayed` by the provisioning limit marks `Capacity`; BMO's backoff is kept.
#[test]
fn a_delayed_host_marks_capacity() {
    let mock = Mock::new();
    mock.with(|m| m.script.has_capacity.push_back(Ok(false)));
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .registered_in(S::Registering);
    let o = t.pass();
    assert_eq!(t.st().operational_status, OperationalStatus::Delayed);
    assert_eq!(o.wait, Some(bmhctl_plugin_sdk::WaitOn::Capacity));
    assert!(in_backoff_window(&o, 1));
    let o = t.pass();
    assert_eq!(o.requeue, NOW);
    assert_eq!(o.wait, None);
}

/// A host restored without `status.hardwareProfile` (an import): BMO's `ensureRegistered` runs
/// `registerHost` on every reconcile, whose `matchProfile` names the profile (spec, libvirt, else
/// `unknown`) before any state's handler, so `updateRootDeviceHints`, which reads the status's
/// profile only, finds one and the host provisions.
#[test]
fn a_host_without_a_hardware_profile_gets_it_from_registration_then_provisions() {
    let mock = Mock::new();
    let mut t = HostTest::standard("host-0")
        .mock(&mock)
        .image("http://images.example/os.qcow2", "abc")
        .registered_in(S::Available)
        .status(|st| st.hardware_profile.clear());
    let o = t.pass();
    assert_eq!(o.error, None);
    assert_eq!(o.events[0].reason, "ProfileSet", "{:?}", o.events);
    assert_eq!(t.st().hardware_profile, "unknown");
    assert_eq!(*t.state(), S::Available);
    t.pass();
    assert_eq!(*t.state(), S::Provisioning);
}
