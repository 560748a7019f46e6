//! What the plugin keeps to answer `due_hosts` (host feature `DueHosts`): one shared node listing,
//! each host's baseline (what its last pass read), the change rule, and the node cache that makes
//! a pass the listing shows nothing new for cost no call. Disabled without the feature.

use super::capacity::node_is_busy;
use super::delta::{self, DeltaClock, Next};
use crate::client::{IronicClient, IronicError};
use crate::mutex::lock;
use crate::types::{Node, state};
use crate::{MAX_PAGE, WATCH_FIELDS};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// A listing serves every asker for this long before it is made again.
pub const LISTING_TTL: Duration = Duration::from_secs(1);
/// A node read this recently is served from the cache without asking the listing.
pub const FRESH_READ: Duration = Duration::from_secs(1);
/// A listing older than this no longer vouches for a cached node.
pub const CACHE_LISTING_AGE: Duration = Duration::from_secs(2);
/// How much later than the listing's TTL a pass held for the next listing is told to start.
pub const READY_MARGIN: Duration = Duration::from_millis(10);
/// A host's record is dropped this long after its last pass ended and it was last asked about
/// (long: with a thousand hosts a pass can wait minutes for a slot, and a record dropped meanwhile
/// costs that pass a `GET`).
pub const KEEP: Duration = Duration::from_secs(600);

/// Provision states in which Ironic works on the node and the machine can only wait; a change
/// into one of them is not a reason for a pass (unless a failure field moved, see [`due`]).
pub const TRANSITIONAL: &[&str] = &[
    state::VERIFYING,
    state::INSPECTING,
    state::INSPECT_WAIT,
    state::CLEANING,
    state::CLEAN_WAIT,
    state::DEPLOYING,
    state::DEPLOY_WAIT,
    state::DELETING,
    state::ADOPTING,
    state::SERVICING,
    state::SERVICE_WAIT,
    "rescuing",
    "rescue wait",
];

pub fn is_transitional(provision_state: &str) -> bool {
    TRANSITIONAL.contains(&provision_state)
}

fn text(v: &Option<String>) -> Option<String> {
    v.clone().filter(|s| !s.is_empty())
}

/// The listed fields of a node but `reservation`: equal fingerprints mean nothing new.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fingerprint {
    pub provision_state: String,
    pub target_provision_state: Option<String>,
    pub power_state: Option<String>,
    pub target_power_state: Option<String>,
    pub last_error: Option<String>,
    pub maintenance: bool,
    pub fault: Option<String>,
    pub inspection_finished_at: Option<String>,
    pub boot_interface: Option<String>,
    pub health: Option<String>,
    pub provision_updated_at: Option<String>,
}

impl Fingerprint {
    pub fn of(n: &Node) -> Fingerprint {
        Fingerprint {
            provision_state: n.provision_state.clone(),
            target_provision_state: text(&n.target_provision_state),
            power_state: text(&n.power_state),
            target_power_state: text(&n.target_power_state),
            last_error: text(&n.last_error),
            maintenance: n.maintenance,
            fault: text(&n.fault),
            inspection_finished_at: text(&n.inspection_finished_at),
            boot_interface: text(&n.boot_interface),
            health: text(&n.health),
            provision_updated_at: text(&n.provision_updated_at),
        }
    }
}

/// The kind of a write, as the node cache sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrote {
    /// A request whose effect on the fields a pass reads shows on the listing: power changes,
    /// maintenance, and the provision targets in [`MERGED_TARGETS`] (see [`merges`]).
    Listed,
    /// Anything else (inspection may change `properties`, deployment `instance_info`, ...).
    Other,
}

/// A full read from which listed changes can be followed: no provision operation was under way
/// (one started by another request may still rewrite fields the listing does not carry).
pub fn settled(n: &Node) -> bool {
    !is_transitional(&n.provision_state)
        && n.target_provision_state.as_deref().unwrap_or("").is_empty()
}

/// Provision targets after which the node a pass reads is its last read plus the listed fields:
/// what else they change (`driver_internal_info`, steps, RAID/BIOS data) BMO's decisions never read.
pub const MERGED_TARGETS: &[&str] = &["manage", "provide", "inspect", "active"];

/// The node a pass would read now: `last` (its last full read) with `listed`'s fields over it.
pub fn merges(last: &Node, listed: &Node) -> Node {
    let mut n = last.clone();
    n.provision_state = listed.provision_state.clone();
    n.target_provision_state = listed.target_provision_state.clone();
    n.power_state = listed.power_state.clone();
    n.target_power_state = listed.target_power_state.clone();
    n.last_error = listed.last_error.clone();
    n.maintenance = listed.maintenance;
    n.fault = listed.fault.clone();
    n.reservation = listed.reservation.clone();
    n.inspection_finished_at = listed.inspection_finished_at.clone();
    n.boot_interface = listed.boot_interface.clone();
    n.provision_updated_at = listed.provision_updated_at.clone();
    n.health = listed.health.clone();
    n.properties = listed.properties.clone();
    n.instance_info = listed.instance_info.clone();
    n.instance_uuid = listed.instance_uuid.clone();
    n.name = listed.name.clone();
    n.driver_info = listed.driver_info.clone();
    n.automated_clean = listed.automated_clean;
    n.network_data = listed.network_data.clone();
    n.deploy_interface = listed.deploy_interface.clone();
    n.inspect_interface = listed.inspect_interface.clone();
    n.raid_interface = listed.raid_interface.clone();
    n.disable_power_off = listed.disable_power_off;
    n
}

fn reserved(n: &Node) -> bool {
    n.reservation.as_deref().is_some_and(|r| !r.is_empty())
}

/// The change rule for a host whose last pass saw `baseline` (a 409 if `locked`): never while
/// reserved, a locked pass once unreserved, else a move out of transitional states or a failure.
pub fn due(baseline: &Fingerprint, locked: bool, listed: &Node) -> bool {
    if reserved(listed) {
        return false;
    }
    if locked {
        return true;
    }
    let now = Fingerprint::of(listed);
    if now == *baseline {
        return false;
    }
    !is_transitional(&now.provision_state)
        || now.last_error != baseline.last_error
        || now.maintenance != baseline.maintenance
        || now.fault != baseline.fault
        || now.power_state != baseline.power_state
}

/// One node listing (all pages), or the last one with the nodes saved since over it.
pub struct Listing {
    /// When its first request was sent: it shows every change made before (but for a node
    /// deleted since the last full listing).
    pub started: Instant,
    nodes: Vec<Arc<Node>>,
    by_uuid: HashMap<String, usize>,
    by_name: HashMap<String, usize>,
}

impl Listing {
    pub fn new(started: Instant, nodes: Vec<Node>) -> Listing {
        Self::indexed(started, nodes.into_iter().map(Arc::new).collect())
    }

    /// `base` with `changed` over it (by UUID; new nodes added), as of `started`.
    pub fn merged(base: &Listing, started: Instant, changed: Vec<Node>) -> Listing {
        let mut nodes = base.nodes.clone();
        for n in changed {
            match base.by_uuid.get(&n.uuid) {
                Some(i) => nodes[*i] = Arc::new(n),
                None => nodes.push(Arc::new(n)),
            }
        }
        Self::indexed(started, nodes)
    }

    fn indexed(started: Instant, nodes: Vec<Arc<Node>>) -> Listing {
        let mut by_uuid = HashMap::with_capacity(nodes.len());
        let mut by_name = HashMap::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            by_uuid.insert(n.uuid.clone(), i);
            if !n.name_str().is_empty() {
                by_name.insert(n.name_str().to_string(), i);
            }
        }
        Listing {
            started,
            nodes,
            by_uuid,
            by_name,
        }
    }

    pub fn by_uuid(&self, uuid: &str) -> Option<&Node> {
        self.by_uuid.get(uuid).map(|i| &*self.nodes[*i])
    }

    pub fn by_name(&self, name: &str) -> Option<&Node> {
        self.by_name.get(name).map(|i| &*self.nodes[*i])
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Names of the nodes that count against `PROVISIONING_LIMIT`.
    pub fn busy_names(&self) -> BTreeSet<String> {
        self.nodes
            .iter()
            .filter(|n| node_is_busy(n))
            .map(|n| n.name_str().to_string())
            .collect()
    }
}

/// What one host's last pass read of its node: the change rule's baseline and the node cache.
#[derive(Clone)]
struct Record {
    /// The last full node the pass read (`GET`, or the answer of a `PATCH` or `POST`).
    node: Node,
    fp: Fingerprint,
    read_at: Instant,
    /// When the pass ended: only a listing started later counts for the change rule.
    ended_at: Instant,
    /// A write was sent after that read: the node is stale.
    wrote: bool,
    /// Since the last (settled) full read only [`Wrote::Listed`] requests were sent.
    mergeable: bool,
    /// The pass got a 409 (node locked).
    locked: bool,
    /// When `due_hosts` last asked about the host.
    asked_at: Option<Instant>,
}

impl Record {
    fn kept(&self, now: Instant) -> bool {
        let last = self
            .asked_at
            .map_or(self.ended_at, |a| a.max(self.ended_at));
        now.duration_since(last) < KEEP
    }
}

#[derive(Default)]
struct Records {
    by_uuid: HashMap<String, Record>,
    /// The size after the last sweep (a sweep runs when it doubled).
    swept_len: usize,
}

impl Records {
    fn sweep(&mut self, now: Instant) {
        self.by_uuid.retain(|_, r| r.kept(now));
        self.swept_len = self.by_uuid.len();
    }
}

/// A host's pass as the change rule sees it, for [`NodeWatch::progress_due`].
pub struct Asked<'a> {
    /// The node's UUID, or empty before registration (then `names` are tried).
    pub uuid: &'a str,
    pub names: Vec<String>,
}

/// The process-wide node watch (one per factory).
#[derive(Default)]
pub struct NodeWatch {
    enabled: bool,
    listing: Mutex<Option<Arc<Listing>>>,
    /// Held while listing, so concurrent askers wait and reuse one listing.
    listing_in_flight: Mutex<()>,
    records: Mutex<Records>,
    /// Node names this process sent `POST /v1/nodes` for (always looked up by name).
    created: Mutex<BTreeSet<String>>,
    /// From how many nodes listed deltas serve between full listings.
    delta_from: usize,
    deltas: Mutex<DeltaClock>,
}

/// `updated_at`: moved on every save of a node, a lock taken or released included.
fn saved_at(n: &Node) -> Option<SystemTime> {
    delta::stamp(n.updated_at.as_deref())
}

impl NodeWatch {
    pub fn new(enabled: bool) -> NodeWatch {
        NodeWatch {
            enabled,
            delta_from: delta::DEFAULT_DELTA_FROM,
            ..Default::default()
        }
    }

    /// Deltas serve between full listings from `nodes` listed (`BMHCTL_IRONIC_DELTA_FROM`).
    pub fn with_delta_from(mut self, nodes: usize) -> NodeWatch {
        self.delta_from = nodes;
        self
    }

    /// This process is about to create a node named `name`.
    pub fn creating(&self, name: &str) {
        if self.enabled {
            lock(&self.created).insert(name.to_string());
        }
    }

    /// Which of `names` a registration lookup can skip: those no node bears in a listing under
    /// [`LISTING_TTL`] old, unless this process created that node (the listing may predate it).
    /// Ironic keeps names unique, so a node created elsewhere meanwhile makes the `POST` 409.
    pub fn absent_names(&self, client: &IronicClient, names: &[String]) -> Vec<bool> {
        if !self.enabled {
            return vec![false; names.len()];
        }
        let ours: Vec<bool> = {
            let created = lock(&self.created);
            names.iter().map(|n| created.contains(n)).collect()
        };
        if ours.iter().all(|o| *o) {
            return ours.iter().map(|_| false).collect();
        }
        let Ok(l) = self.listing(client, LISTING_TTL) else {
            return vec![false; names.len()];
        };
        names
            .iter()
            .zip(ours)
            .map(|(n, ours)| !ours && l.by_name(n).is_none())
            .collect()
    }

    /// The host will ask `due_hosts` (host feature `DueHosts`).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The last listing made, of any age.
    pub fn current(&self) -> Option<Arc<Listing>> {
        lock(&self.listing).clone()
    }

    /// The listing if it started less than `max_age` ago, else a new one (`GET /v1/nodes`).
    pub fn listing(
        &self,
        client: &IronicClient,
        max_age: Duration,
    ) -> Result<Arc<Listing>, IronicError> {
        let _one = lock(&self.listing_in_flight);
        if let Some(l) = self.current()
            && l.started.elapsed() < max_age
        {
            return Ok(l);
        }
        let mut fields = WATCH_FIELDS.to_vec();
        let version = client.api_version()?;
        if version.has_health_api() {
            fields.push("health");
        }
        if version.has_disable_power_off() {
            fields.push("disable_power_off");
        }
        let started = Instant::now();
        let l = Arc::new(self.list(client, &fields, started)?);
        *lock(&self.listing) = Some(l.clone());
        Ok(l)
    }

    /// A new listing started at `started`: once the last is large, the nodes saved since it
    /// over it while they fit a page and a full listing is recent ([`delta`]), else a full one.
    fn list(
        &self,
        client: &IronicClient,
        fields: &[&str],
        started: Instant,
    ) -> Result<Listing, IronicError> {
        let base = self.current().filter(|b| b.len() >= self.delta_from);
        let mut clock = lock(&self.deltas);
        let next = clock.next(base.is_some());
        if let (Next::Probe { page } | Next::Page { page, .. }, Some(base)) = (next, &base) {
            let changed = client.recently_saved_nodes(page)?;
            let stamps: Vec<_> = changed.iter().map(saved_at).collect();
            if clock.page_seen(&stamps, page, next) {
                return Ok(Listing::merged(base, started, changed));
            }
        }
        let nodes = client.list_nodes(fields, Some(MAX_PAGE))?;
        clock.full_listed(started);
        Ok(Listing::new(started, nodes))
    }

    /// The node cache: the last read of `uuid` (when, mergeable) if unwritten and fresh or listed
    /// unchanged since; else, when mergeable, with a later listing's fields over it. A listing too
    /// old sends the `GET` rather than waiting for the next (held passes were slower).
    pub fn cached(&self, client: &IronicClient, uuid: &str) -> Option<(Node, Instant, bool)> {
        if !self.enabled || uuid.is_empty() {
            return None;
        }
        let r = lock(&self.records).by_uuid.get(uuid)?.clone();
        if !r.wrote && r.read_at.elapsed() < FRESH_READ {
            return Some((r.node, r.read_at, r.mergeable));
        }
        if r.wrote && !r.mergeable {
            return None;
        }
        // A listing must have started after the read (same node) or after the pass (merged).
        let after = if r.wrote { r.ended_at } else { r.read_at };
        let l = self.listing_after(client, after)?;
        let listed = l.by_uuid(uuid)?;
        if l.started > r.read_at
            && !r.wrote
            && Fingerprint::of(listed) == r.fp
            && listed.reservation == r.node.reservation
        {
            // Unchanged as the state goes; what registration compares is taken as listed.
            return Some((merges(&r.node, listed), r.read_at, r.mergeable));
        }
        // A reserved node is merged too: a GET would show the same rows while the conductor works.
        if r.mergeable && l.started > r.ended_at {
            return Some((merges(&r.node, listed), l.started, true));
        }
        None
    }

    /// The current listing if it started after `after` and is under [`CACHE_LISTING_AGE`] old,
    /// else one made now (at most one per [`LISTING_TTL`]): the caller checks when it started.
    fn listing_after(&self, client: &IronicClient, after: Instant) -> Option<Arc<Listing>> {
        match self.current() {
            Some(l) if l.started > after && l.started.elapsed() < CACHE_LISTING_AGE => Some(l),
            _ => self.listing(client, LISTING_TTL).ok(),
        }
    }

    /// The node as a listing started after the host's last pass shows it, for a pass that read
    /// and wrote nothing (delayed by the limit): its end-of-pass questions read listed fields.
    pub fn listed(&self, client: &IronicClient, uuid: &str) -> Option<Node> {
        if !self.enabled || uuid.is_empty() {
            return None;
        }
        let ended_at = lock(&self.records).by_uuid.get(uuid)?.ended_at;
        let l = self.listing_after(client, ended_at)?;
        if l.started <= ended_at {
            return None;
        }
        l.by_uuid(uuid).cloned()
    }

    /// Hosts delayed by the limit were asked about: their records stay past [`KEEP`].
    pub fn capacity_asked(&self, listing: &Listing, asked: &[Asked<'_>]) {
        let now = Instant::now();
        let mut records = lock(&self.records);
        for a in asked {
            if let Some(node) = Self::find(listing, a)
                && let Some(r) = records.by_uuid.get_mut(&node.uuid)
            {
                r.asked_at = Some(now);
            }
        }
    }

    /// How long until [`Self::cached`] can serve `uuid`'s next pass (`ready_hosts`): zero unless
    /// its read is stale, mergeable and newer than a listing too young to redo; then until that
    /// listing is [`LISTING_TTL`] (plus [`READY_MARGIN`]) old, the same instant for every host.
    pub fn ready_in(&self, uuid: &str, now: Instant) -> Duration {
        let Some(l) = self.current().filter(|_| self.enabled && !uuid.is_empty()) else {
            return Duration::ZERO;
        };
        let records = lock(&self.records);
        let Some(r) = records.by_uuid.get(uuid) else {
            return Duration::ZERO;
        };
        if !r.mergeable || (!r.wrote && now.saturating_duration_since(r.read_at) < FRESH_READ) {
            return Duration::ZERO;
        }
        // Unwritten and unchanged on a listing made after the read: served as read.
        let unchanged = !r.wrote
            && l.started > r.read_at
            && l.by_uuid(uuid).is_some_and(|n| Fingerprint::of(n) == r.fp);
        if unchanged || l.started > r.ended_at {
            return Duration::ZERO;
        }
        (l.started + LISTING_TTL + READY_MARGIN).saturating_duration_since(now)
    }

    /// A pass ended: `read` is its last node read (and when), `wrote`, `mergeable` and `locked`
    /// as in the record. A pass that read nothing leaves the record.
    pub fn pass_ended(
        &self,
        read: Option<(Node, Instant)>,
        wrote: bool,
        mergeable: bool,
        locked: bool,
    ) {
        let Some((node, read_at)) = read.filter(|(n, _)| self.enabled && !n.uuid.is_empty()) else {
            return;
        };
        let now = Instant::now();
        let mut records = lock(&self.records);
        let asked_at = records.by_uuid.get(&node.uuid).and_then(|r| r.asked_at);
        records.by_uuid.insert(
            node.uuid.clone(),
            Record {
                fp: Fingerprint::of(&node),
                node,
                read_at,
                ended_at: now,
                wrote,
                mergeable,
                locked,
                asked_at,
            },
        );
        if records.by_uuid.len() > 2 * records.swept_len + 64 {
            records.sweep(now);
        }
    }

    /// The node of a waiting host in `listing`: by UUID, else (no UUID yet) by name.
    pub fn find<'l>(listing: &'l Listing, asked: &Asked<'_>) -> Option<&'l Node> {
        if !asked.uuid.is_empty() {
            return listing.by_uuid(asked.uuid);
        }
        asked.names.iter().find_map(|n| listing.by_name(n))
    }

    /// Which of `asked` (hosts waiting on Ironic's progress) are due by the change rule on
    /// `listing` (unknown, unlisted or passed since: not due). Drops records older than [`KEEP`].
    pub fn progress_due(&self, listing: &Listing, asked: &[Asked<'_>]) -> Vec<bool> {
        let now = Instant::now();
        let mut records = lock(&self.records);
        let out = asked
            .iter()
            .map(|a| {
                let Some(node) = Self::find(listing, a) else {
                    return false;
                };
                let Some(r) = records.by_uuid.get_mut(&node.uuid) else {
                    return false;
                };
                r.asked_at = Some(now);
                r.ended_at < listing.started && due(&r.fp, r.locked, node)
            })
            .collect();
        records.sweep(now);
        out
    }

    /// Hosts with a record.
    #[cfg(test)]
    pub fn records(&self) -> usize {
        lock(&self.records).by_uuid.len()
    }

    /// Make the current listing look `by` older (tests: no sleeping through the TTL).
    #[cfg(test)]
    pub fn age_listing(&self, by: Duration) {
        let mut l = lock(&self.listing);
        if let Some(cur) = l.take() {
            *l = Some(Arc::new(Listing::indexed(
                cur.started - by,
                cur.nodes.clone(),
            )));
        }
    }

    /// Make the last full listing look `by` older (tests).
    #[cfg(test)]
    pub fn age_full_listing(&self, by: Duration) {
        lock(&self.deltas).age_full(by);
    }

    /// Make every record look `by` older (tests).
    #[cfg(test)]
    pub fn age_records(&self, by: Duration) {
        for r in lock(&self.records).by_uuid.values_mut() {
            r.read_at -= by;
            r.ended_at -= by;
            r.asked_at = r.asked_at.map(|a| a - by);
        }
    }
}

#[cfg(test)]
mod unit {
    use super::*;
    use serde_json::json;

    fn node(fields: serde_json::Value) -> Node {
        let mut base = json!({
            "uuid": "u1",
            "name": "ns~h",
            "provision_state": "manageable",
            "target_provision_state": null,
            "power_state": "power off",
            "target_power_state": null,
            "last_error": null,
            "maintenance": false,
            "fault": null,
            "reservation": null,
            "inspection_finished_at": null,
            "boot_interface": "ipxe",
            "provision_updated_at": "2026-12-01T01:00:00+00:00",
        });
        for (k, v) in fields.as_object().unwrap() {
            base[k] = v.clone();
        }
        serde_json::from_value(base).unwrap()
    }

    fn fp(fields: serde_json::Value) -> Fingerprint {
        Fingerprint::of(&node(fields))
    }

    #[test]
    fn the_same_node_is_not_due() {
        let base = fp(json!({}));
        assert!(!due(&base, false, &node(json!({}))));
        // null and "" read the same
        assert!(!due(&base, false, &node(json!({"last_error": ""}))));
    }

    #[test]
    fn a_stable_state_reached_is_due() {
        let base = fp(json!({"provision_state": "enroll", "target_provision_state": "manageable"}));
        for s in ["manageable", "available", "active", "enroll"] {
            let n = node(
                json!({"provision_state": s, "provision_updated_at": "2026-12-01T01:00:05+00:00"}),
            );
            assert!(due(&base, false, &n), "{s}");
        }
    }

    #[test]
    fn transitional_states_are_not_due_unless_a_failure_field_moved() {
        let base = fp(json!({"provision_state": "manageable"}));
        for s in TRANSITIONAL {
            let n = node(json!({
                "provision_state": s,
                "target_provision_state": "manageable",
                "provision_updated_at": "2026-12-01T01:00:05+00:00",
            }));
            assert!(!due(&base, false, &n), "{s}");
        }
        let moved = |f: serde_json::Value| {
            let mut all = json!({
                "provision_state": "clean wait",
                "target_provision_state": "available",
                "provision_updated_at": "2026-12-01T01:00:05+00:00",
            });
            for (k, v) in f.as_object().unwrap() {
                all[k] = v.clone();
            }
            due(&base, false, &node(all))
        };
        assert!(moved(json!({"last_error": "boom"})));
        assert!(moved(json!({"maintenance": true})));
        assert!(moved(json!({"fault": "power failure"})));
        assert!(moved(json!({"power_state": "power on"})));
        assert!(!moved(json!({"target_power_state": "power on"})));
        // a node waiting in a transitional state, seen again there: nothing new either
        let waiting = fp(json!({"provision_state": "clean wait"}));
        let n = node(
            json!({"provision_state": "clean wait", "provision_updated_at": "2026-12-01T01:00:09+00:00"}),
        );
        assert!(!due(&waiting, false, &n));
    }

    #[test]
    fn a_reserved_node_is_never_due() {
        let base = fp(json!({"provision_state": "inspect wait"}));
        let n = node(
            json!({"provision_state": "manageable", "reservation": "conductor-1",
            "provision_updated_at": "2026-12-01T01:00:05+00:00"}),
        );
        assert!(!due(&base, false, &n));
        assert!(
            !due(&base, true, &n),
            "a locked pass waits for the reservation too"
        );
        let n = node(
            json!({"provision_state": "manageable", "provision_updated_at": "2026-12-01T01:00:05+00:00"}),
        );
        assert!(due(&base, false, &n));
    }

    #[test]
    fn a_locked_pass_is_due_once_the_reservation_clears() {
        let base = fp(json!({}));
        // nothing moved at all, yet the pass that hit 409 gets its retry
        assert!(due(&base, true, &node(json!({}))));
        assert!(!due(&base, true, &node(json!({"reservation": "c1"}))));
    }

    #[test]
    fn round_trips_that_end_where_they_began_are_due_through_updated_at() {
        // manageable → inspecting → manageable
        let base = fp(json!({"provision_state": "manageable"}));
        let back = node(json!({
            "provision_state": "manageable",
            "inspection_finished_at": "2026-12-01T01:00:30+00:00",
            "provision_updated_at": "2026-12-01T01:00:30+00:00",
        }));
        assert!(due(&base, false, &back));
        // manual cleaning: manageable → cleaning → clean wait → manageable, only provision_updated_at moves
        let back = node(
            json!({"provision_state": "manageable", "provision_updated_at": "2026-12-01T01:01:00+00:00"}),
        );
        assert!(due(&base, false, &back));
        // power off → on → off
        let base = fp(json!({"provision_state": "active", "power_state": "power off"}));
        let back = node(
            json!({"provision_state": "active", "provision_updated_at": "2026-12-01T01:02:00+00:00"}),
        );
        assert!(due(&base, false, &back));
    }

    #[test]
    fn failure_states_are_due() {
        // failure states keep target_provision_state set; the rule does not rely on it
        let cases = [
            ("deploying", "deploy failed", "active"),
            ("clean wait", "clean failed", "available"),
            ("inspect wait", "inspect failed", "manageable"),
            ("adopting", "adopt failed", "active"),
            ("service wait", "service failed", "active"),
            ("deleting", "error", "available"),
        ];
        for (from, to, target) in cases {
            let base = fp(json!({"provision_state": from, "target_provision_state": target}));
            let n = node(json!({
                "provision_state": to,
                "target_provision_state": target,
                "last_error": "it broke",
                "provision_updated_at": "2026-12-01T01:00:05+00:00",
            }));
            assert!(due(&base, false, &n), "{from} → {to}");
        }
    }

    #[test]
    fn a_listing_finds_nodes_by_uuid_and_by_name() {
        let l = Listing::new(
            Instant::now(),
            vec![
                node(json!({"uuid": "u1", "name": "ns~a"})),
                node(json!({"uuid": "u2", "name": "b", "provision_state": "deploying"})),
            ],
        );
        let a = Asked {
            uuid: "",
            names: vec!["ns~b".into(), "b".into()],
        };
        assert_eq!(NodeWatch::find(&l, &a).unwrap().uuid, "u2");
        let a = Asked {
            uuid: "u1",
            names: vec!["ns~b".into()],
        };
        assert_eq!(NodeWatch::find(&l, &a).unwrap().uuid, "u1");
        assert_eq!(l.busy_names(), BTreeSet::from(["b".to_string()]));
    }

    #[test]
    fn records_need_the_feature_and_a_listing_after_the_pass() {
        let off = NodeWatch::new(false);
        off.pass_ended(Some((node(json!({})), Instant::now())), false, false, false);
        assert_eq!(off.records(), 0);
        let client =
            IronicClient::new(crate::client::IronicConfig::new("http://127.0.0.1:9").unwrap())
                .unwrap();
        assert!(off.cached(&client, "u1").is_none());

        let w = NodeWatch::new(true);
        let asked = [Asked {
            uuid: "u1",
            names: vec![],
        }];
        let changed = vec![node(
            json!({"provision_state": "available", "provision_updated_at": "later"}),
        )];
        // a listing started before the pass ended does not count
        let early = Listing::new(Instant::now(), changed.clone());
        w.pass_ended(Some((node(json!({})), Instant::now())), false, false, false);
        assert_eq!(w.progress_due(&early, &asked), [false]);
        let late = Listing::new(Instant::now(), changed);
        assert_eq!(w.progress_due(&late, &asked), [true]);
        // unknown hosts are not due
        let other = [Asked {
            uuid: "u9",
            names: vec![],
        }];
        assert_eq!(w.progress_due(&late, &other), [false]);
        // a fresh read is served; a written one never
        assert!(w.cached(&client, "u1").is_some());
        w.pass_ended(Some((node(json!({})), Instant::now())), true, false, false);
        assert!(w.cached(&client, "u1").is_none());
        // records of hosts nobody asks about go
        w.age_records(KEEP * 2);
        let none: [Asked; 0] = [];
        w.progress_due(&late, &none);
        assert_eq!(w.records(), 0);
    }
}
