//! Tables and JSON for people and machines.

use crate::error::{Error, Result};
use crate::record::HostRecord;
use crate::runner::HostResult;
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

pub fn error_text(rec: &HostRecord) -> String {
    let s = rec.status();
    match (s.error_type.as_str(), s.error_message.as_str()) {
        ("", "") => String::new(),
        ("", m) => m.to_string(),
        (t, "") => t.to_string(),
        (t, m) => format!("{t}: {m}"),
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

/// The final table of a run: one row per host, and why a host stopped short; `backend_trouble`
/// (what the provisioner's backend last failed with, which BMO writes nowhere) is added to
/// the error of each host that stopped short.
pub fn result_table(results: &[HostResult], backend_trouble: Option<&str>) -> String {
    let mut t = table(&["HOST", "STATE", "STATUS", "POWER", "RESULT", "ERROR"]);
    for r in results {
        let rec = &r.record;
        let (state, result) = if r.deleted {
            ("(deleted)".to_string(), "ok".to_string())
        } else if r.reached {
            (state_text(rec), "ok".into())
        } else {
            (
                state_text(rec),
                format!("failed (goal {})", r.goal.describe()),
            )
        };
        let mut error = error_text(rec);
        if !r.reached && !r.reason.is_empty() && !error.contains(&r.reason) {
            error = if error.is_empty() {
                r.reason.clone()
            } else {
                format!("{error} ({})", r.reason)
            };
        }
        if let Some(t) = backend_trouble.filter(|_| !r.reached && !r.deleted) {
            error = if error.is_empty() {
                format!("waiting for the provisioner: {t}")
            } else {
                format!("{error}; waiting for the provisioner: {t}")
            };
        }
        let status = if r.deleted {
            ""
        } else {
            rec.status().operational_status.as_str()
        };
        let power = if r.deleted { "" } else { power(rec) };
        t.add_row(vec![
            host_name(rec),
            state,
            status.to_string(),
            power.to_string(),
            result,
            error,
        ]);
    }
    t.to_string()
}

pub fn result_json(results: &[HostResult]) -> String {
    let hosts: Vec<_> = results
        .iter()
        .map(|r| {
            let rec = &r.record;
            let s = rec.status();
            json!({
                "name": rec.host.metadata.name,
                "namespace": rec.host.metadata.namespace_or_default(),
                "goal": r.goal.describe(),
                "reached": r.reached,
                "deleted": r.deleted,
                "reason": r.reason,
                "passes": r.passes,
                "state": s.provisioning.state.as_str(),
                "operationalStatus": s.operational_status.as_str(),
                "poweredOn": s.powered_on,
                "errorType": s.error_type.as_str(),
                "errorMessage": s.error_message,
                "errorCount": s.error_count,
                "provisioningFailCount": s.provisioning_fail_count,
                "provisioningID": s.provisioning.id,
            })
        })
        .collect();
    serde_json::to_string_pretty(&json!({ "hosts": hosts })).expect("JSON of plain values")
}

/// `get` as a table; `wide` adds the BMC, profile, ID and hardware columns.
pub fn hosts_table(records: &[&HostRecord], wide: bool) -> String {
    let mut header = vec!["NAME", "STATE", "STATUS", "ONLINE", "POWER", "ERROR"];
    if wide {
        header.extend(["BMC", "PROFILE", "PROVISIONING ID", "HARDWARE", "IMAGE"]);
    }
    let mut t = table(&header);
    for rec in records {
        let mut row = vec![
            host_name(rec),
            state_text(rec),
            rec.status().operational_status.as_str().to_string(),
            rec.host.spec.online.to_string(),
            power(rec).to_string(),
            error_text(rec),
        ];
        if wide {
            let s = rec.status();
            let hw = hardware_summary(rec);
            row.extend([
                rec.host.bmc_address().to_string(),
                s.hardware_profile.clone(),
                s.provisioning.id.clone(),
                hw,
                s.provisioning.image.url.clone(),
            ]);
        }
        t.add_row(row);
    }
    t.to_string()
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
