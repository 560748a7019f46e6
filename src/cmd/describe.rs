//! `bmhctl describe`: hosts in detail, as `kubectl describe` shows objects.

use super::SourceArgs;
use super::get_args::NamespaceArgs;
use super::output::{self, or_none};
use crate::error::Result;
use crate::persist::snapshot::Snapshot;
use crate::persist::store::StoredEvent;
use crate::record::HostRecord;
use crate::selection::HostSelection;
use chrono::{DateTime, Utc};
use clap::Args;
use std::fmt::Write as _;

#[derive(Debug, Args)]
pub struct DescribeArgs {
    /// The hosts: NAME, NAMESPACE/NAME or TYPE/NAME, after an optional type (see `get`);
    /// every host in scope when none is given. `bes [NAME...]` and `dataimages [NAME...]`: those
    /// kinds.
    #[arg(value_name = "HOST")]
    pub hosts: Vec<String>,
    /// Only hosts whose labels match (kubectl syntax).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    #[command(flatten)]
    pub namespaces: NamespaceArgs,
    #[command(flatten)]
    pub source: SourceArgs,
}

pub fn describe(args: DescribeArgs, input: crate::persist::InputPolicy) -> Result<()> {
    super::options::hosts_not_files("describe", &args.source, &args.hosts)?;
    let place = super::options::place(&args.source)?;
    let named = crate::resource_args::parse(&args.hosts)?;
    if named.kind == crate::resource_args::Kind::BmcEventSubscription {
        let names = &named.names;
        let subs = super::bmc_event_subscriptions::read(&Snapshot::read(&place, input)?)?;
        let text: Vec<String> = subs
            .iter()
            .filter(|s| names.is_empty() || names.contains(&s.metadata.name))
            .map(super::bmc_event_subscriptions::describe)
            .collect();
        return output::write_stdout(&text.join("\n"));
    }
    if named.kind == crate::resource_args::Kind::DataImage {
        let snapshot = Snapshot::read(&place, input)?;
        let listed = args.namespaces.listed(&place);
        let namespace = args.namespaces.namespace.as_deref();
        let text = super::data_image::describe(
            &snapshot,
            &named.names,
            namespace,
            listed.as_deref(),
            &place,
        )?;
        return output::write_stdout(&text);
    }
    let selection = args.namespaces.narrow(
        HostSelection::new(&args.hosts, args.selector.as_deref())?,
        &place,
    );
    let snapshot = Snapshot::read(&place, input)?;
    let picked = snapshot.select_some(&selection, &place)?;
    picked.refuse_named(&selection)?;
    let subscriptions = super::bmc_event_subscriptions::read(&snapshot)?;
    let mut text = String::new();
    for (i, rec) in picked.records.iter().enumerate() {
        // kubectl separates described objects with a blank line.
        if i > 0 {
            text.push('\n');
        }
        let key = &crate::persist::snapshot::key_of(rec);
        text.push_str(&render(rec, &snapshot.events(key)?));
        let mine: Vec<_> = super::bmc_event_subscriptions::of_host(&subscriptions, key).collect();
        if !mine.is_empty() {
            text.push_str(&super::bmc_event_subscriptions::host_section(&mine));
        }
    }
    output::write_stdout(&text)?;
    picked.report_bad()
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

pub fn render(rec: &HostRecord, events: &[StoredEvent]) -> String {
    let mut out = String::new();
    push_fields(&mut out, rec);
    let s = rec.status();
    if let Some(hw) = &s.hardware {
        let rows = hw.nics.iter().map(|n| {
            vec![
                n.name.clone(),
                n.mac.clone(),
                n.ip.clone(),
                match n.speed_gbps {
                    0 => String::new(),
                    gbps => format!("{gbps} Gbps"),
                },
                n.pxe.to_string(),
            ]
        });
        out.push_str("NICs:\n");
        push_table(&mut out, &["NAME", "MAC", "IP", "SPEED", "PXE"], rows);
        let rows = hw.storage.iter().map(|d| {
            vec![
                d.name.clone(),
                d.type_.clone(),
                match u64::try_from(d.size_bytes) {
                    Ok(0) | Err(_) => String::new(),
                    Ok(bytes) => output::binary_size(bytes),
                },
                d.model.clone(),
            ]
        });
        out.push_str("Disks:\n");
        push_table(&mut out, &["NAME", "TYPE", "SIZE", "MODEL"], rows);
    }
    let hist = &s.operation_history;
    let rows = [
        ("register", &hist.register),
        ("inspect", &hist.inspect),
        ("provision", &hist.provision),
        ("deprovision", &hist.deprovision),
    ]
    .into_iter()
    .filter(|(_, m)| !m.is_empty())
    .map(|(op, m)| {
        vec![
            op.to_string(),
            m.start.clone().unwrap_or_default(),
            m.end.clone().unwrap_or_default(),
        ]
    });
    out.push_str("Operation History:\n");
    push_table(&mut out, &["OPERATION", "START", "END"], rows);
    super::data_image::describe_section(&mut out, rec.data_image.as_deref());
    let header = ["TYPE", "STATUS", "REASON", "MESSAGE", "LAST TRANSITION"];
    let rows = s.conditions.iter().map(|c| {
        [
            c.type_.as_str(),
            c.status.as_str(),
            c.reason.as_str(),
            c.message.as_str(),
            c.last_transition_time.as_str(),
        ]
    });
    out.push_str("Conditions:\n");
    push_table(&mut out, &header, rows);
    // The most recent 20 kinds of event, oldest first, as kubectl shows them.
    let groups = aggregate(events);
    let rows = groups[groups.len().saturating_sub(20)..].iter().map(|g| {
        vec![
            g.seen_text(),
            g.event.reason.clone(),
            g.event.message.clone(),
        ]
    });
    out.push_str("Events:\n");
    push_table(&mut out, &["LAST SEEN", "REASON", "MESSAGE"], rows);
    out
}

fn push_fields(out: &mut String, rec: &HostRecord) {
    let h = &rec.host;
    let m = &h.metadata;
    let s = rec.status();
    let mut line = |k: &str, v: &str| {
        let _ = writeln!(out, "{:<20}{v}", format!("{k}:"));
    };
    line("Name", &m.name);
    line("Namespace", m.namespace_or_default());
    line("Labels", &map_text(&m.labels));
    line("Annotations", &map_text(&m.annotations));
    // The bookkeeping has them for both layouts.
    line("UID", or_none(&rec.book.uid));
    line("Generation", &rec.book.generation.to_string());
    // The store's; files have none.
    if !m.resource_version.is_empty() {
        line("Resource Version", &m.resource_version);
    }
    if let Some(t) = &rec.book.deletion_requested {
        line("Deletion Requested", t);
    }
    if let Some(t) = &rec.book.loaded.deleted_at {
        line("Deleted", t);
    }
    line("State", &output::state_text(rec));
    line("Operational Status", or_none(s.operational_status.as_str()));
    line("Online", &h.spec.online.to_string());
    line("Power", or_none(output::power(rec)));
    line("BMC", or_none(h.bmc_address()));
    line("Boot MAC Address", or_none(&h.spec.boot_mac_address));
    line("Boot Mode", or_none(h.spec.boot_mode.as_str()));
    line("Consumer", or_none(&output::consumer(rec)));
    line("Created", or_none(output::created(rec).unwrap_or("")));
    line("Error Type", or_none(s.error_type.as_str()));
    line("Error Message", or_none(&s.error_message));
    line("Error Count", &s.error_count.to_string());
    // Only while it holds: what the host's passes wait on (bmhctl's own, see Bookkeeping).
    if let Some(w) = &rec.book.waiting {
        line("Waiting", &format!("for the provisioner: {w}"));
    }
    // bmhctl's own too: why the passes fail while they do (BMO only logs it).
    if let Some(e) = &rec.book.pass_error {
        line("Last Pass Error", e);
    }
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
}

/// Identical events (same reason and message), counted once as kubectl does.
struct EventGroup<'a> {
    event: &'a StoredEvent,
    first: &'a str,
    count: usize,
}

impl EventGroup<'_> {
    /// The last time, and `(x20 over 3m)` for an event seen more than once.
    fn seen_text(&self) -> String {
        if self.count == 1 {
            return self.event.time.clone();
        }
        let parse = |t: &str| {
            DateTime::parse_from_rfc3339(t)
                .ok()
                .map(|t| t.with_timezone(&Utc))
        };
        let span = match (parse(self.first), parse(&self.event.time)) {
            (Some(a), Some(b)) => output::human_duration(b - a),
            _ => "<unknown>".into(),
        };
        format!("{} (x{} over {span})", self.event.time, self.count)
    }
}

/// `events` grouped, ordered by when each group was last seen.
fn aggregate(events: &[StoredEvent]) -> Vec<EventGroup<'_>> {
    let mut groups: Vec<EventGroup> = Vec::new();
    for e in events {
        let same = |g: &EventGroup| g.event.reason == e.reason && g.event.message == e.message;
        let mut g = match groups.iter().position(same) {
            Some(i) => groups.remove(i),
            None => EventGroup {
                event: e,
                first: &e.time,
                count: 0,
            },
        };
        g.event = e;
        g.count += 1;
        groups.push(g);
    }
    groups
}

fn push_table<R, C>(out: &mut String, header: &[&str], rows: impl IntoIterator<Item = R>)
where
    R: IntoIterator<Item = C>,
    C: AsRef<str>,
{
    let rows: Vec<R> = rows.into_iter().collect();
    if rows.is_empty() {
        return out.push_str("  <none>\n");
    }
    for l in super::output::kubectl_table(Some(header), rows).lines() {
        let _ = writeln!(out, "  {l}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(time: &str, reason: &str, message: &str) -> StoredEvent {
        StoredEvent {
            time: time.into(),
            reason: reason.into(),
            message: message.into(),
        }
    }

    #[test]
    fn a_host_waiting_on_its_provisioner_says_why_and_one_that_is_not_says_nothing() {
        let mut rec = HostRecord::default();
        rec.host.metadata.name = "worker-1".into();
        rec.book.uid = "7c0c3a56-0000-4000-8000-000000000001".into();
        rec.book.generation = 1;
        let quiet = render(&rec, &[]);
        assert!(!quiet.contains("Waiting"), "{quiet}");
        rec.book.waiting =
            Some("node default~worker-1 locked by conductor 127.0.0.3, which is offline".into());
        insta::assert_snapshot!(render(&rec, &[]));
    }

    #[test]
    fn identical_events_are_counted_once_ordered_by_when_last_seen() {
        let events = [
            event("2026-01-01T00:00:00Z", "InspectionComplete", "done"),
            event("2026-01-01T00:01:00Z", "PowerOn", "on"),
            event("2026-01-01T00:03:00Z", "InspectionComplete", "done"),
            event("2026-01-01T00:04:00Z", "InspectionComplete", "other"),
        ];
        let groups = aggregate(&events);
        let seen: Vec<String> = groups.iter().map(|g| g.seen_text()).collect();
        assert_eq!(
            seen,
            [
                "2026-01-01T00:01:00Z",
                "2026-01-01T00:03:00Z (x2 over 3m)",
                "2026-01-01T00:04:00Z",
            ]
        );
        assert_eq!(groups[1].event.reason, "InspectionComplete");
    }
}
