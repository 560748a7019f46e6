//! Nodes locked by a conductor that is gone, whose 409 NodeLocked never clears by itself: the
//! holder is checked against `GET /v1/conductors` (listed once per [`CONDUCTORS_TTL`]); a dead
//! one gets a growing retry delay and the operator's remedy.

use crate::client::{IronicClient, IronicError};
use crate::mutex::lock;
use crate::types::Conductor;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The first retry delay after a dead conductor's lock is seen; it doubles up to [`MAX_DELAY`].
pub const FIRST_DELAY: Duration = Duration::from_secs(5);
pub const MAX_DELAY: Duration = Duration::from_secs(30);
/// How long one conductor listing answers for every host.
pub const CONDUCTORS_TTL: Duration = Duration::from_secs(5);

/// A node whose lock is held by a conductor that is offline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleLock {
    /// The `reservation`: the host name the dead conductor took the lock under.
    pub conductor: String,
    /// How long to wait before asking Ironic again.
    pub delay: Duration,
    /// First seen by this check (the event is published once per episode).
    pub new: bool,
}

impl StaleLock {
    /// What the host shows while it waits (progress line, result table, event), with the remedy.
    pub fn message(&self, node: &str) -> String {
        let conductor = &self.conductor;
        format!(
            "node {node} locked by conductor {conductor}, which is offline: restart that conductor \
             with the same [DEFAULT]host (on start it frees its locks; keep [json_rpc]port at 8089, \
             or the lock stays), or keep another conductor alive to take the node over; check with \
             `baremetal conductor list` and `baremetal node show {node} -f value -c reservation`"
        )
    }
}

/// The conductor a 409 NodeLocked names ("Node X is locked by host Y, please retry ...").
pub fn lock_holder(message: &str) -> Option<&str> {
    let (_, rest) = message.split_once("is locked by host ")?;
    let host = rest.split([',', ' ']).next()?.trim_end_matches('.');
    (!host.is_empty()).then_some(host)
}

struct Held {
    conductor: String,
    delay: Duration,
    next_check: Instant,
}

#[derive(Default)]
struct Inner {
    conductors: Option<(Instant, Vec<Conductor>)>,
    nodes: HashMap<String, Held>,
}

/// Shared by every host of a process (see the module comment).
#[derive(Default)]
pub struct LockWatch {
    inner: Mutex<Inner>,
}

/// Is `reservation` held by a live conductor (registered as `host` or `host:port`)?
fn held_by_live(conductors: &[Conductor], reservation: &str) -> bool {
    conductors.iter().any(|c| {
        c.alive
            && (c.hostname == reservation
                || c.hostname
                    .split_once(':')
                    .is_some_and(|(h, _)| h == reservation))
    })
}

impl LockWatch {
    /// After a 409 on `node` (its UUID): `Some` when an offline conductor holds its lock (the
    /// 409's `holder`, else the node's `reservation`); within a known lock's delay, from memory.
    pub fn check(
        &self,
        client: &IronicClient,
        node: &str,
        holder: Option<&str>,
    ) -> Option<StaleLock> {
        let now = Instant::now();
        {
            let inner = lock(&self.inner);
            if let Some(h) = inner.nodes.get(node)
                && now < h.next_check
            {
                return Some(StaleLock {
                    conductor: h.conductor.clone(),
                    delay: h.next_check - now,
                    new: false,
                });
            }
        }
        // Unknown or due: read the reservation, then the conductors (outside the lock).
        let reservation = match holder {
            Some(h) => Some(h.to_string()),
            None => match client.get_node(node) {
                Ok(n) => n.reservation.filter(|r| !r.is_empty()),
                Err(e) => return self.forget_on_error(node, &e),
            },
        };
        let Some(reservation) = reservation else {
            self.forget(node);
            return None;
        };
        let conductors = match self.conductors(client, now) {
            Ok(c) => c,
            Err(e) => return self.forget_on_error(node, &e),
        };
        // An empty listing tells nothing; a holder missing from a listing deregistered.
        if conductors.is_empty() || held_by_live(&conductors, &reservation) {
            self.forget(node);
            return None;
        }
        let mut inner = lock(&self.inner);
        let (delay, new) = match inner.nodes.get(node) {
            Some(h) if h.conductor == reservation => ((h.delay * 2).min(MAX_DELAY), false),
            _ => (FIRST_DELAY, true),
        };
        inner.nodes.insert(
            node.to_string(),
            Held {
                conductor: reservation.clone(),
                delay,
                next_check: now + delay,
            },
        );
        Some(StaleLock {
            conductor: reservation,
            delay,
            new,
        })
    }

    /// The node answered without 409: its lock, if any, is gone.
    pub fn forget(&self, node: &str) {
        lock(&self.inner).nodes.remove(node);
    }

    /// A stale lock of `node` is known (no request).
    pub fn holds(&self, node: &str) -> bool {
        lock(&self.inner).nodes.contains_key(node)
    }

    /// Pretend `by` has passed for `node` and the conductor listing (tests).
    #[cfg(test)]
    pub fn age(&self, node: &str, by: Duration) {
        let mut inner = lock(&self.inner);
        if let Some(h) = inner.nodes.get_mut(node) {
            h.next_check -= by;
        }
        if let Some((at, _)) = &mut inner.conductors {
            *at -= by;
        }
    }

    /// A failed read decides nothing: a 409 without a known stale lock is an ordinary retry.
    fn forget_on_error(&self, node: &str, e: &IronicError) -> Option<StaleLock> {
        tracing::debug!(node, error = %e, "cannot tell who holds the node's lock");
        lock(&self.inner).nodes.get(node).map(|h| StaleLock {
            conductor: h.conductor.clone(),
            delay: h.delay,
            new: false,
        })
    }

    fn conductors(
        &self,
        client: &IronicClient,
        now: Instant,
    ) -> Result<Vec<Conductor>, IronicError> {
        {
            let inner = lock(&self.inner);
            if let Some((at, c)) = &inner.conductors
                && now.duration_since(*at) < CONDUCTORS_TTL
            {
                return Ok(c.clone());
            }
        }
        let listed = client.list_conductors()?;
        lock(&self.inner).conductors = Some((Instant::now(), listed.clone()));
        Ok(listed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(hostname: &str, alive: bool) -> Conductor {
        Conductor {
            hostname: hostname.into(),
            alive,
        }
    }

    #[test]
    fn a_lock_under_the_bare_host_of_a_host_port_conductor_is_its_own() {
        let live = [c("10.0.0.2:9999", true), c("10.0.0.3", false)];
        assert!(held_by_live(&live, "10.0.0.2"));
        assert!(held_by_live(&live, "10.0.0.2:9999"));
        assert!(!held_by_live(&live, "10.0.0.3"), "listed, not alive");
        assert!(!held_by_live(&live, "10.0.0.4"), "not listed at all");
    }

    #[test]
    fn the_holder_is_read_from_ironics_node_locked_message() {
        let m = "Node 1be26c0b is locked by host 127.0.0.2, please retry after the current \
                 operation is completed.";
        assert_eq!(lock_holder(m), Some("127.0.0.2"));
        assert_eq!(lock_holder("Node is locked by host c1"), Some("c1"));
        assert_eq!(
            lock_holder("A port with MAC address 52:54 already exists."),
            None
        );
    }
}
