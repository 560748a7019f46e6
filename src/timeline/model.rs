//! What a timeline shows: per host, its states over time, its waits on the provisioner, its
//! errors and retries, and how it ended.

use chrono::{DateTime, Utc};

/// A run (or the recorded history of some hosts), ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// The command that made it, shown as the page's title.
    pub command: String,
    /// Time 0 of the axis: the run's start (the first recorded time of the hosts).
    pub start: DateTime<Utc>,
    /// The axis's end: the run's end (the last recorded time).
    pub end: DateTime<Utc>,
    /// One per host, in the run's (the files') order.
    pub rows: Vec<Row>,
    /// What the page cannot show, said under its title.
    pub notes: Vec<String>,
}

/// One host's row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    /// `namespace/name`.
    pub host: String,
    /// Its provisioning states, in time order, none overlapping.
    pub spans: Vec<Span>,
    /// When its passes waited on its provisioner, in time order.
    pub waits: Vec<Wait>,
    /// Its errors and retries, in time order.
    pub marks: Vec<Mark>,
    /// How it ended (`None`: not known, as in a recorded history).
    pub outcome: Option<Outcome>,
}

/// A time the host spent in one state (or, [`Span::inferred`], in states known only in order).
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// As `status.provisioning.state` says it; `new` for a host not handled yet; states known
    /// only in order are joined by ` → `.
    pub state: String,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
    /// Its times come from neighbouring operations and its states from BMO's path, not from
    /// the host's own record of them.
    pub inferred: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitKind {
    /// No free slot under `PROVISIONING_LIMIT`: the host is `delayed`.
    Limit,
    /// The provisioner could not be used, for the reason the host's bookkeeping gives (e.g. its
    /// node locked by a conductor that is offline).
    Provisioner,
}

impl WaitKind {
    pub fn as_str(self) -> &'static str {
        match self {
            WaitKind::Limit => "limit",
            WaitKind::Provisioner => "provisioner",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Wait {
    pub kind: WaitKind,
    /// Why, in words.
    pub why: String,
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkKind {
    /// A pass failed, or the host's status took an error.
    Error,
    /// The first pass (or event) after an error: the host tried again.
    Retry,
}

impl MarkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MarkKind::Error => "error",
            MarkKind::Retry => "retry",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub kind: MarkKind,
    pub at: DateTime<Utc>,
    /// The error, or what was retried.
    pub text: String,
}

/// How a host of a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Reached,
    /// Stopped short of its goal, for this reason.
    Stopped(String),
    /// Still driven when the run stopped.
    InFlight,
}

impl Row {
    /// When the row's last span, wait or mark ends.
    pub fn last_time(&self) -> Option<DateTime<Utc>> {
        let spans = self.spans.iter().map(|s| s.end);
        let waits = self.waits.iter().map(|w| w.end);
        spans
            .chain(waits)
            .chain(self.marks.iter().map(|m| m.at))
            .max()
    }

    /// When the row's first span, wait or mark starts.
    pub fn first_time(&self) -> Option<DateTime<Utc>> {
        let spans = self.spans.iter().map(|s| s.start);
        let waits = self.waits.iter().map(|w| w.start);
        spans
            .chain(waits)
            .chain(self.marks.iter().map(|m| m.at))
            .min()
    }
}

/// Seconds from `from` to `to` (negative when `to` comes first).
pub fn seconds(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from)
        .num_microseconds()
        .map_or_else(|| (to - from).num_seconds() as f64, |us| us as f64 / 1e6)
}
