//! A sign of life from the scheduler's loop, for whoever supervises the process (a watchdog):
//! it comes from the loop that starts the passes, so a loop that is stuck stops giving it.

use std::time::{Duration, Instant};

/// What the loop reports with each beat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pulse {
    /// Hosts the controller drives (not deleted).
    pub hosts: usize,
    /// Passes started and not done.
    pub running: usize,
}

/// Called from the scheduler's loop, first as it starts, then at least every `every` while it
/// turns.
pub struct Heartbeat {
    pub every: Duration,
    pub beat: Box<dyn FnMut(Pulse) + Send>,
}

/// A heartbeat and when it beats next.
pub(super) struct Beating {
    heartbeat: Heartbeat,
    next: Instant,
}

impl Beating {
    pub(super) fn new(heartbeat: Heartbeat) -> Self {
        Self {
            heartbeat,
            next: Instant::now(),
        }
    }

    /// When the loop must wake up for the next beat at the latest.
    pub(super) fn next(&self) -> Instant {
        self.next
    }

    /// Beats when due, with the pulse `pulse` gives.
    pub(super) fn maybe_beat(&mut self, now: Instant, pulse: impl FnOnce() -> Pulse) {
        if now >= self.next {
            (self.heartbeat.beat)(pulse());
            self.next = now + self.heartbeat.every;
        }
    }
}
