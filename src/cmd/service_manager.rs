//! The service manager that started `bmhctl watch` (systemd, `Type=notify`), told through
//! sd_notify(3): `READY=1` once the store is loaded and the provisioner answered, `WATCHDOG=1`
//! from the scheduler's loop, `STATUS=` lines with the hosts, `STOPPING=1` on a signal.
//! Without `NOTIFY_SOCKET` there is none, and nothing is sent.

use crate::runner::{Heartbeat, Pulse};
use sd_notify::NotifyState;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the status line is brought up to date when no watchdog asks for more.
const STATUS_EVERY: Duration = Duration::from_secs(5);

pub struct ServiceManager {
    /// `WATCHDOG_USEC` (for this process): a `WATCHDOG=1` is due within it.
    watchdog: Option<Duration>,
    ready: AtomicBool,
    stopping: AtomicBool,
    /// The last `STATUS=` sent.
    status: Mutex<String>,
    /// A failed notification was said already.
    failed: AtomicBool,
}

impl ServiceManager {
    /// The service manager listening on `NOTIFY_SOCKET`, if any.
    pub fn from_env() -> Option<Arc<Self>> {
        std::env::var_os("NOTIFY_SOCKET").filter(|s| !s.is_empty())?;
        Some(Arc::new(Self {
            watchdog: sd_notify::watchdog_enabled().filter(|w| !w.is_zero()),
            ready: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            status: Mutex::new(String::new()),
            failed: AtomicBool::new(false),
        }))
    }

    fn send(&self, states: &[NotifyState<'_>]) {
        if let Err(e) = sd_notify::notify(states) {
            // Said once: the service runs on without its manager's bookkeeping.
            if !self.failed.swap(true, Ordering::Relaxed) {
                tracing::warn!("cannot notify the service manager: {e}");
            }
        }
    }

    /// Sends `with` and `status`, the status only when it changed.
    fn status(&self, status: String, with: &[NotifyState<'_>]) {
        let mut last = self.status.lock().unwrap_or_else(|e| e.into_inner());
        let mut states = with.to_vec();
        if *last != status {
            states.push(NotifyState::Status(&status));
        }
        if !states.is_empty() {
            self.send(&states);
        }
        *last = status;
    }

    /// The provisioner did not answer yet.
    pub fn waiting(&self, why: &str) {
        self.status(format!("waiting for the provisioner: {why}"), &[]);
    }

    /// The store is loaded with `hosts` hosts and the provisioner answered.
    pub fn ready(&self, hosts: usize, place: &str) {
        self.ready.store(true, Ordering::Relaxed);
        self.status(
            format!("watching {} in {place}", count(hosts, "host", "hosts")),
            &[NotifyState::Ready],
        );
    }

    /// Told to stop: the passes in flight finish.
    pub fn stopping(&self) {
        self.stopping.store(true, Ordering::Relaxed);
        self.status(
            "stopping: passes in flight finish and their status is saved".into(),
            &[NotifyState::Stopping],
        );
    }

    /// The heartbeat of the scheduler's loop: `WATCHDOG=1` at least every half of the
    /// watchdog's time, and the status line with the hosts once ready.
    pub fn heartbeat(self: &Arc<Self>) -> Heartbeat {
        let every = self
            .watchdog
            .map_or(STATUS_EVERY, |w| (w / 2).min(STATUS_EVERY));
        let manager = self.clone();
        Heartbeat {
            every,
            beat: Box::new(move |pulse: Pulse| manager.beat(pulse)),
        }
    }

    fn beat(&self, pulse: Pulse) {
        let watchdog: &[NotifyState<'_>] = if self.watchdog.is_some() {
            &[NotifyState::Watchdog]
        } else {
            &[]
        };
        if !self.ready.load(Ordering::Relaxed) || self.stopping.load(Ordering::Relaxed) {
            if self.watchdog.is_some() {
                self.send(watchdog);
            }
            return;
        }
        self.status(status_line(pulse), watchdog);
    }
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What the status says while the controller runs.
fn status_line(pulse: Pulse) -> String {
    format!(
        "watching {}, {} running",
        count(pulse.hosts, "host", "hosts"),
        count(pulse.running, "pass", "passes")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_counts_hosts_and_passes() {
        let line = |hosts, running| status_line(Pulse { hosts, running });
        assert_eq!(line(1, 0), "watching 1 host, 0 passes running");
        assert_eq!(line(12, 1), "watching 12 hosts, 1 pass running");
    }
}
