//! The shared port listing (with `DueHosts`): one `GET /v1/ports` a second at most answers the
//! port reads of every host, for a node only when it started after our last port write for it
//! ended; Ironic keeps addresses unique, so a port made elsewhere meanwhile makes our `POST` 409.
//! Once large, the listings between full ones read the ports created since ([`delta`]).

use super::delta::{self, DeltaClock, Next};
use crate::client::{IronicClient, IronicError};
use crate::mutex::lock;
use crate::types::Port;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A port listing serves every asker for this long before it is made again.
pub const PORT_LISTING_TTL: Duration = Duration::from_secs(1);

/// One port listing (all pages), or the last with the ports created since over it, indexed by
/// lower-cased address and by node.
pub struct PortListing {
    /// When its first request was sent: it shows every port created before (but for one
    /// deleted or moved since the last full listing).
    pub started: Instant,
    ports: Vec<Port>,
    by_address: HashMap<String, Vec<usize>>,
    by_node: HashMap<String, Vec<usize>>,
}

impl PortListing {
    pub fn new(started: Instant, ports: Vec<Port>) -> PortListing {
        let mut by_address: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_node: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, p) in ports.iter().enumerate() {
            by_address
                .entry(p.address.to_ascii_lowercase())
                .or_default()
                .push(i);
            by_node.entry(p.node_uuid.clone()).or_default().push(i);
        }
        PortListing {
            started,
            ports,
            by_address,
            by_node,
        }
    }

    /// `base` with `created` over it (by UUID; new ports added), as of `started`.
    pub fn merged(base: &PortListing, started: Instant, created: Vec<Port>) -> PortListing {
        let mut ports = base.ports.clone();
        let at: HashMap<&str, usize> = base
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| (p.uuid.as_str(), i))
            .collect();
        let mut added = Vec::new();
        for p in created {
            match at.get(p.uuid.as_str()) {
                Some(i) => ports[*i] = p,
                None => added.push(p),
            }
        }
        ports.extend(added);
        PortListing::new(started, ports)
    }

    fn len(&self) -> usize {
        self.ports.len()
    }

    fn all(&self, at: Option<&Vec<usize>>) -> Vec<Port> {
        at.into_iter()
            .flatten()
            .map(|i| self.ports[*i].clone())
            .collect()
    }

    /// The ports of `node_uuid` (`GET /v1/ports?node_uuid=`).
    pub fn of_node(&self, node_uuid: &str) -> Vec<Port> {
        self.all(self.by_node.get(node_uuid))
    }

    /// The ports with address `mac`, in any case (`GET /v1/ports?address=`).
    pub fn with_address(&self, mac: &str) -> Vec<Port> {
        self.all(self.by_address.get(&mac.to_ascii_lowercase()))
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
    /// From how many ports listed pages serve between full listings.
    delta_from: usize,
    clock: Mutex<DeltaClock>,
}

/// Far enough ahead that no listing started while a write is in flight counts.
const IN_FLIGHT: Duration = Duration::from_secs(3600);

impl PortWatch {
    pub fn new(enabled: bool) -> PortWatch {
        PortWatch {
            enabled,
            delta_from: delta::DEFAULT_DELTA_FROM,
            ..Default::default()
        }
    }

    /// Pages serve between full listings from `ports` listed (`BMHCTL_IRONIC_DELTA_FROM`).
    pub fn with_delta_from(mut self, ports: usize) -> PortWatch {
        self.delta_from = ports;
        self
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
        let l = Arc::new(self.list(client, started)?);
        *lock(&self.listing) = Some(l.clone());
        // Writes this listing already shows no longer matter.
        lock(&self.wrote).retain(|_, t| *t >= started);
        Ok(l)
    }

    /// A new listing started at `started`: once the last is large, the ports created since it
    /// over it while they fit a page and a full listing is recent, else a full one.
    fn list(&self, client: &IronicClient, started: Instant) -> Result<PortListing, IronicError> {
        let base = lock(&self.listing)
            .clone()
            .filter(|b| b.len() >= self.delta_from);
        let mut clock = lock(&self.clock);
        let next = clock.next(base.is_some());
        if let (Next::Probe { page } | Next::Page { page, .. }, Some(base)) = (next, &base) {
            let created = client.recently_created_ports(page)?;
            let stamps: Vec<_> = created
                .iter()
                .map(|p| delta::stamp(p.created_at.as_deref()))
                .collect();
            if clock.page_seen(&stamps, page, next) {
                return Ok(PortListing::merged(base, started, created));
            }
        }
        let ports = client.list_ports_paged()?;
        clock.full_listed(started);
        Ok(PortListing::new(started, ports))
    }

    /// Nodes whose last port write no listing shows yet (tests).
    #[cfg(test)]
    pub fn writes(&self) -> usize {
        lock(&self.wrote).len()
    }

    /// Make the last full listing look `by` older (tests).
    #[cfg(test)]
    pub fn age_full_listing(&self, by: Duration) {
        lock(&self.clock).age_full(by);
    }

    /// Make the current listing look `by` older (tests: no sleeping through the TTL).
    #[cfg(test)]
    pub fn age_listing(&self, by: Duration) {
        let mut l = lock(&self.listing);
        if let Some(cur) = l.take() {
            *l = Some(Arc::new(PortListing::new(
                cur.started - by,
                cur.ports.clone(),
            )));
        }
    }
}
