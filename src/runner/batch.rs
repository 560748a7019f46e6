//! The batch policy (`provision`): a fixed set of hosts, each driven until it decides.

use super::changes::LiveChange;
use super::observer::BatchObserver;
use super::pass::refusal;
use super::rate_limit::RateLimiter;
use super::scheduler::{Next, Policy, Scheduler, Slot, Stop, schedule};
use super::{Goal, HostJob, HostResult, RunnerConfig, Services, TakeEdits};
use crate::error::{Error, Result, Unfinished};
use crate::machine::{PassOutcome, Requeue};
use crate::record::HostRecord;
use bmh_api::{ErrorType, ObjectKey, OperationalStatus, ProvisioningState};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

pub(crate) struct Batch {
    goals: Vec<Goal>,
    /// Passes brought forward in a row for each host at its goal (see [`CONFIRMATIONS`]).
    confirming: Vec<u8>,
    results: Vec<Option<HostResult>>,
    remaining: usize,
    progress: Box<dyn BatchObserver>,
    /// No host's next pass is later than this.
    deadline: Instant,
    /// How edits of the source are taken (none: the hosts are driven as they were read).
    edits: Option<TakeEdits>,
    changes: Option<mpsc::UnboundedReceiver<LiveChange>>,
    /// The hosts by key, made at the first change of the source.
    index: HashMap<ObjectKey, usize>,
}

/// How many passes in a row of a host at its goal that still acted are brought forward to see
/// whether BMO's next decision leaves it be, instead of waiting BMO's periodic delay.
const CONFIRMATIONS: u8 = 3;

/// Why a batch's host removed from its file during the run stopped.
const REMOVED: &str = "removed from its file during the run: not driven further";

impl Batch {
    /// Ends host `host` short of its goal, with `reason`, as `record` left it.
    fn stop_host(&mut self, slot: &mut Slot, host: usize, record: HostRecord, reason: String) {
        let stop = Stop {
            reached: false,
            reason,
            deleted: false,
        };
        self.stop(slot, host, Box::new(record), stop);
    }
}

impl Policy for Batch {
    const TAKES_RETRY: bool = false;
    const STOPS_WITH_OWNER: bool = false;

    fn reads_events(&self) -> bool {
        self.progress.reads_events()
    }

    fn finished(&self) -> bool {
        self.remaining == 0
    }

    fn changes(&mut self, running: bool) -> Option<&mut mpsc::UnboundedReceiver<LiveChange>> {
        self.changes.as_mut().filter(|_| running)
    }

    /// A host changed in the source: read again, revived, added or stopped.
    fn on_change(s: &mut Scheduler<Self>, change: Option<LiveChange>) {
        let b = &mut s.policy;
        if b.index.is_empty() && change.is_some() {
            b.index = (s.slots.iter().enumerate())
                .map(|(i, s)| (s.key.clone(), i))
                .collect();
        }
        match change {
            None => b.changes = None,
            Some(LiveChange::Host(key)) => match b.index.get(&key) {
                Some(&host) => {
                    if s.slots[host].done && !s.revive(host) {
                        return;
                    }
                    if s.slots[host].gone {
                        return;
                    }
                    // Read again once a pass in flight is done.
                    s.read_again(host);
                }
                None => s.add_edited_host(key),
            },
            Some(LiveChange::Gone(key)) => {
                let Some(&host) = b.index.get(&key) else {
                    return;
                };
                let slot = &mut s.slots[host];
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

    /// Reads an edited host again before its pass; `false` when it stopped.
    fn edited(s: &mut Scheduler<Self>, host: usize) -> bool {
        let b = &mut s.policy;
        let slot = &mut s.slots[host];
        slot.stale = false;
        let Some(held) = slot.record.take() else {
            return true;
        };
        let source = &s.context.services.source;
        let mut record = match source.load(&slot.key) {
            Ok(Some(r)) => r,
            other => {
                let reason = other.err().map_or_else(|| REMOVED.into(), |e| e.chain());
                b.stop_host(slot, host, *held, reason);
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
        let goal =
            (b.edits.as_mut()).map_or_else(|| b.goals[host].clone(), |e| (e.prepare)(&mut record));
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

    /// A host stops once it has decided.
    fn after_pass(
        &mut self,
        slot: &mut Slot,
        host: usize,
        rec: &HostRecord,
        out: &PassOutcome,
        config: &RunnerConfig,
    ) -> Next {
        self.progress.pass_done(host, rec, out);
        let goal = &self.goals[host];
        let stop = |reached: bool, reason: String| {
            Next::Stop(Stop {
                reached,
                reason,
                deleted: false,
            })
        };
        if out.end == crate::machine::PassEnd::Refused {
            return stop(false, out.error.clone().unwrap_or_default());
        }
        if out.deleted() {
            return Next::Stop(Stop {
                reached: *goal == Goal::Deleted,
                reason: String::new(),
                deleted: true,
            });
        }
        let status = rec.status();
        let state = &status.provisioning.state;
        if out.paused() {
            return stop(
                false,
                "paused (annotation baremetalhost.metal3.io/paused)".into(),
            );
        }
        let op = &status.operational_status;
        let at_goal = goal.reached_by(state) && *op != OperationalStatus::Error;
        if out.steady() && at_goal {
            return stop(true, String::new());
        }
        // At its goal, nothing in flight, BMO would look again only after its periodic delay: the
        // next pass comes at once instead (timing only), and the host is done once it finds
        // nothing to do.
        let periodic =
            matches!(out.requeue, Requeue::After(d) if d >= crate::machine::delays::POWER_POLL);
        if at_goal && periodic && out.error.is_none() && self.confirming[host] < CONFIRMATIONS {
            self.confirming[host] += 1;
            return Next::After(Duration::ZERO);
        }
        self.confirming[host] = 0;
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
        // Errors and zero-delay requeues go through BMO's rate limiter, as in BMO's controller.
        let Some(bmo_delay) = slot.limiter.delay(out.requeue) else {
            let why = match &out.error {
                Some(e) => e.clone(),
                None if !status.error_message.is_empty() => status.error_message.clone(),
                None => format!(
                    "stopped in state {:?}, waiting for a change",
                    state.as_str()
                ),
            };
            return stop(false, why);
        };
        let after = bmo_delay.mul_f64(config.time_scale);
        slot.virtual_elapsed += bmo_delay;
        // In virtual time the timeout runs out; in real time the run stops a host as soon as its
        // next pass would come after the deadline, and says so.
        let ran_out = config.time_scale < 1.0 && slot.virtual_elapsed > config.timeout;
        if ran_out || Instant::now() + after > self.deadline {
            let why = match &out.error {
                _ if !status.error_message.is_empty() => status.error_message.clone(),
                Some(e) => e.clone(),
                None if ran_out => format!("still {:?} when the timeout ran out", state.as_str()),
                None => format!(
                    "still {:?}: its next pass (in {}) would come after the timeout",
                    state.as_str(),
                    humantime::format_duration(after)
                ),
            };
            return stop(false, why);
        }
        Next::After(after)
    }

    fn removed(
        &mut self,
        slot: &mut Slot,
        host: usize,
        record: Box<HostRecord>,
    ) -> Option<Box<HostRecord>> {
        self.stop_host(slot, host, *record, REMOVED.into());
        None
    }

    /// The host has decided: its result is kept, and it is never driven again.
    fn stop(&mut self, slot: &mut Slot, host: usize, record: Box<HostRecord>, stop: Stop) {
        let Stop {
            reached,
            reason,
            deleted,
        } = stop;
        self.progress.host_finished(host, &record, reached, &reason);
        self.results[host] = Some(HostResult {
            record: *record,
            goal: self.goals[host].clone(),
            reached,
            reason,
            passes: slot.passes,
            deleted,
        });
        self.remaining -= 1;
        slot.done = true;
        slot.record = None;
    }

    /// A failed save ends a batch with 1, the cause named; only a bug keeps its own code.
    fn commit_failed(s: &mut Scheduler<Self>, _group: usize, e: Error) {
        let e = match e {
            e @ Error::Internal { .. } => e,
            e => Unfinished::Save(Box::new(e)).into(),
        };
        s.fatal.get_or_insert(e);
    }

    fn interrupted(&mut self) {
        self.progress.interrupted();
    }

    fn ended(&mut self, slots: &[Slot], interrupted: bool, fatal: Option<Error>) -> Result<()> {
        // Where the hosts still driven got to, for the report of a run stopped short.
        for (host, slot) in slots.iter().enumerate() {
            if let (false, Some(record)) = (slot.done, &slot.record) {
                self.progress.left_off(host, record);
            }
        }
        self.progress.finish();
        if interrupted {
            // A signal ends a batch with 130 whatever else went wrong; what did is said.
            if let Some(e) = fatal {
                tracing::error!("{}", e.chain());
            }
            return Err(Error::Interrupted);
        }
        fatal.map_or(Ok(()), Err)
    }
}

impl Scheduler<Batch> {
    /// A batch over `jobs`, each due now.
    pub(crate) fn batch(
        jobs: Vec<HostJob>,
        services: Services,
        config: RunnerConfig,
        mut progress: Box<dyn BatchObserver>,
    ) -> Self {
        let deadline = Instant::now() + config.timeout;
        let mut goals = Vec::with_capacity(jobs.len());
        let mut slots = Vec::with_capacity(jobs.len());
        for (i, j) in jobs.into_iter().enumerate() {
            progress.host_started(i, &j.record, &j.goal);
            let key = j.record.host.metadata.key();
            slots.push(Slot::new(key, Some(Box::new(j.record))));
            goals.push(j.goal);
        }
        let n = slots.len();
        let batch = Batch {
            confirming: vec![0; goals.len()],
            goals,
            results: (0..n).map(|_| None).collect(),
            remaining: n,
            progress,
            deadline,
            edits: None,
            changes: None,
            index: HashMap::new(),
        };
        let mut s = Self::new(services, config, batch);
        s.slots = slots;
        let now = Instant::now();
        for (i, slot) in s.slots.iter_mut().enumerate() {
            schedule(&mut s.due, slot, i, now);
        }
        s
    }

    pub(crate) fn take_edits(
        &mut self,
        edits: TakeEdits,
        changes: mpsc::UnboundedReceiver<LiveChange>,
    ) {
        self.policy.edits = Some(edits);
        self.policy.changes = Some(changes);
    }

    /// The results in job order, once [`Self::run`] returned `Ok`.
    pub(crate) fn results(self) -> Vec<HostResult> {
        self.policy
            .results
            .into_iter()
            .map(|r| r.expect("every host finished"))
            .collect()
    }

    /// A decided host whose spec or metadata changed is driven again.
    fn revive(&mut self, host: usize) -> bool {
        let b = &mut self.policy;
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

    /// A host added during the run: driven when selected and accepted by BMO's create rules.
    fn add_edited_host(&mut self, key: ObjectKey) {
        let Some(edits) = self.policy.edits.as_mut() else {
            return;
        };
        let source = &self.context.services.source;
        let loaded = source
            .load(&key)
            .inspect_err(|e| tracing::warn!("BareMetalHost {key}: {}", e.chain()));
        let Ok(Some(mut record)) = loaded else {
            return;
        };
        if !(edits.selects)(&record) {
            return;
        }
        let goal = (edits.prepare)(&mut record);
        let refused = refusal(&record.host, None);
        let host = self.add_slot(key.clone(), Some(Box::new(record)));
        tracing::info!("BareMetalHost {key}: added to its file during the run: driving it");
        let b = &mut self.policy;
        let slot = &mut self.slots[host];
        let record = slot.record.as_deref().expect("just added");
        b.progress.host_started(host, record, &goal);
        b.goals.push(goal);
        b.confirming.push(0);
        b.results.push(None);
        b.remaining += 1;
        b.index.insert(key, host);
        match refused {
            None => schedule(&mut self.due, slot, host, Instant::now()),
            Some(why) => {
                let record = slot.record.take().expect("just added");
                let reason = format!("refused by BMO's admission rules: {why}");
                b.stop_host(slot, host, *record, reason);
            }
        }
    }
}
