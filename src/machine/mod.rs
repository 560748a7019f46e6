//! BMO's BareMetalHost state machine: a pure pass ([`Machine::reconcile`]) at a time.

mod action;
pub mod backoff;
mod conditions;
mod credentials;
mod data_image;
pub mod event_subscription;
mod firmware;
mod handlers;
mod image_pull_secret;
mod power;
mod register;
mod settings;

pub use action::{Action, PassError};
pub use conditions::condition_types;
pub use firmware::{schema_name, updates_difference};
pub(crate) use handlers::deploy_method;
pub use settings::profile_root_device_hints;

use crate::clock::{Clock, format_time};
use crate::intern::Recent;
use crate::objects::{ObjectSource, ResolvedSecret};
use crate::record::HostRecord;
use bmh_api::{
    BareMetalHostStatus, ErrorType, HardwareDetails, OperationalStatus, ProvisioningState as S,
    Word, annotations,
};
use bmhctl_plugin_sdk::{
    Event, EventSink, HostData, OpResult, Provisioner, ProvisionerError, ProvisionerFactory, WaitOn,
};
use chrono::{DateTime, Utc};
use std::cell::OnceCell;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// BMO's fixed delays (`baremetalhost_controller.go:56-60`, `:1757`).
pub mod delays {
    use std::time::Duration;
    pub const HOST_ERROR_RETRY: Duration = Duration::from_secs(10);
    pub const UNMANAGED_RETRY: Duration = Duration::from_secs(600);
    pub const PREPROV_IMAGE_RETRY: Duration = Duration::from_secs(300);
    pub const PROVISIONER_NOT_READY_RETRY: Duration = Duration::from_secs(30);
    pub const SUB_RESOURCE_NOT_READY_RETRY: Duration = Duration::from_secs(60);
    pub const POWER_POLL: Duration = Duration::from_secs(60);
    pub const DETACHED_POLL: Duration = Duration::from_secs(600);
}

/// Give up on deprovisioning or powering off during deletion after this many errors.
const DELETE_RETRY_COUNT: i64 = 3;

/// Settings of the state machine (BMO's manager flags).
#[derive(Debug, Clone)]
pub struct MachineConfig {
    /// `--max-provisioning-retries`: 0 = unlimited.
    pub max_provisioning_retries: i64,
    /// The architecture reported when neither spec nor inspection knows it (BMO uses its own).
    pub default_architecture: String,
}

impl Default for MachineConfig {
    fn default() -> Self {
        Self {
            max_provisioning_retries: 5,
            default_architecture: std::env::consts::ARCH.to_string(),
        }
    }
}

/// When the host wants its next pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Requeue {
    /// After this much BMO time (zero = at once).
    After(Duration),
    /// The pass failed with an error: retry with the per-host error backoff.
    ErrorBackoff,
    /// Only when something changes (a paused host, a permanent credentials error, a finished delete).
    #[default]
    Never,
}

/// What one pass decided, for the runner to act on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PassOutcome {
    pub requeue: Requeue,
    /// The status was changed in a way BMO saves: persist it.
    pub save_status: bool,
    /// Bookkeeping (finalizers, architecture, HardwareData, provisioner state) changed: persist it.
    pub bookkeeping_changed: bool,
    /// The status of a firmware object changed: persist it (BMO writes it at once).
    pub firmware_changed: bool,
    /// The status of the host's DataImage changed: persist it (as BMO writes it at once).
    pub data_image_changed: bool,
    /// Annotations BMO consumed and removed from the object this pass.
    pub removed_annotations: Vec<String>,
    /// Events of the pass, in order; none when it failed (BMO publishes only after success).
    pub events: Vec<Event>,
    /// The pass error, as BMO's controller would log it.
    pub error: Option<String>,
    /// How the pass ended, when not by acting: one of these at most.
    pub end: PassEnd,
    /// What the next pass waits for; a runner may only run it *earlier* when the wait is over.
    pub wait: Option<WaitOn>,
}

/// How a pass ended, besides what it saved and when it comes back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PassEnd {
    /// A handler acted (or waited on its provisioner).
    #[default]
    Acted,
    /// A stable state's handler found nothing to do (the steady power poll, the unmanaged poll).
    Steady,
    /// The host is paused; nothing was done.
    Paused,
    /// The delete path finished: the object is gone.
    Deleted,
    /// Nothing was done, and a batch stops the host: the provisioner found it held in a way
    /// BMO's path cannot take on ([`ProvisionerError::Refused`]), or its BMC Secret still holds
    /// `import`'s password placeholder.
    Refused,
}

impl PassOutcome {
    pub fn deleted(&self) -> bool {
        self.end == PassEnd::Deleted
    }

    pub fn steady(&self) -> bool {
        self.end == PassEnd::Steady
    }

    pub fn paused(&self) -> bool {
        self.end == PassEnd::Paused
    }

    pub(crate) fn new(requeue: Requeue) -> Self {
        Self {
            requeue,
            ..Self::default()
        }
    }
}

/// The state machine with what it talks to.
pub struct Machine<'a> {
    pub factory: &'a dyn ProvisionerFactory,
    pub objects: &'a dyn ObjectSource,
    pub clock: &'a dyn Clock,
    pub config: &'a MachineConfig,
}

pub(crate) struct Pass<'m, 'r> {
    m: &'m Machine<'m>,
    rec: &'r mut HostRecord,
    rng: &'r mut fastrand::Rng,
    now: PassTime,
    /// BMO's `info.events`: published only if the pass does not fail.
    events: Arc<Mutex<Vec<Event>>>,
    removed_annotations: Vec<String>,
    bookkeeping_changed: bool,
    firmware_changed: bool,
    data_image_changed: bool,
    next_state: S,
    have_creds: bool,
    creds_secret: Option<Arc<ResolvedSecret>>,
    steady: bool,
    /// A handler requeued on the provisioner's own `requeue_after`.
    waits_on_provisioner: bool,
    /// The status before this pass first changed it, to put back when not saved.
    status_before: Option<Option<BareMetalHostStatus>>,
}

impl Machine<'_> {
    /// One pass over one host; status changes are kept only when the outcome saves them.
    pub fn reconcile(&self, rec: &mut HostRecord, rng: &mut fastrand::Rng) -> PassOutcome {
        let events = Arc::new(Mutex::new(Vec::new()));
        let mut pass = Pass {
            m: self,
            now: PassTime {
                at: self.clock.now(),
                text: OnceCell::new(),
            },
            rec,
            rng,
            events: events.clone(),
            removed_annotations: Vec::new(),
            bookkeeping_changed: false,
            firmware_changed: false,
            data_image_changed: false,
            next_state: S::None,
            have_creds: false,
            creds_secret: None,
            steady: false,
            waits_on_provisioner: false,
            status_before: None,
        };
        let mut out = pass.run();
        // Reporting only: BMO logs a pass's error and retries; bmhctl also keeps the last one.
        if pass.rec.book.pass_error != out.error {
            pass.rec.book.pass_error.clone_from(&out.error);
            out.bookkeeping_changed = true;
        }
        out.bookkeeping_changed |= pass.bookkeeping_changed;
        out.firmware_changed |= pass.firmware_changed;
        out.data_image_changed |= pass.data_image_changed;
        out.removed_annotations = std::mem::take(&mut pass.removed_annotations);
        if pass.steady && out.end == PassEnd::Acted {
            out.end = PassEnd::Steady;
        }
        let events = std::mem::take(&mut *events.lock().unwrap());
        if out.error.is_none() {
            out.events = events;
        }
        if out.save_status {
            let now = pass.now.text().to_string();
            pass.rec
                .host
                .status
                .get_or_insert_with(Default::default)
                .last_updated = Some(now);
            if let Some(Some(before)) = pass.status_before.take() {
                SPARE_STATUS.set(Some(before));
            }
        } else if let Some(before) = pass.status_before.take() {
            // BMO discards in-memory status changes that are not saved.
            if let Some(changed) = std::mem::replace(&mut pass.rec.host.status, before) {
                SPARE_STATUS.set(Some(changed));
            }
        }
        out
    }
}

/// The time of a pass, formatted only when a pass writes it.
pub(crate) struct PassTime {
    pub(crate) at: DateTime<Utc>,
    text: OnceCell<Word>,
}

impl PassTime {
    pub(crate) fn text(&self) -> &str {
        self.word().as_str()
    }

    /// The time as shared text: every condition the pass sets holds the one copy.
    pub(crate) fn word(&self) -> &Word {
        self.text
            .get_or_init(|| Word::shared(format_time(self.at).into()))
    }
}

/// Either the pass ends here with this outcome, or it goes on.
type Step = Option<PassOutcome>;

impl Pass<'_, '_> {
    fn run(&mut self) -> PassOutcome {
        // Step 2: paused hosts are left alone entirely (BMO does not requeue them).
        if self.annotation(annotations::PAUSED).is_some() {
            let mut out = PassOutcome::new(Requeue::Never);
            out.end = PassEnd::Paused;
            return out;
        }
        if let Some(out) = self.reconcile_host_data() {
            return out;
        }
        if let Some(out) = self.update_hardware_details() {
            return out;
        }
        // Step 5: the finalizer, before anything else is done.
        if !self.rec.being_deleted() && !self.rec.has_host_finalizer() {
            self.rec
                .book
                .finalizers
                .push(annotations::HOST_FINALIZER.to_string());
            self.bookkeeping_changed = true;
            return PassOutcome::new(Requeue::After(Duration::ZERO));
        }
        if let Some(out) = self.resolve_credentials() {
            return out;
        }
        // `import`'s password placeholder never reaches a BMC (a host file holding it is
        // refused at load; a stored one here).
        let placeholder = (self.creds_secret.as_ref()).and_then(|s| {
            crate::objects::placeholder_problem(&s.key, s.data.get("password").map(|p| &p[..]))
        });
        if let Some(why) = placeholder {
            return self.refused(why);
        }
        let mut prov = match self.new_provisioner() {
            Ok(p) => {
                self.note_waiting(None);
                p
            }
            Err(ProvisionerError::NotReady(why)) => {
                self.note_waiting((!why.is_empty()).then_some(why));
                return PassOutcome::new(Requeue::After(delays::PROVISIONER_NOT_READY_RETRY));
            }
            Err(ProvisionerError::Refused(why)) => return self.refused(why),
            Err(e) => return self.error_outcome(format!("failed to create provisioner: {e}")),
        };
        let initial = self.state().clone();
        self.next_state = initial.clone();
        let action = self.reconcile_state_checks(prov.as_mut(), &initial);
        let action = self.update_host_state_from(prov.as_mut(), &initial, action);
        if let Some(state) = prov.shared_persistent_state()
            && !self
                .rec
                .book
                .provisioner_state
                .as_ref()
                .is_some_and(|kept| Arc::ptr_eq(kept, &state) || **kept == *state)
        {
            self.rec.book.provisioner_state = Some(shared_state(state));
            self.bookkeeping_changed = true;
        }
        let requeue = match &action {
            Action::Error(e) => {
                return self.error_outcome(format!("action \"{initial}\" failed: {}", e.message));
            }
            Action::Continue(d) | Action::Update(d) => Requeue::After(*d),
            Action::Complete => Requeue::After(Duration::ZERO),
            Action::Delayed => Requeue::After(backoff::backoff(1, self.rng.f64())),
            Action::Failed { error_count } => {
                Requeue::After(backoff::backoff(*error_count, self.rng.f64()))
            }
            Action::DeleteComplete => Requeue::Never,
        };
        let (dirty, deleted) = (action.dirty(), action == Action::DeleteComplete);
        let wait = match &action {
            Action::Delayed => Some(WaitOn::Capacity),
            Action::Continue(d) | Action::Update(d)
                if self.waits_on_provisioner && !d.is_zero() =>
            {
                Some(WaitOn::Progress)
            }
            _ => None,
        };
        let conditions_changed = !deleted && self.compute_conditions(prov.as_mut());
        let mut out = PassOutcome::new(requeue);
        out.wait = wait;
        out.save_status = (dirty || conditions_changed) && !deleted;
        if deleted {
            out.end = PassEnd::Deleted;
        }
        out
    }

    /// BMO's `Continue`/`Update` after the provisioner's `requeue_after`, marked as a wait.
    pub(crate) fn wait_on_provisioner(&mut self, changed: bool, delay: Duration) -> Action {
        self.waits_on_provisioner = true;
        Action::continue_or_update(changed, delay)
    }

    /// Keeps why the host waits on its provisioner; `None` once a provisioner could be made.
    fn note_waiting(&mut self, why: Option<String>) {
        if self.rec.book.waiting != why {
            self.rec.book.waiting = why;
            self.bookkeeping_changed = true;
        }
    }

    /// Nothing done: a batch stops the host with `why`, a controller retries it.
    fn refused(&mut self, why: String) -> PassOutcome {
        let mut out = self.error_outcome(why);
        out.end = PassEnd::Refused;
        out
    }

    fn error_outcome(&mut self, message: String) -> PassOutcome {
        let mut out = PassOutcome::new(Requeue::ErrorBackoff);
        out.error = Some(message);
        out
    }

    fn new_provisioner(&mut self) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        let host = &self.rec.host;
        let (username, password) = match &self.creds_secret {
            Some(s) if self.have_creds => (
                s.get_str("username").unwrap_or_default().trim().to_string(),
                s.get_str("password").unwrap_or_default().trim().to_string(),
            ),
            _ => (String::new(), String::new()),
        };
        // Only what the provisioner is given: not the whole BMC block, every pass.
        let (bmc_address, disable_certificate_verification) = match &host.spec.bmc {
            Some(b) => (b.address.clone(), b.disable_certificate_verification),
            None => Default::default(),
        };
        let data = HostData {
            key: host.metadata.key(),
            uid: self.rec.book.uid.clone(),
            labels: host.metadata.labels.clone(),
            annotations: host.metadata.annotations.clone(),
            bmc_address,
            bmc_credentials: bmhctl_plugin_sdk::BmcCredentials { username, password },
            disable_certificate_verification,
            boot_mac_address: host.spec.boot_mac_address.clone(),
            provisioner_id: self.status().provisioning.id.clone(),
            // Handed over shared below rather than copied here.
            provisioner_state: None,
            externally_provisioned: host.spec.externally_provisioned,
            inspection_disabled: host.inspection_disabled(),
        };
        let sink_events = self.events.clone();
        let sink: EventSink = Arc::new(move |e| sink_events.lock().unwrap().push(e));
        let state = self.rec.book.provisioner_state.clone();
        self.m.factory.new_provisioner_with_state(data, state, sink)
    }

    // ----- small accessors --------------------------------------------------------------

    pub(crate) fn status(&self) -> &BareMetalHostStatus {
        self.rec.status()
    }

    /// The status, to change: the first call keeps a copy, so check first when it may not.
    pub(crate) fn status_mut(&mut self) -> &mut BareMetalHostStatus {
        self.keep_status_before();
        self.rec.host.status.get_or_insert_with(Default::default)
    }

    fn keep_status_before(&mut self) {
        if self.status_before.is_none() {
            self.status_before = Some(self.rec.host.status.as_ref().map(spare_copy));
        }
    }

    pub(crate) fn state(&self) -> &S {
        &self.status().provisioning.state
    }

    pub(crate) fn event(&mut self, reason: &str, message: impl Into<String>) {
        self.events.lock().unwrap().push(Event {
            reason: reason.to_string(),
            message: message.into(),
        });
    }

    pub(crate) fn annotation(&self, key: &str) -> Option<&str> {
        self.rec.host.annotation(key)
    }

    /// A meta update: remove an annotation BMO consumes.
    pub(crate) fn remove_annotation(&mut self, key: &str) -> bool {
        if self.rec.host.metadata.annotations.remove(key).is_some() {
            self.removed_annotations.push(key.to_string());
            true
        } else {
            false
        }
    }

    // ----- error bookkeeping (action_result.go / controller helpers) --------------------

    /// BMO's `clearErrorWithStatus`: returns whether anything changed. errorCount stays.
    pub(crate) fn clear_error_with_status(&mut self, op: OperationalStatus) -> bool {
        let st = self.status();
        if st.operational_status == op && st.error_type.is_none() && st.error_message.is_empty() {
            return false;
        }
        let st = self.status_mut();
        st.operational_status = op;
        st.error_type = ErrorType::None;
        st.error_message.clear();
        true
    }

    pub(crate) fn clear_error(&mut self) -> bool {
        self.clear_error_with_status(OperationalStatus::Ok)
    }

    /// BMO's `setErrorMessage`: opStatus error, type, message, errorCount + 1.
    pub(crate) fn set_error_message(&mut self, error_type: ErrorType, message: &str) {
        let st = self.status_mut();
        st.operational_status = OperationalStatus::Error;
        st.error_type = error_type;
        st.error_message = message.to_string();
        st.error_count += 1;
    }

    /// BMO's `recordActionFailure`.
    pub(crate) fn record_action_failure(&mut self, error_type: ErrorType, message: &str) -> Action {
        let reason = event_reason(&error_type);
        self.set_error_message(error_type, message);
        self.event(&reason, message);
        Action::Failed {
            error_count: self.status().error_count,
        }
    }

    /// A provisioner step that failed, or waits on the provisioner: the action that ends there.
    pub(crate) fn failed_or_waiting(
        &mut self,
        res: &OpResult,
        error_type: ErrorType,
    ) -> Option<Action> {
        if !res.error_message.is_empty() {
            return Some(self.record_action_failure(error_type, &res.error_message));
        }
        res.dirty.then(|| {
            let changed = self.clear_error();
            self.wait_on_provisioner(changed, res.requeue_after)
        })
    }

    /// The step is done: on to `next`.
    pub(crate) fn complete(&mut self, next: S) -> Action {
        self.next_state = next;
        Action::Complete
    }

    /// The step is done and the error count reset: on to `next`.
    pub(crate) fn completed(&mut self, next: S) -> Action {
        self.status_mut().error_count = 0;
        self.complete(next)
    }

    pub(crate) fn error_type(&self) -> &ErrorType {
        &self.status().error_type
    }

    // ----- ReconcileState (host_state_machine.go:178-212) ------------------------------

    fn reconcile_state_checks(&mut self, prov: &mut dyn Provisioner, initial: &S) -> Action {
        if let Some(a) = self.check_delayed_host(prov) {
            return a;
        }
        if self.check_initiate_delete() {
            return Action::Complete;
        }
        if let Some(a) = self.check_detached_host(prov) {
            return a;
        }
        if let Some(a) = self.ensure_registered(prov) {
            return a;
        }
        self.reconcile_firmware(prov, initial);
        self.handle_state(prov, initial)
    }

    /// Applies `next_state`; inspecting, provisioning and deprovisioning wait for capacity.
    fn update_host_state_from(
        &mut self,
        prov: &mut dyn Provisioner,
        initial: &S,
        action: Action,
    ) -> Action {
        if self.next_state == *initial {
            return action;
        }
        let next = self.next_state.clone();
        if matches!(next, S::Inspecting | S::Provisioning | S::Deprovisioning)
            && let Some(a) = self.ensure_capacity(prov)
        {
            return a;
        }
        self.set_operation_running(initial, false);
        self.set_operation_running(&next, true);
        let boot_mode = self.rec.host.boot_mode();
        let st = self.status_mut();
        st.provisioning.state = next.clone();
        if matches!(next, S::Registering | S::Inspecting | S::Provisioning) {
            st.provisioning.boot_mode = boot_mode;
        }
        action
    }

    /// `None` when there is capacity; otherwise the action that waits for it.
    fn ensure_capacity(&mut self, prov: &mut dyn Provisioner) -> Option<Action> {
        match prov.has_capacity() {
            Err(e) => Some(Action::error(format!(
                "failed to determine current provisioner capacity: {e}"
            ))),
            // BMO's `recordActionDelayed`.
            Ok(false) => {
                self.status_mut().operational_status = OperationalStatus::Delayed;
                Some(Action::Delayed)
            }
            Ok(true) => None,
        }
    }

    fn check_delayed_host(&mut self, prov: &mut dyn Provisioner) -> Option<Action> {
        if self.status().operational_status == OperationalStatus::Delayed {
            return Some(self.ensure_capacity(prov).unwrap_or_else(|| {
                self.clear_error();
                Action::Update(Duration::ZERO)
            }));
        }
        if matches!(
            self.state(),
            S::Inspecting | S::Provisioning | S::Deprovisioning
        ) {
            return self.ensure_capacity(prov);
        }
        None
    }

    /// Starts the delete path when the host carries a deletion mark.
    fn check_initiate_delete(&mut self) -> bool {
        if !self.rec.being_deleted() {
            return false;
        }
        let detached_annotation = self.annotation(annotations::DETACHED).map(str::to_string);
        if self.next_state != S::Deleting
            && (self.status().operational_status == OperationalStatus::Detached
                || detached_annotation.is_some())
        {
            if delay_delete_for_detached_host(
                self.status().operational_status.clone(),
                detached_annotation.as_deref(),
            ) {
                return false;
            }
            self.next_state = S::Deleting;
            return true;
        }
        let give_up = *self.error_type() == ErrorType::RegistrationError
            && self.status().error_count > DELETE_RETRY_COUNT;
        self.next_state = match self.state() {
            S::Registering | S::Unmanaged | S::None => S::Deleting,
            S::Provisioning | S::Provisioned => S::Deprovisioning,
            S::Deprovisioning | S::PoweringOffBeforeDelete if give_up => S::Deleting,
            S::Deprovisioning | S::PoweringOffBeforeDelete | S::Deleting => return false,
            _ => S::PoweringOffBeforeDelete,
        };
        true
    }

    // ----- operation history (host_state_machine.go:64-86) ------------------------------

    /// Starts (`running`) or ends the metric of `state` unless it is so; whether it changed.
    pub(crate) fn set_operation_running(&mut self, state: &S, running: bool) -> bool {
        let mut h = self.status().operation_history.clone();
        let m = match state {
            S::Registering => &mut h.register,
            S::Inspecting => &mut h.inspect,
            S::Provisioning => &mut h.provision,
            S::Deprovisioning => &mut h.deprovision,
            _ => return false,
        };
        if (m.start.is_some() && m.end.is_none()) == running {
            return false;
        }
        let now = Some(self.now.text().to_string());
        if running {
            m.start = now;
            m.end = None;
        } else {
            m.end = now;
        }
        self.status_mut().operation_history = h;
        true
    }

    // ----- reconcileHostData and updateHardwareDetails (controller :2697-2775, :299-345) --

    fn reconcile_host_data(&mut self) -> Step {
        let immediate = || PassOutcome::new(Requeue::After(Duration::ZERO));
        if self.rec.being_deleted()
            && let Some(hd) = self.rec.book.hardware_data.as_mut()
            && let Some(i) = hd
                .metadata
                .finalizers
                .iter()
                .position(|f| f == annotations::HARDWARE_DATA_FINALIZER)
        {
            hd.metadata.finalizers.remove(i);
            self.bookkeeping_changed = true;
        }
        let status_annotation = self.annotation(annotations::STATUS).map(str::to_string);
        if self.status().last_updated.is_none()
            && let Some(text) = status_annotation.as_deref()
            && let Ok(mut restored) = serde_json::from_str::<BareMetalHostStatus>(text)
        {
            if let Some(details) = self.hardware_data_details() {
                restored.hardware = Some(details);
            }
            if restored.last_updated.is_none() {
                restored.last_updated = Some(self.now.text().to_string());
            }
            self.keep_status_before();
            self.rec.host.status = Some(restored);
            let mut out = immediate();
            out.save_status = true;
            return Some(out);
        }
        if status_annotation.is_some() {
            self.remove_annotation(annotations::STATUS);
            return Some(immediate());
        }
        if self.rec.architecture().is_empty()
            && let Some(arch) = self
                .hardware_data_details()
                .and_then(|d| d.cpu.as_ref().map(|c| c.arch.clone()))
            && !arch.is_empty()
        {
            self.rec.book.architecture = arch;
            self.bookkeeping_changed = true;
            return Some(immediate());
        }
        None
    }

    fn hardware_data_details(&self) -> Option<Arc<HardwareDetails>> {
        self.rec
            .book
            .hardware_data
            .as_ref()
            .and_then(|hd| hd.spec.hardware.clone())
    }

    fn update_hardware_details(&mut self) -> Step {
        let mut updated = false;
        if self.status().hardware.is_none() || self.rec.host.inspection_disabled() {
            let details = match self.hardware_data_details() {
                Some(d) => Some(d),
                // An empty value is no annotation (BMO's `getHardwareDetailsFromAnnotation`).
                None => match self.annotation(annotations::HARDWARE_DETAILS) {
                    Some(text) if !text.is_empty() => match parse_hardware_details_strict(text) {
                        Ok(d) => Some(Arc::new(d)),
                        Err(e) => {
                            return Some(self.error_outcome(format!(
                                "could not update hardware details: error parsing HardwareDetails from annotation: {e}"
                            )));
                        }
                    },
                    _ => None,
                },
            };
            if let Some(d) = details.filter(|d| self.status().hardware.as_ref() != Some(d)) {
                self.status_mut().hardware = Some(d);
                self.event(
                    "UpdateHardwareDetails",
                    "Set HardwareDetails from hardware data or annotation",
                );
                updated = true;
            }
        }
        if self.remove_annotation(annotations::HARDWARE_DETAILS) && !updated {
            self.event("RemoveAnnotation", "HardwareDetails annotation ignored, status already set and inspection is not disabled");
        }
        updated.then(|| PassOutcome {
            save_status: true,
            ..PassOutcome::new(Requeue::After(Duration::ZERO))
        })
    }
}

thread_local! {
    /// A spare status (one no host holds any more) to copy into, reusing its buffers.
    static SPARE_STATUS: std::cell::Cell<Option<BareMetalHostStatus>> =
        const { std::cell::Cell::new(None) };
}

/// A copy of `status`, made in this thread's spare status when there is one.
fn spare_copy(status: &BareMetalHostStatus) -> BareMetalHostStatus {
    match SPARE_STATUS.take() {
        Some(mut spare) => {
            spare.clone_from(status);
            spare
        }
        None => status.clone(),
    }
}

/// A provisioner's state as a shared value, reusing one of the last few equal states.
pub fn shared_state(state: impl Into<Arc<serde_json::Value>>) -> Arc<serde_json::Value> {
    static RECENT: Recent<serde_json::Value, STATES_KEPT> = Recent::new();
    RECENT.share(state)
}

/// How many distinct provisioner states [`shared_state`] keeps.
pub(crate) const STATES_KEPT: usize = 16;

/// The annotation's JSON decoded as Go with `DisallowUnknownFields`: unknown keys are errors.
pub fn parse_hardware_details_strict(text: &str) -> Result<HardwareDetails, String> {
    use crate::validate::gojson;
    let value = gojson::decode_strict(text, &gojson::HARDWARE_DETAILS)?;
    serde_json::from_value(gojson::canonical(&value, &gojson::HARDWARE_DETAILS))
        .map_err(|e| e.to_string())
}

/// BMO's `delayDeleteForDetachedHost` (`annotations.go:38-53`).
fn delay_delete_for_detached_host(op: OperationalStatus, annotation: Option<&str>) -> bool {
    match annotation {
        None => op == OperationalStatus::Detached,
        Some("") => false,
        Some(text) => DetachedArgs::decode(text)
            .is_some_and(|args| args.delete_action.as_deref() == Some("delay")),
    }
}

/// The JSON value of the detached annotation.
#[derive(Debug, Default)]
pub(crate) struct DetachedArgs {
    pub delete_action: Option<String>,
    pub force: bool,
}

impl DetachedArgs {
    /// BMO's `getDetachedAnnotation` of a non-empty value: Go's `json.Unmarshal` (keys in any
    /// case), `None` when it fails.
    pub(crate) fn decode(value: &str) -> Option<Self> {
        use crate::validate::gojson::{DETACHED_ARGUMENTS, unmarshal_fields};
        let (fields, ok) = unmarshal_fields(value, &DETACHED_ARGUMENTS);
        ok.then(|| DetachedArgs {
            delete_action: fields
                .get("deleteAction")
                .and_then(|v| v.as_str())
                .map(str::to_string),
            force: fields
                .get("force")
                .and_then(|v| v.as_bool())
                .unwrap_or(false),
        })
    }
}

/// The event reason of a failure type: its words in CamelCase (`Error` when it has none).
fn event_reason(t: &ErrorType) -> String {
    if t.is_none() || !t.is_known() {
        return "Error".into();
    }
    t.as_str()
        .split(' ')
        .map(|w| w[..1].to_uppercase() + &w[1..])
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
