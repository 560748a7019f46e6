//! A timeline from what hosts keep: `status.operationHistory` (when registering, inspecting,
//! provisioning and deprovisioning last started and ended) and their recorded events. BMO
//! records no event when a host changes state, so the states between those operations are
//! inferred from BMO's path, and neither waits on the provisioner nor pass errors (which BMO
//! only logs) can be shown.

use super::model::{Mark, MarkKind, Row, Span, Timeline};
use crate::persist::store::StoredEvent;
use crate::record::HostRecord;
use chrono::{DateTime, Utc};

/// What a page built from recorded history cannot show, said under its title.
pub const NOTES: [&str; 2] = [
    "Built from the hosts' status.operationHistory and recorded events (the store keeps a \
     host's last 100, a host file's bookkeeping its last 20), to the second. Registering, \
     inspecting, provisioning and deprovisioning are as recorded; the states between them \
     (dashed) follow BMO's path, as BMO records no event when a host changes state.",
    "Waits on the provisioner (PROVISIONING_LIMIT, a locked node) and pass errors BMO only \
     logs are not recorded; the page a run writes (provision --timeline FILE) shows them.",
];

/// The timeline of `hosts`, each with its events, oldest first. Each host is in its recorded
/// state up to the last time any of them is known at: that is where the page ends.
pub fn timeline(command: String, hosts: &[(&HostRecord, Vec<StoredEvent>)]) -> Timeline {
    let until = (hosts.iter())
        .filter_map(|(rec, ev)| known_times(rec, ev).into_iter().max())
        .max();
    let rows: Vec<Row> = (hosts.iter())
        .map(|(rec, ev)| row(rec, ev, until))
        .collect();
    let first = rows.iter().filter_map(Row::first_time).min();
    let last = rows.iter().filter_map(Row::last_time).max();
    let start = first.unwrap_or(DateTime::UNIX_EPOCH);
    Timeline {
        command,
        start,
        end: last.unwrap_or(start),
        rows,
        notes: NOTES.iter().map(|n| n.to_string()).collect(),
    }
}

fn parse(t: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(t)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// An operation BMO times, as `operationHistory` has it.
struct Operation {
    state: &'static str,
    start: DateTime<Utc>,
    end: Option<DateTime<Utc>>,
}

/// The states with an operation metric: a span of one of them is recorded, never inferred.
const TIMED: [&str; 4] = [
    "registering",
    "inspecting",
    "provisioning",
    "deprovisioning",
];

/// The state BMO's usual path goes to after `state`.
fn after(state: &str) -> Option<&'static str> {
    Some(match state {
        "registering" => "inspecting",
        "inspecting" => "preparing",
        "match profile" => "preparing",
        "preparing" => "available",
        "available" | "ready" => "provisioning",
        "provisioning" => "provisioned",
        "provisioned" => "deprovisioning",
        "deprovisioning" => "available",
        _ => return None,
    })
}

/// The states a host goes through, on BMO's path, after the operation of `from` ends and before
/// it enters `to` (with `to` itself when `including`), leaving out the timed ones, which
/// `operationHistory` would show; empty when the path does not lead there.
fn between(from: &str, to: &str, including: bool) -> Vec<&'static str> {
    let mut states = Vec::new();
    let mut at = from;
    for _ in 0..8 {
        let Some(next) = after(at) else { break };
        if next == to {
            if including && !TIMED.contains(&next) {
                states.push(next);
            }
            return states;
        }
        if !TIMED.contains(&next) {
            states.push(next);
        }
        at = next;
    }
    Vec::new()
}

/// Events whose reason says something failed: BMO's error events (`RegistrationError`,
/// `ProvisioningError`, ... `BMCCredentialError`) and `ValidationFailed`.
fn is_error(reason: &str) -> bool {
    reason.ends_with("Error") || reason.ends_with("Failed")
}

/// The operations `operationHistory` times, by start.
fn operations(rec: &HostRecord) -> Vec<Operation> {
    let history = &rec.status().operation_history;
    let mut ops: Vec<Operation> = [
        ("registering", &history.register),
        ("inspecting", &history.inspect),
        ("provisioning", &history.provision),
        ("deprovisioning", &history.deprovision),
    ]
    .into_iter()
    .filter_map(|(state, m)| {
        Some(Operation {
            state,
            start: parse(m.start.as_deref()?)?,
            end: m.end.as_deref().and_then(parse),
        })
    })
    .collect();
    ops.sort_by_key(|o| o.start);
    ops
}

/// The times the host is known at: its operations', its events' and its status's last update.
fn known_times(rec: &HostRecord, events: &[StoredEvent]) -> Vec<DateTime<Utc>> {
    let ops = operations(rec);
    let ops = ops.into_iter().flat_map(|o| [Some(o.start), o.end]);
    let updated = rec.status().last_updated.as_deref().and_then(parse);
    (events.iter().filter_map(|e| parse(&e.time)))
        .chain(ops.flatten())
        .chain(updated)
        .collect()
}

/// One host's row, its recorded state lasting `until` (else its own last known time).
pub fn row(rec: &HostRecord, events: &[StoredEvent], until: Option<DateTime<Utc>>) -> Row {
    let meta = &rec.host.metadata;
    let status = rec.status();
    let ops = operations(rec);
    let known = known_times(rec, events);
    let last = known.iter().copied().max().max(until);
    let events: Vec<(DateTime<Utc>, &StoredEvent)> = events
        .iter()
        .filter_map(|e| Some((parse(&e.time)?, e)))
        .collect();
    let current = match status.provisioning.state.as_str() {
        "" => "new",
        s => s,
    };
    let mut spans = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let next = ops.get(i + 1);
        let until = next.map(|n| n.start).or(last).unwrap_or(op.start);
        let end = op.end.map_or(until, |e| e.min(until));
        spans.push(Span {
            state: op.state.to_string(),
            start: op.start,
            end,
            inferred: false,
        });
        // After the operation: the states BMO's path goes through, up to the next operation, or
        // to the host's state now.
        let states = match next {
            Some(n) => between(op.state, n.state, false),
            None if current == op.state => Vec::new(),
            None => match between(op.state, current, true) {
                s if s.is_empty() => vec![current],
                s => s,
            },
        };
        if until > end && !states.is_empty() {
            spans.push(Span {
                state: states.join(" → "),
                start: end,
                end: until,
                inferred: true,
            });
        }
    }
    // A host no operation was timed for (unmanaged, or recorded before its status had them):
    // its state from the first time it is known at to the last.
    if ops.is_empty()
        && let (Some(first), Some(last)) = (known.iter().copied().min(), last)
        && last > first
    {
        spans.push(Span {
            state: current.to_string(),
            start: first,
            end: last,
            inferred: true,
        });
    }
    spans.retain(|s| s.end >= s.start);
    Row {
        host: format!("{}/{}", meta.namespace_or_default(), meta.name),
        spans,
        waits: Vec::new(),
        marks: marks(&events),
        outcome: None,
    }
}

/// An error mark at each error event, and a retry mark at the first event after an error: what
/// the host did next.
fn marks(events: &[(DateTime<Utc>, &StoredEvent)]) -> Vec<Mark> {
    let mut marks = Vec::new();
    let mut failed: Option<String> = None;
    for (at, e) in events {
        if let Some(error) = failed.take() {
            marks.push(Mark {
                kind: MarkKind::Retry,
                at: *at,
                text: format!("retried after: {error}"),
            });
        }
        if is_error(&e.reason) {
            let text = format!("{}: {}", e.reason, e.message);
            marks.push(Mark {
                kind: MarkKind::Error,
                at: *at,
                text: text.clone(),
            });
            failed = Some(text);
        }
    }
    marks
}

#[cfg(test)]
mod tests {
    use super::*;
    use bmh_api::ProvisioningState;

    fn event(time: &str, reason: &str) -> StoredEvent {
        StoredEvent {
            time: time.into(),
            reason: reason.into(),
            message: format!("{reason} happened"),
        }
    }

    fn host(state: ProvisioningState, ops: &[(&str, &str, Option<&str>)]) -> HostRecord {
        let mut rec = HostRecord::default();
        rec.host.metadata.name = "worker-0".into();
        let mut status = bmh_api::BareMetalHostStatus::default();
        status.provisioning.state = state;
        for (op, start, end) in ops {
            let m = match *op {
                "register" => &mut status.operation_history.register,
                "inspect" => &mut status.operation_history.inspect,
                "provision" => &mut status.operation_history.provision,
                _ => &mut status.operation_history.deprovision,
            };
            m.start = Some(start.to_string());
            m.end = end.map(str::to_string);
        }
        rec.host.status = Some(status);
        rec
    }

    fn t(hms: &str) -> DateTime<Utc> {
        parse(&format!("2026-12-01T{hms}Z")).unwrap()
    }

    fn spans(row: &Row) -> Vec<(&str, DateTime<Utc>, DateTime<Utc>, bool)> {
        (row.spans.iter())
            .map(|s| (s.state.as_str(), s.start, s.end, s.inferred))
            .collect()
    }

    #[test]
    fn a_provisioned_host_has_its_operations_and_the_states_between_them() {
        let rec = host(
            ProvisioningState::Provisioned,
            &[
                (
                    "register",
                    "2026-12-01T10:00:00Z",
                    Some("2026-12-01T10:00:05Z"),
                ),
                (
                    "inspect",
                    "2026-12-01T10:00:05Z",
                    Some("2026-12-01T10:03:00Z"),
                ),
                (
                    "provision",
                    "2026-12-01T10:04:00Z",
                    Some("2026-12-01T10:09:00Z"),
                ),
            ],
        );
        let events = [event("2026-12-01T10:10:00Z", "PowerOn")];
        let row = row_of(&rec, &events);
        assert_eq!(row.host, "default/worker-0");
        assert_eq!(
            spans(&row),
            [
                ("registering", t("10:00:00"), t("10:00:05"), false),
                ("inspecting", t("10:00:05"), t("10:03:00"), false),
                ("preparing → available", t("10:03:00"), t("10:04:00"), true),
                ("provisioning", t("10:04:00"), t("10:09:00"), false),
                ("provisioned", t("10:09:00"), t("10:10:00"), true),
            ]
        );
        assert!(row.marks.is_empty());
        assert_eq!(row.outcome, None);
    }

    /// An operation still running lasts until the host's last known time; its errors are
    /// marked, and the event after each error is its retry.
    #[test]
    fn errors_and_retries_come_from_the_events() {
        let rec = host(
            ProvisioningState::Registering,
            &[("register", "2026-12-01T10:00:00Z", None)],
        );
        let events = [
            event("2026-12-01T10:00:01Z", "RegistrationError"),
            event("2026-12-01T10:02:00Z", "RegistrationError"),
            event("2026-12-01T10:05:00Z", "Registered"),
            event("2026-12-01T10:05:01Z", "BMCAccessValidated"),
        ];
        let row = row_of(&rec, &events);
        assert_eq!(
            spans(&row),
            [("registering", t("10:00:00"), t("10:05:01"), false)]
        );
        let marks: Vec<_> = (row.marks.iter()).map(|m| (m.kind, m.at)).collect();
        assert_eq!(
            marks,
            [
                (MarkKind::Error, t("10:00:01")),
                (MarkKind::Retry, t("10:02:00")),
                (MarkKind::Error, t("10:02:00")),
                (MarkKind::Retry, t("10:05:00")),
            ]
        );
        assert_eq!(
            row.marks[0].text,
            "RegistrationError: RegistrationError happened"
        );
    }

    /// Deprovisioned and provisioned again: the operations overlap nothing, the gap between
    /// them is `available`; a host with no operation shows its state over its known times.
    #[test]
    fn a_deprovisioned_host_and_an_unmanaged_one() {
        let rec = host(
            ProvisioningState::Available,
            &[
                (
                    "register",
                    "2026-12-01T10:00:00Z",
                    Some("2026-12-01T10:00:01Z"),
                ),
                (
                    "provision",
                    "2026-12-01T10:01:00Z",
                    Some("2026-12-01T10:02:00Z"),
                ),
                (
                    "deprovision",
                    "2026-12-01T10:05:00Z",
                    Some("2026-12-01T10:06:00Z"),
                ),
            ],
        );
        let row = row_of(&rec, &[event("2026-12-01T10:07:00Z", "PowerOff")]);
        assert_eq!(
            spans(&row),
            [
                ("registering", t("10:00:00"), t("10:00:01"), false),
                ("preparing → available", t("10:00:01"), t("10:01:00"), true),
                ("provisioning", t("10:01:00"), t("10:02:00"), false),
                ("provisioned", t("10:02:00"), t("10:05:00"), true),
                ("deprovisioning", t("10:05:00"), t("10:06:00"), false),
                ("available", t("10:06:00"), t("10:07:00"), true),
            ]
        );
        let unmanaged = host(ProvisioningState::Unmanaged, &[]);
        let events = [
            event("2026-12-01T10:00:00Z", "Discovered"),
            event("2026-12-01T10:00:30Z", "PowerOn"),
        ];
        assert_eq!(
            spans(&row_of(&unmanaged, &events)),
            [("unmanaged", t("10:00:00"), t("10:00:30"), true)]
        );
        // Nothing recorded: an empty row.
        assert!(row_of(&HostRecord::default(), &[]).spans.is_empty());
    }

    fn row_of(rec: &HostRecord, events: &[StoredEvent]) -> Row {
        row(rec, events, None)
    }

    #[test]
    fn the_page_spans_every_host_and_says_what_it_cannot_show() {
        let a = host(
            ProvisioningState::Registering,
            &[("register", "2026-12-01T10:00:10Z", None)],
        );
        let b = host(
            ProvisioningState::Inspecting,
            &[
                (
                    "register",
                    "2026-12-01T10:00:00Z",
                    Some("2026-12-01T10:00:20Z"),
                ),
                ("inspect", "2026-12-01T10:00:20Z", None),
            ],
        );
        let page = timeline(
            "bmhctl timeline".into(),
            &[
                (&a, vec![event("2026-12-01T10:01:00Z", "RegistrationError")]),
                (&b, Vec::new()),
            ],
        );
        assert_eq!((page.start, page.end), (t("10:00:00"), t("10:01:00")));
        assert_eq!(page.rows.len(), 2);
        assert!(page.notes.iter().any(|n| n.contains("PROVISIONING_LIMIT")));
        // The inspection still running lasts to the page's end: as far as anything recorded
        // says, the host is still inspecting.
        assert_eq!(
            spans(&page.rows[1])[1],
            ("inspecting", t("10:00:20"), t("10:01:00"), false)
        );
    }
}
