//! The timeline of a run as it goes: a [`BatchObserver`] that notes, per host, the time of each
//! state change, wait on the provisioner, failed pass and retry. It only watches: nothing it
//! notes changes what a pass decides or sends.

use super::model::{Mark, MarkKind, Outcome, Row, Span, Timeline, Wait, WaitKind};
use crate::clock::Clock;
use crate::machine::PassOutcome;
use crate::record::HostRecord;
use crate::runner::{BatchObserver, Goal};
use bmhctl_plugin_sdk::WaitOn;
use chrono::{DateTime, Utc};
use std::sync::{Arc, Mutex};

/// Why a `delayed` host waits, in its wait's tooltip.
pub const LIMIT_WAIT: &str = "no free slot under PROVISIONING_LIMIT (operational status delayed)";

/// Shared between the run (as its observer) and whoever writes the page after it.
#[derive(Clone)]
pub struct Recorder {
    clock: Arc<dyn Clock>,
    inner: Arc<Mutex<Recording>>,
}

struct Recording {
    command: String,
    start: DateTime<Utc>,
    end: Option<DateTime<Utc>>,
    interrupted: bool,
    tracks: Vec<Track>,
}

/// One host as it goes: its row so far and what is still open.
#[derive(Clone)]
struct Track {
    row: Row,
    /// The state it is in, since when.
    state: (String, DateTime<Utc>),
    /// Open waits, since when and why.
    limit: Option<DateTime<Utc>>,
    provisioner: Option<(DateTime<Utc>, String)>,
    /// `status.errorCount` after the last pass: a rise is an error the status took.
    error_count: i64,
    /// The last pass ended in an error (this one): the next pass is its retry.
    failed: Option<String>,
    /// No longer driven.
    closed: bool,
}

/// A state as the timeline names it.
fn state_name(rec: &HostRecord) -> &str {
    match rec.status().provisioning.state.as_str() {
        "" => "new",
        s => s,
    }
}

impl Track {
    fn new(host: String, rec: &HostRecord, now: DateTime<Utc>) -> Self {
        Track {
            row: Row {
                host,
                ..Row::default()
            },
            state: (state_name(rec).to_string(), now),
            limit: None,
            provisioner: None,
            error_count: rec.status().error_count,
            failed: None,
            closed: false,
        }
    }

    /// The host is in `rec`'s state from `now` on.
    fn enter(&mut self, rec: &HostRecord, now: DateTime<Utc>) {
        let state = state_name(rec);
        if self.state.0 != state {
            let (was, since) = std::mem::replace(&mut self.state, (state.to_string(), now));
            self.row.spans.push(Span {
                state: was,
                start: since,
                end: now,
                inferred: false,
            });
        }
    }

    fn pass(&mut self, rec: &HostRecord, out: &PassOutcome, now: DateTime<Utc>) {
        self.enter(rec, now);
        if let Some(error) = self.failed.take() {
            self.row.marks.push(Mark {
                kind: MarkKind::Retry,
                at: now,
                text: format!("retried after: {error}"),
            });
        }
        let status = rec.status();
        let error = match &out.error {
            Some(e) => Some(format!("pass failed: {e}")),
            None if status.error_count > self.error_count => Some(format!(
                "{}: {}",
                status.error_type.as_str(),
                status.error_message
            )),
            None => None,
        };
        self.error_count = status.error_count;
        if let Some(text) = &error {
            self.row.marks.push(Mark {
                kind: MarkKind::Error,
                at: now,
                text: text.clone(),
            });
        }
        self.failed = error;
        let delayed = out.wait == Some(WaitOn::Capacity);
        match (self.limit, delayed) {
            (None, true) => self.limit = Some(now),
            (Some(_), false) => self.end_limit(now),
            _ => {}
        }
        let why = rec.book.waiting.as_deref().unwrap_or_default();
        if self.provisioner.as_ref().map_or("", |(_, w)| w) != why {
            self.end_provisioner(now);
            if !why.is_empty() {
                self.provisioner = Some((now, why.to_string()));
            }
        }
    }

    fn end_limit(&mut self, now: DateTime<Utc>) {
        if let Some(start) = self.limit.take() {
            self.row.waits.push(Wait {
                kind: WaitKind::Limit,
                why: LIMIT_WAIT.into(),
                start,
                end: now,
            });
        }
    }

    fn end_provisioner(&mut self, now: DateTime<Utc>) {
        if let Some((start, why)) = self.provisioner.take() {
            self.row.waits.push(Wait {
                kind: WaitKind::Provisioner,
                why,
                start,
                end: now,
            });
        }
    }

    /// No longer driven from `now` on: what is open ends there.
    fn close(&mut self, now: DateTime<Utc>, outcome: Outcome) {
        if self.closed {
            return;
        }
        self.closed = true;
        self.end_limit(now);
        self.end_provisioner(now);
        self.row.spans.push(Span {
            state: self.state.0.clone(),
            start: self.state.1,
            end: now,
            inferred: false,
        });
        self.row.waits.sort_by_key(|w| w.start);
        self.row.outcome = Some(outcome);
    }
}

impl Recorder {
    /// A recording of the run `command` starts, from now on `clock`.
    pub fn new(command: String, clock: Arc<dyn Clock>) -> Self {
        let start = clock.now();
        Recorder {
            clock,
            inner: Arc::new(Mutex::new(Recording {
                command,
                start,
                end: None,
                interrupted: false,
                tracks: Vec::new(),
            })),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Recording) -> T) -> T {
        f(&mut self.inner.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn track(&self, host: usize, f: impl FnOnce(&mut Track, DateTime<Utc>)) {
        let now = self.clock.now();
        self.with(|r| {
            if let Some(t) = r.tracks.get_mut(host) {
                f(t, now)
            }
        })
    }

    /// The timeline so far: hosts still driven end now, as in flight.
    pub fn timeline(&self) -> Timeline {
        let now = self.clock.now();
        self.with(|r| {
            let end = r.end.unwrap_or(now);
            let rows = r
                .tracks
                .iter()
                .map(|t| {
                    let mut t = t.clone();
                    t.close(end, Outcome::InFlight);
                    t.row
                })
                .collect::<Vec<_>>();
            let mut notes = Vec::new();
            if r.interrupted {
                notes.push("The run was interrupted: hosts still driven are in flight.".into());
            }
            Timeline {
                command: r.command.clone(),
                start: r.start,
                end: rows
                    .iter()
                    .filter_map(Row::last_time)
                    .fold(end, DateTime::max),
                rows,
                notes,
            }
        })
    }
}

impl BatchObserver for Recorder {
    fn host_started(&mut self, host: usize, rec: &HostRecord, _goal: &Goal) {
        let now = self.clock.now();
        let meta = &rec.host.metadata;
        let name = format!("{}/{}", meta.namespace_or_default(), meta.name);
        self.with(|r| {
            // A host added during the run (an edit of a batch's files) comes after the others.
            if host >= r.tracks.len() {
                r.tracks.push(Track::new(name, rec, now));
            }
        })
    }

    fn reads_events(&self) -> bool {
        false
    }

    fn pass_done(&mut self, host: usize, rec: &HostRecord, out: &PassOutcome) {
        self.track(host, |t, now| t.pass(rec, out, now));
    }

    fn host_finished(&mut self, host: usize, rec: &HostRecord, reached: bool, reason: &str) {
        self.track(host, |t, now| {
            t.enter(rec, now);
            let outcome = if reached {
                Outcome::Reached
            } else {
                Outcome::Stopped(reason.to_string())
            };
            t.close(now, outcome);
        });
    }

    fn left_off(&mut self, host: usize, rec: &HostRecord) {
        self.track(host, |t, now| {
            t.enter(rec, now);
            t.close(now, Outcome::InFlight);
        });
    }

    fn interrupted(&mut self) {
        self.with(|r| r.interrupted = true);
    }

    fn finish(&mut self) {
        let now = self.clock.now();
        self.with(|r| r.end = Some(now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::machine::Requeue;
    use bmh_api::{ErrorType, ProvisioningState};
    use std::time::Duration;

    fn record(state: ProvisioningState) -> HostRecord {
        let mut rec = HostRecord::default();
        rec.host.metadata.name = "worker-0".into();
        let mut status = bmh_api::BareMetalHostStatus::default();
        status.provisioning.state = state;
        rec.host.status = Some(status);
        rec
    }

    fn outcome() -> PassOutcome {
        PassOutcome::new(Requeue::After(Duration::from_secs(10)))
    }

    fn at(s: u64) -> DateTime<Utc> {
        ManualClock::default().now() + chrono::Duration::seconds(s as i64)
    }

    /// A host registers, is delayed twice by the limit, inspects, fails a pass, is retried,
    /// waits on a locked node, and reaches `available`.
    #[test]
    fn a_run_becomes_spans_waits_and_marks_at_the_times_they_happened() {
        let clock = Arc::new(ManualClock::default());
        let mut r = Recorder::new("bmhctl provision hosts.yaml".into(), clock.clone());
        let tick = |s| clock.advance(Duration::from_secs(s));
        use ProvisioningState as S;
        r.host_started(
            0,
            &record(S::None),
            &Goal::State(ProvisioningState::Available),
        );
        tick(1);
        r.pass_done(0, &record(S::Registering), &outcome());
        tick(2);
        let delayed = PassOutcome {
            wait: Some(WaitOn::Capacity),
            ..outcome()
        };
        r.pass_done(0, &record(S::Registering), &delayed);
        tick(3);
        r.pass_done(0, &record(S::Registering), &delayed);
        tick(4);
        r.pass_done(0, &record(S::Inspecting), &outcome());
        tick(1);
        let failed = PassOutcome {
            error: Some("node locked".into()),
            ..outcome()
        };
        r.pass_done(0, &record(S::Inspecting), &failed);
        tick(2);
        let mut waiting = record(S::Inspecting);
        waiting.book.waiting = Some("conductor offline".into());
        r.pass_done(0, &waiting, &outcome());
        tick(5);
        r.pass_done(0, &record(S::Preparing), &outcome());
        tick(1);
        let mut broken = record(S::Preparing);
        let st = broken.host.status.as_mut().unwrap();
        st.error_type = ErrorType::PreparationError;
        st.error_message = "RAID failed".into();
        st.error_count = 1;
        r.pass_done(0, &broken, &outcome());
        tick(1);
        // The batch decides after the pass that reached the goal.
        r.pass_done(0, &record(S::Available), &outcome());
        r.host_finished(0, &record(S::Available), true, "");
        tick(1);
        r.finish();
        let t = r.timeline();
        assert_eq!(t.start, at(0));
        assert_eq!(t.end, at(21));
        let row = &t.rows[0];
        assert_eq!(row.host, "default/worker-0");
        let spans: Vec<_> = row
            .spans
            .iter()
            .map(|s| (s.state.as_str(), s.start, s.end))
            .collect();
        assert_eq!(
            spans,
            [
                ("new", at(0), at(1)),
                ("registering", at(1), at(10)),
                ("inspecting", at(10), at(18)),
                ("preparing", at(18), at(20)),
                ("available", at(20), at(20)),
            ]
        );
        let waits: Vec<_> = row.waits.iter().map(|w| (w.kind, w.start, w.end)).collect();
        assert_eq!(
            waits,
            [
                (WaitKind::Limit, at(3), at(10)),
                (WaitKind::Provisioner, at(13), at(18)),
            ]
        );
        assert_eq!(row.waits[1].why, "conductor offline");
        let marks: Vec<_> = row
            .marks
            .iter()
            .map(|m| (m.kind, m.at, m.text.as_str()))
            .collect();
        assert_eq!(
            marks,
            [
                (MarkKind::Error, at(11), "pass failed: node locked"),
                (
                    MarkKind::Retry,
                    at(13),
                    "retried after: pass failed: node locked"
                ),
                (MarkKind::Error, at(19), "preparation error: RAID failed"),
                (
                    MarkKind::Retry,
                    at(20),
                    "retried after: preparation error: RAID failed"
                ),
            ]
        );
        assert_eq!(row.outcome, Some(Outcome::Reached));
    }

    /// A run that stops short: hosts still driven end in flight where the run stopped, their
    /// open wait with them; a host added during the run gets a row after the others.
    #[test]
    fn a_run_stopped_short_ends_its_hosts_in_flight() {
        let clock = Arc::new(ManualClock::default());
        let mut r = Recorder::new("bmhctl provision hosts.yaml".into(), clock.clone());
        let goal = Goal::State(ProvisioningState::Provisioned);
        r.host_started(0, &record(ProvisioningState::Available), &goal);
        clock.advance(Duration::from_secs(2));
        let delayed = PassOutcome {
            wait: Some(WaitOn::Capacity),
            ..outcome()
        };
        r.pass_done(0, &record(ProvisioningState::Available), &delayed);
        let mut added = record(ProvisioningState::Provisioned);
        added.host.metadata.name = "worker-1".into();
        r.host_started(1, &added, &goal);
        clock.advance(Duration::from_secs(3));
        r.interrupted();
        r.left_off(0, &record(ProvisioningState::Available));
        r.left_off(1, &added);
        r.finish();
        let t = r.timeline();
        assert_eq!(t.end, at(5));
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0].outcome, Some(Outcome::InFlight));
        assert_eq!(t.rows[0].spans.len(), 1);
        assert_eq!(t.rows[0].spans[0].end, at(5));
        assert_eq!(
            (t.rows[0].waits[0].start, t.rows[0].waits[0].end),
            (at(2), at(5))
        );
        assert_eq!(t.rows[1].host, "default/worker-1");
        assert_eq!(t.rows[1].spans[0].start, at(2));
        assert!(t.notes[0].contains("interrupted"), "{:?}", t.notes);
    }

    /// Asked before the run ends (a run ended by a failed save), the hosts end where they are.
    #[test]
    fn a_timeline_taken_mid_run_ends_now() {
        let clock = Arc::new(ManualClock::default());
        let mut r = Recorder::new("bmhctl provision hosts.yaml".into(), clock.clone());
        let goal = Goal::State(ProvisioningState::Provisioned);
        r.host_started(0, &record(ProvisioningState::Registering), &goal);
        clock.advance(Duration::from_secs(4));
        let t = r.timeline();
        assert_eq!(t.end, at(4));
        assert_eq!(t.rows[0].spans[0].end, at(4));
        assert_eq!(t.rows[0].outcome, Some(Outcome::InFlight));
        // Taking it changes nothing: the run goes on.
        clock.advance(Duration::from_secs(1));
        r.host_finished(0, &record(ProvisioningState::Registering), false, "gave up");
        let t = r.timeline();
        assert_eq!(t.rows[0].spans[0].end, at(5));
        assert_eq!(t.rows[0].outcome, Some(Outcome::Stopped("gave up".into())));
    }
}
