//! The shared port listing (with `DueHosts`): one `GET /v1/ports` a second at most answers the
//! port reads of every host, for a node only when it started after our last port write for it
//! ended; Ironic keeps addresses unique, so a port made elsewhere meanwhile makes our `POST` 409.

use crate::client::{IronicClient, IronicError};
use crate::mutex::lock;
use crate::types::Port;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A port listing serves every asker for this long before it is made again.
pub const PORT_LISTING_TTL: Duration = Duration::from_secs(1);

/// One port listing (all pages), indexed by lower-cased address and by node.
pub struct PortListing {
    /// When its first request was sent: it shows every port created before.
    pub started: Instant,
    by_address: HashMap<String, Vec<Port>>,
    by_node: HashMap<String, Vec<Port>>,
}

impl PortListing {
    pub fn new(started: Instant, ports: Vec<Port>) -> PortListing {
        let mut by_address: HashMap<String, Vec<Port>> = HashMap::new();
        let mut by_node: HashMap<String, Vec<Port>> = HashMap::new();
        for p in ports {
            by_address
                .entry(p.address.to_ascii_lowercase())
                .or_default()
                .push(p.clone());
            by_node.entry(p.node_uuid.clone()).or_default().push(p);
        }
        PortListing {
            started,
            by_address,
            by_node,
        }
    }

    /// The ports of `node_uuid` (`GET /v1/ports?node_uuid=`).
    pub fn of_node(&self, node_uuid: &str) -> Vec<Port> {
        self.by_node.get(node_uuid).cloned().unwrap_or_default()
    }

    /// The ports with address `mac`, in any case (`GET /v1/ports?address=`).
    pub fn with_address(&self, mac: &str) -> Vec<Port> {
        self.by_address
            .get(&mac.to_ascii_lowercase())
            .cloned()
            .unwrap_or_default()
    }
}

/// The process-wide port listing (one per factory).
#[derive(Default)]
pub struct PortWatch {
    enabled: bool,
    listing: Mutex<Option<Arc<PortListing>>>,
    /// Held while listing, so concurrent askers wait and reuse one listing.
    listing_in_flight: Mutex<()>,
    /// Per node, when this process's last `POST /v1/ports` for it ended (or, while one is in
    /// flight, a time in the future): only a listing started later answers for the node.
    wrote: Mutex<HashMap<String, Instant>>,
}

/// Far enough ahead that no listing started while a write is in flight counts.
const IN_FLIGHT: Duration = Duration::from_secs(3600);

impl PortWatch {
    pub fn new(enabled: bool) -> PortWatch {
        PortWatch {
            enabled,
            ..Default::default()
        }
    }

    /// A `POST /v1/ports` for `node_uuid` is about to be sent.
    pub fn writing(&self, node_uuid: &str) {
        if self.enabled {
            lock(&self.wrote).insert(node_uuid.to_string(), Instant::now() + IN_FLIGHT);
        }
    }

    /// That `POST` ended (whatever its answer).
    pub fn wrote(&self, node_uuid: &str) {
        if self.enabled {
            lock(&self.wrote).insert(node_uuid.to_string(), Instant::now());
        }
    }

    /// A listing (at most [`PORT_LISTING_TTL`] old) that answers for `node_uuid` (empty: not
    /// created yet); `None` without the feature, when it fails or predates our last port write.
    pub fn answering(&self, client: &IronicClient, node_uuid: &str) -> Option<Arc<PortListing>> {
        if !self.enabled {
            return None;
        }
        let l = self.listing(client).ok()?;
        let after = lock(&self.wrote).get(node_uuid).copied();
        after.is_none_or(|t| l.started > t).then_some(l)
    }

    /// The listing if it started under [`PORT_LISTING_TTL`] ago, else a new one.
    fn listing(&self, client: &IronicClient) -> Result<Arc<PortListing>, IronicError> {
        let _one = lock(&self.listing_in_flight);
        if let Some(l) = lock(&self.listing).clone()
            && l.started.elapsed() < PORT_LISTING_TTL
        {
            return Ok(l);
        }
        let started = Instant::now();
        let ports = client.list_ports_paged()?;
        let l = Arc::new(PortListing::new(started, ports));
        *lock(&self.listing) = Some(l.clone());
        // Writes this listing already shows no longer matter.
        lock(&self.wrote).retain(|_, t| *t >= started);
        Ok(l)
    }

    /// Nodes whose last port write no listing shows yet (tests).
    #[cfg(test)]
    pub fn writes(&self) -> usize {
        lock(&self.wrote).len()
    }

    /// Make the current listing look `by` older (tests: no sleeping through the TTL).
    #[cfg(test)]
    pub fn age_listing(&self, by: Duration) {
        let mut l = lock(&self.listing);
        if let Some(cur) = l.take() {
            *l = Some(Arc::new(PortListing {
                started: cur.started - by,
                by_address: cur.by_address.clone(),
                by_node: cur.by_node.clone(),
            }));
        }
    }
}
