//! The verbs that set the annotations BMO reads (`power`, `reboot`, `inspect`, ...).

use super::options::Place;
use super::wait_for::{Condition, status_cond};
use super::watch::wait_until;
use super::{DeleteArgs, DeprovisionArgs, DriveArgs, SourceArgs, Verbosity};
use crate::clock::{Clock, SystemClock, format_time};
use crate::error::{Error, Result};
use crate::persist::RETRY_ANNOTATION;
use crate::persist::requests;
use crate::record::HostRecord;
use crate::runner::Goal;
use crate::selection::HostSelection;
use bmh_api::annotations::{DETACHED, INSPECT, PAUSED, REBOOT_PREFIX};
use bmh_api::{OperationalStatus, ProvisioningState as S};
use clap::{Args, Subcommand};
use std::time::Duration;

/// The held reboot annotation `power off` sets.
pub const POWER_OFF_ANNOTATION: &str = "reboot.metal3.io/bmhctl";

/// The hosts a verb acts on.
#[derive(Debug, Args)]
pub struct VerbTarget {
    /// The hosts (NAME, NAMESPACE/NAME or TYPE/NAME, after an optional type such as `bmh`).
    #[arg(value_name = "HOST", required_unless_present = "selector")]
    pub hosts: Vec<String>,
    /// The hosts whose labels match (kubectl syntax), with or instead of names.
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// What a verb whose outcome comes later (BMO acts on its annotation) takes.
#[derive(Debug, Args)]
pub struct VerbArgs {
    #[command(flatten)]
    pub target: VerbTarget,
    #[command(flatten)]
    pub waiting: VerbWait,
}

/// `--wait` and what it needs.
#[derive(Debug, Args)]
pub struct VerbWait {
    /// Wait for the outcome (driving the hosts in-process when no `bmhctl watch` runs).
    #[arg(long)]
    pub wait: bool,
    /// With --wait: give up after this long (exit 1).
    #[arg(long, default_value = "10m", value_parser = super::parse_duration, value_name = "DURATION",
          allow_hyphen_values = true)]
    pub timeout: Duration,
    #[command(flatten)]
    pub drive: DriveArgs,
}

#[derive(Debug, Subcommand)]
pub enum PowerCommand {
    /// Let the hosts be powered on again: removes bmhctl's `reboot.metal3.io/bmhctl`
    /// annotation (a host with `online: false` stays off).
    On(VerbArgs),
    /// Keep the hosts powered off: sets the held reboot annotation `reboot.metal3.io/bmhctl`.
    Off {
        /// Power off hard, without a graceful shutdown first (`{"mode":"hard"}`).
        #[arg(long)]
        hard: bool,
        /// Also act on hosts that are not provisioned (`{"force":true}`; BMO ignores the
        /// annotation in `available` otherwise, and a forced one interrupts inspection or
        /// provisioning).
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        verb: VerbArgs,
    },
}

/// The verbs as subcommands of `bmhctl` (flattened into its commands).
#[derive(Debug, Subcommand)]
pub enum VerbCommand {
    /// Power hosts off or let them power on again (BMO's held reboot annotation).
    #[command(subcommand)]
    Power(PowerCommand),
    /// Reboot hosts once: sets BMO's one-shot `reboot.metal3.io` annotation.
    Reboot {
        /// Power off hard, without a graceful shutdown first.
        #[arg(long)]
        hard: bool,
        /// Also act on hosts that are not provisioned (see `power off --force`).
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        verb: VerbArgs,
    },
    /// Inspect hosts again: sets `inspect.metal3.io` (BMO acts on it in `available`).
    Inspect(VerbArgs),
    /// Detach hosts from the provisioner: sets `baremetalhost.metal3.io/detached`.
    Detach {
        /// Detach even while an operation is in progress (`{"force":true}`).
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        verb: VerbArgs,
    },
    /// Attach detached hosts again: removes `baremetalhost.metal3.io/detached`.
    Attach(VerbArgs),
    /// Stop reconciling hosts: sets `baremetalhost.metal3.io/paused` (done once written:
    /// nothing to wait for).
    Pause(VerbTarget),
    /// Reconcile paused hosts again: removes `baremetalhost.metal3.io/paused` (done once
    /// written).
    Resume(VerbTarget),
    /// Retry hosts now instead of after their backoff wait (their error counts are kept).
    Retry(VerbArgs),
}

/// An annotation to set to a value, or to remove (`None`).
type Change = (&'static str, Option<String>);

fn json_args(mode_hard: bool, force: bool) -> String {
    let mut args = serde_json::json!({"mode": if mode_hard { "hard" } else { "soft" }});
    if force {
        args["force"] = true.into();
    }
    args.to_string()
}

/// What `--wait` waits for, and says once seen.
type Outcome = (VerbWait, &'static str, Condition);

/// A verb's hosts, its change, what is said once written, and its outcome (none for a verb
/// done once written).
type Request = (VerbTarget, Change, &'static str, Option<Outcome>);

pub fn run(
    cmd: VerbCommand,
    input: crate::persist::InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    let name = verb_name(&cmd);
    let (target, change, done, outcome) = request_of(cmd);
    super::options::hosts_not_files(name, &target.source, &target.hosts)?;
    let selection = HostSelection::new(&target.hosts, target.selector.as_deref())?;
    // `pause bmh`: a type alone names no host, and a verb acts on named or selected hosts.
    if selection.names_none() && target.selector.is_none() {
        return Err(Error::Usage(
            "name the hosts (NAME, TYPE/NAME, or a type then names) or select them with -l".into(),
        ));
    }
    let place = super::options::place(&target.source)?;
    let keys = requests::annotate(
        &place,
        &selection,
        change.0,
        change.1.as_deref(),
        input,
        |key, changed, now| {
            // The annotation is written whether or not the report is read.
            let _ = report(&key.name, done, changed);
            // A host that cannot be read is still annotated; a `--wait` then says what is wrong.
            if let Some(rec) = now {
                warn_if_no_effect(rec, &change);
            }
        },
    )?;
    let Some((waiting, what, cond)) = outcome.filter(|(w, _, _)| w.wait) else {
        return Ok(());
    };
    wait_until(
        &place,
        &keys,
        cond,
        what,
        what,
        waiting.timeout,
        &waiting.drive,
        input,
        provisioners,
    )
}

/// The verb's words on the command line (`power off`), for messages.
fn verb_name(cmd: &VerbCommand) -> &'static str {
    match cmd {
        VerbCommand::Power(PowerCommand::On(_)) => "power on",
        VerbCommand::Power(PowerCommand::Off { .. }) => "power off",
        VerbCommand::Reboot { .. } => "reboot",
        VerbCommand::Inspect(_) => "inspect",
        VerbCommand::Detach { .. } => "detach",
        VerbCommand::Attach(_) => "attach",
        VerbCommand::Pause(_) => "pause",
        VerbCommand::Resume(_) => "resume",
        VerbCommand::Retry(_) => "retry",
    }
}

fn request_of(cmd: VerbCommand) -> Request {
    let later = |verb: VerbArgs, change: Change, done, what, cond: Condition| -> Request {
        (verb.target, change, done, Some((verb.waiting, what, cond)))
    };
    match cmd {
        VerbCommand::Power(PowerCommand::On(verb)) => later(
            verb,
            (POWER_OFF_ANNOTATION, None),
            "power on requested",
            "powered on",
            status_cond(|r| r.status().powered_on),
        ),
        VerbCommand::Power(PowerCommand::Off { hard, force, verb }) => later(
            verb,
            (POWER_OFF_ANNOTATION, Some(json_args(hard, force))),
            "power off requested",
            "powered off",
            status_cond(|r| !r.status().powered_on),
        ),
        VerbCommand::Reboot { hard, force, verb } => {
            let args = (hard || force).then(|| json_args(hard, force));
            later(
                verb,
                (REBOOT_PREFIX, Some(args.unwrap_or_default())),
                "reboot requested",
                "rebooted",
                status_cond(|r| {
                    !r.host.metadata.annotations.contains_key(REBOOT_PREFIX)
                        && r.status().powered_on
                }),
            )
        }
        VerbCommand::Inspect(verb) => later(
            verb,
            (INSPECT, Some(String::new())),
            "inspection requested",
            "inspected",
            status_cond(|r| {
                !r.host.metadata.annotations.contains_key(INSPECT)
                    && r.status().provisioning.state != S::Inspecting
            }),
        ),
        VerbCommand::Detach { force, verb } => {
            let args = if force { r#"{"force":true}"# } else { "" };
            later(
                verb,
                (DETACHED, Some(args.into())),
                "detach requested",
                "detached",
                status_cond(|r| r.status().operational_status == OperationalStatus::Detached),
            )
        }
        VerbCommand::Attach(verb) => later(
            verb,
            (DETACHED, None),
            "attach requested",
            "attached",
            status_cond(|r| r.status().operational_status != OperationalStatus::Detached),
        ),
        // The annotation is the whole of it: the next pass only reads it.
        VerbCommand::Pause(target) => (target, (PAUSED, Some(String::new())), "paused", None),
        VerbCommand::Resume(target) => (target, (PAUSED, None), "resumed", None),
        VerbCommand::Retry(verb) => later(
            verb,
            (RETRY_ANNOTATION, Some(format_time(SystemClock.now()))),
            "retry requested",
            "retried",
            Condition::new(|r: Option<&HostRecord>| {
                r.is_none_or(|r| !r.host.metadata.annotations.contains_key(RETRY_ANNOTATION))
            }),
        ),
    }
}

fn report(name: &str, done: &str, changed: bool) -> Result<()> {
    let note = if changed { "" } else { " (unchanged)" };
    super::output::outln!("{} {done}{note}", crate::resource_args::host_resource(name))
}

/// Says when BMO will not act on the annotation as the user probably expects.
fn warn_if_no_effect(rec: &HostRecord, change: &Change) {
    let m = &rec.host.metadata;
    let state = &rec.status().provisioning.state;
    let name = &m.name;
    match change {
        (POWER_OFF_ANNOTATION, None) => {
            if !rec.host.spec.online {
                crate::eprintln_quiet!(
                    "warning: {name} has spec.online: false and stays powered off"
                );
            }
            let others: Vec<&str> = m
                .annotations
                .keys()
                .map(String::as_str)
                .filter(|k| bmh_api::annotations::is_reboot_annotation(k))
                .collect();
            if !others.is_empty() {
                let others = others.join(", ");
                crate::eprintln_quiet!("warning: {name} stays powered off while it has {others}");
            }
        }
        (k, Some(v))
            if (*k == POWER_OFF_ANNOTATION || *k == REBOOT_PREFIX)
                && !v.contains("\"force\":true")
                && !matches!(state, S::Provisioned | S::ExternallyProvisioned) =>
        {
            crate::eprintln_quiet!(
                "warning: {name} is {:?}: BMO acts on a reboot annotation without \
                 \"force\" only once the host is provisioned (see --force)",
                state.as_str()
            );
        }
        (INSPECT, Some(_)) if *state != S::Available => {
            crate::eprintln_quiet!(
                "warning: {name} is {:?}: BMO inspects again only an available host; the \
                 request waits until then",
                state.as_str()
            );
        }
        _ => {}
    }
}

/// `bmhctl delete`: on files, BMO's delete path driven in-process; on the store, or beside a
/// `watch -f` that drives the files, marked for it to drive.
pub fn delete(
    args: DeleteArgs,
    verbosity: Verbosity,
    input: crate::persist::InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    super::options::hosts_not_files("delete", &args.source, &args.hosts)?;
    let selection = HostSelection::new(&args.hosts, args.run.selector.as_deref())?;
    let place = super::options::place(&args.source)?;
    if matches!(place, Place::Store(_)) && selection.names_none() && args.run.selector.is_none() {
        return Err(Error::Usage(
            "delete: name the hosts to delete from the store, or give -f FILE to act on files"
                .into(),
        ));
    }
    if args.dry_run {
        let intent = super::plan::Intent::Delete;
        return super::plan::dry_run(intent, place, selection, &args.run, input, provisioners);
    }
    match place {
        Place::Files(paths) if !args.no_wait && !driven_elsewhere(&paths)? => {
            super::provision::teardown(
                super::TeardownArgs {
                    paths,
                    run: args.run,
                    hosts: args.hosts,
                },
                super::plan::Intent::Delete,
                verbosity,
                input,
                provisioners,
            )
        }
        place => {
            let keys = request_deletion(&place, &selection, input)?;
            if args.no_wait {
                return Ok(());
            }
            let r = &args.run;
            let gone = super::wait_for::parse("deleted")?;
            let (timeout, drive) = (r.timeout, &r.drive);
            wait_until(
                &place,
                &keys,
                gone,
                "deleted",
                "deleted",
                timeout,
                drive,
                input,
                provisioners,
            )
        }
    }
}

/// `bmhctl deprovision`: on files, BMO's deprovision path driven in-process; on the store, or
/// beside a `watch -f` that drives the files, the image removed from the spec for it to act on.
pub fn deprovision(
    args: DeprovisionArgs,
    verbosity: Verbosity,
    input: crate::persist::InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    super::options::hosts_not_files("deprovision", &args.source, &args.hosts)?;
    let selection = HostSelection::new(&args.hosts, args.run.selector.as_deref())?;
    let place = super::options::place(&args.source)?;
    if matches!(place, Place::Store(_)) && selection.names_none() && args.run.selector.is_none() {
        return Err(Error::Usage(
            "deprovision: name the hosts to deprovision in the store, or give -f FILE to act on \
             files"
                .into(),
        ));
    }
    let intent = super::plan::Intent::Deprovision;
    if args.dry_run {
        return super::plan::dry_run(intent, place, selection, &args.run, input, provisioners);
    }
    match place {
        Place::Files(paths) if !driven_elsewhere(&paths)? => {
            let args = super::TeardownArgs {
                paths,
                run: args.run,
                hosts: args.hosts,
            };
            super::provision::teardown(args, intent, verbosity, input, provisioners)
        }
        place => {
            let keys = requests::request_deprovision(&place, &selection, input, |key, changed| {
                report(&key.name, "deprovisioning requested", changed)
            })?;
            let available = status_cond(|r| {
                r.host.spec.image.is_none()
                    && r.host.spec.custom_deploy.is_none()
                    && Goal::State(S::Available).reached_by(&r.status().provisioning.state)
            });
            let r = &args.run;
            let (timeout, drive) = (r.timeout, &r.drive);
            let what = "deprovisioned";
            wait_until(
                &place,
                &keys,
                available,
                what,
                what,
                timeout,
                drive,
                input,
                provisioners,
            )
        }
    }
}

/// Whether another bmhctl (a `watch -f`) holds the lock of one of these files.
fn driven_elsewhere(paths: &[std::path::PathBuf]) -> Result<bool> {
    Ok(crate::persist::files::beside::held_by(paths)?.is_some())
}

fn request_deletion(
    place: &Place,
    selection: &HostSelection,
    input: crate::persist::InputPolicy,
) -> Result<Vec<bmh_api::ObjectKey>> {
    let now = format_time(SystemClock.now());
    requests::request_deletion(place, selection, &now, input, |key, already| {
        let note = if already {
            " (already being deleted)"
        } else {
            ""
        };
        let name = crate::resource_args::host_resource(&key.name);
        super::output::outln!("{name} deletion requested{note}")
    })
}
