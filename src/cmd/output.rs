//! Tables and JSON for people and machines.

use super::progress::{LedgerEntry, Seen};
use crate::error::{Error, Result};
use crate::record::HostRecord;
use crate::runner::{Goal, HostResult};
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::io::Write;

pub fn host_name(rec: &HostRecord) -> String {
    let m = &rec.host.metadata;
    display_name(m.namespace_or_default(), &m.name)
}

pub fn power(rec: &HostRecord) -> &'static str {
    match &rec.host.status {
        None => "",
        Some(s) if s.powered_on => "on",
        Some(_) => "off",
    }
}

/// The host's state; `(deleted)` for a host whose delete path finished and that is still in its
/// file, with no status, until a run takes it on again.
pub fn state_text(rec: &HostRecord) -> String {
    let state = rec.status().provisioning.state.as_str();
    if state.is_empty() && rec.book.loaded.deleted_at.is_some() {
        return "(deleted)".into();
    }
    show_state(state).to_string()
}

pub fn shown<T>(show: &[bool], cols: impl IntoIterator<Item = T>) -> Vec<T> {
    cols.into_iter()
        .zip(show)
        .filter_map(|(c, s)| s.then_some(c))
        .collect()
}

/// A table as kubectl prints it: no margin, the columns two spaces apart, no blank after the
/// last one. Every table bmhctl prints is made here. A cell of several lines takes as many
/// lines, the other cells of its row blank below their first.
pub fn kubectl_table<R, C>(header: Option<&[&str]>, rows: impl IntoIterator<Item = R>) -> String
where
    R: IntoIterator<Item = C>,
    C: AsRef<str>,
{
    aligned_table(&mut Widths::default(), header, rows)
}

/// The widths of a table's columns, kept from one table to the next so that rows printed later
/// (`get -w`) line up with the first table: a column only widens, for a longer value.
#[derive(Debug, Default, Clone)]
pub struct Widths(Vec<usize>);

/// [`kubectl_table`] with columns at least as wide as `widths`, which it widens to fit.
pub fn aligned_table<R, C>(
    widths: &mut Widths,
    header: Option<&[&str]>,
    rows: impl IntoIterator<Item = R>,
) -> String
where
    R: IntoIterator<Item = C>,
    C: AsRef<str>,
{
    let width = |s: &str| s.lines().map(unicode_width::UnicodeWidthStr::width).max();
    let mut cells: Vec<Vec<String>> = Vec::new();
    if let Some(h) = header {
        cells.push(h.iter().map(|c| c.to_string()).collect());
    }
    cells.extend(
        rows.into_iter()
            .map(|r| r.into_iter().map(|c| c.as_ref().to_string()).collect()),
    );
    for row in &cells {
        if widths.0.len() < row.len() {
            widths.0.resize(row.len(), 0);
        }
        for (w, c) in widths.0.iter_mut().zip(row) {
            *w = (*w).max(width(c).unwrap_or(0));
        }
    }
    let mut out = Vec::new();
    for row in &cells {
        let tall = row.iter().map(|c| c.lines().count()).max().unwrap_or(0);
        for i in 0..tall.max(1) {
            let mut line = String::new();
            for (c, w) in row.iter().zip(&widths.0) {
                let part = c.lines().nth(i).unwrap_or("");
                line.push_str(part);
                let pad = w - unicode_width::UnicodeWidthStr::width(part);
                line.extend(std::iter::repeat_n(' ', pad + 2));
            }
            out.push(line.trim_end().to_string());
        }
    }
    out.join("\n")
}

/// `get -o name|json|yaml|jsonpath=|custom-columns=` of other kinds: the object itself when
/// `single`, else a List; sorted by `--sort-by` first.
pub fn print_objects(
    format: &super::get_args::GetFormat,
    resource: &str,
    mut objects: Vec<serde_json::Value>,
    single: bool,
    sort_by: Option<&super::jsonpath::Path>,
    headers: bool,
) -> Result<()> {
    use super::get_args::GetFormat;
    sort_objects(&mut objects, sort_by);
    if *format == GetFormat::Name {
        let name = |o: &serde_json::Value| o["metadata"]["name"].as_str().unwrap_or("").to_string();
        let text: String = objects
            .iter()
            .map(|o| format!("{resource}/{}\n", name(o)))
            .collect();
        return write_stdout(&text);
    }
    if print_templated(format, &objects, single, headers, &mut Widths::default())? {
        return Ok(());
    }
    let doc = if single && objects.len() == 1 {
        objects.remove(0)
    } else {
        serde_json::json!({"apiVersion": "v1", "kind": "List", "items": objects})
    };
    if *format == GetFormat::Json {
        line(
            serde_json::to_string_pretty(&doc)
                .map_err(|e| Error::internal("cannot encode as JSON", e))?,
        )
    } else {
        write_stdout(
            &serde_saphyr::to_string(&doc)
                .map_err(|e| Error::internal("cannot encode as YAML", e))?,
        )
    }
}

/// `--sort-by` of a kind's items, by their objects as `-o json` prints them (`object`).
pub fn sort_items<T>(
    items: &mut Vec<T>,
    by: Option<&super::jsonpath::Path>,
    object: impl Fn(&T) -> Result<serde_json::Value>,
) -> Result<()> {
    let Some(by) = by else { return Ok(()) };
    let mut keyed = items
        .drain(..)
        .map(|i| Ok((object(&i)?, i)))
        .collect::<Result<Vec<_>>>()?;
    keyed.sort_by(|a, b| super::jsonpath::compare(by, &a.0, &b.0));
    items.extend(keyed.into_iter().map(|(_, i)| i));
    Ok(())
}

/// `--sort-by`: the objects in the order of their values at `by` (stable: ties keep theirs).
pub fn sort_objects(objects: &mut [serde_json::Value], by: Option<&super::jsonpath::Path>) {
    if let Some(by) = by {
        objects.sort_by(|a, b| super::jsonpath::compare(by, a, b));
    }
}

/// `-o jsonpath=` (the template on the object when `single`, else on the List, with no
/// newline added, as kubectl's) and `-o custom-columns=` (a row per object, columns at least
/// `widths` wide); false for the other formats, which print nothing here.
pub fn print_templated(
    format: &super::get_args::GetFormat,
    objects: &[serde_json::Value],
    single: bool,
    headers: bool,
    widths: &mut Widths,
) -> Result<bool> {
    use super::get_args::GetFormat;
    match format {
        GetFormat::JsonPath(template) => {
            let text = if single && objects.len() == 1 {
                template.render(&objects[0])
            } else {
                let list =
                    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": objects});
                template.render(&list)
            };
            write_stdout(&text)?;
        }
        GetFormat::CustomColumns(columns) => {
            let header: Vec<&str> = columns.iter().map(|(h, _)| h.as_str()).collect();
            let rows = objects.iter().map(|o| {
                columns
                    .iter()
                    .map(|(_, p)| super::jsonpath::column(p, o))
                    .collect::<Vec<_>>()
            });
            line(aligned_table(widths, headers.then_some(&header[..]), rows))?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

pub fn or_none(s: &str) -> &str {
    if s.is_empty() { "<none>" } else { s }
}

/// The group and version of every JSON document bmhctl prints as a result (docs/output.md).
pub const API_VERSION: &str = "bmhctl.metal3.io/v1alpha1";

/// The command of a run: its result document's kind is the variant's name with `Result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    Provision,
    Deprovision,
    Delete,
    Reconcile,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// At its goal (for `delete`: gone).
    Reached,
    /// Stopped short of its goal: failed, paused, detached, or out of time (see its reason).
    Failed,
    /// Still being driven when the run was interrupted.
    InFlight,
}

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

#[derive(Debug, Clone, Copy, Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Counts {
    hosts: usize,
    reached: usize,
    failed: usize,
    in_flight: usize,
}

impl Counts {
    fn of(outcomes: impl Iterator<Item = Outcome>) -> Self {
        outcomes.fold(Self::default(), |mut c, o| {
            c.hosts += 1;
            match o {
                Outcome::Reached => c.reached += 1,
                Outcome::Failed => c.failed += 1,
                Outcome::InFlight => c.in_flight += 1,
            }
            c
        })
    }
}

/// The hosts of a run's result, each made a [`HostReport`] only as it is printed.
pub struct Reports {
    counts: Counts,
    hosts: Box<dyn Iterator<Item = HostReport>>,
}

impl Reports {
    /// The hosts of a run: the runner's `results`, else what the ledger saw (interrupted).
    pub fn of_run(results: Option<Vec<HostResult>>, ledger: Vec<LedgerEntry>) -> Self {
        let (counts, hosts): (_, Box<dyn Iterator<Item = HostReport>>) = match results {
            Some(results) => {
                let counts = Counts::of(results.iter().map(|r| ended(r.reached)));
                let mut ledger = ledger.into_iter();
                let hosts = results.into_iter().map(move |r| {
                    let entry = ledger.next();
                    let seen = Seen::of(&r.record);
                    let mut meta = r.record.host.metadata;
                    HostReport {
                        namespace: meta.namespace_or_default().to_string(),
                        name: std::mem::take(&mut meta.name),
                        goal: r.goal,
                        outcome: ended(r.reached),
                        deleted: r.deleted,
                        reason: r.reason,
                        seen,
                        passes: r.passes,
                        start: entry.as_ref().map(|e| e.start),
                        end: entry.and_then(|e| e.end),
                    }
                });
                (counts, Box::new(hosts))
            }
            None => {
                let counts = Counts::of(ledger.iter().map(seen_outcome));
                let hosts = ledger.into_iter().map(|e| HostReport {
                    outcome: seen_outcome(&e),
                    deleted: e.end.is_some() && e.reached && e.goal == Goal::Deleted,
                    namespace: e.namespace,
                    name: e.name,
                    goal: e.goal,
                    reason: e.reason,
                    seen: e.seen,
                    passes: e.passes,
                    start: Some(e.start),
                    end: e.end,
                });
                (counts, Box::new(hosts))
            }
        };
        Self { counts, hosts }
    }

    /// Hosts already reported (kept to be written twice, or the tests' own).
    pub fn listed(hosts: Vec<HostReport>) -> Self {
        Self {
            counts: Counts::of(hosts.iter().map(|h| h.outcome)),
            hosts: Box::new(hosts.into_iter()),
        }
    }

    /// How many hosts the result has.
    pub fn total(&self) -> usize {
        self.counts.hosts
    }

    /// How many stopped short of their goal or were still in flight.
    pub fn short_of_goal(&self) -> usize {
        self.counts.failed + self.counts.in_flight
    }
}

impl Iterator for Reports {
    type Item = HostReport;

    fn next(&mut self) -> Option<HostReport> {
        self.hosts.next()
    }
}

/// How a host the run decided ended.
fn ended(reached: bool) -> Outcome {
    if reached {
        Outcome::Reached
    } else {
        Outcome::Failed
    }
}

/// How a host of an interrupted run ended, as its ledger entry has it.
fn seen_outcome(e: &LedgerEntry) -> Outcome {
    match (e.end, e.reached) {
        (None, _) => Outcome::InFlight,
        (Some(_), true) => Outcome::Reached,
        (Some(_), false) => Outcome::Failed,
    }
}

pub fn display_name(namespace: &str, name: &str) -> String {
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

pub fn show_state(s: &str) -> &str {
    if s.is_empty() { "(new)" } else { s }
}

/// The final table of a run: one row per host, and why a host stopped short, with what its
/// passes last waited on (the provisioner's reason, which BMO writes nowhere).
pub fn write_result_table(out: &mut dyn Write, hosts: Reports) -> std::io::Result<()> {
    let header = ["NAME", "STATE", "STATUS", "POWER", "RESULT", "ERROR"];
    // The columns' widths need every row: the rows are kept, the records they came from not.
    let mut rows = Vec::new();
    for r in hosts {
        let s = &r.seen;
        let state = if r.deleted {
            "(deleted)"
        } else {
            show_state(&s.state)
        };
        let result = match r.outcome {
            _ if r.deleted => "ok".to_string(),
            Outcome::Reached => "ok".into(),
            Outcome::Failed => format!("failed (goal {})", r.goal.describe()),
            Outcome::InFlight => format!("in flight (goal {})", r.goal.describe()),
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
        if stopped_short && !s.pass_error.is_empty() && !error.contains(&s.pass_error) {
            error = if error.is_empty() {
                format!("last pass failed: {}", s.pass_error)
            } else {
                format!("{error}; last pass failed: {}", s.pass_error)
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
        rows.push([
            display_name(&r.namespace, &r.name),
            state.to_string(),
            status.to_string(),
            power.to_string(),
            result,
            error,
        ]);
    }
    writeln!(out, "{}", kubectl_table(Some(&header), rows))
}

/// A time in result documents: RFC 3339, UTC, milliseconds.
pub fn json_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// The result document of a run (docs/output.md), written host by host: `interrupted` when
/// Ctrl-C or SIGTERM cut it short, its hosts still driven then marked `inFlight`; `now` ends
/// their durations.
pub fn write_result_json(
    out: &mut dyn Write,
    kind: RunKind,
    hosts: Reports,
    interrupted: bool,
    now: DateTime<Utc>,
) -> std::io::Result<()> {
    let doc = ResultDocument {
        api_version: API_VERSION,
        kind: format!("{kind:?}Result"),
        interrupted,
        summary: hosts.counts,
        hosts: OneByOne {
            hosts: std::cell::RefCell::new(Some(hosts)),
            now,
        },
    };
    doc.serialize(&mut serde_json::Serializer::pretty(&mut *out))?;
    out.write_all(b"\n")
}

/// The result document; its fields in the order printed.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultDocument {
    api_version: &'static str,
    kind: String,
    interrupted: bool,
    summary: Counts,
    hosts: OneByOne,
}

/// The document's hosts, each made into its entry as it is written (serialized once).
struct OneByOne {
    hosts: std::cell::RefCell<Option<Reports>>,
    now: DateTime<Utc>,
}

impl Serialize for OneByOne {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeSeq};
        let hosts = self
            .hosts
            .borrow_mut()
            .take()
            .ok_or_else(|| S::Error::custom("the hosts of a result are written once"))?;
        let mut seq = ser.serialize_seq(Some(hosts.total()))?;
        for r in hosts {
            seq.serialize_element(&HostEntry::of(&r, self.now))?;
        }
        seq.end()
    }
}

/// One host of the result document; its fields in the order printed.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HostEntry<'a> {
    name: &'a str,
    namespace: &'a str,
    goal: String,
    outcome: Outcome,
    reached: bool,
    deleted: bool,
    reason: &'a str,
    state: &'a str,
    operational_status: &'a str,
    powered_on: bool,
    error: String,
    error_type: &'a str,
    error_message: &'a str,
    error_count: i64,
    provisioning_fail_count: i64,
    #[serde(rename = "provisioningID")]
    provisioning_id: &'a str,
    waiting: &'a str,
    pass_error: &'a str,
    passes: u64,
    start: Option<String>,
    end: Option<String>,
    duration_seconds: Option<f64>,
}

impl<'a> HostEntry<'a> {
    fn of(r: &'a HostReport, now: DateTime<Utc>) -> Self {
        let s = &r.seen;
        Self {
            name: &r.name,
            namespace: &r.namespace,
            goal: r.goal.describe(),
            outcome: r.outcome,
            reached: r.outcome == Outcome::Reached,
            deleted: r.deleted,
            reason: &r.reason,
            state: &s.state,
            operational_status: &s.operational_status,
            powered_on: s.powered_on.unwrap_or(false),
            error: seen_error(s),
            error_type: &s.error_type,
            error_message: &s.error_message,
            error_count: s.error_count,
            provisioning_fail_count: s.provisioning_fail_count,
            provisioning_id: &s.provisioning_id,
            waiting: &s.waiting,
            pass_error: &s.pass_error,
            passes: r.passes,
            start: r.start.map(json_time),
            end: r.end.map(json_time),
            duration_seconds: r
                .start
                .map(|start| (r.end.unwrap_or(now) - start).num_milliseconds() as f64 / 1000.0),
        }
    }
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
pub fn hosts_table(records: &[&HostRecord], o: &TableOptions, widths: &mut Widths) -> String {
    hosts_table_with(records, &[], o, widths)
}

/// [`hosts_table`] with a row for each host that cannot be read (`<unreadable>`), in
/// namespace and name order among the others.
pub fn hosts_table_with(
    records: &[&HostRecord],
    unreadable: &[&bmh_api::ObjectKey],
    o: &TableOptions,
    widths: &mut Widths,
) -> String {
    let (ns, wide) = (o.namespace_column, o.wide);
    let show = [ns, true, wide, true, true, wide, true, true, true, o.labels];
    let header: Vec<&str> = shown(
        &show,
        "NAMESPACE NAME STATUS STATE CONSUMER BMC ONLINE ERROR AGE LABELS".split(' '),
    );
    let mut rows: Vec<(bmh_api::ObjectKey, Option<&HostRecord>)> = records
        .iter()
        .map(|r| {
            let m = &r.host.metadata;
            (
                bmh_api::ObjectKey::new(m.namespace_or_default(), &m.name),
                Some(*r),
            )
        })
        .collect();
    if !unreadable.is_empty() {
        rows.extend(unreadable.iter().map(|k| ((*k).clone(), None)));
        rows.sort_by(|a, b| a.0.cmp(&b.0));
    }
    let rows = rows.into_iter().map(|(key, rec)| {
        let name = if ns || !o.qualified_names || key.namespace == bmh_api::DEFAULT_NAMESPACE {
            key.name.clone()
        } else {
            key.to_string()
        };
        let Some(rec) = rec else {
            let rest = [
                "",
                "<unreadable>",
                "",
                "",
                "",
                "cannot be read",
                "<unknown>",
                "<none>",
            ];
            return shown(
                &show,
                [key.namespace, name]
                    .into_iter()
                    .chain(rest.map(String::from)),
            );
        };
        let s = rec.status();
        shown(
            &show,
            [
                key.namespace,
                name,
                s.operational_status.as_str().to_string(),
                state_text(rec),
                consumer(rec),
                rec.host.bmc_address().to_string(),
                rec.host.spec.online.to_string(),
                s.error_type.as_str().to_string(),
                age(rec, o.now),
                labels_text(&rec.host.metadata.labels),
            ],
        )
    });
    aligned_table(widths, o.headers.then_some(&header[..]), rows)
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

/// The host's AGE: since bmhctl first recorded it; `<unknown>` for a host nothing recorded (a
/// file never run, standard input, a host deleted), or recorded before bmhctl kept that time.
pub fn age(rec: &HostRecord, now: DateTime<Utc>) -> String {
    created(rec)
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| human_duration(now - t.with_timezone(&Utc)))
        .unwrap_or_else(|| "<unknown>".into())
}

/// When bmhctl first recorded the host (`metadata.creationTimestamp`); none when nothing has.
pub fn created(rec: &HostRecord) -> Option<&str> {
    rec.book
        .creation_timestamp
        .as_deref()
        .filter(|_| !rec.book.loaded.unrecorded)
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
                "{cpu} {} {} disks {} nics",
                binary_size(u64::try_from(h.ram_mebibytes).unwrap_or(0) << 20),
                h.storage.len(),
                h.nics.len()
            )
        })
        .unwrap_or_default()
}

/// Bytes in the largest binary unit that leaves a whole number, as `kubectl describe` shows
/// quantities (`93 TiB`, `128 GiB`, `512 MiB`), else to one decimal (`1.5 TiB`); the exact
/// number stays in `-o json|yaml`.
pub fn binary_size(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut unit = 0;
    while unit + 1 < UNITS.len() && bytes >= 1 << (10 * (unit + 1)) {
        unit += 1;
    }
    let scale = 1u64 << (10 * unit);
    if bytes.is_multiple_of(scale) {
        format!("{} {}", bytes / scale, UNITS[unit])
    } else {
        format!("{:.1} {}", bytes as f64 / scale as f64, UNITS[unit])
    }
}

/// `text` on standard output; a closed pipe comes back as an `stdout` I/O error, which
/// [`super::run`] turns into a quiet exit 0 (where `println!` would panic).
pub fn write_stdout(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

/// What `write` writes, on standard output through a buffer: a document written piece by
/// piece (host by host) costs a few system calls, not one per line (standard output alone
/// flushes at every newline), and is never whole in memory. Errors as [`write_stdout`]'s.
pub fn print_with(write: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    let mut out = std::io::BufWriter::with_capacity(STDOUT_BUFFER, std::io::stdout().lock());
    write(&mut out)?;
    out.flush().map_err(stdout_error)
}

/// A failed write on standard output, as [`write_stdout`] reports it.
pub fn stdout_error(e: std::io::Error) -> Error {
    Error::io("stdout", e)
}

/// Enough to write a long document in a few large pieces.
const STDOUT_BUFFER: usize = 64 * 1024;

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

    /// The result table as `provision` prints it, without its last newline (as the snapshots
    /// were taken).
    fn table_of(hosts: Vec<HostReport>) -> String {
        let mut out = Vec::new();
        write_result_table(&mut out, Reports::listed(hosts)).unwrap();
        let text = String::from_utf8(out).unwrap();
        text.strip_suffix('\n').unwrap().to_string()
    }

    /// The result document as `provision` prints it, without its last newline.
    fn json_of(
        kind: RunKind,
        hosts: Vec<HostReport>,
        interrupted: bool,
        now: DateTime<Utc>,
    ) -> String {
        let mut out = Vec::new();
        write_result_json(&mut out, kind, Reports::listed(hosts), interrupted, now).unwrap();
        let text = String::from_utf8(out).unwrap();
        text.strip_suffix('\n').unwrap().to_string()
    }

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
        insta::assert_snapshot!(table_of(reports()));
        let doc: serde_json::Value =
            serde_json::from_str(&json_of(RunKind::Provision, reports(), false, Utc::now()))
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
        insta::assert_snapshot!(json_of(RunKind::Provision, hosts, true, now));
        insta::assert_snapshot!(json_of(RunKind::Delete, Vec::new(), false, now));
    }

    #[test]
    fn the_result_table_is_printed_exactly() {
        insta::assert_snapshot!(table_of(every_kind_of_host()));
    }

    /// A run that ended reports its results (with the ledger's times), one cut short what its
    /// ledger saw: the hosts in job order, their outcomes counted before any is handed out.
    #[test]
    fn a_run_reports_its_results_or_else_what_its_ledger_saw() {
        use crate::record::HostRecord;
        use bmh_api::ProvisioningState as P;
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().to_utc();
        let record = |namespace: &str, name: &str, state: P| {
            let mut r = HostRecord::default();
            r.host.metadata.namespace = namespace.into();
            r.host.metadata.name = name.into();
            let mut status = bmh_api::BareMetalHostStatus::default();
            status.provisioning.state = state;
            r.host.status = Some(status);
            r
        };
        let goal = Goal::State(P::Provisioned);
        let entry = |name: &str, end: Option<&str>, reached: bool, state: P| LedgerEntry {
            namespace: "default".into(),
            name: name.into(),
            goal: goal.clone(),
            start: at("2026-12-01T10:00:00Z"),
            end: end.map(at),
            passes: 3,
            seen: Seen::of(&record("default", name, state)),
            reached,
            reason: String::new(),
        };
        let ledger = vec![
            entry("a", Some("2026-12-01T10:00:02Z"), true, P::Provisioned),
            entry("b", None, false, P::Inspecting),
        ];
        let results = vec![
            HostResult {
                record: record("", "a", P::Provisioned),
                goal: goal.clone(),
                reached: true,
                reason: String::new(),
                passes: 9,
                deleted: false,
            },
            HostResult {
                record: record("lab", "b", P::Provisioning),
                goal: goal.clone(),
                reached: false,
                reason: "timed out".into(),
                passes: 4,
                deleted: false,
            },
        ];

        let ended = Reports::of_run(Some(results), ledger.clone());
        assert_eq!((ended.total(), ended.short_of_goal()), (2, 1));
        let hosts: Vec<HostReport> = ended.collect();
        let a = &hosts[0];
        assert_eq!((a.namespace.as_str(), a.name.as_str()), ("default", "a"));
        assert_eq!(
            (a.outcome, a.passes, a.seen.state.as_str()),
            (Outcome::Reached, 9, "provisioned")
        );
        assert_eq!(
            (a.start, a.end),
            (
                Some(at("2026-12-01T10:00:00Z")),
                Some(at("2026-12-01T10:00:02Z"))
            )
        );
        let b = &hosts[1];
        assert_eq!((b.namespace.as_str(), b.name.as_str()), ("lab", "b"));
        assert_eq!(
            (b.outcome, b.reason.as_str()),
            (Outcome::Failed, "timed out")
        );
        assert_eq!((b.seen.state.as_str(), b.end), ("provisioning", None));

        let cut = Reports::of_run(None, ledger);
        assert_eq!((cut.total(), cut.short_of_goal()), (2, 1));
        let hosts: Vec<HostReport> = cut.collect();
        assert_eq!((hosts[0].outcome, hosts[0].passes), (Outcome::Reached, 3));
        assert_eq!(
            (hosts[1].outcome, hosts[1].seen.state.as_str()),
            (Outcome::InFlight, "inspecting")
        );
    }

    /// kubectl's layout: no margin, two spaces between columns, nothing after the last
    /// value; a cell of several lines; widths kept for later rows and widened by a longer value.
    #[test]
    fn tables_are_laid_out_as_kubectl_prints_them() {
        let rows = [["a", "x\ny", ""], ["bbbb", "", "zz"]];
        assert_eq!(
            kubectl_table(Some(&["NAME", "V", "E"]), rows),
            "NAME  V  E\na     x\n      y\nbbbb     zz"
        );
        let mut widths = Widths::default();
        let first = aligned_table(
            &mut widths,
            Some(&["NAME", "STATE", "AGE"]),
            [["w0", "ok", "1s"]],
        );
        assert_eq!(first, "NAME  STATE  AGE\nw0    ok     1s");
        let later = aligned_table(&mut widths, None, [["w0", "ok", "2s"]]);
        assert_eq!(later, "w0    ok     2s");
        let wider = aligned_table(&mut widths, None, [["w0", "registering", "3s"]]);
        assert_eq!(wider, "w0    registering  3s");
        let after = aligned_table(&mut widths, None, [["w0", "ok", "4s"]]);
        assert_eq!(after, "w0    ok           4s");
    }

    /// `--sort-by` of another kind's items: by their objects, a missing value first, ties kept.
    #[test]
    fn items_sort_by_their_objects() {
        let by = super::super::jsonpath::Path::parse(".spec.n").unwrap();
        let mut items = vec![("c", Some(2)), ("a", None), ("b", Some(1)), ("d", Some(1))];
        sort_items(&mut items, Some(&by), |(_, n)| {
            Ok(match n {
                Some(n) => serde_json::json!({"spec": {"n": n}}),
                None => serde_json::json!({}),
            })
        })
        .unwrap();
        let names: Vec<&str> = items.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, ["a", "b", "d", "c"]);
    }

    #[test]
    fn sizes_read_in_binary_units() {
        let cases = [
            (0, "0 B"),
            (512, "512 B"),
            (1 << 20, "1 MiB"),
            (128 << 30, "128 GiB"),
            (93 << 40, "93 TiB"),
            ((3 << 40) / 2, "1.5 TiB"),
            (480_103_981_056, "447.1 GiB"),
        ];
        for (bytes, text) in cases {
            assert_eq!(binary_size(bytes), text, "{bytes}");
        }
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
