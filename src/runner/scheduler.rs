//! The scheduler: the one loop that decides when each host's next pass runs, for `provision`
//! and `watch` alike, what differs being their [`Policy`]'s.

use super::changes::LiveChange;
use super::due::{self, DueAsker, ReadyAsker};
use super::due_queue::DueQueue;
use super::group_commits::GroupCommits;
use super::heartbeat::{Beating, Heartbeat, Pulse};
use super::pass::{Done, Job, PassContext, run_pass};
use super::rate_limit::RateLimiter;
use super::workers::Workers;
use super::{RunnerConfig, Services};
use crate::error::{Error, Result};
use crate::machine::PassOutcome;
use crate::record::HostRecord;
use bmh_api::ObjectKey;
use bmhctl_plugin_sdk::WaitingHost;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// How long a stopped run waits for passes and saves in flight before leaving them behind.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// The scheduler's view of one host between passes.
#[derive(Default)]
pub(crate) struct Slot {
    pub(super) key: ObjectKey,
    /// Boxed: a pass moves a pointer to its worker and back.
    pub(super) record: Option<Box<HostRecord>>,
    pub(super) passes: u64,
    /// Read the host from the store before its next pass (its document changed).
    pub(super) stale: bool,
    pub(super) in_flight: bool,
    /// Waiting for its last save to be on disk.
    pub(super) parked: bool,
    /// When it should run once its save is on disk.
    pub(super) want: Option<Instant>,
    /// Gone from the store (a controller's host may come back).
    pub(super) gone: bool,
    /// A batch's host that has decided: never driven again.
    pub(super) done: bool,
    /// controller-runtime's per-host limiter for errors and zero-delay requeues.
    pub(super) limiter: RateLimiter,
    /// BMO time this host has waited so far (delays before scaling).
    pub(super) virtual_elapsed: Duration,
    /// Only the due entry with the slot's current token counts.
    pub(super) token: u64,
    /// Counts the host's passes started: a change report answers for one generation.
    pub(super) generation: u64,
    /// Since when, and on what, the next pass waits on the provisioner (boxed: mostly none).
    pub(super) waiting: Option<Box<(Instant, WaitingHost)>>,
    /// When its next pass is due at BMO's (scaled) time, to credit back an early wake-up.
    pub(super) bmo_due: Option<Instant>,
    /// The pass after pass `generation` was already held back once.
    pub(super) held: Option<u64>,
    /// The commit group its pass in flight was counted in (when commits wait for passes).
    pub(super) running_in: usize,
    /// A hash of the last reason it could not be read, said once (0: none).
    pub(super) unreadable_said: u64,
}

impl Slot {
    pub(super) fn new(key: ObjectKey, record: Option<Box<HostRecord>>) -> Self {
        Self {
            stale: record.is_none(),
            key,
            record,
            ..Self::default()
        }
    }

    /// The host runs now, before its BMO time: count only the BMO time it waited.
    fn woken_early(&mut self, now: Instant, time_scale: f64) {
        if let Some(at) = self.bmo_due.take().filter(|_| time_scale > 0.0) {
            let unwaited = at.saturating_duration_since(now).div_f64(time_scale);
            self.virtual_elapsed = self.virtual_elapsed.saturating_sub(unwaited);
        }
    }
}

/// What a host does after a pass.
#[derive(Debug, PartialEq)]
pub(crate) enum Next {
    /// Runs again after this long, unless something wakes it earlier.
    After(Duration),
    /// Waits for a change of its document.
    Idle,
    /// Stops being driven: a batch's host decided, or the host is deleted.
    Stop(Stop),
}

/// How a host stopped being driven.
#[derive(Debug, PartialEq)]
pub(crate) struct Stop {
    pub(super) reached: bool,
    pub(super) reason: String,
    pub(super) deleted: bool,
}

/// How many passes run at once, and how many more are queued for the threads that run them.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PassThreads {
    running: usize,
    ahead: usize,
}

/// Passes queued per thread when the provisioner never blocks: fewer scheduler wake-ups.
const AHEAD_PER_CPU_THREAD: usize = 512;

/// Pass threads: `concurrency` when calls wait; at most `cores` when they never block.
fn pass_threads(concurrency: usize, never_block: bool, cores: usize) -> PassThreads {
    let concurrency = concurrency.max(1);
    let (running, ahead_each) = if never_block {
        (concurrency.min(cores.max(1)), AHEAD_PER_CPU_THREAD)
    } else {
        (concurrency, 1)
    };
    PassThreads {
        running,
        ahead: running * ahead_each,
    }
}

/// Queues the host's next pass at `at`; any earlier entry of it no longer counts.
pub(super) fn schedule(due: &mut DueQueue, slot: &mut Slot, host: usize, at: Instant) {
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

pub(crate) struct Scheduler<P> {
    config: RunnerConfig,
    pub(super) policy: P,
    pub(super) slots: Vec<Slot>,
    pub(super) due: DueQueue,
    workers: Workers<Job, Done>,
    threads: PassThreads,
    /// What the passes work with; the source also saves.
    pub(super) context: Arc<PassContext>,
    commits: GroupCommits,
    asker: DueAsker,
    ready: ReadyAsker,
    rng: fastrand::Rng,
    in_flight: usize,
    stopping: bool,
    /// When the run was told to stop.
    stopped_at: Option<Instant>,
    pub(super) fatal: Option<Error>,
    heartbeat: Option<Beating>,
}

impl<P: Policy> Scheduler<P> {
    pub(super) fn new(services: Services, config: RunnerConfig, policy: P) -> Self {
        // Passes that never block come back within moments: a commit may wait for them.
        let commits = GroupCommits::new(
            services.source.groups(),
            config.commit_interval,
            services.factory.calls_never_block(),
        );
        let asker = DueAsker::new(services.factory.clone(), config.timing);
        let ready = ReadyAsker::new(services.factory.clone(), config.timing);
        let rng = config
            .seed
            .map_or_else(fastrand::Rng::new, fastrand::Rng::with_seed);
        let context = Arc::new(PassContext {
            services,
            machine: config.machine.clone(),
            takes_retry: P::TAKES_RETRY,
            events_read: policy.reads_events(),
        });
        let threads = pass_threads(
            config.concurrency,
            context.services.factory.calls_never_block(),
            std::thread::available_parallelism().map_or(1, |n| n.get()),
        );
        let cx = context.clone();
        let workers = Workers::new(threads.running, threads.ahead, move |job| {
            run_pass(&cx, job)
        });
        Self {
            config,
            policy,
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
            heartbeat: None,
        }
    }

    /// Gives the loop a heartbeat to beat while it turns.
    pub(super) fn with_heartbeat(mut self, heartbeat: Option<Heartbeat>) -> Self {
        self.heartbeat = heartbeat.map(Beating::new);
        self
    }

    /// Beats the heartbeat when due.
    fn beat(&mut self) {
        let Some(heartbeat) = &mut self.heartbeat else {
            return;
        };
        let (slots, running) = (&self.slots, self.in_flight);
        heartbeat.maybe_beat(Instant::now(), || Pulse {
            hosts: slots.iter().filter(|s| !s.gone && !s.done).count(),
            running,
        });
    }

    /// Drives the hosts until done or `stop`, then lets passes and saves finish.
    pub(crate) async fn run(&mut self, mut stop: tokio::sync::watch::Receiver<bool>) -> Result<()> {
        if *stop.borrow() {
            self.interrupt();
        }
        let mut stop_open = true;
        loop {
            self.beat();
            if !self.halted() {
                self.start_due();
            }
            let source = self.context.services.source.clone();
            self.commits.start_ready(move |group| source.commit(group));
            if (self.halted() || self.policy.finished())
                && self.in_flight == 0
                && !self.commits.busy()
            {
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
            let listen = !self.stopping && stop_open;
            let wake = self.wait(&mut stop, listen, give_up_at).await;
            match wake {
                Wake::Passes => {
                    for done in self.workers.take_results() {
                        self.pass_done(done);
                    }
                }
                Wake::Commit(group, result) => self.commit_done(group, result),
                Wake::Change(change) => P::on_change(self, change),
                Wake::Answer(answer) => self.answered(answer),
                Wake::Stop(true) => self.interrupt(),
                // A controller stops with its owner; a batch runs on to its end.
                Wake::StopGone if P::STOPS_WITH_OWNER => self.interrupt(),
                Wake::StopGone => stop_open = false,
                Wake::Stop(false) | Wake::Timer => {}
            }
        }
        self.workers.stop();
        let fatal = self.fatal.take();
        self.policy.ended(&self.slots, self.stopping, fatal)
    }

    /// Waits for what wakes the loop next (results, commits, changes, answers, stop, timers).
    async fn wait(
        &mut self,
        stop: &mut tokio::sync::watch::Receiver<bool>,
        listen: bool,
        give_up_at: Option<Instant>,
    ) -> Wake {
        // A due host only wakes the loop when there is room to run it.
        let running = !self.halted();
        let next_due = self
            .due
            .peek()
            .map(|(at, _, _)| at)
            .filter(|_| self.in_flight < self.room() && running);
        let next_ask = self.asker.next_ask().filter(|_| running);
        let next_beat = self.heartbeat.as_ref().map(Beating::next);
        let wake_at = [
            next_due,
            self.commits.next_ready_at(),
            next_ask,
            give_up_at,
            next_beat,
        ]
        .into_iter()
        .flatten()
        .min();
        let changes = self.policy.changes(running);
        tokio::select! {
            () = self.workers.results_ready() => Wake::Passes,
            Some((group, result)) = self.commits.recv() => Wake::Commit(group, result),
            change = next_change(changes) => Wake::Change(change),
            answer = self.asker.recv() => Wake::Answer(answer),
            changed = stop.changed(), if listen => match changed {
                Ok(()) => Wake::Stop(*stop.borrow()),
                Err(_) => Wake::StopGone,
            },
            _ = sleep_until(wake_at) => Wake::Timer,
        }
    }

    fn halted(&self) -> bool {
        self.stopping || self.fatal.is_some()
    }

    /// Passes started and not done: running, and queued for the workers.
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
        self.policy.interrupted();
    }

    /// Starts every due pass there is room for, first holding back ([`Self::hold_back`]).
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
                if slot.stale && !P::edited(self, host) {
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

    /// Holds back the passes of `hosts` the provisioner cannot serve yet; `true` when any.
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
        match done {
            Done::Gone { host } => {
                let slot = &mut self.slots[host];
                slot.in_flight = false;
                slot.gone = true;
            }
            Done::Unreadable {
                host,
                error,
                accepted,
            } => self.unreadable(host, &error, accepted),
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
                self.passed(host, record, &outcome, staged_ticket);
            }
        }
    }

    /// The host could not be read, or its edit was refused: it waits for its next change.
    fn unreadable(&mut self, host: usize, error: &Error, accepted: Option<Box<HostRecord>>) {
        let slot = &mut self.slots[host];
        slot.in_flight = false;
        slot.stale = true;
        slot.record = accepted;
        let said = error.chain();
        let hasher = std::hash::BuildHasherDefault::<std::hash::DefaultHasher>::default();
        let print = std::hash::BuildHasher::hash_one(&hasher, &said).max(1);
        if slot.unreadable_said == print {
            tracing::debug!("BareMetalHost {}: {said}", slot.key);
        } else {
            slot.unreadable_said = print;
            tracing::warn!("BareMetalHost {}: {said}", slot.key);
        }
    }

    /// A pass of `host` ended with `outcome`: the policy says what the host does next.
    fn passed(
        &mut self,
        host: usize,
        record: Box<HostRecord>,
        outcome: &PassOutcome,
        staged_ticket: Option<u64>,
    ) {
        let slot = &mut self.slots[host];
        let record = if slot.gone {
            self.policy.removed(slot, host, record)
        } else {
            Some(record)
        };
        let Some(record) = record else { return };
        let next = self
            .policy
            .after_pass(slot, host, &record, outcome, &self.config);
        // An edit that came during the pass is acted upon before the host may decide.
        let next = match next {
            Next::Stop(Stop { deleted: false, .. }) if slot.stale => Next::After(Duration::ZERO),
            next => next,
        };
        let now = Instant::now();
        let mut at = None;
        match next {
            Next::After(after) => {
                // A failed pass waits on its provisioner too: it may come back early only
                // when the provisioner sees something new for it.
                let on = (outcome.wait).or(outcome
                    .error
                    .as_ref()
                    .map(|_| bmhctl_plugin_sdk::WaitOn::Progress));
                if let Some(on) = on {
                    slot.waiting = Some(Box::new((now, due::waiting_host(&record, on))));
                    self.asker.host_waits();
                }
                at = Some(now + after);
                slot.bmo_due = at;
                slot.record = Some(record);
            }
            Next::Idle => slot.record = Some(record),
            Next::Stop(stop) => self.policy.stop(slot, host, record, stop),
        }
        // A document changed during the pass: read it again now (after the save).
        if slot.stale {
            at = Some(now);
        }
        self.queue_next(host, staged_ticket, at);
    }

    /// Queues the next pass of `host` at `at` (none: on a change), or parks it until its save.
    fn queue_next(&mut self, host: usize, staged_ticket: Option<u64>, at: Option<Instant>) {
        let slot = &mut self.slots[host];
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
        let committed = result.map_err(|e| P::commit_failed(self, group, e)).ok();
        let halted = self.halted();
        let mut released = self.commits.finished(group, committed);
        // A failed save is not retried once the run is ending, or it would never end.
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

    /// Adds a host the source has come to hold; its number.
    pub(super) fn add_slot(&mut self, key: ObjectKey, record: Option<Box<HostRecord>>) -> usize {
        let source = &self.context.services.source;
        let host = source.add_host(key.clone());
        self.commits.grow(source.groups());
        debug_assert_eq!(host, self.slots.len());
        self.slots.push(Slot::new(key, record));
        host
    }

    /// The document of `host` changed: read it again before its next pass, started now.
    pub(super) fn read_again(&mut self, host: usize) {
        let slot = &mut self.slots[host];
        slot.stale = true;
        if slot.in_flight {
            // Its pass ends first.
        } else if slot.parked {
            slot.want = Some(Instant::now());
        } else {
            schedule(&mut self.due, slot, host, Instant::now());
        }
    }

    fn answered(&mut self, answer: due::Answer) {
        let now = Instant::now();
        for (host, generation) in self.asker.answered(answer) {
            let slot = &mut self.slots[host];
            // Only a host still idle after the pass reported on: never two passes at once.
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

/// The next change of the source (pending forever without one to listen to).
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

/// What a batch and a controller do differently; the scheduler does the rest.
pub(crate) trait Policy: Sized {
    /// Passes consume the retry annotation (a controller retries a host on it).
    const TAKES_RETRY: bool;
    /// The run stops when nobody can ask it to any more (a controller stops with its owner).
    const STOPS_WITH_OWNER: bool;
    fn reads_events(&self) -> bool {
        true
    }
    /// Every host has stopped: the run ends (never, by default: until told to stop).
    fn finished(&self) -> bool {
        false
    }
    /// Where the source's changes come from now; `running`: the run is not ending.
    fn changes(&mut self, running: bool) -> Option<&mut mpsc::UnboundedReceiver<LiveChange>>;
    /// Takes a change of the source (`None`: no more will come).
    fn on_change(s: &mut Scheduler<Self>, change: Option<LiveChange>);
    /// A due host whose document changed: `false` when it stopped instead of running.
    fn edited(_s: &mut Scheduler<Self>, _host: usize) -> bool {
        true
    }
    /// Reports a pass of `host` and says what the host does next.
    fn after_pass(
        &mut self,
        slot: &mut Slot,
        host: usize,
        rec: &HostRecord,
        out: &PassOutcome,
        config: &RunnerConfig,
    ) -> Next;
    /// The pass of `host`, removed from the source meanwhile, ended: `None` when it stopped.
    fn removed(
        &mut self,
        _slot: &mut Slot,
        _host: usize,
        record: Box<HostRecord>,
    ) -> Option<Box<HostRecord>> {
        Some(record)
    }
    /// The host stops being driven, as `record` left it.
    fn stop(&mut self, slot: &mut Slot, host: usize, record: Box<HostRecord>, stop: Stop);
    fn commit_failed(s: &mut Scheduler<Self>, group: usize, e: Error);
    fn interrupted(&mut self) {}
    /// The loop is over, `interrupted` or not, `fatal` what went wrong: the run's result.
    fn ended(&mut self, _slots: &[Slot], _interrupted: bool, fatal: Option<Error>) -> Result<()> {
        fatal.map_or(Ok(()), Err)
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
