//! BMO's demo provisioner (`pkg/provisioner/demo`), as the bmhctl plugin `demo`.

use bmh_api::{Cpu, HardwareDetails, Nic, Storage};
use bmhctl_plugin_sdk::{
    AdoptData, AdoptOptions, DeprovisionOptions, DetachOptions, Event, EventSink, HardwareState,
    HostData, InspectData, InspectOptions, InspectResult, ManagementAccessData, OpResult,
    PluginContext, PowerOffOptions, PowerOnOptions, PrepareData, ProvisionData, ProvisionOptions,
    Provisioner, ProvisionerError, ProvisionerFactory, RegisterOptions, RegisterResult,
    ServicingData, StepOptions, StepResult,
};
use std::time::Duration;

/// The plugin name.
pub const NAME: &str = "demo";

/// `Register` fails with "failed to register new host".
pub const REGISTRATION_ERROR_HOST: &str = "demo-registration-error";
/// `Register` never finishes.
pub const REGISTERING_HOST: &str = "demo-registering";
/// Default path, ends `available`.
pub const AVAILABLE_HOST: &str = "demo-available";
/// `InspectHardware` never finishes.
pub const INSPECTING_HOST: &str = "demo-inspecting";
/// `Prepare`/`Service` fail.
pub const PREPARING_ERROR_HOST: &str = "demo-preparing-error";
/// `Prepare`/`Service` never finish.
pub const PREPARING_HOST: &str = "demo-preparing";
/// `Provision` fails with "validation failed".
pub const VALIDATION_ERROR_HOST: &str = "demo-validation-error";
/// `Provision` never finishes.
pub const PROVISIONING_HOST: &str = "demo-provisioning";

/// How long the demo asks to wait while it pretends to work.
pub const DEMO_REQUEUE: Duration = Duration::from_secs(5);

/// The demo factory (BMO's `demo.Demo`).
#[derive(Debug, Clone, Default)]
pub struct Demo;

impl Demo {
    /// The plugin's factory constructor.
    pub fn new(_ctx: PluginContext) -> Result<Self, ProvisionerError> {
        Ok(Demo)
    }
}

impl ProvisionerFactory for Demo {
    fn new_provisioner(
        &self,
        host: HostData,
        events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        Ok(Box::new(DemoProvisioner::new(host, events)))
    }
}

/// One host's demo provisioner.
pub struct DemoProvisioner {
    name: String,
    prov_id: String,
    events: EventSink,
}

impl DemoProvisioner {
    pub fn new(host: HostData, events: EventSink) -> Self {
        Self {
            name: host.key.name,
            prov_id: host.provisioner_id,
            events,
        }
    }

    /// A prepare or servicing step: fails, or never finishes, for the preparing hosts.
    fn step(&self, failure: &str, opts: StepOptions) -> StepResult {
        let (result, started) = match self.name.as_str() {
            PREPARING_ERROR_HOST => (OpResult::failed(failure), false),
            PREPARING_HOST => (OpResult::in_progress(DEMO_REQUEUE), opts.unprepared),
            _ => (OpResult::done(), true),
        };
        StepResult { result, started }
    }

    fn publish(&self, reason: &str, message: &str) {
        (self.events)(Event {
            reason: reason.to_string(),
            message: message.to_string(),
        });
    }
}

/// The hardware every demo inspection reports.
pub fn demo_hardware_details() -> HardwareDetails {
    let disk = |name: &str| Storage {
        name: name.to_string(),
        rotational: false,
        size_bytes: 93 * 1024 * 1024 * 1024 * 1024,
        model: "Dell CFJ61".to_string(),
        ..Storage::default()
    };
    let nic = |name: &str, model: &str, mac: &str, ip: &str, pxe: bool| Nic {
        name: name.to_string(),
        model: model.to_string(),
        mac: mac.to_string(),
        ip: ip.to_string(),
        speed_gbps: 1,
        pxe,
        ..Nic::default()
    };
    HardwareDetails {
        ram_mebibytes: 128 * 1024,
        nics: vec![
            nic(
                "nic-1",
                "virt-io",
                "ab:cd:12:34:56:78",
                "192.168.100.1",
                true,
            ),
            nic(
                "nic-2",
                "e1000",
                "12:34:56:78:ab:cd",
                "192.168.100.2",
                false,
            ),
        ],
        storage: vec![disk("disk-1 (boot)"), disk("disk-2")],
        cpu: Some(Cpu {
            arch: "x86_64".to_string(),
            model: "Core 2 Duo".to_string(),
            clock_megahertz: 3000.0,
            flags: ["lm", "hypervisor", "vmx"].map(String::from).to_vec(),
            count: 1,
        }),
        ..HardwareDetails::default()
    }
}

impl Provisioner for DemoProvisioner {
    fn register(
        &mut self,
        _data: &ManagementAccessData,
        _opts: RegisterOptions,
    ) -> Result<RegisterResult, ProvisionerError> {
        let result = match self.name.as_str() {
            REGISTRATION_ERROR_HOST => OpResult::failed("failed to register new host"),
            REGISTERING_HOST => OpResult::in_progress(DEMO_REQUEUE),
            _ if self.prov_id.is_empty() => {
                self.prov_id = self.name.clone();
                OpResult::in_progress(Duration::ZERO)
            }
            _ => OpResult::done(),
        };
        Ok(RegisterResult {
            result,
            provisioner_id: self.prov_id.clone(),
        })
    }

    fn inspect_hardware(
        &mut self,
        _data: &InspectData,
        _opts: InspectOptions,
    ) -> Result<InspectResult, ProvisionerError> {
        let done = self.name != INSPECTING_HOST;
        let result = if done {
            self.publish("InspectionComplete", "Hardware inspection completed");
            OpResult::done()
        } else {
            OpResult::in_progress(DEMO_REQUEUE)
        };
        Ok(InspectResult {
            result,
            started: true,
            details: done.then(demo_hardware_details),
        })
    }

    fn update_hardware_state(&mut self) -> Result<HardwareState, ProvisionerError> {
        Ok(HardwareState { powered_on: None })
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
        Ok(self.step("preparing failed", opts))
    }

    fn service(
        &mut self,
        _data: &ServicingData,
        opts: StepOptions,
    ) -> Result<StepResult, ProvisionerError> {
        Ok(self.step("servicing failed", opts))
    }

    fn provision(
        &mut self,
        _data: &ProvisionData,
        _opts: ProvisionOptions,
    ) -> Result<OpResult, ProvisionerError> {
        match self.name.as_str() {
            VALIDATION_ERROR_HOST => Ok(OpResult::failed("validation failed")),
            PROVISIONING_HOST => Ok(OpResult::in_progress(DEMO_REQUEUE)),
            _ => Ok(OpResult::done()),
        }
    }

    fn deprovision(&mut self, _opts: DeprovisionOptions) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }

    fn delete(&mut self) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }

    fn detach(&mut self, _opts: DetachOptions) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }

    fn power_on(&mut self, _opts: PowerOnOptions) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }

    fn power_off(&mut self, _opts: PowerOffOptions) -> Result<OpResult, ProvisionerError> {
        Ok(OpResult::done())
    }

    fn has_capacity(&mut self) -> Result<bool, ProvisionerError> {
        Ok(true)
    }

    /// BMO's demo makes nothing and gives no ID, successfully.
    fn create_bmc_event_subscription(
        &mut self,
        _subscription: &bmh_api::BmcEventSubscription,
        _http_headers: &[std::collections::BTreeMap<String, String>],
    ) -> Result<Option<String>, ProvisionerError> {
        Ok(Some(String::new()))
    }

    /// BMO's demo removes nothing, successfully.
    fn delete_bmc_event_subscription(
        &mut self,
        _subscription: &bmh_api::BmcEventSubscription,
    ) -> Result<bool, ProvisionerError> {
        Ok(true)
    }

    // As BMO's demo: never attached, and attaching or detaching does nothing.
    fn get_data_image_status(&mut self) -> Result<bool, ProvisionerError> {
        Ok(false)
    }

    fn attach_data_image(&mut self, _url: &str) -> Result<(), ProvisionerError> {
        Ok(())
    }

    fn detach_data_image(&mut self) -> Result<(), ProvisionerError> {
        Ok(())
    }
}

bmhctl_plugin_sdk::export_plugin!(name = "demo", factory = Demo::new);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn prov(name: &str, prov_id: &str) -> (DemoProvisioner, Arc<Mutex<Vec<Event>>>) {
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink_events = events.clone();
        let sink: EventSink = Arc::new(move |e| sink_events.lock().unwrap().push(e));
        let host = HostData {
            key: bmh_api::ObjectKey::new("default", name),
            provisioner_id: prov_id.to_string(),
            ..HostData::default()
        };
        (DemoProvisioner::new(host, sink), events)
    }

    #[test]
    fn default_register_uses_the_host_name_as_id() {
        let (mut p, _) = prov("worker-0", "");
        let data = ManagementAccessData::default();
        let RegisterResult {
            result: r,
            provisioner_id: id,
        } = p.register(&data, RegisterOptions::default()).unwrap();
        assert_eq!(
            (r, id.as_str()),
            (OpResult::in_progress(Duration::ZERO), "worker-0")
        );
        let RegisterResult {
            result: r,
            provisioner_id: id,
        } = p.register(&data, RegisterOptions::default()).unwrap();
        assert_eq!((r, id.as_str()), (OpResult::done(), "worker-0"));
    }

    #[test]
    fn named_hosts() {
        let data = ManagementAccessData::default();
        let (mut p, _) = prov(REGISTRATION_ERROR_HOST, "");
        assert_eq!(
            p.register(&data, RegisterOptions::default())
                .unwrap()
                .result
                .error_message,
            "failed to register new host"
        );
        let (mut p, _) = prov(REGISTERING_HOST, "");
        assert!(
            p.register(&data, RegisterOptions::default())
                .unwrap()
                .result
                .dirty
        );
        let (mut p, _) = prov(INSPECTING_HOST, "x");
        let InspectResult {
            result: r,
            started,
            details,
        } = p
            .inspect_hardware(&InspectData::default(), InspectOptions::default())
            .unwrap();
        assert!(r.dirty && started && details.is_none());
        let (mut p, _) = prov(PREPARING_ERROR_HOST, "x");
        assert_eq!(
            p.prepare(
                &PrepareData::default(),
                StepOptions {
                    unprepared: true,
                    restart_on_failure: false
                }
            )
            .unwrap()
            .result
            .error_message,
            "preparing failed"
        );
        assert_eq!(
            p.service(
                &ServicingData::default(),
                StepOptions {
                    unprepared: true,
                    restart_on_failure: false
                }
            )
            .unwrap()
            .result
            .error_message,
            "servicing failed"
        );
        let (mut p, _) = prov(PREPARING_HOST, "x");
        assert_eq!(
            p.prepare(
                &PrepareData::default(),
                StepOptions {
                    unprepared: true,
                    restart_on_failure: false
                }
            )
            .unwrap(),
            StepResult {
                result: OpResult::in_progress(DEMO_REQUEUE),
                started: true
            }
        );
        let (mut p, _) = prov(VALIDATION_ERROR_HOST, "x");
        assert_eq!(
            p.provision(&ProvisionData::default(), ProvisionOptions::default())
                .unwrap()
                .error_message,
            "validation failed"
        );
        let (mut p, _) = prov(PROVISIONING_HOST, "x");
        assert!(
            p.provision(&ProvisionData::default(), ProvisionOptions::default())
                .unwrap()
                .dirty
        );
    }

    #[test]
    fn default_inspection_reports_canned_details_and_an_event() {
        let (mut p, events) = prov(AVAILABLE_HOST, "x");
        let InspectResult {
            result: r,
            started,
            details,
        } = p
            .inspect_hardware(&InspectData::default(), InspectOptions::default())
            .unwrap();
        assert!(!r.dirty && started);
        let d = details.unwrap();
        assert_eq!(d.ram_mebibytes, 131072);
        assert_eq!(d.cpu.unwrap().model, "Core 2 Duo");
        assert!(d.nics.iter().all(|n| n.lldp.is_none()));
        assert_eq!(events.lock().unwrap()[0].reason, "InspectionComplete");
        assert_eq!(p.update_hardware_state().unwrap().powered_on, None);
    }

    #[test]
    fn data_images_are_never_attached_as_bmos_demo() {
        let (mut p, events) = prov(AVAILABLE_HOST, "x");
        assert_eq!(p.get_data_image_status(), Ok(false));
        assert_eq!(p.attach_data_image("http://x/iso"), Ok(()));
        assert_eq!(p.get_data_image_status(), Ok(false));
        assert_eq!(p.detach_data_image(), Ok(()));
        assert!(events.lock().unwrap().is_empty());
    }

    #[test]
    fn declaration() {
        assert_eq!(
            BMHCTL_PROVISIONER_PLUGIN.abi_version,
            bmhctl_plugin_sdk::ABI_VERSION
        );
        let name = unsafe { std::ffi::CStr::from_ptr(BMHCTL_PROVISIONER_PLUGIN.name) };
        assert_eq!(name.to_str().unwrap(), NAME);
        assert!(BMHCTL_PROVISIONER_PLUGIN.host_configure.is_none());
    }
}
