//! BMC event subscriptions through the Redfish vendor passthru, against the fake Ironic (the
//! lab's sushy-tools serves no EventService: see docs/ironic.md). The fake keeps the
//! subscriptions it was asked to make, as Ironic's redfish driver asks the BMC to.

use super::*;
use bmh_api::{BmcEventSubscription, BmcEventSubscriptionStatus};
use std::collections::BTreeMap;

/// The fake's answer to `vendor_passthru?method=...`: Ironic's redfish vendor interface makes
/// the subscription and answers the BMC's document, with its `Id`.
pub(super) fn passthru(
    subs: &mut Vec<Value>,
    http_method: &str,
    method: Option<&str>,
    body: &Value,
) -> (u16, String) {
    match (http_method, method) {
        ("POST", Some("create_subscription")) => {
            let made = json!({
                "Id": format!("sub-{}", subs.len() + 1),
                "Destination": body["Destination"],
                "Context": body["Context"],
                "Protocol": "Redfish",
                "EventTypes": ["Alert"],
            });
            subs.push(json!({"made": made, "headers": body["HttpHeaders"]}));
            (200, made.to_string())
        }
        ("DELETE", Some("delete_subscription")) => {
            let before = subs.len();
            subs.retain(|s| s["made"]["Id"] != body["id"]);
            if subs.len() == before {
                (
                    404,
                    error_body(&format!("Subscription {} could not be found.", body["id"])),
                )
            } else {
                (204, String::new())
            }
        }
        _ => (400, error_body("unknown vendor method")),
    }
}

fn subscription() -> BmcEventSubscription {
    let mut s = BmcEventSubscription::default();
    s.metadata.name = "worker-0-events".into();
    s.spec.host_name = "worker-0".into();
    s.spec.destination = "https://events.example/hook".into();
    s.spec.context = "rack-7".into();
    s
}

// BMO's AddBMCEventSubscriptionForNode / RemoveBMCEventSubscriptionForNode.
#[test]
fn a_subscription_is_made_with_redfish_keys_and_removed_by_its_id() {
    let fake = FakeIronic::start();
    fake.node_in("active", json!({}));
    let shared = fake.shared();
    let mut p = prov(&shared);
    let headers = [BTreeMap::from([(
        "Authorization".to_string(),
        "Bearer s3cret".to_string(),
    )])];
    let mark = fake.mark();
    let id = p
        .create_bmc_event_subscription(&subscription(), &headers)
        .unwrap();
    assert_eq!(id.as_deref(), Some("sub-1"));
    let sent = fake.bodies_since(
        mark,
        "POST",
        &format!("/v1/nodes/{UUID}/vendor_passthru?method=create_subscription"),
    );
    assert_eq!(
        sent,
        [json!({
            "Destination": "https://events.example/hook",
            "Context": "rack-7",
            "HttpHeaders": [{"Authorization": "Bearer s3cret"}],
        })]
    );
    assert_eq!(fake.state.lock().unwrap().subscriptions.len(), 1);

    let mut made = subscription();
    made.status = Some(BmcEventSubscriptionStatus {
        subscription_id: "sub-1".into(),
        ..Default::default()
    });
    let mark = fake.mark();
    assert_eq!(p.delete_bmc_event_subscription(&made), Ok(true));
    let sent = fake.bodies_since(
        mark,
        "DELETE",
        &format!("/v1/nodes/{UUID}/vendor_passthru?method=delete_subscription"),
    );
    assert_eq!(sent, [json!({"id": "sub-1"})]);
    assert!(fake.state.lock().unwrap().subscriptions.is_empty());
    // One the BMC no longer has is removed already.
    assert_eq!(p.delete_bmc_event_subscription(&made), Ok(true));
}

#[test]
fn a_refused_subscription_is_an_error_naming_ironic_s_reason() {
    let fake = FakeIronic::start();
    fake.node_in("active", json!({}));
    fake.fail(
        "POST",
        &format!("nodes/{UUID}/vendor_passthru"),
        400,
        "The BMC does not support EventService",
    );
    let mut p = prov(&fake.shared());
    let err = p
        .create_bmc_event_subscription(&subscription(), &[])
        .unwrap_err();
    assert!(
        err.to_string().contains("does not support EventService"),
        "{err}"
    );
}

#[test]
fn an_unregistered_host_needs_registration_first() {
    let fake = FakeIronic::start();
    let (mut p, _) = prov_for(&fake.shared(), host_data("", false));
    let mark = fake.mark();
    assert_eq!(
        p.create_bmc_event_subscription(&subscription(), &[]),
        Err(ProvisionerError::NeedsRegistration)
    );
    assert_eq!(
        fake.since(mark),
        Vec::<String>::new(),
        "nothing asked of Ironic"
    );
}
