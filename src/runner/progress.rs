//! What the user sees while hosts move: a bar per host on a terminal, an aggregate bar when
//! there are more hosts than lines, plain log lines otherwise.

use super::Goal;
use crate::machine::PassOutcome;
use crate::provisioners::BackendHealth;
use crate::record::HostRecord;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// Bars on a terminal, lines otherwise.
    Auto,
    /// Plain lines on stderr: state changes, errors, and (verbose) events.
    Lines,
    /// Nothing but errors.
    Quiet,
}

/// The last thing shown for a host, to print only changes.
#[derive(Default, Clone, PartialEq)]
struct Shown {
    state: String,
    op: String,
    error: String,
}

pub struct Progress {
    view: View,
    verbose: bool,
    names: Vec<String>,
    shown: Vec<Shown>,
    /// The provisioner's backend, and the trouble last shown of it (BMO writes none).
    backend: Option<Arc<BackendHealth>>,
    backend_shown: Option<String>,
}

enum View {
    Quiet,
    Lines,
    Bars {
        multi: MultiProgress,
        bars: Vec<ProgressBar>,
    },
    Aggregate {
        bar: ProgressBar,
        states: Vec<String>,
    },
}

impl Progress {
    pub fn new(mode: ProgressMode, verbose: bool, hosts: usize) -> Self {
        let terminal = std::io::stderr().is_terminal();
        let view = match mode {
            ProgressMode::Quiet => View::Quiet,
            ProgressMode::Lines => View::Lines,
            ProgressMode::Auto if !terminal => View::Lines,
            ProgressMode::Auto => {
                let rows = terminal_rows().unwrap_or(24);
                if hosts + 2 > rows {
                    let bar = ProgressBar::with_draw_target(
                        Some(hosts as u64),
                        ProgressDrawTarget::stderr(),
                    );
                    bar.set_style(
                        ProgressStyle::with_template(
                            "{bar:30} {pos}/{len} stable  {elapsed}  {msg}",
                        )
                        .expect("valid template"),
                    );
                    bar.enable_steady_tick(Duration::from_millis(200));
                    View::Aggregate {
                        bar,
                        states: vec![String::new(); hosts],
                    }
                } else {
                    View::Bars {
                        multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
                        bars: Vec::new(),
                    }
                }
            }
        };
        Self {
            view,
            verbose,
            names: Vec::new(),
            shown: Vec::new(),
            backend: None,
            backend_shown: None,
        }
    }

    /// Shows the trouble of the provisioner's backend (e.g. an unreachable Ironic) with the
    /// hosts whose passes wait on it.
    pub fn watch_backend(&mut self, health: Arc<BackendHealth>) {
        self.backend = Some(health);
    }

    pub fn host_started(&mut self, host: usize, rec: &HostRecord, goal: &Goal) {
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
            bar.enable_steady_tick(Duration::from_millis(120));
            bars.push(bar);
        }
        if let View::Aggregate { states, .. } = &mut self.view {
            states[host] = shown.state.clone();
        }
        self.names.push(name);
        self.shown.push(shown);
    }

    pub fn pass_done(&mut self, host: usize, rec: &HostRecord, out: &PassOutcome) {
        if matches!(self.view, View::Quiet) {
            return;
        }
        let now = shown_of(rec);
        let before = std::mem::replace(&mut self.shown[host], now.clone());
        let name = &self.names[host];
        let trouble = self.backend.as_ref().and_then(|b| b.trouble());
        let trouble_changed = trouble != self.backend_shown;
        if trouble_changed {
            self.backend_shown = trouble.clone();
        }
        let waiting = |text: String| match &trouble {
            Some(t) => format!("{text} (waiting for the provisioner: {t})"),
            None => text,
        };
        match &mut self.view {
            View::Quiet => {}
            View::Lines => {
                if self.verbose {
                    for e in &out.events {
                        eprintln!("{name}: event {}: {}", e.reason, e.message);
                    }
                    if let Some(err) = &out.error {
                        eprintln!("{name}: pass failed: {err}");
                    }
                }
                if before.state != now.state {
                    eprintln!(
                        "{name}: {} -> {}",
                        show_state(&before.state),
                        show_state(&now.state)
                    );
                }
                if before.error != now.error && !now.error.is_empty() {
                    eprintln!("{name}: error: {}", now.error);
                }
                if trouble_changed {
                    match &trouble {
                        Some(t) => eprintln!("{name}: waiting for the provisioner: {t}"),
                        None => eprintln!("{name}: the provisioner answers again"),
                    }
                }
            }
            View::Bars { bars, .. } => {
                if before != now || trouble.is_some() || trouble_changed {
                    bars[host].set_message(waiting(describe(&now)));
                }
            }
            View::Aggregate { bar, states } => {
                states[host] = now.state.clone();
                if before.state != now.state || trouble_changed {
                    bar.set_message(waiting(summarise(states)));
                }
            }
        }
    }

    pub fn host_finished(&mut self, host: usize, rec: &HostRecord, reached: bool, reason: &str) {
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
            View::Lines => eprintln!("{name}: {} ({verdict})", show_state(&shown.state)),
            View::Bars { bars, .. } => {
                bars[host].finish_with_message(format!("{} ({verdict})", describe(&shown)))
            }
            View::Aggregate { bar, .. } => bar.inc(1),
        }
    }

    pub fn interrupted(&mut self) {
        let msg = "interrupted: finishing passes in flight and saving";
        match &self.view {
            View::Bars { multi, .. } => {
                let _ = multi.println(msg);
            }
            View::Aggregate { bar, .. } => bar.println(msg),
            _ => eprintln!("{msg}"),
        }
    }

    pub fn finish(&mut self) {
        match &self.view {
            View::Bars { bars, .. } => bars.iter().for_each(|b| {
                if !b.is_finished() {
                    b.abandon()
                }
            }),
            View::Aggregate { bar, .. } => bar.finish(),
            _ => {}
        }
    }
}

fn shown_of(rec: &HostRecord) -> Shown {
    let st = rec.status();
    Shown {
        state: st.provisioning.state.as_str().to_string(),
        op: st.operational_status.as_str().to_string(),
        error: st.error_message.clone(),
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
    text
}

fn summarise(states: &[String]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for s in states {
        *counts.entry(show_state(s)).or_default() += 1;
    }
    counts
        .iter()
        .map(|(s, n)| format!("{s}: {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn terminal_rows() -> Option<usize> {
    console::Term::stderr()
        .size_checked()
        .map(|(rows, _)| rows as usize)
}
