//! `bmhctl timeline`: the timeline page of hosts, from what they recorded (their operation
//! history and events). Reads only: no lock, no provisioner.

use super::SourceArgs;
use super::get_args::NamespaceArgs;
use crate::error::{Error, Result};
use crate::persist::snapshot::{Snapshot, key_of};
use crate::persist::store::StoredEvent;
use crate::record::HostRecord;
use crate::selection::HostSelection;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct TimelineArgs {
    /// The hosts: NAME, NAMESPACE/NAME or TYPE/NAME, after an optional type (see `get`);
    /// every host in scope when none is given.
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,
    /// Only hosts whose labels match (kubectl syntax).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    #[command(flatten)]
    pub namespaces: NamespaceArgs,
    #[command(flatten)]
    pub source: SourceArgs,
    /// The output format: `html`, the only one (as `-o` is everywhere a format; a file name
    /// here is refused with a pointer to --output-file).
    #[arg(short = 'o', long = "output", value_name = "FORMAT", default_value = "html",
          value_parser = html_format)]
    pub format: String,
    /// Write the page to FILE (replaced atomically) instead of standard output, which must then
    /// not be a terminal.
    #[arg(long = "output-file", value_name = "FILE")]
    pub output_file: Option<PathBuf>,
}

/// `-o FILE` (as a compiler takes it) gets a pointer to --output-file.
fn html_format(s: &str) -> std::result::Result<String, String> {
    (s == "html").then(|| s.to_string()).ok_or_else(|| {
        format!("-o is the output format (html); to write to a file use --output-file {s}")
    })
}

pub fn timeline(args: TimelineArgs, input: crate::persist::InputPolicy) -> Result<()> {
    use std::io::IsTerminal;
    // An HTML page is no use on a terminal: said before anything is read.
    if args.output_file.is_none() && std::io::stdout().is_terminal() {
        return Err(Error::Usage(
            "the timeline is an HTML page: write it with --output-file FILE.html, or redirect \
             standard output (> FILE.html)"
                .into(),
        ));
    }
    super::options::hosts_not_files("timeline", &args.source, &args.hosts)?;
    let place = super::options::place(&args.source)?;
    let selection = args.namespaces.narrow(
        HostSelection::new(&args.hosts, args.selector.as_deref())?,
        &place,
    );
    let snapshot = Snapshot::read(&place, input)?;
    let picked = snapshot.select_some(&selection, &place)?;
    picked.refuse_named(&selection)?;
    let events = |rec: &HostRecord| match &snapshot {
        // A file host's events are in its bookkeeping, at hand.
        Snapshot::Files(_) => Ok(rec
            .book
            .events
            .iter()
            .map(|e| StoredEvent {
                time: e.time.clone(),
                reason: e.reason.clone(),
                message: e.message.clone(),
            })
            .collect()),
        Snapshot::Store(..) => snapshot.events(&key_of(rec)),
    };
    let hosts = (picked.records.iter())
        .map(|rec| Ok((*rec, events(rec)?)))
        .collect::<Result<Vec<_>>>()?;
    let page = crate::timeline::recorded::timeline(super::command_line(), &hosts);
    match &args.output_file {
        Some(path) => crate::timeline::write(path, &page).map_err(|e| Error::io(path, e))?,
        None => super::output::write_stdout(&crate::timeline::page(&page))?,
    }
    picked.report_bad()
}
