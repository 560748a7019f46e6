//! `bmhctl apply -f`: the files' objects merged into the store as `kubectl apply` merges.

use super::StoreArgs;
use super::applied::Applied;
use crate::error::Result;
use crate::objects::TypedKey;
use crate::persist::store::apply_merge::{
    merge_host, merge_object, stored_hardware, write_retrying,
};
use crate::persist::store::hosts::host_key;
use crate::persist::store::{Store, Written};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// YAML files, or directories of them, holding BareMetalHosts, their Secrets and companion
    /// objects.
    #[arg(
        short = 'f',
        long = "filename",
        required = true,
        value_name = "FILE|DIR"
    )]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Write nothing: show what would change in the store, as `bmhctl diff` does (exit 0).
    #[arg(long)]
    pub dry_run: bool,
}

pub fn apply(args: ApplyArgs, input: crate::persist::InputPolicy) -> Result<()> {
    let root = crate::persist::store::resolve_root(args.store.store.as_deref())?;
    if args.dry_run {
        return super::diff::show(&args.paths, &root, input).map(drop);
    }
    let existing = Store::open_existing(&root)?;
    let Applied { inv, objects } = super::applied::collect(&args.paths, existing.as_ref(), input)?;
    let store = Store::open(&root)?;
    // Every object is written even when a report fails: the first failure is returned at the end.
    let mut reported = Ok(());
    for (key, applied, _) in &objects {
        let written = write_retrying(&store, key, |stored| Ok(merge_object(applied, stored)))?;
        reported = reported.and(report(key, written));
    }
    for h in &inv.hosts {
        let key = host_key(&h.key);
        let hardware = stored_hardware(&store, &h.key)?;
        let written = write_retrying(&store, &key, |stored| {
            merge_host(&h.record.host, stored, hardware.as_ref())
        })?;
        reported = reported.and(report(&key, written));
    }
    reported
}

fn report(key: &TypedKey, written: Written) -> Result<()> {
    let what = match written {
        Written::Created => "created",
        Written::Updated => "configured",
        Written::Unchanged => "unchanged",
    };
    let kind = key.kind.to_ascii_lowercase();
    let resource = match key.api_version.rsplit_once('/') {
        Some((group, _)) => format!("{kind}.{group}"),
        None => kind,
    };
    let ns = if key.key.namespace == bmh_api::DEFAULT_NAMESPACE {
        String::new()
    } else {
        format!(" (namespace {})", key.key.namespace)
    };
    super::output::outln!("{resource}/{} {what}{ns}", key.key.name)
}
