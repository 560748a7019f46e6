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
use super::scheduler::Scheduler;
use crate::error::Result;
use crate::machine::PassOutcome;
use crate::objects::{ObjectMap, ObjectSource, ResolvedSecret};
use crate::persist::SourceChange;
use crate::record::HostRecord;
use bmh_api::ObjectKey;
use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::mpsc;

/// What the host source tells the controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveChange {
    /// A host appeared or changed: read it again and reconcile it now.
    Host(ObjectKey),
    /// A host is gone from the store.
    Gone(ObjectKey),
}

/// Called after every pass, on the controller's task.
pub type Observer = Box<dyn FnMut(&ObjectKey, &HostRecord, &PassOutcome) + Send>;

/// What the controller works with: the batch's services.
pub type LiveServices = super::Services;

/// Companion objects read from a host source, replaced when they change there.
#[derive(Default)]
pub struct LiveObjects(RwLock<Arc<ObjectMap>>);

impl LiveObjects {
    fn current(&self) -> Arc<ObjectMap> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn replace(&self, map: ObjectMap) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(map);
    }
}

impl ObjectSource for LiveObjects {
    fn secret(&self, key: &ObjectKey) -> Option<Arc<ResolvedSecret>> {
        self.current().secret(key)
    }

    fn object(&self, api_version: &str, kind: &str, key: &ObjectKey) -> Option<serde_json::Value> {
        self.current().object(api_version, kind, key)
    }
}

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

/// Asks `source` for changes every `poll` (on a blocking thread) and sends those of the hosts
/// in `only` (all when `None`) on `tx`, refreshing `objects` when the objects change (a batch,
/// whose objects are fixed, gives none), until `stop` changes or nobody listens.
pub(super) fn scan(
    source: Arc<dyn crate::persist::HostSource>,
    only: Option<BTreeSet<ObjectKey>>,
    poll: Duration,
    objects: Option<Arc<LiveObjects>>,
    tx: mpsc::UnboundedSender<LiveChange>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let wanted = |k: &ObjectKey| only.as_ref().is_none_or(|o| o.contains(k));
        loop {
            let scanned = source.clone();
            let result = tokio::task::spawn_blocking(move || scanned.changes())
                .await
                .expect("a scan does not panic");
            match result {
                Ok(changes) => {
                    for c in changes {
                        let sent = match c {
                            SourceChange::Host(k) if wanted(&k) => tx.send(LiveChange::Host(k)),
                            SourceChange::HostGone(k) if wanted(&k) => tx.send(LiveChange::Gone(k)),
                            SourceChange::Host(_) | SourceChange::HostGone(_) => Ok(()),
                            SourceChange::Objects => {
                                if let Some(objects) = &objects {
                                    match source.objects() {
                                        Ok(m) => objects.replace(m),
                                        Err(e) => {
                                            tracing::warn!("cannot read the objects: {}", e.chain())
                                        }
                                    }
                                }
                                Ok(())
                            }
                        };
                        if sent.is_err() {
                            return;
                        }
                    }
                }
                Err(e) => tracing::warn!("cannot look for changes: {}", e.chain()),
            }
            tokio::select! {
                _ = tokio::time::sleep(poll) => {}
                _ = stop.changed() => return,
                _ = tx.closed() => return,
            }
        }
    })
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

/// The shortest wait before a steady host's next poll, whatever `BMHCTL_TIME_SCALE` says.
pub const MIN_STEADY_REQUEUE: Duration = Duration::from_millis(500);
/// The shortest wait BMO's non-zero delays become.
pub const MIN_REQUEUE: Duration = Duration::from_millis(10);
