//! What the user sees while hosts move (bars, or timestamped lines), and the [`Ledger`].

use crate::machine::PassOutcome;
use crate::record::HostRecord;
use crate::runner::{BatchObserver, Goal};
use bmhctl_plugin_sdk::WaitOn;
use chrono::{DateTime, Utc};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// Bars (chosen by the command line where they fit: see [`bars_fit`]).
    Bars,
    /// Plain lines on stderr: state changes, errors, (verbose) events and a heartbeat.
    Lines,
    Quiet,
}

/// How often the bars may redraw: a pty records every frame, so a few per second is plenty.
const DRAW_HZ: u8 = 2;
/// The spinners' tick: often enough to show the run is alive.
const TICK: Duration = Duration::from_secs(1);
/// Plain lines: at most this long without a line before a heartbeat.
pub const HEARTBEAT: Duration = Duration::from_secs(30);

/// Whether bars suit this stderr (`term` is `$TERM`, `ci` is `$CI`).
pub fn bars_fit(terminal: bool, term: Option<&str>, ci: Option<&str>) -> bool {
    let dumb = term.is_some_and(|t| t == "dumb");
    let in_ci = ci.is_some_and(|c| !c.is_empty() && c != "0" && !c.eq_ignore_ascii_case("false"));
    terminal && !dumb && !in_ci
}

/// The last thing shown for a host, to print only changes.
#[derive(Default, Clone, PartialEq)]
struct Shown {
    state: String,
    op: String,
    error: String,
    /// Why its passes wait on the provisioner (its bookkeeping's `waiting`).
    waiting: String,
    /// Its last pass's error while its passes fail (its bookkeeping's `passError`).
    pass_error: String,
}

/// What is known of one host of a batch, so that an interrupted run can report it.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerEntry {
    pub namespace: String,
    pub name: String,
    pub goal: Goal,
    /// When the run took the host on.
    pub start: DateTime<Utc>,
    /// When the host stopped being driven; `None` while in flight.
    pub end: Option<DateTime<Utc>>,
    pub passes: u64,
    /// The host's status when it finished, or when the run stopped.
    pub seen: Seen,
    pub reached: bool,
    /// Why the host stopped short of its goal.
    pub reason: String,
}

/// The parts of a host's status a result reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Seen {
    pub state: String,
    pub operational_status: String,
    /// `None` before the host has a status.
    pub powered_on: Option<bool>,
    pub error_type: String,
    pub error_message: String,
    pub error_count: i64,
    pub provisioning_fail_count: i64,
    pub provisioning_id: String,
    /// Why the host's passes wait on its provisioner (empty: they don't).
    pub waiting: String,
    /// The error of its last pass while its passes fail (empty: the last one got through).
    pub pass_error: String,
}

impl Seen {
    /// As [`Self::of`], in place, reusing the texts' room.
    pub fn refresh(&mut self, rec: &HostRecord) {
        let s = rec.status();
        let set = |to: &mut String, from: &str| {
            if to != from {
                to.clear();
                to.push_str(from);
            }
        };
        set(&mut self.state, s.provisioning.state.as_str());
        set(&mut self.operational_status, s.operational_status.as_str());
        self.powered_on = rec.host.status.as_ref().map(|s| s.powered_on);
        set(&mut self.error_type, s.error_type.as_str());
        set(&mut self.error_message, &s.error_message);
        self.error_count = s.error_count;
        self.provisioning_fail_count = s.provisioning_fail_count;
        set(&mut self.provisioning_id, &s.provisioning.id);
        set(
            &mut self.waiting,
            rec.book.waiting.as_deref().unwrap_or_default(),
        );
        set(
            &mut self.pass_error,
            rec.book.pass_error.as_deref().unwrap_or_default(),
        );
    }

    pub fn of(rec: &HostRecord) -> Self {
        let mut seen = Self::default();
        seen.refresh(rec);
        seen
    }
}

#[derive(Clone, Default)]
pub struct Ledger(Arc<Mutex<Vec<LedgerEntry>>>);

impl Ledger {
    /// A copy of the entries, in job order.
    #[cfg(test)]
    pub fn entries(&self) -> Vec<LedgerEntry> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The entries, in job order, taken out: for the run's report, once nothing adds to them.
    pub fn take(&self) -> Vec<LedgerEntry> {
        std::mem::take(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn update(&self, f: impl FnOnce(&mut Vec<LedgerEntry>)) {
        f(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Where plain lines go, and what the heartbeat says.
struct Lines {
    out: Box<dyn Write + Send>,
    last_line: Instant,
    total: usize,
    decided: usize,
    /// Per host: what its next pass waits for, if anything.
    waiting: Vec<Waits>,
    /// Per host: whether its last pass failed; and the latest such error, with its host.
    failing: Vec<bool>,
    last_failure: String,
    stopped: bool,
    /// `out` is the journal: lines carry a priority, and no time of their own.
    journal: bool,
    /// `--log-format json`: each line a JSON object ([`crate::stderr_json`]).
    json: bool,
}

/// What a host's next pass waits for, as the heartbeat counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waits {
    Nothing,
    /// The provisioner's work (Ironic's), or a reason its bookkeeping gives.
    Provisioner,
    /// A slot under `PROVISIONING_LIMIT` (BMO's `delayed`): told apart, since it is the user's
    /// knob and not Ironic's pace that holds these hosts.
    Capacity,
}

impl Waits {
    fn of(out: &PassOutcome, reason: &str) -> Self {
        match out.wait {
            Some(WaitOn::Capacity) => Waits::Capacity,
            Some(_) => Waits::Provisioner,
            None if !reason.is_empty() => Waits::Provisioner,
            None => Waits::Nothing,
        }
    }
}

impl Lines {
    fn say(&mut self, text: &str) {
        self.say_at(crate::journal_stream::INFO, None, text, &[]);
    }

    /// A line of `host` (`HOST: text`).
    fn say_of(&mut self, host: &str, text: &str) {
        self.say_at(crate::journal_stream::INFO, Some(host), text, &[]);
    }

    /// A line of `priority` (sd-daemon's, for the journal), of `host` when it is one host's;
    /// `fields` go into its JSON object only.
    fn say_at(&mut self, priority: u8, host: Option<&str>, text: &str, fields: &[(&str, &str)]) {
        // stderr gone: nothing to do about it, and no reason to stop the run.
        if self.json {
            let mut all: Vec<(&str, &str)> = host.map(|h| ("host", h)).into_iter().collect();
            all.extend_from_slice(fields);
            let level = crate::stderr_json::level_of(priority);
            let line = crate::stderr_json::line(level, text, &all);
            let _ = if self.journal {
                let line = crate::journal_stream::prefixed(&line, priority);
                self.out.write_all(line.as_bytes())
            } else {
                writeln!(self.out, "{line}")
            };
        } else {
            let text = match host {
                Some(h) => format!("{h}: {text}"),
                None => text.to_string(),
            };
            if self.journal {
                let line = crate::journal_stream::prefixed(&text, priority);
                let _ = self.out.write_all(line.as_bytes());
            } else {
                let now = Utc::now().format("%Y-%m-%dT%H:%M:%SZ");
                let _ = writeln!(self.out, "{now} {text}");
            }
        }
        let _ = self.out.flush();
        self.last_line = Instant::now();
    }

    fn heartbeat(&mut self) {
        let count = |of: Waits| self.waiting.iter().filter(|w| **w == of).count();
        let (waiting, delayed) = (count(Waits::Provisioner), count(Waits::Capacity));
        let mut text = format!(
            "{}/{} hosts decided, {waiting} waiting on the provisioner",
            self.decided, self.total
        );
        if delayed > 0 {
            text.push_str(&format!(", {delayed} delayed by PROVISIONING_LIMIT"));
        }
        let failing = self.failing.iter().filter(|f| **f).count();
        if failing > 0 {
            text.push_str(&format!(
                ", {failing} retrying after errors (last: {})",
                self.last_failure
            ));
        }
        self.say(&text);
    }
}

/// The plain lines and the thread that writes the heartbeat.
struct Plain {
    lines: Arc<(Mutex<Lines>, Condvar)>,
    beat: Option<std::thread::JoinHandle<()>>,
}

impl Plain {
    fn new(
        out: Box<dyn Write + Send>,
        journal: bool,
        json: bool,
        hosts: usize,
        every: Duration,
    ) -> Self {
        let lines = Arc::new((
            Mutex::new(Lines {
                out,
                last_line: Instant::now(),
                total: hosts,
                decided: 0,
                waiting: vec![Waits::Nothing; hosts],
                failing: vec![false; hosts],
                last_failure: String::new(),
                stopped: false,
                journal,
                json,
            }),
            Condvar::new(),
        ));
        let shared = lines.clone();
        let beat = std::thread::Builder::new()
            .name("bmhctl-heartbeat".into())
            .spawn(move || {
                let (lock, wake) = &*shared;
                let mut l = lock.lock().unwrap_or_else(|e| e.into_inner());
                while !l.stopped {
                    let due = l.last_line + every;
                    let now = Instant::now();
                    if now >= due {
                        l.heartbeat();
                        continue;
                    }
                    l = wake
                        .wait_timeout(l, due - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            })
            .ok();
        Self { lines, beat }
    }

    fn with(&self, f: impl FnOnce(&mut Lines)) {
        f(&mut self.lines.0.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn stop(&mut self) {
        self.with(|l| l.stopped = true);
        self.lines.1.notify_all();
        if let Some(t) = self.beat.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Plain {
    fn drop(&mut self) {
        self.stop();
    }
}

pub struct Progress {
    view: View,
    verbose: bool,
    names: Vec<String>,
    shown: Vec<Shown>,
    ledger: Option<Ledger>,
    /// Per host, its passes done, counted here and written into the ledger when the host
    /// finishes or the run stops ([`Self::left_off`]): the ledger's readers read it then
    /// only, and a pass then costs no lock nor a look at an entry of thousands.
    passes: Vec<u64>,
    /// How many hosts the run starts with: the ledger's room.
    hosts: usize,
}

enum View {
    Quiet,
    Lines(Plain),
    Bars {
        multi: MultiProgress,
        bars: Vec<ProgressBar>,
    },
    Aggregate {
        bar: ProgressBar,
        tally: Tally,
    },
}

/// What the aggregate bar counts, per host.
struct Tally {
    states: Vec<String>,
    /// Why it waits on the provisioner (empty: it doesn't).
    waiting: Vec<String>,
    /// It waits for a slot under `PROVISIONING_LIMIT`.
    delayed: Vec<bool>,
}

impl Tally {
    fn new(hosts: usize) -> Self {
        Tally {
            states: vec![String::new(); hosts],
            waiting: vec![String::new(); hosts],
            delayed: vec![false; hosts],
        }
    }

    /// Room for `host`, added during the run (an edit of a batch's files).
    fn make_room(&mut self, host: usize) {
        if host >= self.states.len() {
            self.states.resize(host + 1, String::new());
            self.waiting.resize(host + 1, String::new());
            self.delayed.resize(host + 1, false);
        }
    }

    fn summary(&self) -> String {
        summarise(&self.states, &self.waiting, &self.delayed)
    }
}

impl Progress {
    /// Progress on stderr, as `mode` says.
    pub fn new(mode: ProgressMode, verbose: bool, hosts: usize) -> Self {
        let view = match mode {
            ProgressMode::Quiet => View::Quiet,
            ProgressMode::Bars => {
                let rows = terminal_rows().unwrap_or(24);
                let target = || ProgressDrawTarget::stderr_with_hz(DRAW_HZ);
                if hosts + 2 > rows {
                    let bar = ProgressBar::with_draw_target(Some(hosts as u64), target());
                    bar.set_style(
                        ProgressStyle::with_template(
                            "{bar:30} {pos}/{len} stable  {elapsed}  {msg}",
                        )
                        .expect("valid template"),
                    );
                    bar.enable_steady_tick(TICK);
                    View::Aggregate {
                        bar,
                        tally: Tally::new(hosts),
                    }
                } else {
                    View::Bars {
                        multi: MultiProgress::with_draw_target(target()),
                        bars: Vec::new(),
                    }
                }
            }
            ProgressMode::Lines => {
                let journal = crate::journal_stream::stderr_is_journal();
                let json = crate::stderr_json::on();
                let out = Box::new(std::io::stderr());
                View::Lines(Plain::new(out, journal, json, hosts, HEARTBEAT))
            }
        };
        Self::with_view(view, verbose, hosts)
    }

    /// Plain lines into `out`, with a heartbeat after `heartbeat` of silence.
    #[cfg(test)]
    pub fn lines_to(
        out: Box<dyn Write + Send>,
        verbose: bool,
        hosts: usize,
        heartbeat: Duration,
    ) -> Self {
        Self::with_view(
            View::Lines(Plain::new(out, false, false, hosts, heartbeat)),
            verbose,
            hosts,
        )
    }

    /// [`Self::lines_to`] as `--log-format json` writes them.
    #[cfg(test)]
    pub fn json_lines_to(out: Box<dyn Write + Send>, hosts: usize, heartbeat: Duration) -> Self {
        Self::with_view(
            View::Lines(Plain::new(out, false, true, hosts, heartbeat)),
            true,
            hosts,
        )
    }

    fn with_view(view: View, verbose: bool, hosts: usize) -> Self {
        Self {
            view,
            verbose,
            names: Vec::new(),
            shown: Vec::new(),
            ledger: None,
            passes: Vec::new(),
            hosts,
        }
    }

    /// Keeps a [`Ledger`] of the hosts from now on, and returns it. It has room for the hosts
    /// the run starts with: grown by doubling, it held up to twice their entries' room.
    pub fn keep_ledger(&mut self) -> Ledger {
        let hosts = self.hosts;
        self.passes.reserve(hosts);
        self.ledger
            .get_or_insert_with(|| Ledger(Arc::new(Mutex::new(Vec::with_capacity(hosts)))))
            .clone()
    }
}

impl BatchObserver for Progress {
    fn host_started(&mut self, host: usize, rec: &HostRecord, goal: &Goal) {
        if let Some(l) = &self.ledger {
            let meta = &rec.host.metadata;
            l.update(|e| {
                e.push(LedgerEntry {
                    namespace: meta.namespace_or_default().to_string(),
                    name: meta.name.clone(),
                    goal: goal.clone(),
                    start: Utc::now(),
                    end: None,
                    passes: 0,
                    seen: Seen::of(rec),
                    reached: false,
                    reason: String::new(),
                })
            });
            if host >= self.passes.len() {
                self.passes.resize(host + 1, 0);
            }
        }
        // Quiet shows nothing: keep no names nor states (a pass then costs no allocation here).
        if matches!(self.view, View::Quiet) {
            return;
        }
        let name = format!(
            "{}/{}",
            rec.host.metadata.namespace_or_default(),
            rec.host.metadata.name
        );
        debug_assert_eq!(host, self.names.len());
        let shown = shown_of(rec);
        if let View::Bars { multi, bars } = &mut self.view {
            let bar = multi.add(ProgressBar::new_spinner());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix:<32} {msg}")
                    .expect("valid template"),
            );
            bar.set_prefix(name.clone());
            bar.set_message(format!("{} (goal: {})", describe(&shown), goal.describe()));
            bar.enable_steady_tick(TICK);
            bars.push(bar);
        }
        // A host added during the run (an edit of a batch's files) comes after the counted ones.
        match &mut self.view {
            View::Aggregate { tally, .. } => tally.make_room(host),
            View::Lines(plain) => plain.with(|l| {
                if host >= l.waiting.len() {
                    l.waiting.resize(host + 1, Waits::Nothing);
                    l.total = l.total.max(host + 1);
                }
            }),
            _ => {}
        }
        if let View::Aggregate { tally, .. } = &mut self.view {
            tally.states[host] = shown.state.clone();
            tally.waiting[host] = shown.waiting.clone();
        }
        self.names.push(name);
        self.shown.push(shown);
    }

    /// Whether [`Self::pass_done`] reads a pass's events (verbose plain lines only): when not,
    /// a pass's events are freed on the thread that ran it, not on the scheduler's.
    fn reads_events(&self) -> bool {
        self.verbose && matches!(self.view, View::Lines(_))
    }

    fn pass_done(&mut self, host: usize, rec: &HostRecord, out: &PassOutcome) {
        if let Some(n) = self.passes.get_mut(host) {
            *n += 1;
        }
        if matches!(self.view, View::Quiet) {
            return;
        }
        let now = shown_of(rec);
        let before = std::mem::replace(&mut self.shown[host], now.clone());
        let name = &self.names[host];
        let verbose = self.verbose;
        match &mut self.view {
            View::Quiet => {}
            View::Lines(plain) => plain.with(|l| {
                l.waiting[host] = Waits::of(out, &now.waiting);
                l.failing[host] = out.error.is_some();
                if verbose {
                    for e in &out.events {
                        let text = format!("event {}: {}", e.reason, e.message);
                        let info = crate::journal_stream::INFO;
                        l.say_at(info, Some(name), &text, &[("reason", &e.reason)]);
                    }
                }
                // Without -v, a host's first pass error and each new one; with it, every one.
                // A refused host's error is its reason for stopping, said once as such.
                if let Some(err) = &out.error
                    && out.end != crate::machine::PassEnd::Refused
                {
                    l.last_failure = format!("{name}: {err}");
                    if verbose || before.pass_error != now.pass_error {
                        let warning = crate::journal_stream::WARNING;
                        l.say_at(warning, Some(name), &format!("pass failed: {err}"), &[]);
                    }
                }
                if before.state != now.state {
                    l.say_at(
                        crate::journal_stream::INFO,
                        Some(name),
                        &format!(
                            "{} -> {}",
                            show_state(&before.state),
                            show_state(&now.state)
                        ),
                        &[("from", &before.state), ("to", &now.state)],
                    );
                }
                if before.error != now.error && !now.error.is_empty() {
                    let warning = crate::journal_stream::WARNING;
                    l.say_at(warning, Some(name), &format!("error: {}", now.error), &[]);
                }
                if before.waiting != now.waiting {
                    if now.waiting.is_empty() {
                        l.say_of(name, "the provisioner answers again");
                    } else {
                        l.say_of(
                            name,
                            &format!("waiting for the provisioner: {}", now.waiting),
                        );
                    }
                }
            }),
            View::Bars { bars, .. } => {
                if before != now {
                    bars[host].set_message(describe(&now));
                }
            }
            View::Aggregate { bar, tally } => {
                tally.states[host] = now.state.clone();
                tally.waiting[host] = now.waiting.clone();
                let delayed = matches!(out.wait, Some(WaitOn::Capacity));
                let was_delayed = std::mem::replace(&mut tally.delayed[host], delayed);
                if before.state != now.state
                    || before.waiting != now.waiting
                    || was_delayed != delayed
                {
                    bar.set_message(tally.summary());
                }
            }
        }
    }

    fn host_finished(&mut self, host: usize, rec: &HostRecord, reached: bool, reason: &str) {
        if let Some(l) = &self.ledger {
            let passes = self.passes.get(host).copied().unwrap_or_default();
            l.update(|e| {
                if let Some(e) = e.get_mut(host) {
                    e.end = Some(Utc::now());
                    e.passes = passes;
                    e.seen.refresh(rec);
                    e.reached = reached;
                    e.reason = reason.to_string();
                }
            });
        }
        if matches!(self.view, View::Quiet) {
            return;
        }
        let shown = shown_of(rec);
        let name = &self.names[host];
        let verdict = if reached {
            "done".to_string()
        } else {
            format!("stopped: {reason}")
        };
        match &mut self.view {
            View::Quiet => {}
            View::Lines(plain) => plain.with(|l| {
                l.decided += 1;
                l.waiting[host] = Waits::Nothing;
                l.failing[host] = false;
                l.say_of(name, &format!("{} ({verdict})", show_state(&shown.state)));
            }),
            View::Bars { bars, .. } => {
                bars[host].finish_with_message(format!("{} ({verdict})", describe(&shown)))
            }
            View::Aggregate { bar, tally } => {
                if std::mem::take(&mut tally.delayed[host]) {
                    bar.set_message(tally.summary());
                }
                bar.inc(1)
            }
        }
    }

    /// Writes into the ledger where a host still driven got to, as `rec` has it, when the run
    /// stops short (its readers read it then): its passes done and its status.
    fn left_off(&mut self, host: usize, rec: &HostRecord) {
        if let Some(l) = &self.ledger {
            let passes = self.passes.get(host).copied().unwrap_or_default();
            l.update(|e| {
                if let Some(e) = e.get_mut(host).filter(|e| e.end.is_none()) {
                    e.passes = passes;
                    e.seen.refresh(rec);
                }
            });
        }
    }

    fn interrupted(&mut self) {
        let msg = "interrupted: finishing passes in flight and saving";
        match &self.view {
            View::Bars { multi, .. } => {
                let _ = multi.println(msg);
            }
            View::Aggregate { bar, .. } => bar.println(msg),
            View::Lines(plain) => plain.with(|l| l.say(msg)),
            View::Quiet => crate::eprintln_quiet!("{msg}"),
        }
    }

    fn finish(&mut self) {
        match &mut self.view {
            View::Bars { bars, .. } => bars.iter().for_each(|b| {
                if !b.is_finished() {
                    b.abandon()
                }
            }),
            View::Aggregate { bar, .. } => bar.finish(),
            View::Lines(plain) => plain.stop(),
            View::Quiet => {}
        }
    }
}

fn shown_of(rec: &HostRecord) -> Shown {
    let st = rec.status();
    Shown {
        state: st.provisioning.state.as_str().to_string(),
        op: st.operational_status.as_str().to_string(),
        error: st.error_message.clone(),
        waiting: rec.book.waiting.clone().unwrap_or_default(),
        pass_error: rec.book.pass_error.clone().unwrap_or_default(),
    }
}

fn show_state(s: &str) -> &str {
    if s.is_empty() { "(new)" } else { s }
}

fn describe(s: &Shown) -> String {
    let mut text = show_state(&s.state).to_string();
    if !s.op.is_empty() && s.op != "OK" {
        text.push_str(&format!(" [{}]", s.op));
    }
    if !s.error.is_empty() {
        text.push_str(&format!(": {}", s.error));
    }
    if !s.waiting.is_empty() {
        text.push_str(&format!(" (waiting for the provisioner: {})", s.waiting));
    }
    if !s.pass_error.is_empty() {
        text.push_str(&format!(" (retrying: {})", s.pass_error));
    }
    text
}

/// The aggregate bar's message: hosts per state, then how many wait on the provisioner and
/// why (the first such host's reason: they are most often one cause), then how many wait for a
/// slot under `PROVISIONING_LIMIT`.
fn summarise(states: &[String], waiting: &[String], delayed: &[bool]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for s in states {
        *counts.entry(show_state(s)).or_default() += 1;
    }
    let mut text = counts
        .iter()
        .map(|(s, n)| format!("{s}: {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut why = waiting.iter().filter(|w| !w.is_empty());
    if let Some(first) = why.next() {
        let n = 1 + why.count();
        text.push_str(&format!(" ({n} waiting for the provisioner: {first})"));
    }
    let delayed = delayed.iter().filter(|d| **d).count();
    if delayed > 0 {
        text.push_str(&format!(" ({delayed} delayed by PROVISIONING_LIMIT)"));
    }
    text
}

fn terminal_rows() -> Option<usize> {
    console::Term::stderr()
        .size_checked()
        .map(|(rows, _)| rows as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Requeue;
    use bmh_api::ProvisioningState;

    /// A writer the test reads back.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Buffer {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    fn record(name: &str, state: ProvisioningState) -> HostRecord {
        let mut rec = HostRecord::default();
        rec.host.metadata.name = name.into();
        let mut status = bmh_api::BareMetalHostStatus::default();
        status.provisioning.state = state;
        rec.host.status = Some(status);
        rec
    }

    fn outcome(waits: bool) -> PassOutcome {
        PassOutcome {
            requeue: Requeue::After(Duration::from_secs(10)),
            save_status: true,
            bookkeeping_changed: false,
            firmware_changed: false,
            data_image_changed: false,
            removed_annotations: Vec::new(),
            events: Vec::new(),
            error: None,
            end: crate::machine::PassEnd::Acted,
            wait: waits.then_some(bmhctl_plugin_sdk::WaitOn::Progress),
        }
    }

    /// `2026-12-01T14:15:11Z `: the timestamp every plain line starts with.
    fn stamped(line: &str) -> bool {
        let (stamp, rest) = line.split_at(line.find(' ').unwrap_or(0));
        chrono::NaiveDateTime::parse_from_str(stamp, "%Y-%m-%dT%H:%M:%SZ").is_ok()
            && !rest.trim().is_empty()
    }

    #[test]
    fn bars_only_on_a_terminal_that_is_not_dumb_outside_ci() {
        assert!(bars_fit(true, Some("xterm-256color"), None));
        assert!(bars_fit(true, None, Some("false")));
        assert!(!bars_fit(false, Some("xterm"), None), "a pipe");
        assert!(!bars_fit(true, Some("dumb"), None));
        assert!(!bars_fit(true, Some("xterm"), Some("true")));
        assert!(!bars_fit(true, Some("xterm"), Some("1")));
    }

    #[test]
    fn plain_lines_carry_a_timestamp() {
        let out = Buffer::default();
        let mut p = Progress::lines_to(Box::new(out.clone()), false, 1, HEARTBEAT);
        p.host_started(
            0,
            &record("h", ProvisioningState::None),
            &Goal::State(ProvisioningState::Available),
        );
        p.pass_done(
            0,
            &record("h", ProvisioningState::Registering),
            &outcome(false),
        );
        p.host_finished(0, &record("h", ProvisioningState::Available), true, "");
        p.finish();
        let text = out.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines.iter().all(|l| stamped(l)), "{text}");
        assert!(
            lines[0].ends_with(" default/h: (new) -> registering"),
            "{text}"
        );
        assert!(lines[1].ends_with(" default/h: available (done)"), "{text}");
    }

    #[test]
    fn a_failing_host_says_its_first_and_each_new_error_and_the_heartbeat_counts_it() {
        let out = Buffer::default();
        let beat = Duration::from_millis(200);
        let mut p = Progress::lines_to(Box::new(out.clone()), false, 1, beat);
        let goal = Goal::State(ProvisioningState::Available);
        p.host_started(0, &record("h", ProvisioningState::None), &goal);
        let failed = |err: &str| {
            let mut rec = record("h", ProvisioningState::Inspecting);
            rec.book.pass_error = Some(err.into());
            let out = PassOutcome {
                error: Some(err.into()),
                ..outcome(false)
            };
            (rec, out)
        };
        for err in [
            "state active",
            "state active",
            "state active",
            "node locked",
        ] {
            let (rec, o) = failed(err);
            p.pass_done(0, &rec, &o);
        }
        std::thread::sleep(beat + beat / 2);
        p.finish();
        let text = out.text();
        let said: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("pass failed"))
            .map(|l| l.split_once(' ').unwrap().1)
            .collect();
        assert_eq!(
            said,
            [
                "default/h: pass failed: state active",
                "default/h: pass failed: node locked"
            ],
            "{text}"
        );
        assert!(
            text.lines().any(|l| l.ends_with(
                "0/1 hosts decided, 0 waiting on the provisioner, 1 retrying after errors \
                 (last: default/h: node locked)"
            )),
            "{text}"
        );
    }

    /// `--log-format json`: every line (a transition, an event, a pass error, the heartbeat, the
    /// verdict) one JSON object with the log's fields and the host's name apart.
    #[test]
    fn json_lines_are_objects_with_the_host_apart() {
        let out = Buffer::default();
        let beat = Duration::from_millis(200);
        let mut p = Progress::json_lines_to(Box::new(out.clone()), 1, beat);
        let goal = Goal::State(ProvisioningState::Available);
        p.host_started(0, &record("h", ProvisioningState::None), &goal);
        let mut rec = record("h", ProvisioningState::Registering);
        rec.book.pass_error = Some("node locked".into());
        let mut o = PassOutcome {
            error: Some("node locked".into()),
            ..outcome(true)
        };
        o.events.push(bmhctl_plugin_sdk::Event {
            reason: "Registered".into(),
            message: "Registered new host".into(),
        });
        p.pass_done(0, &rec, &o);
        std::thread::sleep(beat + beat / 2);
        p.host_finished(0, &record("h", ProvisioningState::Available), true, "");
        p.finish();
        let text = out.text();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        let said: Vec<(&str, &str, &str)> = lines
            .iter()
            .map(|l| {
                assert!(l["timestamp"].as_str().unwrap().ends_with('Z'), "{l}");
                assert_eq!(l["target"], "bmhctl", "{l}");
                let s = |k: &str| l[k].as_str().unwrap_or("");
                (s("level"), s("host"), s("message"))
            })
            .collect();
        let h = "default/h";
        assert_eq!(
            said,
            [
                ("INFO", h, "event Registered: Registered new host"),
                ("WARN", h, "pass failed: node locked"),
                ("INFO", h, "(new) -> registering"),
                (
                    "INFO",
                    "",
                    "0/1 hosts decided, 1 waiting on the provisioner, 1 retrying after errors \
                     (last: default/h: node locked)"
                ),
                ("INFO", h, "available (done)"),
            ],
            "{text}"
        );
        assert_eq!(lines[0]["reason"], "Registered");
        assert_eq!(
            (lines[2]["from"].as_str(), lines[2]["to"].as_str()),
            (Some(""), Some("registering"))
        );
    }

    #[test]
    fn a_heartbeat_comes_when_nothing_else_is_said() {
        let out = Buffer::default();
        let beat = Duration::from_millis(200);
        let mut p = Progress::lines_to(Box::new(out.clone()), false, 2, beat);
        let goal = Goal::State(ProvisioningState::Provisioned);
        p.host_started(0, &record("a", ProvisioningState::None), &goal);
        p.host_started(1, &record("b", ProvisioningState::None), &goal);
        p.host_finished(0, &record("a", ProvisioningState::Provisioned), true, "");
        p.pass_done(
            1,
            &record("b", ProvisioningState::Provisioning),
            &outcome(true),
        );
        std::thread::sleep(beat * 3 + beat / 2);
        p.finish();
        let text = out.text();
        let beats: Vec<&str> = text
            .lines()
            .filter(|l| l.ends_with("1/2 hosts decided, 1 waiting on the provisioner"))
            .collect();
        // At most one per silent interval: after 3.5 intervals, 3 (fewer on a loaded machine).
        assert!((1..=3).contains(&beats.len()), "{text}");
        assert!(beats.iter().all(|l| stamped(l)), "{text}");
        // Stopped: no more beats.
        let before = out.text().len();
        std::thread::sleep(beat * 2);
        assert_eq!(out.text().len(), before);
    }

    /// A host `delayed` by the provisioning limit is counted apart from those Ironic works on,
    /// and the part is said only when there is one.
    #[test]
    fn a_heartbeat_counts_hosts_delayed_by_the_limit_apart() {
        let out = Buffer::default();
        let beat = Duration::from_millis(200);
        let mut p = Progress::lines_to(Box::new(out.clone()), false, 3, beat);
        let goal = Goal::State(ProvisioningState::Provisioned);
        for (i, name) in ["a", "b", "c"].into_iter().enumerate() {
            p.host_started(i, &record(name, ProvisioningState::None), &goal);
        }
        let delayed = PassOutcome {
            wait: Some(WaitOn::Capacity),
            ..outcome(false)
        };
        let inspecting = |name| record(name, ProvisioningState::Inspecting);
        p.pass_done(0, &inspecting("a"), &outcome(true));
        p.pass_done(1, &inspecting("b"), &delayed);
        p.pass_done(2, &inspecting("c"), &delayed);
        // Room for a beat even on a loaded machine (one is due every 200 ms of silence).
        std::thread::sleep(beat * 4);
        // The delayed hosts get their slot: the next beat says nothing of the limit.
        p.pass_done(1, &inspecting("b"), &outcome(true));
        p.pass_done(2, &inspecting("c"), &outcome(true));
        std::thread::sleep(beat * 4);
        p.finish();
        let text = out.text();
        let first = text
            .lines()
            .position(|l| {
                l.ends_with(
                    "0/3 hosts decided, 1 waiting on the provisioner, 2 delayed by PROVISIONING_LIMIT",
                )
            })
            .unwrap_or_else(|| panic!("no beat with the delayed hosts: {text}"));
        assert!(
            text.lines()
                .skip(first)
                .any(|l| l.ends_with("0/3 hosts decided, 3 waiting on the provisioner")),
            "{text}"
        );
    }

    /// A host's waiting reason is its own: another host's pass neither shows nor clears it,
    /// and it is said once when it comes and once when it goes.
    #[test]
    fn a_waiting_reason_is_per_host_and_said_on_change_only() {
        let out = Buffer::default();
        let mut p = Progress::lines_to(Box::new(out.clone()), false, 2, HEARTBEAT);
        let ledger = p.keep_ledger();
        let goal = Goal::State(ProvisioningState::Provisioned);
        let why = "node default~a locked by conductor 127.0.0.3, which is offline";
        let a = record("a", ProvisioningState::Provisioning);
        let mut a_waits = a.clone();
        a_waits.book.waiting = Some(why.into());
        let b = record("b", ProvisioningState::Provisioning);
        p.host_started(0, &a, &goal);
        p.host_started(1, &b, &goal);
        for _ in 0..3 {
            p.pass_done(0, &a_waits, &outcome(false));
            p.pass_done(1, &b, &outcome(false));
        }
        // Where the hosts got to, as the run writes it when it stops short.
        p.left_off(0, &a_waits);
        p.left_off(1, &b);
        assert_eq!(ledger.entries()[0].seen.waiting, why);
        assert_eq!(ledger.entries()[1].seen.waiting, "");
        p.pass_done(0, &a, &outcome(false));
        p.left_off(0, &a);
        p.finish();
        let text = out.text();
        let said: Vec<&str> = text.lines().map(|l| l.split_once(' ').unwrap().1).collect();
        assert_eq!(
            said,
            [
                format!("default/a: waiting for the provisioner: {why}").as_str(),
                "default/a: the provisioner answers again",
            ],
            "{text}"
        );
        assert_eq!(ledger.entries()[0].seen.waiting, "");
    }

    /// A pass's in-place update of what the ledger saw is what a fresh look would give,
    /// whatever was there before.
    #[test]
    fn a_refreshed_seen_is_the_seen_of_the_record() {
        let mut seen = Seen::of(&record("a", ProvisioningState::Provisioning));
        let mut rec = record("a", ProvisioningState::Provisioned);
        let st = rec.host.status.as_mut().unwrap();
        st.error_type = bmh_api::ErrorType::ProvisionedRegistrationError;
        st.error_message = "gone".into();
        st.error_count = 3;
        st.provisioning_fail_count = 1;
        st.provisioning.id = "6a1c0f3e".into();
        st.powered_on = true;
        rec.book.waiting = Some("node locked".into());
        for rec in [
            rec,
            record("a", ProvisioningState::None),
            HostRecord::default(),
        ] {
            seen.refresh(&rec);
            assert_eq!(seen, Seen::of(&rec));
        }
    }

    #[test]
    fn the_ledger_is_taken_whole_and_left_empty() {
        let mut p = Progress::new(ProgressMode::Quiet, false, 2);
        let ledger = p.keep_ledger();
        let goal = Goal::State(ProvisioningState::Provisioned);
        p.host_started(0, &record("a", ProvisioningState::None), &goal);
        p.host_started(1, &record("b", ProvisioningState::None), &goal);
        let taken = ledger.take();
        assert_eq!(
            taken.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert!(ledger.entries().is_empty());
    }

    #[test]
    fn the_aggregate_message_counts_the_waiting_hosts() {
        let states = ["provisioning".to_string(), "provisioning".to_string()];
        let waiting = [String::new(), "node x locked".to_string()];
        assert_eq!(
            summarise(&states, &waiting, &[false, false]),
            "provisioning: 2 (1 waiting for the provisioner: node x locked)"
        );
        assert_eq!(
            summarise(&states, &[String::new(), String::new()], &[false, false]),
            "provisioning: 2"
        );
        assert_eq!(
            summarise(&states, &waiting, &[true, false]),
            "provisioning: 2 (1 waiting for the provisioner: node x locked) \
             (1 delayed by PROVISIONING_LIMIT)"
        );
    }

    #[test]
    fn the_ledger_keeps_every_host_as_it_goes() {
        let mut p = Progress::new(ProgressMode::Quiet, false, 2);
        let ledger = p.keep_ledger();
        let goal = Goal::State(ProvisioningState::Provisioned);
        p.host_started(0, &record("a", ProvisioningState::None), &goal);
        p.host_started(1, &record("b", ProvisioningState::None), &goal);
        p.pass_done(
            0,
            &record("a", ProvisioningState::Registering),
            &outcome(false),
        );
        p.pass_done(
            1,
            &record("b", ProvisioningState::Registering),
            &outcome(false),
        );
        p.pass_done(
            1,
            &record("b", ProvisioningState::Inspecting),
            &outcome(false),
        );
        p.host_finished(
            0,
            &record("a", ProvisioningState::Registering),
            false,
            "gave up",
        );
        let e = ledger.entries();
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].reached, e[0].reason.as_str()), (false, "gave up"));
        assert_eq!(e[0].passes, 1);
        assert_eq!(e[0].seen.state, "registering");
        assert!(e[0].end.is_some_and(|end| end >= e[0].start));
        // A host still driven is written when the run stops short, not at each pass.
        assert_eq!(e[1].passes, 0);
        assert_eq!(e[1].seen, Seen::of(&record("b", ProvisioningState::None)));
        p.left_off(1, &record("b", ProvisioningState::Inspecting));
        // A finished host keeps what it finished with.
        p.left_off(0, &record("a", ProvisioningState::Provisioned));
        let e = ledger.entries();
        assert_eq!(e[1].end, None, "still in flight");
        assert_eq!((e[1].passes, e[1].seen.state.as_str()), (2, "inspecting"));
        assert_eq!((e[0].passes, e[0].seen.state.as_str()), (1, "registering"));
    }
}
