//! The runner as a controller (`bmhctl watch`, and the in-process driving of `--wait`): hosts
//! come, change and go while it runs, and none ever "finishes".
//!
//! As BMO's controller does, every host is reconciled again at the time its last pass asked
//! for (a steady host's 60 s power poll, the error backoff), and at once when it changes in the
//! store: a change is announced by a [`LiveChange`], the host is read again from the store
//! before its next pass (once its last save is on disk), and a host whose pass is waiting for
//! a backoff is run now, its failure count kept. A paused host, or one whose pass asked for no
//! requeue, waits for a change. Saves go through the same group commits as [`super::run`].

use super::due::{self, DueAsker};
use super::{GroupCommits, RunnerConfig};
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::machine::{Machine, PassOutcome, Requeue, backoff};
use crate::objects::{ObjectMap, ObjectSource, ResolvedSecret};
use crate::persist::{HostSource, RETRY_ANNOTATION, SourceChange};
use crate::record::HostRecord;
use bmh_api::ObjectKey;
use bmhctl_plugin_sdk::{ProvisionerFactory, WaitingHost};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
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

/// What the controller works with.
pub struct LiveServices {
    pub factory: Arc<dyn ProvisionerFactory>,
    pub objects: Arc<dyn ObjectSource>,
    pub clock: Arc<dyn Clock>,
    pub source: Arc<dyn HostSource>,
}

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
    let mut scan_stop = stop.clone();
    let source = services.source.clone();
    let Watching { only, poll } = watching;
    let scanner = tokio::spawn(async move {
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
                                match source.objects() {
                                    Ok(m) => objects.replace(m),
                                    Err(e) => {
                                        tracing::warn!("cannot read the objects: {}", e.chain())
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
                _ = scan_stop.changed() => return,
            }
        }
    });
    let result = run_live(services, config, rx, observer, stop).await;
    scanner.abort();
    result
}

struct LiveSlot {
    key: ObjectKey,
    record: Option<HostRecord>,
    /// Read the host from the store before its next pass.
    stale: bool,
    in_flight: bool,
    /// Waiting for its last save to be on disk.
    parked: bool,
    /// When it should run once its save is on disk.
    want: Option<Instant>,
    gone: bool,
    error_failures: u32,
    /// Only the due entry with the slot's current token counts.
    token: u64,
    /// Counts the host's passes started: a change report answers for one generation.
    generation: u64,
    /// Since when, and on what, the host's next pass waits on the provisioner.
    waiting: Option<(Instant, WaitingHost)>,
}

enum Done {
    Pass {
        host: usize,
        record: Box<HostRecord>,
        outcome: PassOutcome,
        staged_ticket: Option<u64>,
        stage_error: Option<Error>,
    },
    Gone {
        host: usize,
    },
    Unreadable {
        host: usize,
        record: Option<Box<HostRecord>>,
        error: Error,
    },
}

/// Reconciles hosts as they are announced on `changes` until `stop` turns true; then lets the
/// passes in flight finish and their saves reach the disk, and returns.
pub async fn run_live(
    services: LiveServices,
    config: RunnerConfig,
    mut changes: mpsc::UnboundedReceiver<LiveChange>,
    mut observer: Observer,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Result<()> {
    let LiveServices {
        factory,
        objects,
        clock,
        source,
    } = services;
    let mut slots: Vec<LiveSlot> = Vec::new();
    let mut index: HashMap<ObjectKey, usize> = HashMap::new();
    let mut due: BinaryHeap<Reverse<(Instant, usize, u64)>> = BinaryHeap::new();
    let mut rng = match config.seed {
        Some(s) => fastrand::Rng::with_seed(s),
        None => fastrand::Rng::new(),
    };
    let (tx, mut rx) = mpsc::unbounded_channel::<Done>();
    let mut commits = GroupCommits::new(source.groups(), config.commit_interval);
    let mut in_flight = 0usize;
    let mut stopping = *stop.borrow();
    let mut changes_open = true;
    let mut fatal: Option<Error> = None;
    let mut asker = DueAsker::new(factory.clone(), config.timing);

    fn schedule(
        due: &mut BinaryHeap<Reverse<(Instant, usize, u64)>>,
        slot: &mut LiveSlot,
        host: usize,
        at: Instant,
    ) {
        slot.token += 1;
        due.push(Reverse((at, host, slot.token)));
    }

    loop {
        if !stopping && fatal.is_none() {
            let now = Instant::now();
            while in_flight < config.concurrency {
                let Some(Reverse((at, host, token))) = due.peek().copied() else {
                    break;
                };
                if at > now {
                    break;
                }
                due.pop();
                let slot = &mut slots[host];
                if slot.token != token || slot.gone || slot.in_flight || slot.parked {
                    continue;
                }
                slot.in_flight = true;
                slot.generation += 1;
                slot.waiting = None;
                in_flight += 1;
                let record = if slot.stale { None } else { slot.record.take() };
                slot.stale = false;
                let key = slot.key.clone();
                let seed = rng.u64(..);
                let (factory, objects, clock, source, machine_config, tx) = (
                    factory.clone(),
                    objects.clone(),
                    clock.clone(),
                    source.clone(),
                    config.machine.clone(),
                    tx.clone(),
                );
                tokio::task::spawn_blocking(move || {
                    let loaded_now = record.is_none();
                    let mut record = match record {
                        Some(r) => r,
                        None => match source.load(&key) {
                            Ok(Some(r)) => r,
                            Ok(None) => {
                                let _ = tx.send(Done::Gone { host });
                                return;
                            }
                            Err(error) => {
                                let _ = tx.send(Done::Unreadable {
                                    host,
                                    record: None,
                                    error,
                                });
                                return;
                            }
                        },
                    };
                    // A host read afresh (a hand edit of the store reaches watch this way) is
                    // checked with BMO's admission rules, as `apply` checks it; a host being
                    // deleted is not, so an invalid host can still be removed.
                    if loaded_now && record.host.metadata.deletion_timestamp.is_none() {
                        let errors = crate::validate::validate(&record.host, None);
                        if !errors.is_empty() {
                            let texts: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
                            let _ = tx.send(Done::Unreadable {
                                host,
                                record: None,
                                error: crate::error::Error::invalid(format!(
                                    "refused by BMO's admission rules, not reconciled until its \
                                     file changes: {}",
                                    texts.join("; ")
                                )),
                            });
                            return;
                        }
                    }
                    let retry = record
                        .host
                        .metadata
                        .annotations
                        .remove(RETRY_ANNOTATION)
                        .is_some();
                    let machine = Machine {
                        factory: factory.as_ref(),
                        objects: objects.as_ref(),
                        clock: clock.as_ref(),
                        config: &machine_config,
                    };
                    let mut rng = fastrand::Rng::with_seed(seed);
                    let mut outcome = machine.reconcile(&mut record, &mut rng);
                    if retry {
                        outcome
                            .removed_annotations
                            .push(RETRY_ANNOTATION.to_string());
                    }
                    if !outcome.events.is_empty()
                        && let Err(e) = source.record_events(host, &outcome.events)
                    {
                        tracing::warn!("cannot record events: {}", e.chain());
                    }
                    let (stage_error, staged_ticket) = match super::staged(&outcome, &record) {
                        Some(s) => match source.stage(host, &s) {
                            Ok(t) => (None, Some(t)),
                            Err(e) => (Some(e), None),
                        },
                        None => (None, None),
                    };
                    let _ = tx.send(Done::Pass {
                        host,
                        record: Box::new(record),
                        outcome,
                        staged_ticket,
                        stage_error,
                    });
                });
            }
        }

        let b = source.clone();
        commits.start_ready(move |group| b.commit(group));

        if (stopping || fatal.is_some()) && in_flight == 0 && !commits.busy() {
            break;
        }

        // Ask the provisioner which waiting hosts are due (change-driven timing).
        if !stopping && fatal.is_none() {
            asker.maybe_ask(|| {
                super::waiting_hosts(
                    slots
                        .iter()
                        .enumerate()
                        .map(|(i, s)| (i, s.generation, s.waiting.as_ref().filter(|_| !s.gone))),
                )
            });
        }

        let next_due = due
            .peek()
            .map(|Reverse((at, _, _))| *at)
            .filter(|_| in_flight < config.concurrency && !stopping && fatal.is_none());
        let next_ask = asker.next_ask().filter(|_| !stopping && fatal.is_none());
        let wake_at = [next_due, commits.next_ready_at(), next_ask]
            .into_iter()
            .flatten()
            .min();
        let sleep = super::sleep_until(wake_at);
        tokio::select! {
            Some(done) = rx.recv() => {
                in_flight -= 1;
                match done {
                    Done::Gone { host } => {
                        let slot = &mut slots[host];
                        slot.in_flight = false;
                        slot.gone = true;
                    }
                    Done::Unreadable { host, record, error } => {
                        let slot = &mut slots[host];
                        slot.in_flight = false;
                        slot.record = record.map(|r| *r);
                        slot.stale = true;
                        // Waits for the next change of its file.
                        tracing::warn!("BareMetalHost {}: {}", slot.key, error.chain());
                    }
                    Done::Pass { host, record, outcome, staged_ticket, stage_error } => {
                        let slot = &mut slots[host];
                        slot.in_flight = false;
                        if let Some(e) = stage_error {
                            fatal.get_or_insert(e);
                            slot.record = Some(*record);
                            continue;
                        }
                        observer(&slot.key, &record, &outcome);
                        let next = next_pass(slot, &outcome, &config);
                        if let Some(on) = outcome.wait.filter(|_| next.is_some() && !outcome.deleted) {
                            slot.waiting = Some((Instant::now(), due::waiting_host(&record, on)));
                            asker.host_waits();
                        }
                        if outcome.deleted {
                            slot.gone = true;
                            slot.record = None;
                        } else {
                            slot.record = Some(*record);
                        }
                        let now = Instant::now();
                        let at = if slot.stale { Some(now) } else { next.map(|d| now + d) };
                        match staged_ticket {
                            Some(ticket) => {
                                let group = source.group_of(host);
                                commits.staged(group, ticket);
                                if commits.park(group, ticket, host, now) {
                                    slot.parked = true;
                                    slot.want = at;
                                } else if let Some(at) = at
                                    && !slot.gone
                                    && !stopping
                                {
                                    schedule(&mut due, slot, host, at);
                                }
                            }
                            None => {
                                if let Some(at) = at && !slot.gone {
                                    schedule(&mut due, slot, host, at);
                                }
                            }
                        }
                    }
                }
            }
            Some((group, result)) = commits.recv() => {
                let ticket = match result {
                    Ok(t) => t,
                    Err(e) => {
                        // Not fatal to a controller: the host is read again and retried.
                        tracing::warn!("cannot save: {}", e.chain());
                        0
                    }
                };
                if ticket == 0 {
                    // What the group held is read again before its hosts' next passes.
                    for (host, slot) in slots.iter_mut().enumerate() {
                        if source.group_of(host) == group {
                            slot.stale = true;
                        }
                    }
                }
                for (host, _) in commits.finished(group, ticket) {
                    let slot = &mut slots[host];
                    slot.parked = false;
                    if let Some(at) = slot.want.take()
                        && !slot.gone
                        && !stopping
                    {
                        schedule(&mut due, slot, host, at);
                    }
                }
            }
            change = changes.recv(), if changes_open => {
                match change {
                    None => changes_open = false,
                    Some(LiveChange::Host(key)) => {
                        let host = match index.get(&key) {
                            Some(&i) => i,
                            None => {
                                let i = source.add_host(key.clone());
                                commits.grow(source.groups());
                                debug_assert_eq!(i, slots.len());
                                slots.push(LiveSlot {
                                    key: key.clone(),
                                    record: None,
                                    stale: true,
                                    in_flight: false,
                                    parked: false,
                                    want: None,
                                    gone: false,
                                    error_failures: 0,
                                    token: 0,
                                    generation: 0,
                                    waiting: None,
                                });
                                index.insert(key, i);
                                i
                            }
                        };
                        let slot = &mut slots[host];
                        slot.stale = true;
                        slot.gone = false;
                        let now = Instant::now();
                        if slot.in_flight {
                            // Runs again as soon as this pass's save is on disk.
                        } else if slot.parked {
                            slot.want = Some(now);
                        } else {
                            schedule(&mut due, slot, host, now);
                        }
                    }
                    Some(LiveChange::Gone(key)) => {
                        if let Some(&host) = index.get(&key) {
                            let slot = &mut slots[host];
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
            answer = asker.recv() => {
                let now = Instant::now();
                for (host, generation) in asker.answered(answer) {
                    let slot = &mut slots[host];
                    // Only a host still idle after the pass the report answers for: never two
                    // passes of one host at once.
                    if slot.generation != generation
                        || slot.in_flight
                        || slot.gone
                        || slot.waiting.take().is_none()
                    {
                        continue;
                    }
                    if slot.parked {
                        if slot.want.is_some() {
                            slot.want = Some(now);
                        }
                    } else {
                        schedule(&mut due, slot, host, now);
                    }
                }
            }
            changed = stop.changed(), if !stopping => {
                if changed.is_err() || *stop.borrow() {
                    stopping = true;
                }
            }
            _ = sleep => {}
        }
    }
    match fatal {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// After a pass: when the host runs again, if nothing changes meanwhile.
fn next_pass(slot: &mut LiveSlot, out: &PassOutcome, config: &RunnerConfig) -> Option<Duration> {
    if out.deleted || out.paused {
        return None;
    }
    let bmo_delay = match out.requeue {
        Requeue::After(d) => {
            slot.error_failures = 0;
            d
        }
        Requeue::ErrorBackoff => {
            let d = backoff::error_retry_delay(slot.error_failures);
            slot.error_failures += 1;
            d
        }
        Requeue::Never => return None,
    };
    let mut after = bmo_delay.mul_f64(config.time_scale);
    // A controller never ends: with delays scaled to (almost) nothing, a steady host's poll
    // and a failing host's retries must not spin.
    if out.steady {
        after = after.max(MIN_STEADY_REQUEUE);
    } else if !bmo_delay.is_zero() {
        after = after.max(MIN_REQUEUE);
    }
    Some(after)
}

/// The shortest wait before a steady host's next poll, whatever `BMHCTL_TIME_SCALE` says.
pub const MIN_STEADY_REQUEUE: Duration = Duration::from_millis(500);
/// The shortest wait BMO's non-zero delays become.
pub const MIN_REQUEUE: Duration = Duration::from_millis(10);
