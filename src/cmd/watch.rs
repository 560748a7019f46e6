//! `bmhctl watch`: BMO's controller over the local store, and `bmhctl wait --for STATE`.
//!
//! `watch` holds the store's lease, polls the store's files for changes
//! ([`StoreWatcher`], every `--poll-interval`) and feeds them to the live runner
//! ([`crate::runner::live`]): every host is reconciled when it appears or changes and at the time
//! its last pass asked for, until SIGINT or SIGTERM; then the passes in flight finish and their
//! saves are written before it exits. The same machinery drives the hosts of a verb's `--wait`
//! (or of `wait`) in-process when no `watch` holds the lease.

use super::{ResultFormat, RunArgs, StoreArgs, Verbosity, parse_duration};
use crate::clock::{Clock, SystemClock, format_time};
use crate::error::{Error, Result};
use crate::machine::PassOutcome;
use crate::objects::{ObjectMap, ObjectSource, ResolvedSecret};
use crate::persist::store::store_source::StoreSource;
use crate::persist::store::{Lease, Store};
use crate::persist::{HostSource, SourceChange};
use crate::record::HostRecord;
use crate::runner::live::{LiveChange, LiveServices, Observer, run_live};
use bmh_api::{ObjectKey, ProvisioningState};
use clap::Args;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// How hosts are driven (by `watch`, or in-process by `--wait`).
#[derive(Debug, Args, Clone)]
pub struct DriveArgs {
    /// The provisioner: `fixture` (built in) or a plugin NAME loaded from
    /// $PROVISIONER_PLUGIN_DIR/NAME-provisioner.so.
    #[arg(
        long,
        env = "BMHCTL_PROVISIONER",
        default_value = "ironic",
        value_name = "NAME"
    )]
    pub provisioner: String,
    /// Passes run at once (default: the CPU count, at least 2 and at most 8).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub concurrency: Option<u32>,
    /// Provisioning attempts per image before a host gives up (0 = unlimited).
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub max_provisioning_retries: u32,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub drive: DriveArgs,
    /// How often the store's files are checked for changes.
    #[arg(long, default_value = "250ms", value_parser = parse_duration, value_name = "DURATION")]
    pub poll_interval: Duration,
}

#[derive(Debug, Args)]
pub struct WaitArgs {
    /// The state to wait for: a provisioning state (`available`, `provisioned`,
    /// `externally-provisioned`, ...), `goal` (the host's goal, as `provision` sees it, with no
    /// error), `detached`, `error`, `powered-on` or `powered-off`.
    #[arg(long = "for", value_name = "STATE")]
    pub for_state: String,
    /// Give up after this long (exit 1).
    #[arg(long, default_value = "10m", value_parser = parse_duration, value_name = "DURATION")]
    pub timeout: Duration,
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub drive: DriveArgs,
    /// The hosts (NAME or NAMESPACE/NAME); every host of the store when none is given.
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,
}

/// Companion objects read from the store, replaced when they change there.
#[derive(Default)]
struct LiveObjects(RwLock<Arc<ObjectMap>>);

impl LiveObjects {
    fn current(&self) -> Arc<ObjectMap> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn replace(&self, map: ObjectMap) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(map);
    }
}

impl ObjectSource for LiveObjects {
    fn secret(&self, key: &ObjectKey) -> Option<Arc<ResolvedSecret>> {
        self.current().secret(key)
    }

    fn object(&self, api_version: &str, kind: &str, key: &ObjectKey) -> Option<Value> {
        self.current().object(api_version, kind, key)
    }
}

fn run_args(d: &DriveArgs) -> RunArgs {
    RunArgs {
        provisioner: d.provisioner.clone(),
        timeout: Duration::from_secs(3600),
        concurrency: d.concurrency,
        max_provisioning_retries: d.max_provisioning_retries,
        selector: None,
        output: ResultFormat::Table,
    }
}

/// Drives the store's hosts (or only `only`) until `stop` turns true. The caller holds the
/// lease.
fn drive_store(
    store: &Store,
    only: Option<BTreeSet<ObjectKey>>,
    drive: &DriveArgs,
    poll: Duration,
    observer: Observer,
    stop: tokio::sync::watch::Receiver<bool>,
    runtime: &tokio::runtime::Runtime,
) -> Result<()> {
    let config = super::provision::runner_config(&run_args(drive))?;
    let provisioner = crate::provisioners::resolve(&drive.provisioner)?;
    let objects = Arc::new(LiveObjects::default());
    objects.replace(store.object_map()?);
    provisioner.set_objects(objects.clone());
    let source = Arc::new(StoreSource::new(store.clone(), only, Arc::new(SystemClock)));
    let services = LiveServices {
        factory: provisioner.factory.clone(),
        objects: objects.clone(),
        clock: Arc::new(SystemClock),
        source: source.clone(),
    };
    runtime.block_on(async move {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let mut scan_stop = stop.clone();
        let scanner = tokio::spawn(async move {
            loop {
                let scanned = source.clone();
                let result = tokio::task::spawn_blocking(move || scanned.changes())
                    .await
                    .expect("the store scan does not panic");
                match result {
                    Ok(changes) => {
                        for c in changes {
                            let sent = match c {
                                SourceChange::Host(k) => tx.send(LiveChange::Host(k)),
                                SourceChange::HostGone(k) => tx.send(LiveChange::Gone(k)),
                                SourceChange::Objects => {
                                    match source.objects() {
                                        Ok(m) => objects.replace(m),
                                        Err(e) => tracing::warn!("cannot read the store: {e}"),
                                    }
                                    Ok(())
                                }
                            };
                            if sent.is_err() {
                                return;
                            }
                        }
                    }
                    Err(e) => tracing::warn!("cannot read the store: {e}"),
                }
                tokio::select! {
                    _ = tokio::time::sleep(poll) => {}
                    _ = scan_stop.changed() => return,
                }
            }
        });
        let result = run_live(services, config, rx, observer, stop).await;
        scanner.abort();
        result
    })
}

fn runtime(concurrency: usize) -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .max_blocking_threads(concurrency + 4)
        .build()
        .map_err(|e| Error::Other(e.into()))
}

/// Prints a line when a host's state, operational status or power changes (not with `-q`).
fn transitions(quiet: bool) -> Observer {
    let mut last: HashMap<ObjectKey, (String, String, bool, String)> = HashMap::new();
    Box::new(
        move |key: &ObjectKey, rec: &HostRecord, out: &PassOutcome| {
            if let Some(e) = &out.error {
                tracing::info!("BareMetalHost {key}: {e}");
            }
            let s = rec.status();
            let now = (
                s.provisioning.state.as_str().to_string(),
                s.operational_status.as_str().to_string(),
                s.powered_on,
                s.error_message.clone(),
            );
            if out.deleted {
                last.remove(key);
                if !quiet {
                    println!("{} {key} deleted", format_time(SystemClock.now()));
                }
                return;
            }
            if last.get(key) != Some(&now) {
                if !quiet {
                    let op = if now.1.is_empty() {
                        "-"
                    } else {
                        now.1.as_str()
                    };
                    let power = if now.2 { "on" } else { "off" };
                    let err = if now.3.is_empty() {
                        String::new()
                    } else {
                        format!(" error: {}", now.3)
                    };
                    println!(
                        "{} {key} {} {op} power {power}{err}",
                        format_time(SystemClock.now()),
                        super::output::state_text(rec),
                    );
                }
                last.insert(key.clone(), now);
            }
        },
    )
}

pub fn watch(args: WatchArgs, verbosity: Verbosity) -> Result<()> {
    let root = crate::persist::store::resolve_root(args.store.store.as_deref())?;
    let store = Store::open(root)?;
    let lease = store.acquire_lease()?;
    let config = super::provision::runner_config(&run_args(&args.drive))?;
    let runtime = runtime(config.concurrency)?;
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    runtime.spawn(async move {
        super::provision::wait_for_signal().await;
        let _ = stop_tx.send(true);
    });
    if !verbosity.quiet {
        eprintln!(
            "watching {} (lease {}); Ctrl-C or SIGTERM to stop",
            store.root().display(),
            lease.path().display()
        );
    }
    drive_store(
        &store,
        None,
        &args.drive,
        args.poll_interval,
        transitions(verbosity.quiet),
        stop_rx,
        &runtime,
    )?;
    if !verbosity.quiet {
        eprintln!("stopped: passes in flight finished and their status saved");
    }
    drop(lease);
    Ok(())
}

/// The hosts named on the command line (all hosts when none is), as store keys: NAME is the
/// host of that name in `default`, else the only one of that name.
pub fn resolve_hosts(store: &Store, names: &[String]) -> Result<Vec<ObjectKey>> {
    let all = store.host_keys()?;
    if names.is_empty() {
        if all.is_empty() {
            return Err(Error::Usage("no BareMetalHost in the store".into()));
        }
        return Ok(all);
    }
    let mut out = Vec::new();
    for n in names {
        let key = if let Some((ns, name)) = n.split_once('/') {
            all.iter().find(|k| k.namespace == ns && k.name == name)
        } else {
            let matching: Vec<&ObjectKey> = all.iter().filter(|k| k.name == *n).collect();
            match matching.len() {
                0 => None,
                1 => Some(matching[0]),
                _ => match matching
                    .iter()
                    .find(|k| k.namespace == bmh_api::DEFAULT_NAMESPACE)
                {
                    Some(k) => Some(*k),
                    None => {
                        return Err(Error::Usage(format!(
                            "several BareMetalHosts are named {n}: give NAMESPACE/NAME"
                        )));
                    }
                },
            }
        };
        match key {
            Some(k) if !out.contains(k) => out.push(k.clone()),
            Some(_) => {}
            None => {
                return Err(Error::Other(anyhow::anyhow!(
                    "no BareMetalHost named {n} in the store"
                )));
            }
        }
    }
    Ok(out)
}

/// A condition on a host, as read from the store; `None` when the host is gone.
pub type Condition = Box<dyn Fn(Option<&HostRecord>) -> bool + Send + Sync>;

/// Waits until every host meets `cond`, driving them in-process when no `watch` holds the
/// lease. Exit 1 after `timeout`, 130 on SIGINT/SIGTERM.
pub fn wait_until(
    store: &Store,
    keys: &[ObjectKey],
    cond: Condition,
    what: &str,
    timeout: Duration,
    drive: &DriveArgs,
) -> Result<()> {
    let cond = Arc::new(cond);
    let met = {
        let store = store.clone();
        let keys = keys.to_vec();
        let cond = cond.clone();
        move || -> Result<Vec<ObjectKey>> {
            let mut pending = Vec::new();
            for k in &keys {
                let rec = store.load_host(k)?;
                if !cond(rec.as_ref()) {
                    pending.push(k.clone());
                }
            }
            Ok(pending)
        }
    };
    if met()?.is_empty() {
        return Ok(());
    }
    let deadline = Instant::now() + timeout;
    let lease: Option<Lease> = match store.acquire_lease() {
        Ok(l) => Some(l),
        Err(Error::Conflict(_)) => None,
        Err(e) => return Err(e),
    };
    let config = super::provision::runner_config(&run_args(drive))?;
    let runtime = runtime(config.concurrency)?;
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let (why_tx, why_rx) = std::sync::mpsc::channel::<Result<()>>();
    let what = what.to_string();
    runtime.spawn(async move {
        let outcome = tokio::select! {
            _ = super::provision::wait_for_signal() => Err(Error::Interrupted),
            r = async {
                loop {
                    let met = met.clone();
                    let pending = tokio::task::spawn_blocking(met).await
                        .map_err(|e| Error::Other(e.into()))?;
                    match pending {
                        Ok(p) if p.is_empty() => return Ok(()),
                        Ok(p) if Instant::now() >= deadline => {
                            let names: Vec<String> = p.iter().map(|k| k.to_string()).collect();
                            return Err(Error::Unfinished(format!(
                                "timed out after {} waiting for {what}: {}",
                                humantime::format_duration(timeout),
                                names.join(", ")
                            )));
                        }
                        Ok(_) => {}
                        Err(e) => return Err(e),
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            } => r,
        };
        let _ = why_tx.send(outcome);
        let _ = stop_tx.send(true);
    });
    match &lease {
        Some(_) => {
            let only: BTreeSet<ObjectKey> = keys.iter().cloned().collect();
            drive_store(
                store,
                Some(only),
                drive,
                Duration::from_millis(100),
                transitions(true),
                stop_rx,
                &runtime,
            )?;
        }
        None => {
            // A `watch` drives the hosts: only look.
            let mut stop_rx = stop_rx;
            runtime.block_on(async {
                let _ = stop_rx.wait_for(|s| *s).await;
            });
        }
    }
    drop(lease);
    let result = why_rx.recv().unwrap_or(Err(Error::Interrupted));
    if let Err(Error::Unfinished(m)) = &result {
        eprintln!("error: {m}");
    }
    result
}

/// The host is stable at its goal as far as the store shows: the state `provision` drives it
/// to, no error, and (with a BMC) powered as `online` and its reboot annotations say.
fn at_goal(r: &HostRecord) -> bool {
    let s = r.status();
    let state = &s.provisioning.state;
    if !crate::runner::Goal::for_provision(r).reached_by(state)
        || s.operational_status != bmh_api::OperationalStatus::Ok
    {
        return false;
    }
    if *state == ProvisioningState::Unmanaged {
        return true;
    }
    let held_off = r
        .host
        .metadata
        .annotations
        .keys()
        .any(|k| bmh_api::annotations::is_reboot_annotation(k));
    held_off || s.powered_on == r.host.spec.online
}

fn norm(s: &str) -> String {
    s.trim().to_ascii_lowercase().replace(['-', '_'], " ")
}

/// The condition `wait --for STATE` stands for.
pub fn state_condition(state: &str) -> Result<Condition> {
    let want = norm(state);
    Ok(match want.as_str() {
        "goal" => Box::new(|r: Option<&HostRecord>| r.is_some_and(at_goal)),
        "detached" => Box::new(|r: Option<&HostRecord>| {
            r.is_some_and(|r| r.status().operational_status == bmh_api::OperationalStatus::Detached)
        }),
        "error" => Box::new(|r: Option<&HostRecord>| {
            r.is_some_and(|r| r.status().operational_status == bmh_api::OperationalStatus::Error)
        }),
        "powered on" => Box::new(|r: Option<&HostRecord>| r.is_some_and(|r| r.status().powered_on)),
        "powered off" => {
            Box::new(|r: Option<&HostRecord>| r.is_some_and(|r| !r.status().powered_on))
        }
        "deleted" => Box::new(|r: Option<&HostRecord>| r.is_none()),
        _ => {
            let Some(known) = ProvisioningState::KNOWN
                .iter()
                .find(|k| !k.is_empty() && norm(k) == want)
            else {
                let mut states: Vec<&str> = ProvisioningState::KNOWN
                    .iter()
                    .copied()
                    .filter(|k| !k.is_empty())
                    .collect();
                states.extend([
                    "goal",
                    "detached",
                    "error",
                    "powered-on",
                    "powered-off",
                    "deleted",
                ]);
                return Err(Error::Usage(format!(
                    "unknown state {state:?} for --for; one of: {}",
                    states.join(", ")
                )));
            };
            let s = ProvisioningState::from(*known);
            Box::new(move |r: Option<&HostRecord>| {
                r.is_some_and(|r| r.status().provisioning.state == s)
            })
        }
    })
}

pub fn wait(args: WaitArgs) -> Result<()> {
    let cond = state_condition(&args.for_state)?;
    let root = crate::persist::store::resolve_root(args.store.store.as_deref())?;
    let store = Store::open_existing(&root)
        .ok_or_else(|| Error::Other(anyhow::anyhow!("no store at {}", root.display())))?;
    let keys = resolve_hosts(&store, &args.hosts)?;
    wait_until(
        &store,
        &keys,
        cond,
        &args.for_state,
        args.timeout,
        &args.drive,
    )?;
    for k in &keys {
        println!("baremetalhost/{} condition met", k.name);
    }
    Ok(())
}
