//! `bmhctl get -f FILE|DIR`: hosts and their status, as read from the files.

use super::output;
use crate::error::{Error, Result};
use crate::files::inventory::{self, LoadMode};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct GetArgs {
    /// YAML files, or directories of them.
    #[arg(
        short = 'f',
        long = "filename",
        required = true,
        value_name = "FILE|DIR"
    )]
    pub paths: Vec<PathBuf>,
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
    let inv = inventory::load(&args.paths, LoadMode::ReadOnly)?;
    let selector = args
        .selector
        .as_deref()
        .map(crate::selector::Selector::parse)
        .transpose()
        .map_err(Error::Usage)?;
    let records: Vec<_> = inv
        .hosts
        .iter()
        .map(|h| &h.record)
        .filter(|r| {
            let m = &r.host.metadata;
            let full = format!("{}/{}", m.namespace_or_default(), m.name);
            (args.hosts.is_empty() || args.hosts.iter().any(|n| *n == m.name || *n == full))
                && selector.as_ref().is_none_or(|s| s.matches(&m.labels))
        })
        .collect();
    match args.output {
        GetFormat::Table | GetFormat::Wide => {
            println!(
                "{}",
                output::hosts_table(&records, args.output == GetFormat::Wide)
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
