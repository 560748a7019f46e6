//! The scheduler: the one loop that decides when each host's next pass runs, for `provision`
//! (a batch) and `watch` (a controller) alike.
//!
//! Modelled on kube-rs' controller: a pass (BMO's reconcile) returns an action, and the
//! scheduler owns timing. A host's next pass is due at the earliest of BMO's requeue time, a
//! change the provisioner reports for it, or a change of its document; at most `concurrency`
//! passes run at once, and never two of one host. A batch is the same loop over a fixed set of
//! hosts with a finish policy: a host stops being driven once it has decided (reached its goal,
//! failed, timed out), and the run ends when every host has stopped.
//!
//! Passes run on `concurrency` long-lived worker threads (provisioner calls are synchronous;
//! no more than the cores when they never block, see [`pass_threads`]), fed from one queue
//! ([`Workers`]); a host's record travels boxed, so a pass moves a pointer,
//! not the record. Saves are staged into the host's commit group (its file) and committed at a bounded
//! rate (group commit); a host's next pass waits until its last save is on disk.

use super::changes::LiveChange;
use super::due::{self, DueAsker, ReadyAsker};
use super::due_queue::DueQueue;
use super::observer::Observer;
use super::rate_limit::RateLimiter;
use super::workers::Workers;
use super::{
    GroupCommits, HostJob, HostResult, Progress, RunnerConfig, Services, TakeEdits, staged,
};
use crate::error::{Error, Result, Unfinished};
use crate::machine::{Machine, MachineConfig, PassOutcome};
use crate::persist::RETRY_ANNOTATION;
use crate::record::HostRecord;
use bmh_api::{ErrorType, ObjectKey, OperationalStatus, ProvisioningState};
use bmhctl_plugin_sdk::WaitingHost;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

use super::Goal;

/// What differs between a batch and a controller.
pub(crate) enum Mode {
    /// `provision`: a fixed set of hosts, each driven until it decides; the run ends when all
    /// have, or when interrupted (an error).
    /// Boxed: a batch holds more than a controller.
    Batch(Box<Batch>),
    /// `watch`: hosts come, change and go on `changes`, and none ever stops being driven; the
    /// run ends when told to stop.
    Live(Live),
}

pub(crate) struct Batch {
    goals: Vec<Goal>,
    results: Vec<Option<HostResult>>,
    remaining: usize,
    progress: Progress,
    /// No host's next pass is later than this.
    deadline: Instant,
    /// How edits of the source are taken, and where they come from (none: the hosts are
    /// driven as they were read).
    edits: Option<TakeEdits>,
    changes: Option<mpsc::UnboundedReceiver<LiveChange>>,
    /// The hosts by key, made at the first change of the source: a run nobody edits never
    /// holds this second copy of every key.
    index: HashMap<ObjectKey, usize>,
}

impl Batch {
    /// Ends host `host` short of its goal, with `reason`, as `record` left it.
    fn stop_host(&mut self, slot: &mut Slot, host: usize, record: HostRecord, reason: String) {
        self.progress.host_finished(host, &record, false, &reason);
        self.results[host] = Some(HostResult {
            record,
            goal: self.goals[host].clone(),
            reached: false,
            reason,
            passes: slot.passes,
            deleted: false,
        });
        self.remaining -= 1;
        slot.done = true;
        slot.record = None;
    }
}

/// The shortest wait before a steady host's next poll, whatever `BMHCTL_TIME_SCALE` says.
pub const MIN_STEADY_REQUEUE: Duration = Duration::from_millis(500);
/// The shortest wait BMO's non-zero delays become.
pub const MIN_REQUEUE: Duration = Duration::from_millis(10);

/// Why a batch's host removed from its file during the run stopped.
const REMOVED: &str = "removed from its file during the run: not driven further";

/// How long a run told to stop waits for the passes in flight and the saves under way: one
/// that hangs (a save on a stuck disk, a provisioner call that never answers) is then left
/// behind, as if the process had been killed, so that a signal always ends the run in seconds.
const STOP_GRACE: Duration = Duration::from_secs(3);

pub(crate) struct Live {
    changes: mpsc::UnboundedReceiver<LiveChange>,
    changes_open: bool,
    observer: Observer,
    index: HashMap<ObjectKey, usize>,
}

/// The scheduler's view of one host between passes.
struct Slot {
    key: ObjectKey,
    /// Boxed: a pass moves a pointer to its worker and back.
    record: Option<Box<HostRecord>>,
    passes: u64,
    /// Read the host from the store before its next pass (its document changed).
    stale: bool,
    in_flight: bool,
    /// Waiting for its last save to be on disk.
    parked: bool,
    /// When it should run once its save is on disk.
    want: Option<Instant>,
    /// Gone from the store (a controller's host may come back).
    gone: bool,
    /// A batch's host that has decided: never driven again.
    done: bool,
    /// controller-runtime's per-host limiter for errors and zero-delay requeues.
    limiter: RateLimiter,
    /// BMO time this host has waited so far (delays before scaling).
    virtual_elapsed: Duration,
    /// Only the due entry with the slot's current token counts: a host rescheduled early
    /// leaves its older entry behind, dead.
    token: u64,
    /// Counts the host's passes started: a change report answers for one generation.
    generation: u64,
    /// Since when, and on what, the host's next pass waits on the provisioner. Boxed: most
    /// slots, and every decided host's, hold none, and a slot is kept for every host.
    waiting: Option<Box<(Instant, WaitingHost)>>,
    /// When its next pass is due at BMO's (scaled) time; its BMO delay is already counted in
    /// `virtual_elapsed`, so a host woken earlier is credited back the part it did not wait.
    bmo_due: Option<Instant>,
    /// The pass after pass `generation` was already held back for its provisioner: it starts
    /// when next due, unasked (one hold per pass).
    held: Option<u64>,
    /// The commit group its pass in flight was counted in (when commits wait for passes).
    running_in: usize,
    /// A hash of the last reason it could not be read, said once (0: none): a host read
    /// again for another cause says the same reason no more.
    unreadable_said: u64,
}

impl Slot {
    fn new(key: ObjectKey, record: Option<Box<HostRecord>>) -> Self {
        Self {
            stale: record.is_none(),
            key,
            record,
            passes: 0,
            in_flight: false,
            parked: false,
            want: None,
            gone: false,
            done: false,
            limiter: RateLimiter::default(),
            virtual_elapsed: Duration::ZERO,
            token: 0,
            generation: 0,
            waiting: None,
            bmo_due: None,
            held: None,
            running_in: 0,
            unreadable_said: 0,
        }
    }

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

/// What a host does after a pass.
#[derive(Debug, PartialEq)]
enum Next {
    /// Runs again after this long, unless something wakes it earlier.
    After(Duration),
    /// Waits for a change of its document.
    Idle,
    /// Stops being driven: a batch's host decided, or the host is deleted.
    Stop {
        reached: bool,
        reason: String,
        deleted: bool,
    },
}

/// One pass for a worker.
struct Job {
    host: usize,
    /// `None`: read the host from the store first.
    record: Option<Box<HostRecord>>,
    /// With a host read afresh: the record of its last accepted spec, which BMO's update
    /// rules compare the new one with.
    accepted: Option<Box<HostRecord>>,
    key: Option<ObjectKey>,
    seed: u64,
}

/// What a worker sends back.
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
        error: Error,
        /// Kept, so that the next edit is compared with it too.
        accepted: Option<Box<HostRecord>>,
    },
}

/// What every pass works with, shared by the workers.
struct PassContext {
    services: Services,
    machine: MachineConfig,
    /// A controller: hosts are read afresh and checked, and the retry annotation is consumed.
    live: bool,
    /// The scheduler reads a pass's events (a controller's observer, verbose progress): when
    /// not, they are freed on the pass's thread once recorded, so that the scheduler's thread
    /// neither frees them nor waits on the pass thread's allocator to.
    events_read: bool,
}

/// Runs one pass on a worker.
fn run_pass(cx: &PassContext, job: Job) -> Done {
    let Job {
        host,
        record,
        accepted,
        key,
        seed,
    } = job;
    let Services {
        factory,
        objects,
        clock,
        source,
    } = &cx.services;
    let mut record = match record {
        Some(r) => r,
        None => {
            let key = key.expect("a host read afresh has a key");
            match source.load(&key) {
                Ok(Some(r)) => {
                    let r = Box::new(r);
                    let old = accepted.as_ref().map(|a| &*a.host);
                    if let Err(error) = admit(&r.host, old) {
                        return Done::Unreadable {
                            host,
                            error,
                            accepted,
                        };
                    }
                    r
                }
                Ok(None) => return Done::Gone { host },
                Err(error) => {
                    return Done::Unreadable {
                        host,
                        error,
                        accepted,
                    };
                }
            }
        }
    };
    let retry = cx.live
        && record
            .host
            .metadata
            .annotations
            .remove(RETRY_ANNOTATION)
            .is_some();
    let machine = Machine {
        factory: factory.as_ref(),
        objects: objects.as_ref(),
        clock: clock.as_ref(),
        config: &cx.machine,
    };
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut outcome = machine.reconcile(&mut record, &mut rng);
    if retry {
        outcome
            .removed_annotations
            .push(RETRY_ANNOTATION.to_string());
    }
    if !outcome.events.is_empty() && source.events_in_bookkeeping() {
        record
            .book
            .remember_events(&crate::clock::format_time(clock.now()), &outcome.events);
        outcome.bookkeeping_changed = true;
    } else if !outcome.events.is_empty()
        && let Err(e) = source.record_events(host, &outcome.events)
    {
        tracing::warn!("cannot record events: {}", e.chain());
    }
    let (stage_error, staged_ticket) = match staged(&outcome, &record) {
        Some(s) => match source.stage(host, &s) {
            Ok(t) => (None, Some(t)),
            Err(e) => (Some(e), None),
        },
        None => (None, None),
    };
    // Recorded and staged: events nobody reads further are freed here.
    if !cx.events_read {
        outcome.events = Vec::new();
    }
    Done::Pass {
        host,
        record,
        outcome,
        staged_ticket,
        stage_error,
    }
}

/// Checks a host read afresh (a hand edit of the store or of a watched file reaches watch
/// this way) with BMO's admission rules, as `apply` does: the update rules against `accepted`,
/// the host as last driven (BMO's validateChanges), so that a refused edit never reaches the
/// provisioner. A host being deleted is not checked, so an invalid host can still be removed.
fn admit(host: &bmh_api::BareMetalHost, accepted: Option<&bmh_api::BareMetalHost>) -> Result<()> {
    match refusal(host, accepted) {
        None => Ok(()),
        Some(why) => Err(Error::invalid(format!(
            "refused by BMO's admission rules, not reconciled until its file changes: {why}"
        ))),
    }
}

/// What BMO's admission rules find wrong with `host` (the update rules against `accepted`,
/// when given), one `; ` between problems; `None` when they accept it or it is being deleted.
fn refusal(
    host: &bmh_api::BareMetalHost,
    accepted: Option<&bmh_api::BareMetalHost>,
) -> Option<String> {
    if host.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let errors = crate::validate::validate(host, accepted);
    let texts: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    (!texts.is_empty()).then(|| texts.join("; "))
}

/// How many passes run at once, and how many more are queued for the threads that run them.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PassThreads {
    running: usize,
    ahead: usize,
}

/// Passes queued per thread when the provisioner never blocks: the scheduler is then woken once
/// per hundreds of passes rather than once per few, each wake-up two thread switches (at 10,000
/// fixture hosts, 32 per thread still cost 24,000 switches, 512 cost 6,000).
const AHEAD_PER_CPU_THREAD: usize = 512;

/// `concurrency` passes at once, and as many again queued, when the provisioner's calls wait
/// (on Ironic: a thread per pass waiting); when they never block, no more threads than `cores`
/// (more would only take turns on them, each turn a switch) and a deeper queue.
fn pass_threads(concurrency: usize, never_block: bool, cores: usize) -> PassThreads {
    let concurrency = concurrency.max(1);
    if never_block {
        let running = concurrency.min(cores.max(1));
        PassThreads {
            running,
            ahead: running * AHEAD_PER_CPU_THREAD,
        }
    } else {
        PassThreads {
            running: concurrency,
            ahead: concurrency,
        }
    }
}

/// The cores this process may run on.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Queues the host's next pass at `at`; any earlier entry of it no longer counts.
fn schedule(due: &mut DueQueue, slot: &mut Slot, host: usize, at: Instant) {
    slot.token += 1;
    due.push((at, host, slot.token));
}

/// The idle hosts whose next pass waits on the provisioner, oldest wait first.
fn waiting_hosts(slots: &[Slot]) -> Vec<(usize, u64, WaitingHost)> {
    let mut list: Vec<(Instant, usize, u64, &WaitingHost)> = slots
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.gone && !s.done)
        .filter_map(|(i, s)| s.waiting.as_deref().map(|(t, h)| (*t, i, s.generation, h)))
        .collect();
    list.sort_by_key(|(since, i, _, _)| (*since, *i));
    list.into_iter()
        .map(|(_, i, g, h)| (i, g, h.clone()))
        .collect()
}

/// What woke the loop.
enum Wake {
    Passes,
    Commit(usize, Result<u64>),
    Change(Option<LiveChange>),
    Answer(due::Answer),
    Stop(bool),
    /// Nobody can ask to stop any more.
    StopGone,
    Timer,
}

pub(crate) struct Scheduler {
    config: RunnerConfig,
    mode: Mode,
    slots: Vec<Slot>,
    due: DueQueue,
    workers: Workers<Job, Done>,
    threads: PassThreads,
    /// What the passes work with; the source also saves.
    context: Arc<PassContext>,
    commits: GroupCommits,
    asker: DueAsker,
    ready: ReadyAsker,
    rng: fastrand::Rng,
    in_flight: usize,
    stopping: bool,
    /// When the run was told to stop.
    stopped_at: Option<Instant>,
    fatal: Option<Error>,
}

impl Scheduler {
    fn new(services: Services, config: RunnerConfig, mode: Mode) -> Self {
        // Passes that never block come back within moments: a commit may wait for them.
        let commits = GroupCommits::new(
            services.source.groups(),
            config.commit_interval,
            services.factory.calls_never_block(),
        );
        let asker = DueAsker::new(services.factory.clone(), config.timing);
        let ready = ReadyAsker::new(services.factory.clone(), config.timing);
        let rng = match config.seed {
            Some(s) => fastrand::Rng::with_seed(s),
            None => fastrand::Rng::new(),
        };
        let live = matches!(mode, Mode::Live(_));
        let events_read = match &mode {
            Mode::Live(_) => true,
            Mode::Batch(b) => b.progress.reads_events(),
        };
        let context = Arc::new(PassContext {
            services,
            machine: config.machine.clone(),
            live,
            events_read,
        });
        let threads = pass_threads(
            config.concurrency,
            context.services.factory.calls_never_block(),
            cores(),
        );
        let workers = {
            let context = context.clone();
            Workers::new(threads.running, threads.ahead, move |job| {
                run_pass(&context, job)
            })
        };
        Self {
            config,
            mode,
            slots: Vec::new(),
            due: DueQueue::default(),
            workers,
            threads,
            context,
            commits,
            asker,
            ready,
            rng,
            in_flight: 0,
            stopping: false,
            stopped_at: None,
            fatal: None,
        }
    }

    /// A batch over `jobs`, each due now.
    pub(crate) fn batch(
        jobs: Vec<HostJob>,
        services: Services,
        config: RunnerConfig,
        mut progress: Progress,
    ) -> Self {
        let deadline = Instant::now() + config.timeout;
        let mut goals = Vec::with_capacity(jobs.len());
        let mut slots = Vec::with_capacity(jobs.len());
        for (i, j) in jobs.into_iter().enumerate() {
            progress.host_started(i, &j.record, &j.goal);
            let meta = &j.record.host.metadata;
            let key = ObjectKey::new(meta.namespace_or_default(), &meta.name);
            slots.push(Slot::new(key, Some(Box::new(j.record))));
            goals.push(j.goal);
        }
        let n = slots.len();
        let mode = Mode::Batch(Box::new(Batch {
            goals,
            results: (0..n).map(|_| None).collect(),
            remaining: n,
            progress,
            deadline,
            edits: None,
            changes: None,
            index: HashMap::new(),
        }));
        let mut s = Self::new(services, config, mode);
        s.slots = slots;
        let now = Instant::now();
        for (i, slot) in s.slots.iter_mut().enumerate() {
            schedule(&mut s.due, slot, i, now);
        }
        s
    }

    /// Takes the edits announced on `changes` as `edits` says (a batch only).
    pub(crate) fn take_edits(
        &mut self,
        edits: TakeEdits,
        changes: mpsc::UnboundedReceiver<LiveChange>,
    ) {
        if let Mode::Batch(b) = &mut self.mode {
            b.edits = Some(edits);
            b.changes = Some(changes);
        }
    }

    /// A controller over the hosts announced on `changes`.
    pub(crate) fn live(
        services: Services,
        config: RunnerConfig,
        changes: mpsc::UnboundedReceiver<LiveChange>,
        observer: Observer,
    ) -> Self {
        let mode = Mode::Live(Live {
            changes,
            changes_open: true,
            observer,
            index: HashMap::new(),
        });
        Self::new(services, config, mode)
    }

    /// The batch's results in job order, once [`Self::run`] returned `Ok`.
    pub(crate) fn results(self) -> Vec<HostResult> {
        match self.mode {
            Mode::Batch(b) => b
                .results
                .into_iter()
                .map(|r| r.expect("every host finished"))
                .collect(),
            Mode::Live(_) => Vec::new(),
        }
    }

    fn halted(&self) -> bool {
        self.stopping || self.fatal.is_some()
    }

    /// Every host of a batch has stopped.
    fn finished(&self) -> bool {
        matches!(&self.mode, Mode::Batch(b) if b.remaining == 0)
    }

    /// Drives the hosts until a batch's every host has stopped, or until `stop` turns true;
    /// then lets the passes in flight finish and their saves reach the disk. A batch stopped
    /// early ends in [`Error::Interrupted`].
    pub(crate) async fn run(&mut self, mut stop: tokio::sync::watch::Receiver<bool>) -> Result<()> {
        if *stop.borrow() {
            self.interrupt();
        }
        let mut stop_open = true;
        loop {
            if !self.halted() {
                self.start_due();
            }
            let source = self.context.services.source.clone();
            self.commits.start_ready(move |group| source.commit(group));
            if (self.halted() || self.finished()) && self.in_flight == 0 && !self.commits.busy() {
                break;
            }
            let give_up_at = self.stopped_at.map(|t| t + STOP_GRACE);
            if give_up_at.is_some_and(|t| t <= Instant::now()) {
                tracing::warn!(
                    "stopping without waiting longer for {} passes in flight and the saves under way",
                    self.in_flight
                );
                self.workers.abandon();
                break;
            }
            // Ask the provisioner which waiting hosts are due (change-driven timing).
            if !self.halted() {
                let slots = &self.slots;
                self.asker.maybe_ask(|| waiting_hosts(slots));
            }
            // A due host only wakes the loop when there is room to run it; otherwise a finished
            // pass will.
            let running = !self.halted();
            let next_due = self
                .due
                .peek()
                .map(|(at, _, _)| at)
                .filter(|_| self.in_flight < self.room() && running);
            let next_ask = self.asker.next_ask().filter(|_| running);
            let wake_at = [next_due, self.commits.next_ready_at(), next_ask, give_up_at]
                .into_iter()
                .flatten()
                .min();
            let changes = match &mut self.mode {
                Mode::Live(l) if l.changes_open => Some(&mut l.changes),
                Mode::Batch(b) if running => b.changes.as_mut(),
                _ => None,
            };
            let listen = !self.stopping && stop_open;
            let wake = tokio::select! {
                () = self.workers.results_ready() => Wake::Passes,
                Some((group, result)) = self.commits.recv() => Wake::Commit(group, result),
                change = next_change(changes) => Wake::Change(change),
                answer = self.asker.recv() => Wake::Answer(answer),
                changed = stop.changed(), if listen => match changed {
                    Ok(()) => Wake::Stop(*stop.borrow()),
                    Err(_) => Wake::StopGone,
                },
                _ = sleep_until(wake_at) => Wake::Timer,
            };
            match wake {
                Wake::Passes => {
                    for done in self.workers.take_results() {
                        self.pass_done(done);
                    }
                }
                Wake::Commit(group, result) => self.commit_done(group, result),
                Wake::Change(change) => self.change(change),
                Wake::Answer(answer) => self.answered(answer),
                Wake::Stop(true) => self.interrupt(),
                // A controller stops with its owner; a batch runs on to its end.
                Wake::StopGone => match self.mode {
                    Mode::Live(_) => self.interrupt(),
                    Mode::Batch(_) => stop_open = false,
                },
                Wake::Stop(false) | Wake::Timer => {}
            }
        }
        self.workers.stop();
        if let Mode::Batch(b) = &mut self.mode {
            // Where the hosts still driven got to, for the report of a run stopped short (a
            // pass given up on leaves its host as its ledger last had it).
            for (host, slot) in self.slots.iter().enumerate() {
                if let (false, Some(record)) = (slot.done, &slot.record) {
                    b.progress.left_off(host, record);
                }
            }
            b.progress.finish();
        }
        let batch = matches!(self.mode, Mode::Batch(_));
        if self.stopping && batch {
            // A signal ends a batch with 130 whatever else went wrong; what did is said.
            if let Some(e) = self.fatal.take() {
                tracing::error!("{}", e.chain());
            }
            return Err(Error::Interrupted);
        }
        if let Some(e) = self.fatal.take() {
            return Err(e);
        }
        Ok(())
    }

    /// Passes started and not done: those running, and those queued for the workers when more
    /// are due than can run (see [`Workers`]).
    fn room(&self) -> usize {
        self.threads.running + self.threads.ahead
    }

    fn interrupt(&mut self) {
        if self.stopping {
            return;
        }
        self.stopping = true;
        // Passes queued and not running yet never start: the host waits as if never due.
        for job in self.workers.take_queued() {
            self.unstart(job);
        }
        self.stopped_at = Some(Instant::now());
        if let Mode::Batch(b) = &mut self.mode {
            b.progress.interrupted();
        }
    }

    /// Starts every due pass there is room for; in change-driven timing, first holds back those
    /// the provisioner cannot serve yet ([`Self::hold_back`]), which take no room.
    fn start_due(&mut self) {
        let now = Instant::now();
        loop {
            let mut due_now = Vec::new();
            while self.in_flight + due_now.len() < self.room() {
                let Some((at, host, token)) = self.due.peek() else {
                    break;
                };
                if at > now {
                    break;
                }
                self.due.pop();
                let slot = &mut self.slots[host];
                if slot.token != token || slot.gone || slot.done || slot.in_flight || slot.parked {
                    continue;
                }
                if slot.stale && matches!(self.mode, Mode::Batch(_)) && !self.take_edit(host) {
                    continue;
                }
                due_now.push(host);
            }
            if due_now.is_empty() {
                break;
            }
            let held = self.hold_back(&mut due_now, now);
            for host in due_now {
                self.start(host);
            }
            // Held passes left room: fill it (each pass is held at most once).
            if !held {
                break;
            }
        }
    }

    /// Asks the provisioner, in one question, how long to hold back each pass of `hosts` that
    /// follows an earlier pass and was not held yet; reschedules those it cannot serve yet (at
    /// most [`due::MAX_HOLD`] on) and removes them from `hosts`. `true` when any was held.
    fn hold_back(&mut self, hosts: &mut Vec<usize>, now: Instant) -> bool {
        if !self.ready.enabled() {
            return false;
        }
        let asked: Vec<usize> = hosts
            .iter()
            .copied()
            .filter(|&h| {
                let s = &self.slots[h];
                s.passes > 0 && s.held != Some(s.generation) && s.record.is_some() && !s.stale
            })
            .collect();
        let starting: Vec<_> = asked
            .iter()
            .filter_map(|&h| self.slots[h].record.as_deref().map(due::starting_host))
            .collect();
        let waits = self.ready.ask(&starting);
        let mut held = Vec::new();
        for (&host, wait) in asked.iter().zip(waits) {
            if wait.is_zero() {
                continue;
            }
            let slot = &mut self.slots[host];
            slot.held = Some(slot.generation);
            schedule(&mut self.due, slot, host, now + wait);
            held.push(host);
        }
        if held.is_empty() {
            return false;
        }
        tracing::trace!(
            passes = held.len(),
            "passes held back for their provisioner"
        );
        hosts.retain(|h| !held.contains(h));
        true
    }

    /// Starts the pass of `host` on a worker.
    fn start(&mut self, host: usize) {
        let slot = &mut self.slots[host];
        slot.in_flight = true;
        slot.passes += 1;
        slot.generation += 1;
        slot.waiting = None;
        slot.bmo_due = None;
        let (record, accepted) = match slot.record.take() {
            Some(r) if slot.stale => (None, Some(r)),
            r => (r, None),
        };
        let key = record.is_none().then(|| slot.key.clone());
        slot.stale = false;
        if self.commits.holds() {
            slot.running_in = self.context.services.source.group_of(host);
            self.commits.pass_started(slot.running_in);
        }
        self.in_flight += 1;
        let seed = self.rng.u64(..);
        self.workers.run(Job {
            host,
            record,
            accepted,
            key,
            seed,
        });
    }

    /// Undoes [`Self::start`] for a pass no worker started.
    fn unstart(&mut self, job: Job) {
        let slot = &mut self.slots[job.host];
        slot.in_flight = false;
        slot.passes -= 1;
        slot.generation -= 1;
        slot.stale = job.key.is_some();
        slot.record = job.record.or(job.accepted);
        self.in_flight -= 1;
        if self.commits.holds() {
            self.commits.pass_ended(slot.running_in);
        }
    }

    fn pass_done(&mut self, done: Done) {
        self.in_flight -= 1;
        if self.commits.holds() {
            let host = match &done {
                Done::Gone { host } | Done::Unreadable { host, .. } | Done::Pass { host, .. } => {
                    *host
                }
            };
            self.commits.pass_ended(self.slots[host].running_in);
        }
        let (host, record, outcome, staged_ticket) = match done {
            Done::Gone { host } => {
                let slot = &mut self.slots[host];
                slot.in_flight = false;
                slot.gone = true;
                return;
            }
            Done::Unreadable {
                host,
                error,
                accepted,
            } => {
                let slot = &mut self.slots[host];
                slot.in_flight = false;
                slot.stale = true;
                slot.record = accepted;
                // Waits for the next change of its file.
                let said = error.chain();
                let print = {
                    use std::hash::{Hash, Hasher};
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    said.hash(&mut h);
                    h.finish().max(1)
                };
                if slot.unreadable_said == print {
                    tracing::debug!("BareMetalHost {}: {said}", slot.key);
                } else {
                    slot.unreadable_said = print;
                    tracing::warn!("BareMetalHost {}: {said}", slot.key);
                }
                return;
            }
            Done::Pass {
                host,
                record,
                outcome,
                staged_ticket,
                stage_error,
            } => {
                let slot = &mut self.slots[host];
                slot.in_flight = false;
                slot.unreadable_said = 0;
                if let Some(e) = stage_error {
                    self.fatal.get_or_insert(e);
                    slot.record = Some(record);
                    return;
                }
                (host, record, outcome, staged_ticket)
            }
        };
        let slot = &mut self.slots[host];
        if let Mode::Batch(b) = &mut self.mode
            && slot.gone
        {
            b.stop_host(slot, host, *record, REMOVED.into());
            return;
        }
        let next = match &mut self.mode {
            Mode::Batch(b) => {
                b.progress.pass_done(host, &record, &outcome);
                after_pass(
                    slot,
                    &record,
                    &outcome,
                    &self.config,
                    Some((&b.goals[host], b.deadline)),
                )
            }
            Mode::Live(l) => {
                (l.observer)(&slot.key, &record, &outcome);
                after_pass(slot, &record, &outcome, &self.config, None)
            }
        };
        // An edit that came during the pass is acted upon before the host may decide.
        let next = match next {
            Next::Stop { deleted: false, .. } if slot.stale => Next::After(Duration::ZERO),
            next => next,
        };
        let now = Instant::now();
        let mut at = None;
        match next {
            Next::After(after) => {
                if let Some(on) = outcome.wait {
                    slot.waiting = Some(Box::new((now, due::waiting_host(&record, on))));
                    self.asker.host_waits();
                }
                at = Some(now + after);
                slot.bmo_due = at;
                slot.record = Some(record);
            }
            Next::Idle => slot.record = Some(record),
            Next::Stop {
                reached,
                reason,
                deleted,
            } => match &mut self.mode {
                Mode::Batch(b) => {
                    b.progress.host_finished(host, &record, reached, &reason);
                    b.results[host] = Some(HostResult {
                        record: *record,
                        goal: b.goals[host].clone(),
                        reached,
                        reason,
                        passes: slot.passes,
                        deleted,
                    });
                    b.remaining -= 1;
                    slot.done = true;
                }
                Mode::Live(_) => {
                    slot.gone = true;
                    slot.record = None;
                }
            },
        }
        // A document changed during the pass: read it again now (after the save).
        if slot.stale {
            at = Some(now);
        }
        if let Some(ticket) = staged_ticket {
            let group = self.context.services.source.group_of(host);
            self.commits.staged(group, ticket);
            // A batch's stopped host waits for nothing; the run waits for its commit.
            if !slot.done && self.commits.park(group, ticket, host) {
                slot.parked = true;
                slot.want = at;
                return;
            }
            if self.stopping {
                return;
            }
        }
        if let Some(at) = at
            && !slot.gone
            && !slot.done
        {
            schedule(&mut self.due, slot, host, at);
        }
    }

    fn commit_done(&mut self, group: usize, result: Result<u64>) {
        let committed = match result {
            Ok(t) => Some(t),
            Err(e) => match &self.mode {
                Mode::Batch(_) => {
                    // A save that fails ends a batch with 1 (its goal not met), the cause
                    // named; only a bug keeps its own code.
                    let e = match e {
                        e @ Error::Internal { .. } => e,
                        e => Unfinished::Save(Box::new(e)).into(),
                    };
                    self.fatal.get_or_insert(e);
                    None
                }
                Mode::Live(_) => {
                    // Not fatal to a controller: the host is read again and retried.
                    tracing::warn!("cannot save: {}", e.chain());
                    // What the group held is read again before its hosts' next passes.
                    let source = &self.context.services.source;
                    for (host, slot) in self.slots.iter_mut().enumerate() {
                        if source.group_of(host) == group {
                            slot.stale = true;
                        }
                    }
                    None
                }
            },
        };
        let halted = self.halted();
        let mut released = self.commits.finished(group, committed);
        // A failed save is not retried once the run is ending (a batch's failure is fatal, a
        // controller is stopping): retrying would keep the run from ever ending.
        if committed.is_none() && halted {
            released.extend(self.commits.give_up(group));
        }
        for host in released {
            let slot = &mut self.slots[host];
            slot.parked = false;
            if let Some(at) = slot.want.take()
                && !slot.gone
                && !slot.done
                && !halted
            {
                schedule(&mut self.due, slot, host, at);
            }
        }
    }

    fn change(&mut self, change: Option<LiveChange>) {
        if matches!(self.mode, Mode::Batch(_)) {
            return self.batch_change(change);
        }
        let Mode::Live(live) = &mut self.mode else {
            return;
        };
        let source = &self.context.services.source;
        match change {
            None => live.changes_open = false,
            Some(LiveChange::Host(key)) => {
                let host = match live.index.get(&key) {
                    Some(&i) => i,
                    None => {
                        let i = source.add_host(key.clone());
                        self.commits.grow(source.groups());
                        debug_assert_eq!(i, self.slots.len());
                        self.slots.push(Slot::new(key.clone(), None));
                        live.index.insert(key, i);
                        i
                    }
                };
                let slot = &mut self.slots[host];
                slot.stale = true;
                slot.gone = false;
                let now = Instant::now();
                if slot.in_flight {
                    // Runs again as soon as this pass's save is on disk.
                } else if slot.parked {
                    slot.want = Some(now);
                } else {
                    schedule(&mut self.due, slot, host, now);
                }
            }
            Some(LiveChange::Gone(key)) => {
                if let Some(&host) = live.index.get(&key) {
                    let slot = &mut self.slots[host];
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

    /// A batch's host changed in the source (an edit during the run): read again before its
    /// next pass ([`Self::take_edit`]), one that had decided driven again if its spec or
    /// metadata changed; an added host the selection takes joins the run; a removed host stops
    /// (as `watch` stops driving it).
    fn batch_change(&mut self, change: Option<LiveChange>) {
        let Mode::Batch(b) = &mut self.mode else {
            return;
        };
        if b.index.is_empty() && change.is_some() {
            b.index = (self.slots.iter().enumerate())
                .map(|(i, s)| (s.key.clone(), i))
                .collect();
        }
        let now = Instant::now();
        match change {
            None => b.changes = None,
            Some(LiveChange::Host(key)) => match b.index.get(&key) {
                Some(&host) => {
                    if self.slots[host].done && !self.revive(host) {
                        return;
                    }
                    let slot = &mut self.slots[host];
                    if slot.gone {
                        return;
                    }
                    slot.stale = true;
                    if slot.in_flight {
                        // Read again once this pass is done.
                    } else if slot.parked {
                        slot.want = Some(now);
                    } else {
                        schedule(&mut self.due, slot, host, now);
                    }
                }
                None => self.add_edited_host(key),
            },
            Some(LiveChange::Gone(key)) => {
                let Some(&host) = b.index.get(&key) else {
                    return;
                };
                let slot = &mut self.slots[host];
                if slot.done || slot.gone {
                    return;
                }
                slot.gone = true;
                if !slot.in_flight
                    && let Some(record) = slot.record.take()
                {
                    b.stop_host(slot, host, *record, REMOVED.into());
                }
            }
        }
    }

    /// A batch's host that had decided, whose file changed: driven again, from where it
    /// stopped, when its spec or metadata (as the run prepares them) differ from those it
    /// decided with, as BMO reconciles an updated object. `false` when nothing it acts on
    /// changed (an edit of another host of its file, a comment).
    fn revive(&mut self, host: usize) -> bool {
        let Mode::Batch(b) = &mut self.mode else {
            return false;
        };
        let (Some(edits), Some(result)) = (b.edits.as_mut(), b.results[host].as_ref()) else {
            return false;
        };
        if result.deleted {
            return false;
        }
        let source = &self.context.services.source;
        let Ok(Some(mut fresh)) = source.load(&self.slots[host].key) else {
            return false;
        };
        (edits.prepare)(&mut fresh);
        let (was, now) = (&result.record.host, &fresh.host);
        if was.spec == now.spec
            && was.metadata.labels == now.metadata.labels
            && was.metadata.annotations == now.metadata.annotations
        {
            return false;
        }
        let result = b.results[host]
            .take()
            .expect("a decided host has its result");
        tracing::info!(
            "BareMetalHost {}: its file was edited after it decided: driving it again",
            self.slots[host].key
        );
        let slot = &mut self.slots[host];
        slot.record = Some(Box::new(result.record));
        slot.done = false;
        slot.limiter = RateLimiter::default();
        b.remaining += 1;
        true
    }

    /// Reads a batch's edited host again before its pass: its new metadata and spec, with the
    /// status and bookkeeping the run holds, prepared as the run's hosts were, checked with
    /// BMO's update rules against the host as driven so far (its validateChanges). `false`
    /// when the host stopped: its edit refused (the error is its reason), or gone.
    fn take_edit(&mut self, host: usize) -> bool {
        let Mode::Batch(b) = &mut self.mode else {
            return true;
        };
        let slot = &mut self.slots[host];
        slot.stale = false;
        let Some(held) = slot.record.take() else {
            return true;
        };
        let source = &self.context.services.source;
        let mut record = match source.load(&slot.key) {
            Ok(Some(r)) => r,
            Ok(None) => {
                b.stop_host(slot, host, *held, REMOVED.into());
                return false;
            }
            Err(e) => {
                b.stop_host(slot, host, *held, e.chain());
                return false;
            }
        };
        record.host.status.clone_from(&held.host.status);
        record.book.clone_from(&held.book);
        if let (Some(s), Some(h)) = (&mut record.firmware_settings, &held.firmware_settings) {
            s.status.clone_from(&h.status);
        }
        if let (Some(c), Some(h)) = (&mut record.firmware_components, &held.firmware_components) {
            c.status.clone_from(&h.status);
        }
        let goal = match b.edits.as_mut() {
            Some(edits) => (edits.prepare)(&mut record),
            None => b.goals[host].clone(),
        };
        if let Some(why) = refusal(&record.host, Some(&held.host)) {
            let reason = format!("its edit is refused by BMO's admission rules: {why}");
            b.stop_host(slot, host, *held, reason);
            return false;
        }
        if b.goals[host] != goal {
            tracing::info!(
                "BareMetalHost {}: goal now {} (its file was edited)",
                slot.key,
                goal.describe()
            );
            b.goals[host] = goal;
        }
        slot.record = Some(Box::new(record));
        true
    }

    /// A host added to a batch's files during the run: driven when the selection takes it,
    /// after BMO's create rules; one they refuse is reported stopped with their error.
    fn add_edited_host(&mut self, key: ObjectKey) {
        let Mode::Batch(b) = &mut self.mode else {
            return;
        };
        let Some(edits) = b.edits.as_mut() else {
            return;
        };
        let source = &self.context.services.source;
        let mut record = match source.load(&key) {
            Ok(Some(r)) => r,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!("BareMetalHost {key}: {}", e.chain());
                return;
            }
        };
        if !(edits.selects)(&record) {
            return;
        }
        let goal = (edits.prepare)(&mut record);
        let host = source.add_host(key.clone());
        self.commits.grow(source.groups());
        debug_assert_eq!(host, self.slots.len());
        tracing::info!("BareMetalHost {key}: added to its file during the run: driving it");
        b.progress.host_started(host, &record, &goal);
        b.goals.push(goal);
        b.results.push(None);
        b.remaining += 1;
        b.index.insert(key.clone(), host);
        let refused = refusal(&record.host, None);
        self.slots.push(Slot::new(key, Some(Box::new(record))));
        let slot = &mut self.slots[host];
        match refused {
            None => schedule(&mut self.due, slot, host, Instant::now()),
            Some(why) => {
                let record = slot.record.take().expect("just added");
                let reason = format!("refused by BMO's admission rules: {why}");
                b.stop_host(slot, host, *record, reason);
            }
        }
    }

    fn answered(&mut self, answer: due::Answer) {
        let now = Instant::now();
        for (host, generation) in self.asker.answered(answer) {
            let slot = &mut self.slots[host];
            // Only a host still idle after the pass the report answers for: never two passes
            // of one host at once.
            if slot.generation != generation
                || slot.in_flight
                || slot.gone
                || slot.done
                || slot.waiting.take().is_none()
            {
                continue;
            }
            slot.woken_early(now, self.config.time_scale);
            if slot.parked {
                if slot.want.is_some() {
                    slot.want = Some(now);
                }
            } else {
                schedule(&mut self.due, slot, host, now);
            }
        }
    }
}

/// After a pass: when the host runs again if nothing wakes it earlier, or whether it stops. A
/// batch's host (`batch`: its goal and the run's deadline) stops once it has decided; a
/// controller's only when deleted, and its waits are bounded below so that delays scaled to
/// (almost) nothing do not spin.
fn after_pass(
    slot: &mut Slot,
    rec: &HostRecord,
    out: &PassOutcome,
    config: &RunnerConfig,
    batch: Option<(&Goal, Instant)>,
) -> Next {
    let stop = |reached: bool, reason: String| Next::Stop {
        reached,
        reason,
        deleted: false,
    };
    if out.deleted() {
        return Next::Stop {
            reached: batch.is_some_and(|(goal, _)| *goal == Goal::Deleted),
            reason: String::new(),
            deleted: true,
        };
    }
    let status = rec.status();
    let state = &status.provisioning.state;
    if let Some((goal, _)) = batch {
        if out.paused() {
            return stop(
                false,
                "paused (annotation baremetalhost.metal3.io/paused)".into(),
            );
        }
        let op = &status.operational_status;
        if out.steady() && goal.reached_by(state) && *op != OperationalStatus::Error {
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
    } else if out.paused() {
        // BMO asks nothing for a paused host: controller-runtime forgets its failures.
        slot.limiter = RateLimiter::default();
        return Next::Idle;
    }
    // Errors and zero-delay requeues go through BMO's rate limiter, in both timings: BMO's
    // controller does the same.
    let bmo_delay = match slot.limiter.delay(out.requeue) {
        Some(d) => d,
        None if batch.is_none() => return Next::Idle,
        None => {
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
    let mut after = bmo_delay.mul_f64(config.time_scale);
    let Some((_, deadline)) = batch else {
        // A controller never ends: with delays scaled to (almost) nothing, a steady host's poll
        // and a failing host's retries must not spin.
        if out.steady() {
            after = after.max(MIN_STEADY_REQUEUE);
        } else if !bmo_delay.is_zero() {
            after = after.max(MIN_REQUEUE);
        }
        return Next::After(after);
    };
    slot.virtual_elapsed += bmo_delay;
    if Instant::now() + after > deadline
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
    Next::After(after)
}

/// The next change of a controller's hosts (pending forever without a source of changes).
async fn next_change(
    changes: Option<&mut mpsc::UnboundedReceiver<LiveChange>>,
) -> Option<LiveChange> {
    match changes {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// Sleeps until `at`; forever without one.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(t.into()).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod admit_tests {
    use super::admit;
    use bmh_api::BareMetalHost;

    /// A provisioned host with boot MAC `mac`.
    fn provisioned(mac: &str) -> BareMetalHost {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "metal3.io/v1alpha1",
            "kind": "BareMetalHost",
            "metadata": {"name": "worker-0", "namespace": "default"},
            "spec": {
                "online": true,
                "bootMACAddress": mac,
                "bmc": {
                    "address": "ipmi://192.168.122.1:6233",
                    "credentialsName": "bmc-secret"
                }
            },
            "status": {"provisioning": {"state": "provisioned"}}
        }))
        .expect("a host")
    }

    /// BMO's validateChanges (baremetalhost_validation.go): a set boot MAC never changes.
    #[test]
    fn a_mac_change_is_refused_against_the_accepted_host_only() {
        let accepted = provisioned("00:11:22:33:44:01");
        let edited = provisioned("00:11:22:33:44:99");
        let error = admit(&edited, Some(&accepted)).unwrap_err().to_string();
        assert!(
            error.contains("spec.bootMACAddress")
                && error.contains("bootMACAddress can not be changed once it is set"),
            "{error}"
        );
        // Without a last accepted host only the create rules run: the new MAC is fine.
        admit(&edited, None).unwrap();
        // Reverted, or re-cased (compared case-insensitively as BMO does): accepted.
        admit(&accepted, Some(&accepted)).unwrap();
        admit(
            &provisioned("00:11:22:33:44:01".to_uppercase().as_str()),
            Some(&accepted),
        )
        .unwrap();
    }

    #[test]
    fn a_host_being_deleted_is_not_checked() {
        let accepted = provisioned("00:11:22:33:44:01");
        let mut edited = provisioned("00:11:22:33:44:99");
        edited.metadata.deletion_timestamp = Some("2026-01-01T00:00:00Z".into());
        admit(&edited, Some(&accepted)).unwrap();
    }
}

#[cfg(test)]
mod pass_threads_tests {
    use super::{AHEAD_PER_CPU_THREAD, PassThreads, pass_threads};

    /// Passes that wait on their provisioner each keep a thread: `concurrency` of them, and as
    /// many again queued, whatever the cores.
    #[test]
    fn a_provisioner_that_may_block_runs_concurrency_passes() {
        for cores in [1, 2, 64] {
            assert_eq!(
                pass_threads(8, false, cores),
                PassThreads {
                    running: 8,
                    ahead: 8
                }
            );
        }
        assert_eq!(
            pass_threads(0, false, 2),
            PassThreads {
                running: 1,
                ahead: 1
            }
        );
    }

    /// Passes that never block run on no more threads than cores, nor more than
    /// `concurrency`, with a deep queue each.
    #[test]
    fn a_provisioner_that_never_blocks_runs_a_pass_per_core_at_most() {
        let deep = |running| PassThreads {
            running,
            ahead: running * AHEAD_PER_CPU_THREAD,
        };
        assert_eq!(pass_threads(8, true, 2), deep(2));
        assert_eq!(pass_threads(8, true, 1), deep(1));
        assert_eq!(pass_threads(3, true, 64), deep(3));
        assert_eq!(pass_threads(8, true, 0), deep(1));
    }
}
