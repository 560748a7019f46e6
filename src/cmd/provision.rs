//! `bmhctl provision`, `bmhctl deprovision -f` and `bmhctl delete -f`: load the files, drive the
//! selected hosts with the runner, write status back, print the result.

use super::output;
use super::{ProvisionArgs, RunArgs, TeardownArgs, Verbosity, env_setting};
use crate::clock::{Clock, SystemClock, format_time};
use crate::error::{Error, Result};
use crate::objects::ObjectSource;
use crate::persist::HostSource;
use crate::persist::files::file_source::FileSource;
use crate::persist::files::inventory::{self, Inventory, LoadMode};
use crate::runner::{
    self, Goal, HostJob, HostResult, Progress, ProgressMode, RunnerConfig, Services,
};
use crate::selector::Selector;
use bmh_api::ProvisioningState as S;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Teardown {
    Deprovision,
    Delete,
}

pub fn provision(args: ProvisionArgs, verbosity: Verbosity) -> Result<()> {
    let provisioner = crate::provisioners::resolve(&args.run.provisioner)?;
    let inv = inventory::load_with(&args.paths, LoadMode::Write, &provisioner.load_options)?;
    inventory::check_secret_references(&inv)?;
    let selected = select(&inv, &args.hosts, args.run.selector.as_deref())?;
    // BMO's admission rules: an invalid host is refused before anything is written.
    crate::validate::check_hosts(&inv, &selected)?;
    let jobs = selected
        .into_iter()
        .map(|i| {
            let record = inv.hosts[i].record.clone();
            let goal = Goal::for_provision(&record);
            (i, HostJob { record, goal })
        })
        .collect();
    drive(inv, &args.paths, jobs, provisioner, &args.run, verbosity)
}

pub fn teardown(args: TeardownArgs, what: Teardown, verbosity: Verbosity) -> Result<()> {
    let provisioner = crate::provisioners::resolve(&args.run.provisioner)?;
    let mut inv = inventory::load_with(&args.paths, LoadMode::Write, &provisioner.load_options)?;
    inventory::check_secret_references(&inv)?;
    let selected = select(&inv, &args.hosts, args.run.selector.as_deref())?;
    let now = format_time(SystemClock.now());
    if what == Teardown::Delete {
        // The deletion mark is on disk before the first pass, so a delete that is killed
        // half-way goes on deleting (not provisioning again) when bmhctl runs next.
        for &i in &selected {
            let key = inv.hosts[i].key.clone();
            let mut book = inv.hosts[i].record.book.clone();
            book.deletion_requested.get_or_insert_with(|| now.clone());
            inv.file_of(i).stage_bookkeeping(&key, Some(&book))?;
        }
        inv.commit_all()?;
    }
    let mut jobs = Vec::new();
    for i in selected {
        let mut record = inv.hosts[i].record.clone();
        let goal = match what {
            Teardown::Deprovision => {
                // BMO deprovisions when the image goes from the spec. The user's spec is not
                // ours to edit, so the image is masked for this run only.
                record.host.spec.image = None;
                record.host.spec.custom_deploy = None;
                Goal::State(S::Available)
            }
            Teardown::Delete => {
                if record.book.deletion_requested.is_none() {
                    record.book.deletion_requested = Some(now.clone());
                }
                Goal::Deleted
            }
        };
        jobs.push((i, HostJob { record, goal }));
    }
    drive(inv, &args.paths, jobs, provisioner, &args.run, verbosity)
}

/// Indices of the hosts the user selected, in file order.
fn select(inv: &Inventory, names: &[String], selector: Option<&str>) -> Result<Vec<usize>> {
    let selector = selector
        .map(Selector::parse)
        .transpose()
        .map_err(Error::Usage)?;
    let mut unmatched: Vec<&String> = names.iter().collect();
    let mut picked = Vec::new();
    for (i, h) in inv.hosts.iter().enumerate() {
        let meta = &h.record.host.metadata;
        let full = format!("{}/{}", meta.namespace_or_default(), meta.name);
        let by_name = names.is_empty() || names.iter().any(|n| *n == meta.name || *n == full);
        unmatched.retain(|n| **n != meta.name && **n != full);
        let by_label = selector.as_ref().is_none_or(|s| s.matches(&meta.labels));
        if by_name && by_label {
            picked.push(i);
        }
    }
    if !unmatched.is_empty() {
        let list: Vec<&str> = unmatched.iter().map(|s| s.as_str()).collect();
        return Err(Error::Usage(format!(
            "no BareMetalHost named {} in the given files",
            list.join(", ")
        )));
    }
    if picked.is_empty() {
        return Err(Error::Usage(
            "no BareMetalHost matches the selection".into(),
        ));
    }
    Ok(picked)
}

pub(super) fn runner_config(run: &RunArgs) -> Result<RunnerConfig> {
    let mut config = RunnerConfig {
        timeout: run.timeout,
        time_scale: env_setting::<f64>("BMHCTL_TIME_SCALE")?.unwrap_or(1.0),
        seed: env_setting::<u64>("BMHCTL_SEED")?,
        ..RunnerConfig::default()
    };
    if !(config.time_scale >= 0.0 && config.time_scale.is_finite()) {
        return Err(Error::Usage(
            "BMHCTL_TIME_SCALE must be a number >= 0".into(),
        ));
    }
    if let Some(n) = run.concurrency {
        config.concurrency = n as usize;
    } else if let Some(n) = env_setting::<usize>("BMO_CONCURRENCY")?.filter(|n| *n > 0) {
        config.concurrency = n;
    }
    config.machine.max_provisioning_retries = i64::from(run.max_provisioning_retries);
    Ok(config)
}

fn drive(
    inv: Inventory,
    paths: &[std::path::PathBuf],
    jobs: Vec<(usize, HostJob)>,
    provisioner: crate::provisioners::Resolved,
    run: &RunArgs,
    verbosity: Verbosity,
) -> Result<()> {
    let (entries, jobs): (Vec<usize>, Vec<HostJob>) = jobs.into_iter().unzip();
    let objects: Arc<dyn ObjectSource> = Arc::new(inv.objects.clone());
    let keys: Vec<_> = entries.iter().map(|&e| inv.hosts[e].key.clone()).collect();
    let source = FileSource::new(inv, paths, &provisioner.load_options);
    for k in keys {
        source.add_host(k);
    }
    drive_with(jobs, Arc::new(source), objects, provisioner, run, verbosity)
}

/// `bmhctl reconcile` (hidden): drive the store's hosts to their goal with the runner, holding
/// the store's lease, as `watch` and `--wait` will.
pub fn reconcile(args: super::ReconcileArgs, verbosity: Verbosity) -> Result<()> {
    use crate::persist::store::{Store, store_source::StoreSource};
    let provisioner = crate::provisioners::resolve(&args.run.provisioner)?;
    let root = crate::persist::store::resolve_root(args.store.store.as_deref())?;
    let store = Store::open(root)?;
    let _lease = store.acquire_lease()?;
    let records = store.load_hosts()?;
    let selector = args
        .run
        .selector
        .as_deref()
        .map(Selector::parse)
        .transpose()
        .map_err(Error::Usage)?;
    let mut unmatched: Vec<&String> = args.hosts.iter().collect();
    let mut keys = Vec::new();
    let mut jobs = Vec::new();
    for record in records {
        let m = &record.host.metadata;
        let full = format!("{}/{}", m.namespace_or_default(), m.name);
        unmatched.retain(|n| **n != m.name && **n != full);
        let by_name =
            args.hosts.is_empty() || args.hosts.iter().any(|n| *n == m.name || *n == full);
        if !by_name || !selector.as_ref().is_none_or(|s| s.matches(&m.labels)) {
            continue;
        }
        keys.push(bmh_api::ObjectKey::new(m.namespace_or_default(), &m.name));
        let goal = if record.being_deleted() {
            Goal::Deleted
        } else {
            Goal::for_provision(&record)
        };
        jobs.push(HostJob { record, goal });
    }
    if !unmatched.is_empty() {
        let list: Vec<&str> = unmatched.iter().map(|s| s.as_str()).collect();
        return Err(Error::Usage(format!(
            "no BareMetalHost named {} in the store",
            list.join(", ")
        )));
    }
    if jobs.is_empty() {
        return Err(Error::Usage(
            "no BareMetalHost of the store matches the selection".into(),
        ));
    }
    let objects: Arc<dyn ObjectSource> = Arc::new(store.object_map()?);
    let source = StoreSource::new(store, None, Arc::new(SystemClock));
    for k in keys {
        source.add_host(k);
    }
    drive_with(
        jobs,
        Arc::new(source),
        objects,
        provisioner,
        &args.run,
        verbosity,
    )
}

fn drive_with(
    jobs: Vec<HostJob>,
    source: Arc<dyn HostSource>,
    objects: Arc<dyn ObjectSource>,
    provisioner: crate::provisioners::Resolved,
    run: &RunArgs,
    verbosity: Verbosity,
) -> Result<()> {
    let config = runner_config(run)?;
    let mode = if verbosity.quiet || run.output == super::ResultFormat::Json {
        ProgressMode::Quiet
    } else {
        ProgressMode::Auto
    };
    let progress = Progress::new(mode, verbosity.verbose > 0, jobs.len());
    // The plugin was created before the objects were read: it sees them from now on.
    provisioner.set_objects(objects.clone());
    let factory = provisioner.factory;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(config.concurrency + 4)
        .build()
        .map_err(|e| Error::Other(e.into()))?;
    let results = runtime.block_on(async {
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            wait_for_signal().await;
            let _ = stop_tx.send(true);
        });
        let services = Services {
            factory,
            objects,
            clock: Arc::new(SystemClock),
            source,
        };
        runner::run(jobs, services, config, progress, stop_rx).await
    })?;
    report(&results, run.output)
}

pub(super) async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

fn report(results: &[HostResult], format: super::ResultFormat) -> Result<()> {
    match format {
        super::ResultFormat::Table => println!("{}", output::result_table(results)),
        super::ResultFormat::Json => println!("{}", output::result_json(results)),
    }
    let failed = results.iter().filter(|r| !r.reached).count();
    if failed > 0 {
        return Err(Error::Unfinished(format!(
            "{failed} of {} hosts did not reach their goal",
            results.len()
        )));
    }
    Ok(())
}
