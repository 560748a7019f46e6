//! The runner as a controller (`bmhctl watch`, and the in-process driving of `--wait`): hosts
//! come, change and go while it runs, and none ever "finishes".
//!
//! As BMO's controller does, every host is reconciled again at the time its last pass asked
//! for (a steady host's 60 s power poll, the error backoff), and at once when it changes in the
//! store: a change is announced by a [`LiveChange`], the host is read again from the store
//! before its next pass (once its last save is on disk), and a host whose pass is waiting for
//! a backoff is run now, its failure count kept. A paused host, or one whose pass asked for no
//! requeue, waits for a change. It is the scheduler of `provision` ([`super::run`]) without a
//! finish: the same passes, group commits and change-driven wake-ups.

use super::RunnerConfig;
use super::changes::scan;
use super::scheduler::Scheduler;
use crate::error::Result;
use bmh_api::ObjectKey;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// What the controller works with: the batch's services.
pub type LiveServices = super::Services;

pub use super::changes::{LiveChange, LiveObjects};
pub use super::observer::Observer;

/// What a controller watches: only these hosts (all when `None`), looking for changes every
/// `poll`.
pub struct Watching {
    pub only: Option<BTreeSet<ObjectKey>>,
    pub poll: Duration,
}

/// BMO's controller over a host source: asks it for changes every `poll` (on a blocking
/// thread), refreshes `objects` when its objects change, and feeds the hosts' changes to
/// [`run_live`] until `stop` turns true. `services.objects` is `objects`.
pub async fn control(
    services: LiveServices,
    objects: Arc<LiveObjects>,
    watching: Watching,
    config: RunnerConfig,
    observer: Observer,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Result<()> {
    let (tx, rx) = mpsc::unbounded_channel();
    let Watching { only, poll } = watching;
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
    );
    // BMO's BMCEventSubscription controller runs beside the hosts' one.
    let subscriptions = tokio::spawn(super::event_subscriptions::control(
        services.shared(),
        config.time_scale,
        poll,
        wanted_subscriptions,
        stop.clone(),
    ));
    let stopped = stop.clone();
    let result = run_live(services, config, rx, observer, stop).await;
    scanner.abort();
    if *stopped.borrow() {
        // Told to stop: a reconcile in flight finishes (its status reaches the disk).
        let _ = subscriptions.await;
    } else {
        subscriptions.abort();
    }
    result
}

/// Reconciles hosts as they are announced on `changes` until `stop` turns true; then lets the
/// passes in flight finish and their saves reach the disk, and returns.
pub async fn run_live(
    services: LiveServices,
    config: RunnerConfig,
    changes: mpsc::UnboundedReceiver<LiveChange>,
    observer: Observer,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Result<()> {
    Scheduler::live(services, config, changes, observer)
        .run(stop)
        .await
}
