//! The `fixture` provisioner: BMO's `fixture.go`, a fake backend whose operations finish after a
//! fixed number of calls and which reports canned hardware (state-machine spec section 5). Unlike
//! BMO's, its state is per host ([`FixtureState`], in [`HostData::provisioner_state`]), knobs also
//! come from annotations ([`ANNOTATION_PREFIX`]), `BecomeReadyCounter` is counted per process (a
//! `NotReady` creation has no state to keep), `prepare` and `service` apply firmware changes so
//! the firmware objects can complete, and a data image stays attached until detached.

use super::lock;
use crate::provisioners::fixture_subscriptions::FixtureSubscriptions;
use bmh_api::{Cpu, CustomDeploy, HardwareDetails, Image, Lldp, Nic, ObjectKey, Storage};
use bmhctl_plugin_sdk::{
    AdoptData, AdoptOptions, DeprovisionOptions, DetachOptions, Event, EventSink,
    FirmwareComponentStatus, FirmwareSettings, FirmwareSettingsOptions, HardwareState, HostData,
    InspectData, InspectOptions, InspectResult, ManagementAccessData, OpResult, PowerOffOptions,
    PowerOnOptions, PrepareData, ProvisionData, ProvisionOptions, Provisioner, ProvisionerError,
    ProvisionerFactory, RegisterOptions, RegisterResult, ServicingData, StepOptions, StepResult,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The name the fixture is selected by (`--provisioner fixture`).
pub const NAME: &str = "fixture";

/// Requeue delay of `adopt` (BMO `shortRetryDelay`).
pub const SHORT_RETRY_DELAY: Duration = Duration::from_secs(3);
/// Requeue delay of `provision` and `deprovision` (BMO `longRetryDelay`).
pub const LONG_RETRY_DELAY: Duration = Duration::from_secs(10);
/// Requeue delay after an inspection was started (BMO `inspectionRequeueDelay`).
pub const INSPECTION_REQUEUE_DELAY: Duration = Duration::from_secs(2);
/// Requeue delay after a new registration (BMO `DefaultRequeueSecs`).
pub const DEFAULT_REQUEUE: Duration = Duration::from_secs(5);

/// The provisioner ID every newly registered host gets (BMO gives all hosts the same one).
pub const TEMPORARY_FAKE_ID: &str = "temporary-fake-id";

/// Size of each canned disk in TiB (BMO `DefaultSizeBytes`).
const DEFAULT_SIZE_TIB: i64 = 93;
/// BMO `DefaultGB`: the multiplier between binary units.
const DEFAULT_GB: i64 = 1024;
/// BMO `DefaultClockMegahertz` (in GHz, despite its name).
const DEFAULT_CLOCK_GHZ: f64 = 3.0;
/// BMO `DefaultRAMMebibytes` (in GiB, despite its name).
const DEFAULT_RAM_GIB: i64 = 128;

/// Prefix of the host annotations that tune the fixture.
pub const ANNOTATION_PREFIX: &str = "fixture.bmhctl.metal3.io/";
/// Sets `validateError`: `register` fails with this message. An empty value clears it.
pub const ANNOTATION_VALIDATE_ERROR: &str = "fixture.bmhctl.metal3.io/validate-error";
/// Sets `becomeReadyCounter` (an integer): the first N−1 provisioner creations are `NotReady`.
pub const ANNOTATION_BECOME_READY_COUNTER: &str = "fixture.bmhctl.metal3.io/become-ready-counter";
/// Sets `health` (`OK`, `Warning`, `Critical`, or empty).
pub const ANNOTATION_HEALTH: &str = "fixture.bmhctl.metal3.io/health";
/// Sets `powerFailed` (`true`/`false`): what `has_power_failure` answers.
pub const ANNOTATION_POWER_FAILED: &str = "fixture.bmhctl.metal3.io/power-failed";
/// Sets `disablePowerOff` (`true`/`false`): `power_off` only records `rebootCalled`.
pub const ANNOTATION_DISABLE_POWER_OFF: &str = "fixture.bmhctl.metal3.io/disable-power-off";
/// Sets `dataImageError`: the data image calls fail with this message. An empty value clears it.
pub const ANNOTATION_DATA_IMAGE_ERROR: &str = "fixture.bmhctl.metal3.io/data-image-error";
/// A countdown (an integer, counted per process as `become-ready-counter` is): the first N−1
/// `has_capacity` calls answer no, so the host is `delayed` as under `PROVISIONING_LIMIT`.
pub const ANNOTATION_CAPACITY_COUNTER: &str = "fixture.bmhctl.metal3.io/capacity-counter";

/// BMO's `HostFirmwareComponentsMock`: what `get_firmware_components` returns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FirmwareComponentsMock {
    #[serde(default)]
    pub components: Vec<FirmwareComponentStatus>,
}

/// The BIOS settings (with their schema) every fixture host starts with.
pub fn canned_firmware_settings() -> FirmwareSettings {
    use bmhctl_plugin_sdk::SettingSchema;
    let typed = |t: &str| SettingSchema {
        attribute_type: t.into(),
        ..Default::default()
    };
    let enumeration = |values: &[&str]| SettingSchema {
        allowable_values: values.iter().map(|v| v.to_string()).collect(),
        ..typed("Enumeration")
    };
    let on_off = || enumeration(&["Enabled", "Disabled"]);
    let mut settings = BTreeMap::new();
    let mut schema = BTreeMap::new();
    for (name, value, s) in [
        ("AdminPassword", "", typed("Password")),
        ("AssetTag", "", {
            SettingSchema {
                min_length: Some(0),
                max_length: Some(16),
                ..typed("String")
            }
        }),
        ("BootMode", "Uefi", enumeration(&["Bios", "Uefi"])),
        ("LogicalProc", "Enabled", on_off()),
        ("NetworkBootRetryCount", "3", {
            SettingSchema {
                lower_bound: Some(0),
                upper_bound: Some(20),
                ..typed("Integer")
            }
        }),
        ("ProcVirtualization", "Enabled", on_off()),
        ("SerialNumber", "FIXTURE-0001", {
            SettingSchema {
                read_only: Some(true),
                unique: Some(true),
                ..typed("String")
            }
        }),
        ("SriovGlobalEnable", "Disabled", on_off()),
    ] {
        settings.insert(name.to_string(), value.to_string());
        schema.insert(name.to_string(), s);
    }
    FirmwareSettings { settings, schema }
}

// Every host starts with (and most keep) the canned firmware: one copy is shared.
fn shared_canned_settings() -> Arc<FirmwareSettings> {
    static CANNED: std::sync::OnceLock<Arc<FirmwareSettings>> = std::sync::OnceLock::new();
    CANNED
        .get_or_init(|| Arc::new(canned_firmware_settings()))
        .clone()
}

/// The firmware components every fixture host starts with.
fn shared_canned_components() -> Arc<FirmwareComponentsMock> {
    static CANNED: std::sync::OnceLock<Arc<FirmwareComponentsMock>> = std::sync::OnceLock::new();
    let c = |component: &str, version: &str| FirmwareComponentStatus {
        component: component.into(),
        initial_version: version.into(),
        current_version: version.into(),
        last_version_flashed: String::new(),
        updated_at: String::new(),
    };
    let components = || vec![c("bios", "1.0.0"), c("bmc", "2.0.0")];
    CANNED
        .get_or_init(|| {
            Arc::new(FirmwareComponentsMock {
                components: components(),
            })
        })
        .clone()
}

fn is_canned_settings(s: &Arc<FirmwareSettings>) -> bool {
    *s == shared_canned_settings()
}

fn is_canned_components(c: &Arc<FirmwareComponentsMock>) -> bool {
    *c == shared_canned_components()
}

/// The version a firmware image at `url` installs: its file name without the extension.
fn version_of(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    let file = path
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    match file.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_string(),
        _ => file.to_string(),
    }
}

/// Everything the fixture remembers about one host (BMO's `Fixture` struct, minus the sharing).
/// Every field is optional (a set of knobs is a valid state); canned firmware is not written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FixtureState {
    /// Knob: N > 0 makes the first N−1 provisioner creations fail with `NotReady`.
    pub become_ready_counter: i64,
    /// Set by the first `delete` or `detach`.
    pub deleted: bool,
    /// Knob: `power_off` sets `reboot_called` instead of powering off.
    pub disable_power_off: bool,
    /// The simulated power state; `None` (never changed) counts as off.
    pub powered_on: Option<bool>,
    /// Set by `power_off` when `disable_power_off` is set.
    pub reboot_called: bool,
    /// Knob: what `has_power_failure` answers.
    pub power_failed: bool,
    /// Knob: what `get_health` answers.
    pub health: String,
    /// Set by the first `adopt`.
    pub adopted: bool,
    /// The image provisioned last (empty URL: none).
    pub image: Image,
    /// Set by the first `inspect_hardware`, never reset.
    pub inspection_started: bool,
    /// Knob: `register` fails with this message when non-empty.
    pub validate_error: String,
    /// The custom deploy provisioned last.
    pub custom_deploy: Option<CustomDeploy>,
    /// Knob: what `get_firmware_settings` returns (changed by `prepare` and `service`).
    #[serde(skip_serializing_if = "is_canned_settings")]
    pub host_firmware_settings: Arc<FirmwareSettings>,
    /// Knob: what `get_firmware_components` returns (changed by `prepare` and `service`).
    #[serde(skip_serializing_if = "is_canned_components")]
    pub host_firmware_components: Arc<FirmwareComponentsMock>,
    /// The data image attached as virtual media (empty: none).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub data_image_url: String,
    /// Knob: the data image calls fail with this message when non-empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub data_image_error: String,
}

impl Default for FixtureState {
    fn default() -> Self {
        Self {
            become_ready_counter: 0,
            deleted: false,
            disable_power_off: false,
            powered_on: None,
            reboot_called: false,
            power_failed: false,
            health: String::new(),
            adopted: false,
            image: Image::default(),
            inspection_started: false,
            validate_error: String::new(),
            custom_deploy: None,
            host_firmware_settings: shared_canned_settings(),
            host_firmware_components: shared_canned_components(),
            data_image_url: String::new(),
            data_image_error: String::new(),
        }
    }
}

impl FixtureState {
    /// The state stored in `host.provisioner_state`, or the default state when there is none.
    pub fn from_host(host: &HostData) -> Result<Self, ProvisionerError> {
        host.provisioner_state
            .as_ref()
            .map_or_else(|| Ok(Self::default()), Self::from_json)
    }

    /// The state stored as `json` (`null`: the default state).
    fn from_json(json: &serde_json::Value) -> Result<Self, ProvisionerError> {
        if json.is_null() {
            return Ok(Self::default());
        }
        Self::deserialize(json)
            .map_err(|e| ProvisionerError::Other(format!("invalid fixture provisioner state: {e}")))
    }

    /// Applies the `fixture.bmhctl.metal3.io/*` annotations (unknown keys ignored) over this state.
    pub fn apply_annotations(
        &mut self,
        annotations: &BTreeMap<String, String>,
    ) -> Result<(), ProvisionerError> {
        fn parse_bool(key: &str, v: &str) -> Result<bool, ProvisionerError> {
            match v.trim() {
                "true" | "True" | "TRUE" => Ok(true),
                "false" | "False" | "FALSE" | "" => Ok(false),
                other => Err(ProvisionerError::Other(format!(
                    "annotation {key}: expected true or false, got {other:?}"
                ))),
            }
        }
        for (key, value) in annotations {
            match key.as_str() {
                ANNOTATION_VALIDATE_ERROR => self.validate_error = value.clone(),
                ANNOTATION_HEALTH => self.health = value.trim().to_string(),
                ANNOTATION_POWER_FAILED => self.power_failed = parse_bool(key, value)?,
                ANNOTATION_DISABLE_POWER_OFF => self.disable_power_off = parse_bool(key, value)?,
                ANNOTATION_DATA_IMAGE_ERROR => self.data_image_error = value.clone(),
                ANNOTATION_BECOME_READY_COUNTER => {
                    self.become_ready_counter = value.trim().parse().map_err(|_| {
                        ProvisionerError::Other(format!(
                            "annotation {key}: expected an integer, got {value:?}"
                        ))
                    })?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// What a prepare or servicing step with these changes leaves behind: the target settings
    /// become the current ones, and each updated component reports the update's version.
    pub fn apply_firmware(
        &mut self,
        settings: &bmhctl_plugin_sdk::DesiredSettings,
        updates: &[bmhctl_plugin_sdk::FirmwareUpdate],
    ) {
        for (name, value) in settings {
            let text = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            Arc::make_mut(&mut self.host_firmware_settings)
                .settings
                .insert(name.clone(), text);
        }
        for u in updates {
            let version = version_of(&u.url);
            let components = &mut Arc::make_mut(&mut self.host_firmware_components).components;
            match components.iter_mut().find(|c| c.component == u.component) {
                Some(c) => {
                    c.current_version = version.clone();
                    c.last_version_flashed = version;
                }
                None => components.push(FirmwareComponentStatus {
                    component: u.component.clone(),
                    initial_version: version.clone(),
                    current_version: version.clone(),
                    last_version_flashed: version,
                    updated_at: String::new(),
                }),
            }
        }
    }

    /// Whether the simulated host is powered on (`None` counts as off).
    pub fn is_powered_on(&self) -> bool {
        self.powered_on.unwrap_or(false)
    }
}

/// The hardware every fixture inspection reports (BMO `fixture.go:190-236`).
pub fn canned_hardware_details() -> HardwareDetails {
    let disk = |name: &str| Storage {
        name: name.to_string(),
        rotational: false,
        size_bytes: DEFAULT_SIZE_TIB * DEFAULT_GB * DEFAULT_GB * DEFAULT_GB * DEFAULT_GB,
        model: "Dell CFJ61".to_string(),
        ..Storage::default()
    };
    let nic = |name: &str, model: &str, mac: &str, ip: &str, pxe: bool, lldp: [&str; 3]| Nic {
        name: name.to_string(),
        model: model.to_string(),
        mac: mac.to_string(),
        ip: ip.to_string(),
        speed_gbps: 1,
        pxe,
        lldp: Some(Lldp {
            switch_id: lldp[0].to_string(),
            port_id: lldp[1].to_string(),
            switch_system_name: lldp[2].to_string(),
        }),
        ..Nic::default()
    };
    HardwareDetails {
        ram_mebibytes: DEFAULT_RAM_GIB * DEFAULT_GB,
        nics: vec![
            nic(
                "nic-1",
                "virt-io",
                "ab:cd:12:34:56:78",
                "192.168.100.1",
                true,
                ["aa:bb:cc:dd:ee:ff", "Ethernet1/1", "switch01.example.com"],
            ),
            nic(
                "nic-2",
                "e1000",
                "12:34:56:78:ab:cd",
                "192.168.100.2",
                false,
                ["ff:ee:dd:cc:bb:aa", "Ethernet1/2", "switch02.example.com"],
            ),
        ],
        storage: vec![disk("disk-1 (boot)"), disk("disk-2")],
        cpu: Some(Cpu {
            arch: "x86_64".to_string(),
            model: "FancyPants CPU".to_string(),
            clock_megahertz: DEFAULT_CLOCK_GHZ * 1000.0,
            flags: ["fpu", "hypervisor", "sse", "vmx"]
                .map(String::from)
                .to_vec(),
            count: 1,
        }),
        ..HardwareDetails::default()
    }
}

/// Per-host countdowns, kept by the factory for the process.
type Countdowns = Arc<Mutex<HashMap<CountdownKey, i64, BuildHasherDefault<KeyHasher>>>>;

/// The fixture factory; its only host state is the `BecomeReadyCounter` and capacity countdowns.
#[derive(Debug, Clone, Default)]
pub struct Fixture {
    ready_counters: Countdowns,
    capacity_counters: Countdowns,
    subscriptions: FixtureSubscriptions,
    known: KnownStates,
}

/// FxHash's multiply-and-rotate hash for the countdowns' keys, looked up every pass (host names
/// are not chosen to collide, so no keyed hash is needed).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let word = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A host's key as the countdowns hold it: a short namespace and name inline.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum CountdownKey {
    /// The namespace's length, the namespace and the name: one text per key. `len` bytes used.
    Short {
        len: u8,
        bytes: [u8; SHORT_KEY],
    },
    Long(ObjectKey),
}

/// The longest namespace and name kept inline, together (the key then takes 48 bytes).
const SHORT_KEY: usize = 46;

impl CountdownKey {
    fn of(key: &ObjectKey) -> Self {
        let (ns, name) = (key.namespace.as_bytes(), key.name.as_bytes());
        let len = 1 + ns.len() + name.len();
        match u8::try_from(ns.len()) {
            Ok(ns_len) if len <= SHORT_KEY => {
                let mut bytes = [0; SHORT_KEY];
                bytes[0] = ns_len;
                bytes[1..1 + ns.len()].copy_from_slice(ns);
                bytes[1 + ns.len()..len].copy_from_slice(name);
                Self::Short {
                    // At most SHORT_KEY.
                    len: len as u8,
                    bytes,
                }
            }
            _ => Self::Long(key.clone()),
        }
    }
}

/// How many states [`KnownStates`] keeps: a few more than the steps a run's hosts are at at once.
const STATES_KNOWN: usize = 16;

/// The last few states (with their JSON, as [`Provisioner::persistent_state`] answers it) this
/// factory's provisioners met, newest first: a pass with a known one neither decodes nor encodes.
#[derive(Debug, Clone, Default)]
struct KnownStates(Arc<Mutex<Vec<KnownState>>>);

#[derive(Debug)]
struct KnownState {
    json: Arc<serde_json::Value>,
    state: Arc<FixtureState>,
}

impl KnownStates {
    /// The state `json` decodes to (see [`FixtureState::from_host`]).
    fn decode(&self, json: &Arc<serde_json::Value>) -> Result<Arc<FixtureState>, ProvisionerError> {
        if let Some(state) = self.find(|k| Arc::ptr_eq(&k.json, json), |k| k.state.clone()) {
            return Ok(state);
        }
        let state = Arc::new(FixtureState::from_json(json)?);
        // Kept only when it is the state's own JSON (a hand-written state may omit fields).
        if serde_json::to_value(&*state).is_ok_and(|own| own == **json) {
            self.remember(json.clone(), state.clone());
        }
        Ok(state)
    }

    /// The JSON of `state`, shared.
    fn encode(&self, state: &Arc<FixtureState>) -> Option<Arc<serde_json::Value>> {
        // The very state first (it was not written to), then an equal one.
        if let Some(json) = self
            .find(|k| Arc::ptr_eq(&k.state, state), |k| k.json.clone())
            .or_else(|| self.find(|k| *k.state == **state, |k| k.json.clone()))
        {
            return Some(json);
        }
        // Serialising plain data with string keys cannot fail.
        let json = Arc::new(serde_json::to_value(&**state).ok()?);
        self.remember(json.clone(), state.clone());
        Some(json)
    }

    /// What `take` reads from the first known state that `matches`, which moves to the front.
    fn find<T>(
        &self,
        matches: impl Fn(&KnownState) -> bool,
        take: impl Fn(&KnownState) -> T,
    ) -> Option<T> {
        let mut known = lock(&self.0);
        let i = known.iter().position(matches)?;
        known[..=i].rotate_right(1);
        Some(take(&known[0]))
    }

    fn remember(&self, json: Arc<serde_json::Value>, state: Arc<FixtureState>) {
        let mut known = lock(&self.0);
        known.truncate(STATES_KNOWN - 1);
        known.insert(0, KnownState { json, state });
    }
}

impl Fixture {
    pub fn new() -> Self {
        Self::default()
    }

    /// The BMC event subscriptions of every host, as made through this factory's provisioners.
    pub fn subscriptions(&self) -> &FixtureSubscriptions {
        &self.subscriptions
    }

    /// [`ProvisionerFactory::new_provisioner`] with the concrete type, for tests and embedders.
    pub fn new_fixture_provisioner(
        &self,
        host: HostData,
        events: EventSink,
    ) -> Result<FixtureProvisioner, ProvisionerError> {
        let state = Arc::new(FixtureState::from_host(&host)?);
        self.fixture_provisioner(host, state, events)
    }

    /// A provisioner for `host`, whose stored state is `state`.
    fn fixture_provisioner(
        &self,
        host: HostData,
        mut state: Arc<FixtureState>,
        events: EventSink,
    ) -> Result<FixtureProvisioner, ProvisionerError> {
        // The state is copied only when a knob is there to apply (most hosts have none).
        if host
            .annotations
            .keys()
            .any(|k| k.starts_with(ANNOTATION_PREFIX))
        {
            Arc::make_mut(&mut state).apply_annotations(&host.annotations)?;
        }

        {
            let mut counters = lock(&self.ready_counters);
            let counter = counters
                .entry(CountdownKey::of(&host.key))
                .or_insert(state.become_ready_counter);
            if *counter > 0 {
                *counter -= 1;
                if *counter != 0 {
                    return Err(ProvisionerError::NotReady(String::new()));
                }
            }
            if state.become_ready_counter != *counter {
                Arc::make_mut(&mut state).become_ready_counter = *counter;
            }
        }

        let capacity_counter = match host.annotations.get(ANNOTATION_CAPACITY_COUNTER) {
            None => 0,
            Some(v) => v.trim().parse().map_err(|_| {
                ProvisionerError::Other(format!(
                    "annotation {ANNOTATION_CAPACITY_COUNTER}: expected an integer, got {v:?}"
                ))
            })?,
        };
        Ok(FixtureProvisioner {
            capacity: (capacity_counter > 1)
                .then(|| (self.capacity_counters.clone(), capacity_counter)),
            key: host.key,
            prov_id: host.provisioner_id,
            events,
            state,
            subscriptions: self.subscriptions.clone(),
            known: self.known.clone(),
        })
    }
}

impl ProvisionerFactory for Fixture {
    fn calls_never_block(&self) -> bool {
        true
    }

    fn new_provisioner(
        &self,
        host: HostData,
        events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        Ok(Box::new(self.new_fixture_provisioner(host, events)?))
    }

    fn new_provisioner_with_state(
        &self,
        host: HostData,
        state: Option<Arc<serde_json::Value>>,
        events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        let state = match &state {
            // `host.provisioner_state` is not looked at: the caller hands the state here.
            None => Arc::new(FixtureState::default()),
            Some(json) => self.known.decode(json)?,
        };
        Ok(Box::new(self.fixture_provisioner(host, state, events)?))
    }
}

/// One host's fixture provisioner for one pass.
pub struct FixtureProvisioner {
    /// The capacity countdowns and this host's knob, when it has one.
    capacity: Option<(Countdowns, i64)>,
    key: ObjectKey,
    prov_id: String,
    events: EventSink,
    /// Shared with the factory's known states until the first write (see [`KnownStates`]).
    state: Arc<FixtureState>,
    subscriptions: FixtureSubscriptions,
    known: KnownStates,
}

impl std::fmt::Debug for FixtureProvisioner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FixtureProvisioner")
            .field("host", &self.key)
            .field("prov_id", &self.prov_id)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl FixtureProvisioner {
    /// The state, to write to: copied first when it is shared.
    fn state_mut(&mut self) -> &mut FixtureState {
        Arc::make_mut(&mut self.state)
    }

    /// The `data-image-error` knob, as the error of a data image call.
    fn data_image_knob(&self) -> Result<(), ProvisionerError> {
        if self.state.data_image_error.is_empty() {
            Ok(())
        } else {
            Err(ProvisionerError::Other(self.state.data_image_error.clone()))
        }
    }

    fn publish(&self, reason: &str, message: &str) {
        (self.events)(Event {
            reason: reason.to_string(),
            message: message.to_string(),
        });
    }
}

impl Provisioner for FixtureProvisioner {
    fn register(
        &mut self,
        _data: &ManagementAccessData,
        _opts: RegisterOptions,
    ) -> Result<RegisterResult, ProvisionerError> {
        if !self.state.validate_error.is_empty() {
            return Ok(RegisterResult {
                result: OpResult::failed(self.state.validate_error.clone()),
                provisioner_id: String::new(),
            });
        }
        let mut result = OpResult::done();
        if self.prov_id.is_empty() {
            self.prov_id = TEMPORARY_FAKE_ID.to_string();
            self.publish("Registered", "Registered new host");
            result = OpResult::in_progress(DEFAULT_REQUEUE);
        }
        Ok(RegisterResult {
            result,
            provisioner_id: self.prov_id.clone(),
        })
    }

    fn inspect_hardware(
        &mut self,
        _data: &InspectData,
        opts: InspectOptions,
    ) -> Result<InspectResult, ProvisionerError> {
        // A refresh starts a new inspection, as Ironic's does: the old details would leave the
        // `inspect` annotation in place and the host inspecting forever.
        if !self.state.inspection_started || opts.refresh {
            self.state_mut().inspection_started = true;
            return Ok(InspectResult {
                result: OpResult::in_progress(INSPECTION_REQUEUE_DELAY),
                started: true,
                details: None,
            });
        }
        self.publish("InspectionComplete", "Hardware inspection completed");
        Ok(InspectResult {
            result: OpResult::done(),
            started: false,
            details: Some(canned_hardware_details()),
        })
    }

    fn update_hardware_state(&mut self) -> Result<HardwareState, ProvisionerError> {
        Ok(HardwareState {
            powered_on: Some(self.state.is_powered_on()),
        })
    }

    fn adopt(
        &mut self,
        _data: &AdoptData,
        _opts: AdoptOptions,
    ) -> Result<OpResult, ProvisionerError> {
        if !self.state.adopted {
            self.state_mut().adopted = true;
            return Ok(OpResult::in_progress(SHORT_RETRY_DELAY));
        }
        Ok(OpResult::done())
    }

    fn prepare(
        &mut self,
        data: &PrepareData,
        opts: StepOptions,
    ) -> Result<StepResult, ProvisionerError> {
        if opts.unprepared {
            self.state_mut().apply_firmware(
                &data.target_firmware_settings,
                &data.target_firmware_components,
            );
        }
        Ok(StepResult {
            result: OpResult::done(),
            started: opts.unprepared,
        })
    }

    fn service(
        &mut self,
        data: &ServicingData,
        opts: StepOptions,
    ) -> Result<StepResult, ProvisionerError> {
        if opts.unprepared {
            self.state_mut().apply_firmware(
                &data.target_firmware_settings,
                &data.target_firmware_components,
            );
        }
        let result = OpResult {
            dirty: opts.unprepared,
            ..OpResult::done()
        };
        Ok(StepResult {
            result,
            started: opts.unprepared,
        })
    }

    fn provision(
        &mut self,
        data: &ProvisionData,
        _opts: ProvisionOptions,
    ) -> Result<OpResult, ProvisionerError> {
        if let Some(custom_deploy) = &data.custom_deploy
            && self.state.custom_deploy.is_none()
        {
            self.state_mut().custom_deploy = Some(custom_deploy.clone());
            self.publish(
                "ProvisioningComplete",
                "Custom deploy provisioning completed",
            );
            return Ok(OpResult::in_progress(LONG_RETRY_DELAY));
        }
        if !data.image.url.is_empty() && self.state.image.url.is_empty() {
            self.state_mut().image = data.image.clone();
            self.publish("ProvisioningComplete", "Image provisioning completed");
            return Ok(OpResult::in_progress(LONG_RETRY_DELAY));
        }
        Ok(OpResult::done())
    }

    fn deprovision(&mut self, _opts: DeprovisionOptions) -> Result<OpResult, ProvisionerError> {
        if !self.state.image.url.is_empty() {
            self.state_mut().image = Image::default();
            self.publish("DeprovisionStarted", "Image deprovisioning started");
            return Ok(OpResult::in_progress(LONG_RETRY_DELAY));
        }
        if self.state.custom_deploy.is_some() {
            self.state_mut().custom_deploy = None;
            self.publish("DeprovisionStarted", "Custom deploy deprovisioning started");
            return Ok(OpResult::in_progress(LONG_RETRY_DELAY));
        }
        self.publish("DeprovisionComplete", "Image deprovisioning completed");
        Ok(OpResult {
            requeue_after: LONG_RETRY_DELAY,
            ..OpResult::done()
        })
    }

    fn delete(&mut self) -> Result<OpResult, ProvisionerError> {
        if !self.state.deleted {
            self.state_mut().deleted = true;
            return Ok(OpResult::in_progress(Duration::ZERO));
        }
        Ok(OpResult::done())
    }

    fn detach(&mut self, _opts: DetachOptions) -> Result<OpResult, ProvisionerError> {
        self.delete()
    }

    fn power_on(&mut self, _opts: PowerOnOptions) -> Result<OpResult, ProvisionerError> {
        if !self.state.is_powered_on() {
            self.state_mut().powered_on = Some(true);
            self.publish("PowerOn", "Host powered on");
            return Ok(OpResult::in_progress(Duration::ZERO));
        }
        Ok(OpResult::done())
    }

    fn power_off(&mut self, _opts: PowerOffOptions) -> Result<OpResult, ProvisionerError> {
        if self.state.disable_power_off {
            self.state_mut().reboot_called = true;
            return Ok(OpResult::in_progress(Duration::ZERO));
        }
        if self.state.is_powered_on() {
            self.state_mut().powered_on = Some(false);
            self.publish("PowerOff", "Host powered off");
            return Ok(OpResult::in_progress(Duration::ZERO));
        }
        Ok(OpResult::done())
    }

    fn has_capacity(&mut self) -> Result<bool, ProvisionerError> {
        let Some((counters, knob)) = &self.capacity else {
            return Ok(true);
        };
        let mut counters = lock(counters);
        let left = counters.entry(CountdownKey::of(&self.key)).or_insert(*knob);
        if *left > 1 {
            *left -= 1;
            return Ok(false);
        }
        Ok(true)
    }

    fn get_firmware_settings(
        &mut self,
        _opts: FirmwareSettingsOptions,
    ) -> Result<FirmwareSettings, ProvisionerError> {
        Ok((*self.state.host_firmware_settings).clone())
    }

    fn get_firmware_components(
        &mut self,
    ) -> Result<Vec<FirmwareComponentStatus>, ProvisionerError> {
        Ok(self.state.host_firmware_components.components.clone())
    }

    fn create_bmc_event_subscription(
        &mut self,
        subscription: &bmh_api::BmcEventSubscription,
        http_headers: &[BTreeMap<String, String>],
    ) -> Result<Option<String>, ProvisionerError> {
        self.subscriptions
            .create(&self.key, subscription, http_headers)
            .map(Some)
    }

    fn delete_bmc_event_subscription(
        &mut self,
        subscription: &bmh_api::BmcEventSubscription,
    ) -> Result<bool, ProvisionerError> {
        self.subscriptions.delete(&self.key, subscription);
        Ok(true)
    }

    fn get_data_image_status(&mut self) -> Result<bool, ProvisionerError> {
        self.data_image_knob()?;
        Ok(!self.state.data_image_url.is_empty())
    }

    fn attach_data_image(&mut self, url: &str) -> Result<(), ProvisionerError> {
        self.data_image_knob()?;
        self.state_mut().data_image_url = url.to_string();
        Ok(())
    }

    fn detach_data_image(&mut self) -> Result<(), ProvisionerError> {
        self.data_image_knob()?;
        self.state_mut().data_image_url.clear();
        Ok(())
    }

    fn has_power_failure(&mut self) -> bool {
        self.state.power_failed
    }

    fn get_health(&mut self) -> String {
        self.state.health.clone()
    }

    fn persistent_state(&self) -> Option<serde_json::Value> {
        // Serialising plain data with string keys cannot fail.
        serde_json::to_value(&*self.state).ok()
    }

    fn shared_persistent_state(&self) -> Option<Arc<serde_json::Value>> {
        self.known.encode(&self.state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bmh_api::{AutomatedCleaningMode, RebootMode};
    use serde_json::json;

    impl Fixture {
        /// The remaining `BecomeReadyCounter` of a host this process has seen, if any.
        fn remaining_counter(&self, key: &ObjectKey) -> Option<i64> {
            lock(&self.ready_counters)
                .get(&CountdownKey::of(key))
                .copied()
        }
    }

    type Events = Arc<Mutex<Vec<Event>>>;

    fn recorder() -> (EventSink, Events) {
        let events: Events = Arc::default();
        let recorder = events.clone();
        let sink: EventSink = Arc::new(move |e| recorder.lock().unwrap().push(e));
        (sink, events)
    }

    fn host(state: Option<serde_json::Value>) -> HostData {
        HostData {
            key: ObjectKey::new("default", "host-0"),
            provisioner_state: state,
            ..HostData::default()
        }
    }

    fn prov(fixture: &Fixture, host: HostData) -> (FixtureProvisioner, Events) {
        let (sink, events) = recorder();
        (
            fixture
                .new_fixture_provisioner(host, sink)
                .expect("provisioner"),
            events,
        )
    }

    fn reasons(events: &Events) -> Vec<(String, String)> {
        events
            .lock()
            .unwrap()
            .iter()
            .map(|e| (e.reason.clone(), e.message.clone()))
            .collect()
    }

    fn ev(reason: &str, message: &str) -> (String, String) {
        (reason.to_string(), message.to_string())
    }

    fn image(url: &str) -> Image {
        Image {
            url: url.to_string(),
            checksum: "sum".to_string(),
            ..Image::default()
        }
    }

    fn in_progress(after: Duration) -> OpResult {
        OpResult::in_progress(after)
    }

    /// States are equal field by field: the firmware mocks by value when they are not the
    /// same shared value.
    #[test]
    fn states_compare_every_field_and_the_mocks_by_value() {
        let state = FixtureState::default();
        let mut copy = state.clone();
        assert_eq!(state, copy);
        copy.host_firmware_settings = Arc::new((*state.host_firmware_settings).clone());
        copy.host_firmware_components = Arc::new((*state.host_firmware_components).clone());
        assert!(!Arc::ptr_eq(
            &state.host_firmware_settings,
            &copy.host_firmware_settings
        ));
        assert_eq!(state, copy);
        Arc::make_mut(&mut copy.host_firmware_settings)
            .settings
            .insert("ProcVirtualization".into(), "Disabled".into());
        assert_ne!(state, copy);
        let changed: [fn(&mut FixtureState); 6] = [
            |s| s.powered_on = Some(true),
            |s| s.health = "Critical".into(),
            |s| s.image.url = "http://image".into(),
            |s| s.become_ready_counter = 2,
            |s| s.data_image_url = "http://data".into(),
            |s| {
                Arc::make_mut(&mut s.host_firmware_components)
                    .components
                    .clear()
            },
        ];
        for change in changed {
            let mut other = state.clone();
            change(&mut other);
            assert_ne!(state, other);
        }
    }

    #[test]
    fn register_first_call_assigns_temporary_id_then_is_empty() {
        let f = Fixture::new();
        let (mut p, events) = prov(&f, host(None));
        let data = ManagementAccessData::default();
        let RegisterResult {
            result: r,
            provisioner_id: id,
        } = p.register(&data, RegisterOptions::default()).unwrap();
        assert_eq!(r, in_progress(DEFAULT_REQUEUE));
        assert_eq!(r.requeue_after, Duration::from_secs(5));
        assert_eq!(id, "temporary-fake-id");
        assert_eq!(
            reasons(&events),
            vec![ev("Registered", "Registered new host")]
        );

        // Same provisioner: the ID is now known.
        let RegisterResult {
            result: r,
            provisioner_id: id,
        } = p.register(&data, RegisterOptions::default()).unwrap();
        assert_eq!(r, OpResult::done());
        assert_eq!(id, "temporary-fake-id");
        assert_eq!(events.lock().unwrap().len(), 1);

        // A new provisioner for a host that already has an ID.
        let mut h = host(p.persistent_state());
        h.provisioner_id = TEMPORARY_FAKE_ID.to_string();
        let (mut p2, events2) = prov(&f, h);
        let RegisterResult { result: r, .. } = p2
            .register(
                &data,
                RegisterOptions {
                    credentials_changed: true,
                    restart_on_failure: false,
                },
            )
            .unwrap();
        assert_eq!(r, OpResult::done());
        assert!(events2.lock().unwrap().is_empty());
    }

    #[test]
    fn register_with_validate_error_fails() {
        let f = Fixture::new();
        let (mut p, events) = prov(&f, host(Some(json!({"validateError": "boom"}))));
        let RegisterResult { result: r, .. } = p
            .register(&ManagementAccessData::default(), RegisterOptions::default())
            .unwrap();
        assert_eq!(r, OpResult::failed("boom"));
        assert!(!r.dirty);
        assert!(events.lock().unwrap().is_empty());
        assert_eq!(p.prov_id, "");
    }

    #[test]
    fn validate_error_from_annotation() {
        let f = Fixture::new();
        let mut h = host(None);
        h.annotations.insert(
            ANNOTATION_VALIDATE_ERROR.to_string(),
            "bad creds".to_string(),
        );
        let (mut p, _) = prov(&f, h);
        let RegisterResult { result: r, .. } = p
            .register(&ManagementAccessData::default(), RegisterOptions::default())
            .unwrap();
        assert_eq!(r.error_message, "bad creds");
    }

    #[test]
    fn annotation_knobs_apply_over_state() {
        let f = Fixture::new();
        let mut h = host(Some(json!({"health": "OK", "powerFailed": true})));
        for (k, v) in [
            (ANNOTATION_HEALTH, "Critical"),
            (ANNOTATION_POWER_FAILED, "false"),
            (ANNOTATION_DISABLE_POWER_OFF, "true"),
            (ANNOTATION_BECOME_READY_COUNTER, "1"),
            ("fixture.bmhctl.metal3.io/unknown", "whatever"),
        ] {
            h.annotations.insert(k.to_string(), v.to_string());
        }
        let (mut p, _) = prov(&f, h);
        assert_eq!(p.get_health(), "Critical");
        assert!(!p.has_power_failure());
        assert!(p.state.disable_power_off);
        assert_eq!(p.state.become_ready_counter, 0);
    }

    #[test]
    fn malformed_knobs_are_errors() {
        let f = Fixture::new();
        let mut h = host(None);
        h.annotations
            .insert(ANNOTATION_POWER_FAILED.to_string(), "maybe".to_string());
        let (sink, _) = recorder();
        assert!(matches!(
            f.new_provisioner(h, sink),
            Err(ProvisionerError::Other(_))
        ));

        let mut h = host(None);
        h.annotations
            .insert(ANNOTATION_BECOME_READY_COUNTER.to_string(), "x".to_string());
        let (sink, _) = recorder();
        assert!(matches!(
            f.new_provisioner(h, sink),
            Err(ProvisionerError::Other(_))
        ));

        let (sink, _) = recorder();
        let bad = host(Some(json!({"deleted": "yes"})));
        assert!(matches!(
            f.new_provisioner(bad, sink),
            Err(ProvisionerError::Other(_))
        ));
    }

    #[test]
    fn inspection_starts_then_completes_with_canned_details() {
        let f = Fixture::new();
        let (mut p, events) = prov(&f, host(None));
        let data = InspectData::default();
        let InspectResult {
            result: r,
            started,
            details,
        } = p
            .inspect_hardware(&data, InspectOptions::default())
            .unwrap();
        assert_eq!(r, in_progress(Duration::from_secs(2)));
        assert!(started);
        assert!(details.is_none());
        assert!(events.lock().unwrap().is_empty());

        let InspectResult {
            result: r,
            started,
            details,
        } = p
            .inspect_hardware(&data, InspectOptions::default())
            .unwrap();
        assert_eq!(r, OpResult::done());
        assert!(!started);
        assert_eq!(details, Some(canned_hardware_details()));
        assert_eq!(
            reasons(&events),
            vec![ev("InspectionComplete", "Hardware inspection completed")]
        );

        // A refresh starts a new inspection (the machine then removes the annotation), and the
        // next call without it completes.
        let refresh = InspectOptions {
            restart_on_failure: true,
            refresh: true,
            force_reboot: true,
        };
        let again = p.inspect_hardware(&data, refresh).unwrap();
        assert!(again.started && again.details.is_none());
        let done = p
            .inspect_hardware(&data, InspectOptions::default())
            .unwrap();
        assert!(!done.result.dirty && !done.started && done.details.is_some());
    }

    #[test]
    fn canned_details_match_spec() {
        let d = canned_hardware_details();
        assert_eq!(d.ram_mebibytes, 131072);
        assert_eq!(d.nics.len(), 2);
        let n1 = &d.nics[0];
        assert_eq!(
            (
                n1.name.as_str(),
                n1.model.as_str(),
                n1.mac.as_str(),
                n1.ip.as_str()
            ),
            ("nic-1", "virt-io", "ab:cd:12:34:56:78", "192.168.100.1")
        );
        assert_eq!((n1.speed_gbps, n1.pxe), (1, true));
        let l1 = n1.lldp.as_ref().unwrap();
        assert_eq!(
            (
                l1.switch_id.as_str(),
                l1.port_id.as_str(),
                l1.switch_system_name.as_str()
            ),
            ("aa:bb:cc:dd:ee:ff", "Ethernet1/1", "switch01.example.com")
        );
        let n2 = &d.nics[1];
        assert_eq!(
            (
                n2.name.as_str(),
                n2.model.as_str(),
                n2.mac.as_str(),
                n2.ip.as_str()
            ),
            ("nic-2", "e1000", "12:34:56:78:ab:cd", "192.168.100.2")
        );
        assert_eq!((n2.speed_gbps, n2.pxe), (1, false));
        let l2 = n2.lldp.as_ref().unwrap();
        assert_eq!(
            (
                l2.switch_id.as_str(),
                l2.port_id.as_str(),
                l2.switch_system_name.as_str()
            ),
            ("ff:ee:dd:cc:bb:aa", "Ethernet1/2", "switch02.example.com")
        );
        let names: Vec<&str> = d.storage.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["disk-1 (boot)", "disk-2"]);
        for s in &d.storage {
            assert!(!s.rotational);
            assert_eq!(s.size_bytes, 93 * 1024_i64.pow(4));
            assert_eq!(s.model, "Dell CFJ61");
        }
        let cpu = d.cpu.unwrap();
        assert_eq!(
            (cpu.arch.as_str(), cpu.model.as_str()),
            ("x86_64", "FancyPants CPU")
        );
        assert_eq!(cpu.clock_megahertz, 3000.0);
        assert_eq!(cpu.flags, ["fpu", "hypervisor", "sse", "vmx"]);
        assert_eq!(cpu.count, 1);
    }

    #[test]
    fn prepare_and_service_report_unprepared_as_started() {
        let f = Fixture::new();
        let (mut p, _) = prov(&f, host(None));
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
                result: OpResult::done(),
                started: true
            }
        );
        assert_eq!(
            p.prepare(&PrepareData::default(), StepOptions::default())
                .unwrap(),
            StepResult {
                result: OpResult::done(),
                started: false
            }
        );
        assert_eq!(
            p.service(
                &ServicingData::default(),
                StepOptions {
                    unprepared: true,
                    restart_on_failure: false
                }
            )
            .unwrap(),
            StepResult {
                result: in_progress(Duration::ZERO),
                started: true
            }
        );
        assert_eq!(
            p.service(&ServicingData::default(), StepOptions::default())
                .unwrap(),
            StepResult {
                result: OpResult::done(),
                started: false
            }
        );
    }

    #[test]
    fn firmware_is_canned_and_prepare_and_service_apply_changes() {
        let f = Fixture::new();
        let (mut p, _) = prov(&f, host(None));
        let fs = p
            .get_firmware_settings(FirmwareSettingsOptions {
                include_schema: true,
            })
            .unwrap();
        assert_eq!(fs, canned_firmware_settings());
        assert_eq!(fs.settings["ProcVirtualization"], "Enabled");
        assert_eq!(fs.schema["BootMode"].allowable_values, ["Bios", "Uefi"]);
        assert_eq!(
            p.get_firmware_components()
                .unwrap()
                .iter()
                .map(|c| (c.component.as_str(), c.current_version.as_str()))
                .collect::<Vec<_>>(),
            [("bios", "1.0.0"), ("bmc", "2.0.0")]
        );
        let mut data = PrepareData::default();
        data.target_firmware_settings
            .insert("ProcVirtualization".into(), json!("Disabled"));
        data.target_firmware_settings
            .insert("NetworkBootRetryCount".into(), json!(7));
        data.target_firmware_components = vec![
            bmhctl_plugin_sdk::FirmwareUpdate {
                component: "bmc".into(),
                url: "http://fw.example/bmc-2.1.0.bin".into(),
            },
            bmhctl_plugin_sdk::FirmwareUpdate {
                component: "nic:eth0".into(),
                url: "http://fw.example/nic/eth0-7.1?x=1".into(),
            },
        ];
        // Not unprepared: nothing is applied.
        p.prepare(&data, StepOptions::default()).unwrap();
        assert_eq!(
            p.get_firmware_settings(FirmwareSettingsOptions::default())
                .unwrap(),
            canned_firmware_settings()
        );
        p.prepare(
            &data,
            StepOptions {
                unprepared: true,
                restart_on_failure: false,
            },
        )
        .unwrap();
        let fs = p
            .get_firmware_settings(FirmwareSettingsOptions::default())
            .unwrap();
        assert_eq!(fs.settings["ProcVirtualization"], "Disabled");
        assert_eq!(fs.settings["NetworkBootRetryCount"], "7");
        let fc = p.get_firmware_components().unwrap();
        assert_eq!(fc[1].component, "bmc");
        assert_eq!(fc[1].initial_version, "2.0.0");
        assert_eq!(fc[1].current_version, "bmc-2.1.0");
        assert_eq!(fc[1].last_version_flashed, "bmc-2.1.0");
        assert_eq!(fc[2].component, "nic:eth0");
        assert_eq!(fc[2].initial_version, "eth0-7");
        // Servicing applies too, and the state (with its changes) is persisted.
        let sd = ServicingData {
            target_firmware_settings: [("BootMode".to_string(), json!("Bios"))].into(),
            ..Default::default()
        };
        p.service(
            &sd,
            StepOptions {
                unprepared: true,
                restart_on_failure: false,
            },
        )
        .unwrap();
        let state = p.persistent_state().unwrap();
        assert_eq!(
            state["hostFirmwareSettings"]["settings"]["BootMode"],
            "Bios"
        );
        let (mut q, _) = prov(&f, host(Some(state)));
        assert_eq!(
            q.get_firmware_settings(FirmwareSettingsOptions::default())
                .unwrap()
                .settings["BootMode"],
            "Bios"
        );
    }

    #[test]
    fn adopt_is_dirty_once() {
        let f = Fixture::new();
        let (mut p, _) = prov(&f, host(None));
        let data = AdoptData::default();
        assert_eq!(
            p.adopt(&data, AdoptOptions::default()).unwrap(),
            in_progress(Duration::from_secs(3))
        );
        assert_eq!(
            p.adopt(&data, AdoptOptions::default()).unwrap(),
            OpResult::done()
        );
        assert!(p.state.adopted);
    }

    #[test]
    fn provision_image_takes_two_calls() {
        let f = Fixture::new();
        let (mut p, events) = prov(&f, host(None));
        let data = ProvisionData {
            image: image("http://example.com/img.qcow2"),
            ..ProvisionData::default()
        };
        assert_eq!(
            p.provision(&data, ProvisionOptions::default()).unwrap(),
            in_progress(Duration::from_secs(10))
        );
        assert_eq!(p.state.image, data.image);
        assert_eq!(
            reasons(&events),
            vec![ev("ProvisioningComplete", "Image provisioning completed")]
        );
        assert_eq!(
            p.provision(&data, ProvisionOptions::default()).unwrap(),
            OpResult::done()
        );
        assert_eq!(events.lock().unwrap().len(), 1);
    }

    #[test]
    fn provision_custom_deploy_takes_two_calls() {
        let f = Fixture::new();
        let (mut p, events) = prov(&f, host(None));
        let data = ProvisionData {
            custom_deploy: Some(CustomDeploy {
                method: "install_great_stuff".to_string(),
            }),
            ..ProvisionData::default()
        };
        assert_eq!(
            p.provision(&data, ProvisionOptions::default()).unwrap(),
            in_progress(LONG_RETRY_DELAY)
        );
        assert_eq!(p.state.custom_deploy, data.custom_deploy);
        assert_eq!(
            reasons(&events),
            vec![ev(
                "ProvisioningComplete",
                "Custom deploy provisioning completed"
            )]
        );
        assert_eq!(
            p.provision(&data, ProvisionOptions::default()).unwrap(),
            OpResult::done()
        );
        assert!(p.state.image.url.is_empty());
    }

    #[test]
    fn provision_without_image_or_custom_deploy_is_done() {
        let f = Fixture::new();
        let (mut p, events) = prov(&f, host(None));
        assert_eq!(
            p.provision(&ProvisionData::default(), ProvisionOptions::default())
                .unwrap(),
            OpResult::done()
        );
        assert!(events.lock().unwrap().is_empty());
    }

    #[test]
    fn deprovision_takes_two_calls() {
        let f = Fixture::new();
        let (mut p, events) = prov(&f, host(Some(json!({"image": {"url": "http://x/img"}}))));
        let mode = AutomatedCleaningMode::default();
        assert_eq!(
            p.deprovision(DeprovisionOptions {
                restart_on_failure: false,
                automated_cleaning_mode: mode.clone()
            })
            .unwrap(),
            in_progress(LONG_RETRY_DELAY)
        );
        assert!(p.state.image.url.is_empty());
        let r = p
            .deprovision(DeprovisionOptions {
                restart_on_failure: false,
                automated_cleaning_mode: mode,
            })
            .unwrap();
        assert!(!r.dirty);
        assert_eq!(r.requeue_after, Duration::from_secs(10));
        let got: Vec<String> = reasons(&events).into_iter().map(|(r, _)| r).collect();
        assert_eq!(got, ["DeprovisionStarted", "DeprovisionComplete"]);
    }

    #[test]
    fn deprovision_takes_three_calls_with_image_and_custom_deploy() {
        let f = Fixture::new();
        let (mut p, events) = prov(&f, host(None));
        let data = ProvisionData {
            image: image("http://x/img"),
            custom_deploy: Some(CustomDeploy {
                method: "m".to_string(),
            }),
            ..ProvisionData::default()
        };
        // Custom deploy first, then the image: both stored.
        assert!(
            p.provision(&data, ProvisionOptions::default())
                .unwrap()
                .dirty
        );
        assert!(
            p.provision(&data, ProvisionOptions::default())
                .unwrap()
                .dirty
        );
        assert_eq!(
            p.provision(&data, ProvisionOptions::default()).unwrap(),
            OpResult::done()
        );
        events.lock().unwrap().clear();

        let mode = AutomatedCleaningMode::default();
        assert!(
            p.deprovision(DeprovisionOptions {
                restart_on_failure: false,
                automated_cleaning_mode: mode.clone()
            })
            .unwrap()
            .dirty
        );
        assert!(p.state.image.url.is_empty() && p.state.custom_deploy.is_some());
        assert!(
            p.deprovision(DeprovisionOptions {
                restart_on_failure: false,
                automated_cleaning_mode: mode.clone()
            })
            .unwrap()
            .dirty
        );
        assert!(p.state.custom_deploy.is_none());
        let r = p
            .deprovision(DeprovisionOptions {
                restart_on_failure: false,
                automated_cleaning_mode: mode,
            })
            .unwrap();
        assert!(!r.dirty);
        assert_eq!(r.requeue_after, LONG_RETRY_DELAY);
        let got: Vec<String> = reasons(&events).into_iter().map(|(r, _)| r).collect();
        assert_eq!(
            got,
            [
                "DeprovisionStarted",
                "DeprovisionStarted",
                "DeprovisionComplete"
            ]
        );
    }

    #[test]
    fn delete_and_detach_share_deleted_flag() {
        let f = Fixture::new();
        let (mut p, _) = prov(&f, host(None));
        assert_eq!(p.delete().unwrap(), in_progress(Duration::ZERO));
        assert!(p.state.deleted);
        assert_eq!(p.delete().unwrap(), OpResult::done());
        assert_eq!(
            p.detach(DetachOptions::default()).unwrap(),
            OpResult::done()
        );

        let (mut p, _) = prov(&f, host(None));
        assert_eq!(
            p.detach(DetachOptions { force: true }).unwrap(),
            in_progress(Duration::ZERO)
        );
        assert_eq!(p.delete().unwrap(), OpResult::done());
    }

    #[test]
    fn power_on_and_off() {
        let f = Fixture::new();
        let (mut p, events) = prov(&f, host(None));
        let mode = AutomatedCleaningMode::default();
        assert_eq!(p.update_hardware_state().unwrap().powered_on, Some(false));
        // Already off.
        assert_eq!(
            p.power_off(PowerOffOptions {
                mode: RebootMode::default(),
                force: false,
                automated_cleaning_mode: mode.clone()
            })
            .unwrap(),
            OpResult::done()
        );

        assert_eq!(
            p.power_on(PowerOnOptions::default()).unwrap(),
            in_progress(Duration::ZERO)
        );
        assert_eq!(p.update_hardware_state().unwrap().powered_on, Some(true));
        assert_eq!(
            p.power_on(PowerOnOptions::default()).unwrap(),
            OpResult::done()
        );

        assert_eq!(
            p.power_off(PowerOffOptions {
                mode: RebootMode::default(),
                force: true,
                automated_cleaning_mode: mode.clone()
            })
            .unwrap(),
            in_progress(Duration::ZERO)
        );
        assert_eq!(p.update_hardware_state().unwrap().powered_on, Some(false));
        assert_eq!(
            p.power_off(PowerOffOptions {
                mode: RebootMode::default(),
                force: false,
                automated_cleaning_mode: mode
            })
            .unwrap(),
            OpResult::done()
        );
        assert!(!p.state.reboot_called);
        assert_eq!(
            reasons(&events),
            vec![
                ev("PowerOn", "Host powered on"),
                ev("PowerOff", "Host powered off")
            ]
        );
    }

    #[test]
    fn disable_power_off_records_reboot() {
        let f = Fixture::new();
        let (mut p, events) = prov(
            &f,
            host(Some(json!({"disablePowerOff": true, "poweredOn": true}))),
        );
        let r = p
            .power_off(PowerOffOptions {
                mode: RebootMode::default(),
                force: false,
                automated_cleaning_mode: AutomatedCleaningMode::default(),
            })
            .unwrap();
        assert_eq!(r, in_progress(Duration::ZERO));
        assert!(p.state.reboot_called);
        assert_eq!(p.update_hardware_state().unwrap().powered_on, Some(true));
        assert!(events.lock().unwrap().is_empty());
    }

    /// Hosts whose namespace and name split the same text differently, and hosts whose names
    /// are too long to be held inline, each count down on their own.
    #[test]
    fn countdowns_are_per_host_whatever_the_length_of_its_name() {
        let f = Fixture::new();
        // With "default" and its length, the longest name held inline.
        let longest = "n".repeat(SHORT_KEY - 1 - "default".len());
        let long = format!("{longest}n");
        let keys = [
            ObjectKey::new("ab", "c"),
            ObjectKey::new("a", "bc"),
            ObjectKey::new("default", longest.as_str()),
            ObjectKey::new("default", long.as_str()),
            ObjectKey::new("x".repeat(300), "h"),
        ];
        for (i, key) in keys.iter().enumerate() {
            let state = json!({"becomeReadyCounter": 10 + i});
            for _ in 0..=i {
                let mut h = host(Some(state.clone()));
                h.key = key.clone();
                let (sink, _) = recorder();
                assert!(matches!(
                    f.new_provisioner(h, sink),
                    Err(ProvisionerError::NotReady(_))
                ));
            }
        }
        // Each was seeded with 10 + i and called i + 1 times.
        for key in &keys {
            assert_eq!(f.remaining_counter(key), Some(9), "{key}");
        }
        assert_eq!(f.remaining_counter(&ObjectKey::new("a", "b")), None);
        assert!(matches!(
            CountdownKey::of(&keys[2]),
            CountdownKey::Short { .. }
        ));
        assert!(matches!(CountdownKey::of(&keys[3]), CountdownKey::Long(_)));
    }

    #[test]
    fn become_ready_counter_counts_down_per_host() {
        let f = Fixture::new();
        let state = json!({"becomeReadyCounter": 5});
        for i in 0..4 {
            let (sink, _) = recorder();
            let r = f.new_provisioner(host(Some(state.clone())), sink);
            assert!(
                matches!(r, Err(ProvisionerError::NotReady(ref m)) if m.is_empty()),
                "call {i} should be not ready"
            );
        }
        assert_eq!(
            f.remaining_counter(&ObjectKey::new("default", "host-0")),
            Some(1)
        );

        // Another host has its own counter.
        let mut other = host(Some(state.clone()));
        other.key = ObjectKey::new("default", "host-1");
        let (sink, _) = recorder();
        assert!(matches!(
            f.new_provisioner(other, sink),
            Err(ProvisionerError::NotReady(_))
        ));

        let (p, _) = prov(&f, host(Some(state.clone())));
        assert_eq!(p.state.become_ready_counter, 0);
        assert_eq!(
            p.persistent_state().unwrap()["becomeReadyCounter"],
            json!(0)
        );
        // Stays ready.
        let (_p, _) = prov(&f, host(Some(state)));

        // A fresh factory (new process) without a persisted countdown starts again...
        let f2 = Fixture::new();
        let (sink, _) = recorder();
        let r = f2.new_provisioner(host(Some(json!({"becomeReadyCounter": 2}))), sink);
        assert!(matches!(r, Err(ProvisionerError::NotReady(_))));
        // ...and a persisted 0 means ready at once.
        let (_p, _) = prov(&Fixture::new(), host(p.persistent_state()));
    }

    /// The capacity countdown is per host and per process, read from the annotation at each
    /// pass (it is not kept in the host's state).
    #[test]
    fn capacity_counter_delays_a_host_until_its_turn() {
        let f = Fixture::new();
        let knob = |n: &str| {
            let mut h = host(None);
            h.annotations
                .insert(ANNOTATION_CAPACITY_COUNTER.into(), n.into());
            h
        };
        let answers: Vec<bool> = (0..4)
            .map(|_| prov(&f, knob("3")).0.has_capacity().unwrap())
            .collect();
        assert_eq!(answers, [false, false, true, true]);
        let unset = prov(&f, host(None)).0.persistent_state();
        assert_eq!(prov(&f, knob("3")).0.persistent_state(), unset);
        let mut other = knob("2");
        other.key = ObjectKey::new("default", "host-1");
        assert!(!prov(&f, other.clone()).0.has_capacity().unwrap());
        assert!(prov(&f, other).0.has_capacity().unwrap());
        assert!(prov(&f, knob("1")).0.has_capacity().unwrap());
        let (sink, _) = recorder();
        let bad = f.new_provisioner(knob("soon"), sink);
        assert!(matches!(bad, Err(ProvisionerError::Other(m)) if m.contains("capacity-counter")));
    }

    #[test]
    fn become_ready_counter_of_one_is_ready_at_once() {
        let f = Fixture::new();
        let (p, _) = prov(&f, host(Some(json!({"becomeReadyCounter": 1}))));
        assert_eq!(p.state.become_ready_counter, 0);
    }

    /// A provisioner made with a shared state: a state it leaves unchanged, or one another host
    /// ended in, comes back as the very value it was handed; a changed one as its encoding.
    #[test]
    fn a_shared_state_comes_back_itself_while_unchanged() {
        let f = Fixture::new();
        let make = |state: Option<Arc<serde_json::Value>>| {
            let (sink, _) = recorder();
            f.new_provisioner_with_state(host(None), state, sink)
                .expect("provisioner")
        };
        let mut p = make(None);
        p.power_on(PowerOnOptions::default()).unwrap();
        let on = p.shared_persistent_state().expect("a state");
        assert_eq!(Some(&*on), p.persistent_state().as_ref());
        assert_eq!(on["poweredOn"], json!(true));

        let same = make(Some(on.clone())).shared_persistent_state().unwrap();
        assert!(Arc::ptr_eq(&same, &on), "unchanged: the value handed in");

        // An equal value held elsewhere decodes alike and comes back equal.
        let copy = Arc::new((*on).clone());
        let mut p = make(Some(copy.clone()));
        assert_eq!(*p.shared_persistent_state().unwrap(), *copy);
        p.power_off(PowerOffOptions::default()).unwrap();
        let off = p.shared_persistent_state().unwrap();
        assert_eq!(off["poweredOn"], json!(false));
        assert_eq!(Some(&*off), p.persistent_state().as_ref());
        assert!(!Arc::ptr_eq(&off, &on));

        // Another host reaching the same state gets the value already made.
        let mut q = make(Some(on.clone()));
        q.power_off(PowerOffOptions::default()).unwrap();
        assert!(Arc::ptr_eq(&q.shared_persistent_state().unwrap(), &off));
        // Writing copied the state first: the one it was handed is still on.
        let r = make(Some(on.clone()));
        assert_eq!(r.persistent_state().unwrap()["poweredOn"], json!(true));
        assert!(Arc::ptr_eq(&r.shared_persistent_state().unwrap(), &on));
    }

    /// A hand-written state (knobs only) is not handed back as it was written: the full
    /// encoding is, as `persistent_state` answers; a state that does not decode is the same
    /// error either way.
    #[test]
    fn a_shared_partial_state_comes_back_encoded_and_a_bad_one_fails_alike() {
        let f = Fixture::new();
        let (sink, _) = recorder();
        let knobs = Arc::new(json!({"health": "OK"}));
        let p = f
            .new_provisioner_with_state(host(None), Some(knobs.clone()), sink.clone())
            .expect("provisioner");
        let back = p.shared_persistent_state().unwrap();
        assert_ne!(*back, *knobs);
        assert_eq!(Some(&*back), p.persistent_state().as_ref());
        assert_eq!(back["health"], json!("OK"));
        let (plain, _) = prov(&f, host(Some((*knobs).clone())));
        assert_eq!(p.persistent_state(), plain.persistent_state());

        let bad = json!({"poweredOn": "yes"});
        let shared = f
            .new_provisioner_with_state(host(None), Some(Arc::new(bad.clone())), sink.clone())
            .err()
            .expect("an error");
        let plain = f
            .new_fixture_provisioner(host(Some(bad)), sink)
            .expect_err("an error");
        assert_eq!(shared, plain);
        assert!(
            shared
                .to_string()
                .contains("invalid fixture provisioner state"),
            "{shared}"
        );
    }

    /// At most `STATES_KNOWN` states are kept, the most recently used first.
    #[test]
    fn the_known_states_are_the_recent_few() {
        let known = KnownStates::default();
        let state = |n: i64| {
            Arc::new(FixtureState {
                become_ready_counter: n,
                ..FixtureState::default()
            })
        };
        let first = known.encode(&state(0)).unwrap();
        for n in 1..STATES_KNOWN as i64 {
            known.encode(&state(n));
        }
        assert!(Arc::ptr_eq(&known.encode(&state(0)).unwrap(), &first));
        for n in STATES_KNOWN as i64..2 * STATES_KNOWN as i64 {
            known.encode(&state(n));
        }
        assert_eq!(known.0.lock().unwrap().len(), STATES_KNOWN);
        let again = known.encode(&state(0)).unwrap();
        assert!(!Arc::ptr_eq(&again, &first), "forgotten: encoded anew");
        assert_eq!(again, first);
    }

    #[test]
    fn state_round_trips_through_persistent_state() {
        let f = Fixture::new();
        let (mut p, _) = prov(&f, host(None));
        let data = InspectData::default();
        let InspectResult { started, .. } = p
            .inspect_hardware(&data, InspectOptions::default())
            .unwrap();
        assert!(started);
        p.power_on(PowerOnOptions::default()).unwrap();
        p.adopt(&AdoptData::default(), AdoptOptions::default())
            .unwrap();
        let saved = p.persistent_state().unwrap();
        assert_eq!(saved["inspectionStarted"], json!(true));
        assert_eq!(saved["poweredOn"], json!(true));
        assert_eq!(saved["adopted"], json!(true));

        // Through a text round trip, as the caller stores it.
        let text = serde_json::to_string(&saved).unwrap();
        let (mut p2, events) = prov(
            &Fixture::new(),
            host(Some(serde_json::from_str(&text).unwrap())),
        );
        assert_eq!(p2.state, p.state);
        let InspectResult {
            result: r,
            started,
            details,
        } = p2
            .inspect_hardware(&data, InspectOptions::default())
            .unwrap();
        assert!(!r.dirty && !started && details.is_some());
        assert_eq!(reasons(&events)[0].0, "InspectionComplete");
        assert_eq!(p2.update_hardware_state().unwrap().powered_on, Some(true));
        assert_eq!(
            p2.adopt(&AdoptData::default(), AdoptOptions::default())
                .unwrap(),
            OpResult::done()
        );
    }

    #[test]
    fn default_state_serialises_every_field_camel_case() {
        let v = serde_json::to_value(FixtureState::default()).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        for k in [
            "becomeReadyCounter",
            "deleted",
            "disablePowerOff",
            "poweredOn",
            "rebootCalled",
            "powerFailed",
            "health",
            "adopted",
            "image",
            "inspectionStarted",
            "validateError",
            "customDeploy",
        ] {
            assert!(keys.contains(&k), "missing {k} in {keys:?}");
        }
        // The canned firmware is left out; anything else is written.
        assert!(!keys.contains(&"hostFirmwareSettings"), "{keys:?}");
        assert!(!keys.contains(&"hostFirmwareComponents"), "{keys:?}");
        let mut changed = FixtureState::default();
        Arc::make_mut(&mut changed.host_firmware_components)
            .components
            .clear();
        let v2 = serde_json::to_value(&changed).unwrap();
        assert_eq!(v2["hostFirmwareComponents"], json!({"components": []}));
        assert_eq!(serde_json::from_value::<FixtureState>(v2).unwrap(), changed);
        let back: FixtureState = serde_json::from_value(v).unwrap();
        assert_eq!(back, FixtureState::default());
        let empty: FixtureState = serde_json::from_value(json!({})).unwrap();
        assert_eq!(empty, FixtureState::default());
        let (p, _) = prov(&Fixture::new(), host(Some(serde_json::Value::Null)));
        assert_eq!(*p.state, FixtureState::default());
    }

    #[test]
    fn knobs_and_mocks() {
        let f = Fixture::new();
        let (mut p, _) = prov(
            &f,
            host(Some(json!({
                "health": "Critical",
                "powerFailed": true,
                "hostFirmwareSettings": {"settings": {"ProcVirtualization": "Enabled"}, "schema": {}},
                "hostFirmwareComponents": {"components": [{
                    "component": "bios", "initialVersion": "1", "currentVersion": "2",
                    "lastVersionFlashed": "2", "updatedAt": "2024-01-01T00:00:00Z"
                }]}
            }))),
        );
        assert_eq!(p.get_health(), "Critical");
        assert!(p.has_power_failure());
        assert!(p.has_capacity().unwrap());
        assert_eq!(p.preprovisioning_image_formats().unwrap(), None);
        let fs = p
            .get_firmware_settings(FirmwareSettingsOptions {
                include_schema: true,
            })
            .unwrap();
        assert_eq!(fs.settings["ProcVirtualization"], "Enabled");
        let fc = p.get_firmware_components().unwrap();
        assert_eq!(fc.len(), 1);
        assert_eq!(fc[0].current_version, "2");
        assert_eq!(
            p.add_bmc_event_subscription(&json!({}), &[]).unwrap(),
            OpResult::done()
        );
        assert_eq!(
            p.remove_bmc_event_subscription(&json!({})).unwrap(),
            OpResult::done()
        );
        assert!(!p.get_data_image_status().unwrap());
        p.attach_data_image("http://x/iso").unwrap();
        assert!(p.get_data_image_status().unwrap());
        assert_eq!(p.state.data_image_url, "http://x/iso");
        let kept = p.persistent_state().unwrap();
        assert_eq!(kept["dataImageUrl"], "http://x/iso");
        p.detach_data_image().unwrap();
        assert!(!p.get_data_image_status().unwrap());
        assert_eq!(p.persistent_state().unwrap().get("dataImageUrl"), None);

        let (mut q, _) = prov(&f, host(None));
        assert_eq!(q.get_health(), "");
        assert!(!q.has_power_failure());
    }

    #[test]
    fn subscriptions_are_kept_per_host_until_deleted() {
        let f = Fixture::new();
        let (mut p, _) = prov(&f, host(None));
        let mut sub = bmh_api::BmcEventSubscription::default();
        sub.metadata.name = "sub".into();
        sub.spec.destination = "https://x/".into();
        let headers = [BTreeMap::from([(
            "X-Auth".to_string(),
            "s3cret".to_string(),
        )])];
        let id = p.create_bmc_event_subscription(&sub, &headers).unwrap();
        assert_eq!(id.as_deref(), Some("fixture-default-sub"));
        let held = f.subscriptions().of(&ObjectKey::new("default", "host-0"));
        assert_eq!(held["fixture-default-sub"].header_names, vec!["X-Auth"]);
        assert_eq!(held["fixture-default-sub"].destination, "https://x/");
        sub.status = Some(bmh_api::BmcEventSubscriptionStatus {
            subscription_id: id.unwrap(),
            ..Default::default()
        });
        assert!(p.delete_bmc_event_subscription(&sub).unwrap());
        assert!(
            f.subscriptions()
                .of(&ObjectKey::new("default", "host-0"))
                .is_empty()
        );
        sub.metadata.annotations.insert(
            crate::provisioners::fixture_subscriptions::ANNOTATION_SUBSCRIPTION_ERROR.into(),
            "BMC said no".into(),
        );
        assert_eq!(
            p.create_bmc_event_subscription(&sub, &headers),
            Err(ProvisionerError::Other("BMC said no".into()))
        );
    }

    #[test]
    fn the_data_image_error_knob_fails_every_data_image_call() {
        let mut h = host(None);
        h.annotations
            .insert(ANNOTATION_DATA_IMAGE_ERROR.into(), "vmedia down".into());
        let (mut p, _) = prov(&Fixture::new(), h);
        let down = Err(ProvisionerError::Other("vmedia down".into()));
        assert_eq!(p.get_data_image_status(), down.clone().map(|()| false));
        assert_eq!(p.attach_data_image("http://x/iso"), down.clone());
        assert_eq!(p.detach_data_image(), down);
        assert_eq!(p.state.data_image_url, "");
    }

    #[test]
    fn provisioner_is_send() {
        fn assert_send<T: Send>() {}
        assert_send::<FixtureProvisioner>();
        assert_send::<Box<dyn Provisioner>>();
        fn assert_factory<T: ProvisionerFactory>() {}
        assert_factory::<Fixture>();
        assert_eq!(NAME, "fixture");
    }
}
