//! A fluent test harness around [`Machine::reconcile`]: build a host, run passes on a virtual
//! clock advanced by each requeue, and keep a log of every pass.

use super::mock::Mock;
use crate::clock::{Clock, ManualClock, format_time};
use crate::machine::{Machine, MachineConfig, PassOutcome, Requeue, backoff};
use crate::objects::{ObjectMap, ResolvedSecret};
use crate::provisioners::fixture::{Fixture, FixtureState, TEMPORARY_FAKE_ID};
use crate::record::HostRecord;
use bmh_api::{
    BareMetalHostStatus, BmcDetails, CredentialsStatus, HostFirmwareComponents,
    HostFirmwareComponentsStatus, HostFirmwareSettings, HostFirmwareSettingsStatus, Image,
    ObjectKey, OperationalStatus, ProvisioningState as S, RootDeviceHints, SecretReference,
    annotations,
};
use bmhctl_plugin_sdk::{Event, ProvisionerFactory};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

pub const BMC: &str = "ipmi://192.168.122.1:6233";
pub const SECRET: &str = "bmc-secret";
pub const IMAGE_URL: &str = "http://example.test/images/host.qcow2";
pub const IMAGE_SUM: &str = "0123456789abcdef";
pub const NAMESPACE: &str = "default";

/// One pass as the log keeps it.
#[derive(Debug, Clone)]
pub struct PassRecord {
    /// The BMO time the pass ran at.
    pub at: String,
    /// `status.provisioning.state` when the pass started.
    pub state: S,
    /// ... and after it (unsaved changes already reverted).
    pub end_state: S,
    pub saved: bool,
    pub requeue: Requeue,
    pub outcome: PassOutcome,
}

enum Backend {
    Fixture(Fixture),
    Mock(Mock),
}

pub struct HostTest {
    pub rec: HostRecord,
    pub secrets: ObjectMap,
    pub clock: ManualClock,
    pub config: MachineConfig,
    backend: Backend,
    pub rng: fastrand::Rng,
    pub log: Vec<PassRecord>,
    consecutive_errors: u32,
    pub deleted: bool,
}

impl HostTest {
    /// A bare host: only a name and `online: false`, the fixture provisioner.
    pub fn new(name: &str) -> Self {
        let mut rec = HostRecord::default();
        rec.host.api_version = bmh_api::API_VERSION.into();
        rec.host.kind = bmh_api::KIND.into();
        rec.host.metadata.name = name.into();
        rec.book.uid = format!("uid-{name}");
        rec.book.generation = 1;
        let config = MachineConfig {
            default_architecture: "x86_64".into(),
            ..MachineConfig::default()
        };
        Self {
            rec,
            secrets: ObjectMap::default(),
            clock: ManualClock::default(),
            config,
            backend: Backend::Fixture(Fixture::new()),
            rng: fastrand::Rng::with_seed(42),
            log: Vec::new(),
            consecutive_errors: 0,
            deleted: false,
        }
    }

    /// The host of section 10: BMC, valid secret, image, `online: true`.
    pub fn standard(name: &str) -> Self {
        Self::new(name)
            .bmc(BMC, SECRET)
            .secret(SECRET, "admin", "password")
            .image(IMAGE_URL, IMAGE_SUM)
            .online(true)
    }

    // ----- building ---------------------------------------------------------------------

    pub fn bmc(mut self, address: &str, credentials_name: &str) -> Self {
        self.rec.host.spec.bmc = Some(BmcDetails {
            address: address.into(),
            credentials_name: credentials_name.into(),
            ..Default::default()
        });
        self
    }

    pub fn secret(mut self, name: &str, username: &str, password: &str) -> Self {
        self.set_secret(name, username, password);
        self
    }

    pub fn image(mut self, url: &str, checksum: &str) -> Self {
        self.rec.host.spec.image = Some(image(url, checksum));
        self
    }

    pub fn online(mut self, online: bool) -> Self {
        self.rec.host.spec.online = online;
        self
    }

    pub fn data_secret(mut self, name: &str, entries: &[(&str, &str)]) -> Self {
        self.set_data_secret(name, entries);
        self
    }

    pub fn annotate(mut self, key: &str, value: &str) -> Self {
        self.set_annotation(key, value);
        self
    }

    pub fn spec(mut self, f: impl FnOnce(&mut bmh_api::BareMetalHostSpec)) -> Self {
        f(&mut self.rec.host.spec);
        self
    }

    pub fn status(mut self, f: impl FnOnce(&mut BareMetalHostStatus)) -> Self {
        f(self.rec.host.status.get_or_insert_with(Default::default));
        self
    }

    /// Seeds the fixture's per-host state (its knobs), as `HostData::provisioner_state`.
    pub fn fixture_state(mut self, state: serde_json::Value) -> Self {
        self.rec.book.provisioner_state = Some(state.into());
        self
    }

    pub fn mock(mut self, mock: &Mock) -> Self {
        self.backend = Backend::Mock(mock.clone());
        self
    }

    /// Gives the host a HostFirmwareSettings with these `spec.settings` (generation 1).
    pub fn firmware_settings(mut self, settings: serde_json::Value) -> Self {
        let mut hfs: HostFirmwareSettings = serde_json::from_value(serde_json::json!({
            "apiVersion": bmh_api::API_VERSION,
            "kind": bmh_api::HOST_FIRMWARE_SETTINGS_KIND,
            "metadata": {"name": self.rec.host.metadata.name},
            "spec": {"settings": settings},
        }))
        .expect("HostFirmwareSettings");
        hfs.metadata.generation = 1;
        self.rec.book.firmware.settings_generation = 1;
        self.rec.firmware_settings = Some(Box::new(hfs));
        self
    }

    /// Gives the host a HostFirmwareComponents with these `spec.updates` (generation 1).
    pub fn firmware_components(mut self, updates: serde_json::Value) -> Self {
        let mut hfc: HostFirmwareComponents = serde_json::from_value(serde_json::json!({
            "apiVersion": bmh_api::API_VERSION,
            "kind": bmh_api::HOST_FIRMWARE_COMPONENTS_KIND,
            "metadata": {"name": self.rec.host.metadata.name},
            "spec": {"updates": updates},
        }))
        .expect("HostFirmwareComponents");
        hfc.metadata.generation = 1;
        self.rec.book.firmware.components_generation = 1;
        self.rec.firmware_components = Some(Box::new(hfc));
        self
    }

    /// A HostUpdatePolicy for the host (`onReboot` or `onPreparing` for each).
    pub fn update_policy(mut self, settings: &str, updates: &str) -> Self {
        let key = ObjectKey::new(NAMESPACE, &self.rec.host.metadata.name);
        self.secrets.insert_object(
            crate::objects::TypedKey::new(
                bmh_api::API_VERSION,
                bmh_api::HOST_UPDATE_POLICY_KIND,
                key.clone(),
            ),
            serde_json::json!({
                "apiVersion": bmh_api::API_VERSION,
                "kind": bmh_api::HOST_UPDATE_POLICY_KIND,
                "metadata": {"name": key.name, "namespace": key.namespace},
                "spec": {"firmwareSettings": settings, "firmwareUpdates": updates},
            }),
        );
        self
    }

    pub fn max_provisioning_retries(mut self, n: i64) -> Self {
        self.config.max_provisioning_retries = n;
        self
    }

    /// A host that registration has already finished with, now in `state`: finalizer, ID,
    /// profile, root device hints, matching good/tried credentials, opStatus OK.
    /// Add the BMC secret first.
    pub fn registered_in(mut self, state: S) -> Self {
        self.rec
            .book
            .finalizers
            .push(annotations::HOST_FINALIZER.into());
        let creds = self.credentials_status();
        let now = format_time(self.clock.now());
        let st = self.rec.host.status.get_or_insert_with(Default::default);
        st.provisioning.state = state;
        st.provisioning.id = TEMPORARY_FAKE_ID.into();
        st.provisioning.boot_mode = bmh_api::BootMode::Uefi;
        st.provisioning.root_device_hints = Some(Arc::new(RootDeviceHints {
            device_name: "/dev/sda".into(),
            ..Default::default()
        }));
        st.hardware_profile = "unknown".into();
        st.operational_status = OperationalStatus::Ok;
        st.good_credentials = creds.clone();
        st.tried_credentials = creds;
        st.last_updated = Some(now);
        st.hardware = Some(crate::provisioners::fixture::canned_hardware_details().into());
        self
    }

    /// ... and provisioned with the spec's image, powered as `online` says.
    pub fn provisioned(self) -> Self {
        let image = self.rec.host.spec.image.clone().unwrap_or_default();
        let online = self.rec.host.spec.online;
        self.registered_in(S::Provisioned).status(|st| {
            st.provisioning.image = image;
            st.powered_on = online;
        })
    }

    // ----- changing things between passes -----------------------------------------------

    pub fn set_secret(&mut self, name: &str, username: &str, password: &str) {
        let mut data = BTreeMap::new();
        data.insert("username".to_string(), username.as_bytes().to_vec());
        data.insert("password".to_string(), password.as_bytes().to_vec());
        self.secrets
            .insert_secret(ResolvedSecret::new(ObjectKey::new(NAMESPACE, name), data));
    }

    /// A Secret in the host's namespace holding these keys and values.
    pub fn set_data_secret(&mut self, name: &str, entries: &[(&str, &str)]) {
        let data = entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
            .collect();
        self.secrets
            .insert_secret(ResolvedSecret::new(ObjectKey::new(NAMESPACE, name), data));
    }

    pub fn set_annotation(&mut self, key: &str, value: &str) {
        self.rec
            .host
            .metadata
            .annotations
            .insert(key.into(), value.into());
    }

    pub fn remove_annotation(&mut self, key: &str) {
        self.rec.host.metadata.annotations.remove(key);
    }

    pub fn has_annotation(&self, key: &str) -> bool {
        self.rec.host.metadata.annotations.contains_key(key)
    }

    pub fn edit_spec(&mut self, f: impl FnOnce(&mut bmh_api::BareMetalHostSpec)) {
        f(&mut self.rec.host.spec);
        self.rec.book.generation += 1;
    }

    /// Changes the HostFirmwareSettings' spec, bumping its generation as a new load would.
    pub fn edit_firmware_settings(&mut self, f: impl FnOnce(&mut HostFirmwareSettings)) {
        let hfs = self.rec.firmware_settings.as_mut().expect("no HFS");
        f(hfs);
        hfs.metadata.generation += 1;
        self.rec.book.firmware.settings_generation = hfs.metadata.generation;
    }

    /// Changes the HostFirmwareComponents' spec, bumping its generation.
    pub fn edit_firmware_components(&mut self, f: impl FnOnce(&mut HostFirmwareComponents)) {
        let hfc = self.rec.firmware_components.as_mut().expect("no HFC");
        f(hfc);
        hfc.metadata.generation += 1;
        self.rec.book.firmware.components_generation = hfc.metadata.generation;
    }

    /// The HostFirmwareSettings' status.
    pub fn hfs(&self) -> HostFirmwareSettingsStatus {
        let hfs = self.rec.firmware_settings.as_ref().expect("no HFS");
        hfs.status.clone().unwrap_or_default()
    }

    /// The HostFirmwareComponents' status.
    pub fn hfc(&self) -> HostFirmwareComponentsStatus {
        let hfc = self.rec.firmware_components.as_ref().expect("no HFC");
        hfc.status.clone().unwrap_or_default()
    }

    /// `bmhctl delete`: the deletion mark.
    pub fn mark_deleted(&mut self) {
        self.rec.book.deletion_requested = Some(format_time(self.clock.now()));
    }

    pub fn credentials_status(&self) -> CredentialsStatus {
        let key = ObjectKey::new(NAMESPACE, self.rec.host.credentials_name());
        let version = self
            .secrets
            .get_secret(&key)
            .map(|s| s.version.clone())
            .unwrap_or_default();
        CredentialsStatus {
            credentials: Some(SecretReference {
                name: key.name,
                namespace: key.namespace,
            }),
            credentials_version: version,
        }
    }

    // ----- running ------------------------------------------------------------------------

    /// One BMO pass; the clock then advances by the requeue delay.
    pub fn pass(&mut self) -> PassOutcome {
        assert!(!self.deleted, "the host was deleted; no more passes");
        let at = format_time(self.clock.now());
        let state = self.rec.status().provisioning.state.clone();
        let factory: &dyn ProvisionerFactory = match &self.backend {
            Backend::Fixture(f) => f,
            Backend::Mock(m) => m,
        };
        let machine = Machine {
            factory,
            objects: &self.secrets,
            clock: &self.clock,
            config: &self.config,
        };
        let outcome = machine.reconcile(&mut self.rec, &mut self.rng);
        let delay = match outcome.requeue {
            Requeue::After(d) => {
                self.consecutive_errors = 0;
                d
            }
            Requeue::ErrorBackoff => {
                self.consecutive_errors += 1;
                backoff::error_retry_delay(self.consecutive_errors)
            }
            Requeue::Never => {
                self.consecutive_errors = 0;
                Duration::ZERO
            }
        };
        self.clock.advance(delay);
        self.deleted = outcome.deleted();
        self.log.push(PassRecord {
            at,
            state,
            end_state: self.rec.status().provisioning.state.clone(),
            saved: outcome.save_status,
            requeue: outcome.requeue,
            outcome: outcome.clone(),
        });
        outcome
    }

    pub fn passes(&mut self, n: usize) -> Vec<PassOutcome> {
        (0..n).map(|_| self.pass()).collect()
    }

    /// Runs passes until `done` holds after one (at most `max`); returns the outcomes.
    pub fn passes_until(
        &mut self,
        max: usize,
        mut done: impl FnMut(&HostTest, &PassOutcome) -> bool,
    ) -> Vec<PassOutcome> {
        let mut out = Vec::new();
        for _ in 0..max {
            let o = self.pass();
            out.push(o.clone());
            if done(self, &o) {
                return out;
            }
        }
        panic!(
            "condition not reached within {max} passes; trace:\n{}",
            self.trace()
        );
    }

    pub fn run_until_state(&mut self, state: S) -> Vec<PassOutcome> {
        self.passes_until(60, |t, _| *t.state() == state)
    }

    /// Runs until a pass finds nothing to do (steady power poll or unmanaged poll), the host
    /// is deleted, or it waits for an external change.
    pub fn run_to_steady(&mut self) -> Vec<PassOutcome> {
        self.passes_until(60, |_, o| {
            o.steady() || o.deleted() || o.requeue == Requeue::Never
        })
    }

    // ----- looking --------------------------------------------------------------------------

    pub fn state(&self) -> &S {
        &self.rec.status().provisioning.state
    }

    pub fn st(&self) -> &BareMetalHostStatus {
        self.rec.status()
    }

    pub fn last(&self) -> &PassRecord {
        self.log.last().expect("no pass yet")
    }

    /// The states the host was in after each pass, without repeats.
    pub fn state_path(&self) -> Vec<S> {
        let mut path: Vec<S> = Vec::new();
        for p in &self.log {
            if path.last() != Some(&p.end_state) {
                path.push(p.end_state.clone());
            }
        }
        path
    }

    pub fn all_events(&self) -> Vec<Event> {
        self.log
            .iter()
            .flat_map(|p| p.outcome.events.iter().cloned())
            .collect()
    }

    pub fn event_reasons(&self) -> Vec<String> {
        self.all_events().into_iter().map(|e| e.reason).collect()
    }

    pub fn fixture(&self) -> FixtureState {
        self.rec
            .book
            .provisioner_state
            .as_ref()
            .map(|v| serde_json::from_value((**v).clone()).expect("fixture state"))
            .unwrap_or_default()
    }

    /// The log as text, for failure messages.
    pub fn trace(&self) -> String {
        self.log
            .iter()
            .enumerate()
            .map(|(i, p)| {
                format!(
                    "{:>3} {} {:<28} -> {:<28} saved={:<5} {:?} err={:?}\n",
                    i + 1,
                    p.at,
                    format!("{:?}", p.state.as_str()),
                    format!("{:?}", p.end_state.as_str()),
                    p.saved,
                    p.requeue,
                    p.outcome.error
                )
            })
            .collect()
    }
}

pub fn image(url: &str, checksum: &str) -> Image {
    Image {
        url: url.into(),
        checksum: checksum.into(),
        ..Default::default()
    }
}

/// The requeue delay of an outcome, which must be a timed one.
pub fn after(o: &PassOutcome) -> Duration {
    match o.requeue {
        Requeue::After(d) => d,
        other => panic!("expected a timed requeue, got {other:?}"),
    }
}

pub fn secs(n: u64) -> Requeue {
    Requeue::After(Duration::from_secs(n))
}

pub const NOW: Requeue = Requeue::After(Duration::ZERO);
