//! The group commits: saves staged into their group (file), written at a bounded rate.

use crate::error::Result;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Which groups have staged saves, when each may be written, and which hosts wait for them.
pub(super) struct GroupCommits {
    interval: Duration,
    /// When the runner began: a group never committed is ready from then on.
    epoch: Instant,
    groups: Vec<GroupState>,
    /// The groups with a commit to make, by when they may, with their round (no full scans).
    ready: BinaryHeap<Reverse<(Instant, usize, u64)>>,
    /// How many groups are committing or have staged saves.
    busy: usize,
    /// Whether a commit due while passes of its group run waits for them ([`Self::hold`]).
    hold: bool,
    tx: mpsc::UnboundedSender<(usize, Result<u64>)>,
    rx: mpsc::UnboundedReceiver<(usize, Result<u64>)>,
}

#[derive(Default)]
struct GroupState {
    staged: u64,
    committing: Option<u64>,
    committed: u64,
    last_start: Option<Instant>,
    /// How long the last commit took: the next waits a multiple of it.
    last_duration: Duration,
    /// (ticket, host) of hosts parked until their save is on disk.
    parked: Vec<(u64, usize)>,
    /// The group's passes running or queued on the workers.
    running: u32,
    /// The commit was due while passes of the group ran: it waits for them until this time.
    held_until: Option<Instant>,
    /// Counts the group's commits started: a ready entry of an earlier round is dead.
    round: u64,
}

impl GroupState {
    fn busy(&self) -> bool {
        self.committing.is_some() || self.staged > self.committed
    }

    fn wants_commit(&self) -> bool {
        self.committing.is_none() && self.staged > self.committed
    }
}
impl GroupCommits {
    pub(super) fn new(groups: usize, interval: Duration, hold: bool) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            interval,
            epoch: Instant::now(),
            groups: (0..groups).map(|_| GroupState::default()).collect(),
            ready: BinaryHeap::new(),
            busy: 0,
            hold,
            tx,
            rx,
        }
    }

    /// Makes room for groups added since (a controller's new hosts).
    pub(super) fn grow(&mut self, groups: usize) {
        let len = groups.max(self.groups.len());
        self.groups.resize_with(len, GroupState::default);
    }

    /// Changes a group, keeping the busy count and the ready queue up to date.
    fn change<R>(&mut self, group: usize, f: impl FnOnce(&mut GroupState) -> R) -> R {
        self.grow(group + 1);
        let g = &mut self.groups[group];
        let (was_busy, was_ready) = (g.busy(), g.wants_commit());
        let r = f(g);
        let (busy, ready) = (g.busy(), g.wants_commit());
        match (was_busy, busy) {
            (false, true) => self.busy += 1,
            (true, false) => self.busy -= 1,
            _ => {}
        }
        // A group enters the queue once, when it comes to want a commit.
        if ready && !was_ready {
            let g = &self.groups[group];
            let at = g.last_start.map_or(self.epoch, |t| t + self.wait_after(g));
            self.ready.push(Reverse((at, group, g.round)));
        }
        r
    }

    /// How long a group's commit waits after the last one started.
    fn wait_after(&self, g: &GroupState) -> Duration {
        self.interval.max(g.last_duration * 4)
    }

    /// Whether commits wait for their group's passes (and so count them).
    pub(super) fn holds(&self) -> bool {
        self.hold
    }

    pub(super) fn pass_started(&mut self, group: usize) {
        // A file read again can bring a group not seen yet.
        self.grow(group + 1);
        self.groups[group].running += 1;
    }

    /// A pass of `group` came back; the last one releases a commit held for them.
    pub(super) fn pass_ended(&mut self, group: usize) {
        let g = &mut self.groups[group];
        g.running -= 1;
        if g.running == 0 && g.held_until.is_some() {
            self.ready.push(Reverse((Instant::now(), group, g.round)));
        }
    }

    /// Whether the due commit of `group` waits for its running passes (at most 4 waits).
    fn hold(&mut self, group: usize, now: Instant) -> bool {
        let wait = self.wait_after(&self.groups[group]);
        let g = &mut self.groups[group];
        if !self.hold || g.running == 0 {
            return false;
        }
        match g.held_until {
            Some(until) => now < until,
            None => {
                let until = now + wait * 4;
                g.held_until = Some(until);
                self.ready.push(Reverse((until, group, g.round)));
                true
            }
        }
    }

    pub(super) fn staged(&mut self, group: usize, ticket: u64) {
        self.change(group, |g| g.staged = g.staged.max(ticket));
    }

    /// Host `host` may run again once `ticket` is committed; `false` when it already is.
    pub(super) fn park(&mut self, group: usize, ticket: u64, host: usize) -> bool {
        let g = &mut self.groups[group];
        if ticket <= g.committed {
            return false;
        }
        g.parked.push((ticket, host));
        true
    }

    pub(super) fn busy(&self) -> bool {
        self.busy > 0
    }

    pub(super) fn next_ready_at(&self) -> Option<Instant> {
        self.ready.peek().map(|Reverse((at, _, _))| *at)
    }

    /// Starts every group ready to commit, each on a blocking thread.
    pub(super) fn start_ready(
        &mut self,
        commit: impl Fn(usize) -> Result<u64> + Clone + Send + 'static,
    ) {
        let now = Instant::now();
        while let Some(&Reverse((at, group, round))) = self.ready.peek() {
            if at > now {
                break;
            }
            self.ready.pop();
            // Given up on since it was queued, or an entry of an earlier round.
            let g = &self.groups[group];
            if !g.wants_commit() || g.round != round || self.hold(group, now) {
                continue;
            }
            self.begin(group);
            let waiting = self.tx.clone();
            let commit = commit.clone();
            tokio::task::spawn_blocking(move || {
                let _ = waiting.send((group, commit(group)));
            });
        }
    }

    /// Marks a commit of `group`, taken from the ready queue, as started.
    fn begin(&mut self, group: usize) {
        self.change(group, |g| {
            g.committing = Some(g.staged);
            g.last_start = Some(Instant::now());
            g.held_until = None;
            g.round += 1;
        });
    }

    /// Starts a commit of `group` whatever its time.
    #[cfg(test)]
    pub(super) fn start(&mut self, group: usize) {
        self.ready.retain(|Reverse((_, g, _))| *g != group);
        self.begin(group);
    }

    pub(super) async fn recv(&mut self) -> Option<(usize, Result<u64>)> {
        self.rx.recv().await
    }

    /// Drops what `group` has staged and not committed (after its commit failed, in a run that
    /// is ending): it is not retried, so the run can end; returns the hosts parked on it.
    pub(super) fn give_up(&mut self, group: usize) -> Vec<usize> {
        self.change(group, |g| {
            g.staged = g.committed;
            g.parked.drain(..).map(|(_, host)| host).collect()
        })
    }

    /// Records a finished commit, with the ticket it put on disk (`None`: it failed); returns
    /// the hosts it released.
    pub(super) fn finished(&mut self, group: usize, committed: Option<u64>) -> Vec<usize> {
        self.change(group, |g| {
            let started_at = g.committing.take().unwrap_or(0);
            if let Some(t) = g.last_start {
                g.last_duration = t.elapsed();
            }
            match committed {
                Some(ticket) => g.committed = g.committed.max(ticket),
                // A failed commit releases nobody; what it held is staged again.
                None => g.staged = g.staged.max(started_at),
            }
            let committed = g.committed;
            g.parked
                .extract_if(.., |(t, _)| *t <= committed)
                .map(|(_, host)| host)
                .collect()
        })
    }
}
