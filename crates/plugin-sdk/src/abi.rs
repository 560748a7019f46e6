//! The C ABI between bmhctl and a provisioner plugin (ABI version [`ABI_VERSION`](crate::ABI_VERSION)).
//!
//! A plugin exports one `static` [`PluginDeclaration`] as [`DECLARATION_SYMBOL`]; the rest
//! crosses as JSON, buffers are freed by the plugin, and panics never cross the boundary.

use crate::calls::{self, call_enum};
use crate::factory_calls::{self, request_enum};
use crate::{
    AdoptData, AdoptOptions, DeprovisionOptions, DetachOptions, Event, FirmwareComponentStatus,
    FirmwareSettings, FirmwareSettingsOptions, HardwareState, HostData, ImageFormat, InspectData,
    InspectOptions, InspectResult, ManagementAccessData, OpResult, PowerOffOptions, PowerOnOptions,
    PrepareData, ProvisionData, ProvisionOptions, Provisioner, ProvisionerError,
    ProvisionerFactory, RegisterOptions, RegisterResult, ServicingData, StepOptions, StepResult,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::ffi::{c_char, c_void};

/// The name of the one symbol a plugin exports.
pub const DECLARATION_SYMBOL: &str = "BMHCTL_PROVISIONER_PLUGIN";

/// [`DECLARATION_SYMBOL`], NUL-terminated, for `dlsym`.
pub const DECLARATION_SYMBOL_NUL: &[u8] = b"BMHCTL_PROVISIONER_PLUGIN\0";

/// [`SDK_VERSION`](crate::SDK_VERSION), NUL-terminated, for [`PluginDeclaration::sdk_version`].
pub const SDK_VERSION_NUL: &std::ffi::CStr = match std::ffi::CStr::from_bytes_with_nul(
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes(),
) {
    Ok(s) => s,
    Err(_) => panic!("SDK version contains a NUL byte"),
};

/// The call succeeded (the output buffer holds the documented JSON).
pub const STATUS_OK: i32 = 0;
/// The call failed (the output buffer holds an error).
pub const STATUS_ERROR: i32 = 1;

/// Host features a plugin may ask about (BMO's `HostFeature`).
pub const FEATURE_PREPROVISIONING_IMAGE: &str = "PreprovisioningImage";

/// The host will ask [`Request::DueHosts`] (without it, BMO's requeue times apply).
pub const FEATURE_DUE_HOSTS: &str = "DueHosts";

/// The host will ask [`Request::ReadyHosts`] before starting passes.
pub const FEATURE_READY_HOSTS: &str = "ReadyHosts";

/// A byte buffer allocated by the plugin; the host frees it with [`PluginDeclaration::free_buffer`].
#[repr(C)]
#[derive(Debug)]
pub struct PluginBuffer {
    /// The first byte, set by the plugin; may be null when the buffer is empty.
    pub ptr: *mut u8,
    /// The number of bytes, set by the plugin.
    pub len: usize,
}

impl PluginBuffer {
    /// An empty buffer (null, no bytes), for the plugin to fill or leave empty.
    pub const fn empty() -> Self {
        Self {
            ptr: std::ptr::null_mut(),
            len: 0,
        }
    }

    /// Leaks `bytes` into a buffer (plugin side); [`free_buffer`] takes it back.
    pub fn from_vec(bytes: Vec<u8>) -> Self {
        let boxed = bytes.into_boxed_slice();
        let len = boxed.len();
        let ptr = Box::into_raw(boxed) as *mut u8;
        Self { ptr, len }
    }

    /// The bytes of the buffer (host side).
    /// # Safety
    /// `ptr`/`len` must describe a live allocation (or `ptr` be null).
    pub unsafe fn as_slice(&self) -> &[u8] {
        if self.ptr.is_null() {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }
    }
}

/// Frees a buffer made by [`PluginBuffer::from_vec`] in the same library (plugin side).
/// # Safety
/// `ptr`/`len` must come from `PluginBuffer::from_vec` of this library, and be freed once.
pub unsafe fn free_buffer(ptr: *mut u8, len: usize) {
    if !ptr.is_null() {
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) });
    }
}

/// A host callback that receives JSON (a [`LogRecord`] or an [`EventRecord`]).
pub type JsonFn = unsafe extern "C" fn(ctx: *mut c_void, json: *const u8, len: usize);

/// Appends bytes to a caller-owned output (`out`); used to return data without sharing allocators.
pub type WriteFn = unsafe extern "C" fn(out: *mut c_void, data: *const u8, len: usize);

/// Reads an object ([`ObjectRequest`] in): writes its JSON (or `null`) and returns [`STATUS_OK`].
pub type ReadObjectFn = unsafe extern "C" fn(
    ctx: *mut c_void,
    request: *const u8,
    len: usize,
    out: *mut c_void,
    write: WriteFn,
) -> i32;

/// What the host offers the plugin: thread-safe callbacks, null when not offered.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HostCallbacks {
    /// The host's opaque context, passed back by the plugin as the first argument of every callback.
    pub ctx: *mut c_void,
    /// Where the plugin sends its [`LogRecord`]s; null when the host takes no logs.
    pub log: Option<JsonFn>,
    /// Where the plugin sends its [`EventRecord`]s; null when the host takes no events.
    pub event: Option<JsonFn>,
    /// How the plugin reads objects (Secrets and the kinds of [`HostRequirements`]) from the host.
    pub read_object: Option<ReadObjectFn>,
}

// SAFETY: the ABI requires the host's callbacks and their context to be thread-safe.
unsafe impl Send for HostCallbacks {}
unsafe impl Sync for HostCallbacks {}

/// Makes the plugin's factory from a JSON [`PluginConfig`], or null and an error in `error_out`.
pub type CreateFactoryFn = unsafe extern "C" fn(
    config: *const u8,
    len: usize,
    callbacks: *const HostCallbacks,
    error_out: *mut PluginBuffer,
) -> *mut c_void;

/// The optional host-configure step: [`HostConfigureInput`] in, [`HostRequirements`] out.
pub type HostConfigureFn =
    unsafe extern "C" fn(input: *const u8, len: usize, out: *mut PluginBuffer) -> i32;

/// Sends one JSON [`Request`] to a factory: [`STATUS_OK`] and a JSON [`Response`] in `out`.
pub type CallFn = unsafe extern "C" fn(
    factory: *mut c_void,
    request: *const u8,
    len: usize,
    out: *mut PluginBuffer,
) -> i32;

/// Frees a buffer the plugin filled; called by the host once it has read it.
pub type FreeBufferFn = unsafe extern "C" fn(ptr: *mut u8, len: usize);

/// The one exported symbol of a plugin. Keep `abi_version` first in every ABI version.
#[repr(C)]
#[derive(Debug)]
pub struct PluginDeclaration {
    /// The ABI version the plugin was built for; read first, and alone unless it matches.
    pub abi_version: u32,
    /// The plugin's SDK version ([`SDK_VERSION_NUL`]), a NUL-terminated string.
    pub sdk_version: *const c_char,
    /// The plugin's name, a NUL-terminated string; the host checks it against the expected name.
    pub name: *const c_char,
    /// The plugin's factory constructor.
    pub create_factory: CreateFactoryFn,
    /// The plugin's host-configure step, `None` when it has none.
    pub host_configure: Option<HostConfigureFn>,
    /// The plugin's entry for every [`Request`] to a factory.
    pub call: CallFn,
    /// The plugin's [`FreeBufferFn`], for every buffer it fills.
    pub free_buffer: FreeBufferFn,
}

// SAFETY: the declaration is immutable and its pointers point at static, immutable strings.
unsafe impl Sync for PluginDeclaration {}

/// What the host hands to the factory constructor (BMO's `PluginConfig`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginConfig {
    /// The plugin's name; the plugin's logger is named after it.
    pub name: String,
    /// Host features (e.g. [`FEATURE_PREPROVISIONING_IMAGE`]).
    #[serde(default)]
    pub features: Vec<String>,
    /// The namespace the provisioner works in (BMO's `ProvisionerNamespace`).
    #[serde(default)]
    pub default_namespace: String,
    /// Variables the host sets for the plugin, looked up before the process environment.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub environment: std::collections::BTreeMap<String, String>,
}

impl PluginConfig {
    /// Whether the host offers `feature` (one of the `FEATURE_*` names).
    pub fn has_feature(&self, feature: &str) -> bool {
        self.features.iter().any(|f| f == feature)
    }
}

/// What the host hands to the optional host-configure step.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostConfigureInput {
    /// Host features (e.g. [`FEATURE_PREPROVISIONING_IMAGE`]), set by the host.
    pub features: Vec<String>,
    /// The namespace the provisioner works in, set by the host.
    pub default_namespace: String,
}

/// An object kind, e.g. `ironic.metal3.io/v1alpha1` `Ironic`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectKind {
    /// The kind's API group and version (e.g. `ironic.metal3.io/v1alpha1`).
    pub api_version: String,
    /// The kind's name (e.g. `Ironic`).
    pub kind: String,
}

/// What host configure asks of the host (BMO's `HostRequirements`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostRequirements {
    /// Extra object kinds the host keeps from the user's files and answers by `read_object`.
    pub object_kinds: Vec<ObjectKind>,
    /// The namespace to keep `object_kinds` from; `None` or empty: every namespace.
    pub namespace: Option<String>,
}

/// An object read through [`HostCallbacks::read_object`] (a Secret's data comes base64-encoded).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRequest {
    /// The object's API group and version (e.g. `v1`), set by the plugin.
    pub api_version: String,
    /// The object's kind (e.g. `Secret`), set by the plugin.
    pub kind: String,
    /// Empty: the plugin's default namespace.
    pub namespace: String,
    /// The object's name, set by the plugin.
    pub name: String,
}

/// The level of a plugin's [`LogRecord`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// An error.
    Error,
    /// A warning.
    Warn,
    /// Information.
    Info,
    /// Debugging detail.
    Debug,
    /// Finer debugging detail.
    Trace,
}

/// A log line sent through [`HostCallbacks::log`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogRecord {
    /// The line's level, set by the plugin.
    pub level: LogLevel,
    /// The logger's name (the plugin's name, or a child of it).
    pub logger: String,
    /// The line itself.
    pub message: String,
}

/// An event sent through [`HostCallbacks::event`] by the provisioner with handle `provisioner`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventRecord {
    /// The handle of the provisioner the event is about (the `id` the host gave it).
    pub provisioner: u64,
    /// The event.
    pub event: Event,
}

factory_calls::factory_calls!(request_enum {
    /// A call through [`CallFn`]; the answer is the call's `Ok` value as JSON.
    // Short-lived messages, made once per call: boxing the big variants would buy nothing.
    #[allow(clippy::large_enum_variant)]
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "op", rename_all = "snake_case")]
    pub enum Request
} {
    /// `ProvisionerFactory::new_provisioner`, under the handle `id` the host picks. Answer: `null`.
    NewProvisioner {
        /// The new provisioner's handle, picked by the host.
        id: u64,
        /// What the provisioner knows of its host, set by the host.
        host: HostData,
    },
    /// A [`Provisioner`] method of the provisioner `id`.
    Call {
        /// The handle of the provisioner to call, as given in [`Request::NewProvisioner`].
        id: u64,
        /// The method and its arguments.
        call: ProvisionerCall,
    },
    /// The host is done with provisioner `id`. Answer: `null`.
    DropProvisioner {
        /// The handle of the provisioner to drop.
        id: u64,
    },
});

calls::provisioner_calls!(call_enum {
    /// One [`Provisioner`] method and its arguments, as `{"method": "<name>", <arg>: <value>, ..}`.
    #[allow(clippy::large_enum_variant)]
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "method", rename_all = "snake_case")]
    pub enum ProvisionerCall
});

/// How a [`RemoteProvisioner`] reaches its provisioner (the host side of [`CallFn`]).
pub trait CallTransport: Send {
    /// Sends `call` and decodes the `Ok` answer as `T`.
    fn call<T: DeserializeOwned>(&self, call: ProvisionerCall) -> Result<T, ProvisionerError>;

    /// `method`, one that cannot return an error, failed: the caller gets its default answer.
    fn call_failed(&self, method: &'static str, error: ProvisionerError);
}

/// A [`Provisioner`] in a plugin: every method is sent as a [`ProvisionerCall`] through `T`.
#[derive(Debug)]
pub struct RemoteProvisioner<T> {
    transport: T,
}

impl<T: CallTransport> RemoteProvisioner<T> {
    /// A proxy that sends every call through `transport`.
    pub fn new(transport: T) -> Self {
        Self { transport }
    }

    /// The transport the calls go through.
    pub fn transport(&self) -> &T {
        &self.transport
    }
}

/// How a [`RemoteFactory`] reaches its factory (the host side of [`CallFn`]).
pub trait FactoryTransport: Send + Sync {
    /// Makes a provisioner in the factory ([`Request::NewProvisioner`]) and its proxy.
    fn new_provisioner(
        &self,
        host: HostData,
        events: crate::EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError>;

    /// Whether the factory answers the calls of SDK minor `since_minor` on (others are never sent).
    fn answers(&self, since_minor: u64) -> bool;

    /// Sends `request` and decodes the `Ok` answer as `T`.
    fn request<T: DeserializeOwned>(&self, request: Request) -> Result<T, ProvisionerError>;
}

/// A [`ProvisionerFactory`] in a plugin: every call is sent as a [`Request`] through `T`.
#[derive(Clone)]
pub struct RemoteFactory<T> {
    transport: T,
}

// The transport says which factory it reaches; the wrapper adds nothing to read.
impl<T: std::fmt::Debug> std::fmt::Debug for RemoteFactory<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.transport.fmt(f)
    }
}

impl<T: FactoryTransport> RemoteFactory<T> {
    /// A proxy that sends every call through `transport`.
    pub fn new(transport: T) -> Self {
        Self { transport }
    }

    /// The transport the calls go through.
    pub fn transport(&self) -> &T {
        &self.transport
    }
}

/// The answer to a [`Request`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Response {
    /// The call succeeded: its `Ok` value as JSON.
    Ok(serde_json::Value),
    /// The call failed with this error.
    Err(ProvisionerError),
}

/// `major.minor` of an SDK version (`"0.1.0"` → `(0, 1)`), `None` when it is not one.
pub fn parse_major_minor(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.split(['.', '-', '+']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// Whether a plugin of SDK `plugin` loads in a host of SDK `host` (same major, minor not above).
pub fn sdk_compatible(plugin: &str, host: &str) -> bool {
    match (parse_major_minor(plugin), parse_major_minor(host)) {
        (Some((pmaj, pmin)), Some((hmaj, hmin))) => pmaj == hmaj && pmin <= hmin,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sdk_compatibility() {
        assert!(sdk_compatible("0.1.0", "0.1.0"));
        assert!(sdk_compatible("0.1.9", "0.1.0"));
        assert!(sdk_compatible("1.0.0", "1.3.2"));
        assert!(!sdk_compatible("1.4.0", "1.3.2"));
        assert!(!sdk_compatible("2.0.0", "1.3.2"));
        assert!(!sdk_compatible("x", "1.3.2"));
        assert_eq!(parse_major_minor("1.2.3-rc.1"), Some((1, 2)));
    }

    #[test]
    fn requests_round_trip() {
        let r = Request::Call {
            id: 7,
            call: ProvisionerCall::PowerOff {
                opts: crate::PowerOffOptions {
                    force: true,
                    ..Default::default()
                },
            },
        };
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains(r#""op":"call""#), "{text}");
        assert!(text.contains(r#""method":"power_off""#), "{text}");
        assert_eq!(serde_json::from_str::<Request>(&text).unwrap(), r);
        let resp = Response::Err(ProvisionerError::NodeIsBusy);
        let text = serde_json::to_string(&resp).unwrap();
        assert_eq!(serde_json::from_str::<Response>(&text).unwrap(), resp);
    }

    #[test]
    fn probe_is_one_op_with_no_arguments() {
        let text = serde_json::to_string(&Request::Probe).unwrap();
        assert_eq!(text, r#"{"op":"probe"}"#);
        assert_eq!(
            serde_json::from_str::<Request>(&text).unwrap(),
            Request::Probe
        );
    }

    #[test]
    fn api_calls_is_one_op_with_no_arguments() {
        let text = serde_json::to_string(&Request::ApiCalls).unwrap();
        assert_eq!(text, r#"{"op":"api_calls"}"#);
        assert_eq!(
            serde_json::from_str::<Request>(&text).unwrap(),
            Request::ApiCalls
        );
    }

    #[test]
    fn known_machines_is_one_op_with_no_arguments_and_answers_machines() {
        let text = serde_json::to_string(&Request::KnownMachines).unwrap();
        assert_eq!(text, r#"{"op":"known_machines"}"#);
        assert_eq!(
            serde_json::from_str::<Request>(&text).unwrap(),
            Request::KnownMachines
        );
        // An answer names only what it knows; the rest defaults.
        let m: crate::KnownMachine =
            serde_json::from_str(r#"{"name":"n0","uuid":"u0","driver":"ipmi","macs":["aa"]}"#)
                .unwrap();
        assert_eq!(m.name, "n0");
        assert_eq!(m.macs, ["aa"]);
        assert!(m.boot_mac.is_none() && m.power_on.is_none() && m.driver_info.is_empty());
    }

    #[test]
    fn ready_hosts_sends_the_hosts_and_answers_waits_per_host() {
        let r = Request::ReadyHosts {
            starting: vec![crate::StartingHost {
                host: bmh_api::ObjectKey::new("ns", "h"),
                provisioner_id: "u1".into(),
            }],
        };
        let text = serde_json::to_string(&r).unwrap();
        assert!(
            text.starts_with(r#"{"op":"ready_hosts","starting":[{"#),
            "{text}"
        );
        assert!(text.contains(r#""provisioner_id":"u1""#), "{text}");
        assert_eq!(serde_json::from_str::<Request>(&text).unwrap(), r);
        let answer: crate::ReadyHosts =
            serde_json::from_str(r#"{"wait":[{"secs":0,"nanos":250000000}]}"#).unwrap();
        assert_eq!(answer.wait, [std::time::Duration::from_millis(250)]);
        // An answer without waits reads as "every host now".
        assert_eq!(
            serde_json::from_str::<crate::ReadyHosts>("{}").unwrap(),
            crate::ReadyHosts::default()
        );
    }

    #[test]
    fn sdk_version_is_nul_terminated() {
        assert_eq!(SDK_VERSION_NUL.to_str().unwrap(), crate::SDK_VERSION);
    }
}
