//! Nodes locked by a conductor that is gone, whose 409 NodeLocked never clears by itself: the
//! holder is checked against `GET /v1/conductors` (listed once per [`CONDUCTORS_TTL`]); a dead
//! one gets a growing retry delay and the operator's remedy. A lock is also stale when it
//! outlives its holder's death under the same name (a conductor restarted with a JSON-RPC port
//! other than 8089 registers as `HOST:PORT` and never frees the locks it took as `HOST`): known
//! stale and untouched since, or held without any change of the node for [`KEPT_AFTER`].

use crate::client::{IronicClient, IronicError};
use crate::mutex::lock;
use crate::types::Conductor;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// The first retry delay after a dead conductor's lock is seen; it doubles up to [`MAX_DELAY`].
pub const FIRST_DELAY: Duration = Duration::from_secs(5);
pub const MAX_DELAY: Duration = Duration::from_secs(30);
/// How long one conductor listing answers for every host. Ironic lists a dead conductor
/// offline only after its `heartbeat_timeout` (60 s by default), so a fresher listing would
/// not name it sooner; at 1,000 nodes some lock is always held, and 5 s cost 0.08 call a host.
pub const CONDUCTORS_TTL: Duration = Duration::from_secs(15);
/// A reservation listed this long is worth asking about (a live conductor's lock is shorter).
pub const SUSPECT_AFTER: Duration = Duration::from_secs(30);
/// A lock held by a live conductor is asked about again no sooner than this.
pub const RECHECK: Duration = Duration::from_secs(10);
/// A lock held this long has its node read, to tell later whether the node changed.
pub const STAMP_AFTER: Duration = Duration::from_secs(60);
/// A lock held this long with the node unchanged is stale whoever holds it.
pub const KEPT_AFTER: Duration = Duration::from_secs(120);

/// A node whose lock nobody will release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleLock {
    /// The `reservation`: the host name the conductor took the lock under.
    pub conductor: String,
    /// Whether that conductor is listed offline (else: alive, but the lock is an old one).
    pub offline: bool,
    /// Since when the lock has been seen held (to the second, so the message stays the same).
    pub since: SystemTime,
    /// How long to wait before asking Ironic again.
    pub delay: Duration,
    /// First seen by this check (the event is published once per episode).
    pub new: bool,
}

impl StaleLock {
    /// What the host shows while it waits (progress line, result table, event), with the remedy.
    pub fn message(&self, node: &str) -> String {
        let conductor = &self.conductor;
        let check = format!(
            "check with `baremetal conductor list` and `baremetal node show {node} -f value -c \
             reservation`"
        );
        let since = humantime::format_rfc3339_seconds(self.since);
        if self.offline {
            return format!(
                "node {node} locked by conductor {conductor}, which is offline (lock seen since \
                 {since}): restart that conductor with the same [DEFAULT]host (on start it frees \
                 its locks; keep [json_rpc]port at 8089, or the lock stays), or keep another \
                 conductor alive to take the node over; {check}"
            );
        }
        format!(
            "node {node} locked by conductor {conductor} since {since} with no change of the node, \
             a lock that conductor does not release: one it took before a restart (a conductor \
             whose [json_rpc]port is not 8089 registers as HOST:PORT and frees only locks of that \
             name); clear the node's reservation in Ironic's database, or restart the conductors \
             with [json_rpc]port 8089; {check}"
        )
    }
}

/// The conductor a 409 NodeLocked names ("Node X is locked by host Y, please retry ...").
pub fn lock_holder(message: &str) -> Option<&str> {
    let (_, rest) = message.split_once("is locked by host ")?;
    let host = rest.split([',', ' ']).next()?.trim_end_matches('.');
    (!host.is_empty()).then_some(host)
}

/// A lock known to be stale.
struct Held {
    conductor: String,
    offline: bool,
    delay: Duration,
    next_check: Instant,
}

/// A reservation seen held, and since when (its node's `updated_at` once read).
struct Seen {
    reservation: String,
    stamp: Option<String>,
    since: Instant,
    /// `since` on the wall clock, for the message.
    wall: SystemTime,
    /// Not asked about again before this.
    next_check: Instant,
}

#[derive(Default)]
struct Inner {
    conductors: Option<(Instant, Vec<Conductor>)>,
    nodes: HashMap<String, Held>,
    seen: HashMap<String, Seen>,
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
    /// After a 409 on `node` (its UUID; `holder` as the 409 names it), or a reservation held a
    /// while: `Some` when the lock is stale (see the module comment); within a known lock's
    /// delay, from memory. The node is read where its `updated_at` decides (a lock known
    /// stale, or held since [`STAMP_AFTER`]), or when the holder is not named.
    pub fn check(
        &self,
        client: &IronicClient,
        node: &str,
        holder: Option<&str>,
    ) -> Option<StaleLock> {
        self.judge(client, node, holder, None)
    }

    /// [`LockWatch::check`], with the node's `(reservation, updated_at)` when just read.
    fn judge(
        &self,
        client: &IronicClient,
        node: &str,
        holder: Option<&str>,
        read: Option<(String, String)>,
    ) -> Option<StaleLock> {
        let now = Instant::now();
        let wants_stamp = {
            let inner = lock(&self.inner);
            if let Some(h) = inner.nodes.get(node)
                && now < h.next_check
            {
                return Some(stale_of(h, &inner, node, h.next_check - now, false));
            }
            let seen = inner.seen.get(node);
            let known = inner.nodes.contains_key(node);
            if !known && seen.is_some_and(|s| now < s.next_check) {
                return None;
            }
            known || seen.is_some_and(|s| now.duration_since(s.since) >= STAMP_AFTER)
        };
        // Unknown or due: the node's lock, then the conductors (outside the lock).
        let (reservation, stamp) = match (read, holder) {
            (Some((r, t)), _) => (Some(r), Some(t)),
            (None, Some(h)) if !wants_stamp => (Some(h.to_string()), None),
            _ => match client.node_lock(node) {
                Ok(l) => l,
                Err(e) => return self.forget_on_error(node, &e),
            },
        };
        let Some(reservation) = reservation.filter(|r| !r.is_empty()) else {
            self.forget(node);
            return None;
        };
        let conductors = match self.conductors(client, now) {
            Ok(c) => c,
            Err(e) => return self.forget_on_error(node, &e),
        };
        // An empty listing tells nothing; a holder missing from a listing deregistered.
        let offline = !conductors.is_empty() && !held_by_live(&conductors, &reservation);
        let mut inner = lock(&self.inner);
        let prev = inner
            .seen
            .get(node)
            .filter(|s| s.reservation == reservation);
        // Some(true): two reads show the node untouched; Some(false): it changed.
        let untouched = (prev.and_then(|s| s.stamp.as_ref()))
            .zip(stamp.as_ref())
            .map(|(a, b)| a == b);
        let (since, wall, stamp) = match prev {
            Some(s) if untouched != Some(false) => (s.since, s.wall, stamp.or(s.stamp.clone())),
            _ => (now, SystemTime::now(), stamp),
        };
        let known = (inner.nodes.get(node))
            .filter(|h| h.conductor == reservation)
            .map(|h| h.delay);
        let untouched = untouched == Some(true);
        let kept = known.is_some() && untouched;
        let long = untouched && now.duration_since(since) >= KEPT_AFTER;
        let stale = offline || kept || long;
        let next_check = if stale { now } else { now + RECHECK };
        inner.seen.insert(
            node.to_string(),
            Seen {
                reservation: reservation.clone(),
                stamp,
                since,
                wall,
                next_check,
            },
        );
        if !stale {
            inner.nodes.remove(node);
            return None;
        }
        let (delay, new) = match known {
            Some(d) => ((d * 2).min(MAX_DELAY), false),
            None => (FIRST_DELAY, true),
        };
        let held = Held {
            conductor: reservation,
            offline,
            delay,
            next_check: now + delay,
        };
        let out = stale_of(&held, &inner, node, delay, new);
        inner.nodes.insert(node.to_string(), held);
        Some(out)
    }

    /// A node's `reservation` as a listing or a read shows it (a read with its `updated_at`):
    /// a lock held for [`SUSPECT_AFTER`] is checked (at most every [`RECHECK`] while its
    /// holder lives).
    pub fn observe(
        &self,
        client: &IronicClient,
        node: &str,
        reservation: Option<&str>,
        updated_at: Option<&str>,
    ) -> Option<StaleLock> {
        let Some(reservation) = reservation.filter(|r| !r.is_empty()) else {
            self.forget(node);
            return None;
        };
        let now = Instant::now();
        {
            let mut inner = lock(&self.inner);
            let known = inner.nodes.contains_key(node);
            match inner.seen.get(node) {
                Some(s) if s.reservation == reservation => {
                    if !known && now.duration_since(s.since) < SUSPECT_AFTER {
                        return None;
                    }
                }
                _ => {
                    inner.nodes.remove(node);
                    inner.seen.insert(
                        node.to_string(),
                        Seen {
                            reservation: reservation.to_string(),
                            stamp: None,
                            since: now,
                            wall: SystemTime::now(),
                            next_check: now,
                        },
                    );
                    return None;
                }
            }
        }
        let read = updated_at.map(|t| (reservation.to_string(), t.to_string()));
        self.judge(client, node, None, read)
    }

    /// The node answered without 409, or shows no reservation: its lock, if any, is gone.
    pub fn forget(&self, node: &str) {
        let mut inner = lock(&self.inner);
        inner.nodes.remove(node);
        inner.seen.remove(node);
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
        if let Some(s) = inner.seen.get_mut(node) {
            s.since -= by;
            s.next_check -= by;
        }
        if let Some((at, _)) = &mut inner.conductors {
            *at -= by;
        }
    }

    /// A failed read decides nothing: a 409 without a known stale lock is an ordinary retry.
    fn forget_on_error(&self, node: &str, e: &IronicError) -> Option<StaleLock> {
        tracing::debug!(node, error = %e, "cannot tell who holds the node's lock");
        let inner = lock(&self.inner);
        let h = inner.nodes.get(node)?;
        Some(stale_of(h, &inner, node, h.delay, false))
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

fn stale_of(h: &Held, inner: &Inner, node: &str, delay: Duration, new: bool) -> StaleLock {
    let since = inner
        .seen
        .get(node)
        .map_or_else(SystemTime::now, |s| s.wall);
    StaleLock {
        conductor: h.conductor.clone(),
        offline: h.offline,
        since,
        delay,
        new,
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
