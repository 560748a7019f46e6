//! `bmhctl get [-f FILE|DIR]`: hosts and their status, as read from the files (`-f`) or from
//! the local store.

use super::{StoreArgs, output};
use crate::error::{Error, Result};
use crate::persist::files::inventory::{self, LoadMode};
use crate::record::HostRecord;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct GetArgs {
    /// YAML files, or directories of them; without, the hosts of the local store.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "FILE|DIR",
        conflicts_with = "store"
    )]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
    #[arg(short, long, value_enum, default_value_t = GetFormat::Table)]
    pub output: GetFormat,
    /// Only hosts whose labels match (kubectl syntax).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// Only these hosts (NAME or NAMESPACE/NAME).
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GetFormat {
    Table,
    Wide,
    Yaml,
    Json,
}

pub fn get(args: GetArgs) -> Result<()> {
    let selector = args
        .selector
        .as_deref()
        .map(crate::selector::Selector::parse)
        .transpose()
        .map_err(Error::Usage)?;
    let keep = |r: &HostRecord| {
        let m = &r.host.metadata;
        let full = format!("{}/{}", m.namespace_or_default(), m.name);
        (args.hosts.is_empty() || args.hosts.iter().any(|n| *n == m.name || *n == full))
            && selector.as_ref().is_none_or(|s| s.matches(&m.labels))
    };
    if args.paths.is_empty() {
        let stored = store_hosts(&args.store)?;
        let missing: Vec<&str> = args
            .hosts
            .iter()
            .filter(|n| !stored.iter().any(|r| names(r, n)))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(Error::Other(anyhow::anyhow!(
                "no BareMetalHost named {} in the store",
                missing.join(", ")
            )));
        }
        let records: Vec<&HostRecord> = stored.iter().filter(|r| keep(r)).collect();
        if records.is_empty() && matches!(args.output, GetFormat::Table | GetFormat::Wide) {
            eprintln!("No BareMetalHosts found in the store.");
            return Ok(());
        }
        return print(&records, args.output);
    }
    let inv = inventory::load(&args.paths, LoadMode::ReadOnly)?;
    let records: Vec<_> = inv
        .hosts
        .iter()
        .map(|h| &h.record)
        .filter(|r| keep(r))
        .collect();
    print(&records, args.output)
}

/// Whether `name` (NAME or NAMESPACE/NAME) names the host.
pub(super) fn names(r: &HostRecord, name: &str) -> bool {
    let m = &r.host.metadata;
    name == m.name || name == format!("{}/{}", m.namespace_or_default(), m.name)
}

/// The hosts of the store `--store` names (none when it does not exist yet).
pub(super) fn store_hosts(args: &StoreArgs) -> Result<Vec<HostRecord>> {
    let root = crate::persist::store::resolve_root(args.store.as_deref())?;
    match crate::persist::store::Store::open_existing(root) {
        Some(store) => store.load_hosts(),
        None => Ok(Vec::new()),
    }
}

fn print(records: &[&HostRecord], format: GetFormat) -> Result<()> {
    match format {
        GetFormat::Table | GetFormat::Wide => {
            println!(
                "{}",
                output::hosts_table(records, format == GetFormat::Wide)
            );
        }
        GetFormat::Json => {
            let hosts: Vec<_> = records.iter().map(|r| &r.host).collect();
            let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": hosts});
            println!(
                "{}",
                serde_json::to_string_pretty(&list).map_err(|e| Error::Other(e.into()))?
            );
        }
        GetFormat::Yaml => {
            let hosts: Vec<_> = records.iter().map(|r| &r.host).collect();
            let text = serde_saphyr::to_string_multiple(&hosts)
                .map_err(|e| Error::Other(anyhow::anyhow!("{e}")))?;
            print!("{text}");
        }
    }
    Ok(())
}
