//! `bmhctl watch` (BMO's controller until a signal) and `bmhctl wait --for STATE`.

use super::options::{DriveOptions, Environment, Place};
use super::service_manager::ServiceManager;
use super::wait_for::Condition;
use super::{DriveArgs, SourceArgs, Verbosity, parse_duration};
use crate::clock::{Clock, SystemClock, format_time};
use crate::error::{Error, Result, Unfinished};
use crate::machine::PassOutcome;
use crate::metrics::{Metrics, ObservedFactory, TimedSource};
use crate::persist::HostSource;
use crate::persist::files::file_source::FileSource;
use crate::persist::files::inventory::{self, LoadMode};
use crate::persist::store::store_source::StoreSource;
use crate::persist::store::{Lease, Store};
use crate::record::HostRecord;
use crate::runner::live::{LiveObjects, LiveServices, Loaded, Observer, Watching, control};
use crate::selection::HostSelection;
use bmh_api::ObjectKey;
use clap::Args;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct WatchArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub drive: DriveArgs,
    /// How often the store's files (or the files given) are checked for changes.
    #[arg(long, default_value = "250ms", value_parser = parse_duration, value_name = "DURATION",
          allow_hyphen_values = true)]
    pub poll_interval: Duration,
    /// `text`: a line per transition; `json`: one JSON object a line (NDJSON) per transition
    /// and per event, flushed as it happens.
    #[arg(short, long, value_enum, default_value_t = WatchFormat::Text)]
    pub output: WatchFormat,
    /// Serve Prometheus metrics at http://ADDR/metrics (`HOST:PORT`; port 0 picks a free port,
    /// said on stderr).
    #[arg(long, value_name = "ADDR")]
    pub metrics_addr: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WatchFormat {
    /// A line per change of a host's state, status, power or error.
    Text,
    /// One JSON object a line: each transition and each event (docs/output.md).
    Json,
}

#[derive(Debug, Args)]
pub struct WaitArgs {
    /// What to wait for: a provisioning state as BMO spells it (`available`, `provisioned`,
    /// `"externally provisioned"`, ...; `-` or `_` may stand for the space, as in
    /// `externally-provisioned`), `goal` (the host's goal, as `provision` sees it, with no
    /// error), `detached`, `error`, `powered-on`, `powered-off`, `delete` (or `deleted`);
    /// kubectl's `condition=TYPE[=STATUS]` on the host's status conditions (`Ready`,
    /// `Provisioned`, `AvailableForProvisioning`, `Manageable`, `Progressing`, `Healthy`; STATUS
    /// `True` by default; any case) and `jsonpath=EXPR[=VALUE]` (EXPR such as
    /// `{.status.provisioning.state}`; without VALUE, EXPR names a value). A host resting at its
    /// goal that can never meet a state or condition ends the wait at once (exit 1).
    #[arg(long = "for", value_name = "CONDITION")]
    pub for_state: String,
    /// Give up after this long (exit 1).
    #[arg(long, default_value = "10m", value_parser = parse_duration, value_name = "DURATION",
          allow_hyphen_values = true)]
    pub timeout: Duration,
    #[command(flatten)]
    pub source: SourceArgs,
    #[command(flatten)]
    pub drive: DriveArgs,
    /// Only hosts whose labels match (kubectl syntax).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Every host of the files or the store (what naming none does too).
    #[arg(long, conflicts_with_all = ["hosts", "selector"])]
    pub all: bool,
    /// The hosts (NAME, NAMESPACE/NAME or TYPE/NAME, after an optional type such as `bmh`);
    /// every host when none is given.
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,
}

/// A host source opened to be driven, with the store's lease (files lock themselves).
struct Driven {
    source: Arc<dyn HostSource>,
    provisioner: crate::provisioners::Resolved,
    lease: Option<Lease>,
}

/// Opens `place` to drive its hosts; [`Error::Conflict`] when another process holds them.
fn open_driven(
    place: &Place,
    only: Option<BTreeSet<ObjectKey>>,
    options: &DriveOptions,
    input: crate::persist::InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<Driven> {
    match place {
        Place::Store(root) => {
            let store = Store::open(root)?;
            let lease = store.acquire_lease()?;
            let provisioner = options.resolve_provisioner(input, provisioners)?;
            Ok(Driven {
                source: Arc::new(StoreSource::new(store, only, Arc::new(SystemClock))),
                provisioner,
                lease: Some(lease),
            })
        }
        Place::Files(paths) => {
            // A missing file is said before a missing plugin.
            super::options::missing_inputs(&options.provisioner, paths)?;
            let provisioner = options.resolve_provisioner(input, provisioners)?;
            let inv = inventory::load_with(paths, LoadMode::Write, &provisioner.load_options)?;
            inventory::check_secret_references(&inv)?;
            let source = FileSource::new(inv, &provisioner.load_options);
            Ok(Driven {
                source: Arc::new(source),
                provisioner,
                lease: None,
            })
        }
    }
}

/// Drives the hosts of `driven` until `stop`; tells `service` (when systemd runs bmhctl) how
/// far it got.
#[allow(clippy::too_many_arguments)]
fn drive_live(
    driven: &Driven,
    only: Option<BTreeSet<ObjectKey>>,
    options: &DriveOptions,
    poll: Duration,
    observer: Observer,
    stop: tokio::sync::watch::Receiver<bool>,
    runtime: &tokio::runtime::Runtime,
    service: Option<(Arc<ServiceManager>, String)>,
) -> Result<()> {
    let objects = Arc::new(LiveObjects::default());
    objects.replace(driven.source.objects()?);
    // The plugin was created before the objects were read: it sees them from now on.
    driven.provisioner.set_objects(objects.clone());
    super::reachable::wait_until_reachable(
        driven.provisioner.factory.as_ref(),
        options.ironic_wait,
        |m| {
            if let Some((manager, _)) = &service {
                manager.waiting(m);
            }
            crate::eprintln_quiet!("bmhctl: {m}");
        },
    )?;
    let services = LiveServices {
        factory: driven.provisioner.factory.clone(),
        objects: objects.clone(),
        clock: Arc::new(SystemClock),
        source: driven.source.clone(),
    };
    // Ready once the provisioner answered (above) and the first scan announced the hosts.
    let (loaded, heartbeat) = match service {
        Some((manager, place)) => {
            let heartbeat = manager.heartbeat();
            let loaded: Loaded = Box::new(move |hosts| manager.ready(hosts, &place));
            (Some(loaded), Some(heartbeat))
        }
        None => (None, None),
    };
    let watching = Watching {
        only,
        poll,
        loaded,
        heartbeat,
    };
    runtime.block_on(control(
        services,
        objects,
        watching,
        options.runner.clone(),
        observer,
        stop,
    ))
}

fn runtime(concurrency: usize) -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .max_blocking_threads(concurrency + 4)
        .build()
        .map_err(|e| Error::internal("cannot start the async runtime", e))
}

/// What a transition is a change of: state, operational status, power, error message.
type Seen = (String, String, bool, String);

/// Prints each change of a host's state, status, power or error: a line (none with `-q`), or
/// for `-o json` an object a line, with the host's events (docs/output.md).
fn transitions(json: bool, quiet: bool) -> Observer {
    let mut last: HashMap<ObjectKey, Seen> = HashMap::new();
    // The journal times each line itself.
    let own_time = !crate::journal_stream::stdout_is_journal();
    Box::new(
        move |key: &ObjectKey, rec: &HostRecord, out: &PassOutcome| {
            if let Some(e) = out.error.as_ref().filter(|_| !json) {
                tracing::info!("BareMetalHost {key}: {e}");
            }
            let time = format_time(SystemClock.now());
            let s = rec.status();
            let (state, op) = (s.provisioning.state.as_str(), s.operational_status.as_str());
            let now: Seen = (
                state.into(),
                op.into(),
                s.powered_on,
                s.error_message.clone(),
            );
            let changed = out.deleted() || last.get(key) != Some(&now);
            let mut lines = Vec::new();
            if changed && json {
                let mut t = serde_json::json!({
                    "apiVersion": super::output::API_VERSION,
                    "kind": "Transition",
                    "time": time,
                    "namespace": key.namespace,
                    "name": key.name,
                    "provisioningState": now.0,
                    "operationalStatus": now.1,
                    "poweredOn": now.2,
                    "errorType": rec.status().error_type.as_str(),
                    "errorMessage": now.3,
                });
                if out.deleted() {
                    t["deleted"] = true.into();
                }
                lines.push(t.to_string());
            } else if out.deleted() && !quiet {
                let at = if own_time {
                    format!("{time} ")
                } else {
                    String::new()
                };
                lines.push(format!("{at}{key} deleted"));
            } else if changed && !quiet {
                let op = if now.1.is_empty() { "-" } else { &now.1 };
                let power = if now.2 { "on" } else { "off" };
                let err = if now.3.is_empty() {
                    String::new()
                } else {
                    format!(" error: {}", now.3)
                };
                let state = super::output::state_text(rec);
                let at = if own_time {
                    format!("{time} ")
                } else {
                    String::new()
                };
                lines.push(format!("{at}{key} {state} {op} power {power}{err}"));
            }
            for e in out.events.iter().filter(|_| json) {
                let e = serde_json::json!({
                    "apiVersion": super::output::API_VERSION,
                    "kind": "Event",
                    "time": time,
                    "namespace": key.namespace,
                    "name": key.name,
                    "reason": e.reason,
                    "message": e.message,
                });
                lines.push(e.to_string());
            }
            if out.deleted() {
                last.remove(key);
            } else if changed {
                last.insert(key.clone(), now);
            }
            for l in lines {
                // A reader gone from stdout does not stop the controller.
                let _ = super::output::line(l);
            }
        },
    )
}

pub fn watch(
    args: WatchArgs,
    verbosity: Verbosity,
    input: crate::persist::InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    let place = super::options::place(&args.source)?;
    let options = DriveOptions::for_controller(&args.drive, &Environment::read()?);
    // Bound before the hosts are taken: a busy address changes nothing.
    let listener = args
        .metrics_addr
        .as_deref()
        .map(super::metrics_server::bind)
        .transpose()?;
    let mut driven = open_driven(&place, None, &options, input, provisioners)?;
    let runtime = runtime(options.runner.concurrency)?;
    let mut print = transitions(args.output == WatchFormat::Json, verbosity.quiet);
    let observer: Observer = match listener {
        Some(listener) => {
            let metrics = Arc::new(Metrics::default());
            metrics.read_api_calls_from(driven.provisioner.factory.clone());
            driven.source = Arc::new(TimedSource {
                inner: driven.source.clone(),
                metrics: metrics.clone(),
            });
            driven.provisioner.factory = Arc::new(ObservedFactory {
                inner: driven.provisioner.factory.clone(),
                metrics: metrics.clone(),
            });
            let at = super::metrics_server::serve(listener, metrics.clone(), &runtime)?;
            crate::eprintln_quiet!("metrics at http://{at}/metrics");
            Box::new(
                move |key: &ObjectKey, rec: &HostRecord, out: &PassOutcome| {
                    metrics.observe_pass(key, rec, out);
                    print(key, rec, out);
                },
            )
        }
        None => print,
    };
    let service = ServiceManager::from_env();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let told = service.clone();
    runtime.spawn(async move {
        super::provision::wait_for_signal().await;
        if let Some(manager) = told {
            manager.stopping();
        }
        let _ = stop_tx.send(true);
    });
    if !verbosity.quiet {
        match (&place, &driven.lease) {
            (Place::Store(root), Some(lease)) => crate::eprintln_quiet!(
                "watching {} (lease {}); Ctrl-C or SIGTERM to stop",
                root.display(),
                lease.path().display()
            ),
            (Place::Files(_), _) => crate::eprintln_quiet!(
                "watching {} (their locks are in .bmhctl/ beside them); Ctrl-C or SIGTERM to \
                 stop",
                place.describe()
            ),
            (Place::Store(root), None) => crate::eprintln_quiet!("watching {}", root.display()),
        }
    }
    let service = service.map(|manager| (manager, place.describe()));
    drive_live(
        &driven,
        None,
        &options,
        args.poll_interval,
        observer,
        stop_rx,
        &runtime,
        service,
    )?;
    // A save left behind after the signal (it hangs) is not waited for.
    runtime.shutdown_background();
    if !verbosity.quiet {
        crate::eprintln_quiet!("stopped: passes in flight finished and their status saved");
    }
    drop(driven);
    Ok(())
}

type Reader = Arc<dyn Fn(&ObjectKey) -> Result<Option<HostRecord>> + Send + Sync>;

/// Reads hosts without a lock (while another process drives them).
fn reader(place: &Place, input: crate::persist::InputPolicy) -> Reader {
    let place = place.clone();
    Arc::new(move |key: &ObjectKey| crate::persist::snapshot::read_host(&place, key, input))
}

/// What a look at the hosts found: those still pending, and why any can never get there.
struct Looked {
    pending: Vec<ObjectKey>,
    never: Vec<String>,
}

/// Waits until every host meets `cond` (driving them when no `watch` does), saying `said` of
/// each host as it meets it; a host that never will (`cond` knows why) ends the wait at once.
#[allow(clippy::too_many_arguments)]
pub fn wait_until(
    place: &Place,
    keys: &[ObjectKey],
    cond: Condition,
    what: &str,
    said: &str,
    timeout: Duration,
    drive: &DriveArgs,
    input: crate::persist::InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    let cond = Arc::new(cond);
    let met_already = Arc::new(std::sync::Mutex::new(BTreeSet::<ObjectKey>::new()));
    let look = |read: Reader| {
        let keys = keys.to_vec();
        let (cond, met_already) = (cond.clone(), met_already.clone());
        let (what, said) = (what.to_string(), said.to_string());
        move || -> Result<Looked> {
            let mut met = met_already.lock().unwrap_or_else(|e| e.into_inner());
            let mut looked = Looked {
                pending: Vec::new(),
                never: Vec::new(),
            };
            for k in &keys {
                if met.contains(k) {
                    continue;
                }
                let rec = read(k)?;
                if cond.met(rec.as_ref()) {
                    // Said as it is met, as kubectl does: a host met early is not held back.
                    super::output::outln!(
                        "{} {said}",
                        crate::resource_args::host_resource(&k.name)
                    )?;
                    met.insert(k.clone());
                    continue;
                }
                if let Some(why) = rec.as_ref().and_then(|r| cond.never_met(r)) {
                    let name = crate::resource_args::host_resource(&k.name);
                    looked
                        .never
                        .push(format!("{name} cannot meet --for={what}: {why}"));
                }
                looked.pending.push(k.clone());
            }
            Ok(looked)
        }
    };
    let never = |lines: Vec<String>| Err(Unfinished::Never(lines).into());
    let first = look(reader(place, input))()?;
    if first.pending.is_empty() {
        return Ok(());
    }
    if !first.never.is_empty() {
        return never(first.never);
    }
    let deadline = Instant::now() + timeout;
    let options = DriveOptions::for_controller(drive, &Environment::read()?);
    let only: BTreeSet<ObjectKey> = keys.iter().cloned().collect();
    let elsewhere = match place {
        // Looked at before the plugin is loaded: beside a `watch -f`, no plugin is.
        Place::Files(paths) => crate::persist::files::beside::held_by(paths)?.is_some(),
        Place::Store(_) => false,
    };
    let driven = match elsewhere {
        true => None,
        false => match open_driven(place, Some(only.clone()), &options, input, provisioners) {
            Ok(d) => Some(d),
            // A `watch` drives the hosts: only look.
            Err(Error::Conflict(_)) => None,
            Err(e) => return Err(e),
        },
    };
    let check = match &driven {
        Some(d) => {
            let source = d.source.clone();
            look(Arc::new(move |k: &ObjectKey| source.load(k)))
        }
        None => look(reader(place, input)),
    };
    let runtime = runtime(options.runner.concurrency)?;
    let (stop_tx, mut stop_rx) = tokio::sync::watch::channel(false);
    let (why_tx, why_rx) = std::sync::mpsc::channel::<Result<()>>();
    let what = what.to_string();
    runtime.spawn(async move {
        let outcome = tokio::select! {
            _ = super::provision::wait_for_signal() => Err(Error::Interrupted),
            r = async {
                loop {
                    let looked = tokio::task::spawn_blocking(check.clone()).await
                        .map_err(|e| Error::internal("a wait check failed", e))??;
                    if looked.pending.is_empty() {
                        return Ok(());
                    }
                    if !looked.never.is_empty() {
                        return never(looked.never);
                    }
                    if Instant::now() >= deadline {
                        let hosts = looked.pending.iter().map(ToString::to_string).collect();
                        let what = what.clone();
                        return Err(Unfinished::TimedOut { after: timeout, what, hosts }.into());
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            } => r,
        };
        let _ = why_tx.send(outcome);
        let _ = stop_tx.send(true);
    });
    match &driven {
        Some(d) => {
            drive_live(
                d,
                Some(only),
                &options,
                Duration::from_millis(100),
                transitions(false, true),
                stop_rx,
                &runtime,
                None,
            )?;
        }
        None => {
            runtime.block_on(async {
                let _ = stop_rx.wait_for(|s| *s).await;
            });
        }
    }
    drop(driven);
    let outcome = why_rx.recv().unwrap_or(Err(Error::Interrupted));
    // A save left behind after the signal (it hangs) is not waited for.
    runtime.shutdown_background();
    outcome
}

pub fn wait(
    args: WaitArgs,
    input: crate::persist::InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    super::options::hosts_not_files("wait", &args.source, &args.hosts)?;
    let cond = super::wait_for::parse(&args.for_state)?;
    let selection = HostSelection::new(&args.hosts, args.selector.as_deref())?;
    let place = super::options::place(&args.source)?;
    crate::persist::requests::must_exist(&place)?;
    let keys = crate::persist::snapshot::select_keys(&place, &selection, input)?;
    wait_until(
        &place,
        &keys,
        cond,
        &args.for_state,
        "condition met",
        args.timeout,
        &args.drive,
        input,
        provisioners,
    )
}
