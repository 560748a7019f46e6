//! `hello`: a small but complete bmhctl provisioner plugin, built outside the bmhctl workspace.
//!
//! It is what a third party starts from: one crate, depending only on `bmhctl-plugin-sdk` and
//! `bmh-api`, that implements [`ProvisionerFactory`] and [`Provisioner`] and exports them with
//! [`export_plugin!`](bmhctl_plugin_sdk::export_plugin). bmhctl loads it as
//! `$PROVISIONER_PLUGIN_DIR/hello-provisioner.so` when run with `--provisioner hello`.
//!
//! What it does (a pretend backend that never fails):
//!
//! * every host registers at once, with the provisioner ID `hello-<host name>`;
//! * inspection finishes at once with a small canned [`HardwareDetails`];
//! * prepare, service, provision, deprovision, delete and detach finish at once;
//! * the power state follows `power_on`/`power_off`; it and the provisioned image are kept
//!   between passes (and bmhctl runs) through [`Provisioner::persistent_state`];
//! * each step publishes an event, which bmhctl records for the host.

use bmh_api::{Cpu, HardwareDetails, HardwareSystemVendor, Nic, Storage};
use bmhctl_plugin_sdk::serde_json::{Value, json};
use bmhctl_plugin_sdk::{
    AdoptData, AdoptOptions, DeprovisionOptions, DetachOptions, Event, EventSink,
    FirmwareComponentStatus, FirmwareSettings, FirmwareSettingsOptions, HEALTH_OK, HardwareState,
    HostData, ImageFormat, InspectData, InspectOptions, InspectResult, Logger,
    ManagementAccessData, OpResult, PluginContext, PowerOffOptions, PowerOnOptions, PrepareData,
    ProvisionData, ProvisionOptions, Provisioner, ProvisionerError, ProvisionerFactory,
    RegisterOptions, RegisterResult, ServicingData, StepOptions, StepResult,
};
use std::collections::BTreeMap;

/// The plugin's name: the `NAME` in `--provisioner NAME` and in `NAME-provisioner.so`.
pub const NAME: &str = "hello";

/// Every host's provisioner ID is this prefix followed by the host's name.
pub const ID_PREFIX: &str = "hello-";

/// The factory: made once, when bmhctl loads the plugin.
pub struct Hello {
    logger: Logger,
}

impl Hello {
    /// The factory constructor named in `export_plugin!`. A real backend would read its settings
    /// here (environment variables, files, or objects through `ctx.objects()`) and return
    /// `Err(..)` when they are unusable; bmhctl then refuses to start with that message.
    pub fn new(ctx: PluginContext) -> Result<Self, ProvisionerError> {
        let logger = ctx.logger();
        logger.info(format!(
            "hello provisioner ready (default namespace {:?})",
            ctx.default_namespace()
        ));
        Ok(Self { logger })
    }
}

impl ProvisionerFactory for Hello {
    fn new_provisioner(
        &self,
        host: HostData,
        events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        self.logger.debug(format!(
            "provisioner for {}/{}",
            host.key.namespace, host.key.name
        ));
        Ok(Box::new(HelloProvisioner::new(host, events)?))
    }
}

/// What `hello` remembers about a host between passes, as JSON
/// (`{"poweredOn": true, "image": "http://..."}`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HelloState {
    pub powered_on: bool,
    /// The URL of the provisioned image; empty when none is.
    pub image: String,
}

impl HelloState {
    /// The state bmhctl handed back, or the initial state (powered off, no image) when none.
    pub fn from_json(value: Option<&Value>) -> Result<Self, ProvisionerError> {
        let Some(value) = value.filter(|v| !v.is_null()) else {
            return Ok(Self::default());
        };
        let bad = || ProvisionerError::Other(format!("hello: invalid stored state {value}"));
        let object = value.as_object().ok_or_else(bad)?;
        let powered_on = match object.get("poweredOn") {
            None => false,
            Some(v) => v.as_bool().ok_or_else(bad)?,
        };
        let image = match object.get("image") {
            None => String::new(),
            Some(v) => v.as_str().ok_or_else(bad)?.to_string(),
        };
        Ok(Self { powered_on, image })
    }

    pub fn to_json(&self) -> Value {
        json!({ "poweredOn": self.powered_on, "image": self.image })
    }
}

/// One host's provisioner, made for one pass of the state machine.
pub struct HelloProvisioner {
    name: String,
    boot_mac: String,
    prov_id: String,
    state: HelloState,
    events: EventSink,
}

impl HelloProvisioner {
    pub fn new(host: HostData, events: EventSink) -> Result<Self, ProvisionerError> {
        Ok(Self {
            state: HelloState::from_json(host.provisioner_state.as_ref())?,
            name: host.key.name,
            boot_mac: host.boot_mac_address,
            prov_id: host.provisioner_id,
            events,
        })
    }

    /// The ID `hello` gives the host.
    pub fn id_for(name: &str) -> String {
        format!("{ID_PREFIX}{name}")
    }

    fn publish(&self, reason: &str, message: impl Into<String>) {
        (self.events)(Event {
            reason: reason.to_string(),
            message: message.into(),
        });
    }
}

/// The hardware `hello` reports for every host (the NIC gets the host's boot MAC).
pub fn hello_hardware_details(host_name: &str, boot_mac: &str, cpu_arch: &str) -> HardwareDetails {
    HardwareDetails {
        system_vendor: Some(HardwareSystemVendor {
            manufacturer: "Hello Systems".to_string(),
            product_name: "Hello Server 1".to_string(),
            serial_number: format!("HELLO-{host_name}"),
        }),
        ram_mebibytes: 16 * 1024,
        nics: vec![Nic {
            name: "eth0".to_string(),
            model: "hello-nic".to_string(),
            mac: if boot_mac.is_empty() {
                "52:54:00:00:00:01".to_string()
            } else {
                boot_mac.to_string()
            },
            ip: "192.0.2.10".to_string(),
            speed_gbps: 10,
            pxe: true,
            ..Nic::default()
        }],
        storage: vec![Storage {
            name: "/dev/sda".to_string(),
            rotational: false,
            size_bytes: 480 * 1000 * 1000 * 1000,
            model: "Hello SSD".to_string(),
            ..Storage::default()
        }],
        cpu: Some(Cpu {
            arch: if cpu_arch.is_empty() {
                "x86_64".to_string()
            } else {
                cpu_arch.to_string()
            },
            model: "Hello CPU".to_string(),
            clock_megahertz: 2400.0,
            flags: vec!["lm".to_string(), "vmx".to_string()],
            count: 4,
        }),
        hostname: host_name.to_string(),
        ..HardwareDetails::default()
    }
}

impl Provisioner for HelloProvisioner {
    fn register(
        &mut self,
        _data: &ManagementAccessData,
        _opts: RegisterOptions,
    ) -> Result<RegisterResult, ProvisionerError> {
        let id = Self::id_for(&self.name);
        if self.prov_id != id {
            self.prov_id = id;
            self.publish("Registered", format!("Registered host as {}", self.prov_id));
        }
        Ok(RegisterResult {
            result: OpResult::done(),
            provisioner_id: self.prov_id.clone(),
        })
    }

    fn preprovisioning_image_formats(
        &mut self,
    ) -> Result<Option<Vec<ImageFormat>>, ProvisionerError> {
        // No preprovisioning image needed.
        Ok(None)
    }

    fn inspect_hardware(
        &mut self,
        data: &InspectData,
        _opts: InspectOptions,
    ) -> Result<InspectResult, ProvisionerError> {
        self.publish("InspectionComplete", "Hardware inspection completed");
        let details = hello_hardware_details(&self.name, &self.boot_mac, &data.cpu_architecture);
        Ok(InspectResult {
            result: OpResult::done(),
            started: true,
            details: Some(details),
        })
    }

    fn update_hardware_state(&mut self) -> Result<HardwareState, ProvisionerError> {
        Ok(HardwareState {
            powered_on: Some(self.state.powered_on),
        })
    }

    fn adopt(
        &mut self,
        _data: &AdoptData,
        _opts: AdoptOptions,
    ) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }

    fn prepare(
        &mut self,
        _data: &PrepareData,
        opts: StepOptions,
    ) -> Result<StepResult, ProvisionerError> {
        let StepOptions { unprepared, .. } = opts;
        // `started` says whether new settings were applied: exactly when some were pending.
        Ok(StepResult {
            result: OpResult::done(),
            started: unprepared,
        })
    }

    fn service(
        &mut self,
        _data: &ServicingData,
        opts: StepOptions,
    ) -> Result<StepResult, ProvisionerError> {
        let StepOptions { unprepared, .. } = opts;
        Ok(StepResult {
            result: OpResult::done(),
            started: unprepared,
        })
    }

    fn provision(
        &mut self,
        data: &ProvisionData,
        _opts: ProvisionOptions,
    ) -> Result<OpResult, ProvisionerError> {
        if self.state.image != data.image.url {
            self.state.image = data.image.url.clone();
            self.publish(
                "ProvisioningComplete",
                format!("Image {} provisioned", data.image.url),
            );
        }
        Ok(OpResult::done())
    }

    fn deprovision(&mut self, _opts: DeprovisionOptions) -> Result<OpResult, ProvisionerError> {
        if !self.state.image.is_empty() {
            self.state.image.clear();
            self.publish("DeprovisioningComplete", "Image removed");
        }
        Ok(OpResult::done())
    }

    fn delete(&mut self) -> Result<OpResult, ProvisionerError> {
        self.publish("Deleted", format!("Host {} forgotten", self.prov_id));
        Ok(OpResult::done())
    }

    fn detach(&mut self, _opts: DetachOptions) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }

    fn power_on(&mut self, _opts: PowerOnOptions) -> Result<OpResult, ProvisionerError> {
        if !self.state.powered_on {
            self.state.powered_on = true;
            self.publish("PowerOn", "Host powered on");
        }
        Ok(OpResult::done())
    }

    fn power_off(&mut self, _opts: PowerOffOptions) -> Result<OpResult, ProvisionerError> {
        if self.state.powered_on {
            self.state.powered_on = false;
            self.publish("PowerOff", "Host powered off");
        }
        Ok(OpResult::done())
    }

    fn has_capacity(&mut self) -> Result<bool, ProvisionerError> {
        Ok(true)
    }

    fn get_firmware_settings(
        &mut self,
        _opts: FirmwareSettingsOptions,
    ) -> Result<FirmwareSettings, ProvisionerError> {
        Ok(FirmwareSettings::default())
    }

    fn get_firmware_components(
        &mut self,
    ) -> Result<Vec<FirmwareComponentStatus>, ProvisionerError> {
        Ok(Vec::new())
    }

    fn add_bmc_event_subscription(
        &mut self,
        _subscription: &Value,
        _http_headers: &[BTreeMap<String, String>],
    ) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }

    fn remove_bmc_event_subscription(
        &mut self,
        _subscription: &Value,
    ) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }

    fn get_data_image_status(&mut self) -> Result<bool, ProvisionerError> {
        Ok(false)
    }

    fn attach_data_image(&mut self, _url: &str) -> Result<(), ProvisionerError> {
        Ok(())
    }

    fn detach_data_image(&mut self) -> Result<(), ProvisionerError> {
        Ok(())
    }

    fn has_power_failure(&mut self) -> bool {
        false
    }

    fn get_health(&mut self) -> String {
        HEALTH_OK.to_string()
    }

    fn persistent_state(&self) -> Option<Value> {
        Some(self.state.to_json())
    }
}

// The one line that makes this crate a bmhctl plugin: it exports the `BMHCTL_PROVISIONER_PLUGIN`
// declaration (ABI version, SDK version, the name "hello") and the `extern "C"` entry points
// that decode bmhctl's JSON requests and call `Hello` and `HelloProvisioner`.
bmhctl_plugin_sdk::export_plugin!(name = "hello", factory = Hello::new);

#[cfg(test)]
mod tests {
    use super::*;
    use bmhctl_plugin_sdk::abi::{PluginBuffer, ProvisionerCall, Request, Response, STATUS_OK};
    use bmhctl_plugin_sdk::serde_json;
    use std::sync::{Arc, Mutex};

    type Events = Arc<Mutex<Vec<Event>>>;

    fn prov(name: &str, prov_id: &str, state: Option<Value>) -> (HelloProvisioner, Events) {
        let events: Events = Arc::new(Mutex::new(Vec::new()));
        let sink_events = events.clone();
        let sink: EventSink = Arc::new(move |e| sink_events.lock().unwrap().push(e));
        let host = HostData {
            key: bmh_api::ObjectKey::new("default", name),
            boot_mac_address: "00:11:22:33:44:55".to_string(),
            provisioner_id: prov_id.to_string(),
            provisioner_state: state,
            ..HostData::default()
        };
        (HelloProvisioner::new(host, sink).unwrap(), events)
    }

    fn reasons(events: &Events) -> Vec<String> {
        events
            .lock()
            .unwrap()
            .iter()
            .map(|e| e.reason.clone())
            .collect()
    }

    #[test]
    fn register_assigns_the_hello_id_at_once() {
        let data = ManagementAccessData::default();
        let (mut p, events) = prov("worker-0", "", None);
        let RegisterResult {
            result: r,
            provisioner_id: id,
        } = p.register(&data, RegisterOptions::default()).unwrap();
        assert_eq!((r, id.as_str()), (OpResult::done(), "hello-worker-0"));
        assert_eq!(reasons(&events), ["Registered"]);
        // Known already: no new event.
        let (mut p, events) = prov("worker-0", "hello-worker-0", None);
        assert_eq!(
            p.register(
                &data,
                RegisterOptions {
                    credentials_changed: true,
                    restart_on_failure: false
                }
            )
            .unwrap()
            .provisioner_id,
            "hello-worker-0"
        );
        assert!(reasons(&events).is_empty());
    }

    #[test]
    fn inspection_reports_canned_details_with_the_boot_mac() {
        let (mut p, events) = prov("worker-0", "hello-worker-0", None);
        let InspectResult {
            result: r,
            started,
            details,
        } = p
            .inspect_hardware(&InspectData::default(), InspectOptions::default())
            .unwrap();
        assert!(!r.dirty && started);
        let d = details.unwrap();
        assert_eq!(d.nics[0].mac, "00:11:22:33:44:55");
        assert_eq!(d.cpu.unwrap().arch, "x86_64");
        assert_eq!(d.hostname, "worker-0");
        assert_eq!(reasons(&events), ["InspectionComplete"]);
    }

    #[test]
    fn power_and_image_survive_through_persistent_state() {
        let (mut p, _) = prov("worker-0", "hello-worker-0", None);
        assert_eq!(p.update_hardware_state().unwrap().powered_on, Some(false));
        assert_eq!(
            p.power_on(PowerOnOptions::default()).unwrap(),
            OpResult::done()
        );
        let mut data = ProvisionData::default();
        data.image.url = "http://images.example/os.qcow2".to_string();
        assert_eq!(
            p.provision(&data, ProvisionOptions::default()).unwrap(),
            OpResult::done()
        );
        let saved = p.persistent_state();
        assert_eq!(
            saved,
            Some(json!({"poweredOn": true, "image": "http://images.example/os.qcow2"}))
        );

        // The next pass starts from what was saved.
        let (mut p, events) = prov("worker-0", "hello-worker-0", saved);
        assert_eq!(p.update_hardware_state().unwrap().powered_on, Some(true));
        p.power_off(PowerOffOptions::default()).unwrap();
        p.deprovision(DeprovisionOptions::default()).unwrap();
        assert_eq!(p.persistent_state(), Some(HelloState::default().to_json()));
        assert_eq!(reasons(&events), ["PowerOff", "DeprovisioningComplete"]);
    }

    #[test]
    fn invalid_stored_state_is_an_error() {
        let err = HelloState::from_json(Some(&json!({"poweredOn": "yes"}))).unwrap_err();
        assert!(err.to_string().contains("invalid stored state"), "{err}");
        assert_eq!(
            HelloState::from_json(Some(&Value::Null)).unwrap(),
            HelloState::default()
        );
    }

    #[test]
    fn the_declaration_names_the_plugin() {
        let decl = &BMHCTL_PROVISIONER_PLUGIN;
        assert_eq!(decl.abi_version, bmhctl_plugin_sdk::ABI_VERSION);
        let name = unsafe { std::ffi::CStr::from_ptr(decl.name) };
        assert_eq!(name.to_str().unwrap(), NAME);
        let sdk = unsafe { std::ffi::CStr::from_ptr(decl.sdk_version) };
        assert_eq!(sdk.to_str().unwrap(), bmhctl_plugin_sdk::SDK_VERSION);
        assert!(decl.host_configure.is_none());
    }

    /// Drives the exported entry points the way bmhctl does: JSON in, JSON out.
    #[test]
    fn the_c_abi_round_trip() {
        let decl = &BMHCTL_PROVISIONER_PLUGIN;
        let take = |buf: PluginBuffer| {
            let bytes = unsafe { buf.as_slice() }.to_vec();
            unsafe { (decl.free_buffer)(buf.ptr, buf.len) };
            bytes
        };
        let config = br#"{"name":"hello","features":[],"default_namespace":"default"}"#;
        let mut error = PluginBuffer::empty();
        let factory = unsafe {
            (decl.create_factory)(config.as_ptr(), config.len(), std::ptr::null(), &mut error)
        };
        assert!(!factory.is_null(), "{:?}", String::from_utf8(take(error)));
        let call = |request: &Request| {
            let bytes = serde_json::to_vec(request).unwrap();
            let mut out = PluginBuffer::empty();
            let status = unsafe { (decl.call)(factory, bytes.as_ptr(), bytes.len(), &mut out) };
            assert_eq!(status, STATUS_OK);
            serde_json::from_slice::<Response>(&take(out)).unwrap()
        };
        let host = HostData {
            key: bmh_api::ObjectKey::new("default", "worker-7"),
            ..HostData::default()
        };
        assert_eq!(
            call(&Request::NewProvisioner { id: 1, host }),
            Response::Ok(Value::Null)
        );
        let answer = call(&Request::Call {
            id: 1,
            call: ProvisionerCall::Register {
                data: ManagementAccessData::default(),
                opts: RegisterOptions::default(),
            },
        });
        assert_eq!(
            answer,
            Response::Ok(json!([OpResult::done(), "hello-worker-7"]))
        );
        assert_eq!(
            call(&Request::DropProvisioner { id: 1 }),
            Response::Ok(Value::Null)
        );
        // A call for a provisioner that is gone is an error, not a crash.
        let answer = call(&Request::Call {
            id: 1,
            call: ProvisionerCall::GetHealth,
        });
        assert!(matches!(answer, Response::Err(_)), "{answer:?}");
    }
}
