//! The verbs that set what BMO reads from a host's annotations: `power on|off`, `reboot`,
//! `inspect`, `detach`, `attach`, `pause`, `resume` and `retry`.
//!
//! On the store, each verb changes the annotations of the stored hosts under each host's lock
//! (read, change, write: [`Store::update`]), so nothing another writer did meanwhile is lost. On
//! files (`-f`), it takes the files' locks (as `provision` does; refused while a `watch -f`
//! holds them) and writes the annotation into the host's document, every other byte kept. With
//! `--wait` it then waits for the outcome (driving the hosts in-process when no `watch` holds the
//! store's lease or the files' locks).

use super::options::Place;
use super::snapshot::select_keys;
use super::watch::{Condition, wait_until};
use super::{DeleteArgs, DriveArgs, SourceArgs, Verbosity};
use crate::clock::{Clock, SystemClock, format_time};
use crate::error::{Error, Result};
use crate::persist::RETRY_ANNOTATION;
use crate::persist::files::inventory::{self, LoadMode};
use crate::persist::store::{Store, Written};
use crate::record::HostRecord;
use crate::selection::HostSelection;
use bmh_api::annotations::{DETACHED, INSPECT, PAUSED, REBOOT_PREFIX};
use bmh_api::{OperationalStatus, ProvisioningState as S};
use clap::{Args, Subcommand};
use serde_json::Value;
use std::time::Duration;

/// The held reboot annotation `power off` sets (BMO keeps a host off while any
/// `reboot.metal3.io/<key>` annotation exists).
pub const POWER_OFF_ANNOTATION: &str = "reboot.metal3.io/bmhctl";

/// What every verb takes.
#[derive(Debug, Args)]
pub struct VerbArgs {
    /// The hosts (NAME or NAMESPACE/NAME).
    #[arg(value_name = "HOST", required_unless_present = "selector")]
    pub hosts: Vec<String>,
    /// The hosts whose labels match (kubectl syntax), with or instead of names.
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    #[command(flatten)]
    pub source: SourceArgs,
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
    /// Stop reconciling hosts: sets `baremetalhost.metal3.io/paused`.
    Pause(VerbArgs),
    /// Reconcile paused hosts again: removes `baremetalhost.metal3.io/paused`.
    Resume(VerbArgs),
    /// Retry hosts now instead of after their backoff wait (their error counts are kept).
    Retry(VerbArgs),
}

/// One annotation change.
enum Change {
    Set(&'static str, String),
    Remove(&'static str),
}

fn json_args(mode_hard: bool, force: bool) -> String {
    let mut m = serde_json::Map::new();
    m.insert(
        "mode".into(),
        Value::String(if mode_hard { "hard" } else { "soft" }.into()),
    );
    if force {
        m.insert("force".into(), Value::Bool(true));
    }
    Value::Object(m).to_string()
}

fn status_cond(f: fn(&HostRecord) -> bool) -> Condition {
    Box::new(move |r: Option<&HostRecord>| r.is_some_and(f))
}

pub fn run(
    cmd: VerbCommand,
    input: crate::persist::InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    let (verb, change, done, what, cond): (VerbArgs, Change, &str, &str, Condition) = match cmd {
        VerbCommand::Power(PowerCommand::On(verb)) => (
            verb,
            Change::Remove(POWER_OFF_ANNOTATION),
            "power on requested",
            "powered on",
            status_cond(|r| r.status().powered_on),
        ),
        VerbCommand::Power(PowerCommand::Off { hard, force, verb }) => (
            verb,
            Change::Set(POWER_OFF_ANNOTATION, json_args(hard, force)),
            "power off requested",
            "powered off",
            status_cond(|r| !r.status().powered_on),
        ),
        VerbCommand::Reboot { hard, force, verb } => (
            verb,
            Change::Set(
                REBOOT_PREFIX,
                if hard || force {
                    json_args(hard, force)
                } else {
                    String::new()
                },
            ),
            "reboot requested",
            "rebooted",
            status_cond(|r| {
                !r.host.metadata.annotations.contains_key(REBOOT_PREFIX) && r.status().powered_on
            }),
        ),
        VerbCommand::Inspect(verb) => (
            verb,
            Change::Set(INSPECT, String::new()),
            "inspection requested",
            "inspected",
            status_cond(|r| {
                !r.host.metadata.annotations.contains_key(INSPECT)
                    && r.status().provisioning.state != S::Inspecting
            }),
        ),
        VerbCommand::Detach { force, verb } => (
            verb,
            Change::Set(
                DETACHED,
                if force {
                    r#"{"force":true}"#.into()
                } else {
                    String::new()
                },
            ),
            "detach requested",
            "detached",
            status_cond(|r| r.status().operational_status == OperationalStatus::Detached),
        ),
        VerbCommand::Attach(verb) => (
            verb,
            Change::Remove(DETACHED),
            "attach requested",
            "attached",
            status_cond(|r| r.status().operational_status != OperationalStatus::Detached),
        ),
        VerbCommand::Pause(verb) => (
            verb,
            Change::Set(PAUSED, String::new()),
            "paused",
            "paused",
            Box::new(|_: Option<&HostRecord>| true),
        ),
        VerbCommand::Resume(verb) => (
            verb,
            Change::Remove(PAUSED),
            "resumed",
            "resumed",
            Box::new(|_: Option<&HostRecord>| true),
        ),
        VerbCommand::Retry(verb) => (
            verb,
            Change::Set(RETRY_ANNOTATION, format_time(SystemClock.now())),
            "retry requested",
            "retried",
            Box::new(|r: Option<&HostRecord>| {
                r.is_none_or(|r| !r.host.metadata.annotations.contains_key(RETRY_ANNOTATION))
            }),
        ),
    };
    let selection = HostSelection::new(&verb.hosts, verb.selector.as_deref())?;
    let place = Place::resolve(&verb.source)?;
    let keys = match &place {
        Place::Store(root) => {
            let store = open_store(root)?;
            let keys = select_keys(&place, &selection, input)?;
            for key in &keys {
                let written = annotate(&store, key, &change)?;
                // The annotation is written whether or not the report is read.
                let _ = report(&key.name, done, written != Written::Unchanged);
                // A host whose companion objects or Secrets cannot be read is still annotated;
                // a `--wait` then says what is wrong with it.
                if let Ok(Some(rec)) = store.load_host(key) {
                    warn_if_no_effect(&rec, &change);
                }
            }
            keys
        }
        Place::Files(paths) => annotate_files(paths, &selection, &change, done, input)?,
    };
    if verb.wait {
        wait_until(
            &place,
            &keys,
            cond,
            what,
            verb.timeout,
            &verb.drive,
            input,
            provisioners,
        )?;
        for k in &keys {
            super::output::outln!("baremetalhost/{} {what}", k.name)?;
        }
    }
    Ok(())
}

fn report(name: &str, done: &str, changed: bool) -> Result<()> {
    let note = if changed { "" } else { " (unchanged)" };
    super::output::outln!("baremetalhost/{name} {done}{note}")
}

fn open_store(root: &std::path::Path) -> Result<Store> {
    Store::open_existing(root)?
        .ok_or_else(|| Error::Usage(format!("no store at {}", root.display())))
}

/// Sets or removes one annotation of a stored host, under its lock.
fn annotate(store: &Store, key: &bmh_api::ObjectKey, change: &Change) -> Result<Written> {
    match change {
        Change::Set(k, value) => store.set_host_annotation(key, k, Some(value)),
        Change::Remove(k) => store.set_host_annotation(key, k, None),
    }
}

/// Sets or removes one annotation of the selected hosts in their files, holding the files'
/// locks; returns the hosts.
fn annotate_files(
    paths: &[std::path::PathBuf],
    selection: &HostSelection,
    change: &Change,
    done: &str,
    input: crate::persist::InputPolicy,
) -> Result<Vec<bmh_api::ObjectKey>> {
    let mut inv = inventory::load_with(
        paths,
        LoadMode::Write,
        &crate::persist::LoadOptions::with_input(input),
    )
    .map_err(|e| match e {
        Error::Conflict(m) => Error::Conflict(format!(
            "{m}; while a `bmhctl watch -f` drives the files, set the annotation in the file \
             by hand: watch acts on edits"
        )),
        e => e,
    })?;
    if inv.hosts.is_empty() {
        return Err(Error::Usage(crate::persist::files::paths::no_hosts_in(
            paths,
        )));
    }
    let picked = selection.select_some(
        inv.hosts.iter().map(|h| crate::selection::Candidate {
            key: &h.key,
            labels: &h.record.host.metadata.labels,
        }),
        "the given files",
    )?;
    let keys: Vec<bmh_api::ObjectKey> = picked.iter().map(|&i| inv.hosts[i].key.clone()).collect();
    for (&i, key) in picked.iter().zip(&keys) {
        let doc = inv.hosts[i].doc;
        let (k, value) = match change {
            Change::Set(k, v) => (*k, Some(v.as_str())),
            Change::Remove(k) => (*k, None),
        };
        let changed = inv.file_of(i).write_annotation(doc, k, value)?;
        // The annotation is written whether or not the report is read.
        let _ = report(&key.name, done, changed);
        let rec = &mut inv.hosts[i].record;
        match value {
            Some(v) => {
                rec.host
                    .metadata
                    .annotations
                    .insert(k.to_string(), v.to_string());
            }
            None => {
                rec.host.metadata.annotations.remove(k);
            }
        }
        warn_if_no_effect(rec, change);
    }
    Ok(keys)
}

/// Says when BMO will not act on the annotation as the user probably expects.
fn warn_if_no_effect(rec: &HostRecord, change: &Change) {
    let m = &rec.host.metadata;
    let state = &rec.status().provisioning.state;
    let name = &m.name;
    match change {
        Change::Remove(POWER_OFF_ANNOTATION) => {
            if !rec.host.spec.online {
                crate::eprintln_quiet!(
                    "warning: {name} has spec.online: false and stays powered off"
                );
            }
            let others: Vec<&String> = m
                .annotations
                .keys()
                .filter(|k| bmh_api::annotations::is_reboot_annotation(k))
                .collect();
            if !others.is_empty() {
                crate::eprintln_quiet!(
                    "warning: {name} stays powered off while it has {}",
                    others
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
        }
        Change::Set(k, v)
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
        Change::Set(INSPECT, _) if *state != S::Available => {
            crate::eprintln_quiet!(
                "warning: {name} is {:?}: BMO inspects again only an available host; the \
                 request waits until then",
                state.as_str()
            );
        }
        _ => {}
    }
}

/// `bmhctl delete`: on files (`-f`), BMO's delete path driven to its end in-process (as
/// `provision` drives hosts, with its progress and result), or with `--no-wait` only the deletion
/// mark recorded; on the store, see [`delete_from_store`].
pub fn delete(
    args: DeleteArgs,
    verbosity: Verbosity,
    input: crate::persist::InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    let selection = HostSelection::new(&args.hosts, args.run.selector.as_deref())?;
    match Place::resolve(&args.source)? {
        Place::Store(_)
            if args.dry_run && selection.names_none() && args.run.selector.is_none() =>
        {
            Err(Error::Usage(
                "delete: name the hosts to delete from the store, or give -f FILE to act on \
                 files"
                    .into(),
            ))
        }
        place if args.dry_run => super::plan::dry_run(
            super::plan::Intent::Delete,
            place,
            selection,
            &args.run.drive,
            args.run.output,
            input,
            provisioners,
        ),
        Place::Files(paths) if args.no_wait => {
            super::provision::mark_for_deletion(&paths, &selection, input)
        }
        Place::Files(paths) => super::provision::teardown(
            super::TeardownArgs {
                paths,
                run: args.run,
                hosts: args.hosts,
                dry_run: false,
            },
            super::provision::Teardown::Delete,
            verbosity,
            input,
            provisioners,
        ),
        place @ Place::Store(_) => {
            if selection.names_none() && args.run.selector.is_none() {
                return Err(Error::Usage(
                    "delete: name the hosts to delete from the store, or give -f FILE to act \
                     on files"
                        .into(),
                ));
            }
            delete_from_store(
                &place,
                &selection,
                !args.no_wait,
                args.run.timeout,
                &args.run.drive,
                input,
                provisioners,
            )
        }
    }
}

/// `bmhctl delete HOST...` on the store: marks each host for deletion (its
/// `metadata.deletionTimestamp`, as the API server does) and, unless `wait` is false, waits until
/// BMO's delete path has finished and the host is gone from the store, driving it in-process when
/// no `watch` runs.
fn delete_from_store(
    place: &Place,
    selection: &HostSelection,
    wait: bool,
    timeout: Duration,
    drive: &DriveArgs,
    input: crate::persist::InputPolicy,
    provisioners: &crate::provisioners::Settings,
) -> Result<()> {
    let Place::Store(root) = place else {
        unreachable!("delete_from_store is for the store")
    };
    let store = open_store(root)?;
    let keys = select_keys(place, selection, input)?;
    let now = format_time(SystemClock.now());
    for key in &keys {
        let written = store.request_host_deletion(key, &now)?;
        let note = if written == Written::Unchanged {
            " (already being deleted)"
        } else {
            ""
        };
        super::output::outln!("baremetalhost/{} deletion requested{note}", key.name)?;
    }
    if wait {
        wait_until(
            place,
            &keys,
            Box::new(|r: Option<&HostRecord>| r.is_none()),
            "deleted",
            timeout,
            drive,
            input,
            provisioners,
        )?;
        for k in &keys {
            super::output::outln!("baremetalhost/{} deleted", k.name)?;
        }
    }
    Ok(())
}
