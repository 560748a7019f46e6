//! Pins the JSON that crosses the C ABI (ABI version 1): every [`ProvisionerCall`] and the answer
//! of every call. Plugins built against an older SDK send and expect exactly these shapes, so a
//! change here breaks them; such a change needs a new ABI version, not an edit of this test.

use bmhctl_plugin_sdk::abi::{ProvisionerCall, Request, Response};
use bmhctl_plugin_sdk::serde_json::{self, Value, json};
use bmhctl_plugin_sdk::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

fn value<T: Serialize>(t: T) -> Value {
    serde_json::to_value(t).unwrap()
}

/// `text` decodes as `T` and encodes back to exactly `text` (names, order and nesting).
fn round_trips<T: Serialize + DeserializeOwned>(text: &str) -> T {
    let decoded: T = serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert_eq!(serde_json::to_string(&decoded).unwrap(), text);
    decoded
}

fn op() -> Value {
    json!({"dirty": true, "requeue_after": {"secs": 10, "nanos": 0}, "error_message": "e"})
}

/// One JSON message per call, with every flag set to a distinct value where there are several.
fn calls() -> Vec<Value> {
    vec![
        json!({"method": "register", "data": value(ManagementAccessData::default()),
               "credentials_changed": true, "restart_on_failure": false}),
        json!({"method": "preprovisioning_image_formats"}),
        json!({"method": "inspect_hardware", "data": value(InspectData::default()),
               "restart_on_failure": true, "refresh": false, "force_reboot": true}),
        json!({"method": "update_hardware_state"}),
        json!({"method": "adopt", "data": value(AdoptData::default()), "restart_on_failure": true}),
        json!({"method": "prepare", "data": value(PrepareData::default()),
               "unprepared": true, "restart_on_failure": false}),
        json!({"method": "service", "data": value(ServicingData::default()),
               "unprepared": false, "restart_on_failure": true}),
        json!({"method": "provision", "data": value(ProvisionData::default()), "force_reboot": true}),
        json!({"method": "deprovision", "restart_on_failure": true,
               "automated_cleaning_mode": "disabled"}),
        json!({"method": "delete"}),
        json!({"method": "detach", "force": true}),
        json!({"method": "power_on", "force": true}),
        json!({"method": "power_off", "mode": "soft", "force": true,
               "automated_cleaning_mode": "metadata"}),
        json!({"method": "has_capacity"}),
        json!({"method": "get_firmware_settings", "include_schema": true}),
        json!({"method": "get_firmware_components"}),
        json!({"method": "add_bmc_event_subscription", "subscription": {"destination": "d"},
               "http_headers": [{"k": "v"}]}),
        json!({"method": "remove_bmc_event_subscription", "subscription": {"id": "s"}}),
        json!({"method": "create_bmc_event_subscription",
               "subscription": {"apiVersion": "metal3.io/v1alpha1",
                   "kind": "BMCEventSubscription", "metadata": {"name": "s"},
                   "spec": {"hostName": "h", "destination": "https://x/"}},
               "http_headers": [{"k": "v"}]}),
        json!({"method": "delete_bmc_event_subscription",
               "subscription": {"apiVersion": "metal3.io/v1alpha1",
                   "kind": "BMCEventSubscription", "metadata": {"name": "s"},
                   "spec": {"hostName": "h", "destination": "https://x/"},
                   "status": {"subscriptionID": "id-1"}}}),
        json!({"method": "get_data_image_status"}),
        json!({"method": "attach_data_image", "url": "http://x/iso"}),
        json!({"method": "detach_data_image"}),
        json!({"method": "has_power_failure"}),
        json!({"method": "get_health"}),
        json!({"method": "persistent_state"}),
    ]
}

#[test]
fn every_call_and_answer_keeps_its_abi_v1_json() {
    let mut methods = Vec::new();
    for call in calls() {
        let text = serde_json::to_string(&call).unwrap();
        let decoded: ProvisionerCall = round_trips(&text);
        // A call added to the declaration without a pin here fails to compile.
        let (method, answer) = answer_of(&decoded);
        assert_eq!(call["method"], method, "{text}");
        methods.push(method);
        let answer = serde_json::to_string(&answer).unwrap();
        assert_eq!(
            serde_json::to_string(&Response::Ok(serde_json::from_str(&answer).unwrap())).unwrap(),
            format!(r#"{{"ok":{answer}}}"#)
        );
    }
    let unique: std::collections::BTreeSet<_> = methods.iter().collect();
    assert_eq!(unique.len(), 26, "every call is pinned once: {methods:?}");

    // The framing around a call.
    round_trips::<Request>(r#"{"op":"call","id":7,"call":{"method":"delete"}}"#);
    round_trips::<Request>(r#"{"op":"drop_provisioner","id":7}"#);
    let host = serde_json::to_string(&HostData::default()).unwrap();
    round_trips::<Request>(&format!(
        r#"{{"op":"new_provisioner","id":7,"host":{host}}}"#
    ));
    // SDK 0.2: the factory's optional question, and its two answers.
    round_trips::<Request>(
        r#"{"op":"due_hosts","waiting":[{"host":{"namespace":"ns","name":"h"},"provisioner_id":"u1","on":"progress"},{"host":{"namespace":"ns","name":"d"},"provisioner_id":"","on":"capacity"}]}"#,
    );
    let due: Option<DueHosts> =
        round_trips(r#"{"due":[0],"ask_again_after":{"secs":1,"nanos":0}}"#);
    assert_eq!(due.unwrap().due, vec![0]);
    assert_eq!(round_trips::<Option<DueHosts>>("null"), None);
    round_trips::<Response>(r#"{"ok":null}"#);
    round_trips::<Response>(r#"{"err":"NodeIsBusy"}"#);
    round_trips::<Response>(r#"{"err":{"Other":"boom"}}"#);
}

/// The method name of `call` and its answer's JSON, decoded as the call's answer type and
/// encoded again.
fn answer_of(call: &ProvisionerCall) -> (&'static str, Value) {
    use ProvisionerCall as C;
    let op = op();
    let pin = |method, text: Value| (method, text);
    match call {
        C::Register { .. } => pin("register", answer::<RegisterResult>(json!([op, "id-1"]))),
        C::PreprovisioningImageFormats => pin(
            "preprovisioning_image_formats",
            answer::<Option<Vec<ImageFormat>>>(json!(["iso", "initrd"])),
        ),
        C::InspectHardware { .. } => pin(
            "inspect_hardware",
            answer::<InspectResult>(json!([op, true, {"ramMebibytes": 1024}])),
        ),
        C::UpdateHardwareState => pin(
            "update_hardware_state",
            answer::<HardwareState>(json!({"powered_on": true})),
        ),
        C::Adopt { .. } => pin("adopt", answer::<OpResult>(op)),
        C::Prepare { .. } => pin("prepare", answer::<StepResult>(json!([op, true]))),
        C::Service { .. } => pin("service", answer::<StepResult>(json!([op, false]))),
        C::Provision { .. } => pin("provision", answer::<OpResult>(op)),
        C::Deprovision { .. } => pin("deprovision", answer::<OpResult>(op)),
        C::Delete => pin("delete", answer::<OpResult>(op)),
        C::Detach { .. } => pin("detach", answer::<OpResult>(op)),
        C::PowerOn { .. } => pin("power_on", answer::<OpResult>(op)),
        C::PowerOff { .. } => pin("power_off", answer::<OpResult>(op)),
        C::HasCapacity => pin("has_capacity", answer::<bool>(json!(true))),
        C::GetFirmwareSettings { .. } => pin(
            "get_firmware_settings",
            answer::<FirmwareSettings>(json!({
                "settings": {"BootMode": "UEFI"},
                "schema": {"BootMode": {"attributeType": "Enumeration",
                    "allowableValues": ["UEFI"], "lowerBound": null, "upperBound": null,
                    "minLength": null, "maxLength": null, "readOnly": false, "unique": null}}
            })),
        ),
        C::GetFirmwareComponents => pin(
            "get_firmware_components",
            answer::<Vec<FirmwareComponentStatus>>(json!([{"component": "bios",
                "initialVersion": "1", "currentVersion": "2", "lastVersionFlashed": "2",
                "updatedAt": "t"}])),
        ),
        C::AddBmcEventSubscription { .. } => {
            pin("add_bmc_event_subscription", answer::<OpResult>(op))
        }
        C::RemoveBmcEventSubscription { .. } => {
            pin("remove_bmc_event_subscription", answer::<OpResult>(op))
        }
        C::CreateBmcEventSubscription { .. } => pin(
            "create_bmc_event_subscription",
            answer::<Option<String>>(json!("id-1")),
        ),
        C::DeleteBmcEventSubscription { .. } => {
            pin("delete_bmc_event_subscription", answer::<bool>(json!(true)))
        }
        C::GetDataImageStatus => pin("get_data_image_status", answer::<bool>(json!(true))),
        C::AttachDataImage { .. } => pin("attach_data_image", answer::<()>(json!(null))),
        C::DetachDataImage => pin("detach_data_image", answer::<()>(json!(null))),
        C::HasPowerFailure => pin("has_power_failure", answer::<bool>(json!(true))),
        C::GetHealth => pin("get_health", answer::<String>(json!("OK"))),
        C::PersistentState => pin(
            "persistent_state",
            answer::<Option<Value>>(json!({"counter": 1})),
        ),
    }
}

/// `json` round-trips through the answer type `T`.
fn answer<T: Serialize + DeserializeOwned>(json: Value) -> Value {
    let text = serde_json::to_string(&json).unwrap();
    round_trips::<T>(&text);
    json
}
