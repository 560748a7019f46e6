//! `bmhctl get [-f FILE|DIR]`: hosts and their status, as read from the files (`-f`) or from
//! the local store.

use super::options::Place;
use super::snapshot::Snapshot;
use super::{SourceArgs, output};
use crate::error::{Error, Result};
use crate::record::HostRecord;
use crate::selection::HostSelection;
use clap::{Args, ValueEnum};

#[derive(Debug, Args)]
pub struct GetArgs {
    #[command(flatten)]
    pub source: SourceArgs,
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
    let selection = HostSelection::new(&args.hosts, args.selector.as_deref())?;
    let place = Place::resolve(&args.source)?;
    let snapshot = Snapshot::read(&place)?;
    let all = snapshot.records();
    let records: Vec<&HostRecord> = snapshot
        .select(&selection, &place)?
        .into_iter()
        .map(|i| all[i])
        .collect();
    if records.is_empty()
        && matches!(place, Place::Store(_))
        && matches!(args.output, GetFormat::Table | GetFormat::Wide)
    {
        eprintln!("No BareMetalHosts found in the store.");
        return Ok(());
    }
    print(&records, args.output)
}

fn print(records: &[&HostRecord], format: GetFormat) -> Result<()> {
    match format {
        GetFormat::Table | GetFormat::Wide => {
            output::line(output::hosts_table(records, format == GetFormat::Wide))?;
        }
        GetFormat::Json => {
            let hosts: Vec<_> = records.iter().map(|r| &r.host).collect();
            let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": hosts});
            output::line(
                serde_json::to_string_pretty(&list)
                    .map_err(|e| Error::internal("cannot encode the hosts as JSON", e))?,
            )?;
        }
        GetFormat::Yaml => {
            let hosts: Vec<_> = records.iter().map(|r| &r.host).collect();
            let text = serde_saphyr::to_string_multiple(&hosts)
                .map_err(|e| Error::internal("cannot encode the hosts as YAML", e))?;
            output::write_stdout(&text)?;
        }
    }
    Ok(())
}
