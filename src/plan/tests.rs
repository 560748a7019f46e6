//! Plans of hosts built as the state machine's tests build them, against the fixture.

use super::*;
use crate::machine::tests::harness::{HostTest, IMAGE_SUM, IMAGE_URL};
use bmh_api::ProvisioningState as S;

fn planner(t: &HostTest) -> Planner<'_> {
    Planner {
        objects: &t.secrets,
        machine: &t.config,
        fixture: false,
    }
}

fn texts(p: &HostPlan) -> Vec<(&str, bool)> {
    p.steps
        .iter()
        .map(|s| (s.text.as_str(), s.destructive))
        .collect()
}

#[test]
fn a_new_host_registers_inspects_deploys_and_powers_on() {
    let t = HostTest::standard("host-0")
        .spec(|s| s.automated_cleaning_mode = bmh_api::AutomatedCleaningMode::Disabled);
    let p = planner(&t).plan(&t.rec, Goal::for_provision(&t.rec), Live::NotAsked);
    assert!(p.reaches, "{p:?}");
    assert_eq!(
        p.path,
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
    assert_eq!(
        texts(&p),
        [
            ("register BMC", false),
            ("inspect hardware", false),
            (&*format!("deploy image {IMAGE_URL}"), true),
            ("power on", false),
        ]
    );
    // Writing the image overwrites the disk.
    assert!(p.destructive());
    // The host itself is untouched.
    assert!(t.rec.host.status.is_none());
}

#[test]
fn the_first_deploy_cleans_the_disks_unless_cleaning_is_disabled() {
    let t = HostTest::standard("host-0");
    let p = planner(&t).plan(&t.rec, Goal::for_provision(&t.rec), Live::NotAsked);
    assert_eq!(
        texts(&p),
        [
            ("register BMC", false),
            ("inspect hardware", false),
            ("clean disks (automated cleaning, if not done yet)", true),
            (&*format!("deploy image {IMAGE_URL}"), true),
            ("power on", false),
        ]
    );
    let t = HostTest::standard("host-0")
        .spec(|s| s.automated_cleaning_mode = bmh_api::AutomatedCleaningMode::Disabled);
    let p = planner(&t).plan(&t.rec, Goal::for_provision(&t.rec), Live::NotAsked);
    assert!(p.steps.iter().all(|s| s.kind != "clean"), "{p:?}");
}

#[test]
fn a_live_iso_writes_no_disk_and_a_custom_deploy_may() {
    let t = HostTest::standard("host-0").spec(|s| {
        s.automated_cleaning_mode = bmh_api::AutomatedCleaningMode::Disabled;
        s.image = Some(bmh_api::Image {
            url: "http://example.test/live.iso".into(),
            format: "live-iso".into(),
            ..Default::default()
        });
    });
    let p = planner(&t).plan(&t.rec, Goal::for_provision(&t.rec), Live::NotAsked);
    assert!(p.reaches, "{p:?}");
    assert!(!p.destructive(), "{p:?}");
    assert!(
        texts(&p).contains(&("boot live ISO http://example.test/live.iso", false)),
        "{p:?}"
    );
    let t = HostTest::standard("host-0").spec(|s| {
        s.automated_cleaning_mode = bmh_api::AutomatedCleaningMode::Disabled;
        s.image = None;
        s.custom_deploy = Some(bmh_api::CustomDeploy {
            method: "install-coreos".into(),
        });
    });
    let p = planner(&t).plan(&t.rec, Goal::for_provision(&t.rec), Live::NotAsked);
    assert!(
        texts(&p).contains(&("custom deploy install-coreos", true)),
        "{p:?}"
    );
}

#[test]
fn a_deprovision_without_cleaning_erases_nothing() {
    let mut t = HostTest::standard("host-0")
        .spec(|s| s.automated_cleaning_mode = bmh_api::AutomatedCleaningMode::Disabled)
        .provisioned();
    t.edit_spec(|s| s.image = None);
    let p = planner(&t).plan(&t.rec, Goal::State(S::Available), Live::NotAsked);
    assert!(p.reaches, "{p:?}");
    assert_eq!(texts(&p), [("deprovision (no disk cleaning)", false)]);
}

#[test]
fn an_image_change_on_a_provisioned_host_deprovisions_first() {
    let mut t = HostTest::standard("host-0").provisioned();
    t.edit_spec(|s| {
        s.image = Some(crate::machine::tests::harness::image(
            "http://example.test/v2.qcow2",
            IMAGE_SUM,
        ))
    });
    let before = t.rec.clone();
    let p = planner(&t).plan(&t.rec, Goal::for_provision(&t.rec), Live::NotAsked);
    assert!(p.reaches, "{p:?}");
    assert_eq!(
        p.path,
        [
            S::Provisioned,
            S::Deprovisioning,
            S::Available,
            S::Provisioning,
            S::Provisioned
        ]
    );
    assert_eq!(
        texts(&p),
        [
            ("deprovision and clean disks", true),
            ("deploy image http://example.test/v2.qcow2", true),
        ]
    );
    assert!(p.destructive());
    assert_eq!(t.rec, before, "the record must not change");
}

#[test]
fn a_provisioned_host_at_its_goal_does_nothing() {
    let t = HostTest::standard("host-0").provisioned();
    let p = planner(&t).plan(&t.rec, Goal::for_provision(&t.rec), Live::NotAsked);
    assert!(p.reaches);
    assert_eq!(p.path, [S::Provisioned]);
    assert!(p.steps.is_empty(), "{p:?}");
}

#[test]
fn the_live_node_decides_power_and_a_missing_node_registers_again() {
    let t = HostTest::standard("host-0").provisioned();
    let off = Live::Node {
        powered_on: Some(false),
    };
    let p = planner(&t).plan(&t.rec, Goal::for_provision(&t.rec), off);
    assert_eq!(texts(&p), [("power on", false)]);
    let p = planner(&t).plan(&t.rec, Goal::for_provision(&t.rec), Live::NoNode);
    assert_eq!(p.steps[0].text, "register BMC", "{p:?}");
}

#[test]
fn delete_of_a_provisioned_host_deprovisions_powers_off_and_removes_it() {
    let mut t = HostTest::standard("host-0").provisioned();
    t.mark_deleted();
    let p = planner(&t).plan(&t.rec, Goal::Deleted, Live::NotAsked);
    assert!(p.reaches && p.deleted, "{p:?}");
    assert_eq!(
        p.path,
        [
            S::Provisioned,
            S::Deprovisioning,
            S::PoweringOffBeforeDelete,
            S::Deleting
        ]
    );
    assert_eq!(
        texts(&p),
        [
            ("deprovision and clean disks", true),
            ("power off", false),
            ("remove from the provisioner", true),
        ]
    );
}

#[test]
fn a_host_whose_secret_is_missing_stops_with_the_reason() {
    let t = HostTest::new("host-0")
        .bmc(crate::machine::tests::harness::BMC, "nope")
        .online(true);
    let p = planner(&t).plan(&t.rec, Goal::for_provision(&t.rec), Live::NotAsked);
    assert!(!p.reaches);
    assert!(p.stops.contains("nope"), "{}", p.stops);
}

#[test]
fn a_raid_change_is_destructive_and_firmware_settings_alone_are_not() {
    let raid = bmh_api::RaidConfig {
        hardware_raid_volumes: Some(vec![bmh_api::HardwareRaidVolume {
            level: "1".into(),
            ..Default::default()
        }]),
        software_raid_volumes: None,
    };
    let t = HostTest::standard("host-0")
        .spec(|s| {
            s.image = None;
            s.raid = Some(Box::new(raid));
        })
        .registered_in(S::Available)
        .firmware_settings(serde_json::json!({"ProcVirtualization": "Disabled"}));
    let p = planner(&t).plan(&t.rec, Goal::for_provision(&t.rec), Live::NotAsked);
    assert!(p.reaches, "{p:?}");
    assert_eq!(p.path, [S::Available, S::Preparing, S::Available]);
    assert_eq!(
        texts(&p),
        [
            ("apply RAID, apply firmware settings", true),
            ("power on", false)
        ],
        "{p:?}"
    );
    assert_eq!(p.steps[0].kind, "prepare");
    let t = HostTest::standard("host-0")
        .spec(|s| s.image = None)
        .registered_in(S::Available)
        .firmware_settings(serde_json::json!({"ProcVirtualization": "Disabled"}));
    let p = planner(&t).plan(&t.rec, Goal::for_provision(&t.rec), Live::NotAsked);
    assert_eq!(
        texts(&p),
        [("apply firmware settings", false), ("power on", false)],
        "{p:?}"
    );
}

#[test]
fn the_recording_provisioner_forwards_and_notes_the_subscription_calls() {
    use bmhctl_plugin_sdk::{HostData, ProvisionerFactory};
    let steps = Steps::default();
    let factory = RecordingFactory {
        inner: crate::provisioners::fixture::Fixture::new(),
        steps: steps.clone(),
    };
    let host = HostData {
        key: ObjectKey::new("default", "host-0"),
        ..HostData::default()
    };
    let mut p = factory
        .new_provisioner(host, std::sync::Arc::new(|_| {}))
        .unwrap();
    let mut sub = bmh_api::BmcEventSubscription::default();
    sub.metadata.name = "sub".into();
    sub.spec.destination = "https://events.example/".into();
    let id = p.create_bmc_event_subscription(&sub, &[]).unwrap();
    assert_eq!(
        id.as_deref(),
        Some("fixture-default-sub"),
        "the fixture's ID"
    );
    sub.status = Some(bmh_api::BmcEventSubscriptionStatus {
        subscription_id: id.unwrap(),
        ..Default::default()
    });
    assert!(p.delete_bmc_event_subscription(&sub).unwrap());
    let noted: Vec<String> = steps
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.text.clone())
        .collect();
    assert_eq!(
        noted,
        [
            "subscribe https://events.example/ to BMC events",
            "remove the BMC event subscription of https://events.example/",
        ]
    );
}
