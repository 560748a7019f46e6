//! BMO's Ironic provisioner (spec `bmo-ironic-and-bmc.md` sections 2 and 3): one
//! [`IronicFactory`] per process, one [`IronicProvisioner`] per host per pass, which reads its
//! node at most once per pass (with `DueHosts`, the [`NodeWatch`]'s shared listing may serve it).

mod capacity;
mod config;
mod delta;
mod event_subscription;
mod extras;
mod lifecycle;
mod lock_watch;
mod node_watch;
mod port_watch;
mod power;
mod register;

#[cfg(test)]
mod tests;

pub use capacity::CapacityGate;
pub use config::{ProvisionerConfig, parse_provisioning_limit};
pub use lock_watch::{LockWatch, StaleLock};
pub use node_watch::{Fingerprint, NodeWatch, Wrote};
pub use port_watch::{PortListing, PortWatch};

use super::client::{IronicClient, IronicError, IronicErrorKind};
use super::types::{Node, NodePatch, ProvisionStateRequest};
use bmh_api::ObjectKey;
use bmh_bmc::AccessDetails;
use bmhctl_plugin_sdk::{
    AdoptData, DueHosts, Event, EventSink, FirmwareComponentStatus, FirmwareSettings,
    HardwareState, HostData, InspectData, KnownMachine, ManagementAccessData, OpResult,
    PrepareData, ProvisionData, Provisioner, ProvisionerError, ProvisionerFactory, ReadyHosts,
    ServicingData, StartingHost, WaitOn, WaitingHost,
};
use bmhctl_plugin_sdk::{
    AdoptOptions, DeprovisionOptions, DetachOptions, FirmwareSettingsOptions, InspectOptions,
    InspectResult, PowerOffOptions, PowerOnOptions, ProvisionOptions, RegisterOptions,
    RegisterResult, StepOptions, StepResult,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// BMO's short and long requeue delays (`ironic.go`).
pub const SHORT_DELAY: Duration = Duration::from_secs(3);
pub const LONG_DELAY: Duration = Duration::from_secs(10);
/// Timeout sent with `soft power off`.
pub const SOFT_POWER_OFF_TIMEOUT_SECS: u32 = 180;

/// What every provisioner of one process shares.
pub struct Shared {
    pub client: IronicClient,
    pub config: ProvisionerConfig,
    pub capacity: CapacityGate,
    /// The shared node listing, baselines and node cache behind `due_hosts` (disabled without
    /// the host feature `DueHosts`).
    pub watch: NodeWatch,
    /// The shared port listing behind registration's port reads (disabled likewise).
    pub ports: PortWatch,
    /// Nodes locked by a conductor that is offline, and their retry delays.
    pub locks: LockWatch,
    /// The readiness probe passed once; reset when Ironic stops answering.
    ready: AtomicBool,
}

impl Shared {
    pub fn new(client: IronicClient, config: ProvisionerConfig) -> Self {
        let limit = config.provisioning_limit;
        let config_due = config.answer_due_hosts;
        let watch = NodeWatch::new(config_due).with_delta_from(config.delta_from);
        let ports = PortWatch::new(config_due).with_delta_from(config.delta_from);
        Shared {
            client,
            config,
            capacity: CapacityGate::new(limit),
            watch,
            ports,
            locks: LockWatch::default(),
            ready: AtomicBool::new(false),
        }
    }

    /// BMO's readiness probe (version + drivers), run until it passes once. A transport
    /// failure later makes it run again, so a restarted Ironic is re-probed.
    fn ensure_ready(&self) -> Result<(), ProvisionerError> {
        if self.ready.load(Ordering::Acquire) {
            return Ok(());
        }
        self.client.check_ready().map_err(|e| match e.status {
            // Decision: refused credentials are not "Ironic not ready yet" (BMO requeues and
            // only logs it): an error, so the run says why the host never starts.
            Some(401 | 403) => ProvisionerError::Other(format!(
                "ironic refused the credentials (check METAL3_AUTH_ROOT_DIR/ironic or \
                 IRONIC_ENDPOINT): {e}"
            )),
            _ if e.kind == IronicErrorKind::Version => ProvisionerError::Refused(e.to_string()),
            _ => ProvisionerError::NotReady(e.to_string()),
        })?;
        self.ready.store(true, Ordering::Release);
        Ok(())
    }

    fn note_error(&self, e: &IronicError) {
        if e.kind == IronicErrorKind::Transport {
            self.ready.store(false, Ordering::Release);
            self.client.reset_cache();
        }
    }

    /// `ProvisionerFactory::due_hosts`: one listing (at most one per second) for every waiting
    /// host; `Progress` hosts by the change rule, `Capacity` hosts up to the free slots, each
    /// with a short-lived promise. `None` without the host feature (no baselines are kept).
    pub fn due_hosts(&self, waiting: &[WaitingHost]) -> Result<Option<DueHosts>, ProvisionerError> {
        if !self.watch.enabled() {
            return Ok(None);
        }
        let mut answer = DueHosts {
            due: Vec::new(),
            ask_again_after: ASK_AGAIN_AFTER,
        };
        if waiting.is_empty() {
            return Ok(Some(answer));
        }
        let listing = self
            .watch
            .listing(&self.client, node_watch::LISTING_TTL)
            .map_err(|e| {
                self.note_error(&e);
                ProvisionerError::Other(format!("failed to list nodes: {e}"))
            })?;
        type Indexed<'a> = Vec<(usize, &'a WaitingHost)>;
        let (progress, capacity): (Indexed<'_>, Indexed<'_>) = waiting
            .iter()
            .enumerate()
            .partition(|(_, w)| w.on == WaitOn::Progress);
        // Before `progress_due` sweeps the records: a delayed host's stays.
        self.watch.capacity_asked(&listing, &asked_of(&capacity));
        let asked = asked_of(&progress);
        let due = self.watch.progress_due(&listing, &asked);
        // A node whose lock nobody will release is never due by the change rule: its host is
        // due once, when that is found, to say so.
        let stale_found = |a: &node_watch::Asked<'_>| {
            NodeWatch::find(&listing, a).is_some_and(|n| {
                let reservation = n.reservation.as_deref();
                // A node from a delta carries `updated_at`: the lock is judged without a GET.
                let stamp = n.updated_at.as_deref();
                let found = self
                    .locks
                    .observe(&self.client, &n.uuid, reservation, stamp);
                found.is_some_and(|s| s.new)
            })
        };
        answer.due.extend(
            progress
                .iter()
                .zip(&asked)
                .zip(due)
                .filter(|((_, a), d)| *d || stale_found(a))
                .map(|(((i, _), _), _)| *i),
        );
        if !capacity.is_empty() {
            self.capacity.observe(listing.started, listing.busy_names());
            let names: Vec<String> = capacity.iter().map(|(_, w)| node_name(&w.host)).collect();
            let promised = self.capacity.promise(&names);
            answer.due.extend(
                capacity
                    .iter()
                    .zip(promised)
                    .filter(|(_, p)| *p)
                    .map(|((i, _), _)| *i),
            );
        }
        answer.due.sort_unstable();
        Ok(Some(answer))
    }
}

impl Shared {
    /// `ProvisionerFactory::ready_hosts`: for each starting host, how long until the shared
    /// listing can serve its pass ([`NodeWatch::ready_in`]); answered from memory, never from
    /// Ironic. `None` without the host features `DueHosts` and `ReadyHosts`.
    pub fn ready_hosts(
        &self,
        starting: &[StartingHost],
    ) -> Result<Option<ReadyHosts>, ProvisionerError> {
        if !self.config.answer_ready_hosts || !self.watch.enabled() {
            return Ok(None);
        }
        let now = Instant::now();
        Ok(Some(ReadyHosts {
            wait: starting
                .iter()
                .map(|h| self.watch.ready_in(&h.provisioner_id, now))
                .collect(),
        }))
    }
}

/// Waiting hosts as the node watch looks them up.
fn asked_of<'a>(hosts: &[(usize, &'a WaitingHost)]) -> Vec<node_watch::Asked<'a>> {
    hosts
        .iter()
        .map(|(_, w)| node_watch::Asked {
            uuid: &w.provisioner_id,
            names: lookup_names(&w.host),
        })
        .collect()
}

/// `due_hosts` answers "ask again after a second": the listing's own rate.
pub const ASK_AGAIN_AFTER: Duration = Duration::from_secs(1);

/// The names `register` looks a node up by: `<namespace>~<name>`, then `<name>` when it has no
/// `~`.
fn lookup_names(key: &ObjectKey) -> Vec<String> {
    let mut names = vec![node_name(key)];
    if !key.name.contains('~') {
        names.push(key.name.clone());
    }
    names
}

/// The factory bmhctl's plugin loader gets from `ironic-provisioner.so`.
pub struct IronicFactory {
    shared: Arc<Shared>,
}

impl IronicFactory {
    pub fn new(client: IronicClient, config: ProvisionerConfig) -> Self {
        IronicFactory {
            shared: Arc::new(Shared::new(client, config)),
        }
    }

    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

impl ProvisionerFactory for IronicFactory {
    fn new_provisioner(
        &self,
        host: HostData,
        events: EventSink,
    ) -> Result<Box<dyn Provisioner>, ProvisionerError> {
        self.shared.ensure_ready()?;
        // A node known to be locked by an offline conductor: every request would get 409.
        // The host waits (status untouched, as for an Ironic that is not ready) and says why;
        // once the reservation is gone it carries on with this very pass.
        let id = &host.provisioner_id;
        if !id.is_empty()
            && self.shared.locks.holds(id)
            && let Some(stale) = self.shared.locks.check(&self.shared.client, id, None)
        {
            return Err(ProvisionerError::NotReady(
                stale.message(&node_name(&host.key)),
            ));
        }
        let mut provisioner = IronicProvisioner::new(self.shared.clone(), host, events);
        provisioner.refuse_leftover()?;
        Ok(Box::new(provisioner))
    }

    fn due_hosts(&self, waiting: &[WaitingHost]) -> Result<Option<DueHosts>, ProvisionerError> {
        self.shared.due_hosts(waiting)
    }

    fn ready_hosts(
        &self,
        starting: &[StartingHost],
    ) -> Result<Option<ReadyHosts>, ProvisionerError> {
        self.shared.ready_hosts(starting)
    }

    fn known_machines(&self) -> Result<Option<Vec<KnownMachine>>, ProvisionerError> {
        crate::known_machines::known_machines(&self.shared.client)
            .map(Some)
            .map_err(|e| ProvisionerError::Other(e.to_string()))
    }
}

/// What the provisioner keeps between passes (returned by `persistent_state`): the MACs known
/// to be ports of the node, so steady passes skip the port listing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct SavedState {
    #[serde(default)]
    node: String,
    #[serde(default)]
    ports: Vec<String>,
}

/// One host's Ironic provisioner for one pass.
pub struct IronicProvisioner {
    shared: Arc<Shared>,
    host: HostData,
    events: EventSink,
    /// The node as last read or returned by a PATCH in this pass; `None` once stale.
    node: Option<Node>,
    /// The last node seen in this pass, stale or not: its `fault` and `health` answer the
    /// end-of-pass questions, which no state or power request changes, without a new GET.
    last_seen: Option<Node>,
    /// The node's UUID (`status.provisioning.ID`), updated by registration.
    node_id: String,
    saved: SavedState,
    /// The last full node read in this pass (GET, or a POST/PATCH answer) and when: the
    /// baseline and node cache entry the pass leaves to the node watch.
    read: Option<(Node, Instant)>,
    /// A write was sent after `read`.
    wrote: bool,
    /// `read` can be followed through listed changes (see `NodeWatch::cached`).
    mergeable: bool,
    /// A request of this pass got 409 (node locked).
    locked: AtomicBool,
    /// The retry delay after a 409 (milliseconds; 0: BMO's short delay): longer when the lock
    /// is held by an offline conductor.
    conflict_wait_ms: AtomicU64,
    /// This pass created the node (`POST /v1/nodes`).
    created: bool,
    /// This pass's lookup of the boot MAC's ports (lower-cased MAC, answer).
    mac_owners: Option<(String, Vec<crate::Port>)>,
    /// The node the leftover check found, for this pass's registration to take.
    found: Option<Node>,
}

impl Drop for IronicProvisioner {
    fn drop(&mut self) {
        self.shared.watch.pass_ended(
            self.read.take(),
            self.wrote,
            self.mergeable,
            self.locked.load(Ordering::Relaxed),
        );
    }
}

/// The outcome of an operation: BMO's `(Result, error)` pair.
type Outcome = Result<OpResult, ProvisionerError>;

/// `continue(d)` / `retry(d)`: call again after `d` plus up to 25 % jitter.
pub fn requeue(d: Duration) -> OpResult {
    OpResult::in_progress(with_jitter(d))
}

fn with_jitter(d: Duration) -> Duration {
    if d.is_zero() {
        d
    } else {
        d + d.mul_f64(fastrand::f64() * 0.25)
    }
}

fn transient<T>(message: impl std::fmt::Display) -> Result<T, ProvisionerError> {
    Err(ProvisionerError::Other(message.to_string()))
}

impl IronicProvisioner {
    pub fn new(shared: Arc<Shared>, host: HostData, events: EventSink) -> Self {
        let saved = host
            .provisioner_state
            .clone()
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        IronicProvisioner {
            shared,
            node_id: host.provisioner_id.clone(),
            host,
            events,
            node: None,
            last_seen: None,
            saved,
            read: None,
            wrote: false,
            mergeable: false,
            locked: AtomicBool::new(false),
            conflict_wait_ms: AtomicU64::new(0),
            created: false,
            mac_owners: None,
            found: None,
        }
    }

    fn client(&self) -> &IronicClient {
        &self.shared.client
    }

    fn key(&self) -> &ObjectKey {
        &self.host.key
    }

    /// `<namespace>~<name>`: the Ironic node name BMO uses.
    pub fn node_name(&self) -> String {
        node_name(self.key())
    }

    fn publish(&self, reason: &str, message: impl Into<String>) {
        (self.events)(Event {
            reason: reason.to_string(),
            message: message.into(),
        });
    }

    fn bmc(&self) -> Result<AccessDetails, bmh_bmc::BmcError> {
        bmh_bmc::parse(&self.host.bmc_address)
    }

    /// Record an Ironic error's side effects (a dead connection resets readiness; a 409 makes
    /// the host due once the node's reservation clears).
    fn seen<T>(&self, r: Result<T, IronicError>) -> Result<T, IronicError> {
        if let Err(e) = &r {
            self.shared.note_error(e);
            if e.is_conflict() {
                self.locked.store(true, Ordering::Relaxed);
                if let Some(holder) = lock_watch::lock_holder(&e.message) {
                    self.note_conflict(holder);
                }
            }
        }
        r
    }

    /// After a 409: is the lock held by an offline conductor? Then the retry waits longer
    /// (growing) and, the first time, an event says who holds it and what to do.
    fn note_conflict(&self, holder: &str) {
        if self.node_id.is_empty() {
            return;
        }
        let locks = &self.shared.locks;
        let Some(stale) = locks.check(&self.shared.client, &self.node_id, Some(holder)) else {
            return;
        };
        self.stale_lock(&stale);
    }

    /// A stale lock found: a longer retry and, the first time, an event naming it.
    fn stale_lock(&self, stale: &StaleLock) {
        let ms = u64::try_from(stale.delay.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        self.conflict_wait_ms.store(ms, Ordering::Relaxed);
        if stale.new {
            let message = stale.message(&self.node_name());
            tracing::warn!(node = %self.node_id, conductor = %stale.conductor, "{message}");
            let reason = if stale.offline {
                "NodeLockedByOfflineConductor"
            } else {
                "NodeLockNotReleased"
            };
            self.publish(reason, message);
        }
    }

    /// The retry delay after a 409: BMO's short delay, or the stale lock's backoff.
    fn conflict_delay(&self) -> Duration {
        match self.conflict_wait_ms.load(Ordering::Relaxed) {
            0 => SHORT_DELAY,
            ms => Duration::from_millis(ms),
        }
    }

    /// A full node just read from Ironic (GET, or a POST/PATCH answer): the current node.
    fn keep(&mut self, n: Node) {
        let locks = &self.shared.locks;
        let (reservation, stamp) = (n.reservation.as_deref(), n.updated_at.as_deref());
        if let Some(stale) = locks.observe(self.client(), &n.uuid, reservation, stamp) {
            self.stale_lock(&stale);
        }
        self.read = Some((n.clone(), Instant::now()));
        self.wrote = false;
        self.mergeable = node_watch::settled(&n);
        self.node = Some(n);
    }

    /// BMO's `getNode`: the cached node, or `GET /v1/nodes/{id}`; no ID or 404 → needs
    /// registration.
    fn get_node(&mut self) -> Result<Node, ProvisionerError> {
        if let Some(n) = &self.node {
            return Ok(n.clone());
        }
        if self.node_id.is_empty() {
            return Err(ProvisionerError::NeedsRegistration);
        }
        let id = self.node_id.clone();
        if let Some(n) = self.cached_node() {
            return Ok(n);
        }
        match self.seen(self.client().get_node(&id)) {
            Ok(n) => {
                self.keep(n.clone());
                Ok(n)
            }
            Err(e) if e.is_not_found() => Err(ProvisionerError::NeedsRegistration),
            Err(e) => transient(format!("failed to find node by ID {id}: {e}")),
        }
    }

    /// The node's ID, for calls that need no node read first; none → needs registration.
    fn require_node_id(&self) -> Result<String, ProvisionerError> {
        if self.node_id.is_empty() {
            Err(ProvisionerError::NeedsRegistration)
        } else {
            Ok(self.node_id.clone())
        }
    }

    /// With `due_hosts`, a node the listing shows unchanged since an earlier pass read it (or
    /// moved only in listed fields); never after this pass wrote, which no listing shows yet.
    fn cached_node(&mut self) -> Option<Node> {
        if self.wrote {
            return None;
        }
        let (n, read_at, mergeable) = self
            .shared
            .watch
            .cached(&self.shared.client, &self.node_id)?;
        self.read = Some((n.clone(), read_at));
        self.wrote = false;
        self.mergeable = mergeable;
        self.node = Some(n.clone());
        Some(n)
    }

    /// A write was sent: the node is stale for the rest of the pass.
    fn invalidate(&mut self) {
        self.invalidate_as(Wrote::Other);
    }

    /// A write was sent whose effect on what BMO reads shows on the node listing.
    fn invalidate_as(&mut self, w: Wrote) {
        self.wrote = true;
        self.mergeable &= w == Wrote::Listed;
        if let Some(n) = self.node.take() {
            self.last_seen = Some(n);
        }
    }

    /// A write that leaves the node as read in place but changes what the listing does not show.
    fn wrote_unlisted(&mut self) {
        self.wrote = true;
        self.mergeable = false;
    }

    /// The current node if known, else the last one seen this pass, else (a pass that has read
    /// and written nothing, such as one delayed by the limit) the node cache or the listed
    /// fields, which hold `fault` and `health`, else a fresh read.
    fn node_for_health(&mut self) -> Option<Node> {
        if let Some(n) = self.node.as_ref().or(self.last_seen.as_ref()) {
            return Some(n.clone());
        }
        if !self.wrote && self.read.is_none() && !self.node_id.is_empty() {
            if let Some(n) = self.cached_node() {
                return Some(n);
            }
            if let Some(n) = self.shared.watch.listed(&self.shared.client, &self.node_id) {
                self.last_seen = Some(n.clone());
                return Some(n);
            }
        }
        self.get_node().ok()
    }

    /// BMO's `tryUpdateNode`: send the PATCH if it is not empty. `Ok(node)` on success (or
    /// nothing to do); `Err(outcome)` to return at once (409 → retry, else transient).
    fn try_update_node(&mut self, node: &Node, patch: NodePatch) -> Result<Node, Outcome> {
        if patch.is_empty() {
            return Ok(node.clone());
        }
        tracing::debug!(node = %node.uuid, ops = patch.ops.len(), "updating node");
        match self.seen(self.client().patch_node(&node.uuid, &patch)) {
            Ok(Some(updated)) => {
                self.keep(updated.clone());
                Ok(updated)
            }
            Ok(None) => Ok(node.clone()),
            Err(e) if e.is_conflict() => Err(Ok(requeue(self.conflict_delay()))),
            Err(e) => Err(transient(format!(
                "failed to update host settings in ironic: {e}"
            ))),
        }
    }

    /// BMO's `tryChangeNodeProvisionState`. Returns the outcome and whether the change was sent.
    fn change_provision_state(
        &mut self,
        node: &Node,
        req: ProvisionStateRequest,
    ) -> (Outcome, bool) {
        if !node.fault_str().is_empty() {
            tracing::info!(node = %node.uuid, fault = node.fault_str(), "node has a fault, waiting");
            return (Ok(requeue(LONG_DELAY)), false);
        }
        if node.maintenance {
            return (self.set_maintenance(node, false, ""), false);
        }
        tracing::info!(node = %node.uuid, target = %req.target, "changing provision state");
        let target = req.target.clone();
        match self.seen(self.client().set_provision_state(&node.uuid, &req)) {
            Ok(()) => {
                self.invalidate_as(if node_watch::MERGED_TARGETS.contains(&target.as_str()) {
                    Wrote::Listed
                } else {
                    Wrote::Other
                });
                (Ok(requeue(SHORT_DELAY)), true)
            }
            Err(e) if e.is_conflict() => (Ok(requeue(self.conflict_delay())), false),
            Err(e) => (
                transient(format!(
                    "failed to change provisioning state to {target:?}: {e}"
                )),
                false,
            ),
        }
    }

    fn change_state(&mut self, node: &Node, target: &str) -> Outcome {
        self.change_provision_state(node, ProvisionStateRequest::new(target))
            .0
    }

    /// BMO's `setMaintenanceFlag`.
    fn set_maintenance(&mut self, node: &Node, on: bool, reason: &str) -> Outcome {
        let r = if on {
            self.client().set_maintenance(&node.uuid, reason)
        } else {
            self.client().unset_maintenance(&node.uuid)
        };
        match self.seen(r) {
            Ok(()) => {
                self.invalidate_as(Wrote::Listed);
                Ok(requeue(Duration::ZERO))
            }
            Err(e) if e.is_conflict() => Ok(requeue(self.conflict_delay())),
            Err(e) => transient(format!("failed to set host maintenance flag to {on} ({e})")),
        }
    }
}

pub fn node_name(key: &ObjectKey) -> String {
    format!("{}~{}", key.namespace, key.name)
}

impl Provisioner for IronicProvisioner {
    fn register(
        &mut self,
        data: &ManagementAccessData,
        opts: RegisterOptions,
    ) -> Result<RegisterResult, ProvisionerError> {
        self.do_register(data, opts)
    }

    fn preprovisioning_image_formats(
        &mut self,
    ) -> Result<Option<Vec<bmhctl_plugin_sdk::ImageFormat>>, ProvisionerError> {
        self.do_preprovisioning_image_formats()
    }

    fn inspect_hardware(
        &mut self,
        data: &InspectData,
        opts: InspectOptions,
    ) -> Result<InspectResult, ProvisionerError> {
        self.do_inspect(data, opts)
    }

    fn update_hardware_state(&mut self) -> Result<HardwareState, ProvisionerError> {
        let node = self.get_node()?;
        let powered_on = match node.power_state.as_deref() {
            Some("power on") => Some(true),
            Some("power off") => Some(false),
            _ => None,
        };
        Ok(HardwareState { powered_on })
    }

    fn adopt(&mut self, data: &AdoptData, opts: AdoptOptions) -> Outcome {
        self.do_adopt(data, opts)
    }

    fn prepare(
        &mut self,
        data: &PrepareData,
        opts: StepOptions,
    ) -> Result<StepResult, ProvisionerError> {
        self.do_prepare(data, opts)
    }

    fn service(
        &mut self,
        data: &ServicingData,
        opts: StepOptions,
    ) -> Result<StepResult, ProvisionerError> {
        self.do_service(data, opts)
    }

    fn provision(&mut self, data: &ProvisionData, opts: ProvisionOptions) -> Outcome {
        self.do_provision(data, opts)
    }

    fn deprovision(&mut self, opts: DeprovisionOptions) -> Outcome {
        self.do_deprovision(opts)
    }

    fn delete(&mut self) -> Outcome {
        self.delete_and_release(DetachOptions::default())
    }

    fn detach(&mut self, opts: DetachOptions) -> Outcome {
        self.delete_and_release(opts)
    }

    fn power_on(&mut self, opts: PowerOnOptions) -> Outcome {
        self.do_power_on(opts)
    }

    fn power_off(&mut self, opts: PowerOffOptions) -> Outcome {
        self.do_power_off(opts)
    }

    fn has_capacity(&mut self) -> Result<bool, ProvisionerError> {
        self.do_has_capacity()
    }

    fn get_firmware_settings(
        &mut self,
        opts: FirmwareSettingsOptions,
    ) -> Result<FirmwareSettings, ProvisionerError> {
        self.do_get_firmware_settings(opts)
    }

    fn get_firmware_components(
        &mut self,
    ) -> Result<Vec<FirmwareComponentStatus>, ProvisionerError> {
        self.do_get_firmware_components()
    }

    fn create_bmc_event_subscription(
        &mut self,
        subscription: &bmh_api::BmcEventSubscription,
        http_headers: &[std::collections::BTreeMap<String, String>],
    ) -> Result<Option<String>, ProvisionerError> {
        self.do_create_bmc_event_subscription(subscription, http_headers)
            .map(Some)
    }

    fn delete_bmc_event_subscription(
        &mut self,
        subscription: &bmh_api::BmcEventSubscription,
    ) -> Result<bool, ProvisionerError> {
        self.do_delete_bmc_event_subscription(subscription)
            .map(|()| true)
    }

    fn get_data_image_status(&mut self) -> Result<bool, ProvisionerError> {
        self.do_get_data_image_status()
    }

    fn attach_data_image(&mut self, url: &str) -> Result<(), ProvisionerError> {
        self.do_attach_data_image(url)
    }

    fn detach_data_image(&mut self) -> Result<(), ProvisionerError> {
        self.do_detach_data_image()
    }

    fn has_power_failure(&mut self) -> bool {
        self.node_for_health()
            .is_some_and(|n| n.fault_str() == "power failure")
    }

    fn get_health(&mut self) -> String {
        self.node_for_health()
            .and_then(|n| n.health)
            .unwrap_or_default()
    }

    fn persistent_state(&self) -> Option<serde_json::Value> {
        if self.saved == SavedState::default() {
            None
        } else {
            serde_json::to_value(&self.saved).ok()
        }
    }
}
