//! The JSON boundary between bmhctl and a provisioner plugin, on arbitrary bytes, from both
//! sides:
//!
//! * plugin side: a request (`abi::Request`), as the plugin's `call` entry point decodes it,
//!   dispatched to a provisioner (`abi_plugin::dispatch`), plus the plugin configuration and
//!   the host-configure input; a decoded request must encode and decode back to itself;
//! * host side: an answer (`abi::Response`), decoded as every provisioner method's result by
//!   `abi::RemoteProvisioner` (as bmhctl's plugin loader does), plus the log, event and
//!   object-read records and the error and host-requirements buffers a plugin sends.
//!
//! Nothing may panic: a malformed message is an error value.

#![no_main]

use bmhctl_plugin_sdk::abi::{
    CallTransport, EventRecord, HostConfigureInput, HostRequirements, LogRecord, ObjectRequest,
    PluginConfig, ProvisionerCall, RemoteProvisioner, Request, Response,
};
use bmhctl_plugin_sdk::abi_plugin::dispatch;
use bmhctl_plugin_sdk::*;
use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A provisioner answering every call with its default.
struct Stub;

impl Provisioner for Stub {
    fn register(
        &mut self,
        _: &ManagementAccessData,
        _: RegisterOptions,
    ) -> Result<RegisterResult, ProvisionerError> {
        Ok(RegisterResult::default())
    }
    fn inspect_hardware(
        &mut self,
        _: &InspectData,
        _: InspectOptions,
    ) -> Result<InspectResult, ProvisionerError> {
        Ok(InspectResult::default())
    }
    fn update_hardware_state(&mut self) -> Result<HardwareState, ProvisionerError> {
        Ok(HardwareState::default())
    }
    fn adopt(&mut self, _: &AdoptData, _: AdoptOptions) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }
    fn prepare(&mut self, _: &PrepareData, _: StepOptions) -> Result<StepResult, ProvisionerError> {
        Ok(StepResult::default())
    }
    fn service(
        &mut self,
        _: &ServicingData,
        _: StepOptions,
    ) -> Result<StepResult, ProvisionerError> {
        Ok(StepResult::default())
    }
    fn provision(
        &mut self,
        _: &ProvisionData,
        _: ProvisionOptions,
    ) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }
    fn deprovision(&mut self, _: DeprovisionOptions) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }
    fn delete(&mut self) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }
    fn detach(&mut self, _: DetachOptions) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }
    fn power_on(&mut self, _: PowerOnOptions) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }
    fn power_off(&mut self, _: PowerOffOptions) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }
    fn has_capacity(&mut self) -> Result<bool, ProvisionerError> {
        Ok(true)
    }
}

/// Answers every call with the fuzzed bytes, decoded as bmhctl's plugin loader decodes an
/// answer.
struct Replay<'a>(&'a [u8]);

impl CallTransport for Replay<'_> {
    fn call<T: DeserializeOwned>(&self, _: ProvisionerCall) -> Result<T, ProvisionerError> {
        match serde_json::from_slice::<Response>(self.0) {
            Ok(Response::Ok(v)) => serde_json::from_value(v).map_err(ProvisionerError::other),
            Ok(Response::Err(e)) => Err(e),
            Err(e) => Err(ProvisionerError::other(e)),
        }
    }
    fn call_failed(&self, _: &'static str, error: ProvisionerError) {
        let _ = error.to_string();
    }
}

/// Decodes `data` as `T`; a decoded value must survive an encode/decode round trip.
fn round_trip<T: serde::Serialize + DeserializeOwned + std::fmt::Debug>(data: &[u8]) -> Option<T> {
    let v: T = serde_json::from_slice(data).ok()?;
    let text = serde_json::to_vec(&v).expect("a decoded message encodes");
    let back: T = serde_json::from_slice(&text).expect("an encoded message decodes");
    let (a, b) = (
        serde_json::to_value(&v).unwrap(),
        serde_json::to_value(&back).unwrap(),
    );
    assert!(
        same(&a, &b),
        "round trip through {}: {a} became {b}",
        String::from_utf8_lossy(&text)
    );
    Some(v)
}

/// Equal, but for the last bits of floating-point numbers: serde_json (without its
/// `float_roundtrip` feature, as bmhctl builds it) parses a float it printed to the nearest
/// value or a neighbour (`1.111111111111111e+46` reads back as `1.1111111111111109e+46`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            x == y || (x - y).abs() <= 4.0 * f64::EPSILON * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fuzz_target!(|data: &[u8]| {
    // Plugin side.
    if let Some(request) = round_trip::<Request>(data)
        && let Request::Call { call, .. } = request
    {
        let _ = serde_json::to_vec(&dispatch(&mut Stub, call));
    }
    let _ = round_trip::<PluginConfig>(data);
    let _ = round_trip::<HostConfigureInput>(data);

    // Host side.
    let _ = round_trip::<Response>(data);
    let _ = round_trip::<LogRecord>(data);
    let _ = round_trip::<EventRecord>(data);
    let _ = round_trip::<ObjectRequest>(data);
    let _ = round_trip::<ProvisionerError>(data);
    let _ = round_trip::<HostRequirements>(data);
    let _ = round_trip::<DueHosts>(data);
    let mut p = RemoteProvisioner::new(Replay(data));
    let _ = p.register(&Default::default(), Default::default());
    let _ = p.preprovisioning_image_formats();
    let _ = p.inspect_hardware(&Default::default(), Default::default());
    let _ = p.update_hardware_state();
    let _ = p.adopt(&Default::default(), Default::default());
    let _ = p.prepare(&Default::default(), Default::default());
    let _ = p.service(&Default::default(), Default::default());
    let _ = p.provision(&Default::default(), Default::default());
    let _ = p.deprovision(Default::default());
    let _ = p.delete();
    let _ = p.detach(Default::default());
    let _ = p.power_on(Default::default());
    let _ = p.power_off(Default::default());
    let _ = p.has_capacity();
    let _ = p.get_firmware_settings(Default::default());
    let _ = p.get_firmware_components();
    let _ = p.add_bmc_event_subscription(&serde_json::Value::Null, &[]);
    let _ = p.remove_bmc_event_subscription(&serde_json::Value::Null);
    let _ = p.get_data_image_status();
    let _ = p.attach_data_image("http://example.com/data.iso");
    let _ = p.detach_data_image();
    let _ = p.has_power_failure();
    let _ = p.get_health();
    let _ = p.persistent_state();
});
