//! `HasCapacity` (spec 3.12) with an in-process slot table: BMO counts busy nodes only, so hosts
//! asking at once all get a yes; here a grant holds until a listing shows the node busy, the host
//! leaves the gated states or stops asking for [`GRANT_IDLE_TTL`]. `due_hosts` wakes delayed
//! hosts up to the free slots with short-lived promises that `has_capacity` turns into grants.

use super::IronicProvisioner;
use crate::CAPACITY_FIELDS;
use crate::mutex::lock;
use crate::types::{Node, state};
use bmh_bmc::boot_interface_counts_as_busy;
use bmhctl_plugin_sdk::ProvisionerError;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a node listing serves capacity decisions before it is fetched again.
const LISTING_TTL: Duration = Duration::from_secs(1);
/// How long a slot promised to a delayed host by `due_hosts` waits for the host's pass.
pub const PROMISE_TTL: Duration = Duration::from_secs(5);
/// How long a grant outlives its holder's last `has_capacity` (only a paused host stops asking).
pub const GRANT_IDLE_TTL: Duration = Duration::from_secs(60);

/// Ironic states in which a node counts against the limit.
const BUSY_STATES: &[&str] = &[
    state::CLEANING,
    state::CLEAN_WAIT,
    state::INSPECTING,
    state::INSPECT_WAIT,
    state::DEPLOYING,
    state::DEPLOY_WAIT,
    state::DELETING,
];

pub fn node_is_busy(node: &Node) -> bool {
    BUSY_STATES.contains(&node.provision_state.as_str())
        && boot_interface_counts_as_busy(node.boot_interface.as_deref().unwrap_or(""))
}

/// A slot held in-process.
struct Grant {
    at: Instant,
    /// The holder's last `has_capacity`.
    asked: Instant,
}

#[derive(Default)]
struct Table {
    /// Node name → its grant.
    granted: BTreeMap<String, Grant>,
    /// Node name → when `due_hosts` promised it a slot (for at most [`PROMISE_TTL`]).
    promised: BTreeMap<String, Instant>,
    /// Busy node names and when they were listed.
    listing: Option<(Instant, BTreeSet<String>)>,
}

impl Table {
    /// Keep the listing, handing grants it shows busy (made before it) over to Ironic's count.
    fn take_listing(&mut self, started: Instant, at: Instant, busy: BTreeSet<String>) {
        self.granted
            .retain(|n, g| !(busy.contains(n) && g.at < started));
        self.promised.retain(|n, _| !busy.contains(n));
        self.listing = Some((at, busy));
    }

    /// Drops promises past [`PROMISE_TTL`] and grants idle for [`GRANT_IDLE_TTL`].
    fn expire_promises(&mut self, now: Instant) {
        self.promised
            .retain(|_, at| now.duration_since(*at) < PROMISE_TTL);
        self.granted
            .retain(|_, g| now.duration_since(g.asked) < GRANT_IDLE_TTL);
    }

    /// Slots in use: busy nodes, grants and promises (each name once), `except` left out.
    fn in_use(&self, busy: &BTreeSet<String>, except: Option<&str>) -> usize {
        let other = |n: &String| Some(n.as_str()) != except;
        let granted = self
            .granted
            .keys()
            .filter(|n| !busy.contains(*n) && other(n));
        let promised = self
            .promised
            .keys()
            .filter(|n| !busy.contains(*n) && !self.granted.contains_key(*n) && other(n));
        busy.iter().filter(|n| other(n)).count() + granted.count() + promised.count()
    }
}

/// A node listing for the gate: when it started, when it counts from, the busy node names.
pub struct Listed {
    pub started: Instant,
    pub at: Instant,
    pub busy: BTreeSet<String>,
}

/// The process-wide slot table.
pub struct CapacityGate {
    limit: usize,
    table: Mutex<Table>,
}

impl CapacityGate {
    pub fn new(limit: usize) -> Self {
        CapacityGate {
            limit,
            table: Mutex::default(),
        }
    }

    /// Give a host's slot (or the slot promised to it) back.
    pub fn release(&self, name: &str) {
        let mut t = lock(&self.table);
        t.granted.remove(name);
        t.promised.remove(name);
    }

    /// Decide for `name`, listing busy nodes with `list` (table locked) when stale; a listing made
    /// earlier counts from `at`, takes over grants made before `started`. Promises become grants.
    pub fn try_acquire_listed(
        &self,
        name: &str,
        list: impl FnOnce() -> Result<Listed, ProvisionerError>,
    ) -> Result<bool, ProvisionerError> {
        let mut t = lock(&self.table);
        let now = Instant::now();
        if let Some(g) = t.granted.get_mut(name) {
            g.asked = now;
            t.promised.remove(name);
            return Ok(true);
        }
        let fresh = t
            .listing
            .as_ref()
            .is_some_and(|(at, _)| now.duration_since(*at) < LISTING_TTL);
        if !fresh {
            let Listed { started, at, busy } = list()?;
            t.take_listing(started, at, busy);
        }
        t.expire_promises(now);
        let (at, busy) = t.listing.take().expect("listing set above");
        t.promised.remove(name);
        let listed_busy = busy.contains(name);
        let ok = listed_busy || t.in_use(&busy, Some(name)) < self.limit;
        if ok && !listed_busy {
            let now = Instant::now();
            t.granted.insert(
                name.to_string(),
                Grant {
                    at: now,
                    asked: now,
                },
            );
        }
        t.listing = Some((at, busy));
        Ok(ok)
    }

    /// A listing made elsewhere (the node watch's): kept when newer than the gate's own.
    pub fn observe(&self, started: Instant, busy: BTreeSet<String>) {
        let mut t = lock(&self.table);
        if t.listing.as_ref().is_none_or(|(at, _)| *at < started) {
            t.take_listing(started, started, busy);
        }
    }

    /// The busy nodes of the last listing and the slots free now.
    fn free(&self, t: &mut Table, now: Instant) -> (BTreeSet<String>, usize) {
        t.expire_promises(now);
        let busy = t
            .listing
            .as_ref()
            .map(|(_, b)| b.clone())
            .unwrap_or_default();
        let free = self.limit.saturating_sub(t.in_use(&busy, None));
        (busy, free)
    }

    /// `due_hosts` for hosts delayed by the limit, oldest first: those with a busy node, a grant or
    /// a live promise may go; the others get a promise each while slots are free.
    pub fn promise(&self, names: &[String]) -> Vec<bool> {
        let mut t = lock(&self.table);
        let now = Instant::now();
        let (busy, mut free) = self.free(&mut t, now);
        names
            .iter()
            .map(|n| {
                if busy.contains(n) || t.granted.contains_key(n) || t.promised.contains_key(n) {
                    true
                } else if free > 0 {
                    free -= 1;
                    t.promised.insert(n.clone(), now);
                    true
                } else {
                    false
                }
            })
            .collect()
    }
}

impl IronicProvisioner {
    pub(super) fn do_has_capacity(&mut self) -> Result<bool, ProvisionerError> {
        let bmc = self.bmc().map_err(ProvisionerError::other)?;
        if bmc.exempt_from_provisioning_limit() {
            return Ok(true);
        }
        let name = self.node_name();
        // The host's own node, already read this pass, answers without a listing.
        if let Some(node) = &self.node
            && node_is_busy(node)
        {
            return Ok(true);
        }
        let shared = self.shared.clone();
        let failed = |e: crate::client::IronicError| {
            shared.note_error(&e);
            ProvisionerError::Other(format!("failed to list nodes: {e}"))
        };
        if shared.watch.enabled() {
            // The node watch's listing: one per second for capacity and `due_hosts` together.
            return shared.capacity.try_acquire_listed(&name, || {
                let l = shared.watch.listing(&shared.client, LISTING_TTL);
                let l = l.map_err(failed)?;
                Ok(Listed {
                    started: l.started,
                    at: l.started,
                    busy: l.busy_names(),
                })
            });
        }
        shared.capacity.try_acquire_listed(&name, || {
            let started = Instant::now();
            let nodes = shared.client.list_nodes(CAPACITY_FIELDS, None);
            let nodes = nodes.map_err(failed)?;
            let busy = nodes.iter().filter(|n| node_is_busy(n));
            Ok(Listed {
                started,
                at: Instant::now(),
                busy: busy.map(|n| n.name_str().to_string()).collect(),
            })
        })
    }
}

#[cfg(test)]
impl CapacityGate {
    /// Decide for `name` with a listing made now by `list` when the gate's is stale.
    pub(crate) fn try_acquire(
        &self,
        name: &str,
        list: impl FnOnce() -> Result<BTreeSet<String>, ProvisionerError>,
    ) -> Result<bool, ProvisionerError> {
        self.try_acquire_listed(name, || {
            let started = Instant::now();
            let busy = list()?;
            Ok(Listed {
                started,
                at: Instant::now(),
                busy,
            })
        })
    }

    /// Slots free now.
    pub(crate) fn free_slots(&self) -> usize {
        self.free(&mut lock(&self.table), Instant::now()).1
    }

    pub(crate) fn holds(&self, name: &str) -> bool {
        lock(&self.table).granted.contains_key(name)
    }

    /// Slots held in-process right now.
    pub(crate) fn granted(&self) -> usize {
        lock(&self.table).granted.len()
    }

    /// Slots promised and not yet taken.
    pub(crate) fn promised(&self) -> usize {
        let mut t = lock(&self.table);
        t.expire_promises(Instant::now());
        t.promised.len()
    }
}

#[cfg(test)]
mod unit {
    use super::*;
    use std::sync::Arc;

    fn busy(names: &[&str]) -> Result<BTreeSet<String>, ProvisionerError> {
        Ok(names.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn grants_never_overshoot_the_limit() {
        let gate = CapacityGate::new(2);
        assert!(gate.try_acquire("a", || busy(&[])).unwrap());
        assert!(gate.try_acquire("b", || busy(&[])).unwrap());
        assert!(!gate.try_acquire("c", || busy(&[])).unwrap());
        // a holder asks again: still yes
        assert!(gate.try_acquire("a", || busy(&[])).unwrap());
        gate.release("a");
        assert!(gate.try_acquire("c", || busy(&[])).unwrap());
    }

    #[test]
    fn busy_nodes_of_others_count() {
        let gate = CapacityGate::new(3);
        assert!(gate.try_acquire("a", || busy(&["x", "y"])).unwrap());
        // the cached listing is reused: no second listing within the TTL
        assert!(
            !gate
                .try_acquire("b", || panic!("listed twice within the TTL"))
                .unwrap()
        );
    }

    fn owned(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn promises_count_as_in_use_and_become_the_holders_grants() {
        let gate = CapacityGate::new(2);
        gate.observe(Instant::now(), busy(&["x"]).unwrap());
        assert_eq!(gate.free_slots(), 1);
        // oldest first, as many as there are free slots
        assert_eq!(gate.promise(&owned(&["a", "b", "c"])), [true, false, false]);
        assert_eq!((gate.free_slots(), gate.promised()), (0, 1));
        // nobody else can take a's promised slot; a's own ask turns it into the grant
        assert!(!gate.try_acquire("c", || busy(&["x"])).unwrap());
        assert!(gate.try_acquire("a", || busy(&["x"])).unwrap());
        assert_eq!((gate.granted(), gate.promised()), (1, 0));
        assert_eq!(gate.promise(&owned(&["b", "c"])), [false, false]);
        // a holder and a busy node are due without a new promise
        assert_eq!(gate.promise(&owned(&["x", "a"])), [true, true]);
        assert_eq!(gate.promised(), 0);
        gate.release("a");
        assert_eq!(gate.promise(&owned(&["b", "c"])), [true, false]);
        // an older listing never replaces a newer one
        gate.observe(Instant::now() - Duration::from_secs(5), BTreeSet::new());
        assert_eq!(gate.free_slots(), 0);
    }

    #[test]
    fn promises_expire() {
        let gate = CapacityGate::new(1);
        gate.observe(Instant::now(), BTreeSet::new());
        assert_eq!(gate.promise(&owned(&["a"])), [true]);
        assert!(!gate.try_acquire("b", || busy(&[])).unwrap());
        {
            let mut t = gate.table.lock().unwrap();
            for at in t.promised.values_mut() {
                *at -= PROMISE_TTL;
            }
        }
        assert_eq!(gate.promised(), 0);
        assert!(gate.try_acquire("b", || busy(&[])).unwrap());
    }

    /// BMO's `HasCapacity` counts only nodes Ironic shows busy: a host that stopped asking
    /// (paused mid-operation) before its node turned busy holds no slot after
    /// [`GRANT_IDLE_TTL`]; one that keeps asking keeps its slot.
    #[test]
    fn a_grant_whose_holder_stopped_asking_is_released() {
        let gate = CapacityGate::new(1);
        assert!(gate.try_acquire("a", || busy(&[])).unwrap());
        let age = |gate: &CapacityGate, by: Duration| {
            let mut t = gate.table.lock().unwrap();
            for g in t.granted.values_mut() {
                g.asked -= by;
            }
        };
        age(&gate, GRANT_IDLE_TTL / 2);
        assert!(gate.try_acquire("a", || busy(&[])).unwrap(), "a asks again");
        age(&gate, GRANT_IDLE_TTL / 2);
        assert!(
            !gate.try_acquire("b", || busy(&[])).unwrap(),
            "a asked recently"
        );
        age(&gate, GRANT_IDLE_TTL);
        assert!(gate.try_acquire("b", || busy(&[])).unwrap(), "a went quiet");
        assert!(!gate.holds("a"));
    }

    #[test]
    fn promises_and_grants_in_any_order_never_exceed_the_limit() {
        let gate = Arc::new(CapacityGate::new(3));
        gate.observe(Instant::now(), BTreeSet::new());
        let handles: Vec<_> = (0..16)
            .map(|t| {
                let g = gate.clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        let name = format!("h{}", (t * 7 + i) % 24);
                        match i % 4 {
                            0 => {
                                g.promise(&[name.clone(), format!("h{}", (i + t) % 24)]);
                            }
                            1 | 2 => {
                                g.try_acquire(&name, || busy(&[])).unwrap();
                            }
                            _ => g.release(&name),
                        }
                        let t = g.table.lock().unwrap();
                        let in_use = t.in_use(&BTreeSet::new(), None);
                        assert!(in_use <= 3, "{in_use} slots in use");
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }

    #[test]
    fn own_busy_node_is_always_allowed() {
        let gate = CapacityGate::new(1);
        assert!(gate.try_acquire("x", || busy(&["x"])).unwrap());
    }

    #[test]
    fn concurrent_askers_get_exactly_the_limit() {
        let gate = Arc::new(CapacityGate::new(5));
        let handles: Vec<_> = (0..40)
            .map(|i| {
                let g = gate.clone();
                std::thread::spawn(move || g.try_acquire(&format!("h{i}"), || busy(&[])).unwrap())
            })
            .collect();
        let yes = handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|b| *b)
            .count();
        assert_eq!(yes, 5);
        assert_eq!(gate.granted(), 5);
    }

    #[test]
    fn fake_and_uefi_http_nodes_count_virtual_media_do_not() {
        let n = |bi: &str| Node {
            provision_state: "deploying".into(),
            boot_interface: Some(bi.into()),
            ..Default::default()
        };
        assert!(node_is_busy(&n("fake")));
        assert!(node_is_busy(&n("redfish-https")));
        assert!(!node_is_busy(&n("redfish-virtual-media")));
    }

    #[test]
    fn names() {
        assert_eq!(
            super::super::node_name(&bmh_api::ObjectKey::new("ns", "h")),
            "ns~h"
        );
    }
}
