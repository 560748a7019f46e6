//! The plugin side of the C ABI: what [`export_plugin!`](crate::export_plugin) expands to.
//!
//! A plugin author writes a [`ProvisionerFactory`] and a constructor
//! `fn(PluginContext) -> Result<F, ProvisionerError>`, then
//!
//! ```ignore
//! bmhctl_plugin_sdk::export_plugin!(name = "demo", factory = Demo::new);
//! // or, with the optional host-configure step:
//! bmhctl_plugin_sdk::export_plugin!(
//!     name = "ironic",
//!     factory = IronicFactory::new,
//!     host_configure = host_configure, // fn(HostConfigureInput) -> Result<HostRequirements, ProvisionerError>
//! );
//! ```

use crate::abi::{
    EventRecord, HostCallbacks, HostConfigureInput, HostRequirements, LogLevel, LogRecord,
    ObjectRequest, PluginBuffer, PluginConfig, ProvisionerCall, Request, Response, STATUS_ERROR,
    STATUS_OK,
};
use crate::calls::{self, dispatch_fn};
use crate::factory_calls::dispatch_request;
use crate::{EventSink, Provisioner, ProvisionerError, ProvisionerFactory};
use serde::Serialize;
use std::collections::HashMap;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard};

/// What a plugin's factory constructor is given: its configuration and the host's services.
#[derive(Debug, Clone)]
pub struct PluginContext {
    config: PluginConfig,
    callbacks: HostCallbacks,
}

impl PluginContext {
    /// The configuration the host passed to the factory constructor.
    pub fn config(&self) -> &PluginConfig {
        &self.config
    }

    /// Whether the host offers `feature` (one of the `FEATURE_*` names of [`crate::abi`]).
    pub fn has_feature(&self, feature: &str) -> bool {
        self.config.has_feature(feature)
    }

    /// The namespace the provisioner works in.
    pub fn default_namespace(&self) -> &str {
        &self.config.default_namespace
    }

    /// A logger named after the plugin; its lines go to bmhctl's log.
    pub fn logger(&self) -> Logger {
        Logger {
            name: self.config.name.clone(),
            callbacks: self.callbacks,
        }
    }

    /// Read access to the host's objects (Secrets and the kinds host configure declared).
    pub fn objects(&self) -> ObjectReader {
        ObjectReader {
            callbacks: self.callbacks,
        }
    }
}

/// Sends log lines to the host.
#[derive(Debug, Clone)]
pub struct Logger {
    name: String,
    callbacks: HostCallbacks,
}

impl Logger {
    /// A logger named `<this name>.<child>`.
    pub fn named(&self, child: &str) -> Logger {
        Logger {
            name: format!("{}.{child}", self.name),
            callbacks: self.callbacks,
        }
    }

    /// Sends `message` to the host's log at `level` under this logger's name, if it takes logs.
    pub fn log(&self, level: LogLevel, message: impl Into<String>) {
        if let Some(log) = self.callbacks.log {
            let record = LogRecord {
                level,
                logger: self.name.clone(),
                message: message.into(),
            };
            send_json(log, self.callbacks.ctx, &record);
        }
    }

    /// Logs `message` as an error.
    pub fn error(&self, message: impl Into<String>) {
        self.log(LogLevel::Error, message)
    }
    /// Logs `message` as a warning.
    pub fn warn(&self, message: impl Into<String>) {
        self.log(LogLevel::Warn, message)
    }
    /// Logs `message` as information.
    pub fn info(&self, message: impl Into<String>) {
        self.log(LogLevel::Info, message)
    }
    /// Logs `message` as debugging detail.
    pub fn debug(&self, message: impl Into<String>) {
        self.log(LogLevel::Debug, message)
    }
}

/// Reads objects from the host's store.
#[derive(Debug, Clone)]
pub struct ObjectReader {
    callbacks: HostCallbacks,
}

impl ObjectReader {
    /// The object, or `None` when the host has none (or offers no object access).
    pub fn read(
        &self,
        request: &ObjectRequest,
    ) -> Result<Option<serde_json::Value>, ProvisionerError> {
        let Some(read) = self.callbacks.read_object else {
            return Ok(None);
        };
        let input = serde_json::to_vec(request).map_err(ProvisionerError::other)?;
        let mut out: Vec<u8> = Vec::new();
        // SAFETY: the host guarantees its callbacks are valid; `append` only writes to `out`.
        let status = unsafe {
            read(
                self.callbacks.ctx,
                input.as_ptr(),
                input.len(),
                &mut out as *mut Vec<u8> as *mut c_void,
                append,
            )
        };
        if status != STATUS_OK {
            return Err(ProvisionerError::Other(format!(
                "reading {} {}/{}: {}",
                request.kind,
                request.namespace,
                request.name,
                String::from_utf8_lossy(&out)
            )));
        }
        let value: serde_json::Value =
            serde_json::from_slice(&out).map_err(ProvisionerError::other)?;
        Ok((!value.is_null()).then_some(value))
    }

    /// A Secret (`v1` `Secret`) by namespace and name.
    pub fn read_secret(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<serde_json::Value>, ProvisionerError> {
        self.read(&ObjectRequest {
            api_version: "v1".into(),
            kind: "Secret".into(),
            namespace: namespace.into(),
            name: name.into(),
        })
    }
}

unsafe extern "C" fn append(out: *mut c_void, data: *const u8, len: usize) {
    if out.is_null() || data.is_null() {
        return;
    }
    // SAFETY: `out` is the `Vec<u8>` passed by `ObjectReader::read`; `data`/`len` are the host's.
    unsafe {
        let out = &mut *(out as *mut Vec<u8>);
        out.extend_from_slice(std::slice::from_raw_parts(data, len));
    }
}

fn send_json<T: Serialize>(f: crate::abi::JsonFn, ctx: *mut c_void, value: &T) {
    if let Ok(bytes) = serde_json::to_vec(value) {
        // SAFETY: the host guarantees its callbacks are valid and thread-safe.
        unsafe { f(ctx, bytes.as_ptr(), bytes.len()) }
    }
}

/// A panic payload as text.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    (payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic payload".to_string())
}

fn panicked(what: &str, payload: Box<dyn std::any::Any + Send>) -> ProvisionerError {
    ProvisionerError::Other(format!(
        "provisioner plugin panicked in {what}: {}",
        panic_message(payload.as_ref())
    ))
}

unsafe fn input<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if ptr.is_null() {
        &[]
    } else {
        // SAFETY: the host passes a valid buffer.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

unsafe fn put(out: *mut PluginBuffer, bytes: Vec<u8>) {
    if !out.is_null() {
        // SAFETY: the host passes a valid, writable `PluginBuffer`.
        unsafe { out.write(PluginBuffer::from_vec(bytes)) }
    }
}

fn error_json(e: &ProvisionerError) -> Vec<u8> {
    serde_json::to_vec(e).unwrap_or_else(|_| e.to_string().into_bytes())
}

type Shared = Arc<Mutex<Box<dyn Provisioner>>>;

/// A factory and its live provisioners; what the opaque factory handle points at.
pub struct FactoryState {
    factory: Box<dyn ProvisionerFactory>,
    callbacks: HostCallbacks,
    provisioners: Mutex<HashMap<u64, Shared>>,
}

fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl FactoryState {
    fn handle(&self, request: Request) -> Response {
        crate::factory_calls::factory_calls!(dispatch_request (self.factory, request) {
            Request::NewProvisioner { id, host } => {
                let callbacks = self.callbacks;
                let events: EventSink = Arc::new(move |event| {
                    // Capture the whole (Send + Sync) struct, not its fields.
                    let callbacks = callbacks;
                    if let Some(f) = callbacks.event {
                        send_json(
                            f,
                            callbacks.ctx,
                            &EventRecord {
                                provisioner: id,
                                event,
                            },
                        );
                    }
                });
                match self.factory.new_provisioner(host, events) {
                    Ok(p) => {
                        lock(&self.provisioners).insert(id, Arc::new(Mutex::new(p)));
                        Response::Ok(serde_json::Value::Null)
                    }
                    Err(e) => Response::Err(e),
                }
            }
            Request::DropProvisioner { id } => {
                let removed = lock(&self.provisioners).remove(&id);
                drop(removed);
                Response::Ok(serde_json::Value::Null)
            }
            Request::Call { id, call } => {
                let Some(p) = lock(&self.provisioners).get(&id).cloned() else {
                    return Response::Err(ProvisionerError::Other(format!(
                        "no provisioner with handle {id}"
                    )));
                };
                let mut p = lock(&p);
                dispatch(p.as_mut(), call)
            }
        })
    }
}

fn answer<T: Serialize>(r: Result<T, ProvisionerError>) -> Response {
    match r {
        Ok(v) => match serde_json::to_value(v) {
            Ok(v) => Response::Ok(v),
            Err(e) => Response::Err(ProvisionerError::other(e)),
        },
        Err(e) => Response::Err(e),
    }
}

calls::provisioner_calls!(dispatch_fn);

/// The body of the generated `create_factory`.
/// # Safety
/// The arguments must follow the ABI ([`crate::abi::CreateFactoryFn`]).
pub unsafe fn create_factory<F, C>(
    config: *const u8,
    len: usize,
    callbacks: *const HostCallbacks,
    error_out: *mut PluginBuffer,
    ctor: C,
) -> *mut c_void
where
    F: ProvisionerFactory + 'static,
    C: FnOnce(PluginContext) -> Result<F, ProvisionerError>,
{
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: per the ABI.
        let bytes = unsafe { input(config, len) };
        let config: PluginConfig = serde_json::from_slice(bytes)
            .map_err(|e| ProvisionerError::Other(format!("invalid plugin configuration: {e}")))?;
        let callbacks = if callbacks.is_null() {
            HostCallbacks {
                ctx: std::ptr::null_mut(),
                log: None,
                event: None,
                read_object: None,
            }
        } else {
            // SAFETY: per the ABI, a valid `HostCallbacks`; it is copied.
            unsafe { *callbacks }
        };
        let factory = ctor(PluginContext { config, callbacks })?;
        let state = FactoryState {
            factory: Box::new(factory),
            callbacks,
            provisioners: Mutex::new(HashMap::new()),
        };
        Ok::<_, ProvisionerError>(Box::into_raw(Box::new(state)) as *mut c_void)
    }));
    let error = match result.unwrap_or_else(|p| Err(panicked("create_factory", p))) {
        Ok(handle) => return handle,
        Err(e) => e,
    };
    // SAFETY: per the ABI.
    unsafe { put(error_out, error_json(&error)) };
    std::ptr::null_mut()
}

/// The body of the generated `host_configure`.
/// # Safety
/// The arguments must follow the ABI ([`crate::abi::HostConfigureFn`]).
pub unsafe fn host_configure<C>(
    input_ptr: *const u8,
    len: usize,
    out: *mut PluginBuffer,
    f: C,
) -> i32
where
    C: FnOnce(HostConfigureInput) -> Result<HostRequirements, ProvisionerError>,
{
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: per the ABI.
        let bytes = unsafe { input(input_ptr, len) };
        let input: HostConfigureInput = serde_json::from_slice(bytes)
            .map_err(|e| ProvisionerError::Other(format!("invalid host configure input: {e}")))?;
        let req = f(input)?;
        serde_json::to_vec(&req).map_err(ProvisionerError::other)
    }));
    let (status, bytes) = match result.unwrap_or_else(|p| Err(panicked("host_configure", p))) {
        Ok(bytes) => (STATUS_OK, bytes),
        Err(e) => (STATUS_ERROR, error_json(&e)),
    };
    // SAFETY: per the ABI.
    unsafe { put(out, bytes) };
    status
}

/// The body of the generated `call`.
/// # Safety
/// The arguments must follow the ABI ([`crate::abi::CallFn`]); `factory` from [`create_factory`].
pub unsafe fn call(
    factory: *mut c_void,
    request: *const u8,
    len: usize,
    out: *mut PluginBuffer,
) -> i32 {
    if factory.is_null() {
        // SAFETY: per the ABI.
        unsafe { put(out, b"null factory handle".to_vec()) };
        return STATUS_ERROR;
    }
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `factory` is a `FactoryState` made by `create_factory`, never freed.
        let state = unsafe { &*(factory as *const FactoryState) };
        // SAFETY: per the ABI.
        let bytes = unsafe { input(request, len) };
        match serde_json::from_slice::<Request>(bytes) {
            Ok(req) => state.handle(req),
            Err(e) => Response::Err(ProvisionerError::Other(format!(
                "provisioner plugin could not decode the request: {e}"
            ))),
        }
    }));
    let response = result.unwrap_or_else(|payload| Response::Err(panicked("a call", payload)));
    let (status, bytes) = match serde_json::to_vec(&response) {
        Ok(b) => (STATUS_OK, b),
        Err(e) => (
            STATUS_ERROR,
            format!("cannot encode the answer: {e}").into_bytes(),
        ),
    };
    // SAFETY: per the ABI.
    unsafe { put(out, bytes) };
    status
}

/// Exports a plugin from a [`ProvisionerFactory`] constructor, once per `cdylib`:
/// `export_plugin!(name = "demo", factory = Demo::new, host_configure = configure);`
#[macro_export]
macro_rules! export_plugin {
    (name = $name:literal, factory = $factory:expr $(,)?) => {
        $crate::export_plugin!(@declare $name, $factory, ::core::option::Option::None);
    };
    (name = $name:literal, factory = $factory:expr, host_configure = $hc:expr $(,)?) => {
        #[doc(hidden)]
        unsafe extern "C" fn __bmhctl_plugin_host_configure(
            input: *const u8,
            len: usize,
            out: *mut $crate::abi::PluginBuffer,
        ) -> i32 {
            unsafe { $crate::abi_plugin::host_configure(input, len, out, $hc) }
        }
        $crate::export_plugin!(
            @declare $name,
            $factory,
            ::core::option::Option::Some(__bmhctl_plugin_host_configure as $crate::abi::HostConfigureFn)
        );
    };
    (@declare $name:literal, $factory:expr, $hc:expr) => {
        #[doc(hidden)]
        unsafe extern "C" fn __bmhctl_plugin_create_factory(
            config: *const u8,
            len: usize,
            callbacks: *const $crate::abi::HostCallbacks,
            error_out: *mut $crate::abi::PluginBuffer,
        ) -> *mut ::std::ffi::c_void {
            unsafe { $crate::abi_plugin::create_factory(config, len, callbacks, error_out, $factory) }
        }

        #[doc(hidden)]
        unsafe extern "C" fn __bmhctl_plugin_call(
            factory: *mut ::std::ffi::c_void,
            request: *const u8,
            len: usize,
            out: *mut $crate::abi::PluginBuffer,
        ) -> i32 {
            unsafe { $crate::abi_plugin::call(factory, request, len, out) }
        }

        #[doc(hidden)]
        unsafe extern "C" fn __bmhctl_plugin_free_buffer(ptr: *mut u8, len: usize) {
            unsafe { $crate::abi::free_buffer(ptr, len) }
        }

        /// The bmhctl provisioner plugin declaration.
        #[unsafe(no_mangle)]
        pub static BMHCTL_PROVISIONER_PLUGIN: $crate::abi::PluginDeclaration =
            $crate::abi::PluginDeclaration {
                abi_version: $crate::ABI_VERSION,
                sdk_version: $crate::abi::SDK_VERSION_NUL.as_ptr(),
                name: ::core::concat!($name, "\0").as_ptr() as *const ::std::ffi::c_char,
                create_factory: __bmhctl_plugin_create_factory,
                host_configure: $hc,
                call: __bmhctl_plugin_call,
                free_buffer: __bmhctl_plugin_free_buffer,
            };
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{FactoryTransport, RemoteFactory};
    use crate::{
        ApiCallCount, DueHosts, HostData, ProbeReport, ReadyHosts, StartingHost, WaitOn,
        WaitingHost,
    };
    use serde::de::DeserializeOwned;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// A plugin's factory answering every optional call from what it was asked.
    struct Answering;

    impl ProvisionerFactory for Answering {
        fn new_provisioner(
            &self,
            _: HostData,
            _: EventSink,
        ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
            Err(ProvisionerError::Other("not made here".into()))
        }

        fn due_hosts(&self, waiting: &[WaitingHost]) -> Result<Option<DueHosts>, ProvisionerError> {
            Ok(Some(DueHosts {
                due: (0..waiting.len()).collect(),
                ask_again_after: Duration::from_secs(1),
            }))
        }

        fn probe(&self) -> Result<Option<ProbeReport>, ProvisionerError> {
            Ok(Some(ProbeReport {
                reached: "the backend".into(),
            }))
        }

        fn api_calls(&self) -> Result<Option<Vec<ApiCallCount>>, ProvisionerError> {
            Ok(Some(vec![ApiCallCount {
                kind: "GET /v1/nodes".into(),
                count: 3,
            }]))
        }

        fn ready_hosts(
            &self,
            starting: &[StartingHost],
        ) -> Result<Option<ReadyHosts>, ProvisionerError> {
            Ok(Some(ReadyHosts {
                wait: vec![Duration::from_millis(250); starting.len()],
            }))
        }
    }

    /// The host side and the plugin side in one process, every request and answer as JSON.
    struct InProcess {
        plugin: FactoryState,
        sdk_minor: u64,
        sent: AtomicUsize,
    }

    impl InProcess {
        fn new(sdk_minor: u64) -> Self {
            Self {
                plugin: FactoryState {
                    factory: Box::new(Answering),
                    callbacks: HostCallbacks {
                        ctx: std::ptr::null_mut(),
                        log: None,
                        event: None,
                        read_object: None,
                    },
                    provisioners: Mutex::new(HashMap::new()),
                },
                sdk_minor,
                sent: AtomicUsize::new(0),
            }
        }
    }

    impl FactoryTransport for InProcess {
        fn new_provisioner(
            &self,
            _: HostData,
            _: EventSink,
        ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
            unreachable!("not asked here")
        }

        fn answers(&self, since_minor: u64) -> bool {
            self.sdk_minor >= since_minor
        }

        fn request<T: DeserializeOwned>(&self, request: Request) -> Result<T, ProvisionerError> {
            self.sent.fetch_add(1, Ordering::Relaxed);
            let sent = serde_json::to_vec(&request).unwrap();
            let received: Request = serde_json::from_slice(&sent).unwrap();
            let answer = serde_json::to_vec(&self.plugin.handle(received)).unwrap();
            match serde_json::from_slice(&answer).unwrap() {
                Response::Ok(v) => Ok(serde_json::from_value(v).unwrap()),
                Response::Err(e) => Err(e),
            }
        }
    }

    fn waiting() -> Vec<WaitingHost> {
        vec![WaitingHost {
            host: bmh_api::ObjectKey::new("ns", "h"),
            provisioner_id: "u1".into(),
            on: WaitOn::Progress,
        }]
    }

    fn starting() -> Vec<StartingHost> {
        vec![StartingHost {
            host: bmh_api::ObjectKey::new("ns", "h"),
            provisioner_id: "u1".into(),
        }]
    }

    #[test]
    fn every_optional_factory_call_reaches_the_plugins_factory_and_back() {
        let host = RemoteFactory::new(InProcess::new(
            crate::abi::parse_major_minor(crate::SDK_VERSION).unwrap().1,
        ));
        assert_eq!(host.due_hosts(&waiting()), Answering.due_hosts(&waiting()));
        assert_eq!(host.probe(), Answering.probe());
        assert_eq!(host.api_calls(), Answering.api_calls());
        assert_eq!(
            host.ready_hosts(&starting()),
            Answering.ready_hosts(&starting())
        );
        assert_eq!(host.transport().sent.load(Ordering::Relaxed), 4);
    }

    #[test]
    fn a_plugin_older_than_every_optional_factory_call_is_sent_none() {
        let host = RemoteFactory::new(InProcess::new(1));
        assert_eq!(host.due_hosts(&waiting()), Ok(None));
        assert_eq!(host.probe(), Ok(None));
        assert_eq!(host.api_calls(), Ok(None));
        assert_eq!(host.ready_hosts(&starting()), Ok(None));
        assert_eq!(host.transport().sent.load(Ordering::Relaxed), 0);
    }
}
