//! Drives hosts through passes: a batch ([`run`]) or a controller ([`live`]).

mod batch;
mod changes;
mod due;
mod due_queue;
pub mod event_subscriptions;
pub mod goal;
mod group_commits;
pub mod heartbeat;
pub mod live;
mod observer;
mod pass;
mod rate_limit;
mod scheduler;
mod workers;

pub use due::{MIN_ASK_INTERVAL, Timing};
pub use goal::Goal;
pub use heartbeat::{Heartbeat, Pulse};
pub use observer::BatchObserver;

use crate::clock::Clock;
use crate::error::Result;
use crate::machine::MachineConfig;
use crate::objects::ObjectSource;
use crate::persist::HostSource;
use crate::record::HostRecord;
use bmhctl_plugin_sdk::ProvisionerFactory;
#[cfg(test)]
use group_commits::GroupCommits;
use scheduler::Scheduler;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How the runner behaves.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    pub concurrency: usize,
    /// Multiplies every delay; 0 runs passes back to back.
    pub time_scale: f64,
    /// A host stops when its next pass would come later than this (in wall time, or in BMO time
    /// when delays are scaled down).
    pub timeout: Duration,
    pub seed: Option<u64>,
    /// The shortest time between two rewrites of one file.
    pub commit_interval: Duration,
    pub machine: MachineConfig,
    /// When passes run: BMO's requeue times only, or earlier on a provisioner's change report.
    pub timing: Timing,
}

impl RunnerConfig {
    /// Passes in flight by default: a fixed 8, not the CPU count, as passes mostly wait on the
    /// provisioner (Ironic), not on a CPU. Bounded for a small Ironic: the all-in-one API server
    /// has 10 request threads, and 8 passes with one request each plus the one shared node
    /// listing stay under that.
    pub const DEFAULT_CONCURRENCY: usize = 8;
}

impl Default for RunnerConfig {
    fn default() -> Self {
        Self {
            concurrency: Self::DEFAULT_CONCURRENCY,
            time_scale: 1.0,
            timeout: Duration::from_secs(3600),
            seed: None,
            commit_interval: Duration::from_millis(100),
            machine: MachineConfig::default(),
            timing: Timing::default(),
        }
    }
}

/// One host to drive.
pub struct HostJob {
    pub record: HostRecord,
    pub goal: Goal,
}

/// How a host ended.
#[derive(Debug, Clone, PartialEq)]
pub struct HostResult {
    pub record: HostRecord,
    pub goal: Goal,
    pub reached: bool,
    /// Why the host stopped short of its goal.
    pub reason: String,
    pub passes: u64,
    pub deleted: bool,
}

/// What the runner works with: the provisioner, the companion objects, time, and the disk.
#[derive(Clone)]
pub struct Services {
    pub factory: Arc<dyn ProvisionerFactory>,
    pub objects: Arc<dyn ObjectSource>,
    pub clock: Arc<dyn Clock>,
    pub source: Arc<dyn HostSource>,
}

/// How a batch takes the edits made to its hosts' source while it runs (`provision` on files),
/// as BMO reconciles an updated object: an edited host goes on with its new spec (and the
/// status and bookkeeping the run holds) once BMO's update rules accept it, and stops with
/// their error when they do not; a host added is driven too when the selection takes it; a
/// host removed stops. A host that has decided is not driven again.
pub struct TakeEdits {
    /// How often the source is asked for changes.
    pub poll: Duration,
    /// Whether the command's selection (names, `-l`) takes a host added during the run.
    pub selects: Box<dyn Fn(&HostRecord) -> bool + Send>,
    /// Prepares a host read afresh as the run's hosts were (e.g. `deprovision`'s masked
    /// image) and gives its goal.
    pub prepare: Box<dyn FnMut(&mut HostRecord) -> Goal + Send>,
}

/// Runs every job to its end (or until interrupted), taking the edits of the source as
/// `edits` says (none when `None`), and returns the results in job order.
pub async fn run(
    jobs: Vec<HostJob>,
    services: Services,
    config: RunnerConfig,
    progress: Box<dyn BatchObserver>,
    interrupt: tokio::sync::watch::Receiver<bool>,
    edits: Option<TakeEdits>,
) -> Result<Vec<HostResult>> {
    let scanner = edits.as_ref().map(|e| {
        let (tx, rx) = mpsc::unbounded_channel();
        let task = changes::scan(
            services.source.clone(),
            None,
            e.poll,
            None,
            tx,
            interrupt.clone(),
            None,
        );
        (task, rx)
    });
    let (task, changes) = scanner.unzip();
    let deadline = std::time::Instant::now() + config.timeout;
    let time_scale = config.time_scale;
    let subscriptions = services.clone();
    let mut scheduler = Scheduler::batch(jobs, services, config, progress);
    if let (Some(edits), Some(changes)) = (edits, changes) {
        scheduler.take_edits(edits, changes);
    }
    let result = scheduler.run(interrupt).await;
    if let Some(task) = task {
        task.abort();
    }
    result?;
    let results = scheduler.results();
    // BMO's BMCEventSubscription controller, over the subscriptions of the run's hosts.
    event_subscriptions::settle(&subscriptions, &results, time_scale, deadline).await?;
    Ok(results)
}

#[cfg(test)]
mod tests;
