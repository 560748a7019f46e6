//! What the runner tells about its hosts and passes, to whoever shows them.

use super::Goal;
use crate::machine::PassOutcome;
use crate::record::HostRecord;
use bmh_api::ObjectKey;

/// Called after every pass, on the controller's task.
pub type Observer = Box<dyn FnMut(&ObjectKey, &HostRecord, &PassOutcome) + Send>;

/// What a batch tells about its hosts as they go, on the scheduler's task.
pub trait BatchObserver: Send {
    /// The run took `host` on, with `goal`.
    fn host_started(&mut self, host: usize, rec: &HostRecord, goal: &Goal);
    /// Whether [`Self::pass_done`] reads a pass's events (if not, they are freed on its thread).
    fn reads_events(&self) -> bool;
    fn pass_done(&mut self, host: usize, rec: &HostRecord, out: &PassOutcome);
    /// The host decided: `reached` its goal, or stopped for `reason`.
    fn host_finished(&mut self, host: usize, rec: &HostRecord, reached: bool, reason: &str);
    /// Where a host still driven got to, as `rec` has it, when the run stops short.
    fn left_off(&mut self, host: usize, rec: &HostRecord);
    fn interrupted(&mut self);
    fn finish(&mut self);
}

/// Both observers, each told everything, the first first (progress, then a recording of it).
impl<A: BatchObserver, B: BatchObserver> BatchObserver for (A, B) {
    fn host_started(&mut self, host: usize, rec: &HostRecord, goal: &Goal) {
        self.0.host_started(host, rec, goal);
        self.1.host_started(host, rec, goal);
    }

    fn reads_events(&self) -> bool {
        self.0.reads_events() || self.1.reads_events()
    }

    fn pass_done(&mut self, host: usize, rec: &HostRecord, out: &PassOutcome) {
        self.0.pass_done(host, rec, out);
        self.1.pass_done(host, rec, out);
    }

    fn host_finished(&mut self, host: usize, rec: &HostRecord, reached: bool, reason: &str) {
        self.0.host_finished(host, rec, reached, reason);
        self.1.host_finished(host, rec, reached, reason);
    }

    fn left_off(&mut self, host: usize, rec: &HostRecord) {
        self.0.left_off(host, rec);
        self.1.left_off(host, rec);
    }

    fn interrupted(&mut self) {
        self.0.interrupted();
        self.1.interrupted();
    }

    fn finish(&mut self) {
        self.0.finish();
        self.1.finish();
    }
}
