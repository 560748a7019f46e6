//! `HasCapacity` (spec 3.12) with an in-process slot table, so hosts asking at the same time
//! never overshoot `PROVISIONING_LIMIT`.
//!
//! BMO counts busy nodes in Ironic only; two hosts asking before either node turns busy both
//! get a yes. Here a granted slot is held in-process until a node listing (made after the
//! grant) shows the node busy, or the host leaves the gated states. Nothing is promised across
//! processes: two bmhctl processes on one Ironic each keep their own table.

use super::IronicProvisioner;
use crate::CAPACITY_FIELDS;
use crate::types::{Node, state};
use bmh_bmc::boot_interface_counts_as_busy;
use bmhctl_plugin_sdk::ProvisionerError;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a node listing serves capacity decisions before it is fetched again.
const LISTING_TTL: Duration = Duration::from_secs(1);

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

#[derive(Default)]
struct Table {
    /// Node name → when the slot was granted.
    granted: BTreeMap<String, Instant>,
    /// Busy node names and when they were listed.
    listing: Option<(Instant, BTreeSet<String>)>,
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
            table: Mutex::new(Table::default()),
        }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Give a host's slot back.
    pub fn release(&self, name: &str) {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        t.granted.remove(name);
    }

    pub fn holds(&self, name: &str) -> bool {
        let t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        t.granted.contains_key(name)
    }

    /// Slots held in-process right now.
    pub fn granted(&self) -> usize {
        let t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        t.granted.len()
    }

    /// Decide for `name`, listing busy nodes with `list` when the cached listing is stale.
    /// The table stays locked across the listing, so concurrent askers are serialised.
    pub fn try_acquire(
        &self,
        name: &str,
        list: impl FnOnce() -> Result<BTreeSet<String>, ProvisionerError>,
    ) -> Result<bool, ProvisionerError> {
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        if t.granted.contains_key(name) {
            return Ok(true);
        }
        let now = Instant::now();
        let fresh = t
            .listing
            .as_ref()
            .is_some_and(|(at, _)| now.duration_since(*at) < LISTING_TTL);
        if !fresh {
            let busy = list()?;
            let listed_at = Instant::now();
            // A slot granted before this listing whose node shows busy is now counted by
            // Ironic: hand it over.
            t.granted
                .retain(|n, granted_at| !(busy.contains(n) && *granted_at < now));
            t.listing = Some((listed_at, busy));
        }
        let busy = &t.listing.as_ref().expect("listing set above").1;
        if busy.contains(name) {
            return Ok(true);
        }
        let in_use = busy.len() + t.granted.keys().filter(|n| !busy.contains(*n)).count();
        if in_use < self.limit {
            t.granted.insert(name.to_string(), Instant::now());
            Ok(true)
        } else {
            Ok(false)
        }
    }
}

impl IronicProvisioner {
    pub(super) fn do_has_capacity(&mut self) -> Result<bool, ProvisionerError> {
        let bmc = self
            .bmc()
            .map_err(|e| ProvisionerError::Other(e.to_string()))?;
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
        shared.capacity.try_acquire(&name, || {
            let nodes = shared.client.list_nodes(CAPACITY_FIELDS).map_err(|e| {
                shared.note_error(&e);
                ProvisionerError::Other(format!("failed to list nodes: {e}"))
            })?;
            Ok(nodes
                .iter()
                .filter(|n| node_is_busy(n))
                .map(|n| n.name_str().to_string())
                .collect())
        })
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
