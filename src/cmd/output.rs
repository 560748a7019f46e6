//! Tables and JSON for people and machines.

use crate::error::{Error, Result};
use crate::record::HostRecord;
use crate::runner::{Goal, HostResult, LedgerEntry, Seen};
use chrono::{DateTime, Utc};
use comfy_table::{Table, presets::NOTHING};
use serde_json::json;

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(NOTHING);
    t.set_header(header.iter().map(|h| h.to_string()));
    t
}

pub fn host_name(rec: &HostRecord) -> String {
    let m = &rec.host.metadata;
    if m.namespace_or_default() == bmh_api::DEFAULT_NAMESPACE {
        m.name.clone()
    } else {
        format!("{}/{}", m.namespace_or_default(), m.name)
    }
}

pub fn power(rec: &HostRecord) -> &'static str {
    match &rec.host.status {
        None => "",
        Some(s) if s.powered_on => "on",
        Some(_) => "off",
    }
}

pub fn state_text(rec: &HostRecord) -> String {
    let s = rec.status().provisioning.state.as_str();
    if s.is_empty() {
        "(new)".into()
    } else {
        s.into()
    }
}

/// The group and version of every JSON document bmhctl prints as a result (docs/output.md).
pub const API_VERSION: &str = "bmhctl.metal3.io/v1alpha1";

/// Which command's run a result document reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    Provision,
    Deprovision,
    Delete,
    Reconcile,
}

impl RunKind {
    pub fn kind(self) -> &'static str {
        match self {
            RunKind::Provision => "ProvisionResult",
            RunKind::Deprovision => "DeprovisionResult",
            RunKind::Delete => "DeleteResult",
            RunKind::Reconcile => "ReconcileResult",
        }
    }
}

/// How a host's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// At its goal (for `delete`: gone).
    Reached,
    /// Stopped short of its goal: failed, paused, detached, or out of time (see its reason).
    Failed,
    /// Still being driven when the run was interrupted.
    InFlight,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Reached => "reached",
            Outcome::Failed => "failed",
            Outcome::InFlight => "inFlight",
        }
    }
}

/// One host of a run's result, whether the run ended or was interrupted.
#[derive(Debug, Clone)]
pub struct HostReport {
    pub namespace: String,
    pub name: String,
    pub goal: Goal,
    pub outcome: Outcome,
    pub deleted: bool,
    /// Why the host stopped short of its goal.
    pub reason: String,
    pub seen: Seen,
    pub passes: u64,
    pub start: Option<DateTime<Utc>>,
    pub end: Option<DateTime<Utc>>,
}

/// The hosts of a run: from the runner's `results` when it ended, else from what the ledger
/// saw (an interrupted run). `ledger` is in job order, as `results` are.
pub fn host_reports(results: Option<&[HostResult]>, ledger: &[LedgerEntry]) -> Vec<HostReport> {
    match results {
        Some(results) => results
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let meta = &r.record.host.metadata;
                let entry = ledger.get(i);
                HostReport {
                    namespace: meta.namespace_or_default().to_string(),
                    name: meta.name.clone(),
                    goal: r.goal.clone(),
                    outcome: if r.reached {
                        Outcome::Reached
                    } else {
                        Outcome::Failed
                    },
                    deleted: r.deleted,
                    reason: r.reason.clone(),
                    seen: Seen::of(&r.record),
                    passes: r.passes,
                    start: entry.map(|e| e.start),
                    end: entry.and_then(|e| e.end),
                }
            })
            .collect(),
        None => ledger
            .iter()
            .map(|e| HostReport {
                namespace: e.namespace.clone(),
                name: e.name.clone(),
                goal: e.goal.clone(),
                outcome: match (e.end, e.reached) {
                    (None, _) => Outcome::InFlight,
                    (Some(_), true) => Outcome::Reached,
                    (Some(_), false) => Outcome::Failed,
                },
                deleted: e.end.is_some() && e.reached && e.goal == Goal::Deleted,
                reason: e.reason.clone(),
                seen: e.seen.clone(),
                passes: e.passes,
                start: Some(e.start),
                end: e.end,
            })
            .collect(),
    }
}

fn display_name(namespace: &str, name: &str) -> String {
    if namespace == bmh_api::DEFAULT_NAMESPACE {
        name.to_string()
    } else {
        format!("{namespace}/{name}")
    }
}

fn seen_error(s: &Seen) -> String {
    match (s.error_type.as_str(), s.error_message.as_str()) {
        ("", "") => String::new(),
        ("", m) => m.to_string(),
        (t, "") => t.to_string(),
        (t, m) => format!("{t}: {m}"),
    }
}

fn show_state(s: &str) -> &str {
    if s.is_empty() { "(new)" } else { s }
}

/// The final table of a run: one row per host, and why a host stopped short, with what its
/// passes last waited on (the provisioner's reason, which BMO writes nowhere).
pub fn result_table(hosts: &[HostReport]) -> String {
    let mut t = table(&["HOST", "STATE", "STATUS", "POWER", "RESULT", "ERROR"]);
    for r in hosts {
        let s = &r.seen;
        let (state, result) = match r.outcome {
            _ if r.deleted => ("(deleted)".to_string(), "ok".to_string()),
            Outcome::Reached => (show_state(&s.state).to_string(), "ok".into()),
            Outcome::Failed => (
                show_state(&s.state).to_string(),
                format!("failed (goal {})", r.goal.describe()),
            ),
            Outcome::InFlight => (
                show_state(&s.state).to_string(),
                format!("in flight (goal {})", r.goal.describe()),
            ),
        };
        let stopped_short = r.outcome != Outcome::Reached;
        let mut error = seen_error(s);
        if stopped_short && !r.reason.is_empty() && !error.contains(&r.reason) {
            error = if error.is_empty() {
                r.reason.clone()
            } else {
                format!("{error} ({})", r.reason)
            };
        }
        if stopped_short && !r.deleted && !s.waiting.is_empty() {
            let t = &s.waiting;
            error = if error.is_empty() {
                format!("waiting for the provisioner: {t}")
            } else {
                format!("{error}; waiting for the provisioner: {t}")
            };
        }
        let (status, power) = if r.deleted {
            ("", "")
        } else {
            (
                s.operational_status.as_str(),
                match s.powered_on {
                    None => "",
                    Some(true) => "on",
                    Some(false) => "off",
                },
            )
        };
        t.add_row(vec![
            display_name(&r.namespace, &r.name),
            state,
            status.to_string(),
            power.to_string(),
            result,
            error,
        ]);
    }
    t.to_string()
}

/// A time in result documents: RFC 3339, UTC, milliseconds.
pub fn json_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The result document of a run (docs/output.md): `interrupted` when Ctrl-C or SIGTERM cut it
/// short, its hosts still driven then marked `inFlight`; `now` ends their durations.
pub fn result_json(
    kind: RunKind,
    hosts: &[HostReport],
    interrupted: bool,
    now: DateTime<Utc>,
) -> String {
    let count = |o: Outcome| hosts.iter().filter(|h| h.outcome == o).count();
    let docs: Vec<_> = hosts
        .iter()
        .map(|r| {
            let s = &r.seen;
            let duration = r
                .start
                .map(|start| (r.end.unwrap_or(now) - start).num_milliseconds() as f64 / 1000.0);
            json!({
                "name": r.name,
                "namespace": r.namespace,
                "goal": r.goal.describe(),
                "outcome": r.outcome.as_str(),
                "reached": r.outcome == Outcome::Reached,
                "deleted": r.deleted,
                "reason": r.reason,
                "state": s.state,
                "operationalStatus": s.operational_status,
                "poweredOn": s.powered_on.unwrap_or(false),
                "error": seen_error(s),
                "errorType": s.error_type,
                "errorMessage": s.error_message,
                "errorCount": s.error_count,
                "provisioningFailCount": s.provisioning_fail_count,
                "provisioningID": s.provisioning_id,
                "waiting": s.waiting,
                "passes": r.passes,
                "start": r.start.map(json_time),
                "end": r.end.map(json_time),
                "durationSeconds": duration,
            })
        })
        .collect();
    let doc = json!({
        "apiVersion": API_VERSION,
        "kind": kind.kind(),
        "interrupted": interrupted,
        "summary": {
            "hosts": hosts.len(),
            "reached": count(Outcome::Reached),
            "failed": count(Outcome::Failed),
            "inFlight": count(Outcome::InFlight),
        },
        "hosts": docs,
    });
    serde_json::to_string_pretty(&doc).expect("JSON of plain values")
}

/// How `get` prints its table.
pub struct TableOptions {
    /// `-o wide`: BMO's wide columns too (STATUS, BMC).
    pub wide: bool,
    /// `-A`: a NAMESPACE column, and bare names.
    pub namespace_column: bool,
    /// `NAMESPACE/NAME` for a host outside `default` (no `-n` given).
    pub qualified_names: bool,
    pub headers: bool,
    /// `--show-labels`: a LABELS column last.
    pub labels: bool,
    /// What AGE counts to.
    pub now: DateTime<Utc>,
}

/// `get` as a table: BMO's printer columns (its kubebuilder printcolumn markers) in their
/// order, those of priority 1 (STATUS, BMC) with `wide` only; ERROR is the error's type, as
/// BMO's column is (`describe` has the message).
pub fn hosts_table(records: &[&HostRecord], o: &TableOptions) -> String {
    let mut header = Vec::new();
    if o.namespace_column {
        header.push("NAMESPACE");
    }
    header.push("NAME");
    if o.wide {
        header.push("STATUS");
    }
    header.extend(["STATE", "CONSUMER"]);
    if o.wide {
        header.push("BMC");
    }
    header.extend(["ONLINE", "ERROR", "AGE"]);
    if o.labels {
        header.push("LABELS");
    }
    let mut t = table(&header);
    if !o.headers {
        t = Table::new();
        t.load_preset(NOTHING);
    }
    for rec in records {
        let s = rec.status();
        let mut row = Vec::new();
        if o.namespace_column {
            row.push(rec.host.metadata.namespace_or_default().to_string());
        }
        row.push(if o.namespace_column || !o.qualified_names {
            rec.host.metadata.name.clone()
        } else {
            host_name(rec)
        });
        if o.wide {
            row.push(s.operational_status.as_str().to_string());
        }
        row.extend([state_text(rec), consumer(rec)]);
        if o.wide {
            row.push(rec.host.bmc_address().to_string());
        }
        row.extend([
            rec.host.spec.online.to_string(),
            s.error_type.as_str().to_string(),
            age(rec, o.now),
        ]);
        if o.labels {
            row.push(labels_text(&rec.host.metadata.labels));
        }
        t.add_row(row);
    }
    // comfy-table pads the last column; kubectl does not.
    t.to_string()
        .lines()
        .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `spec.consumerRef.name`, BMO's CONSUMER column.
pub fn consumer(rec: &HostRecord) -> String {
    rec.host
        .spec
        .consumer_ref
        .as_ref()
        .and_then(|c| c.get("name"))
        .and_then(|n| n.as_str())
        .unwrap_or("")
        .to_string()
}

/// Labels as `--show-labels` prints them: `k=v,k=v`, or `<none>`.
pub fn labels_text(labels: &std::collections::BTreeMap<String, String>) -> String {
    if labels.is_empty() {
        return "<none>".into();
    }
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The host's AGE: since bmhctl first recorded it; `<unknown>` for a host recorded before
/// bmhctl kept that time.
pub fn age(rec: &HostRecord, now: DateTime<Utc>) -> String {
    rec.book
        .creation_timestamp
        .as_deref()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| human_duration(now - t.with_timezone(&Utc)))
        .unwrap_or_else(|| "<unknown>".into())
}

/// A duration as kubectl prints ages: two significant units at most, coarser as it grows
/// (`45s`, `3m20s`, `25m`, `5h10m`, `20h`, `3d4h`, `20d`, `2y30d`).
pub fn human_duration(d: chrono::TimeDelta) -> String {
    let secs = d.num_seconds();
    if secs < -1 {
        return "<invalid>".into();
    }
    if secs < 0 {
        return "0s".into();
    }
    if secs < 120 {
        return format!("{secs}s");
    }
    let (mins, hours, days) = (secs / 60, secs / 3600, secs / 86400);
    let pair = |big: i64, bu: &str, small: i64, su: &str| {
        if small == 0 {
            format!("{big}{bu}")
        } else {
            format!("{big}{bu}{small}{su}")
        }
    };
    if mins < 10 {
        pair(mins, "m", secs % 60, "s")
    } else if mins < 180 {
        format!("{mins}m")
    } else if hours < 8 {
        pair(hours, "h", mins % 60, "m")
    } else if hours < 48 {
        format!("{hours}h")
    } else if hours < 24 * 8 {
        pair(days, "d", hours % 24, "h")
    } else if days < 365 * 2 {
        format!("{days}d")
    } else if days < 365 * 8 {
        pair(days / 365, "y", days % 365, "d")
    } else {
        format!("{}y", days / 365)
    }
}

/// The hardware in one line: CPUs, RAM, disks and NICs (empty before inspection).
pub fn hardware_summary(rec: &HostRecord) -> String {
    rec.status()
        .hardware
        .as_ref()
        .map(|h| {
            let cpu = h
                .cpu
                .as_ref()
                .map(|c| format!("{}x {}", c.count, c.arch))
                .unwrap_or_default();
            format!(
                "{cpu} {} MiB {} disks {} nics",
                h.ram_mebibytes,
                h.storage.len(),
                h.nics.len()
            )
        })
        .unwrap_or_default()
}

/// `text` on standard output; a closed pipe comes back as an `stdout` I/O error, which
/// [`super::run`] turns into a quiet exit 0 (where `println!` would panic).
pub fn write_stdout(text: &str) -> Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Error::io("stdout", e))
}

/// `println!` through [`line`]: a closed pipe is an error to return, not a panic.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cmd::output::line(format_args!($($arg)*))
    };
}
pub(crate) use outln;

/// [`write_stdout`] with a newline.
pub fn line(text: impl std::fmt::Display) -> Result<()> {
    write_stdout(&format!("{text}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeDelta;

    const LOCKED: &str = "node default~worker-1 locked by conductor 127.0.0.3, which is offline";

    /// Two hosts stopped short at the timeout: only the one whose passes wait on the
    /// provisioner says so, in the table and in the document.
    fn reports() -> Vec<HostReport> {
        let host = |name: &str, waiting: &str| HostReport {
            namespace: "default".into(),
            name: name.into(),
            goal: Goal::State(bmh_api::ProvisioningState::Provisioned),
            outcome: Outcome::Failed,
            deleted: false,
            reason: "still \"provisioning\" when the timeout ran out".into(),
            seen: Seen {
                state: "provisioning".into(),
                operational_status: "OK".into(),
                powered_on: Some(false),
                waiting: waiting.into(),
                ..Default::default()
            },
            passes: 7,
            start: None,
            end: None,
        };
        vec![host("worker-0", ""), host("worker-1", LOCKED)]
    }

    #[test]
    fn the_result_names_the_waiting_reason_of_its_host_only() {
        insta::assert_snapshot!(result_table(&reports()));
        let doc: serde_json::Value = serde_json::from_str(&result_json(
            RunKind::Provision,
            &reports(),
            false,
            Utc::now(),
        ))
        .unwrap();
        assert_eq!(doc["hosts"][0]["waiting"], "");
        assert_eq!(doc["hosts"][1]["waiting"], LOCKED);
    }

    /// One host of each kind a run reports, with fixed times: the exact text `provision`
    /// prints (these snapshots pin it byte for byte).
    fn every_kind_of_host() -> Vec<HostReport> {
        let at = |s: &str| Some(DateTime::parse_from_rfc3339(s).unwrap().to_utc());
        let provisioned = Goal::State(bmh_api::ProvisioningState::Provisioned);
        let host = |namespace: &str, name: &str, outcome: Outcome| HostReport {
            namespace: namespace.into(),
            name: name.into(),
            goal: provisioned.clone(),
            outcome,
            deleted: false,
            reason: String::new(),
            seen: Seen {
                state: "provisioned".into(),
                operational_status: "OK".into(),
                powered_on: Some(true),
                provisioning_id: "6a1c0f3e-0000-4000-8000-000000000001".into(),
                ..Default::default()
            },
            passes: 12,
            start: at("2026-12-01T10:00:00.250Z"),
            end: at("2026-12-01T10:00:03.500Z"),
        };
        let reached = host("default", "worker-0", Outcome::Reached);
        let mut failed = host("lab", "worker-1", Outcome::Failed);
        failed.reason = "still \"provisioning\" when the timeout ran out".into();
        failed.seen = Seen {
            state: "provisioning".into(),
            operational_status: "error".into(),
            powered_on: Some(false),
            error_type: "provisioning error".into(),
            error_message: "Deploy step failed: \"disk\" is gone".into(),
            error_count: 2,
            provisioning_fail_count: 1,
            waiting: LOCKED.into(),
            ..Default::default()
        };
        let mut in_flight = host("default", "worker-2", Outcome::InFlight);
        in_flight.seen.state = "inspecting".into();
        in_flight.end = None;
        let mut deleted = host("default", "worker-3", Outcome::Reached);
        deleted.goal = Goal::Deleted;
        deleted.deleted = true;
        let mut new = host("default", "worker-4", Outcome::Failed);
        new.reason = "paused".into();
        new.seen = Seen::default();
        new.passes = 0;
        new.start = None;
        new.end = None;
        vec![reached, failed, in_flight, deleted, new]
    }

    #[test]
    fn the_result_document_is_printed_exactly() {
        let now = DateTime::parse_from_rfc3339("2026-12-01T10:00:10Z")
            .unwrap()
            .to_utc();
        let hosts = every_kind_of_host();
        insta::assert_snapshot!(result_json(RunKind::Provision, &hosts, true, now));
        insta::assert_snapshot!(result_json(RunKind::Delete, &[], false, now));
    }

    #[test]
    fn the_result_table_is_printed_exactly() {
        insta::assert_snapshot!(result_table(&every_kind_of_host()));
    }

    #[test]
    fn ages_read_as_kubectl_prints_them() {
        let cases = [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (200, "3m20s"),
            (25 * 60 + 7, "25m"),
            (5 * 3600 + 10 * 60, "5h10m"),
            (7 * 3600, "7h"),
            (20 * 3600 + 59, "20h"),
            (3 * 86400 + 4 * 3600, "3d4h"),
            (20 * 86400, "20d"),
            (2 * 365 * 86400 + 30 * 86400, "2y30d"),
            (9 * 365 * 86400, "9y"),
        ];
        for (secs, text) in cases {
            assert_eq!(human_duration(TimeDelta::seconds(secs)), text, "{secs}s");
        }
    }
}
