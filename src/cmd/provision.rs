//! `bmhctl provision`, `bmhctl deprovision -f` and `bmhctl delete -f`: load the files, drive the
//! selected hosts with the runner, write status back, print the result.

use super::options::{DriveOptions, Environment};
use super::output::{self, RunKind};
use super::plan::Intent;
use super::progress::{Ledger, Progress};
use super::{ProvisionArgs, TeardownArgs, Verbosity};
use crate::clock::{Clock, SystemClock, format_time};
use crate::error::{Error, Result, Unfinished};
use crate::objects::ObjectSource;
use crate::persist::HostSource;
use crate::persist::InputPolicy;
use crate::persist::files::file_source::FileSource;
use crate::persist::files::inventory::{Inventory, LoadMode};
use crate::persist::requests::{self};
use crate::persist::to_drive;
use crate::record::HostRecord;
use crate::runner::{self, Goal, HostJob, HostResult, Services};
use crate::selection::HostSelection;
use bmh_api::ObjectKey;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `provision --dry-run`: the plan of the same hosts, from the same flags.
pub fn provision_plan(
    args: ProvisionArgs,
    input: InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    let selection = HostSelection::new(&args.hosts, args.run.selector.as_deref())?;
    let place = super::options::Place::Files([args.files, args.paths].concat());
    super::plan::dry_run(
        Intent::Provision,
        place,
        selection,
        &args.run,
        input,
        provisioners,
    )
}

pub fn provision(
    args: ProvisionArgs,
    verbosity: Verbosity,
    input: InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    let paths = [args.files, args.paths].concat();
    let options = DriveOptions::resolve(&args.run.drive, args.run.timeout, &Environment::read()?);
    let selection = HostSelection::new(&args.hosts, args.run.selector.as_deref())?;
    // The input's own errors (a missing file) come before the provisioner's (a missing plugin).
    super::options::missing_inputs(&options.provisioner, &paths)?;
    let provisioner = options.resolve_provisioner(input, provisioners)?;
    let (inv, selected) = to_drive::from_files(
        &paths,
        LoadMode::Write,
        &provisioner.load_options,
        &selection,
        true,
    )?;
    warn(&inv, &selected, verbosity);
    let run = Run {
        kind: RunKind::Provision,
        selection,
        options: &options,
        output: args.run.result_target(),
        verbosity,
    };
    drive(inv, selected, provisioner, run, |record| {
        Goal::for_provision(record)
    })
}

pub fn teardown(
    args: TeardownArgs,
    what: Intent,
    verbosity: Verbosity,
    input: InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    let options = DriveOptions::resolve(&args.run.drive, args.run.timeout, &Environment::read()?);
    let selection = HostSelection::new(&args.hosts, args.run.selector.as_deref())?;
    super::options::missing_inputs(&options.provisioner, &args.paths)?;
    let provisioner = options.resolve_provisioner(input, provisioners)?;
    // A host is taken down as it is: no admission checks.
    let (mut inv, selected) = to_drive::from_files(
        &args.paths,
        LoadMode::Write,
        &provisioner.load_options,
        &selection,
        false,
    )?;
    warn(&inv, &selected, verbosity);
    let now = format_time(SystemClock.now());
    if what == Intent::Delete {
        // The deletion mark is on disk before the first pass, so a delete that is killed
        // half-way goes on deleting (not provisioning again) when bmhctl runs next.
        requests::mark_deleted(&mut inv, &selected, &now)?;
    }
    let run = Run {
        kind: match what {
            Intent::Delete => RunKind::Delete,
            _ => RunKind::Deprovision,
        },
        selection,
        options: &options,
        output: args.run.result_target(),
        verbosity,
    };
    drive(inv, selected, provisioner, run, move |record| {
        super::plan::goal(what, record, &now)
    })
}

/// Says what `validate` would warn about the hosts to drive: they run, and may fail for it.
fn warn(inv: &Inventory, selected: &[usize], verbosity: Verbosity) {
    if verbosity.quiet {
        return;
    }
    for w in crate::persist::files::admission::warnings(inv, selected) {
        crate::eprintln_quiet!("warning: {w}");
    }
}

/// How a batch run on files goes: where, with what, and how it reports.
struct Run<'a> {
    kind: RunKind,
    /// Which hosts the command names: a host added to the files during the run joins it when
    /// this takes it.
    selection: HostSelection,
    options: &'a DriveOptions,
    output: super::ResultTarget,
    verbosity: Verbosity,
}

/// Drives the `selected` hosts of `inv`, each (and each read again after an edit, see
/// [`runner::TakeEdits`]) prepared and given its goal by `prepare`; prints the result.
fn drive(
    inv: Inventory,
    selected: Vec<usize>,
    provisioner: crate::provisioners::Resolved,
    run: Run,
    mut prepare: impl FnMut(&mut HostRecord) -> Goal + Send + 'static,
) -> Result<()> {
    let objects: Arc<dyn ObjectSource> = Arc::new(inv.objects.clone());
    let mut keys: BTreeMap<usize, ObjectKey> = selected
        .iter()
        .map(|&i| (i, inv.hosts[i].key.clone()))
        .collect();
    let (source, records) = FileSource::handing_over(inv, &provisioner.load_options);
    let mut jobs = Vec::with_capacity(keys.len());
    // In file order, as `selected` is; the records of the others are dropped as we go.
    for (i, mut record) in records.into_iter().enumerate() {
        let Some(key) = keys.remove(&i) else {
            continue;
        };
        source.add_host(key);
        let goal = prepare(&mut record);
        jobs.push(HostJob { record, goal });
    }
    let selection = run.selection;
    let edits = runner::TakeEdits {
        poll: EDIT_POLL,
        selects: Box::new(move |record: &HostRecord| {
            let meta = &record.host.metadata;
            let candidate = crate::selection::Candidate {
                key: &meta.key(),
                labels: &meta.labels,
            };
            selection
                .select([candidate], "the given files")
                .is_ok_and(|picked| !picked.is_empty())
        }),
        prepare: Box::new(prepare),
    };
    drive_with(
        run.kind,
        jobs,
        Arc::new(source),
        objects,
        provisioner,
        run.options,
        run.output,
        run.verbosity,
        Some(edits),
    )
}

/// How often a run on files looks for edits of them (a few file stats each time).
const EDIT_POLL: std::time::Duration = std::time::Duration::from_millis(200);

/// `bmhctl reconcile` (hidden): drive the store's hosts to their goal with the runner, holding
/// the store's lease, as `watch` and `--wait` will.
pub fn reconcile(
    args: super::ReconcileArgs,
    verbosity: Verbosity,
    input: InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    use crate::persist::store::{Store, store_source::StoreSource};
    let options = DriveOptions::resolve(&args.run.drive, args.run.timeout, &Environment::read()?);
    let selection = HostSelection::new(&args.hosts, args.run.selector.as_deref())?;
    let provisioner = options.resolve_provisioner(input, provisioners)?;
    let root = crate::persist::store::resolve_root(args.store.store.as_deref())?;
    let store = Store::open(root)?;
    let _lease = store.acquire_lease()?;
    let records =
        crate::persist::snapshot::select_records(store.load_hosts()?, &selection, "the store")?;
    let source = StoreSource::new(store.clone(), None, Arc::new(SystemClock));
    let mut jobs = Vec::new();
    for mut record in records {
        source.add_host(crate::persist::snapshot::key_of(&record));
        let goal = super::plan::goal(Intent::Provision, &mut record, "");
        jobs.push(HostJob { record, goal });
    }
    let objects: Arc<dyn ObjectSource> = Arc::new(store.object_map()?);
    drive_with(
        RunKind::Reconcile,
        jobs,
        Arc::new(source),
        objects,
        provisioner,
        &options,
        args.run.result_target(),
        verbosity,
        None,
    )
}

#[allow(clippy::too_many_arguments)]
fn drive_with(
    kind: RunKind,
    jobs: Vec<HostJob>,
    source: Arc<dyn HostSource>,
    objects: Arc<dyn ObjectSource>,
    provisioner: crate::provisioners::Resolved,
    options: &DriveOptions,
    output: super::ResultTarget,
    verbosity: Verbosity,
    edits: Option<runner::TakeEdits>,
) -> Result<()> {
    let config = options.runner.clone();
    // Progress goes to stderr whatever `-o` prints on stdout.
    let mut progress = Progress::new(verbosity.progress_mode(), verbosity.verbose > 0, jobs.len());
    let ledger = progress.keep_ledger();
    // The timeline watches the same passes as the progress, after it.
    let timeline = (output.timeline.as_ref())
        .map(|_| crate::timeline::Recorder::new(super::command_line(), Arc::new(SystemClock)));
    let observer: Box<dyn runner::BatchObserver> = match &timeline {
        Some(recorder) => Box::new((progress, recorder.clone())),
        None => Box::new(progress),
    };
    // The plugin was created before the objects were read: it sees them from now on.
    provisioner.set_objects(objects.clone());
    let factory = provisioner.factory;
    super::reachable::wait_until_reachable(factory.as_ref(), options.ironic_wait, |m| {
        crate::eprintln_quiet!("bmhctl: {m}")
    })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(config.concurrency + 4)
        .build()
        .map_err(|e| Error::internal("cannot start the async runtime", e))?;
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
        runner::run(jobs, services, config, observer, stop_rx, edits).await
    });
    // A pass or save left behind by a signal (it hangs) is not waited for.
    runtime.shutdown_background();
    let timeline = timeline.as_ref();
    match results {
        Ok(results) => report(kind, Some(results), &ledger, timeline, &output),
        // Ctrl-C or SIGTERM: the same document, the hosts still driven marked in flight, so
        // that a pipeline learns where each host got to.
        Err(Error::Interrupted) => {
            report(kind, None, &ledger, timeline, &output)?;
            Err(Error::Interrupted)
        }
        // A run ended by a failed save has no result, but its timeline shows how it got there.
        Err(e) => {
            if let Err(te) = write_timeline(timeline, &output) {
                crate::eprintln_quiet!("{}", te.render());
            }
            Err(e)
        }
    }
}

/// Writes the run's timeline page where `target` says, if it says so.
fn write_timeline(
    recorder: Option<&crate::timeline::Recorder>,
    target: &super::ResultTarget,
) -> Result<()> {
    let (Some(recorder), Some(path)) = (recorder, &target.timeline) else {
        return Ok(());
    };
    crate::timeline::write(path, &recorder.timeline()).map_err(|e| Error::io(path, e))
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

/// Prints the result of a run, host by host: `results` when it ended, else (interrupted) what
/// the ledger saw. Each host's result is freed as it is printed.
fn report(
    kind: RunKind,
    results: Option<Vec<HostResult>>,
    ledger: &Ledger,
    timeline: Option<&crate::timeline::Recorder>,
    target: &super::ResultTarget,
) -> Result<()> {
    let interrupted = results.is_none();
    let hosts = output::Reports::of_run(results, ledger.take());
    let (failed, total) = (hosts.short_of_goal(), hosts.total());
    let now = chrono::Utc::now();
    let print = |hosts: output::Reports| {
        output::print_with(|out| {
            match target.format {
                super::ResultFormat::Table => output::write_result_table(out, hosts),
                super::ResultFormat::Json => {
                    output::write_result_json(out, kind, hosts, interrupted, now)
                }
            }
            .map_err(output::stdout_error)
        })
    };
    let written = match &target.file {
        None => print(hosts),
        Some(path) => {
            let kept: Vec<_> = hosts.collect();
            // The table for the log, then the document for the next step, whichever fails.
            let printed = print(output::Reports::listed(kept.clone()));
            crate::persist::atomic::write_atomic_with(path, None, |out| {
                let hosts = output::Reports::listed(kept);
                output::write_result_json(out, kind, hosts, interrupted, now)
            })
            .map_err(|e| Error::io(path, e))
            .and(printed)
        }
    };
    // The page is written whatever became of the result; the first error is the command's.
    match (written, write_timeline(timeline, target)) {
        (Err(e), Err(page)) => {
            crate::eprintln_quiet!("{}", page.render());
            return Err(e);
        }
        (written, page) => written.and(page)?,
    }
    if failed > 0 && !interrupted {
        return Err(Unfinished::Hosts { failed, total }.into());
    }
    Ok(())
}
