//! Drives hosts through passes until each is stable: the scheduler.
//!
//! Modelled on kube-rs' controller: every host has a next-due time; at most `concurrency` passes
//! run at once and never two of one host; a pass returns an action (come back after D, or wait
//! for a change). Passes run on blocking threads because provisioner calls are synchronous.
//! Saves are staged into the host's commit group (its file) and committed at a bounded rate
//! (group commit); a host's next pass waits until its last save is on disk.

mod due;
pub mod goal;
pub mod live;
mod progress;

pub use due::{MIN_ASK_INTERVAL, Timing};
pub use goal::Goal;
pub use progress::{Progress, ProgressMode};

use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::machine::{Machine, MachineConfig, PassOutcome, Requeue, backoff};
use crate::objects::ObjectSource;
use crate::persist::{HostSource, Staged};
use crate::record::HostRecord;
use bmh_api::{ErrorType, OperationalStatus, ProvisioningState};
use bmhctl_plugin_sdk::{ProvisionerFactory, WaitingHost};
use due::DueAsker;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::time::{Duration, Instant};
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

    pub fn default_concurrency() -> usize {
        Self::DEFAULT_CONCURRENCY
    }
}

impl Default for RunnerConfig {
    fn default() -> Self {
        Self {
            concurrency: Self::default_concurrency(),
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

/// The runner's view of one host between passes.
struct Slot {
    record: Option<HostRecord>,
    goal: Goal,
    passes: u64,
    error_failures: u32,
    /// BMO time this host has waited so far (delays before scaling).
    virtual_elapsed: Duration,
    done: Option<HostResult>,
    /// Waiting for this commit of its group before the next pass.
    awaiting: Option<(usize, u64)>,
    /// Parked until its last save is on disk.
    parked: bool,
    /// Run as soon as its save is on disk (the provisioner reported it due meanwhile).
    wake_now: bool,
    /// Only the due entry with the slot's current token counts.
    token: u64,
    /// Counts the host's passes started: a change report answers for one generation.
    generation: u64,
    /// Since when, and on what, the host's next pass waits on the provisioner.
    waiting: Option<(Instant, WaitingHost)>,
    /// When its next pass is due at BMO's (scaled) time; its BMO delay is already counted in
    /// `virtual_elapsed`, so a host woken earlier is credited back the part it did not wait.
    bmo_due: Option<Instant>,
}

impl Slot {
    /// The host runs now, before its BMO time: count only the BMO time it waited.
    fn woken_early(&mut self, now: Instant, time_scale: f64) {
        if let Some(at) = self.bmo_due.take()
            && time_scale > 0.0
        {
            let unwaited = at.saturating_duration_since(now).div_f64(time_scale);
            self.virtual_elapsed = self.virtual_elapsed.saturating_sub(unwaited);
        }
    }
}

type DueQueue = BinaryHeap<Reverse<(Instant, usize, u64)>>;

/// Queues the host's next pass at `at`; any earlier entry of it no longer counts.
fn schedule(due: &mut DueQueue, slot: &mut Slot, host: usize, at: Instant) {
    slot.token += 1;
    due.push(Reverse((at, host, slot.token)));
}

/// The idle hosts whose next pass waits on the provisioner, oldest wait first.
fn waiting_hosts<'a>(
    slots: impl Iterator<Item = (usize, u64, Option<&'a (Instant, WaitingHost)>)>,
) -> Vec<(usize, u64, WaitingHost)> {
    let mut list: Vec<(Instant, usize, u64, &WaitingHost)> = slots
        .filter_map(|(i, g, w)| w.map(|(since, h)| (*since, i, g, h)))
        .collect();
    list.sort_by_key(|(since, i, _, _)| (*since, *i));
    list.into_iter()
        .map(|(_, i, g, h)| (i, g, h.clone()))
        .collect()
}

struct PassDone {
    host: usize,
    record: HostRecord,
    outcome: PassOutcome,
    stage_error: Option<Error>,
    staged_ticket: Option<u64>,
}

/// What the runner works with: the provisioner, the companion objects, time, and the disk.
pub struct Services {
    pub factory: Arc<dyn ProvisionerFactory>,
    pub objects: Arc<dyn ObjectSource>,
    pub clock: Arc<dyn Clock>,
    pub source: Arc<dyn HostSource>,
}

/// Runs every job to its end (or until interrupted) and returns the results in job order.
pub async fn run(
    jobs: Vec<HostJob>,
    services: Services,
    config: RunnerConfig,
    mut progress: Progress,
    mut interrupt: tokio::sync::watch::Receiver<bool>,
) -> Result<Vec<HostResult>> {
    let Services {
        factory,
        objects,
        clock,
        source,
    } = services;
    let started = Instant::now();
    let deadline = started + config.timeout;
    let mut slots: Vec<Slot> = jobs
        .into_iter()
        .map(|j| Slot {
            record: Some(j.record),
            goal: j.goal,
            passes: 0,
            error_failures: 0,
            virtual_elapsed: Duration::ZERO,
            done: None,
            awaiting: None,
            parked: false,
            wake_now: false,
            token: 0,
            generation: 0,
            waiting: None,
            bmo_due: None,
        })
        .collect();
    for (i, s) in slots.iter().enumerate() {
        progress.host_started(i, s.record.as_ref().unwrap(), &s.goal);
    }
    let mut due: DueQueue = BinaryHeap::new();
    for (i, slot) in slots.iter_mut().enumerate() {
        schedule(&mut due, slot, i, started);
    }
    let mut asker = DueAsker::new(factory.clone(), config.timing);
    let mut rng = match config.seed {
        Some(s) => fastrand::Rng::with_seed(s),
        None => fastrand::Rng::new(),
    };
    let (tx, mut rx) = mpsc::unbounded_channel::<PassDone>();
    let mut commits = GroupCommits::new(source.groups(), config.commit_interval);
    let mut in_flight = 0usize;
    let mut remaining = slots.len();
    let mut interrupted = false;
    let mut fatal: Option<Error> = None;

    while remaining > 0 || in_flight > 0 || commits.busy() {
        if !interrupted && fatal.is_none() {
            // Start every due pass there is room for.
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
                if slot.token != token || slot.parked || slot.done.is_some() {
                    continue;
                }
                let record = slot.record.take().expect("a due host is idle");
                slot.passes += 1;
                slot.generation += 1;
                slot.waiting = None;
                slot.bmo_due = None;
                in_flight += 1;
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
                    let mut record = record;
                    let machine = Machine {
                        factory: factory.as_ref(),
                        objects: objects.as_ref(),
                        clock: clock.as_ref(),
                        config: &machine_config,
                    };
                    let mut rng = fastrand::Rng::with_seed(seed);
                    let outcome = machine.reconcile(&mut record, &mut rng);
                    if !outcome.events.is_empty()
                        && let Err(e) = source.record_events(host, &outcome.events)
                    {
                        tracing::warn!("cannot record events: {}", e.chain());
                    }
                    let staged = staged(&outcome, &record);
                    let (stage_error, staged_ticket) = match staged {
                        Some(s) => match source.stage(host, &s) {
                            Ok(t) => (None, Some(t)),
                            Err(e) => (Some(e), None),
                        },
                        None => (None, None),
                    };
                    let _ = tx.send(PassDone {
                        host,
                        record,
                        outcome,
                        stage_error,
                        staged_ticket,
                    });
                });
            }
        }

        // Commit groups that are ready.
        let b = source.clone();
        commits.start_ready(move |group| b.commit(group));

        // Ask the provisioner which waiting hosts are due (change-driven timing).
        if !interrupted && fatal.is_none() {
            asker.maybe_ask(|| {
                waiting_hosts(slots.iter().enumerate().map(|(i, s)| {
                    (
                        i,
                        s.generation,
                        s.waiting.as_ref().filter(|_| s.done.is_none()),
                    )
                }))
            });
        }

        // A due host only wakes the loop when there is room to run it; otherwise a finished
        // pass will.
        let next_due = due
            .peek()
            .map(|Reverse((at, _, _))| *at)
            .filter(|_| in_flight < config.concurrency && !interrupted && fatal.is_none());
        tracing::trace!(
            in_flight,
            remaining,
            due = due.len(),
            busy = commits.busy(),
            "runner loop"
        );
        let next_commit = commits.next_ready_at();
        let next_ask = asker.next_ask().filter(|_| !interrupted && fatal.is_none());
        let wake_at = [next_due, next_commit, next_ask]
            .into_iter()
            .flatten()
            .min();
        let sleep = sleep_until(wake_at);
        tokio::select! {
            Some(done) = rx.recv() => {
                in_flight -= 1;
                let host = done.host;
                let slot = &mut slots[host];
                if let Some(e) = done.stage_error {
                    fatal.get_or_insert(e);
                    slot.record = Some(done.record);
                    continue;
                }
                if let Some(ticket) = done.staged_ticket {
                    let group = source.group_of(host);
                    commits.staged(group, ticket);
                    slot.awaiting = Some((group, ticket));
                }
                progress.pass_done(host, &done.record, &done.outcome);
                let decision = decide(slot, &done.record, &done.outcome, &config, deadline);
                match decision {
                    Decision::Again(after) => {
                        let now = Instant::now();
                        if let Some(on) = done.outcome.wait {
                            slot.waiting = Some((now, due::waiting_host(&done.record, on)));
                            asker.host_waits();
                        }
                        slot.record = Some(done.record);
                        let at = now + after;
                        slot.bmo_due = Some(at);
                        match slot.awaiting.take() {
                            None => schedule(&mut due, slot, host, at),
                            Some((group, ticket)) => {
                                if commits.park(group, ticket, host, at) {
                                    slot.parked = true;
                                } else {
                                    schedule(&mut due, slot, host, at);
                                }
                            }
                        }
                    }
                    Decision::Stop { reached, reason, deleted } => {
                        let record = done.record;
                        progress.host_finished(host, &record, reached, &reason);
                        slot.done = Some(HostResult {
                            record,
                            goal: slot.goal.clone(),
                            reached,
                            reason,
                            passes: slot.passes,
                            deleted,
                        });
                        remaining -= 1;
                    }
                }
            }
            Some((group, result)) = commits.recv() => {
                let ticket = match result {
                    Ok(t) => t,
                    Err(e) => {
                        fatal.get_or_insert(e);
                        0
                    }
                };
                for (host, at) in commits.finished(group, ticket) {
                    let slot = &mut slots[host];
                    slot.parked = false;
                    let at = if std::mem::take(&mut slot.wake_now) { Instant::now() } else { at };
                    if !interrupted && fatal.is_none() {
                        schedule(&mut due, slot, host, at);
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
                        || slot.done.is_some()
                        || slot.record.is_none()
                        || slot.waiting.take().is_none()
                    {
                        continue;
                    }
                    slot.woken_early(now, config.time_scale);
                    if slot.parked {
                        slot.wake_now = true;
                    } else {
                        schedule(&mut due, slot, host, now);
                    }
                }
            }
            changed = interrupt.changed(), if !interrupted => {
                if changed.is_ok() && *interrupt.borrow() {
                    interrupted = true;
                    progress.interrupted();
                }
            }
            _ = sleep => {}
        }
        if (interrupted || fatal.is_some()) && in_flight == 0 && !commits.busy() {
            break;
        }
    }
    progress.finish();
    if let Some(e) = fatal {
        return Err(e);
    }
    if interrupted {
        return Err(Error::Interrupted);
    }
    Ok(slots
        .into_iter()
        .map(|s| s.done.expect("every host finished"))
        .collect())
}

enum Decision {
    Again(Duration),
    Stop {
        reached: bool,
        reason: String,
        deleted: bool,
    },
}

/// What a pass asks to persist; `None` when it changed nothing that is persisted.
pub(crate) fn staged<'a>(out: &'a PassOutcome, rec: &'a HostRecord) -> Option<Staged<'a>> {
    if out.deleted {
        return Some(Staged {
            status: Some(None),
            bookkeeping: Some(None),
            removed_annotations: &out.removed_annotations,
            // The firmware objects go with their host (BMO's owner references).
            firmware_settings_status: Some(None),
            firmware_components_status: Some(None),
        });
    }
    let firmware = out.firmware_changed;
    let staged = Staged {
        status: out.save_status.then_some(rec.host.status.as_ref()),
        bookkeeping: (out.bookkeeping_changed || firmware).then_some(Some(&rec.book)),
        removed_annotations: &out.removed_annotations,
        firmware_settings_status: rec
            .firmware_settings
            .as_ref()
            .filter(|_| firmware)
            .map(|s| s.status.as_ref()),
        firmware_components_status: rec
            .firmware_components
            .as_ref()
            .filter(|_| firmware)
            .map(|c| c.status.as_ref()),
    };
    (!staged.is_empty()).then_some(staged)
}

/// After a pass: go on (and when), or stop (and why).
fn decide(
    slot: &mut Slot,
    rec: &HostRecord,
    out: &PassOutcome,
    config: &RunnerConfig,
    deadline: Instant,
) -> Decision {
    let stop = |reached: bool, reason: String| Decision::Stop {
        reached,
        reason,
        deleted: false,
    };
    if out.deleted {
        return Decision::Stop {
            reached: slot.goal == Goal::Deleted,
            reason: String::new(),
            deleted: true,
        };
    }
    if out.paused {
        return stop(
            false,
            "paused (annotation baremetalhost.metal3.io/paused)".into(),
        );
    }
    let status = rec.status();
    let state = &status.provisioning.state;
    let op = &status.operational_status;
    if out.steady && slot.goal.reached_by(state) && *op != OperationalStatus::Error {
        return stop(true, String::new());
    }
    if *op == OperationalStatus::Detached {
        return stop(false, "detached".into());
    }
    let limit = config.machine.max_provisioning_retries;
    if limit > 0
        && status.provisioning_fail_count >= limit
        && *state == ProvisioningState::Available
        && status.error_type == ErrorType::ProvisioningError
    {
        return stop(false, status.error_message.clone());
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
        Requeue::Never => {
            let why = out
                .error
                .clone()
                .or_else(|| {
                    (!status.error_message.is_empty()).then(|| status.error_message.clone())
                })
                .unwrap_or_else(|| {
                    format!(
                        "stopped in state {:?}, waiting for a change",
                        state.as_str()
                    )
                });
            return stop(false, why);
        }
    };
    let scaled = bmo_delay.mul_f64(config.time_scale);
    slot.virtual_elapsed += bmo_delay;
    if Instant::now() + scaled > deadline
        || (config.time_scale < 1.0 && slot.virtual_elapsed > config.timeout)
    {
        let why = if !status.error_message.is_empty() {
            status.error_message.clone()
        } else if let Some(e) = &out.error {
            e.clone()
        } else {
            format!("still {:?} when the timeout ran out", state.as_str())
        };
        return stop(false, why);
    }
    Decision::Again(scaled)
}

/// The group-commit bookkeeping: which groups (files) have staged saves, when each may be
/// written again, and which hosts wait for which commit before their next pass.
/// Sleeps until `at`; forever without one.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(t.into()).await,
        None => std::future::pending().await,
    }
}

struct GroupCommits {
    interval: Duration,
    /// When the runner began: a group never committed is ready from then on.
    epoch: Instant,
    groups: Vec<GroupState>,
    tx: mpsc::UnboundedSender<(usize, Result<u64>)>,
    rx: mpsc::UnboundedReceiver<(usize, Result<u64>)>,
}

#[derive(Default)]
struct GroupState {
    staged: u64,
    committing: Option<u64>,
    committed: u64,
    last_start: Option<Instant>,
    /// How long the last commit took: the next waits a multiple of it, so that commits of a
    /// big file never hold it most of the time.
    last_duration: Duration,
    /// (ticket, host, due) of hosts parked until their save is on disk.
    parked: Vec<(u64, usize, Instant)>,
}

impl GroupCommits {
    fn new(groups: usize, interval: Duration) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            interval,
            epoch: Instant::now(),
            groups: (0..groups).map(|_| GroupState::default()).collect(),
            tx,
            rx,
        }
    }

    /// Makes room for groups added since (a controller's new hosts).
    fn grow(&mut self, groups: usize) {
        while self.groups.len() < groups {
            self.groups.push(GroupState::default());
        }
    }

    fn staged(&mut self, group: usize, ticket: u64) {
        let g = &mut self.groups[group];
        g.staged = g.staged.max(ticket);
    }

    /// Host `host` may run again at `due` once `ticket` of its group is committed; `false`
    /// when it already is (a commit that started before the pass's message arrived can carry
    /// its save), so the caller schedules the host itself: parked, it would wait for a commit
    /// that never comes.
    fn park(&mut self, group: usize, ticket: u64, host: usize, due: Instant) -> bool {
        let g = &mut self.groups[group];
        if ticket <= g.committed {
            return false;
        }
        g.parked.push((ticket, host, due));
        true
    }

    fn busy(&self) -> bool {
        self.groups
            .iter()
            .any(|g| g.committing.is_some() || g.staged > g.committed)
    }

    fn ready_at(&self, g: &GroupState) -> Option<Instant> {
        if g.committing.is_some() || g.staged <= g.committed {
            return None;
        }
        Some(
            g.last_start
                .map_or(self.epoch, |t| t + self.interval.max(g.last_duration * 4)),
        )
    }

    fn next_ready_at(&self) -> Option<Instant> {
        self.groups.iter().filter_map(|g| self.ready_at(g)).min()
    }

    /// Starts every group ready to commit, each on a blocking thread; the results come back
    /// on the commit channel.
    fn start_ready(&mut self, commit: impl Fn(usize) -> Result<u64> + Clone + Send + 'static) {
        for group in self.ready(Instant::now()) {
            self.start(group);
            let waiting = self.sender();
            let commit = commit.clone();
            tokio::task::spawn_blocking(move || {
                let _ = waiting.send((group, commit(group)));
            });
        }
    }

    fn ready(&self, now: Instant) -> Vec<usize> {
        (0..self.groups.len())
            .filter(|&i| self.ready_at(&self.groups[i]).is_some_and(|t| t <= now))
            .collect()
    }

    /// Marks a commit of `group` as started.
    fn start(&mut self, group: usize) {
        let g = &mut self.groups[group];
        g.committing = Some(g.staged);
        g.last_start = Some(Instant::now());
    }

    fn sender(&self) -> mpsc::UnboundedSender<(usize, Result<u64>)> {
        self.tx.clone()
    }

    async fn recv(&mut self) -> Option<(usize, Result<u64>)> {
        self.rx.recv().await
    }

    /// Records a finished commit; returns the hosts it released, with their due times.
    fn finished(&mut self, group: usize, ticket: u64) -> Vec<(usize, Instant)> {
        let g = &mut self.groups[group];
        let started_at = g.committing.take().unwrap_or(0);
        if let Some(t) = g.last_start {
            g.last_duration = t.elapsed();
        }
        // A failed commit (ticket 0) releases nobody; what it held is staged again.
        g.committed = g.committed.max(ticket);
        if ticket == 0 {
            g.staged = g.staged.max(started_at);
        }
        let committed = g.committed;
        let mut released = Vec::new();
        g.parked.retain(|&(t, host, due)| {
            if t <= committed {
                released.push((host, due));
                false
            } else {
                true
            }
        });
        released
    }
}

#[cfg(test)]
mod tests;
