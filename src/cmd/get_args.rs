//! The arguments of `bmhctl get`, shared with its other kinds and with `describe`.

use super::SourceArgs;
use super::options::Place;
use crate::selection::HostSelection;
use clap::Args;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct GetArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// table, wide, yaml, json, name, jsonpath=TEMPLATE (kubectl's: `{.items[*].metadata.name}`,
    /// `{range .items[*]}{.metadata.name}{"\n"}{end}`) or custom-columns=HEADER:PATH,...
    #[arg(short, long, default_value = "table", value_parser = GetFormat::parse,
          value_name = "FORMAT")]
    pub output: GetFormat,
    /// Sort the objects by the value at this JSONPath (kubectl's: `.metadata.name`,
    /// `{.metadata.creationTimestamp}`), as they are printed with -o json.
    #[arg(long, value_name = "JSONPATH", value_parser = super::jsonpath::Path::parse)]
    pub sort_by: Option<super::jsonpath::Path>,
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
    /// After the hosts, print each change of them as it happens, until SIGINT or SIGTERM:
    /// a table row, or with `-o json` one watch event a line
    /// (`{"type":"ADDED|MODIFIED|DELETED","object":{...}}`).
    #[arg(short = 'w', long)]
    pub watch: bool,
    /// How often `-w` reads the hosts again.
    #[arg(long, default_value = "250ms", value_parser = super::parse_duration,
          value_name = "DURATION", requires = "watch", allow_hyphen_values = true)]
    pub poll_interval: Duration,
    /// Only these hosts (NAME, NAMESPACE/NAME, TYPE/NAME), after an optional resource type
    /// (`bmh`, `baremetalhosts.metal3.io`, ...). `dataimages [NAME...]` and
    /// `bmceventsubscriptions [NAME...]` (`bes`) list those kinds instead.
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
    /// The namespace a listing keeps to, as kubectl's.
    pub fn listed(&self, place: &Place) -> Option<String> {
        match &self.namespace {
            Some(ns) => Some(ns.clone()),
            None if self.all_namespaces || !place.one_namespace_by_default() => None,
            None => Some(bmh_api::DEFAULT_NAMESPACE.into()),
        }
    }

    /// `selection` narrowed as kubectl would (named hosts are looked for everywhere unless
    /// `-n` is given).
    pub fn narrow(&self, selection: HostSelection, place: &Place) -> HostSelection {
        match self.listed(place) {
            Some(ns) if selection.names_none() || self.namespace.is_some() => {
                selection.in_namespace(&ns)
            }
            _ => selection,
        }
    }
}

#[derive(Debug, Clone)]
pub enum GetFormat {
    Table,
    Wide,
    Yaml,
    Json,
    /// `baremetalhost.metal3.io/NAME`, one a line.
    Name,
    /// `-o jsonpath=TEMPLATE`.
    JsonPath(std::sync::Arc<super::jsonpath::Template>),
    /// `-o custom-columns=HEADER:PATH,...`.
    CustomColumns(std::sync::Arc<Vec<(String, super::jsonpath::Path)>>),
}

impl PartialEq for GetFormat {
    /// The same kind of format (templates and columns are not compared).
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

impl GetFormat {
    /// `-o`'s value, a template or columns checked here (a bad one is a usage error, exit 2).
    pub fn parse(s: &str) -> Result<Self, String> {
        use super::jsonpath;
        let (kind, arg) = match s.split_once('=') {
            Some((k, a)) => (k, Some(a)),
            None => (s, None),
        };
        match (kind, arg) {
            ("table", None) => Ok(Self::Table),
            ("wide", None) => Ok(Self::Wide),
            ("yaml", None) => Ok(Self::Yaml),
            ("json", None) => Ok(Self::Json),
            ("name", None) => Ok(Self::Name),
            ("jsonpath", Some(t)) => Ok(Self::JsonPath(jsonpath::Template::parse(t)?.into())),
            ("jsonpath", None) => Err("jsonpath template format specified but no template given \
                                      (-o jsonpath='{.items[*].metadata.name}')"
                .into()),
            ("custom-columns", Some(spec)) => {
                Ok(Self::CustomColumns(jsonpath::custom_columns(spec)?.into()))
            }
            ("custom-columns", None) => Err(
                "custom-columns format specified but no custom columns given \
                     (-o custom-columns=NAME:.metadata.name)"
                    .into(),
            ),
            _ => Err(format!(
                "unknown output format {s:?}: expected table, wide, yaml, json, name, \
                 jsonpath=TEMPLATE or custom-columns=SPEC"
            )),
        }
    }
}
