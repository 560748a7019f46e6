//! Change-driven wake-ups: passes run when the provisioner says a host is due
//! ([`ProvisionerFactory::due_hosts`]), or are held until it can serve them (up to [`MAX_HOLD`]).

use bmhctl_plugin_sdk::{
    DueHosts, ProvisionerError, ProvisionerFactory, ReadyHosts, StartingHost, WaitingHost,
};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// When a host's next pass runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Timing {
    /// At BMO's requeue time, or earlier when the provisioner reports the wait over.
    #[default]
    Change,
    /// Only at BMO's requeue times, exactly as BMO does; the provisioner is never asked.
    Bmo,
}

impl std::str::FromStr for Timing {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "change" => Ok(Timing::Change),
            "bmo" => Ok(Timing::Bmo),
            _ => Err(format!("invalid timing {s:?}: expected change or bmo")),
        }
    }
}

/// The shortest time between two questions, whatever the provisioner says.
pub const MIN_ASK_INTERVAL: Duration = Duration::from_secs(1);

/// One question's hosts: (slot index, pass generation) per asked host, in the order asked.
type Asked = Vec<(usize, u64)>;

pub(crate) struct Answer {
    asked: Asked,
    started: Instant,
    result: Result<Option<DueHosts>, ProvisionerError>,
}

/// Asks the factory which waiting hosts are due; one question at a time, on a blocking thread.
pub(crate) struct DueAsker {
    factory: Arc<dyn ProvisionerFactory>,
    enabled: bool,
    asking: bool,
    /// No host is known to wait: don't wake the loop to ask.
    idle: bool,
    next_ask: Instant,
    tx: mpsc::UnboundedSender<Answer>,
    rx: mpsc::UnboundedReceiver<Answer>,
}

impl DueAsker {
    pub fn new(factory: Arc<dyn ProvisionerFactory>, timing: Timing) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            factory,
            enabled: timing == Timing::Change,
            asking: false,
            idle: true,
            next_ask: Instant::now(),
            tx,
            rx,
        }
    }

    /// A pass ended waiting on the provisioner: ask at the next allowed time.
    pub fn host_waits(&mut self) {
        self.idle = false;
    }

    /// When the loop should wake up to ask; `None` when there is nothing to ask.
    pub fn next_ask(&self) -> Option<Instant> {
        (self.enabled && !self.asking && !self.idle).then_some(self.next_ask)
    }

    /// Asks, if it is time, about the hosts `waiting` lists, oldest wait first.
    pub fn maybe_ask(&mut self, waiting: impl FnOnce() -> Vec<(usize, u64, WaitingHost)>) {
        let now = Instant::now();
        if self.next_ask().is_none_or(|at| at > now) {
            return;
        }
        let list = waiting();
        if list.is_empty() {
            self.idle = true;
            return;
        }
        let (asked, hosts): (Asked, Vec<WaitingHost>) =
            list.into_iter().map(|(i, g, h)| ((i, g), h)).unzip();
        self.asking = true;
        let (factory, tx) = (self.factory.clone(), self.tx.clone());
        tokio::task::spawn_blocking(move || {
            let result = factory.due_hosts(&hosts);
            let _ = tx.send(Answer {
                asked,
                started: now,
                result,
            });
        });
    }

    /// The next answer (pending forever while none is coming).
    pub async fn recv(&mut self) -> Answer {
        if !self.asking {
            return std::future::pending().await;
        }
        self.rx.recv().await.expect("the asker holds a sender")
    }

    /// Takes an answer: the (slot, generation) of every host reported due.
    pub fn answered(&mut self, answer: Answer) -> Asked {
        self.asking = false;
        match answer.result {
            Ok(None) => {
                tracing::debug!("the provisioner does not report changes: BMO's timing");
                self.enabled = false;
                Vec::new()
            }
            Err(e) => {
                tracing::debug!("cannot ask the provisioner which hosts are due: {e}");
                self.next_ask = answer.started + MIN_ASK_INTERVAL;
                Vec::new()
            }
            Ok(Some(d)) => {
                self.next_ask = answer.started + d.ask_again_after.max(MIN_ASK_INTERVAL);
                d.due
                    .into_iter()
                    .filter_map(|i| answer.asked.get(i).copied())
                    .collect()
            }
        }
    }
}

/// The longest a pass is held back for its provisioner to be ready, whatever it answers.
pub const MAX_HOLD: Duration = Duration::from_secs(2);

/// Asks the factory just before passes start how long to hold each back (`ready_hosts`).
pub(crate) struct ReadyAsker {
    factory: Arc<dyn ProvisionerFactory>,
    enabled: bool,
}

impl ReadyAsker {
    pub fn new(factory: Arc<dyn ProvisionerFactory>, timing: Timing) -> Self {
        Self {
            factory,
            enabled: timing == Timing::Change,
        }
    }

    /// Whether passes are asked about (change-driven timing, and answered so far).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// How long to hold each of `starting` back (at most [`MAX_HOLD`]); empty when unanswered.
    pub fn ask(&mut self, starting: &[StartingHost]) -> Vec<Duration> {
        if !self.enabled || starting.is_empty() {
            return Vec::new();
        }
        match self.factory.ready_hosts(starting) {
            Ok(None) => {
                tracing::debug!("the provisioner does not hold passes back: they start at once");
                self.enabled = false;
                Vec::new()
            }
            Err(e) => {
                tracing::debug!("cannot ask the provisioner which passes it can serve: {e}");
                Vec::new()
            }
            Ok(Some(ReadyHosts { wait })) => wait.into_iter().map(|w| w.min(MAX_HOLD)).collect(),
        }
    }
}

/// How the runner asks the factory about a host whose pass is about to start.
pub(crate) fn starting_host(record: &crate::record::HostRecord) -> StartingHost {
    StartingHost {
        host: record.host.metadata.key(),
        provisioner_id: record.status().provisioning.id.clone(),
    }
}

/// How the runner tells the factory about a host waiting after a pass.
pub(crate) fn waiting_host(
    record: &crate::record::HostRecord,
    on: bmhctl_plugin_sdk::WaitOn,
) -> WaitingHost {
    WaitingHost {
        host: record.host.metadata.key(),
        provisioner_id: record.status().provisioning.id.clone(),
        on,
    }
}
