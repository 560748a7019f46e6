//! The provisioner plugin loader: opens `<name>-provisioner.so`, checks its declaration (symbol,
//! ABI version, compatible SDK version, name) before calling anything of it, and wraps its
//! factory to forward every call through the C ABI. A loaded library is never unloaded.

use super::lock;
use crate::objects::ObjectSource;
use bmh_api::ObjectKey;
use bmhctl_plugin_sdk::abi::{
    self, CallTransport, EventRecord, FactoryTransport, HostCallbacks, HostConfigureInput,
    HostRequirements, LogLevel, LogRecord, ObjectRequest, PluginBuffer, PluginConfig,
    PluginDeclaration, ProvisionerCall, RemoteFactory, RemoteProvisioner, Request, Response,
    STATUS_ERROR, STATUS_OK,
};
use bmhctl_plugin_sdk::{
    ABI_VERSION, BMC_EVENT_SUBSCRIPTIONS_SINCE_MINOR, DATA_IMAGE_SINCE_MINOR, EventSink, HostData,
    Provisioner, ProvisionerError, SDK_VERSION,
};
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// A plugin whose declaration passed every check.
#[derive(Debug, Clone)]
pub struct LoadedPlugin {
    path: PathBuf,
    name: String,
    sdk_version: String,
    decl: &'static PluginDeclaration,
}

impl LoadedPlugin {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The name the plugin reports.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The plugin SDK version the plugin was built with.
    pub fn sdk_version(&self) -> &str {
        &self.sdk_version
    }

    pub fn abi_version(&self) -> u32 {
        self.decl.abi_version
    }

    pub fn has_host_configure(&self) -> bool {
        self.decl.host_configure.is_some()
    }

    /// Runs the plugin's optional host-configure step; a plugin without one has no requirements.
    pub fn host_configure(
        &self,
        input: &HostConfigureInput,
    ) -> Result<HostRequirements, LoadError> {
        let Some(f) = self.decl.host_configure else {
            return Ok(HostRequirements::default());
        };
        let bytes = serde_json::to_vec(input).map_err(LoadError::Encode)?;
        let mut out = PluginBuffer::empty();
        // SAFETY: the declaration passed the ABI check; the arguments follow the ABI.
        let status = unsafe { f(bytes.as_ptr(), bytes.len(), &mut out) };
        let answer = take_buffer(self.decl, out);
        let result = if status == STATUS_OK {
            serde_json::from_slice(&answer).map_err(|e| format!("invalid answer: {e}"))
        } else {
            Err(error_text(&answer))
        };
        result.map_err(|reason| LoadError::HostConfigure {
            path: self.path.clone(),
            reason,
        })
    }

    /// Creates the plugin's factory (BMO's `NewProvisionerFactory`).
    pub fn new_factory(&self, config: PluginConfig) -> Result<PluginFactory, LoadError> {
        let host: &'static HostState = Box::leak(Box::new(HostState {
            plugin: self.name.clone(),
            default_namespace: config.default_namespace.clone(),
            sinks: Mutex::new(HashMap::new()),
            objects: RwLock::new(None),
        }));
        // Leaked with the host state: the plugin may keep them for the life of the process.
        let callbacks: &'static HostCallbacks = Box::leak(Box::new(HostCallbacks {
            ctx: host as *const HostState as *mut c_void,
            log: Some(host_log),
            event: Some(host_event),
            read_object: Some(host_read_object),
        }));
        let bytes = serde_json::to_vec(&config).map_err(LoadError::Encode)?;
        let mut error = PluginBuffer::empty();
        // SAFETY: the declaration passed the ABI check; the arguments follow the ABI.
        let handle = unsafe {
            (self.decl.create_factory)(bytes.as_ptr(), bytes.len(), callbacks, &mut error)
        };
        let error = take_buffer(self.decl, error);
        if handle.is_null() {
            return Err(LoadError::Initialize {
                path: self.path.clone(),
                reason: error_text(&error),
            });
        }
        Ok(PluginFactory::new(PluginRequests {
            shared: Arc::new(Shared {
                name: self.name.clone(),
                decl: self.decl,
                handle: Handle(handle),
                host,
                next_id: AtomicU64::new(1),
                sdk_minor: abi::parse_major_minor(&self.sdk_version).map(|(_, minor)| minor),
            }),
        }))
    }
}

/// Why a plugin can't be loaded: the loader's check that failed, or its initialisation.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("failed to open plugin {}: {cause}", path.display())]
    Open {
        path: PathBuf,
        cause: libloading::Error,
    },
    #[error("plugin {} is not a bmhctl provisioner plugin: {why}", path.display())]
    NotAPlugin { path: PathBuf, why: String },
    /// Refused before it was opened: see [`super::trust`].
    #[error("refusing to load plugin {}: {why}", path.display())]
    Untrusted {
        path: PathBuf,
        why: Box<super::trust::Untrusted>,
    },
    #[error("plugin {} has plugin ABI {found}, bmhctl needs {ABI_VERSION}", path.display())]
    Abi { path: PathBuf, found: u32 },
    #[error("plugin {} has no valid {what}", path.display())]
    Invalid { path: PathBuf, what: &'static str },
    #[error(
        "plugin {} was built with plugin SDK {found}, bmhctl has plugin SDK {SDK_VERSION} (a \
         plugin needs the same major version and a minor version not above bmhctl's)",
        path.display()
    )]
    Sdk { path: PathBuf, found: String },
    #[error("plugin {}: plugin name is {found:?}, expected {expected:?}", path.display())]
    Name {
        path: PathBuf,
        found: String,
        expected: String,
    },
    #[error("plugin {}: host configure failed: {reason}", path.display())]
    HostConfigure { path: PathBuf, reason: String },
    #[error("cannot initialize provisioner plugin {}: {reason}", path.display())]
    Initialize { path: PathBuf, reason: String },
    /// The host's own input could not be encoded.
    #[error("{0}")]
    Encode(serde_json::Error),
}

/// Opens `path` if [`super::trust`] allows it and checks the declaration, calling nothing of it.
pub fn open(path: &Path, expected_name: Option<&str>) -> Result<LoadedPlugin, LoadError> {
    let at = || path.to_path_buf();
    let untrusted = |why| LoadError::Untrusted {
        path: at(),
        why: Box::new(why),
    };
    let absolute = std::path::absolute(path)
        .map_err(|e| untrusted(super::trust::Untrusted::unreadable(path, e)))?;
    let dir = absolute.parent().unwrap_or(Path::new("/"));
    super::trust::check_file(dir, &absolute).map_err(untrusted)?;
    // SAFETY: loading a library runs its initialisers; that is what loading a plugin means.
    let lib = unsafe { libloading::Library::new(path) }
        .map_err(|cause| LoadError::Open { path: at(), cause })?;
    let lib: &'static libloading::Library = Box::leak(Box::new(lib));
    // SAFETY: the symbol is the address of the declaration; it is only read after the checks.
    let decl: *const PluginDeclaration = unsafe {
        lib.get::<*const PluginDeclaration>(abi::DECLARATION_SYMBOL_NUL)
            .map(|s| *s)
    }
    .map_err(|e| LoadError::NotAPlugin {
        path: at(),
        why: e.to_string(),
    })?;
    if decl.is_null() {
        return Err(LoadError::NotAPlugin {
            path: at(),
            why: format!("{} is null", abi::DECLARATION_SYMBOL),
        });
    }
    // SAFETY: every ABI version starts the declaration with its `u32` ABI version.
    let abi_version = unsafe { std::ptr::read(decl as *const u32) };
    if abi_version != ABI_VERSION {
        return Err(LoadError::Abi {
            path: at(),
            found: abi_version,
        });
    }
    // SAFETY: the ABI version matches, so the layout is ours; the library is never unloaded.
    let decl: &'static PluginDeclaration = unsafe { &*decl };
    check_declaration(path, decl, expected_name)
}

/// The checks after the ABI version: SDK version and name.
pub fn check_declaration(
    path: &Path,
    decl: &'static PluginDeclaration,
    expected_name: Option<&str>,
) -> Result<LoadedPlugin, LoadError> {
    let at = || path.to_path_buf();
    let text = |p, what| {
        // SAFETY: the ABI says both are NUL-terminated strings living as long as the library.
        unsafe { c_string(p) }.ok_or_else(|| LoadError::Invalid { path: at(), what })
    };
    let sdk_version = text(decl.sdk_version, "plugin SDK version")?;
    if !abi::sdk_compatible(&sdk_version, SDK_VERSION) {
        return Err(LoadError::Sdk {
            path: at(),
            found: sdk_version,
        });
    }
    let name = text(decl.name, "plugin name")?;
    if let Some(want) = expected_name
        && name != want
    {
        return Err(LoadError::Name {
            path: at(),
            found: name,
            expected: want.to_string(),
        });
    }
    Ok(LoadedPlugin {
        path: path.to_path_buf(),
        name,
        sdk_version,
        decl,
    })
}

unsafe fn c_string(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller guarantees a NUL-terminated string.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .ok()
        .map(str::to_string)
}

/// Copies a plugin buffer and hands it back to the plugin to free.
fn take_buffer(decl: &PluginDeclaration, buf: PluginBuffer) -> Vec<u8> {
    if buf.ptr.is_null() {
        return Vec::new();
    }
    // SAFETY: the plugin filled the buffer; it is freed once, by the plugin.
    unsafe {
        let bytes = buf.as_slice().to_vec();
        (decl.free_buffer)(buf.ptr, buf.len);
        bytes
    }
}

/// An error buffer: a JSON `ProvisionerError`, or plain text.
fn error_text(bytes: &[u8]) -> String {
    match serde_json::from_slice::<ProvisionerError>(bytes) {
        Ok(e) => e.to_string(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

// ----- host callbacks -----------------------------------------------------------------------

/// What the host callbacks of one factory see (leaked: the plugin may call back at any time).
struct HostState {
    plugin: String,
    /// Requests without a namespace read from this one.
    default_namespace: String,
    sinks: Mutex<HashMap<u64, EventSink>>,
    /// Where `read_object` reads; `None` (every object absent) until the files are loaded.
    objects: RwLock<Option<Arc<dyn ObjectSource>>>,
}

impl HostState {
    /// The answer to one `read_object` request: the object's JSON, or `null` when absent.
    fn read_object(&self, request: &[u8]) -> Result<Vec<u8>, String> {
        let r: ObjectRequest =
            serde_json::from_slice(request).map_err(|e| format!("invalid object request: {e}"))?;
        let namespace = Some(&r.namespace).filter(|ns| !ns.is_empty());
        let key = ObjectKey::new(namespace.unwrap_or(&self.default_namespace), &r.name);
        let source = self
            .objects
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let object = source.and_then(|s| s.object(&r.api_version, &r.kind, &key));
        tracing::trace!(
            plugin = self.plugin,
            api_version = r.api_version,
            kind = r.kind,
            %key,
            found = object.is_some(),
            "plugin read an object"
        );
        serde_json::to_vec(&object.unwrap_or(serde_json::Value::Null))
            .map_err(|e| format!("cannot encode the object: {e}"))
    }
}

unsafe fn state<'a>(ctx: *mut c_void) -> Option<&'a HostState> {
    // SAFETY: `ctx` is the leaked `HostState` handed over with the callbacks.
    unsafe { (ctx as *const HostState).as_ref() }
}

unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if ptr.is_null() {
        &[]
    } else {
        // SAFETY: the plugin passes a valid buffer for the duration of the callback.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

unsafe extern "C" fn host_log(ctx: *mut c_void, json: *const u8, len: usize) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: per the ABI.
        let (Some(host), data) = (unsafe { state(ctx) }, unsafe { bytes(json, len) }) else {
            return;
        };
        let Ok(r) = serde_json::from_slice::<LogRecord>(data) else {
            return;
        };
        let (plugin, logger, message) = (&host.plugin, &r.logger, &r.message);
        match r.level {
            LogLevel::Error => tracing::error!(plugin, logger, "{message}"),
            LogLevel::Warn => tracing::warn!(plugin, logger, "{message}"),
            LogLevel::Info => tracing::info!(plugin, logger, "{message}"),
            LogLevel::Debug => tracing::debug!(plugin, logger, "{message}"),
            LogLevel::Trace => tracing::trace!(plugin, logger, "{message}"),
        }
    }));
}

unsafe extern "C" fn host_event(ctx: *mut c_void, json: *const u8, len: usize) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: per the ABI.
        let (Some(host), data) = (unsafe { state(ctx) }, unsafe { bytes(json, len) }) else {
            return;
        };
        let Ok(r) = serde_json::from_slice::<EventRecord>(data) else {
            tracing::warn!(plugin = host.plugin, "plugin sent an invalid event");
            return;
        };
        let sink = lock(&host.sinks).get(&r.provisioner).cloned();
        match sink {
            Some(sink) => sink(r.event),
            None => tracing::debug!(
                plugin = host.plugin,
                provisioner = r.provisioner,
                "event for an unknown provisioner dropped"
            ),
        }
    }));
}

/// Reads an object from the source attached with [`PluginRequests::set_objects`] (`null` when
/// absent); a bad request or a panic is an error status, never an unwind into the plugin.
unsafe extern "C" fn host_read_object(
    ctx: *mut c_void,
    request: *const u8,
    len: usize,
    out: *mut c_void,
    write: abi::WriteFn,
) -> i32 {
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: per the ABI.
        let (Some(host), data) = (unsafe { state(ctx) }, unsafe { bytes(request, len) }) else {
            return Err("no host state".to_string());
        };
        host.read_object(data)
    }));
    let (status, answer) = match result {
        Ok(Ok(answer)) => (STATUS_OK, answer),
        Ok(Err(message)) => (STATUS_ERROR, message.into_bytes()),
        Err(payload) => (
            STATUS_ERROR,
            format!(
                "bmhctl failed reading the object: {}",
                bmhctl_plugin_sdk::abi_plugin::panic_message(payload.as_ref())
            )
            .into_bytes(),
        ),
    };
    // SAFETY: per the ABI, `write(out, ..)` copies the bytes; it is the plugin's own function,
    // which must not unwind (`extern "C"` aborts if it does).
    unsafe { write(out, answer.as_ptr(), answer.len()) };
    status
}

// ----- the factory --------------------------------------------------------------------------

struct Handle(*mut c_void);

// SAFETY: the ABI requires a factory handle to be usable from any thread.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

struct Shared {
    name: String,
    decl: &'static PluginDeclaration,
    handle: Handle,
    host: &'static HostState,
    next_id: AtomicU64,
    /// The minor version of the SDK the plugin was built with: calls it does not know (or
    /// whose old defaults did nothing, as the data image calls') are never sent.
    sdk_minor: Option<u64>,
}

impl Shared {
    fn request(&self, request: &Request) -> Result<serde_json::Value, ProvisionerError> {
        let bytes = serde_json::to_vec(request).map_err(ProvisionerError::other)?;
        let mut out = PluginBuffer::empty();
        // SAFETY: the handle came from this declaration's `create_factory`; arguments per the ABI.
        let status =
            unsafe { (self.decl.call)(self.handle.0, bytes.as_ptr(), bytes.len(), &mut out) };
        let answer = take_buffer(self.decl, out);
        if status != STATUS_OK {
            return Err(ProvisionerError::Other(format!(
                "provisioner plugin {:?}: {}",
                self.name,
                String::from_utf8_lossy(&answer)
            )));
        }
        match serde_json::from_slice::<Response>(&answer) {
            Ok(Response::Ok(v)) => Ok(v),
            Ok(Response::Err(e)) => Err(e),
            Err(e) => Err(self.invalid_answer(e)),
        }
    }

    fn invalid_answer(&self, e: serde_json::Error) -> ProvisionerError {
        let name = &self.name;
        ProvisionerError::Other(format!(
            "provisioner plugin {name:?} sent an invalid answer: {e}"
        ))
    }

    /// [`Shared::request`], its answer decoded as `T`.
    fn ask<T: DeserializeOwned>(&self, request: &Request) -> Result<T, ProvisionerError> {
        serde_json::from_value(self.request(request)?).map_err(|e| self.invalid_answer(e))
    }

    fn knows(&self, since_minor: u64) -> bool {
        self.sdk_minor.is_some_and(|m| m >= since_minor)
    }

    fn sinks(&self) -> std::sync::MutexGuard<'_, HashMap<u64, EventSink>> {
        lock(&self.host.sinks)
    }
}

/// A plugin's factory: the SDK's proxy sends every (blocking) call through its `call` entry.
pub type PluginFactory = RemoteFactory<PluginRequests>;

/// How a [`PluginFactory`] reaches its plugin.
#[derive(Clone)]
pub struct PluginRequests {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for PluginRequests {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginFactory")
            .field("plugin", &self.shared.name)
            .finish_non_exhaustive()
    }
}

impl PluginRequests {
    /// Attaches (or replaces) the objects the plugin reads through its `read_object` callback.
    pub fn set_objects(&self, objects: Arc<dyn ObjectSource>) {
        *self
            .shared
            .host
            .objects
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Some(objects);
    }
}

impl FactoryTransport for PluginRequests {
    fn new_provisioner(
        &self,
        host: HostData,
        events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        self.shared.sinks().insert(id, events);
        match self.shared.request(&Request::NewProvisioner { id, host }) {
            Ok(_) => Ok(Box::new(PluginProvisioner::new(PluginCalls {
                shared: self.shared.clone(),
                id,
            }))),
            Err(e) => {
                self.shared.sinks().remove(&id);
                Err(e)
            }
        }
    }

    fn answers(&self, since_minor: u64) -> bool {
        self.shared.knows(since_minor)
    }

    fn request<T: DeserializeOwned>(&self, request: Request) -> Result<T, ProvisionerError> {
        self.shared.ask(&request)
    }
}

/// One provisioner living in the plugin, by handle id; dropping it drops the plugin's one.
pub struct PluginCalls {
    shared: Arc<Shared>,
    id: u64,
}

/// A provisioner of a plugin: the SDK's proxy sends every method through its `call` entry.
pub type PluginProvisioner = RemoteProvisioner<PluginCalls>;

impl Drop for PluginCalls {
    fn drop(&mut self) {
        if let Err(e) = self
            .shared
            .request(&Request::DropProvisioner { id: self.id })
        {
            tracing::warn!(
                plugin = self.shared.name,
                "dropping a provisioner failed: {e}"
            );
        }
        self.shared.sinks().remove(&self.id);
    }
}

impl CallTransport for PluginCalls {
    fn call<T: DeserializeOwned>(&self, call: ProvisionerCall) -> Result<T, ProvisionerError> {
        // An older plugin does not know the subscription calls: its answer is "not supported"
        // (`None` for a create, `false` for a delete), both JSON's null-ish defaults.
        let not_supported = match call {
            ProvisionerCall::CreateBmcEventSubscription { .. } => Some(serde_json::Value::Null),
            ProvisionerCall::DeleteBmcEventSubscription { .. } => Some(false.into()),
            _ => None,
        };
        if let Some(answer) = not_supported
            && !self.shared.knows(BMC_EVENT_SUBSCRIPTIONS_SINCE_MINOR)
        {
            return serde_json::from_value(answer).map_err(ProvisionerError::other);
        }
        if !self.shared.knows(DATA_IMAGE_SINCE_MINOR)
            && matches!(
                call,
                ProvisionerCall::GetDataImageStatus
                    | ProvisionerCall::AttachDataImage { .. }
                    | ProvisionerCall::DetachDataImage
            )
        {
            return Err(bmhctl_plugin_sdk::data_images_not_supported());
        }
        self.shared.ask(&Request::Call { id: self.id, call })
    }

    fn call_failed(&self, method: &'static str, error: ProvisionerError) {
        tracing::warn!(plugin = self.shared.name, "{method} failed: {error}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bmhctl_plugin_sdk::{ProvisionerFactory, StartingHost, WaitingHost};
    use std::collections::BTreeMap;

    unsafe extern "C" fn no_factory(
        _: *const u8,
        _: usize,
        _: *const HostCallbacks,
        _: *mut PluginBuffer,
    ) -> *mut c_void {
        std::ptr::null_mut()
    }
    unsafe extern "C" fn no_call(
        _: *mut c_void,
        _: *const u8,
        _: usize,
        _: *mut PluginBuffer,
    ) -> i32 {
        1
    }
    unsafe extern "C" fn no_free(_: *mut u8, _: usize) {}

    const fn decl(sdk: &'static CStr, name: &'static CStr) -> PluginDeclaration {
        PluginDeclaration {
            abi_version: ABI_VERSION,
            sdk_version: sdk.as_ptr(),
            name: name.as_ptr(),
            create_factory: no_factory,
            host_configure: None,
            call: no_call,
            free_buffer: no_free,
        }
    }

    static NEWER_MAJOR: PluginDeclaration = decl(c"99.0.0", c"demo");
    static NEWER_MINOR: PluginDeclaration = decl(c"0.99.0", c"demo");
    static SAME: PluginDeclaration = decl(abi::SDK_VERSION_NUL, c"demo");

    #[test]
    fn sdk_mismatch_names_both_versions() {
        let path = Path::new("/p/demo-provisioner.so");
        for d in [&NEWER_MAJOR, &NEWER_MINOR] {
            let err = check_declaration(path, d, Some("demo"))
                .unwrap_err()
                .to_string();
            let got = unsafe { c_string(d.sdk_version) }.unwrap();
            assert!(
                err.starts_with("plugin /p/demo-provisioner.so was built with plugin SDK ")
                    && err.contains(&got)
                    && err.contains(&format!("bmhctl has plugin SDK {SDK_VERSION}")),
                "{err}"
            );
        }
    }

    #[test]
    fn name_is_checked_after_the_sdk_version() {
        let path = Path::new("/p/foo-provisioner.so");
        let err = check_declaration(path, &SAME, Some("foo"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "plugin /p/foo-provisioner.so: plugin name is \"demo\", expected \"foo\""
        );
        let ok = check_declaration(path, &SAME, None).unwrap();
        assert_eq!((ok.name(), ok.sdk_version()), ("demo", SDK_VERSION));
        assert!(!ok.has_host_configure());
        // A factory that fails reports the plugin's error.
        let err = ok
            .new_factory(PluginConfig::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("cannot initialize provisioner plugin /p/foo-provisioner.so"),
            "{err}"
        );
    }

    static CALLS: AtomicU64 = AtomicU64::new(0);
    /// Held by each test that counts `CALLS`, so that one's calls do not land in another's count.
    static COUNTING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    unsafe extern "C" fn some_factory(
        _: *const u8,
        _: usize,
        _: *const HostCallbacks,
        _: *mut PluginBuffer,
    ) -> *mut c_void {
        std::ptr::NonNull::<u8>::dangling().as_ptr().cast()
    }
    unsafe extern "C" fn counted_call(
        _: *mut c_void,
        _: *const u8,
        _: usize,
        _: *mut PluginBuffer,
    ) -> i32 {
        CALLS.fetch_add(1, Ordering::SeqCst);
        1
    }
    const fn counting(sdk: &'static CStr) -> PluginDeclaration {
        PluginDeclaration {
            create_factory: some_factory,
            call: counted_call,
            ..decl(sdk, c"demo")
        }
    }
    static OLD_COUNTING: PluginDeclaration = counting(c"0.1.0");
    static NEW_COUNTING: PluginDeclaration = counting(abi::SDK_VERSION_NUL);

    #[test]
    fn plugins_older_than_an_optional_call_are_never_asked_it() {
        let _counting = COUNTING.lock().unwrap_or_else(|e| e.into_inner());
        let base = CALLS.load(Ordering::SeqCst);
        let path = Path::new("/p/demo-provisioner.so");
        let waiting = [WaitingHost {
            host: ObjectKey::new("ns", "h"),
            provisioner_id: String::new(),
            on: bmhctl_plugin_sdk::WaitOn::Progress,
        }];
        let old = check_declaration(path, &OLD_COUNTING, None).unwrap();
        let factory = old.new_factory(PluginConfig::default()).unwrap();
        assert_eq!(factory.due_hosts(&waiting), Ok(None));
        assert_eq!(CALLS.load(Ordering::SeqCst) - base, 0);
        // A plugin of this SDK is asked (this one answers the call with an error).
        let new = check_declaration(path, &NEW_COUNTING, None).unwrap();
        let factory = new.new_factory(PluginConfig::default()).unwrap();
        assert!(factory.due_hosts(&waiting).is_err());
        assert_eq!(CALLS.load(Ordering::SeqCst) - base, 1);
        // The same for the probe (SDK 0.3 on).
        let factory = old.new_factory(PluginConfig::default()).unwrap();
        assert_eq!(factory.probe(), Ok(None));
        assert_eq!(CALLS.load(Ordering::SeqCst) - base, 1);
        let factory = new.new_factory(PluginConfig::default()).unwrap();
        assert!(factory.probe().is_err());
        assert_eq!(CALLS.load(Ordering::SeqCst) - base, 2);
        // And for the data image calls (SDK 0.4 on): an older plugin's provisioner is not
        // asked, and the call is "not supported" (dropping it is one call: DropProvisioner).
        let calls_of = |plugin: &LoadedPlugin| PluginCalls {
            shared: plugin
                .new_factory(PluginConfig::default())
                .unwrap()
                .transport()
                .shared
                .clone(),
            id: 1,
        };
        let answer = calls_of(&old).call::<bool>(ProvisionerCall::GetDataImageStatus);
        assert_eq!(answer, Err(bmhctl_plugin_sdk::data_images_not_supported()));
        assert_eq!(CALLS.load(Ordering::SeqCst) - base, 3);
        let answer = calls_of(&new).call::<bool>(ProvisionerCall::DetachDataImage);
        assert!(answer.is_err_and(|e| e != bmhctl_plugin_sdk::data_images_not_supported()));
        assert_eq!(CALLS.load(Ordering::SeqCst) - base, 5);
    }

    #[test]
    fn plugins_older_than_sdk_0_4_are_never_asked_about_subscriptions() {
        let _counting = COUNTING.lock().unwrap_or_else(|e| e.into_inner());
        static SDK_0_3: PluginDeclaration = counting(c"0.3.0");
        let path = Path::new("/p/demo-provisioner.so");
        let old = check_declaration(path, &SDK_0_3, None).unwrap();
        let factory = old.new_factory(PluginConfig::default()).unwrap();
        // A provisioner handle as `new_provisioner` would make it (this plugin refuses that).
        let calls = PluginCalls {
            shared: factory.transport().shared.clone(),
            id: 1,
        };
        let before = CALLS.load(Ordering::SeqCst);
        let sub = bmh_api::BmcEventSubscription::default();
        let created: Option<String> = calls
            .call(ProvisionerCall::CreateBmcEventSubscription {
                subscription: sub.clone(),
                http_headers: Vec::new(),
            })
            .unwrap();
        assert_eq!(created, None, "not supported");
        let deleted: bool = calls
            .call(ProvisionerCall::DeleteBmcEventSubscription { subscription: sub })
            .unwrap();
        assert!(!deleted, "not supported");
        assert_eq!(CALLS.load(Ordering::SeqCst), before, "the plugin was asked");
        std::mem::forget(calls);
    }

    unsafe extern "C" fn append(out: *mut c_void, data: *const u8, len: usize) {
        let out = unsafe { &mut *(out as *mut Vec<u8>) };
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(data, len) });
    }

    fn read(host: &HostState, request: &[u8]) -> (i32, String) {
        let mut out: Vec<u8> = Vec::new();
        let status = unsafe {
            host_read_object(
                host as *const HostState as *mut c_void,
                request.as_ptr(),
                request.len(),
                &mut out as *mut Vec<u8> as *mut c_void,
                append,
            )
        };
        (status, String::from_utf8(out).unwrap())
    }

    #[test]
    fn read_object_answers_from_the_attached_source() {
        use crate::objects::{ObjectMap, ResolvedSecret, TypedKey};
        let host = HostState {
            plugin: "t".into(),
            default_namespace: "lab".into(),
            sinks: Mutex::new(HashMap::new()),
            objects: RwLock::new(None),
        };
        let widget = br#"{"apiVersion":"example.bmhctl.metal3.io/v1alpha1","kind":"Widget","namespace":"","name":"w"}"#;
        // No source attached yet: absent.
        assert_eq!(read(&host, widget), (STATUS_OK, "null".into()));

        let mut map = ObjectMap::default();
        map.insert_object(
            TypedKey::new(
                "example.bmhctl.metal3.io/v1alpha1",
                "Widget",
                ObjectKey::new("lab", "w"),
            ),
            serde_json::json!({"spec": {"colour": "blue"}}),
        );
        let mut data = BTreeMap::new();
        data.insert("username".to_string(), b"admin".to_vec());
        map.insert_secret(ResolvedSecret::new(ObjectKey::new("lab", "bmc"), data));
        *host.objects.write().unwrap() = Some(Arc::new(map));

        // An empty namespace is the plugin's default namespace.
        assert_eq!(
            read(&host, widget),
            (STATUS_OK, r#"{"spec":{"colour":"blue"}}"#.into())
        );
        let (status, text) = read(
            &host,
            br#"{"apiVersion":"v1","kind":"Secret","namespace":"lab","name":"bmc"}"#,
        );
        assert_eq!(status, STATUS_OK);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["data"]["username"], "YWRtaW4=");
        assert_eq!(v["metadata"]["namespace"], "lab");
        assert_eq!(
            read(
                &host,
                br#"{"apiVersion":"v1","kind":"Secret","namespace":"other","name":"bmc"}"#
            ),
            (STATUS_OK, "null".into())
        );
        let (status, text) = read(&host, b"{not json");
        assert_eq!(status, STATUS_ERROR);
        assert!(text.starts_with("invalid object request: "), "{text}");
    }

    #[test]
    fn a_missing_file_fails_to_open() {
        let err = open(Path::new("/nonexistent/x-provisioner.so"), Some("x"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("failed to open plugin /nonexistent/x-provisioner.so: "),
            "{err}"
        );
    }

    // Its own counter: the tests run at once.
    static API_CALLS_ASKED: AtomicU64 = AtomicU64::new(0);
    unsafe extern "C" fn api_calls_call(
        _: *mut c_void,
        _: *const u8,
        _: usize,
        _: *mut PluginBuffer,
    ) -> i32 {
        API_CALLS_ASKED.fetch_add(1, Ordering::SeqCst);
        1
    }
    const fn asked_api_calls(sdk: &'static CStr) -> PluginDeclaration {
        PluginDeclaration {
            create_factory: some_factory,
            call: api_calls_call,
            ..decl(sdk, c"demo")
        }
    }
    static PROBE_ERA: PluginDeclaration = asked_api_calls(c"0.3.0");
    static API_CALLS_ERA: PluginDeclaration = asked_api_calls(abi::SDK_VERSION_NUL);

    #[test]
    fn plugins_older_than_sdk_0_4_are_never_asked_their_api_calls() {
        let path = Path::new("/p/demo-provisioner.so");
        let old = check_declaration(path, &PROBE_ERA, None).unwrap();
        let factory = old.new_factory(PluginConfig::default()).unwrap();
        assert_eq!(factory.api_calls(), Ok(None));
        assert_eq!(API_CALLS_ASKED.load(Ordering::SeqCst), 0);
        // A 0.3 plugin is still asked what it knows (the probe)...
        assert!(factory.probe().is_err());
        assert_eq!(API_CALLS_ASKED.load(Ordering::SeqCst), 1);
        // ...and a plugin of this SDK is asked (this one answers with an error).
        let new = check_declaration(path, &API_CALLS_ERA, None).unwrap();
        let factory = new.new_factory(PluginConfig::default()).unwrap();
        assert!(factory.api_calls().is_err());
        assert_eq!(API_CALLS_ASKED.load(Ordering::SeqCst), 2);
    }

    // Its own counter: the tests run at once.
    static READY_HOSTS_ASKED: AtomicU64 = AtomicU64::new(0);
    unsafe extern "C" fn ready_hosts_call(
        _: *mut c_void,
        _: *const u8,
        _: usize,
        _: *mut PluginBuffer,
    ) -> i32 {
        READY_HOSTS_ASKED.fetch_add(1, Ordering::SeqCst);
        1
    }
    const fn asked_ready_hosts(sdk: &'static CStr) -> PluginDeclaration {
        PluginDeclaration {
            create_factory: some_factory,
            call: ready_hosts_call,
            ..decl(sdk, c"demo")
        }
    }
    static API_CALLS_ERA_ONLY: PluginDeclaration = asked_ready_hosts(c"0.4.0");
    static READY_HOSTS_ERA: PluginDeclaration = asked_ready_hosts(abi::SDK_VERSION_NUL);

    #[test]
    fn plugins_older_than_sdk_0_5_are_never_asked_which_passes_to_hold() {
        let path = Path::new("/p/demo-provisioner.so");
        let starting = [StartingHost {
            host: ObjectKey::new("ns", "h"),
            provisioner_id: String::new(),
        }];
        let old = check_declaration(path, &API_CALLS_ERA_ONLY, None).unwrap();
        let factory = old.new_factory(PluginConfig::default()).unwrap();
        // "Not supported": the runner starts every pass at once and never asks again.
        assert_eq!(factory.ready_hosts(&starting), Ok(None));
        assert_eq!(READY_HOSTS_ASKED.load(Ordering::SeqCst), 0);
        let new = check_declaration(path, &READY_HOSTS_ERA, None).unwrap();
        let factory = new.new_factory(PluginConfig::default()).unwrap();
        assert!(factory.ready_hosts(&starting).is_err());
        assert_eq!(READY_HOSTS_ASKED.load(Ordering::SeqCst), 1);
    }
}
