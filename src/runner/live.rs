//! The runner as a controller (`bmhctl watch`, `--wait`): hosts come, change and go.

use super::RunnerConfig;
use super::changes::scan;
use super::heartbeat::Heartbeat;
use super::rate_limit::RateLimiter;
use super::scheduler::{Next, Policy, Scheduler, Slot, Stop};
use crate::error::{Error, Result};
use crate::machine::PassOutcome;
use crate::record::HostRecord;
use bmh_api::ObjectKey;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// What the controller works with: the batch's services.
pub type LiveServices = super::Services;

pub use super::changes::{LiveChange, LiveObjects};
pub use super::observer::Observer;

/// What a controller watches: only these hosts (all when `None`), polled every `poll`.
pub struct Watching {
    pub only: Option<BTreeSet<ObjectKey>>,
    pub poll: Duration,
    /// Told the number of hosts once the source's first scan has announced them.
    pub loaded: Option<Loaded>,
    /// Beaten by the scheduler's loop while it turns.
    pub heartbeat: Option<Heartbeat>,
}

/// Called once with the number of hosts the first scan of the source found.
pub type Loaded = Box<dyn FnOnce(usize) + Send>;

/// BMO's controller over a host source, polled every `poll`, until `stop`.
pub async fn control(
    services: LiveServices,
    objects: Arc<LiveObjects>,
    watching: Watching,
    config: RunnerConfig,
    observer: Observer,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Result<()> {
    let (tx, rx) = mpsc::unbounded_channel();
    let Watching {
        only,
        poll,
        loaded,
        heartbeat,
    } = watching;
    let only_subscriptions = only.clone();
    let wanted_subscriptions: Arc<dyn Fn(&ObjectKey) -> bool + Send + Sync> =
        Arc::new(move |k| only_subscriptions.as_ref().is_none_or(|o| o.contains(k)));
    let scanner = scan(
        services.source.clone(),
        only,
        poll,
        Some(objects),
        tx,
        stop.clone(),
        loaded,
    );
    // BMO's BMCEventSubscription controller runs beside the hosts' one.
    let subscriptions = tokio::spawn(super::event_subscriptions::control(
        services.clone(),
        config.time_scale,
        poll,
        wanted_subscriptions,
        stop.clone(),
    ));
    let stopped = stop.clone();
    let result = run_live(services, config, rx, observer, stop, heartbeat).await;
    scanner.abort();
    if *stopped.borrow() {
        // Told to stop: a reconcile in flight finishes (its status reaches the disk).
        let _ = subscriptions.await;
    } else {
        subscriptions.abort();
    }
    result
}

/// Reconciles hosts announced on `changes` until `stop`; then lets passes and saves finish.
/// The loop beats `heartbeat` while it turns.
pub async fn run_live(
    services: LiveServices,
    config: RunnerConfig,
    changes: mpsc::UnboundedReceiver<LiveChange>,
    observer: Observer,
    stop: tokio::sync::watch::Receiver<bool>,
    heartbeat: Option<Heartbeat>,
) -> Result<()> {
    let live = Live {
        changes: Some(changes),
        observer,
        index: HashMap::new(),
    };
    Scheduler::new(services, config, live)
        .with_heartbeat(heartbeat)
        .run(stop)
        .await
}

/// The controller policy: hosts come, change and go; the run ends when told to stop.
pub(crate) struct Live {
    /// `None` once nobody sends any more.
    changes: Option<mpsc::UnboundedReceiver<LiveChange>>,
    observer: Observer,
    index: HashMap<ObjectKey, usize>,
}

/// The shortest wait before a steady host's next poll, whatever `BMHCTL_TIME_SCALE` says.
pub const MIN_STEADY_REQUEUE: Duration = Duration::from_millis(500);
/// The shortest wait BMO's non-zero delays become.
pub const MIN_REQUEUE: Duration = Duration::from_millis(10);

impl Policy for Live {
    const TAKES_RETRY: bool = true;
    const STOPS_WITH_OWNER: bool = true;

    fn changes(&mut self, _running: bool) -> Option<&mut mpsc::UnboundedReceiver<LiveChange>> {
        self.changes.as_mut()
    }

    fn on_change(s: &mut Scheduler<Self>, change: Option<LiveChange>) {
        let live = &mut s.policy;
        match change {
            None => live.changes = None,
            Some(LiveChange::Host(key)) => {
                let host = match live.index.get(&key) {
                    Some(&i) => i,
                    None => s.add_slot(key.clone(), None),
                };
                s.policy.index.insert(key, host);
                s.slots[host].gone = false;
                // Runs again as soon as a pass in flight has its save on disk.
                s.read_again(host);
            }
            Some(LiveChange::Gone(key)) => {
                if let Some(&host) = live.index.get(&key) {
                    let slot = &mut s.slots[host];
                    slot.gone = true;
                    slot.stale = true;
                    slot.record = None;
                    slot.want = None;
                    slot.waiting = None;
                    slot.token += 1;
                }
            }
        }
    }

    /// A host stops only when deleted; waits are bounded below so that scaled delays never spin.
    fn after_pass(
        &mut self,
        slot: &mut Slot,
        _host: usize,
        rec: &HostRecord,
        out: &PassOutcome,
        config: &RunnerConfig,
    ) -> Next {
        (self.observer)(&slot.key, rec, out);
        if out.deleted() {
            return Next::Stop(Stop {
                reached: false,
                reason: String::new(),
                deleted: true,
            });
        }
        if out.paused() {
            // BMO asks nothing for a paused host: controller-runtime forgets its failures.
            slot.limiter = RateLimiter::default();
            return Next::Idle;
        }
        // Errors and zero-delay requeues go through BMO's rate limiter, as in BMO's controller.
        let Some(bmo_delay) = slot.limiter.delay(out.requeue) else {
            return Next::Idle;
        };
        let after = bmo_delay.mul_f64(config.time_scale);
        // With delays scaled to nothing, a steady poll and retries must not spin.
        Next::After(match (out.steady(), bmo_delay.is_zero()) {
            (true, _) => after.max(MIN_STEADY_REQUEUE),
            (false, false) => after.max(MIN_REQUEUE),
            (false, true) => after,
        })
    }

    /// Deleted: forgotten until it comes back.
    fn stop(&mut self, slot: &mut Slot, _host: usize, _record: Box<HostRecord>, _stop: Stop) {
        slot.gone = true;
        slot.record = None;
    }

    /// Not fatal to a controller: the group is read again before its hosts' next passes.
    fn commit_failed(s: &mut Scheduler<Self>, group: usize, e: Error) {
        tracing::warn!("cannot save: {}", e.chain());
        let source = &s.context.services.source;
        for (host, slot) in s.slots.iter_mut().enumerate() {
            if source.group_of(host) == group {
                slot.stale = true;
            }
        }
    }
}
