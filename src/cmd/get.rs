//! `bmhctl get [-f FILE|DIR]`: hosts and their status, as read from the files (`-f`) or from
//! the local store, printed as `kubectl get` prints BareMetalHosts.
//!
//! Namespaces follow kubectl: on the store, the `default` namespace unless `-n NAMESPACE` or
//! `-A` says otherwise; with `-f`, every host of the files (as `kubectl get -f`). Hosts named
//! on the command line are found as every command finds them (see [`crate::selection`]).

use super::options::Place;
use super::snapshot::Snapshot;
use super::{SourceArgs, output};
use crate::error::{Error, Result};
use crate::record::HostRecord;
use crate::selection::HostSelection;
use clap::{Args, ValueEnum};
use serde_json::Value;

#[derive(Debug, Args)]
pub struct GetArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    #[arg(short, long, value_enum, default_value_t = GetFormat::Table)]
    pub output: GetFormat,
    /// Only hosts whose labels match (kubectl syntax).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    #[command(flatten)]
    pub namespaces: NamespaceArgs,
    /// Print the table without its header line.
    #[arg(long)]
    pub no_headers: bool,
    /// Add a LABELS column to the table.
    #[arg(long)]
    pub show_labels: bool,
    /// Only these hosts (NAME or NAMESPACE/NAME).
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,
}

/// kubectl's `-n` and `-A`.
#[derive(Debug, Args, Clone)]
pub struct NamespaceArgs {
    /// Only the hosts of this namespace [default on the store: default].
    #[arg(short = 'n', long = "namespace", value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// The hosts of every namespace, with a NAMESPACE column.
    #[arg(short = 'A', long = "all-namespaces", conflicts_with = "namespace")]
    pub all_namespaces: bool,
}

impl NamespaceArgs {
    /// `selection` narrowed as kubectl would: to `-n`'s namespace; on the store without `-n`,
    /// `-A` or a host named, to `default`.
    pub fn narrow(&self, selection: HostSelection, place: &Place, named: bool) -> HostSelection {
        match &self.namespace {
            Some(ns) => selection.in_namespace(ns),
            None if self.all_namespaces || named || matches!(place, Place::Files(_)) => selection,
            None => selection.in_namespace(bmh_api::DEFAULT_NAMESPACE),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GetFormat {
    Table,
    Wide,
    Yaml,
    Json,
    /// `baremetalhost.metal3.io/NAME`, one a line.
    Name,
}

pub fn get(args: GetArgs) -> Result<()> {
    if let Some((first, names)) = args.hosts.split_first()
        && super::bmc_event_subscriptions::is_resource(first)
    {
        return super::bmc_event_subscriptions::get(&args, names);
    }
    let place = Place::resolve(&args.source)?;
    let selection = args.namespaces.narrow(
        HostSelection::new(&args.hosts, args.selector.as_deref())?,
        &place,
        !args.hosts.is_empty(),
    );
    let snapshot = Snapshot::read(&place)?;
    let all = snapshot.records();
    let records: Vec<&HostRecord> = snapshot
        .select(&selection, &place)?
        .into_iter()
        .map(|i| all[i])
        .collect();
    if records.is_empty() && matches!(args.output, GetFormat::Table | GetFormat::Wide) {
        // kubectl's words, on stderr: a script reading stdout sees no hosts.
        match (&place, &args.namespaces.namespace) {
            (Place::Files(_), _) => {}
            (_, Some(ns)) => crate::eprintln_quiet!("No BareMetalHosts found in namespace {ns}."),
            _ if args.namespaces.all_namespaces => {
                crate::eprintln_quiet!("No BareMetalHosts found in the store.")
            }
            _ => crate::eprintln_quiet!("No BareMetalHosts found in namespace default."),
        }
        return Ok(());
    }
    match args.output {
        GetFormat::Table | GetFormat::Wide => output::line(output::hosts_table(
            &records,
            &output::TableOptions {
                wide: args.output == GetFormat::Wide,
                namespace_column: args.namespaces.all_namespaces,
                qualified_names: args.namespaces.namespace.is_none(),
                headers: !args.no_headers,
                labels: args.show_labels,
                now: chrono::Utc::now(),
            },
        )),
        GetFormat::Name => {
            let text: String = records
                .iter()
                .map(|r| format!("baremetalhost.metal3.io/{}\n", r.host.metadata.name))
                .collect();
            output::write_stdout(&text)
        }
        // kubectl prints the object itself when one host is named, else a List.
        GetFormat::Json | GetFormat::Yaml => {
            let mut objects = records
                .iter()
                .map(|r| object(r))
                .collect::<Result<Vec<_>>>()?;
            let doc = if args.hosts.len() == 1 && objects.len() == 1 {
                objects.remove(0)
            } else {
                serde_json::json!({"apiVersion": "v1", "kind": "List", "items": objects})
            };
            if args.output == GetFormat::Json {
                output::line(
                    serde_json::to_string_pretty(&doc)
                        .map_err(|e| Error::internal("cannot encode the hosts as JSON", e))?,
                )
            } else {
                let text = serde_saphyr::to_string(&doc)
                    .map_err(|e| Error::internal("cannot encode the hosts as YAML", e))?;
                output::write_stdout(&text)
            }
        }
    }
}

/// The host as kubectl prints it: with the creation time bmhctl recorded for it.
fn object(rec: &HostRecord) -> Result<Value> {
    let mut v = serde_json::to_value(&rec.host)
        .map_err(|e| Error::internal("cannot encode a host as JSON", e))?;
    if let (Some(t), Some(meta)) = (
        &rec.book.creation_timestamp,
        v.get_mut("metadata").and_then(Value::as_object_mut),
    ) {
        meta.insert("creationTimestamp".into(), Value::String(t.clone()));
    }
    Ok(v)
}
