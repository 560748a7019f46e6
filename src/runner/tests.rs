//! The runner's change-driven timing with an in-process factory that reports changes.

use super::*;
use crate::clock::SystemClock;
use crate::machine::PassOutcome;
use crate::machine::tests::harness::HostTest;
use crate::machine::tests::mock::Mock;
use crate::objects::ObjectMap;
use crate::persist::{SourceChange, Staged};
use bmh_api::{ObjectKey, ProvisioningState as S};
use bmhctl_plugin_sdk::{
    DueHosts, EventSink, HostData, Provisioner, ProvisionerError, WaitOn, WaitingHost,
};
use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// How the test factory answers `due_hosts`.
#[derive(Clone, Copy, PartialEq)]
enum Answer {
    /// Every host asked about is due.
    AllDue,
    /// "Not supported".
    Unsupported,
}

/// Wraps a factory: answers `due_hosts`, records the questions, and checks that no two passes
/// of one host overlap (each pass holds its host while creating its provisioner).
struct Reporting {
    inner: Arc<dyn ProvisionerFactory>,
    answer: Answer,
    asked: Mutex<Vec<Vec<WaitingHost>>>,
    active: Mutex<HashSet<ObjectKey>>,
    overlap: AtomicBool,
    passes: AtomicU64,
}

impl Reporting {
    fn new(inner: Arc<dyn ProvisionerFactory>, answer: Answer) -> Arc<Self> {
        Arc::new(Self {
            inner,
            answer,
            asked: Mutex::new(Vec::new()),
            active: Mutex::new(HashSet::new()),
            overlap: AtomicBool::new(false),
            passes: AtomicU64::new(0),
        })
    }

    fn asked(&self) -> Vec<Vec<WaitingHost>> {
        self.asked.lock().unwrap().clone()
    }
}

impl ProvisionerFactory for Reporting {
    fn new_provisioner(
        &self,
        host: HostData,
        events: EventSink,
    ) -> std::result::Result<Box<dyn Provisioner>, ProvisionerError> {
        self.passes.fetch_add(1, Ordering::SeqCst);
        if !self.active.lock().unwrap().insert(host.key.clone()) {
            self.overlap.store(true, Ordering::SeqCst);
        }
        std::thread::sleep(Duration::from_millis(20));
        self.active.lock().unwrap().remove(&host.key);
        self.inner.new_provisioner(host, events)
    }

    fn due_hosts(
        &self,
        waiting: &[WaitingHost],
    ) -> std::result::Result<Option<DueHosts>, ProvisionerError> {
        self.asked.lock().unwrap().push(waiting.to_vec());
        match self.answer {
            Answer::Unsupported => Ok(None),
            Answer::AllDue => Ok(Some(DueHosts {
                due: (0..waiting.len()).collect(),
                ask_again_after: Duration::from_millis(100),
            })),
        }
    }
}

/// Keeps nothing: every stage is "on disk" at its commit.
#[derive(Default)]
struct Memory {
    ticket: AtomicU64,
}

impl HostSource for Memory {
    fn groups(&self) -> usize {
        1
    }
    fn group_of(&self, _host: usize) -> usize {
        0
    }
    fn stage(&self, _host: usize, _staged: &Staged) -> Result<u64> {
        Ok(self.ticket.fetch_add(1, Ordering::SeqCst) + 1)
    }
    fn commit(&self, _group: usize) -> Result<u64> {
        Ok(self.ticket.load(Ordering::SeqCst))
    }
    fn record_events(&self, _host: usize, _events: &[bmhctl_plugin_sdk::Event]) -> Result<()> {
        Ok(())
    }
    fn add_host(&self, _key: ObjectKey) -> usize {
        unreachable!("a batch run adds no host")
    }
    fn load(&self, _key: &ObjectKey) -> Result<Option<HostRecord>> {
        Ok(None)
    }
    fn objects(&self) -> Result<ObjectMap> {
        Ok(ObjectMap::default())
    }
    fn changes(&self) -> Result<Vec<SourceChange>> {
        Ok(Vec::new())
    }
}

/// Seeded, with saves committed at once.
fn test_config(time_scale: f64, timing: Timing) -> RunnerConfig {
    RunnerConfig {
        time_scale,
        timing,
        seed: Some(1),
        commit_interval: Duration::from_millis(1),
        ..RunnerConfig::default()
    }
}

fn drive(
    hosts: Vec<HostTest>,
    factory: Arc<Reporting>,
    time_scale: f64,
    timing: Timing,
) -> (Vec<HostResult>, Duration) {
    let config = test_config(time_scale, timing);
    drive_with(hosts, factory, config)
}

/// Drives `hosts` to provisioned with `factory` and `config`; the results and how long it took.
fn drive_with(
    hosts: Vec<HostTest>,
    factory: Arc<dyn ProvisionerFactory>,
    config: RunnerConfig,
) -> (Vec<HostResult>, Duration) {
    let objects = Arc::new(hosts[0].secrets.clone());
    let jobs = hosts
        .into_iter()
        .map(|t| HostJob {
            goal: Goal::for_provision(&t.rec),
            record: t.rec,
        })
        .collect();
    let services = Services {
        factory,
        objects,
        clock: Arc::new(SystemClock),
        source: Arc::new(Memory::default()),
    };
    let (_stop, interrupt) = tokio::sync::watch::channel(false);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let started = Instant::now();
    let results = rt
        .block_on(run(
            jobs,
            services,
            config,
            Box::new(Unwatched),
            interrupt,
            None,
        ))
        .expect("the run ends");
    (results, started.elapsed())
}

/// A batch nobody watches.
struct Unwatched;

impl BatchObserver for Unwatched {
    fn host_started(&mut self, _: usize, _: &HostRecord, _: &Goal) {}
    fn reads_events(&self) -> bool {
        false
    }
    fn pass_done(&mut self, _: usize, _: &HostRecord, _: &PassOutcome) {}
    fn host_finished(&mut self, _: usize, _: &HostRecord, _: bool, _: &str) {}
    fn left_off(&mut self, _: usize, _: &HostRecord) {}
    fn interrupted(&mut self) {}
    fn finish(&mut self) {}
}

fn fixture_hosts(n: usize) -> Vec<HostTest> {
    (0..n)
        .map(|i| HostTest::standard(&format!("host-{i}")))
        .collect()
}

/// The fixture, saying (or not) that its calls never block, counting the passes that create
/// their provisioner at once.
struct Counting {
    never_block: bool,
    inner: crate::provisioners::fixture::Fixture,
    running: AtomicUsize,
    most: AtomicUsize,
}

impl Counting {
    fn new(never_block: bool) -> Arc<Self> {
        Arc::new(Self {
            never_block,
            inner: crate::provisioners::fixture::Fixture::new(),
            running: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
        })
    }
}

impl ProvisionerFactory for Counting {
    fn new_provisioner(
        &self,
        host: HostData,
        events: EventSink,
    ) -> std::result::Result<Box<dyn Provisioner>, ProvisionerError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        // Long enough that passes started together overlap here.
        std::thread::sleep(Duration::from_millis(5));
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.inner.new_provisioner(host, events)
    }

    fn calls_never_block(&self) -> bool {
        self.never_block
    }
}

/// A provisioner whose calls never block gets no more passes at once than there are cores,
/// whatever `--concurrency`, and every host still reaches its goal; one that may block gets
/// `--concurrency`.
#[test]
fn passes_that_never_block_run_no_more_at_once_than_cores() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let concurrency = cores + 2;
    for never_block in [true, false] {
        let factory = Counting::new(never_block);
        let config = RunnerConfig {
            concurrency,
            ..test_config(0.0, Timing::Bmo)
        };
        let (results, _) = drive_with(fixture_hosts(4 * concurrency), factory.clone(), config);
        for r in &results {
            assert!(r.reached, "{}: {}", r.record.host.metadata.name, r.reason);
            assert_eq!(r.record.status().provisioning.state, S::Provisioned);
        }
        let most = factory.most.load(Ordering::SeqCst);
        if never_block {
            assert!(
                (1..=cores).contains(&most),
                "{most} at once on {cores} cores"
            );
        } else {
            assert!(
                most > cores && most <= concurrency,
                "{most} at once, --concurrency {concurrency}"
            );
        }
    }
}

/// Waiting hosts reported changed run before their BMO requeue time: BMO's waits for
/// registration alone (5 s), inspection and provisioning (10 s), ten times slower here, sum to
/// minutes; reported at once, the run takes seconds. No host ever has two passes at once.
#[test]
fn a_waiting_host_is_woken_by_a_reported_change_never_twice_at_once() {
    let factory = Reporting::new(
        Arc::new(crate::provisioners::fixture::Fixture::new()),
        Answer::AllDue,
    );
    let (results, took) = drive(fixture_hosts(3), factory.clone(), 10.0, Timing::Change);
    for r in &results {
        assert!(r.reached, "{}: {}", r.record.host.metadata.name, r.reason);
        assert_eq!(r.record.status().provisioning.state, S::Provisioned);
    }
    assert!(took < Duration::from_secs(40), "took {took:?}");
    assert!(
        !factory.overlap.load(Ordering::SeqCst),
        "two passes of one host at once"
    );
    let asked = factory.asked();
    assert!(!asked.is_empty());
    assert!(asked.iter().flatten().all(|h| h.on == WaitOn::Progress));
    let names: HashSet<_> = asked
        .iter()
        .flatten()
        .map(|h| h.host.name.clone())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    // Hosts are asked about only while they wait: never more often than every 100 ms here.
    assert!(
        asked.len() as f64 <= took.as_secs_f64() * 10.0 + 2.0,
        "{}",
        asked.len()
    );
}

/// A host `delayed` by the provisioning limit runs again as soon as the factory reports a slot,
/// not after BMO's 1–2 minute backoff; it still goes through BMO's `delayed` handling.
#[test]
fn a_delayed_host_is_woken_when_the_factory_reports_capacity() {
    let mock = Mock::new();
    mock.with(|m| m.script.has_capacity.push_back(Ok(false)));
    let t = HostTest::standard("host-0")
        .mock(&mock)
        .registered_in(S::Registering)
        .online(false)
        .spec(|s| s.image = None);
    let factory = Reporting::new(Arc::new(mock.clone()), Answer::AllDue);
    let (results, took) = drive(vec![t], factory.clone(), 1.0, Timing::Change);
    assert!(results[0].reached, "{}", results[0].reason);
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let asked = factory.asked();
    assert_eq!(asked[0].len(), 1);
    assert_eq!(asked[0][0].on, WaitOn::Capacity);
    assert_eq!(asked[0][0].provisioner_id, "temporary-fake-id");
}

/// A factory that does not report changes is asked once and the run keeps BMO's timing: the
/// same passes as under `--timing bmo`.
#[test]
fn a_factory_answering_none_runs_at_bmos_timing() {
    let run_with = |timing| {
        let factory = Reporting::new(
            Arc::new(crate::provisioners::fixture::Fixture::new()),
            Answer::Unsupported,
        );
        let (results, _) = drive(fixture_hosts(2), factory.clone(), 0.02, timing);
        let passes: Vec<u64> = results.iter().map(|r| r.passes).collect();
        assert!(results.iter().all(|r| r.reached));
        (passes, factory.asked().len())
    };
    let (change, asked) = run_with(Timing::Change);
    assert_eq!(asked, 1, "asked once, then never again");
    let (bmo, asked) = run_with(Timing::Bmo);
    assert_eq!(asked, 0, "--timing bmo never asks");
    assert_eq!(change, bmo);
}

/// `--timing bmo` never asks, even a factory that would report every host due.
#[test]
fn timing_bmo_never_asks() {
    let factory = Reporting::new(
        Arc::new(crate::provisioners::fixture::Fixture::new()),
        Answer::AllDue,
    );
    let (results, _) = drive(fixture_hosts(2), factory.clone(), 0.02, Timing::Bmo);
    assert!(results.iter().all(|r| r.reached));
    assert!(factory.asked().is_empty());
    assert!(!factory.overlap.load(Ordering::SeqCst));
}

/// Serves the hosts it was given to a controller; keeps nothing.
struct LiveMemory {
    hosts: Vec<HostRecord>,
    ticket: AtomicU64,
}

impl HostSource for LiveMemory {
    fn groups(&self) -> usize {
        self.hosts.len()
    }
    fn group_of(&self, host: usize) -> usize {
        host
    }
    fn stage(&self, _host: usize, _staged: &Staged) -> Result<u64> {
        Ok(self.ticket.fetch_add(1, Ordering::SeqCst) + 1)
    }
    fn commit(&self, _group: usize) -> Result<u64> {
        Ok(self.ticket.load(Ordering::SeqCst))
    }
    fn record_events(&self, _host: usize, _events: &[bmhctl_plugin_sdk::Event]) -> Result<()> {
        Ok(())
    }
    fn add_host(&self, key: ObjectKey) -> usize {
        self.hosts
            .iter()
            .position(|r| r.host.metadata.name == key.name)
            .expect("a known host")
    }
    fn load(&self, key: &ObjectKey) -> Result<Option<HostRecord>> {
        Ok(self
            .hosts
            .iter()
            .find(|r| r.host.metadata.name == key.name)
            .cloned())
    }
    fn objects(&self) -> Result<ObjectMap> {
        Ok(ObjectMap::default())
    }
    fn changes(&self) -> Result<Vec<SourceChange>> {
        Ok(Vec::new())
    }
}

/// Runs a controller over fixture hosts until every one is provisioned and steady.
fn drive_live(n: usize, factory: Arc<Reporting>, time_scale: f64, timing: Timing) -> Duration {
    use live::{LiveChange, LiveServices, run_live};
    let hosts = fixture_hosts(n);
    let objects = Arc::new(hosts[0].secrets.clone());
    let records: Vec<HostRecord> = hosts.into_iter().map(|t| t.rec).collect();
    let keys: Vec<ObjectKey> = records
        .iter()
        .map(|r| ObjectKey::new("default", &r.host.metadata.name))
        .collect();
    let services = LiveServices {
        factory,
        objects,
        clock: Arc::new(SystemClock),
        source: Arc::new(LiveMemory {
            hosts: records,
            ticket: AtomicU64::new(0),
        }),
    };
    let config = test_config(time_scale, timing);
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let (tx, rx) = mpsc::unbounded_channel();
    for k in keys {
        tx.send(LiveChange::Host(k)).unwrap();
    }
    let mut settled = HashSet::new();
    let observer: live::Observer = Box::new(move |key, rec, out| {
        if out.steady() && rec.status().provisioning.state == S::Provisioned {
            settled.insert(key.clone());
            if settled.len() == n {
                let _ = stop_tx.send(true);
            }
        }
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let started = Instant::now();
    rt.block_on(async {
        tokio::time::timeout(
            Duration::from_secs(120),
            run_live(services, config, rx, observer, stop, None),
        )
        .await
        .expect("every host settles")
        .expect("the controller ends");
    });
    drop(tx);
    started.elapsed()
}

/// The controller (`watch`) wakes waiting hosts on reported changes too, one pass at a time.
#[test]
fn the_controller_wakes_a_waiting_host_on_a_reported_change() {
    let factory = Reporting::new(
        Arc::new(crate::provisioners::fixture::Fixture::new()),
        Answer::AllDue,
    );
    let took = drive_live(3, factory.clone(), 10.0, Timing::Change);
    assert!(took < Duration::from_secs(40), "took {took:?}");
    assert!(!factory.overlap.load(Ordering::SeqCst));
    assert!(
        factory
            .asked()
            .iter()
            .flatten()
            .all(|h| h.on == WaitOn::Progress)
    );
    assert!(!factory.asked().is_empty());
}

/// ... and never asks with `--timing bmo`.
#[test]
fn the_controller_never_asks_with_timing_bmo() {
    let factory = Reporting::new(
        Arc::new(crate::provisioners::fixture::Fixture::new()),
        Answer::AllDue,
    );
    drive_live(2, factory.clone(), 0.02, Timing::Bmo);
    assert!(factory.asked().is_empty());
    assert!(!factory.overlap.load(Ordering::SeqCst));
}

/// A pass whose save a commit already carried (the commit started before the pass's message
/// reached the loop) is not parked: nothing would ever release it.
#[test]
fn a_save_already_on_disk_parks_nobody() {
    let mut commits = GroupCommits::new(1, Duration::from_millis(1), false);
    commits.staged(0, 3);
    commits.start(0);
    assert!(commits.finished(0, Some(3)).is_empty());
    assert!(!commits.park(0, 3, 0), "ticket 3 is on disk already");
    assert!(!commits.park(0, 2, 1));
    commits.staged(0, 4);
    assert!(commits.park(0, 4, 2));
    commits.start(0);
    assert_eq!(commits.finished(0, Some(4)), vec![2]);
}

/// A failed commit is staged again (retried), unless given up on: then the group is idle (the
/// run can end), its parked hosts are released and no commit of it starts.
#[test]
fn a_failed_commit_given_up_on_leaves_the_group_idle() {
    let mut commits = GroupCommits::new(1, Duration::from_millis(1), false);
    commits.staged(0, 1);
    commits.start(0);
    assert!(commits.park(0, 1, 5));
    assert!(commits.finished(0, None).is_empty());
    assert!(commits.busy(), "a failed commit is retried");
    assert_eq!(commits.give_up(0), vec![5]);
    assert!(!commits.busy());
    std::thread::sleep(Duration::from_millis(5));
    let started = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s = started.clone();
    commits.start_ready(move |_| {
        s.store(true, Ordering::SeqCst);
        Ok(1)
    });
    assert!(!commits.busy());
    assert!(!started.load(Ordering::SeqCst));
}

/// A batch stops driving each host once it has decided, whatever the others do, and ends when
/// all have: a paused host stops at its first pass, the others when provisioned.
#[test]
fn a_batch_ends_when_every_host_has_decided() {
    let factory = Reporting::new(
        Arc::new(crate::provisioners::fixture::Fixture::new()),
        Answer::AllDue,
    );
    let mut hosts = fixture_hosts(3);
    hosts[1] = HostTest::standard("host-1").annotate("baremetalhost.metal3.io/paused", "");
    let (results, _) = drive(hosts, factory.clone(), 0.0, Timing::Bmo);
    assert_eq!(results.len(), 3);
    assert!(!results[1].reached);
    assert_eq!(results[1].passes, 1);
    assert!(
        results[1].reason.starts_with("paused"),
        "{}",
        results[1].reason
    );
    for i in [0, 2] {
        assert!(results[i].reached, "{}", results[i].reason);
        assert_eq!(
            results[i].record.status().provisioning.state,
            S::Provisioned
        );
    }
    assert!(!factory.overlap.load(Ordering::SeqCst));
}

// ---------------------------------------------- passes held back for the provisioner (ready_hosts)

/// One `ready_hosts` question: when, about which hosts, and the waits answered.
type ReadyQuestion = (Instant, Vec<bmhctl_plugin_sdk::StartingHost>, Vec<Duration>);

/// Answers `ready_hosts` for a fixture: holds host `held`'s first pass asked about for `hold`
/// (every other pass: none), or answers "not supported" without a hold; records every question
/// and when each pass starts, and checks that no two passes of one host overlap.
struct Holding {
    inner: crate::provisioners::fixture::Fixture,
    held: &'static str,
    hold: Option<Duration>,
    asked: Mutex<Vec<ReadyQuestion>>,
    starts: Mutex<Vec<(Instant, String)>>,
    active: Mutex<HashSet<ObjectKey>>,
    overlap: AtomicBool,
}

impl Holding {
    fn new(held: &'static str, hold: Option<Duration>) -> Arc<Self> {
        Arc::new(Self {
            inner: crate::provisioners::fixture::Fixture::new(),
            held,
            hold,
            asked: Mutex::new(Vec::new()),
            starts: Mutex::new(Vec::new()),
            active: Mutex::new(HashSet::new()),
            overlap: AtomicBool::new(false),
        })
    }

    fn starts_of(&self, name: &str) -> Vec<Instant> {
        let starts = self.starts.lock().unwrap();
        starts
            .iter()
            .filter(|(_, n)| n == name)
            .map(|(t, _)| *t)
            .collect()
    }

    /// When host `held` was held, and for how long it was told.
    fn holds(&self) -> Vec<(Instant, Duration)> {
        let asked = self.asked.lock().unwrap();
        asked
            .iter()
            .flat_map(|(t, hosts, waits)| {
                hosts
                    .iter()
                    .zip(waits)
                    .filter(|(h, w)| h.host.name == self.held && !w.is_zero())
                    .map(|(_, w)| (*t, *w))
            })
            .collect()
    }
}

impl ProvisionerFactory for Holding {
    fn new_provisioner(
        &self,
        host: HostData,
        events: EventSink,
    ) -> std::result::Result<Box<dyn Provisioner>, ProvisionerError> {
        self.starts
            .lock()
            .unwrap()
            .push((Instant::now(), host.key.name.clone()));
        if !self.active.lock().unwrap().insert(host.key.clone()) {
            self.overlap.store(true, Ordering::SeqCst);
        }
        std::thread::sleep(Duration::from_millis(20));
        self.active.lock().unwrap().remove(&host.key);
        self.inner.new_provisioner(host, events)
    }

    fn ready_hosts(
        &self,
        starting: &[bmhctl_plugin_sdk::StartingHost],
    ) -> std::result::Result<Option<bmhctl_plugin_sdk::ReadyHosts>, ProvisionerError> {
        let Some(hold) = self.hold else {
            self.asked
                .lock()
                .unwrap()
                .push((Instant::now(), starting.to_vec(), Vec::new()));
            return Ok(None);
        };
        let already = !self.holds().is_empty();
        let wait: Vec<Duration> = starting
            .iter()
            .map(|h| {
                if h.host.name == self.held && !already {
                    hold
                } else {
                    Duration::ZERO
                }
            })
            .collect();
        self.asked
            .lock()
            .unwrap()
            .push((Instant::now(), starting.to_vec(), wait.clone()));
        Ok(Some(bmhctl_plugin_sdk::ReadyHosts { wait }))
    }
}

/// Drives `hosts` to provisioned with `factory`, `concurrency` passes at most at once.
fn drive_holding(
    hosts: Vec<HostTest>,
    factory: Arc<Holding>,
    concurrency: usize,
    timing: Timing,
) -> Vec<HostResult> {
    let config = RunnerConfig {
        concurrency,
        time_scale: 0.05,
        timing,
        seed: Some(1),
        commit_interval: Duration::from_millis(1),
        ..RunnerConfig::default()
    };
    drive_with(hosts, factory, config).0
}

/// A pass the provisioner cannot serve yet is held back without taking a pass slot: with one
/// slot, the other host's passes run meanwhile. A hold longer than the bound (here 5 s) ends
/// at the bound, and a held pass is not held twice.
#[test]
fn a_held_pass_takes_no_slot_and_starts_by_the_bound() {
    let factory = Holding::new("host-0", Some(Duration::from_secs(5)));
    let results = drive_holding(fixture_hosts(2), factory.clone(), 1, Timing::Change);
    for r in &results {
        assert!(r.reached, "{}: {}", r.record.host.metadata.name, r.reason);
    }
    assert!(
        !factory.overlap.load(Ordering::SeqCst),
        "two passes at once"
    );
    let holds = factory.holds();
    let [(held_at, told)] = holds[..] else {
        panic!("host-0 held once: {holds:?}")
    };
    assert_eq!(told, Duration::from_secs(5));
    // Its held pass starts at the bound, not when the provisioner said.
    let next = factory
        .starts_of("host-0")
        .into_iter()
        .find(|t| *t > held_at)
        .expect("host-0 ran again");
    let after = next - held_at;
    assert!(
        after >= due::MAX_HOLD - Duration::from_millis(20)
            && after < due::MAX_HOLD + Duration::from_millis(700),
        "held for {after:?}"
    );
    // Meanwhile the one slot ran host-1's passes.
    let meanwhile = factory
        .starts_of("host-1")
        .into_iter()
        .filter(|t| *t > held_at && *t < next)
        .count();
    assert!(meanwhile >= 1, "host-1 waited for host-0's hold");
    // Both hosts' passes were asked about, one question for the passes starting together.
    let asked = factory.asked.lock().unwrap();
    let names: HashSet<_> = asked
        .iter()
        .flat_map(|(_, hosts, _)| hosts.iter().map(|h| h.host.name.clone()))
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    // One pass running and at most one queued for the worker behind it.
    assert!(
        asked.iter().all(|(_, hosts, _)| hosts.len() <= 2),
        "one slot: {asked:?}"
    );
}

/// A provisioner that does not hold passes back (a plugin older than SDK 0.5, the fixture, the
/// demo) is asked once and every pass then starts at once; `--timing bmo` never asks.
#[test]
fn a_provisioner_without_ready_hosts_is_asked_once_and_bmo_timing_never() {
    let factory = Holding::new("host-0", None);
    let results = drive_holding(fixture_hosts(2), factory.clone(), 8, Timing::Change);
    assert!(results.iter().all(|r| r.reached));
    assert_eq!(factory.asked.lock().unwrap().len(), 1, "asked once");
    assert!(!factory.overlap.load(Ordering::SeqCst));

    let factory = Holding::new("host-0", Some(Duration::from_secs(5)));
    let results = drive_holding(fixture_hosts(2), factory.clone(), 8, Timing::Bmo);
    assert!(results.iter().all(|r| r.reached));
    assert!(
        factory.asked.lock().unwrap().is_empty(),
        "--timing bmo asks"
    );
}

/// When passes never block, a commit due while passes of its group are under way waits for the
/// last of them (one in their midst would split the hosts it releases in two, each half then
/// needing commits of its own); another group's passes hold nothing.
#[test]
fn a_commit_waits_for_its_groups_passes_when_passes_never_block() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        // Held at most 4 x 1 s: the test sees it released by its pass, not by time.
        let mut commits = GroupCommits::new(2, Duration::from_secs(1), true);
        let commit = |group: usize| Ok(group as u64 + 1);
        async fn next(commits: &mut GroupCommits) -> Option<(usize, Option<u64>)> {
            tokio::time::timeout(Duration::from_millis(200), commits.recv())
                .await
                .ok()
                .flatten()
                .map(|(g, r)| (g, r.ok()))
        }
        commits.pass_started(0);
        commits.staged(0, 1);
        commits.staged(1, 2);
        commits.start_ready(commit);
        assert_eq!(next(&mut commits).await, Some((1, Some(2))));
        commits.start_ready(commit);
        assert_eq!(next(&mut commits).await, None, "group 0 waits for its pass");
        commits.pass_ended(0);
        commits.start_ready(commit);
        assert_eq!(next(&mut commits).await, Some((0, Some(1))));
    });
}

/// A held commit waits at most four times its usual wait, even while its group's passes keep
/// running; when passes may block (Ironic's), nothing waits for them at all.
#[test]
fn a_held_commit_waits_a_bounded_time_and_only_when_passes_never_block() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for hold in [true, false] {
            let mut commits = GroupCommits::new(1, Duration::from_millis(5), hold);
            let started = Instant::now();
            commits.pass_started(0);
            commits.staged(0, 1);
            loop {
                commits.start_ready(|_| Ok(1));
                if let Ok(Some((0, r))) =
                    tokio::time::timeout(Duration::from_millis(1), commits.recv()).await
                {
                    assert_eq!(r.ok(), Some(1));
                    break;
                }
            }
            let waited = started.elapsed();
            if hold {
                assert!(waited >= Duration::from_millis(20), "{waited:?}");
            } else {
                assert!(waited < Duration::from_millis(20), "{waited:?}");
            }
        }
    });
}

/// A group the commits have no room for yet (a file read again during a run brought it, with
/// no new host to make room) is made room for when its first pass starts or its first save is
/// staged, instead of indexing past the end.
#[test]
fn a_group_that_arrives_without_a_new_host_is_made_room_for() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut commits = GroupCommits::new(1, Duration::from_millis(1), true);
        commits.pass_started(2);
        commits.pass_ended(2);
        commits.staged(3, 7);
        let mut got = None;
        for _ in 0..100 {
            commits.start_ready(|g| Ok(g as u64));
            if let Ok(Some((g, r))) =
                tokio::time::timeout(Duration::from_millis(5), commits.recv()).await
            {
                got = Some((g, r.ok()));
                break;
            }
        }
        assert_eq!(got, Some((3, Some(3))));
    });
}

/// The controller's loop beats its heartbeat while it turns, with what it drives; a loop held
/// up (here by an observer that takes its time, run on the loop) beats nothing meanwhile, so a
/// watchdog fed by it sees a stuck loop.
#[test]
fn the_controller_loop_beats_its_heartbeat_and_a_held_up_loop_does_not() {
    use live::{LiveChange, LiveServices, run_live};
    let hosts = fixture_hosts(1);
    let objects = Arc::new(hosts[0].secrets.clone());
    let records: Vec<HostRecord> = hosts.into_iter().map(|t| t.rec).collect();
    let key = ObjectKey::new("default", &records[0].host.metadata.name);
    let services = LiveServices {
        factory: Arc::new(crate::provisioners::fixture::Fixture::new()),
        objects,
        clock: Arc::new(SystemClock),
        source: Arc::new(LiveMemory {
            hosts: records,
            ticket: AtomicU64::new(0),
        }),
    };
    const EVERY: Duration = Duration::from_millis(20);
    const HELD: Duration = Duration::from_millis(400);
    let beats: Arc<Mutex<Vec<(Instant, Pulse)>>> = Arc::default();
    let heard = beats.clone();
    let heartbeat = Heartbeat {
        every: EVERY,
        beat: Box::new(move |pulse| heard.lock().unwrap().push((Instant::now(), pulse))),
    };
    // The first pass's report holds the loop up once.
    let held = Arc::new(Mutex::new(None::<(Instant, Instant)>));
    let holding = held.clone();
    let observer: live::Observer = Box::new(move |_, _, _| {
        let mut held = holding.lock().unwrap();
        if held.is_none() {
            let from = Instant::now();
            std::thread::sleep(HELD);
            *held = Some((from, Instant::now()));
        }
    });
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let (tx, rx) = mpsc::unbounded_channel();
    tx.send(LiveChange::Host(key)).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let run = tokio::spawn(run_live(
            services,
            test_config(0.0, Timing::Bmo),
            rx,
            observer,
            stop,
            Some(heartbeat),
        ));
        tokio::time::sleep(HELD + Duration::from_millis(400)).await;
        stop_tx.send(true).unwrap();
        run.await.unwrap().expect("the controller ends");
    });
    let ended = Instant::now();
    drop(tx);
    let beats = beats.lock().unwrap().clone();
    let (from, to) = held.lock().unwrap().expect("the host had a pass");
    let gap = |a: Instant, b: Instant| b.saturating_duration_since(a);
    let times: Vec<Instant> = beats.iter().map(|(t, _)| *t).collect();
    assert!(
        times.iter().all(|t| *t <= from || *t >= to),
        "a beat while the loop was held up"
    );
    let longest_gap = |a: Instant, b: Instant| {
        let within: Vec<Instant> = times
            .iter()
            .copied()
            .filter(|t| *t >= a && *t <= b)
            .collect();
        within.windows(2).map(|w| gap(w[0], w[1])).max()
    };
    // After the hold, beats come again, at most a few `EVERY` apart (a loaded machine's timers
    // are late, never by the hold's length).
    let after = longest_gap(to, ended).expect("beats after the hold");
    assert!(after < HELD / 2, "{after:?} between beats");
    assert!(times.iter().filter(|t| **t >= to).count() >= 5);
    assert!(beats.iter().any(|(_, p)| p.hosts == 1), "{beats:?}");
}
