//! A scriptable provisioner for behaviours the fixture can't produce (failures, no capacity,
//! unknown power state, transient errors).
//!
//! Every method answers from its script queue first; once the queue is empty it falls back to a
//! simple, always-succeeding behaviour (power changes take one dirty call, like the fixture's).
//! Operations are logged in [`MockState::calls`] so tests can assert what was (not) called.

use crate::provisioners::fixture::canned_hardware_details;
use bmhctl_plugin_sdk::{
    AdoptData, AdoptOptions, DeprovisionOptions, DetachOptions, Event, EventSink,
    FirmwareComponentStatus, FirmwareSettings, FirmwareSettingsOptions, HardwareState, HostData,
    ImageFormat, InspectData, InspectOptions, InspectResult, ManagementAccessData, OpResult,
    PowerOffOptions, PowerOnOptions, PrepareData, ProvisionData, ProvisionOptions, Provisioner,
    ProvisionerError, ProvisionerFactory, RegisterOptions, RegisterResult, ServicingData,
    StepOptions, StepResult,
};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub type Reply<T> = Result<T, ProvisionerError>;

/// Queued answers, consumed one per call.
#[derive(Default)]
pub struct Script {
    pub new_provisioner: VecDeque<Reply<()>>,
    pub register: VecDeque<Reply<RegisterResult>>,
    pub inspect: VecDeque<Reply<InspectResult>>,
    pub hardware_state: VecDeque<Reply<HardwareState>>,
    pub adopt: VecDeque<Reply<OpResult>>,
    pub prepare: VecDeque<Reply<StepResult>>,
    pub provision: VecDeque<Reply<OpResult>>,
    pub deprovision: VecDeque<Reply<OpResult>>,
    pub delete: VecDeque<Reply<OpResult>>,
    pub detach: VecDeque<Reply<OpResult>>,
    pub power_on: VecDeque<Reply<OpResult>>,
    pub power_off: VecDeque<Reply<OpResult>>,
    pub has_capacity: VecDeque<Reply<bool>>,
    pub data_image_status: VecDeque<Reply<bool>>,
    pub attach_data_image: VecDeque<Reply<()>>,
    pub detach_data_image: VecDeque<Reply<()>>,
}

/// What the mock knows and records; shared by the factory and every provisioner it creates.
pub struct MockState {
    pub script: Script,
    /// The operations called, in order, e.g. `power_off(mode=soft, force=false)`.
    pub calls: Vec<String>,
    /// Every `HostData` the factory was given.
    pub created: Vec<HostData>,
    /// The simulated power state `update_hardware_state` reports (`None` = unknown).
    pub powered_on: Option<bool>,
    /// The ID `register` hands out to a host without one.
    pub new_id: String,
    pub health: String,
    pub power_failure: bool,
    /// When set, a script-less `deprovision` keeps failing with this message.
    pub always_fail_deprovision: Option<String>,
    /// When set, every logged operation also publishes an event `MockCall` (its name).
    pub publish_calls: bool,
    /// What `get_firmware_settings` reports (logged as a call).
    pub firmware_settings: FirmwareSettings,
    /// What `get_firmware_components` reports (not logged: registration reads it every pass).
    pub firmware_components: Vec<FirmwareComponentStatus>,
    /// When set, both firmware reads fail with this error.
    pub firmware_error: Option<ProvisionerError>,
    /// The data of every `prepare` and `service` call, in order.
    pub prepared: Vec<PrepareData>,
    pub serviced: Vec<ServicingData>,
    /// The data of every `provision` call, in order.
    pub provisioned: Vec<ProvisionData>,
    /// The data of every `register` call, in order.
    pub registered: Vec<ManagementAccessData>,
    /// The data image attached (a script-less attach sets it, a detach clears it).
    pub data_image: Option<String>,
}

impl Default for MockState {
    fn default() -> Self {
        Self {
            script: Script::default(),
            calls: Vec::new(),
            created: Vec::new(),
            powered_on: Some(false),
            new_id: "mock-id".into(),
            health: String::new(),
            power_failure: false,
            always_fail_deprovision: None,
            publish_calls: false,
            firmware_settings: FirmwareSettings::default(),
            firmware_components: Vec::new(),
            firmware_error: None,
            prepared: Vec::new(),
            serviced: Vec::new(),
            provisioned: Vec::new(),
            registered: Vec::new(),
            data_image: None,
        }
    }
}

/// The factory; clones share the state.
#[derive(Clone, Default)]
pub struct Mock(pub Arc<Mutex<MockState>>);

impl Mock {
    pub fn new() -> Self {
        Self::default()
    }

    /// Edits the mock's state (scripts, knobs).
    pub fn with(&self, f: impl FnOnce(&mut MockState)) -> &Self {
        f(&mut self.0.lock().unwrap());
        self
    }

    pub fn calls(&self) -> Vec<String> {
        self.0.lock().unwrap().calls.clone()
    }

    /// The calls made since the last `take_calls`.
    pub fn take_calls(&self) -> Vec<String> {
        std::mem::take(&mut self.0.lock().unwrap().calls)
    }

    pub fn called(&self, prefix: &str) -> bool {
        self.calls().iter().any(|c| c.starts_with(prefix))
    }

    pub fn created(&self) -> Vec<HostData> {
        self.0.lock().unwrap().created.clone()
    }
}

impl ProvisionerFactory for Mock {
    fn new_provisioner(
        &self,
        host: HostData,
        events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        let mut st = self.0.lock().unwrap();
        st.created.push(host.clone());
        if let Some(r) = st.script.new_provisioner.pop_front() {
            r?;
        }
        Ok(Box::new(MockProvisioner {
            state: self.0.clone(),
            prov_id: host.provisioner_id,
            events,
        }))
    }
}

pub struct MockProvisioner {
    state: Arc<Mutex<MockState>>,
    prov_id: String,
    events: EventSink,
}

impl MockProvisioner {
    /// Logs the call and returns the scripted reply, if any.
    fn call<T>(
        &self,
        name: String,
        queue: impl FnOnce(&mut Script) -> &mut VecDeque<Reply<T>>,
    ) -> Option<Reply<T>> {
        let mut st = self.state.lock().unwrap();
        if st.publish_calls {
            (self.events)(Event {
                reason: "MockCall".into(),
                message: name.clone(),
            });
        }
        st.calls.push(name);
        queue(&mut st.script).pop_front()
    }

    fn set_power(&self, on: bool) -> Reply<OpResult> {
        let mut st = self.state.lock().unwrap();
        if st.powered_on == Some(on) {
            return Ok(OpResult::done());
        }
        st.powered_on = Some(on);
        Ok(OpResult::in_progress(Duration::ZERO))
    }
}

impl Provisioner for MockProvisioner {
    fn register(
        &mut self,
        data: &ManagementAccessData,
        opts: RegisterOptions,
    ) -> Reply<RegisterResult> {
        self.state.lock().unwrap().registered.push(data.clone());
        let name = format!(
            "register(credentials_changed={}, restart={})",
            opts.credentials_changed, opts.restart_on_failure
        );
        if let Some(r) = self.call(name, |s| &mut s.register) {
            return r;
        }
        if self.prov_id.is_empty() {
            self.prov_id = self.state.lock().unwrap().new_id.clone();
        }
        Ok(RegisterResult {
            result: OpResult::done(),
            provisioner_id: self.prov_id.clone(),
        })
    }

    fn preprovisioning_image_formats(&mut self) -> Reply<Option<Vec<ImageFormat>>> {
        Ok(None)
    }

    fn inspect_hardware(
        &mut self,
        _data: &InspectData,
        opts: InspectOptions,
    ) -> Reply<InspectResult> {
        let InspectOptions {
            restart_on_failure,
            refresh,
            force_reboot,
        } = opts;
        let name = format!(
            "inspect_hardware(restart={restart_on_failure}, refresh={refresh}, force_reboot={force_reboot})"
        );
        self.call(name, |s| &mut s.inspect).unwrap_or_else(|| {
            Ok(InspectResult {
                result: OpResult::done(),
                started: false,
                details: Some(canned_hardware_details()),
            })
        })
    }

    fn update_hardware_state(&mut self) -> Reply<HardwareState> {
        let mut st = self.state.lock().unwrap();
        if let Some(r) = st.script.hardware_state.pop_front() {
            return r;
        }
        Ok(HardwareState {
            powered_on: st.powered_on,
        })
    }

    fn adopt(&mut self, _data: &AdoptData, opts: AdoptOptions) -> Reply<OpResult> {
        self.call(format!("adopt(restart={})", opts.restart_on_failure), |s| {
            &mut s.adopt
        })
        .unwrap_or_else(|| Ok(OpResult::done()))
    }

    fn prepare(&mut self, data: &PrepareData, opts: StepOptions) -> Reply<StepResult> {
        self.state.lock().unwrap().prepared.push(data.clone());
        let StepOptions {
            unprepared,
            restart_on_failure,
        } = opts;
        let name = format!("prepare(unprepared={unprepared}, restart={restart_on_failure})");
        self.call(name, |s| &mut s.prepare).unwrap_or_else(|| {
            Ok(StepResult {
                result: OpResult::done(),
                started: unprepared,
            })
        })
    }

    fn service(&mut self, data: &ServicingData, opts: StepOptions) -> Reply<StepResult> {
        let mut st = self.state.lock().unwrap();
        st.calls.push("service".into());
        st.serviced.push(data.clone());
        Ok(StepResult {
            result: OpResult::done(),
            started: opts.unprepared,
        })
    }

    fn provision(&mut self, data: &ProvisionData, opts: ProvisionOptions) -> Reply<OpResult> {
        self.state.lock().unwrap().provisioned.push(data.clone());
        let name = format!(
            "provision(url={}, force_reboot={})",
            data.image.url, opts.force_reboot
        );
        self.call(name, |s| &mut s.provision)
            .unwrap_or_else(|| Ok(OpResult::done()))
    }

    fn deprovision(&mut self, opts: DeprovisionOptions) -> Reply<OpResult> {
        let name = format!("deprovision(restart={})", opts.restart_on_failure);
        if let Some(r) = self.call(name, |s| &mut s.deprovision) {
            return r;
        }
        match self.state.lock().unwrap().always_fail_deprovision.clone() {
            Some(msg) => Ok(OpResult::failed(msg)),
            None => Ok(OpResult::done()),
        }
    }

    fn delete(&mut self) -> Reply<OpResult> {
        self.call("delete".into(), |s| &mut s.delete)
            .unwrap_or_else(|| Ok(OpResult::done()))
    }

    fn detach(&mut self, opts: DetachOptions) -> Reply<OpResult> {
        self.call(format!("detach(force={})", opts.force), |s| &mut s.detach)
            .unwrap_or_else(|| Ok(OpResult::done()))
    }

    fn power_on(&mut self, opts: PowerOnOptions) -> Reply<OpResult> {
        let name = format!("power_on(force={})", opts.force);
        match self.call(name, |s| &mut s.power_on) {
            Some(r) => r,
            None => self.set_power(true),
        }
    }

    fn power_off(&mut self, opts: PowerOffOptions) -> Reply<OpResult> {
        let name = format!("power_off(mode={}, force={})", opts.mode, opts.force);
        match self.call(name, |s| &mut s.power_off) {
            Some(r) => r,
            None => self.set_power(false),
        }
    }

    fn has_capacity(&mut self) -> Reply<bool> {
        let mut st = self.state.lock().unwrap();
        st.script.has_capacity.pop_front().unwrap_or(Ok(true))
    }

    fn get_firmware_settings(&mut self, opts: FirmwareSettingsOptions) -> Reply<FirmwareSettings> {
        let mut st = self.state.lock().unwrap();
        st.calls.push(format!(
            "get_firmware_settings(include_schema={})",
            opts.include_schema
        ));
        match &st.firmware_error {
            Some(e) => Err(e.clone()),
            None => Ok(st.firmware_settings.clone()),
        }
    }

    fn get_firmware_components(&mut self) -> Reply<Vec<FirmwareComponentStatus>> {
        // Not logged: every registration check reads the components (as BMO does).
        let st = self.state.lock().unwrap();
        match &st.firmware_error {
            Some(e) => Err(e.clone()),
            None => Ok(st.firmware_components.clone()),
        }
    }

    fn add_bmc_event_subscription(
        &mut self,
        _subscription: &serde_json::Value,
        _http_headers: &[BTreeMap<String, String>],
    ) -> Reply<OpResult> {
        Ok(OpResult::done())
    }

    fn remove_bmc_event_subscription(
        &mut self,
        _subscription: &serde_json::Value,
    ) -> Reply<OpResult> {
        Ok(OpResult::done())
    }

    fn get_data_image_status(&mut self) -> Reply<bool> {
        match self.call("get_data_image_status".into(), |s| &mut s.data_image_status) {
            Some(r) => r,
            None => Ok(self.state.lock().unwrap().data_image.is_some()),
        }
    }

    fn attach_data_image(&mut self, url: &str) -> Reply<()> {
        match self.call(format!("attach_data_image({url})"), |s| {
            &mut s.attach_data_image
        }) {
            Some(r) => r,
            None => {
                self.state.lock().unwrap().data_image = Some(url.to_string());
                Ok(())
            }
        }
    }

    fn detach_data_image(&mut self) -> Reply<()> {
        match self.call("detach_data_image".into(), |s| &mut s.detach_data_image) {
            Some(r) => r,
            None => {
                self.state.lock().unwrap().data_image = None;
                Ok(())
            }
        }
    }

    fn has_power_failure(&mut self) -> bool {
        self.state.lock().unwrap().power_failure
    }

    fn get_health(&mut self) -> String {
        self.state.lock().unwrap().health.clone()
    }
}
