//! `bmhctl describe [-f FILE|DIR] HOST`: one host in detail, as `kubectl describe` shows an
//! object: identity, state, power, error, conditions, hardware, provisioning, recent events
//! (the store's; files keep none).

use super::options::Place;
use super::snapshot::Snapshot;
use super::{SourceArgs, output};
use crate::error::{Error, Result};
use crate::persist::store::StoredEvent;
use crate::record::HostRecord;
use crate::selection::HostSelection;
use clap::Args;
use comfy_table::{Table, presets::NOTHING};
use std::fmt::Write as _;

#[derive(Debug, Args)]
pub struct DescribeArgs {
    /// The host: NAME (in `default`, else the only host of that name) or NAMESPACE/NAME.
    #[arg(value_name = "HOST")]
    pub host: String,
    #[command(flatten)]
    pub source: SourceArgs,
}

pub fn describe(args: DescribeArgs) -> Result<()> {
    let place = Place::resolve(&args.source)?;
    let snapshot = Snapshot::read(&place)?;
    let selection = HostSelection::new(std::slice::from_ref(&args.host), None)?;
    let keys = snapshot.select_keys(&selection, &place)?;
    let [key] = keys.as_slice() else {
        return Err(Error::Usage(format!(
            "{} names {} hosts: give one",
            args.host,
            keys.len()
        )));
    };
    let rec = snapshot.record(key).expect("a selected host");
    super::output::write_stdout(&render(rec, &snapshot.events(key)?))?;
    Ok(())
}

fn or_none(s: &str) -> &str {
    if s.is_empty() { "<none>" } else { s }
}

fn map_text(m: &std::collections::BTreeMap<String, String>) -> String {
    if m.is_empty() {
        return "<none>".into();
    }
    m.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("\n                    ")
}

/// The description of one host.
pub fn render(rec: &HostRecord, events: &[StoredEvent]) -> String {
    let h = &rec.host;
    let m = &h.metadata;
    let s = rec.status();
    let mut out = String::new();
    let mut line = |k: &str, v: &str| {
        let _ = writeln!(out, "{:<20}{v}", format!("{k}:"));
    };
    line("Name", &m.name);
    line("Namespace", m.namespace_or_default());
    line("Labels", &map_text(&m.labels));
    line("Annotations", &map_text(&m.annotations));
    // The bookkeeping has them for both layouts (the store's metadata too; a file's in its
    // sidecar).
    line("UID", or_none(&rec.book.uid));
    line("Generation", &rec.book.generation.to_string());
    line("Resource Version", or_none(&m.resource_version));
    if let Some(t) = &rec.book.deletion_requested {
        line("Deletion Requested", t);
    }
    line("State", &output::state_text(rec));
    line("Operational Status", or_none(s.operational_status.as_str()));
    line("Online", &h.spec.online.to_string());
    line("Power", or_none(output::power(rec)));
    line("BMC", or_none(h.bmc_address()));
    line("Error Type", or_none(s.error_type.as_str()));
    line("Error Message", or_none(&s.error_message));
    line("Error Count", &s.error_count.to_string());
    line("Provisioning ID", or_none(&s.provisioning.id));
    let image = h.spec.image.as_ref().map(|i| i.url.as_str()).unwrap_or("");
    line("Image", or_none(image));
    line("Provisioned Image", or_none(&s.provisioning.image.url));
    line("Hardware Profile", or_none(&s.hardware_profile));
    line("Hardware", or_none(&output::hardware_summary(rec)));
    if let Some(vendor) = s.hardware.as_ref().and_then(|hw| hw.system_vendor.as_ref()) {
        let text = format!("{} {}", vendor.manufacturer, vendor.product_name);
        line("System", or_none(text.trim()));
    }
    out.push_str("Conditions:\n");
    if s.conditions.is_empty() {
        out.push_str("  <none>\n");
    } else {
        let mut t = Table::new();
        t.load_preset(NOTHING);
        t.set_header(["TYPE", "STATUS", "REASON", "MESSAGE", "LAST TRANSITION"]);
        for c in &s.conditions {
            t.add_row([
                c.type_.as_str(),
                c.status.as_str(),
                c.reason.as_str(),
                c.message.as_str(),
                c.last_transition_time.as_str(),
            ]);
        }
        push_indented(&mut out, &t.to_string());
    }
    out.push_str("Events:\n");
    if events.is_empty() {
        out.push_str("  <none>\n");
    } else {
        let mut t = Table::new();
        t.load_preset(NOTHING);
        t.set_header(["TIME", "REASON", "MESSAGE"]);
        // The most recent 20, oldest first, as kubectl shows them.
        for e in &events[events.len().saturating_sub(20)..] {
            t.add_row([e.time.as_str(), e.reason.as_str(), e.message.as_str()]);
        }
        push_indented(&mut out, &t.to_string());
    }
    out
}

fn push_indented(out: &mut String, text: &str) {
    for l in text.lines() {
        out.push_str("  ");
        out.push_str(l.strip_prefix(' ').unwrap_or(l).trim_end());
        out.push('\n');
    }
}
